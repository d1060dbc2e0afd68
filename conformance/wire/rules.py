"""Predicates over parsed messages that more than one judge uses: the scenarios
(``scenarios/server/_helpers.py``, ``jsonrpc.py``) and the fuzz oracle (``conformance/fuzz/oracle.py``).
Pure: no I/O.  One copy of each reading of the spec, so that a fuzz finding and a scenario verdict
never disagree about what an acceptable answer is.
"""

from __future__ import annotations

import math
from typing import Any

from conformance.spec.versions import VERSIONS, spec
from conformance.wire.envelope import MISSING, Envelope, Kind, same_id

__all__ = [
    "barrier_method",
    "is_response",
    "loose_id",
    "unreadable_answer",
    "response_shape_problems",
    "repaired_for_schema",
    "json_kind",
    "JSONRPC_MEMBERS",
    "not_a_message",
    "empty_ping_result",
    "REQUIRED_PARAM",
    "missing_required_param",
    "elicitation_accepted",
    "non_file_roots",
    "sampling_tool_use",
]

JSONRPC_MEMBERS = frozenset({"jsonrpc", "method", "id", "params", "result", "error"})


def barrier_method(version: str) -> str:
    """``ping``, or ``server/discover`` where ping does not exist (2026-07-28)."""
    return "ping" if spec(version).ping else "server/discover"


def is_response(env: Envelope | None) -> bool:
    """A result or error response, or something shaped like one (an id without a method)."""
    if env is None:
        return False
    if env.kind in (Kind.RESULT, Kind.ERROR):
        return True
    value = env.value
    return env.kind is Kind.INVALID and isinstance(value, dict) and "method" not in value and (
        "result" in value or "error" in value
    )


def loose_id(value: Any) -> str:
    """An id compared loosely (``"7"`` ~ ``7`` ~ ``7.0``), only to explain a mismatch."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and not math.isinf(value):
        return str(int(value))
    return str(value)


def unreadable_answer(env: Envelope | None, echo: Any = MISSING) -> bool:
    """``env`` may answer a request whose id could not be used (Parse error / Invalid Request):
    a response with id null, without an id, or -- where the id could be read -- with exactly
    that id echoed (same JSON type and value; GUIDE: 'Invalid Request whose id is readable')."""
    if not is_response(env):
        return False
    assert env is not None
    if env.id is None or env.id is MISSING:
        return True
    return echo is not MISSING and same_id(env.id, echo)


# Where a version's basic/index words a response rule itself, its sentence is cited rather than
# JSON-RPC 2.0's: the error object (2025-03-26 and 2025-06-18: "errors MUST include an error code
# and message at minimum"; 2025-11-25 on: "Error responses MUST include an `error` field with a
# `code` and `message`") and, from 2025-11-25, a response without result or error ("Result
# responses MUST include a `result` field").
_ERROR_OBJECT = {"2025-03-26": "basic.error.code-message", "2025-06-18": "basic.error.code-message"}
_SPLIT_RESPONSES = "2025-11-25"  # the first version with result responses and error responses


def shape_requirement(requirement: str, problem: str, version: str | None) -> str:
    """The requirement a problem of :func:`response_shape_problems` breaks in ``version`` (None:
    the JSON-RPC 2.0 reading, whatever the version)."""
    if version is None or version not in VERSIONS:
        return requirement
    split = VERSIONS.index(version) >= VERSIONS.index(_SPLIT_RESPONSES)
    if requirement == "jsonrpc.error.object":
        return "basic.response.error-field" if split else _ERROR_OBJECT.get(version, requirement)
    if requirement == "jsonrpc.response.result-xor-error" and split and "neither" in problem:
        return "basic.response.result-field"
    return requirement


def response_shape_problems(value: Any, version: str | None = None) -> list[tuple[str, str]]:
    """``(requirement, problem)`` pairs for one JSON value the server sent, when it is a response
    (no ``method``) that breaks the base rules: result xor error, an error object with a code and
    a string message, an integer code.  ``version``: cite that version's own sentences where it
    words the rule (:func:`shape_requirement`); None: JSON-RPC 2.0's."""
    return [(shape_requirement(rid, problem, version), problem) for rid, problem in _shape_problems(value)]


