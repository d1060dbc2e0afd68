"""Helpers shared by the 2026-07-28 (stateless) server scenarios: discover, stateless, mrtr,
subscriptions, headers.  No scenarios here.

* :func:`ask` sends one request (any ``_meta``, any HTTP headers) and returns its :class:`Answer`
  (the response envelope, or ``None`` when none came in time, and the HTTP exchange).
* :func:`list_tools` walks ``tools/list``; :func:`input_candidates` picks tools that may ask the
  client for input (official fixture names first; never a tool marked destructive).
* :func:`input_responses` builds the ``inputResponses`` a client would send for ``inputRequests``.
* :func:`modern_requests` maps the requests we sent with the version's ``_meta`` on a connection,
  so transcript-wide checks judge only answers to 2026-07-28 requests.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from conformance.runtime.peer import AUTO, ExpectTimeout, RawPeer
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Envelope, Kind, dumps, id_repr, same_id
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY

__all__ = [
    "PROTOCOL_VERSION_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "SERVER_INFO_KEY",
    "FULL_CAPS",
    "INPUT_CAPABILITY",
    "Answer",
    "ask",
    "describe",
    "list_tools",
    "input_candidates",
    "input_requests_of",
    "input_responses",
    "is_input_required",
    "modern_requests",
    "key",
    "verdict",
]


#: every client capability an input request can need (elicitation in both modes)
FULL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
#: method of an input request -> the client capability it needs (basic/patterns/mrtr)
INPUT_CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}

#: the official runner's 2026-07-28 fixtures that ask for input, in the order we try them
INPUT_FIXTURES = (
    "test_missing_capability",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_elicitation",
    "test_sampling",
)
_INPUT_WORDS = re.compile(r"elicit|sampl|input|confirm|ask|roots", re.I)
MAX_CANDIDATES = 6


@dataclass
class Answer:
    """One request we sent and what came back."""

    id: Any
    env: Envelope | None  # the response; None when none arrived in time
    exchange: Any = None  # the HttpExchange on HTTP

    @property
    def status(self) -> int | None:
        status = getattr(self.exchange, "status", None)
        return status if isinstance(status, int) else None

    @property
    def is_error(self) -> bool:
        return self.env is not None and self.env.kind is Kind.ERROR

    @property
    def is_result(self) -> bool:
        return self.env is not None and self.env.kind is Kind.RESULT

    @property
    def code(self) -> Any:
        return self.env.error_code if self.is_error else None

    @property
    def result(self) -> Any:
        return self.env.result if self.is_result else MISSING

    @property
    def error(self) -> Any:
        return self.env.error if self.is_error else MISSING

    def data(self) -> Any:
        err = self.error
        return err.get("data", MISSING) if isinstance(err, dict) else MISSING

    def entries(self) -> list[Any]:
        return [self.env] if self.env is not None else []


async def ask(
    peer: RawPeer,
    method: str,
    params: Any = MISSING,
    *,
    meta: Any = AUTO,
    headers: dict[str, Any] | None = None,
    id: Any = AUTO,
    timeout: float | None = None,
) -> Answer:
    """Send one request and wait for its response (``env`` None when none came in time)."""
    opts: dict[str, Any] = {}
    if headers is not None:
        opts["headers"] = headers
    before = peer.last_exchange
    try:
        rid = await peer.request(method, params, id=id, meta=meta, **opts)
    except ExpectTimeout:  # HTTP: the POST itself was never answered (no response headers in time)
        return Answer(None if id is AUTO else id, None, None)
    exchange = peer.last_exchange if peer.last_exchange is not before else None
    stream = getattr(exchange, "stream", None)

    def answers(env: Envelope) -> bool:
        if env.kind not in (Kind.RESULT, Kind.ERROR):
            return False
        if same_id(env.id, rid):
            return True
        # HTTP: an error body without an id (a transport-level rejection) answers this POST
        if stream is None or env.kind is not Kind.ERROR or not (env.id is None or env.id is MISSING):
            return False
        entry = peer.entry_of(env)
        return entry is not None and entry.meta.get("stream") == stream

    try:
        env = await peer.expect_message(answers, what=f"the response to {method} (id {id_repr(rid)})", timeout=timeout)
    except ExpectTimeout:
        env = None
    return Answer(rid, env, exchange)


def describe(answer: Answer) -> str:
    """``error -32602 'message' (HTTP 400)``, ``a result (HTTP 200)``, ``no answer``."""
    where = f" (HTTP {answer.status})" if answer.status is not None else ""
    env = answer.env
    if env is None:
        return "no answer" + where
    if env.kind is Kind.ERROR:
        err = env.error if isinstance(env.error, dict) else {}
        msg = err.get("message")
        text = f" {(msg if len(msg) <= 120 else msg[:117] + '...')!r}" if isinstance(msg, str) else ""
        return f"error {id_repr(env.error_code)}{text}{where}"
    if env.kind is Kind.RESULT:
        rt = env.result.get("resultType") if isinstance(env.result, dict) else None
        return (f"a result (resultType {rt!r})" if rt is not None else "a result") + where
    return f"a {env.kind.value}{where}"


async def list_tools(peer: RawPeer, *, max_pages: int = 20) -> tuple[list[dict[str, Any]], Answer | None]:
    """Every tool of ``tools/list`` (following nextCursor); the failing answer, if one failed."""
    tools: list[dict[str, Any]] = []
    cursor: Any = None
    for _ in range(max_pages):
        ans = await ask(peer, "tools/list", MISSING if cursor is None else {"cursor": cursor})
        items = ans.result.get("tools") if isinstance(ans.result, dict) else None
        if not isinstance(items, list):
            return tools, ans
        tools.extend(t for t in items if isinstance(t, dict) and isinstance(t.get("name"), str))
        nxt = ans.result.get("nextCursor")
        if not isinstance(nxt, str) or nxt == cursor:
            break
        cursor = nxt
    return tools, None


def _required(tool: dict[str, Any]) -> list[Any]:
    schema = tool.get("inputSchema")
    req = schema.get("required") if isinstance(schema, dict) else None
    return req if isinstance(req, list) else []


def _destructive(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations")
    return isinstance(ann, dict) and ann.get("destructiveHint") is True and ann.get("readOnlyHint") is not True


def input_candidates(tools: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tools that may ask the client for input, callable with ``{}``: the official fixtures first,
    then tools whose name or description speaks of input (never one marked destructive)."""
    by_name = {t["name"]: t for t in tools}
    out = [by_name[n] for n in INPUT_FIXTURES if n in by_name]
    for tool in by_name.values():
        if tool in out or _required(tool) or _destructive(tool):
            continue
        text = f"{tool.get('name', '')} {tool.get('title', '')} {tool.get('description', '')}"
        if _INPUT_WORDS.search(text):
            out.append(tool)
    return out[:MAX_CANDIDATES]


