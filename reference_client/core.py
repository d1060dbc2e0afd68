"""The reference client's protocol core: no I/O (as ``reference_server/core.py`` is for the server).

:class:`ClientCore` builds the messages a strict client sends and digests the messages it receives:

* requests get unique integer ids (never null, never reused); on the stateless 2026-07-28 every
  request carries the per-request ``_meta`` (protocol version, client capabilities, client info);
* a response is matched to the request it answers, and validated against the official schema of
  the negotiated version for that method's result (``conformance.schema``);
* a request from the server is answered at once: ``ping`` with an empty result, ``roots/list``,
  ``sampling/createMessage`` and ``elicitation/create`` with deterministic answers when the
  capability was declared, and ``-32601`` for anything else;
* anything invalid the server sends is recorded in :attr:`ClientCore.violations` (the tour fails
  on it).

The front-ends (``links.py``) move bytes; ``session.py`` waits for answers with deadlines.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from conformance.spec import errors as codes
from conformance.spec.methods import C2S, S2C, lookup
from conformance.spec.versions import VERSIONS, spec

__all__ = ["ClientCore", "Incoming", "CLIENT_INFO", "ROOTS", "default_capabilities"]

PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"

CLIENT_INFO = {"name": "mcp-reference-client", "version": "0.1.0"}
ROOTS = [{"uri": "file:///tmp/mcp-reference-client", "name": "scratch"}]
SAMPLED_TEXT = "mcp-reference-client: a deterministic sampling answer"


def elicitation_answer(params: Any) -> dict[str, Any]:
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
        if "default" in sub:
            content[name] = sub["default"]
        elif name in required:
            value = _plain_value(sub)
            if value is None:
                return {"action": "decline"}
            content[name] = value
    return {"action": "accept", "content": content}


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


def default_capabilities(version: str) -> dict[str, Any]:
    """Every client capability ``version`` defines: roots (with listChanged), sampling, and
    elicitation where the version has it."""
    caps: dict[str, Any] = {"roots": {"listChanged": True}, "sampling": {}}
    if lookup("elicitation/create", S2C, version) is not None:
        caps["elicitation"] = {}
    return caps


@dataclass
class Incoming:
    """What one inbound message meant: ``kind`` is ``response`` (``id``, ``message``), ``request``
    (``reply`` to send), ``notification``, or ``invalid`` (``problem``)."""

    kind: str
    message: Any
    id: Any = None
    method: str | None = None
    reply: dict[str, Any] | None = None
    problem: str | None = None


@dataclass
class ClientCore:
    version: str
    capabilities: dict[str, Any] = field(default_factory=dict)
    validate: bool = True
    negotiated: str | None = None  # the protocol version the handshake settled on
    violations: list[str] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _pending: dict[Any, str] = field(default_factory=dict)  # (type, id) -> method
    _cancelled: set[Any] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.version not in VERSIONS:
            raise ValueError(f"unknown protocol version {self.version!r} (known: {', '.join(VERSIONS)})")
        if not self.capabilities:
            self.capabilities = default_capabilities(self.version)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "version" and value not in VERSIONS:
            raise ValueError(f"unknown protocol version {value!r} (known: {', '.join(VERSIONS)})")
        super().__setattr__(name, value)

    @property
    def stateless(self) -> bool:
        return spec(self.version).stateless

    @property
    def judged_version(self) -> str:
        return self.negotiated or self.version

    # -- what we send ------------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = next(self._ids)
        params = dict(params or {})
        if self.stateless:
            meta = dict(params.get("_meta") or {})
            meta.setdefault(PV_KEY, self.version)
            meta.setdefault(CAPS_KEY, self.capabilities)
            meta.setdefault(INFO_KEY, CLIENT_INFO)
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
        return {"protocolVersion": self.version, "capabilities": self.capabilities, "clientInfo": CLIENT_INFO}

    def cancel(self, rid: Any, reason: str) -> dict[str, Any]:
        """``notifications/cancelled`` for our request ``rid`` (never for initialize)."""
        self._pending.pop(_key(rid), None)
        return self.notification("notifications/cancelled", {"requestId": rid, "reason": reason})

    def method_of(self, rid: Any) -> str | None:
        return self._pending.get(_key(rid))

    # -- what we receive ---------------------------------------------------------------------

    def receive(self, msg: Any) -> Incoming:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return self._invalid(msg, 'not a JSON-RPC 2.0 message ("jsonrpc" must be "2.0")')
        if "method" in msg:
            if "id" in msg:
                return self._server_request(msg)
            return self._notification(msg)
        if "result" in msg or "error" in msg:
            return self._response(msg)
        return self._invalid(msg, 'neither "method", "result" nor "error" is present')

    def _response(self, msg: dict[str, Any]) -> Incoming:
        rid = msg.get("id")
        method = self._pending.pop(_key(rid), None)
        if method is None:
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
        if msg.get("method") == "notifications/cancelled":
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            self._cancelled.add(_key(params.get("requestId")))
        return Incoming("notification", msg, method=msg.get("method"))

    def _server_request(self, msg: dict[str, Any]) -> Incoming:
        rid, method = msg.get("id"), msg.get("method")
        if rid is None or isinstance(rid, bool) or not isinstance(rid, (str, int)):
            return self._invalid(msg, f"a request with id {rid!r}: ids must be strings or integers, never null")
        if self.stateless:
            self.violations.append(f"the server sent a {method!r} request; 2026-07-28 has no server-to-client requests")
            return Incoming("request", msg, id=rid, method=method, reply=self._error(rid, codes.METHOD_NOT_FOUND, "Method not found"))
        self._check(msg)
        return Incoming("request", msg, id=rid, method=method, reply=self._answer(rid, method, msg.get("params")))

    def _answer(self, rid: Any, method: Any, params: Any) -> dict[str, Any]:
        version = self.judged_version
        known = isinstance(method, str) and lookup(method, S2C, version) is not None
        if method == "ping":
            return {"jsonrpc": "2.0", "id": rid, "result": {}}
        if known and method == "roots/list" and "roots" in self.capabilities:
            return {"jsonrpc": "2.0", "id": rid, "result": {"roots": ROOTS}}
        if known and method == "sampling/createMessage" and "sampling" in self.capabilities:
            return {"jsonrpc": "2.0", "id": rid, "result": {
                "role": "assistant", "content": {"type": "text", "text": SAMPLED_TEXT},
                "model": "mcp-reference-client", "stopReason": "endTurn"}}
        if known and method == "elicitation/create" and "elicitation" in self.capabilities:
            return {"jsonrpc": "2.0", "id": rid, "result": elicitation_answer(params)}
        return self._error(rid, codes.METHOD_NOT_FOUND, f"Method not found: {method}")

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
        if findings:
            what = f"the response to {answering}" if answering else f"{msg.get('method', 'a message')}"
            self.violations.append(f"{what} does not match the {self.judged_version} schema: {findings[0]}")


def _key(rid: Any) -> tuple[str, Any]:
    """Ids are equal only with the same JSON type ("7" is not 7)."""
    return (type(rid).__name__, rid)


C2S_DIRECTION = C2S  # for front-ends that validate what they send
