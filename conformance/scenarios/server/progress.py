"""basic/utilities/progress (2024-11-05 .. 2025-11-25), basic/patterns/progress (2026-07-28): the
token echoed exactly, progress increasing, nothing after the response."""

from __future__ import annotations

from typing import Any

import time

import anyio

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError, RawPeer
from conformance.runtime.registry import scenario
from conformance.wire.transcript import Direction, TranscriptEntry
from conformance.spec.versions import Transport
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, same_id
from conformance.wire.tasks import TERMINAL, related_task, status_of, task_of

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


def _task_id(env) -> Any:
    """The taskId of a progress notification's related-task _meta (MISSING: none)."""
    rel = related_task(env.params) if env is not None else MISSING
    return rel.get("taskId", MISSING) if isinstance(rel, dict) else MISSING


def task_tokens(peer: RawPeer) -> dict[str, Any]:
    """taskId -> the progressToken of the request whose CreateTaskResult created it, for the tasks
    created on ``peer`` by a request of ours that carried a token (a taskId two CreateTaskResults
    named is left out: which task a notification naming it belongs to cannot be told)."""
    tokens: dict[Any, Any] = {}
    for entry in peer.transcript.entries:
        env = entry.envelope
        if entry.direction == Direction.OUT and env is not None and env.kind is Kind.REQUEST:
            token = _token_sent(env)
            if token is not MISSING:
                tokens[dumps_id(env.id)] = token
    out: dict[str, Any] = {}
    created: dict[str, int] = {}  # taskId -> how many CreateTaskResults named it
    for entry in peer.transcript.entries:
        env = entry.envelope
        if entry.direction != Direction.IN or env is None or env.kind is not Kind.RESULT:
            continue
        task = task_of(env)
        if isinstance(task, dict) and isinstance(task.get("taskId"), str):
            created[task["taskId"]] = created.get(task["taskId"], 0) + 1
            if dumps_id(env.id) in tokens:
                out[task["taskId"]] = tokens[dumps_id(env.id)]
    # a taskId given to two tasks (tasks.id.unique's fault) names no one task: its progress is not attributed
    return {tid: token for tid, token in out.items() if created[tid] == 1}


def dumps_id(value: Any) -> str:
    return f"{type(value).__name__}:{value!r}"


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


@scenario(requirements=["progress.token", "progress.task.same-token"], order=1000)
async def progress_tokens_known(ctx: ScenarioContext) -> None:
    """Every progress notification on every connection of this version during the run (like the
    schema check): its token is one a request of ours on that connection had provided.  One whose
    related-task _meta names a task created on that connection by a request with a token is judged
    against that token (progress.task.same-token, 2025-11-25)."""
    peer = await ctx.connect()
    await closing_round_trip(ctx, peer)
    seen = 0
    reported = 0
    task_seen = task_bad = 0
    for conn in ctx.connections():
        seen += sum(1 for e in conn.transcript.entries if e.direction == Direction.IN and _progress(e.envelope))
        created = task_tokens(conn.peer)
        for entry in conn.transcript.entries:
            env = entry.envelope
            if entry.direction != Direction.IN or not _progress(env) or _task_id(env) not in created:
                continue
            task_seen += 1
            want = created[_task_id(env)]
            if same_id(_token_of(env), want):
                continue
            task_bad += 1
            if task_bad <= 3:
                ctx.check("progress.task.same-token", False, problem="TaskProgressTokenChanged",
                          message=(f"a progress notification of task {_task_id(env)} on {conn.label} carries the token "
                                   f"{id_repr(_token_of(env))}; the task-augmented request that created it gave "
                                   f"{id_repr(want)}"),
                          expected=want, actual=_token_of(env), json_path="$.params.progressToken", entries=[entry.seq],
                          peer=conn.peer)
        judged = {e.seq for e in conn.transcript.entries if e.direction == Direction.IN and _progress(e.envelope)
                  and _task_id(e.envelope) in created}
        for entry in foreign_progress(conn.peer):
            if entry.seq in judged:
                continue  # progress.task.same-token's
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
    if task_seen and not task_bad:
        ctx.check("progress.task.same-token", True,
                  message=f"{task_seen} progress notification(s) of tasks carried the token of the request that created them")
    elif not task_seen:
        ctx.not_reached("progress.task.same-token", "no progress notification named a task created by a request with a "
                                                    "progressToken")
    if not seen:
        ctx.skip("the server sent no progress notification during the run")
    if not reported:
        ctx.check("progress.token", True, message=f"{seen} progress notification(s) in the run, each for a token a request provided")


# -- task-augmented requests (2025-11-25) ---------------------------------------------------------

