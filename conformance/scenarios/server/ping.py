"""basic/utilities/ping (2024-11-05 .. 2025-11-25; removed in 2026-07-28)."""

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


@scenario(requirements=["ping.response"], until=LATEST_STATEFUL, fresh=True, skip_reason="ping was removed in 2026-07-28")
async def before_initialized(ctx: ScenarioContext) -> None:
    """ping after the initialize response but before the initialized notification (the spec
    example's string id "123"): an empty result with that id."""
    peer = await ctx.connect(initialize=False, fresh=True)
    init = await peer.initialize(protocol_version=ctx.version, send_initialized=False)
    if init.kind is not Kind.RESULT:
        ctx.skip(f"initialize was refused ({init.summary()}); see lifecycle.initialize_handshake")
    rid = await peer.request("ping", id="123")
    env = await peer.expect_response(rid)
    if env.kind is Kind.ERROR:
        ctx.check("ping.response", False, problem="PingRejected",
                  message=f"a ping before the initialized notification was answered with error {env.error_code} {error_field(env, 'message')!r}",
                  expected={}, actual=env.error, entries=[env])
    else:
        result = env.result
        ctx.check("ping.response", isinstance(result, dict) and not (set(result) - {"_meta"}), problem="NonEmptyPingResult",
                  message="the ping result must be an empty object (only _meta may appear)",
                  expected={}, actual=result, json_path="$.result", entries=[env])
    await peer.notify("notifications/initialized")
