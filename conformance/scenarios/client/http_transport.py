"""Streamable HTTP, the client's side of sessions (2025-03-26 .. 2025-11-25).

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
from conformance.registry import scenario
from conformance.scenarios.client._judge import W_REQUIREMENTS, pick
from conformance.scenarios.client._run import describe_exit, play
from conformance.spec.versions import LATEST_STATEFUL, Transport
from conformance.wire.envelope import Kind

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
