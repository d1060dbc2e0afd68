"""Overlapping items on stdio: fresh scenarios start ahead of time, results land in run order."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import pytest

from conformance.runtime.connect import Target
from conformance.runtime.run import Run
from conformance.server.context import ScenarioContext
from conformance.server.role import ServerRole, server_run
from conformance.spec.outcomes import Outcome
from conformance.runtime.registry import ConnectionKind, Scenario
from conformance.spec.versions import VERSIONS, Transport

from .conftest import PY, TINY

pytestmark = pytest.mark.anyio

V = "2025-11-25"
DEADLINE = 10  # seconds: only reached when the runner is broken


def make(func: Any, requirement: str, *, fresh: bool, order: int = 0, sid: str | None = None) -> Scenario:
    return Scenario(
        id=sid or f"test.{func.__name__}", func=func, requirements=(requirement,), role="server",
        versions=frozenset(VERSIONS), transports=frozenset(Transport), capability=None,
        connection=ConnectionKind.FRESH if fresh else ConnectionKind.SHARED, doc="", order=order,
    )


@asynccontextmanager
async def running(items: list[tuple[Scenario, str]] | None, *, versions: tuple[str, ...] = (V,), **kw: Any) -> AsyncIterator[Run[ServerRole]]:
    runner = server_run(Target(command=(PY, str(TINY))), versions=versions, timeout=5, **kw)
    if items is not None:
        runner.plan([sc for sc, _ in items])
        runner.schedule(items)
    async with anyio.create_task_group() as tg:
        await tg.start(runner.start)
        try:
            yield runner
        finally:
            await runner.aclose()


async def test_fresh_items_run_at_the_same_time_and_their_results_land_in_run_order() -> None:
    started = {name: anyio.Event() for name in ("a", "b", "c")}

    def fresh_item(name: str, requirement: str) -> Scenario:
        async def scenario(ctx: ScenarioContext) -> None:
            peer = await ctx.connect(fresh=True)
            started[name].set()
            with anyio.fail_after(DEADLINE):  # only possible when all three are under way together
                for event in started.values():
                    await event.wait()
            env = await peer.expect_response(await peer.request("ping"))
            ctx.check(requirement, True, entries=[env])

        return make(scenario, requirement, fresh=True, sid=f"test.fresh_{name}")

    a = fresh_item("a", "ping.response")
    b = fresh_item("b", "jsonrpc.error.method-not-found")
    c = fresh_item("c", "lifecycle.initialize.result")
    items = [(a, V), (b, V), (c, V)]
    async with running(items) as runner:
        first = await runner.run_item(a, V)
        assert first.outcome is Outcome.PASS
        # b and c finished too (a waited for them), but their findings wait for their turn
        assert started["b"].is_set() and started["c"].is_set()
        assert runner.result("jsonrpc.error.method-not-found", V).checks == 0
        assert (await runner.run_item(b, V)).outcome is Outcome.PASS
        assert runner.result("jsonrpc.error.method-not-found", V).checks == 1
        assert runner.result("lifecycle.initialize.result", V).checks == 0
        assert (await runner.run_item(c, V)).outcome is Outcome.PASS
        assert runner.result("lifecycle.initialize.result", V).outcome is Outcome.PASS


async def test_an_item_of_a_later_phase_starts_only_after_the_earlier_phase_finished() -> None:
    log: list[str] = []

    async def early(ctx: ScenarioContext) -> None:
        peer = await ctx.connect()
        log.append("early started")
        # with the phase boundary broken, the fresh later-phase item would start meanwhile
        with anyio.move_on_after(0.5):
            while "late started" not in log:
                await peer.expect_response(await peer.request("ping"))
        log.append("early finished")
        ctx.check("ping.response", True)

    async def late(ctx: ScenarioContext) -> None:
        log.append("late started")
        peer = await ctx.connect(fresh=True)
        env = await peer.expect_response(await peer.request("ping"))
        ctx.check("jsonrpc.error.method-not-found", True, entries=[env])

    first = make(early, "ping.response", fresh=False, order=0)
    second = make(late, "jsonrpc.error.method-not-found", fresh=True, order=900)
    async with running([(first, V), (second, V)]) as runner:
        await runner.run_item(first, V)
        item = await runner.run_item(second, V)
    assert item.outcome is Outcome.PASS
    assert log == ["early started", "early finished", "late started"]


async def test_items_outside_the_schedule_never_run() -> None:
    ran: list[str] = []

    async def scheduled(ctx: ScenarioContext) -> None:
        ran.append("scheduled")
        await ctx.connect(fresh=True)
        ctx.check("ping.response", True)

    async def deselected(ctx: ScenarioContext) -> None:
        ran.append("deselected")
        ctx.check("jsonrpc.error.method-not-found", True)

    kept = make(scheduled, "ping.response", fresh=True)
    dropped = make(deselected, "jsonrpc.error.method-not-found", fresh=True)
    async with running([(kept, V)]) as runner:
        runner.plan([dropped])
        await runner.run_item(kept, V)
    assert ran == ["scheduled"]
    assert runner.result("jsonrpc.error.method-not-found", V).checks == 0


async def test_items_run_alongside_each_other_on_every_transport_unless_jobs_is_1() -> None:
    # fresh connections are processes of their own on stdio and sessions of their own over HTTP
    url = "http://127.0.0.1:1/mcp"
    http = server_run(Target(transport=Transport.STREAMABLE_HTTP, url=url), versions=(V,))
    sse = server_run(Target(transport=Transport.SSE, url=url), versions=(V,))
    stdio = server_run(Target(command=(PY, str(TINY))), versions=(V,))
    assert (http.role.detach, sse.role.detach, stdio.role.detach) == (True, True, True)
    assert http.jobs >= 3 and sse.jobs >= 3 and stdio.jobs >= 3
    assert server_run(Target(command=(PY, str(TINY))), versions=(V,), detach=False).role.detach is False
    assert server_run(Target(command=(PY, str(TINY))), versions=(V,), jobs=1).role.detach is False  # --jobs 1
    assert server_run(Target(transport=Transport.STREAMABLE_HTTP, url=url), versions=(V,), jobs=1).role.detach is False
    assert server_run(Target(command=(PY, str(TINY))), versions=(V,), jobs=2).role.detach is True


async def test_items_of_order_zero_do_not_wait_for_those_that_merely_start_first() -> None:
    late_started = anyio.Event()

    async def first(ctx: ScenarioContext) -> None:
        await ctx.connect()
        with anyio.fail_after(DEADLINE):  # the fresh item of order 0 runs meanwhile
            await late_started.wait()
        ctx.check("ping.response", True)

    async def then(ctx: ScenarioContext) -> None:
        late_started.set()
        await ctx.connect(fresh=True)
        ctx.check("jsonrpc.error.method-not-found", True)

    early = make(first, "ping.response", fresh=False, order=-1)
    late = make(then, "jsonrpc.error.method-not-found", fresh=True, order=0)
    async with running([(early, V), (late, V)]) as runner:
        assert (await runner.run_item(early, V)).outcome is Outcome.PASS
        assert (await runner.run_item(late, V)).outcome is Outcome.PASS


async def test_a_stdio_server_slower_to_start_than_the_answer_timeout_still_gets_its_handshake() -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        peer = await ctx.connect()
        env = await peer.expect_response(await peer.request("ping"))
        ctx.check("ping.response", True, entries=[env])

    # start-up (1.5 s here, seconds for any interpreter on a loaded machine) counts against the
    # start-up deadline, not against the 1 s allowed for each answer
    slow = ("sh", "-c", f"sleep 1.5; exec {PY} {TINY}")
    runner = server_run(Target(command=slow, startup_timeout=5.0), versions=(V,), timeout=1)
    async with anyio.create_task_group() as tg:
        await tg.start(runner.start)
        try:
            item = await runner.run_item(make(scenario, "ping.response", fresh=False), V)
        finally:
            await runner.aclose()
    assert item.outcome is Outcome.PASS, item.error


# -- versions side by side: each version's items in order run in a lane of their own -------------

W = "2025-06-18"


async def test_each_versions_items_in_order_run_side_by_side_with_the_other_versions() -> None:
    log: list[str] = []
    under_way = {W: anyio.Event(), V: anyio.Event()}

    async def first(ctx: ScenarioContext) -> None:
        peer = await ctx.connect()
        log.append(f"first {ctx.version}")
        under_way[ctx.version].set()
        with anyio.fail_after(DEADLINE):  # only possible when both versions' items are under way together
            for event in under_way.values():
                await event.wait()
        env = await peer.expect_response(await peer.request("ping"))
        log.append(f"first {ctx.version} done")
        ctx.check("ping.response", True, entries=[env])

    async def second(ctx: ScenarioContext) -> None:
        log.append(f"second {ctx.version}")  # after its version's first item, never before
        await ctx.connect()
        ctx.check("jsonrpc.error.method-not-found", True)

    a = make(first, "ping.response", fresh=False)
    b = make(second, "jsonrpc.error.method-not-found", fresh=False)
    items = [(a, W), (b, W), (a, V), (b, V)]
    async with running(items, versions=(W, V)) as runner:
        assert runner.scheduler.lanes >= 2
        assert (await runner.run_item(a, W)).outcome is Outcome.PASS
        assert (await runner.run_item(b, W)).outcome is Outcome.PASS
        # V's first item ran meanwhile (W's waited for it to start), its findings wait for their turn
        assert f"first {V}" in log
        assert runner.result("ping.response", V).checks == 0
        assert (await runner.run_item(a, V)).outcome is Outcome.PASS
        assert runner.result("ping.response", V).outcome is Outcome.PASS
        assert (await runner.run_item(b, V)).outcome is Outcome.PASS
    for version in (W, V):
        assert log.index(f"second {version}") > log.index(f"first {version} done")


async def test_with_jobs_1_the_versions_run_one_after_the_other() -> None:
    log: list[str] = []

    async def item(ctx: ScenarioContext) -> None:
        log.append(f"start {ctx.version}")
        peer = await ctx.connect()
        await peer.expect_response(await peer.request("ping"))
        log.append(f"end {ctx.version}")
        ctx.check("ping.response", True)

    sc = make(item, "ping.response", fresh=False)
    async with running([(sc, W), (sc, V)], versions=(W, V), jobs=1) as runner:
        assert runner.scheduler.lanes == 1
        await runner.run_item(sc, W)
        await runner.run_item(sc, V)
    assert log == [f"start {W}", f"end {W}", f"start {V}", f"end {V}"]


async def test_an_item_reached_before_its_versions_lane_started_keeps_the_order() -> None:
    # every lane slot taken: run_item runs V's first item itself; V's lane, once it starts, must
    # not run V's second item before that one has finished
    log: list[str] = []
    release = anyio.Event()

    async def slow_first(ctx: ScenarioContext) -> None:
        log.append(f"first {ctx.version}")
        await ctx.connect()
        if ctx.version == V:
            with anyio.fail_after(DEADLINE):
                await release.wait()
        log.append(f"first {ctx.version} done")
        ctx.check("ping.response", True)

    async def second(ctx: ScenarioContext) -> None:
        log.append(f"second {ctx.version}")
        ctx.check("jsonrpc.error.method-not-found", True)

    a = make(slow_first, "ping.response", fresh=False)
    b = make(second, "jsonrpc.error.method-not-found", fresh=False)
    async with running([(a, W), (b, W), (a, V), (b, V)], versions=(W, V)) as runner:
        assert runner.scheduler.lanes >= 2
        runner.scheduler._start()
        for _ in range(runner.scheduler.lanes):  # before the lanes' tasks run: none of them can start
            runner.scheduler._lane_slots.acquire_nowait()
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner.run_item, a, V)
            with anyio.fail_after(DEADLINE):
                while f"first {V}" not in log:
                    await anyio.sleep(0.01)
            for _ in range(runner.scheduler.lanes):  # the lanes start: V's waits for its first item
                runner.scheduler._lane_slots.release()
            with anyio.fail_after(DEADLINE):
                await runner.scheduler._ahead[(b.id, W)].done.wait()
            await anyio.wait_all_tasks_blocked()
            assert f"second {V}" not in log
            release.set()
        assert (await runner.run_item(b, V)).outcome is Outcome.PASS
    assert log.index(f"second {V}") > log.index(f"first {V} done")
