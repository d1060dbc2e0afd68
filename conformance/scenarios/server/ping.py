"""basic/utilities/ping (2024-11-05 .. 2025-11-25; removed in 2026-07-28).

Pings at the edges of the handshake are judged where those connections are made: before
initialize and between the initialize response and the initialized notification in
``lifecycle.before_initialize``."""

from __future__ import annotations

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario
from conformance.spec.versions import LATEST_STATEFUL

from ._helpers import judge_pong


@scenario(requirements=["ping.response"], until=LATEST_STATEFUL, skip_reason="ping was removed in 2026-07-28")
async def empty_result(ctx: ScenarioContext) -> None:
    """ping on an initialized session: an empty result, within the timeout."""
    peer = await ctx.connect()
    rid = await peer.request("ping")
    judge_pong(ctx, await peer.expect_response(rid))
