"""Client lifecycle: the plain run every client gets, and a version it cannot accept.

basic/lifecycle (2024-11-05 .. 2025-11-25), basic/transports/stdio and server/discover
(2026-07-28).  The ``baseline`` run serves a full-featured server that answers everything and
judges everything the client did on the wire (:mod:`._judge`); ``version_unsupported`` answers
``initialize`` with a version no client supports.  On 2026-07-28 (basic/versioning)
``version_retry`` refuses the client's first request with -32022 listing the version it asked for
(it should retry), ``version_none_supported`` every request, listing only a version no client
speaks (it should not retry with an unlisted one).
"""

from __future__ import annotations

import time

from typing import Any

import anyio

from conformance.client.context import ClientContext
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import META_PV, W_REQUIREMENTS, pick
from conformance.scenarios.client._run import describe_exit, play
from conformance.scenarios.client._server import Answer, ScenarioServer, request_meta, unsupported_version
from conformance.spec.versions import LATEST_STATEFUL, VERSIONS, Transport, spec
from conformance.wire.envelope import Envelope, Kind

MODERN_FIRST = next(v for v in VERSIONS if spec(v).stateless)
STUBBORN_EXTRA = 6.0  # seconds a stdio_escalation run waits, after stdin closed, for the client's escalation
HOLD_PROGRESS = 0.3  # seconds a request with a progressToken is held (baseline)
HOLD_FIRST = 0.3  # seconds the first request after server/discover is held (2026-07-28)
STDERR = "client.stdio.stderr-not-error"
STDERR_LINE = b"ERROR mcp-conformance: a log line on stderr, written on purpose (informational; no error occurred)\n"

SHUTDOWN = ("client.lifecycle.stdio-shutdown", "client.lifecycle.stdio-shutdown-2026")
DELETE = ("client.http.session-delete", "client.http.session-delete-2025-03-26")


