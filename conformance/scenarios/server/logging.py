"""server/utilities/logging: the capability, logging/setLevel (2024-11-05 .. 2025-11-25) and
the per-request log level in ``_meta`` (2026-07-28)."""

from __future__ import annotations

from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.spec.versions import LATEST_STATEFUL
from conformance.wire.transcript import Direction
from conformance.wire.envelope import Kind, same_id
from conformance.spec.meta import LOG_LEVEL_KEY

from . import _features as F
from ._helpers import barrier

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
RANK = {name: i for i, name in enumerate(LEVELS)}
BAD_LEVEL = "mcp-conformance-no-such-level"
LEGACY_FIXTURE = "test_tool_with_logging"
MODERN_FIXTURE = "test_logging_tool"
FILTER_LEVEL = "warning"  # above the fixtures' info messages


async def _tool_names(ctx: ScenarioContext, peer) -> set[str]:
    if not F.declared(ctx.server_capabilities, "tools"):
        return set()
    listing = await F.list_all(peer, "tools/list", timeout=ctx.timeout)
    return {t.get("name") for t in listing.items if isinstance(t, dict)}


@scenario(
    requirements=["logging.set-level.accepted", "logging.set-level.filter", "logging.set-level.invalid"],
    until=LATEST_STATEFUL,
    capability="logging",
    skip_reason="2026-07-28 has no logging/setLevel (the level comes with each request's _meta)",
)
async def set_level(ctx: ScenarioContext) -> None:
    """logging/setLevel is accepted with an empty result; afterwards the runner's fixture
    `test_tool_with_logging` (it logs at info) sends nothing below the level set; an unknown
    level is rejected with -32602.  On a shared session the level is set back to debug at the end
    (there is no way to unset it)."""
    peer = await F.cheap_isolated(ctx)
    try:
        await _set_level(ctx, peer)
    finally:
        try:
            rid = await peer.request("logging/setLevel", {"level": "debug"})
            await peer.expect_response(rid)
        except PeerError:
            pass


async def _set_level(ctx: ScenarioContext, peer) -> None:
    rid = await peer.request("logging/setLevel", {"level": FILTER_LEVEL})
    env = await peer.expect_response(rid)
    accepted = env.kind is Kind.RESULT and isinstance(env.result, dict)
    ctx.check(
        "logging.set-level.accepted",
        accepted,
        problem="SetLevelRejected",
        message=(
            f"logging/setLevel {FILTER_LEVEL!r} was answered with a result"
            if accepted
            else f"the server declares `logging`, yet logging/setLevel {FILTER_LEVEL!r} was answered with "
            + (F.describe_error(env) if env.kind is Kind.ERROR else f"a {env.kind.value}")
        ),
        expected={"result": {}},
        actual=env.error if env.kind is Kind.ERROR else env.result,
        entries=[env],
    )
    if not accepted:
        ctx.not_reached("logging.set-level.filter", "logging/setLevel was rejected")
    elif LEGACY_FIXTURE not in await _tool_names(ctx, peer):
        ctx.not_reached("logging.set-level.filter", f"the server offers no tool that logs (the official runner's fixture {LEGACY_FIXTURE!r})")
    else:
        mark = len(peer.transcript)
        rid = await peer.request("tools/call", {"name": LEGACY_FIXTURE, "arguments": {}})
        answer = await peer.expect_response(rid)
        await barrier(peer, ctx.version)  # whatever the tool logged has been read
        below = [
            e
            for e in F.inbound_after(peer, mark, method="notifications/message")
            if isinstance(e.envelope.params, dict) and RANK.get(e.envelope.params.get("level"), 99) < RANK[FILTER_LEVEL]
        ]
        ctx.check(
            "logging.set-level.filter",
            not below,
            problem="LogLevelNotFiltered",
            message=(
                f"after logging/setLevel {FILTER_LEVEL!r}, {LEGACY_FIXTURE} sent {len(below)} message(s) below it "
                f"(levels {sorted({e.envelope.params.get('level') for e in below})})"
                if below
                else f"after logging/setLevel {FILTER_LEVEL!r}, {LEGACY_FIXTURE} sent nothing below it"
            ),
            expected=f"only levels {', '.join(LEVELS[RANK[FILTER_LEVEL]:])}",
            actual=[e.envelope.params for e in below[:5]],
            entries=[e.seq for e in below] or [answer],
        )
    rid = await peer.request("logging/setLevel", {"level": BAD_LEVEL})
    env = await peer.expect_response(rid)
    ok = env.kind is Kind.ERROR and env.error_code == errors.INVALID_PARAMS
    ctx.check(
        "logging.set-level.invalid",
        ok,
        problem="InvalidLogLevelAccepted" if env.kind is Kind.RESULT else "WrongErrorCode",
        message=(
            f"logging/setLevel {BAD_LEVEL!r} (not a log level) was answered with "
            + (F.describe_error(env) if env.kind is Kind.ERROR else "a result")
            + ("" if ok else "; the page names -32602 (Invalid params) for an invalid log level")
        ),
        expected={"error": {"code": errors.INVALID_PARAMS}},
        actual=env.error if env.kind is Kind.ERROR else env.result,
        entries=[env],
    )


