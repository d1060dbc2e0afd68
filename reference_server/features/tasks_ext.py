"""The 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663; the draft
``tasks.mdx`` of modelcontextprotocol/experimental-ext-tasks).

Beside the 2025-11-25 tasks utility (:mod:`reference_server.features.tasks`), which serves
initialize-based sessions; this module serves the stateless versions only.

* ``server/discover`` advertises ``capabilities.extensions["io.modelcontextprotocol/tasks"] = {}``.
* Task creation is server-directed: a tool with ``ext_task`` (``optional``/``required``) called by a
  request whose per-request client capabilities declare the extension answers with a flat
  ``CreateTaskResult`` (``resultType: "task"``, ``taskId``, ``status: "working"``, ``createdAt``,
  ``lastUpdatedAt``, ``ttlMs``, ``pollIntervalMs``); the task is stored before the answer is sent
  ("MUST NOT return CreateTaskResult until the task is durably created").  Without the declaration
  an ``optional`` tool runs synchronously and a ``required`` one is refused with ``-32021``
  ("MUST NOT return CreateTaskResult to a client that did not include the extension capability").
* A tool with ``ext_gather_first`` first gathers its input over MRTR (``InputRequiredResult``) and
  creates the task on the final round ("SHOULD resolve all MRTR exchanges synchronously before
  responding with a CreateTaskResult").
* ``tasks/get`` answers the DetailedTask (``result`` when ``completed``, ``error`` when ``failed``,
  ``inputRequests`` when ``input_required``), ``resultType: "complete"``.  A tool result with
  ``isError: true`` is ``completed``; ``failed`` only for a JSON-RPC error.
* A task that needs input parks in ``input_required`` with keys unique over its lifetime;
  ``tasks/update`` takes ``inputResponses`` (unknown or answered keys ignored, a subset accepted)
  and acknowledges with an empty result.  ``tasks/cancel`` acknowledges with an empty result
  (also for a terminal task); a running task becomes ``cancelled``.
* ``tasks/*`` from a request that does not declare the extension: ``-32021``; an unknown ``taskId``:
  ``-32602``.  Over HTTP the core checks ``Mcp-Name`` against ``params.taskId`` (http.py).

Tasks belong to the server process (stateless requests share them), expire after ``ttlMs``.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from conformance.spec import errors as codes
from conformance.spec.meta import TASKS_EXTENSION
from conformance.spec.versions import VERSIONS, spec

from reference_server.errors import RPCError
from reference_server.features.tasks import TERMINAL, iso_now
from reference_server.features.inputs import InputRequired, InputState, initial_state, missing_capabilities, run_with_inputs

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features
    from reference_server.features.tools import Tool

__all__ = ["install", "capabilities", "declared", "call_tool", "TASKS_EXTENSION"]

TTL_MS = 300_000
POLL_MS = 250
_MAX_TASKS = 1000
_MAX_ROUNDS = 8


@dataclass(eq=False)
class ExtTask:
    id: str
    ttl_ms: int = TTL_MS
    status: str = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=iso_now)
    updated_at: str = ""
    created: float = field(default_factory=time.monotonic)
    result: Any = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # outstanding key -> request
    answers: dict[str, Any] = field(default_factory=dict)  # answered key -> response (not yet consumed)
    issued: int = 0  # keys issued so far (a key is never reused)
    answered: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope | None = None

    def __post_init__(self) -> None:
        self.updated_at = self.created_at

    def set(self, status: str, message: str | None = None) -> None:
        if self.status in TERMINAL:
            return
        self.status = status
        self.status_message = message
        self.updated_at = iso_now()

    def base(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "status": self.status}
        if self.status_message:
            out["statusMessage"] = self.status_message
        out.update({"createdAt": self.created_at, "lastUpdatedAt": self.updated_at, "ttlMs": self.ttl_ms, "pollIntervalMs": POLL_MS})
        return out

    def detailed(self) -> dict[str, Any]:
        out = self.base()
        if self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        elif self.status == "input_required":
            out["inputRequests"] = dict(self.input_requests)
        return out

    @property
    def expired(self) -> bool:
        return (time.monotonic() - self.created) * 1000 > self.ttl_ms


def declared(ctx: "RequestContext") -> bool:
    """Whether the request's per-request client capabilities declare the extension."""
    caps = ctx.client_capabilities if isinstance(ctx.client_capabilities, dict) else {}
    ext = caps.get("extensions")
    return isinstance(ext, dict) and isinstance(ext.get(TASKS_EXTENSION), dict)


def missing_extension(what: str) -> RPCError:
    return RPCError(
        codes.MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {what} needs the {TASKS_EXTENSION} extension, which the request's client capabilities do not declare",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        http_status=400,
    )


def capabilities(features: "Features", version: str) -> dict[str, Any]:
    return {"extensions": {TASKS_EXTENSION: {}}} if spec(version).stateless else {}


def _store(server: "Server") -> dict[str, ExtTask]:
    tasks: dict[str, ExtTask] = server.__dict__.setdefault("_ext_tasks", {})
    for tid in [t for t, task in tasks.items() if task.expired]:
        task = tasks.pop(tid)
        if task.scope is not None:
            task.scope.cancel()
    return tasks


