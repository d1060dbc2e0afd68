"""The run: one event loop's state against one target, and the order items run in.

:class:`Runner` holds the target, the shared session per version (one initialized connection
reused by every scenario that does not disturb state), fresh connections for scenarios that do
(on stdio, spare processes started ahead), the HTTP server process we started, and the accumulated
per-requirement results.  Every connection lives in a *host task* of the runner's task group, so a
session opened while one scenario runs survives into the next, and closing the runner (also on
Ctrl-C) closes every connection and stops every process.  It also schedules: items detached ahead
of pytest in per-version lanes (``--jobs``), waits overlapped, the server-wide lock for items that
change what every session sees.  What a scenario sees of it is :class:`~conformance.context.ScenarioContext`.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
from functools import partial
from typing import Any, Awaitable, Callable, Iterable

import anyio

from conformance.connect import (
    ServerProcess,
    Target,
    TargetError,
    check_command,
    open_peer,
    register_child,
    target_error,
    unregister_child,
)
from conformance.context import (
    Connection,
    ItemResult,
    ScenarioContext,
    ScenarioSkipped,
    SessionInfo,
    _NeedSession,
    _Once,
    _peer_error_violation,
    _ScenarioError,
    _VersionUnusable,
)
from conformance.outcomes import Outcome, worst
from conformance.peer import ConnectionLost, ExpectTimeout, PeerError, RawPeer
from conformance.registry import Scenario
from conformance.report.model import RequirementResult
from conformance.spec import errors as _errors
from conformance.spec.meta import SERVER_INFO_KEY
from conformance.spec.requirements import Requirement, catalogue
from conformance.spec.versions import VERSIONS, Transport, spec
from conformance.transcript import Direction
from conformance.transports.base import PeerSilent, TransportError
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, parse_envelope, same_id
from conformance.wire.rules import barrier_method

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["Runner", "default_jobs", "default_lanes"]


class Runner:
    """One run against one target: sessions, fresh connections, results.  Use inside one event
    loop: ``await start()``, ``await run_item(...)`` per scenario, ``await aclose()``."""

    def __init__(
        self,
        target: Target,
        *,
        versions: Iterable[str],
        timeout: float = 10.0,
        strict: bool = False,
        selected: Iterable[str] | None = None,
        prespawn: bool = True,
        item_deadline: float | None = None,
        detach: bool = True,
        jobs: int | None = None,
    ) -> None:
        self.target = target
        self.versions = tuple(v for v in VERSIONS if v in set(versions))
        self.timeout = timeout
        self.strict = strict
        self.selected = None if selected is None else frozenset(selected)
        self.prespawn = prespawn and target.transport is Transport.STDIO
        self.item_deadline = item_deadline or max(30.0, 8 * timeout + target.startup_timeout)
        self.run_timeout: float | None = None  # the whole run's bound (seconds), see set_run_timeout
        self.run_deadline: float | None = None  # time.monotonic() when the run must end
        self.connections: list[Connection] = []
        self.results: dict[tuple[str, str, str], RequirementResult] = {}
        self.sessions: dict[str, SessionInfo] = {}
        self.errors: list[dict[str, Any]] = []
        self._requirements: dict[str, Requirement] = catalogue()
        self._tg: Any = None
        self._stop: Any = None
        self._stopped: Any = None
        self._shared: dict[str, Connection] = {}
        self._shared_lock: dict[str, Any] = {}
        self._shared_error: dict[str, _ScenarioError] = {}
        self._unusable: dict[str, _VersionUnusable] = {}  # version -> why nothing more is tried
        self._settled: dict[str, Any] = {}  # version -> anyio.Event: its shared handshake is done
        self._target_error: TargetError | None = None
        self._server_host: _Hosted | None = None  # the HTTP server process we started, if any
        self._server_lock: Any = None
        self._pool: dict[str, list[_Spare]] = {}  # version -> stdio connections started ahead
        self._fresh_needed: dict[str, int] = {}  # version -> fresh connections the plan still needs
        self._shared_needed: set[str] = set()
        self._disposables: dict[str, Connection] = {}  # version -> the disposable connection between its items
        self._disposable_planned: set[str] = set()
        self._once: dict[str, _Once] = {}  # ScenarioContext.once: key -> the probe every version's item judges
        self._once_home: dict[str, str] = {}  # a ``once`` scenario -> the version its probe's connection is planned on
        self._warmed: set[str] = set()
        self._current: str | None = None
        self._counter = 0
        self.started = False
        # overlapping items (on their own connections): see schedule() and _detacher()
        # --jobs: scenarios running at once beside the one in order (1: strictly one after the
        # other, the sequential reference every concurrent run must match verdict for verdict)
        self.jobs = default_jobs(target.transport) if jobs is None else max(1, jobs)
        self.detach = detach and self.jobs > 1
        self._schedule: dict[str, list[Scenario]] = {}  # version -> its items, in run order
        self._detached: dict[tuple[str, str], _Detached] = {}  # (scenario id, version) -> state
        self._unfinished: dict[str, dict[int, int]] = {}  # version -> scenario order -> items not finished
        self._progress: Any = None  # anyio.Event, set (and replaced) whenever an item finishes
        self._slots: Any = None  # anyio.Semaphore: detached items running at once
        # versions whose shared-session items run side by side (each version's in run order)
        self.lanes = default_lanes(self.jobs) if self.detach else 1
        self._lane_slots: Any = None  # anyio.Semaphore: versions running at once
        self._lanes_started = False
        self._server_wide: _ServerWide | None = None  # over HTTP (one server, many sessions): what runs alone
        self._done_keys: set[tuple[str, str]] = set()
        self._scheduled_keys: set[tuple[str, str]] = set()

    # -- lifecycle ----------------------------------------------------------------------------

    def set_run_timeout(self, seconds: float, *, started: float | None = None) -> None:
        """Bound the whole run: items still running when ``seconds`` have passed since
        ``started`` (``time.monotonic()``, default now) are stopped, and items not started by then
        are not run; both are ``error`` (kind ``deadline``) with that reason."""
        self.run_timeout = seconds
        self.run_deadline = (time.monotonic() if started is None else started) + seconds

    @staticmethod
    def derived_run_timeout(timeout: float, versions: int, items: int) -> float:
        """The default bound of a run: a minute, twice the timeout per version (its handshake and
        one more wait), and a quarter of the timeout per item (most items wait for nothing; a few
        wait out a silence).  A conformant server finishes far inside it; a pathological one
        (every answer late) is cut off instead of taking hours."""
        return 60.0 + timeout * (2 * versions + items / 4)

    def default_run_timeout(self, timeout: float, versions: int, items: int) -> float:
        """The bound of this run when --run-timeout is not given (see :meth:`derived_run_timeout`)."""
        return self.derived_run_timeout(timeout, versions, items)

    async def start(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the host task group until :meth:`aclose` (start with ``tg.start``/portal ``start_task``)."""
        self._stop = anyio.Event()
        self._stopped = anyio.Event()
        self._server_lock = anyio.Lock()
        self._progress = anyio.Event()
        self._slots = anyio.Semaphore(max(1, self.jobs - 1))
        self._lane_slots = anyio.Semaphore(max(1, self.lanes))
        if self.detach and self.target.transport is not Transport.STDIO:
            self._server_wide = _ServerWide()  # every session is on the one server
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self.started = True
                task_status.started(self)
                await self._stop.wait()
                tg.cancel_scope.cancel()
        finally:
            self._stopped.set()

    async def aclose(self) -> None:
        """Close every connection (in parallel, bounded), stop the server process, end the hosts."""
        if self._stop is None:
            return
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(15):
                async with anyio.create_task_group() as tg:
                    for conn in list(self.connections):
                        tg.start_soon(self._close_conn, conn)
                    for pool in list(self._pool.values()):
                        for spare in pool:
                            tg.start_soon(spare.discard)
            if self._server_host is not None:
                self._server_host.close.set()
                with anyio.move_on_after(10):
                    await self._server_host.done.wait()
            self._stop.set()
            with anyio.move_on_after(5):
                await self._stopped.wait()

    async def _close_conn(self, conn: Connection) -> None:
        if conn._close is not None:
            conn._close.set()
        if conn._done is not None:
            with anyio.move_on_after(12):
                await conn._done.wait()

    # -- requirements and results ---------------------------------------------------------------

    def requirement(self, rid: str) -> Requirement:
        return self._requirements[rid]

    def result(self, rid: str, version: str) -> RequirementResult:
        key = (rid, version, self.target.transport.value)
        res = self.results.get(key)
        if res is None:
            res = self.results[key] = RequirementResult(rid, version, self.target.transport.value)
        return res

    def is_selected(self, rid: str) -> bool:
        return self.selected is None or rid in self.selected

    def plan(self, scenarios: Iterable[Scenario]) -> None:
        """Pre-create results for every selected requirement a scenario cites, with the reason
        for those that do not apply, so the report lists them even if nothing runs."""
        transport = self.target.transport
        for sc in scenarios:
            for v in self.versions:
                self._count_needs(sc, v)
            for rid in sc.requirements:
                if not self.is_selected(rid):
                    continue
                req = self.requirement(rid)
                for v in self.versions:
                    res = self.result(rid, v)
                    if not req.applies_to(v, transport):
                        res.default_reason = _not_applicable(req, v, transport)
                    elif res.default_reason is None:
                        why = sc.inapplicable(v, transport)
                        res.default_reason = why or "not run (deselected, or the run ended before it)"

    def _count_needs(self, sc: Scenario, v: str) -> None:
        """Count what item (``sc``, ``v``) will connect to: the version's shared session, or a
        fresh connection (for all the version's disposable items together one; for a ``once``
        scenario one, on the first version it runs on).  An item citing nothing selected counts
        for nothing."""
        if sc.inapplicable(v, self.target.transport) is not None or not any(self.is_selected(r) for r in sc.requirements):
            return
        if self.shares_disposable(sc):
            if v not in self._disposable_planned:  # one connection for all of them
                self._disposable_planned.add(v)
                self._fresh_needed[v] = self._fresh_needed.get(v, 0) + 1
        elif self.own_connection(sc):
            if sc.once:  # one probe for every version: planned on the first one's connections
                if sc.id in self._once_home:
                    return
                self._once_home[sc.id] = v
            self._fresh_needed[v] = self._fresh_needed.get(v, 0) + 1
        else:
            self._shared_needed.add(v)

    def needs_shared(self, version: str) -> bool:
        """Whether an item planned (after deselection) on ``version`` uses its shared session."""
        return version in self._shared_needed

    # -- target processes -----------------------------------------------------------------------

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
                self._server_host = await self._host(lambda: ServerProcess(self.target))
            except TargetError as exc:
                self._target_error = exc
                raise

    async def _host(self, factory: Callable[[], Any], on_enter: Callable[[Any], Awaitable[None]] | None = None) -> "_Hosted":
        """Enter ``factory()`` in a task of the runner's group; it stays open until asked to close."""
        if self._tg is None:
            raise RuntimeError("Runner.start() must be running")
        handle = _Hosted()
        return await self._tg.start(_host_task, handle, factory, on_enter)

    # -- connections ----------------------------------------------------------------------------

    def _label(self, version: str, kind: str) -> str:
        self._counter += 1
        return f"{version}/{kind}#{self._counter}"

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
            return open_peer(target, version, timeout=self.timeout, **peer_opts)

        async def registered(peer: RawPeer) -> None:
            pid = getattr(peer.transport, "pid", None)
            if isinstance(pid, int):
                register_child(pid, group=True)

        try:
            host = await self._host(peer_factory, registered)
        except PeerSilent as exc:  # reached, and silent (legacy SSE: no stream, no endpoint event)
            raise self._mark_unusable(self._silent_start(version, exc)) from exc
        except (TransportError, OSError) as exc:
            err = target_error(exc, target)
            if not self.connections:
                self._target_error = err  # the very first connection failed: nothing will work
            raise err from exc
        conn = Connection(label=label, peer=host.obj, version=version, shared=shared, _close=host.close, _done=host.done)
        self.connections.append(conn)
        if initialize:
            conn.info = await self._handshake(conn)
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
                    await self._probe_session(conn)
            except TargetError as exc:
                self._shared_error[version] = _ScenarioError(exc.message, kind="target", hint=exc.hint)
                raise
            except _ScenarioError as exc:
                self._shared_error[version] = exc
                raise
            self._shared[version] = conn
            if conn.info is not None:
                self.sessions.setdefault(version, conn.info)
            return conn

    async def _probe_session(self, conn: Connection) -> None:
        """Over HTTP, a ping on the session ``initialize`` just opened: a session whose requests
        are refused with an HTTP error status (a server that requires a session id it never
        issued, ...) cannot be used, and that is one verdict (ping.response), not a failure per
        scenario.  Stateless versions have neither sessions nor ping."""
        version = conn.version
        if not self.target.is_http or not spec(version).ping:
            return
        peer = conn.peer
        rid = await peer.request("ping")
        status = getattr(peer.last_exchange, "status", None)
        if not isinstance(status, int) or status < 400:
            return  # answered (or still to be answered) on the session: the ping scenarios judge it
        try:
            env: Envelope | None = await peer.expect_response(rid, timeout=min(1.0, self.timeout))
        except PeerError:
            env = None
        body = env.summary() if env is not None else "no JSON-RPC body"
        sid = getattr(peer.transport, "session_id", None)
        issued = f"session id {sid!r}" if sid else "no session id (none was issued)"
        raise self._mark_unusable(_VersionUnusable(
            "ping.response",
            problem="SessionUnusable",
            message=(f"a ping on the {version} session initialize opened ({issued}) was refused with HTTP {status} "
                     f"({body}): the session cannot be used, so no other check of {version} can run"),
            expected="an empty result on the session initialize opened",
            actual={"http_status": status, "body": body},
            reason=(f"not reached: the {version} session cannot be used (a ping after initialize was refused with "
                    f"HTTP {status}; see ping.response)"),
            conn=conn,
            hint="the server must accept requests on the session its initialize response opened",
        ))

    def _silent_start(self, version: str, exc: PeerSilent) -> _VersionUnusable:
        """A connection the target accepted and then never made usable (legacy SSE: the GET of
        the stream never answered, or no ``endpoint`` event on it): one verdict for the version,
        as an unanswered ``initialize`` is -- the endpoint event where that requirement applies,
        else the ``initialize`` that could not even be sent."""
        rid = "transport.sse.endpoint-event"
        if not (self.is_selected(rid) and self.requirement(rid).applies_to(version, self.target.transport)):
            rid = "lifecycle.initialize.result"
        return _VersionUnusable(
            rid,
            problem="NoEndpointEvent" if rid != "lifecycle.initialize.result" else "InitializeUnanswered",
            message=(f"the {self.target.transport.value} connection for {version} was accepted but never became usable "
                     f"within {self.timeout:g} s ({exc}): the server MUST send an endpoint event when a client connects, "
                     "and respond to initialize"),
            expected="an SSE stream whose first event is `endpoint`, within the timeout",
            actual=str(exc),
            reason=f"not reached: the {version} connection never became usable: {exc} (see {rid})",
            version=version,
            hint="raise --timeout if the server is merely slow",
        )

    def _mark_unusable(self, exc: _VersionUnusable) -> _VersionUnusable:
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
            self._warm(version)
            pool = self._pool.setdefault(version, [])
            while conn is None and pool:
                spare = pool.pop(0)
                self._fresh_needed[version] = max(0, self._fresh_needed.get(version, 0) - 1)
                self._top_up(version)
                conn = await spare.take()
                if conn is not None and peer_opts:
                    if conn.peer.inbound:  # it spoke before we did: options such as validate
                        await self._close_conn(conn)  # would come too late; a new one it is
                        conn = None
                        break
                    conn.peer.configure(**peer_opts)
        if conn is None:
            conn = await self._open(version, shared=False, initialize=False, **peer_opts)
        if initialize:
            conn.info = await self._handshake(conn)
        return conn

    def own_connection(self, sc: Scenario) -> bool:
        """Whether ``sc`` runs on connections of its own (``fresh``; ``apart`` where a connection is
        only a session on the one server, over HTTP) rather than on the version's shared session."""
        return sc.fresh or (sc.apart and self.target.transport is not Transport.STDIO)

    def shares_disposable(self, sc: Scenario) -> bool:
        """Whether ``sc`` takes turns with the other disposable items of its version on one
        connection: on stdio, where each connection is a process (starting one costs a
        Python server a third of a second to seconds of CPU); over HTTP a session is cheap."""
        return sc.disposable and self.target.transport is Transport.STDIO

    async def disposable(self, version: str, scenario: str) -> Connection:
        """The version's disposable connection (initialized), or a new one when there is none yet
        or the last one did not survive its item (see :meth:`_hand_on`)."""
        conn = self._disposables.pop(version, None)
        if conn is not None:
            if conn.alive:
                conn.peer.transcript.note(f"the connection goes on to scenario {scenario}")
                return conn
            await self._close_conn(conn)
        return await self.fresh(version)

    async def _hand_on(self, conn: Connection) -> bool:
        """After a disposable item: keep its connection for the next one if it is alive and answers a
        round trip now (anything that arrived before is left behind: the next item starts with
        nothing unread).  Bounded by the timeout; a connection that fails is closed."""
        if not conn.alive:
            return False
        peer = conn.peer
        try:
            with anyio.move_on_after(self.timeout):
                env = await peer.expect_response(await peer.request(barrier_method(conn.version)), timeout=self.timeout)
                if env.kind is Kind.RESULT and conn.alive:
                    peer.consume_all("left behind when the connection went on to the next scenario")
                    return True
        except Exception:  # noqa: BLE001 - the next item opens a connection of its own
            pass
        return False

    async def _handshake(self, conn: Connection) -> SessionInfo:
        """``initialize`` (or, stateless, ``server/discover``) and what it told us."""
        version = conn.version
        peer = conn.peer
        info = SessionInfo(version)
        try:
            if spec(version).stateless:
                await self._discover(peer, info)
            else:
                await self._initialize(peer, info)
        except PeerError as exc:
            http = _http_failure(peer, self.target)
            if http is not None:
                raise _ScenarioError(http.message, kind="target", hint=http.hint) from exc
            if isinstance(exc, ExpectTimeout) and not spec(version).stateless and peer.initialize_result is not MISSING:
                raise self._mark_unusable(self._initialized_unanswered(conn, exc)) from exc
            if isinstance(exc, ExpectTimeout) and not spec(version).stateless:
                waited = f"{exc.waited:.3g}"
                raise self._mark_unusable(_VersionUnusable(
                    "lifecycle.initialize.result",
                    problem="InitializeUnanswered",
                    message=(f"initialize ({version}) was not answered within {waited} s (the suite's timeout: a client "
                             "SHOULD establish timeouts); the server MUST respond with its capabilities and information"),
                    expected="an initialize result within the timeout",
                    actual=f"no response within {waited} s",
                    reason=(f"not reached: the server did not answer initialize for {version} within {waited} s "
                            "(see lifecycle.initialize.result)"),
                    conn=conn,
                    hint="raise --timeout if the server is merely slow to start",
                )) from exc
            raise _ScenarioError(self._handshake_failure(version, exc), kind="target",
                                 hint="check that the target is an MCP server speaking this transport") from exc
        return info

    def _initialized_unanswered(self, conn: Connection, exc: ExpectTimeout) -> _VersionUnusable:
        """``initialize`` was answered, and the POST of ``notifications/initialized`` was not (no
        response headers within the timeout): the session cannot start -- one verdict, the POST's
        202 Accepted (the endpoint's, on legacy SSE)."""
        sse = self.target.transport is Transport.SSE
        rid = "transport.sse.post-endpoint" if sse else "transport.http.post.accepted-202"
        return _VersionUnusable(
            rid,
            problem="NoResponse",
            message=(f"the POST of notifications/initialized ({conn.version}) was not answered: {exc}; "
                     "the server MUST return 202 Accepted for input it accepts"),
            expected="202 Accepted within the timeout",
            actual=f"no response headers within {exc.waited:.3g} s",
            reason=(f"not reached: the server did not answer the POST of notifications/initialized for {conn.version} "
                    f"within {exc.waited:.3g} s (see {rid})"),
            conn=conn,
            hint="raise --timeout if the server is merely slow",
        )

    def _first_answer_timeout(self, peer: RawPeer) -> float:
        """How long the handshake waits: a stdio server that has not said anything yet may still
        be starting (its interpreter, its imports), which takes seconds on a loaded machine, so
        the start-up deadline applies; afterwards the per-answer ``timeout``."""
        if self.target.transport is Transport.STDIO and not peer.inbound:
            return max(self.timeout, self.target.startup_timeout)
        return self.timeout

    def _handshake_failure(self, version: str, exc: PeerError) -> str:
        what = "server/discover" if spec(version).stateless else "initialize"
        return f"the target did not complete {what} for {version}: {exc}"

    async def _initialize(self, peer: RawPeer, info: SessionInfo) -> None:
        version = info.version
        env = await peer.initialize(protocol_version=version, timeout=self._first_answer_timeout(peer))
        if env.kind is Kind.ERROR:
            code = env.error_code
            msg = env.error.get("message") if isinstance(env.error, dict) else None
            data = env.error.get("data") if isinstance(env.error, dict) else None
            supported = data.get("supported") if isinstance(data, dict) else None
            if code in (_errors.INVALID_PARAMS, _errors.UNSUPPORTED_PROTOCOL_VERSION) or isinstance(supported, list):
                extra = f" (it supports {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
                info.unsupported = f"target does not support {version}: initialize answered error {code} {msg!r}{extra}"
                return
            raise _ScenarioError(
                f"initialize for {version} failed: error {id_repr(code)} {msg!r}",
                kind="target",
                hint="see the lifecycle.* requirements of this version in the report",
            )
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            raise _ScenarioError(f"initialize for {version} got no usable result: {env.summary()}", kind="target")
        result = env.result
        info.result = result
        info.response = env
        info.negotiated_version = peer.negotiated_version
        info.capabilities = peer.server_capabilities or {}
        info.server_info = peer.server_info or {}
        instr = result.get("instructions")
        info.instructions = instr if isinstance(instr, str) else None
        if info.negotiated_version != version:
            info.unsupported = (
                f"target does not support {version}: it answered initialize with protocolVersion "
                f"{id_repr(result.get('protocolVersion', MISSING))}"
            )

    async def _discover(self, peer: RawPeer, info: SessionInfo) -> None:
        """``server/discover`` as a dual-era client probes (2026-07-28 basic/versioning#backward-
        compatibility-with-initialization-based-versions): a ``DiscoverResult`` or a recognized
        modern error identifies a modern server; any other error, silence, or (HTTP) a 4xx without
        a modern JSON-RPC error body identifies a legacy one, and the version is skipped."""
        version = info.version
        legacy = f"target does not support {version}"
        wait = self._first_answer_timeout(peer)
        silent = (f"{legacy}: no answer to server/discover within {wait:g} s "
                  "(legacy servers may stay silent: basic/transports/stdio#backward-compatibility)")
        try:
            rid = await peer.request("server/discover")
        except ExpectTimeout:  # HTTP: the POST was never answered (no headers, a body that never ended)
            info.unsupported = silent
            return
        exchange = peer.last_exchange
        status = getattr(exchange, "status", None)
        if isinstance(status, int) and status >= 400 and not _json_rpc_body(exchange):
            # "If the body is empty or is not a recognized modern JSON-RPC error, fall back to
            # initialize" (basic/transports/streamable-http#backward-compatibility)
            info.unsupported = (
                f"{legacy}: server/discover was answered with HTTP {status} and no JSON-RPC error "
                "(a legacy server: streamable-http#backward-compatibility)"
            )
            return

        def answer(env: Envelope) -> bool:
            # the response, or (HTTP) a legacy server's 4xx error body that carries id null
            if env.kind not in (Kind.RESULT, Kind.ERROR):
                return False
            return same_id(env.id, rid) or (env.kind is Kind.ERROR and (env.id is None or env.id is MISSING))

        try:
            env = await peer.expect_message(answer, what=f"the response to server/discover (id {id_repr(rid)})", timeout=wait)
        except ExpectTimeout:
            if _http_failure(peer, self.target) is not None:
                raise
            info.unsupported = silent
            return
        if env.kind is Kind.ERROR:
            code = env.error_code
            data = env.error.get("data") if isinstance(env.error, dict) else None
            supported = data.get("supported") if isinstance(data, dict) else None
            msg = env.error.get("message") if isinstance(env.error, dict) else None
            if code == _errors.UNSUPPORTED_PROTOCOL_VERSION:
                extra = f" (it supports {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
                info.unsupported = f"{legacy}: server/discover answered UnsupportedProtocolVersion{extra}"
            elif same_id(env.id, rid) and (
                code in _MODERN_REJECTIONS or (status == 404 and code == _errors.METHOD_NOT_FOUND)
            ):
                # a recognized modern error (on HTTP a 404 with -32601 is one too: "a modern server
                # returns one for unsupported version, unknown method, or header-validation
                # failure"): a modern server refused the probe itself; discover.* judges that
                info.result = None
            else:
                where = f"HTTP {status} with " if isinstance(status, int) and status >= 400 else ""
                info.unsupported = (
                    f"{legacy}: server/discover was answered with {where}error {id_repr(code)} {msg!r} "
                    "(a legacy, initialize-based server: any error that is not a recognized modern error "
                    "identifies one, basic/versioning#backward-compatibility-with-initialization-based-versions)"
                )
            return
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            raise _ScenarioError(f"server/discover for {version} got no usable result: {env.summary()}", kind="target")
        result = env.result
        info.result = result
        caps = result.get("capabilities")
        info.capabilities = caps if isinstance(caps, dict) else {}
        meta = result.get("_meta")
        sinfo = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        info.server_info = sinfo if isinstance(sinfo, dict) else {}
        instr = result.get("instructions")
        info.instructions = instr if isinstance(instr, str) else None
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and version in versions:
            info.negotiated_version = version
        elif isinstance(versions, list):
            info.unsupported = f"target does not support {version}: server/discover lists {', '.join(map(str, versions))}"
        else:
            info.negotiated_version = version

    # -- warming up: start processes before they are needed (stdio start-up is ~0.1-0.5 s) -------

    _POOL_SIZE = 2

    def _top_up(self, version: str) -> None:
        if not self.prespawn or self._tg is None or self._target_error is not None:
            return
        pool = self._pool.setdefault(version, [])
        while len(pool) < min(self._POOL_SIZE, self._fresh_needed.get(version, 0)):
            spare = _Spare(self, version)
            pool.append(spare)
            spare.launch()

    def _warm(self, version: str) -> None:
        """Start what ``version`` will need (its shared session, spare stdio processes) in the
        background."""
        if version in self._warmed or self._tg is None or self._target_error is not None:
            return
        self._warmed.add(version)
        self._top_up(version)
        if version in self._shared_needed:
            self._tg.start_soon(self._shared_quietly, version)
        if self.detach:
            todo = self._queue(version)
            if todo:
                self._tg.start_soon(self._detacher, version, todo)

    def prewarm(self, version: str) -> None:
        """Open ``version``'s shared session in the background, before the plan is known (the
        plugin calls it while pytest still collects); errors are kept for the items."""
        if self._tg is not None and version in self.versions and self._target_error is None:
            self._tg.start_soon(self.settle, version)

    async def _shared_quietly(self, version: str) -> None:
        try:
            await self.shared(version)
        except Exception:  # cached for the scenario that needs it
            pass

    async def _retire(self, version: str) -> None:
        """A version's items are done: close its shared session and spares (transcripts stay)."""
        pool = self._pool.pop(version, [])
        conn = self._shared.get(version)
        spent = self._disposables.pop(version, None)
        async with anyio.create_task_group() as tg:
            for spare in pool:
                tg.start_soon(spare.discard)
            if spent is not None:
                tg.start_soon(self._close_conn, spent)
            if conn is not None:
                tg.start_soon(self._close_conn, conn)

    async def _enter_version(self, version: str) -> None:
        if version == self._current:
            return
        previous, self._current = self._current, version
        self._warm(version)
        if version in self.versions:
            i = self.versions.index(version)
            if i + 1 < len(self.versions):
                self._warm(self.versions[i + 1])
        if previous is not None and self._tg is not None:
            self._tg.start_soon(self._retire, previous)

    # -- overlapping items: scenarios on connections of their own run alongside the others -------


    def schedule(self, items: Iterable[tuple[Scenario, str]]) -> None:
        """The (scenario, version) items the run will execute, in run order (after deselection).

        A ``fresh`` scenario has a connection of its own (on stdio a process of its own, over HTTP
        a session of its own), so it does not disturb -- nor is it disturbed by -- the items on the
        shared session: with a schedule, such items start ahead of time, a few at once, while the
        others run in order (``--jobs 1`` is the sequential reference they match verdict for
        verdict).  A positive scenario ``order`` is a phase boundary: such an item starts only
        when every scheduled item of lower order (same version) has finished, so the
        transcript-wide checks that run last see every connection.  Results are applied in run
        order when :meth:`run_item` reaches an item.  Without a schedule (or with
        ``detach=False``) items run strictly one after the other."""
        self._schedule = {}
        self._unfinished = {}
        self._scheduled_keys = set()
        for sc, version in items:
            if (sc.id, version) in self._scheduled_keys:
                continue
            self._scheduled_keys.add((sc.id, version))
            self._schedule.setdefault(version, []).append(sc)
            counts = self._unfinished.setdefault(version, {})
            counts[sc.order] = counts.get(sc.order, 0) + 1
        # what the scheduled items connect to, counted again without the deselected ones: no
        # spare process, no shared session for a version whose items were left out, and a
        # ``once`` probe on the first version whose item runs
        self._fresh_needed, self._shared_needed = {}, set()
        self._disposable_planned, self._once_home = set(), {}
        for version in self.versions:
            for sc in self._schedule.get(version, ()):
                self._count_needs(sc, version)

    def _start_lanes(self) -> None:
        """With more than one lane, each version's items that are not detached (those on the shared
        session, in run order) run in a task of their own, ahead of :meth:`run_item`: the versions
        side by side, ``lanes`` at once, the first versions first.  Each version has a session (on
        stdio a process) of its own, so one version's items neither disturb nor wait for
        another's; within a version the order is kept."""
        if self._lanes_started or self.lanes <= 1 or self._tg is None or not self._schedule:
            return
        self._lanes_started = True
        for version in self.versions:
            todo = []
            for sc in self._schedule.get(version, ()):
                key = (sc.id, version)
                if key in self._detached or self._detachable(sc, version):
                    continue  # the detacher's (queued when the version is warmed)
                self._detached[key] = _Detached()
                todo.append(sc)
            if todo:
                self._tg.start_soon(self._lane, version, todo)

    async def _lane(self, version: str, todo: list[Scenario]) -> None:
        async with self._lane_slots:
            self._warm(version)
            for sc in todo:
                det = self._detached[(sc.id, version)]
                if det.state == "queued":
                    det.state = "running"
                    await self._lower_orders_done(version, sc.order)
                    await self._run_ahead(sc, version, det)
                else:  # run_item reached it before the lane did: keep the order
                    await det.done.wait()

    def _sharing(self) -> Any:
        """Where overlapping items share one server (HTTP), items run together; the part of one that
        changes what every session sees runs alone (``ctx.alone()``), and a part that only watches
        its own request steps aside (``ctx.aside()``)."""
        wide = self._server_wide
        if wide is None:
            return contextlib.nullcontext()
        return wide.together()

    def _detachable(self, sc: Scenario, version: str) -> bool:
        return (
            self.detach
            and self.own_connection(sc)
            and not self.shares_disposable(sc)  # those take turns, in the version's order
            and sc.inapplicable(version, self.target.transport) is None
            and any(self.is_selected(r) for r in sc.requirements)
        )

    def _queue(self, version: str) -> list[Scenario]:
        """Mark the detachable items of ``version`` as queued for the detacher."""
        todo = []
        for sc in self._schedule.get(version, ()):
            key = (sc.id, version)
            if self._detachable(sc, version) and key not in self._detached:
                self._detached[key] = _Detached()
                todo.append(sc)
        return todo

    async def _detacher(self, version: str, todo: list[Scenario]) -> None:
        """Start the queued items of ``version`` in run order, as their phase allows."""
        if version in self._shared_needed:
            # settle the shared session first (a failed handshake is cached and reported by every
            # item of the version, as when items run in order)
            await self._shared_quietly(version)
        for sc in todo:
            det = self._detached[(sc.id, version)]
            await self._lower_orders_done(version, sc.order)
            if det.state != "queued":
                continue
            await self._slots.acquire()
            if det.state != "queued":  # run_item reached it meanwhile
                self._slots.release()
                continue
            det.state = "running"
            self._tg.start_soon(self._run_detached, sc, version, det)

    async def _run_detached(self, sc: Scenario, version: str, det: "_Detached") -> None:
        try:
            await self._run_ahead(sc, version, det)
        finally:
            self._slots.release()

    async def _run_ahead(self, sc: Scenario, version: str, det: "_Detached") -> None:
        try:
            det.item = await self._execute(sc, version, det.ops)
        except anyio.get_cancelled_exc_class():
            det.raised = RuntimeError(f"scenario {sc.id} [{version}] was cancelled")
            raise
        except BaseException as exc:  # for run_item to raise, as if it had run the item itself
            det.raised = exc
        finally:
            det.state = "done"
            det.done.set()
            self._finished((sc.id, version), version, sc.order)

    async def _lower_orders_done(self, version: str, order: int) -> None:
        """For an item of positive ``order`` (one that runs after the others, like the
        transcript-wide checks): wait until every scheduled item of ``version`` with a lower order
        has finished.  Order 0 and below only say which items start first."""
        if order <= 0:
            return
        while True:
            counts = self._unfinished.get(version)
            if not counts or not any(n for o, n in counts.items() if o < order):
                return
            await self._progress.wait()

    def _finished(self, key: tuple[str, str], version: str, order: int) -> None:
        counts = self._unfinished.get(version)
        if counts and key in self._scheduled_keys and key not in self._done_keys:
            self._done_keys.add(key)
            counts[order] -= 1
            progress, self._progress = self._progress, anyio.Event()
            progress.set()

    # -- running one scenario -------------------------------------------------------------------

    async def run_item(self, sc: Scenario, version: str) -> ItemResult:
        """Run one scenario for one version on the target's transport; record and grade.

        With a :meth:`schedule`, a scenario that runs only on connections of its own may have been
        started ahead of time (see :meth:`_detacher`): its result is awaited here.  Either way its
        findings reach :attr:`results` now, so the report does not depend on what overlapped."""
        self._start_lanes()
        await self._enter_version(version)
        key = (sc.id, version)
        det = self._detached.get(key)
        if det is not None and det.state != "queued":
            await det.done.wait()
            if det.raised is not None:
                raise det.raised
            assert det.item is not None
            _apply(det.ops)
            return det.item
        if det is not None:
            det.state = "inline"  # reached before the detacher started it: run it here
        await self._lower_orders_done(version, sc.order)
        ops: list[Callable[[], None]] = []
        try:
            return await self._execute(sc, version, ops)
        finally:
            _apply(ops)
            self._finished(key, version, sc.order)
            if det is not None:
                det.done.set()  # a lane waiting for it goes on

    def finished_ahead(self, sc: Scenario, version: str) -> bool:
        """Whether the item already ran ahead of :meth:`run_item` (a lane or the detacher ran it,
        and it is done): :meth:`run_item` then only applies its findings."""
        det = self._detached.get((sc.id, version))
        return det is not None and det.state == "done"

    async def _execute(self, sc: Scenario, version: str, ops: list[Callable[[], None]]) -> ItemResult:
        """Run one item; what it found for the run's results is appended to ``ops``.  The same
        for both roles: what differs is in the hooks -- the context (:meth:`_new_context`), how
        the scenario is run (:meth:`_run_scenario`), what is released after it
        (:meth:`_release`) and what an item that checked nothing says (:meth:`_unchecked`)."""
        transport = self.target.transport
        item = ItemResult(sc.id, version, transport.value)
        started = time.monotonic()
        cited = [rid for rid in sc.requirements if self.is_selected(rid)]
        reason = sc.inapplicable(version, transport)
        if reason is not None:
            for rid in cited:
                req = self.requirement(rid)
                why = reason if (sc.skip_reason or req.applies_to(version, transport)) else _not_applicable(req, version, transport)
                self._skip(ops, item, rid, version, why, sc.id, checked=False)
            item.skip_reason = reason
            item.outcome = Outcome.SKIP
            return item
        active = []
        for rid in cited:
            req = self.requirement(rid)
            if req.applies_to(version, transport):
                active.append(rid)
            else:
                self._skip(ops, item, rid, version, _not_applicable(req, version, transport), sc.id, checked=False)
        ctx = self._new_context(sc, version, active)
        ctx._ops = ops
        error: tuple[str, str, str | None] | None = None  # (kind, message, hint)
        skipped: str | None = None
        peer_exc: PeerError | None = None
        limit, overrun = self.item_deadline, False
        if self.run_deadline is not None:
            left = self.run_deadline - time.monotonic()
            if left < limit:
                limit, overrun = max(0.0, left), True
        try:
            async with self._sharing():
                with anyio.fail_after(limit):
                    if overrun and limit <= 0:
                        raise TimeoutError
                    await self._run_scenario(sc, version, ctx)
        except Exception as raised:
            exc = _unwrap(raised)
            if isinstance(exc, ScenarioSkipped):
                skipped = exc.reason
            elif isinstance(exc, _VersionUnusable):
                unusable = exc
                if unusable.requirement in ctx._active:
                    ctx.check(unusable.requirement, False, problem=unusable.problem, message=unusable.verdict,
                              expected=unusable.expected, actual=unusable.actual,
                              peer=unusable.conn.peer if unusable.conn is not None else None)
                if self.is_selected(unusable.requirement):
                    skipped = unusable.reason
                else:  # the verdict is not part of this run: what remains is an error
                    error = ("target", unusable.verdict, unusable.hint)
            elif isinstance(exc, TargetError):
                error = ("target", exc.message, exc.hint)
            elif isinstance(exc, _ScenarioError):
                error = (exc.kind, exc.message, exc.hint)
            elif isinstance(exc, PeerError) and self.peer_errors_are_verdicts:
                peer_exc = exc
            elif isinstance(exc, TimeoutError) and overrun:
                error = ("deadline", f"the run reached its deadline of {self.run_timeout:g} s (--run-timeout) "
                         f"{'before' if limit <= 0 else 'during'} scenario {sc.id}",
                         f"raise --run-timeout, or --timeout if the {getattr(self.target, 'role', 'server')} is merely slow")
            elif isinstance(exc, TimeoutError):
                error = ("harness", f"scenario {sc.id} did not finish within its deadline of {limit:g} s", None)
            elif isinstance(exc, PeerSilent) and self.peer_errors_are_verdicts:
                # no response headers (a GET stream that never opens...): an answer that never came
                peer_exc = ExpectTimeout("an answer over HTTP", self.timeout, [], detail=f"; {exc}")
            elif isinstance(exc, (TransportError, OSError)) and self.peer_errors_are_verdicts:
                err = target_error(exc, self.target, doing="running the scenario")
                error = ("target", err.message, err.hint)
            else:
                tb = "".join(traceback.format_exception(type(raised), raised, raised.__traceback__))
                error = ("harness", f"internal error in scenario {sc.id}: {exc!r}\n{tb}", None)
        finally:
            with anyio.CancelScope(shield=True):
                await self._release(ctx)
        if peer_exc is not None and error is None:
            error = await self._silent_target(ctx, version, peer_exc)
        item.duration = time.monotonic() - started
        if peer_exc is not None and error is None:
            problem, message, expected, actual = _peer_error_violation(peer_exc)
            for rid in active:
                if rid not in ctx._checks:
                    ctx.check(rid, False, problem=problem, message=message, expected=expected, actual=actual)
        for rid in active:
            res = self.result(rid, version)
            ops.append(partial(res.add_scenario, sc.id, item.duration))
            outs = ctx._checks.get(rid)
            if outs:
                item.requirements[rid] = worst(outs)
                continue
            if error is not None:
                item.requirements[rid] = Outcome.ERROR
                item.reasons[rid] = error[1]
                ops.append(partial(res.record, Outcome.ERROR, reason=error[1], checked=False))
            else:
                self._skip(ops, item, rid, version, skipped or self._unchecked(ctx, rid), sc.id, checked=False, add=False)
        item.violations = list(ctx._violations)
        item.messages = list(ctx._messages)
        if error is not None:
            item.error_kind, item.error, item.hint = error
            ops.append(partial(self.errors.append, {
                "scenario": sc.id, "version": version, "transport": transport.value, "kind": error[0], "message": error[1], "hint": error[2],
            }))
            item.outcome = Outcome.ERROR
        else:
            item.outcome = worst(list(item.requirements.values()))
            if item.outcome is Outcome.SKIP:
                item.skip_reason = skipped or next(iter(item.reasons.values()), "nothing was checked")
        return item

    # -- the role's part of an item (the client runner overrides these) ------------------------------

    #: a PeerError (an answer that never came, a connection lost) or a transport error out of a
    #: scenario is the server's doing: a verdict.  A client scenario catches its own: one that
    #: escapes is the suite's trouble, an error.
    peer_errors_are_verdicts = True

    def _new_context(self, sc: Scenario, version: str, active: list[str]) -> "ScenarioContext":
        return ScenarioContext(self, sc, version, active)

    async def _run_scenario(self, sc: Scenario, version: str, ctx: "ScenarioContext") -> None:
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
            except _NeedSession:
                if attempt == 2:
                    raise RuntimeError("require_capability(): the shared session gave no capabilities") from None
                await ctx.session_info()

    async def _release(self, ctx: "ScenarioContext") -> None:
        """After the scenario, also when it failed (shielded): its own connections are closed,
        shared sessions that died are forgotten."""
        for conn in ctx._fresh:
            if (conn is ctx._disposable and conn.version not in self._disposables and _initialized(conn)
                    and await self._hand_on(conn)):
                self._disposables[conn.version] = conn
            else:
                await self._close_conn(conn)
        for conn in list(self._shared.values()):
            if not conn.alive:
                self._shared.pop(conn.version, None)

    async def _silent_target(self, ctx: "ScenarioContext", version: str,
                             peer_exc: PeerError) -> tuple[str, str, str | None] | None:
        """A wait that ended in nothing, on a connection where nothing ever arrived: does the
        target speak at all?  An error naming why not, or None (the silence is a verdict)."""
        if not isinstance(peer_exc, (ExpectTimeout, ConnectionLost)):
            return None
        conn = ctx._last
        if conn is None or conn.peer.inbound:
            return None
        try:
            with anyio.fail_after(self.item_deadline):
                await self.shared(version)
        except (TargetError, _ScenarioError) as exc:
            return ("target", exc.message, exc.hint)
        except Exception:
            pass
        return None

    def _unchecked(self, ctx: "ScenarioContext", rid: str) -> str:
        """Why ``rid`` has no verdict when the scenario ended without checking it."""
        return f"not reached: {ctx._notes.get(rid) or 'the scenario ended without checking it'}"

    def _skip(self, ops: list[Callable[[], None]], item: ItemResult, rid: str, version: str, reason: str, sid: str, *,
              checked: bool, add: bool = True) -> None:
        item.requirements[rid] = Outcome.SKIP
        item.reasons[rid] = reason
        res = self.result(rid, version)

        def apply() -> None:
            if add and sid not in res.scenarios:
                res.scenarios.append(sid)
            res.record(Outcome.SKIP, reason=reason, checked=checked)

        ops.append(apply)

    # -- report inputs ----------------------------------------------------------------------------

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
                   for conn in self.connections for item in conn.peer.inbound)


