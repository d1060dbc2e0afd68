"""Ctrl-C (or SIGTERM) during a run: prompt exit, a partial report, no orphan process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import CLI, bad_cmd, live_processes, validate_report


def _wait_for(predicate, deadline: float, what: str) -> None:
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)  # polling with a deadline, not synchronisation by sleep


@pytest.mark.parametrize(
    ("sig", "mode"),
    [(signal.SIGINT, "silent"), (signal.SIGTERM, "silent"), (signal.SIGINT, "stubborn")],
    ids=["SIGINT", "SIGTERM", "SIGINT-server-ignores-SIGTERM"],
)
def test_an_interrupt_exits_promptly_writes_a_partial_report_and_leaves_no_process(tmp_path: Path, sig: int, mode: str, process_token: str) -> None:
    token = f"sigint-{process_token}"
    pid_file = tmp_path / f"{token}.pid"
    # a server that never answers, and a timeout long enough that only the interrupt ends the run
    cmd = [*CLI, "server", "--command", bad_cmd(mode, "--pid-file", str(pid_file)), "--timeout", "60", "--version", "all"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(pid_file.exists, 30, "the CLI to start the target")
        server_pid = int(pid_file.read_text())
        assert live_processes(token)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)  # the deadline: the run itself would wait 60 s
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):  # also when communicate() gave up (no ResourceWarning later)
            if pipe is not None:
                pipe.close()
    assert proc.returncode == 130, out + err
    assert "KeyboardInterrupt" in out + err
    report = json.loads((tmp_path / "reports" / "report.json").read_text())
    validate_report(report)
    assert report["status"] == "interrupted" and report["exit_code"] == 130
    _wait_for(lambda: not live_processes(token), 5, "the server processes to be gone")
    try:
        os.kill(server_pid, 0)
        alive = "State:\tZ" not in Path(f"/proc/{server_pid}/status").read_text()
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive


def test_an_interrupt_whose_keyboardinterrupt_was_swallowed_still_ends_the_run(tmp_path: Path) -> None:
    # the handler's KeyboardInterrupt can land where nothing propagates it (a weakref callback of
    # an import lock while the main thread imports: "Exception ignored in ..."); the signal is
    # remembered, and the wait for the item under way ends on it, not after the silent server's
    # 60 s timeout
    code = """
import os, signal, sys
import conformance.runtime.run as runtime_run
import conformance.plugin.hooks as plugin
from conformance import cli

def swallowed(signum, frame):
    plugin.SIGNALLED.append(signum)  # what the handler does before its raise, which got lost

install = cli.terminate_like_interrupt

def install_then_lose_the_raise():
    install()
    signal.signal(signal.SIGINT, swallowed)

cli.terminate_like_interrupt = install_then_lose_the_raise
run_item = runtime_run.Run.run_item

async def interrupted(self, sc, version):
    os.kill(os.getpid(), signal.SIGINT)
    return await run_item(self, sc, version)

runtime_run.Run.run_item = interrupted
sys.exit(cli.main(sys.argv[1:]))
"""
    # the deadline: the first item alone would wait 60 s for the silent server
    _ends_interrupted(tmp_path, code, bad_cmd("silent"), "--timeout", "60", deadline=45)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_that_pytest_sees_as_an_internal_error_still_ends_the_run_as_interrupted(tmp_path: Path, sig: int) -> None:
    # Ctrl-C while the scenario modules are imported (the shared sessions are already coming up):
    # a KeyboardInterrupt raised inside a class body reaches pytest wrapped in a RuntimeError
    # (dataclasses' __set_name__), so pytest reports an internal error; the run is still
    # interrupted: exit 130, report.json with status "interrupted"
    code = f"""
import os, signal, sys, time
import conformance.plugin.hooks as plugin
from conformance import cli

real = plugin.scenarios

def interrupted(role="server"):
    try:
        os.kill(os.getpid(), {int(sig)})
        time.sleep(5)  # the handler raises first
    except KeyboardInterrupt as exc:
        raise RuntimeError("Error calling __set_name__") from exc
    return real(role)

plugin.scenarios = interrupted
sys.exit(cli.main(sys.argv[1:]))
"""
    _ends_interrupted(tmp_path, code, f"{sys.executable} -m reference_server", deadline=120)


def _ends_interrupted(tmp_path: Path, code: str, command: str, *args: str, deadline: float) -> None:
    """``code`` (a script that patches the CLI, then calls ``cli.main`` with its arguments) run
    against ``command``, 2025-11-25: it ends as interrupted within ``deadline`` s -- exit 130,
    a valid report.json with status "interrupted"."""
    proc = subprocess.run([sys.executable, "-c", code, "server", "--command", command, *args,
                           "--version", "2025-11-25", "--report-dir", str(tmp_path / "reports"), "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=deadline)
    assert proc.returncode == 130, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "reports" / "report.json").read_text())
    validate_report(report)
    assert report["status"] == "interrupted"


@pytest.mark.parametrize("signalled", [True, False], ids=["after-a-signal", "no-signal"])
def test_pytest_failing_while_it_reports_an_interrupt_still_ends_the_run_as_interrupted(monkeypatch: pytest.MonkeyPatch, signalled: bool) -> None:
    """pytest can raise while it reports an interrupt (Python 3.11: a KeyboardInterrupt raised in a
    frozen importlib frame during collection has a traceback entry without a line number, and
    pytest's ``getrepr`` raises TypeError on it).  After a signal that is still an interrupted run,
    exit 130; without one the error is ours and is not hidden."""
    from conformance import cli
    from conformance.runtime.signals import SIGNALLED

    def crashing_main(args: list[str], plugins: list[object]) -> int:
        if signalled:
            SIGNALLED.append(signal.SIGINT)
        raise TypeError("unsupported operand type(s) for -: 'NoneType' and 'int'")

    saved = list(SIGNALLED)
    monkeypatch.setattr(cli.pytest, "main", crashing_main)
    try:
        if signalled:
            assert cli.main(["server", "--command", "true"]) == 130
        else:
            with pytest.raises(TypeError):
                cli.main(["server", "--command", "true"])
    finally:
        SIGNALLED[:] = saved