@scenario(requirements=[*W_REQUIREMENTS, *SHUTDOWN, *DELETE, "client.discover.first", STDERR], role="client", order=0)
async def baseline(ctx: ClientContext) -> None:
    """A plain, full-featured server (tools over two pages, prompts, resources, templates, logging,
    completion) that answers everything at once (on stdio and legacy SSE with a progress
    notification first, for a request that carries a progressToken); every message, header and process fact of the run
    is judged, and how the client ends the session (stdio: closes the server's stdin first; HTTP:
    DELETEs its session).  On stdio (2025-11-25 on) the server writes an ERROR-looking line to its
    stderr when the first request after the handshake arrives, and answers it a moment later."""
    version = ctx.version
    stderr: dict[str, float] = {}

    def configure(server: ScenarioServer) -> None:
        # progress for every request that asks for it, where the notification travels with the
        # answer (stdio, the legacy SSE stream; over streamable HTTP it would need the request's
        # own SSE stream, and a JSON answer has none)
        server.progress = ctx.transport in (Transport.STDIO, Transport.SSE)
        # and a request that carries a progress token is answered after a moment, so that another
        # request the client sends with the same token meanwhile is seen in flight with it
        server.progress_hold = HOLD_PROGRESS
        write_stderr = ctx.applies(STDERR) and hasattr(server.peer.transport, "write_stderr")
        if spec(version).stateless or write_stderr:
            async def hold(env: Envelope) -> None:
                # 2026-07-28 has no server requests to probe with; holding the first request a
                # moment lets what the client sends beside it be seen as in flight with it.  And
                # a log line on stderr meanwhile: a client that takes it for an error leaves
                if write_stderr:
                    try:
                        await server.peer.transport.write_stderr(STDERR_LINE)
                        stderr["written"] = time.monotonic()  # the clock of the relay facts
                    except Exception:  # the client's server process is already gone
                        pass
                await anyio.sleep(HOLD_FIRST)
                stderr["answered"] = time.monotonic()

            server.on_first_request = hold

    played = await play(ctx, configure=configure)
    run, w = played.run, played.wire
    if not played.engaged:
        ctx.note(f"the client did not speak {version} with the suite's server in this run ({describe_exit(run)}); "
                 "what it sent was judged")
    # how the client ended the session
    if ctx.transport is Transport.STDIO:
        rid = pick(version, "client.lifecycle.stdio-shutdown")
        relay = run.relay_transport
        facts = relay.facts if relay is not None else None
        if facts is None or not played.ended_by_client:
            ctx.not_reached(rid, "the client did not end the session within the run (the suite stopped it)")
        else:
            first_signal = facts.signals[0] if facts.signals else None
            if facts.stdin_closed is not None and (first_signal is None or facts.stdin_closed <= first_signal[0]):
                ctx.check(rid, True, message="the client closed the server's stdin first")
            elif first_signal is not None:
                ctx.check(rid, False, problem="ShutdownWithoutClosingStdin",
                          message=f"the client sent the server {first_signal[1]} before closing its stdin",
                          expected="close the server's stdin first, then wait, then SIGTERM, then SIGKILL",
                          actual=first_signal[1])
            elif facts.killed is not None:
                ctx.check(rid, False, problem="ShutdownWithoutClosingStdin",
                          message="the client killed the server (SIGKILL) without closing its stdin first",
                          expected="close the server's stdin first, then wait, then SIGTERM, then SIGKILL",
                          actual="SIGKILL")
    elif ctx.transport is Transport.STREAMABLE_HTTP and not spec(version).stateless:
        rid = pick(version, "client.http.session-delete")
        ep = run.endpoint
        if not ep.sessions_issued or not played.engaged:
            ctx.not_reached(rid, "no session was established")
        elif not played.ended_by_client:
            ctx.not_reached(rid, "the client did not end within the run (the suite stopped it)")
        else:
            deletes = [r for r in ep.requests if r.method == "DELETE" and r.header("mcp-session-id") in ep.sessions_issued]
            ctx.check(rid, bool(deletes), problem="SessionNotDeleted",
                      message="" if deletes else "the client went away without DELETE-ing its session",
                      expected="DELETE with the Mcp-Session-Id before leaving", actual=None)
    if ctx.applies(STDERR):
        _judge_stderr(ctx, played, stderr)
    # 2026-07-28 stdio: a dual-era client probes with server/discover first
    if spec(version).stateless and ctx.transport is Transport.STDIO:
        reqs = w.requests()
        if reqs and reqs[0].env.method == "initialize" and any(m.env.method != "initialize" for m in reqs[1:]):
            ctx.check("client.discover.first", False, problem="NoDiscoverProbe",
                      message="the client sent initialize first and then modern requests: a client that supports both "
                              "eras should probe with server/discover first",
                      expected="server/discover first", actual="initialize")
        elif reqs and reqs[0].env.method == "server/discover":
            ctx.check("client.discover.first", True)
        else:
            ctx.not_reached("client.discover.first", "the client did not show that it supports both eras")


