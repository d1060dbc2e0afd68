"""basic/utilities/tasks (2025-11-25): the server as the receiver of task-augmented ``tools/call``
and of ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``.

The tools are the server's own, found in tools/list by their ``execution.taskSupport``; we call
only those the server says change nothing (``readOnlyHint: true``) or neither destroy anything nor
reach outside (``destructiveHint: false`` and ``openWorldHint: false``), or whose name says they
only take time, and whose required arguments we can build.  Where a check needs a tool that takes
a while (a duration argument) or that fails, and the server offers none, it is skipped with the
reason.  Every wait has a deadline.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import anyio

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import ExpectTimeout, PeerError, RawPeer
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec import errors as codes
from conformance.spec.meta import RELATED_TASK_KEY
from conformance.spec.versions import Transport
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr
from conformance.wire.tasks import TERMINAL, asked_task, iso_timestamp
from conformance.wire.tasks import comparable as _comparable
from conformance.wire.tasks import related_task as _related
from conformance.wire.tasks import status_of as _status
from conformance.wire.tasks import task_of as _task_of
from conformance.wire.tasks import taskish as _taskish

from ._features import declared, describe_error, synth_args
from ._helpers import closing_round_trip, list_tools, long_running_tools
from ._stateless import input_responses

SLOW_SECONDS = 1.2  # how long we ask an adjustable tool to take
TASK_WAIT = 15.0  # how long past its own duration we wait for a task to end
POLL_MIN, POLL_MAX = 0.05, 0.5  # seconds between tasks/get polls (the server's pollInterval, within these)
TTL_MS = 60_000
UNKNOWN_WAIT = 5.0  # how long after cancelling a task of unknown duration we look again
TOOLS_CALL = "tasks.requests.tools.call"
_ONLY_TIME = re.compile(r"slow|sleep|delay|wait", re.I)


# ---------------------------------------------------------------------------------------------
# which tools


@dataclass(frozen=True)
class TaskTool:
    name: str
    arguments: dict[str, Any]
    support: str  # "optional" | "required" | "forbidden" (absent)
    seconds: float | None  # how long we asked it to take (None: not adjustable)
    tool: dict[str, Any]


def task_support(tool: dict[str, Any]) -> str:
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in ("optional", "required", "forbidden") else "forbidden"


def _harmless(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    if ann.get("destructiveHint") is True:
        return False
    if ann.get("readOnlyHint") is True:
        return True
    if ann.get("destructiveHint") is False and ann.get("openWorldHint") is False:
        return True
    name = tool.get("name", "")
    desc = tool.get("description") if isinstance(tool.get("description"), str) else ""
    return bool(_ONLY_TIME.search(name) or _ONLY_TIME.search(desc or ""))


def callable_tools(listed: list[dict[str, Any]], *, seconds: float = SLOW_SECONDS) -> list[TaskTool]:
    """The tools we may call, with arguments: adjustable ones asked to take ``seconds``."""
    timed = {t.name: t for t in long_running_tools([dict(t, execution={}) for t in listed], seconds=seconds)}
    out = []
    for tool in listed:
        if not _harmless(tool):
            continue
        name = tool["name"]
        long = timed.get(name)
        if long is not None and long.seconds is not None:
            out.append(TaskTool(name, long.arguments, task_support(tool), long.seconds, tool))
            continue
        args = synth_args(tool.get("inputSchema") if "inputSchema" in tool else {"type": "object"})
        if args is not None:
            out.append(TaskTool(name, args, task_support(tool), None, tool))
    return out


def _capable(tools: list[TaskTool]) -> list[TaskTool]:
    return [t for t in tools if t.support in ("optional", "required")]


# ---------------------------------------------------------------------------------------------
# small readers


def _call_result(env: Envelope | None) -> bool:
    return env is not None and env.kind is Kind.RESULT and isinstance(env.result, dict) and isinstance(env.result.get("content"), list)


async def _ask(peer: RawPeer, method: str, params: Any, timeout: float, **kw: Any) -> Envelope | None:
    rid = await peer.request(method, params, **kw)
    try:
        return await peer.expect_response(rid, timeout=timeout)
    except PeerError:
        return None


async def _create(peer: RawPeer, tool: TaskTool, timeout: float, *, token: str | None = None) -> tuple[Envelope | None, float]:
    params: dict[str, Any] = {"name": tool.name, "arguments": tool.arguments, "task": {"ttl": TTL_MS}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    started = time.monotonic()
    env = await _ask(peer, "tools/call", params, timeout + (tool.seconds or 0))
    return env, time.monotonic() - started


async def _poll(peer: RawPeer, tid: str, deadline: float, timeout: float) -> Envelope | None:
    """tasks/get until the task is terminal or ``deadline`` (monotonic) passes; the last answer."""
    last = None
    while True:
        last = await _ask(peer, "tasks/get", {"taskId": tid}, timeout)
        status = _status(last)
        if last is None or status in TERMINAL or status is MISSING or time.monotonic() >= deadline:
            return last
        interval = last.result.get("pollInterval") if isinstance(last.result, dict) else None
        wait = interval / 1000 if isinstance(interval, (int, float)) and not isinstance(interval, bool) else POLL_MAX
        await anyio.sleep(min(POLL_MAX, max(POLL_MIN, wait)))


def _deadline(ctx: ScenarioContext, tool: TaskTool) -> float:
    return time.monotonic() + (tool.seconds or 0) + max(TASK_WAIT, 2 * ctx.timeout)


async def _listed(ctx: ScenarioContext, peer: RawPeer) -> list[dict[str, Any]]:
    return await list_tools(peer, timeout=ctx.timeout)


async def _working_task(ctx: ScenarioContext, peer: RawPeer, *, seconds: float, purpose: str) -> tuple[TaskTool, str]:
    """A task of ours on ``peer``: the first task-capable tool we may call (one we can ask to
    take ``seconds`` first) called task-augmented; its tool and taskId.  Skips, naming
    ``purpose``, when the server offers no such tool or the call creates no task."""
    if not declared(ctx.server_capabilities, TOOLS_CALL):
        ctx.skip(f"the server does not declare {TOOLS_CALL}: no task of ours to {purpose}")
    tools = _capable(callable_tools(await _listed(ctx, peer), seconds=seconds))
    tools.sort(key=lambda t: t.seconds is None)  # one we can ask to take a while first
    if not tools:
        ctx.skip("no tool we may call is marked taskSupport \"optional\" or \"required\"")
    tool = tools[0]
    env, _ = await _create(peer, tool, ctx.timeout)
    task = _task_of(env)
    if task is None or not isinstance(task.get("taskId"), str):
        ctx.skip(f"a task-augmented call of {tool.name} created no task ({'no answer' if env is None else env.kind.value})")
    return tool, task["taskId"]


# ---------------------------------------------------------------------------------------------
# capability


@scenario(requirements=["tasks.capability.declared"], capability="tools")
async def capability_declared(ctx: ScenarioContext) -> None:
    """A server whose tools/list marks a tool execution.taskSupport "optional" or "required"
    supports task-augmented tool calls, and must declare the `tasks` capability."""
    peer = await ctx.connect()
    listed = await _listed(ctx, peer)
    capable = [t["name"] for t in listed if task_support(t) in ("optional", "required")]
    caps = ctx.server_capabilities
    if declared(caps, "tasks"):
        ctx.check("tasks.capability.declared", True, message="the server declares the tasks capability")
        return
    if not capable:
        ctx.skip("the server declares no tasks capability and no tool says it supports task-augmented execution")
    ctx.check(
        "tasks.capability.declared", False, problem="TasksCapabilityMissing",
        message=(f"tools/list marks {', '.join(capable[:5])} with execution.taskSupport optional/required, yet the "
                 "server declared no `tasks` capability during initialization"),
        expected={"tasks": {"requests": {"tools": {"call": {}}}}}, actual=caps,
    )


@scenario(requirements=["tasks.undeclared.processed-normally"], capability="tools")
async def undeclared_processed_normally(ctx: ScenarioContext) -> None:
    """A server that does not declare tasks.requests.tools.call: a tool call carrying params.task
    is processed as a normal call (compared with the same call without it)."""
    if declared(ctx.server_capabilities, TOOLS_CALL):
        ctx.skip("the server declares tasks.requests.tools.call; the rule is for servers that do not")
    peer = await ctx.connect()
    if declared(ctx.server_capabilities, TOOLS_CALL):
        ctx.skip("the server declares tasks.requests.tools.call; the rule is for servers that do not")
    tools = [t for t in callable_tools(await _listed(ctx, peer), seconds=0.1)
             if t.seconds is not None or t.tool.get("annotations", {}).get("readOnlyHint") is True]
    if not tools:
        ctx.skip("no tool we may call (readOnlyHint: true, arguments we can build)")
    req = "tasks.undeclared.processed-normally"
    for tool in tools[:3]:
        plain = await _ask(peer, "tools/call", {"name": tool.name, "arguments": tool.arguments}, ctx.timeout + (tool.seconds or 0))
        env, _ = await _create(peer, tool, ctx.timeout)
        if env is None:
            ctx.check(req, False, problem="TaskAugmentedCallUnanswered",
                      message=f"a tools/call of {tool.name} with params.task was not answered within {ctx.timeout:g} s",
                      expected="the call processed normally", actual="no response")
            return
        if _task_of(env) is not None and not _call_result(env):
            ctx.check(req, False, problem="TaskCreatedWithoutCapability",
                      message=(f"the server does not declare {TOOLS_CALL}, yet answered a tools/call of {tool.name} with "
                               "params.task with a CreateTaskResult instead of processing it normally"),
                      expected="a CallToolResult (the task metadata ignored)", actual=env.result, entries=[env])
            return
        if env.kind is Kind.ERROR and plain is not None and plain.kind is Kind.RESULT:
            ctx.check(req, False, problem="TaskAugmentedCallRejected",
                      message=(f"a tools/call of {tool.name} succeeds without params.task but was answered with "
                               f"{describe_error(env)} with it; the task metadata must be ignored"),
                      expected="the result the plain call gets", actual=env.error, entries=[env])
            return
        if plain is not None and plain.kind is env.kind:
            ctx.check(req, True, message=f"a tools/call of {tool.name} with params.task was answered as the plain call was", entries=[env])
            return
    ctx.skip("no tool answered the plain call and the task-augmented call alike (nothing to compare)")


# ---------------------------------------------------------------------------------------------
# tool-level negotiation


@scenario(requirements=["tasks.tool.required-without-task", "tasks.tool.forbidden-with-task"], capability=TOOLS_CALL)
async def tool_level_negotiation(ctx: ScenarioContext) -> None:
    """A tool marked taskSupport "required" called without params.task must get -32601; a tool
    whose taskSupport is absent or "forbidden" called with it should get -32601."""
    peer = await ctx.connect()
    tools = callable_tools(await _listed(ctx, peer), seconds=0.1)
    required = [t for t in tools if t.support == "required"]
    forbidden = [t for t in tools if t.support == "forbidden"]
    if not required:
        ctx.not_reached("tasks.tool.required-without-task", "no tool we may call is marked taskSupport \"required\"")
    else:
        tool = required[0]
        env = await _ask(peer, "tools/call", {"name": tool.name, "arguments": tool.arguments}, ctx.timeout + (tool.seconds or 0))
        ok = env is not None and env.kind is Kind.ERROR and env.error_code == codes.METHOD_NOT_FOUND
        ctx.check(
            "tasks.tool.required-without-task", ok, problem="RequiredTaskToolCalledPlainly",
            message=(f"{tool.name} (taskSupport \"required\") called without params.task was answered with "
                     + ("nothing" if env is None else describe_error(env) if env.kind is Kind.ERROR
                        else "a tool result with isError: true, not a JSON-RPC error" if isinstance(env.result, dict)
                        and env.result.get("isError") is True else "a result")),
            expected=f"error {codes.METHOD_NOT_FOUND} (Method not found)",
            actual=None if env is None else env.error if env.kind is Kind.ERROR else env.result,
            entries=[env] if env is not None else [],
        )
    if not forbidden:
        ctx.not_reached("tasks.tool.forbidden-with-task", "no tool we may call lacks taskSupport or marks it \"forbidden\"")
        return
    tool = forbidden[0]
    env, _ = await _create(peer, tool, ctx.timeout)
    ok = env is not None and env.kind is Kind.ERROR and env.error_code == codes.METHOD_NOT_FOUND
    if env is not None and _task_of(env) is not None:
        await _drain(ctx, peer, _task_of(env))
    got = ("nothing" if env is None else describe_error(env) if env.kind is Kind.ERROR
           else "a CreateTaskResult" if _task_of(env) is not None else "a result")
    ctx.check(
        "tasks.tool.forbidden-with-task", ok, problem="ForbiddenTaskToolCalledAsTask",
        message=f"{tool.name} (taskSupport {task_support(tool.tool)!r}) called with params.task was answered with {got}",
        expected=f"error {codes.METHOD_NOT_FOUND} (Method not found)",
        actual=None if env is None else env.error if env.kind is Kind.ERROR else env.result,
        entries=[env] if env is not None else [],
    )


async def _drain(ctx: ScenarioContext, peer: RawPeer, task: Any) -> None:
    """A task we did not mean to create: let it end (bounded), so nothing runs past the scenario."""
    tid = task.get("taskId") if isinstance(task, dict) else None
    if isinstance(tid, str):
        await _poll(peer, tid, time.monotonic() + ctx.timeout, ctx.timeout)


# ---------------------------------------------------------------------------------------------
# the life of a task


LIFE = (
    "tasks.create.result",
    "tasks.create.working",
    "tasks.create.promptly",
    "tasks.id.unique",
    "tasks.id.receiver-generated",
    "tasks.result.blocks",
    "tasks.result.terminal",
    "tasks.result.success",
    "tasks.related.messages",
    "tasks.meta.param-wins",
    "tasks.list.retrievable",
    "tasks.cancel.terminal-rejected",
    "tasks.failed.status-message",
    "tasks.result.error",
)


@scenario(requirements=list(LIFE), capability=TOOLS_CALL, connection=ConnectionKind.APART)
async def task_lifecycle(ctx: ScenarioContext) -> None:
    """Task-augmented tool calls of the server's task-capable tools: a CreateTaskResult at once,
    in status working; tasks/result sent while the task works is answered only once it is
    terminal, with the call's result; progress of the task carries related-task; tasks/get
    honours its taskId over related-task metadata; the tasks appear in tasks/list; cancelling a
    completed task is rejected with -32602; a failed task says why."""
    peer = await ctx.connect()
    listed = await _listed(ctx, peer)
    tools = _capable(callable_tools(listed))
    if not tools:
        ctx.skip("no tool we may call is marked taskSupport \"optional\" or \"required\"")
    created: list[tuple[str, Envelope]] = []  # (taskId, CreateTaskResult)

    # 1. a task that takes a while (or the first task-capable tool)
    slow = [t for t in tools if t.seconds is not None] or tools
    probe = None
    for tool in slow[:3]:
        token = f"mcp-conformance-task-{len(created)}"
        env, elapsed = await _create(peer, tool, ctx.timeout, token=token)
        task = _task_of(env)
        if env is None:
            ctx.check("tasks.create.result", False, problem="TaskAugmentedCallUnanswered",
                      message=f"a task-augmented tools/call of {tool.name} was not answered within {ctx.timeout + (tool.seconds or 0):g} s",
                      expected="a CreateTaskResult", actual="no response")
            return
        if env.kind is Kind.ERROR:
            continue  # not accepted: nothing to judge on this tool
        ctx.check("tasks.create.result", task is not None, problem="NotACreateTaskResult",
                  message=(f"a task-augmented tools/call of {tool.name} (taskSupport {tool.support!r}) was answered with "
                           + ("a CreateTaskResult" if task is not None else "a result without a `task` object")),
                  expected="a CreateTaskResult: {\"task\": {...}}", actual=env.result, entries=[env])
        if task is None or not isinstance(task.get("taskId"), str):
            return
        created.append((task["taskId"], env))
        probe = (tool, token, env, elapsed, task)
        break
    if probe is None:
        ctx.skip(f"no task-capable tool accepted a task-augmented call ({', '.join(t.name for t in slow[:3])} answered with errors)")
    tool, token, create_env, elapsed, task = probe
    tid = task["taskId"]
    if tool.seconds is not None and elapsed < tool.seconds:
        ctx.check("tasks.create.working", task.get("status") == "working", problem="TaskNotWorkingAtCreation",
                  message=(f"{tool.name}, asked to take {tool.seconds:g} s, was answered after {elapsed:.2g} s with a task in "
                           f"status {task.get('status')!r}"),
                  expected="working", actual=task.get("status"), json_path="$.result.task.status", entries=[create_env])
    else:
        ctx.not_reached("tasks.create.working", f"no tool we can ask to take a while answered before its time ({tool.name})")
    if tool.seconds is not None:
        ctx.check("tasks.create.promptly", elapsed < tool.seconds, problem="CreateTaskResultDelayed",
                  message=(f"the CreateTaskResult for {tool.name}, asked to take {tool.seconds:g} s, came after {elapsed:.2g} s"),
                  expected=f"well before {tool.seconds:g} s", actual=f"{elapsed:.3g} s", entries=[create_env])
    else:
        ctx.not_reached("tasks.create.promptly", "no task-capable tool whose duration we can set")

    # 2. tasks/result while it works
    deadline = _deadline(ctx, tool)
    now = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
    if _status(now) in ("working", "input_required"):
        mark = len(peer.transcript)
        rid = await peer.request("tasks/result", {"taskId": tid})
        try:
            res = await peer.expect_response(rid, timeout=max(0.1, deadline - time.monotonic()))
        except PeerError:
            res = None
        after = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
        if res is None:
            ctx.not_reached("tasks.result.blocks", f"the task did not end within {deadline - (time.monotonic()):.3g} s")
        else:
            ok = _status(after) in TERMINAL
            ctx.check("tasks.result.blocks", ok, problem="TaskResultNotBlocking",
                      message=(f"tasks/result for task {tid} (working) was answered "
                               + ("once the task was terminal" if ok else
                                  f"with {describe_error(res) if res.kind is Kind.ERROR else 'a result'} while tasks/get still "
                                  f"reports {_status(after)!r}")),
                      expected="the answer held back until the task is terminal",
                      actual=res.error if res.kind is Kind.ERROR else res.result, entries=[res])
        _related_progress(ctx, peer, token, tid, create_env, mark)
    else:
        ctx.not_reached("tasks.result.blocks", f"the task was {_status(now)!r} at once, not working")
        _related_progress(ctx, peer, token, tid, create_env, len(peer.transcript))
    final = await _poll(peer, tid, deadline, ctx.timeout)
    if _status(final) == "completed":
        res = await _ask(peer, "tasks/result", {"taskId": tid}, ctx.timeout)
        _judge_terminal(ctx, tid, res, "completed")
        if res is not None and res.kind is not Kind.ERROR and not _taskish(res):
            ok = _call_result(res) and res.result.get("isError") is not True
            ctx.check("tasks.result.success", ok, problem="TaskResultNotTheCallResult",
                      message=f"tasks/result for the completed task {tid} of {tool.name}",
                      expected="a successful response with the CallToolResult", actual=res.result, entries=[res])
        elif res is not None and res.kind is Kind.ERROR:
            ctx.check("tasks.result.success", False, problem="TaskResultErrorForCompletedTask",
                      message=f"tasks/result for the task {tid}, completed, was answered with {describe_error(res)}",
                      expected="a successful response with the CallToolResult", actual=res.error, entries=[res])

    # 3. a quick task, compared with the plain call
    quick = [t for t in tools if t.support == "optional" and t.seconds is None and t.name != tool.name] + \
        [t for t in tools if t.support == "optional" and t.name != tool.name and t.seconds is not None]
    second = None
    for other in quick[:3]:
        plain1 = await _ask(peer, "tools/call", {"name": other.name, "arguments": other.arguments}, ctx.timeout + (other.seconds or 0))
        if plain1 is None or plain1.kind is not Kind.RESULT:
            continue
        plain2 = await _ask(peer, "tools/call", {"name": other.name, "arguments": other.arguments}, ctx.timeout + (other.seconds or 0))
        env, _ = await _create(peer, other, ctx.timeout)
        qtask = _task_of(env)
        if qtask is None or not isinstance(qtask.get("taskId"), str):
            continue
        created.append((qtask["taskId"], env))
        qid = qtask["taskId"]
        done = await _poll(peer, qid, _deadline(ctx, other), ctx.timeout)
        if _status(done) not in TERMINAL:
            continue
        res = await _ask(peer, "tasks/result", {"taskId": qid}, ctx.timeout)
        _judge_terminal(ctx, qid, res, _status(done))
        if res is not None and not _taskish(res):
            same = plain2 is not None and _comparable(plain1.result) == _comparable(plain2.result)
            want = _comparable(plain1.result)
            if res.kind is Kind.ERROR:
                ok = False
            elif same:
                ok = _comparable(res.result) == want
            else:
                ok = _call_result(res) and res.result.get("isError") is plain1.result.get("isError")
            ctx.check("tasks.result.success", ok, problem="TaskResultNotTheCallResult",
                      message=(f"tasks/result for task {qid} of {other.name}, compared with "
                               + ("the result two plain calls with the same arguments returned" if same else
                                  "the plain call's isError (two plain calls differed)")),
                      expected=want, actual=res.error if res.kind is Kind.ERROR else _comparable(res.result), entries=[res])
        second = (qid, _status(done))
        break

    # 4. unique ids
    if len(created) >= 2:
        ids = [t for t, _ in created]
        ctx.check("tasks.id.unique", len(set(ids)) == len(ids), problem="TaskIdReused",
                  message=f"{len(ids)} tasks created, with taskIds {', '.join(id_repr(i) for i in ids)}",
                  expected="distinct taskIds", actual=ids, entries=[e for _, e in created])
    else:
        extra, _ = await _create(peer, tool, ctx.timeout) if tool.seconds is None else (None, 0.0)
        xtask = _task_of(extra)
        if xtask is not None and isinstance(xtask.get("taskId"), str):
            created.append((xtask["taskId"], extra))
            ctx.check("tasks.id.unique", xtask["taskId"] != tid, problem="TaskIdReused",
                      message=f"two tasks of {tool.name} created, with taskIds {id_repr(tid)} and {id_repr(xtask['taskId'])}",
                      expected="distinct taskIds", actual=[tid, xtask["taskId"]], entries=[e for _, e in created])
            await _poll(peer, xtask["taskId"], _deadline(ctx, tool), ctx.timeout)
        else:
            ctx.not_reached("tasks.id.unique", "only one task could be created")

    # 4b. the receiver generates the ID, whatever the request says
    ours = "mcp-conformance-requested-task-id"
    quick = next((t for t in tools if t.seconds is None), tool)
    params = {"name": quick.name, "arguments": quick.arguments, "task": {"ttl": TTL_MS, "taskId": ours}}
    named = await _ask(peer, "tools/call", params, ctx.timeout + (quick.seconds or 0))
    ntask = _task_of(named)
    if ntask is not None and "taskId" in ntask:
        ctx.check("tasks.id.receiver-generated", ntask["taskId"] != ours, problem="TaskIdFromRequestor",
                  message=(f"a task-augmented tools/call of {quick.name} whose params.task named taskId {ours!r} was answered "
                           f"with a task of taskId {id_repr(ntask['taskId'])}"),
                  expected="a taskId the server generated", actual=ntask["taskId"], json_path="$.result.task.taskId",
                  entries=[named])
        if isinstance(ntask["taskId"], str):
            created.append((ntask["taskId"], named))
            await _poll(peer, ntask["taskId"], _deadline(ctx, quick), ctx.timeout)
    else:
        ctx.not_reached("tasks.id.receiver-generated",
                        f"the task-augmented call of {quick.name} naming a taskId did not create a task "
                        f"({describe_error(named) if named is not None and named.kind is Kind.ERROR else 'no CreateTaskResult'})")

    # 5. the taskId parameter wins over related-task metadata
    other_id = created[1][0] if len(created) > 1 and created[1][0] != tid else "mcp-conformance-no-such-task"
    env = await _ask(peer, "tasks/get", {"taskId": tid, "_meta": {RELATED_TASK_KEY: {"taskId": other_id}}}, ctx.timeout)
    if env is None:
        plain = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
        if plain is not None and plain.kind is Kind.RESULT:
            ctx.check("tasks.meta.param-wins", False, problem="TaskRequestRoutedByMetadata",
                      message=(f"tasks/get with taskId {id_repr(tid)} and related-task metadata naming {id_repr(other_id)} was "
                               f"not answered within {ctx.timeout:g} s, while the same tasks/get without the metadata was "
                               "answered at once: the metadata was not ignored"),
                      expected={"taskId": tid}, actual="no response", entries=[plain])
        else:
            ctx.not_reached("tasks.meta.param-wins", "tasks/get was not answered, with or without related-task metadata")
    else:
        got = env.result.get("taskId") if env.kind is Kind.RESULT and isinstance(env.result, dict) else MISSING
        ctx.check("tasks.meta.param-wins", env.kind is Kind.RESULT and got == tid, problem="TaskIdParamIgnored",
                  message=(f"tasks/get with taskId {id_repr(tid)} and related-task metadata naming {id_repr(other_id)} was "
                           + (f"answered for task {id_repr(got)}" if env.kind is Kind.RESULT else f"answered with {describe_error(env)}")),
                  expected={"taskId": tid}, actual=env.result if env.kind is Kind.RESULT else env.error, entries=[env])

    # 6. every task we created is in tasks/list
    if declared(ctx.server_capabilities, "tasks.list"):
        await _judge_listing(ctx, peer, [t for t, _ in created])
    else:
        ctx.not_reached("tasks.list.retrievable", "the server does not declare tasks.list")

    # 7. cancelling a task that has ended
    ended = [(t, s) for t, s in ([(tid, _status(final))] + ([second] if second else [])) if s in ("completed", "failed")]
    if not declared(ctx.server_capabilities, "tasks.cancel"):
        ctx.not_reached("tasks.cancel.terminal-rejected", "the server does not declare tasks.cancel")
    elif not ended:
        ctx.not_reached("tasks.cancel.terminal-rejected", "no task reached completed or failed")
    else:
        done_id, done_status = ended[0]
        env = await _ask(peer, "tasks/cancel", {"taskId": done_id}, ctx.timeout)
        if env is None:
            ctx.check("tasks.cancel.terminal-rejected", False, problem="CancelUnanswered",
                      message=f"tasks/cancel for the {done_status} task {done_id} was not answered within {ctx.timeout:g} s",
                      expected=f"error {codes.INVALID_PARAMS}", actual="no response")
        else:
            ok = env.kind is Kind.ERROR and env.error_code == codes.INVALID_PARAMS
            ctx.check("tasks.cancel.terminal-rejected", ok, problem="TerminalTaskCancelAccepted",
                      message=(f"tasks/cancel for the {done_status} task {done_id} was answered with "
                               + (describe_error(env) if env.kind is Kind.ERROR else f"a result (status {_status(env)!r})")),
                      expected=f"error {codes.INVALID_PARAMS} (Invalid params)",
                      actual=env.error if env.kind is Kind.ERROR else env.result, entries=[env])

    # 8. a task that fails says why; one whose call ends in a JSON-RPC error returns that error
    await _failed_task(ctx, peer, tools)
    await _error_task(ctx, peer, tools)


def _judge_terminal(ctx: ScenarioContext, tid: str, res: Envelope | None, status: str) -> None:
    if res is None:
        ctx.check("tasks.result.terminal", False, problem="TaskResultUnanswered",
                  message=f"tasks/result for the {status} task {tid} was not answered within {ctx.timeout:g} s",
                  expected="the final result of the underlying request, or its JSON-RPC error", actual="no response")
        return
    ok = not _taskish(res)
    ctx.check("tasks.result.terminal", ok, problem="TaskResultIsTaskData",
              message=(f"tasks/result for the {status} task {tid} was answered with "
                       + (describe_error(res) if res.kind is Kind.ERROR else "a result" if ok else "task data, not the call's result")),
              expected="the final result of the underlying request, or its JSON-RPC error",
              actual=res.error if res.kind is Kind.ERROR else res.result, entries=[res])


def _related_progress(ctx: ScenarioContext, peer: RawPeer, token: str, tid: str, create_env: Envelope, mark: int) -> None:
    """Progress notifications for the task's token after its CreateTaskResult carry related-task."""
    entry = peer.entry_of(create_env)
    start = entry.seq if entry is not None else mark
    seen = []
    for e in peer.transcript.entries:
        env = e.envelope
        if (e.direction != Direction.IN or env is None or e.seq <= start or env.kind is not Kind.NOTIFICATION
                or env.method != "notifications/progress" or not isinstance(env.params, dict)
                or env.params.get("progressToken") != token):
            continue
        seen.append(e)
    if not seen:
        ctx.not_reached("tasks.related.messages", "the task sent no progress notification for our progressToken after its CreateTaskResult")
        return
    bad = [e for e in seen if not (isinstance(_related(e.envelope.params), dict) and _related(e.envelope.params).get("taskId") == tid)]
    ctx.check("tasks.related.messages", not bad, problem="TaskMessageWithoutRelatedTask",
              message=(f"{len(bad)} of {len(seen)} progress notification(s) of task {tid} lack "
                       f"_meta[{RELATED_TASK_KEY!r}] = {{\"taskId\": {id_repr(tid)}}}" if bad else
                       f"{len(seen)} progress notification(s) of task {tid} carried its related-task metadata"),
              expected={RELATED_TASK_KEY: {"taskId": tid}}, actual=_related(bad[0].envelope.params) if bad else None,
              entries=[e.seq for e in (bad or seen)[:3]])


