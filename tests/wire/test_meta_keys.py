"""The `_meta` rules of basic/index, read off JSON values (conformance/wire/meta_keys.py)."""

from __future__ import annotations

import pytest

from conformance.wire import meta_keys as mk


@pytest.mark.parametrize("key", [
    "", "progressToken", "traceparent", "io.modelcontextprotocol/serverInfo", "com.example/", "openai/outputTemplate",
    "a/b", "com.example-tools.x1/name.with_inner-chars", "x/9", "A1/Z",
])
def test_keys_the_format_allows(key: str) -> None:
    assert mk.key_problems(key) == []


@pytest.mark.parametrize("key,rule", [
    ("/x", mk.PREFIX), ("a..b/x", mk.PREFIX), (".a/x", mk.PREFIX), ("a./x", mk.PREFIX), ("a/b/c", mk.PREFIX),
    ("1abc/x", mk.PREFIX), ("-abc/x", mk.PREFIX), ("abc-/x", mk.PREFIX), ("a_b/x", mk.PREFIX), ("ä/x", mk.PREFIX),
    ("_x", mk.NAME), ("x-", mk.NAME), ("com.example/.x", mk.NAME), ("com.example/x_", mk.NAME), ("é", mk.NAME),
])
def test_keys_the_format_forbids(key: str, rule: str) -> None:
    assert [r for r, _ in mk.key_problems(key)] == [rule]


def test_the_interior_of_a_name_is_not_judged() -> None:
    assert mk.key_problems("a b") == [] and mk.key_problems("com.example/a:b") == []


@pytest.mark.parametrize("key,forward", [
    ("example.com/x", True), ("mcp.example.dev/x", True), ("acme.de/x", True),
    ("com.example/x", False), ("io.modelcontextprotocol/x", False), ("dev.mcp/x", False), ("acme/x", False),
    ("acme.tools/x", True), ("acme.internal/x", False), ("x", False), ("a..com/x", False),
])
def test_forward_dns_prefixes(key: str, forward: bool) -> None:
    assert (mk.not_reverse_dns(key) is not None) is forward


@pytest.mark.parametrize("key,value,ok", [
    ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", True),
    ("traceparent", "01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-later", True),
    ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-x", False),
    ("traceparent", "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", False),
    ("traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", False),
    ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", False),
    ("traceparent", "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01", False),
    ("traceparent", "00-abc-01", False),
    ("traceparent", 7, False),
    ("tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", True),
    ("tracestate", "fw529a3039@dt=1, ,", True),
    ("tracestate", "rojo", False),
    ("tracestate", "Rojo=1", False),
    ("baggage", "userId=alice,serverNode=DF%2028,isProduction=false", True),
    ("baggage", "key1=value1;property1;property2, key2 = value2, key3=value3; propertyKey=propertyValue", True),
    ("baggage", "no value", False),
    ("baggage", 'k="quoted"', False),
    ("progressToken", 7, True),
])
def test_trace_context_values(key: str, value: object, ok: bool) -> None:
    assert (mk.trace_problem(key, value) is None) is ok


def test_meta_objects_skip_the_peers_own_data() -> None:
    msg = {"jsonrpc": "2.0", "id": 1, "result": {
        "_meta": {"a": 1},
        "tools": [{"name": "t", "_meta": {"b": 1}, "inputSchema": {"_meta": {"c": 1}}, "outputSchema": {"_meta": {}}}],
        "content": [{"type": "text", "text": "x", "_meta": {"d": 1}}],
        "structuredContent": {"_meta": {"e": 1}},
    }}
    assert [p for p, _ in mk.meta_objects(msg)] == ["$.result._meta", "$.result.tools[0]._meta", "$.result.content[0]._meta"]


def test_findings_of_one_message() -> None:
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "t", "arguments": {"_meta": {"/bad": 1}},
        "_meta": {"example.com/x": 1, "traceparent": "nope", "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}, "tracing": {}, "1x/y": {}}}}}}
    found, seen = mk.findings(msg)
    assert sorted(rule for rule, _, _ in found) == [mk.EXTENSION, mk.EXTENSION, mk.REVERSE_DNS, mk.TRACE]
    assert seen == {mk.PREFIX: 3, mk.NAME: 3, mk.REVERSE_DNS: 2, mk.TRACE: 1, mk.EXTENSION: 3}
    server = {"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"extensions": {"acme": {}}}}}
    assert [r for r, _, _ in mk.findings(server)[0]] == [mk.EXTENSION]
