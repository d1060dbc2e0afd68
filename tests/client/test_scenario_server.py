"""The suite's scenario server (the server a client under test talks to) answers whatever the
client sends: a parameter of the wrong JSON type is an Invalid params error, never our crash."""

from __future__ import annotations

import json

import pytest

from conformance.scenarios.client._server import ScenarioServer
from conformance.wire.envelope import parse_envelope


@pytest.mark.parametrize(("method", "params"), [
    ("prompts/get", {"name": {"not": "a string"}}),
    ("prompts/get", {"name": ["a", "list"]}),
    ("prompts/list", {"cursor": {"not": "a string"}}),
    ("resources/list", {"cursor": [1, 2]}),
])
def test_an_unhashable_parameter_is_an_invalid_params_error(method: str, params: dict) -> None:
    server = ScenarioServer(peer=None, version="2025-11-25")  # type: ignore[arg-type]  (default() reads no peer)
    env = parse_envelope(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    answer = server.default(env)
    assert answer.error is not None and answer.error["code"] == -32602
