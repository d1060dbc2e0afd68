"""One run against one target, whichever role the suite plays: results, the deadline, host tasks,
and executing and grading one item.

:class:`Run` holds what every run has -- the per-requirement results, the run's deadline, the
connections handed out, the *host tasks* that keep them open from item to item (closing the run,
also on Ctrl-C, closes every one) -- and executes an item: the scenario in its context, within its
deadline, graded; what it found is applied to the results in run order by the
:class:`~conformance.runtime.schedule.Scheduler`.  It does not know which role it plays: that is
data, a :class:`Role` given to it (:class:`conformance.server.role.ServerRole`: we are the
client of a server under test; :class:`conformance.client.role.ClientRole`: we are the server a
client under test connects to).  The role makes the context a scenario sees, runs the scenario,
releases what it held, says why an unchecked requirement has no verdict, what items share, what a
version needs warmed or retired, and how its items are scheduled.
"""

from __future__ import annotations

import sys
import time
import traceback
from functools import partial
from typing import Any, AsyncContextManager, Awaitable, Callable, Generic, Iterable, Protocol, TypeVar

import anyio

from conformance.runtime.connect import TargetError, target_error, unregister_child
from conformance.spec.outcomes import Outcome, worst
from conformance.runtime.peer import ExpectTimeout, PeerError
from conformance.runtime.registry import Scenario
from conformance.report.model import RequirementResult
from conformance.runtime.judge import Judge
from conformance.runtime.records import Connection, ItemResult, ScenarioError, ScenarioSkipped, VersionUnusable, peer_error_violation
from conformance.runtime.schedule import Policy, Scheduler
from conformance.spec.requirements import Requirement, catalogue
from conformance.spec.versions import VERSIONS, Transport
from conformance.transports.base import PeerSilent, TransportError

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["Role", "Run", "Hosted"]


class Role(Protocol):
    """What a :class:`Run` asks of the role it plays (see the module's docstring)."""

    #: what the run is against (a server's :class:`~conformance.runtime.connect.Target` or a
    #: :class:`~conformance.client.target.ClientTarget`): its ``transport`` and ``startup_timeout``
    target: Any
    #: whether a PeerError or a transport error out of a scenario is the target's doing (a
    #: verdict); else the scenario catches its own, and one that escapes is the suite's trouble
    peer_errors_are_verdicts: bool

    def default_jobs(self) -> int:
        """How much runs at once when ``jobs`` is not given."""

    def item_deadline(self, default: float) -> float:
        """One item's bound, given the default one."""

    def bind(self, run: "Run[Any]") -> Policy:
        """The role is played in ``run``: how its items are scheduled."""

    async def open(self, tg: Any) -> None:
        """In the run's task group, before any item: what the role keeps open for the run."""

    async def stopping(self) -> None:
        """The run ends: before its host tasks are cancelled."""

    def cleanup(self) -> None:
        """After the run's task group has ended."""

    async def close(self) -> None:
        """End everything the role started (shielded and bounded by the caller)."""

    def count(self, sc: Scenario, version: str) -> None:
        """The plan has item (``sc``, ``version``): count what it will need."""

    def recount(self, schedule: dict[str, list[Scenario]]) -> None:
        """The scheduled items by version, after deselection: count again."""

    def warm(self, version: str) -> None:
        """Start what ``version`` will need, in the background."""

    async def retire(self, version: str) -> None:
        """``version``'s items are done: close what it alone used."""

    def new_context(self, sc: Scenario, version: str, active: list[str]) -> Judge:
        """The context the scenario is handed."""

    async def run_scenario(self, sc: Scenario, version: str, ctx: Any) -> None:
        """Run ``sc`` in ``ctx`` (within the item's deadline)."""

    async def release(self, ctx: Any) -> None:
        """After the scenario, also when it failed (shielded): what it held."""

    async def silent_target(self, ctx: Any, version: str, exc: PeerError) -> tuple[str, str, str | None] | None:
        """A wait that ended in nothing: an error naming why the target is silent, or None (a verdict)."""

    def unchecked(self, ctx: Any, rid: str) -> str:
        """Why ``rid`` has no verdict when the scenario ended without checking it."""

    def sharing(self) -> AsyncContextManager[Any]:
        """What an item holds while it runs beside the others."""

    def default_run_timeout(self, derived: float, items: int) -> float:
        """The run's bound when none is given, from the role-free one."""

    def target_error(self) -> TargetError | None:
        """Why the target could not be started or reached at all (the run's status is then
        ``target-error``), or None."""

    def implementation(self) -> dict[str, Any]:
        """The report's implementation block."""

    def answered(self) -> bool:
        """Whether the target sent any JSON-RPC message during the run."""


