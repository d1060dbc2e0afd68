"""The reference client's front-ends: bytes to and from a server.  Each link is an async context
manager with ``send(message, headers=..., tweak=..., quiet=...)``, ``send_together(messages)`` and
``receive()`` (the next parsed message, a :class:`Garbage` or an :class:`HttpRefusal`; raises
:class:`LinkClosed` when the server is gone), and cleans up on exit (stdio: close stdin, wait,
SIGTERM, SIGKILL; streamable HTTP: DELETE the session).

* :class:`StdioLink` -- the server as a child process, newline-delimited JSON on its stdin/stdout.
* :class:`HttpLink` -- streamable HTTP: every message is a POST (Accept: application/json,
  text/event-stream; Content-Type: application/json); a JSON or SSE answer is read in the
  background; the session id from the initialize response is sent back on every later request,
  and MCP-Protocol-Version once negotiated (2025-06-18 and later); an HTTP 404 on a request that
  carried the session id is reported (the session starts a new one); on 2026-07-28 no session,
  and Mcp-Method / Mcp-Name (and the caller's Mcp-Param-*) headers; a request is cancelled there
  by closing its response stream (:meth:`HttpLink.abort`).
* :class:`SseLink` -- the legacy HTTP+SSE transport: a GET stream whose ``endpoint`` event names
  where to POST (exactly that URL, query included, resolved against the SSE URL).

A :class:`Tweak` changes how one message goes on the wire (the fault injection of
``reference_client.faults``): other bytes, another HTTP method, headers dropped or set, another
URL.  ``quiet`` sends are a fault's extra messages: a refusal of them is not reported.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urljoin

import anyio
import httpx

from conformance.wire.headers import metadata_headers
from conformance.wire.ndjson import NDJSONDecoder
from conformance.wire.sse import SSEDecoder

__all__ = ["LinkClosed", "StdioLink", "HttpLink", "SseLink", "Garbage", "HttpRefusal", "Tweak", "dumps"]


class LinkClosed(Exception):
    """The server went away (process exited, stream closed, connection refused)."""


class Garbage:
    """Something received that is not JSON (a stdout line, an SSE event's data, a body)."""

    def __init__(self, raw: bytes, where: str, message: bool = False) -> None:
        self.raw = raw
        self.where = where
        self.message = message  # where the server sends its messages (stdout, an SSE event), not an HTTP body

    def __repr__(self) -> str:
        return f"<not JSON on {self.where}: {self.raw[:80]!r}>"


@dataclass
class HttpRefusal:
    """An HTTP error status for a message we POSTed, without a JSON-RPC answer to it in the body
    (``rid`` is the request's id, None for a notification).  ``expired``: HTTP 404 on a request
    that carried the session id -- the session is gone."""

    rid: Any
    status: int
    body: bytes
    method: str | None = None
    parsed: Any = None
    expired: bool = False

    def __str__(self) -> str:
        text = self.body[:200].decode("utf-8", "replace").strip()
        return f"HTTP {self.status}" + (f" {text}" if text else "")


@dataclass
class Tweak:
    """How one message deviates on the wire (fault injection)."""

    raw: bytes | None = None  # these bytes instead of the message's compact JSON (stdio: + nothing)
    http_method: str = "POST"
    drop_headers: tuple[str, ...] = ()
    set_headers: dict[str, str] = field(default_factory=dict)
    url: str | None = None


def dumps(msg: Any) -> bytes:
    try:
        return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a \ud800 escape the server sent, echoed): escaped, still UTF-8
        return json.dumps(msg, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(raw: bytes, where: str, message: bool = False) -> Any:
    try:
        # strictly UTF-8 (json.loads(bytes) lets surrogates through), and strictly JSON: NaN,
        # Infinity and -Infinity, which Python reads, are not JSON (RFC 8259 section 6)
        return json.loads(raw.decode("utf-8"), parse_constant=_not_json)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return Garbage(raw, where, message)


class _TlsOnFirstUse(httpx.AsyncBaseTransport):
    """The ``https://`` transport, built when the first https URL is asked for: a verifying TLS
    context loads the CA bundle (~0.08 s of CPU, twice per client run when every httpx client
    builds one), and this client mostly talks plain HTTP on loopback."""

    def __init__(self) -> None:
        self._transport: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._transport is None:
            self._transport = httpx.AsyncHTTPTransport(verify=True, trust_env=False)
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        if self._transport is not None:
            await self._transport.aclose()


def http_client(transport: Any = None, **options: Any) -> httpx.AsyncClient:
    """An httpx client (``trust_env=False``) whose TLS context is built only for an https URL;
    ``transport``: tests' mock transport, used for every URL."""
    if transport is not None:
        return httpx.AsyncClient(trust_env=False, transport=transport, **options)
    # plain http:// never uses TLS; its context verifies and trusts nothing, so that it fails
    # closed were it ever used
    plain = httpx.AsyncHTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), trust_env=False)
    return httpx.AsyncClient(trust_env=False, transport=plain, mounts={"https://": _TlsOnFirstUse()}, **options)


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _is_request(msg: Any) -> bool:
    return isinstance(msg, dict) and "method" in msg and "id" in msg


