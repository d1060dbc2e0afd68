"""The protocol core of the reference server.  No pipes, no sockets.

Like h11, the core is fed messages and produces messages: a front-end (``stdio.py``,
``http.py``) parses bytes into JSON values and calls :meth:`Connection.receive` with a *sink*,
an async callable that puts :class:`Outgoing` messages on the wire.  Everything a request causes
(its response, its progress and log notifications, the server-to-client requests it makes) goes
to the sink of the stream the request arrived on; messages unrelated to any request
(``list_changed``, ``resources/updated``) go to the connection's default sink (stdout, the GET
stream, the legacy SSE stream, or a ``subscriptions/listen`` stream).

One :class:`Connection` is one lifecycle: a stdio process, an HTTP session (``Mcp-Session-Id``),
a legacy SSE connection, or one stateless 2026-07-28 HTTP request.  The core is *dual-era*
(2026-07-28 basic/versioning#backward-compatibility-with-initialization-based-versions):

* an ``initialize`` request selects a legacy revision (2024-11-05 .. 2025-11-25) for the
  connection, negotiated as the lifecycle page says;
* a request carrying ``_meta["io.modelcontextprotocol/protocolVersion"]`` naming a stateless
  revision is served statelessly, on its own, from its ``_meta``.

Methods are dispatched through :data:`conformance.spec.methods.METHODS`: a method unknown to the
negotiated version is ``-32601``; params are validated against the version's official schema
(``-32602`` with the findings as ``data``).  Handlers are plain functions returning the result
(fast path, answered inline) or coroutines (run as anyio tasks, cancellable).
"""

from __future__ import annotations


import itertools
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import anyio

from conformance.spec import errors as codes
from conformance.spec.methods import C2S, NOTIFICATION, REQUEST, S2C, lookup, methods_for
from conformance.spec.versions import VERSIONS, spec
from conformance.wire.envelope import MISSING, dumps

from reference_server.errors import RPCError
from reference_server.faults import FaultPlan
from reference_server.messages import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVELS,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
    Outgoing,
    RequestContext,
    Sink,
    id_key,
    valid_id,
)

__all__ = [
    "Outgoing",
    "Sink",
    "ServerConfig",
    "Server",
    "Connection",
    "RequestContext",
    "RPCError",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "LOG_LEVELS",
    "PROTOCOL_VERSION_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "SERVER_INFO_KEY",
]

LEGACY_VERSIONS: tuple[str, ...] = tuple(v for v in VERSIONS if spec(v).handshake)
MODERN_VERSIONS: tuple[str, ...] = tuple(v for v in VERSIONS if spec(v).stateless)

# Results that carry ttlMs/cacheScope in 2026-07-28 (CacheableResult, server/utilities/caching).
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"})


async def _discard(out: Outgoing) -> None:
    return None


@dataclass
class ServerConfig:
    name: str = "mcp-reference-server"
    title: str = "MCP Reference Server"
    version: str = "0.1.0"
    versions: tuple[str, ...] = VERSIONS  # protocol versions served
    page_size: int | None = None  # items per page of every list method (None: the defaults below)
    # Default page sizes: tools/list fits on one page (clients that read only the first page, like
    # the official runner, find every fixture tool); resources/list and prompts/list span several
    # pages so that cursor pagination is exercised by default.
    page_sizes: dict[str, int] = field(default_factory=lambda: {"tools/list": 100, "resources/list": 4, "prompts/list": 3, "resources/templates/list": 50, "tasks/list": 50})

    def page_size_for(self, method: str) -> int:
        return self.page_size if self.page_size is not None else self.page_sizes.get(method, 50)
    max_message_bytes: int = 4 * 1024 * 1024
    validate: bool = True  # validate inbound messages against the official schema
    instructions: str = "Reference server of mcp-conformance: every feature, every version, strict."
    request_timeout: float = 60.0  # deadline for the client's answer to a server-to-client request
    faults: FaultPlan = field(default_factory=FaultPlan)
    log: Callable[[str], None] | None = None  # diagnostics (stderr); None = silent
    upstream: str | None = None  # an upstream API the call_upstream tool calls (--upstream; reference_server.upstream)

    @property
    def legacy_versions(self) -> tuple[str, ...]:
        return tuple(v for v in self.versions if v in LEGACY_VERSIONS)

    @property
    def modern_versions(self) -> tuple[str, ...]:
        return tuple(v for v in self.versions if v in MODERN_VERSIONS)