async def _judge_listing(ctx: ScenarioContext, peer: RawPeer, ids: list[str]) -> None:
    retrievable = []
    for tid in ids:
        env = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
        if env is not None and env.kind is Kind.RESULT:
            retrievable.append(tid)
    if not retrievable:
        ctx.not_reached("tasks.list.retrievable", "no task we created was retrievable via tasks/get any more")
        return
    found: set[str] = set()
    cursor: Any = MISSING
    last = None
    for _ in range(20):
        env = await _ask(peer, "tasks/list", {} if cursor is MISSING else {"cursor": cursor}, ctx.timeout)
        if env is None or env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            ctx.check("tasks.list.retrievable", False, problem="TasksListFailed",
                      message=("tasks/list was not answered" if env is None else f"tasks/list was answered with {describe_error(env)}"
                               if env.kind is Kind.ERROR else "tasks/list was answered without a result object"),
                      expected="a result listing the tasks", actual=None if env is None else env.value, entries=[env] if env else [])
            return
        last = env
        items = env.result.get("tasks")
        if isinstance(items, list):
            found.update(t.get("taskId") for t in items if isinstance(t, dict) and isinstance(t.get("taskId"), str))
        cursor = env.result.get("nextCursor", MISSING)
        if not isinstance(cursor, str) or all(t in found for t in retrievable):
            break
    missing = [t for t in retrievable if t not in found]
    ctx.check("tasks.list.retrievable", not missing, problem="TaskNotListed",
              message=(f"tasks/get answers for {len(retrievable)} task(s); tasks/list "
                       + (f"does not list {', '.join(id_repr(t) for t in missing)}" if missing else "lists them all")),
              expected=retrievable, actual=sorted(found), entries=[last])


