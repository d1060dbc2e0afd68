"""JSON-RPC 2.0 itself and basic/index#messages: error codes, unreadable and invalid requests,
notifications, ids echoed verbatim, the shape of every response."""

from __future__ import annotations

from typing import Any

import anyio

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import ConnectionLost, ExpectTimeout, PeerError
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec import errors
from conformance.spec.versions import spec
from conformance.wire.envelope import MISSING, Kind, id_repr, same_id
from conformance.wire.rules import REQUIRED_PARAM, unreadable_answer

from ._helpers import (
    barrier,
    barrier_method,
    error_field,
    inbound_entries,
    is_response,
    loose_id,
    probe_message,
    response_shape_problems,
    sent_status,
    sync,
    GRACE,
)

UNKNOWN_METHOD = "mcp-conformance/no-such-method"
UNKNOWN_NOTIFICATION = "notifications/mcp-conformance/no-such-notification"
INVALID_JSON = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {'


@scenario(requirements=["jsonrpc.error.method-not-found", "jsonrpc.request.response-required"])
async def unknown_method(ctx: ScenarioContext) -> None:
    """A request for a method nobody defines: a response (every request gets one), error -32601."""
    peer = await ctx.connect()
    rid = await peer.request(UNKNOWN_METHOD, {})
    try:
        env = await peer.expect_response(rid)
    except ExpectTimeout as exc:
        ctx.check("jsonrpc.request.response-required", False, problem="NoResponse",
                  message=f"no response to a request for the unknown method {UNKNOWN_METHOD!r} within {exc.waited:.3g} s",
                  expected=f"a response with id {id_repr(rid)}", actual="none")
        ctx.not_reached("jsonrpc.error.method-not-found", "the request was not answered")
        return
    except ConnectionLost as exc:  # the server went away instead of answering
        ctx.check("jsonrpc.request.response-required", False, problem="ConnectionLost",
                  message=f"the connection ended instead of a response to a request for the unknown method {UNKNOWN_METHOD!r}: {exc}",
                  expected=f"a response with id {id_repr(rid)}", actual=str(exc.cause))
        ctx.not_reached("jsonrpc.error.method-not-found", "the request was not answered")
        return
    ctx.check("jsonrpc.request.response-required", True, entries=[env])
    ctx.check(
        "jsonrpc.error.method-not-found",
        env.kind is Kind.ERROR and env.error_code == errors.METHOD_NOT_FOUND,
        problem="WrongErrorCode" if env.kind is Kind.ERROR else "UnknownMethodAccepted",
        message=(
            f"a request for the unknown method {UNKNOWN_METHOD!r} must be answered with error -32601 (Method not found), "
            + (f"got error {id_repr(env.error_code)}" if env.kind is Kind.ERROR else f"got a {env.kind.value}")
        ),
        expected={"error": {"code": errors.METHOD_NOT_FOUND}},
        actual=env.error if env.kind is Kind.ERROR else env.value,
        json_path="$.error.code" if env.kind is Kind.ERROR else "$",
        entries=[env],
    )


@scenario(
    requirements=["jsonrpc.error.parse-error", "jsonrpc.response.null-id-when-unreadable"],
    connection=ConnectionKind.DISPOSABLE,
)
async def invalid_json(ctx: ScenarioContext) -> None:
    """A message that is not JSON, followed by a ping (server/discover in 2026-07-28): an error
    response with code -32700 and id null (over HTTP, a 4xx refusal without a JSON-RPC body is
    accepted too), judged once the ping is answered -- a silent server costs one round trip."""
    peer = await ctx.connect(fresh=True)
    req = "jsonrpc.error.parse-error"
    expected = {"id": None, "error": {"code": errors.PARSE_ERROR}}
    mark = len(peer.transcript)
    try:
        await peer.send_raw(INVALID_JSON)
        status = sent_status(peer, mark)
        # the answer to the request sent after it proves the invalid JSON was read
        synced = await sync(peer, ctx.version, timeout=ctx.timeout)
        try:
            env = await peer.expect_message(
                lambda e: is_response(e) and not synced.owns(peer, e),
                what="an error response to a message that is not valid JSON", timeout=GRACE,
            )
        except ExpectTimeout:
            env = None
    except ConnectionLost as exc:
        ctx.check(
            req, False, problem="ServerExitedOnInvalidJson",
            message=f"the connection ended instead of a Parse error response: {exc}",
            expected=expected, actual=str(exc.cause), entries=[mark],
        )
        ctx.not_reached("jsonrpc.response.null-id-when-unreadable", "the connection ended")
        return
    if env is None:
        if status is not None:
            ctx.check(req, True, message=f"accepted: invalid JSON was refused with HTTP {status} (no JSON-RPC error body)",
                      entries=[mark])
            ctx.not_reached("jsonrpc.response.null-id-when-unreadable",
                            f"the invalid JSON was refused with HTTP {status} without a JSON-RPC error body")
            return
        after = (f"within {GRACE:g} s after the answer to the {barrier_method(ctx.version)} sent after it" if synced else
                 f"and nothing answered the {barrier_method(ctx.version)} sent after it within {ctx.timeout:g} s")
        ctx.check(
            req, False, problem="NoParseErrorResponse",
            message=f"no response to invalid JSON ({after}); JSON-RPC 2.0 requires a Parse error response with id null",
            expected=expected, actual="no response", entries=[mark],
        )
        ctx.not_reached("jsonrpc.response.null-id-when-unreadable", "no response arrived")
        return
    is_error = env.kind is Kind.ERROR
    ctx.check(
        "jsonrpc.error.parse-error",
        is_error and env.error_code == errors.PARSE_ERROR,
        problem="WrongErrorCode" if is_error else "InvalidJsonAccepted",
        message=(
            "invalid JSON must be answered with error -32700 (Parse error), "
            + (f"got error {id_repr(env.error_code)}" if is_error else f"got a {env.kind.value}")
        ),
        expected={"error": {"code": errors.PARSE_ERROR}},
        actual=env.error if is_error else env.value,
        json_path="$.error.code" if is_error else "$",
        entries=[env],
    )
    if env.id is MISSING:
        ctx.check(
            "jsonrpc.response.null-id-when-unreadable",
            True,
            message=(
                "accepted: the error response omits id; JSON-RPC 2.0 requires id null, MCP's schema lets an error "
                "response omit an id that could not be read"
            ),
            entries=[env],
        )
    else:
        ctx.check(
            "jsonrpc.response.null-id-when-unreadable",
            env.id is None,
            problem="NonNullIdForUnreadableRequest",
            message=f"the id of an unreadable request cannot be detected, so the response id must be null, got {id_repr(env.id)}",
            expected=None,
            actual=env.id,
            json_path="$.id",
            entries=[env],
        )


@scenario(requirements=["jsonrpc.notification.no-reply", "basic.notifications.no-response"])
async def notifications_not_answered(ctx: ScenarioContext) -> None:
    """A known and an unknown notification, each followed by a barrier request: nothing but the
    barrier's response may arrive."""
    peer = await ctx.connect()
    probes = [
        ("notifications/cancelled", {"requestId": "mcp-conformance-never-sent", "reason": "conformance probe"}),
        (UNKNOWN_NOTIFICATION, {}),
    ]
    barrier_method = "ping" if spec(ctx.version).ping else "server/discover"
    for method, params in probes:
        mark = len(peer.transcript)
        await peer.notify(method, params)
        try:
            answer = await barrier(peer, ctx.version)
        except PeerError as exc:
            if not any(e.direction == "in" and is_response(e.envelope) for e in peer.transcript.entries[mark:]):
                why = f"the {barrier_method} sent after {method!r} as a barrier failed: {exc}"
                ctx.not_reached("jsonrpc.notification.no-reply", why)
                ctx.not_reached("basic.notifications.no-response", why)
                return
            answer = None
        stray = [
            e
            for e in peer.transcript.entries[mark:]
            if e.direction == "in" and e.envelope is not None and is_response(e.envelope) and e.envelope is not answer
        ]
        for req in ("jsonrpc.notification.no-reply", "basic.notifications.no-response"):
            ctx.check(
                req,
                not stray,
                problem="NotificationAnswered",
                message=(
                    f"the notification {method!r} was answered (seen before the response to the {barrier_method} "
                    f"sent after it): {', '.join(_describe(e.envelope) for e in stray[:3])}"
                ),
                expected=f"no response before the {barrier_method} response",
                actual=[e.envelope.summary() for e in stray[:3]],
                entries=[e.seq for e in stray] or ([answer] if answer is not None else []),
            )


def _describe(env) -> str:
    if env.kind is Kind.ERROR:
        return f"error id={id_repr(env.id)} code={id_repr(env.error_code)}"
    return f"{env.kind.value} id={id_repr(env.id)}"


# -- ids echoed verbatim ---------------------------------------------------------------------------

# Distinctive values (the shared session's automatic ids count up from 1): a string that looks like
# a number and the integer with the same digits (the "7" vs 7 trap), the largest integer every JSON
# implementation holds exactly, and a string that needs escaping.
_ECHO_IDS: tuple[Any, ...] = ("700000007", 700000007, 2**53 - 1, 'mcp-conformance/ü "7"\t\\')
_ERROR_IDS: tuple[Any, ...] = ("700000008", 700000008)


@scenario(requirements=["basic.response.id-echo", "basic.response.result-id-echo", "basic.response.error-id-echo"])
async def id_echo(ctx: ScenarioContext) -> None:
    """Requests with string ids, an integer id with the same digits, a large integer and a
    string that needs escaping: every response carries exactly the id of its request (same JSON
    type and value); unknown-method errors too."""
    peer = await ctx.connect()
    method = barrier_method(ctx.version)
    sent: list[tuple[Any, str]] = []
    for rid in _ECHO_IDS:
        await peer.request(method, id=rid)
        sent.append((rid, "result"))
    for rid in _ERROR_IDS:
        await peer.request(UNKNOWN_METHOD, {}, id=rid)
        sent.append((rid, "error"))
    deadline = anyio.current_time() + ctx.timeout
    for rid, kind in sent:
        req = "basic.response.id-echo"
        if not ctx.applies(req):
            req = "basic.response.result-id-echo" if kind == "result" else "basic.response.error-id-echo"
        what = method if kind == "result" else f"the unknown method {UNKNOWN_METHOD!r}"
        try:
            env = await peer.expect_response(rid, timeout=max(0.1, deadline - anyio.current_time()))
        except ExpectTimeout as exc:
            similar = [
                e.envelope
                for e in inbound_entries(peer)
                if is_response(e.envelope) and e.envelope.id is not MISSING and not same_id(e.envelope.id, rid) and loose_id(e.envelope.id) == loose_id(rid)
            ]
            # a response whose id is exactly another id we sent answers that request, not this one
            near = [env for env in similar if not any(same_id(env.id, other) for other, _ in sent)]
            twins = [env for env in similar if env not in near]
            if near:
                ctx.check(
                    req,
                    False,
                    problem="IdNotEchoed",
                    message=(
                        f"the request {what} with id {id_repr(rid)} ({_json_type(rid)}) was answered with id "
                        f"{id_repr(near[0].id)} ({_json_type(near[0].id)}): the response must carry the same id, "
                        "same JSON type and value"
                    ),
                    expected=rid,
                    actual=near[0].id,
                    json_path="$.id",
                    entries=near[:1],
                )
            else:
                ctx.check(
                    req,
                    False,
                    problem="NoResponseWithThisId",
                    message=(
                        f"no response with id {id_repr(rid)} ({_json_type(rid)}) to {what} within {exc.waited:.3g} s; "
                        "the request was sent with exactly this id"
                        + (f" (the request with id {id_repr(twins[0].id)}, the same digits as another JSON type, was answered: "
                           "the server seems to treat the two ids as one)" if twins else "")
                    ),
                    expected=f"a response with id {id_repr(rid)}",
                    actual="none",
                    entries=twins[:1],
                )
            continue
        ctx.check(req, True, entries=[env])


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "null" if value is None else type(value).__name__


# -- Invalid Request (-32600) ---------------------------------------------------------------------


def _invalid_requests(peer, version: str) -> list[tuple[str, dict[str, Any], Any]]:
    """(what is wrong, the message, the id a response may echo) for each probe."""
    return [
        ('"method" is a number (the JSON-RPC 2.0 example)', probe_message(peer, version, id="mcp-conformance-inv-1", method=1, params="bar"), "mcp-conformance-inv-1"),
        ('"jsonrpc" is "1.0"', probe_message(peer, version, id="mcp-conformance-inv-2", jsonrpc="1.0"), "mcp-conformance-inv-2"),
        ('"method" is missing', probe_message(peer, version, id="mcp-conformance-inv-3", method=MISSING, params={}), "mcp-conformance-inv-3"),
        ('"id" is a boolean', probe_message(peer, version, id=True), True),
    ]


@scenario(requirements=["jsonrpc.error.invalid-request"], connection=ConnectionKind.DISPOSABLE)
async def invalid_request(ctx: ScenarioContext) -> None:
    """Messages that are JSON but not valid Request objects ("method" a number or missing,
    "jsonrpc" not "2.0", an id of the wrong type), each followed by a ping (server/discover in
    2026-07-28): each answered with error -32600, id null or the id echoed where it could be
    read (over HTTP, a 4xx refusal without a JSON-RPC body is accepted too)."""
    peer = await ctx.connect(fresh=True)
    req = "jsonrpc.error.invalid-request"
    for what, msg, echo in _invalid_requests(peer, ctx.version):
        mark = len(peer.transcript)

        def matches(env, echo=echo) -> bool:
            return unreadable_answer(env, echo)

        try:
            await peer.send_json(msg)
            status = sent_status(peer, mark)
            # the answer to the request sent after it proves the probe was read
            synced = await sync(peer, ctx.version, timeout=ctx.timeout)
            try:
                env = await peer.expect_message(
                    lambda e, m=matches, b=synced: m(e) and not b.owns(peer, e), what=f"a response to a request whose {what}", timeout=GRACE
                )
            except ExpectTimeout:
                env = None
        except ConnectionLost as exc:
            ctx.check(
                req, False, problem="ServerExitedOnInvalidRequest",
                message=f"the connection ended instead of an Invalid Request error to a request whose {what}: {exc}",
                expected={"error": {"code": errors.INVALID_REQUEST}}, actual=str(exc.cause),
            )
            return
        if env is None:
            if status is not None:
                ctx.check(req, True, message=f"accepted: a request whose {what} was refused with HTTP {status} (no JSON-RPC error body)",
                          entries=[mark])
                continue
            after = (f"within {GRACE:g} s after the answer to the {barrier_method(ctx.version)} sent after it" if synced else
                     f"and nothing answered the {barrier_method(ctx.version)} sent after it within {ctx.timeout:g} s")
            ctx.check(
                req, False, problem="NoInvalidRequestResponse",
                message=f"no response to a request whose {what} ({after}); JSON-RPC 2.0 requires error -32600 (Invalid Request)",
                expected={"error": {"code": errors.INVALID_REQUEST}}, actual="no response", entries=[mark],
            )
            continue
        is_error = env.kind is Kind.ERROR
        ctx.check(
            req,
            is_error and env.error_code == errors.INVALID_REQUEST,
            problem="WrongErrorCode" if is_error else "InvalidRequestAccepted",
            message=(
                f"a request whose {what} must be answered with error -32600 (Invalid Request), "
                + (f"got error {id_repr(env.error_code)}" if is_error else f"got a {env.kind.value}")
            ),
            expected={"error": {"code": errors.INVALID_REQUEST}},
            actual=env.error if is_error else env.value,
            json_path="$.error.code" if is_error else "$",
            entries=[env],
        )


# -- Invalid params (-32602) ----------------------------------------------------------------------

_INVALID_PARAMS_PROBES: tuple[tuple[str, str, dict[str, Any], str], ...] = tuple(
    (cap, method, {"arguments": {}} if member == "name" else {}, f'{method} without the required "{member}"')
    for method, (member, cap) in REQUIRED_PARAM.items()
)


@scenario(requirements=["jsonrpc.error.invalid-params"])
async def invalid_params(ctx: ScenarioContext) -> None:
    """A method the server declares, with params its schema rejects (a required member
    missing): error -32602."""
    peer = await ctx.connect()
    caps = ctx.server_capabilities
    probe = next((p for p in _INVALID_PARAMS_PROBES if isinstance(caps.get(p[0]), dict)), None)
    if probe is None:
        ctx.skip("the server declares none of tools, prompts, resources: no method whose params can be made invalid")
    _, method, params, what = probe
    rid = await peer.request(method, params)
    env = await peer.expect_response(rid)
    is_error = env.kind is Kind.ERROR
    ctx.check(
        "jsonrpc.error.invalid-params",
        is_error and env.error_code == errors.INVALID_PARAMS,
        problem="WrongErrorCode" if is_error else "InvalidParamsAccepted",
        message=(
            f"{what} must be answered with error -32602 (Invalid params), "
            + (f"got error {id_repr(env.error_code)} {error_field(env, 'message')!r}" if is_error else f"got a {env.kind.value}")
        ),
        expected={"error": {"code": errors.INVALID_PARAMS}},
        actual=env.error if is_error else env.value,
        json_path="$.error.code" if is_error else "$",
        entries=[env],
    )


# -- the shape of every response -----------------------------------------------------------------

_SHAPE_REQS = ("jsonrpc.response.result-xor-error", "jsonrpc.error.object", "basic.error.code-integer",
               "basic.error.code-message", "basic.response.error-field", "basic.response.result-field")
_SHAPE_PROBLEM = {"jsonrpc.response.result-xor-error": "ResultXorError", "basic.response.result-field": "ResultXorError",
                  "jsonrpc.error.object": "MalformedErrorObject", "basic.error.code-message": "MalformedErrorObject",
                  "basic.response.error-field": "MalformedErrorObject"}
_SHAPE_EXPECTED = {"jsonrpc.response.result-xor-error": 'exactly one of "result" and "error"',
                   "basic.response.result-field": 'a "result" member (or an "error" member)'}
_MAX_REPORTED = 10


@scenario(requirements=list(_SHAPE_REQS), order=990)
async def response_shapes(ctx: ScenarioContext) -> None:
    """Every response the server sent during the run, on every connection of this version:
    a result or an error, never both; an error object with a code and a string message; an
    integer code."""
    await ctx.connect()
    counted = 0
    bad: dict[str, int] = {r: 0 for r in _SHAPE_REQS if ctx.applies(r)}
    for conn in ctx.connections():
        if conn.info is not None and conn.info.unsupported:
            continue
        for entry in inbound_entries(conn.peer):
            env = entry.envelope
            if env is None or env.value is MISSING:
                continue
            values = env.value if isinstance(env.value, list) else [env.value]
            for value in values:
                if isinstance(value, dict) and "method" not in value and ("id" in value or "result" in value or "error" in value):
                    counted += 1
                for req, problem in response_shape_problems(value, ctx.version):
                    bad[req] = bad.get(req, 0) + 1
                    whole = req in _SHAPE_EXPECTED  # about the response, not its error object
                    if bad[req] <= _MAX_REPORTED:
                        ctx.check(
                            req,
                            False,
                            problem=_SHAPE_PROBLEM.get(req, "NonIntegerErrorCode"),
                            message=f"{problem} (on {conn.label})",
                            expected=_SHAPE_EXPECTED.get(req) or (
                                "an integer code" if req == "basic.error.code-integer" else {"code": "<integer>", "message": "<string>"}),
                            actual=sorted(value) if whole else value.get("error", MISSING),
                            json_path="$" if whole else "$.error",
                            entries=[entry.seq],
                            peer=conn.peer,
                        )
    for req, n in bad.items():
        if n == 0:
            ctx.check(req, True, message=f"{counted} response(s) checked")
        elif n > _MAX_REPORTED:
            ctx.note(f"{n} responses in all; the first {_MAX_REPORTED} are reported", requirement=req)