@scenario(requirements=[*SHUTDOWN, *W_REQUIREMENTS], role="client", transports=[Transport.STDIO], order=1)
async def stdio_escalation(ctx: ClientContext) -> None:
    """A stubborn server: it ignores the closed stdin and SIGTERM, and stays until SIGKILL.  The
    client that is done should close the server's stdin, then (the server does not exit) send
    SIGTERM, then (it still does not) SIGKILL: from the signals the server process received and
    its end (lifecycle#stdio; 2026-07-28 transports/stdio#shutdown: "forcibly terminating")."""
    version = ctx.version
    rid = pick(version, "client.lifecycle.stdio-shutdown")
    # after the connection ends, room for the escalation: real clients wait about 2 s at each step
    played = await play(ctx, launch={"stubborn": True}, linger=STUBBORN_EXTRA)
    facts = played.relay_facts
    if facts is None or not played.client_exited:
        ctx.not_reached(rid, "the client did not end within the run (the suite stopped it)")
        return
    signals = [name for _, name in facts.signals]
    if facts.stdin_closed is None and not signals and facts.killed is None:
        ctx.not_reached(rid, "the client exited without ending its server in any way: closing stdin, a signal "
                             "or a kill (it may not have started one)")
        if not played.engaged:
            return
    closed_first = facts.stdin_closed is not None and all(t >= facts.stdin_closed for t, _ in facts.signals) and \
        (facts.killed is None or facts.killed >= facts.stdin_closed)
    term = "SIGTERM" in signals
    killed = facts.killed is not None
    expected = "close the server's stdin, then SIGTERM, then SIGKILL (the server ignores the first two)"
    if facts.stdin_closed is None:
        if signals or killed:
            ctx.check(rid, False, problem="ShutdownWithoutClosingStdin",
                      message=f"the client sent the server {signals[0] if signals else 'SIGKILL'} without closing its stdin "
                              "first", expected=expected, actual=signals[0] if signals else "SIGKILL")
        return
    if not closed_first:
        ctx.check(rid, False, problem="ShutdownWithoutClosingStdin",
                  message="the client signalled the server before closing its stdin", expected=expected,
                  actual=signals[0] if signals else "SIGKILL")
    elif not term and not killed:
        ctx.check(rid, False, problem="ServerLeftRunning",
                  message="the client closed the server's stdin and exited, leaving the server (which did not exit) "
                          "running: no SIGTERM, no SIGKILL", expected=expected, actual="stdin closed, then nothing")
    elif spec(version).stateless:
        # 2026-07-28: "forcibly terminating the process using the mechanism appropriate for the
        # operating system" ("typically escalates from SIGTERM to SIGKILL"): the server must be gone
        ctx.check(rid, killed, problem="ServerLeftRunning",
                  message="" if killed else "the client sent SIGTERM, which the server ignored, and exited leaving it "
                                            "running (no SIGKILL)", expected=expected, actual=", ".join(signals))
    elif not term:
        ctx.check(rid, False, problem="SigkillWithoutSigterm",
                  message="the client killed the server (SIGKILL) without sending SIGTERM first", expected=expected,
                  actual="SIGKILL")
    elif not killed:
        ctx.check(rid, False, problem="NoSigkill",
                  message="the client sent SIGTERM, which the server ignored, and exited leaving it running (no SIGKILL)",
                  expected=expected, actual=", ".join(signals))
    else:
        ctx.check(rid, True, message="stdin closed, then SIGTERM, then SIGKILL")


@scenario(requirements=["client.lifecycle.version-unsupported-disconnect", *W_REQUIREMENTS], role="client",
          until=LATEST_STATEFUL, order=1)
async def version_unsupported(ctx: ClientContext) -> None:
    """``initialize`` is answered with protocol version ``1999-01-01``, which no client supports:
    the client should disconnect -- no ``notifications/initialized``, no further request."""
    played = await play(ctx, configure=lambda s: setattr(s, "offer", "1999-01-01"), unsupported_offer=True)
    w = played.wire
    init = [m for m in w.msgs if m.env.method == "initialize" and m.env.kind is Kind.REQUEST]
    rid = "client.lifecycle.version-unsupported-disconnect"
    if not init:
        ctx.not_reached(rid, "the client never sent initialize")
        return
    answered = w.answered_at(init[0].env.id)
    if answered is None:
        ctx.not_reached(rid, "the initialize request was not answered")
        return
    later = [m for m in w.msgs if m.t > answered and m.env.method not in ("initialize",)
             and not (m.env.method == "notifications/cancelled")]
    if later:
        ctx.check(rid, False, problem="ContinuedAfterUnsupportedVersion",
                  message=f"after the server answered protocol version 1999-01-01 the client went on with "
                          f"{later[0].env.method or later[0].env.kind.value}",
                  expected="disconnect (nothing more sent)", actual=later[0].env.method, entries=[later[0].entry])
    else:
        ctx.check(rid, True, message="the client sent nothing more after the unsupported version")


# -- 2026-07-28: a version the server refuses ------------------------------------------------------

UNKNOWN_VERSION = "1999-01-01"  # a version no client supports (the only one version_none_supported lists)
RETRY = "client.version.retry-supported"


def _declared(env: Envelope) -> str | None:
    """The protocol version a request declares: ``_meta`` (2026-07-28), or ``protocolVersion`` of
    an ``initialize`` (a fallback to the legacy era)."""
    if env.method == "initialize":
        value = env.params.get("protocolVersion") if isinstance(env.params, dict) else None
    else:
        value = request_meta(env).get(META_PV)
    return value if isinstance(value, str) else None


