"""Baselines: the official runner's YAML and our requirement lists; xfail, stale, unmatched."""

from __future__ import annotations

import pytest

from conformance.report.baseline import BaselineError, apply_baseline, parse_baseline, strip_baseline
from conformance.report.model import exit_code, summarize

from .conftest import DATA, stored, validate_report

V = "2025-11-25"


def _result(rid: str, outcome: str, *, version: str = V, aliases: tuple[str, ...] = (), level: str = "MUST") -> dict:
    viol = [{"requirement": rid, "problem": "SomethingWrong", "message": "m", "expected": 1, "actual": 2, "json_path": None,
             "transcript": [], "outcome": outcome, "level": level}] if outcome in ("fail", "warning") else []
    return {"requirement": rid, "version": version, "transport": "stdio", "level": level, "url": "https://example.invalid/x",
            "quote": "q", "area": rid.split(".")[0], "source": "mcp", "aliases": list(aliases), "note": None, "outcome": outcome,
            "reason": "why" if outcome in ("skip", "error") else None, "scenarios": ["s"], "duration": 0.0, "checks": 1,
            "violations": viol, "violations_dropped": 0, "messages": [], "transcript": []}


def _report(*results: dict) -> dict:
    rep = {"format": "mcp-conformance-report/1", "suite": {"name": "mcp-conformance", "version": "0"}, "status": "complete",
           "started": "2026-01-01T00:00:00.000Z", "finished": "2026-01-01T00:00:01.000Z", "duration": 1.0,
           "target": {"transport": "stdio", "command": ["x"], "url": None, "description": "stdio: x"}, "transport": "stdio",
           "versions": sorted({r["version"] for r in results}), "strict": False, "selection": {"select": [], "exclude": []},
           "implementation": {}, "results": list(results), "errors": [], "warnings": []}
    rep["summary"] = summarize(rep["results"])
    rep["exit_code"] = exit_code(rep)
    return rep


def _outcomes(rep: dict) -> dict:
    return {(r["requirement"], r["version"]): r["outcome"] for r in rep["results"]}


# ---- parsing ---------------------------------------------------------------------------------


def test_official_yaml_format() -> None:
    b = parse_baseline((DATA / "baseline-official.yml").read_text(), source="b.yml")
    assert b.format == "official-yaml" and b.source == "b.yml"
    assert [(e.role, e.scenario, e.check) for e in b.entries] == [("server", "ping", None), ("server", "server-initialize", None),
                                                                    ("client", "initialize", None)]
    b = parse_baseline("server:\n  - tools-call:some-check\n  - auth/basic-dcr\nclient: []\n")
    assert [(e.scenario, e.check) for e in b.entries] == [("tools-call", "some-check"), ("auth/basic-dcr", None)]


@pytest.mark.parametrize("text,fragment", [
    ("server:\n  - tools-call: some-check\n", "Remove the space after the colon"),
    ("server:\n  - tools-call\n  - tools-call:check\n", "redundant"),
    ("server: tools-call\n", "must be a list"),
    ("servers:\n  - x\n", "unknown key"),
    ("server:\n  - ':x'\n", "both sides of the colon"),
    ("server: [unclosed\n", "not valid YAML"),
    ("ping.response@2099-01-01\n", "unknown version"),
    ("ping.response@2025-11-25/pigeon\n", "unknown transport"),
    ("- [a, b]\n", "not a scenario or requirement id"),
    ("42.5: x\n", "unknown key"),
])
def test_malformed_baselines_are_rejected_with_the_fix(text: str, fragment: str) -> None:
    with pytest.raises(BaselineError, match=None) as exc:
        parse_baseline(text, source="b.yml")
    assert fragment in str(exc.value) and "b.yml" in str(exc.value)


def test_requirement_lists_as_text_and_yaml() -> None:
    text = "# known failures\nping.response\njsonrpc.error.parse-error@2024-11-05   # only there\n\nlifecycle.initialize.result@2025-11-25/stdio\n"
    b = parse_baseline(text)
    assert b.format == "requirements"
    assert [(e.scenario, e.version, e.transport) for e in b.entries] == [
        ("ping.response", None, None), ("jsonrpc.error.parse-error", "2024-11-05", None), ("lifecycle.initialize.result", V, "stdio")]
    assert [e.text for e in parse_baseline("- ping.response\n- ping.response\n").entries] == ["ping.response"]
    assert [e.text for e in parse_baseline("requirements:\n  - ping.response\n").entries] == ["ping.response"]
    assert parse_baseline("").entries == () and parse_baseline("# nothing\n").entries == ()


# ---- applying --------------------------------------------------------------------------------