@scenario(
    requirements=["logging.meta.absent-no-messages", "logging.meta.same-stream", "logging.meta.invalid-level"],
    since="2026-07-28",
)
async def meta_log_level(ctx: ScenarioContext) -> None:
    """2026-07-28: a request whose `_meta` log level is not a level is rejected with -32602; the
    fixture `test_logging_tool` logs nothing for a request without a log level, and with one
    its messages travel on that request's response stream."""
    peer = await ctx.connect()
    if F.declared(ctx.server_capabilities, "logging"):
        await _invalid_meta_level(ctx, peer)
    else:
        ctx.not_reached("logging.meta.invalid-level", "the server does not declare `logging` (a server without logging may ignore the level)")
    if MODERN_FIXTURE not in await _tool_names(ctx, peer):
        why = f"the server offers no tool that logs (the official runner's fixture {MODERN_FIXTURE!r})"
        ctx.not_reached("logging.meta.absent-no-messages", why + "; the whole run is checked by logging.no_unrequested_messages")
        ctx.not_reached("logging.meta.same-stream", why)
        return
    # without a log level: nothing
    mark = len(peer.transcript)
    rid = await peer.request("tools/call", {"name": MODERN_FIXTURE, "arguments": {}})
    answer = await peer.expect_response(rid)
    await barrier(peer, ctx.version)
    logs = F.inbound_after(peer, mark, method="notifications/message")
    ctx.check(
        "logging.meta.absent-no-messages",
        not logs,
        problem="UnrequestedLogMessage",
        message=(
            f"tools/call {MODERN_FIXTURE} without _meta {LOG_LEVEL_KEY} brought {len(logs)} notifications/message"
            if logs
            else f"tools/call {MODERN_FIXTURE} without a log level brought no notifications/message"
        ),
        expected="no notifications/message",
        actual=[e.envelope.params for e in logs[:5]],
        entries=[e.seq for e in logs] or [answer],
    )
    # with a log level: on the request's own stream
    mark = len(peer.transcript)
    rid = await peer.request("tools/call", {"name": MODERN_FIXTURE, "arguments": {}}, meta={LOG_LEVEL_KEY: "debug"})
    answer = await peer.expect_response(rid)
    await barrier(peer, ctx.version)
    logs = F.inbound_after(peer, mark, method="notifications/message")
    if not logs:
        ctx.not_reached("logging.meta.same-stream", f"{MODERN_FIXTURE} sent no notifications/message with log level debug (it MAY)")
        return
    stream = F.stream_of(peer, answer)
    elsewhere = [e for e in logs if e.meta.get("stream") != stream]
    ctx.check(
        "logging.meta.same-stream",
        not elsewhere,
        problem="LogMessageOnOtherStream",
        message=(
            f"{len(elsewhere)} of {len(logs)} notifications/message for the request arrived on another stream than its response ({stream})"
            if elsewhere
            else f"{len(logs)} notifications/message arrived on the request's response stream ({stream})"
        ),
        expected=stream,
        actual=sorted({str(e.meta.get('stream')) for e in elsewhere}),
        entries=[e.seq for e in logs],
    )


