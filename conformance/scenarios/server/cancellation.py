"""basic/utilities/cancellation (2024-11-05 .. 2025-11-25), basic/patterns/cancellation (2026-07-28):
no response after a cancel, invalid and late cancels ignored, initialize not cancellable."""

from __future__ import annotations

import time

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import ConnectionLost, ExpectTimeout, PeerError
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec.versions import LATEST_STATEFUL, Transport, spec
from conformance.wire.envelope import Kind, dumps, id_repr

from ._helpers import (
    answers,
    barrier,
    barrier_method,
    is_response,
    list_tools,
    long_running_tools,
    observe,
    start_slow_call,
    sync,
)

SLOW_SECONDS = 0.8  # how long we ask a slow tool to take
SETTLE = 0.3  # a call still unanswered after this long is in flight
GRACE = 0.5  # how long past the tool's own duration we watch for a response


def _stateless_http(ctx: ScenarioContext) -> bool:
    return spec(ctx.version).stateless and ctx.transport is not Transport.STDIO


@scenario(requirements=["cancellation.no-response", "cancellation.no-response-2026"], capability="tools",
          connection=ConnectionKind.APART)
async def cancelled_call_unanswered(ctx: ScenarioContext) -> None:
    """A slow tool call (discovered in tools/list), cancelled once under way: no response for
    it, even after the time the tool would have taken.  A response that came before the answer to
    the ping sent after the cancellation may be the race the page describes (the call finished
    before the cancellation arrived): then once more with a call four times as long."""
    if _stateless_http(ctx):
        ctx.skip("over streamable HTTP in 2026-07-28 closing the response stream is the cancellation signal, after which nothing is observable")
    peer = await ctx.connect()
    listed = await list_tools(peer)
    req = "cancellation.no-response-2026" if spec(ctx.version).stateless else "cancellation.no-response"
    for attempt, seconds in enumerate((SLOW_SECONDS, 4 * SLOW_SECONDS)):
        tools = long_running_tools(listed, seconds=seconds)
        if not tools:
            ctx.skip("no tool looks long-running (name or description with slow/long/sleep/delay/wait/progress)")
        probe = await start_slow_call(peer, tools, token_prefix=f"mcp-conformance-cancel-{attempt}", settle=SETTLE, timeout=ctx.timeout)
        if probe is None:
            ctx.skip(f"no tool stayed in flight for {SETTLE:g} s ({', '.join(t.name for t in tools)} answered at once)")
        mark = len(peer.transcript)
        await peer.notify("notifications/cancelled", {"requestId": probe.id, "reason": "mcp-conformance: cancellation probe"})
        sent = time.monotonic()
        try:
            synced = await barrier(peer, ctx.version)
        except PeerError as exc:
            ctx.not_reached(req, f"the {barrier_method(ctx.version)} sent after the cancellation failed: {exc}")
            return
        # The cancellation has been read.  Watch until well past the time the tool would have taken.
        # A loaded machine (the barrier's round trip says how loaded) delays a late answer as much:
        # the watch grows by twice that round trip, so a slow server is not taken for a silent one.
        expected = probe.tool.seconds if probe.tool.seconds is not None else 2 * SLOW_SECONDS
        rtt = time.monotonic() - sent
        watch = max(GRACE, expected - (time.monotonic() - probe.started) + GRACE) + 2 * rtt
        async with ctx.aside():  # a change another item makes to the server cannot answer this call
            late = await observe(peer, answers(probe.id), min(watch, 2 * ctx.timeout))
        if late is None:
            ctx.check(req, True, message=(f"no response to the cancelled call of {probe.tool.name} within "
                                          f"{time.monotonic() - probe.started:.2g} s of sending it"), entries=[mark])
            return
        entry, ping = peer.entry_of(late), peer.entry_of(synced)
        await peer.expect_response(probe.id)
        raced = entry is not None and ping is not None and entry.seq < ping.seq
        if raced and attempt == 0:
            continue
        if raced:
            ctx.not_reached(req, f"the call of {probe.tool.name} was answered before the cancellation was read, twice "
                                 "(the race the page allows); nothing to judge")
            return
        ctx.check(
            req, False, problem="ResponseAfterCancel",
            message=(f"the tools/call of {probe.tool.name} (id {id_repr(probe.id)}) was cancelled while in flight, and the "
                     f"server still answered it ({late.kind.value}) after answering the {barrier_method(ctx.version)} "
                     "sent after the cancellation"),
            expected="no response for the cancelled request", actual=late.summary(),
            entries=[entry.seq] if entry is not None else [late],
        )
        return


