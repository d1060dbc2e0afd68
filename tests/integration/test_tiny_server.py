"""The tiny server is a correct minimal MCP server: its answers pass the official schemas (through
the suite's schema oracle) and follow the rules it claims, on every version it speaks.

The protocol core is tested in-process (fast, no marker); its two front-ends (stdio, streamable
HTTP) run as processes under the ``integration`` marker.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import pytest

from conformance.schema import validate
from conformance.spec.methods import S2C
from conformance.spec.versions import VERSIONS, spec
from fixtures.peers import launch
from fixtures.peers.tiny_server import LATEST_LEGACY, LEGACY_VERSIONS, MODERN_VERSIONS, SUPPORTED_VERSIONS, Server

HANDSHAKE = [v for v in VERSIONS if spec(v).handshake]
STATELESS = [v for v in VERSIONS if spec(v).stateless]
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"


def _req(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def _meta(version: str = "2026-07-28", **extra: Any) -> dict[str, Any]:
    return {"_meta": {META_VERSION: version, META_CAPS: {}, **extra}}


def _ok(answer: Any, version: str, method: str) -> dict[str, Any]:
    assert isinstance(answer, dict), answer
    findings = validate(answer, version, S2C, answering=method)
    assert findings == [], findings
    return answer


def _initialized(version: str) -> Server:
    server = Server()
    answer = server.handle(_req(0, "initialize", {"protocolVersion": version, "capabilities": {},
                                                  "clientInfo": {"name": "t", "version": "1"}}))
    _ok(answer, version, "initialize")
    assert server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    return server


def test_the_server_speaks_exactly_the_suites_versions() -> None:
    assert set(LEGACY_VERSIONS) == set(HANDSHAKE)
    assert set(MODERN_VERSIONS) == set(STATELESS)
    assert set(SUPPORTED_VERSIONS) == set(VERSIONS)


@pytest.mark.parametrize("version", HANDSHAKE)
def test_handshake_versions_echo_and_answer_schema_valid(version: str) -> None:
    server = Server()
    init = _ok(server.handle(_req(1, "initialize", {"protocolVersion": version, "capabilities": {},
                                                    "clientInfo": {"name": "t", "version": "1"}})),
               version, "initialize")
    assert init["result"]["protocolVersion"] == version
    assert "tools" in init["result"]["capabilities"]
    assert _ok(server.handle(_req("p", "ping")), version, "ping") == {"jsonrpc": "2.0", "id": "p", "result": {}}
    tools = _ok(server.handle(_req(2, "tools/list")), version, "tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["echo"]
    call = _ok(server.handle(_req(3, "tools/call", {"name": "echo", "arguments": {"text": "héllo\n"}})),
               version, "tools/call")
    assert call["result"]["content"] == [{"type": "text", "text": "héllo\n"}]
    assert "isError" not in call["result"] and "resultType" not in call["result"]


def test_unsupported_initialize_version_gets_a_supported_one() -> None:
    server = Server()
    answer = _ok(server.handle(_req(1, "initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                                                      "clientInfo": {"name": "t", "version": "1"}})),
                 LATEST_LEGACY, "initialize")
    assert answer["result"]["protocolVersion"] == LATEST_LEGACY


@pytest.mark.parametrize(("version", "protocol_error"), [(v, v < "2025-11-25") for v in HANDSHAKE])
def test_invalid_echo_arguments(version: str, protocol_error: bool) -> None:
    # tools.mdx: input validation errors are protocol errors up to 2025-06-18, isError results from 2025-11-25
    answer = _initialized(version).handle(_req(4, "tools/call", {"name": "echo", "arguments": {"text": 5}}))
    _ok(answer, version, "tools/call")
    if protocol_error:
        assert answer["error"]["code"] == -32602
    else:
        assert answer["result"]["isError"] is True


@pytest.mark.parametrize("version", HANDSHAKE)
def test_unknown_tool_is_a_protocol_error(version: str) -> None:
    answer = _ok(_initialized(version).handle(_req(5, "tools/call", {"name": "nope", "arguments": {}})),
                 version, "tools/call")
    assert answer["error"]["code"] == -32602


def test_modern_requests_are_served_statelessly_and_schema_valid() -> None:
    server = Server()  # no initialize at all
    disc = _ok(server.handle(_req("d", "server/discover", _meta())), "2026-07-28", "server/discover")["result"]
    assert disc["resultType"] == "complete"
    assert set(disc["supportedVersions"]) == set(VERSIONS)
    assert disc["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    listed = _ok(server.handle(_req(1, "tools/list", _meta())), "2026-07-28", "tools/list")["result"]
    assert listed["resultType"] == "complete" and listed["ttlMs"] >= 0 and listed["cacheScope"] in ("public", "private")
    call = _ok(server.handle(_req(2, "tools/call", {"name": "echo", "arguments": {"text": "x"}, **_meta()})),
               "2026-07-28", "tools/call")["result"]
    assert call["resultType"] == "complete" and call["content"] == [{"type": "text", "text": "x"}]
    assert server.version is None  # nothing about the connection was remembered


def test_modern_errors() -> None:
    server = Server()
    # ping does not exist in 2026-07-28
    assert _ok(server.handle(_req(1, "ping", _meta())), "2026-07-28", "ping")["error"]["code"] == -32601
    unsupported = _ok(server.handle(_req(2, "tools/list", _meta("1900-01-01"))), "2026-07-28", "tools/list")
    assert unsupported["error"]["code"] == -32022
    assert unsupported["error"]["data"]["requested"] == "1900-01-01"
    assert "2026-07-28" in unsupported["error"]["data"]["supported"]
    # basic/index.mdx#_meta: a request missing a required field is malformed -> -32602
    no_caps = _req(3, "tools/list", {"_meta": {META_VERSION: "2026-07-28"}})
    assert _ok(server.handle(no_caps), "2026-07-28", "tools/list")["error"]["code"] == -32602
    no_meta = _req(4, "server/discover")
    assert _ok(server.handle(no_meta), "2026-07-28", "server/discover")["error"]["code"] == -32602


@pytest.mark.parametrize(("raw", "code"), [
    (b"{not json", -32700),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping",}', -32700),
    (b"NaN", -32700),
    (b"\xff\xfe{}", -32700),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600),
    (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
    (b"[]", -32600),
    (b"42", -32600),
])
def test_malformed_input_gets_the_json_rpc_error(raw: bytes, code: int) -> None:
    answer = Server().handle_text(raw)
    assert isinstance(answer, dict) and answer["error"]["code"] == code, answer
    if code == -32700:
        assert answer["id"] is None  # JSON-RPC 2.0 section 5: id null when it could not be read


def test_ids_are_echoed_verbatim_and_unknown_methods_are_32601() -> None:
    server = _initialized("2025-11-25")
    for id_ in ("7", 7, "", 0, -1, 2**53 + 1):
        answer = server.handle_text(json.dumps(_req(id_, "no/such-method")))
        assert isinstance(answer, dict)
        assert answer["id"] == id_ and type(answer["id"]) is type(id_)
        assert answer["error"]["code"] == -32601


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "no/such-notification", "params": {}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    {"jsonrpc": "2.0", "id": 9, "result": {}},  # a response: nothing to answer
])
def test_notifications_and_responses_are_never_answered(message: dict[str, Any]) -> None:
    assert _initialized("2025-11-25").handle(message) is None


def test_batches_only_in_2025_03_26() -> None:
    batch = [_req(1, "ping"), {"jsonrpc": "2.0", "method": "notifications/x"}, _req(2, "tools/list")]
    answers = _initialized("2025-03-26").handle_value(batch)
    assert isinstance(answers, list) and [a["id"] for a in answers] == [1, 2]
    assert validate(answers, "2025-03-26", S2C, answering={1: "ping", 2: "tools/list"}) == []
    with_init = _initialized("2025-03-26").handle_value([_req(1, "initialize", {"protocolVersion": "2025-03-26"})])
    assert isinstance(with_init, list) and with_init[0]["error"]["code"] == -32600
    refused = _initialized("2025-06-18").handle_value(batch)
    assert isinstance(refused, dict) and refused["error"]["code"] == -32600


# -- the front-ends, as processes ------------------------------------------------------------------
@pytest.mark.integration
def test_stdio_front_end_round_trip_and_exit_on_eof() -> None:
    peer = launch.peer_command("tiny", "stdio")[0]
    lines = [
        _req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _req(2, "tools/call", {"name": "echo", "arguments": {"text": "a\u2028b"}}),
    ]
    data = b"".join(json.dumps(m).encode() + b"\n" for m in lines) + b"\n{oops\n"
    proc = subprocess.run(peer, input=data, capture_output=True, timeout=30)
    assert proc.returncode == 0, proc.stderr  # stdin EOF ends the server
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2, None]
    assert answers[1]["result"]["content"][0]["text"] == "a\u2028b"
    assert answers[2]["error"]["code"] == -32700


@pytest.mark.integration
def test_http_front_end() -> None:
    with launch.start_peer("tiny", "streamable-http") as peer, httpx.Client(timeout=20) as client:
        assert peer.url is not None
        accept = {"Accept": "application/json, text/event-stream"}
        modern = {**accept, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
        body = _req(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}, **_meta()})
        ok = client.post(peer.url, json=body, headers=modern)
        assert ok.status_code == 200 and ok.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in ok.headers  # 2026-07-28: no sessions
        _ok(ok.json(), "2026-07-28", "tools/call")
        # streamable-http.mdx#server-validation: header/body mismatch -> 400 + HeaderMismatch
        bad = client.post(peer.url, json=body, headers={**modern, "Mcp-Name": "other"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == -32020
        encoded = client.post(peer.url, json=body, headers={**modern, "Mcp-Name": "=?base64?ZWNobw==?="})
        assert encoded.status_code == 200
        unknown = client.post(peer.url, json=_req(2, "no/such", _meta()),
                              headers={**modern, "Mcp-Method": "no/such"})
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == -32601

        init = client.post(peer.url, headers=accept, json=_req(1, "initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
        sid = init.headers["mcp-session-id"]
        assert init.status_code == 200 and sid.isascii() and sid.isprintable()
        session = {**accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        note = client.post(peer.url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202 and note.content == b""
        assert client.post(peer.url, headers=session, json=_req(2, "ping")).json()["result"] == {}
        no_session = client.post(peer.url, headers=accept, json=_req(3, "ping"))
        assert no_session.status_code == 400
        assert client.post(peer.url, headers={**session, "Origin": "http://evil.example"},
                           json=_req(4, "ping")).status_code == 403
        assert client.get(peer.url, headers={"Accept": "text/event-stream", **session}).status_code == 405
        parse = client.post(peer.url, headers={**session, "Content-Type": "application/json"}, content=b"{")
        assert parse.status_code == 400 and parse.json()["error"]["code"] == -32700
        assert client.delete(peer.url, headers=session).status_code == 200
        assert client.post(peer.url, headers=session, json=_req(5, "ping")).status_code == 404
