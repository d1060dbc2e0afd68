"""The pure helpers of the base-protocol scenarios: response shapes, the schema repair that keeps
their faults out of the schema verdict, long-running tool discovery, probes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.scenarios.server._helpers import (
    barrier_method,
    long_running_tools,
    loose_id,
    probe_message,
    repaired_for_schema,
    response_shape_problems,
)
from conformance.schema.validate import validate
from conformance.spec.methods import S2C
from conformance.wire.envelope import MISSING


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, []),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}}, []),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, []),
        ({"jsonrpc": "2.0", "method": "ping", "id": 1}, []),  # a request: not a response
        ({"jsonrpc": "2.0", "method": "notifications/x"}, []),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}, ["jsonrpc.response.result-xor-error"]),
        ({"jsonrpc": "2.0", "id": 1}, ["jsonrpc.response.result-xor-error"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "-32601", "message": "x"}}, ["basic.error.code-integer"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "x"}}, ["basic.error.code-integer"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601.5, "message": "x"}}, ["basic.error.code-integer"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}, ["jsonrpc.error.object"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "x"}}, ["jsonrpc.error.object"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": 7}}, ["jsonrpc.error.object"]),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, ["jsonrpc.error.object"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}, ["basic.error.code-integer", "jsonrpc.error.object"]),
    ],
)
def test_response_shape_problems_name_the_requirement(value, expected) -> None:
    assert sorted(req for req, _ in response_shape_problems(value)) == sorted(expected)
    assert response_shape_problems(value, "2024-11-05") == response_shape_problems(value)


@pytest.mark.parametrize(
    "value,version,expected",
    [
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}, "2025-03-26", ["basic.error.code-message"]),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, "2025-06-18", ["basic.error.code-message"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "x"}}, "2025-11-25", ["basic.response.error-field"]),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}, "2026-07-28",
         ["basic.error.code-integer", "basic.response.error-field"]),
        ({"jsonrpc": "2.0", "id": 1}, "2025-06-18", ["jsonrpc.response.result-xor-error"]),
        ({"jsonrpc": "2.0", "id": 1}, "2025-11-25", ["basic.response.result-field"]),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}, "2026-07-28",
         ["jsonrpc.response.result-xor-error"]),
    ],
)
def test_a_version_that_words_a_response_rule_is_cited_for_it(value, version, expected) -> None:
    from conformance.spec.requirements import catalogue

    got = sorted(req for req, _ in response_shape_problems(value, version))
    assert got == sorted(expected)
    assert all(version in catalogue()[req].versions for req in got)


@pytest.mark.parametrize(
    "value",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -32603, "message": "x"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "-32601", "message": "x"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}},
        {"jsonrpc": "2.0", "id": 1, "error": "boom"},
    ],
)
@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
def test_a_repaired_response_has_no_shape_problem_left_and_is_schema_valid(value, version) -> None:
    fixed = repaired_for_schema(value)
    assert fixed is not MISSING
    assert response_shape_problems(fixed) == []
    assert validate(fixed, version, S2C) == []
    assert value != fixed  # the original is left alone


def test_a_response_without_shape_problems_is_not_repaired() -> None:
    assert repaired_for_schema({"jsonrpc": "2.0", "id": 1, "result": {}}) is MISSING
    assert repaired_for_schema({"jsonrpc": "2.0", "method": "ping", "id": 1}) is MISSING


def test_loose_ids_explain_type_confusion_only() -> None:
    assert loose_id("7") == loose_id(7) == loose_id(7.0)
    assert loose_id(True) != loose_id(1)
    assert loose_id("7") != loose_id(8)


def _tool(name, props=None, required=(), description="", **extra):
    schema = {"type": "object", "properties": props or {}}
    if required:
        schema["required"] = list(required)
    return {"name": name, "description": description, "inputSchema": schema, **extra}


def test_long_running_tools_are_found_by_name_or_description_and_their_arguments_filled() -> None:
    tools = [
        _tool("echo", {"text": {"type": "string"}}, ["text"]),
        _tool("slow", {"seconds": {"type": "number"}, "steps": {"type": "integer"}}, description="reports progress"),
        _tool("trigger-long-running-operation", {"duration": {"type": "number"}, "steps": {"type": "number"}}),
        _tool("test_tool_with_progress"),
        _tool("sleepy", {"delayMs": {"type": "integer"}}, ["delayMs"]),
        _tool("waiter", {"who": {"type": "string"}}, ["who"]),  # a required argument we cannot fill
        _tool("slow_task", {"seconds": {"type": "number"}}, execution={"taskSupport": "required"}),
    ]
    found = {t.name: t for t in long_running_tools(tools, seconds=0.5, steps=3)}
    assert set(found) == {"slow", "trigger-long-running-operation", "test_tool_with_progress", "sleepy"}
    assert found["slow"].arguments == {"seconds": 0.5, "steps": 3} and found["slow"].seconds == 0.5
    assert found["trigger-long-running-operation"].arguments == {"duration": 0.5, "steps": 3}
    assert found["sleepy"].arguments == {"delayMs": 500} and found["sleepy"].seconds == 0.5
    assert found["test_tool_with_progress"].arguments == {} and found["test_tool_with_progress"].seconds is None
    assert found["slow"].progress_hint and found["test_tool_with_progress"].progress_hint
    assert not found["trigger-long-running-operation"].progress_hint
    # adjustable tools first for cancellation; progress-hinted ones first for progress
    order = [t.name for t in long_running_tools(tools, seconds=0.5)]
    assert order.index("test_tool_with_progress") > order.index("trigger-long-running-operation")
    order = [t.name for t in long_running_tools(tools, seconds=0.5, prefer_progress=True)]
    assert order[:2] == ["slow", "test_tool_with_progress"]


def test_an_integer_duration_is_rounded_up() -> None:
    (tool,) = long_running_tools([_tool("slow", {"seconds": {"type": "integer"}})], seconds=0.4)
    assert tool.arguments == {"seconds": 1} and tool.seconds == 1.0


def test_probe_messages_carry_the_per_request_meta_of_a_stateless_version() -> None:
    peer = SimpleNamespace(capabilities={}, client_info={"name": "t", "version": "1"})
    legacy = probe_message(peer, "2025-11-25", id="x", jsonrpc="1.0")
    assert legacy == {"jsonrpc": "1.0", "id": "x", "method": "ping"}
    modern = probe_message(peer, "2026-07-28", id=3)
    assert modern["method"] == barrier_method("2026-07-28") == "server/discover"
    assert modern["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert "method" not in probe_message(peer, "2025-11-25", method=MISSING)