async def _failed_task(ctx: ScenarioContext, peer: RawPeer, tools: list[TaskTool]) -> None:
    req = "tasks.failed.status-message"
    for tool in [t for t in tools if t.support == "optional" and t.seconds is None][:6]:
        plain = await _ask(peer, "tools/call", {"name": tool.name, "arguments": tool.arguments}, ctx.timeout)
        if plain is None or plain.kind is not Kind.RESULT or not isinstance(plain.result, dict) or plain.result.get("isError") is not True:
            continue
        env, _ = await _create(peer, tool, ctx.timeout)
        task = _task_of(env)
        if task is None or not isinstance(task.get("taskId"), str):
            continue
        done = await _poll(peer, task["taskId"], _deadline(ctx, tool), ctx.timeout)
        if _status(done) != "failed":
            continue
        message = done.result.get("statusMessage")
        ctx.check(req, isinstance(message, str) and message.strip() != "", problem="FailedTaskWithoutStatusMessage",
                  message=f"tasks/get for the failed task {task['taskId']} of {tool.name}: statusMessage {message!r}",
                  expected="a statusMessage saying what went wrong", actual=done.result, entries=[done])
        return
    ctx.not_reached(req, "no task-capable tool we may call ended in a failed task (a plain call with isError: true)")


async def _error_task(ctx: ScenarioContext, peer: RawPeer, tools: list[TaskTool]) -> None:
    req = "tasks.result.error"
    for tool in [t for t in tools if t.support == "optional" and t.seconds is None][:8]:
        plain = await _ask(peer, "tools/call", {"name": tool.name, "arguments": tool.arguments}, ctx.timeout)
        if plain is None or plain.kind is not Kind.ERROR:
            continue
        env, _ = await _create(peer, tool, ctx.timeout)
        task = _task_of(env)
        if task is None or not isinstance(task.get("taskId"), str):
            continue
        tid = task["taskId"]
        done = await _poll(peer, tid, _deadline(ctx, tool), ctx.timeout)
        if _status(done) not in TERMINAL:
            continue
        res = await _ask(peer, "tasks/result", {"taskId": tid}, ctx.timeout)
        if res is None:
            continue  # unanswered: tasks.result.terminal's
        ok = res.kind is Kind.ERROR and res.error_code == plain.error_code
        ctx.check(req, ok, problem="TaskResultNotTheCallError",
                  message=(f"{tool.name} called plainly is answered with {describe_error(plain)}; tasks/result for its task "
                           f"{tid} ({_status(done)}) was answered with "
                           + (describe_error(res) if res.kind is Kind.ERROR else "a result")),
                  expected=plain.error, actual=res.error if res.kind is Kind.ERROR else res.result, entries=[res])
        return
    ctx.not_reached(req, "no task-capable tool we may call ends in a JSON-RPC error")