def is_input_required(answer: Answer) -> bool:
    result = answer.result
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def input_requests_of(result: Any) -> dict[str, Any]:
    reqs = result.get("inputRequests") if isinstance(result, dict) else None
    return reqs if isinstance(reqs, dict) else {}


# -- building a client's answers --------------------------------------------------------------


def _value(schema: Any) -> Any:
    """A value satisfying a primitive elicitation property schema, or MISSING."""
    if not isinstance(schema, dict):
        return MISSING
    if "default" in schema:
        return schema["default"]
    for key in ("enum", "examples"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    one_of = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(one_of, list) and one_of and isinstance(one_of[0], dict) and "const" in one_of[0]:
        return one_of[0]["const"]
    kind = schema.get("type")
    if kind == "string":
        fmt = schema.get("format")
        text = {"email": "conformance@example.com", "uri": "https://example.com/", "date": "2026-07-28",
                "date-time": "2026-07-28T00:00:00Z"}.get(fmt, "mcp-conformance")
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if isinstance(lo, int) and len(text) < lo:
            text += "x" * (lo - len(text))
        if isinstance(hi, int) and len(text) > hi:
            text = text[:hi]
        return text
    if kind in ("number", "integer"):
        # an integer either way: ElicitResult content values are strings, integers, booleans or string arrays
        lo, hi = schema.get("minimum"), schema.get("maximum")
        lo = lo if isinstance(lo, (int, float)) and not isinstance(lo, bool) else None
        hi = hi if isinstance(hi, (int, float)) and not isinstance(hi, bool) else None
        value = math.ceil(lo) if lo is not None else 1
        if hi is not None and value > hi:
            value = math.floor(hi)
        return value if lo is None or value >= lo else MISSING
    if kind == "boolean":
        return True
    if kind == "array":
        items = schema.get("items")
        first = _value(items) if isinstance(items, dict) else MISSING
        lo = schema.get("minItems", 0)
        if first is MISSING:
            return [] if not lo else MISSING
        return [first] * max(1, lo if isinstance(lo, int) else 1)
    return MISSING


def _elicit_result(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        return {"action": "decline"}
    if params.get("mode") == "url":
        return {"action": "accept"}
    schema = params.get("requestedSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {"action": "accept", "content": {}}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    content: dict[str, Any] = {}
    for name, sub in props.items():
        value = _value(sub)
        if value is MISSING:
            if name in required:
                return {"action": "decline"}
            continue
        content[name] = value
    return {"action": "accept", "content": content}


def input_responses(requests: dict[str, Any]) -> dict[str, Any]:
    """What a client fulfilling every input request would send back, keyed like the requests."""
    out: dict[str, Any] = {}
    for k, req in requests.items():
        method = req.get("method") if isinstance(req, dict) else None
        params = req.get("params") if isinstance(req, dict) else None
        if method == "elicitation/create":
            out[k] = _elicit_result(params)
        elif method == "sampling/createMessage":
            out[k] = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "mcp-conformance", "stopReason": "endTurn"}
        elif method == "roots/list":
            out[k] = {"roots": []}
    return out


def verdict(ctx: Any, requirement: str, ok: bool, *, passed: str, failed: str, **kw: Any) -> bool:
    """``ctx.check`` with a message for each outcome (``passed`` when ok, else ``failed``)."""
    return ctx.check(requirement, ok, message=passed if ok else failed, **kw)


# -- transcripts --------------------------------------------------------------------------------


def key(value: Any) -> str:
    """A dict key for a JSON-RPC id that keeps its JSON type ("7" and 7 differ)."""
    return dumps(value).decode()


def _requests_of(peer: RawPeer, version: str) -> Iterator[tuple[Envelope, dict[str, Any]]]:
    """Every request sent on ``peer`` whose ``_meta`` names ``version``, with that ``_meta``."""
    for entry in peer.transcript.entries:
        env = entry.envelope
        if entry.direction != Direction.OUT or env is None or env.kind is not Kind.REQUEST:
            continue
        params = env.params if isinstance(env.params, dict) else {}
        meta = params.get("_meta")
        if isinstance(meta, dict) and meta.get(PROTOCOL_VERSION_KEY) == version:
            yield env, meta


def modern_requests(peer: RawPeer, version: str) -> dict[str, str]:
    """``key(id) -> method`` of every request sent on ``peer`` whose ``_meta`` names ``version``."""
    return {key(env.id): env.method or "" for env, _ in _requests_of(peer, version)}


def extension_requests(peer: RawPeer, version: str) -> set[str]:
    """``key(id)`` of the ``version`` requests sent on ``peer`` that opted in to an extension (their
    ``_meta`` client capabilities name one): what answers them is the extension's to judge."""
    out: set[str] = set()
    for env, meta in _requests_of(peer, version):
        caps = meta.get(CLIENT_CAPABILITIES_KEY)
        if isinstance(caps, dict) and isinstance(caps.get("extensions"), dict) and caps["extensions"]:
            out.add(key(env.id))
    return out
