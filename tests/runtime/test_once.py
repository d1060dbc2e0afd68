"""``once`` scenarios: a probe that does not depend on the version under test runs once per run,
and every version's item judges what it got."""

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
from conformance.runtime.peer import RawPeer
from conformance.runtime.registry import ConnectionKind, Scenario, scenarios
from conformance.spec.versions import VERSIONS, Transport

from .conftest import PY, TINY

pytestmark = pytest.mark.anyio

TWO = ("2025-03-26", "2025-11-25")
REQ = "ping.response"


def make(func: Any) -> Scenario:
    return Scenario(
        id=f"test.{func.__name__}", func=func, requirements=(REQ,), role="server",
        versions=frozenset(VERSIONS), transports=frozenset(Transport), capability=None,
        connection=ConnectionKind.ONCE, doc="",
    )


async def run(sc: Scenario, versions: tuple[str, ...] = TWO, **kw: Any) -> tuple[Run[ServerRole], dict[str, Any]]:
    runner = server_run(Target(command=(PY, str(TINY))), versions=versions, timeout=5, **kw)
    runner.plan([sc])
    planned = dict(runner.role._fresh_needed)
    runner.schedule([(sc, v) for v in versions])
    items = {}
    async with anyio.create_task_group() as tg:
        await tg.start(runner.start)
        try:
            for v in versions:
                items[v] = await runner.run_item(sc, v)
        finally:
            await runner.aclose()
    return runner, {"planned": planned, "items": items}


@pytest.mark.parametrize("jobs", [1, 8])
async def test_every_version_judges_the_one_probe(jobs: int) -> None:
    probes: list[str] = []

    async def ping_once(ctx: ScenarioContext) -> None:
        async def probe(peer: RawPeer) -> Any:
            probes.append(ctx.version)
            return await peer.expect_response(await peer.request("ping"))

        env, peer = await ctx.once("ping-once", probe)
        ctx.check(REQ, env.result == {}, problem="NonEmptyPingResult", entries=[env])

    runner, got = await run(make(ping_once), jobs=jobs)
    assert got["planned"] == {TWO[0]: 1}  # one process planned for the run, on the first version
    assert len(probes) == 1
    own = [c.label for c in runner.connections if not c.shared]
    assert len(own) == 1 and own[0].startswith(f"{TWO[0]}/fresh#")
    for v in TWO:
        item = got["items"][v]
        assert item.outcome is Outcome.PASS, (v, item.error, item.reasons)
        res = runner.results[(REQ, v, "stdio")]
        assert res.transcript and {e["connection"] for e in res.transcript} == set(own)  # the evidence is the probe's


async def test_what_the_probe_raised_is_every_versions_verdict() -> None:
    calls: list[str] = []

    async def fails_once(ctx: ScenarioContext) -> None:
        async def probe(peer: RawPeer) -> Any:
            calls.append(ctx.version)
            raise RuntimeError("the probe broke")

        await ctx.once("fails-once", probe)
        ctx.check(REQ, True)

    _, got = await run(make(fails_once))
    assert len(calls) == 1  # by whichever version's item got there first (they run side by side)
    assert [got["items"][v].outcome for v in TWO] == [Outcome.ERROR, Outcome.ERROR]
    assert all("the probe broke" in (got["items"][v].error or "") for v in TWO)


async def test_a_cancelled_probe_is_run_again_by_the_next_version() -> None:
    calls: list[str] = []

    async def stalls_first(ctx: ScenarioContext) -> None:
        async def probe(peer: RawPeer) -> Any:
            calls.append(ctx.version)
            if len(calls) == 1:
                await anyio.sleep(60)
            return await peer.expect_response(await peer.request("ping"))

        env, _ = await ctx.once("stalls-first", probe)
        ctx.check(REQ, env.result == {}, entries=[env])

    sc = make(stalls_first)
    runner = server_run(Target(command=(PY, str(TINY))), versions=TWO, timeout=5, jobs=1)
    runner.plan([sc])
    async with anyio.create_task_group() as tg:
        await tg.start(runner.start)
        try:
            with anyio.move_on_after(1) as scope:  # the first version's item is cancelled mid-probe
                await runner.run_item(sc, TWO[0])
            assert scope.cancelled_caught
            assert "stalls-first" not in runner.role._once  # not cached: the next version's item runs it
            item = await runner.run_item(sc, TWO[1])
            assert item.outcome is Outcome.PASS, (item.error, item.reasons)
        finally:
            await runner.aclose()
    assert calls == list(TWO)


def test_the_unsupported_version_probe_is_once_and_nothing_version_specific_is() -> None:
    once = {s.id for s in scenarios("server") if s.connection is ConnectionKind.ONCE}
    assert once == {"lifecycle.unsupported_version"}
    sc = next(s for s in scenarios("server") if s.id == "lifecycle.unsupported_version")
    runner = server_run(Target(command=(PY, str(TINY))), versions=tuple(VERSIONS))
    runner.plan([sc, replace(sc, id="lifecycle.unsupported_version_copy", connection=ConnectionKind.FRESH)])
    # the copy asks once per version that has initialize; the once scenario only on the first
    assert runner.role._fresh_needed == {"2024-11-05": 2, "2025-03-26": 1, "2025-06-18": 1, "2025-11-25": 1}


def test_the_probe_is_planned_on_the_first_version_whose_item_runs() -> None:
    async def noop(ctx: ScenarioContext) -> None:
        pass

    sc = make(noop)
    three = ("2025-03-26", "2025-06-18", "2025-11-25")
    runner = server_run(Target(command=(PY, str(TINY))), versions=three)
    runner.plan([sc])
    assert runner.role._fresh_needed == {three[0]: 1}
    runner.schedule([(sc, three[1]), (sc, three[2])])  # the first version's item deselected
    assert runner.role._once_home[sc.id] == three[1]
    assert {v: n for v, n in runner.role._fresh_needed.items() if n} == {three[1]: 1}
    runner.schedule([])
    assert sc.id not in runner.role._once_home and not any(runner.role._fresh_needed.values())
