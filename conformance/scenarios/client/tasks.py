"""basic/utilities/tasks (2025-11-25): the client as the receiver of task-augmented
``sampling/createMessage`` and ``elicitation/create``, and as the requestor of task-augmented
``tools/call``.

``task_receiver``: the scenario server declares only tools (no ``tasks``: its tools marked
``execution.taskSupport`` optional and required must not be called as tasks) and, when the client
makes its first request after the handshake, holds that answer and first sends, for each of sampling
and form elicitation the client declares: the request plainly, and with ``params.task``.  For a
kind the client declares task-augmented, a second task is made and the first run through
``tasks/get`` and ``tasks/result`` (sent while the task works: it must wait), to its end.  While the
client's next request (tools/list, tools/call) is held -- a client gives one request only so long --
the server goes on: ``tasks/get`` with related-task metadata naming another task, ``tasks/list``,
``tasks/cancel`` (of the ended task: -32602; of a third, working one: cancelled, and it stays so),
unknown ids and cursors (-32602).  Every task message the client sent is then judged (ids,
timestamps, ttl, status paths, related-task metadata).  A client that declares neither kind is skipped with the reason (an optional
feature), after its answers to the task-augmented requests are judged against what it declared.

``task_requestor``: the scenario server declares ``tasks.requests.tools.call`` (with list and cancel)
and lists tools marked required, optional and forbidden besides its plain ones.  Tasks it creates
say pollInterval 200 ms, stay working for two polls, then (the required tool's) input_required until
the client calls ``tasks/result`` or 3 s pass; no ``notifications/tasks/status`` is ever sent.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from conformance.client.context import ClientContext
from conformance.runtime.peer import ConnectionLost, PeerError
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import W_REQUIREMENTS, wire_of
from conformance.scenarios.client._run import play
from conformance.scenarios.client._server import Answer, ScenarioServer
from conformance.scenarios.server._features import declared, describe_error
from conformance.spec import errors as codes
from conformance.spec.meta import RELATED_TASK_KEY
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr
from conformance.wire.tasks import TERMINAL, asked_task, iso_timestamp
from conformance.wire.tasks import comparable as _comparable
from conformance.wire.tasks import related_task as _related
from conformance.wire.tasks import status_of as _status
from conformance.wire.tasks import task_of as _task_of
from conformance.wire.tasks import taskish as _taskish

VERSION = "2025-11-25"
TTL_MS = 60_000
TASK_WAIT = 5.0  # seconds past the answer timeout we wait for a client's task to end
REMAINS_WAIT = 1.0  # at most this long after creation we look at a cancelled task again
POLL_MIN, POLL_MAX = 0.05, 0.5

SAMPLING = ("sampling/createMessage", {
    "messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: say hello"}}], "maxTokens": 16})
ELICITATION = ("elicitation/create", {
    "message": "mcp-conformance: may I ask?",
    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}}})
CAPABILITY = {"sampling/createMessage": "tasks.requests.sampling.createMessage",
              "elicitation/create": "tasks.requests.elicitation.create"}

RECEIVER = (
    "client.tasks.capability.declared", "client.tasks.undeclared.processed-normally", "client.tasks.create.result",
    "client.tasks.id.unique", "client.tasks.result.blocks", "client.tasks.result.success",
    "client.tasks.meta.param-wins", "client.tasks.list.retrievable", "client.tasks.errors.invalid-params",
    "client.tasks.cancel.terminal-rejected", "client.tasks.cancel.cancelled", "client.tasks.cancel.remains-cancelled",
)
OBSERVED = (
    "client.tasks.id.string", "client.tasks.timestamps.created-at", "client.tasks.timestamps.last-updated-at",
    "client.tasks.get.ttl", "client.tasks.status.valid-paths", "client.tasks.result.related-task",
    "client.tasks.meta.not-on-results",
)
NO_CAPABILITY = "client.tasks.tool.no-capability"
MAX_REPORTED = 5

#: tools of the receiver scenario's server, which declares no tasks capability: never as tasks
NOCAP_TOOLS = [
    {"name": "task_optional", "description": "Quick; may run as a task where the server supports tasks.",
     "inputSchema": {"type": "object", "properties": {}}, "execution": {"taskSupport": "optional"},
     "annotations": {"readOnlyHint": True}},
    {"name": "task_required", "description": "Quick; must run as a task where the server supports tasks.",
     "inputSchema": {"type": "object", "properties": {}}, "execution": {"taskSupport": "required"},
     "annotations": {"readOnlyHint": True}},
]


# ---------------------------------------------------------------------------------------------
# small readers (the client's answers)


def _shaped(method: str, result: Any) -> bool:
    """A result of ``method``'s own type (not task data)."""
    if not isinstance(result, dict):
        return False
    if method == "sampling/createMessage":
        return "role" in result and "content" in result and "model" in result
    return isinstance(result.get("action"), str)


def _answer(env: Envelope | None) -> str:
    if env is None:
        return "no answer"
    if env.kind is Kind.ERROR:
        return describe_error(env)
    if _task_of(env) is not None:
        return "a CreateTaskResult"
    return "a result"


# ---------------------------------------------------------------------------------------------
# the client as receiver


@scenario(requirements=[*RECEIVER, *OBSERVED, NO_CAPABILITY, *W_REQUIREMENTS], role="client", versions=[VERSION],
          order=3)
