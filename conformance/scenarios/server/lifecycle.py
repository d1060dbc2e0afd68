"""basic/lifecycle (2024-11-05 .. 2025-11-25): the handshake, version negotiation, what comes before
and after it, capabilities in use, shutdown over stdio, timeouts.

2026-07-28 has no handshake; its scenarios are in ``discover.py``.
"""

from __future__ import annotations

from typing import Any

from conformance.server.context import UNSUPPORTED_VERSION_PROBE, ScenarioContext
from conformance.runtime.peer import ConnectionLost, ExpectTimeout, PeerError, RawPeer
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec import errors
from conformance.spec.methods import S2C, lookup
from conformance.spec.versions import LATEST_STATEFUL, VERSIONS, Transport, spec
from conformance.wire.transcript import Direction
from conformance.transports.stdio import StdioTransport
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr

from ._helpers import (
    barrier,
    error_field,
    expect_answer,
    inbound_entries,
    judge_pong,
    refusal_status,
    list_tools,
    long_running_tools,
    start_slow_call,
)

SLOW_SECONDS = 1.0  # how long we ask a slow tool to take
SETTLE = 0.3  # a call still unanswered after this long is in flight

NO_HANDSHAKE = "2026-07-28 has no initialize handshake (stateless); server/discover replaces it"


def _looks_unsupported(env) -> bool:
    data = error_field(env, "data")
    return env.error_code in (errors.INVALID_PARAMS, errors.UNSUPPORTED_PROTOCOL_VERSION) or (
        isinstance(data, dict) and "supported" in data
    )


@scenario(
    requirements=["lifecycle.initialize.result", "lifecycle.version-negotiation.echo"],
    until=LATEST_STATEFUL,
    skip_reason=NO_HANDSHAKE,
    order=-1,
)
async def initialize_handshake(ctx: ScenarioContext) -> None:
    """initialize with the version under test: a result carrying capabilities and serverInfo,
    and the requested version echoed when the server supports it.  The shared session's
    initialize is that request: its result is judged where it got one; otherwise (an error,
    silence) a connection of its own asks again and its answer is judged."""
    env = await ctx.shared_handshake()
    if env is None:
        peer = await ctx.connect(initialize=False, fresh=True)
        env = await peer.initialize(protocol_version=ctx.version)
    if env.kind is Kind.ERROR:
        code, message = env.error_code, error_field(env, "message")
        if _looks_unsupported(env):
            ctx.skip(f"target does not support {ctx.version}: initialize answered error {id_repr(code)} {message!r}")
        ctx.check(
            "lifecycle.initialize.result",
            False,
            problem="InitializeRejected",
            message=f"initialize with protocolVersion {ctx.version!r} was answered with error {id_repr(code)} {message!r}",
            expected="a result with protocolVersion, capabilities and serverInfo",
            actual=env.error,
            entries=[env],
        )
        ctx.not_reached("lifecycle.version-negotiation.echo", "initialize was rejected")
        return
    result = env.result
    if env.kind is not Kind.RESULT or not isinstance(result, dict):
        ctx.check(
            "lifecycle.initialize.result",
            False,
            problem="InvalidInitializeResponse",
            expected="a JSON-RPC result object",
            actual=env.value if env.value is not MISSING else env.raw,
            entries=[env],
        )
        return
    caps = result.get("capabilities", MISSING)
    ctx.check(
        "lifecycle.initialize.result",
        isinstance(caps, dict),
        problem="MissingCapabilities",
        message="the initialize result must carry the server's capabilities (an object)",
        expected="an object",
        actual=caps,
        json_path="$.result.capabilities",
        entries=[env],
    )
    info = result.get("serverInfo", MISSING)
    ok_info = isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)
    ctx.check(
        "lifecycle.initialize.result",
        ok_info,
        problem="MissingServerInfo",
        message="the initialize result must carry serverInfo with a name and a version (strings)",
        expected={"name": "<string>", "version": "<string>"},
        actual=info,
        json_path="$.result.serverInfo",
        entries=[env],
    )
    answered = result.get("protocolVersion", MISSING)
    if answered == ctx.version:
        ctx.check("lifecycle.version-negotiation.echo", True, entries=[env])
        return
    if not isinstance(answered, str):
        ctx.check(
            "lifecycle.version-negotiation.echo",
            False,
            problem="MissingProtocolVersion",
            message="the initialize result must say which protocol version the server will speak",
            expected=ctx.version,
            actual=answered,
            json_path="$.result.protocolVersion",
            entries=[env],
        )
        return
    # Another version: allowed when the server does not support ours.  It does support ours if it
    # offers ours when asked for a version nobody supports.
    probe = await ctx.connect(initialize=False, fresh=True)
    penv = await probe.initialize(protocol_version=UNSUPPORTED_VERSION_PROBE, send_initialized=False)
    offered = penv.result.get("protocolVersion") if penv.kind is Kind.RESULT and isinstance(penv.result, dict) else None
    if offered == ctx.version:
        ctx.check(
            "lifecycle.version-negotiation.echo",
            False,
            problem="VersionNotEchoed",
            message=(
                f"asked for {ctx.version}, the server answered {answered}; yet it offers {ctx.version} "
                f"when asked for the unsupported {UNSUPPORTED_VERSION_PROBE}, so it supports {ctx.version}"
            ),
            expected=ctx.version,
            actual=answered,
            json_path="$.result.protocolVersion",
            entries=[env],
        )
        return
    ctx.skip(f"target does not support {ctx.version}: it answered initialize with protocolVersion {answered!r}")


