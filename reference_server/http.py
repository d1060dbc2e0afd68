"""The HTTP front-ends: streamable HTTP (``/mcp``) and the legacy HTTP+SSE transport (``/sse``).

A plain ASGI application served by uvicorn; the protocol itself lives in :mod:`reference_server.core`.
One process hosts both transports ("Servers wanting to support older clients should: Continue to
host both the SSE and POST endpoints of the old transport, alongside the new MCP endpoint").

Streamable HTTP, legacy revisions (2025-03-26 .. 2025-11-25): ``initialize`` mints a session
(``Mcp-Session-Id``: 32 random bytes, URL-safe base64, visible ASCII); requests without it get 400,
unknown or deleted sessions 404; ``DELETE`` ends a session.  A POST carrying requests is answered
with ``application/json`` when the answer is ready at once, otherwise with an SSE stream that
carries the request's notifications and server-to-client requests and ends with the response.
Streams have event ids (``<stream>-<seq>``) and keep a bounded log, so ``GET`` with
``Last-Event-ID`` resumes exactly the stream that was interrupted; from 2025-11-25 every stream
starts with a priming event (an id, empty data, a ``retry``).  A ``GET`` without
``Last-Event-ID`` opens a standalone stream for messages unrelated to any request; each such message
goes to one stream only.  A dropped connection does not cancel a request ("Disconnection SHOULD NOT
be interpreted as the client cancelling its request").

Streamable HTTP, 2026-07-28: no sessions, no GET; every POST is served on its own.  The server
checks ``MCP-Protocol-Version``/``Mcp-Method``/``Mcp-Name`` and ``Mcp-Param-*`` against the body
(-32020, 400), answers errors with the status the revision assigns (400, 404), and treats a closed
response stream as cancellation.

Both: ``Origin`` or ``Host`` naming something other than this machine -> 403 (DNS rebinding);
an ``Accept`` without ``application/json`` and ``text/event-stream`` -> 406; a ``Content-Type``
other than ``application/json`` -> 415; a body over the size limit -> 413; invalid JSON -> 400
with a Parse error.
"""

from __future__ import annotations

import base64
import binascii
import collections
import json
import re
import secrets
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable
from urllib.parse import parse_qs, urlsplit

import anyio

from conformance.spec import errors as codes
from conformance.spec.versions import spec
from conformance.wire.envelope import MISSING, dumps
from conformance.wire.headers import NAMED_PARAM, mirrored_params
from conformance.wire.sse import encode_event

from reference_server.core import CLIENT_CAPABILITIES_KEY, LEGACY_VERSIONS, MODERN_VERSIONS, PROTOCOL_VERSION_KEY, Connection, Outgoing, Server, id_key, valid_id

__all__ = ["HttpFront", "run_http", "serve_http"]

Scope = dict
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]

_LOOPBACK = {"localhost", "127.0.0.1", "[::1]", "::1"}
_RETRY_MS = 1000
_KEEPALIVE = 15.0  # seconds of silence before an SSE comment line
_STREAM_LOG = 1000  # events kept per stream for resumption
_STREAMS_PER_SESSION = 256
_MAX_SESSIONS = 1024
_SESSION_IDLE = 3600.0
_B64 = re.compile(r"=\?base64\?(.*)\?=\Z", re.S)


def _json_error(code: int, message: str, rid: Any = MISSING, data: Any = MISSING) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not MISSING:
        err["data"] = data
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if rid is not MISSING:
        msg["id"] = rid
    msg["error"] = err
    return dumps(msg)


async def _respond(send: Send, status: int, body: bytes = b"", *, content_type: str | None = "application/json", headers: Iterable[tuple[str, str]] = ()) -> None:
    hdrs = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    if content_type and body:
        hdrs.append((b"content-type", content_type.encode()))
    hdrs.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})


def _media_types(value: str) -> set[str]:
    return {part.split(";", 1)[0].strip().lower() for part in value.split(",") if part.strip()}


def _accepts(accept: str | None, wanted: str) -> bool:
    if accept is None:
        return False
    types = _media_types(accept)
    major = wanted.split("/", 1)[0]
    return wanted in types or "*/*" in types or f"{major}/*" in types


