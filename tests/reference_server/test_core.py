"""The protocol core, sans I/O: feed messages, assert what comes out."""

from __future__ import annotations

import json

import pytest

from conformance.spec import errors as codes
from reference_server.core import ServerConfig

from tests.reference_server.helpers import LEGACY, MODERN, harness

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("version", LEGACY)
async def test_initialize_echoes_a_supported_version(version: str) -> None:
    async with harness() as h:
        resp = await h.initialize(version)
        assert resp["result"]["protocolVersion"] == version
        assert resp["result"]["serverInfo"]["name"] == "mcp-reference-server"
        assert "tools" in resp["result"]["capabilities"]
        assert h.conn.initialized


@pytest.mark.parametrize("requested", ["1999-01-01", "2026-07-28", "banana"])
async def test_initialize_offers_the_latest_legacy_version_otherwise(requested: str) -> None:
    async with harness() as h:
        resp = await h.initialize(requested)
        assert resp["result"]["protocolVersion"] == LEGACY[-1]


async def test_ping_before_initialize_is_answered_other_requests_are_refused() -> None:
    async with harness() as h:
        assert (await h.request("ping"))["result"] == {}
        resp = await h.request("tools/list")
        assert resp["error"]["code"] == codes.INVALID_REQUEST
        assert "initialize" in resp["error"]["message"]


async def test_unknown_method_is_method_not_found() -> None:
    async with harness() as h:
        await h.initialize()
        resp = await h.request("no/such-method")
        assert resp["error"]["code"] == codes.METHOD_NOT_FOUND


async def test_ids_are_echoed_verbatim_with_their_type() -> None:
    async with harness() as h:
        await h.initialize()
        assert (await h.request("ping", rid="7"))["id"] == "7"
        assert (await h.request("ping", rid=7))["id"] == 7


async def test_invalid_json_is_a_parse_error_with_null_id() -> None:
    async with harness() as h:
        await h.conn.receive_invalid_json("invalid JSON: test", sink=h.sink)
        (msg,) = h.messages()
        assert msg["id"] is None and msg["error"]["code"] == codes.PARSE_ERROR


