"""The order items run in, for either role: one scheduler, configured by the role.

The plugin asks for items one at a time, in run order (:meth:`Scheduler.run_item`); the
scheduler may have started some of them ahead (on connections or client runs of their own, a few
at once), and applies what each found to the run's results only when its turn comes, so the
report does not depend on what overlapped (``--jobs 1`` is the strictly sequential reference).
The role says how, through a :class:`Policy`:

* which items start ahead of their turn (``ahead``), and how many at once (``slots``);
* ``paced`` (the server role): a version's ahead items start once the version is warmed (its
  shared handshake settled first), in run order, each once its phase allows (a positive scenario
  ``order`` waits for every lower one of its version) and a slot is free; the other items of each
  version run in a *lane* of their own, ``lanes`` versions side by side;
* not paced (the client role): every ahead item starts at the first :meth:`Scheduler.run_item`,
  the ``waits`` ones first, and takes its slot inside its own deadline (a ``waits`` one on
  ``wait_slots`` of their own).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncContextManager, Awaitable, Callable, Iterable

import anyio

from conformance.runtime.registry import Scenario
from conformance.runtime.records import ItemResult

if TYPE_CHECKING:
    from conformance.runtime.run import Run

__all__ = ["Policy", "Scheduler"]


@dataclass(frozen=True)
class Policy:
    """How a role's items are scheduled (see the module's docstring)."""

    #: whether an item starts ahead of its turn
    ahead: Callable[[Scenario, str], bool]
    #: ahead items at once
    slots: int
    #: paced (server) or all at the first item (client)
    paced: bool = True
    #: versions whose in-order items run side by side (paced only; 1: the plugin's turn runs them)
    lanes: int = 1
    #: before a version's ahead items start (paced): what they should find settled
    settle: Callable[[str], Awaitable[None]] | None = None
    #: not paced: ``waits`` items at once, beside the others (0: they take the common slots)
    wait_slots: int = 0


class _Ahead:
    """An item started ahead of its turn by a lane or the feeder (or queued for one)."""

    def __init__(self) -> None:
        self.state = "queued"  # queued -> running -> done; or inline (run_item ran it itself)
        self.done = anyio.Event()
        self.item: ItemResult | None = None
        self.raised: BaseException | None = None
        self.ops: list[Callable[[], None]] = []


def _apply(ops: list[Callable[[], None]]) -> None:
    for op in ops:
        op()
    ops.clear()


class Scheduler:
    """The run order of one run's items, what started ahead, and the slots they take."""

    def __init__(self, run: "Run[Any]", policy: Policy) -> None:
        self.run = run
        self.policy = policy
        self.lanes = policy.lanes if policy.paced else 1
        self._order: list[tuple[Scenario, str]] = []  # every item, in run order
        self._schedule: dict[str, list[Scenario]] = {}  # version -> its items, in run order
        self._ahead: dict[tuple[str, str], _Ahead] = {}  # (scenario id, version) -> state
        self._unfinished: dict[str, dict[int, int]] = {}  # version -> scenario order -> items not finished
        self._done_keys: set[tuple[str, str]] = set()
        self._scheduled_keys: set[tuple[str, str]] = set()
        self._progress: Any = None  # anyio.Event, set (and replaced) whenever an item finishes
        self._slots: Any = None  # anyio.Semaphore: ahead items running at once
        self._wait_slots: Any = None  # anyio.Semaphore: (not paced) ``waits`` items at once
        self._lane_slots: Any = None  # anyio.Semaphore: versions running at once
        self._started = False  # lanes (paced) or every ahead item (not paced)
        self._current: str | None = None

    def open(self) -> None:
        """In the run's event loop, before any item."""
        self._progress = anyio.Event()
        self._slots = anyio.Semaphore(max(1, self.policy.slots))
        self._wait_slots = anyio.Semaphore(max(1, self.policy.wait_slots))
        self._lane_slots = anyio.Semaphore(max(1, self.lanes))

    def schedule(self, items: Iterable[tuple[Scenario, str]]) -> dict[str, list[Scenario]]:
        """The (scenario, version) items the run will execute, in run order (after deselection);
        returns them by version."""
        self._order = []
        self._schedule = {}
        self._unfinished = {}
        self._scheduled_keys = set()
        for sc, version in items:
            if (sc.id, version) in self._scheduled_keys:
                continue
            self._scheduled_keys.add((sc.id, version))
            self._order.append((sc, version))
            self._schedule.setdefault(version, []).append(sc)
            counts = self._unfinished.setdefault(version, {})
            counts[sc.order] = counts.get(sc.order, 0) + 1
        return self._schedule

    # -- items started ahead ---------------------------------------------------------------

    def _start(self) -> None:
        """At the first item: the lanes (paced), or every ahead item (not paced)."""
        tg = self.run.tg
        if self._started or tg is None or not self._order:
            return
        if not self.policy.paced:
            if not any(self.policy.ahead(sc, version) for sc, version in self._order):
                return
            self._started = True
            # the waiting runs start first: they take the longest and use the least
            for sc, version in sorted(self._order, key=lambda item: not item[0].waits):
                if self.policy.ahead(sc, version):
                    ahead = self._ahead[(sc.id, version)] = _Ahead()
                    ahead.state = "running"
                    tg.start_soon(self._run_ahead, sc, version, ahead)
            return
        if self.lanes <= 1:
            return
        self._started = True
        for version in self.run.versions:
            todo = []
            for sc in self._schedule.get(version, ()):
                key = (sc.id, version)
                if key in self._ahead or self.policy.ahead(sc, version):
                    continue  # the feeder's (queued when the version is warmed)
                self._ahead[key] = _Ahead()
                todo.append(sc)
            if todo:
                tg.start_soon(self._lane, version, todo)

    def start_version(self, version: str) -> None:
        """(Paced) the version is warmed: its ahead items start, in run order, as their phase
        and the slots allow."""
        if not self.policy.paced or self.run.tg is None:
            return
        todo = []
        for sc in self._schedule.get(version, ()):
            key = (sc.id, version)
            if self.policy.ahead(sc, version) and key not in self._ahead:
                self._ahead[key] = _Ahead()
                todo.append(sc)
        if todo:
            self.run.tg.start_soon(self._feed, version, todo)

    async def _lane(self, version: str, todo: list[Scenario]) -> None:
        async with self._lane_slots:
            self.run.role.warm(version)
            for sc in todo:
                ahead = self._ahead[(sc.id, version)]
                if ahead.state == "queued":
                    ahead.state = "running"
                    await self._lower_orders_done(version, sc.order)
                    await self._run_ahead(sc, version, ahead)
                else:  # run_item reached it before the lane did: keep the order
                    await ahead.done.wait()

    async def _feed(self, version: str, todo: list[Scenario]) -> None:
        """Start the queued items of ``version`` in run order, as their phase allows."""
        if self.policy.settle is not None:
            # what they find settled (a failed handshake is cached and reported by every item of
            # the version, as when items run in order)
            await self.policy.settle(version)
        for sc in todo:
            ahead = self._ahead[(sc.id, version)]
            await self._lower_orders_done(version, sc.order)
            if ahead.state != "queued":
                continue
            await self._slots.acquire()
            if ahead.state != "queued":  # run_item reached it meanwhile
                self._slots.release()
                continue
            ahead.state = "running"
            self.run.tg.start_soon(self._run_fed, sc, version, ahead)

    async def _run_fed(self, sc: Scenario, version: str, ahead: _Ahead) -> None:
        try:
            await self._run_ahead(sc, version, ahead)
        finally:
            self._slots.release()

    async def _run_ahead(self, sc: Scenario, version: str, ahead: _Ahead) -> None:
        try:
            ahead.item = await self.run.execute(sc, version, ahead.ops)
        except anyio.get_cancelled_exc_class():
            ahead.raised = RuntimeError(f"scenario {sc.id} [{version}] was cancelled")
            raise
        except BaseException as exc:  # for run_item to raise, as if it had run the item itself
            ahead.raised = exc
        finally:
            ahead.state = "done"
            ahead.done.set()
            self._finished((sc.id, version), version, sc.order)

    def hold(self, sc: Scenario) -> AsyncContextManager[Any]:
        """What an item holds while its scenario runs (inside its deadline): not paced, its slot
        (a ``waits`` one, with more than one slot, one of its own)."""
        if self.policy.paced:
            return contextlib.nullcontext()
        return self._wait_slots if sc.waits and self.policy.wait_slots and self.policy.slots > 1 else self._slots

    # -- phases -----------------------------------------------------------------------------

    async def _lower_orders_done(self, version: str, order: int) -> None:
        """(Paced) for an item of positive ``order`` (one that runs after the others, like the
        transcript-wide checks): wait until every scheduled item of ``version`` with a lower order
        has finished.  Order 0 and below only say which items start first."""
        if order <= 0 or not self.policy.paced:
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

    # -- the plugin's turn ------------------------------------------------------------------

    async def _enter_version(self, version: str) -> None:
        if version == self._current:
            return
        previous, self._current = self._current, version
        role = self.run.role
        role.warm(version)
        versions = self.run.versions
        if version in versions:
            i = versions.index(version)
            if i + 1 < len(versions):
                role.warm(versions[i + 1])
        if previous is not None and self.run.tg is not None:
            self.run.tg.start_soon(role.retire, previous)

    async def run_item(self, sc: Scenario, version: str) -> ItemResult:
        """The item's turn: its result (awaited if it started ahead), applied to the run's results now."""
        self._start()
        await self._enter_version(version)
        key = (sc.id, version)
        ahead = self._ahead.get(key)
        if ahead is not None and ahead.state != "queued":
            await ahead.done.wait()
            if ahead.raised is not None:
                raise ahead.raised
            assert ahead.item is not None
            _apply(ahead.ops)
            return ahead.item
        if ahead is not None:
            ahead.state = "inline"  # reached before the feeder started it: run it here
        await self._lower_orders_done(version, sc.order)
        ops: list[Callable[[], None]] = []
        try:
            return await self.run.execute(sc, version, ops)
        finally:
            _apply(ops)
            self._finished(key, version, sc.order)
            if ahead is not None:
                ahead.done.set()  # a lane waiting for it goes on

    def finished_ahead(self, sc: Scenario, version: str) -> bool:
        """Whether the item already ran ahead of its turn (and is done): :meth:`run_item` then
        only applies its findings."""
        ahead = self._ahead.get((sc.id, version))
        return ahead is not None and ahead.state == "done"