def _host_only(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end > 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _decode_header_value(value: str) -> str | None:
    """An Mcp-Name / Mcp-Param-* value after OWS trimming and Base64 sentinel decoding (None: invalid)."""
    value = value.strip(" \t")
    m = _B64.match(value)
    if m is None:
        if any(ord(c) < 0x20 and c != "\t" or ord(c) > 0x7E for c in value):
            return None
        return value
    try:
        return base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


# -- SSE streams --------------------------------------------------------------------------------


class SseStream:
    """One logical SSE stream: a log for resumption and at most one attached HTTP connection."""

    def __init__(self, key: str, *, resumable: bool, priming: bool, legacy_event: bool = False) -> None:
        self.key = key
        self.resumable = resumable
        self.priming = priming
        self.legacy_event = legacy_event  # "event: message" (HTTP+SSE transport of 2024-11-05)
        self.seq = 0
        self.log: collections.deque[tuple[int, bytes]] = collections.deque(maxlen=_STREAM_LOG)
        self.pending: list[bytes] = []
        self.wakeup = anyio.Event()
        self.attached = 0  # generation of the attached connection (0: none)
        self._gen = 0
        self.finished = False  # the stream is complete: close after flushing
        self.drop = False  # close the attached connection now (the stream itself goes on)
        self.ever_attached = False  # until the first connection, events wait in ``pending``
        if priming:
            self._emit(b"", retry=_RETRY_MS)

    def _frame(self, data: bytes, *, retry: int | None = None, raw: bool = False) -> bytes:
        eid = None
        if self.resumable:
            eid = f"{self.key}-{self.seq}"
        if raw:
            # bytes that are not a JSON-RPC message (fault injection): keep them on one data line
            text = data.decode("utf-8", "replace").replace("\r", " ").replace("\n", " ")
        else:
            text = data.decode("utf-8")
        return encode_event(text, event="message" if self.legacy_event else None, id=eid, retry=retry)

    def _emit(self, data: bytes, *, retry: int | None = None, raw: bool = False) -> None:
        frame = self._frame(data, retry=retry, raw=raw)
        if self.resumable:
            self.log.append((self.seq, frame))
        self.seq += 1
        if self.attached or not self.ever_attached:
            self.pending.append(frame)
            self.wakeup.set()

    def push(self, out: Outgoing) -> None:
        if self.finished:
            return
        if out.kind in ("response", "notification", "request"):
            self._emit(out.data)
        elif out.kind == "raw":
            self._emit(out.data, raw=True)
        elif out.kind == "close":  # fault: half a message, then the stream ends
            if self.attached or not self.ever_attached:
                self.pending.append(b"data: " + out.data)
            self.finish()
        elif out.kind == "disconnect":  # close the connection, keep the stream (resumable)
            # a stream that cannot be resumed (legacy HTTP+SSE: the one stream is the session)
            # is kept open: closing it would end the session, not test resumption
            if self.attached and self.resumable:
                self.pending.append(f"retry: {_RETRY_MS}\n\n".encode())
                self.drop = True
                self.wakeup.set()

    def finish(self) -> None:
        self.finished = True
        self.wakeup.set()

    def attach(self, after: int | None = None) -> int:
        """Attach an HTTP connection (replacing any other).  ``after``: resume after that event
        (replay the log); ``None``: a fresh stream, whose buffered events are sent first."""
        self._gen += 1
        self.attached = self._gen
        self.drop = False
        if after is not None:
            self.pending = [frame for seq, frame in self.log if seq > after]
        self.ever_attached = True
        self.wakeup.set()
        return self._gen

    async def serve(self, gen: int, send: Send, receive: Receive, headers: list[tuple[bytes, bytes]], on_disconnect: Callable[[], None] | None = None) -> None:
        """Write this stream to one HTTP response until it finishes, is dropped or the client leaves."""
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        client_gone = False
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal client_gone
                while True:
                    msg = await receive()
                    if msg["type"] == "http.disconnect":
                        client_gone = True
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            try:
                while self.attached == gen:
                    if self.pending:
                        chunk = b"".join(self.pending)
                        self.pending = []
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                        continue
                    if self.drop or self.finished:
                        break
                    self.wakeup = anyio.Event()
                    with anyio.move_on_after(_KEEPALIVE) as idle:
                        await self.wakeup.wait()
                    if idle.cancelled_caught:
                        # an SSE comment keeps intermediaries and idle timeouts from closing a
                        # quiet long-lived stream (2026-07-28 transports/streamable-http)
                        await send({"type": "http.response.body", "body": b":\n\n", "more_body": True})
            except OSError:
                client_gone = True
            tg.cancel_scope.cancel()
        if self.attached == gen:
            self.attached = 0
            self.drop = False
        if client_gone:
            if on_disconnect is not None:
                on_disconnect()
            return
        try:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass


_SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]


# -- one POST's worth of answers -----------------------------------------------------------------


