"""Tasks (2025-11-25, basic/utilities/tasks): task-augmented ``tools/call`` and ``tasks/*``.

The server declares ``tasks.list``, ``tasks.cancel`` and ``tasks.requests.tools.call``; tools say
``execution.taskSupport`` (``optional``: ``echo``, ``add``, ``slow``, ``fail``,
``test_tool_with_progress``, ``test_elicitation``; ``required``: ``slow_task``; absent means forbidden).

* A ``tools/call`` with ``params.task`` answers at once with a ``CreateTaskResult`` (status
  ``working``) and runs the tool in the background; "Tasks MUST begin in the working status".
* A tool whose taskSupport is absent/forbidden called as a task, or a ``required`` tool called
  without one, gets ``-32601`` (tools page rules: "Servers SHOULD/MUST return a -32601").
* Terminal statuses: ``completed``; ``failed`` for a JSON-RPC error or a result with
  ``isError: true`` ("For tool calls specifically, this includes cases where the tool call result
  has isError set to true"); ``cancelled`` after ``tasks/cancel``.
* ``tasks/result`` blocks until the task is terminal, then returns exactly what the call would
  have returned, with ``_meta["io.modelcontextprotocol/related-task"]``; a cancelled task's
  result is an error (the call never produced one).
* Unknown or expired task ids and cancelling a terminal task: ``-32602``.
* ``notifications/tasks/status`` is sent on every status change; messages a running task sends
  (progress, and the requests of a tool that asks the client, e.g. ``test_elicitation``) carry
  ``related-task`` in ``_meta`` and go to the connection's default stream (over streamable HTTP the
  GET stream).  While such a request waits for the client's answer the task is ``input_required``,
  then ``working`` again.

Tasks belong to the connection (stdio process or HTTP session) that created them and expire after
their ``ttl`` (default 5 minutes, at most 1 hour).
"""

from __future__ import annotations

import datetime as _dt
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import anyio

from conformance.spec import errors as codes
from conformance.spec.versions import spec
from conformance.spec.meta import MODEL_IMMEDIATE_RESPONSE_KEY, RELATED_TASK_KEY

from reference_server.errors import RPCError
from reference_server.features.pagination import paginate

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Connection, Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["install", "capabilities", "start_task", "iso_now", "TERMINAL", "RELATED_TASK_KEY"]

_DEFAULT_TTL = 300_000
_MAX_TTL = 3_600_000
_POLL_MS = 500
_MAX_TASKS = 1000
TERMINAL = frozenset({"completed", "failed", "cancelled"})


def iso_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class Task:
    id: str
    ttl: int
    status: str = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=iso_now)
    updated_at: str = ""
    created: float = field(default_factory=time.monotonic)
    result: Any = None
    error: RPCError | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope | None = None

    def __post_init__(self) -> None:
        self.updated_at = self.created_at

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "status": self.status}
        if self.status_message:
            out["statusMessage"] = self.status_message
        out.update({"createdAt": self.created_at, "lastUpdatedAt": self.updated_at, "ttl": self.ttl, "pollInterval": _POLL_MS})
        return out

    @property
    def expired(self) -> bool:
        return (time.monotonic() - self.created) * 1000 > self.ttl


