"""The run (server role) and ScenarioContext: connections, grading, skip reasons, errors (no pytest plugin)."""

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

from .conftest import BAD, PY, TINY

pytestmark = pytest.mark.anyio

V = "2025-11-25"


def make(func: Any, *requirements: str, capability: str | None = None, fresh: bool = False,
         versions: Any = VERSIONS, skip_reason: str | None = None) -> Scenario:
    return Scenario(
        id=f"test.{func.__name__}", func=func, requirements=tuple(requirements), role="server",
        versions=frozenset(versions), transports=frozenset(Transport), capability=capability,
        connection=ConnectionKind.FRESH if fresh else ConnectionKind.SHARED, doc="", skip_reason=skip_reason,
    )


@asynccontextmanager
async def running(command: tuple[str, ...] = (PY, str(TINY)), *, versions: Any = (V,), **kw: Any) -> AsyncIterator[Run[ServerRole]]:
    runner = server_run(Target(command=command), versions=versions, timeout=2, **kw)
    async with anyio.create_task_group() as tg:
        await tg.start(runner.start)
        try:
            yield runner
        finally:
            await runner.aclose()


@pytest.mark.parametrize(
    ("requirement", "strict", "expected"),
    [
        ("ping.response", False, Outcome.FAIL),  # MUST
        ("ping.response", True, Outcome.FAIL),
        ("discover.server-info", False, Outcome.WARNING),  # SHOULD
        ("discover.server-info", True, Outcome.FAIL),
    ],
)
async def test_a_violation_is_graded_by_level_and_strictness(requirement: str, strict: bool, expected: Outcome) -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        ctx.check(requirement, False, problem="ThingWrong", expected=1, actual=2)

    version = "2026-07-28" if requirement.startswith("discover") else V
    async with running(versions=(version,), strict=strict) as runner:
        item = await runner.run_item(make(scenario, requirement), version)
    assert item.outcome is expected
    res = runner.result(requirement, version)
    assert res.outcome is expected and res.checks == 1
    (v,) = res.violations
    assert (v["problem"], v["expected"], v["actual"], v["outcome"]) == ("ThingWrong", 1, 2, expected.value)


async def test_the_worst_check_wins_and_unchecked_requirements_are_not_reached() -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        peer = await ctx.connect()
        env = await peer.expect_response(await peer.request("ping"))
        ctx.check("ping.response", True, entries=[env])
        ctx.check("ping.response", False, problem="SecondLook", entries=[env])
        ctx.not_reached("jsonrpc.error.method-not-found", "the test stops here")

    async with running() as runner:
        item = await runner.run_item(make(scenario, "ping.response", "jsonrpc.error.method-not-found"), V)
    assert item.requirements["ping.response"] is Outcome.FAIL
    assert item.requirements["jsonrpc.error.method-not-found"] is Outcome.SKIP
    assert runner.result("jsonrpc.error.method-not-found", V).reason == "not reached: the test stops here"
    (v,) = runner.result("ping.response", V).violations
    entry = next(e for e in runner.result("ping.response", V).transcript if e["seq"] == v["transcript"][0])
    assert entry["direction"] == "in" and entry["envelope"]["kind"] == "result"


async def test_capabilities_not_declared_are_skipped_with_the_reason() -> None:
    ran: list[str] = []

    async def scenario(ctx: ScenarioContext) -> None:
        ran.append(ctx.version)
        ctx.check("ping.response", True)

    async with running() as runner:
        missing = await runner.run_item(make(scenario, "ping.response", capability="resources"), V)
        declared = await runner.run_item(make(scenario, "ping.response", capability="tools"), V)
    assert missing.outcome is Outcome.SKIP and missing.skip_reason == "server did not declare capability 'resources'"
    assert declared.outcome is Outcome.PASS and ran == [V]


async def test_require_capability_before_connecting_uses_the_session_opened_first() -> None:
    calls: list[str] = []

    async def scenario(ctx: ScenarioContext) -> None:
        calls.append("start")
        ctx.require_capability("prompts")  # the tiny server declares only tools
        calls.append("after")  # pragma: no cover

    async def declared(ctx: ScenarioContext) -> None:
        ctx.require_capability("tools")
        ctx.check("ping.response", True)

    async with running() as runner:
        item = await runner.run_item(make(scenario, "ping.response"), V)
        ok = await runner.run_item(make(declared, "ping.response"), V)
    # every item waits for its version's shared handshake first, so the capabilities are known
    # when the scenario starts: it runs once
    assert calls == ["start"]
    assert runner.role.sessions[V].capabilities.get("tools") is not None
    assert item.skip_reason == "server did not declare capability 'prompts'"
    assert ok.outcome is Outcome.PASS