@scenario(
    requirements=["lifecycle.version-negotiation.fallback", "lifecycle.version-negotiation.fallback-latest"],
    until=LATEST_STATEFUL,
    connection=ConnectionKind.ONCE,  # the request is the same whatever the version under test
    skip_reason=NO_HANDSHAKE,
    order=-1,
)
async def unsupported_version(ctx: ScenarioContext) -> None:
    """initialize with a version no server supports: a result offering a version that exists, or
    an error (the page's Error Handling example shows -32602).  The request names no version under
    test, so one connection asks for every version (one process on stdio, not one per version)."""
    env, peer = await ctx.once("initialize-unsupported-version", _ask_unsupported_version)
    req = "lifecycle.version-negotiation.fallback"
    await _fallback_latest(ctx, env)
    if env.kind is Kind.ERROR:
        code = env.error_code
        ctx.check(
            req,
            True,
            message=(
                f"accepted: initialize with the unsupported version {UNSUPPORTED_VERSION_PROBE!r} was answered with "
                f"error {id_repr(code)} (the page's Error Handling example shows -32602; a result offering a supported "
                "version is the other allowed answer)"
            ),
            entries=[env],
        )
        return
    result = env.result
    if env.kind is not Kind.RESULT or not isinstance(result, dict):
        ctx.check(req, False, problem="InvalidInitializeResponse", expected="a result or an error response",
                  actual=env.value if env.value is not MISSING else env.raw, entries=[env])
        return
    offered = result.get("protocolVersion", MISSING)
    if offered == UNSUPPORTED_VERSION_PROBE:
        ctx.check(req, False, problem="UnsupportedVersionEchoed",
                  message=f"the server echoed {UNSUPPORTED_VERSION_PROBE!r}, a version that does not exist, instead of offering one it supports",
                  expected=f"one of {', '.join(VERSIONS)}", actual=offered, json_path="$.result.protocolVersion", entries=[env])
        return
    ctx.check(
        req,
        isinstance(offered, str) and offered in VERSIONS,
        problem="UnknownProtocolVersion",
        message=f"the server offered {id_repr(offered)}, which is not an MCP protocol version",
        expected=f"one of {', '.join(VERSIONS)}",
        actual=offered,
        json_path="$.result.protocolVersion",
        entries=[env],
    )


async def _fallback_latest(ctx: ScenarioContext, env: Envelope) -> None:
    """The version offered for an unsupported one "SHOULD be the latest version supported by the
    server": one earlier than the version under test, which the server echoes, is not."""
    req = "lifecycle.version-negotiation.fallback-latest"
    offered = env.result.get("protocolVersion") if env.kind is Kind.RESULT and isinstance(env.result, dict) else None
    if offered not in VERSIONS:
        ctx.not_reached(req, "the server offered no protocol version for the unsupported one"
                        + (" (it answered with an error)" if env.kind is Kind.ERROR else ""))
        return
    own = await ctx.shared_handshake()
    echoed = own is not None and own.kind is Kind.RESULT and isinstance(own.result, dict) \
        and own.result.get("protocolVersion") == ctx.version
    if echoed and VERSIONS.index(offered) < VERSIONS.index(ctx.version):
        ctx.check(req, False, problem="FallbackNotLatest",
                  message=(f"asked for the unsupported {UNSUPPORTED_VERSION_PROBE!r}, the server offered {offered}; yet it "
                           f"supports the later {ctx.version} (it echoed it), so {offered} is not its latest version"),
                  expected=f"{ctx.version} or later", actual=offered, json_path="$.result.protocolVersion", entries=[env])
    elif echoed:
        ctx.check(req, True, message=f"the server offered {offered} for an unsupported version; {ctx.version}, which it "
                                     "supports, is not later", entries=[env])
    else:
        ctx.not_reached(req, f"the server does not speak {ctx.version}: nothing to compare {offered} with")


