"""The server side of streamable HTTP and legacy HTTP+SSE, for testing clients.

:class:`HttpHub` is one loopback HTTP server (uvicorn on 127.0.0.1, an ephemeral port, inside the
suite's event loop) for a whole client-testing session; every client run gets an
:class:`HttpEndpoint` under a path of its own (``/<run token>/mcp``, or ``/<run token>/sse`` and
``/<run token>/messages`` for the legacy transport), so runs never see each other.

An endpoint is a :class:`~conformance.transports.base.Transport`: what the client POSTs arrives
through ``receive()`` (one :class:`Inbound` per message, with the HTTP facts in ``meta``), and
what the scenario sends is routed the way a server would route it -- a response to the POST that
carries its request (as a JSON body, or an event on that POST's SSE stream), a server request or
notification on the open POST stream (SSE answers) or the GET stream.  Every HTTP request is also
kept in :attr:`HttpEndpoint.requests` (method, path, query, headers, status we gave) for the
transport checks (Accept, session id, protocol-version headers, DELETE, POST target).
"""

from __future__ import annotations

import contextlib
import os
import json
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio

from conformance.transports.base import Inbound, Transport, TransportClosed, TransportError
from conformance.wire.envelope import Envelope, Kind, parse_envelope
from conformance.wire.sse import message_event

__all__ = ["HttpHub", "HttpEndpoint", "HttpRequestRecord"]

_SESSION_HEADER = "mcp-session-id"


@dataclass
class HttpRequestRecord:
    """One HTTP request the client made, and how we answered it."""

    n: int
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes = b""
    status: int | None = None
    t: float = field(default_factory=time.monotonic)
    stream: str = ""
    session_id: str | None = None  # the session id we had issued when it arrived
    answered: float | None = None  # when we sent the response head (monotonic)
    abandoned: float | None = None  # when the client closed the connection before our answer (monotonic)
    envelopes: list[Envelope] = field(default_factory=list)
    issued_session: str | None = None  # the session id our answer to it issued (an initialize POST)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "method": self.method, "path": self.path, "query": self.query,
                "headers": self.headers, "status": self.status, "stream": self.stream}


