"""The stateless scenarios' helpers: which tools are probed for input, the inputResponses a
client would send (valid against the requested schema and the 2026-07-28 schema), the Base64
sentinel and x-mcp-header discovery, and which requests count as 2026-07-28 requests."""

from __future__ import annotations

import base64

import jsonschema
import pytest

from conformance.schema.validate import validate_definition
from conformance.scenarios.server._stateless import (
    CLIENT_CAPABILITIES_KEY,
    INPUT_FIXTURES,
    MAX_CANDIDATES,
    PROTOCOL_VERSION_KEY,
    Answer,
    describe,
    input_candidates,
    input_responses,
    key,
    modern_requests,
)
from conformance.scenarios.server.headers import _b64
from conformance.wire.headers import mirrored_params as _mirrored
from conformance.runtime.peer import RawPeer
from conformance.transports.memory import memory_pair
from conformance.wire.envelope import parse_envelope

V = "2026-07-28"


def _tool(name: str, *, required: list[str] | None = None, description: str = "", annotations: dict | None = None) -> dict:
    schema: dict = {"type": "object", "properties": {p: {"type": "string"} for p in (required or [])}}
    if required:
        schema["required"] = required
    tool = {"name": name, "description": description, "inputSchema": schema}
    if annotations is not None:
        tool["annotations"] = annotations
    return tool


def test_input_candidates_prefer_fixtures_and_skip_what_they_must_not_call() -> None:
    tools = [
        _tool("confirm_order", description="Asks the user to confirm"),
        _tool("delete_everything", description="elicits a confirmation", annotations={"destructiveHint": True}),
        _tool("ask_with_args", required=["q"], description="asks for input"),
        _tool("echo", description="Echoes text"),
        *(_tool(n) for n in reversed(INPUT_FIXTURES)),
    ]
    names = [t["name"] for t in input_candidates(tools)]
    assert names == list(INPUT_FIXTURES[:MAX_CANDIDATES])  # fixtures first, in their order, capped
    names = [t["name"] for t in input_candidates(tools[:4])]
    assert names == ["confirm_order"]  # not destructive, not needing arguments, speaks of input


ELICIT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 20},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "ratio": {"type": "number", "maximum": 0.5},
        "agree": {"type": "boolean"},
        "color": {"type": "string", "enum": ["red", "green"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 2},
    },
    "required": ["name", "email", "age", "agree", "color", "tags"],
}


def test_input_responses_satisfy_the_requested_schema_and_the_2026_schema() -> None:
    requests = {
        "form": {"method": "elicitation/create", "params": {"mode": "form", "message": "?", "requestedSchema": ELICIT_SCHEMA}},
        "url": {"method": "elicitation/create", "params": {"mode": "url", "message": "?", "url": "https://example.com/"}},
        "llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
        "roots": {"method": "roots/list", "params": {}},
    }
    responses = input_responses(requests)
    assert set(responses) == set(requests)
    assert responses["form"]["action"] == "accept"
    jsonschema.Draft202012Validator(ELICIT_SCHEMA, format_checker=jsonschema.FormatChecker()).validate(responses["form"]["content"])
    assert validate_definition(responses, V, "InputResponses") == []
    for k, definition in (("form", "ElicitResult"), ("url", "ElicitResult"), ("llm", "CreateMessageResult"), ("roots", "ListRootsResult")):
        assert validate_definition(responses[k], V, definition) == [], k


def test_an_elicitation_that_cannot_be_filled_is_declined() -> None:
    schema = {"type": "object", "properties": {"where": {"type": "object"}}, "required": ["where"]}
    responses = input_responses({"x": {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": schema}}})
    assert responses == {"x": {"action": "decline"}}


@pytest.mark.parametrize("text", ["Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?="])
def test_b64_is_the_sentinel_form_of_the_utf8_value(text: str) -> None:
    encoded = _b64(text)
    assert encoded.startswith("=?base64?") and encoded.endswith("?=")
    assert base64.b64decode(encoded[len("=?base64?"):-2], validate=True).decode("utf-8") == text


def test_mirrored_finds_x_mcp_header_through_properties_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"level": {"type": "integer", "x-mcp-header": "Level"}}},
            "free": {"type": "string"},
        },
        "$defs": {"hidden": {"type": "string", "x-mcp-header": "Hidden"}},
    }
    assert _mirrored(schema) == [(("region",), "Region", "string"), (("opts", "level"), "Level", "integer")]


@pytest.mark.anyio
async def test_modern_requests_are_those_whose_meta_names_the_version() -> None:
    ours, theirs = memory_pair()
    await theirs.start()
    async with RawPeer(ours, version=V) as peer:
        auto = await peer.request("tools/list")
        legacy = await peer.request("initialize", {"protocolVersion": "2025-11-25"}, meta=None)
        other = await peer.request("tools/list", meta={PROTOCOL_VERSION_KEY: "1900-01-01"})
        explicit = await peer.request("tools/call", {"name": "x", "_meta": {PROTOCOL_VERSION_KEY: V, CLIENT_CAPABILITIES_KEY: {}}}, meta=None, id="s")
        sent = modern_requests(peer, V)
    await theirs.aclose()
    assert sent == {key(auto): "tools/list", key(explicit): "tools/call"}
    assert key(legacy) not in sent and key(other) not in sent
    assert key("7") != key(7)


def test_describe_names_the_code_the_message_and_the_status() -> None:
    env = parse_envelope(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"' + b"x" * 200 + b'"}}')
    text = describe(Answer(1, env, type("Ex", (), {"status": 400})()))
    assert text.startswith("error -32020 'xxx") and text.endswith("...' (HTTP 400)")
    assert describe(Answer(1, None)) == "no answer"
