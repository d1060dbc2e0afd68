"""x_mcp_header_problems: the x-mcp-header constraints of 2026-07-28 basic/transports/streamable-http
(Schema Extension), judged on the tool definitions a server lists and a client must reject."""

from __future__ import annotations

import pytest

from conformance.wire.headers import x_mcp_header_problems

SAFE = 2**53 - 1


def _schema(**props: dict) -> dict:
    return {"type": "object", "properties": props}


@pytest.mark.parametrize("schema", [
    _schema(r={"type": "string", "x-mcp-header": "Region"}),
    _schema(n={"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}}),
    _schema(r={"type": ["string", "null"], "x-mcp-header": "Region"}),  # a nullable string: null is not mirrored
    _schema(r={"enum": ["a", "b"], "x-mcp-header": "Choice"}),  # untyped, primitive values
    _schema(r={"type": "integer", "enum": [SAFE, -SAFE], "x-mcp-header": "Big"}),
    _schema(a={"type": "string", "x-mcp-header": "A"}, b={"type": "boolean", "x-mcp-header": "B-2"}),
], ids=["string", "nested", "nullable", "untyped-enum", "safe-integers", "two"])
def test_valid_annotations(schema: dict) -> None:
    assert x_mcp_header_problems(schema) == []


@pytest.mark.parametrize("schema,why", [
    (_schema(r={"type": "string", "x-mcp-header": ""}), "not a non-empty string"),
    (_schema(r={"type": "string", "x-mcp-header": "Bad Name"}), "not an HTTP field-name token"),
    (_schema(r={"type": "string", "x-mcp-header": "Bad\rName"}), "not an HTTP field-name token"),
    (_schema(a={"type": "string", "x-mcp-header": "X"}, b={"type": "string", "x-mcp-header": "x"}), "case-insensitively"),
    (_schema(r={"type": "number", "x-mcp-header": "N"}), "type 'number'"),
    (_schema(r={"type": ["string", "object"], "x-mcp-header": "S"}), "type ['string', 'object']"),
    (_schema(r={"x-mcp-header": "U"}), "no type"),
    (_schema(r={"type": "integer", "enum": [SAFE + 1], "x-mcp-header": "Big"}), "safe range"),
    (_schema(r={"type": "integer", "default": -(SAFE + 1), "x-mcp-header": "Big"}), "safe range"),
    (_schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}), "not statically reachable"),
    (_schema(a={"anyOf": [{"type": "string", "x-mcp-header": "X"}]}), "not statically reachable"),
    ({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}},
      "properties": {"a": {"$ref": "#/$defs/d"}}}, "not statically reachable"),
], ids=["empty", "space", "control", "duplicate", "number", "type-list", "untyped", "enum-range", "default-range",
        "items", "anyOf", "ref"])
def test_each_broken_constraint_is_named(schema: dict, why: str) -> None:
    problems = x_mcp_header_problems(schema)
    assert problems and any(why in p for p in problems), problems