_MODERN_REJECTIONS = (_errors.HEADER_MISMATCH, _errors.MISSING_REQUIRED_CLIENT_CAPABILITY)


def default_jobs(transport: Transport) -> int:
    """How much runs at once by default (see :meth:`Runner.schedule` and :meth:`Runner._start_lanes`).

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


def _json_rpc_body(exchange: Any) -> bool:
    """Whether an HTTP exchange's (non-SSE) body is a JSON-RPC message (else: an error page or nothing)."""
    if getattr(exchange, "is_sse", False):
        return True
    body = getattr(exchange, "body", None)
    if not body:
        return False
    env = parse_envelope(body)
    return env.kind in (Kind.RESULT, Kind.ERROR, Kind.BATCH)


def _http_failure(peer: RawPeer, target: Target) -> TargetError | None:
    """A TargetError when the last HTTP exchange of ``peer`` was answered with an error status
    and no JSON-RPC message (404: wrong path, 405: wrong transport, ...)."""
    exchange = peer.last_exchange
    status = getattr(exchange, "status", None)
    if not isinstance(status, int) or status < 400 or peer.inbound:
        return None
    from conformance.transports.base import HttpStatusError

    headers = getattr(exchange, "headers", None) or {}
    body = getattr(exchange, "body", None) or b""
    return target_error(HttpStatusError(f"HTTP {status}", status=status, headers=dict(headers), body=body), target, doing="initializing")


