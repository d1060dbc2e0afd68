"""The reference client's front-ends: bytes to and from a server.  Each link is an async context
manager with ``send(message, headers=..., tweak=..., quiet=...)``, ``send_together(messages)`` and
``receive()`` (the next parsed message, a :class:`Garbage` or an :class:`HttpRefusal`; raises
:class:`LinkClosed` when the server is gone), and cleans up on exit (stdio: close stdin, wait,
SIGTERM, SIGKILL; streamable HTTP: DELETE the session).

* :class:`StdioLink` -- the server as a child process, newline-delimited JSON on its stdin/stdout.
The HTTP links (:mod:`reference_client.http_links`, imported only for an HTTP server: httpx is
most of a stdio client's start-up otherwise):

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
import subprocess
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import anyio

from conformance.wire.ndjson import NDJSONDecoder

__all__ = ["LinkClosed", "StdioLink", "Garbage", "HttpRefusal", "Tweak", "Inbox", "dumps", "finish_link", "is_request",
           "parse_frame", "same_id"]


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


def parse_frame(raw: bytes, where: str, message: bool = False) -> Any:
    try:
        # strictly UTF-8 (json.loads(bytes) lets surrogates through), and strictly JSON: NaN,
        # Infinity and -Infinity, which Python reads, are not JSON (RFC 8259 section 6)
        return json.loads(raw.decode("utf-8"), parse_constant=_not_json)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return Garbage(raw, where, message)


def same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def is_request(msg: Any) -> bool:
    return isinstance(msg, dict) and "method" in msg and "id" in msg


class Inbox:
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


async def finish_link(link: Any) -> None:
    """End a link's background tasks (outside any shielded scope: the task group's own scope
    must be the innermost when it exits)."""
    link._tg.cancel_scope.cancel()
    await link._tg.__aexit__(None, None, None)
    link._inbox.shut()


class StdioLink:
    transport = "stdio"

    def __init__(self, argv: list[str], *, close_stdin_first: bool = True) -> None:
        self.argv = argv
        self.close_stdin_first = close_stdin_first  # False: fault kill-without-closing-stdin
        self.escalate = True  # False: fault no-escalation (close stdin, wait, and leave the server running)
        self.proc: Any = None
        self._inbox = Inbox()
        self._tg: Any = None
        self.protocol_version: str | None = None  # unused on stdio; the HTTP links send it
        self.stateless = False  # unused on stdio
        self.stderr_is_error = False  # True: fault stderr-is-error (any stderr output ends the session)
        #: the exit code of a server that ended by itself while the session still needed it (the
        #: link was left because it closed): None while it runs, or when the client ended it
        self.died: int | None = None
        self._stdout_ended = False

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
                        await self._inbox.put(parse_frame(frame.raw, "stdout", True))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        code = self.proc.returncode
        self._stdout_ended = True
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
            if exc and isinstance(exc[1], LinkClosed) and self._stdout_ended:
                # the server went away (its stdout ended): did its process end by itself?
                with anyio.move_on_after(0.5):
                    await proc.wait()
                self.died = proc.returncode
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
        await finish_link(self)
