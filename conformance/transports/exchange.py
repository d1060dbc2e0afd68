"""What one HTTP request and its response looked like on the wire (:class:`HttpExchange`), and the
two media types of MCP over HTTP.  Apart from :mod:`conformance.transports.http` (which re-exports
them) so that what only reads exchanges -- the scenario modules, all imported on every run -- does
not import httpx on a stdio run."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio

from conformance.wire.sse import SSEEvent

__all__ = ["HttpExchange", "JSON_TYPE", "SSE_TYPE"]

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


@dataclass(eq=False)
class HttpExchange:
    """One HTTP request and its response, as seen on the wire."""

    stream: str  # "post:3", "get:4", "delete:5", ... (unique per transport)
    method: str
    url: str
    status: int
    headers: dict[str, str]  # response headers, lower-cased names (repeated headers joined by ", ")
    content_type: str | None = None  # media type of the response, lower-cased, without parameters
    body: bytes | None = None  # the body of a non-SSE response (None while unread or not read)
    sse_events: list[SSEEvent] = field(default_factory=list)  # filled as events arrive (bounded)
    done: anyio.Event = field(default_factory=anyio.Event)  # set when the body / stream has ended
    reason: str = ""
    http_version: str = ""
    request_headers: dict[str, str] = field(default_factory=dict)  # what we sent, lower-cased names
    request_body: bytes | None = None
    problems: list[str] = field(default_factory=list)  # stalled/oversized body, broken stream...
    last_event_id: str | None = None  # the latest SSE ``id`` seen on this stream
    closed_by: str | None = None  # "server", "client" or "error" once ``done`` is set
    dropped_events: int = 0  # SSE events not kept in ``sse_events`` (over the limit)
    stalled: bool = False  # a non-SSE body that did not end within the timeout (what came is in ``body``)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def is_sse(self) -> bool:
        return self.content_type == SSE_TYPE

    async def wait_done(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the body / stream to end; True if it has."""
        with anyio.move_on_after(timeout):
            await self.done.wait()
        return self.done.is_set()
