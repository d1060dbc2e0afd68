"""The server side of stdio, for testing clients: the suite plays the server a client starts.

A client under test starts "its server" with the launcher that ``{server}`` names: a one-line
shell script that execs ``conformance/client/relay.py`` (standard library only) with the path of
our Unix socket and the run's token.  The relay connects back and forwards bytes and process facts;
:class:`RelayHub` listens (socket in a private 0700 directory, unguessable tokens, unknown tokens
refused) and hands each relay connection to the run that owns its token as a
:class:`RelayTransport` -- a :class:`~conformance.transports.base.Transport` like the client-side
ones, so the raw peer, transcript and schema oracle work unchanged (``RawPeer(role="server")``).

What the transport records beyond messages (``facts``): when the client closed our stdin, which
signals it sent, whether the relay was killed (the socket closed without our ``X`` frame: SIGKILL),
the relay's pid, argv, cwd and environment names.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import struct
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketStream

from conformance.transports.base import Inbound, Transport, TransportClosed, TransportError
from conformance.wire.envelope import parse_envelope
from conformance.wire.ndjson import NDJSONDecoder, SplitJoiner

__all__ = ["RelayHub", "RelayRun", "RelayTransport", "RELAY_SCRIPT"]

RELAY_SCRIPT = Path(__file__).resolve().parents[1] / "client" / "relay.py"
_HEAD = struct.Struct(">cI")
_SIGNAL_NAMES = {int(s): s.name for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}


@dataclass
class RelayFacts:
    """What happened to one relay process (one start of "the server" by the client)."""

    connected: float = field(default_factory=time.monotonic)
    hello: dict[str, Any] = field(default_factory=dict)
    stdin_closed: float | None = None  # monotonic time the client closed our stdin
    signals: list[tuple[float, str]] = field(default_factory=list)
    exited: float | None = None  # we told the relay to exit
    exit_code: int | None = None
    killed: float | None = None  # the socket closed without our exit: the relay was killed (SIGKILL)
    bytes_in: int = 0

    @property
    def pid(self) -> int | None:
        pid = self.hello.get("pid")
        return pid if isinstance(pid, int) else None


class RelayTransport(Transport):
    """One relay connection: the client's stdin (what it writes) in, its stdout (what we write) out."""

    name = "stdio"

    def __init__(self, stream: SocketStream, facts: RelayFacts, *, stubborn: bool = False) -> None:
        self._stream = stream
        self.facts = facts
        self.stubborn = stubborn  # ignore stdin EOF and SIGTERM (the client must escalate)
        self._decoder = NDJSONDecoder()
        self._joiner = SplitJoiner()
        self._pending: deque[Inbound] = deque()
        self._buf = bytearray()
        self._eof = False
        self._gone: str | None = None
        self._closed = False
        self._send_lock = anyio.Lock()
        self._eof_event = anyio.Event()
        self._gone_event = anyio.Event()
        self._reader_done = anyio.Event()  # receive() raised TransportClosed: nobody reads the socket now

    # -- facts --------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self.facts.pid

    @property
    def stdin_closed(self) -> bool:
        return self.facts.stdin_closed is not None

    @property
    def gone(self) -> bool:
        return self._gone is not None

    async def wait_gone(self, timeout: float) -> bool:
        """Wait until the relay process is gone (exited on our word, or killed), reading its
        frames (signals, the end of the connection) once the raw peer's reader has stopped."""
        with anyio.move_on_after(timeout):
            while self._gone is None:
                if self._reader_done.is_set():
                    await self._read_more()
                else:
                    async with anyio.create_task_group() as tg:
                        async def first(event: Any) -> None:
                            await event.wait()
                            tg.cancel_scope.cancel()
                        tg.start_soon(first, self._gone_event)
                        tg.start_soon(first, self._reader_done)
        return self._gone is not None

    async def wait_stdin_closed(self, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await self._eof_event.wait()
        return self._eof_event.is_set()

    # -- sending --------------------------------------------------------------------------------

    async def _frame(self, kind: bytes, payload: bytes = b"") -> None:
        if self._gone is not None or self._closed:
            raise TransportClosed(f"the client's server process is gone ({self._gone or 'closed'})")
        async with self._send_lock:
            try:
                await self._stream.send(_HEAD.pack(kind, len(payload)) + payload)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise TransportClosed(f"the relay connection is closed: {exc}") from None

    async def send(self, data: bytes, **_: Any) -> None:
        await self._frame(b"D", data + b"\n")

    async def send_bytes(self, data: bytes) -> None:
        await self._frame(b"D", data)

    async def close_stdout(self) -> None:
        await self._frame(b"C")

    async def write_stderr(self, data: bytes) -> None:
        """Write ``data`` to the relay process's stderr (the server's log output)."""
        await self._frame(b"R", data)
        self._event(f"server wrote {len(data)} byte(s) to stderr", stream="process")

    async def exit(self, code: int = 0) -> None:
        """End the relay process (the server "exits") with ``code``."""
        if self._gone is not None or self.facts.exited is not None:
            return
        self.facts.exited = time.monotonic()
        self.facts.exit_code = code
        try:
            await self._frame(b"X", str(code).encode())
        except TransportClosed:
            pass
        self._event(f"server exited with code {code}", stream="process")

    # -- receiving ----------------------------------------------------------------------------

    async def receive(self) -> Inbound:
        while not self._pending:
            if self._eof or self._gone is not None:
                self._reader_done.set()
                raise TransportClosed(
                    "the client closed the server's stdin" if self._eof else f"the server process is gone ({self._gone})"
                )
            await self._pump()
        return self._pending.popleft()

    async def _pump(self) -> None:
        """Handle the frames buffered; read more when they gave nothing to return."""
        if await self._parse():
            return
        try:
            data = await self._stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._lost()
            return
        self._buf += data
        await self._parse()

    async def _read_more(self) -> None:
        """Read and handle what the relay sends after the raw peer stopped reading (signals, the end)."""
        await self._parse()
        if self._gone is not None:
            return
        try:
            data = await self._stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._lost()
            return
        self._buf += data
        await self._parse()

    async def _parse(self) -> bool:
        buf = self._buf
        before = len(self._pending)
        while len(buf) >= _HEAD.size:
            kind, size = _HEAD.unpack_from(buf)
            if len(buf) < _HEAD.size + size:
                break
            payload = bytes(buf[_HEAD.size:_HEAD.size + size])
            del buf[:_HEAD.size + size]
            await self._on_frame(kind, payload)
        return len(self._pending) > before or self._eof

    async def _on_frame(self, kind: bytes, payload: bytes) -> None:
        now = time.monotonic()
        if kind == b"D":
            self.facts.bytes_in += len(payload)
            frames = [out for f in self._decoder.feed(payload) for out in self._joiner.push(f)]
            self._pending.extend(_inbound(f) for f in frames)
        elif kind == b"E":
            self.facts.stdin_closed = now
            frames = [*self._joiner.flush(), *self._decoder.close()]
            self._pending.extend(_inbound(f) for f in frames)
            self._eof = True
            self._eof_event.set()
            self._event("the client closed the server's stdin", stream="process")
            if not self.stubborn:
                await self.exit(0)  # a well-behaved server exits when its input ends
        elif kind == b"S":
            try:
                num = int(payload)
            except ValueError:
                num = -1
            name = _SIGNAL_NAMES.get(num, f"signal {num}")
            self.facts.signals.append((now, name))
            self._event(f"the server received {name}", stream="process")
            if not self.stubborn:
                await self.exit(128 + num if num > 0 else 1)

    def _lost(self) -> None:
        if self._gone is None:
            if self.facts.exited is None:
                self.facts.killed = time.monotonic()
                self._gone = "killed (its connection ended without an exit: SIGKILL or a crash)"
                self._event("the server process was killed", stream="process")
            else:
                self._gone = f"exited with code {self.facts.exit_code}"
            self._gone_event.set()
        if not self._eof:
            frames = [*self._joiner.flush(), *self._decoder.close()]
            self._pending.extend(_inbound(f) for f in frames)

    async def aclose(self) -> None:
        if self._closed:
            return
        if self._gone is None:
            with anyio.move_on_after(1, shield=True):
                await self.exit(0)
        self._closed = True
        with anyio.move_on_after(1, shield=True):
            await self._stream.aclose()
        if self._gone is None:
            self._gone = "closed by the suite"
            self._gone_event.set()


def _inbound(frame: Any) -> Inbound:
    raw = frame.raw
    meta: dict[str, Any] = {"stream": "stdin"}
    if frame.problem is None:
        return Inbound(raw, parse_envelope(raw), None, meta)
    if getattr(frame, "lines", 1) > 1:
        meta["lines"] = frame.lines
    if getattr(frame, "truncated", False):
        meta["truncated"] = True
        return Inbound(raw, None, frame.problem, meta)
    if not raw.strip():
        return Inbound(raw, None, frame.problem, meta)
    return Inbound(raw, parse_envelope(raw), frame.problem, meta)


class RelayRun:
    """One client run's stdio endpoint: its token, its launcher, the relay connections it got."""

    def __init__(self, hub: "RelayHub", token: str, launcher: Path) -> None:
        self.hub = hub
        self.token = token
        self.launcher = launcher
        self.stubborn = False
        self.connections: list[RelayTransport] = []
        self._send, self._recv = anyio.create_memory_object_stream[RelayTransport](16)

    async def accept(self, timeout: float) -> RelayTransport | None:
        """The next relay connection of this run (the client started its server), or None."""
        with anyio.move_on_after(timeout):
            return await self._recv.receive()
        return None

    def _deliver(self, transport: RelayTransport) -> None:
        self.connections.append(transport)
        try:
            self._send.send_nowait(transport)
        except anyio.WouldBlock:  # a client that starts its server 16 times: refuse the rest
            self.hub._tg.start_soon(transport.aclose)

    async def aclose(self) -> None:
        for t in self.connections:
            await t.aclose()
        self._send.close()
        self._recv.close()
        self.hub._runs.pop(self.token, None)
        try:
            self.launcher.unlink()
        except OSError:
            pass


class RelayHub:
    """The Unix socket relays connect to, in a private directory; one per client-testing session."""

    def __init__(self, *, python: str | None = None) -> None:
        self.python = python or sys.executable
        self.dir: Path | None = None
        self.socket_path: Path | None = None
        self._runs: dict[str, RelayRun] = {}
        self._listener: Any = None
        self._tg: Any = None

    async def serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Listen until cancelled (start it with ``tg.start(hub.serve)``)."""
        self.dir = Path(tempfile.mkdtemp(prefix="mcpc-", dir="/tmp" if os.path.isdir("/tmp") else None))
        os.chmod(self.dir, 0o700)
        self.socket_path = self.dir / "s"
        try:
            self._listener = await anyio.create_unix_listener(self.socket_path)
            async with anyio.create_task_group() as tg:
                self._tg = tg
                task_status.started(self)
                async with self._listener:
                    await self._listener.serve(self._handle, task_group=tg)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def new_run(self) -> RelayRun:
        if self.dir is None or self.socket_path is None:
            raise TransportError("the relay hub is not listening")
        token = secrets.token_hex(8)
        launcher = self.dir / token
        launcher.write_text(
            "#!/bin/sh\n"
            f"exec {_sh_quote(self.python)} -S {_sh_quote(str(RELAY_SCRIPT))} "
            f"{_sh_quote(str(self.socket_path))} {token}\n"
        )
        launcher.chmod(0o700)
        run = RelayRun(self, token, launcher)
        self._runs[token] = run
        return run

    async def _handle(self, stream: SocketStream) -> None:
        facts = RelayFacts()
        buf = bytearray()
        try:
            with anyio.fail_after(5):
                while True:
                    buf += await stream.receive(65536)
                    if len(buf) >= _HEAD.size:
                        kind, size = _HEAD.unpack_from(buf)
                        if len(buf) >= _HEAD.size + size:
                            break
        except Exception:
            await stream.aclose()
            return
        kind, size = _HEAD.unpack_from(buf)
        try:
            hello = json.loads(bytes(buf[_HEAD.size:_HEAD.size + size]))
        except ValueError:
            hello = {}
        run = self._runs.get(hello.get("token")) if kind == b"H" and isinstance(hello, dict) else None
        if run is None:  # not ours, or a run that is over
            await stream.send(_HEAD.pack(b"X", 1) + b"1")
            await stream.aclose()
            return
        facts.hello = hello
        transport = RelayTransport(stream, facts, stubborn=run.stubborn)
        rest = bytes(buf[_HEAD.size + size:])
        if rest:
            transport._buf += rest
        run._deliver(transport)
        # the connection now belongs to the transport (read by the raw peer's reader)


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
