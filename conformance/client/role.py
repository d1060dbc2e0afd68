"""The client role: the suite plays the server, the client under test is started per run.

:class:`ClientRole` is what a :class:`~conformance.runtime.run.Run` plays against a client; what
both roles share -- results per requirement x version x transport, grading, the run deadline, the
host tasks that keep connections open, the scheduler -- is the role-free runtime
(:mod:`conformance.runtime`).  What the client role adds is who starts whom:

* a client scenario *launches* the client command once per run (:meth:`ClientRole.launch`,
  through :meth:`ClientContext.launch <conformance.client.context.ClientContext.launch>`): a fresh
  process in its own process group, with ``{server}`` (stdio: a launcher that relays to the
  suite, :mod:`conformance.transports.relay`), ``{url}`` (streamable HTTP or legacy SSE: a path
  of its own on the suite's loopback HTTP server, :mod:`conformance.transports.http_server`) or
  ``{config}`` (an ``mcp.json`` naming either) substituted, or appended when absent;
* the connection the client opens is a :class:`~conformance.runtime.peer.RawPeer` with ``role="server"``
  (every inbound message parsed, validated against the version's client-to-server schema and
  recorded), on which the scenario answers as a server would, or does not;
* the client's process is always ended: it may exit by itself, is sent SIGTERM then SIGKILL
  (its whole process group) at the end of the run, and is registered for the session's last-resort
  kill, also on Ctrl-C.

Every client run is independent of every other, so its items are scheduled *all at once*: with
``jobs`` > 1 each starts at the first item and takes one of ``jobs`` slots inside its deadline
(the runs that wait out the client's own timeout, slots of their own).  :func:`client_run` makes
the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncContextManager

import anyio

from conformance.client.context import ClientContext
from conformance.client.target import CALL_ARGS, CALL_TOOL, PLACEHOLDERS, ClientTarget
from conformance.runtime.connect import STARTUP_CAP_FACTOR, TargetError, register_child, unregister_child
from conformance.runtime.peer import PeerError, RawPeer
from conformance.runtime.registry import Scenario
from conformance.runtime.records import Connection
from conformance.runtime.run import Run
from conformance.runtime.schedule import Policy
from conformance.spec.versions import Transport, spec
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from conformance.transports.procstat import busy, group_cpu_seconds

__all__ = ["ClientRole", "ClientRun", "client_run", "default_client_jobs"]

_TAIL = 4000


def client_run(target: ClientTarget, **run_options: Any) -> "Run[ClientRole]":
    """A run against the client ``target`` (``run_options``: those of :class:`Run`)."""
    return Run(ClientRole(target), **run_options)


@dataclass
class ClientRun:
    """One start of the client: its process, its endpoint, the connection it opened."""

    label: str
    version: str
    transport: Transport
    command: str
    started: float = field(default_factory=time.monotonic)
    relay: Any = None  # RelayRun (stdio)
    endpoint: Any = None  # HttpEndpoint (HTTP)
    proc: Any = None
    pid: int | None = None
    exit_code: int | None = None
    exited: float | None = None
    killed_by_us: str | None = None  # "SIGTERM" | "SIGKILL" when we had to end it
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    conn: Connection | None = None
    spawn_error: str | None = None
    _exit_event: Any = None

    @property
    def peer(self) -> RawPeer | None:
        return self.conn.peer if self.conn is not None else None

    @property
    def relay_transport(self) -> Any:
        peer = self.peer
        return peer.transport if peer is not None and self.transport is Transport.STDIO else None

    def tail(self, which: str = "stderr") -> str:
        data = self.stderr if which == "stderr" else self.stdout
        return bytes(data[-_TAIL:]).decode("utf-8", "replace")

    def exercised(self) -> list[str]:
        """What the client did in this run: the methods it sent, in order of first use."""
        seen: dict[str, None] = {}
        peer = self.peer
        for item in peer.inbound if peer is not None else ():
            env = item.envelope
            for e in (env.items if env is not None and env.items else [env]):
                if e is not None and e.method:
                    seen.setdefault(e.method, None)
                elif e is not None and e.kind.value in ("result", "error"):
                    seen.setdefault("(responses)", None)
        if self.endpoint is not None:
            for r in self.endpoint.requests:
                if r.method in ("GET", "DELETE"):
                    seen.setdefault(f"HTTP {r.method}", None)
        return list(seen)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "version": self.version, "exit_code": self.exit_code, "exercised": self.exercised(),
                "killed_by_us": self.killed_by_us,
                "connected": bool(self.endpoint.requests) if self.endpoint is not None else self.conn is not None,
                "duration": round((self.exited or time.monotonic()) - self.started, 3),
                "stderr_tail": self.tail()[-600:] or None}


class ClientRole:
    """The client role of one run: a relay hub (stdio) or HTTP hub, client runs."""

    peer_errors_are_verdicts = False  # client scenarios catch their own waits: one that escapes is ours

    def __init__(self, target: ClientTarget) -> None:
        self.target = target
        self._run: Run[ClientRole] | None = None  # set by bind()
        self.client_runs: list[ClientRun] = []
        self._ending = False  # close has begun
        self.relay_hub: Any = None
        self.http_hub: Any = None
        self._tmp: Path | None = None
        # a client run that never connected within its start-up allowance (still running, never
        # exited), while no run of this client has ever connected: the command does not reach the
        # suite's server, and every later run would wait the same allowance for nothing
        self.ever_connected = False
        self.no_show: str | None = None

    # -- the role (see conformance.runtime.run.Role) -------------------------------------------

    @property
    def run(self) -> "Run[ClientRole]":
        if self._run is None:
            raise RuntimeError("the role is not played in a run yet (Run(role) binds it)")
        return self._run

    def default_jobs(self) -> int:
        return default_client_jobs()

    def item_deadline(self, default: float) -> float:
        """One item is one client run: its start, its budget, and its end (a grace, then the kill)."""
        target = self.target
        return max(default, target.startup_timeout + max(target.run_timeout, target.stall_timeout) + 10.0)

    def bind(self, run: "Run[Any]") -> Policy:
        """Every client run is a process of its own on an endpoint of its own: with ``jobs`` > 1
        every item starts ahead, ``jobs`` at a time, and their results are applied in run order.
        Runs that wait out the client's own timeout use little but a process: they go beside the
        others, three times as many at a time (with --jobs 1, one after the other like the rest)."""
        self._run = run
        jobs = run.jobs
        return Policy(ahead=lambda sc, version: jobs > 1, slots=max(1, jobs), paced=False,
                      wait_slots=1 if jobs <= 1 else 3 * jobs)

    async def open(self, tg: Any) -> None:
        from conformance.transports.http_server import HttpHub
        from conformance.transports.relay import RelayHub

        self._tmp = Path(tempfile.mkdtemp(prefix="mcpcfg-"))
        if self.target.transport is Transport.STDIO:
            self.relay_hub = await tg.start(RelayHub().serve)
        else:
            self.http_hub = await tg.start(HttpHub().serve)

    async def stopping(self) -> None:
        if self.http_hub is not None:
            self.http_hub.stop()
            with anyio.move_on_after(3):
                await self.http_hub.stopped.wait()

    def cleanup(self) -> None:
        import shutil

        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    async def close(self) -> None:
        """End every client run (its process group), then close every connection (bounded)."""
        self._ending = True
        run = self.run
        with anyio.move_on_after(10):
            async with anyio.create_task_group() as tg:
                for client in list(self.client_runs):
                    tg.start_soon(self.end_client, client, 0.0)
        with anyio.move_on_after(10):
            async with anyio.create_task_group() as tg:
                for conn in list(run.connections):
                    tg.start_soon(run.close_conn, conn)

    def count(self, sc: Scenario, version: str) -> None:
        pass  # every item starts what it needs itself

    def recount(self, schedule: dict[str, list[Scenario]]) -> None:
        pass

    def warm(self, version: str) -> None:
        pass  # a client run starts with its item: nothing to open ahead

    async def retire(self, version: str) -> None:
        pass

    def new_context(self, sc: Scenario, version: str, active: list[str]) -> ClientContext:
        return ClientContext(self.run, self, sc, version, active)

    async def run_scenario(self, sc: Scenario, version: str, ctx: Any) -> None:
        """Each scenario is client runs of its own: nothing to settle first (its slot is the
        scheduler's)."""
        await sc.func(ctx)

    async def release(self, ctx: Any) -> None:
        """Every client the scenario started is ended (its process group), its connection closed."""
        for client in ctx.runs:
            await self.end_client(client, 0.0)
        for client in ctx.runs:
            if client.conn is not None:
                await self.run.close_conn(client.conn)

    async def silent_target(self, ctx: Any, version: str, exc: PeerError) -> tuple[str, str, str | None] | None:
        return None  # (never asked: a PeerError out of a client scenario is not a verdict)

    def unchecked(self, ctx: Any, rid: str) -> str:
        return ctx._notes.get(rid) or "not exercised: the client never did what this requirement is about"

    def sharing(self) -> AsyncContextManager[Any]:
        return contextlib.nullcontext()

    # -- one client run ---------------------------------------------------------------------

    def _command_for(self, run: ClientRun, *, url: str | None, launcher: str | None, scenario: str,
                     call: bool = False, env_extra: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
        cmd = self.target.command
        if call and self.target.call_command:
            cmd = (self.target.call_command.replace("{tool}", CALL_TOOL)
                   .replace("{tool_args_json}", shlex.quote(json.dumps(CALL_ARGS)))
                   .replace("{tool_args_kv}", " ".join(f"{k}={v}" for k, v in CALL_ARGS.items())))
        env = dict(os.environ)
        if self.target.env:
            env.update(self.target.env)
        address = launcher if launcher is not None else (url or "")
        config = self._write_config(run, launcher=launcher, url=url)
        used = any(p in cmd for p in PLACEHOLDERS)
        cmd = (cmd.replace("{server}", launcher or address).replace("{url}", url or address)
               .replace("{config}", str(config)).replace("{version}", run.version))
        if not used:  # as the official runner does: the address last, the scenario in the environment
            cmd = f"{cmd} {shlex.quote(address)}"
            env["MCP_CONFORMANCE_SCENARIO"] = scenario
            env["MCP_CONFORMANCE_PROTOCOL_VERSION"] = run.version
            env.setdefault("MCP_CONFORMANCE_CONTEXT", json.dumps({"name": scenario}))
        env.update(env_extra or {})
        return cmd, env

    def _write_config(self, run: ClientRun, *, launcher: str | None, url: str | None) -> Path:
        assert self._tmp is not None
        path = self._tmp / f"{run.label.replace('/', '-').replace('#', '-')}.json"
        server: dict[str, Any] = {"command": launcher, "args": []} if launcher else {"url": url}
        if url and self.target.transport is Transport.SSE:
            server["transport"] = "sse"
        path.write_text(json.dumps({"mcpServers": {"conformance": server}}, indent=2))
        return path

    async def launch(self, version: str, scenario: str, *, stubborn: bool = False, sessions: bool | None = None,
                     answer_mode: str = "json", get_stream: bool = True, call: bool = False, attach: bool = True,
                     hub: Any = None, env: dict[str, str] | None = None) -> ClientRun:
        """Start the client for one run and return at once (the connection comes later).
        ``attach=False``: no raw peer is put on the connection (the fuzzer reads the transport itself).
        ``hub``: an HTTP hub of the scenario's own (an origin to itself); ``env``: added to the
        client's environment."""
        if self._ending:  # the run is closing: a client started now would outlive its end
            raise TargetError("the run is ending: no new client is started")
        run = ClientRun(label=f"{version}/{scenario}#{self.run.number()}", version=version,
                        transport=self.target.transport, command=self.target.command)
        launcher = url = None
        if self.target.transport is Transport.STDIO:
            run.relay = self.relay_hub.new_run()
            run.relay.stubborn = stubborn
            launcher = str(run.relay.launcher)
        else:
            vspec = spec(version)
            kind = "sse" if self.target.transport is Transport.SSE else "streamable-http"
            has_sessions = (not vspec.stateless) if sessions is None else sessions
            run.endpoint = (hub or self.http_hub).new_run(kind=kind, sessions=has_sessions and kind != "sse",
                                                 get_stream=get_stream and not vspec.stateless,
                                                 answer_mode=answer_mode)
            run.endpoint.modern = vspec.stateless
            url = run.endpoint.url
        cmd, env = self._command_for(run, url=url, launcher=launcher, scenario=scenario, call=call, env_extra=env)
        run.command = cmd
        self.client_runs.append(run)
        run._exit_event = anyio.Event()
        try:
            with anyio.CancelScope(shield=True):  # registered below before anything can cancel us
                proc = await anyio.open_process(["/bin/sh", "-c", cmd], stdin=_stdin(), stdout=-1, stderr=-1,
                                                cwd=self.target.cwd, env=env, start_new_session=True)
        except OSError as exc:
            run.spawn_error = f"cannot start the client: {exc}"
            run._exit_event.set()
            raise TargetError(run.spawn_error, hint="check --command") from exc
        run.proc = proc
        run.pid = proc.pid
        register_child(proc.pid, group=True)
        self.run.tg.start_soon(self._watch_process, run)
        if run.endpoint is not None and attach:
            await self._attach(run, run.endpoint)
        return run

    async def _watch_process(self, run: ClientRun) -> None:
        proc = run.proc

        async def pump(stream: Any, buf: bytearray) -> None:
            if stream is None:
                return
            try:
                async for chunk in stream:
                    buf += chunk
                    if len(buf) > 4 * _TAIL:
                        del buf[: len(buf) - 2 * _TAIL]
            except Exception:
                pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump, proc.stdout, run.stdout)
            tg.start_soon(pump, proc.stderr, run.stderr)
            run.exit_code = await proc.wait()
            run.exited = time.monotonic()
            run._exit_event.set()
            tg.cancel_scope.deadline = anyio.current_time() + 0.5  # the pipes' last bytes, not forever
        unregister_child(proc.pid)
        with anyio.CancelScope(shield=True):
            await proc.aclose() if hasattr(proc, "aclose") else None

    async def _attach(self, run: ClientRun, transport: Any) -> Connection:
        timeout = self.run.timeout

        def factory() -> RawPeer:
            return RawPeer(transport, version=run.version, timeout=timeout, role="server")

        host = await self.run.host(factory)
        conn = Connection(label=run.label, peer=host.obj, version=run.version, shared=False,
                          _close=host.close, _done=host.done)
        run.conn = conn
        self.run.connections.append(conn)
        return conn

    async def connected(self, run: ClientRun, timeout: float | None = None, *, attach: bool = True) -> Any:
        """The connection the client opened (stdio: it started our launcher; HTTP: it sent a
        request), or None if it exited or did not within ``timeout`` (default: start-up allowance).
        A :class:`RawPeer`; with ``attach=False`` the bare transport (a ``RelayTransport`` or the
        ``HttpEndpoint``: the fuzzer reads it itself)."""
        timeout = self.target.startup_timeout if timeout is None else timeout
        got = await self._connected_within(run, timeout, attach)
        # a client still busy starting (its process group used CPU in the last second: an
        # interpreter's imports on a loaded machine) is given a second more at a time, up to
        # STARTUP_CAP_FACTOR times the allowance; an idle one that has not connected ends here
        until = time.monotonic() + (STARTUP_CAP_FACTOR - 1) * timeout
        while got is None and run.pid is not None and not run._exit_event.is_set() and time.monotonic() < until:
            before = group_cpu_seconds(run.pid)
            got = await self._connected_within(run, 1.0, attach)
            after = group_cpu_seconds(run.pid)
            if got is None and not busy(before, after):
                break
        if got is not None:
            self.ever_connected = True
        elif not self.ever_connected and self.no_show is None and not run._exit_event.is_set():
            self.no_show = f"run {run.label} of the client did not connect to the suite's server within {timeout:g} s"
        return got

    async def _connected_within(self, run: ClientRun, timeout: float, attach: bool) -> Any:
        if run.endpoint is not None:
            got = None
            if not run._exit_event.is_set():
                # the first request, or the client's exit (a client that exits at once is not
                # waited for until the end of its start-up allowance)
                async with anyio.create_task_group() as tg:
                    async def request() -> None:
                        nonlocal got
                        got = await run.endpoint.wait_request(lambda r: True, timeout)
                        tg.cancel_scope.cancel()

                    async def exited() -> None:
                        await run._exit_event.wait()
                        # a request sent just before the exit may still be on its way to us: it
                        # ends this wait as soon as it is read; a client that sent none costs 1 s
                        await anyio.sleep(1.0)
                        tg.cancel_scope.cancel()

                    tg.start_soon(request)
                    tg.start_soon(exited)
            if got is None and run.endpoint.requests:
                got = run.endpoint.requests[0]
            if got is None:
                return None
            return run.peer if attach else run.endpoint
        if run.conn is not None:
            return run.peer
        transport = None
        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as tg:
                async def accept() -> None:
                    nonlocal transport
                    transport = await run.relay.accept(timeout)
                    tg.cancel_scope.cancel()

                async def exited() -> None:
                    await run._exit_event.wait()
                    await anyio.sleep(0)
                    tg.cancel_scope.cancel()

                tg.start_soon(accept)
                tg.start_soon(exited)
        if transport is None:
            transport = await run.relay.accept(0.05)  # it connected just before exiting
        if transport is None:
            return None
        if not attach:
            return transport
        await self._attach(run, transport)
        return run.peer

    async def wait_exit(self, run: ClientRun, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await run._exit_event.wait()
        return run._exit_event.is_set()

    async def end_client(self, run: ClientRun, grace: float = 2.0) -> None:
        """End the client: wait ``grace`` s for it to exit, then SIGTERM, then SIGKILL its group."""
        if run.proc is not None and not run._exit_event.is_set():
            if not await self.wait_exit(run, grace):
                for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                    run.killed_by_us = sig.name
                    try:
                        os.killpg(run.pid, sig)
                    except (ProcessLookupError, PermissionError, OSError):
                        pass
                    if await self.wait_exit(run, wait):
                        break
        if run.pid is not None:
            try:  # anything the client left in its group (a server it started and abandoned)
                os.killpg(run.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
        if run.relay is not None:
            await run.relay.aclose()
        if run.endpoint is not None:
            await run.endpoint.aclose()

    def default_run_timeout(self, derived: float, items: int) -> float:
        """Also bounded by the client runs themselves: every run may use its whole budget (a
        client without timeouts waits out the stalled request), ``jobs`` at a time."""
        run = self.run
        runs = -(-items // max(1, run.jobs))
        return max(derived, 60.0 + runs * run.item_deadline)

    def target_error(self) -> TargetError | None:
        return None  # a client that cannot be started is an error of each item that starts it

    def implementation(self) -> dict[str, Any]:
        info = None
        by_version: dict[str, Any] = {}
        for run in self.client_runs:
            peer = run.peer
            if peer is None:
                continue
            for item in peer.inbound:
                env = item.envelope
                if env is None or env.kind.value != "request" or not isinstance(env.params, dict):
                    continue
                if env.method == "initialize":
                    ci = env.params.get("clientInfo")
                    caps = env.params.get("capabilities")
                    asked = env.params.get("protocolVersion")
                elif spec(run.version).stateless:  # (on legacy runs a discover probe says nothing of the version)
                    meta = env.params.get("_meta") if isinstance(env.params.get("_meta"), dict) else {}
                    ci = meta.get(CLIENT_INFO_KEY)
                    caps = meta.get(CLIENT_CAPABILITIES_KEY)
                    asked = meta.get(PROTOCOL_VERSION_KEY)
                else:
                    continue
                if isinstance(ci, dict) and info is None:
                    info = ci
                by_version.setdefault(run.version, {
                    "requested_version": run.version,
                    "protocol_version": asked if isinstance(asked, str) else None,
                    "server_info": {}, "capabilities": caps if isinstance(caps, dict) else {}})
                break
        return {"client_info": info, "server_info": None, "by_version": by_version, "answered": self.answered(),
                "runs": [r.to_json() for r in self.client_runs]}

    def answered(self) -> bool:
        return any(run.peer is not None and any(i.envelope is not None for i in run.peer.inbound)
                   for run in self.client_runs)


def default_client_jobs() -> int:
    """Client runs at once by default: each is one client process on an endpoint of its own, and
    mostly waits (for the client to start, for its answers); four, three on a single core."""
    return 4 if (os.cpu_count() or 1) > 1 else 3


def _stdin() -> int:
    return os.open(os.devnull, os.O_RDONLY)