# ---------------------------------------------------------------------------------------------
# cancellation


@scenario(requirements=["tasks.cancel.cancelled", "tasks.cancel.remains-cancelled", "tasks.result.terminal"],
          capability="tasks.cancel", connection=ConnectionKind.APART)
async def task_cancellation(ctx: ScenarioContext) -> None:
    """tasks/cancel for a task still working: the answer says cancelled, tasks/get says so at
    once and still after the time the work would have taken; tasks/result for the cancelled
    task is answered."""
    if not declared(ctx.server_capabilities, TOOLS_CALL) and ctx.server_capabilities:
        ctx.skip(f"the server does not declare {TOOLS_CALL}: no task of ours to cancel")
    peer = await ctx.connect()
    tool, tid = await _working_task(ctx, peer, seconds=2 * SLOW_SECONDS, purpose="cancel")
    started = time.monotonic()
    now = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
    if _status(now) not in ("working", "input_required"):
        ctx.skip(f"the task of {tool.name} was {_status(now)!r} at once; nothing to cancel")
    env = await _ask(peer, "tasks/cancel", {"taskId": tid}, ctx.timeout)
    req = "tasks.cancel.cancelled"
    if env is None:
        ctx.check(req, False, problem="CancelUnanswered", message=f"tasks/cancel for the working task {tid} was not answered within {ctx.timeout:g} s",
                  expected="a CancelTaskResult in status cancelled", actual="no response")
        return
    after = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
    if env.kind is Kind.ERROR:
        if _status(after) in ("completed", "failed"):
            ctx.not_reached(req, f"the task ended ({_status(after)}) before the cancellation arrived")
        else:
            ctx.check(req, False, problem="ValidCancelRejected",
                      message=f"tasks/cancel for the working task {tid} was answered with {describe_error(env)}",
                      expected="a CancelTaskResult in status cancelled", actual=env.error, entries=[env])
        return
    ok = _status(env) == "cancelled" and _status(after) in ("cancelled", MISSING)
    ctx.check(req, ok, problem="TaskNotCancelled",
              message=(f"tasks/cancel for the working task {tid} answered status {_status(env)!r}; tasks/get right after: "
                       + (describe_error(after) if after is not None and after.kind is Kind.ERROR else repr(_status(after)))),
              expected="cancelled, in the answer and from then on", actual=env.result, json_path="$.result.status",
              entries=[env] + ([after] if after is not None else []))
    res = await _ask(peer, "tasks/result", {"taskId": tid}, ctx.timeout)
    if res is not None and res.kind is Kind.ERROR and res.error_code == codes.INVALID_PARAMS and _status(after) is MISSING:
        ctx.not_reached("tasks.result.terminal", "the cancelled task was deleted (the page allows it)")
    else:
        _judge_terminal(ctx, tid, res, "cancelled")
    # the work would have ended by now: the task is still cancelled (or gone)
    # (a tool whose duration we cannot set: as long as we wait for an answer, at most UNKNOWN_WAIT)
    rest = (tool.seconds if tool.seconds is not None else min(ctx.timeout, UNKNOWN_WAIT)) - (time.monotonic() - started) + 0.3
    if rest > 0:
        await anyio.sleep(rest)
    later = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
    if later is None:
        ctx.not_reached("tasks.cancel.remains-cancelled", "tasks/get was not answered")
        return
    gone = later.kind is Kind.ERROR and later.error_code == codes.INVALID_PARAMS
    ctx.check("tasks.cancel.remains-cancelled", gone or _status(later) == "cancelled", problem="CancelledTaskChanged",
              message=(f"tasks/get for the cancelled task {tid}, "
                       + (f"once {tool.name} would have finished: " if tool.seconds is not None else
                          f"{time.monotonic() - started:.2g} s after it was created: ")
                       + ("not found (deleted, which the page allows)" if gone else
                          describe_error(later) if later.kind is Kind.ERROR else f"status {_status(later)!r}")),
              expected="cancelled", actual=later.error if later.kind is Kind.ERROR else later.result, entries=[later])


