"""StdioTransport against purpose-built peers (tests/transports/peers/stdio_peer.py)."""

from __future__ import annotations

import json
import signal
import sys
import tracemalloc
from pathlib import Path

import anyio
import pytest

from conformance.transports import ProcessExited, StartError, StdioTransport, TransportClosed, TransportError
from conformance.wire.envelope import Kind

from .util import Recorder, wait_gone

pytestmark = pytest.mark.anyio

PEER = Path(__file__).parent / "peers" / "stdio_peer.py"
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def peer(mode: str, *args: object, **opts: object) -> StdioTransport:
    opts.setdefault("kill_after", 1.0)
    opts.setdefault("close_grace", 2.0)
    return StdioTransport([sys.executable, str(PEER), mode, *map(str, args)], **opts)  # type: ignore[arg-type]


async def test_round_trip_parses_and_records() -> None:
    t = peer("echo")
    rec = Recorder(t)
    async with t:
        await t.send(PING)
        got = await t.receive()
        assert got.raw == PING
        assert got.envelope is not None and got.envelope.kind is Kind.REQUEST and got.envelope.id == 1
        assert got.problem is None
        assert got.meta == {"stream": "stdout"}
        pid = t.pid
    started = rec.first("process started")
    assert started["pid"] == pid and started["argv"][-1] == "echo"
    assert t.returncode == 0
    assert rec.first("process exited")["returncode"] == 0
    assert "stderr: bye" in rec.texts()
    await wait_gone(pid)


async def test_send_bytes_is_exact_and_framing_problems_are_reported() -> None:
    async with peer("echo") as t:
        await t.send_bytes(b'{"jsonrpc":"2.0",')  # a message split across writes
        await t.send_bytes(b'"method":"split"}\r\n')
        got = await t.receive()
        assert got.raw == b'{"jsonrpc":"2.0","method":"split"}'
        assert got.problem == "CR before LF"
        assert got.envelope is not None and got.envelope.kind is Kind.NOTIFICATION
        await t.send(b"not json")
        got = await t.receive()
        assert got.problem is None and got.envelope is not None and got.envelope.kind is Kind.PARSE_ERROR


async def test_garbage_big_line_and_unterminated_tail() -> None:
    limit = 256 * 1024
    async with peer("garbage", 2 * 1024 * 1024, max_line_bytes=limit) as t:
        await t.send(b"go")
        items = []
        with pytest.raises(ProcessExited) as info:
            with anyio.fail_after(20):
                while True:
                    items.append(await t.receive())
    assert info.value.returncode == 0
    raws = [i.raw[:20] for i in items]
    assert raws[0] == b"hello, not json"
    assert items[0].envelope is not None and items[0].envelope.kind is Kind.PARSE_ERROR
    assert items[1].problem == "invalid UTF-8"
    assert items[1].envelope is not None and items[1].envelope.kind is Kind.PARSE_ERROR
    assert items[2].problem == "CR before LF" and items[2].envelope is not None
    assert items[2].envelope.method == "crlf"
    assert items[3].raw == b"" and items[3].problem == "empty line" and items[3].envelope is None
    assert items[4].envelope is not None and items[4].envelope.method == "before-big"
    big = items[5]
    assert big.meta.get("truncated") is True and big.envelope is None
    assert len(big.raw) == limit and big.problem == f"line exceeds {limit} bytes (truncated)"
    assert items[6].envelope is not None and items[6].envelope.method == "after-big"
    assert items[7].raw == b"tail-without-newline" and items[7].problem == "no newline at end of stream"
    assert len(items) == 8


async def test_huge_line_stays_memory_bounded() -> None:
    limit = 1024 * 1024
    async with peer("garbage", 32 * 1024 * 1024, max_line_bytes=limit) as t:
        await t.send(b"go")
        tracemalloc.start()
        try:
            with anyio.fail_after(30):
                while True:
                    got = await t.receive()
                    if got.envelope is not None and got.envelope.method == "after-big":
                        break
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * limit  # the 32 MiB line was never held


