"""Reaching the target: what to start or where to connect, and a clear error when we cannot.

* :class:`Target` says how to reach the server under test: a transport, a command (stdio, or an
  HTTP server we start), a URL, environment, working directory and a start-up deadline.  A
  ``{port}`` placeholder in the command or URL is replaced by a free 127.0.0.1 port
  (:meth:`Target.resolve`), which is also exported to the command as ``PORT``.
* :class:`ServerProcess` starts an HTTP server command, waits (with a deadline) until its port
  accepts TCP connections, reports an early exit with its exit code and output tail, and always
  stops it: TERM to its process group, then KILL.
* :func:`open_peer` builds the right transport and an unentered :class:`~conformance.runtime.peer.RawPeer`.
* :func:`target_error` maps the transport error hierarchy to a :class:`TargetError` whose message
  names what is wrong and how to fix it (outcome ``error``, CLI exit code 3).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

import anyio
from anyio.abc import Process

from conformance.runtime.peer import RawPeer
from conformance.spec.versions import Transport
from conformance.transports.procstat import busy, group_cpu_seconds
from conformance.transports.base import (
    ConnectError,
    HttpStatusError,
    ProcessExited,
    StartError,
    TransportClosed,
    TransportError,
    TransportTimeout,
)

__all__ = [
    "Target",
    "TargetError",
    "ServerProcess",
    "open_peer",
    "target_error",
    "check_command",
    "free_port",
    "register_child",
    "unregister_child",
    "kill_children",
    "PORT_PLACEHOLDER",
]

PORT_PLACEHOLDER = "{port}"
# a started server still busy (using CPU) at the start-up deadline gets up to this many times it
# in all: on a loaded machine an interpreter's imports take far longer than the same work alone
STARTUP_CAP_FACTOR = 4
_TAIL_BYTES = 8192


class TargetError(Exception):
    """The target could not be started or reached.  ``hint`` says how to fix it."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  how to fix: {self.hint}" if self.hint else self.message

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "hint": self.hint}


@dataclass(frozen=True)
class Target:
    """How to reach the server under test."""

    transport: Transport = Transport.STDIO
    command: tuple[str, ...] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = None  # added to (not replacing) our own environment
    cwd: str | None = None
    startup_timeout: float = 10.0
    default: bool = False  # the bundled reference server (no --command/--url given)
    port: int | None = None  # the port substituted for {port}, once resolved
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "transport", Transport(self.transport))
        if self.command is not None:
            object.__setattr__(self, "command", tuple(self.command))

    @property
    def needs_port(self) -> bool:
        parts = [*(self.command or ()), self.url or ""]
        return any(PORT_PLACEHOLDER in p for p in parts)

    @property
    def is_http(self) -> bool:
        return self.transport is not Transport.STDIO

    def resolve(self, port: int | None = None) -> "Target":
        """Substitute ``{port}`` (a free 127.0.0.1 port unless given) and export ``PORT``."""
        if not self.needs_port:
            return self
        port = port if port is not None else free_port()
        sub = str(port)
        command = tuple(p.replace(PORT_PLACEHOLDER, sub) for p in self.command) if self.command else None
        url = self.url.replace(PORT_PLACEHOLDER, sub) if self.url else None
        env = {**(self.env or {}), "PORT": sub}
        return replace(self, command=command, url=url, env=env, port=port)

    def process_env(self) -> dict[str, str]:
        """The environment to start the command with: ours plus :attr:`env`.

        Always a complete dict, never ``None`` ("inherit"): a child started with the inherited
        environment reads the C ``environ`` array after ``vfork``, while the pytest thread keeps
        setting ``PYTEST_CURRENT_TEST``; an array reallocated meanwhile makes ``execve`` fail
        with EFAULT ("Bad address") -- 1 spawn in 3 when provoked, now and then in real runs."""
        return {**_environ_snapshot(), **(self.env or {})}

    def describe(self) -> str:
        """One line for messages and the report: ``stdio: python -m server`` / ``streamable-http: http://...``."""
        parts = []
        if self.command:
            parts.append(shlex.join(self.command))
        if self.url:
            parts.append(self.url if not self.command else f"at {self.url}")
        what = " ".join(parts) or "<no target>"
        if self.default:
            what += " (bundled reference server)"
        return f"{self.transport.value}: {what}"

    def to_json(self) -> dict[str, Any]:
        return {
            "transport": self.transport.value,
            "command": list(self.command) if self.command else None,
            "url": self.url,
            "cwd": self.cwd,
            "env": dict(self.env) if self.env else {},
            "default": self.default,
            "description": self.describe(),
        }


