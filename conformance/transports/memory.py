"""Two in-process transports joined by anyio memory object streams.

Each side's ``send(data)`` arrives, byte for byte, as one :class:`Inbound` on the other side's
``receive()``.  There is no framing: one ``send`` is one message, whatever its bytes (invalid
JSON, embedded newlines, an empty body).  Closing one side lets the other drain what was
already sent, after which its ``receive()`` raises :class:`TransportClosed`.

Used for fast in-process tests of the raw peer and for in-process reference peers.
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from conformance.transports.base import Inbound, Transport, TransportClosed
from conformance.wire.envelope import parse_envelope

__all__ = ["MemoryTransport", "memory_pair"]


class MemoryTransport(Transport):
    """One end of a :func:`memory_pair`."""

    name = "memory"

    def __init__(
        self,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
        *,
        label: str,
    ) -> None:
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        self.label = label
        self._closed = False
        self._peer_gone = False

    @property
    def closed(self) -> bool:
        """True once this side was closed (``aclose``)."""
        return self._closed

    async def send(self, data: bytes, **opts: Any) -> None:
        """Deliver ``data`` as one message; transport options (HTTP headers...) are ignored."""
        if self._closed:
            raise TransportClosed(f"memory transport {self.label!r} is closed")
        try:
            await self._send_stream.send(bytes(data))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise TransportClosed(f"the other side of memory transport {self.label!r} is closed") from None

    async def send_bytes(self, data: bytes) -> None:
        """Deliver exactly these bytes as one message (there is no framing to bypass)."""
        await self.send(data)

    async def receive(self) -> Inbound:
        try:
            data = await self._receive_stream.receive()
        except anyio.EndOfStream:
            if not self._peer_gone:
                self._peer_gone = True
                self._event("the other side closed the memory transport", stream="memory")
            raise TransportClosed(f"the other side of memory transport {self.label!r} closed the connection") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise TransportClosed(f"memory transport {self.label!r} is closed") from None
        return Inbound(raw=data, envelope=parse_envelope(data), meta={"stream": "memory"})

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Closing the send side ends the other side's receive() after it drained the buffer;
        # closing the receive side makes the other side's send() fail.
        self._send_stream.close()
        self._receive_stream.close()


def memory_pair(*, buffer: int = 1000) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: what one sends, the other receives.  ``buffer`` is the number of
    messages each direction holds before ``send`` waits."""
    a_to_b_send, a_to_b_receive = anyio.create_memory_object_stream[bytes](max_buffer_size=buffer)
    b_to_a_send, b_to_a_receive = anyio.create_memory_object_stream[bytes](max_buffer_size=buffer)
    a = MemoryTransport(a_to_b_send, b_to_a_receive, label="a")
    b = MemoryTransport(b_to_a_send, a_to_b_receive, label="b")
    return a, b
