"""Valid messages per version and method: the seeds the mutation operators start from.  Pure.

Two directions: :func:`build_corpus` holds what we send a server (client-to-server requests and
notifications); :func:`build_client_corpus` what we send a client (server-to-client requests --
ping, roots/list, sampling/createMessage, elicitation/create, tasks/* -- and notifications).

A corpus entry is a complete JSON-RPC message (request or notification) that the official schema of
its version accepts.  Sources, in order:

* ``schema``: the smallest instance of each client-to-server method's message definition (required
  members only), built by walking the schema itself -- deterministic and instant;
* ``hypothesis``: richer schema-valid instances drawn once by hypothesis-jsonschema
  (:func:`hypothesis_examples`; 8-11 per second, so the caller caches them, never per message);
* ``tools/list`` / ``prompts/list``: ``tools/call`` and ``prompts/get`` with arguments built from
  the target's own ``inputSchema`` / prompt arguments -- only for tools the user opted in
  (:func:`tool_selected`); every other ``tools/call`` names a tool that cannot exist.

Excluded from the default mix (state-changing; they get separate handling): ``initialize``,
``notifications/initialized``, ``logging/setLevel``, ``resources/subscribe`` / ``unsubscribe``,
``subscriptions/listen``.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from conformance.schema.loader import load_schema
from conformance.schema.validate import validate_definition
from conformance.spec import methods as _methods
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from conformance.spec.versions import spec

__all__ = [
    "Seed",
    "Corpus",
    "build_corpus",
    "minimal_instance",
    "hypothesis_examples",
    "tool_selected",
    "arguments_for",
    "NO_SUCH_TOOL",
    "NO_SUCH_PROMPT",
    "STATEFUL",
    "stateless_meta",
    "build_client_corpus",
    "CLIENT_SEEDS",
]

NO_SUCH_TOOL = "mcp-conformance-no-such-tool-5f3a"
NO_SUCH_PROMPT = "mcp-conformance-no-such-prompt-5f3a"
STATEFUL = frozenset({
    "initialize", "notifications/initialized", "logging/setLevel", "resources/subscribe",
    "resources/unsubscribe", "subscriptions/listen",
})
CLIENT_INFO = {"name": "mcp-conformance-fuzz", "version": "0.1.0"}


@dataclass(frozen=True)
class Seed:
    method: str
    message: Mapping[str, Any]  # the whole JSON-RPC message; requests carry id 0 (the engine assigns ids)
    source: str  # "schema" | "hypothesis" | "tools/list" | "prompts/list"

    @property
    def is_request(self) -> bool:
        return "id" in self.message


@dataclass(frozen=True)
class Corpus:
    version: str
    seeds: tuple[Seed, ...]

    def methods(self) -> list[str]:
        return sorted({s.method for s in self.seeds})

    def digest(self) -> str:
        """A short hash of the corpus (recorded in reproducers and reports)."""
        from conformance.wire.envelope import dumps

        h = hashlib.sha256()
        for s in self.seeds:
            h.update(dumps(dict(s.message)))
        return h.hexdigest()[:16]


def stateless_meta(version: str, capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The per-request ``_meta`` envelope a stateless version (2026-07-28) requires."""
    return {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: dict(capabilities or {}),
        CLIENT_INFO_KEY: dict(CLIENT_INFO),
    }


# -- the smallest schema-valid instance ------------------------------------------------------------


