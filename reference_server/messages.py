"""What the reference server's core and its features exchange, below both: the messages for the
wire (:class:`Outgoing`, :data:`Sink`), ids, log levels, the reserved ``_meta`` keys, and
:class:`RequestContext` (what a handler knows about the request it serves).

A leaf module: the core (:mod:`reference_server.core`), the fault plan and the features import it;
it imports none of them, so the features type against it without reaching into the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import anyio

from conformance.spec.meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    RELATED_TASK_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
)
from conformance.spec.versions import spec
from conformance.wire.envelope import MISSING, dumps

__all__ = [
    "Outgoing",
    "Sink",
    "RequestContext",
    "valid_id",
    "id_key",
    "LOG_LEVELS",
    "PROTOCOL_VERSION_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
]


# RFC 5424 severities, as the logging page lists them (lowest first).
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LOG_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}

@dataclass
class Outgoing:
    """One message for the wire, already serialised.

    ``kind``: ``"response"``, ``"notification"``, ``"request"``, ``"raw"`` (bytes that are not a
    JSON-RPC message: fault injection), ``"close"`` (the front-end must drop the stream after
    writing ``data``, a partial message), ``"end"`` (no bytes: the request ``answers`` ends without
    a response, e.g. it was cancelled; a POST stream may close).
    ``answers`` is the id of the inbound request this message is the response to (even when a
    fault put a different id on the wire).
    """

    data: bytes
    kind: str
    answers: Any = MISSING
    message: Any = None
    http_status: int | None = None
    related: Any = MISSING  # id of the inbound request a notification/request belongs to


Sink = Callable[[Outgoing], Awaitable[None]]


def valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def id_key(value: Any) -> tuple[type, Any]:
    """Ids are equal only with the same JSON type (``"7"`` is not ``7``)."""
    return (type(value), value)


class RequestContext:
    """What a handler knows about the request it serves, and how it talks back."""

    __slots__ = (
        "conn",
        "id",
        "method",
        "params",
        "version",
        "modern",
        "meta",
        "sink",
        "client_capabilities",
        "client_info",
        "log_level",
        "cancel_scope",
        "cancelled",
        "finished",
        "in_batch",
        "related_task",
        "on_input",
    )

    def __init__(self, conn: Any, rid: Any, method: str, params: dict[str, Any], version: str, *, modern: bool, sink: Sink) -> None:
        self.conn = conn
        self.id = rid
        self.method = method
        self.params = params
        self.version = version
        self.modern = modern
        meta = params.get("_meta")
        self.meta: dict[str, Any] = meta if isinstance(meta, dict) else {}
        self.sink = sink
        if modern:
            caps = self.meta.get(CLIENT_CAPABILITIES_KEY)
            self.client_capabilities: dict[str, Any] = caps if isinstance(caps, dict) else {}
            self.client_info: dict[str, Any] = self.meta.get(CLIENT_INFO_KEY) or {}
            self.log_level: str | None = self.meta.get(LOG_LEVEL_KEY)  # absent: no log messages
        else:
            self.client_capabilities = conn.client_capabilities
            self.client_info = conn.client_info
            self.log_level = conn.log_level
        self.cancel_scope: anyio.CancelScope | None = None
        self.cancelled = False
        self.finished = False
        self.in_batch = False
        self.related_task: str | None = None  # set while the request runs as a task (2025-11-25)
        # the task's status while it waits for the client (2025-11-25): on_input(True) before a
        # request to the client, on_input(False) once it is answered
        self.on_input: Callable[[bool], Awaitable[None]] | None = None

    @property
    def vspec(self):
        return spec(self.version)

    @property
    def progress_token(self) -> Any:
        return self.meta.get("progressToken", MISSING)

    @property
    def server(self) -> Any:
        return self.conn.server

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """``notifications/progress`` for this request, if the client asked for it (progressToken)."""
        token = self.progress_token
        if token is MISSING or self.finished or self.cancelled:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.version != "2024-11-05":
            params["message"] = message
        await self.notify("notifications/progress", params)

    def wants_log(self, level: str) -> bool:
        if self.log_level is None or self.log_level not in _LOG_RANK:
            return False
        return _LOG_RANK[level] >= _LOG_RANK[self.log_level]

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """``notifications/message`` related to this request, at or above the requested level."""
        if not self.wants_log(level) or self.finished or self.cancelled:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.notify("notifications/message", params)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if self.related_task is not None:
            # "All requests, notifications, and responses related to a task MUST include the
            # io.modelcontextprotocol/related-task key in their _meta field"
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), RELATED_TASK_KEY: {"taskId": self.related_task}}
        if params is not None:
            msg["params"] = params
        await self.sink(Outgoing(dumps(msg), "notification", message=msg, related=self.id))

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> dict[str, Any]:
        """Send a server-to-client request on this request's stream and wait for the result.

        Raises :class:`RPCError` with the client's error, or ``-32603`` on timeout.  Only for
        legacy versions: 2026-07-28 servers MUST NOT send requests (they use InputRequiredResult).
        """
        if self.modern:
            raise RuntimeError("server-to-client requests do not exist in stateless versions")
        if self.related_task is None:
            return await self.conn.request(method, params, sink=self.sink, related=self.id, timeout=timeout)
        # "The receiver MUST include the io.modelcontextprotocol/related-task metadata in the
        # request to associate it with the task"; "When the task receiver has messages for the
        # requestor that are necessary to complete the task, the receiver SHOULD move the task to
        # the input_required status" -- and out of it once answered
        params = dict(params or {})
        params["_meta"] = {**(params.get("_meta") or {}), RELATED_TASK_KEY: {"taskId": self.related_task}}
        if self.on_input is not None:
            await self.on_input(True)
        try:
            return await self.conn.request(method, params, sink=self.sink, related=self.id, timeout=timeout)
        finally:
            if self.on_input is not None:
                await self.on_input(False)