def capabilities(features: "Features", version: str) -> dict[str, Any]:
    if not spec(version).tasks:
        return {}
    return {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


def _tasks(conn: "Connection") -> dict[str, Task]:
    tasks = conn.__dict__.setdefault("_tasks", {})
    for tid in [t for t, task in tasks.items() if task.expired]:
        task = tasks.pop(tid)
        if task.scope is not None:
            task.scope.cancel()
    return tasks


def _get(ctx: "RequestContext", params: dict[str, Any]) -> Task:
    tid = params.get("taskId")
    task = _tasks(ctx.conn).get(tid) if isinstance(tid, str) else None
    if task is None:
        raise RPCError(codes.INVALID_PARAMS, "Failed to retrieve task: Task not found", {"taskId": tid})
    return task


async def _set_status(ctx_conn: "Connection", task: Task, status: str, message: str | None = None) -> None:
    task.status = status
    task.status_message = message
    task.updated_at = iso_now()
    if status in TERMINAL:
        task.done.set()
    # "Receivers MAY send notifications/tasks/status notifications when a task's status changes"
    await ctx_conn.notify("notifications/tasks/status", task.to_json())


def start_task(ctx: "RequestContext", run: Callable[["RequestContext"], Any], *, failed: Callable[[Any], bool]) -> dict[str, Any]:
    """Create a task for the current request and run ``run(background_ctx)`` in the background."""
    from reference_server.messages import RequestContext

    conn = ctx.conn
    tasks = _tasks(conn)
    if len(tasks) >= _MAX_TASKS:
        raise RPCError(codes.INTERNAL_ERROR, "too many tasks; try again later")
    meta = ctx.params.get("task") if isinstance(ctx.params.get("task"), dict) else {}
    ttl = meta.get("ttl")
    ttl = min(ttl, _MAX_TTL) if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else _DEFAULT_TTL
    task = Task(secrets.token_hex(16), ttl)
    tasks[task.id] = task
    bg = RequestContext(conn, ctx.id, ctx.method, ctx.params, ctx.version, modern=ctx.modern, sink=conn.default_sink)
    bg.related_task = task.id

    async def on_input(waiting: bool) -> None:
        if task.status in TERMINAL:
            return  # cancelled meanwhile: a terminal task stays so
        if waiting:
            await _set_status(conn, task, "input_required", "The task waits for the client's answer to its request.")
        else:
            await _set_status(conn, task, "working")

    bg.on_input = on_input

    async def execute() -> None:
        with anyio.CancelScope() as scope:
            task.scope = scope
            try:
                res = run(bg)
                if hasattr(res, "__await__"):
                    res = await res
            except RPCError as err:
                task.error = err
                await _set_status(conn, task, "failed", err.message)
                return
            except Exception as exc:
                task.error = RPCError(codes.INTERNAL_ERROR, f"Internal error: {exc!r}")
                await _set_status(conn, task, "failed", task.error.message)
                return
            task.result = res if isinstance(res, dict) else {}
            if failed(task.result):
                await _set_status(conn, task, "failed", "the tool call ended in an error (isError: true)")
            else:
                await _set_status(conn, task, "completed")
        if scope.cancelled_caught and task.status not in TERMINAL:
            task.done.set()

    conn.task_group.start_soon(execute)
    out = {"task": task.to_json(), "_meta": {MODEL_IMMEDIATE_RESPONSE_KEY: f"The work runs as task {task.id}; poll tasks/get or wait with tasks/result."}}
    return out


def install(server: "Server", features: "Features") -> None:
    def tasks_get(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        return _get(ctx, params).to_json()

    async def tasks_result(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        task = _get(ctx, params)
        await task.done.wait()  # "MUST block the response until the task reaches a terminal status"
        if task.status == "cancelled":
            raise RPCError(codes.INTERNAL_ERROR, "The task was cancelled before it produced a result", {"taskId": task.id, "status": "cancelled"})
        if task.error is not None:
            raise RPCError(task.error.code, task.error.message, task.error.data)
        result = dict(task.result)
        meta = dict(result.get("_meta") or {})
        meta[RELATED_TASK_KEY] = {"taskId": task.id}
        result["_meta"] = meta
        return result

    def tasks_list(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        items = list(_tasks(ctx.conn).values())
        page, nxt = paginate("tasks/list", params, items, server.config.page_size_for("tasks/list"))
        out: dict[str, Any] = {"tasks": [t.to_json() for t in page]}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    async def tasks_cancel(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        task = _get(ctx, params)
        if task.status in TERMINAL:
            raise RPCError(codes.INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{task.status}'", {"taskId": task.id, "status": task.status})
        if task.scope is not None:
            task.scope.cancel()
        # "MUST transition the task to cancelled status before sending the response"
        await _set_status(ctx.conn, task, "cancelled", "The task was cancelled by request.")
        return task.to_json()

    server.handlers["tasks/get"] = tasks_get
    server.handlers["tasks/result"] = tasks_result
    server.handlers["tasks/list"] = tasks_list
    server.handlers["tasks/cancel"] = tasks_cancel