class _Inbox:
    def __init__(self) -> None:
        self.send, self.recv = anyio.create_memory_object_stream[Any](1000)
        self.closed_why: str | None = None

    async def put(self, item: Any) -> None:
        try:
            await self.send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def get(self) -> Any:
        try:
            item = await self.recv.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise LinkClosed(self.closed_why or "the connection ended") from None
        if isinstance(item, LinkClosed):
            raise item
        return item

    async def close(self, why: str) -> None:
        if self.closed_why is None:
            self.closed_why = why
            await self.put(LinkClosed(why))

    def shut(self) -> None:
        self.send.close()
        self.recv.close()


async def _finish(link: Any) -> None:
    """End a link's background tasks (outside any shielded scope: the task group's own scope
    must be the innermost when it exits)."""
    link._tg.cancel_scope.cancel()
    await link._tg.__aexit__(None, None, None)
    link._inbox.shut()


async def _authorized_send(client: httpx.AsyncClient, auth: Any, method: str, url: str, *, headers: Mapping[str, str],
                           content: bytes | None = None, timeout: Any = httpx.USE_CLIENT_DEFAULT) -> httpx.Response:
    """Send one HTTP request (streamed answer) with the bearer token when there is one; a 401, or
    a 403 insufficient_scope, goes to the OAuth flow (``auth``, a
    ``reference_client.authorize.Authorizer``) and the request is sent again with the new token (at
    most three times).  A refused flow leaves the (read, closed) answer to the caller."""
    for attempt in range(4):
        generation = auth.generation if auth is not None else 0
        target = auth.url_for(url) if auth is not None else url
        hdrs = {**headers, **(auth.header(method, target) if auth is not None else {})}
        request = client.build_request(method, target, content=content, headers=hdrs, timeout=timeout)
        response = await client.send(request, stream=True)
        if auth is not None:
            auth.observe(response)
        if auth is None or attempt == 3 or not auth.wants(response):
            return response
        await response.aread()
        await response.aclose()
        if not await auth.challenge(response, generation):
            return response
    return response  # (not reached)