# ---------------------------------------------------------------------------------------------
# protocol errors


# ---------------------------------------------------------------------------------------------
# a task that needs the client's input

_ASKS = re.compile(r"elicit|input|\bask(s|ing)?\b|confirm|question", re.I)
_ASKS_FLAG = re.compile(r"clarif|input.?required|elicit|\bask", re.I)  # a boolean argument that makes a tool ask
_CLIENT_ASKS = ("elicitation/create", "sampling/createMessage")
INPUT_REQS = ("tasks.input-required.status", "tasks.input-required.resumes", "tasks.related.messages")


def _asking_tools(listed: list[dict[str, Any]]) -> list[TaskTool]:
    """Task-capable tools whose name or description says they ask the client for something, with
    arguments we can build (never one marked destructive)."""
    out = []
    for tool in listed:
        ann = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
        text = f"{tool.get('name', '')} {tool.get('title', '')} {tool.get('description', '')}"
        if task_support(tool) not in ("optional", "required") or ann.get("destructiveHint") is True or not _ASKS.search(text):
            continue
        schema = tool.get("inputSchema") if "inputSchema" in tool else {"type": "object"}
        args = synth_args(schema)
        if args is None:
            continue
        props = schema.get("properties") if isinstance(schema, dict) else None
        for name, prop in (props.items() if isinstance(props, dict) else ()):
            if isinstance(prop, dict) and prop.get("type") == "boolean" and _ASKS_FLAG.search(f"{name} {prop.get('description', '')}"):
                args[name] = True  # e.g. "Simulate an ambiguous query that requires clarification"
        out.append(TaskTool(tool["name"], args, task_support(tool), None, tool))
    return out


