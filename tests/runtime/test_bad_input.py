"""Servers that misbehave: each gives a clear error or a fail naming what happened, never a hang,
never an orphan process."""

from __future__ import annotations

import pytest

from .conftest import TIMEOUT, bad_cmd, live_processes, results_by, tiny_cmd

V = "2025-11-25"

# mode -> (outcome of the named requirement or "error", requirement, text the verdict must contain)
CASES = {
    "garbage": ("fail", "transport.stdio.stdout-only-messages", "not an MCP message"),
    "huge-line": ("fail", "basic.messages.jsonrpc", "line exceeds"),
    "invalid-utf8": ("fail", "transport.utf8", "invalid UTF-8"),
    "die-after-init": ("fail", "jsonrpc.request.response-required", "exited with code 7"),
    "exit-on-parse-error": ("fail", "jsonrpc.error.parse-error", "exited with code 1"),
    "no-parse-error": ("fail", "jsonrpc.error.parse-error", "no response to invalid JSON"),
    "answer-notifications": ("fail", "jsonrpc.notification.no-reply", "was answered"),
    "wrong-method-code": ("fail", "jsonrpc.error.method-not-found", "got error -32603"),
    "bad-schema": ("fail", "basic.schema.messages-valid", "does not match the 2025-11-25 schema"),
    "crash-at-start": ("error", "ping.response", "exited with code 3"),
    # never answers: one verdict (initialize unanswered), the rest skipped at once with that reason;
    # exit 3, since the target never answered anything
    "silent": ("skip", "ping.response", "did not answer initialize for 2025-11-25"),
}


# modes where some expectation must time out: a short timeout keeps the test fast
WAITS = {"silent", "no-parse-error", "invalid-utf8"}


@pytest.mark.parametrize("mode", sorted(CASES))
def test_misbehaving_server_gets_a_named_verdict(run_plugin, tmp_path, mode: str) -> None:
    outcome, rid, text = CASES[mode]
    token = f"bad-{mode}-{tmp_path.name}"  # marks this test's server processes
    result, report = run_plugin("--mcp-server-command", bad_cmd(mode, "--pid-file", str(tmp_path / token)),
                                "--mcp-timeout", "1.5" if mode in WAITS else TIMEOUT, "--mcp-version", V)
    assert report is not None and report["status"] == "complete"
    res = results_by(report)[(rid, V)]
    assert res["outcome"] == outcome, res
    if outcome == "fail":
        assert any(text in v["message"] for v in res["violations"]), res["violations"]
        assert report["exit_code"] == 1
        assert text in result.stdout.str()
    elif outcome == "skip":
        assert text in res["reason"]
        init = results_by(report)[("lifecycle.initialize.result", V)]
        assert init["outcome"] == "fail" and "was not answered within" in init["violations"][0]["message"]
        assert not report["errors"] and report["implementation"]["answered"] is False
        assert report["exit_code"] == 3
    else:
        assert text in res["reason"]
        assert report["exit_code"] == 3
        assert {e["kind"] for e in report["errors"]} == {"target"}
        assert "failed" not in result.parseoutcomes()
    assert live_processes(token) == []


def test_the_stderr_of_a_crashing_server_is_shown(run_plugin, tmp_path) -> None:
    result, report = run_plugin("--mcp-server-command", bad_cmd("crash-at-start"), "--mcp-timeout", TIMEOUT, "--mcp-select", "ping.*")
    assert "configuration file missing" in result.stdout.str()
    assert report is not None and "configuration file missing" in report["errors"][0]["message"]


def test_a_version_answered_with_another_is_skipped_unless_the_server_supports_it(run_plugin) -> None:
    # only-2025-06-18 offers 2025-06-18 for everything: 2025-11-25 is simply not supported
    _, report = run_plugin("--mcp-server-command", bad_cmd("only-2025-06-18"), "--mcp-timeout", TIMEOUT,
                           "--mcp-version", "2025-11-25", "--mcp-version", "2025-06-18", "--mcp-select", "lifecycle.*")
    assert report is not None
    by = results_by(report)
    echo = by[("lifecycle.version-negotiation.echo", "2025-11-25")]
    assert echo["outcome"] == "skip" and "target does not support 2025-11-25" in echo["reason"]
    assert by[("lifecycle.version-negotiation.echo", "2025-06-18")]["outcome"] == "pass"
    assert by[("lifecycle.version-negotiation.fallback", "2025-06-18")]["outcome"] == "pass"


def test_a_supported_version_answered_with_another_fails_the_echo_rule(run_plugin) -> None:
    # misnegotiate offers 2025-06-18 for an unknown version, yet answers 2025-03-26 when asked for it
    result, report = run_plugin("--mcp-server-command", bad_cmd("misnegotiate"), "--mcp-timeout", TIMEOUT,
                                "--mcp-version", "2025-06-18", "--mcp-select", "lifecycle.version-negotiation.echo")
    assert report is not None
    (res,) = report["results"]
    assert res["outcome"] == "fail"
    (v,) = res["violations"]
    assert (v["problem"], v["expected"], v["actual"]) == ("VersionNotEchoed", "2025-06-18", "2025-03-26")
    assert "VersionNotEchoed" in result.stdout.str()


def test_the_handshake_is_judged_on_the_shared_session(run_plugin) -> None:
    # no-serverinfo answers initialize without serverInfo: the shared session's handshake is the
    # evidence (the scenario opens no connection of its own: on stdio no process)
    result, report = run_plugin("--mcp-server-command", bad_cmd("no-serverinfo"),
                                "--mcp-timeout", TIMEOUT, "--mcp-version", V, "--mcp-select", "lifecycle.initialize.result")
    assert report is not None
    (res,) = report["results"]
    assert res["outcome"] == "fail"
    (v,) = res["violations"]
    assert (v["problem"], v["json_path"]) == ("MissingServerInfo", "$.result.serverInfo")
    assert {row["connection"] for row in res["transcript"]} == {f"{V}/shared#1"}
    assert "MissingServerInfo" in result.stdout.str()


def test_the_whole_run_is_bounded_by_the_run_timeout(run_plugin, tmp_path) -> None:
    """A server that answers every request late: items still running at --mcp-run-timeout are
    stopped and the rest are not run; both are errors of kind 'deadline' naming the bound, the
    report is complete and written, and no process is left."""
    token = f"bad-late-{tmp_path.name}"
    result, report = run_plugin("--mcp-server-command", bad_cmd("late", "--pid-file", str(tmp_path / token)),
                                "--mcp-timeout", "5", "--mcp-run-timeout", "1", "--mcp-version", "all")
    assert report is not None and report["status"] == "complete"
    kinds = {e["kind"] for e in report["errors"]}
    assert kinds == {"deadline"}, kinds
    assert all("--run-timeout" in e["message"] and "1 s" in e["message"] for e in report["errors"])
    assert report["exit_code"] == 1
    assert "run deadline reached" in result.stdout.str()
    assert live_processes(token) == []


def test_a_bad_run_timeout_is_a_usage_error(run_plugin) -> None:
    result, report = run_plugin("--mcp-server-command", tiny_cmd(), "--mcp-run-timeout", "soon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--mcp-run-timeout 'soon' is not a number of seconds" in result.stderr.str()
