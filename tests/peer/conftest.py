"""Fixtures for the raw peer tests: small in-process fake servers over ``memory_pair``."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import pytest

from conformance.runtime.peer import RawPeer
from conformance.transports.base import TransportClosed
from conformance.transports.memory import MemoryTransport, memory_pair
from conformance.wire.envelope import Envelope, Kind, dumps

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "fake", "version": "1.0"},
}


class FakeServer:
    """The other end of a memory pair, driven by a per-message handler written in the test."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.received: list[Envelope] = []
        self._queue_send, self._queue = anyio.create_memory_object_stream[Envelope](max_buffer_size=10_000)

    async def send(self, value: Any) -> None:
        await self.transport.send(dumps(value))

    async def send_raw(self, body: bytes) -> None:
        await self.transport.send(body)

    async def result(self, id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": id, "result": result})

    async def error(self, id: Any, code: int, message: str = "error") -> None:
        await self.send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})

    async def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self.send(msg)

    async def recv(self, timeout: float = 2.0) -> Envelope:
        """The next message the peer sent (as seen by ``run``), within ``timeout`` seconds."""
        with anyio.fail_after(timeout):
            return await self._queue.receive()

    async def run(self, handler: Callable[["FakeServer", Envelope], Awaitable[None]]) -> None:
        try:
            while True:
                inbound = await self.transport.receive()
                env = inbound.envelope
                assert env is not None
                self.received.append(env)
                self._queue_send.send_nowait(env)
                await handler(self, env)
        except TransportClosed:
            pass
        finally:
            self._queue_send.close()


async def standard(server: FakeServer, env: Envelope) -> None:
    """A well-behaved server: initialize, ping, a few methods, -32601 otherwise, -32700 for garbage."""
    if env.kind is Kind.PARSE_ERROR:
        await server.error(None, -32700, "Parse error")
    if env.kind is not Kind.REQUEST:
        return
    if env.method == "initialize":
        await server.result(env.id, INIT_RESULT)
    elif env.method in ("ping", "echo"):
        await server.result(env.id, {} if env.method == "ping" else {"params": env.params})
    elif env.method == "tools/list":
        await server.result(env.id, {"tools": []})
    else:
        await server.error(env.id, -32601, "Method not found")


async def silent(server: FakeServer, env: Envelope) -> None:
    """Never answers anything."""


Connect = Callable[..., Any]


@pytest.fixture
def connect() -> Connect:
    """``async with connect(handler, version=..., **peer_opts) as (peer, server)``."""

    @asynccontextmanager
    async def _connect(
        handler: Callable[[FakeServer, Envelope], Awaitable[None]] = standard,
        *,
        version: str = "2025-11-25",
        timeout: float = 2.0,
        transport_factory: Callable[[], tuple[Any, MemoryTransport]] | None = None,
        **peer_opts: Any,
    ) -> AsyncIterator[tuple[RawPeer, FakeServer]]:
        ours, theirs = (transport_factory or memory_pair)()
        server = FakeServer(theirs)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.run, handler)
                try:
                    async with RawPeer(ours, version=version, timeout=timeout, **peer_opts) as peer:
                        yield peer, server
                finally:
                    await theirs.aclose()
                    tg.cancel_scope.cancel()
        finally:
            await ours.aclose()
            server._queue_send.close()
            server._queue.close()

    return _connect
