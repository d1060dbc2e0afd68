"""The tasks scenarios' pure helpers: which tools they call and how timestamps are read."""

from __future__ import annotations

import pytest

from conformance.scenarios.server.tasks import callable_tools, iso_timestamp, task_support


@pytest.mark.parametrize("value", [
    "2025-11-25T10:30:00Z", "2025-11-25T10:30:00.123Z", "2025-11-25T10:30:00+01:00", "2025-11-25T10:30:00.5-0530",
    "2025-11-25t10:30:00z", "20251125T103000Z", "2025-11-25T10:30:00",
])
def test_iso_8601_date_times_are_accepted(value: str) -> None:
    assert iso_timestamp(value)


@pytest.mark.parametrize("value", ["a moment ago", "2025-11-25", "10:30:00Z", "1764066600", 1764066600, None, "", "2025-11-25T10:30:00Zjunk"])
def test_anything_else_is_not_a_timestamp(value) -> None:
    assert not iso_timestamp(value)


def _tool(name: str, *, support: str | None = None, annotations: dict | None = None, schema: dict | None = None, description: str = "") -> dict:
    tool: dict = {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}
    if support is not None:
        tool["execution"] = {"taskSupport": support}
    if annotations is not None:
        tool["annotations"] = annotations
    return tool


def test_task_support_defaults_to_forbidden() -> None:
    assert task_support(_tool("a")) == "forbidden"
    assert task_support(_tool("a", support="bogus")) == "forbidden"
    assert task_support(_tool("a", support="required")) == "required"


def test_only_harmless_tools_with_buildable_arguments_are_called() -> None:
    listed = [
        _tool("reader", support="optional", annotations={"readOnlyHint": True}),
        _tool("closed", support="required", annotations={"destructiveHint": False, "openWorldHint": False}),
        _tool("writer", support="optional", annotations={"readOnlyHint": False}),  # may change things
        _tool("open", support="optional", annotations={"destructiveHint": False}),  # reaches outside (default)
        _tool("wiper", support="optional", annotations={"readOnlyHint": True, "destructiveHint": True}),
        _tool("needs", support="optional", annotations={"readOnlyHint": True},
              schema={"type": "object", "properties": {"x": {"type": "array", "minItems": 1}}, "required": ["x"]}),
        _tool("sleeper", support="optional", schema={"type": "object", "properties": {"seconds": {"type": "number"}}}),
    ]
    got = {t.name: t for t in callable_tools(listed, seconds=1.5)}
    assert sorted(got) == ["closed", "reader", "sleeper"]
    assert got["sleeper"].seconds == 1.5 and got["sleeper"].arguments == {"seconds": 1.5}
    assert got["reader"].seconds is None and got["reader"].arguments == {}
    assert got["closed"].support == "required"