class StdioLink:
    transport = "stdio"

    def __init__(self, argv: list[str], *, close_stdin_first: bool = True) -> None:
        self.argv = argv
        self.close_stdin_first = close_stdin_first  # False: fault kill-without-closing-stdin
        self.escalate = True  # False: fault no-escalation (close stdin, wait, and leave the server running)
        self.proc: Any = None
        self._inbox = _Inbox()
        self._tg: Any = None
        self.protocol_version: str | None = None  # unused on stdio; the HTTP links send it
        self.stateless = False  # unused on stdio
        self.stderr_is_error = False  # True: fault stderr-is-error (any stderr output ends the session)

    async def __aenter__(self) -> "StdioLink":
        try:
            self.proc = await anyio.open_process(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                 stderr=subprocess.PIPE if self.stderr_is_error else None,
                                                 start_new_session=True)
        except OSError as exc:
            self._inbox.shut()
            raise LinkClosed(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from exc
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read)
        if self.stderr_is_error:
            self._tg.start_soon(self._watch_stderr)
        return self

    async def _watch_stderr(self) -> None:
        """Fault stderr-is-error: the first byte on the server's stderr is taken for a failure."""
        try:
            async for chunk in self.proc.stderr:
                if chunk:
                    await self._inbox.close(f"the server reported an error on stderr: {chunk[:80]!r}")
                    return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _read(self) -> None:
        decoder = NDJSONDecoder()
        try:
            async for chunk in self.proc.stdout:
                for frame in decoder.feed(chunk):
                    if frame.raw.strip():
                        await self._inbox.put(_parse(frame.raw, "stdout", True))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        code = self.proc.returncode
        await self._inbox.close("the server closed its stdout" + (f" (exit code {code})" if code is not None else ""))

    async def _write(self, data: bytes) -> None:
        try:
            await self.proc.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise LinkClosed(f"the server's stdin is closed ({exc})") from exc

    async def send(self, msg: Any, headers: Mapping[str, str] | None = None, *, tweak: Tweak | None = None,
                   quiet: bool = False) -> None:
        data = tweak.raw if tweak is not None and tweak.raw is not None else dumps(msg) + b"\n"
        await self._write(data)

    async def send_together(self, msgs: Sequence[Any]) -> None:
        """Several messages in one write: all of them are in flight before any answer is read."""
        await self._write(b"".join(dumps(m) + b"\n" for m in msgs))

    async def receive(self) -> Any:
        return await self._inbox.get()

    async def __aexit__(self, *exc: Any) -> None:
        with anyio.CancelScope(shield=True):
            proc = self.proc
            # a second at each step: a server that reads its stdin ends within it (the tests' relay does in
            # milliseconds); the steps, not their length, are what the spec asks for
            steps: list[tuple[Any, float]] = [(None, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0)]
            if self.close_stdin_first:
                try:
                    await proc.stdin.aclose()  # the stdio shutdown: close stdin, then wait for the exit
                except Exception:
                    pass
            else:
                steps = steps[1:]  # fault kill-without-closing-stdin: straight to SIGTERM
            if not self.escalate:
                steps = steps[:1]  # fault no-escalation: no SIGTERM, no SIGKILL for a server that stays
            for sig, wait in steps:
                if sig is not None and proc.returncode is None:
                    try:
                        os.killpg(proc.pid, sig)
                    except (ProcessLookupError, PermissionError):
                        pass
                with anyio.move_on_after(wait):
                    await proc.wait()
                if proc.returncode is not None:
                    break
            try:
                await proc.stdin.aclose()
            except Exception:
                pass
        await self._finish()

    async def _finish(self) -> None:
        await _finish(self)