def _environ_snapshot() -> dict[str, str]:
    """``dict(os.environ)``, retried if another thread changes it while we copy."""
    for _ in range(10):
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):  # a variable removed (or added) while we copied
            continue
    return dict(os.environ)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def check_command(target: Target) -> None:
    """Raise TargetError when the command's program cannot be found or run."""
    if not target.command:
        raise TargetError("no command to start", hint="pass --command (or --url for a running HTTP server)")
    program = target.command[0]
    env = target.process_env()
    if os.sep in program or (os.altsep and os.altsep in program):
        path = program if os.path.isabs(program) or not target.cwd else os.path.join(target.cwd, program)
        if not os.path.exists(path):
            raise TargetError(
                f"cannot start the server: {program!r} does not exist",
                hint=f"check the path in --command ({shlex.join(target.command)})",
            )
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise TargetError(
                f"cannot start the server: {program!r} is not an executable file",
                hint=f"make it executable (chmod +x) or run it through its interpreter, e.g. --command \"{sys.executable} {program}\"",
            )
        return
    if shutil.which(program, path=env.get("PATH")) is None:
        raise TargetError(
            f"cannot start the server: command not found: {program!r}",
            hint=(
                "check --command: the program must be installed and on PATH "
                "(quote the whole command as one argument, e.g. --command \"python server.py\")"
            ),
        )


# -------------------------------------------------------------------------------------------
# child process bookkeeping: a safety net so an interrupted run never leaves orphans

_CHILDREN: dict[int, bool] = {}  # pid -> is a process-group leader (started with a new session)


def register_child(pid: int, *, group: bool) -> None:
    _CHILDREN[pid] = group


def unregister_child(pid: int) -> None:
    _CHILDREN.pop(pid, None)


def kill_children() -> list[int]:
    """SIGKILL every child (group) still registered; returns the pids signalled."""
    killed = []
    for pid, group in list(_CHILDREN.items()):
        try:
            if group:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (ProcessLookupError, PermissionError, OSError):
            pass
        _CHILDREN.pop(pid, None)
    return killed


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass


class ServerProcess:
    """Start an HTTP server command and wait until its port accepts connections.

    ``async with ServerProcess(target) as proc:`` -- on exit (also on cancellation) the process
    group gets SIGTERM, then SIGKILL after ``kill_after`` seconds.  Enter and exit in one task.
    """

    def __init__(self, target: Target, *, kill_after: float = 2.0, poll_interval: float = 0.02) -> None:
        if not target.command:
            raise ValueError("ServerProcess needs a target with a command")
        self.target = target
        self.kill_after = kill_after
        self.poll_interval = poll_interval
        self.process: Process | None = None
        self._tail = bytearray()
        self._tg: Any = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    @property
    def output_tail(self) -> str:
        return bytes(self._tail).decode("utf-8", "replace")

    async def __aenter__(self) -> "ServerProcess":
        check_command(self.target)
        try:
            with anyio.CancelScope(shield=True):  # registered below before anything can cancel us
                self.process = await anyio.open_process(
                    list(self.target.command or ()),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    cwd=self.target.cwd,
                    env=self.target.process_env(),
                    start_new_session=True,
                )
        except OSError as exc:
            raise TargetError(
                f"cannot start the server {shlex.join(self.target.command or ())!r}: {exc.strerror or exc}",
                hint="check --command",
            ) from exc
        register_child(self.process.pid, group=True)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._drain)
        try:
            await self._wait_ready()
        except BaseException:
            await self._stop()
            tg, self._tg = self._tg, None
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)  # not the exception: anyio would wrap it in a group
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()
        if self._tg is not None:
            tg, self._tg = self._tg, None
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)

    async def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        try:
            async for chunk in self.process.stdout:
                self._tail += chunk
                if len(self._tail) > _TAIL_BYTES:
                    del self._tail[: len(self._tail) - _TAIL_BYTES]
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass

    def _endpoint(self) -> tuple[str, int]:
        url = self.target.url
        if not url:
            raise TargetError("an HTTP server command needs a URL to wait for", hint="pass --url (e.g. http://127.0.0.1:{port}/mcp)")
        parts = urlsplit(url)
        host = parts.hostname or "127.0.0.1"
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return host, port

    async def _wait_ready(self) -> None:
        host, port = self._endpoint()
        started = time.monotonic()
        deadline = started + self.target.startup_timeout
        cap = started + STARTUP_CAP_FACTOR * self.target.startup_timeout
        assert self.process is not None
        cmd = shlex.join(self.target.command or ())
        pid = self.process.pid
        busy_at, starting = started, False  # the last look at the process group's CPU use, and what it showed
        busy_cpu: float | None = 0.0
        while True:
            if self.process.returncode is not None:
                await anyio.sleep(0.05)  # let the drain task collect the last output
                raise TargetError(
                    f"the server command exited with code {self.process.returncode} before it accepted "
                    f"connections on {host}:{port}: {cmd}" + _tail_text(self.output_tail),
                    hint="run the command by hand to see why it stops; check its arguments and that the port is free",
                )
            try:
                with anyio.fail_after(max(0.05, min(1.0, deadline - time.monotonic()))):
                    stream = await anyio.connect_tcp(host, port)
                await stream.aclose()
                return
            except (OSError, TimeoutError):
                pass
            now = time.monotonic()
            if now >= busy_at + 1.0:
                used = group_cpu_seconds(pid)
                starting = busy(busy_cpu, used)
                busy_at, busy_cpu = now, used
            if now >= deadline and starting and now < cap:
                deadline = min(cap, busy_at + 1.05)  # still busy starting (a loaded machine): until the next look
            if now >= deadline:
                raise TargetError(
                    f"the server command did not accept connections on {host}:{port} within "
                    f"{self.target.startup_timeout:g} s: {cmd}" + _tail_text(self.output_tail),
                    hint=(
                        "make the server listen on the port in --url: use the {port} placeholder in "
                        "--command (or read $PORT), or raise --timeout if it starts slowly"
                    ),
                )
            await anyio.sleep(self.poll_interval)

    async def _stop(self) -> None:
        proc = self.process
        if proc is None:
            return
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                _signal_group(proc.pid, signal.SIGTERM)
                with anyio.move_on_after(self.kill_after):
                    await proc.wait()
            if proc.returncode is None:
                _signal_group(proc.pid, signal.SIGKILL)
                with anyio.move_on_after(5):
                    await proc.wait()
            else:
                _signal_group(proc.pid, signal.SIGKILL)  # stragglers left in its process group
            unregister_child(proc.pid)
            try:
                await proc.aclose()
            except Exception:
                pass


def _tail_text(tail: str, limit: int = 1200) -> str:
    tail = tail.strip()
    if not tail:
        return ""
    if len(tail) > limit:
        tail = "..." + tail[-limit:]
    return "\n  its output ended with:\n    " + tail.replace("\n", "\n    ")


# -------------------------------------------------------------------------------------------
# transports and peers


def build_transport(target: Target, version: str, *, timeout: float, headers: Mapping[str, str] | None = None) -> Any:
    """The transport that reaches ``target`` (not opened): stdio, streamable HTTP or legacy SSE."""
    from conformance.spec.versions import spec

    vspec = spec(version)
    auth = target.extra.get("auth")
    if auth is not None and target.url:  # the run's valid token on every connection (conformance.auth.context)
        headers = {**auth.headers(target.url), **(headers or {})}
    if target.transport is Transport.STDIO:
        from conformance.transports.stdio import StdioTransport

        check_command(target)
        return StdioTransport(list(target.command or ()), env=target.process_env(), cwd=target.cwd)
    if not target.url:
        raise TargetError(f"the {target.transport.value} transport needs a URL", hint="pass --url")
    if target.transport is Transport.STREAMABLE_HTTP:
        from conformance.transports.http import StreamableHttpTransport

        return StreamableHttpTransport(
            target.url,
            headers=headers,
            timeout=timeout,
            protocol_version=version if vspec.stateless else None,
            request_headers=vspec.request_headers,
        )
    from conformance.transports.sse import LegacySseTransport

    return LegacySseTransport(target.url, headers=headers, timeout=timeout)


