"""The streamable HTTP request headers that mirror a message body (2026-07-28).  No I/O.

``Mcp-Method`` names the method, ``Mcp-Name`` the tool, prompt, resource or task a request is about, and
``Mcp-Param-<Name>`` the tool arguments its input schema marks with ``x-mcp-header``; a value that
is not plain visible ASCII travels as ``=?base64?<base64 of its UTF-8>?=`` (Value Encoding).  The
suite's HTTP transport, the reference server and the reference client share these functions.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

__all__ = ["NAMED_PARAM", "header_value", "request_metadata_headers", "metadata_headers", "mirrored_params",
           "param_header_value", "x_mcp_header_problems"]

# the tasks extension (2026-07-28, experimental-ext-tasks): "When tasks/get, tasks/update, or
# tasks/cancel is sent over the Streamable HTTP transport, the client MUST set the Mcp-Name header
# to the value of params.taskId"
NAMED_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


def header_value(text: str) -> str:
    """A header-safe form of ``text``: as is, or ``=?base64?...?=`` (2026-07-28 Value Encoding)."""
    safe = (
        text == text.strip(" \t")
        and all(c == "\t" or " " <= c <= "~" for c in text)
        and not (text.startswith("=?base64?") and text.endswith("?="))
    )
    if safe:
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def metadata_headers(message: Any) -> list[tuple[str, str]]:
    """``Mcp-Method`` / ``Mcp-Name`` for a parsed message (nothing if it is not an object with a method)."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return []
    method = message["method"]
    out = [("Mcp-Method", header_value(method))]
    key = NAMED_PARAM.get(method)
    params = message.get("params")
    if key is not None and isinstance(params, dict) and isinstance(params.get(key), str):
        out.append(("Mcp-Name", header_value(params[key])))
    return out


def request_metadata_headers(body: bytes) -> list[tuple[str, str]]:
    """``Mcp-Method`` / ``Mcp-Name`` derived from a message body (nothing if it is not a JSON object with a method)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return []
    return metadata_headers(value)


def mirrored_params(schema: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str, str]]:
    """(property path, header name, type) of every ``x-mcp-header`` reachable through ``properties``."""
    out: list[tuple[tuple[str, ...], str, str]] = []
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return out
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        header = sub.get("x-mcp-header")
        if isinstance(header, str) and header:
            out.append(((*path, name), header, str(sub.get("type", "string"))))
        out.extend(mirrored_params(sub, (*path, name)))
    return out


def param_header_value(value: Any) -> str:
    """How an argument travels in its ``Mcp-Param-*`` header: booleans as true/false, numbers as
    JSON numbers, strings encoded as :func:`header_value` says."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return header_value(str(value))


_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 tchar
_PRIMITIVE = {"integer", "string", "boolean"}
_SAFE_INTEGER = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER


def _declared_values(node: dict[str, Any]) -> list[Any]:
    values = list(node["enum"]) if isinstance(node.get("enum"), list) else []
    return values + [node[k] for k in ("const", "default") if k in node]


def _type_problem(node: dict[str, Any]) -> str | None:
    """Why an annotated property is not of a primitive type (integer, string, boolean); a type
    list of those and ``null`` is one (the null value is simply not mirrored), and so is an untyped
    property whose ``enum`` / ``const`` values all are."""
    typ = node.get("type")
    if isinstance(typ, str):
        return None if typ in _PRIMITIVE else f"a property of type {typ!r}"
    if isinstance(typ, list):
        ok = all(t in _PRIMITIVE or t == "null" for t in typ) and any(t in _PRIMITIVE for t in typ)
        return None if ok else f"a property of type {typ!r}"
    if typ is None and ("enum" in node or "const" in node):
        values = [v for v in _declared_values(node) if v is not None]
        if values and all(isinstance(v, (str, bool)) or (isinstance(v, int)) for v in values):
            return None
    return f"a property of type {typ!r}" if typ is not None else "a property with no type"


def _range_problem(node: dict[str, Any]) -> str | None:
    """An integer value the schema itself declares (enum, const, default) outside JavaScript's safe range."""
    for v in _declared_values(node):
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > _SAFE_INTEGER:
            return f"declares the integer {v}, outside the safe range for JavaScript"
    return None


def x_mcp_header_problems(schema: Any) -> list[str]:
    """Why a tool's ``inputSchema`` breaks the ``x-mcp-header`` constraints (2026-07-28 server/tools
    and basic/transports/streamable-http: not empty, an HTTP token, case-insensitively unique, on
    integer/string/boolean properties only, statically reachable through ``properties`` keys);
    empty when it keeps them.  Clients on streamable HTTP MUST exclude such a tool."""
    problems: list[str] = []
    reachable: set[int] = set()
    seen: dict[str, str] = {}
    for path, name, _typ in mirrored_params(schema):
        node: Any = schema
        for step in path:
            node = node["properties"][step]
        reachable.add(id(node))
        where = "/".join(path)
        if not name:
            problems.append(f"{where}: x-mcp-header is empty")
        elif not _TOKEN.fullmatch(name):
            problems.append(f"{where}: x-mcp-header {name!r} is not an HTTP field-name token")
        kind = _type_problem(node)
        if kind is not None:
            problems.append(f"{where}: x-mcp-header on {kind} (only integer, string, boolean)")
        out_of_range = _range_problem(node)
        if out_of_range is not None:
            problems.append(f"{where}: x-mcp-header on a property that {out_of_range}")
        folded = name.lower()
        if folded in seen:
            problems.append(f"{where}: x-mcp-header {name!r} repeats {seen[folded]!r} (case-insensitively)")
        seen[folded] = name

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "x-mcp-header" in node and id(node) not in reachable:
                value = node["x-mcp-header"]
                if not (isinstance(value, str) and value):
                    problems.append(f"x-mcp-header {value!r} is not a non-empty string")
                else:
                    problems.append(f"x-mcp-header {value!r} is not statically reachable through properties")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return problems