async def task_receiver(ctx: ClientContext) -> None:
    """Task-augmented sampling/createMessage and elicitation/create, sent while the client's first
    request is held; the tasks the client creates are polled, waited for, listed and cancelled."""
    state: dict[str, Any] = {"probed": False}

    def configure(server: ScenarioServer) -> None:
        server.capabilities = {"tools": {"listChanged": False}}

        async def tools_list(env: Envelope) -> Answer | None:
            answer = server.default(env)
            params = env.params if isinstance(env.params, dict) else {}
            if isinstance(answer.result, dict) and params.get("cursor") is None:
                answer.result["tools"] = [*answer.result["tools"], *NOCAP_TOOLS]
            return answer

        async def tools_call(env: Envelope) -> Answer | None:
            params = env.params if isinstance(env.params, dict) else {}
            if params.get("name") in {t["name"] for t in NOCAP_TOOLS}:  # no tasks here: task metadata ignored
                return Answer(result={"content": [{"type": "text", "text": "done"}]})
            return None

        def second(hook: Any) -> Any:
            async def held(env: Envelope) -> Answer | None:
                later = state.get("later")
                if later is not None and env is not server.first_request and not state.get("later_done"):
                    state["later_done"] = True
                    try:
                        await _later(ctx, server, **later)
                    except ConnectionLost:
                        state["lost"] = True
                return await hook(env)
            return held

        server.hooks["tools/list"] = second(tools_list)
        server.hooks["tools/call"] = second(tools_call)

        async def probes(env: Envelope) -> None:
            state["probed"] = True
            try:
                await _receive(ctx, server, state)
            except ConnectionLost:
                state["lost"] = True

        server.on_first_request = probes

    launch = {"answer_mode": "sse"} if ctx.transport.value == "streamable-http" else {}
    played = await play(ctx, configure=configure, launch=launch)
    _judge_no_capability(ctx, played)
    if not played.engaged:
        for rid in (*RECEIVER, *OBSERVED):
            ctx.not_reached(rid, f"the client did not speak {ctx.version} with the suite's server")
        return
    if not state["probed"]:
        for rid in (*RECEIVER, *OBSERVED):
            ctx.not_reached(rid, "the client made no request after the handshake, so the server had no moment to send "
                                 "it anything")
        return
    if state.get("lost"):
        for rid in RECEIVER:
            ctx.not_reached(rid, "the client went away during the probes")
    if state.get("later") is not None and not state.get("later_done"):
        for rid in LATER:
            ctx.not_reached(rid, "the client made no second request (tools/list or tools/call) after the handshake, during "
                                 "which the server could go on with its probes")
    _judge_observed(ctx, played.server, state.get("why", "the client created no task"))


def _judge_no_capability(ctx: ClientContext, played: Any) -> None:
    wire = wire_of(played.run)
    calls = [m for m in wire.requests() if m.env.method == "tools/call"]
    augmented = [m for m in calls if isinstance(m.env.params, dict) and "task" in m.env.params]
    if augmented:
        m = augmented[0]
        ctx.check(NO_CAPABILITY, False, problem="TaskAugmentationWithoutCapability",
                  message=f"the client called {m.env.params.get('name')!r} as a task (params.task), but the server "
                          "declared no tasks.requests.tools.call", expected="tools/call without params.task",
                  actual=m.env.params.get("task"), entries=[m.entry], peer=played.run.peer)
    elif calls:
        named = sorted({str(m.env.params.get("name")) for m in calls if isinstance(m.env.params, dict)})
        ctx.check(NO_CAPABILITY, True, message=f"the client called {', '.join(named)} without params.task")
    else:
        hint = "" if ctx.target.call_command else " (give --call-command to make it call a tool)"
        ctx.not_reached(NO_CAPABILITY, f"the client called no tool{hint}")


async def _ask(ctx: ClientContext, server: ScenarioServer, method: str, params: Any, timeout: float | None = None,
               ) -> Envelope | None:
    """Send a request to the client and wait (``timeout``, default the answer timeout) for its answer;
    None when none came (or the client went away)."""
    n = server.__dict__.setdefault("_task_probe_n", 0) + 1
    server.__dict__["_task_probe_n"] = n
    rid = f"mcpc-task-{n}"
    await server.peer.request(method, params, id=rid, meta=None)
    got: list[Envelope] = []
    async with anyio.create_task_group() as tg:
        async def wait() -> None:
            try:
                got.append(await server.peer.expect_response(rid, timeout=ctx.timeout if timeout is None else timeout))
            except (PeerError, ConnectionLost):
                pass
            tg.cancel_scope.cancel()

        async def gone() -> None:
            await server.exited.wait()
            await anyio.sleep(0.2)
            tg.cancel_scope.cancel()

        tg.start_soon(wait)
        tg.start_soon(gone)
    return got[0] if got else None


async def _poll(ctx: ClientContext, server: ScenarioServer, tid: Any, deadline: float) -> Envelope | None:
    last = None
    while True:
        last = await _ask(ctx, server, "tasks/get", {"taskId": tid})
        status = _status(last)
        if last is None or status in TERMINAL or status is MISSING or time.monotonic() >= deadline:
            return last
        interval = last.result.get("pollInterval") if isinstance(last.result, dict) else None
        wait = interval / 1000 if isinstance(interval, (int, float)) and not isinstance(interval, bool) else POLL_MAX
        await anyio.sleep(min(POLL_MAX, max(POLL_MIN, wait)))