def _defs(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    return doc.get("$defs") or doc.get("definitions") or {}


def _resolve(doc: Mapping[str, Any], node: Any) -> Any:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 32:
        ref = node["$ref"]
        name = ref.rsplit("/", 1)[-1]
        node = _defs(doc).get(name, {})
        seen += 1
    return node


def minimal_instance(doc: Mapping[str, Any], node: Any, depth: int = 0) -> Any:
    """The smallest value ``node`` (a schema, ``$ref`` resolved in ``doc``) accepts: required
    members only, empty strings, zero, first enum member, first branch of a union."""
    node = _resolve(doc, node)
    if depth > 12 or not isinstance(node, dict):
        return {}
    if "const" in node:
        return copy.deepcopy(node["const"])
    if "enum" in node:
        return copy.deepcopy(node["enum"][0])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return minimal_instance(doc, node[key][0], depth + 1)
    if "allOf" in node:
        out: dict[str, Any] = {}
        for part in node["allOf"]:
            val = minimal_instance(doc, part, depth + 1)
            if isinstance(val, dict):
                out.update(val)
        return out
    typ = node.get("type")
    if isinstance(typ, list):
        typ = typ[0]
    if typ == "object" or (typ is None and "properties" in node):
        props = node.get("properties", {})
        return {k: minimal_instance(doc, props.get(k, {}), depth + 1) for k in node.get("required", [])}
    if typ == "array":
        n = int(node.get("minItems", 0))
        return [minimal_instance(doc, node.get("items", {}), depth + 1) for _ in range(n)]
    if typ == "string":
        fmt = node.get("format")
        if fmt == "uri":
            return "mcp-conformance://fuzz"
        if fmt == "byte":
            return ""
        return "x" * int(node.get("minLength", 0))
    if typ in ("integer", "number"):
        lo = node.get("minimum", node.get("exclusiveMinimum", 0))
        return int(lo) if typ == "integer" else lo
    if typ == "boolean":
        return False
    if typ == "null":
        return None
    return {}


def _fix_up(version: str, method: str, message: dict[str, Any]) -> dict[str, Any]:
    """Make a schema instance safe and meaningful: no real tool or prompt named by chance, a
    resource URI that does not exist, the stateless ``_meta`` envelope."""
    params = message.get("params")
    if isinstance(params, dict):
        if method == "tools/call":
            params["name"] = NO_SUCH_TOOL
        elif method == "prompts/get":
            params["name"] = NO_SUCH_PROMPT
        elif method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            params["uri"] = "mcp-conformance://fuzz/no-such-resource"
    if spec(version).stateless and "id" in message:
        params = message.setdefault("params", {})
        if isinstance(params, dict):
            meta = params.get("_meta")
            meta = dict(meta) if isinstance(meta, dict) else {}
            meta.update(stateless_meta(version))
            params["_meta"] = meta
    return message


def _valid(message: Any, version: str, definition: str) -> bool:
    try:
        return not validate_definition(message, version, definition)
    except Exception:  # noqa: BLE001 - an unknown definition: not a seed
        return False


def schema_seeds(version: str, *, include_stateful: bool = False, direction: str = _methods.C2S) -> list[Seed]:
    """The smallest schema-valid message of every method of ``version`` sent in ``direction``
    (client-to-server: what we send a server; server-to-client: what we send a client)."""
    doc = load_schema(version)
    out: list[Seed] = []
    for m in _methods.methods_for(version, direction=direction):
        if direction == _methods.C2S and m.name in STATEFUL and not include_stateful:
            continue
        node = _defs(doc).get(m.request_def)
        if node is None:
            continue
        msg = minimal_instance(doc, node)
        if not isinstance(msg, dict):
            continue
        msg["jsonrpc"] = "2.0"
        msg["method"] = m.name
        if m.kind == _methods.REQUEST:
            msg["id"] = 0
        else:
            msg.pop("id", None)
        msg = _fix_up(version, m.name, msg)
        if _valid(msg, version, m.request_def):
            out.append(Seed(m.name, msg, "schema"))
    return out


def hypothesis_examples(version: str, *, per_method: int = 3, include_stateful: bool = False) -> list[dict[str, Any]]:
    """Schema-valid messages drawn by hypothesis-jsonschema, deterministically (derandomized, no
    database).  Slow (8-11 per second): call once and cache the result (the engine does)."""
    import hypothesis  # lazily: only to seed a corpus
    from conformance.schema.validate import import_jsonschema

    import_jsonschema()  # before hypothesis_jsonschema imports it (without the IRI grammar)
    from hypothesis_jsonschema import from_schema

    doc = load_schema(version)
    defs_key = "$defs" if "$defs" in doc else "definitions"
    out: list[dict[str, Any]] = []
    for m in _methods.methods_for(version, direction=_methods.C2S):
        if m.name in STATEFUL and not include_stateful:
            continue
        if m.request_def not in _defs(doc):
            continue
        schema = {defs_key: _defs(doc), "$ref": f"#/{defs_key}/{m.request_def}"}
        if "$schema" in doc:
            schema["$schema"] = doc["$schema"]
        got: list[dict[str, Any]] = []
        try:
            strategy = from_schema(schema)
        except Exception:  # noqa: BLE001 - a schema hypothesis-jsonschema cannot handle
            continue

        @hypothesis.settings(max_examples=per_method * 4, derandomize=True, database=None, deadline=None,
                             suppress_health_check=list(hypothesis.HealthCheck), phases=[hypothesis.Phase.generate])
        @hypothesis.given(strategy)
        def draw(value: Any) -> None:
            if len(got) < per_method and isinstance(value, dict):
                got.append(value)

        try:
            draw()
        except Exception:  # noqa: BLE001
            continue
        for value in got:
            value = copy.deepcopy(value)
            value["jsonrpc"] = "2.0"
            if m.kind == _methods.REQUEST:
                value["id"] = 0
            value = _fix_up(version, m.name, value)
            if _valid(value, version, m.request_def):
                out.append(value)
    return out


# -- the target's own tools and prompts --------------------------------------------------------------


def tool_selected(tool: Mapping[str, Any], globs: Iterable[str]) -> bool:
    """A tool is called only when the user opted it in by name: ``--fuzz-tools GLOB``.  A tool that
    is (or may be: ``destructiveHint`` defaults to true when absent and ``readOnlyHint`` is not true)
    destructive needs its exact name, never a wildcard."""
    name = tool.get("name")
    if not isinstance(name, str):
        return False
    globs = list(globs)
    if name in globs:
        return True
    ann = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    destructive = ann.get("destructiveHint", True) is not False and ann.get("readOnlyHint") is not True
    if destructive:
        return False
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def arguments_for(doc_schema: Any) -> dict[str, Any]:
    """Arguments for an ``inputSchema`` (self-contained JSON Schema): required members, minimal."""
    if not isinstance(doc_schema, dict):
        return {}
    value = minimal_instance(doc_schema, doc_schema)
    return value if isinstance(value, dict) else {}


def build_corpus(
    version: str,
    *,
    tools: Iterable[Mapping[str, Any]] = (),
    prompts: Iterable[Mapping[str, Any]] = (),
    fuzz_tools: Iterable[str] = (),
    extra: Iterable[Mapping[str, Any]] = (),
    include_stateful: bool = False,
) -> Corpus:
    """The corpus for ``version``: schema seeds, ``extra`` messages (hypothesis examples from the
    cache), calls of opted-in tools and gets of the target's prompts."""
    seeds = schema_seeds(version, include_stateful=include_stateful)
    for msg in extra:
        method = msg.get("method")
        if isinstance(method, str) and (include_stateful or method not in STATEFUL):
            seeds.append(Seed(method, copy.deepcopy(dict(msg)), "hypothesis"))
    globs = list(fuzz_tools)
    for tool in tools:
        if tool_selected(tool, globs):
            msg = {"jsonrpc": "2.0", "id": 0, "method": "tools/call",
                   "params": {"name": tool["name"], "arguments": arguments_for(tool.get("inputSchema"))}}
            seeds.append(Seed("tools/call", _fix_meta(version, msg), "tools/list"))
    for prompt in prompts:
        name = prompt.get("name")
        if not isinstance(name, str):
            continue
        args = {a["name"]: _argument_value(a["name"]) for a in prompt.get("arguments") or []
                if isinstance(a, dict) and isinstance(a.get("name"), str) and a.get("required")}
        msg = {"jsonrpc": "2.0", "id": 0, "method": "prompts/get", "params": {"name": name, "arguments": args}}
        seeds.append(Seed("prompts/get", _fix_meta(version, msg), "prompts/list"))
    return Corpus(version, tuple(seeds))


def _argument_value(name: str) -> str:
    """A plausible string for a prompt argument (prompt arguments are untyped strings): a URI for
    one named like a URI, else "x"."""
    low = name.lower()
    return "mcp-conformance://fuzz" if ("uri" in low or "url" in low) else "x"


def _fix_meta(version: str, msg: dict[str, Any]) -> dict[str, Any]:
    if spec(version).stateless:
        msg["params"]["_meta"] = stateless_meta(version)
    return msg


# -- what we send a client (the client direction) ----------------------------------------------------

#: Richer server-to-client messages than the schema's smallest instances, as real servers send
#: them (kept only where the version's schema accepts them).
CLIENT_SEEDS: tuple[dict[str, Any], ...] = (
    {"jsonrpc": "2.0", "id": 0, "method": "ping"},
    {"jsonrpc": "2.0", "id": 0, "method": "roots/list"},
    {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage",
     "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: say hello"}}],
                "maxTokens": 16}},
    {"jsonrpc": "2.0", "id": 0, "method": "elicitation/create",
     "params": {"message": "mcp-conformance: may I ask?",
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}}}},
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "logger": "mcp-conformance", "data": "hello"}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "mcp-conformance-token", "progress": 1, "total": 2}},
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
    {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "mcp-conformance://hello"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "mcp-conformance-never-sent", "reason": "fuzz"}},
)


def build_client_corpus(version: str) -> Corpus:
    """What the fuzzer sends a client of ``version``: the smallest instance of every server-to-client
    method, and :data:`CLIENT_SEEDS` where the schema accepts them.  Every request id is a
    placeholder (the generator sets run-unique ids); every ``notifications/cancelled`` names a
    request id the suite never uses, so it is always an invalid cancellation."""
    seeds = schema_seeds(version, direction=_methods.S2C)
    for msg in CLIENT_SEEDS:
        method = msg["method"]
        m = _methods.lookup(method, _methods.S2C, version)
        if m is None:
            continue
        if _valid(copy.deepcopy(msg), version, m.request_def):
            seeds.append(Seed(method, copy.deepcopy(msg), "seed"))
    out = []
    for s in seeds:
        if s.method == "notifications/cancelled":
            params = s.message.get("params")
            if isinstance(params, dict) and "requestId" in params and params["requestId"] in ("", 0):
                msg = copy.deepcopy(dict(s.message))
                msg["params"]["requestId"] = "mcp-conformance-never-sent-0"
                s = Seed(s.method, msg, s.source)
        out.append(s)
    return Corpus(version, tuple(out))
