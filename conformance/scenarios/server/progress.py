"""basic/utilities/progress (2024-11-05 .. 2025-11-25), basic/patterns/progress (2026-07-28): the
token echoed exactly, progress increasing, nothing after the response."""

from __future__ import annotations

from typing import Any

from conformance.server.context import ScenarioContext
from conformance.peer import PeerError, RawPeer
from conformance.registry import scenario
from conformance.transcript import Direction, TranscriptEntry
from conformance.wire.envelope import MISSING, Kind, id_repr, same_id

from ._helpers import barrier, barrier_method, closing_round_trip, inbound_entries, list_tools, long_running_tools, loose_id

PROGRESS_SECONDS = 0.4  # how long we ask an adjustable tool to take
STEPS = 4
# A string token that looks like a number: "7" and 7 are different tokens.
TOKEN_BASE = 70017
REQS = ("progress.token", "progress.increasing", "progress.stops-after-completion")


def _progress(env) -> bool:
    return env is not None and env.kind is Kind.NOTIFICATION and env.method == "notifications/progress"


def _token_of(env) -> Any:
    return env.params.get("progressToken", MISSING) if isinstance(env.params, dict) else MISSING


def _token_sent(env) -> Any:
    """The progressToken a request of ours carried in ``params._meta``, if any."""
    params = env.params if env is not None and env.kind is Kind.REQUEST else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken", MISSING) if isinstance(meta, dict) else MISSING


def foreign_progress(peer: RawPeer) -> list[TranscriptEntry]:
    """Progress notifications on ``peer`` whose token no request of ours on it had carried by then
    (same JSON value and type): "Progress notifications MUST only reference tokens that: - Were
    provided in an active request".  Notifications for a token of a request already answered are
    progress.stops-after-completion's, not counted here."""
    provided: list[Any] = []
    out = []
    for entry in peer.transcript.entries:
        env = entry.envelope
        if entry.direction == Direction.OUT:
            token = _token_sent(env)
            if token is not MISSING:
                provided.append(token)
        elif _progress(env) and not any(same_id(_token_of(env), t) for t in provided):
            out.append(entry)
    return out


@scenario(requirements=list(REQS), capability="tools")
async def progress_notifications(ctx: ScenarioContext) -> None:
    """A tool call with a progressToken, on a tool (found in tools/list) that reports progress:
    every notification carries exactly our token, progress increases, and none follows the
    response."""
    peer = await ctx.connect()
    tools = long_running_tools(await list_tools(peer), seconds=PROGRESS_SECONDS, steps=STEPS, prefer_progress=True)
    if not tools:
        ctx.skip("no tool looks like it reports progress (name or description with progress/slow/long/sleep/delay/wait)")
    for n, tool in enumerate(tools[:3]):
        token = str(TOKEN_BASE + n)
        mark = len(peer.transcript)
        rid = await peer.request("tools/call", {"name": tool.name, "arguments": tool.arguments, "_meta": {"progressToken": token}})
        env = await peer.expect_response(rid, timeout=max(ctx.timeout, (tool.seconds or 0) + ctx.timeout))
        if env.kind is Kind.ERROR or (isinstance(env.result, dict) and env.result.get("isError") is True):
            continue
        response_seq = peer.entry_of(env).seq if peer.entry_of(env) is not None else None
        before = [e for e in inbound_entries(peer, mark) if _progress(e.envelope) and (response_seq is None or e.seq < response_seq)]
        ours = [e for e in before if _token_of(e.envelope) == token and type(_token_of(e.envelope)) is str]
        unknown = {e.seq for e in foreign_progress(peer)}
        # a token that resembles ours ("7" for 7), or one no request provided: the tool reports
        # progress, with the wrong token
        near = [e for e in before if e not in ours and (loose_id(_token_of(e.envelope)) == loose_id(token) or e.seq in unknown)]
        if not ours and not near:
            continue  # this tool reports no progress; try the next
        _judge(ctx, peer, tool.name, token, rid, ours, near)
        try:
            await barrier(peer, ctx.version)
        except PeerError as exc:
            ctx.not_reached("progress.stops-after-completion", f"the {barrier_method(ctx.version)} after the response failed: {exc}")
            return
        after = [
            e for e in inbound_entries(peer, mark)
            if _progress(e.envelope) and response_seq is not None and e.seq > response_seq
            and loose_id(_token_of(e.envelope)) == loose_id(token)
        ]
        ctx.check(
            "progress.stops-after-completion", not after, problem="ProgressAfterCompletion",
            message=(f"{len(after)} progress notification(s) for token {id_repr(token)} arrived after the response to the "
                     f"tools/call of {tool.name} (id {id_repr(rid)})"),
            expected="no progress notification after the response", actual=[e.envelope.params for e in after[:3]],
            entries=[e.seq for e in after[:3]] or [env],
        )
        return
    ctx.skip(f"no tool reported progress for a progressToken (tried {', '.join(t.name for t in tools[:3])})")


