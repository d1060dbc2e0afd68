"""The reference client's protocol core: no I/O (as ``reference_server/core.py`` is for the server).

:class:`ClientCore` builds the messages a strict client sends and digests the messages it receives:

* requests get unique integer ids (never null, never reused); on the stateless 2026-07-28 every
  request carries the per-request ``_meta`` (protocol version, client capabilities, client info);
* a response is matched to the request it answers, and validated against the official schema of
  the negotiated version for that method's result (``conformance.schema``);
* a request from the server is answered at once: ``ping`` with an empty result, ``roots/list``,
  ``sampling/createMessage`` and ``elicitation/create`` with deterministic answers when the
  capability was declared, and ``-32601`` for anything else; on 2026-07-28 nothing is answered
  (clients write no JSON-RPC responses there); a batch (2025-03-26 only) is answered item by item;
* a late answer to a request we gave up on (timed out, cancelled, a fault's extra) is dropped;
* anything invalid the server sends is recorded in :attr:`ClientCore.violations` (the tour fails
  on it);
* the answer faults of ``reference_client.faults`` (wrong ids and codes, undeclared capabilities
  answered, ...) act here, each only on the versions and transports it is listed for.

The front-ends (``links.py``, ``http_links.py``) move bytes; ``session.py`` waits for answers with deadlines.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from conformance.spec import errors as codes
from conformance.spec.methods import C2S, S2C, lookup
from conformance.spec.versions import VERSIONS, spec
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY

from reference_client.tasks import TASK_METHODS, TaskStore, declared_for
from reference_client.tasks import capabilities as task_capabilities

__all__ = ["ClientCore", "Incoming", "CLIENT_INFO", "ROOTS", "default_capabilities", "other_id"]


CLIENT_INFO = {"name": "mcp-reference-client", "version": "0.1.0"}
ROOTS = [{"uri": "file:///tmp/mcp-reference-client", "name": "scratch"}]
HTTPS_ROOTS = [{"uri": "https://example.com/mcp-reference-client", "name": "scratch"}]  # fault https-root
MISSING: Any = object()
EXTRA_IDS = 900_001  # ids of a fault's extra requests: their own range, so the rest of a run keeps its ids
SAMPLED_TEXT = "mcp-reference-client: a deterministic sampling answer"
#: the JSON Schema dialects this client validates requestedSchema in: 2020-12 only (the default)
SCHEMA_DIALECTS = ("https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#")


def elicitation_answer(params: Any, *, defaults: bool = True) -> dict[str, Any]:
    """Accept a form elicitation with every field at its schema default (SEP-1034: clients fill in
    the defaults) or, without one, a plain value of its type; decline anything else (a URL to
    open, a schema this client cannot fill)."""
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    if not isinstance(schema, dict) or (isinstance(params, dict) and params.get("mode") == "url"):
        return {"action": "decline"}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or [])
    content: dict[str, Any] = {}
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        if "default" in sub and defaults:  # (fault no-defaults: optional fields left out)
            content[name] = sub["default"]
        elif name in required:
            value = _plain_value(sub)
            if value is None:
                return {"action": "decline"}
            content[name] = value
    return {"action": "accept", "content": content}


def fit_elicitation(answer: dict[str, Any], version: str, required: set[str]) -> dict[str, Any]:
    """``answer`` with the optional fields the version's ElicitResult cannot carry dropped (as the
    oracle reads it: schema.ts, which allows a fractional number where the generated schema.json
    says integer -- conformance.schema.validate.NARROWED_INTEGERS); declined when a required one
    cannot be carried."""
    from conformance.schema import validate_definition

    content = answer.get("content")
    if not isinstance(content, dict):
        return answer
    for key in list(content):
        if not _json_safe(content[key]) or validate_definition({"action": "accept", "content": {key: content[key]}}, version, "ElicitResult"):
            if key in required:
                return {"action": "decline"}
            del content[key]
    return answer


def _json_safe(value: Any) -> bool:
    """Whether ``value`` can be written as JSON: a default the server sent as 1e400 reads as
    infinity, which JSON cannot carry (Python would write ``Infinity``, which is not JSON)."""
    import json

    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _plain_value(sub: dict[str, Any]) -> Any:
    enum = sub.get("enum") or [o.get("const") for o in sub.get("oneOf") or [] if isinstance(o, dict) and "const" in o]
    if enum:
        return enum[0]
    typ = sub.get("type")
    if typ == "string":
        return "user@example.com" if sub.get("format") == "email" else "mcp-reference-client"
    if typ in ("integer", "number"):
        return sub.get("minimum", 0)
    if typ == "boolean":
        return False
    if typ == "array":
        items = sub.get("items") if isinstance(sub.get("items"), dict) else {}
        first = _plain_value(items) if items else None
        return [first] if first is not None else []
    return None


def tool_loop_problem(params: Any) -> str | None:
    """What breaks client/sampling's message rules in a sampling request: a user message that
    mixes tool results with other content, or an assistant message with tool uses that the next
    message does not answer with a tool result each; None when nothing does."""
    messages = params.get("messages") if isinstance(params, dict) else None
    if not isinstance(messages, list):
        return None

    def blocks(msg: Any) -> list[Any]:
        content = msg.get("content") if isinstance(msg, dict) else None
        return content if isinstance(content, list) else [content]

    for i, msg in enumerate(messages):
        kinds = [b.get("type") if isinstance(b, dict) else None for b in blocks(msg)]
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "user" and "tool_result" in kinds and any(k != "tool_result" for k in kinds):
            return "Tool results mixed with other content"
        if role == "assistant" and "tool_use" in kinds:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = {b.get("toolUseId") for b in blocks(nxt) if isinstance(b, dict) and b.get("type") == "tool_result"} \
                if isinstance(nxt, dict) and nxt.get("role") == "user" else set()
            if any(isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") not in answered for b in blocks(msg)):
                return "Tool result missing in request"
    return None


def default_capabilities(version: str) -> dict[str, Any]:
    """Every client capability ``version`` defines: roots (with listChanged), sampling, and
    elicitation where the version has it; on 2025-11-25 tasks (list, cancel, task-augmented
    sampling and elicitation)."""
    caps: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}}
    if spec(version).tasks:  # 2025-11-25: tools in sampling (answered with text; forbidden tool loops refused)
        caps["sampling"] = {"tools": {}}
    if spec(version).stateless:
        return {"roots": {}, "sampling": {}, "elicitation": {}}  # asked for inline (InputRequiredResult)
    if lookup("elicitation/create", S2C, version) is not None:
        caps["elicitation"] = {}
    if spec(version).tasks:
        caps["tasks"] = task_capabilities()
    return caps


# faults that leave a capability undeclared (and then answer as if it were, or answer wrongly)
_UNDECLARED = {
    "undeclared-roots": "roots",
    "roots-unsupported-internal-error": "roots",
    "undeclared-sampling": "sampling",
    "string-error-code": "sampling",
    "undeclared-elicitation": "elicitation",
    "task-undeclared": "tasks",
}


def _digits(rid: Any) -> bool:
    """A string id that is a string of digits ("7"), which a sloppy client answers as 7."""
    return isinstance(rid, str) and rid.isascii() and rid.isdigit()


def other_id(rid: Any) -> Any:
    """``rid`` changed the way a sloppy client changes it: 7 -> "7", "7" -> 7, "s" -> "s-wrong"."""
    if isinstance(rid, int) and not isinstance(rid, bool):
        return str(rid)
    if isinstance(rid, str) and rid.lstrip("-").isdigit():
        return int(rid)
    return f"{rid}-wrong"


@dataclass
class Incoming:
    """What one inbound message meant: ``kind`` is ``response`` (``id``, ``message``), ``request``
    (``reply`` to send), ``notification`` (``reply`` only under a fault), ``batch`` (``items``),
    ``ignored`` (a late answer to a request we gave up on), or ``invalid`` (``problem``)."""

    kind: str
    message: Any
    id: Any = None
    method: str | None = None
    reply: dict[str, Any] | None = None
    problem: str | None = None
    items: list["Incoming"] = field(default_factory=list)
    #: a tasks/result that waits for its task: (seconds until it ends, the task id); the session
    #: sends ``core.tasks.result_reply`` then
    later: tuple[float, str] | None = None


@dataclass
class ClientCore:
    version: str
    capabilities: dict[str, Any] = field(default_factory=dict)
    validate: bool = True
    negotiated: str | None = None  # the protocol version the handshake settled on
    fault: str | None = None  # a named fault (reference_client.faults), None: strict
    transport: str | None = None  # stdio | streamable-http | sse (for the faults' gates)
    violations: list[str] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    quit: str | None = None  # set when the client must stop (fault exit-on-invalid-cancel)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _extra_ids: Any = field(default_factory=lambda: itertools.count(EXTRA_IDS))  # a fault's extra requests
    _pending: dict[Any, str] = field(default_factory=dict)  # (type, id) -> method
    _abandoned: dict[Any, int] = field(default_factory=dict)  # (type, id) -> answers still to absorb
    _cancelled: set[Any] = field(default_factory=set)
    _server_ids: set[Any] = field(default_factory=set)  # ids of the server's requests seen
    _given_caps: bool = False
    tasks: TaskStore = field(default_factory=TaskStore)

    def __post_init__(self) -> None:
        self.tasks.faulty = self.faulty
        if self.version not in VERSIONS:
            raise ValueError(f"unknown protocol version {self.version!r} (known: {', '.join(VERSIONS)})")
        if self.fault is not None:
            from reference_client.faults import KNOWN

            if self.fault not in KNOWN:
                raise ValueError(f"unknown fault {self.fault!r}")
        self._given_caps = bool(self.capabilities)
        if not self.capabilities:
            self.capabilities = self._default_caps(self.version)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "version" and value not in VERSIONS:
            raise ValueError(f"unknown protocol version {value!r} (known: {', '.join(VERSIONS)})")
        super().__setattr__(name, value)

    def _default_caps(self, version: str) -> dict[str, Any]:
        from reference_client.faults import behaviour

        caps = default_capabilities(version)
        drop = _UNDECLARED.get(behaviour(self.fault)) if self.fault else None
        if drop is not None and self._acts(self.fault, version):
            caps.pop(drop, None)
        if "tasks" in caps and self.fault == "task-undeclared-type" and self._acts(self.fault, version):
            caps["tasks"] = task_capabilities(sampling=False)  # fault: sampling tasks made, not declared
        if self.fault == "undeclared-sampling-tools" and self._acts(self.fault, version) and "sampling" in caps:
            caps["sampling"] = {}  # fault: sampling without tools, then tool use all the same
        if self.fault == "elicitation-no-mode" and self._acts(self.fault, version) and "elicitation" in caps:
            # fault: an elicitation object that is not empty (empty: form mode) and names no mode;
            # the client still answers forms as the strict one does
            caps["elicitation"] = {"mcp-reference-client": {}}
        return caps

    def use_version(self, version: str) -> None:
        """Speak (or ask for) ``version`` from now on: the default capabilities follow its era."""
        self.version = version
        self.negotiated = None
        if not self._given_caps:
            self.capabilities = self._default_caps(version)

    @property
    def stateless(self) -> bool:
        return spec(self.judged_version).stateless

    @property
    def judged_version(self) -> str:
        return self.negotiated or self.version

    def _acts(self, name: str | None, version: str | None = None) -> bool:
        if name is None:
            return False
        from reference_client.faults import KNOWN

        return KNOWN[name].acts(version or self.judged_version, self.transport)

    def faulty(self, name: str) -> bool:
        """Does the injected fault misbehave as ``name`` (itself or a variant of it), and does it act
        on this version and transport?"""
        from reference_client.faults import behaviour

        return self.fault is not None and behaviour(self.fault) == name and self._acts(self.fault)

    # -- what we send ------------------------------------------------------------------------

    def next_id(self, *, extra: bool = False) -> int:
        return next(self._extra_ids if extra else self._ids)

    def request(self, method: str, params: dict[str, Any] | None = None, *, rid: Any = MISSING,
                progress: bool = False, extra: bool = False) -> dict[str, Any]:
        """A request with a fresh integer id (or ``rid``), the per-request ``_meta`` on 2026-07-28,
        and a progress token (unique: it is derived from the id) when ``progress``.  ``extra``: a
        fault's extra request (ids from their own range)."""
        rid = self.next_id(extra=extra) if rid is MISSING else rid
        params = dict(params or {})
        if self.stateless or progress:
            meta = dict(params.get("_meta") or {})
            if self.stateless:
                meta.setdefault(PROTOCOL_VERSION_KEY, self.version)
                meta.setdefault(CLIENT_CAPABILITIES_KEY, self.capabilities)
                if not self.faulty("meta-without-client-info"):
                    meta.setdefault(CLIENT_INFO_KEY, CLIENT_INFO)
            if progress:
                meta.setdefault("progressToken", f"mcp-reference-client-{rid}")
            params["_meta"] = meta
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            msg["params"] = params
        self._pending[_key(rid)] = method
        return msg

    def notification(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params:
            msg["params"] = params
        return msg

    def initialize_params(self) -> dict[str, Any]:
        params = {"protocolVersion": self.version, "capabilities": self.capabilities, "clientInfo": CLIENT_INFO}
        if self.faulty("ask-older-version") and self.version in VERSIONS[1:]:
            params["protocolVersion"] = VERSIONS[VERSIONS.index(self.version) - 1]  # goes on with what it is offered
        if self.faulty("no-client-info"):
            del params["clientInfo"]
        return params

    def cancel(self, rid: Any, reason: str) -> dict[str, Any]:
        """``notifications/cancelled`` for our request ``rid`` (never for initialize); a response
        that arrives afterwards is ignored ("The sender of the cancellation notification SHOULD
        ignore any response to the request that arrives afterward")."""
        self.abandon(rid)
        return self.notification("notifications/cancelled", {"requestId": rid, "reason": reason})

    def abandon(self, rid: Any, answers: int = 1) -> None:
        """We stop waiting for ``rid``: up to ``answers`` late responses to it are dropped quietly."""
        key = _key(rid)
        self._pending.pop(key, None)
        self._abandoned[key] = self._abandoned.get(key, 0) + answers

    def expect_more(self, rid: Any, answers: int = 1) -> None:
        """``rid`` is in flight more than once (fault reuse-inflight-id): the extra answers are absorbed."""
        key = _key(rid)
        self._abandoned[key] = self._abandoned.get(key, 0) + answers

    def more_expected(self, rid: Any) -> bool:
        return self._abandoned.get(_key(rid), 0) > 0

    def method_of(self, rid: Any) -> str | None:
        return self._pending.get(_key(rid))

    def in_flight(self, rid: Any) -> bool:
        return _key(rid) in self._pending

    # -- what we receive ---------------------------------------------------------------------

    def receive(self, msg: Any) -> Incoming:
        if isinstance(msg, list):
            return self._batch(msg)
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return self._invalid(msg, 'not a JSON-RPC 2.0 message ("jsonrpc" must be "2.0")')
        if "method" in msg:
            if "id" in msg:
                return self._server_request(msg)
            return self._notification(msg)
        if "result" in msg or "error" in msg:
            return self._response(msg)
        return self._invalid(msg, 'neither "method", "result" nor "error" is present')

    def _batch(self, msg: list[Any]) -> Incoming:
        """A JSON-RPC batch: only 2025-03-26 has them ("MCP implementations ... MUST support
        receiving JSON-RPC batches"); every request in it is answered (the session sends the
        answers back as one batch)."""
        if not spec(self.judged_version).batching:
            return self._invalid(msg, f"a JSON-RPC batch; protocol version {self.judged_version} has no batches")
        if not msg:
            return self._invalid(msg, "an empty JSON-RPC batch")
        if self.faulty("ignore-batch"):
            return Incoming("ignored", msg)
        items = [self.receive(m) if not isinstance(m, list) else self._invalid(m, "a batch inside a batch") for m in msg]
        return Incoming("batch", msg, items=items)

    def _response(self, msg: dict[str, Any]) -> Incoming:
        rid = msg.get("id")
        key = _key(rid)
        method = self._pending.pop(key, None)
        if method is not None and "error" in msg and self._abandoned.get(key, 0) > 0:
            # the same id is in flight twice (fault reuse-inflight-id): an error (the server
            # refusing the duplicate) is taken as the duplicate's answer; the other one is awaited
            self._pending[key] = method
            method = None
        if method is None:
            if self._abandoned.get(key, 0) > 0:
                self._abandoned[key] -= 1
                if not self._abandoned[key]:
                    del self._abandoned[key]
                return Incoming("ignored", msg, id=rid)  # late, or the answer to a fault's extra
            if msg.get("error") is not None and rid is None:
                return Incoming("response", msg, id=None)  # an error about a message the server could not read
            return self._invalid(msg, f"a response with id {rid!r}, which no request of ours in flight has")
        if ("result" in msg) == ("error" in msg):
            self.violations.append(f"the response to {method} (id {rid!r}) must carry exactly one of result and error")
        elif "result" in msg:
            self._check(msg, answering=method)
        else:
            self._check(msg)
        return Incoming("response", msg, id=rid, method=method)

    def _notification(self, msg: dict[str, Any]) -> Incoming:
        self._check(msg)
        self.notifications.append(msg)
        method = msg.get("method")
        if method == "notifications/cancelled":
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            # "Invalid cancellation notifications SHOULD be ignored" (cancellation#error-handling)
            self._cancelled.add(_key(params.get("requestId")))
            if self.faulty("exit-on-invalid-cancel") and ("requestId" not in params or _key(params.get("requestId")) not in self._server_ids):
                self.quit = f"notifications/cancelled for {params.get('requestId', '(no requestId)')!r}, a request the server never sent"
            elif self.faulty("exit-on-cancel-race") and "requestId" in params and _key(params.get("requestId")) in self._server_ids:
                self.quit = f"notifications/cancelled for {params.get('requestId')!r}, a request the server sent (and may be answered)"
        elif method == "notifications/elicitation/complete" and self.faulty("exit-on-unknown-complete"):
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            # the strict client ignores it: "MUST ignore notifications referencing unknown or
            # already-completed IDs" (2025-11-25 client/elicitation); it starts no URL elicitation
            self.quit = f"notifications/elicitation/complete for {params.get('elicitationId')!r}, an elicitation never started"
        reply = None
        if self.faulty("answer-notification"):
            reply = self._error(None, codes.INVALID_REQUEST, f"Invalid Request: {method} has no id")
        return Incoming("notification", msg, method=method, reply=reply)

    def _server_request(self, msg: dict[str, Any]) -> Incoming:
        rid, method = msg.get("id"), msg.get("method")
        if rid is None or isinstance(rid, bool) or not isinstance(rid, (str, int)):
            return self._invalid(msg, f"a request with id {rid!r}: ids must be strings or integers, never null")
        self._server_ids.add(_key(rid))
        if not self.stateless and isinstance(method, str) and self._task_request(method, msg.get("params")):
            self._check(msg)
            return self._task_answer(rid, method, msg.get("params"), msg)
        if self.stateless:
            # and no answer: "The client MUST NOT write JSON-RPC responses" (2026-07-28 stdio and
            # streamable HTTP pages)
            self.violations.append(f"the server sent a {method!r} request; 2026-07-28 has no server-to-client requests")
            return Incoming("request", msg, id=rid, method=method, reply=None)
        self._check(msg)
        return Incoming("request", msg, id=rid, method=method, reply=self._answer(rid, method, msg.get("params")))

    # -- tasks (2025-11-25): the client as receiver ----------------------------------------------

    def _tasks_on(self) -> bool:
        """Does this client serve tasks (declared, or the fault task-undeclared making them anyway)?"""
        return spec(self.judged_version).tasks and ("tasks" in self.capabilities or self.faulty("task-undeclared"))

    def _task_request(self, method: str, params: Any) -> bool:
        if not self._tasks_on():
            return False
        if method in TASK_METHODS:
            augmented = isinstance(params, dict) and isinstance(params.get("task"), dict)
            made = declared_for(self.capabilities, method) or self.faulty("task-undeclared") \
                or (self.faulty("task-undeclared-type") and method == "sampling/createMessage")
            return augmented and made and not self.faulty("task-plain-result")
        tasks = self.capabilities.get("tasks") if isinstance(self.capabilities.get("tasks"), dict) else {}
        if method in ("tasks/get", "tasks/result"):
            return True
        if method == "tasks/list":
            return "list" in tasks or self.faulty("task-undeclared")
        if method == "tasks/cancel":
            return "cancel" in tasks or self.faulty("task-undeclared")
        return False

    def _task_answer(self, rid: Any, method: str, params: Any, msg: dict[str, Any]) -> Incoming:
        if method in TASK_METHODS:
            reply = self._answer(rid, method, params)
            if reply is None or "result" not in reply:
                return Incoming("request", msg, id=rid, method=method, reply=reply)  # not accepted: the error
            return Incoming("request", msg, id=rid, method=method,
                            reply={"jsonrpc": "2.0", "id": rid, "result": self.tasks.create(method, params, reply)})
        reply = self.tasks.handle(rid, method, params)
        later = self.tasks.result_wait(params) if reply is None and method == "tasks/result" else None
        return Incoming("request", msg, id=rid, method=method, reply=reply, later=later)

    def input_responses(self, requests: Any) -> dict[str, Any] | None:
        """The answers to an InputRequiredResult's ``inputRequests`` (2026-07-28: the server asks
        for sampling, roots or elicitation inline; the client retries the request with them), or
        None when one of them cannot be answered (not declared, not a known kind)."""
        if not isinstance(requests, dict):
            return {}
        out: dict[str, Any] = {}
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            reply = self._answer(0, method, request.get("params") if isinstance(request, dict) else None, inline=True)
            if reply is None or "result" not in reply:
                return None
            out[key] = reply["result"]
        return out

    def _answer(self, rid: Any, method: Any, params: Any, *, inline: bool = False) -> dict[str, Any] | None:
        version = self.judged_version
        # inline (2026-07-28 input requests) the kinds are those of the version's schema
        known = isinstance(method, str) and (inline or lookup(method, S2C, version) is not None)
        if method == "ping":
            if self.faulty("ignore-ping"):
                return None
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": {}}
            if self.faulty("response-wrong-id") or self.faulty("result-wrong-id"):
                reply["id"] = other_id(rid)
            if self.faulty("digit-id-as-number") and _digits(rid):
                reply["id"] = int(rid)
            if self.faulty("result-and-error"):
                reply["error"] = {"code": codes.INTERNAL_ERROR, "message": "mcp-reference-client: both result and error"}
            return reply
        if known and method == "roots/list":
            if "roots" in self.capabilities or self.faulty("undeclared-roots"):
                roots = HTTPS_ROOTS if self.faulty("https-root") else ROOTS
                return {"jsonrpc": "2.0", "id": rid, "result": {"roots": roots}}
            if self.faulty("roots-unsupported-internal-error"):
                return self._error(rid, codes.INTERNAL_ERROR, "Internal error: roots are not supported")
        if known and method == "sampling/createMessage":
            tools = params.get("tools") if isinstance(params, dict) else None
            if self.faulty("undeclared-sampling-tools") and "sampling" in self.capabilities and isinstance(tools, list) \
                    and tools and isinstance(tools[0], dict) and isinstance(tools[0].get("name"), str):
                # fault: sampling.tools is not declared, yet the "model" calls the first tool offered
                return {"jsonrpc": "2.0", "id": rid, "result": {
                    "role": "assistant", "content": [{"type": "tool_use", "id": "mcp-reference-client-tool-use-1",
                                                      "name": tools[0]["name"], "input": {}}],
                    "model": "mcp-reference-client", "stopReason": "toolUse"}}
            sampling = self.capabilities.get("sampling")
            problem = tool_loop_problem(params) if isinstance(sampling, dict) and "tools" in sampling else None
            if problem is not None and not self.faulty("unchecked-tool-loop"):
                # client/sampling#error-handling (2025-11-25): "Tool result missing in request" and "Tool
                # results mixed with other content": -32602 (Invalid params)
                return self._error(rid, codes.INVALID_PARAMS, f"Invalid params: {problem}")
            if "sampling" in self.capabilities or self.faulty("undeclared-sampling"):
                return {"jsonrpc": "2.0", "id": rid, "result": {
                    "role": "assistant", "content": {"type": "text", "text": SAMPLED_TEXT},
                    "model": "mcp-reference-client", "stopReason": "endTurn"}}
            if self.faulty("string-error-code"):
                return {"jsonrpc": "2.0", "id": rid, "error": {"code": str(codes.METHOD_NOT_FOUND), "message": "Method not found: sampling is not supported"}}
        if known and method == "elicitation/create" and ("elicitation" in self.capabilities or self.faulty("undeclared-elicitation")):
            mode = params.get("mode", "form") if isinstance(params, dict) else "form"
            if self.faulty("modeless-not-form") and isinstance(params, dict) and "mode" not in params:
                mode = None  # fault: a request without a mode is not taken as form mode
            declared = self.capabilities.get("elicitation")
            modes = {m for m in ("form", "url") if isinstance(declared, dict) and m in declared} or {"form"}
            if "elicitation" in self.capabilities and (not isinstance(mode, str) or mode not in modes) \
                    and not self.faulty("undeclared-mode-answered"):
                # "Server sends an elicitation/create request with a mode not declared in client
                # capabilities: -32602 (Invalid params)" (2025-11-25 client/elicitation#error-handling)
                return self._error(rid, codes.INVALID_PARAMS, f"elicitation mode {mode!r} was not declared")
            dialect = params.get("requestedSchema", {}).get("$schema") if isinstance(params, dict) and \
                isinstance(params.get("requestedSchema"), dict) else None
            if dialect is not None and (self.faulty("reject-explicit-2020-12") or (
                    dialect not in SCHEMA_DIALECTS and not self.faulty("accept-unknown-dialect"))):
                # "They MUST handle unsupported dialects gracefully by returning an appropriate
                # error indicating the dialect is not supported." (2025-11-25 basic/index)
                return {"jsonrpc": "2.0", "id": rid, "error": {
                    "code": codes.INVALID_PARAMS, "message": f"unsupported JSON Schema dialect: {dialect!r}",
                    "data": {"supportedDialects": list(SCHEMA_DIALECTS)}}}
            answer = elicitation_answer(params, defaults=not self.faulty("no-defaults"))
            if self.faulty("elicitation-invalid-content") and isinstance(answer.get("content"), dict):
                # fault: what the "user" entered is not checked against requestedSchema
                answer["content"] = {k: ("yes" if isinstance(v, bool) else 7 if isinstance(v, str) else "seven")
                                     for k, v in answer["content"].items()}
            schema = params.get("requestedSchema") if isinstance(params, dict) else None
            required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
            return {"jsonrpc": "2.0", "id": rid, "result": fit_elicitation(answer, version, required)}
        code = codes.METHOD_NOT_FOUND
        if not known and self.faulty("unknown-method-wrong-code"):
            code = codes.INVALID_REQUEST
        reply = self._error(rid, code, f"Method not found: {method}")
        if self.faulty("error-wrong-id"):
            reply["id"] = other_id(rid)
        if self.faulty("error-digit-id-as-number") and _digits(rid):
            reply["id"] = int(rid)
        return reply

    @staticmethod
    def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}

    def cancelled_by_server(self, rid: Any) -> bool:
        """The server cancelled its request ``rid``: no response may be sent for it."""
        return _key(rid) in self._cancelled

    def _invalid(self, msg: Any, problem: str) -> Incoming:
        self.violations.append(f"the server sent {str(msg)[:200]!r}: {problem}")
        return Incoming("invalid", msg, problem=problem)

    def _check(self, msg: dict[str, Any], *, answering: str | None = None) -> None:
        if not self.validate:
            return
        from conformance.schema import validate

        findings = validate(msg, self.judged_version, S2C, answering=answering)
        # "when a client receives a result from a server implementing an earlier protocol version
        # (which does not include resultType), the client MUST treat it as complete" (2026-07-28
        # schema, Result.resultType): its absence is read, not rejected
        findings = [f for f in findings if "'resultType' is a required property" not in str(f)]
        if findings:
            what = f"the response to {answering}" if answering else f"{msg.get('method', 'a message')}"
            self.violations.append(f"{what} does not match the {self.judged_version} schema: {findings[0]}")


def _key(rid: Any) -> tuple[str, Any]:
    """Ids are equal only with the same JSON type ("7" is not 7).  An id that is a JSON object or
    array (a broken server's) is keyed by its text: it matches nothing of ours, and must not crash us."""
    if isinstance(rid, (dict, list)):
        import json

        return (type(rid).__name__, json.dumps(rid, sort_keys=True, default=str))
    return (type(rid).__name__, rid)


C2S_DIRECTION = C2S  # for front-ends that validate what they send