async def call_tool(ctx: "RequestContext", tool: "Tool", args: dict[str, Any]) -> Any:
    """``tools/call`` of a tool with ``ext_task`` in a stateless version: a task when the request
    declares the extension, else the synchronous result (``optional``) or ``-32021`` (``required``)."""
    if not declared(ctx):
        if tool.ext_task == "required":
            raise missing_extension(f"tool {tool.name}")
        return await _run_inline(ctx, tool, args)
    if tool.ext_gather_first and tool.uses_inputs:
        ready = object()

        async def probe(inputs: InputState) -> Any:
            out = tool.handler(ctx, args, inputs)
            if hasattr(out, "__await__"):
                out = await out
            return out if isinstance(out, InputRequired) else ready

        first = await run_with_inputs(ctx, probe)
        if first is not ready:
            return first  # the InputRequiredResult of the MRTR phase
    return _create(ctx, tool, args)


async def _run_inline(ctx: "RequestContext", tool: "Tool", args: dict[str, Any]) -> Any:
    if tool.uses_inputs:
        return await run_with_inputs(ctx, lambda inputs: tool.handler(ctx, args, inputs))
    out = tool.handler(ctx, args)
    return await out if hasattr(out, "__await__") else out


def _create(ctx: "RequestContext", tool: "Tool", args: dict[str, Any]) -> dict[str, Any]:
    from reference_server.messages import RequestContext

    server = ctx.server
    tasks = _store(server)
    if len(tasks) >= _MAX_TASKS:
        raise RPCError(codes.INTERNAL_ERROR, "too many tasks; try again later")
    inputs = initial_state(ctx) if tool.uses_inputs else InputState()
    task = ExtTask(secrets.token_urlsafe(24))
    tasks[task.id] = task  # durably created before the CreateTaskResult is sent

    async def discard(out: Any) -> None:
        return None

    bg = RequestContext(ctx.conn, ctx.id, ctx.method, ctx.params, ctx.version, modern=True, sink=discard)

    async def execute() -> None:
        if task.status in TERMINAL:  # cancelled before it started
            return
        with anyio.CancelScope() as scope:
            task.scope = scope
            try:
                res = await _run_task(bg, task, tool, args, inputs)
            except RPCError as err:
                task.error = err.to_json()
                task.set("failed", f"The tool call failed with JSON-RPC error {err.code}: {err.message}")
                return
            except Exception as exc:
                task.error = {"code": codes.INTERNAL_ERROR, "message": f"Internal error: {exc!r}"}
                task.set("failed", task.error["message"])
                return
            # "If the request completed with a result (even if isError: true for tool results),
            # the task uses completed status"
            task.result = res if isinstance(res, dict) else {}
            task.set("completed")
        if scope.cancelled_caught:
            task.set("cancelled", "The task was cancelled by request.")

    group = server.background or ctx.conn.task_group
    group.start_soon(execute)
    return {"resultType": "task", **task.base()}


async def _run_task(ctx: "RequestContext", task: ExtTask, tool: "Tool", args: dict[str, Any], inputs: InputState) -> Any:
    if not tool.uses_inputs:
        out = tool.handler(ctx, args)
        return await out if hasattr(out, "__await__") else out
    for _ in range(_MAX_ROUNDS):
        out = tool.handler(ctx, args, inputs)
        if hasattr(out, "__await__"):
            out = await out
        if not isinstance(out, InputRequired):
            return out
        missing = missing_capabilities(ctx, out.requests)
        if missing:
            raise RPCError(codes.MISSING_REQUIRED_CLIENT_CAPABILITY, f"Missing required client capability: {', '.join(missing)}", {"requiredCapabilities": missing})
        # "Each request key in inputRequests MUST be unique over the lifetime of a single task"
        names: dict[str, str] = {}
        for key in out.requests:
            task.issued += 1
            names[f"{key}.{task.issued}"] = key
        task.answers = {}
        task.answered = anyio.Event()
        task.input_requests = {k: out.requests[names[k]] for k in names}
        task.set("input_required", "The task waits for input: answer inputRequests with tasks/update.")
        await task.answered.wait()
        inputs = InputState(responses={names[k]: v for k, v in task.answers.items() if k in names}, state=out.state, round=inputs.round + 1)
    raise RPCError(codes.INTERNAL_ERROR, "too many input rounds")


def _task(ctx: "RequestContext", params: dict[str, Any]) -> ExtTask:
    if not declared(ctx):
        raise missing_extension(ctx.method)
    tid = params.get("taskId")
    if not isinstance(tid, str):
        raise RPCError(codes.INVALID_PARAMS, "Invalid params: taskId must be a string", {"taskId": tid})
    task = _store(ctx.server).get(tid)
    if task is None:
        raise RPCError(codes.INVALID_PARAMS, "Failed to retrieve task: Task not found", {"taskId": tid})
    return task


def install(server: "Server", features: "Features") -> None:
    if not any(spec(v).stateless for v in VERSIONS):
        return

    def tasks_get(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        return _task(ctx, params).detailed()

    def tasks_update(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        task = _task(ctx, params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RPCError(codes.INVALID_PARAMS, "Invalid params: inputResponses must be an object", {"inputResponses": "not an object"})
        # "A server SHOULD ignore any inputResponses responses mapped to a key that is not
        # currently outstanding"; "MAY accept a partial set of responses"
        for key, value in responses.items():
            if key in task.input_requests:
                del task.input_requests[key]
                task.answers[key] = value
        if task.status == "input_required" and not task.input_requests:
            task.set("working")
            task.answered.set()
        return {}  # "MUST acknowledge the request with an empty result"

    def tasks_cancel(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        task = _task(ctx, params)
        if task.status not in TERMINAL:
            if task.scope is not None:
                task.scope.cancel()
            task.set("cancelled", "The task was cancelled by request.")
        return {}

    server.extension_handlers["tasks/get"] = tasks_get
    server.extension_handlers["tasks/update"] = tasks_update
    server.extension_handlers["tasks/cancel"] = tasks_cancel
