"""Running client scenarios: the suite plays the server, the client under test is started per run.

The client-role half of the runtime, beside :mod:`conformance.context` (the server role).  What
both share -- results per requirement x version x transport, grading, checks with violations and
transcript excerpts, the run deadline, the host tasks that keep connections open -- is the
server runtime's :class:`~conformance.runner.Runner` and
:class:`~conformance.context.ScenarioContext`, which :class:`ClientRunner` and
:class:`ClientContext` extend; what differs is who starts whom:

* a client scenario *launches* the client command once per run (:meth:`ClientContext.launch`):
  a fresh process in its own process group, with ``{server}`` (stdio: a launcher that relays to
  the suite, :mod:`conformance.transports.relay`), ``{url}`` (streamable HTTP or legacy SSE: a
  path of its own on the suite's loopback HTTP server, :mod:`conformance.transports.http_server`)
  or ``{config}`` (an ``mcp.json`` naming either) substituted, or appended when absent;
* the connection the client opens is a :class:`~conformance.peer.RawPeer` with ``role="server"``
  (every inbound message parsed, validated against the version's client-to-server schema and
  recorded), on which the scenario answers as a server would, or does not;
* the client's process is always ended: it may exit by itself, is sent SIGTERM then SIGKILL
  (its whole process group) at the end of the run, and is registered for the session's last-resort
  kill, also on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import anyio

from conformance.connect import STARTUP_CAP_FACTOR, TargetError, register_child, unregister_child
from conformance.context import ScenarioContext
from conformance.runtime.records import Connection, ItemResult
from conformance.runner import Runner
from conformance.peer import RawPeer
from conformance.registry import Scenario
from conformance.spec.versions import Transport, spec
from conformance.transports.procstat import busy, group_cpu_seconds

__all__ = ["ClientTarget", "ClientRunner", "ClientContext", "ClientRun", "PLACEHOLDERS"]

PLACEHOLDERS = ("{server}", "{url}", "{config}")
CALL_TOOL = "add_numbers"  # the one tool a --call-command is asked to call (the official fixture's name)
CALL_ARGS = {"a": 2, "b": 3}
_TAIL = 4000
# longer than the SDKs' default request timeouts (the TypeScript SDK's is 60 s), so that a client
# that has one is seen giving up
DEFAULT_STALL_TIMEOUT = 75.0


@dataclass(frozen=True)
class ClientTarget:
    """How to start the client under test."""

    command: str  # run with sh -c, placeholders substituted
    transport: Transport = Transport.STDIO
    call_command: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    startup_timeout: float = 10.0  # how long a started client may take to connect
    run_timeout: float = 30.0  # how long one client run may take before it is stopped
    #: how long a request the suite never answers waits for the client to give up (the runs of
    #: the timeout scenarios last up to this long instead of ``run_timeout``)
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    default: bool = False
    role: str = "client"
    url: str | None = None  # (for the report's target block)

    @property
    def is_http(self) -> bool:
        return self.transport is not Transport.STDIO

    def resolve(self) -> "ClientTarget":
        return self

    def describe(self) -> str:
        return f"the client `{self.command}` ({self.transport.value})"

    def to_json(self) -> dict[str, Any]:
        return {"role": "client", "transport": self.transport.value, "command": [self.command],
                "call_command": self.call_command, "url": None, "cwd": self.cwd,
                "env": dict(self.env) if self.env else {}, "default": self.default, "description": self.describe()}


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


class ClientRunner(Runner):
    """One run against one client: a relay hub (stdio) or HTTP hub, client runs, results."""

    def __init__(self, target: ClientTarget, **kwargs: Any) -> None:
        kwargs.setdefault("prespawn", False)
        kwargs.setdefault("detach", False)
        if kwargs.get("jobs") is None:
            kwargs["jobs"] = default_client_jobs()
        super().__init__(target, **kwargs)  # type: ignore[arg-type]
        self.target: ClientTarget = target  # type: ignore[assignment]
        # one item is one client run: its start, its budget, and its end (a grace, then the kill)
        self.item_deadline = max(self.item_deadline,
                                 target.startup_timeout + max(target.run_timeout, target.stall_timeout) + 10.0)
        # every client run is a process of its own on an endpoint of its own: scheduled items
        # start ahead, ``jobs`` at a time, and their results are applied in run order
        self._ahead: dict[tuple[str, str], Any] = {}  # (scenario id, version) -> _Ahead
        self._order: list[tuple[Scenario, str]] = []
        self.client_runs: list[ClientRun] = []
        self._ending = False  # aclose has begun
        self.relay_hub: Any = None
        self.http_hub: Any = None
        self._tmp: Path | None = None
        # a client run that never connected within its start-up allowance (still running, never
        # exited), while no run of this client has ever connected: the command does not reach the
        # suite's server, and every later run would wait the same allowance for nothing
        self.ever_connected = False
        self.no_show: str | None = None

    async def start(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        from conformance.transports.http_server import HttpHub
        from conformance.transports.relay import RelayHub

        self._stop = anyio.Event()
        self._stopped = anyio.Event()
        self._server_lock = anyio.Lock()
        self._progress = anyio.Event()
        self._slots = anyio.Semaphore(max(1, self.jobs))
        # runs that wait out the client's own timeout use little but a process: they go beside
        # the others, three times as many at a time (with --jobs 1, one after the other like the rest)
        self._wait_slots = anyio.Semaphore(1 if self.jobs <= 1 else 3 * self.jobs)
        self._tmp = Path(tempfile.mkdtemp(prefix="mcpcfg-"))
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                if self.target.transport is Transport.STDIO:
                    self.relay_hub = await tg.start(RelayHub().serve)
                else:
                    self.http_hub = await tg.start(HttpHub().serve)
                self.started = True
                task_status.started(self)
                await self._stop.wait()
                if self.http_hub is not None:
                    self.http_hub.stop()
                    with anyio.move_on_after(3):
                        await self.http_hub.stopped.wait()
                tg.cancel_scope.cancel()
        finally:
            self._stopped.set()
            import shutil

            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)

    async def aclose(self) -> None:
        if self._stop is None:
            return
        self._ending = True
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(10):
                async with anyio.create_task_group() as tg:
                    for run in list(self.client_runs):
                        tg.start_soon(self.end_client, run, 0.0)
            with anyio.move_on_after(10):
                async with anyio.create_task_group() as tg:
                    for conn in list(self.connections):
                        tg.start_soon(self._close_conn, conn)
            self._stop.set()
            with anyio.move_on_after(5):
                await self._stopped.wait()

    # -- one client run ---------------------------------------------------------------------

    def _command_for(self, run: ClientRun, *, url: str | None, launcher: str | None, scenario: str,
                     call: bool = False) -> tuple[str, dict[str, str]]:
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
                     answer_mode: str = "json", get_stream: bool = True, call: bool = False, attach: bool = True) -> ClientRun:
        """Start the client for one run and return at once (the connection comes later).
        ``attach=False``: no raw peer is put on the connection (the fuzzer reads the transport itself)."""
        if self._ending:  # aclose has begun: a client started now would outlive its end
            raise TargetError("the run is ending: no new client is started")
        self._counter += 1
        run = ClientRun(label=f"{version}/{scenario}#{self._counter}", version=version,
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
            run.endpoint = self.http_hub.new_run(kind=kind, sessions=has_sessions and kind != "sse",
                                                 get_stream=get_stream and not vspec.stateless,
                                                 answer_mode=answer_mode)
            run.endpoint.modern = vspec.stateless
            url = run.endpoint.url
        cmd, env = self._command_for(run, url=url, launcher=launcher, scenario=scenario, call=call)
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
        self._tg.start_soon(self._watch_process, run)
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
        timeout = self.timeout

        def factory() -> RawPeer:
            return RawPeer(transport, version=run.version, timeout=timeout, role="server")

        host = await self._host(factory)
        conn = Connection(label=run.label, peer=host.obj, version=run.version, shared=False,
                          _close=host.close, _done=host.done)
        run.conn = conn
        self.connections.append(conn)
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
            got = await run.endpoint.wait_request(lambda r: True, timeout) if not run._exit_event.is_set() else None
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

    # -- items ------------------------------------------------------------------------------

    def schedule(self, items: Iterable[tuple[Scenario, str]]) -> None:
        """The items the run will execute, in run order: with ``jobs`` > 1 they start ahead of
        time (each client run is independent of every other), and :meth:`run_item` waits for each."""
        self._order = []
        seen = set()
        for sc, version in items:
            if (sc.id, version) not in seen:
                seen.add((sc.id, version))
                self._order.append((sc, version))

    def _start_ahead(self) -> None:
        if self._ahead or self.jobs <= 1 or not self._order:
            return
        # the waiting runs start first: they take the longest and use the least
        for sc, version in sorted(self._order, key=lambda item: not item[0].waits):
            ahead = _Ahead()
            self._ahead[(sc.id, version)] = ahead
            self._tg.start_soon(self._run_ahead, sc, version, ahead)

    async def _run_ahead(self, sc: Scenario, version: str, ahead: "_Ahead") -> None:
        try:
            ahead.item = await self._execute(sc, version, ahead.ops)
        except BaseException as exc:  # cancelled with the run, or our own bug: run_item re-raises it
            ahead.raised = exc
            if not isinstance(exc, Exception):
                raise
        finally:
            ahead.done.set()

    async def run_item(self, sc: Scenario, version: str) -> ItemResult:
        self._start_ahead()
        ahead = self._ahead.get((sc.id, version))
        if ahead is not None:
            await ahead.done.wait()
            for op in ahead.ops:
                op()
            if ahead.raised is not None:
                raise ahead.raised
            assert ahead.item is not None
            return ahead.item
        ops: list[Callable[[], None]] = []
        try:
            return await self._execute(sc, version, ops)
        finally:
            for op in ops:
                op()

    # -- the client's part of an item (Runner._execute does the rest) ------------------------------

    peer_errors_are_verdicts = False  # client scenarios catch their own waits: one that escapes is ours

    def _new_context(self, sc: Scenario, version: str, active: list[str]) -> "ClientContext":
        return ClientContext(self, sc, version, active)

    async def _run_scenario(self, sc: Scenario, version: str, ctx: Any) -> None:
        """Each scenario is client runs of its own: nothing to settle first; it waits for a slot
        (the runs that wait out the client's own timeout have slots of their own)."""
        async with (self._wait_slots if sc.waits and self.jobs > 1 else self._slots):
            await sc.func(ctx)

    async def _release(self, ctx: Any) -> None:
        """Every client the scenario started is ended (its process group), its connection closed."""
        for run in ctx.runs:
            await self.end_client(run, 0.0)
        for run in ctx.runs:
            if run.conn is not None:
                await self._close_conn(run.conn)

    def _unchecked(self, ctx: Any, rid: str) -> str:
        return ctx._notes.get(rid) or "not exercised: the client never did what this requirement is about"

    def default_run_timeout(self, timeout: float, versions: int, items: int) -> float:
        """Also bounded by the client runs themselves: every run may use its whole budget (a
        client without timeouts waits out the stalled request), ``jobs`` at a time."""
        runs = -(-items // max(1, self.jobs))
        return max(super().default_run_timeout(timeout, versions, items), 60.0 + runs * self.item_deadline)

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
                    ci = meta.get("io.modelcontextprotocol/clientInfo")
                    caps = meta.get("io.modelcontextprotocol/clientCapabilities")
                    asked = meta.get("io.modelcontextprotocol/protocolVersion")
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


class _Ahead:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.ops: list[Callable[[], None]] = []
        self.item: ItemResult | None = None
        self.raised: BaseException | None = None


def default_client_jobs() -> int:
    """Client runs at once by default: each is one client process on an endpoint of its own, and
    mostly waits (for the client to start, for its answers); four, three on a single core."""
    return 4 if (os.cpu_count() or 1) > 1 else 3


def _stdin() -> int:
    return os.open(os.devnull, os.O_RDONLY)


class ClientContext(ScenarioContext):
    """What a client scenario sees: ``launch()`` the client, play the server on its connection,
    ``check()`` what it did."""

    def __init__(self, runner: ClientRunner, scenario: Scenario, version: str, requirements: Iterable[str]) -> None:
        super().__init__(runner, scenario, version, requirements)  # type: ignore[arg-type]
        self.runner = runner
        self.runs: list[ClientRun] = []

    async def launch(self, **opts: Any) -> ClientRun:
        runner = self.runner
        if runner.no_show is not None and not runner.ever_connected:
            # as a server that never answers makes the rest of its version skip at once: the
            # misconfigured command is one verdict's wait, not one per item
            raise TargetError(
                f"not started: {runner.no_show}, and no run of it ever has",
                hint="pass {server} (stdio) or {url} (HTTP) where the client expects the server, or raise --timeout",
            )
        run = await runner.launch(self.version, self.scenario.id.split(".")[-1], **opts)
        self.runs.append(run)
        return run

    async def connected(self, run: ClientRun, timeout: float | None = None) -> RawPeer | None:
        peer = await self.runner.connected(run, timeout)
        if peer is not None:
            self._last = run.conn
        return peer

    async def wait_exit(self, run: ClientRun, timeout: float) -> bool:
        return await self.runner.wait_exit(run, timeout)

    def use(self, run: ClientRun) -> None:
        """Make ``run``'s connection the default for transcript excerpts of later checks."""
        if run.conn is not None:
            self._last = run.conn
