"""The transport interface and the one error hierarchy.  All I/O lives under ``transports/``.

A transport moves *framed messages* and reports everything it sees:

* ``send(data)`` sends one message body (stdio adds the newline; HTTP makes it a POST body);
  ``send_bytes(data)`` (stdio only) writes exactly the given bytes, for framing tests.
* ``receive()`` returns the next :class:`Inbound` item: a message, or a framing problem the peer
  caused (garbage on stdout, a line over the limit, a CR before the LF, invalid UTF-8). It raises
  :class:`TransportClosed` (or a subclass with details) once the peer is gone and everything
  received before that has been returned.
* ``events`` is an optional callback ``(text, meta)`` for transport events that are not messages
  (process started/exited, HTTP status line, SSE stream opened/closed, stderr lines); the raw peer
  wires it to the transcript.

Waits are bounded by the caller (``anyio.fail_after``); transports never block forever on their
own: a closed pipe or socket always ends ``receive()``.
"""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.wire.envelope import Envelope

__all__ = [
    "Inbound",
    "EventSink",
    "Transport",
    "TransportError",
    "TransportClosed",
    "TransportTimeout",
    "PeerSilent",
    "ProcessExited",
    "StartError",
    "ConnectError",
    "HttpStatusError",
]

EventSink = Callable[[str, dict[str, Any]], None]


@dataclass
class Inbound:
    """One thing received from the peer.

    ``envelope`` is the parsed message (``None`` when the frame could not be a message at all);
    ``problem`` names a framing problem (``"line exceeds 1048576 bytes"``, ``"CR before LF"``,
    ``"invalid UTF-8"``) -- a frame may have a problem *and* an envelope (a CRLF-terminated but
    otherwise valid message).  ``meta`` carries transport details: ``stream`` ("stdout",
    "post:3", "get:1", "sse"), ``http_status``, ``content_type``, ``sse_id``, ``sse_event``...
    """

    raw: bytes
    envelope: Envelope | None
    problem: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    t: float = field(default_factory=time.monotonic)


class TransportError(Exception):
    """Base of every transport failure.  ``detail`` is a short, user-facing explanation."""

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.detail = detail


class TransportClosed(TransportError):
    """The connection ended (EOF, socket closed, stream ended) and nothing more will arrive."""


class ProcessExited(TransportClosed):
    """The server process exited.  Carries its exit code and the tail of its stderr."""

    def __init__(self, message: str, *, returncode: int | None, stderr_tail: str = "", **detail: Any) -> None:
        super().__init__(message, returncode=returncode, stderr_tail=stderr_tail, **detail)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class TransportTimeout(TransportError):
    """A transport-level wait (connect, start-up, HTTP response headers) passed its deadline."""


class PeerSilent(TransportTimeout):
    """The peer was reached and then left us waiting past the deadline: no HTTP response headers
    (a POST held while the server works, a GET stream that never opens), no ``endpoint`` event on
    an SSE stream.  The peer's silence -- like a JSON-RPC response that never comes, a verdict
    about the peer -- unlike a connection that could not be made."""


class StartError(TransportError):
    """The target could not be started (command not found, not executable, exited at once)."""


class ConnectError(TransportError):
    """The target could not be reached (connection refused, bad URL, DNS, TLS)."""


class HttpStatusError(TransportError):
    """An HTTP status the caller did not expect, with the response headers and body kept."""

    def __init__(self, message: str, *, status: int, headers: dict[str, str] | None = None, body: bytes = b"", **detail: Any) -> None:
        super().__init__(message, status=status, **detail)
        self.status = status
        self.headers = headers or {}
        self.body = body


class Transport(abc.ABC):
    """What the raw peer needs from every transport."""

    name: str = "abstract"
    events: EventSink | None = None

    async def start(self) -> None:
        """Open the connection / spawn the process.  Raises StartError / ConnectError."""

    @abc.abstractmethod
    async def send(self, data: bytes, **opts: Any) -> Any:
        """Send one message body.  HTTP transports return their exchange record."""

    @abc.abstractmethod
    async def receive(self) -> Inbound:
        """The next inbound item; raises TransportClosed when nothing more will come."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release everything (terminate, then kill, a child process).  Idempotent, never raises."""

    def _event(self, text: str, **meta: Any) -> None:
        if self.events is not None:
            self.events(text, meta)

    async def __aenter__(self) -> "Transport":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