async def _invalid_meta_level(ctx: ScenarioContext, peer) -> None:
    method, params = _probe_request(ctx)
    rid = await peer.request(method, params, meta={LOG_LEVEL_KEY: BAD_LEVEL})
    env = await peer.expect_response(rid)
    ok = env.kind is Kind.ERROR and env.error_code == errors.INVALID_PARAMS
    ctx.check(
        "logging.meta.invalid-level",
        ok,
        problem="InvalidLogLevelAccepted" if env.kind is Kind.RESULT else "WrongErrorCode",
        message=(
            f"{method} with _meta {LOG_LEVEL_KEY} = {BAD_LEVEL!r} (not a log level) was answered with "
            + (F.describe_error(env) if env.kind is Kind.ERROR else "a result")
            + ("" if ok else "; the page names -32602 (Invalid params)")
        ),
        expected={"error": {"code": errors.INVALID_PARAMS}},
        actual=env.error if env.kind is Kind.ERROR else env.result,
        entries=[env],
    )


def _asked_windows(peer) -> list[tuple[int, float]]:
    """Transcript spans from each request that carried a `_meta` log level to its response
    (or the end): log messages inside one of them may belong to that request."""
    out: list[tuple[int, float]] = []
    for entry in peer.transcript.entries:
        env = entry.envelope
        if entry.direction != Direction.OUT or env is None or env.kind is not Kind.REQUEST:
            continue
        meta = env.params.get("_meta") if isinstance(env.params, dict) else None
        if not (isinstance(meta, dict) and LOG_LEVEL_KEY in meta):
            continue
        end: float = float("inf")
        for later in peer.transcript.entries[entry.seq + 1 :]:
            le = later.envelope
            if later.direction == Direction.IN and le is not None and le.is_response and same_id(le.id, env.id):
                end = later.seq
                break
        out.append((entry.seq, end))
    return out


def _probe_request(ctx: ScenarioContext) -> tuple[str, Any]:
    caps = ctx.server_capabilities
    for method in ("tools/list", "prompts/list", "resources/list"):
        if F.declared(caps, F.LISTS[method][1]):
            return method, {}
    return "server/discover", {}


@scenario(requirements=["logging.capability.declared", "logging.meta.absent-no-messages"], order=900)
async def no_unrequested_messages(ctx: ScenarioContext) -> None:
    """Over the whole run of this version: no notifications/message from a server that does not
    declare `logging`; in 2026-07-28, none outside the span of a request that asked for a log
    level (our requests ask only in logging.meta_log_level)."""
    await ctx.connect()
    declared = F.declared(ctx.server_capabilities, "logging")
    seen: list[tuple[Any, Any]] = []  # (connection, entry)
    unasked: list[tuple[Any, Any]] = []
    for conn in ctx.connections():
        if conn.info is not None and conn.info.unsupported:
            continue
        windows = _asked_windows(conn.peer)
        for entry in conn.transcript.entries:
            env = entry.envelope
            if entry.direction == Direction.IN and env is not None and env.kind is Kind.NOTIFICATION and env.method == "notifications/message":
                seen.append((conn, entry))
                if not any(lo < entry.seq < hi for lo, hi in windows):
                    unasked.append((conn, entry))
    conns = len(ctx.connections())
    if declared:
        ctx.check("logging.capability.declared", True, message="the server declares the logging capability")
    else:
        first = seen[0] if seen else None
        ctx.check(
            "logging.capability.declared",
            not seen,
            problem="UndeclaredLogging",
            message=(
                f"the server does not declare `logging`, yet sent {len(seen)} notifications/message (first on {first[0].label})"
                if first
                else f"the server does not declare `logging` and sent no notifications/message on {conns} connection(s)"
            ),
            expected="no notifications/message",
            actual=[e.envelope.params for _, e in seen[:5]],
            entries=[first[1].seq] if first else [],
            peer=first[0].peer if first else None,
        )
    if ctx.applies("logging.meta.absent-no-messages"):
        first = unasked[0] if unasked else None
        ctx.check(
            "logging.meta.absent-no-messages",
            not unasked,
            problem="UnrequestedLogMessage",
            message=(
                f"{len(unasked)} notifications/message arrived while no request carrying _meta {LOG_LEVEL_KEY} was open "
                f"(first on {first[0].label})"
                if first
                else f"no notifications/message on the connections that asked for no log level ({conns} connection(s))"
            ),
            expected="no notifications/message for requests without a log level",
            actual=[e.envelope.params for _, e in unasked[:5]],
            entries=[first[1].seq] if first else [],
            peer=first[0].peer if first else None,
        )