async def _receive(ctx: ClientContext, server: ScenarioServer, state: dict[str, Any]) -> None:
    init = next((e for e in server.requests if e.method == "initialize"), None)
    caps = init.params.get("capabilities") if init is not None and isinstance(init.params, dict) else None
    caps = caps if isinstance(caps, dict) else {}
    kinds = []
    if "sampling" in caps:
        kinds.append(SAMPLING)
    el = caps.get("elicitation")
    if isinstance(el, dict) and (not (set(el) & {"form", "url"}) or "form" in el):
        kinds.append(ELICITATION)
    has_tasks = isinstance(caps.get("tasks"), dict)
    made: dict[str, tuple[Any, Envelope]] = {}  # method -> (taskId, CreateTaskResult)
    plain: dict[str, tuple[Envelope | None, Envelope | None]] = {}
    undeclared_judged = unanswered = False
    for method, params in kinds:
        want = declared(caps, CAPABILITY[method])
        first = await _ask(ctx, server, method, params)
        second = await _ask(ctx, server, method, params) if want else None
        plain[method] = (first, second)
        aug = await _ask(ctx, server, method, {**params, "task": {"ttl": TTL_MS}})
        task = _task_of(aug)
        if aug is None and first is None:
            unanswered = True
            continue  # the client answers no request of the server (server_requests judges that): nothing to judge
        if not want:
            undeclared_judged = True
            if task is not None:
                rid = "client.tasks.undeclared.processed-normally" if has_tasks else "client.tasks.capability.declared"
                ctx.check(rid, False, problem="UndeclaredTaskCreated",
                          message=(f"a task-augmented {method} was answered with a CreateTaskResult, but the client "
                                   + (f"does not declare {CAPABILITY[method]}" if has_tasks else "declares no tasks capability")),
                          expected="the request processed normally (its params.task ignored)", actual=aug.result,
                          entries=[aug])
            elif aug is not None:
                ok = not (first is not None and first.kind is Kind.RESULT and aug.kind is Kind.ERROR)
                ctx.check("client.tasks.undeclared.processed-normally", ok, problem="TaskMetadataNotIgnored",
                          message=(f"{method} without the task capability for it: plain {_answer(first)}, with params.task "
                                   f"{_answer(aug)}"),
                          expected=f"the same as the plain {method}", actual=aug.error if aug.kind is Kind.ERROR else aug.result,
                          entries=[aug])
            continue
        if aug is None:
            ctx.check("client.tasks.create.result", False, problem="TaskAugmentedRequestUnanswered",
                      message=f"a task-augmented {method} was not answered within {ctx.timeout:g} s",
                      expected="a CreateTaskResult", actual="no response")
            continue
        if aug.kind is Kind.ERROR:
            continue  # not accepted: nothing to judge
        tid = task.get("taskId", MISSING) if task is not None else MISSING
        ctx.check("client.tasks.create.result", task is not None and tid is not MISSING, problem="NotACreateTaskResult",
                  message=(f"a task-augmented {method} (the client declares {CAPABILITY[method]}) was answered with "
                           + ("a CreateTaskResult" if task is not None and tid is not MISSING else "a result without a `task` object")),
                  expected='a CreateTaskResult: {"task": {"taskId": ..., ...}}', actual=aug.result, entries=[aug])
        if task is not None and tid is not MISSING:
            made[method] = (tid, aug)
    if not made:
        why = ("the client answered none of the server's sampling/elicitation requests" if unanswered else
               "the client declares no task-augmented sampling or elicitation (an optional feature)" if kinds else
               "the client declares neither sampling nor elicitation")
        state["why"] = why
        for rid in RECEIVER:
            if rid == "client.tasks.undeclared.processed-normally" and undeclared_judged:
                continue
            if rid == "client.tasks.capability.declared" and has_tasks:
                ctx.check(rid, True, message="the client declares the tasks capability")
                continue
            ctx.not_reached(rid, why if rid != "client.tasks.capability.declared" else
                            "the client declares no tasks capability and created no task")
        return
    if has_tasks:
        ctx.check("client.tasks.capability.declared", True, message="the client declares the tasks capability")
    if not undeclared_judged:
        ctx.not_reached("client.tasks.undeclared.processed-normally",
                        "the client declares task augmentation for every request type it supports")
    state["later"] = await _lifecycle(ctx, server, caps, made, plain)


async def _lifecycle(ctx: ClientContext, server: ScenarioServer, caps: dict[str, Any],
                     made: dict[str, tuple[Any, Envelope]], plain: dict[str, tuple[Envelope | None, Envelope | None]],
                     ) -> dict[str, Any]:
    """The first part, while the client's first request is held: a second task, tasks/result while
    a task works, the task run to its end and its result; returns what the second part needs."""
    method = next(iter(made))
    params = dict(SAMPLING[1] if method == SAMPLING[0] else ELICITATION[1])
    tid, _ = made[method]
    deadline = time.monotonic() + ctx.timeout + TASK_WAIT

    # 1. a second task of the same kind: a taskId of its own
    again = await _ask(ctx, server, method, {**params, "task": {"ttl": TTL_MS}})
    other = _task_of(again)
    tid2 = other.get("taskId", MISSING) if other is not None else MISSING
    if tid2 is MISSING:
        ctx.not_reached("client.tasks.id.unique", f"a second task-augmented {method} created no task ({_answer(again)})")
    else:
        ctx.check("client.tasks.id.unique", tid2 != tid, problem="TaskIdReused",
                  message=f"two task-augmented {method} requests got taskIds {id_repr(tid)} and {id_repr(tid2)}",
                  expected="distinct taskIds", actual=[tid, tid2], entries=[again])

    # 2. tasks/result while the task works: held until it is terminal
    now = await _ask(ctx, server, "tasks/get", {"taskId": tid})
    if _status(now) in ("working", "input_required"):
        res = await _ask(ctx, server, "tasks/result", {"taskId": tid}, timeout=max(0.1, deadline - time.monotonic()))
        after = await _ask(ctx, server, "tasks/get", {"taskId": tid})
        if res is None:
            ctx.not_reached("client.tasks.result.blocks", "tasks/result was not answered before the task's deadline")
        else:
            ok = _status(after) in TERMINAL
            ctx.check("client.tasks.result.blocks", ok, problem="TaskResultNotBlocking",
                      message=(f"tasks/result for task {id_repr(tid)} (working) was answered "
                               + ("once the task was terminal" if ok else
                                  f"with {_answer(res)} while tasks/get still reports {_status(after)!r}")),
                      expected="the answer held back until the task is terminal",
                      actual=res.error if res.kind is Kind.ERROR else res.result, entries=[res])
    else:
        ctx.not_reached("client.tasks.result.blocks", f"the task was {_status(now)!r} at the first tasks/get, not working")

    # 3. run to its end: tasks/result is the request's own result
    final = await _poll(ctx, server, tid, deadline)
    status = _status(final)
    if status == "completed":
        res = await _ask(ctx, server, "tasks/result", {"taskId": tid})
        first, second = plain.get(method, (None, None))
        same = first is not None and second is not None and first.kind is Kind.RESULT and second.kind is Kind.RESULT \
            and _comparable(first.result) == _comparable(second.result)
        if res is None:
            ctx.check("client.tasks.result.success", False, problem="TaskResultUnanswered",
                      message=f"tasks/result for the completed task {id_repr(tid)} was not answered within {ctx.timeout:g} s",
                      expected=f"the {method} result", actual="no response")
        else:
            if res.kind is Kind.ERROR or _taskish(res):
                ok = False
            elif same:
                ok = _comparable(res.result) == _comparable(first.result)
            else:
                ok = _shaped(method, res.result)
            ctx.check("client.tasks.result.success", ok, problem="TaskResultNotTheRequestResult",
                      message=(f"tasks/result for the completed task {id_repr(tid)} of {method}: {_answer(res)}"
                               + (", compared with the result two plain requests returned" if same else "")),
                      expected=_comparable(first.result) if same else f"a successful response with the {method} result",
                      actual=res.error if res.kind is Kind.ERROR else _comparable(res.result), entries=[res])
    else:
        ctx.not_reached("client.tasks.result.success", f"the task did not complete (last status {status!r})")

    return {"caps": caps, "method": method, "params": params, "tid": tid, "tid2": tid2, "status": status}