def _seq_of(peer: RawPeer, env: Envelope) -> int:
    """Where ``env`` (a message we received) stands in the connection's transcript (-1: not found)."""
    return next((e.seq for e in peer.transcript.entries if e.envelope is env), -1)


async def _await_request(ctx: ScenarioContext, peer: RawPeer, tid: str,
                         after: Envelope | None = None) -> tuple[Envelope | None, Any, str]:
    """Poll task ``tid`` until the server sends the client a request (returned), the task ends,
    or the deadline passes; tasks/result is sent once tasks/get says input_required.  Returns
    (the request, the id of our tasks/result or MISSING, the last status seen)."""
    deadline = time.monotonic() + 2 * ctx.timeout
    result_rid: Any = MISSING
    last = "?"
    while time.monotonic() < deadline:
        try:
            env = await peer.expect_message(lambda e: e.kind is Kind.REQUEST and e.method in _CLIENT_ASKS,
                                            what="a request of the task to the client", timeout=POLL_MAX)
            if after is not None and _seq_of(peer, env) < _seq_of(peer, after):
                await peer.respond(env.id, _answer(env))  # sent before the task existed: no task's request
                continue
            return env, result_rid, last
        except ExpectTimeout:
            pass
        got = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
        last = _status(got) if isinstance(_status(got), str) else "?"
        if last in TERMINAL:
            return None, result_rid, last
        if last == "input_required" and result_rid is MISSING:
            result_rid = await peer.request("tasks/result", {"taskId": tid})
            deadline = min(deadline, time.monotonic() + ctx.timeout)  # the request is due on its stream now
    return None, result_rid, last


async def _answer_earlier_asks(peer: RawPeer) -> None:
    """Answer the requests to the client that arrived before a task was created (a server may ask
    on its own, e.g. right after initialization): they are no task's, so not judged here."""
    while True:
        try:
            env = await peer.expect_message(lambda e: e.kind is Kind.REQUEST and e.method in _CLIENT_ASKS,
                                            what="a request to the client sent before the task", timeout=0)
        except ExpectTimeout:
            return
        await peer.respond(env.id, _answer(env))


def _answer(request: Envelope) -> dict[str, Any]:
    return input_responses({"ask": {"method": request.method, "params": request.params}}).get("ask", {"action": "decline"})


@scenario(requirements=list(INPUT_REQS), capability=TOOLS_CALL, connection=ConnectionKind.APART)
async def task_input_required(ctx: ScenarioContext) -> None:
    """A task-capable tool that asks the client for input, called as a task by a client that
    declares elicitation and sampling: while the server's request waits for its answer the task
    is input_required, the request names the task (related-task), and once answered the task
    leaves input_required."""
    peer = await ctx.connect(fresh=True, capabilities={"elicitation": {}, "sampling": {}})
    for method in _CLIENT_ASKS:
        peer.on_request(method, None)  # held: answered by this scenario, after a look at the task
    tools = _asking_tools(await _listed(ctx, peer))
    if not tools:
        ctx.skip("no task-capable tool (taskSupport optional or required) looks like it asks the client for input")
    tried = []
    for tool in tools[:3]:
        await _answer_earlier_asks(peer)
        env, _ = await _create(peer, tool, ctx.timeout)
        task = _task_of(env)
        if task is None or not isinstance(task.get("taskId"), str):
            tried.append(f"{tool.name}: no task created")
            continue
        tid = task["taskId"]
        asked, result_rid, last = await _await_request(ctx, peer, tid, after=env)
        if asked is None:
            tried.append(f"{tool.name}: no request reached us (last status {last})")
            if last not in TERMINAL and declared(ctx.server_capabilities, "tasks.cancel"):
                await _ask(peer, "tasks/cancel", {"taskId": tid}, ctx.timeout)
            continue
        # 1. the task while its request waits for us
        now = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
        status = _status(now)
        ctx.check("tasks.input-required.status", status == "input_required", problem="TaskNotInputRequired",
                  message=(f"task {tid} of {tool.name} sent the client {asked.method}; a tasks/get sent while that request waited "
                           f"for its answer said {status if status is not MISSING else 'nothing'!r}"),
                  expected="input_required", actual=status, entries=[asked, *([now] if now is not None else [])])
        # 2. the request names its task
        rel = _related(asked.params)
        ctx.check("tasks.related.messages", isinstance(rel, dict) and rel.get("taskId") == tid, problem="TaskRequestWithoutRelatedTask",
                  message=f"the {asked.method} task {tid} sent the client carries _meta[{RELATED_TASK_KEY!r}] {rel if rel is not MISSING else '(absent)'}",
                  expected={RELATED_TASK_KEY: {"taskId": tid}}, actual=None if rel is MISSING else rel,
                  json_path=f"$.params._meta['{RELATED_TASK_KEY}']", entries=[asked])
        # 3. answered: out of input_required
        await peer.respond(asked.id, _answer(asked))
        deadline = time.monotonic() + ctx.timeout
        after = None
        again = None
        while True:
            after = await _ask(peer, "tasks/get", {"taskId": tid}, ctx.timeout)
            if _status(after) != "input_required" or time.monotonic() >= deadline:
                break
            try:
                again = await peer.expect_message(lambda e: e.kind is Kind.REQUEST and e.method in _CLIENT_ASKS,
                                                  what="another request of the task", timeout=POLL_MIN)
                break
            except ExpectTimeout:
                pass
        if again is not None:
            ctx.not_reached("tasks.input-required.resumes", f"task {tid} asked the client again ({again.method}) before it left input_required")
            await peer.respond(again.id, _answer(again))
        else:
            left = _status(after)
            ctx.check("tasks.input-required.resumes", left != "input_required", problem="TaskStuckInInputRequired",
                      message=(f"task {tid} of {tool.name}: {asked.method} answered; {ctx.timeout:g} s later tasks/get still says "
                               f"{left!r}" if left == "input_required" else f"task {tid}: after the answer, tasks/get says {left!r}"),
                      expected="working (or a terminal status)", actual=left, entries=[after] if after is not None else [])
        # the task's end (and our tasks/result's answer) before the connection goes
        await _poll(peer, tid, time.monotonic() + TASK_WAIT / 3, ctx.timeout)
        if result_rid is not MISSING:
            try:
                await peer.expect_response(result_rid, timeout=ctx.timeout)
            except PeerError:
                pass
        return
    why = "; ".join(tried) or "none tried"
    for rid in INPUT_REQS:
        if rid == "tasks.related.messages":
            ctx.not_reached(rid, f"no task sent the client a request ({why})")
        else:
            ctx.not_reached(rid, f"no task of a tool that asks for input sent the client a request ({why})")


