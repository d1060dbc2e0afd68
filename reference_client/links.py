"""The reference client's front-ends: bytes to and from a server.  Each link is an async context
manager with ``send(message, headers=...)`` and ``receive()`` (the next parsed message; raises
:class:`LinkClosed` when the server is gone), and cleans up on exit (stdio: close stdin, wait,
SIGTERM, SIGKILL; streamable HTTP: DELETE the session).

* :class:`StdioLink` -- the server as a child process, newline-delimited JSON on its stdin/stdout.
* :class:`HttpLink` -- streamable HTTP: every message is a POST (Accept: application/json,
  text/event-stream); a JSON or SSE answer is read in the background; the session id from the
  initialize response is sent back on every request, and MCP-Protocol-Version once negotiated;
  on 2026-07-28 no session, and Mcp-Method / Mcp-Name (and the caller's Mcp-Param-*) headers.
* :class:`SseLink` -- the legacy HTTP+SSE transport: a GET stream whose ``endpoint`` event names
  where to POST.
"""

from __future__ import annotations

import json
import signal
import subprocess
from typing import Any, Mapping
from urllib.parse import urljoin

import anyio
import httpx

from conformance.wire.headers import metadata_headers
from conformance.wire.ndjson import NDJSONDecoder
from conformance.wire.sse import SSEDecoder

__all__ = ["LinkClosed", "StdioLink", "HttpLink", "SseLink", "Garbage"]


class LinkClosed(Exception):
    """The server went away (process exited, stream closed, connection refused)."""


class Garbage:
    """Something received that is not JSON (a stdout line, an SSE event's data, a body)."""

    def __init__(self, raw: bytes, where: str) -> None:
        self.raw = raw
        self.where = where

    def __repr__(self) -> str:
        return f"<not JSON on {self.where}: {self.raw[:80]!r}>"


