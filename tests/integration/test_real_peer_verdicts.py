"""The whole catalogue against the real peers -- server-everything (npm), a server on the official
Python SDK, the tiny server -- on every transport each serves, every version: one CLI run per peer
x transport (shared by the session, see ``real_peer_runs``), whose verdicts must equal the expected
files in ``tests/integration/expected/`` (regenerate with ``scripts/update-peer-verdicts`` once the
new verdicts are each backed by a sentence; ``expected/README.md`` lists them with theirs).

The other tests here are fast: the comparison and the files themselves.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.spec.requirements import catalogue

from . import peer_verdicts as pv

RUNS = [pytest.param(p, t, id=f"{p}-{t}") for p, t in pv.RUNS]


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(pv.RUN_DEADLINE + 120)
@pytest.mark.parametrize(("peer", "transport"), RUNS)
def test_real_peer_verdicts_are_the_expected_ones(real_peer_runs: pv.Runs, peer: str, transport: str) -> None:
    real_peer_runs.start()  # every run at once (up to $MCP_CONFORMANCE_PEER_JOBS), each once per session
    run = real_peer_runs.get(peer, transport)
    if run.unavailable:
        pytest.skip(run.unavailable)
    assert run.problem is None, run.problem
    expected = pv.load_expected(peer, transport)
    assert expected is not None, f"no tests/integration/expected/{run.key}.json: run scripts/update-peer-verdicts"
    problems = pv.compare(expected, run)
    assert not problems, (
        f"{run.key} ({run.wall:.0f} s): the verdicts differ from tests/integration/expected/{run.key}.json\n  "
        + "\n  ".join(problems)
        + "\nIf the new verdicts are right (each fail and warning backed by its sentence), run scripts/update-peer-verdicts."
    )


# -- fast: the files and the comparison ---------------------------------------------------------------
def _result(requirement: str, version: str, outcome: str, *, problem: str = "P", message: str = "seen") -> dict[str, Any]:
    violations = [] if outcome in ("pass", "skip") else [{"problem": problem, "message": message, "outcome": outcome}]
    return {"requirement": requirement, "version": version, "outcome": outcome, "level": "MUST",
            "violations": violations, "violations_dropped": 0, "reason": None, "messages": []}


def _run(*results: dict[str, Any], errors: list[dict[str, Any]] | None = None) -> pv.PeerRun:
    return pv.PeerRun("tiny", "stdio", report={"results": list(results), "errors": errors or []})


def test_expected_document_lists_what_is_not_pass_or_skip_and_counts_the_rest() -> None:
    run = _run(_result("a.b", "2025-06-18", "pass"), _result("a.b", "2025-11-25", "fail", problem="WrongCode", message="got -32603\n  not -32602"),
               _result("c.d", "2025-11-25", "skip"), _result("e.f", "2024-11-05", "warning"))
    doc = pv.expected_from_report(run)
    assert doc["counts"] == {"pass": 1, "skip": 1}
    assert [(e["requirement"], e["version"], e["outcome"], e["problems"]) for e in doc["verdicts"]] == [
        ("e.f", "2024-11-05", "warning", ["P"]), ("a.b", "2025-11-25", "fail", ["WrongCode"])]
    assert doc["verdicts"][1]["summary"] == "got -32603 not -32602"  # one line
    assert pv.compare(doc, run) == []


def test_unstable_markers_survive_regeneration_and_excuse_an_absent_verdict() -> None:
    flaky = _result("basic.response.id-echo", "2025-06-18", "fail")
    previous = pv.expected_from_report(_run(flaky, _result("a.b", "2025-06-18", "pass")))
    previous["verdicts"][0]["unstable"] = "a race in the peer"
    # regenerated from a run where it did not show: kept, still marked
    quiet = _run(_result("basic.response.id-echo", "2025-06-18", "pass"), _result("a.b", "2025-06-18", "pass"))
    doc = pv.expected_from_report(quiet, previous)
    assert doc["verdicts"] == previous["verdicts"]
    assert pv.compare(doc, quiet) == []  # absent: fine, and the extra pass is within the slack
    assert pv.compare(doc, _run(flaky, _result("a.b", "2025-06-18", "pass"))) == []  # present: fine too
    # but a different outcome is not excused, and a stable verdict must show
    assert pv.compare(doc, _run(_result("basic.response.id-echo", "2025-06-18", "warning"), _result("a.b", "2025-06-18", "pass")))
    del doc["verdicts"][0]["unstable"]
    assert any("expected fail of basic.response.id-echo" in p for p in pv.compare(doc, quiet))


def test_compare_names_every_difference() -> None:
    expected = pv.expected_from_report(_run(_result("a.b", "2025-06-18", "fail"), _result("c.d", "2025-06-18", "pass")))
    got = _run(_result("a.b", "2025-06-18", "pass"), _result("c.d", "2025-06-18", "warning", message="new"),
               errors=[{"message": "target died"}])
    problems = pv.compare(expected, got)
    assert any(p.startswith("expected fail of a.b (2025-06-18), got it pass") for p in problems), problems
    assert any(p.startswith("unexpected warning of c.d (2025-06-18): new") for p in problems), problems
    assert any("run errors ['target died']" in p for p in problems), problems


def test_every_expected_run_has_a_file_and_every_verdict_cites_a_requirement_of_the_catalogue() -> None:
    reqs = catalogue()
    for peer, transport in pv.RUNS:
        doc = pv.load_expected(peer, transport)
        assert doc is not None, f"missing expected/{peer}-{transport}.json"
        assert (doc["peer"], doc["transport"]) == (peer, transport)
        for e in doc["verdicts"]:
            req = reqs.get(e["requirement"])
            assert req is not None, e
            assert e["version"] in req.versions and req.quote.strip(), e
            assert e["level"] == req.level.value, e
            assert e["outcome"] in ("fail", "warning", "error", "stale", "xfail"), e
            assert e["summary"], e
            # a fail rests on a MUST and a warning on a SHOULD (non-strict runs)
            assert (e["outcome"], e["level"]) in {("fail", "MUST"), ("warning", "SHOULD"), ("warning", "MAY")} \
                or e["outcome"] == "error", e
            if e.get("unstable"):
                assert isinstance(e["unstable"], str) and e["unstable"].strip(), e


def test_the_readme_is_generated_from_the_expected_files() -> None:
    docs = [pv.load_expected(p, t) for p, t in pv.RUNS]
    assert all(docs)
    readme = (pv.EXPECTED_DIR / "README.md").read_text()
    assert readme == pv.readme(docs), "tests/integration/expected/README.md is stale: run scripts/update-peer-verdicts --readme"  # type: ignore[arg-type]
    for doc in docs:
        for e in doc["verdicts"]:  # type: ignore[index]
            assert f"{doc['peer']}/{doc['transport']}/{e['version']}: {e['requirement']} ({e['level']}, {e['outcome']})" in readme  # type: ignore[index]


def test_expected_files_are_stable_json() -> None:
    for path in sorted(pv.EXPECTED_DIR.glob("*.json")):
        text = path.read_text()
        assert text == json.dumps(json.loads(text), indent=1) + "\n", f"{path.name} is not in the generated layout"


def test_summaries_leave_out_what_changes_from_run_to_run() -> None:
    a = _run(_result("a.b", "2025-11-25", "fail", message=(
        "tools/call for 'mcp_conformance_no_such_tool_1a2b3c4d' on 2025-11-25/fresh#52: resuming post:4 "
        "(Last-Event-ID '9e9f57ad-0b81-4086-a138-8552761aa608') at 127.0.0.1:43269 within 1.43 s, session 36ba7d1f3267448e8e932da92aef81ec")))
    b = _run(_result("a.b", "2025-11-25", "fail", message=(
        "tools/call for 'mcp_conformance_no_such_tool_99887766' on 2025-11-25/fresh#7: resuming post:12 "
        "(Last-Event-ID '00000000-1111-2222-3333-444444444444') at 127.0.0.1:50001 within 0.2 s, session 0123456789abcdef0123456789abcdef")))
    (ea,), (eb,) = pv.expected_from_report(a)["verdicts"], pv.expected_from_report(b)["verdicts"]
    assert ea["summary"] == eb["summary"] == (
        "tools/call for 'mcp_conformance_no_such_tool_<random>' on 2025-11-25/fresh#N: resuming post:N "
        "(Last-Event-ID '<uuid>') at 127.0.0.1:<port> within <t> s, session <hex>")


def test_summaries_leave_out_the_random_part_of_our_probe_uris() -> None:
    a = _run(_result("a.b", "2025-11-25", "fail", message="resources/read for the unknown 'mcp-conformance://no-such-resource/1f3c52ed'"))
    b = _run(_result("a.b", "2025-11-25", "fail", message="resources/read for the unknown 'mcp-conformance://no-such-resource/9af6b1e1'"))
    (ea,), (eb,) = pv.expected_from_report(a)["verdicts"], pv.expected_from_report(b)["verdicts"]
    assert ea["summary"] == eb["summary"] == "resources/read for the unknown 'mcp-conformance://no-such-resource/<random>'"