def open_peer(
    target: Target,
    version: str,
    *,
    timeout: float = 10.0,
    headers: Mapping[str, str] | None = None,
    **peer_opts: Any,
) -> RawPeer:
    """An unentered RawPeer for ``version`` over the target's transport (``async with`` it).

    Raises TargetError at once for a command that cannot be found.  Errors raised while entering
    it are TransportErrors; map them with :func:`target_error`."""
    transport = build_transport(target, version, timeout=timeout, headers=headers)
    peer = RawPeer(transport, version=version, timeout=timeout, **peer_opts)
    if target.transport is Transport.STDIO:
        peer.first_timeout = target.startup_timeout  # a fresh process's first answer may be slow to come
        peer.startup_cpu = getattr(transport, "cpu_seconds", None)  # ... and slower while it is still busy starting
        peer.first_cap = STARTUP_CAP_FACTOR * target.startup_timeout
    return peer


def target_error(exc: BaseException, target: Target, *, doing: str = "connecting") -> TargetError:
    """A TargetError that names what went wrong with ``target`` and how to fix it."""
    if isinstance(exc, TargetError):
        return exc
    where = target.describe()
    url = target.url or ""
    if isinstance(exc, HttpStatusError):
        status = exc.status
        ctype = (exc.headers or {}).get("content-type", "")
        if status == 404:
            return TargetError(
                f"{url} answered 404 Not Found while {doing}: wrong path",
                hint="check the path in --url: MCP endpoints are usually /mcp (streamable HTTP) or /sse (legacy HTTP+SSE)",
            )
        if status == 405:
            other = "sse" if target.transport is Transport.STREAMABLE_HTTP else "streamable-http"
            return TargetError(
                f"{url} answered 405 Method Not Allowed while {doing}: it does not speak the "
                f"{target.transport.value} transport there",
                hint=f"check --url, or try --transport {other}",
            )
        if status in (401, 403):
            return TargetError(
                f"{url} answered {status} while {doing}: the server requires authorization or rejects our Origin",
                hint="test a server without authorization, or configure it to accept local clients",
            )
        return TargetError(
            f"{url} answered HTTP {status}{f' ({ctype})' if ctype else ''} while {doing}: not an MCP endpoint",
            hint="check --url and --transport",
        )
    if isinstance(exc, ConnectError):
        text = str(exc)
        return TargetError(
            text if (url and url in text) else f"cannot connect to {url or where}: {text}",
            hint=(
                "is the server running and listening there? start it first, or pass --command so "
                "the suite starts it (use {port} in --command and --url for a free port)"
            ),
        )
    if isinstance(exc, StartError):
        return TargetError(f"cannot start the server ({where}): {exc}", hint="check --command")
    if isinstance(exc, TransportTimeout):
        return TargetError(
            f"no answer from {where} within the deadline while {doing}: {exc}",
            hint="is it an MCP server on this transport? raise --timeout if it is slow to start",
        )
    if isinstance(exc, ProcessExited):
        return TargetError(
            f"the server process exited (code {exc.returncode}) while {doing}" + _tail_text(exc.stderr_tail or ""),
            hint="run the command by hand to see why it stops",
        )
    if isinstance(exc, TransportClosed):
        return TargetError(f"the connection to {where} closed while {doing}: {exc}", hint="check that the target is an MCP server")
    if isinstance(exc, TransportError):
        return TargetError(f"transport failure with {where} while {doing}: {exc}", hint="check --url/--command and --transport")
    if isinstance(exc, OSError):
        return TargetError(f"cannot reach {where}: {exc}", hint="check --url/--command")
    return TargetError(f"{doing} {where} failed: {exc!r}")


def parse_command(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """A command given as one string (split like a shell) or as an argv list."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        return tuple(shlex.split(value)) if value else None
    return tuple(value) or None