LATER = ("client.tasks.meta.param-wins", "client.tasks.list.retrievable", "client.tasks.cancel.terminal-rejected",
         "client.tasks.cancel.cancelled", "client.tasks.cancel.remains-cancelled", "client.tasks.errors.invalid-params")


async def _later(ctx: ClientContext, server: ScenarioServer, caps: dict[str, Any], method: str, params: dict[str, Any],
                 tid: Any, tid2: Any, status: Any) -> None:
    """The second part, while the client's next request is held (a client gives each request only
    so long): related-task metadata, tasks/list, cancellations, unknown ids and cursors."""
    # 4. the taskId parameter wins over related-task metadata
    named = tid2 if tid2 is not MISSING and tid2 != tid else "mcp-conformance-no-such-task"
    env = await _ask(ctx, server, "tasks/get", {"taskId": tid, "_meta": {RELATED_TASK_KEY: {"taskId": named}}})
    if env is None:
        ctx.not_reached("client.tasks.meta.param-wins", "tasks/get with related-task metadata was not answered")
    else:
        got = env.result.get("taskId") if env.kind is Kind.RESULT and isinstance(env.result, dict) else MISSING
        ctx.check("client.tasks.meta.param-wins", env.kind is Kind.RESULT and got == tid, problem="TaskIdParamIgnored",
                  message=(f"tasks/get with taskId {id_repr(tid)} and related-task metadata naming {id_repr(named)} was "
                           + (f"answered for task {id_repr(got)}" if env.kind is Kind.RESULT else f"answered with {_answer(env)}")),
                  expected={"taskId": tid}, actual=env.result if env.kind is Kind.RESULT else env.error, entries=[env])

    # 5. tasks/list lists what tasks/get answers for
    ids = [t for t in (tid, tid2) if t is not MISSING]
    if declared(caps, "tasks.list"):
        await _judge_listing(ctx, server, ids)
    else:
        ctx.not_reached("client.tasks.list.retrievable", "the client does not declare tasks.list")

    # 6. cancelling: an ended task (refused), a working one (cancelled, and it stays so)
    if not declared(caps, "tasks.cancel"):
        for rid in ("client.tasks.cancel.terminal-rejected", "client.tasks.cancel.cancelled",
                    "client.tasks.cancel.remains-cancelled"):
            ctx.not_reached(rid, "the client does not declare tasks.cancel")
    else:
        await _cancellations(ctx, server, method, params, tid, status)

    # 7. unknown ids and cursors
    bogus = "mcp-conformance-no-such-task"
    probes: list[tuple[str, dict[str, Any]]] = [("tasks/get", {"taskId": bogus}), ("tasks/result", {"taskId": bogus})]
    if declared(caps, "tasks.cancel"):
        probes.append(("tasks/cancel", {"taskId": bogus}))
    if declared(caps, "tasks.list"):
        probes.append(("tasks/list", {"cursor": "mcp-conformance-never-issued"}))
    for m, p in probes:
        env = await _ask(ctx, server, m, p)
        what = f"{m} with cursor {p['cursor']!r}" if "cursor" in p else f"{m} for unknown taskId {bogus!r}"
        ok = env is not None and env.kind is Kind.ERROR and env.error_code == codes.INVALID_PARAMS
        ctx.check("client.tasks.errors.invalid-params", ok, problem="UnknownTaskNotInvalidParams",
                  message=f"{what} was answered with {_answer(env)}" if env is not None else
                  f"{what} was not answered within {ctx.timeout:g} s",
                  expected=f"error {codes.INVALID_PARAMS} (Invalid params)",
                  actual=None if env is None else env.error if env.kind is Kind.ERROR else env.result,
                  entries=[env] if env is not None else [])
    # let the second task end: nothing of ours runs past the probes
    if tid2 is not MISSING:
        await _poll(ctx, server, tid2, time.monotonic() + ctx.timeout)