@scenario(requirements=["tasks.errors.invalid-params"], capability="tasks")
async def unknown_task_rejected(ctx: ScenarioContext) -> None:
    """tasks/get, tasks/result and tasks/cancel for a taskId no task has, and tasks/list with a
    cursor the server never issued: each answered with -32602 (Invalid params)."""
    peer = await ctx.connect()
    caps = ctx.server_capabilities
    bogus = "mcp-conformance-no-such-task"
    probes = [("tasks/get", {"taskId": bogus}), ("tasks/result", {"taskId": bogus})]
    if declared(caps, "tasks.cancel"):
        probes.append(("tasks/cancel", {"taskId": bogus}))
    if declared(caps, "tasks.list"):
        probes.append(("tasks/list", {"cursor": "mcp-conformance-never-issued"}))
    for method, params in probes:
        env = await _ask(peer, method, params, ctx.timeout)
        what = f"{method} with cursor {params['cursor']!r}" if "cursor" in params else f"{method} for unknown taskId {bogus!r}"
        if env is None:
            ctx.check("tasks.errors.invalid-params", False, problem="UnknownTaskUnanswered",
                      message=f"{what} was not answered within {ctx.timeout:g} s", expected=f"error {codes.INVALID_PARAMS}", actual="no response")
            continue
        ok = env.kind is Kind.ERROR and env.error_code == codes.INVALID_PARAMS
        ctx.check("tasks.errors.invalid-params", ok, problem="UnknownTaskNotInvalidParams",
                  message=f"{what} was answered with " + (describe_error(env) if env.kind is Kind.ERROR else "a result"),
                  expected=f"error {codes.INVALID_PARAMS} (Invalid params)",
                  actual=env.error if env.kind is Kind.ERROR else env.result, entries=[env])


# ---------------------------------------------------------------------------------------------
# every task message of the run


OBSERVED = (
    "tasks.id.string",
    "tasks.timestamps.created-at",
    "tasks.timestamps.last-updated-at",
    "tasks.get.ttl",
    "tasks.status.valid-paths",
    "tasks.result.related-task",
    "tasks.meta.not-on-results",
    "tasks.status-notification.no-related-task",
    "tasks.get.no-sse",
    "tasks.requestor.declared-only",
)
MAX_REPORTED = 5


def _declared_task_types(entries: list[Any]) -> set[str]:
    """The request types the suite's client declared under tasks.requests in its initialize on
    that connection (``sampling/createMessage`` for tasks.requests.sampling.createMessage)."""
    for entry in entries:
        env = entry.envelope
        if entry.direction == Direction.OUT and env is not None and env.method == "initialize" and isinstance(env.params, dict):
            caps = env.params.get("capabilities")
            tasks = caps.get("tasks") if isinstance(caps, dict) else None
            reqs = tasks.get("requests") if isinstance(tasks, dict) else None
            if not isinstance(reqs, dict):
                return set()
            return {f"{group}/{name}" for group, kinds in reqs.items() if isinstance(kinds, dict) for name in kinds}
    return set()


