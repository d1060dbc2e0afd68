"""memory_pair: raw bytes both ways, close semantics."""

from __future__ import annotations

import anyio
import pytest

from conformance.transports.base import Transport, TransportClosed
from conformance.transports.memory import MemoryTransport, memory_pair
from conformance.wire.envelope import Kind

pytestmark = pytest.mark.anyio


async def test_both_directions_carry_bytes_verbatim() -> None:
    a, b = memory_pair()
    assert isinstance(a, Transport) and isinstance(b, MemoryTransport)
    await a.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    await b.send(b"not json\n{}")
    got_b = await b.receive()
    got_a = await a.receive()
    assert got_b.raw == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert got_b.envelope is not None and got_b.envelope.kind is Kind.REQUEST and got_b.envelope.id == 1
    assert got_a.raw == b"not json\n{}"
    assert got_a.envelope is not None and got_a.envelope.kind is Kind.PARSE_ERROR
    assert got_a.meta["stream"] == "memory"
    await a.aclose()
    await b.aclose()


async def test_send_bytes_delivers_one_message() -> None:
    a, b = memory_pair()
    await a.send_bytes(b"")
    got = await b.receive()
    assert got.raw == b"" and got.envelope is not None and got.envelope.kind is Kind.PARSE_ERROR
    await a.aclose()
    await b.aclose()


async def test_close_lets_the_other_side_drain_then_raises() -> None:
    a, b = memory_pair()
    events: list[str] = []
    b.events = lambda text, meta: events.append(text)
    await a.send(b"1")
    await a.send(b"2")
    await a.aclose()
    assert a.closed
    assert (await b.receive()).raw == b"1"
    assert (await b.receive()).raw == b"2"
    with pytest.raises(TransportClosed):
        await b.receive()
    with pytest.raises(TransportClosed):
        await b.receive()  # stays closed
    assert len(events) == 1 and "closed" in events[0]
    with pytest.raises(TransportClosed):
        await b.send(b"3")  # nobody is listening any more
    await b.aclose()


async def test_own_side_closed() -> None:
    a, b = memory_pair()
    await a.aclose()
    await a.aclose()  # idempotent
    with pytest.raises(TransportClosed):
        await a.send(b"x")
    with pytest.raises(TransportClosed):
        await a.receive()
    await b.aclose()


async def test_buffer_bounds_the_sender() -> None:
    a, b = memory_pair(buffer=2)
    await a.send(b"1")
    await a.send(b"2")
    blocked = True
    with anyio.move_on_after(0.05):
        await a.send(b"3")
        blocked = False
    assert blocked
    assert (await b.receive()).raw == b"1"
    await a.send(b"3")  # room again
    await a.aclose()
    await b.aclose()


async def test_receive_wakes_on_close_of_the_other_side() -> None:
    a, b = memory_pair()
    result: list[BaseException] = []

    async def reader() -> None:
        try:
            await b.receive()
        except TransportClosed as exc:
            result.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        await anyio.wait_all_tasks_blocked()
        await a.aclose()
    assert len(result) == 1
    await b.aclose()