R = TypeVar("R", bound=Role)


class Run(Generic[R]):
    """One run against one target in the role ``role``: connections, results, the items' order.
    Use inside one event loop: ``await start()``, ``await run_item(...)`` per scenario,
    ``await aclose()``."""

    def __init__(
        self,
        role: R,
        *,
        versions: Iterable[str],
        timeout: float = 10.0,
        strict: bool = False,
        selected: Iterable[str] | None = None,
        item_deadline: float | None = None,
        jobs: int | None = None,
    ) -> None:
        self.role = role
        self.target: Any = role.target
        self.versions = tuple(v for v in VERSIONS if v in set(versions))
        self.timeout = timeout
        self.strict = strict
        self.selected = None if selected is None else frozenset(selected)
        self.item_deadline = role.item_deadline(item_deadline or max(30.0, 8 * timeout + self.target.startup_timeout))
        self.run_timeout: float | None = None  # the whole run's bound (seconds), see set_run_timeout
        self.run_deadline: float | None = None  # time.monotonic() when the run must end
        self.connections: list[Connection] = []
        self.results: dict[tuple[str, str, str], RequirementResult] = {}
        self.errors: list[dict[str, Any]] = []
        self._requirements: dict[str, Requirement] = catalogue()
        self.tg: Any = None  # the host task group, while the run is started
        self._stop: Any = None
        self._stopped: Any = None
        self._counter = 0
        self.started = False
        # --jobs: scenarios running at once (1: strictly one after the other, the sequential
        # reference every concurrent run must match verdict for verdict)
        self.jobs = role.default_jobs() if jobs is None else max(1, jobs)
        self.scheduler = Scheduler(self, role.bind(self))

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
        """The bound of this run when --run-timeout is not given (see :meth:`derived_run_timeout`;
        the role may raise it)."""
        return self.role.default_run_timeout(self.derived_run_timeout(timeout, versions, items), items)

    async def start(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the host task group until :meth:`aclose` (start with ``tg.start``/portal ``start_task``)."""
        self._stop = anyio.Event()
        self._stopped = anyio.Event()
        self.scheduler.open()
        try:
            async with anyio.create_task_group() as tg:
                self.tg = tg
                await self.role.open(tg)
                self.started = True
                task_status.started(self)
                await self._stop.wait()
                await self.role.stopping()
                tg.cancel_scope.cancel()
        finally:
            self._stopped.set()
            self.role.cleanup()

    async def aclose(self) -> None:
        """End what the role started (every connection, in parallel, bounded), end the hosts."""
        if self._stop is None:
            return
        with anyio.CancelScope(shield=True):
            await self.role.close()
            self._stop.set()
            with anyio.move_on_after(5):
                await self._stopped.wait()

    async def close_conn(self, conn: Connection) -> None:
        """Ask ``conn``'s host task to close it; wait for it (bounded)."""
        if conn._close is not None:
            conn._close.set()
        if conn._done is not None:
            with anyio.move_on_after(12):
                await conn._done.wait()

    async def host(self, factory: Callable[[], Any], on_enter: Callable[[Any], Awaitable[None]] | None = None) -> "Hosted":
        """Enter ``factory()`` in a task of the run's group; it stays open until asked to close."""
        if self.tg is None:
            raise RuntimeError("Run.start() must be running")
        handle = Hosted()
        return await self.tg.start(_host_task, handle, factory, on_enter)

    def number(self) -> int:
        """The next number for a connection's or a client run's label."""
        self._counter += 1
        return self._counter

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
                self.role.count(sc, v)
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

    def schedule(self, items: Iterable[tuple[Scenario, str]]) -> None:
        """The (scenario, version) items the run will execute, in run order (after deselection):
        see :class:`~conformance.runtime.schedule.Scheduler`.  Results are applied in run order
        when :meth:`run_item` reaches an item.  Without a schedule items run strictly one after
        the other."""
        self.role.recount(self.scheduler.schedule(items))

    def would_check(self, sc: Scenario, version: str) -> bool:
        """Whether item (``sc``, ``version``) would run and check anything: it applies here and
        cites a selected requirement."""
        return sc.inapplicable(version, self.target.transport) is None and any(self.is_selected(r) for r in sc.requirements)

    # -- running one scenario -------------------------------------------------------------------

    async def run_item(self, sc: Scenario, version: str) -> ItemResult:
        """Run one scenario for one version on the target's transport; record and grade.

        With a :meth:`schedule`, the item may have been started ahead of time: its result is
        awaited here.  Either way its findings reach :attr:`results` now, so the report does not
        depend on what overlapped."""
        return await self.scheduler.run_item(sc, version)

    def finished_ahead(self, sc: Scenario, version: str) -> bool:
        """Whether the item already ran ahead of :meth:`run_item` (and is done): :meth:`run_item`
        then only applies its findings."""
        return self.scheduler.finished_ahead(sc, version)

    async def execute(self, sc: Scenario, version: str, ops: list[Callable[[], None]]) -> ItemResult:
        """Run one item; what it found for the run's results is appended to ``ops``.  The same
        for both roles: what differs is the role's -- the context (:meth:`Role.new_context`), how
        the scenario is run (:meth:`Role.run_scenario`), what is released after it
        (:meth:`Role.release`) and what an item that checked nothing says (:meth:`Role.unchecked`)."""
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
        role = self.role
        ctx = role.new_context(sc, version, active)
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
            async with role.sharing():
                with anyio.fail_after(limit):
                    if overrun and limit <= 0:
                        raise TimeoutError
                    async with self.scheduler.hold(sc):
                        await role.run_scenario(sc, version, ctx)
        except Exception as raised:
            exc = _unwrap(raised)
            if isinstance(exc, ScenarioSkipped):
                skipped = exc.reason
            elif isinstance(exc, VersionUnusable):
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
            elif isinstance(exc, ScenarioError):
                error = (exc.kind, exc.message, exc.hint)
            elif isinstance(exc, PeerError) and role.peer_errors_are_verdicts:
                peer_exc = exc
            elif isinstance(exc, TimeoutError) and overrun:
                error = ("deadline", f"the run reached its deadline of {self.run_timeout:g} s (--run-timeout) "
                         f"{'before' if limit <= 0 else 'during'} scenario {sc.id}",
                         f"raise --run-timeout, or --timeout if the {getattr(self.target, 'role', 'server')} is merely slow")
            elif isinstance(exc, TimeoutError):
                error = ("harness", f"scenario {sc.id} did not finish within its deadline of {limit:g} s", None)
            elif isinstance(exc, PeerSilent) and role.peer_errors_are_verdicts:
                # no response headers (a GET stream that never opens...): an answer that never came
                peer_exc = ExpectTimeout("an answer over HTTP", self.timeout, [], detail=f"; {exc}")
            elif isinstance(exc, (TransportError, OSError)) and role.peer_errors_are_verdicts:
                err = target_error(exc, self.target, doing="running the scenario")
                error = ("target", err.message, err.hint)
            else:
                tb = "".join(traceback.format_exception(type(raised), raised, raised.__traceback__))
                error = ("harness", f"internal error in scenario {sc.id}: {exc!r}\n{tb}", None)
        finally:
            with anyio.CancelScope(shield=True):
                await role.release(ctx)
        if peer_exc is not None and error is None:
            error = await role.silent_target(ctx, version, peer_exc)
        item.duration = time.monotonic() - started
        if peer_exc is not None and error is None:
            problem, message, expected, actual = peer_error_violation(peer_exc)
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
                self._skip(ops, item, rid, version, skipped or role.unchecked(ctx, rid), sc.id, checked=False, add=False)
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
        return self.role.implementation()

    def answered(self) -> bool:
        """Whether the target sent any JSON-RPC message during the run (exit code 3 is for a target
        that never did, however many verdicts its silence earned)."""
        return self.role.answered()


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


class Hosted:
    """A context manager entered in a host task of the run: it stays open until ``close`` is set."""

    def __init__(self) -> None:
        self.obj: Any = None
        self.close = anyio.Event()
        self.done = anyio.Event()
        self.error: BaseException | None = None


async def _host_task(
    handle: Hosted,
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