async def _version_refused(ctx: ClientContext, *, supported: list[str], every: bool) -> None:
    """Refuse the client's first 2026-07-28 request (``every``: all its requests) with -32022
    listing ``supported``; judge what it sends after the refusal reached it."""
    refused: list[Envelope] = []

    def gate(env: Envelope) -> Answer | None:
        declared = _declared(env)
        modern = env.method != "initialize" and declared is not None
        if modern and not refused:
            refused.append(env)
            return unsupported_version(declared, supported)
        if every:
            return unsupported_version(declared, supported)
        return None

    played = await play(ctx, configure=lambda s: setattr(s, "gate", gate))
    if not refused:
        ctx.not_reached(RETRY, "the client sent no request of the 2026-07-28 era (none with a protocol version in "
                               f"_meta); {describe_exit(played.run)}")
        return
    first = refused[0]
    w = played.wire
    t0 = w.answered_at(first.id)
    if t0 is None:
        ctx.not_reached(RETRY, f"the refusal of {first.method} did not reach the client")
        return
    later = [m for m in w.requests() if m.t > t0]
    listed = [m for m in later if _declared(m.env) in supported]
    unlisted = [m for m in later if _declared(m.env) is not None and _declared(m.env) not in supported]
    asked = _declared(first)
    if unlisted:
        m = unlisted[0]
        what = "fell back to initialize" if m.env.method == "initialize" else f"sent {m.env.method}"
        ctx.check(RETRY, False, problem="RetriedWithUnsupportedVersion",
                  message=f"{first.method} declaring {asked} was refused with -32022 listing {supported}; the client "
                          f"then {what} declaring {_declared(m.env)}, which the list does not contain",
                  expected=f"a retry declaring one of {supported}, or no further request (an error surfaced to the user)",
                  actual=_declared(m.env), entries=[m.entry])
    elif listed:
        m = listed[0]
        ctx.check(RETRY, True, message=f"after the -32022 refusal of {first.method} the client sent {m.env.method} "
                                       f"declaring {_declared(m.env)}, a listed version")
    elif every:
        ctx.check(RETRY, True, message=f"after the -32022 refusal listing only {supported} the client sent no further "
                                       "request")
    else:
        ctx.check(RETRY, False, problem="NoRetryWithSupportedVersion",
                  message=f"{first.method} declaring {asked} was refused with -32022 listing {supported}, which the "
                          "client speaks; it sent no further request",
                  expected=f"the request retried declaring one of {supported}", actual=None, entries=[])


@scenario(requirements=[RETRY, *W_REQUIREMENTS], role="client", since=MODERN_FIRST, order=1)
async def version_retry(ctx: ClientContext) -> None:
    """The client's first 2026-07-28 request is refused with -32022 UnsupportedProtocolVersion
    (HTTP 400) whose ``supported`` list names the run's version, as the official runner does;
    everything after it is answered.  The client should retry with a listed version."""
    await _version_refused(ctx, supported=[ctx.version], every=False)


@scenario(requirements=[RETRY, *W_REQUIREMENTS], role="client", since=MODERN_FIRST, order=1)
async def version_none_supported(ctx: ClientContext) -> None:
    """Every request is refused with -32022 listing only ``1999-01-01``, a version no client
    speaks: the client should surface an error, not retry with a version outside the list (nor fall
    back to ``initialize``)."""
    await _version_refused(ctx, supported=[UNKNOWN_VERSION], every=True)


def _judge_stderr(ctx: ClientContext, played: Any, stderr: dict[str, float]) -> None:
    """Did the client end the session while its first request was held, just after the server's
    stderr line?"""
    written = stderr.get("written")
    if written is None:
        ctx.not_reached(STDERR, "no request after the handshake arrived, so no stderr line was written")
        return
    answered = stderr.get("answered", float("inf"))
    facts = played.relay_facts or (played.run.relay_transport.facts if played.run.relay_transport is not None else None)
    ends = []
    if facts is not None:
        ends += [(facts.stdin_closed, "closed the server's stdin")] if facts.stdin_closed is not None else []
        ends += [(t, f"sent the server {name}") for t, name in facts.signals]
        ends += [(facts.killed, "killed the server")] if facts.killed is not None else []
    left = sorted((t, what) for t, what in ends if written <= t < answered)
    if left:
        t, what = left[0]
        ctx.check(STDERR, False, problem="StderrTakenAsError",
                  message=f"the server wrote {STDERR_LINE.decode().strip()!r} to its stderr; {t - written:.2f} s later, "
                          f"its request still unanswered, the client {what}",
                  expected="the session goes on (stderr is the server's log)", actual=what)
    else:
        ctx.check(STDERR, True, message="the client went on after the server wrote an ERROR-looking line to its stderr")


