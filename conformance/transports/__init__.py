"""All I/O: the transports a conformance peer speaks through, and their one error hierarchy.

* :class:`StdioTransport` -- spawn a server, NDJSON over stdin/stdout.
* :class:`StreamableHttpTransport` -- the Streamable HTTP transport (2025-03-26 and later).
* :class:`LegacySseTransport` -- the HTTP+SSE transport of 2024-11-05.
* :func:`memory_pair` -- two connected in-process ends (tests, reference peers).

The concrete transports are imported on first use, so ``import conformance.transports`` does not
pull in httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from conformance.transports.base import (
    ConnectError,
    EventSink,
    HttpStatusError,
    Inbound,
    ProcessExited,
    StartError,
    Transport,
    TransportClosed,
    TransportError,
    TransportTimeout,
    PeerSilent,
)

if TYPE_CHECKING:
    from conformance.transports.exchange import HttpExchange
    from conformance.transports.http import StreamableHttpTransport
    from conformance.transports.memory import MemoryTransport, memory_pair
    from conformance.transports.sse import LegacySseTransport
    from conformance.transports.stdio import StdioTransport

__all__ = [
    "Transport",
    "Inbound",
    "EventSink",
    "StdioTransport",
    "StreamableHttpTransport",
    "HttpExchange",
    "LegacySseTransport",
    "MemoryTransport",
    "memory_pair",
    "TransportError",
    "TransportClosed",
    "TransportTimeout",
    "PeerSilent",
    "ProcessExited",
    "StartError",
    "ConnectError",
    "HttpStatusError",
]

_LAZY = {
    "StdioTransport": "conformance.transports.stdio",
    "StreamableHttpTransport": "conformance.transports.http",
    "HttpExchange": "conformance.transports.exchange",
    "LegacySseTransport": "conformance.transports.sse",
    "MemoryTransport": "conformance.transports.memory",
    "memory_pair": "conformance.transports.memory",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