async def test_requirements_outside_the_version_are_not_run() -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        assert ctx.requirements == ("ping.response",)
        ctx.check("discover.implemented", False)  # ignored: not part of 2025-11-25
        ctx.check("ping.response", True)

    async with running() as runner:
        item = await runner.run_item(make(scenario, "ping.response", "discover.implemented"), V)
        removed = await runner.run_item(make(scenario, "ping.response", versions=VERSIONS[:-1], skip_reason="gone"), VERSIONS[-1])
    assert item.outcome is Outcome.PASS
    assert runner.result("discover.implemented", V).reason.startswith("not applicable to 2025-11-25")
    assert removed.outcome is Outcome.SKIP and removed.skip_reason == "gone"


async def test_our_own_bugs_are_errors_never_fails() -> None:
    async def buggy(ctx: ScenarioContext) -> None:
        raise KeyError("oops")

    async def uncited(ctx: ScenarioContext) -> None:
        ctx.check("jsonrpc.error.parse-error", True)

    async with running() as runner:
        a = await runner.run_item(make(buggy, "ping.response"), V)
        b = await runner.run_item(make(uncited, "ping.response"), V)
    for item in (a, b):
        assert item.outcome is Outcome.ERROR and item.error_kind == "harness"
    assert "KeyError('oops')" in a.error and "does not cite it" in b.error
    assert runner.result("ping.response", V).outcome is Outcome.ERROR
    assert [e["kind"] for e in runner.errors] == ["harness", "harness"]


async def test_an_unmet_expectation_fails_the_unchecked_requirements() -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        peer = await ctx.connect()
        await peer.call("no/such-method")  # ErrorResponse, not caught

    async with running() as runner:
        item = await runner.run_item(make(scenario, "jsonrpc.error.method-not-found"), V)
    assert item.outcome is Outcome.FAIL
    (v,) = item.violations
    assert v["problem"] == "ErrorResponse" and "-32601" in v["message"]


async def test_the_shared_session_is_reused_and_replaced_when_it_died() -> None:
    peers: list[Any] = []

    async def scenario(ctx: ScenarioContext) -> None:
        peers.append(await ctx.connect())
        ctx.check("ping.response", True)

    async def fresh(ctx: ScenarioContext) -> None:
        peers.append(await ctx.connect(fresh=True))
        ctx.check("ping.response", True)

    async with running() as runner:
        sc = make(scenario, "ping.response")
        await runner.run_item(sc, V)
        await runner.run_item(sc, V)
        await runner.run_item(make(fresh, "ping.response", fresh=True), V)
        assert peers[0] is peers[1] and peers[2] is not peers[0]
        assert peers[2].closed is not None  # a fresh connection ends with its scenario
        await peers[0].transport.close_stdin()  # the shared server exits
        await peers[0].expect_close(timeout=5)
        await runner.run_item(sc, V)
        assert peers[3] is not peers[0] and peers[3].negotiated_version == V
        conns = list(runner.connections)
    assert conns and all(c.peer.transport.returncode is not None for c in conns)


async def test_an_unsupported_version_skips_with_what_the_server_offered() -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        await ctx.connect()
        ctx.check("ping.response", True)

    async with running((PY, str(BAD), "only-2025-06-18"), versions=(V, "2025-06-18")) as runner:
        skipped = await runner.run_item(make(scenario, "ping.response"), V)
        ran = await runner.run_item(make(scenario, "ping.response"), "2025-06-18")
    assert skipped.outcome is Outcome.SKIP
    assert skipped.skip_reason == "target does not support 2025-11-25: it answered initialize with protocolVersion \"2025-06-18\""
    assert ran.outcome is Outcome.PASS
    assert runner.implementation()["by_version"][V]["protocol_version"] == "2025-06-18"


async def test_a_command_that_cannot_start_is_a_target_error() -> None:
    async def scenario(ctx: ScenarioContext) -> None:
        await ctx.connect()

    async with running(("/nonexistent/mcp-server",)) as runner:
        item = await runner.run_item(make(scenario, "ping.response"), V)
    assert item.outcome is Outcome.ERROR and item.error_kind == "target"
    assert "'/nonexistent/mcp-server' does not exist" in item.error
    assert item.hint
