"""The Streamable HTTP transport (2025-03-26 and later), raw: any body, any header, every response kept.

* One :class:`httpx.AsyncClient` per transport (``trust_env=False``: no proxies or netrc from the
  environment, no redirects followed).
* Every request yields an :class:`HttpExchange` (status, lower-cased headers, body or SSE events)
  and an event ``"<METHOD> <url> -> <status> <reason>"`` with selected request/response headers.
* JSON (and any other non-SSE) bodies are read before :meth:`send` returns, bounded in size
  (``max_body_bytes``) and time (``timeout``); a body that stalls or overflows is recorded on the
  exchange as a problem, not raised.  What becomes a message (an :class:`Inbound` from
  :meth:`receive`): a 2xx POST body (except 202), and any non-2xx body that is JSON.
* SSE bodies are read by one background task per stream through :class:`SSEDecoder`; every event
  with data becomes an :class:`Inbound` (meta ``stream``, ``http_status``, ``sse_id``,
  ``sse_event``); priming events (an id with empty data), ``retry`` fields and stream
  open/close are events.  SSE streams have no read deadline; :meth:`close_stream` or
  :meth:`aclose` ends them.
* Inbound messages pass through one bounded queue (``max_queued``).  When it is full, stream
  readers wait: they stop reading their sockets, so TCP holds the peer back (backpressure, nothing
  dropped) and memory stays bounded by ``max_queued`` messages plus one read chunk per stream.
  (:meth:`send` also waits for room to queue a JSON answer: keep a reader on :meth:`receive`.)

Deadlines: response headers (and a non-SSE body) within ``timeout`` seconds, else
:class:`PeerSilent` (a :class:`TransportTimeout`: the request reached the server, and no answer
came; a connection not made in time is a plain :class:`TransportTimeout`), and a body that stalls
marks its exchange ``stalled``;
a refused connection or a bad URL is a :class:`ConnectError`.
Background tasks live in a task group entered by :meth:`start` and left by :meth:`aclose`: both
must run in the same task (``async with StreamableHttpTransport(...)``).
"""

from __future__ import annotations

import itertools
import os
import ssl
from typing import Any, Mapping, Union

import anyio
import anyio.abc
import httpx

from conformance.transports.base import ConnectError, Inbound, PeerSilent, Transport, TransportClosed, TransportError, TransportTimeout
from conformance.transports.exchange import JSON_TYPE, SSE_TYPE, HttpExchange  # noqa: F401 - re-exported
from conformance.wire.envelope import Kind, parse_envelope
from conformance.wire.headers import request_metadata_headers
from conformance.wire.sse import SSEDecoder, SSEEvent

__all__ = ["StreamableHttpTransport", "HttpExchange", "HeaderArg", "Ended"]

HeaderArg = Union[Mapping[str, Union[str, bytes, None]], None]
"""Caller headers: a value replaces the default of that name; ``None`` removes it (also httpx's own)."""

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024

_RESPONSE_HEADERS_REPORTED = (
    "content-type",
    "content-length",
    "transfer-encoding",
    "mcp-session-id",
    "mcp-protocol-version",
    "location",
    "allow",
    "www-authenticate",
    "retry-after",
    "cache-control",
    "x-accel-buffering",
)
_REQUEST_HEADERS_REPORTED = (
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "origin",
)


def _media_type(value: str | None) -> str | None:
    if value is None:
        return None
    return value.split(";", 1)[0].strip().lower() or None


