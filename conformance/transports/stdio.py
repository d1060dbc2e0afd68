"""The stdio transport: spawn the server, NDJSON over its stdin/stdout, stderr kept as a bounded tail.

* The server runs in its own session (``start_new_session=True``), so its whole process group --
  children and grandchildren included -- can be signalled at once and nothing outlives
  :meth:`StdioTransport.aclose`.
* stdout is *pulled*: :meth:`~StdioTransport.receive` reads the pipe only when it has nothing
  buffered, so a peer that floods stdout is held back by the OS pipe (backpressure), never by a
  growing buffer.  Memory per transport is bounded by one read chunk of frames, the NDJSON
  decoder's ``max_line_bytes`` and asyncio's bounded pipe buffer.  A line over the limit is cut
  to ``max_line_bytes`` and reported as a frame with a problem; the rest of it is skipped.
* stderr is read continuously by a background task (a server blocked on a full stderr pipe would
  look like a hang); only the last ``stderr_tail_bytes`` are kept, and the first
  ``max_stderr_events`` lines are reported as events.
* ``receive()`` returns everything the server wrote, then raises :class:`ProcessExited` (exit code,
  stderr tail) once stdout has ended and the process is gone, or :class:`TransportClosed` if the
  server closed stdout but keeps running.

Background tasks live in a task group entered by :meth:`start` and left by :meth:`aclose`, so both
must run in the same task and nest like any anyio context (``async with StdioTransport(...)``).
Only one task may wait in :meth:`receive` at a time.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
from collections import deque
from typing import Any, Mapping, Sequence

import anyio
import anyio.abc

from conformance.transports.base import (
    Inbound,
    ProcessExited,
    StartError,
    Transport,
    TransportClosed,
    TransportError,
)
from conformance.transports.procstat import group_cpu_seconds
from conformance.wire.envelope import parse_envelope
from conformance.wire.ndjson import DEFAULT_MAX_LINE_BYTES, NDJSONDecoder, SplitJoiner

__all__ = ["StdioTransport"]

_CHUNK = 65536
_STDERR_LINE_CHARS = 1000
_STREAM_END = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)
_PIPE_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError, ConnectionResetError)


def _describe_os_error(exc: OSError, argv: Sequence[str]) -> str:
    name = exc.filename if exc.filename is not None else argv[0]
    reason = exc.strerror or exc.__class__.__name__
    return f"{reason}: {os.fsdecode(name)!r}" if isinstance(name, (str, bytes, os.PathLike)) else f"{reason}: {name!r}"


def _exit_text(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"


def _environ_snapshot() -> dict[str, str]:
    """``dict(os.environ)``, retried if another thread changes it while we copy."""
    for _ in range(10):
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):  # a variable removed (or added) while we copied
            continue
    return dict(os.environ)


class StdioTransport(Transport):
    """A server spawned as a child process, spoken to over its standard streams."""

    name = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        stderr_tail_bytes: int = 8192,
        kill_after: float = 2.0,
        close_grace: float = 1.0,
        startup_grace: float = 0.0,
        max_stderr_events: int = 200,
    ) -> None:
        """``env`` is added to (and overrides) the inherited environment.

        ``close_grace``: how long :meth:`aclose` waits for the server to exit after closing its
        stdin before sending SIGTERM; ``kill_after``: how long it then waits before SIGKILL.
        ``startup_grace``: :meth:`start` waits up to this long and raises :class:`StartError` if
        the server exits meanwhile (it returns at once when the server exits; 0 disables the check).
        """
        if isinstance(command, (str, bytes)):
            raise TypeError("command must be a sequence of arguments, not a string (use shlex.split)")
        self.command: list[str] = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in command]
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.max_line_bytes = max_line_bytes
        self.stderr_tail_bytes = stderr_tail_bytes
        self.kill_after = kill_after
        self.close_grace = close_grace
        self.startup_grace = startup_grace
        self.max_stderr_events = max_stderr_events

        self._proc: anyio.abc.Process | None = None
        self._writer: asyncio.StreamWriter | None = None  # fast path under asyncio (see _write)
        self._reader: asyncio.StreamReader | None = None  # fast path under asyncio (see receive)
        self._tg: anyio.abc.TaskGroup | None = None
        self._decoder = NDJSONDecoder(max_line_bytes=max_line_bytes)
        # a message spread over several lines (pretty-printed) is reassembled, so that one framing
        # fault is one verdict (transport.stdio.no-embedded-newlines) and the run goes on
        self._joiner = SplitJoiner(max_bytes=max_line_bytes)
        self._pending: deque[Inbound] = deque()
        self._receiving = False
        self._eof = False
        self._stdin_closed = False
        self._closing = False
        self._close_done: anyio.Event | None = None
        self._stderr_idle: anyio.Event | None = None  # the background stderr reader stopped
        self._stderr_running = False
        self._stderr_eof = False
        self._partial = bytearray()  # an unfinished stderr line (for events)
        self._tail = bytearray()
        self._stderr_bytes = 0
        self._stderr_lines = 0
        self._exit_reported = False

    # -- public attributes --------------------------------------------------------------------

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise TransportError("the server process has not been started")
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    def cpu_seconds(self) -> float | None:
        """CPU seconds the server's process group has used so far (None: not started, or unknown
        on this platform): whether a server that has not answered yet is still starting."""
        if self._proc is None or self._proc.returncode is not None:
            return None
        return group_cpu_seconds(self._proc.pid)

    @property
    def stderr_tail(self) -> str:
        """The last ``stderr_tail_bytes`` the server wrote to stderr (decoded leniently)."""
        return self._tail.decode("utf-8", "replace")

    @property
    def stderr_bytes(self) -> int:
        """Total bytes the server wrote to stderr."""
        return self._stderr_bytes

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._proc is not None or self._closing:
            raise TransportError("StdioTransport.start() called twice")
        if not self.command:
            raise StartError("cannot start the server: empty command", command=[])
        # Always an explicit environment: a child that inherits it reads the C ``environ`` array
        # after vfork, and another thread setting a variable meanwhile (pytest sets
        # PYTEST_CURRENT_TEST for every test phase) makes execve fail with EFAULT ("Bad address").
        env = {**_environ_snapshot(), **(self.env or {})}
        cmd_text = shlex.join(self.command)
        try:
            with anyio.CancelScope(shield=True):  # a process started is a process we end (see below)
                self._proc = await anyio.open_process(
                    self.command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,
                )
        except OSError as exc:
            raise StartError(
                f"cannot start {cmd_text}: {_describe_os_error(exc, self.command)}",
                command=list(self.command),
                errno=exc.errno,
            ) from exc
        try:
            writer = getattr(self._proc.stdin, "_stream", None)
            self._writer = writer if isinstance(writer, asyncio.StreamWriter) else None
            reader = getattr(self._proc.stdout, "_stream", None)
            self._reader = reader if isinstance(reader, asyncio.StreamReader) else None
            if self._reader is not None:
                _feed_pipes_directly(self._proc)
            self._stderr_idle = anyio.Event()
            tg = anyio.create_task_group()
            await tg.__aenter__()
            self._tg = tg
            tg.start_soon(self._watch_exit)
            tg.start_soon(self._read_stderr)
            self._event("process started", pid=self._proc.pid, argv=list(self.command), cwd=os.fspath(self.cwd) if self.cwd else None)
            if self.startup_grace > 0:
                if await self._wait_exited(self.startup_grace):
                    await self._finish_stderr(1.0)
                    rc = self.returncode
                    tail = self.stderr_tail
                    raise StartError(
                        f"{cmd_text} {_exit_text(rc)} during start-up" + _tail_hint(tail),
                        command=list(self.command),
                        returncode=rc,
                        stderr_tail=tail,
                    )
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close stdin, wait ``close_grace``, SIGTERM the group, wait ``kill_after``, SIGKILL, reap.

        Idempotent; a second call waits for the first to finish.  Cleanup is shielded from
        cancellation.
        """
        if self._close_done is not None:
            with anyio.CancelScope(shield=True):
                await self._close_done.wait()
            return
        self._close_done = anyio.Event()
        self._closing = True
        try:
            with anyio.CancelScope(shield=True):
                await self._terminate()
                if self._tg is not None:
                    self._tg.cancel_scope.cancel()
        finally:
            try:
                if self._tg is not None:
                    tg, self._tg = self._tg, None
                    await tg.__aexit__(None, None, None)
            finally:
                self._close_done.set()

    async def _terminate(self) -> None:
        proc = self._proc
        if proc is None:
            return
        # Exit is observed through proc.wait(), not the background watcher: when the caller is
        # cancelled, the background tasks are cancelled too, but this runs shielded.
        await self._close_stdin_quietly()
        await self._close_stdout()  # a server blocked writing to a full stdout pipe gets EPIPE
        exited = await self._wait_exited(self.close_grace)
        if not exited:
            self._signal_group(signal.SIGTERM)
            self._quiet_event("sent SIGTERM to the process group", pid=proc.pid)
            exited = await self._wait_exited(self.kill_after)
        if not exited:
            self._signal_group(signal.SIGKILL)
            self._quiet_event("sent SIGKILL to the process group", pid=proc.pid)
            exited = await self._wait_exited(10)
        # Whatever the server left behind in its group (grandchildren) goes too.
        self._signal_group(signal.SIGKILL)
        if exited:
            await self._finish_stderr(0.5)
            self._report_exit()
            with anyio.move_on_after(5):
                await proc.aclose()
        else:  # not reapable (uninterruptible sleep): close our ends, give up on the zombie
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    try:
                        await stream.aclose()
                    except Exception:  # pragma: no cover - defensive
                        pass
            self._quiet_event("the server process could not be reaped", pid=proc.pid)

    async def _close_stdout(self) -> None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return
        try:
            await proc.stdout.aclose()
        except Exception:  # pragma: no cover - defensive
            pass
        # anyio's aclose() only stops the reader; close the pipe itself (asyncio) so that the
        # server sees EPIPE instead of blocking forever on a pipe nobody reads any more.
        transport = getattr(proc, "_transport", None)
        get_pipe = getattr(transport, "get_pipe_transport", None)
        pipe = get_pipe(1) if get_pipe is not None else None
        if pipe is not None:
            pipe.close()

    def _signal_group(self, sig: int) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, sig)
            elif proc.returncode is None:  # pragma: no cover - Windows
                proc.kill() if sig == getattr(signal, "SIGKILL", None) else proc.terminate()
        except (ProcessLookupError, PermissionError):
            pass

    # -- sending ------------------------------------------------------------------------------

    async def send(self, data: bytes, **_: Any) -> None:
        """Write one message: ``data`` followed by a newline (``data`` is not checked)."""
        writer = self._writer
        if writer is not None and not (self._closing or self._stdin_closed):
            # the hot path of _write, inlined: one coroutine less per message
            try:
                writer.write(data + b"\n")
                if writer.transport.is_closing() or writer.transport.get_write_buffer_size():
                    await writer.drain()  # pipe full (wait) or broken (raises)
                return
            except _PIPE_GONE as exc:
                raise await self._gone("the server closed its stdin") from exc
        await self._write(data + b"\n")

    async def send_bytes(self, data: bytes) -> None:
        """Write exactly ``data`` (framing tests: partial lines, CRLF, garbage...)."""
        await self._write(bytes(data))

    async def _write(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise TransportError("the server process has not been started")
        if self._closing:
            raise TransportClosed("the transport is closed")
        if self._stdin_closed:
            raise TransportClosed("stdin of the server is closed (close_stdin() was called)")
        writer = self._writer
        try:
            if writer is not None:
                # anyio's stream adds a cancel-shielded checkpoint (an extra event-loop iteration)
                # to every write; on the hot path we write and drain the asyncio writer directly:
                # drain() returns at once unless the pipe is full, and raises once it is broken,
                # so it is skipped when everything was written and the pipe is not closing.
                writer.write(data)
                if writer.transport.is_closing() or writer.transport.get_write_buffer_size():
                    await writer.drain()
            else:
                await proc.stdin.send(data)
        except _PIPE_GONE as exc:
            raise await self._gone("the server closed its stdin") from exc

    async def close_stdin(self) -> None:
        """Close the server's stdin (the graceful shutdown signal)."""
        if self._proc is None:
            raise TransportError("the server process has not been started")
        if not self._stdin_closed:
            await self._close_stdin_quietly()
            self._event("closed stdin of the server", pid=self._proc.pid)

    async def _close_stdin_quietly(self) -> None:
        if self._stdin_closed or self._proc is None or self._proc.stdin is None:
            return
        self._stdin_closed = True
        try:
            await self._proc.stdin.aclose()
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def wait_exit(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the server to exit; its exit code, or None if it still runs."""
        if self._proc is None:
            raise TransportError("the server process has not been started")
        await self._wait_exited(timeout)
        return self.returncode

    async def _wait_exited(self, timeout: float) -> bool:
        proc = self._proc
        assert proc is not None
        if proc.returncode is None and timeout > 0:
            with anyio.move_on_after(timeout):
                await proc.wait()
        return proc.returncode is not None

    # -- receiving ----------------------------------------------------------------------------

    async def receive(self) -> Inbound:
        pending = self._pending
        if pending:
            return pending.popleft()
        if self._receiving:
            raise TransportError("receive() is already waiting in another task")
        proc = self._proc
        if proc is None or proc.stdout is None:
            raise TransportError("the server process has not been started")
        self._receiving = True
        try:
            stdout = proc.stdout
            # under asyncio, read the StreamReader directly (what anyio's wrapper does, one
            # coroutine less per read); b"" is the end of the stream, as EndOfStream is for anyio
            read = self._reader.read if self._reader is not None else None
            feed = self._decoder.feed
            joiner = self._joiner
            make = self._inbound
            while not pending:
                if self._closing:
                    raise TransportClosed("the transport is closed")
                if self._eof:
                    raise await self._gone("the server closed stdout")
                try:
                    if read is not None:
                        data = await read(_CHUNK)
                        if not data:
                            raise anyio.EndOfStream
                    else:
                        data = await stdout.receive(_CHUNK)
                except _STREAM_END:
                    if self._closing:  # our own close, not the server's: flush nothing
                        raise TransportClosed("the transport is closed") from None
                    self._eof = True
                    pending.extend(make(f) for f in [*joiner.flush(), *self._decoder.close()])
                    continue
                frames = feed(data)
                if len(frames) == 1 and not joiner.holding:  # the usual case: one whole message per read
                    frames = joiner.push(frames[0])
                    if len(frames) == 1:
                        return make(frames[0])
                else:
                    frames = [out for f in frames for out in joiner.push(f)]
                pending.extend(make(f) for f in frames)
            return pending.popleft()
        finally:
            self._receiving = False

    @staticmethod
    def _inbound(frame: Any) -> Inbound:
        raw = frame.raw
        if frame.problem is None:
            return Inbound(raw, parse_envelope(raw), None, {"stream": "stdout"})
        if frame.lines > 1:
            return Inbound(raw, parse_envelope(raw), frame.problem, {"stream": "stdout", "lines": frame.lines})
        if frame.truncated:
            return Inbound(raw, None, frame.problem, {"stream": "stdout", "truncated": True})
        if not raw.strip():
            return Inbound(raw, None, frame.problem, {"stream": "stdout"})
        return Inbound(raw, parse_envelope(raw), frame.problem, {"stream": "stdout"})

    async def _gone(self, what: str) -> TransportClosed:
        """The error for a dead pipe: ProcessExited once the process has exited, else TransportClosed."""
        if self._closing:
            return TransportClosed("the transport is closed")
        if await self._wait_exited(self.close_grace):
            await self._finish_stderr(0.5)
            self._report_exit()
            rc = self.returncode
            tail = self.stderr_tail
            return ProcessExited(f"the server process {_exit_text(rc)}" + _tail_hint(tail), returncode=rc, stderr_tail=tail)
        return TransportClosed(f"{what} but is still running", pid=self.pid)

    # -- background tasks ---------------------------------------------------------------------

    async def _watch_exit(self) -> None:
        assert self._proc is not None
        await self._proc.wait()
        self._report_exit()

    def _quiet_event(self, text: str, **meta: Any) -> None:
        """An event from a background task: a failing sink must not crash the task group."""
        try:
            self._event(text, **meta)
        except Exception:  # pragma: no cover - the sink's bug, not ours to propagate here
            pass

    def _report_exit(self) -> None:
        if self._exit_reported or self.returncode is None:
            return
        self._exit_reported = True
        self._quiet_event(f"process {_exit_text(self.returncode)}", pid=self.pid, returncode=self.returncode, stderr_bytes=self._stderr_bytes)

    async def _finish_stderr(self, timeout: float) -> None:
        """Read stderr to its end (bounded), so the tail is complete once the process has exited."""
        if self._stderr_eof or self._proc is None:
            return
        with anyio.move_on_after(timeout):
            if self._stderr_running and self._stderr_idle is not None:
                await self._stderr_idle.wait()
            if not self._stderr_eof:  # the background reader was cancelled: finish here
                await self._drain_stderr()

    async def _read_stderr(self) -> None:
        assert self._stderr_idle is not None
        self._stderr_running = True
        try:
            await self._drain_stderr()
        finally:
            self._stderr_running = False
            self._stderr_idle.set()

    async def _drain_stderr(self) -> None:
        assert self._proc is not None
        stream = self._proc.stderr
        if stream is None:
            self._stderr_eof = True
            return
        tail = self._tail
        cap = self.stderr_tail_bytes
        while True:
            try:
                data = await stream.receive(_CHUNK)
            except _STREAM_END:
                break
            except OSError as exc:  # pragma: no cover - defensive
                self._quiet_event(f"reading stderr failed: {exc}")
                break
            self._stderr_bytes += len(data)
            tail += data
            if len(tail) > cap:
                del tail[: len(tail) - cap]
            if self.events is not None and self._stderr_lines <= self.max_stderr_events:
                self._stderr_events(self._partial, data)
        self._stderr_eof = True
        if self._partial and self._stderr_lines < self.max_stderr_events:
            self._stderr_line(bytes(self._partial))
        self._partial.clear()

    def _stderr_events(self, partial: bytearray, data: bytes) -> None:
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                room = _STDERR_LINE_CHARS * 4 - len(partial)
                if room > 0:
                    partial += data[start : start + room]
                return
            if self._stderr_lines >= self.max_stderr_events:
                self._stderr_lines += 1
                partial.clear()
                self._quiet_event(f"stderr: further lines not reported (the last {self.stderr_tail_bytes} bytes are kept)", stream="stderr")
                return
            line = bytes(partial) + data[start:nl] if partial else data[start:nl]
            partial.clear()
            self._stderr_line(line)
            start = nl + 1

    def _stderr_line(self, line: bytes) -> None:
        self._stderr_lines += 1
        text = line.rstrip(b"\r").decode("utf-8", "replace")
        if len(text) > _STDERR_LINE_CHARS:
            text = text[:_STDERR_LINE_CHARS] + "..."
        self._quiet_event(f"stderr: {text}", stream="stderr")


def _feed_pipes_directly(proc: Any) -> None:
    """Let the child's stdout and stderr reach their StreamReaders in the pipes' own callbacks.

    asyncio hands every chunk a subprocess writes to the process protocol through ``call_soon``
    (``BaseSubprocessTransport._pipe_data_received``): one more event-loop iteration per message
    than reading any other pipe.  Once the pipes are connected (``_pending_calls`` is None)
    nothing is queued that way ahead of data any more, so feeding the reader directly keeps the
    order; before that, and for EOF and connection loss, asyncio's own path is used.  Both
    streams take the same path, so neither overtakes the other.  Without the expected internals
    (another asyncio or event loop) nothing changes.
    """
    aproc = getattr(proc, "_process", None)
    transport = getattr(aproc, "_transport", None)
    pipes = getattr(transport, "_pipes", None)
    if not isinstance(pipes, dict) or not hasattr(transport, "_pending_calls"):
        return
    for fd, reader in ((1, getattr(aproc, "stdout", None)), (2, getattr(aproc, "stderr", None))):
        proto = pipes.get(fd)
        original = getattr(proto, "data_received", None)
        if original is None or not isinstance(reader, asyncio.StreamReader):
            continue
        proto.data_received = _direct_feed(transport, reader, original)


def _direct_feed(transport: Any, reader: asyncio.StreamReader, original: Any) -> Any:
    def data_received(data: bytes) -> None:
        if transport._pending_calls is None:
            reader.feed_data(data)
        else:
            original(data)

    return data_received


def _tail_hint(tail: str) -> str:
    lines = [line for line in tail.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1].strip()
    if len(last) > 300:
        last = last[:300] + "..."
    return f"; stderr ends with: {last}"
