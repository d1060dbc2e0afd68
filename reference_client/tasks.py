"""The reference client as the receiver of 2025-11-25 tasks (basic/utilities/tasks): no I/O.

The client declares ``tasks.list``, ``tasks.cancel`` and ``tasks.requests.sampling.createMessage`` /
``tasks.requests.elicitation.create``.  A task-augmented ``sampling/createMessage`` or
``elicitation/create`` is answered at once with a ``CreateTaskResult`` (status ``working``); the
answer itself (the deterministic sample, the filled form) is worked out at once and becomes the
task's result after :data:`WORK` seconds (the model call, the user), when the task turns
``completed``.  ``tasks/get``, ``tasks/list`` (pages of :data:`PAGE`), ``tasks/cancel`` are answered
at once; ``tasks/result`` of a terminal task too, of a working one once it ends (the session sends
it then: :meth:`TaskStore.result_wait`).  Unknown task ids, cursors never issued, and cancelling a
terminal task: ``-32602``.  Task ids are 128 random bits.  No ``notifications/tasks/status`` (they
are optional).

The answer faults of the receiver (``reference_client.faults``, ``task-*``) act here.
"""

from __future__ import annotations

import datetime as _dt
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.spec import errors as codes
from conformance.spec.meta import RELATED_TASK_KEY

__all__ = ["TaskStore", "WORK", "POLL_MS", "TASK_METHODS", "capabilities"]

WORK = 0.5  # seconds a task's work takes (the model call, the user filling the form)
POLL_MS = 100
DEFAULT_TTL = 60_000
MAX_TTL = 3_600_000
PAGE = 50
TERMINAL = ("completed", "failed", "cancelled")
TASK_METHODS = ("sampling/createMessage", "elicitation/create")
_CAP = {"sampling/createMessage": ("sampling", "createMessage"), "elicitation/create": ("elicitation", "create")}


def capabilities(*, sampling: bool = True, elicitation: bool = True) -> dict[str, Any]:
    requests: dict[str, Any] = {}
    if sampling:
        requests["sampling"] = {"createMessage": {}}
    if elicitation:
        requests["elicitation"] = {"create": {}}
    return {"list": {}, "cancel": {}, "requests": requests}


def declared_for(caps: dict[str, Any], method: str) -> bool:
    """Does ``caps`` (the client's) declare task augmentation for ``method``?"""
    tasks = caps.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    kind, op = _CAP[method]
    group = requests.get(kind) if isinstance(requests, dict) else None
    return isinstance(group, dict) and op in group


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class _Task:
    id: str
    method: str
    ttl: int
    created: float  # wall clock
    reply: dict[str, Any]  # the underlying answer (result or error), id-less
    done_at: float  # wall clock: when the work ends
    cancelled_at: float | None = None
    reverts: bool = False  # fault task-cancel-reverts: cancelled, yet completed once the work ends

    def status(self, now: float) -> str:
        if self.cancelled_at is not None and not (self.reverts and now >= self.done_at):
            return "cancelled"
        if now < self.done_at:
            return "working"
        return "failed" if "error" in self.reply else "completed"

    def updated(self, now: float) -> float:
        if self.cancelled_at is not None and self.status(now) == "cancelled":
            return self.cancelled_at
        return self.done_at if now >= self.done_at else self.created