def _lower_headers(headers: httpx.Headers) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers.multi_items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _pick(headers: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    return {n: headers[n] for n in names if n in headers}


def _reason(exc: BaseException) -> str:
    """The most specific OS-level reason in an httpx error's cause chain ("Connection refused")."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    best = str(exc) or exc.__class__.__name__
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno:
            return os.strerror(cur.errno)
        if isinstance(cur, OSError) and str(cur):
            best = str(cur)
        cur = cur.__cause__ or cur.__context__
    return best


class Ended:
    """Queue sentinel: the connection ended (legacy SSE); receive() raises ``error``."""

    __slots__ = ("error",)

    def __init__(self, error: TransportClosed) -> None:
        self.error = error


_TLS: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    """One default (verifying) TLS context for every client: httpx builds a new one per client
    otherwise, loading the CA bundle each time (~0.15 s of CPU per connection here)."""
    global _TLS
    if _TLS is None:
        _TLS = httpx.create_ssl_context(trust_env=False)  # as the client's own: trust_env=False
    return _TLS


class HttpTransportBase(Transport):
    """Shared plumbing of the HTTP transports (client, exchanges, SSE readers, inbound queue)."""

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
        self.url = url
        self.headers: dict[str, str | bytes | None] = dict(headers or {})
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self.max_queued = max_queued
        self.max_sse_events = max_sse_events
        self._client: httpx.AsyncClient | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._send_q: Any = None
        self._recv_q: Any = None
        self._streams: dict[str, tuple[anyio.CancelScope, HttpExchange]] = {}
        self._counter = itertools.count(1)
        self._started = False
        self._closing = False
        self._close_done: anyio.Event | None = None
        self._ended: TransportClosed | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            raise TransportError(f"{type(self).__name__}.start() called twice")
        self._check_url(self.url)
        self._started = True
        self._client = httpx.AsyncClient(
            trust_env=False,
            follow_redirects=False,
            verify=_tls_context(),
            # our own deadlines bound response headers and bodies; SSE streams have none
            timeout=httpx.Timeout(self.timeout, read=None),
        )
        self._send_q, self._recv_q = anyio.create_memory_object_stream(self.max_queued)
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg

    async def aclose(self) -> None:
        """Cancel every stream reader, close the client.  Idempotent; shielded from cancellation."""
        if self._close_done is not None:
            with anyio.CancelScope(shield=True):
                await self._close_done.wait()
            return
        self._close_done = anyio.Event()
        self._closing = True
        try:
            if self._tg is not None:
                tg, self._tg = self._tg, None
                tg.cancel_scope.cancel()
                await tg.__aexit__(None, None, None)
        finally:
            with anyio.CancelScope(shield=True):
                if self._client is not None:
                    with anyio.move_on_after(5):
                        await self._client.aclose()
                for q in (self._send_q, self._recv_q):
                    if q is not None:
                        q.close()
                self._close_done.set()

    def _check_url(self, url: str) -> None:
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise ConnectError(f"bad URL {url!r}: {exc}", url=url, reason=str(exc)) from exc
        if parsed.scheme not in ("http", "https") or not parsed.host:
            reason = "the URL must be absolute, with an http:// or https:// scheme and a host"
            raise ConnectError(f"bad URL {url!r}: {reason}", url=url, reason=reason)

    # -- receiving ----------------------------------------------------------------------------

    async def receive(self) -> Inbound:
        if self._ended is not None:
            raise TransportClosed(str(self._ended), **self._ended.detail)
        if self._recv_q is None:
            raise TransportError("the transport has not been started")
        try:
            item = await self._recv_q.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the transport is closed") from None
        if isinstance(item, Ended):
            self._ended = item.error
            raise TransportClosed(str(item.error), **item.error.detail)
        return item

    async def _deliver(self, item: Inbound | Ended) -> None:
        try:
            await self._send_q.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # closing: nobody will receive it

    # -- requests -----------------------------------------------------------------------------

    def _default_headers(self, method: str, body: bytes | None) -> list[tuple[str, str]]:
        return []

    def _build_headers(self, method: str, body: bytes | None, extra: HeaderArg) -> tuple[list[tuple[str, Any]], set[str]]:
        merged: dict[str, tuple[str, Any]] = {}
        removed: set[str] = set()
        for name, value in self._default_headers(method, body):
            merged[name.lower()] = (name, value)
        for layer in (self.headers, extra or {}):
            for name, value in layer.items():
                key = name.lower()
                if value is None:
                    merged.pop(key, None)
                    removed.add(key)
                else:
                    merged[key] = (name, value)
                    removed.discard(key)
        return list(merged.values()), removed

    async def _request(
        self,
        method: str,
        *,
        body: bytes | None = None,
        headers: HeaderArg = None,
        kind: str | None = None,
        url: str | None = None,
        read_body: bool = True,
        messages: bool = True,
    ) -> HttpExchange:
        """One exchange.  ``messages``: a 2xx body (except 202) is delivered as a message."""
        client, tg = self._client, self._tg
        if client is None:
            raise TransportError("the transport has not been started")
        if self._closing or tg is None:
            raise TransportClosed("the transport is closed")
        url = url or self.url
        stream = f"{kind or method.lower()}:{next(self._counter)}"
        header_list, removed = self._build_headers(method, body, headers)
        reached = False  # our request went out on a connection (the server has it)

        async def trace(name: str, info: Any) -> None:
            nonlocal reached
            if name.endswith("send_request_headers.started"):
                reached = True

        try:
            request = client.build_request(method, url, content=body, headers=header_list, extensions={"trace": trace})
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise ConnectError(f"bad URL {url!r}: {exc}", url=url, reason=str(exc)) from exc
        except UnicodeEncodeError as exc:
            raise TransportError(f"a header value is not ASCII (pass bytes to send it raw): {exc}") from exc
        for key in removed:
            if key in request.headers:
                del request.headers[key]
        sent = _lower_headers(request.headers)
        try:
            with anyio.fail_after(self.timeout):
                response = await client.send(request, stream=True)
        except (TimeoutError, httpx.TimeoutException) as exc:
            what = "no response headers" if reached else "could not connect"
            self._event(f"{method} {url}: {what} within {self.timeout:g} s", stream=stream, method=method, url=url)
            # the request reached the server, and not a byte of an answer came: the server's silence,
            # unlike a connection that was never made
            raise (PeerSilent if reached else TransportTimeout)(
                f"{method} {url}: {what} within {self.timeout:g} s", url=url, stream=stream) from exc
        except httpx.ConnectError as exc:
            reason = _reason(exc)
            self._event(f"{method} {url}: cannot connect: {reason}", stream=stream, method=method, url=url)
            raise ConnectError(f"cannot connect to {url}: {reason}", url=url, reason=reason) from exc
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise ConnectError(f"bad URL {url!r}: {exc}", url=url, reason=str(exc)) from exc
        except httpx.HTTPError as exc:
            reason = _reason(exc)
            self._event(f"{method} {url}: {reason}", stream=stream, method=method, url=url)
            raise TransportError(f"{method} {url}: {reason}", url=url, stream=stream) from exc

        ex = HttpExchange(
            stream=stream,
            method=method,
            url=str(request.url),
            status=response.status_code,
            headers=_lower_headers(response.headers),
            reason=response.reason_phrase,
            http_version=response.http_version,
            request_headers=sent,
            request_body=body,
        )
        ex.content_type = _media_type(ex.headers.get("content-type"))
        handed_off = False
        try:
            self._event(
                f"{method} {ex.url} -> {ex.status} {ex.reason}".rstrip(),
                stream=stream,
                method=method,
                url=ex.url,
                status=ex.status,
                request_headers=_pick(sent, _REQUEST_HEADERS_REPORTED),
                response_headers=_pick(ex.headers, _RESPONSE_HEADERS_REPORTED),
            )
            self._on_response(ex)
            if not read_body:
                ex.closed_by = "client"
            elif ex.is_sse:
                scope = anyio.CancelScope()
                self._streams[stream] = (scope, ex)
                tg.start_soon(self._pump_sse, ex, response, scope)
                handed_off = True
            else:
                await self._read_body(ex, response)
                await self._deliver_body(ex, messages=messages)
        finally:
            if not handed_off:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
                ex.done.set()
        return ex

    def _on_response(self, ex: HttpExchange) -> None:
        """Hook: look at a response's headers as soon as they arrive."""

    async def _read_body(self, ex: HttpExchange, response: httpx.Response) -> None:
        chunks: list[bytes] = []
        size = 0
        limit = self.max_body_bytes
        try:
            with anyio.fail_after(self.timeout):
                async for chunk in response.aiter_bytes():
                    if size + len(chunk) > limit:
                        chunks.append(chunk[: limit - size])
                        size = limit
                        ex.problems.append(f"response body exceeds {limit} bytes (truncated)")
                        break
                    chunks.append(chunk)
                    size += len(chunk)
            ex.closed_by = "server"
        except TimeoutError:
            ex.closed_by = "client"
            ex.stalled = True
            ex.problems.append(f"response body not complete within {self.timeout:g} s ({size} bytes received)")
            self._event(f"{ex.method} {ex.url}: response body stalled", stream=ex.stream, received=size)
        except httpx.HTTPError as exc:
            ex.closed_by = "error"
            ex.problems.append(f"reading the response body failed: {_reason(exc)}")
            self._event(f"{ex.method} {ex.url}: reading the response body failed: {_reason(exc)}", stream=ex.stream)
        ex.body = chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _deliver_body(self, ex: HttpExchange, *, messages: bool) -> None:
        body = ex.body
        if not body or ex.status == 202:
            return
        truncated = any(p.startswith("response body exceeds") for p in ex.problems)
        envelope = None if truncated else parse_envelope(body)
        if ex.ok:
            if not messages:
                return
            problem = None
            if ex.content_type != JSON_TYPE:
                problem = f"response Content-Type is {ex.headers.get('content-type')!r}, not {JSON_TYPE}"
        else:
            if envelope is None or envelope.kind is Kind.PARSE_ERROR:
                return  # an error page, not a message
            problem = None
        if truncated:
            problem = "; ".join(p for p in (problem, ex.problems[-1]) if p)
        meta = {"stream": ex.stream, "http_status": ex.status, "content_type": ex.headers.get("content-type")}
        await self._deliver(Inbound(body, envelope, problem, meta))

    # -- SSE streams --------------------------------------------------------------------------

    async def _pump_sse(self, ex: HttpExchange, response: httpx.Response, scope: anyio.CancelScope) -> None:
        decoder = SSEDecoder(max_event_bytes=self.max_body_bytes)
        reported = 0
        outcome = "client"  # unless the stream ends or breaks below
        self._quiet_event("SSE stream opened", stream=ex.stream, url=ex.url)
        try:
            with scope:
                try:
                    async for chunk in response.aiter_bytes():
                        for event in decoder.feed(chunk):
                            await self._on_sse_event(ex, event)
                        if len(decoder.problems) > reported:
                            reported = self._sse_problems(ex, decoder, reported)
                    decoder.close()
                    outcome = "server"
                except httpx.HTTPError as exc:
                    outcome = "error"
                    ex.problems.append(f"SSE stream broken: {_reason(exc)}")
                self._sse_problems(ex, decoder, reported)
        except Exception as exc:  # never let a reader take the task group (and its host) down
            outcome = "error"
            ex.problems.append(f"SSE reader failed: {exc!r}")
        finally:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(5):
                    await response.aclose()
            self._streams.pop(ex.stream, None)
            ex.closed_by = outcome
            ex.done.set()
            text = {"server": "SSE stream ended by the server", "client": "SSE stream closed by us"}.get(outcome, "SSE stream broken")
            self._quiet_event(text, stream=ex.stream, events=len(ex.sse_events) + ex.dropped_events, last_event_id=ex.last_event_id)
        await self._on_stream_end(ex)

    def _sse_problems(self, ex: HttpExchange, decoder: SSEDecoder, reported: int) -> int:
        for problem in decoder.problems[reported:]:
            ex.problems.append(problem)
            self._quiet_event(f"SSE stream problem: {problem}", stream=ex.stream)
        return len(decoder.problems)

    async def _on_stream_end(self, ex: HttpExchange) -> None:
        """Hook: a stream ended (not called when its reader was cancelled)."""

    async def _on_sse_event(self, ex: HttpExchange, event: SSEEvent) -> None:
        if len(ex.sse_events) < self.max_sse_events:
            ex.sse_events.append(event)
        else:
            if not ex.dropped_events:
                ex.problems.append(f"more than {self.max_sse_events} SSE events: further events not kept in sse_events")
            ex.dropped_events += 1
        if event.id is not None:
            ex.last_event_id = event.id
        if event.retry is not None:
            self._quiet_event(f"SSE retry: {event.retry} ms", stream=ex.stream, retry=event.retry, sse_id=event.id)
        if not event.dispatched or event.data == "":
            if event.id is not None:
                self._quiet_event(f"SSE priming event (id {event.id!r}, no data)", stream=ex.stream, sse_id=event.id, sse_event=event.event, dispatched=event.dispatched)
            elif event.retry is None:
                self._quiet_event("SSE event without data", stream=ex.stream, sse_event=event.event)
            return
        problem = self._sse_event_problem(ex, event)
        if not event.raw.isascii():
            try:
                event.raw.decode("utf-8")
            except UnicodeDecodeError:
                bad = "invalid UTF-8 in the SSE event (decoded with replacement characters)"
                problem = f"{problem}; {bad}" if problem else bad
        raw = event.data.encode("utf-8", "surrogatepass")
        meta = {"stream": ex.stream, "http_status": ex.status, "sse_id": event.id, "sse_event": event.event}
        await self._deliver(Inbound(raw, parse_envelope(raw), problem, meta))

    def _sse_event_problem(self, ex: HttpExchange, event: SSEEvent) -> str | None:
        """Hook: a problem with an SSE event that carries a message (wrong event type...)."""
        return None

    def _quiet_event(self, text: str, **meta: Any) -> None:
        """An event from a background task: a failing sink must not crash the task group."""
        try:
            self._event(text, **meta)
        except Exception:  # pragma: no cover - the sink's bug
            pass

    async def close_stream(self, stream: str) -> None:
        """Drop one SSE stream's connection (e.g. to test resumption); no-op if it already ended."""
        entry = self._streams.get(stream)
        if entry is None:
            return
        scope, ex = entry
        scope.cancel()
        with anyio.CancelScope(shield=True):
            await ex.wait_done(self.timeout)

    @property
    def open_streams(self) -> list[str]:
        """Names of the SSE streams being read right now."""
        return list(self._streams)


class StreamableHttpTransport(HttpTransportBase):
    """A client of one MCP endpoint over Streamable HTTP."""

    name = "streamable-http"

    def __init__(
        self,
        url: str,
        *,
        headers: HeaderArg = None,
        timeout: float = 10.0,
        protocol_version: str | None = None,
        request_headers: bool = False,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_queued: int = 1024,
        max_sse_events: int = 10_000,
    ) -> None:
        super().__init__(url, headers=headers, timeout=timeout, max_body_bytes=max_body_bytes, max_queued=max_queued, max_sse_events=max_sse_events)
        self.session_id: str | None = None
        self.protocol_version = protocol_version
        self.request_headers = request_headers

    def _default_headers(self, method: str, body: bytes | None) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        if method == "POST":
            out.append(("Accept", f"{JSON_TYPE}, {SSE_TYPE}"))
            out.append(("Content-Type", JSON_TYPE))
        elif method == "GET":
            out.append(("Accept", SSE_TYPE))
        if self.session_id is not None:
            out.append(("Mcp-Session-Id", self.session_id))
        if self.protocol_version is not None:
            out.append(("MCP-Protocol-Version", self.protocol_version))
        if self.request_headers and method == "POST" and body:
            out.extend(request_metadata_headers(body))
        return out

    def _on_response(self, ex: HttpExchange) -> None:
        sid = ex.headers.get("mcp-session-id")
        if sid is None or sid == self.session_id:
            return
        if self.session_id is None:
            self.session_id = sid
            self._event("session id captured", stream=ex.stream, session_id=sid)
        else:
            self._event("response carries a different session id (kept the one captured before)", stream=ex.stream, session_id=sid, kept=self.session_id)

    async def send(self, data: bytes, *, headers: HeaderArg = None, **_: Any) -> HttpExchange:
        """POST one message body.  Returns when the response headers (and a non-SSE body) are in."""
        return await self._request("POST", body=bytes(data), headers=headers, kind="post")

    async def open_get_stream(self, *, headers: HeaderArg = None, last_event_id: str | None = None) -> HttpExchange:
        """GET the endpoint (a server-to-client SSE stream, or a resumption with ``Last-Event-ID``)."""
        extra: dict[str, str | bytes | None] = {}
        if last_event_id is not None:
            extra["Last-Event-ID"] = last_event_id
        extra.update(headers or {})
        return await self._request("GET", headers=extra, kind="get")

    async def delete_session(self, *, headers: HeaderArg = None) -> HttpExchange:
        """DELETE the endpoint (session termination)."""
        return await self._request("DELETE", headers=headers, kind="delete")

    async def raw_request(
        self,
        method: str,
        *,
        body: bytes | None = None,
        headers: HeaderArg = None,
        read_body: bool = True,
        url: str | None = None,
    ) -> HttpExchange:
        """Any method, body and headers.  ``read_body=False`` closes the response after its headers."""
        method = method.upper()
        return await self._request(method, body=body, headers=headers, read_body=read_body, url=url, messages=method == "POST")
