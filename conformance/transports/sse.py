"""The HTTP+SSE transport of 2024-11-05 (deprecated since 2025-03-26), raw.

"When a client connects, the server MUST send an ``endpoint`` event containing a URI for the
client to use for sending messages. All subsequent client messages MUST be sent as HTTP POST
requests to this endpoint.  Server messages are sent as SSE ``message`` events" (2024-11-05,
basic/transports#http-with-sse).

:meth:`LegacySseTransport.start` GETs the SSE URL and waits (``timeout``) for the ``endpoint``
event, resolved against the SSE URL.  :meth:`~LegacySseTransport.send` POSTs to it and returns the
:class:`HttpExchange` (202 or 200 expected; any status is returned, not raised).  Messages arrive
on the SSE stream; an event with data but a type other than ``message`` is delivered too, with a
problem.  When the server ends the stream, :meth:`receive` returns what was received and then
raises :class:`TransportClosed`.  Backpressure, deadlines and cleanup are those of
:mod:`conformance.transports.http`.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx

from conformance.transports.base import HttpStatusError, PeerSilent, TransportClosed, TransportError
from conformance.transports.http import (
    DEFAULT_MAX_BODY_BYTES,
    JSON_TYPE,
    SSE_TYPE,
    HeaderArg,
    HttpExchange,
    HttpTransportBase,
    Ended,
)
from conformance.wire.sse import SSEEvent

__all__ = ["LegacySseTransport"]


class LegacySseTransport(HttpTransportBase):
    """A client of a 2024-11-05 HTTP+SSE server: ``url`` is its SSE endpoint (``GET /sse``)."""

    name = "sse"

    def __init__(
        self,
        url: str,
        *,
        headers: HeaderArg = None,
        timeout: float = 10.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_queued: int = 1024,
        max_sse_events: int = 10_000,
    ) -> None:
        super().__init__(url, headers=headers, timeout=timeout, max_body_bytes=max_body_bytes, max_queued=max_queued, max_sse_events=max_sse_events)
        self.endpoint: str | None = None
        self.stream: HttpExchange | None = None  # the GET exchange carrying the SSE stream
        self._endpoint_seen: anyio.Event | None = None

    def _default_headers(self, method: str, body: bytes | None) -> list[tuple[str, str]]:
        if method == "GET":
            return [("Accept", SSE_TYPE)]
        if method == "POST":
            return [("Content-Type", JSON_TYPE)]
        return []

    async def start(self) -> None:
        await super().start()
        self._endpoint_seen = anyio.Event()
        try:
            ex = await self._request("GET", kind="sse", messages=False)
            if not ex.ok or not ex.is_sse:
                raise HttpStatusError(
                    f"GET {ex.url} answered {ex.status} {ex.reason} with Content-Type "
                    f"{ex.headers.get('content-type')!r}; expected an SSE stream (text/event-stream)",
                    status=ex.status,
                    headers=ex.headers,
                    body=ex.body or b"",
                    url=ex.url,
                )
            self.stream = ex
            with anyio.move_on_after(self.timeout):
                await self._endpoint_seen.wait()
            if self.endpoint is None:
                if ex.done.is_set():
                    raise TransportClosed(f"the SSE stream of {ex.url} ended before the endpoint event", url=ex.url)
                raise PeerSilent(f"no endpoint event on {ex.url} within {self.timeout:g} s", url=ex.url)
        except BaseException:
            await self.aclose()
            raise

    async def send(self, data: bytes, *, headers: HeaderArg = None, **_: Any) -> HttpExchange:
        """POST one message body to the endpoint; messages in reply arrive on the SSE stream."""
        if self.endpoint is None:
            raise TransportError("no endpoint yet: start() the transport first")
        ex = await self._request("POST", body=bytes(data), headers=headers, kind="post", url=self.endpoint, messages=False)
        if ex.status not in (200, 202):
            ex.problems.append(f"POST to the endpoint answered {ex.status} (expected 202 Accepted or 200)")
        return ex

    async def _on_sse_event(self, ex: HttpExchange, event: SSEEvent) -> None:
        if ex is self.stream and event.event == "endpoint" and event.dispatched:
            if len(ex.sse_events) < self.max_sse_events:
                ex.sse_events.append(event)
            self._on_endpoint(ex, event)
            return
        await super()._on_sse_event(ex, event)

    def _on_endpoint(self, ex: HttpExchange, event: SSEEvent) -> None:
        if self.endpoint is not None:
            self._quiet_event("another endpoint event (ignored)", stream=ex.stream, data=event.data)
            return
        try:
            resolved = httpx.URL(ex.url).join(event.data)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            ex.problems.append(f"endpoint event data is not a URI reference: {event.data!r} ({exc})")
            self._quiet_event("endpoint event with an invalid URI (ignored)", stream=ex.stream, data=event.data)
            return
        base = httpx.URL(ex.url)
        self.endpoint = str(resolved)
        same_origin = (resolved.scheme, resolved.host, resolved.port) == (base.scheme, base.host, base.port)
        self._quiet_event("endpoint received", stream=ex.stream, data=event.data, endpoint=self.endpoint, same_origin=same_origin)
        if self._endpoint_seen is not None:
            self._endpoint_seen.set()

    def _sse_event_problem(self, ex: HttpExchange, event: SSEEvent) -> str | None:
        if event.event != "message":
            return f"SSE event type {event.event!r} (server messages are 'message' events)"
        return None

    async def _on_stream_end(self, ex: HttpExchange) -> None:
        if ex is not self.stream:
            return
        if self._endpoint_seen is not None:
            self._endpoint_seen.set()
        how = {"server": "the server ended the SSE stream", "client": "the SSE stream was closed by us"}.get(ex.closed_by or "", "the SSE stream broke")
        detail = "; ".join(ex.problems[-1:])
        await self._deliver(Ended(TransportClosed(how + (f" ({detail})" if detail and ex.closed_by == "error" else ""), url=ex.url)))