async def _ask_unsupported_version(peer: RawPeer) -> Envelope:
    return await peer.initialize(protocol_version=UNSUPPORTED_VERSION_PROBE, send_initialized=False)


# -- the initialized notification ------------------------------------------------------------------


def _allow_requests(version: str) -> dict[str, Any]:
    """Client capabilities that would allow every server request there is."""
    caps: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}}
    if spec(version).elicitation:
        caps["elicitation"] = {}
    return caps


async def _initialized_apart(ctx: ScenarioContext) -> None:
    """The initialized-notification part of :func:`before_initialize` on a connection of its own
    (initialize did not succeed after the early requests, or the connection ended)."""
    peer = await ctx.connect(initialize=False, fresh=True, capabilities=_allow_requests(ctx.version))
    mark = len(peer.transcript)
    env = await peer.initialize(protocol_version=ctx.version, send_initialized=False)
    if env.kind is not Kind.RESULT:
        ctx.not_reached("lifecycle.initialized.server-requests",
                        f"initialize was refused ({env.summary()}); see lifecycle.initialize_handshake")
        return
    await _before_initialized(ctx, peer, mark)


async def _before_initialized(ctx: ScenarioContext, peer: RawPeer, mark: int) -> None:
    """initialize answered (sent at transcript position ``mark`` with client capabilities that
    allow server requests), no initialized notification yet: a ping (the spec example's string id
    "123") gets its empty result (a ping is the one request a client may send then;
    ping.response), and no server request other than ping arrives before initialized; then the
    notification."""
    req, ping_req = "lifecycle.initialized.server-requests", "ping.response"
    rid = await peer.request("ping", id="123")
    try:
        pong = await peer.expect_response(rid)
    except ExpectTimeout as exc:
        ctx.check(ping_req, False, problem="PingBeforeInitializedUnanswered",
                  message=f"a ping sent after the initialize response, before the initialized notification, was not answered within {exc.waited:.3g} s",
                  expected={}, actual="no response")
        ctx.not_reached(req, "the ping sent before the initialized notification was not answered")
        return
    except ConnectionLost as exc:
        ctx.check(ping_req, False, problem="ConnectionLostOnPingBeforeInitialized",
                  message=f"the connection ended after a ping sent before the initialized notification: {exc}",
                  expected={}, actual=str(exc.cause))
        ctx.not_reached(req, "the connection ended after the ping sent before the initialized notification")
        return
    judge_pong(ctx, pong, what="a ping before the initialized notification")
    early = [
        e for e in inbound_entries(peer, mark)
        if e.envelope is not None and e.envelope.kind is Kind.REQUEST and e.envelope.method != "ping"
    ]
    ctx.check(
        req, not early, problem="RequestBeforeInitialized",
        message=(f"the server sent {', '.join(sorted({e.envelope.method for e in early}))} before receiving the initialized "
                 "notification (only pings and logging are expected then)"),
        expected="no request other than ping before notifications/initialized",
        actual=[e.envelope.summary() for e in early[:3]], entries=[e.seq for e in early[:3]],
    )
    await peer.notify("notifications/initialized")


# -- before the handshake -------------------------------------------------------------------------


@scenario(
    requirements=["ping.response", "lifecycle.before-initialize.request", "lifecycle.initialized.server-requests"],
    until=LATEST_STATEFUL,
    connection=ConnectionKind.DISPOSABLE,  # pristine; where it ends initialized (stdio), the version's disposable items go on with it
    skip_reason=NO_HANDSHAKE,
    order=-1,  # ahead of the disposable items, which take its connection over
)
async def before_initialize(ctx: ScenarioContext) -> None:
    """The connection before and around the handshake.  A ping, then another request, before
    initialize: the ping gets its empty result (stdio and legacy SSE; ping.response), the request
    an answer (an error is expected, any code; over streamable HTTP an HTTP 4xx).  Then initialize
    still works -- with client capabilities that allow server requests -- and between its response
    and the initialized notification a ping (the spec example's string id "123") gets its empty
    result, and no server request other than ping arrives.  One connection for both (on stdio one
    process); where initialize does not succeed after the early requests, the part after it is
    judged on a connection of its own."""
    info = await ctx.session_info()
    if info.unsupported:
        ctx.skip(info.unsupported)
    peer = await ctx.connect(initialize=False, fresh=True, capabilities=_allow_requests(ctx.version))
    mark = await _early_requests_then_initialize(ctx, peer)
    if mark is None:  # initialize did not succeed on this connection
        await _initialized_apart(ctx)
    else:
        await _before_initialized(ctx, peer, mark)