def _parse(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return Garbage(raw, where)


class _Inbox:
    def __init__(self) -> None:
        self.send, self.recv = anyio.create_memory_object_stream[Any](1000)
        self.closed_why: str | None = None

    async def put(self, item: Any) -> None:
        await self.send.send(item)

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
            await self.send.send(LinkClosed(why))

    def shut(self) -> None:
        self.send.close()
        self.recv.close()


async def _finish(link: Any) -> None:
    """End a link's background tasks (outside any shielded scope: the task group's own scope
    must be the innermost when it exits)."""
    link._tg.cancel_scope.cancel()
    await link._tg.__aexit__(None, None, None)
    link._inbox.shut()


class StdioLink:
    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.proc: Any = None
        self._inbox = _Inbox()
        self._tg: Any = None
        self.protocol_version: str | None = None  # unused on stdio; the HTTP links send it

    async def __aenter__(self) -> "StdioLink":
        try:
            self.proc = await anyio.open_process(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                                 start_new_session=True)
        except OSError as exc:
            raise LinkClosed(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from exc
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read)
        return self

    async def _read(self) -> None:
        decoder = NDJSONDecoder()
        try:
            async for chunk in self.proc.stdout:
                for frame in decoder.feed(chunk):
                    if frame.raw.strip():
                        await self._inbox.put(_parse(frame.raw, "stdout"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        code = self.proc.returncode
        await self._inbox.close("the server closed its stdout" + (f" (exit code {code})" if code is not None else ""))

    async def send(self, msg: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            await self.proc.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise LinkClosed(f"the server's stdin is closed ({exc})") from exc

    async def receive(self) -> Any:
        return await self._inbox.get()

    async def __aexit__(self, *exc: Any) -> None:
        with anyio.CancelScope(shield=True):
            proc = self.proc
            try:
                await proc.stdin.aclose()  # the stdio shutdown: close stdin, then wait for the exit
            except Exception:
                pass
            for sig, wait in ((None, 2.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
                if sig is not None and proc.returncode is None:
                    try:
                        import os

                        os.killpg(proc.pid, sig)
                    except (ProcessLookupError, PermissionError):
                        pass
                with anyio.move_on_after(wait):
                    await proc.wait()
                if proc.returncode is not None:
                    break
        await self._finish()

    async def _finish(self) -> None:
        await _finish(self)


class HttpLink:
    def __init__(self, url: str, *, stateless: bool, timeout: float) -> None:
        self.url = url
        self.stateless = stateless
        self.timeout = timeout
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # set by the tour once negotiated (stateless: at once)
        self._inbox = _Inbox()
        self._client: Any = None
        self._tg: Any = None

    async def __aenter__(self) -> "HttpLink":
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, read=None), trust_env=False)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    def _headers(self, msg: Mapping[str, Any], extra: Mapping[str, str] | None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.stateless:
            headers.update(dict(metadata_headers(msg)))
        headers.update(extra or {})
        return headers

    async def send(self, msg: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        request = self._client.build_request("POST", self.url, content=body, headers=self._headers(msg, headers))
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise LinkClosed(f"POST {self.url} failed: {exc!r}") from exc
        if msg.get("method") == "initialize" and response.headers.get("mcp-session-id"):
            self.session_id = response.headers["mcp-session-id"]
        self._tg.start_soon(self._read_answer, response, msg)

    async def _read_answer(self, response: httpx.Response, msg: Mapping[str, Any]) -> None:
        where = f"the answer to {msg.get('method', 'a message')} (HTTP {response.status_code})"
        try:
            ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype == "text/event-stream":
                await self._read_stream(response, msg, where)
            else:
                body = await response.aread()
                if body.strip() and ctype == "application/json":
                    await self._inbox.put(_parse(body, where))
                elif response.status_code == 404 and self.session_id is not None:
                    await self._inbox.close("the server ended the session (HTTP 404)")
                elif response.status_code >= 400:
                    await self._inbox.put(Garbage(body or str(response.status_code).encode(), where))
        except httpx.HTTPError as exc:
            await self._inbox.put(Garbage(repr(exc).encode(), where))
        finally:
            await response.aclose()

    async def _read_stream(self, response: httpx.Response, msg: Mapping[str, Any], where: str) -> None:
        """The SSE answer to a POST, resumed with GET + Last-Event-ID after the server's ``retry``
        time when the connection ends before the response came (2025-11-25 resumability)."""
        rid = msg.get("id")
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
                        value = _parse(event.data.encode("utf-8"), where)
                        if isinstance(value, dict) and "method" not in value and value.get("id") == rid:
                            answered = True
                        await self._inbox.put(value)
            await response.aclose()
            if answered or last_id is None:
                return
            await anyio.sleep(min(retry_ms, 10_000) / 1000)
            request = self._client.build_request("GET", self.url, headers=self._stream_headers(last_id))
            response = await self._client.send(request, stream=True)
            if response.status_code != 200:
                await response.aclose()
                return

    def _stream_headers(self, last_id: str | None) -> dict[str, str]:
        """A GET for an SSE stream of this session (resumed after ``last_id`` when given)."""
        headers = {"Accept": "text/event-stream"}
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
            self._tg.start_soon(self._get_stream)

    async def _get_stream(self) -> None:
        last_id: str | None = None
        retry_ms = 1000
        for _attempt in range(5):
            try:
                async with self._client.stream("GET", self.url, headers=self._stream_headers(last_id)) as response:
                    if response.status_code != 200:
                        return  # 405: no such stream; anything else: nothing to listen to
                    decoder = SSEDecoder()
                    async for chunk in response.aiter_bytes():
                        for event in decoder.feed(chunk):
                            if event.id is not None:
                                last_id = event.id
                            if event.retry is not None:
                                retry_ms = event.retry
                            if event.data.strip():
                                await self._inbox.put(_parse(event.data.encode("utf-8"), "the GET stream"))
            except httpx.HTTPError:
                pass
            await anyio.sleep(min(retry_ms, 10_000) / 1000)

    async def receive(self) -> Any:
        return await self._inbox.get()

    async def __aexit__(self, *exc: Any) -> None:
        with anyio.CancelScope(shield=True):
            if self.session_id is not None:
                with anyio.move_on_after(self.timeout):
                    try:  # end the session (a server may answer 405: it does not allow that)
                        await self._client.delete(self.url, headers={"Mcp-Session-Id": self.session_id,
                                                                    **({"MCP-Protocol-Version": self.protocol_version} if self.protocol_version else {})})
                    except httpx.HTTPError:
                        pass
            await self._client.aclose()
        await _finish(self)


class SseLink:
    def __init__(self, url: str, *, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        self.endpoint: str | None = None
        self.protocol_version: str | None = None
        self._inbox = _Inbox()
        self._client: Any = None
        self._tg: Any = None
        self._ready = anyio.Event()

    async def __aenter__(self) -> "SseLink":
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, read=None), trust_env=False)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._stream)
        with anyio.move_on_after(self.timeout):
            await self._ready.wait()
        if self.endpoint is None:
            await self.__aexit__(None, None, None)
            raise LinkClosed(f"no endpoint event on {self.url} within {self.timeout:g} s")
        return self

    async def _stream(self) -> None:
        try:
            async with self._client.stream("GET", self.url, headers={"Accept": "text/event-stream"}) as response:
                if response.status_code != 200:
                    await self._inbox.close(f"GET {self.url} was answered HTTP {response.status_code}")
                    return
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.event == "endpoint" and self.endpoint is None:
                            self.endpoint = urljoin(self.url, event.data.strip())
                            self._ready.set()
                        elif event.event == "message" and event.data.strip():
                            await self._inbox.put(_parse(event.data.encode("utf-8"), "the SSE stream"))
        except httpx.HTTPError as exc:
            await self._inbox.close(f"the SSE stream {self.url} failed: {exc!r}")
            return
        await self._inbox.close("the server closed the SSE stream")

    async def send(self, msg: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        try:
            response = await self._client.post(self.endpoint, content=body, headers={"Content-Type": "application/json", **(headers or {})})
        except httpx.HTTPError as exc:
            raise LinkClosed(f"POST {self.endpoint} failed: {exc!r}") from exc
        if response.status_code >= 400:
            await self._inbox.put(Garbage(response.content or str(response.status_code).encode(),
                                          f"the POST of {msg.get('method', 'a message')} (HTTP {response.status_code})"))

    async def receive(self) -> Any:
        return await self._inbox.get()

    async def __aexit__(self, *exc: Any) -> None:
        with anyio.CancelScope(shield=True):
            await self._client.aclose()
        await _finish(self)
