"""The raw peer over a real child process (the stdlib tiny server): scopes, close, exit codes."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from conformance.runtime.peer import ConnectionLost, RawPeer
from conformance.transports.base import ProcessExited
from conformance.transports.stdio import StdioTransport
from conformance.wire.envelope import Kind

pytestmark = pytest.mark.anyio

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "peers" / "tiny_server.py"


def tiny() -> StdioTransport:
    return StdioTransport([sys.executable, str(TINY)])


async def test_round_trips_over_stdio() -> None:
    transport = tiny()
    async with RawPeer(transport, version="2025-11-25", timeout=10) as peer:
        env = await peer.initialize()
        assert env.kind is Kind.RESULT and peer.negotiated_version == "2025-11-25"
        result = await peer.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert result["content"][0]["text"] == "hi"
        await peer.send_bytes(b'{"jsonrpc":"2.0","id":"raw","method":"ping"}\n')
        assert (await peer.expect_response("raw")).result == {}
    assert transport.returncode is not None  # the process is gone after leaving
    assert any(e.direction == "note" and "process" in (e.text or "") for e in peer.transcript)


async def test_cancelled_while_waiting_cleans_up_the_process() -> None:
    transport = tiny()
    with anyio.move_on_after(0.5) as scope:
        async with RawPeer(transport, version="2025-11-25") as peer:
            await peer.initialize()
            await peer.expect_notification("never/sent", timeout=60)
    assert scope.cancelled_caught
    assert transport.returncode is not None


async def test_body_exception_propagates_and_the_process_is_stopped() -> None:
    transport = tiny()
    with pytest.raises(LookupError):
        async with RawPeer(transport, version="2025-11-25"):
            raise LookupError("scenario bug")
    assert transport.returncode is not None


async def test_process_exit_is_connection_lost_with_the_exit_code() -> None:
    code = "import sys; sys.stdin.readline(); sys.stderr.write('dying now\\n'); sys.exit(7)"
    transport = StdioTransport([sys.executable, "-c", code])
    async with RawPeer(transport, version="2025-11-25", timeout=10) as peer:
        rid = await peer.request("ping")
        with pytest.raises(ConnectionLost) as info:
            await peer.expect_response(rid)
    cause = info.value.cause
    assert isinstance(cause, ProcessExited) and cause.returncode == 7
    assert "exit code 7" in str(info.value) and "dying now" in str(info.value)