async def _judge_listing(ctx: ClientContext, server: ScenarioServer, ids: list[Any]) -> None:
    rid = "client.tasks.list.retrievable"
    retrievable = []
    for tid in ids:
        env = await _ask(ctx, server, "tasks/get", {"taskId": tid})
        if env is not None and env.kind is Kind.RESULT:
            retrievable.append(tid)
    if not retrievable:
        ctx.not_reached(rid, "no task was retrievable via tasks/get any more")
        return
    found: list[Any] = []
    cursor: Any = MISSING
    last = None
    for _ in range(20):
        env = await _ask(ctx, server, "tasks/list", {} if cursor is MISSING else {"cursor": cursor})
        if env is None or env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            ctx.check(rid, False, problem="TasksListFailed",
                      message=f"tasks/list was answered with {_answer(env)}",
                      expected="a result listing the tasks", actual=None if env is None else env.value,
                      entries=[env] if env is not None else [])
            return
        last = env
        items = env.result.get("tasks")
        if isinstance(items, list):
            found.extend(t.get("taskId") for t in items if isinstance(t, dict))
        cursor = env.result.get("nextCursor", MISSING)
        if not isinstance(cursor, str) or all(t in found for t in retrievable):
            break
    missing = [t for t in retrievable if t not in found]
    ctx.check(rid, not missing, problem="TaskNotListed",
              message=(f"tasks/get answers for {len(retrievable)} task(s); tasks/list "
                       + (f"does not list {', '.join(id_repr(t) for t in missing)}" if missing else "lists them all")),
              expected=retrievable, actual=found, entries=[last])


async def _cancellations(ctx: ClientContext, server: ScenarioServer, method: str, params: dict[str, Any], tid: Any,
                         status: Any) -> None:
    rid = "client.tasks.cancel.terminal-rejected"
    if status in ("completed", "failed"):
        env = await _ask(ctx, server, "tasks/cancel", {"taskId": tid})
        ok = env is not None and env.kind is Kind.ERROR and env.error_code == codes.INVALID_PARAMS
        ctx.check(rid, ok, problem="TerminalTaskCancelAccepted",
                  message=(f"tasks/cancel for the {status} task {id_repr(tid)} was answered with "
                           + (_answer(env) if env is None or env.kind is Kind.ERROR else f"a result (status {_status(env)!r})")),
                  expected=f"error {codes.INVALID_PARAMS} (Invalid params)",
                  actual=None if env is None else env.error if env.kind is Kind.ERROR else env.result,
                  entries=[env] if env is not None else [])
    else:
        ctx.not_reached(rid, "no task reached completed or failed")
    # a fresh task, cancelled while it works
    created = time.monotonic()
    env = await _ask(ctx, server, method, {**params, "task": {"ttl": TTL_MS}})
    task = _task_of(env)
    victim = task.get("taskId", MISSING) if task is not None else MISSING
    now = await _ask(ctx, server, "tasks/get", {"taskId": victim}) if victim is not MISSING else None
    if victim is MISSING or _status(now) not in ("working", "input_required"):
        why = "no task to cancel was created" if victim is MISSING else f"the task was {_status(now)!r} at once; nothing to cancel"
        ctx.not_reached("client.tasks.cancel.cancelled", why)
        ctx.not_reached("client.tasks.cancel.remains-cancelled", why)
        return
    env = await _ask(ctx, server, "tasks/cancel", {"taskId": victim})
    after = await _ask(ctx, server, "tasks/get", {"taskId": victim})
    if env is None or env.kind is Kind.ERROR:
        if _status(after) in ("completed", "failed"):
            ctx.not_reached("client.tasks.cancel.cancelled", f"the task ended ({_status(after)}) before the cancellation")
        else:
            ctx.check("client.tasks.cancel.cancelled", False, problem="ValidCancelRejected",
                      message=f"tasks/cancel for the working task {id_repr(victim)} was answered with {_answer(env)}",
                      expected="a CancelTaskResult in status cancelled", actual=None if env is None else env.error,
                      entries=[env] if env is not None else [])
        ctx.not_reached("client.tasks.cancel.remains-cancelled", "the task was not cancelled")
        return
    ok = _status(env) == "cancelled" and _status(after) in ("cancelled", MISSING)
    ctx.check("client.tasks.cancel.cancelled", ok, problem="TaskNotCancelled",
              message=(f"tasks/cancel for the working task {id_repr(victim)} answered status {_status(env)!r}; tasks/get "
                       f"right after: {_answer(after) if after is None or after.kind is Kind.ERROR else repr(_status(after))}"),
              expected="cancelled, in the answer and from then on", actual=env.result, json_path="$.result.status",
              entries=[env] + ([after] if after is not None else []))
    if _status(env) != "cancelled":
        ctx.not_reached("client.tasks.cancel.remains-cancelled", "the task was not cancelled")
        return
    rest = min(ctx.timeout, REMAINS_WAIT) - (time.monotonic() - created)
    if rest > 0:
        await anyio.sleep(rest)
    later = await _ask(ctx, server, "tasks/get", {"taskId": victim})
    if later is None:
        ctx.not_reached("client.tasks.cancel.remains-cancelled", "tasks/get was not answered")
        return
    gone = later.kind is Kind.ERROR and later.error_code == codes.INVALID_PARAMS
    ctx.check("client.tasks.cancel.remains-cancelled", gone or _status(later) == "cancelled", problem="CancelledTaskChanged",
              message=(f"tasks/get for the cancelled task {id_repr(victim)}, {time.monotonic() - created:.2g} s after it was "
                       "created: " + ("not found (deleted, which the page allows)" if gone else
                                      _answer(later) if later.kind is Kind.ERROR else f"status {_status(later)!r}")),
              expected="cancelled", actual=later.error if later.kind is Kind.ERROR else later.result, entries=[later])