class _Stream:
    """An open SSE response (a POST answered as SSE, the GET stream, the legacy SSE stream)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.send, self.recv = anyio.create_memory_object_stream[bytes | None](256)
        self.open = True
        self.waiting: set[Any] = set()  # keys of request ids still to be answered (POST streams)
        self.event_id: str | None = None  # the id of the last event with one (the priming event)
        self.detached: float | None = None  # when we closed its connection, the stream kept (polling)
        self.resumed_by: int | None = None  # the GET (request number) that resumed it
        self.held: set[Any] = set()  # keys of the answers put on it while it was detached


class _JsonPost:
    def __init__(self, name: str, keys: set[Any]) -> None:
        self.name = name
        self.waiting = set(keys)
        self.answers: list[bytes] = []
        self.error_codes: list[Any] = []  # per answer: its error code (None for a result)
        self.done = anyio.Event()


def _key(value: Any) -> Any:
    return (type(value).__name__, json.dumps(value, sort_keys=True))


key_of = _key  # how an endpoint keys request ids (``HttpEndpoint.held_answers``)

_STATUS_400 = (-32020, -32022)  # 2026-07-28: HeaderMismatch, UnsupportedProtocolVersion -> 400 Bad Request


class HttpEndpoint(Transport):
    """One client run's HTTP endpoint; also its transport for ``RawPeer(role="server")``."""

    def __init__(self, hub: "HttpHub", token: str, *, kind: str, sessions: bool, get_stream: bool = True,
                 answer_mode: str = "json") -> None:
        self.name = "sse" if kind == "sse" else "streamable-http"
        self.hub = hub
        self.token = token
        self.kind = kind
        self.sessions = sessions
        self.get_stream_allowed = get_stream
        self.answer_mode = answer_mode  # "json" | "sse": how requests are answered
        self.requests: list[HttpRequestRecord] = []
        self.session_id: str | None = None
        self.sessions_issued: list[str] = []
        self.endpoint_path: str | None = None  # legacy SSE: what the endpoint event named
        #: scenario hook: (record, envelopes) -> an HTTP status to refuse the request with, or None
        self.refuse: Callable[[HttpRequestRecord, list[Envelope]], int | None] | None = None
        #: scenario hook, before anything else (every method, both transports): (record) -> a
        #: (status, headers, body) answer instead of the MCP one (a protected resource's 401), or None
        self.guard: Callable[[HttpRequestRecord], tuple[int, list[tuple[bytes, bytes]], bytes] | None] | None = None
        #: SSE answers: start each POST stream with a priming event (an event id, empty data)
        self.priming = False
        #: keys (see ``key_of``) of answers written to a detached stream the client never resumed:
        #: sent by the server, never delivered to the client
        self.held_answers: set[Any] = set()
        #: scenario hook: (record, envelopes) -> a retry time in ms to close that POST's SSE
        #: connection after its priming event (the stream is kept: resumable by GET with
        #: Last-Event-ID), or None to serve it normally
        self.poll: Callable[[HttpRequestRecord, list[Envelope]], int | None] | None = None
        #: 2026-07-28 (stateless) run: a JSON answer that is a -32022 UnsupportedProtocolVersion or a
        #: -32020 HeaderMismatch error goes with HTTP 400, as basic/transports/streamable-http says
        self.modern = False
        self._inbox_send, self._inbox_recv = anyio.create_memory_object_stream[Inbound](1000)
        self._json_posts: dict[Any, _JsonPost] = {}
        self._sse_posts: dict[Any, _Stream] = {}
        self._streams: list[_Stream] = []  # open SSE streams, newest last
        self._get: _Stream | None = None
        self._legacy: _Stream | None = None
        self._undelivered: list[bytes] = []
        self._counter = 0
        self._closed = False
        self._changed = anyio.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.hub.port}/{self.token}/" + ("sse" if self.kind == "sse" else "mcp")

    async def wait_request(self, predicate: Callable[[HttpRequestRecord], bool], timeout: float) -> HttpRequestRecord | None:
        """The first HTTP request (so far or within ``timeout``) that matches."""
        with anyio.move_on_after(timeout):
            while True:
                for r in self.requests:
                    if predicate(r):
                        return r
                event = self._changed
                await event.wait()
        return None

    def _note_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    # -- Transport --------------------------------------------------------------------------

    async def send(self, data: bytes, **opts: Any) -> None:
        if self._closed:
            raise TransportClosed("the endpoint is closed")
        env = parse_envelope(data)
        if self._legacy is not None and self._legacy.open:  # legacy HTTP+SSE: everything on the one stream
            await self._legacy.send.send(_event(data))
            return
        if env.kind in (Kind.RESULT, Kind.ERROR):
            key = _key(env.id)
            post = self._json_posts.get(key)
            if post is not None:
                post.answers.append(data)
                post.error_codes.append(env.error_code if env.kind is Kind.ERROR else None)
                post.waiting.discard(key)
                self._json_posts.pop(key, None)
                if not post.waiting:
                    post.done.set()
                return
            stream = self._sse_posts.pop(key, None)
            if stream is not None and (stream.open or stream.detached is not None):
                if not stream.open:  # kept for a resumption that has not come (yet)
                    self.held_answers.add(key)
                    stream.held.add(key)
                stream.waiting.discard(key)
                await stream.send.send(_event(data))
                if not stream.waiting:
                    await stream.send.send(None)  # every request of that POST is answered: end it
                return
            self._event("no open request carries this response; dropped", stream="server")
            return
        target = self._route(opts.get("stream"))
        if target is None:
            self._undelivered.append(data)
            self._event("no open stream for this message yet; held for the next one", stream="server")
            return
        await target.send.send(_event(data))

    async def send_within(self, answers: Any, data: bytes) -> bool:
        """Put ``data`` -- any bytes, whatever they say -- on the open SSE response stream of the
        client's request whose id is ``answers``, without ending that stream (the fuzzer's answers
        may carry a wrong id, or be no JSON at all; the stream ends with the real answer, sent with
        :meth:`send`).  False when no such stream is open (legacy HTTP+SSE: :meth:`send` puts
        everything on the one stream)."""
        stream = self._sse_posts.get(_key(answers))
        if self._closed or stream is None or not stream.open:
            return False
        await stream.send.send(_event(data))
        return True

    def _route(self, wanted: str | None) -> _Stream | None:
        if self._legacy is not None and self._legacy.open:
            return self._legacy
        open_streams = [s for s in self._streams if s.open]
        if wanted:
            for s in open_streams:
                if s.name == wanted:
                    return s
            return None
        posts = [s for s in open_streams if s.name.startswith("post:")]
        if posts:
            return posts[-1]
        if self._get is not None and self._get.open:
            return self._get
        return None

    async def receive(self) -> Inbound:
        try:
            return await self._inbox_recv.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise TransportClosed("the client run's endpoint is closed") from None

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.hub._runs.pop(self.token, None)
        for s in self._streams:
            if s.open:
                with contextlib.suppress(Exception):
                    s.send.send_nowait(None)
        for post in list(self._json_posts.values()):
            post.done.set()
        self._inbox_send.close()

    # -- HTTP ---------------------------------------------------------------------------------

    def _record(self, scope: dict[str, Any], body: bytes) -> HttpRequestRecord:
        self._counter += 1
        headers: dict[str, str] = {}
        for k, v in scope.get("headers", []):
            name = k.decode("latin-1").lower()
            value = v.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        rec = HttpRequestRecord(
            n=self._counter, method=scope["method"], path=scope.get("path", ""),
            query=scope.get("query_string", b"").decode("latin-1"), headers=headers, body=body,
            session_id=self.session_id,
        )
        self.requests.append(rec)
        self._note_change()
        return rec

    async def handle(self, rest: str, scope: dict[str, Any], receive: Any, send: Any) -> None:
        method = scope["method"]
        body = b""
        if method in ("POST", "PUT", "PATCH"):
            body = await read_body(receive)
        rec = self._record(scope, body)
        self._event(f"{method} {scope.get('path', '')}{'?' + rec.query if rec.query else ''}", stream=f"http:{rec.n}",
                    http_method=method, headers=_shown_headers(rec.headers))
        if self.guard is not None:
            answer = self.guard(rec)
            if answer is not None:
                status, extra, text = answer
                self._event(f"{method} answered HTTP {status} (scenario)", stream=f"http:{rec.n}")
                await _plain(send, rec, status, text, extra=extra)
                return
        if self.kind == "sse":
            await self._legacy_route(rest, rec, scope, receive, send)
            return
        if rest != "mcp":
            await _plain(send, rec, 404, b"not found")
            return
        if method == "POST":
            await self._post(rec, receive, send)
        elif method == "GET":
            await self._get_stream(rec, receive, send)
        elif method == "DELETE":
            if self.sessions and self.session_id and rec.header(_SESSION_HEADER) == self.session_id:
                self.session_id = None
                await _plain(send, rec, 200, b"")
            elif self.sessions:
                await _plain(send, rec, 404, b"unknown session")
            else:
                await _plain(send, rec, 405, b"", extra=[(b"allow", b"POST")])
        else:
            await _plain(send, rec, 405, b"", extra=[(b"allow", b"GET, POST, DELETE")])

    async def _deliver(self, rec: HttpRequestRecord, stream: str) -> list[Envelope]:
        env = parse_envelope(rec.body)
        items = list(env.items) if env.kind is Kind.BATCH else [env]
        rec.envelopes = items
        rec.stream = stream
        meta = {"stream": stream, "http_method": rec.method, "http_request": rec.n, "path": rec.path,
                "query": rec.query, "headers": _shown_headers(rec.headers)}
        await self._inbox_send.send(Inbound(rec.body, env, None, meta))
        return items

    async def _post(self, rec: HttpRequestRecord, receive: Any, send: Any) -> None:
        env = parse_envelope(rec.body)
        items = list(env.items) if env.kind is Kind.BATCH else [env]
        if self.refuse is not None:
            status = self.refuse(rec, items)
            if status is not None:
                rec.envelopes = items
                self._event(f"POST refused with HTTP {status} (scenario)", stream=f"http:{rec.n}")
                await _plain(send, rec, status, b"")
                return
        name = f"post:{rec.n}"
        requests = [e for e in items if e.kind is Kind.REQUEST]
        is_init = any(e.method == "initialize" for e in requests)
        extra: list[tuple[bytes, bytes]] = []
        if is_init and self.sessions:
            self.session_id = secrets.token_hex(16)
            self.sessions_issued.append(self.session_id)
            rec.issued_session = self.session_id
            extra.append((b"mcp-session-id", self.session_id.encode()))
        if env.kind is Kind.PARSE_ERROR:
            await self._deliver(rec, name)
            await _plain(send, rec, 400, b"invalid JSON")
            return
        if not requests:
            await self._deliver(rec, name)
            await _plain(send, rec, 202, b"")
            return
        keys = {_key(e.id) for e in requests}
        retry = self.poll(rec, items) if self.poll is not None else None
        if self.answer_mode == "sse" or retry is not None:
            stream = _Stream(name)
            stream.waiting = set(keys)
            for k in keys:
                self._sse_posts[k] = stream
            self._streams.append(stream)
            first = None
            if self.priming or retry is not None:
                stream.event_id = f"{self.token[:8]}-{name}-0"
                first = f"id: {stream.event_id}\n".encode() + (f"retry: {retry}\n".encode() if retry is not None else b"") \
                    + b"data: \n\n"
            if retry is not None:  # the priming event, then the connection is closed; the stream is kept
                rec.status = 200
                rec.answered = time.monotonic()
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"), *extra]})
                await send({"type": "http.response.body", "body": first})
                stream.open = False
                stream.detached = time.monotonic()
                self._event(f"SSE stream {name}: priming event {stream.event_id!r} with retry {retry} ms, then the "
                            "connection closed (the stream is kept for a GET with Last-Event-ID)", stream=name)
                await self._deliver(rec, name)
                await send({"type": "http.response.body", "body": b""})
                return
            await self._deliver(rec, name)
            await self._serve_stream(stream, rec, receive, send, extra, first=first)
            return
        post = _JsonPost(name, keys)
        for k in keys:
            self._json_posts[k] = post
        await self._deliver(rec, name)
        done = await _wait_or_disconnect(post.done, receive)
        if not done or not post.answers:
            rec.status = 499 if not done else 503
            if not done:
                rec.abandoned = time.monotonic()
                self._event("the client closed the connection before the answer", stream=name)
                self._note_change()
            if done:  # the run ended without an answer
                await _plain(send, rec, 503, b"")
            return
        body = post.answers[0] if len(post.answers) == 1 and env.kind is not Kind.BATCH else b"[" + b",".join(post.answers) + b"]"
        # 2026-07-28: a single error answer the transport page sends with 400 Bad Request
        single_400 = env.kind is not Kind.BATCH and len(post.error_codes) == 1 and post.error_codes[0] in _STATUS_400
        rec.status = 400 if self.modern and single_400 else 200
        rec.answered = time.monotonic()
        await send({"type": "http.response.start", "status": rec.status,
                    "headers": [(b"content-type", b"application/json"), *extra]})
        await send({"type": "http.response.body", "body": body})

    async def _serve_stream(self, stream: _Stream, rec: HttpRequestRecord, receive: Any, send: Any,
                            extra: list[tuple[bytes, bytes]], first: bytes | None = None) -> None:
        rec.status = 200
        rec.answered = time.monotonic()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"), *extra]})
        if first is not None:
            await send({"type": "http.response.body", "body": first, "more_body": True})
        held, self._undelivered = self._undelivered, []
        for data in held:
            await send({"type": "http.response.body", "body": _event(data), "more_body": True})
        try:
            async with anyio.create_task_group() as tg:
                async def watch() -> None:
                    while True:
                        msg = await receive()
                        if msg.get("type") == "http.disconnect":
                            if stream.waiting:  # requests of this POST were still unanswered
                                rec.abandoned = time.monotonic()
                                self._note_change()
                            tg.cancel_scope.cancel()
                            return

                tg.start_soon(watch)
                async for chunk in stream.recv:
                    if chunk is None:
                        break
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                tg.cancel_scope.cancel()
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b""})
        finally:
            stream.open = False
            self._event(f"SSE stream {stream.name} closed", stream=stream.name)

    async def _get_stream(self, rec: HttpRequestRecord, receive: Any, send: Any) -> None:
        last = rec.header("last-event-id")
        kept = next((s for s in self._streams if s.detached is not None and s.resumed_by is None
                     and last is not None and s.event_id == last), None)
        if kept is not None:  # resumption of a stream whose connection we closed
            kept.resumed_by = rec.n
            kept.open = True
            self.held_answers -= kept.held
            rec.stream = kept.name
            self._event(f"GET resumes SSE stream {kept.name} after event {last!r}", stream=kept.name)
            self._note_change()
            await self._serve_stream(kept, rec, receive, send, [])
            return
        if not self.get_stream_allowed:
            await _plain(send, rec, 405, b"", extra=[(b"allow", b"POST")])
            return
        stream = _Stream(f"get:{rec.n}")
        rec.stream = stream.name
        if self._get is not None and self._get.open:
            await self._get.send.send(None)  # one GET stream at a time: the newer replaces it
        self._get = stream
        self._streams.append(stream)
        await self._serve_stream(stream, rec, receive, send, [])

    async def _legacy_route(self, rest: str, rec: HttpRequestRecord, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if rest == "sse" and rec.method == "GET":
            stream = _Stream(f"sse:{rec.n}")
            rec.stream = stream.name
            self.session_id = secrets.token_hex(8)
            self.sessions_issued.append(self.session_id)
            # a query of our own besides the session: a client must POST to exactly this URL
            self.endpoint_path = f"/{self.token}/messages?session_id={self.session_id}&mcpc=1"
            self._legacy = stream
            self._streams.append(stream)
            first = f"event: endpoint\ndata: {self.endpoint_path}\n\n".encode()
            await self._serve_stream(stream, rec, receive, send, [], first=first)
            return
        if rest == "messages" and rec.method == "POST":
            env = parse_envelope(rec.body)
            if env.kind is Kind.PARSE_ERROR:
                await self._deliver(rec, f"post:{rec.n}")
                await _plain(send, rec, 400, b"invalid JSON")
                return
            await self._deliver(rec, f"post:{rec.n}")
            await _plain(send, rec, 202, b"Accepted")
            return
        await _plain(send, rec, 404 if rest not in ("sse", "messages") else 405, b"")


_event = message_event  # every message goes as one event of its own (what a fuzzer's client reads: wire.sse.delivered)


def _shown_headers(headers: dict[str, str]) -> dict[str, str]:
    keep = ("accept", "content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name",
            "last-event-id", "origin", "authorization")
    out = {k: v for k, v in headers.items() if k in keep or k.startswith("mcp-")}
    if "authorization" in out:
        out["authorization"] = "<redacted>"
    return out


async def read_body(receive: Any) -> bytes:
    """The whole body of an ASGI request (empty when the client went away first)."""
    chunks = []
    while True:
        msg = await receive()
        if msg.get("type") == "http.disconnect":
            break
        chunks.append(msg.get("body", b""))
        if not msg.get("more_body"):
            break
    return b"".join(chunks)


async def _wait_or_disconnect(event: Any, receive: Any) -> bool:
    """Wait for ``event``; False if the client went away first."""
    result = False
    async with anyio.create_task_group() as tg:
        async def done() -> None:
            nonlocal result
            await event.wait()
            result = True
            tg.cancel_scope.cancel()

        async def gone() -> None:
            while True:
                msg = await receive()
                if msg.get("type") == "http.disconnect":
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(done)
        tg.start_soon(gone)
    return result


async def _plain(send: Any, rec: HttpRequestRecord, status: int, body: bytes, *, extra: list[tuple[bytes, bytes]] = ()) -> None:
    rec.status = status
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *extra] if body else list(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HttpHub:
    """One loopback HTTP server for all client runs of a session (start with ``tg.start(hub.serve)``)."""

    def __init__(self) -> None:
        self.port: int = 0
        self._runs: dict[str, HttpEndpoint] = {}
        self._server: Any = None
        #: an ASGI app for every path that is no run's (a protected resource's well-known
        #: documents); None: 404
        self.fallback: Callable[[dict[str, Any], Any, Any], Any] | None = None
        #: called with every new run's endpoint before it is handed out (a scenario's guard)
        self.on_new_run: Callable[[HttpEndpoint], None] | None = None
        self.stopped = anyio.Event()

    def new_run(self, *, kind: str, sessions: bool, get_stream: bool = True, answer_mode: str = "json") -> HttpEndpoint:
        if not self.port:
            raise TransportError("the HTTP hub is not listening")
        token = secrets.token_hex(8)
        ep = HttpEndpoint(self, token, kind=kind, sessions=sessions, get_stream=get_stream, answer_mode=answer_mode)
        self._runs[token] = ep
        if self.on_new_run is not None:
            self.on_new_run(ep)
        return ep

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        token, _, rest = path.lstrip("/").partition("/")
        ep = self._runs.get(token)
        if ep is None and self.fallback is not None:
            await self.fallback(scope, receive, send)
            return
        if ep is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await ep.handle(rest, scope, receive, send)

    async def serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        import uvicorn

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self):  # type: ignore[override]
                yield  # the suite handles Ctrl-C itself

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level=os.environ.get("MCPC_HTTP_LOG", "critical"), access_log=False, lifespan="off", interface="asgi3", proxy_headers=False,
                                timeout_graceful_shutdown=1)
        self._server = _Server(config)
        task_status.started(self)
        try:
            await self._server.serve(sockets=[sock])
        finally:
            sock.close()
            self.stopped.set()

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