async def test_flood_is_held_back_by_the_pipe() -> None:
    """The peer writes as fast as it can; we read slowly; memory stays bounded (pull + OS backpressure)."""
    async with peer("flood", 10_000) as t:
        tracemalloc.start()
        try:
            with anyio.fail_after(30):
                for _ in range(1000):  # ~10 MB passes through
                    got = await t.receive()
                    assert got.envelope is not None and got.envelope.method == "flood"
                    await anyio.lowlevel.checkpoint()  # give the peer every chance to run ahead
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        pid = t.pid
    assert peak < 2 * 1024 * 1024
    await wait_gone(pid)


async def test_exit_drains_then_reports_code_and_stderr_tail() -> None:
    t = peer("crash")
    rec = Recorder(t)
    async with t:
        await t.send(PING)
        got = await t.receive()  # what it wrote before dying comes first
        assert got.envelope is not None and got.envelope.method == "last-words"
        with anyio.fail_after(10):
            with pytest.raises(ProcessExited) as info:
                await t.receive()
        assert info.value.returncode == 3
        assert "RuntimeError: something broke" in info.value.stderr_tail
        assert "exited with code 3" in str(info.value) and "something broke" in str(info.value)
        with pytest.raises(ProcessExited):  # and again, at once
            await t.receive()
        with pytest.raises(ProcessExited) as info2:  # writing to it says the same
            for _ in range(100):
                await t.send(PING)
        assert info2.value.returncode == 3
    assert "stderr: RuntimeError: something broke" in rec.texts()


async def test_missing_command_is_a_start_error() -> None:
    t = StdioTransport(["no-such-command-for-mcp-tests", "--flag"])
    with pytest.raises(StartError) as info:
        await t.start()
    assert "No such file or directory: 'no-such-command-for-mcp-tests'" in str(info.value)
    assert info.value.detail["command"] == ["no-such-command-for-mcp-tests", "--flag"]
    await t.aclose()  # harmless


async def test_bad_cwd_is_a_start_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(StartError) as info:
        await StdioTransport([sys.executable, "-c", "pass"], cwd=missing).start()
    assert str(missing) in str(info.value)


async def test_not_executable_is_a_start_error(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(StartError) as info:
        await StdioTransport([str(script)]).start()
    assert f"Permission denied: '{script}'" in str(info.value)


async def test_exit_during_start_reports_code_and_stderr() -> None:
    t = peer("exit-now", startup_grace=30)
    rec = Recorder(t)
    with pytest.raises(StartError) as info:
        await t.start()
    assert info.value.detail["returncode"] == 7
    assert "fatal: configuration file missing" in info.value.detail["stderr_tail"]
    assert "exited with code 7 during start-up" in str(info.value)
    pid = rec.first("process started")["pid"]
    await wait_gone(pid)


async def test_sigterm_ignored_means_sigkill() -> None:
    t = peer("stubborn", close_grace=0.05, kill_after=0.2)
    rec = Recorder(t)
    async with t:
        ready = await t.receive()
        assert ready.envelope is not None and ready.envelope.method == "ready"
        pid = t.pid
    assert t.returncode == -signal.SIGKILL
    texts = rec.texts()
    assert texts.index("sent SIGTERM to the process group") < texts.index("sent SIGKILL to the process group")
    assert "process was killed by SIGKILL" in texts
    await wait_gone(pid)


async def test_grandchildren_die_with_the_server() -> None:
    async with peer("grandchild") as t:
        with anyio.fail_after(10):
            pids = await t.receive()
        assert pids.envelope is not None
        server, grandchild = pids.envelope.params["server"], pids.envelope.params["grandchild"]
        assert server == t.pid
    # the server exited gracefully on EOF; its SIGTERM-ignoring grandchild was still in the group
    assert t.returncode == 0
    await wait_gone(server)
    await wait_gone(grandchild)


async def test_cancelled_receive_cleans_up() -> None:
    box: dict[str, int] = {}

    async def run() -> None:
        async with peer("silent") as t:
            box["pid"] = t.pid
            await t.receive()  # never answers

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    await wait_gone(box["pid"])


async def test_receive_survives_a_deadline_and_close_is_idempotent() -> None:
    t = peer("echo")
    async with t:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0.05):
                await t.receive()  # nothing was sent: bounded by the caller's deadline
        await t.send(PING)
        assert (await t.receive()).raw == PING
        await t.aclose()
        with pytest.raises(TransportClosed):
            await t.receive()
        with pytest.raises(TransportClosed):
            await t.send(PING)
    await t.aclose()
    await wait_gone(t.pid)


