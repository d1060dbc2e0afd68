"""validate() and validate_definition(): official examples, hand-picked messages per version,
the rules the schemas cannot express, union reporting, formats."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.schema import Finding, SchemaError, load_schema, validate, validate_definition
from conformance.schema.loader import PINS
from conformance.schema.validate import FORMAT_CHECKER, FormatNotCheckedWarning, unchecked_formats
from conformance.spec.methods import C2S, METHODS, S2C, lookup
from conformance.spec.versions import VERSIONS, spec

vmod = importlib.import_module("conformance.schema.validate")  # the attribute is the function

V26 = "2026-07-28"
HANDSHAKE = [v for v in VERSIONS if spec(v).handshake]
EXAMPLES_DIR = Path(__file__).resolve().parents[3] / "shared" / "mcp-spec" / "schemas" / V26 / "examples"


def _examples_root() -> Path:
    import os

    env = os.environ.get("MCP_CONFORMANCE_SCHEMA_DIR")
    return Path(env) / V26 / "examples" if env else EXAMPLES_DIR


EXAMPLES = sorted(_examples_root().glob("*/*.json"))


def _defs(version: str) -> dict[str, Any]:
    return load_schema(version)[PINS[version].definitions_key]


def _assert_pointers(version: str, findings: list[Finding]) -> None:
    """Every schema path is a rule name or a JSON pointer that exists in the official file."""
    schema = load_schema(version)
    for f in findings:
        if f.schema_path.startswith("rule:"):
            continue
        assert f.schema_path.startswith("#/"), f
        node: Any = schema
        for token in f.schema_path[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            node = node[int(token)] if isinstance(node, list) else node[token]


def _rules(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.json_path, f.schema_path) for f in findings if f.schema_path.startswith("rule:")]


# -- builders: a valid message for each version -------------------------------------------------


def _params(version: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out = dict(params or {})
    if spec(version).stateless:
        out["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        }
    return out


def _request(version: str, method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    p = _params(version, params)
    if p:
        msg["params"] = p
    return msg


def _result(version: str, body: dict[str, Any], *, cacheable: bool = False, id: Any = 1) -> dict[str, Any]:
    body = dict(body)
    if spec(version).result_type_required:
        body["resultType"] = "complete"
        if cacheable:
            body.update(ttlMs=0, cacheScope="private")
    return {"jsonrpc": "2.0", "id": id, "result": body}


TOOL = {"name": "echo", "description": "Echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


# -- official examples (2026-07-28) -------------------------------------------------------------


def test_examples_are_there() -> None:
    assert len(EXAMPLES) > 80


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_official_example_validates_against_its_definition(path: Path) -> None:
    assert validate_definition(json.loads(path.read_text()), V26, path.parent.name) == []


def _as_message(path: Path) -> tuple[Any, str, str | None] | None:
    """(message, direction, answering) for examples that are whole JSON-RPC messages."""
    value = json.loads(path.read_text())
    name = path.parent.name
    if not (isinstance(value, dict) and "jsonrpc" in value):
        return None
    if "method" in value:
        for direction in (C2S, S2C):
            method = lookup(value["method"], direction, V26)
            if method is not None and method.request_def == name:
                return value, direction, None
        raise AssertionError(f"{name}: no method table entry sends {value['method']!r}")
    if name.endswith("ResultResponse"):
        (method,) = [m for m in METHODS if m.exists_in(V26) and f"{m.result_def}Response" == name]
        return value, S2C, method.name
    return value, S2C, None


MESSAGE_EXAMPLES = [p for p in EXAMPLES if _as_message(p) is not None]

# Upstream examples that break a MUST of their own revision.  caching.mdx: "Servers MUST include
# caching hints on results with resultType: "complete" returned by ... resources/read", and
# ReadResourceResult requires ttlMs and cacheScope; this example has neither.  It passes its own
# definition only because ReadResourceResultResponse's result is anyOf(InputRequiredResult, ...)
# and InputRequiredResult accepts any object with a resultType.
UPSTREAM_DEFECTS = {
    "ReadResourceResultResponse/read-resource-result-response": {
        "'cacheScope' is a required property",
        "'ttlMs' is a required property",
    },
}


@pytest.mark.parametrize("path", MESSAGE_EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_official_example_validates_as_a_message(path: Path) -> None:
    message, direction, answering = _as_message(path)  # type: ignore[misc]
    findings = validate(message, V26, direction, answering=answering)
    expected = UPSTREAM_DEFECTS.get(f"{path.parent.name}/{path.stem}", set())
    assert {f.message for f in findings} == expected
    assert all(f.json_path == "$.result" for f in findings)


def _required(version: str, definition: str) -> list[str]:
    body = _defs(version)[definition]
    while "$ref" in body and "required" not in body:
        body = _defs(version)[body["$ref"].rsplit("/", 1)[-1]]
    return list(body.get("required", []))


REQUIRED_CASES = [
    (p, key)
    for p in EXAMPLES
    if isinstance(json.loads(p.read_text()), dict)
    for key in _required(V26, p.parent.name)
]


@pytest.mark.parametrize("path,key", REQUIRED_CASES, ids=lambda x: x.stem if isinstance(x, Path) else x)
def test_removing_a_required_member_from_an_example_is_reported(path: Path, key: str) -> None:
    value = json.loads(path.read_text())
    value.pop(key, None)
    findings = validate_definition(value, V26, path.parent.name)
    assert any(f.json_path == "$" and repr(key) in f.message for f in findings), findings
    assert all(f.definition == path.parent.name for f in findings)
    _assert_pointers(V26, findings)


# -- valid messages, every version -------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_valid_messages(version: str) -> None:
    cases: list[tuple[Any, str, str | None]] = [
        (_request(version, "tools/list"), C2S, None),
        (_request(version, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id="7"), C2S, None),
        (_result(version, {"tools": [TOOL]}, cacheable=True, id="7"), S2C, "tools/list"),
        (_result(version, {"content": [{"type": "text", "text": "hi"}]}), S2C, "tools/call"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}, S2C, None),
        ({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, S2C, None),
        ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "7"}}, C2S, None),
    ]
    if spec(version).handshake:
        init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        cases += [
            (_request(version, "initialize", init), C2S, None),
            (_result(version, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}), S2C, "initialize"),
            ({"jsonrpc": "2.0", "method": "notifications/initialized"}, C2S, None),
        ]
    if spec(version).ping:
        cases += [(_request(version, "ping"), S2C, None), ({"jsonrpc": "2.0", "id": 1, "result": {}}, C2S, "ping")]
    for message, direction, answering in cases:
        assert validate(message, version, direction, answering=answering) == [], message


@pytest.mark.parametrize("version", VERSIONS)
def test_string_id_seven_is_a_valid_id(version: str) -> None:
    assert validate(_request(version, "tools/list", id="7"), version, C2S) == []
    assert validate(_result(version, {"tools": []}, cacheable=True, id="7"), version, S2C, answering="tools/list") == []


# -- invalid messages ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", HANDSHAKE)
def test_initialize_result_without_server_info(version: str) -> None:
    message = _result(version, {"protocolVersion": version, "capabilities": {}})
    findings = validate(message, version, S2C, answering="initialize")
    assert [(f.json_path, f.definition) for f in findings] == [("$.result", "InitializeResult")]
    assert "'serverInfo' is a required property" in findings[0].message
    assert findings[0].schema_path == f"#/{PINS[version].definitions_key}/InitializeResult/required"
    _assert_pointers(version, findings)


@pytest.mark.parametrize("version", VERSIONS)
def test_tools_list_result_with_a_bad_tool(version: str) -> None:
    message = _result(version, {"tools": [TOOL, {"name": 42, "inputSchema": {"type": "object"}}]}, cacheable=True)
    findings = validate(message, version, S2C, answering="tools/list")
    assert [(f.json_path, f.schema_path, f.definition) for f in findings] == [
        ("$.result.tools[1].name", f"#/{PINS[version].definitions_key}/Tool/properties/name/type", "ListToolsResult")
    ]
    # without `answering` only the envelope is checked: the bad tool goes unnoticed
    assert validate(message, version, S2C) == []


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("code", ["-32601", 1.5, None])
def test_error_with_a_non_integer_code(version: str, code: Any) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "nope"}}
    findings = validate(message, version, S2C)
    assert [f.json_path for f in findings] == ["$.error.code"]
    assert findings[0].definition in ("JSONRPCError", "JSONRPCErrorResponse")
    _assert_pointers(version, findings)


@pytest.mark.parametrize("version", VERSIONS)
def test_null_id_request_is_its_own_rule(version: str) -> None:
    findings = validate(_request(version, "tools/list", id=None), version, C2S)
    assert _rules(findings) == [("$.id", "rule:id-not-null")]
    assert len(findings) == 1  # the schema's own complaint about $.id is folded into the rule


@pytest.mark.parametrize("version", VERSIONS)
def test_null_id_result_is_flagged(version: str) -> None:
    findings = validate(_result(version, {"tools": []}, cacheable=True, id=None), version, S2C, answering="tools/list")
    assert _rules(findings) == [("$.id", "rule:id-not-null")] and len(findings) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_null_id_parse_error_response_is_accepted(version: str) -> None:
    message = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert validate(message, version, S2C) == []
    # ... but a null id does not excuse the rest of the error object
    bad = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}}
    assert [f.json_path for f in validate(bad, version, S2C)] == ["$.error"]


@pytest.mark.parametrize("version", VERSIONS)
def test_error_response_without_id(version: str) -> None:
    message = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    findings = validate(message, version, S2C)
    if "JSONRPCErrorResponse" in _defs(version):  # 2025-11-25 on: id optional in the schema
        assert findings == []
    else:
        assert [(f.json_path, f.message) for f in findings] == [("$", "'id' is a required property")]


@pytest.mark.parametrize("version", VERSIONS)
def test_id_of_wrong_type(version: str) -> None:
    for rid in (1.5, True, [1], {"a": 1}):
        findings = validate(_request(version, "tools/list", id=rid), version, C2S)
        assert [f.json_path for f in findings] == ["$.id"], rid
        assert findings[0].schema_path.endswith("/RequestId/type")


@pytest.mark.parametrize("version", VERSIONS)
def test_batch_is_legal_only_in_2025_03_26(version: str) -> None:
    batch = [_request(version, "tools/list", id=1), {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 0}}]
    findings = validate(batch, version, C2S)
    if spec(version).batching:
        assert findings == []
    else:
        assert _rules(findings) == [("$", "rule:batch-not-allowed")] and len(findings) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_batch_items_are_validated(version: str) -> None:
    batch = [_request(version, "tools/list", id=1), {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": _params(version, {"name": 7})}]
    findings = validate(batch, version, C2S)
    assert "$[1].params.name" in [f.json_path for f in findings]


def test_initialize_in_a_batch() -> None:
    version = "2025-03-26"
    init = _request(version, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    findings = validate([init, {"jsonrpc": "2.0", "method": "notifications/initialized"}], version, C2S)
    assert _rules(findings) == [("$[0]", "rule:initialize-in-batch")] and len(findings) == 1


def test_empty_and_mixed_batches() -> None:
    version = "2025-03-26"
    assert _rules(validate([], version, C2S)) == [("$", "rule:empty-batch")]
    mixed = [_request(version, "ping"), {"jsonrpc": "2.0", "id": 9, "result": {}}]
    assert _rules(validate(mixed, version, C2S)) == [("$", "rule:batch-mixed")]
    nested = [[_request(version, "ping")]]
    assert _rules(validate(nested, version, C2S)) == [("$[0]", "rule:not-a-message")]


def test_batch_responses_with_an_answering_map_keep_id_types_apart() -> None:
    version = "2025-03-26"
    batch = [{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": "1", "result": {"tools": []}}]
    assert validate(batch, version, S2C, answering={"1": "tools/list", 1: "ping"}) == []
    findings = validate(batch, version, S2C, answering={1: "tools/list", "1": "ping"})
    assert [(f.json_path, f.definition) for f in findings] == [("$[0].result", "ListToolsResult")]


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_method_is_checked_against_the_envelope_only(version: str) -> None:
    assert validate({"jsonrpc": "2.0", "id": 1, "method": "no/such-method", "params": {"x": 1}}, version, C2S) == []
    assert validate({"jsonrpc": "2.0", "method": "notifications/whatever"}, version, S2C) == []
    # a known method sent the wrong way is unknown in that direction
    assert validate({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": 5}}, version, S2C) == []
    assert validate(_result(version, {"x": 1}), version, S2C, answering="no/such-method") == []
    findings = validate({"jsonrpc": "1.0", "id": 1, "method": "no/such-method"}, version, C2S)
    assert [(f.json_path, f.definition) for f in findings] == [("$.jsonrpc", "JSONRPCRequest")]


@pytest.mark.parametrize("version", VERSIONS)
def test_request_without_id_and_notification_with_id(version: str) -> None:
    no_id = _request(version, "tools/list")
    del no_id["id"]
    assert ("$", "rule:request-without-id") in _rules(validate(no_id, version, C2S))
    with_id = {"jsonrpc": "2.0", "id": 3, "method": "notifications/tools/list_changed"}
    assert _rules(validate(with_id, version, S2C)) == [("$", "rule:notification-with-id")]


@pytest.mark.parametrize("version", VERSIONS)
def test_result_and_error_together(version: str) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -1, "message": "x"}}
    assert ("$", "rule:result-and-error") in _rules(validate(message, version, S2C))


@pytest.mark.parametrize("value", [42, "x", None, True, {}, {"jsonrpc": "2.0", "id": 1}])
def test_not_a_message(value: Any) -> None:
    for version in VERSIONS:
        assert _rules(validate(value, version, C2S)) == [("$", "rule:not-a-message")]


@pytest.mark.parametrize("version", VERSIONS)
def test_request_params_are_checked_against_the_method(version: str) -> None:
    findings = validate(_request(version, "resources/read", {"uri": 5}), version, C2S)
    assert [(f.json_path, f.definition) for f in findings] == [("$.params.uri", "ReadResourceRequest")]
    _assert_pointers(version, findings)


def test_2026_requests_need_meta() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    findings = validate(message, V26, C2S)
    assert [(f.json_path, f.message) for f in findings] == [("$.params", "'_meta' is a required property")]


# -- result shapes that depend on the request -------------------------------------------------


def test_2026_discover_result_and_result_type() -> None:
    body = {"supportedVersions": [V26], "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}
    assert validate(_result(V26, body), V26, S2C, answering="server/discover") == []
    findings = validate({"jsonrpc": "2.0", "id": 1, "result": body}, V26, S2C, answering="server/discover")
    assert [(f.json_path, f.message, f.definition) for f in findings] == [("$.result", "'resultType' is a required property", "DiscoverResult")]


def test_2026_input_required_where_the_method_allows_it() -> None:
    interim = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {"roots": {"method": "roots/list"}}, "requestState": "s"}}
    for method in ("tools/call", "prompts/get", "resources/read"):
        assert validate(interim, V26, S2C, answering=method) == []
    findings = validate(interim, V26, S2C, answering="tools/list")
    assert {f.message for f in findings} >= {"'tools' is a required property"}
    assert {f.definition for f in findings} == {"ListToolsResult"}
    empty = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}
    assert _rules(validate(empty, V26, S2C, answering="tools/call")) == [("$.result", "rule:input-required-empty")]
    bad = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {"x": {"method": "sampling/createMessage", "params": {}}}}}
    findings = validate(bad, V26, S2C, answering="tools/call")
    assert findings and all(f.definition == "InputRequiredResult" and f.json_path.startswith("$.result.inputRequests.x") for f in findings)


def test_2025_11_25_task_augmented_result() -> None:
    version = "2025-11-25"
    task = {"taskId": "t1", "status": "working", "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": None}
    message = {"jsonrpc": "2.0", "id": 1, "result": {"task": task}}
    assert validate(message, version, S2C, answering="tools/call") == []
    broken = {"jsonrpc": "2.0", "id": 1, "result": {"task": dict(task, status="sleeping")}}
    findings = validate(broken, version, S2C, answering="tools/call")
    assert [(f.json_path, f.definition) for f in findings] == [("$.result.task.status", "CreateTaskResult")]
    # tools/list cannot be task-augmented: the same result is a bad ListToolsResult
    assert validate(message, version, S2C, answering="tools/list") != []


# -- union reporting ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_union_errors_name_the_intended_branch(version: str) -> None:
    content = [{"type": "text"}, {"type": "video", "url": "x"}, {"type": "image", "data": "aGk=", "mimeType": 3}]
    findings = validate(_result(version, {"content": content}), version, S2C, answering="tools/call")
    by_path = {f.json_path: f for f in findings}
    assert set(by_path) == {"$.result.content[0]", "$.result.content[1].type", "$.result.content[2].mimeType"}
    key = PINS[version].definitions_key
    assert by_path["$.result.content[0]"].message == "'text' is a required property"
    assert by_path["$.result.content[0]"].schema_path == f"#/{key}/TextContent/required"
    assert "'video' is not one of" in by_path["$.result.content[1].type"].message
    assert "TextContent" in by_path["$.result.content[1].type"].message
    assert by_path["$.result.content[2].mimeType"].schema_path == f"#/{key}/ImageContent/properties/mimeType/type"
    assert not any("is not valid under any of the given schemas" in f.message for f in findings)
    _assert_pointers(version, findings)


# -- formats ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_every_format_the_schemas_use_is_checked(version: str) -> None:
    assert unchecked_formats(version) == frozenset()


@pytest.mark.parametrize("version", VERSIONS)
def test_formats(version: str) -> None:
    def read_result(contents: dict[str, Any]) -> list[Finding]:
        return validate(_result(version, {"contents": [contents]}, cacheable=True), version, S2C, answering="resources/read")

    assert read_result({"uri": "file:///a.txt", "blob": "aGVsbG8="}) == []
    assert [f.json_path for f in read_result({"uri": "not a uri", "text": "x"})] == ["$.result.contents[0].uri"]
    for blob in ("not base64!", "aGVsbG8", "aGVs\nbG8="):
        findings = read_result({"uri": "file:///a", "blob": blob})
        assert [(f.json_path, f.schema_path.rsplit("/", 1)[-1]) for f in findings] == [("$.result.contents[0].blob", "format")], blob
    template = {"uriTemplate": "file:///{path", "name": "t"}
    findings = validate(_result(version, {"resourceTemplates": [template]}, cacheable=True), version, S2C, answering="resources/templates/list")
    assert [f.json_path for f in findings] == ["$.result.resourceTemplates[0].uriTemplate"]


@pytest.mark.parametrize(
    "fmt,good,bad",
    [
        ("uri", "https://example.com/a?b#c", "no scheme"),
        ("uri-template", "file:///{path}", "file:///{path"),
        ("byte", "aGk=", "aGk"),
        ("date-time", "2025-11-25T10:00:00Z", "2025-11-25 10:00"),
        ("email", "a@example.com", "nobody"),
    ],
)
def test_format_checker_checks(fmt: str, good: str, bad: str) -> None:
    assert FORMAT_CHECKER.conforms(good, fmt)
    assert not FORMAT_CHECKER.conforms(bad, fmt)


def test_a_format_without_a_checker_is_announced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(FORMAT_CHECKER.checkers, "uri")
    assert unchecked_formats("2024-11-05") == frozenset({"uri"})
    monkeypatch.setattr(vmod, "_VERSIONS", {})
    monkeypatch.setattr(vmod, "_VALIDATORS", {})
    with pytest.warns(FormatNotCheckedWarning, match="uri"):
        validate({"jsonrpc": "2.0", "id": 1, "result": {}}, "2024-11-05", S2C)


# -- API edges ----------------------------------------------------------------------------------


def test_unknown_version_direction_and_definition() -> None:
    with pytest.raises(SchemaError, match="2099-01-01.*2024-11-05"):
        validate({}, "2099-01-01", C2S)
    with pytest.raises(ValueError, match="direction"):
        validate({}, V26, "sideways")
    with pytest.raises(SchemaError, match="NoSuchThing"):
        validate_definition({}, V26, "NoSuchThing")


def test_findings_serialise() -> None:
    (finding,) = validate({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, V26, S2C)
    assert json.loads(json.dumps(finding.to_json()))["json_path"] == "$.error.code"


def test_json_paths_quote_awkward_keys() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 5, "io.modelcontextprotocol/clientCapabilities": {}}}}
    findings = validate(message, V26, C2S)
    assert [f.json_path for f in findings] == ["$.params._meta['io.modelcontextprotocol/protocolVersion']"]


def test_concurrent_first_use_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vmod, "_VERSIONS", {})
    monkeypatch.setattr(vmod, "_VALIDATORS", {})
    monkeypatch.setattr(vmod, "_INLINED", {})
    bad = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": 1}]}}

    def run(version: str) -> list[str]:
        return [f.json_path for f in validate(bad, version, S2C, answering="tools/list")]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, VERSIONS * 8))
    for version, paths in zip(VERSIONS * 8, results):
        assert "$.result.tools[0].name" in paths, version


def test_the_oracle_imports_no_io_modules() -> None:
    code = (
        "import sys, conformance.schema as s\n"
        "from conformance.spec.methods import S2C\n"
        "for v in ('2024-11-05', '2026-07-28'):\n"
        "    s.validate({'jsonrpc': '2.0', 'id': 1, 'result': {}}, v, S2C, answering='tools/list')\n"
        "bad = [m for m in ('anyio', 'httpx', 'subprocess', 'asyncio', 'socket', 'urllib.request') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""


def test_keyword_sets_are_those_of_the_installed_jsonschema() -> None:
    from jsonschema import Draft7Validator, Draft202012Validator

    assert vmod.DRAFT7_KEYWORDS == set(Draft7Validator.VALIDATORS)
    assert vmod.DRAFT202012_KEYWORDS == set(Draft202012Validator.VALIDATORS)


def test_a_valid_message_is_settled_without_importing_jsonschema() -> None:
    """jsonschema is imported only to explain an invalid message (or check a format): a process
    that sees only valid messages (most reference-server processes of a run) never pays for it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from conformance.schema.validate import validate\n"
        "assert validate({'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}, '2025-11-25', 'client-to-server') == []\n"
        # formats (uri) are checked too, with the function jsonschema would call
        "assert validate({'jsonrpc': '2.0', 'id': 2, 'method': 'resources/read', 'params': {'uri': 'file:///a'}},"
        " '2025-11-25', 'client-to-server') == []\n"
        "print('jsonschema' in sys.modules)\n"
        "assert validate({'jsonrpc': '2.0', 'id': 1, 'method': 'ping', 'params': 3}, '2025-11-25', 'client-to-server')\n"
        "print('jsonschema' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


