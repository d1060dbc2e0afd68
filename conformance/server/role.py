"""The server role: we are the client of the server under test.

:class:`ServerRole` is what a :class:`~conformance.runtime.run.Run` plays against a server: a pool
of connections -- the shared session per version (one initialized connection reused by every
scenario that does not disturb state), fresh connections for scenarios that do (on stdio, spare
processes started ahead), the version's disposable connection handed from item to item, the
connection of an ``ONCE`` probe run once for every version -- the HTTP server process we started, the
handshake (:mod:`conformance.server.handshake`) and the server-wide lock
(:mod:`conformance.server.server_wide`).  Its items are scheduled *paced*: items on connections of
their own start ahead, a few at once, per version in run order and phase; the others run in
per-version lanes (``--jobs``).  What a scenario sees of it is
:class:`~conformance.server.context.ScenarioContext`.  :func:`server_run` makes the run.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncContextManager

import anyio

from conformance.runtime.connect import (
    ServerProcess,
    Target,
    TargetError,
    check_command,
    open_peer,
    register_child,
    target_error,
)
from conformance.runtime.peer import ConnectionLost, ExpectTimeout, PeerError, RawPeer
from conformance.runtime.registry import ConnectionKind, Scenario
from conformance.runtime.records import Connection, NeedSession, Once, ScenarioError, SessionInfo, VersionUnusable
from conformance.runtime.run import Hosted, Run
from conformance.runtime.schedule import Policy
from conformance.server.context import ScenarioContext
from conformance.server.handshake import Handshake
from conformance.server.server_wide import ServerWide
from conformance.spec.versions import Transport
from conformance.wire.transcript import Direction
from conformance.transports.base import PeerSilent, TransportError
from conformance.wire.envelope import Kind
from conformance.wire.rules import barrier_method

__all__ = ["ServerRole", "server_run", "default_jobs", "default_lanes"]


def server_run(target: Target, *, prespawn: bool = True, detach: bool = True, **run_options: Any) -> "Run[ServerRole]":
    """A run against the server ``target`` (``run_options``: those of :class:`Run`).
    ``prespawn``: on stdio, start the processes of fresh connections ahead; ``detach``: with
    ``jobs`` > 1, items on connections of their own start ahead and versions run side by side."""
    return Run(ServerRole(target, prespawn=prespawn, detach=detach), **run_options)


class ServerRole:
    """The server role of one run: its pool of connections, its handshakes, its lock."""

    peer_errors_are_verdicts = True  # an answer that never came, a connection lost: the server's doing

    def __init__(self, target: Target, *, prespawn: bool = True, detach: bool = True) -> None:
        self.target = target
        self._run: Run[ServerRole] | None = None  # set by bind()
        self.sessions: dict[str, SessionInfo] = {}
        self.prespawn = prespawn and target.transport is Transport.STDIO
        self.detach = detach
        self._shared: dict[str, Connection] = {}
        self._shared_lock: dict[str, Any] = {}
        self._shared_error: dict[str, ScenarioError] = {}
        self._unusable: dict[str, VersionUnusable] = {}  # version -> why nothing more is tried
        self._settled: dict[str, Any] = {}  # version -> anyio.Event: its shared handshake is done
        self._target_error: TargetError | None = None
        self._server_host: Hosted | None = None  # the HTTP server process we started, if any
        self._server_lock: Any = None
        self._pool: dict[str, list[_Spare]] = {}  # version -> stdio connections started ahead
        self._fresh_needed: dict[str, int] = {}  # version -> fresh connections the plan still needs
        self._shared_needed: set[str] = set()
        self._disposables: dict[str, Connection] = {}  # version -> the disposable connection between its items
        self._disposable_planned: set[str] = set()
        self._once: dict[str, Once] = {}  # ScenarioContext.once: key -> the probe every version's item judges
        self._once_home: dict[str, str] = {}  # an ``ONCE`` scenario -> the version its probe's connection is planned on
        self._warmed: set[str] = set()
        self._server_wide: ServerWide | None = None  # over HTTP (one server, many sessions): what runs alone
        self._handshake: Handshake | None = None  # set by bind()

    # -- the role (see conformance.runtime.run.Role) -------------------------------------------

    @property
    def run(self) -> "Run[ServerRole]":
        if self._run is None:
            raise RuntimeError("the role is not played in a run yet (Run(role) binds it)")
        return self._run

    @property
    def handshake(self) -> Handshake:
        if self._handshake is None:
            raise RuntimeError("the role is not played in a run yet (Run(role) binds it)")
        return self._handshake

    def default_jobs(self) -> int:
        return default_jobs(self.target.transport)

    def item_deadline(self, default: float) -> float:
        return default

    def bind(self, run: "Run[Any]") -> Policy:
        """Items on connections of their own start ahead (``detach``, ``jobs`` > 1), ``jobs`` - 1 at
        once beside the one in order, versions side by side in lanes."""
        self._run = run
        self._handshake = Handshake(self.target, run.timeout, self._mark_unusable)
        self.detach = self.detach and run.jobs > 1
        return Policy(ahead=self._detachable, slots=run.jobs - 1, paced=True,
                      lanes=default_lanes(run.jobs) if self.detach else 1, settle=self._settle_planned)

    async def open(self, tg: Any) -> None:
        self._server_lock = anyio.Lock()
        if self.detach and self.target.transport is not Transport.STDIO:
            self._server_wide = ServerWide()  # every session is on the one server

    async def stopping(self) -> None:
        pass

    def cleanup(self) -> None:
        pass

    async def close(self) -> None:
        """Close every connection and spare (in parallel, bounded), stop the server process."""
        run = self.run
        with anyio.move_on_after(15):
            async with anyio.create_task_group() as tg:
                for conn in list(run.connections):
                    tg.start_soon(run.close_conn, conn)
                for pool in list(self._pool.values()):
                    for spare in pool:
                        tg.start_soon(spare.discard)
        if self._server_host is not None:
            self._server_host.close.set()
            with anyio.move_on_after(10):
                await self._server_host.done.wait()

    def count(self, sc: Scenario, version: str) -> None:
        self._count_needs(sc, version)

    def recount(self, schedule: dict[str, list[Scenario]]) -> None:
        """What the scheduled items connect to, counted again without the deselected ones: no
        spare process, no shared session for a version whose items were left out, and an ``ONCE``
        probe on the first version whose item runs."""
        self._fresh_needed, self._shared_needed = {}, set()
        self._disposable_planned, self._once_home = set(), {}
        for version in self.run.versions:
            for sc in schedule.get(version, ()):
                self._count_needs(sc, version)

    def new_context(self, sc: Scenario, version: str, active: list[str]) -> ScenarioContext:
        return ScenarioContext(self.run, self, sc, version, active)

    async def run_scenario(self, sc: Scenario, version: str, ctx: "ScenarioContext") -> None:
        """The shared session of ``version`` settled first (a version the server cannot speak
        ends here); a scenario that needs the server's capabilities before the session had them
        runs again once it has."""
        await self.settle(version)
        unusable = self._unusable.get(version)
        if unusable is not None:
            raise unusable
        for attempt in (1, 2):
            try:
                if sc.capability:
                    ctx.require_capability(sc.capability)
                await sc.func(ctx)
                return
            except NeedSession:
                if attempt == 2:
                    raise RuntimeError("require_capability(): the shared session gave no capabilities") from None
                await ctx.session_info()

    async def release(self, ctx: "ScenarioContext") -> None:
        """After the scenario, also when it failed (shielded): its own connections are closed,
        shared sessions that died are forgotten."""
        for conn in ctx._fresh:
            if (conn is ctx._disposable and conn.version not in self._disposables and _initialized(conn)
                    and await self._hand_on(conn)):
                self._disposables[conn.version] = conn
            else:
                await self.run.close_conn(conn)
        for conn in list(self._shared.values()):
            if not conn.alive:
                self._shared.pop(conn.version, None)

    async def silent_target(self, ctx: "ScenarioContext", version: str,
                             peer_exc: PeerError) -> tuple[str, str, str | None] | None:
        """A wait that ended in nothing, on a connection where nothing ever arrived: does the
        target speak at all?  An error naming why not, or None (the silence is a verdict)."""
        if not isinstance(peer_exc, (ExpectTimeout, ConnectionLost)):
            return None
        conn = ctx._last
        if conn is None or conn.peer.inbound:
            return None
        try:
            with anyio.fail_after(self.run.item_deadline):
                await self.shared(version)
        except (TargetError, ScenarioError) as exc:
            return ("target", exc.message, exc.hint)
        except Exception:
            pass
        return None

    def unchecked(self, ctx: "ScenarioContext", rid: str) -> str:
        """Why ``rid`` has no verdict when the scenario ended without checking it."""
        return f"not reached: {ctx._notes.get(rid) or 'the scenario ended without checking it'}"

    def sharing(self) -> AsyncContextManager[Any]:
        """Where overlapping items share one server (HTTP), items run together; the part of one that
        changes what every session sees runs alone (``ctx.alone()``), and a part that only watches
        its own request steps aside (``ctx.aside()``)."""
        wide = self._server_wide
        if wide is None:
            return contextlib.nullcontext()
        return wide.together()

    def default_run_timeout(self, derived: float, items: int) -> float:
        return derived

    # -- the plan: what the items will connect to --------------------------------------------

    def _count_needs(self, sc: Scenario, v: str) -> None:
        """Count what item (``sc``, ``v``) will connect to: the version's shared session, or a
        fresh connection (for all the version's disposable items together one; for an ``ONCE``
        scenario one, on the first version it runs on).  An item citing nothing selected counts
        for nothing."""
        if not self.run.would_check(sc, v):
            return
        if self.shares_disposable(sc):
            if v not in self._disposable_planned:  # one connection for all of them
                self._disposable_planned.add(v)
                self._fresh_needed[v] = self._fresh_needed.get(v, 0) + 1
        elif self.own_connection(sc):
            if sc.connection is ConnectionKind.ONCE:  # one probe for every version: planned on the first one's connections
                if sc.id in self._once_home:
                    return
                self._once_home[sc.id] = v
            self._fresh_needed[v] = self._fresh_needed.get(v, 0) + 1
        else:
            self._shared_needed.add(v)

    def needs_shared(self, version: str) -> bool:
        """Whether an item planned (after deselection) on ``version`` uses its shared session."""
        return version in self._shared_needed

    # -- what a scenario's context may ask (ScenarioContext) ----------------------------------

    def handshake_failure(self, version: str) -> ScenarioError | None:
        """Why ``version``'s shared handshake failed, if it did (no item waits for it again)."""
        return self._shared_error.get(version)

    def once_slot(self, key: str) -> Once | None:
        """The probe ``key`` of ``ctx.once()``, if an item has started it."""
        return self._once.get(key)

    def claim_once(self, key: str) -> Once:
        """The calling item runs probe ``key``: its slot, for the others to wait on."""
        slot = self._once[key] = Once()
        return slot

    def forget_once(self, key: str, slot: Once) -> None:
        """The item running probe ``key`` was cancelled: another version's item runs it again."""
        if self._once.get(key) is slot:
            del self._once[key]

    def once_version(self, scenario: str, version: str) -> str:
        """The version whose planned connections an ``ONCE`` scenario's probe uses."""
        return self._once_home.get(scenario, version)

    def alone(self) -> AsyncContextManager[Any]:
        """For ``ctx.alone()``: over HTTP with items side by side, run while no other item does."""
        wide = self._server_wide
        if wide is None:
            return contextlib.nullcontext()
        return wide.alone_within()

    def aside(self) -> AsyncContextManager[Any]:
        """For ``ctx.aside()``: over HTTP with items side by side, give the item's place up."""
        wide = self._server_wide
        if wide is None:
            return contextlib.nullcontext()
        return wide.aside()

    # -- the pool: the target process, connections --------------------------------------------

    async def _ensure_server(self) -> None:
        """Start the HTTP server command once (hosted), if the target has one."""
        if not (self.target.is_http and self.target.command):
            return
        if self._target_error is not None:
            raise self._target_error
        async with self._server_lock:
            if self._server_host is not None:
                if self._server_host.done.is_set():
                    proc = self._server_host.obj
                    raise TargetError(
                        f"the server process exited during the run (code {proc.returncode if proc else '?'})",
                        hint="run the command by hand to see why it stops",
                    )
                return
            try:
                self._server_host = await self.run.host(lambda: ServerProcess(self.target))
            except TargetError as exc:
                self._target_error = exc
                raise

    def _label(self, version: str, kind: str) -> str:
        return f"{version}/{kind}#{self.run.number()}"

    async def _open(self, version: str, *, shared: bool, initialize: bool, **peer_opts: Any) -> Connection:
        if self._target_error is not None:
            raise self._target_error
        await self._ensure_server()
        label = self._label(version, "shared" if shared else "fresh")
        target = self.target
        if target.transport is Transport.STDIO:
            try:
                check_command(target)  # fail fast (command not found) before spawning a host
            except TargetError as exc:
                self._target_error = exc
                raise

        def peer_factory() -> RawPeer:
            return open_peer(target, version, timeout=self.run.timeout, **peer_opts)

        async def registered(peer: RawPeer) -> None:
            pid = getattr(peer.transport, "pid", None)
            if isinstance(pid, int):
                register_child(pid, group=True)

        try:
            host = await self.run.host(peer_factory, registered)
        except PeerSilent as exc:  # reached, and silent (legacy SSE: no stream, no endpoint event)
            raise self._mark_unusable(self._silent_start(version, exc)) from exc
        except (TransportError, OSError) as exc:
            err = target_error(exc, target)
            if not self.run.connections:
                self._target_error = err  # the very first connection failed: nothing will work
            raise err from exc
        conn = Connection(label=label, peer=host.obj, version=version, shared=shared, _close=host.close, _done=host.done)
        self.run.connections.append(conn)
        if initialize:
            conn.info = await self.handshake(conn)
        return conn

    async def shared(self, version: str) -> Connection:
        """The shared, initialized session for ``version`` (re-opened if it died)."""
        if version in self._shared_error:
            raise self._shared_error[version]
        lock = self._shared_lock.setdefault(version, anyio.Lock())
        async with lock:
            conn = self._shared.get(version)
            if conn is not None and conn.alive:
                return conn
            try:
                conn = await self._open(version, shared=True, initialize=True)
                if conn.info is not None and not conn.info.unsupported:
                    await self.handshake.probe_session(conn)
            except TargetError as exc:
                self._shared_error[version] = ScenarioError(exc.message, kind="target", hint=exc.hint)
                raise
            except ScenarioError as exc:
                self._shared_error[version] = exc
                raise
            self._shared[version] = conn
            if conn.info is not None:
                self.sessions.setdefault(version, conn.info)
            return conn

    def _silent_start(self, version: str, exc: PeerSilent) -> VersionUnusable:
        """A connection the target accepted and then never made usable (legacy SSE: the GET of
        the stream never answered, or no ``endpoint`` event on it): one verdict for the version,
        as an unanswered ``initialize`` is -- the endpoint event where that requirement applies,
        else the ``initialize`` that could not even be sent."""
        run = self.run
        rid = "transport.sse.endpoint-event"
        if not (run.is_selected(rid) and run.requirement(rid).applies_to(version, self.target.transport)):
            rid = "lifecycle.initialize.result"
        return VersionUnusable(
            rid,
            problem="NoEndpointEvent" if rid != "lifecycle.initialize.result" else "InitializeUnanswered",
            message=(f"the {self.target.transport.value} connection for {version} was accepted but never became usable "
                     f"within {run.timeout:g} s ({exc}): the server MUST send an endpoint event when a client connects, "
                     "and respond to initialize"),
            expected="an SSE stream whose first event is `endpoint`, within the timeout",
            actual=str(exc),
            reason=f"not reached: the {version} connection never became usable: {exc} (see {rid})",
            version=version,
            hint="raise --timeout if the server is merely slow",
        )

    def _mark_unusable(self, exc: VersionUnusable) -> VersionUnusable:
        version = exc.version or (exc.conn.version if exc.conn is not None else None)
        if version is not None:
            self._unusable.setdefault(version, exc)
            self._shared_error.setdefault(version, self._unusable[version])
            return self._unusable[version]
        return exc

    async def settle(self, version: str) -> None:
        """Wait until ``version``'s shared handshake has been tried once (so that an unanswered
        handshake is known before any item of the version waits for one of its own)."""
        if version in self._shared_error or version in self._shared:
            return
        event = self._settled.get(version)
        if event is None:
            event = self._settled[version] = anyio.Event()
            try:
                await self._shared_quietly(version)
            finally:
                event.set()
        else:
            await event.wait()

    async def fresh(self, version: str, *, initialize: bool = True, **peer_opts: Any) -> Connection:
        """A new connection (a spare one started in the background when possible)."""
        conn: Connection | None = None
        if self.prespawn and set(peer_opts) <= RawPeer.CLIENT_SIDE_OPTIONS:
            self.warm(version)
            pool = self._pool.setdefault(version, [])
            while conn is None and pool:
                spare = pool.pop(0)
                self._fresh_needed[version] = max(0, self._fresh_needed.get(version, 0) - 1)
                self._top_up(version)
                conn = await spare.take()
                if conn is not None and peer_opts:
                    if conn.peer.inbound:  # it spoke before we did: options such as validate
                        await self.run.close_conn(conn)  # would come too late; a new one it is
                        conn = None
                        break
                    conn.peer.configure(**peer_opts)
        if conn is None:
            conn = await self._open(version, shared=False, initialize=False, **peer_opts)
        if initialize:
            conn.info = await self.handshake(conn)
        return conn

    def own_connection(self, sc: Scenario) -> bool:
        """Whether ``sc`` runs on connections of its own (``FRESH``, ``DISPOSABLE``, ``ONCE``; ``APART``
        where a connection is only a session on the one server, over HTTP) rather than on the version's
        shared session."""
        kind = sc.connection
        return kind.fresh or (kind is ConnectionKind.APART and self.target.transport is not Transport.STDIO)

    def shares_disposable(self, sc: Scenario) -> bool:
        """Whether ``sc`` takes turns with the other disposable items of its version on one
        connection: on stdio, where each connection is a process (starting one costs a
        Python server a third of a second to seconds of CPU); over HTTP a session is cheap."""
        return sc.connection is ConnectionKind.DISPOSABLE and self.target.transport is Transport.STDIO

    async def disposable(self, version: str, scenario: str) -> Connection:
        """The version's disposable connection (initialized), or a new one when there is none yet
        or the last one did not survive its item (see :meth:`_hand_on`)."""
        conn = self._disposables.pop(version, None)
        if conn is not None:
            if conn.alive:
                conn.peer.transcript.note(f"the connection goes on to scenario {scenario}")
                return conn
            await self.run.close_conn(conn)
        return await self.fresh(version)

    async def _hand_on(self, conn: Connection) -> bool:
        """After a disposable item: keep its connection for the next one if it is alive and answers a
        round trip now (anything that arrived before is left behind: the next item starts with
        nothing unread).  Bounded by the timeout; a connection that fails is closed."""
        if not conn.alive:
            return False
        peer = conn.peer
        try:
            with anyio.move_on_after(self.run.timeout):
                env = await peer.expect_response(await peer.request(barrier_method(conn.version)), timeout=self.run.timeout)
                if env.kind is Kind.RESULT and conn.alive:
                    peer.consume_all("left behind when the connection went on to the next scenario")
                    return True
        except Exception:  # noqa: BLE001 - the next item opens a connection of its own
            pass
        return False

    # -- warming up: start processes before they are needed (stdio start-up is ~0.1-0.5 s) -------

    _POOL_SIZE = 2

    def _top_up(self, version: str) -> None:
        if not self.prespawn or self.run.tg is None or self._target_error is not None:
            return
        pool = self._pool.setdefault(version, [])
        while len(pool) < min(self._POOL_SIZE, self._fresh_needed.get(version, 0)):
            spare = _Spare(self, version)
            pool.append(spare)
            spare.launch()

    def warm(self, version: str) -> None:
        """Start what ``version`` will need (its shared session, spare stdio processes) in the
        background."""
        if version in self._warmed or self.run.tg is None or self._target_error is not None:
            return
        self._warmed.add(version)
        self._top_up(version)
        if version in self._shared_needed:
            self.run.tg.start_soon(self._shared_quietly, version)
        self.run.scheduler.start_version(version)

    def prewarm(self, version: str) -> None:
        """Open ``version``'s shared session in the background, before the plan is known (the
        plugin calls it while pytest still collects); errors are kept for the items."""
        if self.run.tg is not None and version in self.run.versions and self._target_error is None:
            self.run.tg.start_soon(self.settle, version)

    async def _shared_quietly(self, version: str) -> None:
        try:
            await self.shared(version)
        except Exception:  # cached for the scenario that needs it
            pass

    async def retire(self, version: str) -> None:
        """A version's items are done: close its shared session and spares (transcripts stay)."""
        pool = self._pool.pop(version, [])
        conn = self._shared.get(version)
        spent = self._disposables.pop(version, None)
        async with anyio.create_task_group() as tg:
            for spare in pool:
                tg.start_soon(spare.discard)
            if spent is not None:
                tg.start_soon(self.run.close_conn, spent)
            if conn is not None:
                tg.start_soon(self.run.close_conn, conn)

    async def _settle_planned(self, version: str) -> None:
        """Before a version's items on connections of their own start ahead: its shared session
        settled, if the plan uses it."""
        if version in self._shared_needed:
            await self._shared_quietly(version)

    def _detachable(self, sc: Scenario, version: str) -> bool:
        return (
            self.detach
            and self.own_connection(sc)
            and not self.shares_disposable(sc)  # those take turns, in the version's order
            and self.run.would_check(sc, version)
        )

    # -- report inputs ----------------------------------------------------------------------------

    def target_error(self) -> TargetError | None:
        return self._target_error

    def implementation(self) -> dict[str, Any]:
        first = next((i for i in self.sessions.values() if i.server_info), None)
        return {
            "server_info": first.server_info if first else None,
            "by_version": {v: i.to_json() for v, i in self.sessions.items()},
            "answered": self.answered(),
        }

    def answered(self) -> bool:
        """Whether the target sent any JSON-RPC message during the run (exit code 3 is for a target
        that never did, however many verdicts its silence earned)."""
        messages = (Kind.RESULT, Kind.ERROR, Kind.REQUEST, Kind.NOTIFICATION, Kind.BATCH)
        return any(item.envelope is not None and item.envelope.kind in messages
                   for conn in self.run.connections for item in conn.peer.inbound)