async def _early_requests_then_initialize(ctx: ScenarioContext, peer: RawPeer) -> int | None:
    """:func:`before_initialize` up to its initialize (sent without the initialized
    notification): the transcript position of that initialize when it got a result, else None."""
    ping_req, early_req = "ping.response", "lifecycle.before-initialize.request"
    if ctx.transport is Transport.STREAMABLE_HTTP:
        ctx.not_reached(ping_req, "over streamable HTTP a request before initialize has no session (servers that require one answer 400)")
    else:
        rid = await peer.request("ping")
        try:
            env = await peer.expect_response(rid)
        except ExpectTimeout as exc:
            ctx.check(ping_req, False, problem="PingBeforeInitializeUnanswered",
                      message=f"a ping sent before initialize was not answered within {exc.waited:.3g} s",
                      expected={}, actual="no response")
        except ConnectionLost as exc:
            ctx.check(ping_req, False, problem="ConnectionLostOnEarlyPing",
                      message=f"the connection ended after a ping sent before initialize: {exc}", expected={}, actual=str(exc.cause))
            ctx.not_reached(early_req, "the connection ended after the early ping")
            return None
        else:
            empty = env.kind is Kind.RESULT and isinstance(env.result, dict) and not (set(env.result) - {"_meta"})
            ctx.check(
                ping_req, empty, problem="PingBeforeInitializeRefused" if env.kind is Kind.ERROR else "NonEmptyPingResult",
                message=(
                    "a ping sent before initialize must get the empty result every ping gets (pings are the one request a "
                    "client may send before the initialize response), got "
                    + (f"error {id_repr(env.error_code)} {error_field(env, 'message')!r}" if env.kind is Kind.ERROR else f"{env.result!r}")
                ),
                expected={}, actual=env.error if env.kind is Kind.ERROR else env.result,
                json_path=None if env.kind is Kind.ERROR else "$.result", entries=[env],
            )
    method = "tools/list"
    rid = await peer.request(method, {})
    status = refusal_status(peer, rid)
    try:
        env = await expect_answer(peer, rid, timeout=min(1.0, ctx.timeout) if status else None)
    except ExpectTimeout as exc:
        if status is not None:
            ctx.check(early_req, True, message=f"accepted: a {method} request sent before initialize was refused with HTTP {status}")
        else:
            ctx.check(early_req, False, problem="EarlyRequestUnanswered",
                      message=(f"a {method} request sent before initialize was not answered within {exc.waited:.3g} s; an error "
                               "response is expected (JSON-RPC 2.0: 'the Server MUST reply with a Response')"),
                      expected="an error response (any code) or a result", actual="no response")
    except ConnectionLost as exc:
        ctx.check(early_req, False, problem="ConnectionLostOnEarlyRequest",
                  message=f"the connection ended after a {method} request sent before initialize: {exc}",
                  expected="an error response (any code) or a result", actual=str(exc.cause))
        return None
    else:
        served = "served it" if env.kind is Kind.RESULT else f"answered error {id_repr(env.error_code)}"
        ctx.check(early_req, True, message=f"accepted: a {method} request sent before initialize was answered (the server {served})",
                  entries=[env])
    if getattr(peer.transport, "session_id", None) is not None:
        # a session id can only come from the initialize response; one on a refusal is not ours to keep
        peer.transport.session_id = None  # type: ignore[attr-defined]
    mark = len(peer.transcript)
    try:
        init = await peer.initialize(protocol_version=ctx.version, send_initialized=False)
    except ConnectionLost as exc:
        ctx.check(early_req, False, problem="ConnectionLostOnInitialize",
                  message=f"after the early requests, the connection ended on initialize: {exc}",
                  expected="an initialize result", actual=str(exc.cause))
        return None
    except ExpectTimeout as exc:
        ctx.check(early_req, False, problem="InitializeUnansweredAfterEarlyRequests",
                  message=f"after the early requests, initialize was not answered within {exc.waited:.3g} s",
                  expected="an initialize result", actual="no response")
        return None
    if init.kind is Kind.RESULT:
        ctx.check(early_req, True, message="initialize succeeded after the early requests", entries=[init])
        return mark
    ctx.check(
        early_req, False, problem="InitializeRefusedAfterEarlyRequests",
        message=("after a request sent before initialize, initialize should still succeed, got "
                 + (f"error {id_repr(init.error_code)} {error_field(init, 'message')!r}" if init.kind is Kind.ERROR else init.kind.value)),
        expected="an initialize result", actual=init.error if init.kind is Kind.ERROR else init.value, entries=[init],
    )
    return None


