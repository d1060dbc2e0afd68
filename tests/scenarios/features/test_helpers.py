"""The feature scenarios' helpers: which tools are safe to call, arguments built from schemas,
JSON Schema dialects, base64 and MIME checks, and the pagination walk over a real peer."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from conformance.runtime.peer import RawPeer
from conformance.scenarios.server import _features as F
from conformance.transports.base import TransportClosed
from conformance.transports.memory import memory_pair

# -- arguments from schemas ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "object"}, {}),
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {}),  # only required properties
        ({"type": "object", "properties": {"t": {"type": "string"}}, "required": ["t"]}, {"t": "mcp-conformance"}),
        ({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}, "required": ["n"]}, {"n": 5}),
        ({"type": "object", "properties": {"n": {"type": "number", "maximum": 0}}, "required": ["n"]}, {"n": 0}),
        ({"type": "object", "properties": {"c": {"enum": ["x", "y"]}}, "required": ["c"]}, {"c": "x"}),
        ({"type": "object", "properties": {"c": {"type": "string", "default": "d"}}, "required": ["c"]}, {"c": "d"}),
        ({"type": "object", "properties": {"b": {"type": ["null", "boolean"]}}, "required": ["b"]}, {"b": False}),
        ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}, "required": ["s"]}, {"s": "mcp"}),
        (
            {"type": "object", "properties": {"o": {"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]}}, "required": ["o"]},
            {"o": {"k": 1}},
        ),
    ],
)
def test_synth_args_builds_the_smallest_valid_arguments(schema: dict, expected: dict) -> None:
    args = F.synth_args(schema)
    assert args == expected
    errors, _ = F.instance_errors(schema, args)
    assert errors == []


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {"type": "array"},
        {"type": "object", "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}}, "required": ["p"]},  # built value fails
        {"type": "object", "properties": {"x": {}}, "required": ["x"]},  # nothing to go on
        {"type": "object", "properties": {"l": {"type": "array", "minItems": 1}}, "required": ["l"]},
        {"type": "object", "required": ["undeclared"]},
    ],
)
def test_synth_args_refuses_what_it_cannot_build(schema: Any) -> None:
    assert F.synth_args(schema) is None


# -- which tools are called ---------------------------------------------------------------------


def _tool(name: str, *, read_only: bool | None = None, schema: dict | None = None, output: bool = False, **extra: Any) -> dict:
    tool: dict[str, Any] = {"name": name, "inputSchema": schema or {"type": "object"}}
    if read_only is not None:
        tool["annotations"] = {"readOnlyHint": read_only, **extra.pop("annotations", {})}
    if output:
        tool["outputSchema"] = {"type": "object"}
    tool.update(extra)
    return tool


def test_safe_tools_without_fixtures_calls_only_read_only_tools_with_an_output_schema() -> None:
    tools = [
        _tool("write", read_only=False, output=True),
        _tool("plain", output=True),  # no annotations: may change anything
        _tool("reader", read_only=True),  # nothing to check beyond the schema (and it may reveal things)
        _tool("structured", read_only=True, output=True),
        _tool("boom", read_only=True, output=True, annotations={"destructiveHint": True}),
        _tool("task", read_only=True, output=True, execution={"taskSupport": "required"}),
        _tool("pattern", read_only=True, output=True,
              schema={"type": "object", "properties": {"p": {"type": "string", "pattern": "^x$"}}, "required": ["p"]}),
        _tool("args", read_only=True, output=True, schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
    ]
    plans, how = F.safe_tools(tools)
    assert [(p.name, p.args) for p in plans] == [("structured", {}), ("args", {"n": 1})]
    assert not any(p.fixture for p in plans)
    assert "structured" in how and "reader" not in how


def test_safe_tools_puts_the_fixtures_first() -> None:
    tools = [
        _tool("structured", read_only=True, output=True),
        _tool("test_error_handling"),
        _tool("reader", read_only=True),
        _tool("test_simple_text"),
    ]
    plans, how = F.safe_tools(tools)
    assert [(p.name, p.fixture, p.args) for p in plans] == [
        ("test_simple_text", True, {}),
        ("test_error_handling", True, {}),
        ("structured", False, {}),
    ]
    assert "test_simple_text" in how


def test_safe_tools_caps_the_generic_calls() -> None:
    plans, _ = F.safe_tools([_tool(f"r{i}", read_only=True, output=True) for i in range(20)])
    assert len(plans) == F.MAX_GENERIC_CALLS
    assert F.safe_tools([_tool("w", read_only=False)]) == ([], "none")


# -- schemas, content ---------------------------------------------------------------------------


def test_dialects_known_default_and_unknown() -> None:
    assert F.dialect_validator({})[1].startswith("2020-12")
    cls, name = F.dialect_validator({"$schema": "http://json-schema.org/draft-07/schema#"})
    assert cls is not None and "draft-07" in name
    cls, _ = F.dialect_validator({"$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert cls is not None
    assert F.dialect_validator({"$schema": "https://example.com/my-dialect"})[0] is None


def test_schema_errors() -> None:
    assert F.schema_errors({"type": "object", "properties": {"a": {"type": "string"}}})[0] == []
    errors, _ = F.schema_errors({"type": "object", "properties": {"a": {"type": "numbr"}}})
    assert errors and "properties/a/type" in errors[0]
    assert F.schema_errors({"$schema": "urn:unknown"})[0] is None
    assert F.schema_errors(None)[0]


def test_instance_errors_cannot_judge_against_an_invalid_schema() -> None:
    assert F.instance_errors({"type": "object", "required": ["a"]}, {})[0]
    assert F.instance_errors({"type": "object", "required": ["a"]}, {"a": 1})[0] == []
    assert F.instance_errors({"type": "numbr"}, 1)[0] is None


@pytest.mark.parametrize("value, ok", [("", True), ("aGVsbG8=", True), ("aGVsbG8", False), ("aGVs\nbG8=", False), ("not base64!", False), (5, False)])
def test_is_base64(value: Any, ok: bool) -> None:
    assert F.is_base64(value) is ok


@pytest.mark.parametrize("value, ok", [("image/png", True), ("text/plain; charset=utf-8", True), ("application/vnd.api+json", True), ("png", False), ("", False), (None, False), ("image/", False)])
def test_is_mime_type(value: Any, ok: bool) -> None:
    assert F.is_mime_type(value) is ok


def test_duplicates_and_declared() -> None:
    assert F.duplicates(["a", "b", "a", "c", "a", {"x": 1}, {"x": 1}]) == ["a", {"x": 1}]
    caps = {"tools": {}, "resources": {"subscribe": True, "listChanged": False}, "logging": None}
    assert F.declared(caps, "tools") and F.declared(caps, "resources.subscribe")
    assert not F.declared(caps, "resources.listChanged") and not F.declared(caps, "logging") and not F.declared(caps, "prompts")


# -- the pagination walk ------------------------------------------------------------------------


async def _pager(transport: Any, pages: dict[Any, Any]) -> None:
    """A server answering tools/list from ``pages``: cursor -> result (or ("error", code))."""
    while True:
        try:
            item = await transport.receive()
        except TransportClosed:
            return
        msg = json.loads(item.raw)
        cursor = (msg.get("params") or {}).get("cursor")
        page = pages.get(cursor, ("error", -32602))
        if isinstance(page, tuple):
            body = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": page[1], "message": "nope"}}
        else:
            body = {"jsonrpc": "2.0", "id": msg["id"], "result": page}
        await transport.send(json.dumps(body).encode())


async def _walk(pages: dict[Any, Any]) -> F.Listing:
    client, server = memory_pair()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pager, server, pages)
            async with RawPeer(client, version="2025-11-25", validate=False, timeout=2) as peer:
                listing = await F.list_all(peer, "tools/list")
    finally:
        await server.aclose()
        await client.aclose()
    return listing


def _tools(*names: str, cursor: str | None = None) -> dict:
    out: dict[str, Any] = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
    if cursor is not None:
        out["nextCursor"] = cursor
    return out


@pytest.mark.anyio
async def test_list_all_follows_every_cursor_including_the_empty_string() -> None:
    listing = await _walk({None: _tools("a", cursor="c1"), "c1": _tools("b", cursor=""), "": _tools("c")})
    assert listing.complete
    assert [p.cursor for p in listing.pages] == [None, "c1", ""]
    assert listing.ids("name") == ["a", "b", "c"]


@pytest.mark.anyio
async def test_list_all_stops_on_a_repeated_cursor() -> None:
    listing = await _walk({None: _tools("a", cursor="c1"), "c1": _tools("b", cursor="c1")})
    assert listing.problem_kind == "cursor-repeats" and not listing.complete
    assert listing.ids("name") == ["a", "b"]


@pytest.mark.anyio
async def test_list_all_keeps_the_error_of_a_later_page() -> None:
    listing = await _walk({None: _tools("a", cursor="gone")})
    assert listing.error is not None and listing.error.error_code == -32602
    assert listing.error_cursor == "gone" and listing.first is listing.pages[0].env


@pytest.mark.anyio
async def test_list_all_first_page_error() -> None:
    listing = await _walk({None: ("error", -32601)})
    assert listing.pages == [] and listing.first is listing.error and listing.error_cursor is None