def _judge(ctx: ScenarioContext, peer, tool: str, token: str, rid: Any, ours: list, near: list) -> None:
    if near:
        bad = near[0].envelope
        ctx.check(
            "progress.token", False, problem="ProgressTokenChanged",
            message=(f"we sent progressToken {id_repr(token)} (a string); progress notifications came back with "
                     f"{id_repr(_token_of(bad))}, a token no request provided"),
            expected=token, actual=_token_of(bad), json_path="$.params.progressToken", entries=[e.seq for e in near[:3]],
        )
    else:
        ctx.check("progress.token", True, message=f"{len(ours)} progress notification(s) of {tool} carried token {id_repr(token)}",
                  entries=[ours[0].seq])
    values = [e.envelope.params.get("progress", MISSING) for e in ours + near]
    seqs = [e.seq for e in ours + near]
    order = sorted(zip(seqs, values))
    previous: Any = MISSING
    for seq, value in order:
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not numeric:
            ctx.check("progress.increasing", False, problem="ProgressNotANumber",
                      message=f"a progress notification of {tool} carries progress {id_repr(value)}, not a number",
                      expected="a number larger than the previous one", actual=value, json_path="$.params.progress", entries=[seq])
            return
        if previous is not MISSING and not value > previous:
            ctx.check("progress.increasing", False, problem="ProgressNotIncreasing",
                      message=f"progress of {tool} went from {previous!r} to {value!r}; it must increase with each notification",
                      expected=f"more than {previous!r}", actual=value, json_path="$.params.progress", entries=[seq])
            return
        previous = value
    ctx.check("progress.increasing", True, message=f"progress of {tool}: {', '.join(repr(v) for _, v in order)}", entries=seqs[:1])


@scenario(requirements=["progress.token"], order=1000)
async def progress_tokens_known(ctx: ScenarioContext) -> None:
    """Every progress notification on every connection of this version during the run (like the
    schema check): its token is one a request of ours on that connection had provided."""
    peer = await ctx.connect()
    await closing_round_trip(ctx, peer)
    seen = 0
    reported = 0
    for conn in ctx.connections():
        seen += sum(1 for e in conn.transcript.entries if e.direction == Direction.IN and _progress(e.envelope))
        for entry in foreign_progress(conn.peer):
            reported += 1
            if reported > 10:
                continue
            ctx.check(
                "progress.token", False, problem="ProgressTokenUnknown",
                message=(f"a progress notification on {conn.label} references token {id_repr(_token_of(entry.envelope))}, "
                         "which no request on that connection had provided"),
                expected="a progressToken from an active request", actual=_token_of(entry.envelope),
                json_path="$.params.progressToken", entries=[entry.seq], peer=conn.peer,
            )
    if not seen:
        ctx.skip("the server sent no progress notification during the run")
    if not reported:
        ctx.check("progress.token", True, message=f"{seen} progress notification(s) in the run, each for a token a request provided")