@dataclass
class TaskStore:
    faulty: Callable[[str], bool] = lambda name: False
    clock: Callable[[], float] = time.time
    tasks: dict[str, _Task] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    _first: str | None = None  # fault task-same-id: the id every task gets

    # -- creating --------------------------------------------------------------------------------

    def create(self, method: str, params: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        """The CreateTaskResult for a task-augmented ``method`` whose answer will be ``reply``."""
        now = self.clock()
        self._purge(now)
        asked = params.get("task") if isinstance(params.get("task"), dict) else {}
        ttl = asked.get("ttl")
        ttl = min(ttl, MAX_TTL) if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else DEFAULT_TTL
        tid = secrets.token_hex(16)
        body = {k: v for k, v in reply.items() if k in ("result", "error")}
        task = _Task(tid, method, ttl, now, body, now + WORK)
        if self.faulty("task-same-id"):
            # fault: every task gets the first task's id; the first keeps it in the store
            self._first = self._first or tid
            if self._first != tid:
                task.id = self._first
                self.tasks[f"{tid}-hidden"] = task
                return {"task": self._json(task, now)}
        self.tasks[tid] = task
        self._order.append(tid)
        return {"task": self._json(task, now)}

    def _json(self, task: _Task, now: float, *, listing: bool = False) -> dict[str, Any]:
        status = task.status(now)
        if listing and self.faulty("task-list-reopened") and status == "completed":
            status = "working"  # fault: a completed task is listed as working again
        out: dict[str, Any] = {"taskId": task.id if not self.faulty("task-int-id") else _int_id(task.id), "status": status}
        if status == "failed":
            err = task.reply.get("error") or {}
            out["statusMessage"] = f"the request failed: {err.get('message')}"
        elif status == "cancelled":
            out["statusMessage"] = "The task was cancelled by request."
        if not self.faulty("task-no-created-at"):
            out["createdAt"] = _iso(task.created)
        if not self.faulty("task-no-last-updated-at"):
            out["lastUpdatedAt"] = _iso(task.updated(now))
        out["ttl"] = task.ttl
        out["pollInterval"] = POLL_MS
        return out

    def _purge(self, now: float) -> None:
        for tid in [t for t, task in self.tasks.items() if (now - task.created) * 1000 > task.ttl]:
            del self.tasks[tid]
            if tid in self._order:
                self._order.remove(tid)

    # -- tasks/* ---------------------------------------------------------------------------------

    def handle(self, rid: Any, method: str, params: Any) -> dict[str, Any] | None:
        """The answer to ``tasks/get``, ``tasks/list``, ``tasks/cancel`` or a ``tasks/result`` of a
        task that is terminal; None for a ``tasks/result`` that must wait (:meth:`result_wait`)."""
        now = self.clock()
        self._purge(now)
        params = params if isinstance(params, dict) else {}
        if method == "tasks/list":
            return self._list(rid, params, now)
        task = self._find(params)
        if task is None:
            code = codes.INTERNAL_ERROR if self.faulty("task-unknown-id-internal-error") else codes.INVALID_PARAMS
            return _error(rid, code, "Failed to retrieve task: Task not found")
        if method == "tasks/get":
            result = self._json(task, now)
            if self.faulty("task-meta-on-results"):
                result["_meta"] = {RELATED_TASK_KEY: {"taskId": task.id}}
            if self.faulty("task-no-ttl"):
                result.pop("ttl", None)
            return {"jsonrpc": "2.0", "id": rid, "result": result}
        if method == "tasks/cancel":
            status = task.status(now)
            if status in TERMINAL:
                if self.faulty("task-cancel-terminal-accepted"):
                    return {"jsonrpc": "2.0", "id": rid, "result": self._json(task, now)}  # unchanged, no error
                return _error(rid, codes.INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{status}'")
            if self.faulty("task-cancel-ignored"):
                return {"jsonrpc": "2.0", "id": rid, "result": self._json(task, now)}  # still working
            task.cancelled_at = now
            task.reverts = self.faulty("task-cancel-reverts")  # fault: the work goes on, and ends completed
            result = self._json(task, now)
            return {"jsonrpc": "2.0", "id": rid, "result": result}
        if method == "tasks/result":
            if task.status(now) not in TERMINAL and not self.faulty("task-result-early"):
                return None
            return self.result_reply(rid, task.id, now)
        return None

    def _find(self, params: dict[str, Any]) -> _Task | None:
        tid = params.get("taskId")
        if self.faulty("task-meta-routes"):
            # fault: the related-task metadata names the task, not the taskId parameter
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            rel = meta.get(RELATED_TASK_KEY) if isinstance(meta.get(RELATED_TASK_KEY), dict) else {}
            if isinstance(rel.get("taskId"), str):
                tid = rel["taskId"]
        if self.faulty("task-int-id") and isinstance(tid, int):
            tid = next((t for t in self.tasks if _int_id(t) == tid), None)
        return self.tasks.get(tid) if isinstance(tid, str) else None

    def _list(self, rid: Any, params: dict[str, Any], now: float) -> dict[str, Any]:
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            if not (isinstance(cursor, str) and cursor.startswith("mcp-reference-client-tasks:")
                    and cursor.split(":", 1)[1].isdigit()):
                return _error(rid, codes.INVALID_PARAMS, "Invalid cursor")
            start = int(cursor.split(":", 1)[1])
        ids = [] if self.faulty("task-list-empty") else self._order
        page = ids[start:start + PAGE]
        result: dict[str, Any] = {"tasks": [self._json(self.tasks[t], now, listing=True) for t in page]}
        if start + PAGE < len(ids):
            result["nextCursor"] = f"mcp-reference-client-tasks:{start + PAGE}"
        if self.faulty("task-meta-on-results"):
            result["_meta"] = {RELATED_TASK_KEY: {"taskId": page[0]}} if page else {}
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def result_wait(self, params: Any) -> tuple[float, str] | None:
        """For a ``tasks/result`` that must wait: (seconds until the task ends, its id)."""
        task = self._find(params if isinstance(params, dict) else {})
        if task is None:
            return None
        return max(0.0, task.done_at - self.clock()), task.id

    def result_reply(self, rid: Any, tid: str, now: float | None = None) -> dict[str, Any]:
        """``tasks/result`` of a task that ended: exactly what the request would have been answered
        with (its result, with related-task in ``_meta``; or its error); a cancelled task's is an
        error (the request produced nothing)."""
        now = self.clock() if now is None else now
        task = self.tasks.get(tid)
        if task is None:
            return _error(rid, codes.INVALID_PARAMS, "Failed to retrieve task: Task not found")
        status = task.status(now)
        if status == "working":  # fault task-result-early
            return _error(rid, codes.INVALID_PARAMS, "The task has not finished yet")
        if status == "cancelled":
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": codes.INTERNAL_ERROR,
                    "message": "The task was cancelled before it produced a result", "data": {"taskId": tid}}}
        if "error" in task.reply:
            return {"jsonrpc": "2.0", "id": rid, "error": task.reply["error"]}
        if self.faulty("task-result-task-data"):
            result = self._json(task, now)  # fault: the task, not the request's result
        else:
            result = dict(task.reply.get("result") or {})
        if not self.faulty("task-result-no-meta"):
            shown = _int_id(tid) if self.faulty("task-int-id") else tid  # the id the requestor knows it by
            result["_meta"] = {**(result.get("_meta") or {}), RELATED_TASK_KEY: {"taskId": shown}}
        return {"jsonrpc": "2.0", "id": rid, "result": result}


def _int_id(tid: str) -> int:
    return int(tid[:12], 16)


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