@scenario(requirements=["lifecycle.initialize.repeat"], until=LATEST_STATEFUL, connection=ConnectionKind.DISPOSABLE, skip_reason=NO_HANDSHAKE)
async def second_initialize(ctx: ScenarioContext) -> None:
    """A second initialize on an initialized connection: answered (an error or a result, the
    spec does not say which; over streamable HTTP also an HTTP 4xx) and the session keeps
    working."""
    peer = await ctx.connect(fresh=True)
    req = "lifecycle.initialize.repeat"
    rid = await peer.request("initialize", {"protocolVersion": ctx.version, "capabilities": peer.capabilities, "clientInfo": peer.client_info})
    status = refusal_status(peer, rid)
    try:
        env = await expect_answer(peer, rid, timeout=min(1.0, ctx.timeout) if status else None)
    except ExpectTimeout as exc:
        if status is not None:
            ctx.check(req, True, message=f"accepted: the server refused a second initialize with HTTP {status}")
        else:
            ctx.check(req, False, problem="SecondInitializeUnanswered",
                      message=(f"a second initialize was not answered within {exc.waited:.3g} s; an answer is expected (an error "
                               "or a result; JSON-RPC 2.0: 'the Server MUST reply with a Response')"),
                      expected="an error response or a result", actual="no response")
            return
    except ConnectionLost as exc:
        ctx.check(req, False, problem="ConnectionLostOnSecondInitialize",
                  message=f"the connection ended after a second initialize: {exc}",
                  expected="an error response or a result", actual=str(exc.cause))
        return
    else:
        how = "re-initialized the session" if env.kind is Kind.RESULT else f"refused it with error {id_repr(env.error_code)}"
        ctx.check(req, True, message=f"accepted: the server {how} (no revision says which)", entries=[env])
    try:
        await barrier(peer, ctx.version)
    except PeerError as exc:
        ctx.check(req, False, problem="SessionBrokenBySecondInitialize",
                  message=f"after a second initialize the session stopped working: a ping failed ({exc})",
                  expected="an answered ping", actual=str(exc))
        return
    ctx.check(req, True, message="the session kept working after the second initialize (ping answered)")


# -- capabilities in use ---------------------------------------------------------------------------


@scenario(
    requirements=["lifecycle.operation.capabilities", "lifecycle.operation.capabilities-should"],
    until=LATEST_STATEFUL,
    skip_reason=NO_HANDSHAKE,
    order=980,
)
async def negotiated_capabilities(ctx: ScenarioContext) -> None:
    """Every server request of the run, on every connection of this version: the client
    declared the capability the request needs (the server's own capabilities are the feature
    pages' concern)."""
    await ctx.connect()
    counted = 0
    flagged = False
    for conn in ctx.connections():
        if conn.info is not None and conn.info.unsupported:
            continue
        client_caps = _client_capabilities(conn.peer)
        for entry in inbound_entries(conn.peer):
            env = entry.envelope
            if env is None or env.kind is not Kind.REQUEST or not env.method:
                continue
            direction_method = lookup(env.method, S2C, ctx.version)
            if direction_method is None or not direction_method.capability:
                continue
            counted += 1
            owner, caps = "client", client_caps
            if caps is None:
                continue  # this connection never negotiated (a probe without handshake)
            declared = _declared(caps, direction_method.capability)
            if declared:
                continue
            flagged = True
            for req in ("lifecycle.operation.capabilities", "lifecycle.operation.capabilities-should"):
                ctx.check(
                    req, False, problem="UndeclaredCapabilityUsed",
                    message=(f"the server sent the {env.kind.value} {env.method} on {conn.label}, which needs the {owner} "
                             f"capability {direction_method.capability!r}; the {owner} did not declare it"),
                    expected=f"{owner} capability {direction_method.capability!r} declared",
                    actual=caps, entries=[entry.seq], peer=conn.peer,
                )
    if not flagged:
        for req in ("lifecycle.operation.capabilities", "lifecycle.operation.capabilities-should"):
            ctx.check(req, True, message=f"{counted} capability-gated server request(s) checked")


