"""Reaching the target: Target, {port}, ServerProcess, error messages that name the fix."""

from __future__ import annotations

import os
import socket
import sys

import anyio
import httpx
import pytest

from conformance.runtime.connect import ServerProcess, Target, TargetError, check_command, free_port, target_error
from conformance.spec.versions import Transport
from conformance.transports.base import ConnectError, HttpStatusError, ProcessExited

from .conftest import PY, TINY, live_processes

pytestmark = pytest.mark.anyio


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_port_placeholder_is_substituted_everywhere_and_exported() -> None:
    t = Target(transport=Transport.STREAMABLE_HTTP, command=("srv", "--port", "{port}"), url="http://127.0.0.1:{port}/mcp")
    assert t.needs_port
    r = t.resolve(4242)
    assert r.command == ("srv", "--port", "4242")
    assert r.url == "http://127.0.0.1:4242/mcp"
    assert r.env == {"PORT": "4242"} and r.port == 4242
    assert r.resolve() is r  # nothing left to substitute
    picked = t.resolve()
    assert picked.port is not None and picked.url == f"http://127.0.0.1:{picked.port}/mcp"
    assert r.describe() == "streamable-http: srv --port 4242 at http://127.0.0.1:4242/mcp"


def test_free_port_is_bindable() -> None:
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_missing_or_unusable_commands_are_named(tmp_path) -> None:
    with pytest.raises(TargetError, match="command not found: 'no-such-program-xyz'") as exc:
        check_command(Target(command=("no-such-program-xyz", "--flag")))
    assert "PATH" in (exc.value.hint or "")
    script = tmp_path / "server.py"
    script.write_text("print('hi')\n")
    with pytest.raises(TargetError, match="is not an executable file") as exc:
        check_command(Target(command=(str(script),)))
    assert sys.executable in (exc.value.hint or "")
    with pytest.raises(TargetError, match="does not exist"):
        check_command(Target(command=(str(tmp_path / "missing.py"),)))
    check_command(Target(command=(PY, str(TINY))))  # fine


async def test_server_process_waits_for_the_port_and_stops_the_whole_group() -> None:
    target = Target(transport=Transport.STREAMABLE_HTTP, command=(PY, str(TINY), "--transport", "streamable-http", "--port", "{port}"),
                    url="http://127.0.0.1:{port}/mcp").resolve()
    async with ServerProcess(target) as proc:
        pid = proc.pid
        assert pid is not None and _alive(pid)
        async with httpx.AsyncClient() as client:
            response = await client.get(target.url)  # accepted at once: the port was ready
        assert response.status_code == 405
    assert proc.returncode is not None
    assert not _alive(pid) or open(f"/proc/{pid}/status").read().find("State:\tZ") >= 0


async def test_server_process_reports_an_early_exit_with_its_output(tmp_path) -> None:
    target = Target(transport=Transport.STREAMABLE_HTTP,
                    command=(PY, "-c", "import sys; print('cannot bind: port taken', file=sys.stderr); sys.exit(5)"),
                    url="http://127.0.0.1:{port}/mcp").resolve()
    with pytest.raises(TargetError) as exc:
        async with ServerProcess(target):
            pass  # pragma: no cover
    assert "exited with code 5 before it accepted connections" in exc.value.message
    assert "cannot bind: port taken" in exc.value.message


async def test_server_process_that_never_listens_times_out_and_is_killed(tmp_path) -> None:
    token = f"never-listens-{tmp_path.name}"
    target = Target(transport=Transport.STREAMABLE_HTTP,
                    command=(PY, "-c", f"import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)  # {token}"),
                    url="http://127.0.0.1:{port}/mcp", startup_timeout=0.5).resolve()
    with pytest.raises(TargetError, match=r"did not accept connections on 127\.0\.0\.1:\d+ within 0\.5 s") as exc:
        async with ServerProcess(target, kill_after=0.3):
            pass  # pragma: no cover
    assert "{port}" in (exc.value.hint or "")
    assert live_processes(token) == []  # SIGTERM was ignored: SIGKILL followed


async def test_cancellation_still_stops_the_process(tmp_path) -> None:
    token = f"cancelled-{tmp_path.name}"
    code = f"import runpy, sys; sys.argv = [{str(TINY)!r}, '--transport', 'streamable-http', '--port', sys.argv[1]]; runpy.run_path(sys.argv[0], run_name='__main__')"
    target = Target(transport=Transport.STREAMABLE_HTTP, command=(PY, "-c", code, "{port}", token),
                    url="http://127.0.0.1:{port}/mcp").resolve()
    started = anyio.Event()

    async def hold() -> None:
        async with ServerProcess(target):
            started.set()
            await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        tg.start_soon(hold)
        await started.wait()
        assert live_processes(token)
        tg.cancel_scope.cancel()
    assert live_processes(token) == []


@pytest.mark.parametrize(
    ("exc", "message", "hint"),
    [
        (HttpStatusError("x", status=404), "answered 404 Not Found while connecting: wrong path", "/mcp"),
        (HttpStatusError("x", status=405), "405 Method Not Allowed", "--transport sse"),
        (HttpStatusError("x", status=200, headers={"content-type": "text/html"}), "not an MCP endpoint", "--url"),
        (ConnectError("cannot connect to http://127.0.0.1:9/mcp: Connection refused"), "Connection refused", "--command"),
        (ProcessExited("gone", returncode=2, stderr_tail="Traceback: boom"), "exited (code 2)", "by hand"),
    ],
)
def test_transport_errors_become_target_errors_that_name_the_fix(exc, message: str, hint: str) -> None:
    target = Target(transport=Transport.STREAMABLE_HTTP, url="http://127.0.0.1:9/mcp")
    err = target_error(exc, target)
    assert message in err.message
    assert hint in (err.hint or "")
    assert str(err).endswith(err.hint or "")