FORMAT_SAMPLES = [
    "file:///tmp/a.txt", "https://example.com/a?b=c#d", "mcp-conformance://x", "urn:isbn:0451450523", "x",
    "/relative/path", "//host/path", "http://[::1]:80/", "http://exa mple.com", "ht tp://x", "http://%zz",
    "a:b", "", "\u00fc://x", "http://example.com/\u00fc", "https://example.com/{id}", "{+path}/x", "{", "/a/{b",
    "{a,b}", "aGVsbG8=", "aGVsbG8", "aGVs bG8=", "****", 3, None, True, ["file:///x"], {"a": 1},
]


@pytest.mark.parametrize("fmt", ["uri", "uri-template", "byte"])
def test_the_formats_checked_without_jsonschema_agree_with_its_format_checker(fmt: str) -> None:
    """The formats the MCP schemas use are checked with the function jsonschema's FormatChecker
    would call, without importing it: the same answer for every sample."""
    checker = vmod._format_checker()
    native = vmod._native_format(fmt)
    assert native is not None
    for sample in FORMAT_SAMPLES:
        assert native(sample) == checker.conforms(sample, fmt), (fmt, sample)




@pytest.mark.parametrize("fmt", ["uri", "uri-template", "byte", "date-time"])
def test_what_is_announced_as_checkable_is_what_jsonschema_checks(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One table says which package checks which format: the formats told checkable without
    importing jsonschema are those its FormatChecker has a checker for; without the package, the
    format is accepted unchecked and announced as unchecked."""
    monkeypatch.setattr(vmod, "_NATIVE_FORMATS", {})
    checkable = vmod._checkable(fmt)
    if fmt not in vmod._NATIVE_BUILDERS:
        assert checkable is None  # not one the MCP schemas use natively: jsonschema is asked
        return
    assert checkable == (fmt in vmod._format_checker().checkers)
    if fmt == "uri-template":
        monkeypatch.setitem(sys.modules, "uri_template", None)  # the package missing: its import fails
        monkeypatch.setattr(vmod, "_NATIVE_FORMATS", {})
        assert vmod._checkable(fmt) is False
        assert vmod._conforms("{", fmt)  # accepted unchecked, as jsonschema does without it


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", V26])
def test_elicit_result_numbers_follow_schema_ts(version: str) -> None:
    """schema.json says integer, schema.ts (the source of truth) number: 95.5 is allowed; what
    neither allows still is not."""
    assert validate_definition({"action": "accept", "content": {"n": 95.5, "b": True, "s": "x"}}, version, "ElicitResult") == []
    assert validate_definition({"action": "accept", "content": {"n": {"x": 1}}}, version, "ElicitResult")
    assert validate_definition({"action": "accept", "content": {"n": None}}, version, "ElicitResult")
    raw = load_schema(version)  # the verified file itself is left as it is
    defs = raw.get("$defs") or raw["definitions"]
    assert "integer" in json.dumps(defs["ElicitResult"]["properties"]["content"])
