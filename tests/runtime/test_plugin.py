"""The pytest plugin: options and ini mirrors, items, grading, skip reasons, selection, report.json."""

from __future__ import annotations

import json
import shlex
from collections import Counter

import pytest

from conformance.scenarios.server.lifecycle import NO_HANDSHAKE
from conformance.options import OPTIONS
from conformance.runtime.registry import scenarios
from conformance.spec.requirements import catalogue
from conformance.spec.versions import VERSIONS, parse_versions

from .conftest import QUIET_PLUGINS, TIMEOUT, bad_cmd, results_by, tiny_cmd


def _items(versions: tuple[str, ...]) -> int:
    return len(scenarios("server")) * len(versions)


def _citing(prefix: str) -> int:
    """How many server scenarios cite a requirement whose id starts with ``prefix``."""
    return sum(1 for sc in scenarios("server") if any(r.startswith(prefix) for r in sc.requirements))


def test_help_lists_every_option_in_one_group_with_ini_mirrors(pytester: pytest.Pytester) -> None:
    out = pytester.runpytest(*QUIET_PLUGINS, "--help").stdout.str()
    group = out[out.index("MCP conformance suite") :]
    for opt in OPTIONS:
        assert opt.flag in group
        if opt.ini:
            assert f"{opt.dest} (" in out  # listed among the ini options
    assert "--mcp-list" in group


