"""mcp-conformance: exit codes, messages that name the problem, partial reports, list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.runtime.connect import free_port
from conformance.runtime.registry import scenarios
from conformance.spec.requirements import catalogue
from conformance.spec.versions import LATEST_STATEFUL

from .conftest import bad_cmd, tiny_cmd

T = ["--timeout", "5"]  # answers arrive in milliseconds; only failure paths wait this long
T_SHORT = ["--timeout", "1"]


def test_a_correct_server_exits_0_and_writes_the_report(cli) -> None:
    run = cli("server", "--command", tiny_cmd(), *T)
    assert run.rc == 0, run.out + run.err
    report = run.report
    assert report is not None and report["status"] == "complete" and report["exit_code"] == 0
    assert report["versions"] == [LATEST_STATEFUL]
    assert "report: " in run.out


def test_a_failed_requirement_exits_1_with_the_report(cli) -> None:
    run = cli("server", "--command", bad_cmd("wrong-ping"), "--select", "ping.*", *T)
    assert run.rc == 1
    assert "NonEmptyPingResult" in run.out
    report = run.report
    assert report is not None and report["exit_code"] == 1
    assert {r["requirement"] for r in report["results"] if r["outcome"] == "fail"} == {"ping.response"}


def test_strict_turns_a_should_violation_into_exit_1(cli) -> None:
    args = ("server", "--command", bad_cmd("no-serverinfo"), "--version", "2026-07-28", "--select", "discover.*", *T)
    assert cli(*args).rc == 0
    assert cli(*args, "--strict").rc == 1


def test_usage_errors_exit_2_and_say_what_is_wrong(cli) -> None:
    run = cli("server", "--command", tiny_cmd(), "--version", "2099-01-01")
    assert run.rc == 2 and "unknown MCP protocol version '2099-01-01'" in run.err and "'all'" in run.err
    run = cli("server", "--bogus")
    assert run.rc == 2 and "unrecognized arguments: --bogus" in run.err
    run = cli("server", "--command", tiny_cmd(), "--select", "nothing.matches.*")
    assert run.rc == 2 and "matches no server requirement id" in run.err and "mcp-conformance list" in run.err
    run = cli("server", "--transport", "carrier-pigeon")
    assert run.rc == 2 and "invalid choice: 'carrier-pigeon'" in run.err
    run = cli("server", "--command", tiny_cmd(), "--schema-dir", "/nonexistent/schemas")
    assert run.rc == 2 and "/nonexistent/schemas" in run.err
    run = cli("server", "--command", tiny_cmd(), "--jobs", "0")  # named as typed (and as pytest knows it)
    assert run.rc == 2 and "--jobs (--mcp-jobs) must be at least 1, not '0'" in run.err
    run = cli("server", "--command", tiny_cmd(), "--timeout", "soon")
    assert run.rc == 2 and "--timeout (--mcp-timeout) 'soon' is not a number of seconds" in run.err
    run = cli()
    assert run.rc == 2 and "usage:" in run.err
    assert run.report is None


def test_a_command_that_does_not_exist_exits_3_with_a_partial_report(cli) -> None:
    run = cli("server", "--command", "no-such-mcp-server --stdio", *T)
    assert run.rc == 3
    assert "command not found: 'no-such-mcp-server'" in run.out and "how to fix" in run.out
    report = run.report
    assert report is not None and report["status"] == "target-error" and report["exit_code"] == 3
    assert report["errors"] and all(e["kind"] == "target" for e in report["errors"])


def test_a_refused_url_exits_3_and_names_the_url(cli) -> None:
    port = free_port()
    run = cli("server", "--url", f"http://127.0.0.1:{port}/mcp", *T)
    assert run.rc == 3
    assert f"127.0.0.1:{port}" in run.out and "refused" in run.out.lower()
    assert run.report is not None and run.report["exit_code"] == 3


def test_a_wrong_path_exits_3_and_suggests_the_endpoint(cli) -> None:
    cmd = tiny_cmd("--transport", "streamable-http", "--port", "{port}")
    run = cli("server", "--command", cmd, "--url", "http://127.0.0.1:{port}/nope", *T_SHORT)
    assert run.rc == 3
    assert "404 Not Found" in run.out and "/mcp" in run.out


def test_an_http_server_started_on_a_free_port(cli) -> None:
    run = cli("server", "--command", tiny_cmd("--transport", "streamable-http", "--port", "{port}"), *T)
    assert run.rc == 0, run.out + run.err
    target = run.report["target"]
    assert target["transport"] == "streamable-http"
    port = target["env"]["PORT"]
    assert target["url"] == f"http://127.0.0.1:{port}/mcp" and f"--port {port}" in target["description"]


def test_the_bundled_reference_server_is_the_default_target(cli) -> None:
    run = cli("server", "--select", "ping.*", *T)
    assert run.rc == 0, run.out + run.err
    assert run.report["target"]["command"][1:] == ["-m", "reference_server", "--transport", "stdio"]
    assert run.report["implementation"]["server_info"]["name"]


@pytest.mark.parametrize(("transport", "path"), [("streamable-http", "/mcp"), ("sse", "/sse")])
def test_the_reference_server_on_http_transports(cli, transport: str, path: str) -> None:
    run = cli("server", "--transport", transport, "--select", "ping.*", "--select", "jsonrpc.error.*", *T)
    assert run.rc == 0, run.out + run.err
    report = run.report
    assert report["transport"] == transport and report["target"]["url"].endswith(path)
    assert {r["outcome"] for r in report["results"]} == {"pass"}


def test_user_tests_and_conftests_in_the_working_directory_are_ignored(cli, tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("raise RuntimeError('a user conftest must not be loaded')\n")
    (tmp_path / "test_user.py").write_text("def test_user():\n    assert False\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --definitely-not-an-option\n")
    run = cli("server", "--command", tiny_cmd(), "--select", "ping.*", *T)
    assert run.rc == 0, run.out + run.err
    n = sum(1 for sc in scenarios("server") if any(r.startswith("ping.") for r in sc.requirements))
    assert "test_user.py" not in run.out and f"collected {n} item" in run.out


def test_list_prints_the_catalogue(cli) -> None:
    run = cli("list", "--version", "all")
    assert run.rc == 0
    for rid, req in catalogue().items():
        if req.role == "server":  # the default role
            assert rid in run.out and req.url in run.out
        else:
            assert f"{rid} " not in run.out
    run = cli("list", "--version", "all", "--role", "client")
    assert run.rc == 0
    assert {line.split()[0] for line in run.out.splitlines() if line.startswith("client.")} == \
        {rid for rid, r in catalogue().items() if r.role == "client"}
    run = cli("list", "--json", "--version", "2026-07-28", "--select", "discover.*")
    rows = json.loads(run.out)
    expected = [r.to_json() for rid, r in catalogue().items() if rid.startswith("discover.") and "2026-07-28" in r.versions]
    assert rows == expected
    assert cli("list", "--version", "1.0").rc == 2


def test_a_reader_that_goes_away_ends_the_listing_quietly(tmp_path: Path) -> None:
    """``mcp-conformance list | head``: no traceback when the pipe closes, exit 141 (SIGPIPE's)."""
    import fcntl

    # the listing (~47 KB) fits in a default pipe (64 KB): it could be written whole before the
    # reader goes away, and the run end well (exit 0).  A pipe of one page cannot hold it: the
    # writer is still writing when the reader closes.
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen([sys.executable, "-m", "conformance.cli", "list", "--version", "all"], cwd=tmp_path,
                            stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    proc.stdout = os.fdopen(read_end, "rb")
    assert proc.stderr is not None
    head = proc.stdout.read(200)
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert head and "Traceback" not in err and "BrokenPipe" not in err, err


def test_the_console_script_is_installed(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("mcp-conformance")
    proc = subprocess.run([str(script), "--suite-version"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("mcp-conformance ")
