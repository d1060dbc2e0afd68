"""Timeouts: a request the server never answers, and an initialize it never answers.

basic/lifecycle#timeouts (2025-03-26 .. 2025-11-25; 2024-11-05 in its Error Handling section) and
basic/patterns/cancellation#timeouts (2026-07-28): "Implementations SHOULD establish timeouts for
all sent requests, to prevent hung connections and resource exhaustion. When the request has not
received a success or error response within the timeout period, the sender SHOULD issue a
cancellation notification for that request and stop waiting for a response."  And
basic/utilities/cancellation: "The `initialize` request MUST NOT be cancelled by clients".

The waits are the client's own: the suite waits for the client to give up, up to
``--stall-timeout`` (default 75 s, longer than the SDKs' default request timeouts).  A client whose timeout is longer than that budget is reported as still
waiting, with the figure, so the budget can be raised to see it.
"""

from __future__ import annotations

from typing import Any

import anyio

from conformance.client.context import ClientContext
from conformance.client.role import ClientRun
from conformance.runtime.peer import ConnectionLost, ExpectTimeout
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import W_REQUIREMENTS, Wire, pick
from conformance.scenarios.client._run import describe_exit, play
from conformance.scenarios.client._server import Answer, ScenarioServer
from conformance.spec.versions import LATEST_STATEFUL, Transport, spec
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, same_id

TIMEOUTS = ("client.lifecycle.timeouts", "client.lifecycle.timeouts-2024")
ON_TIMEOUT = ("client.lifecycle.timeout-cancel", "client.lifecycle.timeout-cancel-2026")


def _cancels(env: Envelope, rid: Any) -> bool:
    params = env.params if isinstance(env.params, dict) else {}
    return env.method == "notifications/cancelled" and same_id(params.get("requestId", MISSING), rid)


def _cancel_of(w: Wire, rid: Any) -> Any:
    return next((m for m in w.msgs if m.env.kind is Kind.NOTIFICATION and _cancels(m.env, rid)), None)


async def _give_up(server: ScenarioServer, run: ClientRun, victim: Envelope, *, stream_close_cancels: bool) -> str:
    """Wait until the client gives up on ``victim``: 'cancelled' (notifications/cancelled naming
    it), 'closed' (2026-07-28 streamable HTTP: it closed that request's response stream) or
    'exited' (the client exited or ended its server); returns '' when the run ends first."""
    how: list[str] = []
    async with anyio.create_task_group() as tg:
        def found(what: str) -> None:
            if not how:
                how.append(what)
            tg.cancel_scope.cancel()

        async def cancelled() -> None:
            try:
                await server.peer.expect_message(lambda e: e.kind is Kind.NOTIFICATION and _cancels(e, victim.id),
                                                 what=f"a cancellation of {id_repr(victim.id)}", timeout=10 ** 6)
            except (ExpectTimeout, ConnectionLost):
                return
            found("cancelled")

        async def closed() -> None:
            ep = run.endpoint
            if ep is None or not stream_close_cancels:
                return
            rec = await ep.wait_request(lambda r: r.abandoned is not None and any(
                e.kind is Kind.REQUEST and same_id(e.id, victim.id) for e in r.envelopes), 10 ** 6)
            if rec is not None:
                found("closed")

        async def exited() -> None:
            # a cancellation written just before it went may still be read: the verdict looks
            # at the whole wire afterwards
            await server.exited.wait()
            found("exited")

        async def stopped() -> None:
            await server.stop.wait()
            if server.exited.is_set():
                found("exited")
            tg.cancel_scope.cancel()

        for task in (cancelled, closed, exited, stopped):
            tg.start_soon(task)
    return how[0] if how else ""