def default_jobs(transport: Transport) -> int:
    """How much runs at once by default (see :class:`conformance.runtime.schedule.Scheduler`).

    8 (4 on a single core): every version's items in order side by side, so that their waits (the
    cancellation watch, progress, over HTTP stream probes, priming and resumption) overlap.  Over
    HTTP each connection is a session on the one server.  On stdio each is a process of its own,
    and starting them is most of a run's cost; since a version needs only a few beyond its shared
    session (the pristine handshake probes, one for its disposable items), all versions at once
    keep both cores busy rather than flooding them (2026-11-26, reference server, all five
    versions: 7.2-8.7 s at 8 against 8.4-10.6 s at 4; the SDK server 26 s against 31 s).

    Over HTTP 16: an item there costs a session, not a process, and most of a five-version run is
    waiting (each stateful version has a cancellation watch, a resumption probe, progress, stream
    probes and an abandoned request to wait on: more than 8 slots hold at once), so with 8 the
    waits queue behind each other (2026-11-27, server-everything, all five versions: 2.5-2.8 s at
    8 against 2.06 s at 16 and 2.1 s at 32)."""
    import os

    one_core = (os.cpu_count() or 1) <= 1
    if transport is Transport.STDIO:
        return 3 if one_core else 8
    return 4 if one_core else 16