class _Exchange:
    """Collects what the core sends for the requests of one POST; decides JSON vs SSE."""

    def __init__(self, expected: set[tuple[type, Any]], *, batch: bool) -> None:
        self.expected = set(expected)
        self.batch = batch
        self.buffer: list[Outgoing] = []
        self.stream: SseStream | None = None
        self.done = anyio.Event()
        self.changed = anyio.Event()
        self.http_status: int | None = None

    @property
    def complete(self) -> bool:
        return not self.expected

    async def sink(self, out: Outgoing) -> None:
        if out.kind in ("response", "end", "close"):
            if self.batch:
                # the core answers a batch as a whole: one array, one error, or nothing ("end")
                if out.kind != "close":
                    self.expected.clear()
            else:
                self.expected.discard(id_key(out.answers) if valid_id(out.answers) else id_key(None))
            if out.kind == "response" and out.http_status is not None and self.http_status is None:
                self.http_status = out.http_status
        if self.stream is None:
            self.buffer.append(out)
            self.changed.set()
        else:
            self.stream.push(out)
        if self.complete:
            if self.stream is not None:
                self.stream.finish()
            self.done.set()

    def single_json(self) -> Outgoing | None:
        """The one response to send as application/json, if that is all there is."""
        if not self.complete:
            return None
        msgs = [o for o in self.buffer if o.kind != "end"]
        if len(msgs) == 1 and msgs[0].kind == "response":
            return msgs[0]
        return None

    def to_stream(self, stream: SseStream) -> None:
        self.stream = stream
        for out in self.buffer:
            stream.push(out)
        self.buffer = []
        if self.complete:
            stream.finish()


def _request_ids(value: Any) -> tuple[set[tuple[type, Any]], bool]:
    """Ids of the requests in a body (and whether it has any request at all)."""
    items = value if isinstance(value, list) else [value]
    ids: set[tuple[type, Any]] = set()
    any_request = False
    for it in items:
        if not isinstance(it, dict):
            any_request = True
            ids.add(id_key(None))  # answered with id null
            continue
        if "method" in it:
            if "id" in it:
                any_request = True
                ids.add(id_key(it["id"]) if valid_id(it["id"]) else id_key(None))
        elif "result" not in it and "error" not in it:
            any_request = True
            rid = it.get("id")
            ids.add(id_key(rid) if valid_id(rid) else id_key(None))
    return ids, any_request


# -- sessions --------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Session:
    id: str
    conn: Connection
    streams: dict[str, SseStream] = field(default_factory=dict)
    standalone: list[SseStream] = field(default_factory=list)
    undelivered: collections.deque = field(default_factory=lambda: collections.deque(maxlen=_STREAM_LOG))
    last_used: float = field(default_factory=time.monotonic)
    counter: int = 0
    closed: bool = False
    owner: Any = None  # the authorization context that opened it (--auth)

    def new_stream(self, prefix: str) -> SseStream:
        self.counter += 1
        version = self.conn.version or LEGACY_VERSIONS[-1]
        vs = spec(version)
        stream = SseStream(f"{prefix}{self.counter}", resumable=vs.resumability, priming=vs.sse_priming)
        self.streams[stream.key] = stream
        while len(self.streams) > _STREAMS_PER_SESSION:
            oldest = next(iter(self.streams))
            if self.streams[oldest].attached:
                break
            del self.streams[oldest]
        return stream

    async def default_sink(self, out: Outgoing) -> None:
        """Messages unrelated to any request: the newest attached standalone stream, else queued."""
        if out.kind not in ("notification", "request", "raw"):
            return
        for stream in reversed(self.standalone):
            if stream.attached and not stream.finished:
                stream.push(out)
                return
        self.undelivered.append(out)

    def close(self) -> None:
        self.closed = True
        self.conn.close()
        for s in self.streams.values():
            s.finish()


class _SseSession:
    """One connection of the legacy HTTP+SSE transport (2024-11-05)."""

    def __init__(self, front: "HttpFront", sid: str) -> None:
        self.id = sid
        self.owner: Any = None  # the authorization context that opened it (--auth)
        self.stream = SseStream("e", resumable=False, priming=False, legacy_event=True)
        self.conn = Connection(front.server, task_group=front.tg, sink=self.sink, transport="sse")

    async def sink(self, out: Outgoing) -> None:
        self.stream.push(out)
        if out.kind == "close":
            self.stream.finish()


# -- the ASGI application ---------------------------------------------------------------------------


