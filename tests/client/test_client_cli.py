"""``mcp-conformance client``: the reference client comes out clean on every transport and
version; clients that cannot be started, exit, hang or write garbage get a clear verdict or error
at bounded cost; Ctrl-C leaves no process behind; bad options are usage errors."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.spec.versions import Transport, spec
from tests.cli.conftest import CLI, live_processes, validate_report

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_client.py"
PY = shlex.quote(sys.executable)
REFERENCE = {"stdio": f"{PY} -m reference_client --timeout 4 --stdio {{server}}",
             "streamable-http": f"{PY} -m reference_client --timeout 4 --url {{url}}",
             "sse": f"{PY} -m reference_client --timeout 4 --sse-url {{url}}"}


def fake(mode: str, token: str, *, server: bool = True) -> str:
    return f"{PY} {shlex.quote(str(FAKE))} {mode} {token}" + (" {server}" if server else "")


def _run(tmp_path: Path, *args: str, timeout: float = 240) -> tuple[int, str, dict | None]:
    proc = subprocess.run([*CLI, "client", *args], cwd=tmp_path, capture_output=True, text=True, timeout=timeout)
    path = tmp_path / "reports" / "report.json"
    report = json.loads(path.read_text()) if path.exists() else None
    if report is not None:
        validate_report(report)
    return proc.returncode, proc.stdout + proc.stderr, report


def _flagged(report: dict) -> list[tuple[str, str, str]]:
    return sorted((r["requirement"], r["version"], r["outcome"]) for r in report["results"]
                  if r["outcome"] in ("fail", "warning", "error", "stale"))


@pytest.mark.parametrize("transport", ["stdio", "streamable-http", "sse"])
def test_the_reference_client_passes_every_version_with_no_fail_and_no_warning(tmp_path: Path, transport: str) -> None:
    rc, out, report = _run(tmp_path, "--command", REFERENCE[transport], "--transport", transport, "--version", "all")
    assert report is not None, out
    assert rc == 0, out[-3000:]
    assert _flagged(report) == []
    assert report["role"] == "client" and report["target"]["role"] == "client"
    passed = {(r["requirement"], r["version"]) for r in report["results"] if r["outcome"] == "pass"}
    versions = {v for _, v in passed}
    defined = {v for v in report["versions"] if Transport(transport) in spec(v).transports}
    assert versions == defined, "every version that defines the transport was spoken and judged"
    assert report["implementation"]["client_info"]["name"] == "mcp-reference-client"
    # the wire checks ran on what the client sent, on every version
    for v in defined:
        assert ("client.basic.schema-valid", v) in passed


def test_without_a_placeholder_the_launcher_is_appended_and_the_scenario_is_in_the_environment(tmp_path: Path) -> None:
    # as the official runner does: the address last, MCP_CONFORMANCE_SCENARIO / _PROTOCOL_VERSION set
    rc, out, report = _run(tmp_path, "--command", f"{PY} -m reference_client --stdio", "--version", "2025-06-18")
    assert rc == 0, out[-3000:]
    assert report is not None and _flagged(report) == []
    asked = report["implementation"]["by_version"]["2025-06-18"]["protocol_version"]
    assert asked == "2025-06-18"  # the client read MCP_CONFORMANCE_PROTOCOL_VERSION


def test_a_client_that_writes_garbage_to_the_server_fails_stdio_only_mcp_and_nothing_else(tmp_path: Path, process_token: str) -> None:
    token = f"garbage-{process_token}"
    rc, out, report = _run(tmp_path, "--command", fake("garbage", token), "--timeout", "2", "--stall-timeout", "4", "--client-timeout", "8",
                           "--select", "client.stdio.*", "--select", "client.basic.jsonrpc")
    assert report is not None, out
    flagged = {(rid, outcome) for rid, _, outcome in _flagged(report)}
    assert flagged == {("client.stdio.only-mcp", "fail")}, out[-2000:]
    assert rc == 1
    viol = next(r for r in report["results"] if r["requirement"] == "client.stdio.only-mcp")["violations"][0]
    assert "not JSON" in viol["message"]
    assert not live_processes(token)


@pytest.mark.parametrize("mode", ["exit", "hang", "missing"])
def test_a_client_that_never_connects_is_an_error_naming_what_happened_with_exit_3(tmp_path: Path, mode: str, process_token: str) -> None:
    token = f"never-{mode}-{process_token}"
    command = f"no-such-client-{token} {{server}}" if mode == "missing" else fake(mode, token)
    started = time.monotonic()
    more = ("--version", "all") if mode == "hang" else ()  # more items than run side by side
    rc, out, report = _run(tmp_path, "--command", command, "--timeout", "2", "--client-timeout", "5", *more)
    took = time.monotonic() - started
    assert rc == 3, out[-3000:]
    assert report is not None and report["status"] == "complete" and not report["implementation"]["answered"]
    errors = " | ".join(e["message"] for e in report["errors"])
    expected = {"exit": "exited (code 0) without connecting", "hang": "did not connect to the suite's server within",
                "missing": "exited (code 127)"}[mode]
    assert expected in errors, errors
    if mode == "missing":
        assert "not found" in errors
    if mode == "hang":
        # the first runs wait their allowance side by side; once one has come up empty (and none
        # ever connected), the later ones are not started: one wait for the run, not one per item
        waited = [e for e in report["errors"] if "did not connect to the suite's server within" in e["message"]
                  and not e["message"].startswith("not started")]
        skipped = [e for e in report["errors"] if e["message"].startswith("not started: run ")]
        assert waited and skipped, errors
        assert all("and no run of it ever has" in e["message"] for e in skipped)
    # bounded: each run waits at most the start-up allowance (max(5, timeout)) for a connection
    assert took < 120, took
    assert not live_processes(token)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("mode", ["stall", "stubborn"])
def test_an_interrupt_ends_the_run_with_a_partial_report_and_no_process_left(tmp_path: Path, sig: int, mode: str, process_token: str) -> None:
    token = f"interrupt-{mode}-{process_token}"
    cmd = [*CLI, "client", "--command", fake(mode, token), "--timeout", "60", "--client-timeout", "120",
           "--version", "all"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    relays: list[int] = []
    try:
        end = time.monotonic() + 30
        while not relays:  # polling with a deadline, not synchronisation by sleep
            assert time.monotonic() < end, "the client never started its server"
            time.sleep(0.05)
            relays = _relays_of_client(token)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, out + err
    report = json.loads((tmp_path / "reports" / "report.json").read_text())
    validate_report(report)
    assert report["status"] == "interrupted"
    end = time.monotonic() + 10
    while live_processes(token):
        assert time.monotonic() < end, f"left behind: {_describe(live_processes(token))}\n{err[-3000:]}"
        time.sleep(0.05)
    relays = [pid for pid in relays if _alive(pid)]
    assert not relays, f"relay processes left behind: {relays}"


def _describe(pids: list[int]) -> str:
    """Each pid with its command line, parent and state (what a leftover was, for the failure text)."""
    out = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
            out.append(f"{pid} ({status.get('State')}, ppid {status.get('PPid')}): {cmd}")
        except OSError:
            out.append(f"{pid} (gone)")
    return "; ".join(out)


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _relays_of_client(token: str) -> list[int]:
    """The relays (the suite's stdio server processes) started by the fake client marked ``token``."""
    clients = {pid for pid in live_processes(token) if b"{server}" not in Path(f"/proc/{pid}/cmdline").read_bytes()}
    out = []
    for pid in live_processes("conformance/client/relay.py"):
        try:
            ppid = int(Path(f"/proc/{pid}/status").read_text().split("PPid:\t")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if ppid in clients:
            out.append(pid)
    return out


@pytest.mark.parametrize(("args", "says"), [
    ([], "--command is required"),
    (["--command", "x {url}"], "{url} is for the HTTP transports"),
    (["--command", "x {server}", "--transport", "streamable-http"], "is for the stdio transport"),
    (["--command", "x {port}"], "not {port}"),
    (["--command", "x {server}", "--version", "2099-01-01"], "2099-01-01"),
    (["--command", "x {server}", "--select", "lifecycle.*"], "matches no client requirement"),
])
def test_bad_client_options_are_usage_errors_that_say_what_to_do(tmp_path: Path, args: list[str], says: str) -> None:
    rc, out, _ = _run(tmp_path, *args, timeout=60)
    assert rc == 2, out
    assert says in out


def test_list_role_client_shows_the_client_catalogue(tmp_path: Path) -> None:
    proc = subprocess.run([*CLI, "list", "--role", "client", "--json"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows and all(r["role"] == "client" for r in rows)
    assert any(r["id"] == "client.lifecycle.initialize-first" for r in rows)
    default = json.loads(subprocess.run([*CLI, "list", "--json"], cwd=tmp_path, capture_output=True, text=True,
                                        timeout=60).stdout)
    assert all(r["role"] == "server" for r in default)


def test_jobs_1_is_the_sequential_reference_the_default_matches(tmp_path: Path) -> None:
    verdicts = []
    for jobs in ("1", None):
        where = tmp_path / f"jobs-{jobs or 'default'}"
        where.mkdir()
        # two versions of either era (the whole catalogue of each; --jobs 1 takes every wait in turn)
        args = ["--command", REFERENCE["stdio"], "--version", "2025-03-26,2026-07-28"] + (["--jobs", jobs] if jobs else [])
        rc, out, report = _run(where, *args)
        assert rc == 0 and report is not None, out[-2000:]
        verdicts.append({(r["requirement"], r["version"]): r["outcome"] for r in report["results"]})
    assert verdicts[0] == verdicts[1]