FALLBACK = "client.discover.fallback-any-error"


RESTART = "client.stdio.restart"


@scenario(requirements=[RESTART], role="client", transports=[Transport.STDIO], since="2026-07-28", order=5)
async def stdio_restart(ctx: ClientContext) -> None:
    """The server process exits (code 1) when the client's first request after server/discover
    arrives, leaving it unanswered: the client should start the server again (transports/stdio,
    Unexpected Termination)."""
    wait = max(4.0, 2 * ctx.timeout)

    def configure(server: ScenarioServer) -> None:
        async def crash(env: Envelope) -> None:
            await server.peer.transport.exit(1)

        server.on_first_request = crash
        server.drop_first = True

    played = await play(ctx, configure=configure, relaunch=wait, judge=False)
    run = played.run
    relay = run.relay
    crashed = played.server.first_request is not None
    if not crashed:
        ctx.not_reached(RESTART, "the client made no request after server/discover, so the server had no moment to "
                                 "exit under it")
        return
    launches = len(relay.connections) if relay is not None else 0
    restarted = launches >= 2
    ctx.check(RESTART, restarted, problem="ServerNotRestarted",
              message=("the client started the server again after it exited unexpectedly" if restarted else
                       "the server exited unexpectedly (code 1) under the client's "
                       f"{played.server.first_request.method} and the client "
                       + ("exited" if run.exit_code is not None else f"did not start it again within {wait:g} s")),
              expected="a second launch of the server command", actual=f"{launches} launch(es)")


@scenario(requirements=[FALLBACK], role="client", transports=[Transport.STDIO], since="2026-07-28", order=5)
async def discover_fallback(ctx: ClientContext) -> None:
    """The suite's server plays a legacy one (initialize answered as 2025-11-25): server/discover
    answered -32601 shows whether the client falls back to initialize at all (dual-era); then
    answered -32602, the same client must fall back again (the fallback is not keyed to -32601)."""

    async def probe(code: int) -> tuple[list[str], str]:
        def configure(server: ScenarioServer) -> None:
            def gate(env: Envelope) -> Answer | None:
                if env.method == "server/discover":
                    return Answer(error={"code": code, "message": "Method not found" if code == -32601 else "Invalid params"})
                if env.method == "initialize":
                    server.stop.set()  # seen: the client fell back (nothing more to learn here)
                    return Answer(result={"protocolVersion": LATEST_STATEFUL, "capabilities": {},
                                          "serverInfo": {"name": "mcp-conformance-legacy-server", "version": "0"}})
                return None

            server.gate = gate

        played = await play(ctx, configure=configure, judge=False)
        methods = [e.method or "" for e in (played.server.requests if played.server is not None else [])]
        return methods, describe_exit(played.run)

    first, how = await probe(-32601)
    if not first or first[0] != "server/discover":
        ctx.not_reached(FALLBACK, f"the client did not probe with server/discover first ({', '.join(first[:3]) or 'no request'}; {how})")
        return
    if "initialize" not in first:
        ctx.not_reached(FALLBACK, f"server/discover answered -32601 was not followed by initialize: the client does not fall "
                                  f"back to the legacy handshake (it supports modern versions only) ({how})")
        return
    second, how = await probe(-32602)
    fell_back = second[:1] == ["server/discover"] and "initialize" in second
    ctx.check(FALLBACK, fell_back, problem="FallbackKeyedToErrorCode",
              message=("after server/discover was answered -32602, the client fell back to initialize too" if fell_back
                       else "the client falls back to initialize when server/discover is answered -32601, not when it "
                            f"is answered -32602 (requests: {', '.join(second[:4]) or 'none'}; {how})"),
              expected="initialize after any error that is not a modern one", actual=second[:4])