def _judge_observed(ctx: ClientContext, server: ScenarioServer | None, why: str) -> None:
    """Every task message of the client's answers (as tasks.task_messages judges a server's)."""
    seen = {r: 0 for r in OBSERVED}
    bad = {r: 0 for r in OBSERVED}
    peer = server.peer if server is not None else None

    def judge(rid: str, ok: bool, seq: int, **kw: Any) -> None:
        seen[rid] += 1
        if ok:
            return
        bad[rid] += 1
        if bad[rid] <= MAX_REPORTED:
            ctx.check(rid, False, entries=[seq], peer=peer, **kw)

    statuses: dict[Any, str] = {}
    for entry in peer.transcript.entries if peer is not None else []:
        env = entry.envelope
        if entry.direction != Direction.IN or env is None:
            continue
        tasks: list[tuple[str, dict]] = []
        if env.kind is Kind.NOTIFICATION and env.method == "notifications/tasks/status" and isinstance(env.params, dict):
            tasks.append(("notifications/tasks/status", env.params))
        elif env.kind is Kind.RESULT and isinstance(env.result, dict):
            method = peer.sent_method(env.id)
            result = env.result
            if method in CAPABILITY and isinstance(result.get("task"), dict):
                tasks.append(("CreateTaskResult", result["task"]))
            elif method in ("tasks/get", "tasks/cancel"):
                tasks.append((f"{method} result", result))
            elif method == "tasks/list" and isinstance(result.get("tasks"), list):
                tasks.extend(("tasks/list item", t) for t in result["tasks"] if isinstance(t, dict))
            if method in ("tasks/get", "tasks/list", "tasks/cancel"):
                judge("client.tasks.meta.not-on-results", _related(result) is MISSING, entry.seq,
                      problem="RelatedTaskOnTaskResult",
                      message=f"the {method} result carries related-task metadata, though the task is named in it",
                      expected=f"no _meta[{RELATED_TASK_KEY!r}]", actual=result.get("_meta"), json_path="$.result._meta")
            if method == "tasks/result":
                asked = asked_task(peer.transcript.entries, env.id)
                rel = _related(result)
                judge("client.tasks.result.related-task", isinstance(rel, dict) and rel.get("taskId") == asked, entry.seq,
                      problem="TaskResultWithoutRelatedTask",
                      message=f"the tasks/result result for task {asked!r} lacks _meta[{RELATED_TASK_KEY!r}] naming it",
                      expected={RELATED_TASK_KEY: {"taskId": asked}}, actual=result.get("_meta"), json_path="$.result._meta")
            if method == "tasks/get":
                ttl = result.get("ttl", MISSING)
                ok = ttl is None or (isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0)
                judge("client.tasks.get.ttl", ok, entry.seq, problem="TaskTtlMissing",
                      message=f"a tasks/get result has ttl {'(absent)' if ttl is MISSING else repr(ttl)}",
                      expected="the actual ttl in milliseconds, or null", actual=None if ttl is MISSING else ttl,
                      json_path="$.result.ttl")
        for where, task in tasks:
            tid = task.get("taskId", MISSING)
            if where == "CreateTaskResult":
                judge("client.tasks.id.string", isinstance(tid, str), entry.seq, problem="TaskIdNotString",
                      message=f"a CreateTaskResult carries taskId {id_repr(tid)}, not a string",
                      expected="a string", actual=None if tid is MISSING else tid, json_path="$.result.task.taskId")
            if where != "notifications/tasks/status":
                for fld, rid in (("createdAt", "client.tasks.timestamps.created-at"),
                                 ("lastUpdatedAt", "client.tasks.timestamps.last-updated-at")):
                    value = task.get(fld, MISSING)
                    judge(rid, iso_timestamp(value), entry.seq, problem="TaskTimestampInvalid",
                          message=f"a task in a {where} has {fld} {'(absent)' if value is MISSING else repr(value)}",
                          expected="an ISO 8601 date and time", actual=None if value is MISSING else value)
            status = task.get("status")
            if isinstance(tid, (str, int)) and not isinstance(tid, bool) and isinstance(status, str):
                before = None if where == "CreateTaskResult" else statuses.get(tid)
                if before in ("completed", "failed"):
                    judge("client.tasks.status.valid-paths", status == before, entry.seq, problem="TerminalTaskChanged",
                          message=f"task {tid} was {before!r} and is now reported {status!r} ({where})",
                          expected=before, actual=status)
                if before is None or before not in TERMINAL:
                    statuses[tid] = status
    for rid in OBSERVED:
        if not seen[rid]:
            ctx.not_reached(rid, why if not statuses else "no such message in the run")
        elif not bad[rid]:
            ctx.check(rid, True, message=f"{seen[rid]} message(s) checked")


# ---------------------------------------------------------------------------------------------
# the client as requestor

REQUESTOR = (
    "client.tasks.tool.required", "client.tasks.tool.forbidden", "client.tasks.poll.interval",
    "client.tasks.poll.until-terminal", "client.tasks.input-required.result", "client.tasks.notifications.not-relied",
    "client.tasks.meta.not-on-requests",
)
POLL_MS = 200
WORKING_POLLS = 2  # tasks/get answered working this many times
INPUT_HOLD = 3.0  # seconds a task stays input_required without tasks/result
RESULT_AFTER = 0.2  # seconds between tasks/result and the task's completion
REQ_TOOLS = [
    {"name": "task_required", "description": "Takes a moment; must run as a task.",
     "inputSchema": {"type": "object", "properties": {}}, "execution": {"taskSupport": "required"},
     "annotations": {"readOnlyHint": True}},
    {"name": "task_optional", "description": "Takes a moment; may run as a task.",
     "inputSchema": {"type": "object", "properties": {}}, "execution": {"taskSupport": "optional"},
     "annotations": {"readOnlyHint": True}},
    {"name": "task_forbidden", "description": "Quick; never runs as a task.",
     "inputSchema": {"type": "object", "properties": {}}, "execution": {"taskSupport": "forbidden"},
     "annotations": {"readOnlyHint": True}},
]
SUPPORT = {t["name"]: t["execution"]["taskSupport"] for t in REQ_TOOLS}