def _client_capabilities(peer: RawPeer) -> dict | None:
    """The capabilities the client sent in its initialize request on this connection, from the
    transcript (None where no initialize was sent)."""
    caps: dict | None = None
    for entry in peer.transcript.entries:
        env = entry.envelope
        if entry.direction == Direction.OUT and env is not None and env.kind is Kind.REQUEST and env.method == "initialize":
            params = env.params if isinstance(env.params, dict) else {}
            declared = params.get("capabilities")
            caps = declared if isinstance(declared, dict) else {}
    return caps


def _declared(caps: dict, path: str) -> bool:
    cur: Any = caps
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    return cur is not None and cur is not False


# -- timeouts ----------------------------------------------------------------------------------------


@scenario(requirements=["lifecycle.timeouts.handled"], since="2025-03-26", until=LATEST_STATEFUL, capability="tools",
          skip_reason="the Timeouts section exists from 2025-03-26 to 2025-11-25",
          connection=ConnectionKind.DISPOSABLE)  # ahead of stdio_shutdown (below), which ends the disposable connection
async def abandoned_request(ctx: ScenarioContext) -> None:
    """A slow tool call the client gives up on (a cancellation notification, as the Timeouts
    section describes): the server keeps serving, the next requests are answered in time."""
    # a server that ignores the cancellation answers later: not on the shared session (a disposable
    # connection, which the next item takes over only after a round trip, with nothing left unread)
    peer = await ctx.connect(fresh=True)
    tools = long_running_tools(await list_tools(peer), seconds=SLOW_SECONDS)
    if not tools:
        ctx.skip("no tool looks long-running (name or description with slow/long/sleep/delay/wait/progress)")
    probe = await start_slow_call(peer, tools, token_prefix="mcp-conformance-timeout", settle=SETTLE, timeout=ctx.timeout)
    if probe is None:
        ctx.skip(f"no tool stayed in flight for {SETTLE:g} s ({', '.join(t.name for t in tools)} answered at once)")
    await peer.notify("notifications/cancelled", {"requestId": probe.id, "reason": "mcp-conformance: timed out"})
    req = "lifecycle.timeouts.handled"
    for n in (1, 2):
        try:
            await barrier(peer, ctx.version)
        except PeerError as exc:
            ctx.check(req, False, problem="NotServingAfterTimeout",
                      message=f"after the client gave up on {probe.tool.name} (cancelled), request {n} of 2 failed: {exc}",
                      expected="the next requests answered within the timeout", actual=str(exc))
            return
    ctx.check(req, True, message=f"after the client gave up on {probe.tool.name}, the next requests were answered")


# -- shutdown over stdio ---------------------------------------------------------------------------


@scenario(
    requirements=["lifecycle.shutdown.stdio"],
    until=LATEST_STATEFUL,
    transports=[Transport.STDIO],
    connection=ConnectionKind.DISPOSABLE,  # closing stdin ends it: a later disposable item would need a new one,
    order=1,  # so it comes after every other disposable item of its version, whatever their module
    skip_reason="2026-07-28 words the server's duty on its stdio transport page (transport.stdio requirements)",
)
async def stdio_shutdown(ctx: ScenarioContext) -> None:
    """An initialized stdio server whose stdin is closed: it exits within the timeout."""
    peer = await ctx.connect(fresh=True)
    transport = peer.transport
    if not isinstance(transport, StdioTransport):
        ctx.skip("not a stdio connection")
    await transport.close_stdin()
    peer.transcript.note("closed the server's stdin (shutdown)")
    code = await transport.wait_exit(ctx.timeout)
    ctx.check(
        "lifecycle.shutdown.stdio",
        code is not None,
        problem="NoExitOnStdinClose",
        message=(f"the server exited ({'code ' + str(code) if code is not None else ''}) after its stdin was closed"
                 if code is not None else
                 f"the server was still running {ctx.timeout:g} s after its stdin was closed; a client then has to signal it"),
        expected=f"exit within {ctx.timeout:g} s",
        actual="still running" if code is None else f"exit code {code}",
    )