async def test_send_blocked_on_a_full_pipe_is_released_by_close() -> None:
    errors: list[Exception] = []
    t = peer("deaf", close_grace=0.05)

    async def blast() -> None:
        try:
            await t.send(b"x" * 10_000_000)  # far more than a pipe holds; the peer never reads
        except TransportClosed as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        async with t:
            await t.receive()
            tg.start_soon(blast)
            await anyio.wait_all_tasks_blocked()
            assert not errors
        # leaving ``async with t`` closed the transport: the writer was released
    assert len(errors) == 1
    await wait_gone(t.pid)


async def test_close_stdin_and_wait_exit() -> None:
    async with peer("echo") as t:
        await t.send(PING)
        await t.close_stdin()
        assert await t.wait_exit(10) == 0
        assert (await t.receive()).raw == PING
        with pytest.raises(TransportClosed, match="stdin"):
            await t.send(PING)
    async with peer("stubborn", close_grace=0.05, kill_after=0.2) as s:
        await s.receive()
        await s.close_stdin()
        assert await s.wait_exit(0.05) is None  # ignores EOF: still running
        assert s.returncode is None


async def test_stderr_flood_does_not_block_and_is_bounded() -> None:
    t = peer("noisy", 1024 * 1024, stderr_tail_bytes=1000, max_stderr_events=5)
    rec = Recorder(t)
    async with t:
        with anyio.fail_after(20):
            for i in range(3):
                await t.send(PING)
                assert (await t.receive()).raw == PING
        assert len(t.stderr_tail) == 1000 and t.stderr_tail.endswith("some words in it\n")
        assert t.stderr_bytes >= 3 * 1000 * 1000
    stderr = [x for x in rec.texts() if x.startswith("stderr:")]
    assert len(stderr) == 6 and "further lines not reported" in stderr[-1]


async def test_concurrent_receive_is_refused() -> None:
    async with peer("echo") as t:
        async with anyio.create_task_group() as tg:
            tg.start_soon(t.receive)
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(TransportError, match="already waiting"):
                await t.receive()
            await t.send(PING)


def test_string_command_is_rejected() -> None:
    with pytest.raises(TypeError):
        StdioTransport("python server.py")  # type: ignore[arg-type]


async def test_env_is_added_to_the_environment() -> None:
    code = "import os, json; print(json.dumps([os.environ.get('MCP_T'), bool(os.environ.get('PATH'))]), flush=True)"
    async with StdioTransport([sys.executable, "-c", code], env={"MCP_T": "yes"}) as t:
        got = await t.receive()
    assert json.loads(got.raw) == ["yes", True]


async def test_cpu_seconds_counts_the_whole_process_group_and_ends_with_the_process() -> None:
    t = peer("busy-start")
    async with t:
        first = t.cpu_seconds()
        assert first is not None
        with anyio.fail_after(20):  # the grandchild's busy loop shows in the server's count
            while (t.cpu_seconds() or 0.0) < first + 0.2:
                await anyio.sleep(0.05)
        await t.send(PING)
        assert (await t.receive()).raw == PING
        await t.close_stdin()
        assert await t.wait_exit(10) == 0
        assert t.cpu_seconds() is None