TASK_TOKEN = "mcp-conformance-task-progress"
TASK_WAIT = 10.0  # seconds past the tool's own duration we wait for the task to end
POLL = 0.1  # seconds between tasks/get polls


@scenario(requirements=["progress.task.same-token", "progress.task.stops-at-terminal"], versions=["2025-11-25"],
          capability="tasks.requests.tools.call", skip_reason="task-augmented requests exist in 2025-11-25")
async def task_progress(ctx: ScenarioContext) -> None:
    """A task-augmented tools/call with a progressToken on a task-capable tool that reports
    progress; tasks/get until the task is terminal, tasks/result, a ping: no progress notification
    for the task after its terminal status was reported (stdio, HTTP+SSE).  The tokens the task's
    notifications carry are judged over the whole run (progress_tokens_known)."""
    ctx.not_reached("progress.task.same-token", "judged over the whole run (progress_tokens_known): no progress "
                    "notification named a task created by a request with a progressToken")
    peer = await ctx.connect()
    listed = await list_tools(peer)
    capable = {t["name"]: t for t in listed if isinstance(t.get("execution"), dict)
               and t["execution"].get("taskSupport") in ("optional", "required")}
    tools = [t for t in long_running_tools(list(capable.values()), seconds=PROGRESS_SECONDS, steps=STEPS, prefer_progress=True)
             if t.progress_hint or t.seconds is not None]
    if not tools:
        ctx.skip("no task-capable tool looks like it reports progress (execution.taskSupport optional or required, and a "
                 "name or description with progress/slow/long/sleep/delay/wait)")
    for n, tool in enumerate(tools[:2]):
        token = f"{TASK_TOKEN}-{n}"
        mark = len(peer.transcript)
        rid = await peer.request("tools/call", {"name": tool.name, "arguments": tool.arguments, "task": {"ttl": 60_000},
                                                "_meta": {"progressToken": token}})
        try:
            created = await peer.expect_response(rid, timeout=ctx.timeout + (tool.seconds or 0))
        except PeerError:
            continue
        task = task_of(created)
        if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
            continue
        tid = task["taskId"]
        terminal = await _poll_terminal(peer, tid, time.monotonic() + (tool.seconds or 0) + max(TASK_WAIT, 2 * ctx.timeout), ctx.timeout)
        if terminal is None:
            ctx.not_reached("progress.task.stops-at-terminal", f"task {tid} of {tool.name} did not reach a terminal status in time")
            return
        try:
            rid = await peer.request("tasks/result", {"taskId": tid})
            await peer.expect_response(rid, timeout=ctx.timeout)
            await barrier(peer, ctx.version)
        except PeerError as exc:
            ctx.not_reached("progress.task.stops-at-terminal", f"the requests after the task ended failed: {exc}")
            return
        entry = peer.entry_of(terminal)
        ended = entry.seq if entry is not None else None
        mine = [e for e in inbound_entries(peer, mark) if _progress(e.envelope)
                and (same_id(_token_of(e.envelope), token) or _task_id(e.envelope) == tid)]
        if not mine:
            continue  # this tool reported no progress as a task; try the next
        if ctx.transport not in (Transport.STDIO, Transport.SSE):
            ctx.not_reached("progress.task.stops-at-terminal", "over streamable HTTP the progress notifications and the "
                            "tasks/get answers travel on different streams: their order does not show which came first")
            return
        late = [e for e in mine if ended is not None and e.seq > ended]
        ctx.check("progress.task.stops-at-terminal", not late, problem="TaskProgressAfterTerminal",
                  message=(f"{len(mine)} progress notification(s) of task {tid} ({tool.name}), none after tasks/get "
                           f"reported it {status_of(terminal)!r}" if not late else
                           f"{len(late)} progress notification(s) of task {tid} ({tool.name}) arrived after tasks/get had "
                           f"reported it {status_of(terminal)!r}"),
                  expected="no progress notification after the task's terminal status",
                  actual=[e.envelope.params for e in late[:3]] or None, entries=[e.seq for e in late[:3]] or [terminal])
        return
    ctx.not_reached("progress.task.stops-at-terminal", "no task-capable tool reported progress as a task (tried "
                    f"{', '.join(t.name for t in tools[:2])})")


async def _poll_terminal(peer: RawPeer, tid: str, deadline: float, timeout: float) -> Envelope | None:
    """tasks/get until the task is terminal (that answer) or ``deadline`` passes (None)."""
    while time.monotonic() < deadline:
        try:
            rid = await peer.request("tasks/get", {"taskId": tid})
            env = await peer.expect_response(rid, timeout=timeout)
        except PeerError:
            return None
        if status_of(env) in TERMINAL:
            return env
        if status_of(env) is MISSING:
            return None
        await anyio.sleep(POLL)
    return None
