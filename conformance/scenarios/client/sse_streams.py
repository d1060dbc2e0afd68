"""Streamable HTTP, the client's side of SSE answers: taking answers from an SSE stream, polling a
stream whose connection the server closed, after its ``retry``, and resuming it with
``Last-Event-ID`` (basic/transports, 2025-03-26 .. 2025-11-25).

"If the input is a JSON-RPC *request*, the server MUST either return `Content-Type:
text/event-stream`, to initiate an SSE stream, or `Content-Type: application/json`, to return one
JSON object. The client MUST support both these cases."  And, in 2025-11-25: "After the server
has sent an SSE event with an event ID to the client, the server MAY close the *connection*
(without terminating the *SSE stream*) at any time [...]. The client SHOULD then "poll" the SSE
stream by attempting to reconnect. [...] The client MUST respect the `retry` field, waiting the
given number of milliseconds before attempting to reconnect."
"""

from __future__ import annotations

from typing import Any

from conformance.client.context import ClientContext
from conformance.client.role import ClientRun
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import W_REQUIREMENTS
from conformance.scenarios.client._run import describe_exit, play
from conformance.spec.versions import LATEST_STATEFUL, Transport
from conformance.wire.envelope import Kind

RETRY_MS = 1000
SLACK = 0.1  # seconds: the client's clock and ours, and the loopback


@scenario(requirements=["client.http.sse-answers", *W_REQUIREMENTS], role="client",
          transports=[Transport.STREAMABLE_HTTP], since="2025-03-26", until=LATEST_STATEFUL, order=4)
async def sse_answers(ctx: ClientContext) -> None:
    """Every request is answered with an SSE stream (on 2025-11-25 starting with a priming event:
    an event id and empty data) instead of a JSON body: the client must take the initialize result
    from it and go on."""
    def setup(run: ClientRun) -> None:
        run.endpoint.priming = ctx.version == LATEST_STATEFUL

    played = await play(ctx, launch={"answer_mode": "sse"}, setup=setup)
    rid = "client.http.sse-answers"
    ep = played.run.endpoint
    init = next((r for r in ep.requests if r.method == "POST" and any(
        e.kind is Kind.REQUEST and e.method == "initialize" for e in r.envelopes)), None)
    if init is None or init.status != 200:
        ctx.not_reached(rid, f"the client sent no initialize that was answered ({describe_exit(played.run)})")
        return
    later = [r for r in ep.requests if r.n > init.n and r.method == "POST" and r.envelopes]
    onward = next((r for r in later if any(e.method != "initialize" for e in r.envelopes)), None)
    if onward is not None:
        what = ", ".join(sorted({e.method or e.kind.value for e in onward.envelopes}))
        ctx.check(rid, True, message=f"the initialize result came on an SSE stream; the client went on ({what}, "
                                     f"POST #{onward.n})")
        return
    again = next((r for r in later if r.envelopes), None)
    ctx.check(rid, False, problem="SseAnswerNotTaken",
              message=(f"the initialize result came on an SSE stream (POST #{init.n}); the client "
                       + (f"sent initialize again (POST #{again.n})" if again is not None
                          else f"sent nothing more ({describe_exit(played.run)})")),
              expected="the initialize result taken from the SSE stream, then notifications/initialized",
              actual=None)


POLL = ("client.http.sse-poll", "client.http.sse-retry", "client.http.resume-last-event-id")
RESUME_0326 = "client.http.resume-last-event-id-2025-03-26"


@scenario(requirements=[*POLL, RESUME_0326, *W_REQUIREMENTS], role="client", transports=[Transport.STREAMABLE_HTTP],
          since="2025-03-26", until=LATEST_STATEFUL, order=4)
async def sse_poll(ctx: ClientContext) -> None:
    """Requests are answered with SSE streams that start with a priming event; the stream of the
    client's first request after the handshake gets ``retry: 1000`` on that event and its
    connection is closed before the answer: the client should reconnect (poll), no sooner than
    the retry time, by GET with ``Last-Event-ID``, and gets the answer there.  Before 2025-11-25
    nothing asks the client to reconnect; if it does, by GET with ``Last-Event-ID``."""
    polling = ctx.applies("client.http.sse-poll")
    resume = "client.http.resume-last-event-id" if polling else RESUME_0326
    state: dict[str, Any] = {"polled": None}

    def setup(run: ClientRun) -> None:
        ep = run.endpoint
        ep.priming = True

        def poll(rec: Any, envelopes: list[Any]) -> int | None:
            if state["polled"] is None and rec.header("mcp-session-id") and any(
                    e.kind is Kind.REQUEST and e.method not in ("initialize", "ping")
                    and not (e.method or "").startswith("notifications/") for e in envelopes):
                # (a notification sent with an id -- a client's fault, client.basic.notification-no-id --
                # is no request the client waits for: its stream is not the one to close)
                state["polled"] = rec
                return RETRY_MS
            return None

        ep.poll = poll

    played = await play(ctx, launch={"answer_mode": "sse"}, setup=setup)
    polled = state["polled"]
    if polled is None:
        for rid in (*POLL, RESUME_0326):
            ctx.not_reached(rid, "the client made no request after the handshake, so no stream was closed under it")
        return
    ep = played.run.endpoint
    kept = next((s for s in ep._streams if s.name == f"post:{polled.n}"), None)
    closed_at = kept.detached if kept is not None else None
    if closed_at is None:
        for rid in (*POLL, RESUME_0326):
            ctx.not_reached(rid, "the suite could not close the stream (the client went away first)")
        return
    gets = [r for r in ep.requests if r.method == "GET" and r.t >= closed_at]
    what = (f"the stream of POST #{polled.n} (its first event {kept.event_id!r} with retry {RETRY_MS} ms, then the "
            "connection closed)")
    if not gets and not polling:
        ctx.not_reached(RESUME_0326, f"{what}: the client did not reconnect (nothing in {ctx.version} asks it to; "
                                     "it did not wish to resume)")
        return
    if not gets:
        ctx.check("client.http.sse-poll", False, problem="NoReconnect",
                  message=f"{what}: the client never reconnected ({describe_exit(played.run)})",
                  expected=f"a GET with Last-Event-ID {kept.event_id!r} after {RETRY_MS} ms", actual=None)
        for rid in POLL[1:]:
            ctx.not_reached(rid, "the client did not reconnect")
        return
    first = gets[0]
    after = first.t - closed_at
    if polling:
        ctx.check("client.http.sse-poll", True, message=f"{what}: the client reconnected {after:.2f} s later (GET #{first.n})")
        if after + SLACK >= RETRY_MS / 1000:
            ctx.check("client.http.sse-retry", True, message=f"the client waited {after:.2f} s (retry {RETRY_MS} ms)")
        else:
            ctx.check("client.http.sse-retry", False, problem="RetryNotRespected",
                      message=f"{what}: the client reconnected (GET #{first.n}) after {after:.3f} s, before the retry time",
                      expected=f"no reconnection before {RETRY_MS} ms", actual=f"{after * 1000:.0f} ms")
    last = first.header("last-event-id")
    if last == kept.event_id:
        ctx.check(resume, True,
                  message=f"GET #{first.n} carries Last-Event-ID {last!r}" + (
                      "; the answer was delivered on it" if kept.resumed_by == first.n else ""))
    else:
        ctx.check(resume, False, problem="ResumeWithoutLastEventId",
                  message=f"{what}: the client reconnected (GET #{first.n}) "
                          + ("without Last-Event-ID" if last is None else f"with Last-Event-ID {last!r}"),
                  expected=f"Last-Event-ID: {kept.event_id}", actual=last)