def test_listed_and_failing_is_an_expected_failure_and_the_run_passes() -> None:
    rep = _report(_result("ping.response", "fail"), _result("jsonrpc.x", "pass"))
    assert rep["exit_code"] == 1
    out = apply_baseline(rep, parse_baseline("ping.response\n"))
    validate_report(out)
    assert _outcomes(out) == {("ping.response", V): "xfail", ("jsonrpc.x", V): "pass"}
    assert out["results"][0]["baseline"] == {"entry": "ping.response", "original": "fail"}
    assert out["baseline"]["expected"] == ["ping.response"] and out["baseline"]["stale"] == []
    assert out["exit_code"] == 0 and out["summary"]["by_outcome"]["xfail"] == 1
    assert rep["results"][0]["outcome"] == "fail"  # the input is not modified


def test_listed_and_passing_is_stale_and_fails_the_run() -> None:
    rep = _report(_result("ping.response", "pass"))
    out = apply_baseline(rep, parse_baseline("ping.response\n"))
    validate_report(out)
    assert _outcomes(out) == {("ping.response", V): "stale"}
    assert out["baseline"]["stale"] == ["ping.response"]
    assert out["exit_code"] == 1


def test_an_entry_failing_on_one_version_is_not_stale_on_another() -> None:
    rep = _report(_result("ping.response", "fail", version="2024-11-05"), _result("ping.response", "pass"))
    out = apply_baseline(rep, parse_baseline("ping.response\n"))
    assert _outcomes(out) == {("ping.response", "2024-11-05"): "xfail", ("ping.response", V): "pass"}
    assert out["exit_code"] == 0
    # narrowed to the version that passes, the same entry is stale
    out = apply_baseline(rep, parse_baseline(f"ping.response@{V}\n"))
    assert _outcomes(out)[("ping.response", V)] == "stale" and out["exit_code"] == 1


def test_the_official_format_matches_our_aliases() -> None:
    rep = _report(_result("ping.response", "fail", aliases=("ping",)),
                  _result("lifecycle.initialize.result", "pass", aliases=("server-initialize",)),
                  _result("tools.call.result", "fail", aliases=("tools-call-with-content",)))
    text = "server:\n  - ping\n  - server-initialize\n  - tools-call-with-content:content-check\n  - not-ours\nclient:\n  - initialize\n"
    out = apply_baseline(rep, parse_baseline(text))
    validate_report(out)
    assert _outcomes(out) == {("ping.response", V): "xfail", ("lifecycle.initialize.result", V): "stale",
                              ("tools.call.result", V): "xfail"}
    assert out["baseline"]["unmatched"] == ["not-ours", "initialize"]  # client entries do not apply to a server run
    assert out["exit_code"] == 1


def test_warnings_can_be_listed_skips_and_errors_give_no_signal() -> None:
    rep = _report(_result("a.warned", "warning", level="SHOULD"), _result("b.skipped", "skip"), _result("c.errored", "error"))
    out = apply_baseline(rep, parse_baseline("a.warned\nb.skipped\nc.errored\nd.absent\n"))
    assert _outcomes(out) == {("a.warned", V): "xfail", ("b.skipped", V): "skip", ("c.errored", V): "error"}
    assert out["baseline"]["unmatched"] == ["b.skipped", "c.errored", "d.absent"]


def test_reapplying_replaces_the_previous_baseline_and_strip_restores() -> None:
    rep = _report(_result("ping.response", "fail"), _result("jsonrpc.x", "pass"))
    once = apply_baseline(rep, parse_baseline("ping.response\n"))
    twice = apply_baseline(once, parse_baseline("jsonrpc.x\n"))
    assert _outcomes(twice) == {("ping.response", V): "fail", ("jsonrpc.x", V): "stale"}
    assert twice["exit_code"] == 1
    assert strip_baseline(twice) == rep


def test_a_real_report_with_its_official_baseline() -> None:
    rep = stored("report-broken-ping-baseline.json.gz")
    base = rep["baseline"]
    assert base["format"] == "official-yaml"
    assert base["expected"] == ["ping"] and base["stale"] == ["server-initialize"] and base["unmatched"] == ["initialize"]
    outcomes = {(r["requirement"], r["outcome"]) for r in rep["results"] if "baseline" in r}
    assert outcomes == {("ping.response", "xfail"), ("lifecycle.initialize.result", "stale")}
    assert rep["exit_code"] == 1
    # the same run without the stale entry: the ping failures are expected, nothing is stale
    again = apply_baseline(rep, parse_baseline("server:\n  - ping\n"))
    assert again["baseline"]["stale"] == [] and all(r["outcome"] != "stale" for r in again["results"])