@pytest.mark.parametrize("bad", [None, 3, "x", {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": None, "method": "ping"}, {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, {"jsonrpc": "2.0", "id": True, "method": "ping"}])
async def test_invalid_requests_get_invalid_request_with_null_id(bad) -> None:
    async with harness() as h:
        await h.send(bad)
        (msg,) = h.messages()
        assert msg["id"] is None and msg["error"]["code"] == codes.INVALID_REQUEST


async def test_wrong_jsonrpc_version_echoes_the_readable_id() -> None:
    async with harness() as h:
        await h.initialize()
        await h.send({"jsonrpc": "1.0", "id": 5, "method": "ping"})
        msg = await h.response(5)
        assert msg["error"]["code"] == codes.INVALID_REQUEST


async def test_notifications_are_never_answered() -> None:
    async with harness() as h:
        await h.initialize()
        before = len(h.messages())
        for note in (
            {"jsonrpc": "2.0", "method": "notifications/unknown"},
            {"jsonrpc": "2.0", "method": "tools/list"},  # a request method without id is a notification
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "garbage"},
        ):
            await h.send(note)
        # a ping after the notifications proves they were read
        await h.request("ping", rid="barrier")
        assert [m.get("id") for m in h.messages()[before:]] == ["barrier"]


async def test_invalid_params_carry_the_schema_findings() -> None:
    async with harness() as h:
        await h.initialize()
        resp = await h.request("tools/call", {"name": 3})
        assert resp["error"]["code"] == codes.INVALID_PARAMS
        findings = resp["error"]["data"]["findings"]
        assert any(f["path"] == "$.params.name" for f in findings)


async def test_tools_echo_and_add() -> None:
    async with harness() as h:
        await h.initialize()
        names = [t["name"] for t in (await h.request("tools/list"))["result"]["tools"]]
        assert {"echo", "add"} <= set(names)
        echo = await h.request("tools/call", {"name": "echo", "arguments": {"text": "héllo"}})
        assert echo["result"]["content"] == [{"type": "text", "text": "héllo"}]
        add = await h.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
        assert add["result"]["content"][0]["text"] == "42"


@pytest.mark.parametrize("version,protocol_error", [("2025-06-18", True), ("2025-11-25", False)])
async def test_invalid_tool_arguments(version: str, protocol_error: bool) -> None:
    async with harness() as h:
        await h.initialize(version)
        resp = await h.request("tools/call", {"name": "add", "arguments": {"a": 1}})
        if protocol_error:
            assert resp["error"]["code"] == codes.INVALID_PARAMS
        else:
            assert resp["result"]["isError"] is True


async def test_unknown_tool_is_invalid_params() -> None:
    async with harness() as h:
        await h.initialize()
        resp = await h.request("tools/call", {"name": "nope", "arguments": {}})
        assert resp["error"]["code"] == codes.INVALID_PARAMS


async def test_second_initialize_is_refused() -> None:
    async with harness() as h:
        await h.initialize()
        resp = await h.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        assert resp["error"]["code"] == codes.INVALID_REQUEST


# -- 2026-07-28: stateless ----------------------------------------------------------------------


async def test_discover_lists_modern_versions_and_carries_result_type() -> None:
    async with harness() as h:
        resp = await h.modern("server/discover")
        res = resp["result"]
        assert res["supportedVersions"] == MODERN
        assert res["resultType"] == "complete"
        assert res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-reference-server"
        assert isinstance(res["ttlMs"], int) and res["cacheScope"] in ("public", "private")


async def test_modern_requests_need_no_handshake_and_carry_result_type() -> None:
    async with harness() as h:
        resp = await h.modern("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert resp["result"]["resultType"] == "complete"
        assert resp["result"]["content"][0]["text"] == "x"
        assert not h.conn.initialized


async def test_unsupported_modern_version_is_32022() -> None:
    async with harness() as h:
        resp = await h.modern("tools/list", version="2099-01-01")
        err = resp["error"]
        assert err["code"] == codes.UNSUPPORTED_PROTOCOL_VERSION
        assert err["data"] == {"supported": MODERN, "requested": "2099-01-01"}


async def test_missing_meta_field_is_invalid_params() -> None:
    async with harness() as h:
        resp = await h.request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
        assert resp["error"]["code"] == codes.INVALID_PARAMS


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "initialize"])
async def test_removed_methods_are_method_not_found_in_2026(method: str) -> None:
    async with harness(stateless=True) as h:
        resp = await h.modern(method, {"level": "info"} if method == "logging/setLevel" else {"uri": "test://x"} if "subscribe" in method else {})
        assert resp["error"]["code"] == codes.METHOD_NOT_FOUND


# -- batches -------------------------------------------------------------------------------------


async def test_batches_are_answered_as_one_array_in_2025_03_26() -> None:
    async with harness() as h:
        await h.initialize("2025-03-26")
        await h.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"}, {"jsonrpc": "2.0", "id": "b", "method": "tools/list"}])
        batch = h.out[-1]
        import json

        value = json.loads(batch.data)
        assert sorted(m["id"] for m in value) == ["a", "b"]


@pytest.mark.parametrize("version", [v for v in LEGACY if v != "2025-03-26"])
async def test_batches_are_rejected_outside_2025_03_26(version: str) -> None:
    async with harness() as h:
        await h.initialize(version)
        await h.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"}])
        msg = h.messages()[-1]
        assert msg["id"] is None and msg["error"]["code"] == codes.INVALID_REQUEST


async def test_initialize_inside_a_batch_is_refused() -> None:
    async with harness() as h:
        await h.initialize("2025-03-26")
        await h.send([{"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}])
        import json

        (item,) = json.loads(h.out[-1].data)
        assert item["id"] == "i" and item["error"]["code"] == codes.INVALID_REQUEST


# -- cancellation and progress ------------------------------------------------------------------


async def test_cancelled_request_gets_no_response() -> None:
    async with harness() as h:
        await h.initialize()
        await h.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 30, "steps": 30}, "_meta": {"progressToken": "p"}}})
        await h.wait_for(lambda m: m.get("method") == "notifications/progress")
        await h.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow", "reason": "test"}})
        await h.request("ping", rid="barrier")
        assert not [m for m in h.messages() if m.get("id") == "slow"]
        assert not h.conn.inflight


async def test_progress_notifications_carry_the_token_and_increase() -> None:
    async with harness() as h:
        await h.initialize()
        resp = await h.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.01, "steps": 3}, "_meta": {"progressToken": 7}})
        assert "content" in resp["result"]
        progress = [m["params"] for m in h.messages() if m.get("method") == "notifications/progress"]
        assert [p["progressToken"] for p in progress] == [7] * len(progress)
        values = [p["progress"] for p in progress]
        assert values == sorted(set(values)) and len(values) == 4


async def test_duplicate_inflight_id_is_refused() -> None:
    async with harness() as h:
        await h.initialize()
        await h.send({"jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 30}}})
        await h.send({"jsonrpc": "2.0", "id": "dup", "method": "ping"})
        msg = await h.response("dup")
        assert msg["error"]["code"] == codes.INVALID_REQUEST
        h.conn.cancel("dup")


def test_every_client_request_of_the_method_table_has_a_handler() -> None:
    from reference_server.core import Server
    from reference_server.features import build_server

    assert build_server(ServerConfig()).missing_handlers() == []
    assert Server(ServerConfig()).missing_handlers() != []  # the core alone knows no method


async def test_legacy_only_server_ignores_modern_meta() -> None:
    async with harness(ServerConfig(versions=("2025-06-18", "2025-11-25"))) as h:
        resp = await h.modern("tools/list", {})
        assert resp["error"]["code"] == codes.INVALID_REQUEST  # not initialized
        init = await h.initialize("2024-11-05")
        assert init["result"]["protocolVersion"] == "2025-11-25"


async def test_modern_only_server_refuses_initialize_naming_its_versions() -> None:
    async with harness(ServerConfig(versions=("2026-07-28",))) as h:
        resp = await h.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        assert resp["error"]["code"] in (codes.INVALID_PARAMS, codes.METHOD_NOT_FOUND)
        assert "2026-07-28" in json.dumps(resp["error"])
        assert (await h.modern("server/discover"))["result"]["supportedVersions"] == ["2026-07-28"]