def _shape_problems(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, dict) or "method" in value:
        return []
    if "id" not in value and "result" not in value and "error" not in value:
        return []
    out: list[tuple[str, str]] = []
    has_result, has_error = "result" in value, "error" in value
    if has_result and has_error:
        out.append(("jsonrpc.response.result-xor-error", 'the response carries both "result" and "error"'))
    elif not has_result and not has_error:
        out.append(("jsonrpc.response.result-xor-error", 'the response carries neither "result" nor "error"'))
    if has_error:
        err = value["error"]
        if not isinstance(err, dict):
            out.append(("jsonrpc.error.object", f'"error" is not an object: {json_kind(err)}'))
        else:
            if "code" not in err:
                out.append(("jsonrpc.error.object", 'the error object has no "code"'))
            elif isinstance(err["code"], bool) or not isinstance(err["code"], int):
                out.append(("basic.error.code-integer", f"the error code is {json_kind(err['code'])}, not an integer"))
            if not isinstance(err.get("message", MISSING), str):
                msg = err.get("message", MISSING)
                out.append(("jsonrpc.error.object", 'the error object has no "message"' if msg is MISSING else f'"message" is {json_kind(msg)}, not a string'))
    return out


def repaired_for_schema(value: Any) -> Any:
    """``value`` with the problems :func:`response_shape_problems` reports repaired (so a schema
    check reports only what else is wrong), or MISSING when there is nothing to repair."""
    if not response_shape_problems(value):
        return MISSING
    fixed = dict(value)
    if "result" in fixed and "error" in fixed:
        fixed.pop("result")
    elif "result" not in fixed and "error" not in fixed:
        fixed["result"] = {}
    if "error" in fixed:
        err = fixed["error"]
        err = dict(err) if isinstance(err, dict) else {}
        code = err.get("code", MISSING)
        if isinstance(code, bool) or not isinstance(code, int):
            err["code"] = -32603
        if not isinstance(err.get("message", MISSING), str):
            err["message"] = ""
        fixed["error"] = err
    return fixed


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    return {dict: "an object", list: "an array"}.get(type(value), type(value).__name__)


def _jsonrpc_shaped(value: Any) -> bool:
    if isinstance(value, dict):
        return bool(JSONRPC_MEMBERS & set(value))
    if isinstance(value, list):
        return any(_jsonrpc_shaped(v) for v in value)
    return False


def not_a_message(env: Envelope | None, *, truncated: bool = False) -> bool:
    """A received frame that is no JSON-RPC message at all (the stdio rule's 'anything that is not
    a valid MCP message'): blank, not JSON, or JSON without any JSON-RPC member.  Frames cut at
    our size limit are not judged."""
    if truncated:
        return False
    if env is None:
        return True  # a blank line
    if env.kind is Kind.PARSE_ERROR:
        return True
    if env.kind in (Kind.INVALID, Kind.BATCH):
        return not _jsonrpc_shaped(env.value)  # e.g. a JSON log record, a bare number or array
    return False


def elicitation_accepted(result: Any) -> bool:
    """An elicitation/create result that gives what was asked for: ``action`` accept, or content.
    A decline or cancel without content is a refusal, not support (the Inspector's fallback for
    unhandled requests answers "cancel")."""
    return isinstance(result, dict) and (result.get("action") == "accept" or "content" in result)


def non_file_roots(result: Any) -> list[Any]:
    """The ``uri`` of every root in a roots/list result that is not a ``file://`` URI."""
    roots = result.get("roots") if isinstance(result, dict) else None
    if not isinstance(roots, list):
        return []
    return [r.get("uri") for r in roots if isinstance(r, dict) and not str(r.get("uri", "")).startswith("file://")]


def sampling_tool_use(result: Any) -> bool:
    """A sampling/createMessage result that uses tools: stopReason toolUse, or a tool_use block."""
    if not isinstance(result, dict):
        return False
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    return result.get("stopReason") == "toolUse" or any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)


def empty_ping_result(result: Any) -> bool:
    """A ping answered as the spec asks: an empty object (only ``_meta`` may appear)."""
    return isinstance(result, dict) and not (set(result) - {"_meta"})


# the member each method cannot do without, and the capability that declares the method: a
# request lacking it has invalid params (-32602) -- the probes of the invalid_params scenario
REQUIRED_PARAM: dict[str, tuple[str, str]] = {
    "tools/call": ("name", "tools"),
    "prompts/get": ("name", "prompts"),
    "resources/read": ("uri", "resources"),
}


def missing_required_param(method: str | None, params: Any) -> tuple[str, str] | None:
    """``(member, capability)`` when the params object of ``method`` lacks the member the method needs."""
    need = REQUIRED_PARAM.get(method or "")
    if need is None or not isinstance(params, dict) or need[0] in params:
        return None  # (no params at all is another matter: the whole request fails the schema)
    return need
