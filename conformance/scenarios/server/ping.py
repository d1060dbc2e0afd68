"""basic/utilities/ping (2024-11-05 .. 2025-11-25; removed in 2026-07-28).

Pings at the edges of the handshake are judged where those connections are made: before
initialize in ``lifecycle.before_initialize``, between the initialize response and the initialized
notification in ``lifecycle.initialized_notification``."""

from __future__ import annotations

from conformance.context import ScenarioContext
from conformance.registry import scenario
from conformance.spec.versions import LATEST_STATEFUL
from conformance.wire.envelope import Kind
from conformance.wire.rules import empty_ping_result

from ._helpers import error_field


@scenario(requirements=["ping.response"], until=LATEST_STATEFUL, skip_reason="ping was removed in 2026-07-28")
async def empty_result(ctx: ScenarioContext) -> None:
    """ping on an initialized session: an empty result, within the timeout."""
    peer = await ctx.connect()
    rid = await peer.request("ping")
    env = await peer.expect_response(rid)
    if env.kind is Kind.ERROR:
        ctx.check("ping.response", False, problem="PingRejected",
                  message=f"ping was answered with error {env.error_code} {error_field(env, 'message')!r}",
                  expected={}, actual=env.error, entries=[env])
        return
    result = env.result
    empty = empty_ping_result(result)
    ctx.check("ping.response", empty, problem="NonEmptyPingResult",
              message="the ping result must be an empty object (only _meta may appear)",
              expected={}, actual=result, json_path="$.result", entries=[env])