def _now_iso() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _ServerTask:
    id: str
    tool: str
    created: str = field(default_factory=_now_iso)
    updated: str = ""
    status: str = "working"
    polls: list[tuple[float, str]] = field(default_factory=list)  # (when, status answered)
    results: list[float] = field(default_factory=list)  # when tasks/result arrived
    result_in_input: bool = False  # a tasks/result arrived while input_required
    input_since: float | None = None
    input_expired: bool = False
    done: Any = None  # anyio.Event

    def json(self) -> dict[str, Any]:
        return {"taskId": self.id, "status": self.status, "createdAt": self.created,
                "lastUpdatedAt": self.updated or self.created, "ttl": TTL_MS, "pollInterval": POLL_MS}

    def move(self, status: str) -> None:
        self.status = status
        self.updated = _now_iso()
        if status in TERMINAL and self.done is not None:
            self.done.set()


@scenario(requirements=[*REQUESTOR, *W_REQUIREMENTS], role="client", versions=[VERSION], order=4)
async def task_requestor(ctx: ClientContext) -> None:
    """The server declares tasks.requests.tools.call and lists tools marked required, optional and
    forbidden: the client must call the required one as a task, never the forbidden ones, poll at
    the pollInterval until the task is terminal or input_required, call tasks/result on
    input_required, and not wait for status notifications (none is sent)."""
    tasks: dict[str, _ServerTask] = {}
    calls: list[tuple[str, bool, Envelope]] = []  # (tool, augmented, request)
    task_requests: list[Envelope] = []  # the client's tasks/get, tasks/result, tasks/cancel

    def configure(server: ScenarioServer) -> None:
        server.capabilities = {"tools": {"listChanged": False},
                               "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}

        async def tools_list(env: Envelope) -> Answer | None:
            answer = server.default(env)
            params = env.params if isinstance(env.params, dict) else {}
            if isinstance(answer.result, dict) and params.get("cursor") is None:
                answer.result["tools"] = [*answer.result["tools"], *REQ_TOOLS]
            return answer

        async def tools_call(env: Envelope) -> Answer | None:
            params = env.params if isinstance(env.params, dict) else {}
            name = params.get("name")
            augmented = "task" in params
            if isinstance(name, str):
                calls.append((name, augmented, env))
            support = SUPPORT.get(name, "forbidden") if isinstance(name, str) else "forbidden"
            if augmented and support == "forbidden":
                return Answer(error={"code": codes.METHOD_NOT_FOUND, "message": f"{name} does not support task-augmented execution"})
            if not augmented and support == "required":
                return Answer(error={"code": codes.METHOD_NOT_FOUND, "message": f"{name} must be called as a task"})
            if not augmented:
                if name in SUPPORT:
                    return Answer(result={"content": [{"type": "text", "text": "done"}]})
                return None  # add_numbers, echo: the default answer
            task = _ServerTask(secrets.token_hex(16), name)
            task.done = anyio.Event()
            tasks[task.id] = task
            return Answer(result={"task": task.json()})

        def find(env: Envelope) -> _ServerTask | None:
            task_requests.append(env)
            params = env.params if isinstance(env.params, dict) else {}
            tid = params.get("taskId")
            return tasks.get(tid) if isinstance(tid, str) else None

        def unknown() -> Answer:
            return Answer(error={"code": codes.INVALID_PARAMS, "message": "Failed to retrieve task: Task not found"})

        async def tasks_get(env: Envelope) -> Answer | None:
            task = find(env)
            if task is None:
                return unknown()
            if task.status == "working" and len(task.polls) >= WORKING_POLLS:
                task.move("input_required" if task.tool == "task_required" else "completed")
                if task.status == "input_required":
                    task.input_since = time.monotonic()
            elif task.status == "input_required" and task.input_since is not None \
                    and time.monotonic() - task.input_since > INPUT_HOLD:
                task.input_expired = True
                task.move("completed")  # the input came no other way: carry on without it
            task.polls.append((time.monotonic(), task.status))
            return Answer(result=task.json())

        async def tasks_result(env: Envelope) -> Answer | None:
            task = find(env)
            if task is None:
                return unknown()
            task.results.append(time.monotonic())
            if task.status == "input_required":
                task.result_in_input = True
                task.move("working")  # the input arrives on this stream: the task carries on
            if task.status not in TERMINAL:
                await anyio.sleep(RESULT_AFTER)
                if task.status not in TERMINAL:
                    task.move("completed")
            with anyio.move_on_after(ctx.timeout):
                await task.done.wait()
            if task.status == "cancelled":
                return Answer(error={"code": codes.INTERNAL_ERROR, "message": "The task was cancelled"})
            return Answer(result={"content": [{"type": "text", "text": "done"}], "isError": False,
                                  "_meta": {RELATED_TASK_KEY: {"taskId": task.id}}})

        async def tasks_list(env: Envelope) -> Answer | None:
            return Answer(result={"tasks": [t.json() for t in tasks.values()]})

        async def tasks_cancel(env: Envelope) -> Answer | None:
            task = find(env)
            if task is None:
                return unknown()
            if task.status in TERMINAL:
                return Answer(error={"code": codes.INVALID_PARAMS, "message": f"Cannot cancel task: already {task.status}"})
            task.move("cancelled")
            return Answer(result=task.json())

        server.hooks.update({"tools/list": tools_list, "tools/call": tools_call, "tasks/get": tasks_get,
                             "tasks/result": tasks_result, "tasks/list": tasks_list, "tasks/cancel": tasks_cancel})

    played = await play(ctx, configure=configure, launch={"call": True})
    if not played.engaged:
        for rid in REQUESTOR:
            ctx.not_reached(rid, f"the client did not speak {ctx.version} with the suite's server")
        return
    peer = played.run.peer
    hint = "" if ctx.target.call_command else " (give --call-command to make it call a tool)"
    _judge_tool_calls(ctx, calls, peer, hint)
    if not tasks:
        for rid in REQUESTOR[2:]:
            ctx.not_reached(rid, f"the client created no task (it called no tool as a task){hint}")
        return
    _judge_polling(ctx, list(tasks.values()))
    rid = "client.tasks.meta.not-on-requests"
    if not task_requests:
        ctx.not_reached(rid, "the client sent no tasks/get, tasks/result or tasks/cancel")
    else:
        with_meta = [e for e in task_requests if _related(e.params) is not MISSING]
        ctx.check(rid, not with_meta, problem="RelatedTaskOnTaskRequest",
                  message=(f"the client's {with_meta[0].method} carries related-task metadata, though its taskId "
                           "parameter names the task" if with_meta else
                           f"{len(task_requests)} tasks/get, tasks/result or tasks/cancel request(s) without related-task "
                           "metadata"),
                  expected=f"no _meta[{RELATED_TASK_KEY!r}]", actual=with_meta[0].params.get("_meta") if with_meta else None,
                  entries=with_meta[:1], peer=peer)


def _judge_tool_calls(ctx: ClientContext, calls: list[tuple[str, bool, Envelope]], peer: Any, hint: str) -> None:
    required = [(a, e) for n, a, e in calls if SUPPORT.get(n) == "required"]
    if not required:
        ctx.not_reached("client.tasks.tool.required", f"the client did not call task_required{hint}")
    else:
        plain = [e for a, e in required if not a]
        ctx.check("client.tasks.tool.required", not plain, problem="RequiredTaskToolCalledPlainly",
                  message=("the client called task_required (execution.taskSupport \"required\") without params.task"
                           if plain else "the client called task_required as a task"),
                  expected="tools/call with params.task", actual=plain[0].params if plain else None,
                  entries=plain[:1] or [required[0][1]], peer=peer)
    forbidden = [(n, a, e) for n, a, e in calls if SUPPORT.get(n, "forbidden") == "forbidden"]
    if not forbidden:
        ctx.not_reached("client.tasks.tool.forbidden", f"the client called no tool marked forbidden or unmarked{hint}")
    else:
        bad = [(n, e) for n, a, e in forbidden if a]
        ctx.check("client.tasks.tool.forbidden", not bad, problem="ForbiddenToolCalledAsTask",
                  message=(f"the client called {bad[0][0]!r} (execution.taskSupport forbidden or absent) as a task" if bad
                           else f"the client called {', '.join(sorted({n for n, _, _ in forbidden}))} without params.task"),
                  expected="tools/call without params.task", actual=bad[0][1].params.get("task") if bad else None,
                  entries=[bad[0][1]] if bad else [forbidden[0][2]], peer=peer)


def _judge_polling(ctx: ClientContext, tasks: list[_ServerTask]) -> None:
    # notifications: never sent; a task neither polled nor asked for was waited on in vain
    silent = [t for t in tasks if not t.polls and not t.results]
    ctx.check("client.tasks.notifications.not-relied", not silent, problem="TaskNeverPolled",
              message=(f"the client created task {silent[0].id} (of {silent[0].tool}) and then sent neither tasks/get nor "
                       "tasks/result for it; the server sends no notifications/tasks/status" if silent else
                       f"the client polled or asked for the result of each of its {len(tasks)} task(s)"),
              expected="tasks/get or tasks/result for the task", actual="nothing" if silent else None)
    # poll interval
    gaps = [(t, b[0] - a[0]) for t in tasks for a, b in zip(t.polls, t.polls[1:])]
    if not gaps:
        ctx.not_reached("client.tasks.poll.interval", "the client polled no task twice")
    else:
        short = [(t, g) for t, g in gaps if g < POLL_MS / 1000 / 2]
        ctx.check("client.tasks.poll.interval", not short, problem="PollIntervalIgnored",
                  message=(f"two tasks/get of task {short[0][0].id} {short[0][1] * 1000:.0f} ms apart; its pollInterval is "
                           f"{POLL_MS} ms" if short else f"{len(gaps) + len({id(t) for t, _ in gaps})} tasks/get, none sooner "
                           f"than half the pollInterval ({POLL_MS} ms) after the one before"),
                  expected=f"about {POLL_MS} ms between polls", actual=f"{short[0][1] * 1000:.0f} ms" if short else None)
    # polling until terminal or input_required
    polled = [t for t in tasks if t.polls or t.results]
    if not polled:
        ctx.not_reached("client.tasks.poll.until-terminal", "the client never polled a task "
                                                            "(client.tasks.notifications.not-relied)")
    else:
        stopped = [t for t in polled if not t.results
                   and not any(s in TERMINAL or s == "input_required" for _, s in t.polls)]
        ctx.check("client.tasks.poll.until-terminal", not stopped, problem="PollingStoppedEarly",
                  message=(f"the client stopped polling task {stopped[0].id} while it was {stopped[0].polls[-1][1]!r}, "
                           "and did not ask for its result" if stopped else
                           "the client polled each task until it was terminal or input_required, or waited on tasks/result"),
                  expected="tasks/get until terminal or input_required", actual=stopped[0].polls[-1][1] if stopped else None)
    # input_required: tasks/result
    asked = [t for t in tasks if any(s == "input_required" for _, s in t.polls)]
    if not asked:
        ctx.not_reached("client.tasks.input-required.result", "no task of the client was reported input_required "
                                                              "(the client did not poll the task_required task so far)")
    else:
        missed = [t for t in asked if not t.result_in_input]
        ctx.check("client.tasks.input-required.result", not missed, problem="InputRequiredWithoutTasksResult",
                  message=(f"task {missed[0].id} was reported input_required and the client did not call tasks/result "
                           f"while it was ({'the server gave up waiting after ' + format(INPUT_HOLD, 'g') + ' s' if missed[0].input_expired else 'it kept polling or stopped'})"
                           if missed else "the client called tasks/result when it saw input_required"),
                  expected="tasks/result after input_required", actual="tasks/get only" if missed else None)
