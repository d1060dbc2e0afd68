"""The stdio front-end: newline-delimited JSON-RPC on stdin/stdout.

"Messages are delimited by newlines, and MUST NOT contain embedded newlines" and "The server MUST
NOT write anything to its stdout that is not a valid MCP message" (basic/transports#stdio): every
message is written compactly as one line; diagnostics go to stderr.  A line that is not JSON gets a
Parse error with id null; a line longer than ``max_message_bytes`` is discarded without being
buffered and answered with an Invalid Request error naming the limit.  The server exits when stdin
reaches end-of-file (2026-07-28 transports/stdio#shutdown: "Servers SHOULD exit promptly when
their standard input is closed").
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from typing import Any

import anyio

from reference_server.core import Connection, Outgoing, Server

__all__ = ["serve_stdio"]

_WRITTEN = frozenset({"response", "notification", "request", "raw", "close"})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# json.loads with a keyword argument builds a new JSONDecoder on every call; one serves every line
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_line(line: bytes) -> tuple[Any, str | None]:
    """(value, None) or (None, problem) for one line."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    try:
        return _DECODER.decode(text), None
    except (ValueError, RecursionError) as exc:
        return None, f"invalid JSON: {exc}"


class _Writer:
    """Writes whole lines to stdout: an asyncio pipe transport when stdout is a pipe or socket,
    plain blocking writes otherwise (a file, a terminal)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.transport: asyncio.WriteTransport | None = None
        self.protocol: Any = None
        self.closed = False

    async def open(self) -> None:
        mode = os.fstat(self.fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            loop = asyncio.get_running_loop()
            from asyncio.streams import FlowControlMixin

            pipe = open(self.fd, "wb", buffering=0, closefd=False)
            self.transport, self.protocol = await loop.connect_write_pipe(FlowControlMixin, pipe)

    async def write(self, data: bytes) -> None:
        if self.closed:
            return
        if self.transport is not None:
            if self.transport.is_closing():
                self.closed = True
                return
            self.transport.write(data)
            if self.transport.get_write_buffer_size() > 1 << 20:
                await self.protocol._drain_helper()
        else:
            try:
                os.write(self.fd, data)
            except OSError:
                self.closed = True

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()
        else:
            try:
                os.close(self.fd)
            except OSError:
                pass


async def _read_chunks(fd: int):
    """Yield chunks from stdin: asyncio pipe reader when possible, a thread otherwise."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 16)
        pipe = open(fd, "rb", buffering=0, closefd=False)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        while True:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            yield chunk
    else:
        while True:
            chunk = await anyio.to_thread.run_sync(os.read, fd, 1 << 16, abandon_on_cancel=True)
            if not chunk:
                return
            yield chunk


async def serve_stdio(server: Server, *, stdin_fd: int | None = None, stdout_fd: int | None = None) -> None:
    """Serve one connection over stdin/stdout until stdin closes (or a fault closes stdout)."""
    in_fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    out_fd = sys.stdout.fileno() if stdout_fd is None else stdout_fd
    writer = _Writer(out_fd)
    await writer.open()
    limit = server.config.max_message_bytes

    async with anyio.create_task_group() as tg:

        async def sink(out: Outgoing) -> None:
            kind = out.kind
            if kind not in _WRITTEN:  # "end", "disconnect": nothing to write on stdio
                return
            if kind == "close":
                await writer.write(out.data)
                writer.close()
                tg.cancel_scope.cancel()
                return
            await writer.write(out.data + b"\n")

        conn = Connection(server, task_group=tg, sink=sink, transport="stdio")
        buf = bytearray()
        discarding = 0  # > 0: bytes of an oversized line seen so far (the line is being dropped)
        try:
            async for chunk in _read_chunks(in_fd):
                start = 0
                while True:
                    nl = chunk.find(b"\n", start)
                    if nl < 0:
                        rest = chunk[start:]
                        if discarding:
                            discarding += len(rest)
                        elif len(buf) + len(rest) > limit:
                            discarding = len(buf) + len(rest)
                            buf.clear()
                        else:
                            buf += rest
                        break
                    piece = chunk[start:nl]
                    start = nl + 1
                    if discarding:
                        size = discarding + len(piece)
                        discarding = 0
                        await conn.receive_oversized(size)
                        continue
                    if buf:
                        buf += piece
                        line = bytes(buf)
                        buf.clear()
                    else:
                        line = piece
                    if len(line) > limit:
                        await conn.receive_oversized(len(line))
                        continue
                    await _handle_line(conn, line)
                if writer.closed:
                    break
            if buf and not discarding and not writer.closed:  # a last line without its newline
                await _handle_line(conn, bytes(buf))
            if not writer.closed:
                await _end_subscriptions(server, conn)
        finally:
            conn.close()
            tg.cancel_scope.cancel()
    if writer.transport is not None and not writer.closed:
        # let buffered responses reach the pipe before the loop ends (bounded: the reader may be gone)
        with anyio.move_on_after(5):
            while writer.transport.get_write_buffer_size() and not writer.transport.is_closing():
                await anyio.sleep(0.005)
        writer.transport.close()


async def _end_subscriptions(server: Server, conn: Connection) -> None:
    """End of input is the server's shutdown (transports/stdio#shutdown): its open subscriptions end
    gracefully -- "The server tears it down (e.g., during shutdown) -- it SHOULD send a successful
    `subscriptions/listen` response to signal a graceful end" (basic/patterns/subscriptions) -- and
    their responses are written before the connection closes (bounded: one second)."""
    subscriptions = getattr(server.features, "subscriptions", None)
    listening = [k for k, ctx in conn.inflight.items() if ctx.method == "subscriptions/listen"]
    if subscriptions is None or not listening:
        return
    subscriptions.shutdown()
    with anyio.move_on_after(1.0):
        while any(k in conn.inflight for k in listening):
            await anyio.sleep(0.005)


async def _handle_line(conn: Connection, line: bytes) -> None:
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line.strip():
        return  # not a message; nothing to answer
    value, problem = parse_line(line)
    if problem is not None:
        await conn.receive_invalid_json(problem)
        return
    await conn.receive(value)


def run(server: Server) -> None:
    """Blocking entry point for the CLI."""
    try:
        anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        pass