class HttpLink:
    transport = "streamable-http"

    def __init__(self, url: str, *, stateless: bool, timeout: float, delete_session: bool = True,
                 http_transport: Any = None) -> None:
        self.url = url
        self.http_transport = http_transport  # tests: an httpx mock transport
        self.stateless = stateless
        self.timeout = timeout
        self.delete_session = delete_session  # False: fault no-delete
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # set once negotiated (2025-06-18+), or at once on 2026-07-28
        self.session_expired = False  # an HTTP 404 answered a request that carried the session id
        self._inbox = _Inbox()
        self._client: Any = None
        self._tg: Any = None
        self._readers: dict[Any, anyio.CancelScope] = {}
        #: the client's fault check (``ClientCore.faulty``), for the faults that act on the wire
        self.faulty: Callable[[str], bool] = lambda name: False
        #: the OAuth flow (``reference_client.authorize.Authorizer``), None: no authorization
        self.auth: Any = None

    async def _send(self, method: str, url: str, *, headers: Mapping[str, str], content: bytes | None = None) -> httpx.Response:
        return await _authorized_send(self._client, self.auth, method, url, headers=headers, content=content)

    async def __aenter__(self) -> "HttpLink":
        self._client = http_client(self.http_transport, timeout=httpx.Timeout(self.timeout, read=None))
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    def new_session(self) -> None:
        """Forget the session (a new ``initialize`` goes without a session id)."""
        self.session_id = None
        self.session_expired = False
        self.protocol_version = None if not self.stateless else self.protocol_version

    def _headers(self, msg: Any, extra: Mapping[str, str] | None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.stateless:
            headers.update(dict(metadata_headers(msg)))
        headers.update(extra or {})
        return headers

    async def send(self, msg: Any, headers: Mapping[str, str] | None = None, *, tweak: Tweak | None = None,
                   quiet: bool = False) -> None:
        """POST ``msg``.  A request's answer is awaited in the background (its response may take
        as long as the server likes; the session bounds the wait); a notification or response is
        sent once the server has acknowledged it (or ``timeout`` passed), so that what follows is
        not overtaken."""
        tweak = tweak or Tweak()
        body = tweak.raw if tweak.raw is not None else dumps(msg)
        hdrs = self._headers(msg, headers)
        for name in tweak.drop_headers:
            for key in [k for k in hdrs if k.lower() == name.lower()]:
                del hdrs[key]
        for name, value in tweak.set_headers.items():
            for key in [k for k in hdrs if k.lower() == name.lower()]:
                del hdrs[key]
            hdrs[name] = value
        sent = anyio.Event()
        self._tg.start_soon(self._exchange, tweak.http_method, tweak.url or self.url, body, hdrs, msg, quiet, sent)
        if not _is_request(msg):
            with anyio.move_on_after(self.timeout):
                await sent.wait()
        else:
            await anyio.sleep(0)  # let the POST start: requests go out in the order they were sent

    async def send_together(self, msgs: Sequence[Any]) -> None:
        for msg in msgs:
            await self.send(msg)

    async def _exchange(self, method: str, url: str, body: bytes, headers: dict[str, str], msg: Any, quiet: bool,
                        sent: anyio.Event) -> None:
        rid = msg.get("id") if _is_request(msg) else None
        key = (type(rid).__name__, rid) if _is_request(msg) else None
        with anyio.CancelScope() as scope:
            if key is not None:
                self._readers[key] = scope
            try:
                try:
                    response = await self._send(method, url, content=body, headers=headers)
                except httpx.HTTPError as exc:
                    sent.set()
                    if not quiet:
                        await self._inbox.close(f"{method} {url} failed: {exc!r}")
                    return
                if isinstance(msg, dict) and msg.get("method") == "initialize" and response.headers.get("mcp-session-id"):
                    self.session_id = response.headers["mcp-session-id"]
                sent.set()
                try:
                    await self._read_answer(response, msg, rid, headers, quiet)
                finally:
                    with anyio.CancelScope(shield=True):  # also when aborted (2026-07-28 cancellation)
                        await response.aclose()
            finally:
                if key is not None and self._readers.get(key) is scope:
                    del self._readers[key]
                sent.set()

    async def abort(self, rid: Any) -> None:
        """Close the response stream of request ``rid``: the 2026-07-28 cancellation signal
        ("Closing the SSE response stream is the cancellation signal")."""
        scope = self._readers.pop((type(rid).__name__, rid), None)
        if scope is not None:
            scope.cancel()

    async def _read_answer(self, response: httpx.Response, msg: Any, rid: Any, sent_headers: Mapping[str, str],
                           quiet: bool) -> None:
        method = msg.get("method") if isinstance(msg, dict) else None
        where = f"the answer to {method or 'a message'} (HTTP {response.status_code})"
        try:
            ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if response.status_code >= 400:
                body = await response.aread()
                if quiet:
                    return
                parsed = _parse(body, where) if body.strip() else None
                if (rid is not None and isinstance(parsed, dict) and _same_id(parsed.get("id"), rid)
                        and ("result" in parsed or "error" in parsed)):
                    await self._inbox.put(parsed)  # a JSON-RPC answer to the request: read as any answer
                    return
                expired = response.status_code == 404 and "Mcp-Session-Id" in sent_headers
                if expired:
                    self.session_expired = True
                await self._inbox.put(HttpRefusal(rid if _is_request(msg) else None, response.status_code, body, method,
                                                  None if isinstance(parsed, Garbage) else parsed, expired))
            elif ctype == "text/event-stream":
                if self.faulty("sse-answer-ignored"):
                    return  # fault: an SSE answer is not read (only JSON bodies are)
                await self._read_stream(response, msg, where)
            else:
                body = await response.aread()
                if body.strip() and ctype == "application/json":
                    await self._inbox.put(_parse(body, where))
        except httpx.HTTPError as exc:
            if not quiet:
                await self._inbox.put(Garbage(repr(exc).encode(), where))

    async def _read_stream(self, response: httpx.Response, msg: Any, where: str) -> None:
        """The SSE answer to a POST, resumed with GET + Last-Event-ID after the server's ``retry``
        time when the connection ends before the response came (2025-11-25 resumability)."""
        rid = msg.get("id") if _is_request(msg) else None
        answered = rid is None
        last_id: str | None = None
        retry_ms = 1000
        for _attempt in range(5):
            decoder = SSEDecoder()
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.id is not None:
                        last_id = event.id
                    if event.retry is not None:
                        retry_ms = event.retry
                    if event.data.strip():
                        value = _parse(event.data.encode("utf-8"), where, True)
                        if isinstance(value, dict) and "method" not in value and _same_id(value.get("id"), rid):
                            answered = True
                        await self._inbox.put(value)
            await response.aclose()
            if answered or last_id is None or self.stateless or self.faulty("no-poll"):
                return
            if not self.faulty("ignore-retry"):
                await anyio.sleep(min(retry_ms, 10_000) / 1000)
            resume_from = None if self.faulty("resume-without-last-event-id") else last_id
            response = await self._send("GET", self.url, headers=self._stream_headers(resume_from))
            if response.status_code != 200:
                if response.status_code == 404 and self.session_id is not None:
                    self.session_expired = True
                await response.aclose()
                return

    def _stream_headers(self, last_id: str | None) -> dict[str, str]:
        """A GET for an SSE stream of this session (resumed after ``last_id`` when given)."""
        headers = {"Accept": "text/event-stream"}
        if self.faulty("get-accept-json"):
            headers["Accept"] = "application/json"  # fault: the GET does not list text/event-stream
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        return headers

    def open_stream(self) -> None:
        """The GET stream for messages the server sends on its own (its requests, notifications):
        opened once the session exists; a 405 means the server offers none."""
        if not self.stateless:
            self._tg.start_soon(self._get_stream, self.session_id)

    async def _get_stream(self, session_id: str | None) -> None:
        last_id: str | None = None
        retry_ms = 1000
        for _attempt in range(5):
            if self.session_id != session_id:
                return  # a new session opens its own stream
            try:
                response = await self._send("GET", self.url, headers=self._stream_headers(last_id))
                try:
                    if response.status_code != 200:
                        if response.status_code == 404 and session_id is not None and self.session_id == session_id:
                            self.session_expired = True
                        return  # 405: no such stream; anything else: nothing to listen to
                    decoder = SSEDecoder()
                    async for chunk in response.aiter_bytes():
                        for event in decoder.feed(chunk):
                            if event.id is not None:
                                last_id = event.id
                            if event.retry is not None:
                                retry_ms = event.retry
                            if event.data.strip():
                                await self._inbox.put(_parse(event.data.encode("utf-8"), "the GET stream", True))
                finally:
                    with anyio.CancelScope(shield=True):
                        await response.aclose()
            except httpx.HTTPError:
                pass
            await anyio.sleep(min(retry_ms, 10_000) / 1000)

    async def receive(self) -> Any:
        return await self._inbox.get()

    async def __aexit__(self, *exc: Any) -> None:
        with anyio.CancelScope(shield=True):
            if self.session_id is not None and self.delete_session and not self.stateless:
                with anyio.move_on_after(self.timeout):
                    try:  # end the session (a server may answer 405: it does not allow that)
                        await self._client.delete(self.url, headers={"Mcp-Session-Id": self.session_id,
                                                                    **({"MCP-Protocol-Version": self.protocol_version} if self.protocol_version else {}),
                                                                    **(self.auth.header("DELETE", self.url) if self.auth is not None else {})})
                    except httpx.HTTPError:
                        pass
            await self._client.aclose()
        await _finish(self)


class SseLink:
    transport = "sse"

    def __init__(self, url: str, *, timeout: float, http_transport: Any = None) -> None:
        self.url = url
        self.http_transport = http_transport  # tests: an httpx mock transport
        self.timeout = timeout
        self.endpoint: str | None = None
        self.protocol_version: str | None = None
        self.stateless = False
        self._inbox = _Inbox()
        self._client: Any = None
        self._tg: Any = None
        self._ready = anyio.Event()
        self.auth: Any = None  # the OAuth flow (reference_client.authorize.Authorizer), None: no authorization

    async def __aenter__(self) -> "SseLink":
        self._client = http_client(self.http_transport, timeout=httpx.Timeout(self.timeout, read=None))
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._stream)
        with anyio.move_on_after(self.timeout + (self.auth.config.flow_timeout if self.auth is not None else 0.0)):
            await self._ready.wait()  # (an authorization on the way may take its own time)
        if self.endpoint is None:
            why = self._inbox.closed_why
            await self.__aexit__(None, None, None)
            raise LinkClosed(why or f"no endpoint event on {self.url} within {self.timeout:g} s")
        return self

    async def _stream(self) -> None:
        try:
            response = await _authorized_send(self._client, self.auth, "GET", self.url, headers={"Accept": "text/event-stream"})
            try:
                if response.status_code != 200:
                    await self._inbox.close(f"GET {self.url} was answered HTTP {response.status_code}")
                    return
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.event == "endpoint" and self.endpoint is None:
                            # "All subsequent client messages MUST be sent as HTTP POST requests
                            # to this endpoint": the URL as given, query and all
                            self.endpoint = urljoin(self.url, event.data.strip())
                            self._ready.set()
                        elif event.event == "message" and event.data.strip():
                            await self._inbox.put(_parse(event.data.encode("utf-8"), "the SSE stream", True))
            finally:
                with anyio.CancelScope(shield=True):
                    await response.aclose()
        except httpx.HTTPError as exc:
            await self._inbox.close(f"the SSE stream {self.url} failed: {exc!r}")
            return
        await self._inbox.close("the server closed the SSE stream")

    async def send(self, msg: Any, headers: Mapping[str, str] | None = None, *, tweak: Tweak | None = None,
                   quiet: bool = False) -> None:
        tweak = tweak or Tweak()
        body = tweak.raw if tweak.raw is not None else dumps(msg)
        hdrs = {"Content-Type": "application/json", **(headers or {}), **tweak.set_headers}
        url = tweak.url or self.endpoint
        try:
            response = await _authorized_send(self._client, self.auth, tweak.http_method, url, content=body, headers=hdrs,
                                              timeout=self.timeout)
            try:
                await response.aread()
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            if quiet:
                return
            raise LinkClosed(f"POST {url} failed: {exc!r}") from exc
        if response.status_code >= 400 and not quiet:
            method = msg.get("method") if isinstance(msg, dict) else None
            parsed = _parse(response.content, "the POST answer") if response.content.strip() else None
            await self._inbox.put(HttpRefusal(msg.get("id") if _is_request(msg) else None, response.status_code,
                                              response.content, method, None if isinstance(parsed, Garbage) else parsed))

    async def send_together(self, msgs: Sequence[Any]) -> None:
        for msg in msgs:  # each POST is acknowledged at once; the answers come on the stream
            await self.send(msg)

    async def receive(self) -> Any:
        return await self._inbox.get()

    async def __aexit__(self, *exc: Any) -> None:
        with anyio.CancelScope(shield=True):
            await self._client.aclose()
        await _finish(self)
