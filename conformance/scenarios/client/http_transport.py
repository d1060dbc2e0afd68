"""Streamable HTTP, the client's side of sessions (2025-03-26 .. 2025-11-25), and of a 400 from a
modern server (2026-07-28).

basic/transports#session-management: "When a client receives HTTP 404 in response to a request
containing an `Mcp-Session-Id`, it MUST start a new session by sending a new `InitializeRequest`
without a session ID attached."  The scenario server answers the client's first request after the
handshake (the first POST that carries the session id and a request) with 404, as a server that
ended the session would, and serves everything else normally.
"""

from __future__ import annotations

from typing import Any

from conformance.client.context import ClientContext
from conformance.client.role import ClientRun
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import W_REQUIREMENTS, pick
from conformance.scenarios.client._run import describe_exit, play
from conformance.scenarios.client._server import META_PV, Answer, request_meta
from conformance.spec.versions import LATEST, LATEST_STATEFUL, Transport
from conformance.wire.envelope import Envelope, Kind

REINIT = ("client.http.session-404-reinitialize", "client.http.session-404-reinitialize-2025-03-26")


@scenario(requirements=[*REINIT, *W_REQUIREMENTS], role="client", transports=[Transport.STREAMABLE_HTTP],
          since="2025-03-26", until=LATEST_STATEFUL, order=3)
async def session_404(ctx: ClientContext) -> None:
    """The first request after the handshake is answered with HTTP 404 (the session is gone): the
    client must start a new session with an ``initialize`` that carries no session id."""
    state: dict[str, Any] = {"refused": None}

    def setup(run: ClientRun) -> None:
        def refuse(rec: Any, envelopes: list[Any]) -> int | None:
            if state["refused"] is None and rec.header("mcp-session-id") and any(
                    e.kind is Kind.REQUEST and e.method not in ("initialize", "ping") for e in envelopes):
                state["refused"] = rec
                return 404
            return None

        run.endpoint.refuse = refuse

    played = await play(ctx, setup=setup)
    rid = pick(ctx.version, "client.http.session-404-reinitialize")
    refused = state["refused"]
    if refused is None:
        ctx.not_reached(rid, "the client made no request after the handshake, so no session could end under it")
        return
    later = [r for r in played.run.endpoint.requests if r.n > refused.n and r.method == "POST"]
    reinit = next((r for r in later if any(e.method == "initialize" for e in r.envelopes)), None)
    if reinit is not None and not reinit.header("mcp-session-id"):
        ctx.check(rid, True, message=f"after the 404 the client sent a new initialize (POST #{reinit.n}) without a session id")
    elif reinit is not None:
        ctx.check(rid, False, problem="ReinitializeWithSessionId",
                  message=f"after the 404 the client's new initialize (POST #{reinit.n}) still carries Mcp-Session-Id "
                          f"{reinit.header('mcp-session-id')!r}",
                  expected="a new InitializeRequest without a session id", actual=reinit.header("mcp-session-id"))
    else:
        what = (f"it went on with POST #{later[0].n} without a new initialize" if later
                else f"it sent nothing more ({describe_exit(played.run)})")
        ctx.check(rid, False, problem="NoNewSessionAfter404",
                  message=f"the server answered POST #{refused.n} with 404; {what}",
                  expected="a new InitializeRequest without a session id", actual=None)


# -- 2026-07-28: a 400 whose body is a modern error is no reason to fall back ----------------------------

INSPECT = "client.http2026.inspect-400-body"


@scenario(requirements=[INSPECT, *W_REQUIREMENTS], role="client", versions=[LATEST], transports=[Transport.STREAMABLE_HTTP],
          order=3)
async def modern_400_no_fallback(ctx: ClientContext) -> None:
    """The client's first 2026-07-28 request is refused with HTTP 400 and HeaderMismatch (-32020),
    an error only a modern server sends: the client retries or corrects the request (or gives up),
    rather than falling back to ``initialize``."""
    refused: list[Envelope] = []

    def gate(env: Envelope) -> Answer | None:
        if not refused and env.method != "initialize" and isinstance(request_meta(env).get(META_PV), str):
            refused.append(env)
            return Answer(error={"code": -32020, "message": "Header mismatch: conformance probe (the request was "
                                                            "refused once on purpose; send it again)"})
        return None

    played = await play(ctx, configure=lambda s: setattr(s, "gate", gate))
    if not refused:
        ctx.not_reached(INSPECT, f"the client sent no request of the 2026-07-28 era; {describe_exit(played.run)}")
        return
    first = refused[0]
    w = played.wire
    t0 = w.answered_at(first.id)
    if t0 is None:
        ctx.not_reached(INSPECT, f"the refusal of {first.method} did not reach the client")
        return
    later = [m for m in w.requests() if m.t > t0]
    fallback = next((m for m in later if m.env.method == "initialize"), None)
    if fallback is not None:
        ctx.check(INSPECT, False, problem="FellBackOnModern400",
                  message=f"{first.method} was refused with HTTP 400 and a HeaderMismatch (-32020) body, an error of a "
                          "modern server; the client then fell back to initialize",
                  expected="a retry or a corrected 2026-07-28 request (or an error surfaced), not initialize",
                  actual="initialize", entries=[fallback.entry])
        return
    what = (f"went on with {later[0].env.method}" if later else "sent nothing more")
    ctx.check(INSPECT, True, message=f"after the 400 with HeaderMismatch to {first.method} the client {what}, without "
                                     "falling back to initialize")