def _unwrap(exc: BaseException) -> BaseException:
    """The single leaf of (nested) exception groups with one member; else ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _not_applicable(req: Requirement, version: str, transport: Transport) -> str:
    if version not in req.versions:
        ordered = [v for v in VERSIONS if v in req.versions]
        span = ordered[0] if len(ordered) == 1 else f"{ordered[0]} .. {ordered[-1]}"
        return f"not applicable to {version}: {req.id} is part of {span}"
    names = ", ".join(sorted(t.value for t in req.transports))
    return f"not applicable to the {transport.value} transport: {req.id} concerns {names}"


# -------------------------------------------------------------------------------------------
# host tasks


class _Hosted:
    def __init__(self) -> None:
        self.obj: Any = None
        self.close = anyio.Event()
        self.done = anyio.Event()
        self.error: BaseException | None = None


async def _host_task(
    handle: _Hosted,
    factory: Callable[[], Any],
    on_enter: Callable[[Any], Awaitable[None]] | None,
    *,
    task_status: Any = anyio.TASK_STATUS_IGNORED,
) -> None:
    started = False
    try:
        async with factory() as obj:
            handle.obj = obj
            if on_enter is not None:
                await on_enter(obj)
            started = True
            task_status.started(handle)
            await handle.close.wait()
    except anyio.get_cancelled_exc_class():
        raise
    except BaseException as exc:
        if not started:
            raise
        handle.error = exc  # a close that failed must not bring down the other connections
    finally:
        obj = handle.obj
        pid = getattr(getattr(obj, "transport", None), "pid", None)
        if isinstance(pid, int):
            unregister_child(pid)
        handle.done.set()


def _initialized(conn: Connection) -> bool:
    """Whether ``conn`` is an initialized session of its version: the runner's handshake, or
    (a pristine connection a scenario initialized itself) ``initialize`` answered with the
    version and ``notifications/initialized`` sent."""
    if conn.info is not None:
        return True
    peer = conn.peer
    return peer.negotiated_version == conn.version and any(
        e.direction == Direction.OUT and e.envelope is not None and e.envelope.method == "notifications/initialized"
        for e in peer.transcript.entries
    )


def _apply(ops: list[Callable[[], None]]) -> None:
    for op in ops:
        op()
    ops.clear()


class _Detached:
    """An item started ahead of time by the detacher or its version's lane (or queued for it)."""

    def __init__(self) -> None:
        self.state = "queued"  # queued -> running -> done; or inline (run_item ran it itself)
        self.done = anyio.Event()
        self.item: ItemResult | None = None
        self.raised: BaseException | None = None
        self.ops: list[Callable[[], None]] = []