class HttpFront:
    """ASGI app for ``/mcp`` (streamable HTTP), ``/sse`` + ``/messages`` (HTTP+SSE)."""

    def __init__(self, server: Server, task_group: anyio.abc.TaskGroup, *, path: str = "/mcp", sse_path: str = "/sse", messages_path: str = "/messages", allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = (), auth: Any = None) -> None:
        self.server = server
        self.auth = auth  # reference_server.auth.AuthGuard: OAuth resource server (--auth), or None
        self.config = server.config
        self.tg = task_group
        if server.background is None:  # stateless requests' work that outlives them (tasks extension)
            server.background = task_group
        self.path = path
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.allowed_hosts = _LOOPBACK | {h.lower() for h in allowed_hosts}
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins}
        self.sessions: dict[str, _Session] = {}
        self.sse_sessions: dict[str, _SseSession] = {}

    # -- entry -------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    self.close_all()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self._dns_rebinding(headers)
        if problem is not None:
            await _respond(send, 403, _json_error(codes.INVALID_REQUEST, f"Forbidden: {problem}"))
            return
        if self.auth is not None and (await self.auth.origin_as(scope, receive, send, headers) or
                                      await self.auth.guard(scope, send, headers, (self.path, self.sse_path, self.messages_path))):
            return
        path = scope["path"]
        method = scope["method"]
        if path == self.path:
            if method == "POST":
                await self._post(scope, receive, send, headers)
            elif method == "GET":
                await self._get(scope, receive, send, headers)
            elif method == "DELETE":
                await self._delete(scope, send, headers)
            else:
                await _respond(send, 405, _json_error(codes.INVALID_REQUEST, f"Method Not Allowed: {method}"), headers=[("allow", "GET, POST, DELETE")])
        elif path == self.sse_path:
            if method == "GET":
                await self._legacy_sse(scope, receive, send, headers)
            else:
                await _respond(send, 405, _json_error(codes.INVALID_REQUEST, f"Method Not Allowed: {method}"), headers=[("allow", "GET")])
        elif path == self.messages_path:
            if method == "POST":
                await self._legacy_post(scope, receive, send, headers)
            else:
                await _respond(send, 405, _json_error(codes.INVALID_REQUEST, f"Method Not Allowed: {method}"), headers=[("allow", "POST")])
        else:
            await _respond(send, 404, _json_error(codes.INVALID_REQUEST, f"Not Found: {path} (the MCP endpoint is {self.path})"))

    def _dns_rebinding(self, headers: dict[str, str]) -> str | None:
        host = headers.get("host")
        if host is not None and _host_only(host) not in self.allowed_hosts:
            return f"Host {host!r} is not this server"
        origin = headers.get("origin")
        if origin is not None:
            o = origin.strip().rstrip("/").lower()
            if o in self.allowed_origins:
                return None
            parts = urlsplit(o)
            if parts.scheme not in ("http", "https") or _host_only(parts.netloc) not in self.allowed_hosts:
                return f"Origin {origin!r} is not allowed"
        return None

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        limit = self.config.max_message_bytes
        chunks: list[bytes] = []
        size = 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            body = msg.get("body", b"")
            size += len(body)
            if size > limit:
                await _respond(send, 413, _json_error(codes.INVALID_REQUEST, f"Message too large: more than {limit} bytes", MISSING, {"limit": limit}))
                return None
            chunks.append(body)
            if not msg.get("more_body"):
                return b"".join(chunks)

    async def _check_post_headers(self, send: Send, headers: dict[str, str]) -> bool:
        accept = headers.get("accept")
        if not (_accepts(accept, "application/json") and _accepts(accept, "text/event-stream")):
            await _respond(send, 406, _json_error(codes.INVALID_REQUEST, "Not Acceptable: the Accept header must list application/json and text/event-stream"))
            return False
        ctype = headers.get("content-type", "")
        if ctype.split(";", 1)[0].strip().lower() != "application/json":
            await _respond(send, 415, _json_error(codes.INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"))
            return False
        return True

    def _parse(self, body: bytes) -> tuple[Any, str | None]:
        from reference_server.stdio import parse_line

        return parse_line(body)

    # -- POST /mcp ------------------------------------------------------------------------------
    async def _post(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if not await self._check_post_headers(send, headers):
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        value, problem = self._parse(body)
        if problem is not None:
            await _respond(send, 400, _json_error(codes.PARSE_ERROR, "Parse error", None, {"detail": problem}))
            return
        pv_header = headers.get("mcp-protocol-version")
        if pv_header is not None:
            pv_header = pv_header.strip()
        sid = headers.get("mcp-session-id")
        modern = False
        if pv_header is not None and pv_header not in LEGACY_VERSIONS:
            modern = True
        elif pv_header is None and sid is None and isinstance(value, dict) and isinstance(value.get("params"), dict):
            meta = value["params"].get("_meta")
            if isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta and meta[PROTOCOL_VERSION_KEY] not in LEGACY_VERSIONS:
                modern = True
        if not self.config.legacy_versions:
            modern = True
        if modern and self.config.modern_versions:
            await self._post_modern(receive, send, headers, value, pv_header)
            return
        await self._post_legacy(scope, receive, send, headers, value, pv_header, sid)

    async def _foreign(self, scope: Scope, send: Send, owner: Any, rid: Any = MISSING) -> bool:
        """Refuse (403) a request whose authorization context is not the one its session was
        opened with: the session holds that context's tasks.  True when refused."""
        if self.auth is None or self.auth.same_context(owner, self.auth.context_of(scope)):
            return False
        await _respond(send, 403, _json_error(codes.INVALID_REQUEST, "Forbidden: the session belongs to another authorization context", rid))
        return True

    async def _post_legacy(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], value: Any, pv_header: str | None, sid: str | None) -> None:
        rid = value.get("id", MISSING) if isinstance(value, dict) and valid_id(value.get("id")) else MISSING
        if sid is None:
            if not (isinstance(value, dict) and value.get("method") == "initialize" and "id" in value):
                await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required (send initialize first)", rid))
                return
            if pv_header is not None and pv_header not in self.config.legacy_versions:
                await _respond(send, 400, _json_error(codes.INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {pv_header!r}", rid, {"supported": list(self.config.legacy_versions)}))
                return
            await self._initialize(receive, send, value, None if self.auth is None else self.auth.context_of(scope))
            return
        session = self.sessions.get(sid)
        if session is None or session.closed:
            await _respond(send, 404, _json_error(codes.INVALID_REQUEST, "Not Found: unknown or terminated session", rid))
            return
        if await self._foreign(scope, send, session.owner, rid):
            return
        session.last_used = time.monotonic()
        if pv_header is not None and pv_header != session.conn.version:
            await _respond(
                send,
                400,
                _json_error(codes.INVALID_REQUEST, f"Bad Request: MCP-Protocol-Version {pv_header!r} is not the version negotiated for this session ({session.conn.version})", rid, {"negotiated": session.conn.version}),
            )
            return
        await self._exchange(receive, send, session.conn, value, session=session, modern=False)

    async def _initialize(self, receive: Receive, send: Send, value: dict[str, Any], owner: Any) -> None:
        sid = secrets.token_urlsafe(32)
        session = _Session(sid, Connection(self.server, task_group=self.tg, transport="streamable-http"), owner=owner)
        session.conn.default_sink = session.default_sink
        self._evict()
        self.sessions[sid] = session
        ok = await self._exchange(receive, send, session.conn, value, session=session, modern=False, new_session=True)
        if not ok or session.conn.version is None:
            self.sessions.pop(sid, None)
            session.close()

    def _evict(self) -> None:
        now = time.monotonic()
        for sid, s in list(self.sessions.items()):
            if now - s.last_used > _SESSION_IDLE and not any(st.attached for st in s.streams.values()):
                self.sessions.pop(sid, None)
                s.close()
        while len(self.sessions) >= _MAX_SESSIONS:
            sid = min(self.sessions, key=lambda k: self.sessions[k].last_used)
            self.sessions.pop(sid).close()

    async def _exchange(self, receive: Receive, send: Send, conn: Connection, value: Any, *, session: _Session | None, modern: bool, new_session: bool = False) -> bool:
        """Feed one POST body to the core and answer it (202, JSON or SSE).  True if answered 2xx."""
        ids, has_requests = _request_ids(value)
        ex = _Exchange(ids, batch=isinstance(value, list))
        await conn.receive(value, sink=ex.sink)
        if not has_requests:
            errors = [o for o in ex.buffer if o.kind == "response"]
            if errors:
                # "The HTTP response body MAY comprise a JSON-RPC error response that has no id"
                body = errors[0].message if isinstance(errors[0].message, dict) else json.loads(errors[0].data)
                if isinstance(body, dict) and body.get("id", 0) is None:
                    body = {k: v for k, v in body.items() if k != "id"}
                await _respond(send, 400, dumps(body))
                return False
            await _respond(send, 202, b"", content_type=None)
            return True
        extra: list[tuple[str, str]] = []
        if new_session and session is not None and conn.version is not None:
            extra.append(("mcp-session-id", session.id))
        if modern and not ex.complete and not ex.buffer:
            # 2026-07-28 ties errors to HTTP statuses (-32021 -> 400, ...): wait for the first message
            # before choosing between a JSON answer (with its status) and an SSE stream.
            if not await self._first_message(ex, receive):
                for _, rid in ids:
                    conn.cancel(rid, "the client closed the connection")
                return False
        one = ex.single_json()
        if one is not None:
            status = 200
            if modern:
                status = one.http_status or 200
            elif one.message is not None and one.message.get("id", 0) is None:
                status = 400
            await _respond(send, status, one.data, headers=extra)
            return status < 300
        # stream: notifications, server requests, or a response that is not ready yet
        if modern:
            stream = SseStream("m", resumable=False, priming=False)
        elif session is not None:
            stream = session.new_stream("p")
        else:  # pragma: no cover - every legacy POST has a session
            stream = SseStream("x", resumable=False, priming=False)
        ex.to_stream(stream)
        gen = stream.attach(after=None)
        hdrs = list(_SSE_HEADERS) + [(k.encode(), v.encode()) for k, v in extra]
        pending = [rid for _, rid in ids]

        def cancel_pending() -> None:
            # 2026-07-28: "Closing the SSE response stream MUST be treated by the server as
            # cancellation of that request."
            for rid in pending:
                conn.cancel(rid, "the client closed the response stream")

        await stream.serve(gen, send, receive, hdrs, cancel_pending if modern else None)
        return True

    @staticmethod
    async def _first_message(ex: _Exchange, receive: Receive) -> bool:
        """Wait until the core produced something for this POST; False if the client left first."""
        gone = False
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal gone
                while True:
                    msg = await receive()
                    if msg["type"] == "http.disconnect":
                        gone = True
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(watch)
            await ex.changed.wait()
            tg.cancel_scope.cancel()
        return not gone

    # -- 2026-07-28 ---------------------------------------------------------------------------
    async def _post_modern(self, receive: Receive, send: Send, headers: dict[str, str], value: Any, pv_header: str | None) -> None:
        if isinstance(value, list):
            await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported in protocol version 2026-07-28"))
            return
        if not isinstance(value, dict):
            await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be an object"))
            return
        if "method" not in value:
            if "result" in value or "error" in value:
                await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Bad Request: clients must not send JSON-RPC responses in protocol version 2026-07-28"))
                return
        elif "id" not in value:
            await _respond(send, 202, b"", content_type=None)  # a notification: nothing to do over HTTP
            return
        rid = value.get("id", MISSING)
        rid = rid if valid_id(rid) else None
        params = value.get("params")
        if "method" in value and valid_id(value.get("id")) and isinstance(params, dict):
            meta = params.get("_meta")
            missing = [k for k in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if not (isinstance(meta, dict) and k in meta)]
            if missing:
                await _respond(send, 400, _json_error(codes.INVALID_PARAMS, f"Invalid params: _meta is missing {', '.join(missing)}", rid, {"missing": missing, "supported": list(self.config.modern_versions)}))
                return
            mismatch = self._header_mismatch(headers, value, pv_header)
            if mismatch is not None:
                await _respond(send, 400, _json_error(codes.HEADER_MISMATCH, f"Header mismatch: {mismatch}", rid))
                return
        elif "method" in value and valid_id(value.get("id")) and params is None:
            await _respond(send, 400, _json_error(codes.INVALID_PARAMS, f"Invalid params: params._meta with {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY} is required", rid, {"missing": [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY], "supported": list(self.config.modern_versions)}))
            return
        async with anyio.create_task_group() as tg:
            conn = Connection(self.server, task_group=tg, transport="streamable-http", stateless=True)
            try:
                await self._exchange(receive, send, conn, value, session=None, modern=True)
            finally:
                conn.close()
                tg.cancel_scope.cancel()

    def _header_mismatch(self, headers: dict[str, str], msg: dict[str, Any], pv_header: str | None) -> str | None:
        params = msg["params"]
        pv = params["_meta"][PROTOCOL_VERSION_KEY]
        if pv_header is None:
            return "the MCP-Protocol-Version header is required"
        if pv_header != pv:
            return f"MCP-Protocol-Version header {pv_header!r} does not match _meta {PROTOCOL_VERSION_KEY} {pv!r}"
        method = headers.get("mcp-method")
        if method is None:
            return "the Mcp-Method header is required"
        if method.strip(" \t") != msg["method"]:
            return f"Mcp-Method header {method.strip()!r} does not match the body method {msg['method']!r}"
        key = NAMED_PARAM.get(msg["method"])  # with the tasks extension's tasks/get, tasks/update, tasks/cancel
        if key is not None and key in params:
            name = headers.get("mcp-name")
            if name is None:
                return "the Mcp-Name header is required for " + msg["method"]
            decoded = _decode_header_value(name)
            if decoded is None:
                return "the Mcp-Name header value is not valid (invalid characters or Base64)"
            if decoded != params[key]:
                return f"Mcp-Name header {decoded!r} does not match the body value {params[key]!r}"
        if msg["method"] == "tools/call" and isinstance(params.get("name"), str):
            return self._custom_header_mismatch(headers, params, pv)
        return None

    def _custom_header_mismatch(self, headers: dict[str, str], params: dict[str, Any], version: str) -> str | None:
        tool = self.server.features.tools.get(params["name"], version) if version in MODERN_VERSIONS else None
        if tool is None:
            return None
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        for path, name, typ in mirrored_params(tool.input_schema):
            value: Any = args
            for step in path:
                value = value.get(step) if isinstance(value, dict) else None
            header = headers.get(f"mcp-param-{name.lower()}")
            if value is None:
                continue  # "Parameter value is null / not in arguments: Server MUST NOT expect the header"
            if header is None:
                return f"the Mcp-Param-{name} header is required (the argument {'.'.join(path)} is present)"
            decoded = _decode_header_value(header)
            if decoded is None:
                return f"the Mcp-Param-{name} header value is not valid (invalid characters or Base64)"
            if not _param_matches(decoded, value, typ):
                return f"Mcp-Param-{name} header {decoded!r} does not match the argument value {value!r}"
        return None

    # -- GET /mcp: standalone streams and resumption ------------------------------------------------
    async def _get(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        pv_header = (headers.get("mcp-protocol-version") or "").strip()
        if pv_header and pv_header not in LEGACY_VERSIONS:
            await _respond(send, 405, _json_error(codes.INVALID_REQUEST, f"Method Not Allowed: protocol version {pv_header} has no GET stream"), headers=[("allow", "POST")])
            return
        if not _accepts(headers.get("accept"), "text/event-stream"):
            await _respond(send, 406, _json_error(codes.INVALID_REQUEST, "Not Acceptable: the Accept header must list text/event-stream"))
            return
        sid = headers.get("mcp-session-id")
        if sid is None:
            await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required"))
            return
        session = self.sessions.get(sid)
        if session is None or session.closed:
            await _respond(send, 404, _json_error(codes.INVALID_REQUEST, "Not Found: unknown or terminated session"))
            return
        if await self._foreign(scope, send, session.owner):
            return
        if pv_header and pv_header != session.conn.version:
            await _respond(send, 400, _json_error(codes.INVALID_REQUEST, f"Bad Request: MCP-Protocol-Version {pv_header!r} is not the version negotiated for this session ({session.conn.version})"))
            return
        session.last_used = time.monotonic()
        last = headers.get("last-event-id")
        if last is not None:
            key, _, seq = last.strip().rpartition("-")
            stream = session.streams.get(key)
            if stream is None or not seq.isdigit() or not stream.resumable:
                await _respond(send, 400, _json_error(codes.INVALID_REQUEST, f"Bad Request: unknown Last-Event-ID {last!r}"))
                return
            gen = stream.attach(after=int(seq))
            await stream.serve(gen, send, receive, list(_SSE_HEADERS))
            return
        stream = session.new_stream("g")
        session.standalone.append(stream)
        session.standalone = [s for s in session.standalone if s.attached or s is stream][-16:]
        gen = stream.attach(after=None)
        while session.undelivered:
            stream.push(session.undelivered.popleft())
        await stream.serve(gen, send, receive, list(_SSE_HEADERS))

    async def _delete(self, scope: Scope, send: Send, headers: dict[str, str]) -> None:
        pv_header = (headers.get("mcp-protocol-version") or "").strip()
        if pv_header and pv_header not in LEGACY_VERSIONS:
            await _respond(send, 405, _json_error(codes.INVALID_REQUEST, f"Method Not Allowed: protocol version {pv_header} has no sessions"), headers=[("allow", "POST")])
            return
        sid = headers.get("mcp-session-id")
        if sid is None:
            await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Bad Request: Mcp-Session-Id header is required"))
            return
        session = self.sessions.get(sid)
        if session is None:
            await _respond(send, 404, _json_error(codes.INVALID_REQUEST, "Not Found: unknown or terminated session"))
            return
        if await self._foreign(scope, send, session.owner):
            return
        self.sessions.pop(sid, None)
        session.close()
        await _respond(send, 200, b"", content_type=None)

    # -- HTTP+SSE (2024-11-05) ------------------------------------------------------------------------
    async def _legacy_sse(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if not _accepts(headers.get("accept"), "text/event-stream"):
            await _respond(send, 406, _json_error(codes.INVALID_REQUEST, "Not Acceptable: the Accept header must list text/event-stream"))
            return
        sid = secrets.token_urlsafe(24)
        sess = _SseSession(self, sid)
        sess.owner = None if self.auth is None else self.auth.context_of(scope)
        self.sse_sessions[sid] = sess
        endpoint = f"{self.messages_path}?session_id={sid}"
        gen = sess.stream.attach(after=None)
        sess.stream.pending.insert(0, encode_event(endpoint, event="endpoint"))
        try:
            await sess.stream.serve(gen, send, receive, list(_SSE_HEADERS))
        finally:
            self.sse_sessions.pop(sid, None)
            sess.conn.close()

    async def _legacy_post(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        sid = (query.get("session_id") or [None])[0]
        if sid is None:
            await _respond(send, 400, _json_error(codes.INVALID_REQUEST, "Bad Request: session_id is required"))
            return
        sess = self.sse_sessions.get(sid)
        if sess is None:
            await _respond(send, 404, _json_error(codes.INVALID_REQUEST, "Not Found: unknown session"))
            return
        if await self._foreign(scope, send, sess.owner):
            return
        ctype = headers.get("content-type", "")
        if ctype.split(";", 1)[0].strip().lower() != "application/json":
            await _respond(send, 415, _json_error(codes.INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"))
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        value, problem = self._parse(body)
        await _respond(send, 202, b"Accepted", content_type="text/plain")
        # every answer travels on the SSE stream ("Server messages are sent as SSE message events")
        if problem is not None:
            await sess.conn.receive_invalid_json(problem)
        else:
            await sess.conn.receive(value)

    def close_all(self) -> None:
        self.server.features.subscriptions.shutdown()
        for s in list(self.sessions.values()):
            s.close()
        self.sessions.clear()
        for sess in list(self.sse_sessions.values()):
            sess.stream.finish()
            sess.conn.close()


def _param_matches(header: str, value: Any, typ: str) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return float(header) == float(value)
        except ValueError:
            return False
    return header == value


# -- running -------------------------------------------------------------------------------------------


async def serve_http(server: Server, *, host: str = "127.0.0.1", port: int = 0, path: str = "/mcp", transport: str = "streamable-http", allowed_origins: Iterable[str] = (), sock: socket.socket | None = None, ready: Callable[[str], None] | None = None, auth: Any = None) -> None:
    """Serve until cancelled (or SIGINT/SIGTERM when run from the CLI)."""
    import uvicorn

    if sock is None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and accepted sockets inherit it; without it every answer waits ~40 ms (Nagle + delayed ACK)
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    bound_port = sock.getsockname()[1]
    async with anyio.create_task_group() as tg:
        extra_hosts = [] if host in ("0.0.0.0", "::") else [host if ":" not in host else f"[{host}]"]
        front = HttpFront(server, tg, path=path, allowed_hosts=extra_hosts, allowed_origins=allowed_origins, auth=auth)

        class _Uvicorn(uvicorn.Server):
            async def shutdown(self, sockets: Any = None) -> None:
                front.close_all()
                await super().shutdown(sockets)

        config = uvicorn.Config(front, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2, timeout_keep_alive=30)
        userv = _Uvicorn(config)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound_port}{path if transport != 'sse' else '/sse'}"
        if auth is not None and not auth.settings.resource:
            auth.settings.resource = url  # the server's own URL is its resource
        if ready is not None:
            ready(url)
        try:
            await userv.serve(sockets=[sock])
        finally:
            front.close_all()
            tg.cancel_scope.cancel()


def run_http(server: Server, *, transport: str, host: str, port: int, path: str, allowed_origins: Iterable[str] = (), auth: Any = None) -> int:
    def ready(url: str) -> None:
        print(f"mcp-reference-server: listening on {url} ({transport})", file=sys.stderr, flush=True)

    try:
        anyio.run(lambda: serve_http(server, host=host, port=port, path=path, transport=transport, allowed_origins=allowed_origins, ready=ready, auth=auth))
    except KeyboardInterrupt:
        pass
    return 0
