"""Random and malformed inbound messages for the reference server, and the oracle for them.

``inputs()`` generates one inbound frame: a JSON-RPC-shaped message (valid or subtly broken: wrong
``jsonrpc``, ids of every JSON type, unknown and removed methods, params of the wrong shape, modern
``_meta`` with good and bad versions), an arbitrary JSON value, a batch, or bytes that are not JSON.
``expected_answers()`` says how many messages the server must send back for it: exactly one for a
request (JSON-RPC 2.0: "The Server MUST reply with the same value in the Response object"; an
unreadable one gets an error with id null), none for a notification or a response, one error for
anything else.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from conformance.spec.methods import METHODS

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"

# tools that finish at once (others wait: slow, progress/logging delays, server-to-client requests)
SAFE_TOOLS = ["echo", "add", "add_structured", "fail", "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types", "test_error_handling", "json_schema_2020_12_tool", "test_custom_header", "test_input_required_result_elicitation", "test_missing_capability", "test_input_required_result_tampered_state", "list_roots", "test_sampling"]
LONG_RUNNING = {"slow", "ping_client", "test_tool_with_logging", "test_tool_with_progress", "test_reconnection", "test_streaming_elicitation", "test_logging_tool"}
SKIP_METHODS = {"subscriptions/listen"}  # lives until cancelled

_scalar = st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
json_values = st.recursive(_scalar, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=10)
_ids = st.integers(-(2**53), 2**53) | st.text(max_size=8) | st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.just([]) | st.just({})
_methods = st.sampled_from(sorted({m.name for m in METHODS} - SKIP_METHODS) + ["no/such-method", "", "initialize"]) | st.text(max_size=12).filter(lambda m: m not in SKIP_METHODS)
_meta_modern = st.fixed_dictionaries({PV: st.sampled_from(["2026-07-28", "2026-07-28", "2025-11-25", "1999-01-01"]) | st.integers(), CAPS: st.just({}) | st.just({"elicitation": {}, "sampling": {}}) | json_values})
_tool_params = st.fixed_dictionaries(
    {"name": st.sampled_from(SAFE_TOOLS) | st.text(max_size=10).filter(lambda n: n not in LONG_RUNNING)},
    optional={"arguments": st.dictionaries(st.sampled_from(["text", "a", "b", "message", "prompt", "region", "x"]), json_values, max_size=3) | json_values, "_meta": _meta_modern | json_values},
)
_params = st.dictionaries(st.sampled_from(["name", "uri", "cursor", "level", "protocolVersion", "capabilities", "clientInfo", "ref", "argument", "requestId", "x"]), json_values, max_size=4) | json_values
_params_modern = _params.map(lambda p: p if isinstance(p, dict) else {}).flatmap(lambda p: _meta_modern.map(lambda m: {**p, "_meta": m}))


@st.composite
def messages(draw: st.DrawFn) -> Any:
    msg: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        msg["jsonrpc"] = "2.0"
    else:
        msg["jsonrpc"] = draw(json_values)
    kind = draw(st.sampled_from(["request", "request", "request", "notification", "response", "odd"]))
    if kind in ("request", "notification"):
        method = draw(_methods)
        msg["method"] = method if draw(st.integers(0, 19)) else draw(json_values)
        if kind == "request":
            msg["id"] = draw(_ids)
        which = draw(st.integers(0, 3))
        if method == "tools/call" and which:
            msg["params"] = draw(_tool_params)
        elif which == 1:
            msg["params"] = draw(_params_modern)
        elif which == 2:
            msg["params"] = draw(_params)
    elif kind == "response":
        msg["id"] = draw(_ids)
        msg[draw(st.sampled_from(["result", "error"]))] = draw(json_values)
    else:
        for key in draw(st.lists(st.sampled_from(["id", "result", "error", "params", "x"]), max_size=3)):
            msg[key] = draw(json_values)
    return msg


def inputs() -> st.SearchStrategy[Any]:
    """One inbound frame: a dict/list/scalar (sent as JSON) or ``bytes`` (sent as they are)."""
    raw = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))
    truncated = messages().map(lambda m: json.dumps(m)[: max(1, len(json.dumps(m)) // 2)].encode())
    return st.one_of(
        messages(),
        messages(),
        messages(),
        json_values,
        st.lists(messages(), max_size=4),
        raw,
        truncated,
    )


def is_long_running(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    for it in items:
        if isinstance(it, dict) and isinstance(it.get("method"), str) and it["method"] in SKIP_METHODS:
            return True
    return False


def expected_answers(value: Any, *, batching: bool) -> int:
    """How many messages the server must send in reply to ``value`` (bytes: sent verbatim)."""
    if isinstance(value, bytes):
        if not value.strip():
            return 0
        try:
            parsed = json.loads(value.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return 1
        return expected_answers(parsed, batching=batching)
    if isinstance(value, list):
        if not value or not batching:
            return 1
        return 1 if any(expected_answers(v, batching=False) for v in value) else 0
    if not isinstance(value, dict):
        return 1
    if "method" in value:
        return 1 if "id" in value else 0
    if "result" in value or "error" in value:
        return 0
    return 1