class _ServerWide:
    """A readers-writer lock for items on one server: ``alone`` (a change every session sees)
    waits until no item runs and keeps the others out; ``together`` waits while one is waiting
    or running (so it is not starved).  No item waits for another while it holds either."""

    def __init__(self) -> None:
        self.running = 0
        self.alone_running = False
        self.alone_waiting = 0
        self._changed = anyio.Event()

    async def _wait(self) -> None:
        await self._changed.wait()

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    @contextlib.asynccontextmanager
    async def together(self) -> Any:
        while self.alone_running or self.alone_waiting:
            await self._wait()
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._notify()

    @contextlib.asynccontextmanager
    async def aside(self) -> Any:
        """For an item that holds ``together`` and now only watches what no change on another
        session can alter (the answer to its own request): it gives its place up while it
        watches, so a part that runs alone need not wait for the watch to end, and takes it back
        after, once no part runs alone.  Taken back also when cancelled (the count stays right)."""
        self.running -= 1
        self._notify()
        try:
            yield
        finally:
            try:
                while self.alone_running:
                    await self._wait()
            finally:
                self.running += 1

    @contextlib.asynccontextmanager
    async def alone_within(self) -> Any:
        """``alone`` for an item that holds ``together``: it gives its place up while it waits
        and runs alone, and takes it back at once after (no wait: nothing can be cancelled
        between, so the count stays right)."""
        self.running -= 1
        self._notify()
        try:
            async with self.alone():
                yield
        finally:
            self.running += 1

    @contextlib.asynccontextmanager
    async def alone(self) -> Any:
        self.alone_waiting += 1
        try:
            while self.alone_running or self.running:
                await self._wait()
        finally:
            self.alone_waiting -= 1
        self.alone_running = True
        try:
            yield
        finally:
            self.alone_running = False
            self._notify()


class _Spare:
    """A stdio connection started ahead of time for the next ``fresh`` request."""

    def __init__(self, runner: Runner, version: str) -> None:
        self.runner = runner
        self.version = version
        self.ready = anyio.Event()
        self.conn: Connection | None = None
        self.error: BaseException | None = None
        self.taken = False

    def launch(self) -> None:
        if self.runner._tg is not None:
            self.runner._tg.start_soon(self._make)

    async def _make(self) -> None:
        try:
            self.conn = await self.runner._open(self.version, shared=False, initialize=False)
        except BaseException as exc:  # noqa: BLE001 - reported when taken
            self.error = exc
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
        finally:
            self.ready.set()
            if self.conn is not None and self.taken is False and self._discarded:
                await self.runner._close_conn(self.conn)

    _discarded = False

    async def take(self) -> Connection | None:
        self.taken = True
        with anyio.move_on_after(self.runner.target.startup_timeout):
            await self.ready.wait()
        conn = self.conn
        if conn is None or not conn.alive:
            if conn is not None:
                await self.runner._close_conn(conn)
            return None
        return conn

    async def discard(self) -> None:
        self._discarded = True
        if self.conn is not None and not self.taken:
            await self.runner._close_conn(self.conn)
