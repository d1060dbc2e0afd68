"""The tasks extension (2026-07-28, ``io.modelcontextprotocol/tasks``, SEP-2663): the server
creates tasks only for requests that declare the extension, answers ``tasks/get``,
``tasks/update`` and ``tasks/cancel`` with the shapes of the draft, and reports tool errors and
protocol errors with the right terminal status.

Only for servers that advertise the extension in ``server/discover``; others skip with the
reason.  The tools we call: the official runner's fixtures when listed (``slow_compute``,
``failing_job``, ``protocol_error_job``), then tools that change nothing (the same choice as the
2025-11-25 tasks scenarios), with arguments built from their input schema.  Every wait has a
deadline; every task we create that still runs is cancelled at the end.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

import anyio

from conformance.runtime.registry import ConnectionKind, scenario
from conformance.server.context import ScenarioContext
from conformance.spec import errors as codes
from conformance.spec.meta import TASKS_EXTENSION
from conformance.wire.envelope import MISSING

from ._stateless import CLIENT_CAPABILITIES_KEY, FULL_CAPS, Answer, ask, describe, input_candidates, input_requests_of, input_responses, list_tools
from .tasks import callable_tools

V = "2026-07-28"
LEGACY = "the tasks extension is a 2026-07-28 extension (2025-11-25 has the tasks utility instead)"
TERMINAL = ("completed", "failed", "cancelled")
WITH_EXT: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
WITHOUT_EXT: dict[str, Any] = {}
OLD_MISSING_CAPABILITY = -32003  # the code in the draft's stored text, renumbered -32021
MAX_CANDIDATES = 5
POLL_MIN, POLL_MAX = 0.05, 0.5
TASK_WAIT = 10.0  # seconds past a tool's own duration we wait for its task to end
ACK_KEYS = frozenset({"resultType", "_meta"})
TASK_KEYS = ("taskId", "status", "result", "error", "inputRequests")
UNREQUESTED = "mcp-conformance-never-issued"

# the official runner's fixtures (tasks-* scenarios): name -> arguments
FIXTURES: dict[str, dict[str, Any]] = {
    "slow_compute": {"seconds": 0.3, "label": "mcp-conformance"},
    "failing_job": {},
    "protocol_error_job": {},
}
SLOW_SECONDS = 5.0  # how long the task we cancel is asked to take (cancelled long before)


@dataclass
class Candidate:
    name: str
    arguments: dict[str, Any]


def advertised(caps: Any) -> bool:
    ext = caps.get("extensions") if isinstance(caps, dict) else None
    return isinstance(ext, dict) and isinstance(ext.get(TASKS_EXTENSION), dict)


def is_call_result(result: Any) -> bool:
    """A CallToolResult: a content array and no taskId."""
    return isinstance(result, dict) and isinstance(result.get("content"), list) and "taskId" not in result


def is_create_result(result: Any) -> bool:
    """A CreateTaskResult: resultType "task" (and not a CallToolResult), or a string taskId and a
    status without content."""
    if not isinstance(result, dict) or is_call_result(result):
        return False
    if result.get("resultType") == "task":
        return True
    return isinstance(result.get("taskId"), str) and isinstance(result.get("status"), str)


def _skip_unless_advertised(ctx: ScenarioContext) -> None:
    if not advertised(ctx.server_capabilities):
        ctx.skip(f"the server does not advertise the {TASKS_EXTENSION} extension in server/discover "
                 "capabilities.extensions (an optional extension)")


def candidates(tools: list[dict[str, Any]]) -> list[Candidate]:
    """The official fixtures first, then harmless tools we can build arguments for."""
    by_name = {t["name"]: t for t in tools}
    out = [Candidate(n, dict(a)) for n, a in FIXTURES.items() if n in by_name]
    seen = {c.name for c in out} | {"test_tool_with_task"}
    if "greet" in by_name:  # never a task: its CallToolResult is the resultType "task" probe
        out.append(Candidate("greet", {"name": "mcp-conformance"}))
        seen.add("greet")
    for tool in callable_tools([t for t in tools if t["name"] not in seen], seconds=0.3):
        out.append(Candidate(tool.name, tool.arguments))
    return out


async def _call(peer: Any, tool: Candidate, caps: dict[str, Any], timeout: float) -> Answer:
    return await ask(peer, "tools/call", {"name": tool.name, "arguments": tool.arguments},
                     meta={CLIENT_CAPABILITIES_KEY: caps}, timeout=timeout)


async def _task_call(peer: Any, method: str, params: dict[str, Any], timeout: float, caps: dict[str, Any] = WITH_EXT) -> Answer:
    return await ask(peer, method, params, meta={CLIENT_CAPABILITIES_KEY: caps}, timeout=timeout)


async def _poll(peer: Any, tid: str, deadline: float, timeout: float, seen: list[Answer]) -> Answer | None:
    """tasks/get until the task is terminal or ``deadline`` (monotonic) passes; the last answer."""
    while True:
        ans = await _task_call(peer, "tasks/get", {"taskId": tid}, timeout)
        seen.append(ans)
        result = ans.result
        status = result.get("status") if isinstance(result, dict) else None
        if not isinstance(result, dict) or status in TERMINAL or time.monotonic() >= deadline:
            return ans
        interval = result.get("pollIntervalMs")
        wait = interval / 1000 if isinstance(interval, (int, float)) and not isinstance(interval, bool) else POLL_MAX
        await anyio.sleep(min(POLL_MAX, max(POLL_MIN, wait)))


def _ack_problem(result: Any) -> str | None:
    if not isinstance(result, dict):
        return "the result is not an object"
    extra = sorted(k for k in result if k not in ACK_KEYS)
    if extra:
        return f"the acknowledgement carries {', '.join(extra)}"
    return None


def _rt(result: Any) -> Any:
    return result.get("resultType", MISSING) if isinstance(result, dict) else MISSING


def _show(value: Any) -> str:
    return "no resultType" if value is MISSING else repr(value)


def _judge_ack(ctx: ScenarioContext, method: str, tid: str, ans: Answer) -> None:
    """The acknowledgement of tasks/update or tasks/cancel: resultType "complete", never "task",
    an empty result."""
    verb = method.split("/")[1]
    rt = _rt(ans.result)
    ctx.check(f"tasks.ext.{verb}.result-type", rt == "complete", problem=f"{verb.capitalize()}TaskResultType",
              message=f"{method} of task {tid!r} was acknowledged with resultType {_show(rt)}",
              expected='resultType "complete"', actual=ans.result, entries=ans.entries())
    ctx.check("tasks.ext.result-type.task-only", rt != "task", problem=f"TaskResultTypeOn{verb.capitalize()}",
              message=f'{method} was answered with resultType "task"', actual=ans.result, entries=ans.entries())
    problem = _ack_problem(ans.result)
    ctx.check("tasks.ext.ack.empty", problem is None, problem=f"{verb.capitalize()}AckNotEmpty",
              message=f"{method} of task {tid!r}: {problem}" if problem else f"{method} was acknowledged with an empty result",
              expected="an empty result (resultType and _meta only)", actual=ans.result, entries=ans.entries())


# ---------------------------------------------------------------------------------------------


TASK_LIFE = (
    "tasks.ext.create.result-type",
    "tasks.ext.create.durable",
    "tasks.ext.result-type.task-only",
    "tasks.ext.get.result-type",
    "tasks.ext.update.result-type",
    "tasks.ext.cancel.result-type",
    "tasks.ext.ack.empty",
    "tasks.ext.failed.error",
    "tasks.ext.tool-error.completed",
    "tasks.ext.completed.result",
)


@scenario(requirements=list(TASK_LIFE), since=V, skip_reason=LEGACY, capability="tools", connection=ConnectionKind.APART)
async def task_life(ctx: ScenarioContext) -> None:
    """Tools called with the extension declared: a CreateTaskResult says resultType "task" and a
    tasks/get sent at once finds its task; tasks/get answers resultType "complete" (never "task"),
    a completed task carries its result, a failed one its JSON-RPC error, a tool error ends
    completed; tasks/update (an answer to a key never issued) and tasks/cancel are acknowledged
    with an empty result of resultType "complete"."""
    peer = await ctx.connect()
    _skip_unless_advertised(ctx)
    tools, failed = await list_tools(peer)
    if failed is not None:
        ctx.skip(f"tools/list failed: {describe(failed)}")
    cands = candidates(tools)
    if not cands:
        ctx.skip("no tool we may call (the official fixtures, or a harmless tool whose arguments we can build)")
    timeout = ctx.timeout
    gets: list[Answer] = []  # every tasks/get answer we saw
    created: dict[str, tuple[Candidate, Answer]] = {}  # taskId -> (tool, CreateTaskResult)
    running: list[str] = []

    try:
        # 1. create tasks (every official fixture; at most MAX_CANDIDATES tools in all)
        for tool in cands[:MAX_CANDIDATES]:
            ans = await _call(peer, tool, WITH_EXT, timeout + 1)
            result = ans.result
            if is_call_result(result):
                ctx.check("tasks.ext.result-type.task-only", _rt(result) != "task", problem="TaskResultTypeOnCallToolResult",
                          message=f"tools/call of {tool.name} was answered with a CallToolResult (content, no taskId) of resultType {_show(_rt(result))}",
                          expected='a resultType other than "task"', actual=result, entries=ans.entries())
            if not is_create_result(result):
                continue
            tid = result.get("taskId")
            ctx.check("tasks.ext.create.result-type", result.get("resultType") == "task", problem="CreateTaskResultType",
                      message=(f"tools/call of {tool.name} answered a CreateTaskResult (taskId {tid!r}) with resultType "
                               f"{_show(_rt(result))}"), expected='resultType "task"', actual=result, entries=ans.entries())
            if not isinstance(tid, str):
                continue
            # "until a tasks/get for the returned taskId would resolve": asked at once
            first = await _task_call(peer, "tasks/get", {"taskId": tid}, timeout)
            gets.append(first)
            ok = first.is_result and isinstance(first.result, dict) and first.result.get("taskId") == tid
            ctx.check("tasks.ext.create.durable", ok, problem="TaskNotDurablyCreated",
                      message=(f"tasks/get of task {tid!r} (of {tool.name}), sent as soon as its CreateTaskResult arrived, "
                               f"was answered with {describe(first)}" + ("" if ok or not first.is_result else " naming another task")),
                      expected="the task", actual=first.error if first.is_error else first.result, entries=first.entries())
            created[tid] = (tool, ans)
            running.append(tid)
        if not created:
            ctx.skip(f"no tool answered with a CreateTaskResult with the extension declared (tried: "
                     f"{', '.join(c.name for c in cands[:MAX_CANDIDATES])}); creating tasks is the server's choice")

        # 2. tasks/update with an answer to a key never issued (ignored), then the terminal states
        tid0 = next(iter(created))
        upd = await _task_call(peer, "tasks/update", {"taskId": tid0, "inputResponses": {UNREQUESTED: {"action": "decline"}}}, timeout)
        if upd.is_result:
            _judge_ack(ctx, "tasks/update", tid0, upd)
        else:
            ctx.not_reached("tasks.ext.update.result-type", f"tasks/update with an answer to a key never issued was answered with {describe(upd)}")

        finals: dict[str, Answer] = {}
        for tid, (tool, _) in created.items():
            deadline = time.monotonic() + TASK_WAIT + max(timeout, 1.0)
            last = await _poll(peer, tid, deadline, timeout, gets)
            if last is not None and isinstance(last.result, dict) and last.result.get("status") in TERMINAL:
                finals[tid] = last
                running.remove(tid)

        for ans in gets:
            if not ans.is_result:
                continue
            ctx.check("tasks.ext.get.result-type", _rt(ans.result) == "complete", problem="GetTaskResultType",
                      message=f"tasks/get was answered with resultType {_show(_rt(ans.result))}",
                      expected='resultType "complete"', actual=ans.result, entries=ans.entries())
            ctx.check("tasks.ext.result-type.task-only", _rt(ans.result) != "task", problem="TaskResultTypeOnGet",
                      message='tasks/get was answered with resultType "task"', actual=ans.result, entries=ans.entries())

        tool_error_seen = False
        for tid, ans in finals.items():
            tool = created[tid][0]
            res = ans.result
            status = res.get("status")
            if status == "completed":
                inner = res.get("result")
                ok = isinstance(inner, dict) and isinstance(inner.get("content"), list)
                ctx.check("tasks.ext.completed.result", ok, problem="CompletedTaskWithoutResult",
                          message=(f"task {tid!r} of {tool.name} is completed " + ("with its CallToolResult" if ok else
                                   "without a CallToolResult in result" if inner is None or inner is MISSING else "with a result that is not a CallToolResult")),
                          expected="result: the CallToolResult", actual=res, entries=ans.entries())
                if tool.name == "failing_job":
                    tool_error_seen = True
                    ctx.check("tasks.ext.tool-error.completed", True, message="failing_job's tool error ended its task completed", entries=ans.entries())
            elif status == "failed":
                err = res.get("error")
                ok = isinstance(err, dict) and isinstance(err.get("code"), int) and not isinstance(err.get("code"), bool) and isinstance(err.get("message"), str)
                ctx.check("tasks.ext.failed.error", ok, problem="FailedTaskWithoutError",
                          message=(f"task {tid!r} of {tool.name} is failed " + ("with its JSON-RPC error" if ok else
                                   "without an error object (code, message)")),
                          expected="error: {code, message}", actual=res, entries=ans.entries())
                inner = res.get("result")
                tool_error = tool.name == "failing_job" or (isinstance(inner, dict) and inner.get("isError") is True)
                if tool_error:
                    tool_error_seen = True
                    ctx.check("tasks.ext.tool-error.completed", False, problem="ToolErrorReportedFailed",
                              message=(f"task {tid!r} of {tool.name} ended in a tool execution error (isError: true) and "
                                       "was reported failed; failed is for JSON-RPC errors only"),
                              expected='status "completed" with result.isError true', actual=res, entries=ans.entries())
        if not tool_error_seen:
            ctx.not_reached("tasks.ext.tool-error.completed", "no task we created ended in a tool execution error (failing_job not listed)")
        if not any(isinstance(a.result, dict) and a.result.get("status") == "failed" for a in finals.values()):
            ctx.not_reached("tasks.ext.failed.error", "no task we created ended failed (protocol_error_job not listed)")
        if not any(isinstance(a.result, dict) and a.result.get("status") == "completed" for a in finals.values()):
            ctx.not_reached("tasks.ext.completed.result", "no task we created ended completed within the deadline")

        # 3. tasks/cancel of a task that is still working (a slow one when we can ask for one)
        slow = next((c for c in cands if c.name == "slow_compute"), None)
        target: str | None = None
        if slow is not None:
            ans = await _call(peer, Candidate(slow.name, {**slow.arguments, "seconds": SLOW_SECONDS}), WITH_EXT, timeout + 1)
            if is_create_result(ans.result) and isinstance(ans.result.get("taskId"), str):
                target = ans.result["taskId"]
                running.append(target)
        if target is None:
            target = running[0] if running else tid0
        cancel = await _task_call(peer, "tasks/cancel", {"taskId": target}, timeout)
        if cancel.is_result:
            if target in running:
                running.remove(target)
            _judge_ack(ctx, "tasks/cancel", target, cancel)
        else:
            ctx.not_reached("tasks.ext.cancel.result-type", f"tasks/cancel of task {target!r} was answered with {describe(cancel)}")
    finally:
        for tid in running:  # nothing we started runs past the scenario
            with anyio.move_on_after(max(timeout, 1.0)):
                await _task_call(peer, "tasks/cancel", {"taskId": tid}, timeout)


@scenario(requirements=["tasks.ext.undeclared.no-task", "tasks.ext.undeclared.missing-capability"],
          since=V, skip_reason=LEGACY, capability="tools", connection=ConnectionKind.FRESH)
async def undeclared_client(ctx: ScenarioContext) -> None:
    """Tools that create a task when the request declares the extension, called again without
    it: no CreateTaskResult; an error, when the server cannot serve the call without a task, is
    -32021 (Missing Required Client Capability) naming the extension."""
    peer = await ctx.connect()
    _skip_unless_advertised(ctx)
    tools, failed = await list_tools(peer)
    if failed is not None:
        ctx.skip(f"tools/list failed: {describe(failed)}")
    # protocol_error_job fails on purpose (a JSON-RPC error of its own): not a refusal to judge
    cands = [c for c in candidates(tools) if c.name != "protocol_error_job"][:MAX_CANDIDATES]
    timeout = ctx.timeout
    taskers: list[Candidate] = []
    started: list[str] = []
    # on a connection of its own, the calls without the extension first: nothing the connection
    # saw before can stand in for the request's own capabilities (that is stateless.no-prior-context)
    plain: dict[str, Any] = {}
    try:
        for tool in cands:
            args = {**tool.arguments, "seconds": 0} if tool.name == "slow_compute" else tool.arguments
            plain[tool.name] = await _call(peer, Candidate(tool.name, args), WITHOUT_EXT, timeout + 1)
            ans = plain[tool.name]
            if ans.is_result and is_create_result(ans.result) and isinstance(ans.result.get("taskId"), str):
                started.append(ans.result["taskId"])
        for tool in cands:
            ans = await _call(peer, Candidate(tool.name, {**tool.arguments, "seconds": 0} if tool.name == "slow_compute" else tool.arguments), WITH_EXT, timeout + 1)
            if is_create_result(ans.result):
                taskers.append(tool)
                if isinstance(ans.result.get("taskId"), str):
                    started.append(ans.result["taskId"])
        if not taskers:
            ctx.skip("no tool answered with a CreateTaskResult with the extension declared (tried: "
                     f"{', '.join(c.name for c in cands) or 'none'}); creating tasks is the server's choice")
        refused = False
        for tool in taskers:
            ans = plain[tool.name]
            if ans.is_result:
                task = is_create_result(ans.result)
                ctx.check("tasks.ext.undeclared.no-task", not task, problem="TaskForUndeclaredClient",
                          message=(f"tools/call of {tool.name} without the extension in the request's client capabilities was answered "
                                   + ("with a CreateTaskResult" if task else "with a plain result")),
                          expected="no CreateTaskResult", actual=ans.result, entries=ans.entries())
            elif ans.is_error:
                refused = True
                ctx.check("tasks.ext.undeclared.no-task", True, message=f"tools/call of {tool.name} without the extension got no CreateTaskResult ({describe(ans)})", entries=ans.entries())
                data = ans.data()
                req = data.get("requiredCapabilities") if isinstance(data, dict) else None
                ext = req.get("extensions") if isinstance(req, dict) else None
                named = isinstance(ext, dict) and TASKS_EXTENSION in ext
                code_ok = ans.code in (codes.MISSING_REQUIRED_CLIENT_CAPABILITY, OLD_MISSING_CAPABILITY)
                ctx.check("tasks.ext.undeclared.missing-capability", code_ok and named, problem="MissingCapabilityError",
                          message=(f"tools/call of {tool.name}, which creates a task for a client that declares the extension, was "
                                   f"refused to a client that does not with {describe(ans)}"
                                   + ("" if code_ok else f", not {codes.MISSING_REQUIRED_CLIENT_CAPABILITY} (Missing Required Client Capability)")
                                   + ("" if named or not code_ok else f", and error.data.requiredCapabilities.extensions does not name {TASKS_EXTENSION}")),
                          expected={"code": codes.MISSING_REQUIRED_CLIENT_CAPABILITY, "data": {"requiredCapabilities": WITH_EXT}},
                          actual=ans.error, entries=ans.entries())
            else:
                ctx.check("tasks.ext.undeclared.no-task", True, message=f"tools/call of {tool.name} without the extension: no answer in time (no CreateTaskResult)")
        if not refused:
            ctx.not_reached("tasks.ext.undeclared.missing-capability",
                            "every task-creating tool was served without a task to a client that does not declare the extension")
    finally:
        for tid in started:
            with anyio.move_on_after(max(timeout, 1.0)):
                await _task_call(peer, "tasks/cancel", {"taskId": tid}, timeout)


@scenario(requirements=["tasks.ext.unknown-id.get", "tasks.ext.unknown-id.update-cancel"], since=V, skip_reason=LEGACY)
async def unknown_task(ctx: ScenarioContext) -> None:
    """tasks/get of a taskId the server never issued (the extension declared) is answered with
    -32602; tasks/update and tasks/cancel of it should be too."""
    peer = await ctx.connect()
    _skip_unless_advertised(ctx)
    tid = "mcp-conformance-no-such-task-" + secrets.token_hex(8)
    timeout = ctx.timeout
    get = await _task_call(peer, "tasks/get", {"taskId": tid}, timeout)
    ctx.check("tasks.ext.unknown-id.get", get.code == codes.INVALID_PARAMS, problem="UnknownTaskIdNotInvalidParams",
              message=f"tasks/get of the unknown taskId {tid!r} was answered with {describe(get)}",
              expected=f"error {codes.INVALID_PARAMS} (Invalid params)", actual=get.error if get.is_error else get.result, entries=get.entries())
    for method, params in (("tasks/update", {"taskId": tid, "inputResponses": {}}), ("tasks/cancel", {"taskId": tid})):
        ans = await _task_call(peer, method, params, timeout)
        ctx.check("tasks.ext.unknown-id.update-cancel", ans.code == codes.INVALID_PARAMS, problem="UnknownTaskIdNotInvalidParams",
                  message=f"{method} of the unknown taskId {tid!r} was answered with {describe(ans)}",
                  expected=f"error {codes.INVALID_PARAMS} (Invalid params)", actual=ans.error if ans.is_error else ans.result, entries=ans.entries())


INPUT_FIXTURES = ("confirm_delete", "multi_input")
INPUT_WAIT = 5.0  # seconds we wait for a task to ask for input


@scenario(requirements=["tasks.ext.update.ignore-unknown"], since=V, skip_reason=LEGACY, capability="tools", connection=ConnectionKind.APART)
async def input_task(ctx: ScenarioContext) -> None:
    """A task that waits for input (input_required): tasks/update with an answer to a key the
    server never issued leaves it waiting with the same outstanding requests; then the real
    answers are sent."""
    peer = await ctx.connect()
    _skip_unless_advertised(ctx)
    tools, failed = await list_tools(peer)
    if failed is not None:
        ctx.skip(f"tools/list failed: {describe(failed)}")
    by_name = {t["name"]: t for t in tools}
    names = [n for n in INPUT_FIXTURES if n in by_name]
    names += [t["name"] for t in input_candidates(tools) if t["name"] not in names and t["name"] != "test_tool_with_task"]
    caps = {**FULL_CAPS, **WITH_EXT}
    timeout = ctx.timeout
    tried: list[str] = []
    for name in names[:MAX_CANDIDATES]:
        tried.append(name)
        args = {"filename": "mcp-conformance-probe.txt"} if name == "confirm_delete" else {}
        created = await _call(peer, Candidate(name, args), caps, timeout + 1)
        if not is_create_result(created.result) or not isinstance(created.result.get("taskId"), str):
            continue
        tid = created.result["taskId"]
        try:
            deadline = time.monotonic() + INPUT_WAIT
            waiting: Answer | None = None
            while time.monotonic() < deadline:
                ans = await _task_call(peer, "tasks/get", {"taskId": tid}, timeout)
                status = ans.result.get("status") if isinstance(ans.result, dict) else None
                if status == "input_required" or status in TERMINAL or not ans.is_result:
                    waiting = ans if status == "input_required" else None
                    break
                await anyio.sleep(POLL_MIN * 2)
            keys = sorted(input_requests_of(waiting.result)) if waiting is not None else []
            if waiting is None or not keys:
                continue
            upd = await _task_call(peer, "tasks/update", {"taskId": tid, "inputResponses": {UNREQUESTED: {"action": "decline"}}}, timeout)
            after = await _task_call(peer, "tasks/get", {"taskId": tid}, timeout)
            res = after.result if isinstance(after.result, dict) else {}
            still = res.get("status") == "input_required" and sorted(input_requests_of(res)) == keys
            ctx.check("tasks.ext.update.ignore-unknown", still, problem="UnknownInputResponseNotIgnored",
                      message=(f"task {tid!r} of {name} waited for {', '.join(keys)}; tasks/update with an answer to the "
                               f"never-issued key {UNREQUESTED!r} ({describe(upd)}) "
                               + ("left it waiting for the same requests" if still else
                                  f"was not ignored: tasks/get then answered {describe(after)} with status "
                                  f"{res.get('status')!r} and outstanding keys {sorted(input_requests_of(res))}")),
                      expected=f"status input_required with inputRequests {keys}", actual=res or None, entries=after.entries())
            # the real answers, so that the task can end
            await _task_call(peer, "tasks/update", {"taskId": tid, "inputResponses": input_responses(input_requests_of(waiting.result))}, timeout)
            return
        finally:
            with anyio.move_on_after(max(timeout, 1.0)):
                await _task_call(peer, "tasks/cancel", {"taskId": tid}, timeout)
    ctx.skip(f"no tool we called with the extension declared created a task that waits for input (tried: "
             f"{', '.join(tried) or 'none'}); input during a task is the server's choice")