def test_inactive_without_a_target(run_plugin, pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result, report = run_plugin()
    result.assert_outcomes(passed=1)
    assert report is None
    assert not (pytester.path / "reports").exists()


def test_correct_server_passes_every_version_and_writes_the_report(run_plugin) -> None:
    versions = ("2024-11-05", "2026-07-28")
    args = ["--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT]
    for v in versions:
        args += ["--mcp-version", v]
    result, report = run_plugin(*args)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == _items(versions)
    assert "failed" not in outcomes and "errors" not in outcomes
    assert report is not None and report["exit_code"] == 0 and report["status"] == "complete"
    assert report["versions"] == list(versions)
    assert report["target"]["command"][-1].endswith("tiny_server.py")
    assert report["implementation"]["server_info"]["name"] == "mcp-conformance-tiny-server"
    # one result per cited requirement x version it applies to, with the catalogue's level, the
    # page of the version judged and the quote; the others are listed as not applicable
    cited = {rid for sc in scenarios("server") for rid in sc.requirements}
    reqs = catalogue()
    applicable = {(c, v) for c in cited for v in versions if reqs[c].applies_to(v, "stdio")}
    assert {(r["requirement"], r["version"]) for r in report["results"]} == applicable
    assert {(r["requirement"], r["version"]) for r in report["not_applicable"]} == {(c, v) for c in cited for v in versions} - applicable
    assert report["summary"]["not_applicable"] == len(report["not_applicable"]) > 0
    for r in report["results"]:
        req = reqs[r["requirement"]]
        assert (r["level"], r["url"], r["quote"]) == (req.level.value, req.url_for(r["version"]), req.quote)
        assert req.source != "mcp" or f"/specification/{r['version']}/" in r["url"]
        assert r["outcome"] in ("pass", "skip"), r
        if r["outcome"] == "skip":
            assert r["reason"]
        else:
            assert r["checks"] >= 1 and r["scenarios"]
    counts = Counter(r["outcome"] for r in report["results"])
    assert {k: v for k, v in report["summary"]["by_outcome"].items() if v} == dict(counts)
    by = results_by(report)
    na = {(r["requirement"], r["version"]): r for r in report["not_applicable"]}
    assert na[("ping.response", "2026-07-28")]["reason"] in ("ping was removed in 2026-07-28", NO_HANDSHAKE)
    assert "not applicable to 2024-11-05" in na[("basic.notifications.no-response", "2024-11-05")]["reason"]
    assert "initialize handshake" in na[("discover.implemented", "2024-11-05")]["reason"]
    assert by[("ping.response", "2024-11-05")]["outcome"] == "pass"
    assert by[("discover.implemented", "2026-07-28")]["outcome"] == "pass"


def test_ini_mirrors(run_plugin, pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\n"
        f"mcp_server_command = {tiny_cmd()}\n"
        "mcp_version = 2025-06-18\n"
        f"mcp_timeout = {TIMEOUT}\n"
        "mcp_select = ping.*\n"
        "mcp_report_dir = out\n"
    )
    result = pytester.runpytest(*QUIET_PLUGINS)
    result.assert_outcomes(passed=_citing("ping."))
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert report["versions"] == ["2025-06-18"]
    assert [r["requirement"] for r in report["results"]] == ["ping.response"]
    assert report["selection"]["select"] == ["ping.*"]


def test_command_line_wins_over_ini(run_plugin, pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\nmcp_server_command = {bad_cmd('wrong-ping')}\nmcp_select = ping.*\n")
    result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT)
    result.assert_outcomes(passed=_citing("ping."))
    assert report is not None and "tiny_server.py" in report["target"]["description"]


def test_must_violation_fails_with_expected_actual_and_transcript(run_plugin) -> None:
    result, report = run_plugin("--mcp-server-command", bad_cmd("wrong-ping"), "--mcp-timeout", TIMEOUT, "--mcp-select", "ping.*")
    result.assert_outcomes(failed=_citing("ping."))
    out = result.stdout.str()
    assert "MUST ping.response" in out and "NonEmptyPingResult" in out
    assert catalogue()["ping.response"].quote in out
    assert report is not None and report["exit_code"] == 1
    (res,) = report["results"]  # one requirement x version, however many scenarios judged it
    assert res["outcome"] == "fail"
    assert res["violations"]
    shown = {(e["connection"], e["seq"]) for e in res["transcript"]}
    for v in res["violations"]:
        assert (v["problem"], v["expected"], v["actual"], v["json_path"]) == ("NonEmptyPingResult", {}, {"pong": True}, "$.result")
        assert all((v["connection"], seq) in shown for seq in v["transcript"])
    assert any(e.get("envelope", {}).get("kind") == "result" and "pong" in e["raw"]["text"] for e in res["transcript"])


@pytest.mark.parametrize("strict", [False, True])
def test_should_violation_is_a_warning_and_a_failure_under_strict(run_plugin, strict: bool) -> None:
    args = ["--mcp-server-command", bad_cmd("no-serverinfo"), "--mcp-timeout", TIMEOUT,
            "--mcp-version", "2026-07-28", "--mcp-select", "discover.*"]
    result, report = run_plugin(*args, *(["--mcp-strict"] if strict else []))
    assert report is not None and report["strict"] is strict
    by = results_by(report)
    info = by[("discover.server-info", "2026-07-28")]
    assert by[("discover.implemented", "2026-07-28")]["outcome"] == "pass"
    assert info["violations"][0]["problem"] == "MissingServerInfo"
    if strict:
        result.assert_outcomes(failed=1)
        assert info["outcome"] == "fail" and report["exit_code"] == 1
    else:
        assert result.ret == 0
        assert result.parseoutcomes() == {"warned": 1}  # passed, shown with its own status
        assert info["outcome"] == "warning" and report["exit_code"] == 0
        out = result.stdout.str()
        assert "warnings (SHOULD violated" in out and "discover.server-info [2026-07-28]" in out


def test_select_and_exclude_globs(run_plugin) -> None:
    result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT,
                                "--mcp-select", "jsonrpc.*", "--mcp-exclude", "jsonrpc.error.*")
    assert report is not None
    wanted = {rid for rid in catalogue() if rid.startswith("jsonrpc.") and not rid.startswith("jsonrpc.error.")}
    assert {r["requirement"] for r in report["results"]} == wanted
    ran = {sc.id for sc in scenarios("server") if wanted & set(sc.requirements)}
    assert result.parseoutcomes()["passed"] == len(ran)


def test_select_by_official_alias(run_plugin) -> None:
    result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT, "--mcp-select", "server-initialize")
    assert report is not None
    assert [r["requirement"] for r in report["results"]] == ["lifecycle.initialize.result"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mcp-version", "1999-01-01"], "unknown MCP protocol version '1999-01-01'; use one of"),
        (["--mcp-select", "no.such.*"], "--mcp-select 'no.such.*' matches no server requirement id"),
        (["--mcp-timeout", "soon"], "--mcp-timeout 'soon' is not a number"),
        (["--mcp-server-url", "http://127.0.0.1:1/mcp", "--mcp-transport", "stdio"], "--mcp-server-url is for HTTP transports"),
        (["--mcp-transport", "streamable-http"], "needs --mcp-server-url"),
    ],
)
def test_usage_errors_name_the_problem(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*QUIET_PLUGINS, "--mcp-server-command", tiny_cmd(), *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_unstartable_command_is_an_error_not_a_fail(run_plugin) -> None:
    result, report = run_plugin("--mcp-server-command", "no-such-mcp-server --flag", "--mcp-timeout", TIMEOUT)
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes and outcomes["errors"] >= 1
    assert "command not found: 'no-such-mcp-server'" in result.stdout.str()
    assert "how to fix" in result.stdout.str()
    assert report is not None and report["exit_code"] == 3
    assert {e["kind"] for e in report["errors"]} == {"target"}
    assert all(r["outcome"] in ("error", "skip") for r in report["results"])
    assert all(r["reason"] for r in report["results"] if r["outcome"] == "error")


def test_keyword_deselection_runs_only_matching_items(run_plugin) -> None:
    result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT, "-k", "ping and empty_result")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1 and outcomes["deselected"] == _items(parse_versions(None)) - 1
    assert report is not None
    by = results_by(report)
    assert by[("ping.response", "2025-11-25")]["outcome"] == "pass"
    assert by[("jsonrpc.error.method-not-found", "2025-11-25")]["reason"].startswith("not run")