def _error_message(rid: Any, err: RPCError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": err.to_json()}


Handler = Callable[[RequestContext, dict[str, Any]], Any]


class Server:
    """Shared state of one server process: configuration, features, faults, live connections."""

    def __init__(self, config: ServerConfig | None = None, *, features: Callable[["Server"], Any] | None = None) -> None:
        """``features`` builds the feature set for this server (``reference_server.features.Features``:
        :func:`reference_server.features.build_server` composes the two); without it the server
        knows no method."""
        self.config = config or ServerConfig()
        self.handlers: dict[str, Handler] = {}
        self.notification_handlers: dict[str, Callable[["Connection", dict[str, Any]], Any]] = {}
        self.connections: set[Connection] = set()
        # methods an extension adds to the stateless versions (not in the spec's method table:
        # the tasks extension's tasks/get, tasks/update, tasks/cancel); the handler checks params
        self.extension_handlers: dict[str, Handler] = {}
        # a task group that outlives single requests (set by the front-end): work that continues
        # after its response, like the tasks extension's tasks
        self.background: anyio.abc.TaskGroup | None = None
        self.features: Any = features(self) if features is not None else None
        if self.features is not None:
            self.features.install(self)

    # -- the method table ------------------------------------------------------------------
    def missing_handlers(self) -> list[str]:
        """Client-to-server requests of a served version that have no handler (should be none)."""
        return sorted({m.name for v in self.config.versions for m in methods_for(v, direction=C2S, kind=REQUEST) if m.name not in self.handlers})

    def log(self, text: str) -> None:
        if self.config.log is not None:
            self.config.log(text)

    # -- capabilities and identity ---------------------------------------------------------
    def server_info(self, version: str) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.config.name, "version": self.config.version}
        if version not in ("2024-11-05", "2025-03-26"):
            info["title"] = self.config.title
        if version not in ("2024-11-05", "2025-03-26", "2025-06-18"):
            info["description"] = "Strict, complete MCP server used as the conformance suite's reference."
        return info

    def capabilities(self, version: str) -> dict[str, Any]:
        return self.features.capabilities(version) if self.features is not None else {}

    # -- broadcasts (unrelated to any request) ---------------------------------------------
    async def broadcast(self, method: str, params: dict[str, Any] | None = None, *, only: Callable[["Connection"], bool] | None = None) -> None:
        for conn in list(self.connections):
            if only is not None and not only(conn):
                continue
            await conn.notify(method, params)


