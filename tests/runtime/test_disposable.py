"""Disposable items on stdio take turns on one connection while it stays healthy."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import pytest

from conformance.runtime.connect import Target
from conformance.runtime.run import Run
from conformance.server.context import ScenarioContext
from conformance.server.role import ServerRole, server_run
from conformance.spec.outcomes import Outcome
from conformance.runtime.registry import ConnectionKind, Scenario
from conformance.spec.versions import VERSIONS, Transport
from conformance.wire.transcript import Direction

from .conftest import PY, TINY

pytestmark = pytest.mark.anyio

V = "2025-11-25"


def make(func: Any, requirement: str, *, disposable: bool = True) -> Scenario:
    return Scenario(
        id=f"test.{func.__name__}", func=func, requirements=(requirement,), role="server",
        versions=frozenset(VERSIONS), transports=frozenset(Transport), capability=None,
        connection=ConnectionKind.DISPOSABLE if disposable else ConnectionKind.FRESH, doc="",
    )


async def run(items: list[Scenario], **kw: Any) -> Run[ServerRole]:
    runner = server_run(Target(command=(PY, str(TINY))), versions=(V,), timeout=5, **kw)
    runner.plan(items)
    runner.schedule([(sc, V) for sc in items])
    async with anyio.create_task_group() as tg:
        await tg.start(runner.start)
        try:
            for sc in items:
                item = await runner.run_item(sc, V)
                assert item.outcome is Outcome.PASS, (sc.id, item.error, item.reasons)
        finally:
            await runner.aclose()
    return runner


def answers_a_ping(pids: list[int]) -> Scenario:
    """A disposable item that notes its connection's process and needs it to answer a ping."""
    async def after(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(fresh=True)
        pids.append(peer.transport.pid)
        env = await peer.expect_response(await peer.request("ping"))
        ctx.check("jsonrpc.error.method-not-found", True, entries=[env])

    return make(after, "jsonrpc.error.method-not-found")


async def test_disposable_items_share_a_process_and_start_with_nothing_left_over() -> None:
    pids: list[int] = []
    leftovers: list[int] = []

    async def leaves_a_message(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(fresh=True)
        pids.append(peer.transport.pid)
        await peer.request("ping")  # its answer is never read
        ctx.check("ping.response", True)

    async def finds_nothing(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(fresh=True)
        pids.append(peer.transport.pid)
        leftovers.append(len(peer.unconsumed()))
        env = await peer.expect_response(await peer.request("ping"))
        ctx.check("jsonrpc.error.method-not-found", True, entries=[env])

    runner = await run([make(leaves_a_message, "ping.response"), make(finds_nothing, "jsonrpc.error.method-not-found")])
    assert len(set(pids)) == 1
    assert leftovers == [0]
    assert sum(1 for c in runner.connections if not c.shared) == 1


async def test_a_connection_a_disposable_item_ended_is_not_handed_on() -> None:
    pids: list[int] = []

    async def closes_stdin(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(fresh=True)
        pids.append(peer.transport.pid)
        await peer.transport.close_stdin()
        await peer.transport.wait_exit(5)
        ctx.check("ping.response", True)

    await run([make(closes_stdin, "ping.response"), answers_a_ping(pids)])
    assert len(set(pids)) == 2


async def test_fresh_items_that_are_not_disposable_have_their_own_and_jobs_1_takes_turns_too() -> None:
    pids: list[int] = []

    async def own(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(fresh=True)
        pids.append(peer.transport.pid)
        ctx.check(ctx.scenario.requirements[0], True)

    a = make(own, "ping.response", disposable=False)
    await run([a, replace(a, id="test.own_b", requirements=("jsonrpc.error.method-not-found",))])
    assert len(set(pids)) == 2  # each its own process
    pids.clear()
    c = make(own, "ping.response")
    await run([c, replace(c, id="test.own_d", requirements=("jsonrpc.error.method-not-found",))], jobs=1)
    assert len(set(pids)) == 1  # the sequential reference takes turns too


def test_only_stdio_connections_are_shared_between_disposable_items() -> None:
    async def noop(ctx: ScenarioContext) -> None:
        pass

    sc = make(noop, "ping.response")
    http = server_run(Target(transport=Transport.STREAMABLE_HTTP, url="http://127.0.0.1:1/mcp"), versions=(V,))
    stdio = server_run(Target(command=(PY, str(TINY))), versions=(V,))
    assert stdio.role.shares_disposable(sc) and not http.role.shares_disposable(sc)
    fresh = make(noop, "ping.response", disposable=False)
    assert not stdio.role.shares_disposable(fresh) and stdio.role.own_connection(fresh)
    from conformance.runtime.registry import scenarios

    disposable = {s.id for s in scenarios("server") if s.connection is ConnectionKind.DISPOSABLE}
    assert disposable >= {"jsonrpc.invalid_json", "lifecycle.stdio_shutdown"}


def test_an_apart_scenario_has_a_session_of_its_own_over_http_and_the_shared_one_on_stdio() -> None:
    async def noop(ctx: ScenarioContext) -> None:
        pass

    sc = replace(make(noop, "ping.response"), connection=ConnectionKind.APART)
    plain = replace(sc, connection=ConnectionKind.SHARED)
    for transport in (Transport.STREAMABLE_HTTP, Transport.SSE):
        http = server_run(Target(transport=transport, url="http://127.0.0.1:1/mcp"), versions=(V,))
        http.schedule([(sc, V), (plain, V)])
        assert http.role.own_connection(sc) and http.scheduler.policy.ahead(sc, V)  # runs beside the items in order
        assert not http.role.own_connection(plain) and not http.scheduler.policy.ahead(plain, V)
    stdio = server_run(Target(command=(PY, str(TINY))), versions=(V,))
    assert not stdio.role.own_connection(sc) and not stdio.scheduler.policy.ahead(sc, V)
    from conformance.runtime.registry import scenarios

    assert "cancellation.cancelled_call_unanswered" in {s.id for s in scenarios("server") if s.connection is ConnectionKind.APART}


async def test_a_part_run_alone_waits_for_the_items_running_and_keeps_later_ones_out() -> None:
    from conformance.server.server_wide import ServerWide as _ServerWide

    wide = _ServerWide()
    log: list[str] = []
    first_in = anyio.Event()
    release = anyio.Event()

    async def together(name: str, hold: bool) -> None:
        async with wide.together():
            log.append(f"{name} in")
            if hold:
                first_in.set()
                await release.wait()
            log.append(f"{name} out")

    async def alone() -> None:
        async with wide.alone():
            log.append("alone in")
            await anyio.sleep(0)
            log.append("alone out")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(together, "a", True)
            await first_in.wait()
            tg.start_soon(alone)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(together, "b", False)  # comes after the one waiting to run alone: waits for it
            await anyio.wait_all_tasks_blocked()
            assert log == ["a in"]
            release.set()
    assert log == ["a in", "a out", "alone in", "alone out", "b in", "b out"]


def test_the_server_wide_lock_exists_only_where_sessions_share_a_server() -> None:
    async def main() -> tuple[bool, bool, bool]:
        out = []
        for runner in (server_run(Target(transport=Transport.STREAMABLE_HTTP, url="http://127.0.0.1:1/mcp"), versions=(V,)),
                       server_run(Target(transport=Transport.STREAMABLE_HTTP, url="http://127.0.0.1:1/mcp"), versions=(V,), jobs=1),
                       server_run(Target(command=(PY, str(TINY))), versions=(V,))):
            async with anyio.create_task_group() as tg:
                await tg.start(runner.start)
                out.append(runner.role._server_wide is not None)
                await runner.aclose()
        return tuple(out)

    assert anyio.run(main) == (True, False, False)


async def test_an_item_running_together_goes_alone_for_a_part_of_it() -> None:
    from conformance.server.server_wide import ServerWide as _ServerWide

    wide = _ServerWide()
    log: list[str] = []
    other_in = anyio.Event()
    release = anyio.Event()

    async def other() -> None:
        async with wide.together():
            log.append("other in")
            other_in.set()
            await release.wait()
            log.append("other out")

    async def partly_alone() -> None:
        async with wide.together():
            log.append("item in")
            async with wide.alone_within():  # waits for "other", not for itself
                log.append("alone in")
                await anyio.sleep(0)
                log.append("alone out")
            log.append("item out")

    async def late() -> None:
        async with wide.together():
            log.append("late in")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(other)
            await other_in.wait()
            tg.start_soon(partly_alone)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(late)  # after the item asked to go alone: waits for it
            await anyio.wait_all_tasks_blocked()
            assert log == ["other in", "item in"]
            release.set()
    assert log == ["other in", "item in", "other out", "alone in", "alone out", "item out", "late in"]
    assert wide.running == 0 and not wide.alone_running and not wide.alone_waiting


async def test_a_part_run_alone_does_not_wait_for_an_item_that_stepped_aside() -> None:
    """An item watching its own request steps aside: a part that runs alone starts at once; the
    watcher takes its place back only once that part has ended (also when it is cancelled)."""
    from conformance.server.server_wide import ServerWide as _ServerWide

    wide = _ServerWide()
    log: list[str] = []
    watching = anyio.Event()
    watched = anyio.Event()

    async def watcher() -> None:
        async with wide.together():
            async with wide.aside():
                log.append("watch")
                watching.set()
                await watched.wait()
            log.append("watcher back")

    async def partly_alone() -> None:
        async with wide.together():
            async with wide.alone_within():
                log.append("alone in")
                watched.set()  # the watch ends while the part runs alone
                await anyio.wait_all_tasks_blocked()
                log.append("alone out")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watcher)
            await watching.wait()
            tg.start_soon(partly_alone)
    assert log == ["watch", "alone in", "alone out", "watcher back"]
    assert wide.running == 0 and not wide.alone_running and not wide.alone_waiting

    async def cancelled_while_aside() -> None:
        with anyio.move_on_after(0.01):
            async with wide.together():
                async with wide.aside():
                    await anyio.sleep_forever()

    with anyio.fail_after(5):
        await cancelled_while_aside()
    assert wide.running == 0


async def test_a_pristine_disposable_item_hands_its_connection_on_once_it_initialized_it() -> None:
    pids: list[int] = []

    async def initializes_itself(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(initialize=False, fresh=True)
        pids.append(peer.transport.pid)
        assert not [e for e in peer.transcript.entries if e.direction == Direction.OUT]  # pristine: nothing sent yet
        env = await peer.initialize(protocol_version=ctx.version)
        ctx.check("ping.response", True, entries=[env])

    runner = await run([make(initializes_itself, "ping.response"), answers_a_ping(pids)])
    assert len(set(pids)) == 1
    assert sum(1 for c in runner.connections if not c.shared) == 1


@pytest.mark.parametrize("leaves", ["uninitialized", "no-initialized-notification", "another-version"])
async def test_a_pristine_disposable_item_that_did_not_initialize_its_connection_keeps_it(leaves: str) -> None:
    pids: list[int] = []
    other = next(v for v in VERSIONS if v != V and v != "2026-07-28")

    async def pristine(ctx: ScenarioContext) -> None:
        peer = await ctx.connect(initialize=False, fresh=True)
        pids.append(peer.transport.pid)
        if leaves == "no-initialized-notification":
            await peer.initialize(protocol_version=ctx.version, send_initialized=False)
        elif leaves == "another-version":
            await peer.initialize(protocol_version=other)  # a session of another version
        ctx.check("ping.response", True)

    await run([make(pristine, "ping.response"), answers_a_ping(pids)])
    assert len(set(pids)) == 2
