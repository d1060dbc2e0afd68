"""JSON-RPC 2.0 itself: error codes, unreadable requests, notifications."""

from __future__ import annotations

from conformance.context import ScenarioContext
from conformance.peer import ConnectionLost, ExpectTimeout, PeerError
from conformance.registry import scenario
from conformance.spec import errors
from conformance.spec.versions import spec
from conformance.wire.envelope import MISSING, Kind, id_repr

from ._helpers import barrier, is_response

UNKNOWN_METHOD = "mcp-conformance/no-such-method"
UNKNOWN_NOTIFICATION = "notifications/mcp-conformance/no-such-notification"
INVALID_JSON = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {'


@scenario(requirements=["jsonrpc.error.method-not-found"])
async def unknown_method(ctx: ScenarioContext) -> None:
    """A request for a method nobody defines: error -32601."""
    peer = await ctx.connect()
    rid = await peer.request(UNKNOWN_METHOD, {})
    env = await peer.expect_response(rid)
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
    fresh=True,
)
async def invalid_json(ctx: ScenarioContext) -> None:
    """A message that is not JSON: an error response with code -32700 and id null."""
    peer = await ctx.connect(fresh=True)
    await peer.send_raw(INVALID_JSON)
    what = "an error response to a message that is not valid JSON"
    try:
        env = await peer.expect_message(is_response, what=what)
    except ExpectTimeout as exc:
        ctx.check(
            "jsonrpc.error.parse-error",
            False,
            problem="NoParseErrorResponse",
            message=f"no response to invalid JSON within {exc.waited:.3g} s ({exc}); JSON-RPC 2.0 requires a Parse error response with id null",
            expected={"id": None, "error": {"code": errors.PARSE_ERROR}},
            actual="no response",
        )
        ctx.not_reached("jsonrpc.response.null-id-when-unreadable", "no response arrived")
        return
    except ConnectionLost as exc:
        ctx.check(
            "jsonrpc.error.parse-error",
            False,
            problem="ServerExitedOnInvalidJson",
            message=f"the connection ended instead of a Parse error response: {exc}",
            expected={"id": None, "error": {"code": errors.PARSE_ERROR}},
            actual=str(exc.cause),
        )
        ctx.not_reached("jsonrpc.response.null-id-when-unreadable", "the connection ended")
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