def test_a_run_narrowed_by_pytest_starts_only_what_its_items_need(run_plugin, pytester: pytest.Pytester) -> None:
    """``-k`` leaves one item of one version (on the shared session): one server process is
    started, not a shared session per version nor spares for the items left out."""
    log = pytester.path / "starts.log"
    cmd = shlex.join(["sh", "-c", f'echo started >> {shlex.quote(str(log))}; exec "$@"', "sh", *shlex.split(tiny_cmd())])
    result, report = run_plugin("--mcp-server-command", cmd, "--mcp-timeout", TIMEOUT, "--mcp-version", "all",
                                "-k", "ping and empty_result and 2025-11-25")
    assert result.parseoutcomes()["passed"] == 1, result.stdout.str()[-2000:]
    assert report is not None
    assert results_by(report)[("ping.response", "2025-11-25")]["outcome"] == "pass"
    assert log.read_text().split() == ["started"]


def test_collect_only_starts_nothing_and_lists_items(run_plugin, pytester: pytest.Pytester) -> None:
    result, report = run_plugin("--mcp-server-command", "no-such-mcp-server", "--collect-only", "-q", "--mcp-version", "all")
    assert result.ret == 0
    lines = [line for line in result.stdout.lines if line.startswith("mcp-conformance::")]
    assert len(lines) == _items(VERSIONS)
    assert report is None


def test_items_carry_requirement_properties(pytester: pytest.Pytester) -> None:
    pytester.runpytest(*QUIET_PLUGINS, "--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT,
                       "--mcp-select", "ping.*", "--junitxml", "junit.xml")
    xml = (pytester.path / "junit.xml").read_text()
    req = catalogue()["ping.response"]
    assert f'name="mcp_requirement" value="ping.response {req.level.value} {req.url}"' in xml
    assert 'name="mcp_version" value="2025-11-25"' in xml


def test_a_run_under_pytest_xdist_is_refused_with_what_to_do(run_plugin) -> None:
    """`pytest -n 2 --mcp-server-command ...` used to stop at 83 % and never finish: refused."""
    pytest.importorskip("xdist")
    result, report = run_plugin("-p", "xdist", "-n", "2", "--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "does not run under pytest-xdist: drop -n/--numprocesses (or pass -n 0)" in result.stderr.str()
    assert report is None


def test_items_that_finished_ahead_reach_pytest_without_a_handoff_each_and_in_run_order(
        run_plugin, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """While an item waits, the others of its version and the later versions finish ahead; when
    pytest reaches them, one handoff to the event loop brings the results of every finished item
    that follows (applied in run order), not one handoff per item.  The report is the same as a
    run with --mcp-jobs 1 (where nothing runs ahead), result for result and in the same order."""
    from conformance.plugin import session

    handoffs: list[str] = []
    run_in_order = session.SessionRun._run_in_order

    async def counting(self, sc, version):  # type: ignore[no-untyped-def]
        handoffs.append(sc.id)
        return await run_in_order(self, sc, version)

    monkeypatch.setattr(session.SessionRun, "_run_in_order", counting)
    reports = []
    for jobs in ("1", "8"):
        handoffs.clear()
        result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT,
                                    "--mcp-version", "all", "--mcp-jobs", jobs)
        assert report is not None and report["exit_code"] == 0
        items = sum(result.parseoutcomes().get(k, 0) for k in ("passed", "skipped", "failed", "error"))
        reports.append([(r["requirement"], r["version"], r["outcome"], r["checks"], r["reason"] or "") for r in report["results"]])
        if jobs == "1":
            assert len(handoffs) == items  # nothing finished ahead
        else:
            assert len(handoffs) < items / 2, (len(handoffs), items)
        (pytester.path / "reports" / "report.json").unlink()
    assert reports[0] == reports[1]


def test_jobs_1_is_the_sequential_reference_and_gives_the_same_verdicts(run_plugin, pytester: pytest.Pytester) -> None:
    """--mcp-jobs 1 runs every scenario strictly after the previous one; the default overlaps
    fresh-process scenarios on stdio.  Verdict for verdict, both runs agree."""
    verdicts = []
    for jobs in ("1", "4"):
        result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-timeout", TIMEOUT,
                                    "--mcp-version", "2025-11-25", "--mcp-version", "2026-07-28", "--mcp-jobs", jobs)
        assert report is not None and report["exit_code"] == 0
        verdicts.append(sorted((r["requirement"], r["version"], r["outcome"], r["reason"] or "") for r in report["results"]))
        (pytester.path / "reports" / "report.json").unlink()
    assert verdicts[0] == verdicts[1]
    result, _ = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-jobs", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "--mcp-jobs must be at least 1" in result.stderr.str()
