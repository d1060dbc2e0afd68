"""Reading 2025-11-25 task messages (basic/utilities/tasks), for both roles' task scenarios: the
task of a CreateTaskResult, the status of a task result, related-task metadata, task data standing
where an underlying result belongs, ISO 8601 timestamps.  Pure."""

from __future__ import annotations

import re
from typing import Any

from conformance.spec.meta import RELATED_TASK_KEY
from conformance.wire.envelope import MISSING, Envelope, Kind

__all__ = ["TERMINAL", "task_of", "status_of", "related_task", "taskish", "comparable", "iso_timestamp", "asked_task"]

TERMINAL = ("completed", "failed", "cancelled")
_ISO = re.compile(
    r"^\d{4}-?\d{2}-?\d{2}[Tt ]\d{2}(:?\d{2}(:?\d{2}([.,]\d+)?)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$"
)


def task_of(env: Envelope | None) -> dict[str, Any] | None:
    """The ``task`` object of a CreateTaskResult."""
    if env is None or env.kind is not Kind.RESULT or not isinstance(env.result, dict):
        return None
    task = env.result.get("task")
    return task if isinstance(task, dict) else None


def status_of(env: Envelope | None) -> Any:
    """The ``status`` of a task result (tasks/get, tasks/cancel); MISSING for anything else."""
    if env is None or env.kind is not Kind.RESULT or not isinstance(env.result, dict):
        return MISSING
    return env.result.get("status", MISSING)


def related_task(obj: Any) -> Any:
    """``_meta["io.modelcontextprotocol/related-task"]`` of a params or result object (MISSING: none)."""
    meta = obj.get("_meta") if isinstance(obj, dict) else None
    return meta.get(RELATED_TASK_KEY, MISSING) if isinstance(meta, dict) else MISSING


def taskish(env: Envelope) -> bool:
    """Task data where the underlying result belongs: a CreateTaskResult or a Task."""
    r = env.result if env.kind is Kind.RESULT else None
    return isinstance(r, dict) and ("task" in r and "content" not in r or ("taskId" in r and "status" in r and "content" not in r))


def comparable(result: Any) -> Any:
    """A result without its ``_meta`` (which tasks/result adds to)."""
    if not isinstance(result, dict):
        return result
    return {k: v for k, v in result.items() if k != "_meta"}


def iso_timestamp(value: Any) -> bool:
    """An ISO 8601 date and time (RFC 3339 section 5; a missing offset or the basic format accepted)."""
    return isinstance(value, str) and bool(_ISO.match(value))


def asked_task(entries: Any, rid: Any) -> Any:
    """The ``taskId`` of the request with id ``rid`` we sent, among transcript ``entries``."""
    from conformance.wire.transcript import Direction

    for entry in reversed(list(entries)):
        env = entry.envelope
        if entry.direction == Direction.OUT and env is not None and env.kind is Kind.REQUEST and env.id == rid \
                and type(env.id) is type(rid):
            return env.params.get("taskId") if isinstance(env.params, dict) else None
    return None