def default_lanes(jobs: int) -> int:
    """Versions whose items in order run side by side (with ``jobs`` > 1): as many as there are
    slots for items beside them.  Each version has its own shared session (over HTTP a session
    of its own on the one server, on stdio a process), so over HTTP this overlaps every version's
    waits; on stdio, where starting the server's processes is most of the cost, it mostly keeps
    both cores busy."""
    return max(1, jobs - 1)


def _initialized(conn: Connection) -> bool:
    """Whether ``conn`` is an initialized session of its version: the pool's handshake, or
    (a pristine connection a scenario initialized itself) ``initialize`` answered with the
    version and ``notifications/initialized`` sent."""
    if conn.info is not None:
        return True
    peer = conn.peer
    return peer.negotiated_version == conn.version and any(
        e.direction == Direction.OUT and e.envelope is not None and e.envelope.method == "notifications/initialized"
        for e in peer.transcript.entries
    )


class _Spare:
    """A stdio connection started ahead of time for the next ``fresh`` request."""

    def __init__(self, role: ServerRole, version: str) -> None:
        self.role = role
        self.version = version
        self.ready = anyio.Event()
        self.conn: Connection | None = None
        self.error: BaseException | None = None
        self.taken = False

    def launch(self) -> None:
        if self.role.run.tg is not None:
            self.role.run.tg.start_soon(self._make)

    async def _make(self) -> None:
        try:
            self.conn = await self.role._open(self.version, shared=False, initialize=False)
        except BaseException as exc:  # noqa: BLE001 - reported when taken
            self.error = exc
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
        finally:
            self.ready.set()
            if self.conn is not None and self.taken is False and self._discarded:
                await self.role.run.close_conn(self.conn)

    _discarded = False

    async def take(self) -> Connection | None:
        self.taken = True
        with anyio.move_on_after(self.role.target.startup_timeout):
            await self.ready.wait()
        conn = self.conn
        if conn is None or not conn.alive:
            if conn is not None:
                await self.role.run.close_conn(conn)
            return None
        return conn

    async def discard(self) -> None:
        self._discarded = True
        if self.conn is not None and not self.taken:
            await self.role.run.close_conn(self.conn)
