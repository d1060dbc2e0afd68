"""Entering and leaving a RawPeer: the transport is always closed, nothing hangs or leaks."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conformance.runtime.peer import ExpectTimeout, RawPeer
from conformance.transports.base import Inbound, StartError, Transport, TransportClosed
from conformance.transports.memory import memory_pair
from conformance.wire.envelope import Kind

pytestmark = pytest.mark.anyio


class _Tracked(Transport):
    name = "tracked"

    def __init__(self, *, fail_start: bool = False) -> None:
        self.fail_start = fail_start
        self.started = False
        self.closed = 0
        self._gone = anyio.Event()

    async def start(self) -> None:
        if self.fail_start:
            raise StartError("cannot start: no such file")
        self.started = True

    async def send(self, data: bytes, **opts: Any) -> None:
        pass

    async def receive(self) -> Inbound:
        await self._gone.wait()
        raise TransportClosed("closed")

    async def aclose(self) -> None:
        self.closed += 1
        self._gone.set()


async def test_exit_closes_the_transport_and_the_other_side_sees_it() -> None:
    ours, theirs = memory_pair()
    async with RawPeer(ours, version="2025-11-25") as peer:
        await peer.notify("x")
    assert ours.closed
    assert (await theirs.receive()).envelope.method == "x"
    with pytest.raises(TransportClosed):
        await theirs.receive()
    await theirs.aclose()


async def test_an_exception_in_the_body_propagates_unwrapped_and_closes() -> None:
    transport = _Tracked()
    with pytest.raises(ExpectTimeout):
        async with RawPeer(transport, version="2025-11-25") as peer:
            await peer.expect_response(1, timeout=0.01)
    assert transport.closed == 1


async def test_cancellation_while_waiting_never_hangs() -> None:
    transport = _Tracked()
    with anyio.move_on_after(0.1) as scope:
        async with RawPeer(transport, version="2025-11-25") as peer:
            await peer.expect_response(1, timeout=60)
    assert scope.cancelled_caught
    assert transport.closed == 1


async def test_start_failure_propagates_and_cleans_up() -> None:
    transport = _Tracked(fail_start=True)
    with pytest.raises(StartError):
        async with RawPeer(transport, version="2025-11-25"):
            pytest.fail("the body must not run")
    assert transport.closed == 1


async def test_aclose_is_idempotent_and_entering_twice_is_refused() -> None:
    transport = _Tracked()
    peer = RawPeer(transport, version="2025-11-25")
    async with peer:
        await peer.aclose()
        assert transport.closed == 1
        await peer.aclose()
    assert transport.closed == 1
    with pytest.raises(RuntimeError):
        async with peer:
            pass


async def test_a_crashing_handler_is_our_error_not_the_peers(connect) -> None:
    async def asks(server, env) -> None:
        if env.method == "go":
            await server.send({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})

    def broken(env: Any) -> Any:
        raise ZeroDivisionError("bug in the scenario")

    async with connect(asks) as (peer, _):
        peer.on_request("roots/list", broken)
        await peer.notify("go")
        with pytest.raises(RuntimeError) as info:
            await peer.expect_notification("never", timeout=5)
        assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert any("crashed" in (e.text or "") for e in peer.transcript)


async def test_inbound_keeps_everything_consumed_or_not(connect) -> None:
    async def burst(server, env) -> None:
        if env.kind is Kind.REQUEST:
            for n in range(50):
                await server.notify("notifications/progress", {"progressToken": 1, "progress": n})
            await server.result(env.id, {})

    async with connect(burst) as (peer, _):
        await peer.call("ping")
        assert len(peer.inbound) == 51
        assert len(peer.unconsumed()) == 50
        for n in range(50):
            assert (await peer.expect_notification("notifications/progress")).params["progress"] == n
        assert peer.unconsumed() == []
        assert len(peer.inbound) == 51


def test_a_peer_can_be_built_outside_the_event_loop() -> None:
    peer = RawPeer(_Tracked(), version="2026-07-28", capabilities={"roots": {}})
    assert peer.closed is None and peer.transcript.entries == []

    async def use() -> None:
        async with peer:
            await peer.request("tools/list")

    anyio.run(use)