@scenario(requirements=["cancellation.race", "cancellation.invalid-ignored"], connection=ConnectionKind.DISPOSABLE)
async def invalid_and_late_cancels(ctx: ScenarioContext) -> None:
    """Cancellations the server should ignore: for a request it already answered (the race
    the spec describes), for an id never used, without a requestId. Each followed by a request:
    the connection stays open and answers."""
    peer = await ctx.connect(fresh=True)
    method = barrier_method(ctx.version)
    rid = await peer.request(method)
    await peer.expect_response(rid)
    probes = [
        ("cancellation.race", f"a cancellation for the {method} request {id_repr(rid)} it had already answered",
         {"requestId": rid, "reason": "mcp-conformance: late cancellation"}),
        ("cancellation.invalid-ignored", "a cancellation for an id never used",
         {"requestId": "mcp-conformance-never-sent", "reason": "mcp-conformance: unknown id"}),
        ("cancellation.invalid-ignored", "a cancellation without requestId",
         {"reason": "mcp-conformance: malformed cancellation"}),
    ]
    for i, (req, what, params) in enumerate(probes):
        mark = len(peer.transcript)
        await peer.notify("notifications/cancelled", params)
        try:
            await barrier(peer, ctx.version)
        except ConnectionLost as exc:
            ctx.check(req, False, problem="ConnectionLostOnCancel",
                      message=f"the connection ended after {what}: {exc}",
                      expected="the cancellation ignored, the connection open", actual=str(exc.cause), entries=[mark])
            for later in {r for r, _, _ in probes[i + 1:]} - {req}:
                ctx.not_reached(later, f"the connection ended after {what}")
            return
        except ExpectTimeout as exc:
            ctx.check(req, False, problem="UnresponsiveAfterCancel",
                      message=f"after {what}, the next {method} was not answered within {exc.waited:.3g} s",
                      expected="the cancellation ignored, the next request answered", actual="no response", entries=[mark])
            for later in {r for r, _, _ in probes[i + 1:]} - {req}:
                ctx.not_reached(later, f"the server stopped answering after {what}")
            return
        ctx.check(req, True, message=f"{what} was ignored: the next request was answered")


@scenario(requirements=["cancellation.invalid-ignored"], until=LATEST_STATEFUL, connection=ConnectionKind.FRESH,
          skip_reason="2026-07-28 has no initialize")
async def initialize_not_cancellable(ctx: ScenarioContext) -> None:
    """initialize followed at once by a cancellation of it ("The initialize request MUST NOT be
    cancelled by clients"; on stdio both in one write): the server keeps serving.  Either answer
    is allowed: initialize answered (receivers "MAY ignore cancellation notifications if ... the
    request cannot be cancelled") or left unanswered (receivers "SHOULD ... Not send a response for
    the cancelled request"); the cancel names a known request in flight and is well-formed, so it
    is none of the invalid ones the page lists.  Flagged: the connection ends, or nothing is
    answered any more."""
    if ctx.transport is Transport.STREAMABLE_HTTP:
        ctx.skip("over streamable HTTP the initialize POST is answered before a cancellation could carry its session id")
    info = await ctx.session_info()
    if info.unsupported:
        ctx.skip(info.unsupported)
    peer = await ctx.connect(initialize=False, fresh=True)
    rid = "mcp-conformance-initialize"
    init = {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": ctx.version, "capabilities": {}, "clientInfo": peer.client_info}}
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": rid, "reason": "mcp-conformance: cancelling initialize"}}
    mark = len(peer.transcript)
    if ctx.transport is Transport.STDIO:
        await peer.send_bytes(dumps(init) + b"\n" + dumps(cancel) + b"\n")
    else:
        await peer.send_json(init)
        await peer.send_json(cancel)
    req = "cancellation.invalid-ignored"
    synced = None
    try:
        if await observe(peer, answers(rid), 0.0) is None:
            # a ping (allowed before initialize) read after both; a fresh process that has said
            # nothing yet may still be starting: its start-up allowance applies
            wait = ctx.timeout if peer.inbound else max(ctx.timeout, peer.first_timeout or 0.0)
            synced = await sync(peer, ctx.version, timeout=wait)
        env = await peer.expect_response(rid, timeout=GRACE)
    except ExpectTimeout:
        if synced:
            ctx.check(req, True, entries=[mark],
                      message=("accepted: initialize was left unanswered after a cancellation of it, and the "
                               f"{barrier_method(ctx.version)} sent after both was answered (receivers 'SHOULD ... Not send a "
                               "response for the cancelled request'; the page does not count this cancel among the invalid ones)"))
            return
        ctx.check(req, False, problem="UnresponsiveAfterInitializeCancel", entries=[mark],
                  message=(f"after initialize and a cancellation of it, neither initialize nor the {barrier_method(ctx.version)} "
                           f"sent after both was answered within {ctx.timeout:g} s: the cancellation was not ignored, and "
                           "the server stopped serving"),
                  expected=f"the initialize response, or at least the answer to the {barrier_method(ctx.version)}",
                  actual="no response")
        return
    except ConnectionLost as exc:
        ctx.check(req, False, problem="ConnectionLostOnInitializeCancel", entries=[mark],
                  message=f"the connection ended after a cancellation of initialize: {exc}",
                  expected="the initialize response", actual=str(exc.cause))
        return
    ctx.check(req, is_response(env), problem="InvalidResponse", message="initialize was answered despite the cancellation",
              expected="the initialize response", actual=env.value, entries=[env])
    if env.kind is Kind.RESULT:
        await peer.notify("notifications/initialized")