class Connection:
    """One lifecycle: a stdio process, an HTTP session, a legacy SSE connection, or a stateless
    HTTP request (``stateless=True``: every request must be a modern one)."""

    def __init__(self, server: Server, *, task_group: anyio.abc.TaskGroup, sink: Sink | None = None, transport: str = "stdio", stateless: bool = False) -> None:
        self.server = server
        self.config = server.config
        self.task_group = task_group
        self.default_sink: Sink = sink or _discard
        self.transport = transport
        self.stateless = stateless
        # lifecycle (legacy revisions)
        self.version: str | None = None  # negotiated by initialize
        self.initialized = False  # notifications/initialized received
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level: str | None = "debug"  # until logging/setLevel: every level
        self.subscriptions: set[str] = set()
        self.closed = False
        # request tracking
        self.inflight: dict[tuple[type, Any], RequestContext] = {}
        self.pending: dict[tuple[type, Any], tuple[anyio.Event, list[Any], str]] = {}
        self._ids = itertools.count(0)
        self.faults = self.config.faults
        self.faults_state: dict[str, Any] = {}
        server.connections.add(self)

    # -- public API for front-ends ---------------------------------------------------------
    async def receive(self, value: Any, *, sink: Sink | None = None) -> None:
        """Handle one parsed JSON value (a message or a batch) that arrived on ``sink``'s stream."""
        sink = sink or self.default_sink
        if isinstance(value, list):
            await self._receive_batch(value, sink)
        else:
            await self._receive_one(value, sink)

    async def receive_invalid_json(self, detail: str, *, sink: Sink | None = None) -> None:
        """The frame was not JSON: JSON-RPC 2.0 requires a Parse error with id null."""
        await self._send_error(sink or self.default_sink, None, RPCError(codes.PARSE_ERROR, "Parse error", {"detail": detail}, http_status=400))

    async def receive_oversized(self, size: int, *, sink: Sink | None = None) -> None:
        """A message longer than ``max_message_bytes`` was discarded unread."""
        limit = self.config.max_message_bytes
        await self._send_error(
            sink or self.default_sink,
            None,
            RPCError(codes.INVALID_REQUEST, f"Message too large: {size} bytes exceeds the limit of {limit} bytes", {"size": size, "limit": limit}, http_status=413),
        )

    def cancel(self, rid: Any, reason: str | None = None) -> bool:
        """Cancel an in-flight request (a ``notifications/cancelled``, or the client dropped the
        HTTP stream of a stateless request).  No response will be sent for it."""
        ctx = self.inflight.get(id_key(rid))
        if ctx is None or ctx.method == "initialize" or ctx.finished:
            return False
        ctx.cancelled = True
        self.inflight.pop(id_key(rid), None)  # the id is free again; no response will follow
        if ctx.cancel_scope is not None:
            ctx.cancel_scope.cancel()
        self.server.log(f"cancelled request {rid!r}" + (f": {reason}" if reason else ""))
        return True

    def close(self) -> None:
        """The transport is gone: cancel everything in flight, forget pending requests."""
        if self.closed:
            return
        self.closed = True
        for ctx in list(self.inflight.values()):
            ctx.cancelled = True
            if ctx.cancel_scope is not None:
                ctx.cancel_scope.cancel()
        for ev, box, _ in self.pending.values():
            box.append(RPCError(codes.INTERNAL_ERROR, "connection closed"))
            ev.set()
        self.pending.clear()
        self.server.connections.discard(self)

    async def notify(self, method: str, params: dict[str, Any] | None = None, *, sink: Sink | None = None) -> None:
        """A notification unrelated to any request, on the default stream."""
        if self.closed:
            return
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await (sink or self.default_sink)(Outgoing(dumps(msg), "notification", message=msg))

    async def request(self, method: str, params: dict[str, Any] | None = None, *, sink: Sink | None = None, related: Any = MISSING, timeout: float | None = None) -> dict[str, Any]:
        """A server-to-client request; returns the client's result or raises :class:`RPCError`."""
        rid = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        ev = anyio.Event()
        box: list[Any] = []
        key = id_key(rid)
        self.pending[key] = (ev, box, method)
        try:
            await (sink or self.default_sink)(Outgoing(dumps(msg), "request", message=msg, related=related))
            with anyio.move_on_after(timeout if timeout is not None else self.config.request_timeout):
                await ev.wait()
        finally:
            self.pending.pop(key, None)
        if not box:
            raise RPCError(codes.INTERNAL_ERROR, f"the client did not answer {method} in time")
        answer = box[0]
        if isinstance(answer, RPCError):
            raise answer
        return answer

    # -- inbound -----------------------------------------------------------------------------
    async def _receive_one(self, msg: Any, sink: Sink, *, in_batch: bool = False) -> None:
        if not isinstance(msg, dict):
            what = "null" if msg is None else type(msg).__name__
            await self._send_error(sink, None, RPCError(codes.INVALID_REQUEST, f"Invalid Request: a JSON-RPC message must be an object, not {what}", http_status=400))
            return
        method = msg.get("method", MISSING)
        if method is not MISSING:
            if "id" in msg:
                await self._on_request(msg, sink, in_batch=in_batch)
            else:
                await self._on_notification(msg)
            return
        if "result" in msg or "error" in msg:
            self._on_response(msg)
            return
        rid = msg.get("id", None)
        await self._send_error(sink, rid if valid_id(rid) else None, RPCError(codes.INVALID_REQUEST, 'Invalid Request: neither "method", "result" nor "error" is present', http_status=400))

    async def _receive_batch(self, items: list[Any], sink: Sink) -> None:
        if not items:
            await self._send_error(sink, None, RPCError(codes.INVALID_REQUEST, "Invalid Request: empty batch", http_status=400))
            return
        version = self.version
        if self.stateless or version is None or not spec(version).batching:
            where = f"protocol version {version}" if version else "this connection before initialize"
            await self._send_error(
                sink,
                None,
                RPCError(
                    codes.INVALID_REQUEST,
                    f"Invalid Request: JSON-RPC batches are not supported in {where} (only 2025-03-26 supports them)",
                    {"batching": False, "version": version},
                    http_status=400,
                ),
            )
            return
        expected = sum(1 for it in items if not (isinstance(it, dict) and (("method" in it and "id" not in it) or ("method" not in it and ("result" in it or "error" in it)))))
        collector = _BatchCollector(sink, expected)
        for item in items:
            await self._receive_one(item, collector.send, in_batch=True)
        await collector.flush_if_done()

    async def _on_notification(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        params = msg.get("params", {})
        if not isinstance(params, dict) or not isinstance(method, str) or msg.get("jsonrpc") != "2.0":
            self.server.log(f"ignored malformed notification {msg!r:.200}")
            return
        if self.config.validate and self.version is not None:
            m = lookup(method, C2S, self.version)
            if m is not None and m.kind == NOTIFICATION:
                from reference_server.validation import check_value

                findings = check_value(msg, self.version, m.request_def)
                if findings:  # a notification is never answered: note it and ignore it
                    self.server.log(f"ignored invalid {method}: {findings[0]}")
                    return
        if method == "notifications/initialized":
            if self.version is not None:
                self.initialized = True
                await self.faults.after_initialized(self)
            return
        if method == "notifications/cancelled":
            rid = params.get("requestId", MISSING)
            if valid_id(rid):
                reason = params.get("reason")
                self.cancel(rid, reason if isinstance(reason, str) else None)
            return
        handler = self.server.notification_handlers.get(method)
        if handler is not None:
            try:
                res = handler(self, params)
                if hasattr(res, "__await__"):
                    await res
            except Exception as exc:  # a notification is never answered
                self.server.log(f"notification {method} failed: {exc!r}")
        # unknown notifications are ignored: "The receiver MUST NOT send a response."

    def _on_response(self, msg: dict[str, Any]) -> None:
        rid = msg.get("id", MISSING)
        if not valid_id(rid):
            self.server.log(f"ignored response with id {rid!r}")
            return
        entry = self.pending.get(id_key(rid))
        if entry is None:
            self.server.log(f"ignored response to unknown request {rid!r}")
            return
        ev, box, method = entry
        if ev.is_set():
            return
        if "error" in msg:
            err = msg["error"] if isinstance(msg["error"], dict) else {}
            code = err.get("code")
            box.append(RPCError(code if isinstance(code, int) and not isinstance(code, bool) else codes.INTERNAL_ERROR, str(err.get("message", "client error")), err.get("data", MISSING)))
        else:
            result = msg.get("result")
            problem = self._invalid_client_result(method, result)
            if problem is not None:
                box.append(RPCError(codes.INTERNAL_ERROR, f"the client answered {method} with an invalid result: {problem}", {"result": result}))
            else:
                box.append(result)
        ev.set()

    def _invalid_client_result(self, method: str, result: Any) -> str | None:
        """Results of our requests are checked against the negotiated version's schema too."""
        if not isinstance(result, dict):
            return "the result is not an object"
        m = lookup(method, S2C, self.version) if self.version else None
        if m is None or m.result_def is None or not self.config.validate:
            return None
        from reference_server.validation import check_value

        findings = check_value(result, self.version, m.result_def)
        return f"{findings[0].json_path}: {findings[0].message}" if findings else None

    async def _on_request(self, msg: dict[str, Any], sink: Sink, *, in_batch: bool) -> None:
        rid = msg["id"]
        if not valid_id(rid):
            kind = "null" if rid is None else ("a boolean" if isinstance(rid, bool) else type(rid).__name__)
            await self._send_error(sink, None, RPCError(codes.INVALID_REQUEST, f'Invalid Request: "id" must be a string or an integer, not {kind}', http_status=400))
            return
        method = msg["method"]
        if msg.get("jsonrpc") != "2.0":
            await self._send_error(sink, rid, RPCError(codes.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be exactly "2.0"', http_status=400))
            return
        if not isinstance(method, str):
            await self._send_error(sink, rid, RPCError(codes.INVALID_REQUEST, 'Invalid Request: "method" must be a string', http_status=400))
            return
        if "result" in msg or "error" in msg:
            await self._send_error(sink, rid, RPCError(codes.INVALID_REQUEST, 'Invalid Request: a request must not carry "result" or "error"', http_status=400))
            return
        params = msg.get("params", MISSING)
        if params is MISSING:
            params = {}
        elif not isinstance(params, dict):
            await self._send_error(sink, rid, RPCError(codes.INVALID_PARAMS, f'Invalid params: "params" must be an object, not {type(params).__name__ if params is not None else "null"}', http_status=400))
            return
        if id_key(rid) in self.inflight:
            await self._send_error(sink, rid, RPCError(codes.INVALID_REQUEST, f"Invalid Request: id {dumps(rid).decode()} is already in use by a request still in progress", http_status=400))
            return

        meta = params.get("_meta")
        pv = meta.get(PROTOCOL_VERSION_KEY, MISSING) if isinstance(meta, dict) else MISSING
        if not self.config.modern_versions:
            pv = MISSING  # a legacy-only server: per-request _meta means nothing special
        elif not self.config.legacy_versions and pv is MISSING:
            # a modern-only server: every request is a modern one (and lacks its _meta)
            await self._serve_modern(msg, rid, method, params, pv, sink, in_batch=in_batch)
            return
        if self.stateless:
            await self._serve_modern(msg, rid, method, params, pv, sink, in_batch=in_batch)
            return
        if self.version is not None:
            if isinstance(pv, str) and pv in MODERN_VERSIONS:
                await self._serve_modern(msg, rid, method, params, pv, sink, in_batch=in_batch)
            else:
                await self._serve_legacy(msg, rid, method, params, self.version, sink, in_batch=in_batch)
            return
        # not initialized.  A dual-era server "selects its behavior from how the client opens: a
        # request carrying modern per-request _meta is served statelessly ...; an initialize
        # request selects legacy semantics" (2026-07-28 basic/versioning).
        if method == "initialize" and not (isinstance(pv, str) and pv in MODERN_VERSIONS) and self.config.legacy_versions:
            if in_batch:
                await self._send_error(sink, rid, RPCError(codes.INVALID_REQUEST, "Invalid Request: initialize must not be part of a JSON-RPC batch", http_status=400))
                return
            requested = params.get("protocolVersion")
            version = requested if isinstance(requested, str) and requested in self.config.legacy_versions else self._latest_legacy()
            await self._serve_legacy(msg, rid, method, params, version, sink, in_batch=in_batch)
            return
        if pv is not MISSING:
            await self._serve_modern(msg, rid, method, params, pv, sink, in_batch=in_batch)
            return
        if method == "ping" and self.config.legacy_versions:
            # "The client SHOULD NOT send requests other than pings before the server has responded
            # to the initialize request." (lifecycle#initialization): a ping is answered.
            await self._serve_legacy(msg, rid, method, params, self._latest_legacy(), sink, in_batch=in_batch)
            return
        await self._send_error(sink, rid, self._not_initialized(method))

    def _latest_legacy(self) -> str:
        legacy = self.config.legacy_versions
        return legacy[-1] if legacy else LEGACY_VERSIONS[-1]

    def _not_initialized(self, method: str) -> RPCError:
        modern = self.config.modern_versions
        hint = f"send initialize first (versions {', '.join(self.config.legacy_versions)})"
        if modern:
            hint += f", or carry _meta[{PROTOCOL_VERSION_KEY!r}] with {', '.join(modern)} and {CLIENT_CAPABILITIES_KEY!r} on every request"
        return RPCError(
            codes.INVALID_REQUEST,
            f"Server not initialized: {method} received before initialize",
            {"reason": "not-initialized", "hint": hint},
            http_status=400,
        )

    # -- the two eras -------------------------------------------------------------------------
    async def _serve_legacy(self, msg: dict[str, Any], rid: Any, method: str, params: dict[str, Any], version: str, sink: Sink, *, in_batch: bool) -> None:
        m = lookup(method, C2S, version)
        if m is None or m.kind != REQUEST:
            await self._send_error(sink, rid, self._unknown_method(method, version))
            return
        if method == "initialize" and self.version is not None:
            await self._send_error(sink, rid, RPCError(codes.INVALID_REQUEST, "Invalid Request: the connection is already initialized", {"protocolVersion": self.version}, http_status=400))
            return
        if self.config.validate:
            err = self._validate(msg, version, m.request_def)
            if err is not None:
                await self._send_error(sink, rid, err)
                return
        ctx = RequestContext(self, rid, method, params, version, modern=False, sink=sink)
        ctx.in_batch = in_batch
        await self._dispatch(ctx)

    async def _serve_modern(self, msg: dict[str, Any], rid: Any, method: str, params: dict[str, Any], pv: Any, sink: Sink, *, in_batch: bool) -> None:
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            await self._send_error(sink, rid, RPCError(codes.INVALID_PARAMS, f"Invalid params: missing params._meta with {PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r} (required on every request)", {"missing": [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY], "supported": list(self.config.modern_versions)}, http_status=400))
            return
        missing = [k for k in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if k not in meta]
        if missing:
            await self._send_error(sink, rid, RPCError(codes.INVALID_PARAMS, f"Invalid params: _meta is missing {', '.join(repr(k) for k in missing)}", {"missing": missing, "supported": list(self.config.modern_versions)}, http_status=400))
            return
        if not isinstance(pv, str) or pv not in self.config.modern_versions:
            await self._send_error(
                sink,
                rid,
                RPCError(codes.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {"supported": list(self.config.modern_versions), "requested": pv if isinstance(pv, str) else _json_text(pv)}, http_status=400),
            )
            return
        version = pv
        m = lookup(method, C2S, version)
        ext = self.server.extension_handlers.get(method) if m is None else None
        if ext is not None:
            ctx = RequestContext(self, rid, method, params, version, modern=True, sink=sink)
            ctx.in_batch = in_batch
            await self._dispatch(ctx, ext)
            return
        if m is None or m.kind != REQUEST:
            await self._send_error(sink, rid, self._unknown_method(method, version))
            return
        if self.config.validate:
            err = self._validate(msg, version, m.request_def)
            if err is not None:
                await self._send_error(sink, rid, err)
                return
        ctx = RequestContext(self, rid, method, params, version, modern=True, sink=sink)
        ctx.in_batch = in_batch
        await self._dispatch(ctx)

    def _unknown_method(self, method: str, version: str) -> RPCError:
        data: dict[str, Any] = {"method": method, "protocolVersion": version}
        others = [v for v in VERSIONS if lookup(method, C2S, v) is not None]
        if others:
            data["definedIn"] = others
            text = f"Method not found: {method} is not part of protocol version {version}"
        else:
            text = f"Method not found: {method}"
        return RPCError(codes.METHOD_NOT_FOUND, text, data, http_status=404 if spec(version).stateless else None)

    def _validate(self, msg: dict[str, Any], version: str, definition: str) -> RPCError | None:
        from reference_server.validation import check_message

        return check_message(msg, version, definition)

    # -- dispatch and completion ------------------------------------------------------------
    async def _dispatch(self, ctx: RequestContext, handler: Handler | None = None) -> None:
        handler = handler or self.server.handlers.get(ctx.method)
        if handler is None:  # a method of the table this server refuses on purpose (tasks/*)
            await self._send_error(ctx.sink, ctx.id, RPCError(codes.METHOD_NOT_FOUND, f"Method not found: {ctx.method} (capability not declared by this server)", {"method": ctx.method}, http_status=404 if ctx.modern else None))
            return
        plan = self.faults.for_request(ctx)
        if plan is not None:
            self.inflight[id_key(ctx.id)] = ctx
            self.task_group.start_soon(self._run_faulted, ctx, handler, plan)
            return
        try:
            res = handler(ctx, ctx.params)
        except RPCError as err:
            await self._finish(ctx, error=err)
            return
        except Exception as exc:  # a handler bug must not kill the connection
            await self._finish(ctx, error=RPCError(codes.INTERNAL_ERROR, f"Internal error: {exc!r}"))
            return
        if hasattr(res, "__await__"):
            self.inflight[id_key(ctx.id)] = ctx
            self.task_group.start_soon(self._run_async, ctx, res)
            return
        await self._finish(ctx, result=res)

    async def _run_async(self, ctx: RequestContext, awaitable: Awaitable[Any]) -> None:
        with anyio.CancelScope() as scope:
            ctx.cancel_scope = scope
            if ctx.cancelled:
                scope.cancel()
            try:
                result = await awaitable
            except RPCError as err:
                await self._finish(ctx, error=err)
                return
            except Exception as exc:
                await self._finish(ctx, error=RPCError(codes.INTERNAL_ERROR, f"Internal error: {exc!r}"))
                return
            await self._finish(ctx, result=result)
        if scope.cancelled_caught or ctx.cancelled:
            await self._finish(ctx, cancelled=True)

    async def _run_faulted(self, ctx: RequestContext, handler: Handler, plan: Any) -> None:
        with anyio.CancelScope() as scope:
            ctx.cancel_scope = scope
            try:
                await plan.run(ctx, handler)
            except RPCError as err:
                await self._finish(ctx, error=err)
            except Exception as exc:
                await self._finish(ctx, error=RPCError(codes.INTERNAL_ERROR, f"Internal error: {exc!r}"))
        if scope.cancelled_caught or ctx.cancelled:
            await self._finish(ctx, cancelled=True)

    async def _finish(self, ctx: RequestContext, *, result: Any = MISSING, error: RPCError | None = None, cancelled: bool = False, raw: Outgoing | None = None) -> None:
        """Send the one response of a request (never after cancellation, never twice)."""
        if ctx.finished:
            return
        ctx.finished = True
        self.inflight.pop(id_key(ctx.id), None)
        if cancelled or ctx.cancelled:
            # "Receivers ... SHOULD ... Not send a response for the cancelled request"
            await ctx.sink(Outgoing(b"", "end", answers=ctx.id))
            return
        if raw is not None:
            await ctx.sink(raw)
            return
        if error is not None:
            await self._send_error(ctx.sink, ctx.id, error, answers=ctx.id)
            return
        if not isinstance(result, dict):
            result = {}
        if ctx.modern:
            result = self._modern_result(ctx.method, result)
        msg = {"jsonrpc": "2.0", "id": ctx.id, "result": result}
        await ctx.sink(Outgoing(dumps(msg), "response", answers=ctx.id, message=msg))

    def _modern_result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        result.setdefault("resultType", "complete")
        if method in CACHEABLE and result.get("resultType") == "complete":
            result.setdefault("ttlMs", 0)
            result.setdefault("cacheScope", "private")
        meta = result.get("_meta")
        if not isinstance(meta, dict):
            meta = result["_meta"] = {}
        meta.setdefault(SERVER_INFO_KEY, self.server.server_info(MODERN_VERSIONS[-1]))
        return result

    async def _send_error(self, sink: Sink, rid: Any, err: RPCError, *, answers: Any = MISSING) -> None:
        msg = _error_message(rid, err)
        try:
            data = dumps(msg)
        except ValueError:  # error data echoing a value JSON cannot carry (1e400 read as inf): drop the data
            msg = {**msg, "error": {k: v for k, v in msg["error"].items() if k != "data"}}
            data = dumps(msg)
        await sink(Outgoing(data, "response", answers=rid if answers is MISSING else answers, message=msg, http_status=err.http_status))


class _BatchCollector:
    """Collects the responses to the requests of one batch and sends them as one array."""

    def __init__(self, sink: Sink, expected: int) -> None:
        self.sink = sink
        self.expected = expected
        self.done = 0
        self.parts: list[bytes] = []
        self.sent = False

    async def send(self, out: Outgoing) -> None:
        if out.kind in ("response", "end"):
            self.done += 1
            if out.kind == "response":
                self.parts.append(out.data)
            await self.flush_if_done()
        elif out.kind == "close":
            await self.sink(out)
        else:
            await self.sink(out)

    async def flush_if_done(self) -> None:
        if self.sent or self.done < self.expected:
            return
        self.sent = True
        if self.parts:
            data = b"[" + b",".join(self.parts) + b"]"
            await self.sink(Outgoing(data, "response", answers=MISSING, message=None))
        else:
            await self.sink(Outgoing(b"", "end"))


def _json_text(value: Any) -> str:
    """``value`` as JSON text for an error's data; a number JSON cannot carry (1e400 parses to
    inf) as Python writes it (found by `mcp-conformance fuzz`: the server crashed on it)."""
    try:
        return dumps(value).decode()
    except ValueError:
        return repr(value)