@scenario(requirements=list(OBSERVED), order=1000)
async def task_messages(ctx: ScenarioContext) -> None:
    """Every task message the server sent during the run (like the schema check, on every
    connection of this version): taskIds are strings; every task carries ISO 8601 createdAt and
    lastUpdatedAt; tasks/get carries ttl (as JSON over streamable HTTP, not on an SSE stream); no
    status leaves completed or failed; tasks/result results carry related-task, tasks/get/list/cancel
    results and status notifications do not."""
    peer = await ctx.connect()
    await closing_round_trip(ctx, peer)
    seen: dict[str, int] = {r: 0 for r in OBSERVED}
    bad: dict[str, int] = {r: 0 for r in OBSERVED}

    def judge(rid: str, ok: bool, conn_peer: RawPeer, seq: int, **kw: Any) -> None:
        seen[rid] += 1
        if ok:
            return
        bad[rid] += 1
        if bad[rid] <= MAX_REPORTED:
            ctx.check(rid, False, entries=[seq], peer=conn_peer, **kw)

    for conn in ctx.connections():
        statuses: dict[str, tuple[str, int]] = {}
        declared_types: set[str] | None = None
        for entry in conn.transcript.entries:
            env = entry.envelope
            if entry.direction != Direction.IN or env is None:
                continue
            if env.kind is Kind.REQUEST:
                if declared_types is None:
                    declared_types = _declared_task_types(conn.transcript.entries)
                task = env.params.get("task", MISSING) if isinstance(env.params, dict) else MISSING
                judge("tasks.requestor.declared-only", task is MISSING or env.method in declared_types, conn.peer, entry.seq,
                      problem="UndeclaredTaskAugmentation",
                      message=(f"the server sent {env.method} (id {id_repr(env.id)}) augmented with a task (params.task), "
                               + (f"but the client declared task support only for {', '.join(sorted(declared_types))}"
                                  if declared_types else "but the client declared no tasks capability")),
                      expected="no params.task", actual=task, json_path="$.params.task")
                continue
            tasks: list[tuple[str, dict]] = []  # (where, task object)
            method = None
            if env.kind is Kind.NOTIFICATION and env.method == "notifications/tasks/status" and isinstance(env.params, dict):
                judge("tasks.status-notification.no-related-task", _related(env.params) is MISSING, conn.peer, entry.seq,
                      problem="StatusNotificationWithRelatedTask",
                      message="a notifications/tasks/status carries related-task metadata, though its params name the task",
                      expected=f"no _meta[{RELATED_TASK_KEY!r}]", actual=env.params.get("_meta"), json_path="$.params._meta")
                tasks.append(("notifications/tasks/status", env.params))
            elif env.kind is Kind.RESULT and isinstance(env.result, dict):
                method = conn.peer.sent_method(env.id)
                result = env.result
                if method == "tools/call" and isinstance(result.get("task"), dict) and "content" not in result:
                    tasks.append(("CreateTaskResult", result["task"]))
                elif method in ("tasks/get", "tasks/cancel"):
                    tasks.append((f"{method} result", result))
                elif method == "tasks/list" and isinstance(result.get("tasks"), list):
                    tasks.extend(("tasks/list item", t) for t in result["tasks"] if isinstance(t, dict))
                if method in ("tasks/get", "tasks/list", "tasks/cancel"):
                    judge("tasks.meta.not-on-results", _related(result) is MISSING, conn.peer, entry.seq,
                          problem="RelatedTaskOnTaskResult",
                          message=f"the {method} result carries related-task metadata, though the task is named in it",
                          expected=f"no _meta[{RELATED_TASK_KEY!r}]", actual=result.get("_meta"), json_path="$.result._meta")
                if method == "tasks/result":
                    asked = asked_task(conn.peer.transcript.entries, env.id)
                    rel = _related(result)
                    judge("tasks.result.related-task", isinstance(rel, dict) and rel.get("taskId") == asked, conn.peer, entry.seq,
                          problem="TaskResultWithoutRelatedTask",
                          message=f"the tasks/result result for task {asked!r} lacks _meta[{RELATED_TASK_KEY!r}] naming it",
                          expected={RELATED_TASK_KEY: {"taskId": asked}}, actual=result.get("_meta"), json_path="$.result._meta")
                if method == "tasks/get" and ctx.applies("tasks.get.no-sse"):
                    upgraded = "sse_event" in entry.meta or "sse_id" in entry.meta
                    judge("tasks.get.no-sse", not upgraded, conn.peer, entry.seq, problem="TaskGetOnSseStream",
                          message=f"a tasks/get was answered on an SSE stream ({entry.meta.get('stream')}), not as JSON",
                          expected="application/json", actual="text/event-stream")
                if method == "tasks/get":
                    ttl = result.get("ttl", MISSING)
                    ok = ttl is None or (isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0)
                    judge("tasks.get.ttl", ok, conn.peer, entry.seq, problem="TaskTtlMissing",
                          message=f"a tasks/get result has ttl {'(absent)' if ttl is MISSING else repr(ttl)}",
                          expected="the actual ttl in milliseconds, or null", actual=ttl, json_path="$.result.ttl")
            for where, task in tasks:
                tid = task.get("taskId", MISSING)
                if where == "CreateTaskResult":
                    judge("tasks.id.string", isinstance(tid, str), conn.peer, entry.seq, problem="TaskIdNotString",
                          message=f"a CreateTaskResult carries taskId {id_repr(tid)}, not a string",
                          expected="a string", actual=tid, json_path="$.result.task.taskId")
                if where != "notifications/tasks/status":
                    for field, rid in (("createdAt", "tasks.timestamps.created-at"), ("lastUpdatedAt", "tasks.timestamps.last-updated-at")):
                        value = task.get(field, MISSING)
                        judge(rid, iso_timestamp(value), conn.peer, entry.seq, problem="TaskTimestampInvalid",
                              message=f"a task in a {where} has {field} {'(absent)' if value is MISSING else repr(value)}",
                              expected="an ISO 8601 date and time", actual=None if value is MISSING else value)
                status = task.get("status")
                if isinstance(tid, str) and isinstance(status, str):
                    # a CreateTaskResult starts a task's history: what was said of that taskId before
                    # belongs to another task (a reused id is tasks.id.unique's), or came ahead of a
                    # CreateTaskResult held back (tasks.create.promptly's)
                    before = None if where == "CreateTaskResult" else statuses.get(tid)
                    if before is not None and before[0] in ("completed", "failed"):
                        judge("tasks.status.valid-paths", status == before[0], conn.peer, entry.seq,
                              problem="TerminalTaskChanged",
                              message=f"task {tid} was {before[0]!r} and is now reported {status!r} ({where})",
                              expected=before[0], actual=status)
                    if before is None or before[0] not in TERMINAL:
                        statuses[tid] = (status, entry.seq)
    for rid in OBSERVED:
        if not seen[rid] and rid == "tasks.requestor.declared-only":
            ctx.not_reached(rid, "the server sent the suite's client no request during the run")
        elif not seen[rid]:
            ctx.not_reached(rid, "no such message in the run")
        elif not bad[rid]:
            ctx.check(rid, True, message=f"{seen[rid]} message(s) checked")


# ---------------------------------------------------------------------------------------------
# tasks bound to the authorization context

BOUND = "tasks.auth-context-bound"
OTHER_SUBJECT = "mcp-conformance-other-user"


def _leak(method: str, tid: str, env: Envelope | None) -> str | None:
    """How ``env`` (the answer to ``method`` asked with another subject's token) gives the task
    away, or None: refused (an error, an HTTP error status), unanswered, or a list without it."""
    if env is None or env.kind is not Kind.RESULT:
        return None
    if method == "tasks/list":
        tasks = env.result.get("tasks") if isinstance(env.result, dict) else None
        listed = [t for t in tasks if isinstance(t, dict) and t.get("taskId") == tid] if isinstance(tasks, list) else []
        return f"tasks/list lists the task {tid}" if listed else None
    return f"{method} for the task {tid} was answered with a result"


async def _as_other(peer: RawPeer, tid: str, timeout: float) -> list[tuple[str, Envelope | None]]:
    """tasks/get, tasks/list, tasks/cancel and tasks/result for ``tid`` on ``peer``: the answers."""
    out = []
    for method, params in (("tasks/get", {"taskId": tid}), ("tasks/list", {}), ("tasks/cancel", {"taskId": tid}),
                           ("tasks/result", {"taskId": tid})):
        out.append((method, await _ask(peer, method, params, timeout)))
    return out


@scenario(requirements=[BOUND], capability=TOOLS_CALL, transports=[Transport.STREAMABLE_HTTP], connection=ConnectionKind.FRESH)
async def task_bound_to_authorization(ctx: ScenarioContext) -> None:
    """A task created with the run's token is not another subject's: with a token valid in every
    way but for another subject, tasks/get, tasks/list, tasks/cancel and tasks/result are refused
    (tasks/list may answer without the task), on the session that created the task and on a
    session of the other subject's own."""
    auth = ctx.target.extra.get("auth")
    if auth is None:
        ctx.skip("the server does not require authorization (run with --auth, a server told to trust the suite's "
                 "authorization server, to check this)")
    if not auth.can_mint:
        ctx.skip("a token for another subject cannot be made for the server's own authorization server "
                 "(--auth-token / --auth-token-command); run with --auth to check this")
    peer = await ctx.connect(fresh=True)
    _, tid = await _working_task(ctx, peer, seconds=SLOW_SECONDS, purpose="guard")
    other = auth.server.mint(audience=ctx.target.url, scope=auth.scope, subject=OTHER_SUBJECT)
    # 1. the session that created the task, the other subject's token in place of the run's
    headers = peer.transport.headers
    mine = {k: v for k, v in headers.items() if k.lower() == "authorization"}
    for k in mine:
        del headers[k]
    headers["Authorization"] = f"Bearer {other}"
    try:
        answers = [("the session that created it", m, a) for m, a in await _as_other(peer, tid, ctx.timeout)]
    finally:
        del headers["Authorization"]
        headers.update(mine)
    # 2. a session of the other subject's own
    theirs = await ctx.connect(fresh=True, headers={"Authorization": f"Bearer {other}"})
    answers += [("a session opened with that token", m, a) for m, a in await _as_other(theirs, tid, ctx.timeout)]
    leaks = [(where, _leak(m, tid, a), a) for where, m, a in answers if _leak(m, tid, a) is not None]
    if leaks:
        where, what, a = leaks[0]
        ctx.check(BOUND, False, problem="TaskNotBoundToAuthorization",
                  message=(f"with a valid token for another subject ({OTHER_SUBJECT!r}), on {where}: {what}"
                           + (f" (and {len(leaks) - 1} more)" if len(leaks) > 1 else "")),
                  expected="tasks/get, tasks/result and tasks/cancel refused; tasks/list without the task",
                  actual=a.result if a is not None else None, entries=[x for _, _, x in leaks if x is not None])
        return
    answered = [a for _, _, a in answers if a is not None]
    if not answered:
        ctx.not_reached(BOUND, f"none of the other subject's requests was answered within {ctx.timeout:g} s")
        return
    ctx.check(BOUND, True, entries=answered)