def _judge_give_up(ctx: ClientContext, played: Any, victim: Envelope | None, how: str, waited: float | None,
                   what: str, *, cancel_rule: str | None) -> None:
    """The verdicts on how the client dealt with ``victim``, which was never answered."""
    version = ctx.version
    timeouts = pick(version, "client.lifecycle.timeouts")
    if victim is None:
        why = f"the client sent no {what} in this run ({describe_exit(played.run)})"
        ctx.not_reached(timeouts, why)
        if cancel_rule:
            ctx.not_reached(cancel_rule, why)
        return
    label = f"{victim.method} {id_repr(victim.id)}"
    if played.wire.answered_at(victim.id) is not None:
        # another request of the client carried the same id and was answered: to the client, the
        # request was answered (its id reuse is judged by client.basic.request-id-unique*)
        why = f"the client sent another request with the id of {label}, which was answered"
        ctx.not_reached(timeouts, why)
        if cancel_rule:
            ctx.not_reached(cancel_rule, why)
        return
    cancel = _cancel_of(played.wire, victim.id)
    if cancel is not None and how in ("", "exited"):
        how = "cancelled"  # read after the wait ended (written just before the client went)
    ep = played.run.endpoint
    if how == "exited" and spec(version).stateless and ep is not None and any(
            r.abandoned is not None and any(e.kind is Kind.REQUEST and same_id(e.id, victim.id) for e in r.envelopes)
            for r in ep.requests):
        how = "closed"  # 2026-07-28 HTTP: its exit closed the request's stream, which is the cancellation
    budget = _budget(ctx)
    if not how:
        ctx.check(timeouts, False, problem="NoTimeout",
                  message=f"the server never answered {label}; the client was still waiting for it when the run's "
                          f"budget ended after {budget:g} s (a longer timeout of its own is not seen: raise "
                          "--stall-timeout)",
                  expected="the client gives up on the request after a timeout", actual=None)
        if cancel_rule:
            ctx.not_reached(cancel_rule, f"the client did not give up on {label} within the run's budget ({budget:g} s)")
        return
    after = f" after {waited:.1f} s" if waited is not None else ""
    done = {"cancelled": "cancelled it", "closed": "closed its response stream (cancellation on 2026-07-28 HTTP)",
            "exited": f"stopped waiting: {describe_exit(played.run) if played.run.exit_code is not None else 'it ended the connection'}"}[how]
    ctx.check(timeouts, True, message=f"the server never answered {label}; the client gave up{after} and {done}")
    if not cancel_rule:
        return
    if how in ("cancelled", "closed"):
        ctx.check(cancel_rule, True, message=f"the client {done}{after}")
    else:
        ctx.check(cancel_rule, False, problem="GaveUpWithoutCancelling",
                  message=f"the server never answered {label}; the client {done}{after} without cancelling the request",
                  expected="notifications/cancelled for the request" + (
                      " (or, on streamable HTTP, closing its response stream)" if spec(version).stateless else ""),
                  actual=None)


def _budget(ctx: ClientContext) -> float:
    target = ctx.target
    return max(target.run_timeout, target.stall_timeout)


def _timed(server: ScenarioServer, run_ref: dict[str, Any], *, stream_close_cancels: bool) -> Any:
    async def hold(env: Envelope) -> None:
        started = anyio.current_time()
        run_ref["victim"] = env
        run_ref["how"] = await _give_up(server, run_ref["run"], env, stream_close_cancels=stream_close_cancels)
        run_ref["waited"] = anyio.current_time() - started if run_ref["how"] else None

    return hold


@scenario(requirements=[*TIMEOUTS, *ON_TIMEOUT, *W_REQUIREMENTS], role="client", order=5, waits=True)
async def request_timeout(ctx: ClientContext) -> None:
    """The first request after the handshake is never answered (everything else is): the client
    should give up on it after a timeout of its own and cancel it (``notifications/cancelled``; on
    2026-07-28 streamable HTTP, closing that request's response stream).  Slow by nature: it waits
    for the client's timeout, up to the run's budget."""
    version = ctx.version
    modern_http = spec(version).stateless and ctx.transport is Transport.STREAMABLE_HTTP
    state: dict[str, Any] = {"victim": None, "how": "", "waited": None, "run": None}

    def setup(run: ClientRun) -> None:
        state["run"] = run

    def configure(server: ScenarioServer) -> None:
        server.drop_first = True
        server.hold_others = False  # a client that moves on without cancelling is served
        server.on_first_request = _timed(server, state, stream_close_cancels=modern_http)

    played = await play(ctx, setup=setup, configure=configure, budget=_budget(ctx))
    cancel_rule = pick(version, "client.lifecycle.timeout-cancel") if version != "2024-11-05" else None
    _judge_give_up(ctx, played, state["victim"], state["how"], state["waited"], "request after the handshake",
                   cancel_rule=cancel_rule)


@scenario(requirements=[*TIMEOUTS, "client.cancel.not-initialize", *W_REQUIREMENTS], role="client",
          until=LATEST_STATEFUL, order=6, waits=True)
async def initialize_timeout(ctx: ClientContext) -> None:
    """``initialize`` is never answered: the client should give up after a timeout of its own,
    and must not cancel it ("The `initialize` request MUST NOT be cancelled by clients"; a
    ``notifications/cancelled`` naming it is flagged by the wire checks).  Slow by nature."""
    state: dict[str, Any] = {"victim": None, "how": "", "waited": None, "run": None}

    def setup(run: ClientRun) -> None:
        state["run"] = run

    def configure(server: ScenarioServer) -> None:
        wait = _timed(server, state, stream_close_cancels=False)

        async def never(env: Envelope) -> Answer:
            await wait(env)
            return Answer(hold=True)

        server.hooks["initialize"] = never

    played = await play(ctx, setup=setup, configure=configure, budget=_budget(ctx))
    _judge_give_up(ctx, played, state["victim"], state["how"], state["waited"], "initialize", cancel_rule=None)
