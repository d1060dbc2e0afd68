"""Every feature on every version, through the sans-I/O core; every message schema-checked."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from conformance.spec import errors as codes
from reference_server.core import ServerConfig

from tests.reference_server.helpers import LEGACY, Harness, harness

pytestmark = pytest.mark.anyio

FULL_CAPS = {"sampling": {}, "roots": {"listChanged": True}}
ELICIT_CAPS = {**FULL_CAPS, "elicitation": {}}


def _caps(version: str) -> dict[str, Any]:
    return ELICIT_CAPS if version >= "2025-06-18" else FULL_CAPS


async def _list_all(h: Harness, method: str, key: str, **kw: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    call = h.modern if kw.pop("modern", False) else h.request
    for _ in range(100):
        params = {"cursor": cursor} if cursor else {}
        resp = await call(method, params)
        assert "result" in resp, resp
        items += resp["result"][key]
        cursor = resp["result"].get("nextCursor")
        if not cursor:
            return items
    raise AssertionError("pagination did not end")


async def _answer_client_requests(h: Harness, stop: anyio.Event) -> None:
    """Play the client: answer sampling, elicitation, roots and ping requests from the server."""
    answered: set[Any] = set()
    while not stop.is_set():
        for m in h.messages():
            if "method" in m and "id" in m and m["id"] not in answered:
                answered.add(m["id"])
                result: dict[str, Any] = {
                    "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test", "stopReason": "endTurn"},
                    "elicitation/create": {"action": "accept", "content": {"username": "u", "email": "e@example.com"}},
                    "roots/list": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]},
                    "ping": {},
                }[m["method"]]
                await h.send({"jsonrpc": "2.0", "id": m["id"], "result": result})
        with anyio.move_on_after(1):
            await h.changed.wait()


@pytest.mark.parametrize("page_size", [2, 100])
@pytest.mark.parametrize("version", LEGACY)
async def test_legacy_feature_tour(version: str, page_size: int) -> None:
    async with harness(ServerConfig(page_size=page_size)) as h:
        init = await h.initialize(version, _caps(version))
        caps = init["result"]["capabilities"]
        assert {"tools", "resources", "prompts", "logging"} <= set(caps)
        tools = {t["name"]: t for t in await _list_all(h, "tools/list", "tools")}
        assert {"echo", "add", "slow", "fail", "test_simple_text", "test_sampling"} <= set(tools)
        assert ("test_audio_content" in tools) == (version >= "2025-03-26")
        assert ("test_elicitation" in tools) == (version >= "2025-06-18")
        assert ("add_structured" in tools) == (version >= "2025-06-18")
        stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_answer_client_requests, h, stop)
            args = {
                "echo": {"text": "m"},
                "add": {"a": 1, "b": 2},
                "add_structured": {"a": 1, "b": 2},
                "slow": {"seconds": 0.01, "steps": 2},
                "test_sampling": {"prompt": "p"},
                "test_elicitation": {"message": "m"},
                "json_schema_2020_12_tool": {"name": "n", "contactMethod": "email", "email": "e"},
            }
            for name in tools:
                if name in ("test_reconnection", "test_url_elicitation", "test_url_elicitation_required", "slow_task"):  # covered below
                    continue
                if name == "fail_rpc":
                    resp = await h.request("tools/call", {"name": name, "arguments": {}})
                    assert resp["error"]["code"] == codes.INTERNAL_ERROR, resp
                    continue
                resp = await h.request("tools/call", {"name": name, "arguments": args.get(name, {})})
                assert "result" in resp, (name, resp)
                expect_error = name in ("fail", "test_error_handling")
                assert resp["result"].get("isError", False) is expect_error, (name, resp)
            stop.set()
        structured = tools.get("add_structured")
        if structured:
            resp = await h.request("tools/call", {"name": "add_structured", "arguments": {"a": 2, "b": 3}})
            assert resp["result"]["structuredContent"] == {"sum": 5}
        # resources
        resources = await _list_all(h, "resources/list", "resources")
        uris = [r["uri"] for r in resources]
        assert {"test://static-text", "test://static-binary", "test://watched-resource"} <= set(uris)
        for uri in uris:
            resp = await h.request("resources/read", {"uri": uri})
            (content,) = resp["result"]["contents"]
            assert content["uri"] == uri and ("text" in content or "blob" in content)
        templates = await _list_all(h, "resources/templates/list", "resourceTemplates")
        assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
        read = await h.request("resources/read", {"uri": "test://template/123/data"})
        assert json.loads(read["result"]["contents"][0]["text"])["id"] == "123"
        missing = await h.request("resources/read", {"uri": "test://nope"})
        assert missing["error"]["code"] == -32002 and missing["error"]["data"] == {"uri": "test://nope"}
        # subscriptions
        assert (await h.request("resources/subscribe", {"uri": "test://watched-resource"}))["result"] == {}
        await h.request("tools/call", {"name": "touch_resource", "arguments": {}})
        await h.wait_for(lambda m: m.get("method") == "notifications/resources/updated" and m["params"]["uri"] == "test://watched-resource")
        assert (await h.request("resources/unsubscribe", {"uri": "test://watched-resource"}))["result"] == {}
        # prompts
        prompts = {p["name"]: p for p in await _list_all(h, "prompts/list", "prompts")}
        assert {"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"} <= set(prompts)
        got = await h.request("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "hello", "arg2": "world"}})
        assert "arg1='hello'" in json.dumps(got["result"]["messages"])
        bad = await h.request("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}})
        assert bad["error"]["code"] == codes.INVALID_PARAMS
        # completion, logging
        comp = await h.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "par"}})
        assert comp["result"]["completion"]["values"] == ["paris", "park", "party"]
        assert (await h.request("logging/setLevel", {"level": "warning"}))["result"] == {}
        before = len([m for m in h.messages() if m.get("method") == "notifications/message"])
        await h.request("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
        assert len([m for m in h.messages() if m.get("method") == "notifications/message"]) == before  # info < warning
        # list changes
        await h.request("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        await h.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")


async def test_client_requests_only_when_declared() -> None:
    async with harness() as h:
        await h.initialize("2025-11-25", {})
        resp = await h.request("tools/call", {"name": "test_sampling", "arguments": {"prompt": "p"}})
        assert resp["result"]["isError"] is True
        resp = await h.request("tools/call", {"name": "list_roots", "arguments": {}})
        assert resp["result"]["isError"] is True
        assert not [m for m in h.messages() if "method" in m and "id" in m]


async def test_elicitation_mode_must_be_declared() -> None:
    async with harness() as h:
        await h.initialize("2025-11-25", {"elicitation": {"url": {}}})
        resp = await h.request("tools/call", {"name": "test_elicitation", "arguments": {"message": "m"}})
        assert resp["result"]["isError"] is True


async def test_pagination_cursor_is_checked() -> None:
    async with harness(ServerConfig(page_size=1)) as h:
        await h.initialize()
        first = await h.request("prompts/list", {})
        cursor = first["result"]["nextCursor"]
        other = await h.request("tools/list", {"cursor": cursor})
        assert other["error"]["code"] == codes.INVALID_PARAMS
        bad = await h.request("prompts/list", {"cursor": "garbage"})
        assert bad["error"]["code"] == codes.INVALID_PARAMS


# -- 2026-07-28 ----------------------------------------------------------------------------------


async def test_modern_feature_tour() -> None:
    async with harness(ServerConfig(page_size=3)) as h:
        tools = {t["name"] for t in await _list_all(h, "tools/list", "tools", modern=True)}
        assert {"test_input_required_result_elicitation", "test_custom_header", "test_missing_capability"} <= tools
        assert "ping_client" not in tools and "test_tool_with_logging" in tools
        for method, key in (("resources/list", "resources"), ("prompts/list", "prompts"), ("resources/templates/list", "resourceTemplates")):
            resp = await h.modern(method, {})
            assert resp["result"]["ttlMs"] >= 0 and resp["result"]["cacheScope"] in ("public", "private")
        missing = await h.modern("resources/read", {"uri": "test://nonexistent"})
        assert missing["error"]["code"] == codes.INVALID_PARAMS and missing["error"]["data"]["uri"] == "test://nonexistent"


@pytest.mark.parametrize(
    "tool,answers",
    [
        ("test_input_required_result_elicitation", {"user_name": {"action": "accept", "content": {"name": "Alice"}}}),
        ("test_input_required_result_sampling", {"capital_question": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}}),
        ("test_input_required_result_list_roots", {"client_roots": {"roots": [{"uri": "file:///r"}]}}),
        ("test_input_required_result_request_state", {"confirm": {"action": "accept", "content": {"ok": True}}}),
    ],
)
async def test_mrtr_round_trip(tool: str, answers: dict[str, Any]) -> None:
    caps = {"sampling": {}, "elicitation": {}, "roots": {}}
    async with harness() as h:
        first = await h.modern("tools/call", {"name": tool, "arguments": {}}, caps=caps)
        res = first["result"]
        assert res["resultType"] == "input_required"
        assert set(res["inputRequests"]) == set(answers)
        retry: dict[str, Any] = {"name": tool, "arguments": {}, "inputResponses": answers}
        if "requestState" in res:
            retry["requestState"] = res["requestState"]
        second = await h.modern("tools/call", retry, caps=caps)
        assert second["result"]["resultType"] == "complete", second
        if tool.endswith("request_state"):
            assert "state-ok" in second["result"]["content"][0]["text"]


async def test_mrtr_tampered_state_and_missing_capability() -> None:
    caps = {"elicitation": {}}
    async with harness() as h:
        first = await h.modern("tools/call", {"name": "test_input_required_result_tampered_state", "arguments": {}}, caps=caps)
        state = first["result"]["requestState"]
        bad = await h.modern(
            "tools/call",
            {"name": "test_input_required_result_tampered_state", "arguments": {}, "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}}, "requestState": state + "-TAMPERED"},
            caps=caps,
        )
        assert bad["error"]["code"] == codes.INVALID_PARAMS
        miss = await h.modern("tools/call", {"name": "test_missing_capability", "arguments": {}}, caps={})
        assert miss["error"]["code"] == codes.MISSING_REQUIRED_CLIENT_CAPABILITY
        assert miss["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
        only_sampling = await h.modern("tools/call", {"name": "test_input_required_result_capabilities", "arguments": {}}, caps={"sampling": {}})
        assert [r["method"] for r in only_sampling["result"]["inputRequests"].values()] == ["sampling/createMessage"]


async def test_mrtr_multi_round_and_prompt() -> None:
    caps = {"elicitation": {}}
    async with harness() as h:
        r1 = (await h.modern("tools/call", {"name": "test_input_required_result_multi_round", "arguments": {}}, caps=caps))["result"]
        r2 = (await h.modern("tools/call", {"name": "test_input_required_result_multi_round", "arguments": {}, "inputResponses": {"step1": {"action": "accept", "content": {"name": "A"}}}, "requestState": r1["requestState"]}, caps=caps))["result"]
        assert r2["resultType"] == "input_required" and r2["requestState"] != r1["requestState"] and "step2" in r2["inputRequests"]
        r3 = (await h.modern("tools/call", {"name": "test_input_required_result_multi_round", "arguments": {}, "inputResponses": {"step2": {"action": "accept", "content": {"color": "blue"}}}, "requestState": r2["requestState"]}, caps=caps))["result"]
        assert r3["resultType"] == "complete"
        p1 = (await h.modern("prompts/get", {"name": "test_input_required_result_prompt"}, caps=caps))["result"]
        assert p1["resultType"] == "input_required"
        p2 = (await h.modern("prompts/get", {"name": "test_input_required_result_prompt", "inputResponses": {"user_context": {"action": "accept", "content": {"context": "c"}}}}, caps=caps))["result"]
        assert p2["resultType"] == "complete" and p2["messages"]


async def test_modern_logging_only_with_log_level() -> None:
    async with harness() as h:
        await h.modern("tools/call", {"name": "test_logging_tool", "arguments": {}})
        assert not [m for m in h.messages() if m.get("method") == "notifications/message"]
        await h.modern("tools/call", {"name": "test_logging_tool", "arguments": {}}, **{"io.modelcontextprotocol/logLevel": "debug"})
        await h.wait_for(lambda m: m.get("method") == "notifications/message")


async def test_subscriptions_listen_acknowledges_filters_and_tags() -> None:
    async with harness() as h:
        await h.send(
            {
                "jsonrpc": "2.0",
                "id": "sub",
                "method": "subscriptions/listen",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}, "notifications": {"promptsListChanged": True, "resourceSubscriptions": ["test://watched-resource", "test://nope"]}},
            }
        )
        ack = await h.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub"
        assert ack["params"]["notifications"] == {"promptsListChanged": True, "resourceSubscriptions": ["test://watched-resource"]}
        await h.modern("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})  # not subscribed
        await h.modern("tools/call", {"name": "test_trigger_prompt_change", "arguments": {}})
        await h.modern("tools/call", {"name": "touch_resource", "arguments": {}})
        await h.wait_for(lambda m: m.get("method") == "notifications/resources/updated")
        tagged = [m for m in h.messages() if m.get("method", "").startswith("notifications/") and m["method"] != "notifications/message"]
        assert [m["method"] for m in tagged] == ["notifications/subscriptions/acknowledged", "notifications/prompts/list_changed", "notifications/resources/updated"]
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub" for m in tagged)
        assert h.conn.cancel("sub")
        await h.modern("ping" if False else "server/discover", {})
        assert not [m for m in h.messages() if m.get("id") == "sub"]


async def test_client_results_are_validated() -> None:
    async with harness() as h:
        await h.initialize("2025-11-25", {"sampling": {}})
        await h.send({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "test_sampling", "arguments": {"prompt": "p"}}})
        req = await h.wait_for(lambda m: m.get("method") == "sampling/createMessage")
        await h.send({"jsonrpc": "2.0", "id": req["id"], "result": {"role": "assistant", "content": "not a content block"}})
        resp = await h.response("s")
        assert resp["result"]["isError"] is True and "invalid result" in resp["result"]["content"][0]["text"]


async def test_url_elicitation_2025_11_25() -> None:
    async with harness() as h:
        await h.initialize("2025-11-25", {"elicitation": {"url": {}}})
        await h.send({"jsonrpc": "2.0", "id": "u", "method": "tools/call", "params": {"name": "test_url_elicitation", "arguments": {}}})
        req = await h.wait_for(lambda m: m.get("method") == "elicitation/create")
        assert req["params"]["mode"] == "url" and req["params"]["elicitationId"]
        await h.send({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}})
        done = await h.wait_for(lambda m: m.get("method") == "notifications/elicitation/complete")
        assert done["params"]["elicitationId"] == req["params"]["elicitationId"]
        assert "result" in await h.response("u")
        err = await h.request("tools/call", {"name": "test_url_elicitation_required", "arguments": {}})
        assert err["error"]["code"] == -32042 and err["error"]["data"]["elicitations"][0]["mode"] == "url"


async def test_url_elicitation_needs_the_url_mode() -> None:
    async with harness() as h:
        await h.initialize("2025-11-25", {"elicitation": {}})  # form only
        resp = await h.request("tools/call", {"name": "test_url_elicitation", "arguments": {}})
        assert resp["result"]["isError"] is True
        resp = await h.request("tools/call", {"name": "test_url_elicitation_required", "arguments": {}})
        assert resp["result"]["isError"] is True


async def test_tasks_2025_11_25() -> None:
    async with harness() as h:
        init = await h.initialize("2025-11-25")
        assert init["result"]["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        tools = {t["name"]: t for t in (await h.request("tools/list"))["result"]["tools"]}
        assert tools["slow_task"]["execution"] == {"taskSupport": "required"} and "execution" not in tools["test_simple_text"]
        created = await h.request("tools/call", {"name": "echo", "arguments": {"text": "t"}, "task": {"ttl": 60000}})
        task = created["result"]["task"]
        assert task["status"] == "working" and task["ttl"] == 60000
        result = await h.request("tasks/result", {"taskId": task["taskId"]})
        assert result["result"]["content"][0]["text"] == "t"
        assert result["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
        got = await h.request("tasks/get", {"taskId": task["taskId"]})
        assert got["result"]["status"] == "completed"
        await h.wait_for(lambda m: m.get("method") == "notifications/tasks/status" and m["params"]["status"] == "completed")
        # isError results make the task fail
        failed = (await h.request("tools/call", {"name": "fail", "arguments": {}, "task": {}}))["result"]["task"]
        await h.request("tasks/result", {"taskId": failed["taskId"]})
        assert (await h.request("tasks/get", {"taskId": failed["taskId"]}))["result"]["status"] == "failed"
        # a JSON-RPC error of the call is the task's: failed, and tasks/result returns that same error
        erred = (await h.request("tools/call", {"name": "fail_rpc", "arguments": {}, "task": {}}))["result"]["task"]
        plain = await h.request("tools/call", {"name": "fail_rpc", "arguments": {}})
        assert (await h.request("tasks/result", {"taskId": erred["taskId"]}))["error"] == plain["error"]
        assert (await h.request("tasks/get", {"taskId": erred["taskId"]}))["result"]["status"] == "failed"
        # cancel a running task; cancelling again is -32602
        slow = (await h.request("tools/call", {"name": "slow_task", "arguments": {"seconds": 60}, "task": {}}))["result"]["task"]
        cancelled = await h.request("tasks/cancel", {"taskId": slow["taskId"]})
        assert cancelled["result"]["status"] == "cancelled"
        assert (await h.request("tasks/cancel", {"taskId": slow["taskId"]}))["error"]["code"] == codes.INVALID_PARAMS
        listed = (await h.request("tasks/list"))["result"]["tasks"]
        assert {t["taskId"] for t in listed} == {task["taskId"], failed["taskId"], erred["taskId"], slow["taskId"]}
        # taskSupport rules, unknown ids
        assert (await h.request("tools/call", {"name": "slow_task", "arguments": {}}))["error"]["code"] == codes.METHOD_NOT_FOUND
        assert (await h.request("tools/call", {"name": "test_simple_text", "arguments": {}, "task": {}}))["error"]["code"] == codes.METHOD_NOT_FOUND
        assert (await h.request("tasks/get", {"taskId": "nope"}))["error"]["code"] == codes.INVALID_PARAMS


async def test_task_field_is_ignored_where_tasks_do_not_exist() -> None:
    async with harness() as h:
        await h.initialize("2025-06-18")
        resp = await h.request("tools/call", {"name": "echo", "arguments": {"text": "x"}, "task": {}})
        assert resp["result"]["content"][0]["text"] == "x"
        assert "tasks" not in (await h.request("ping")) and "error" in await h.request("tasks/list")


async def test_default_pages() -> None:
    """By default tools fit on one page (first-page-only clients find every tool) while resources
    and prompts span several pages (cursor pagination is exercised)."""
    async with harness() as h:
        await h.initialize()
        assert "nextCursor" not in (await h.request("tools/list"))["result"]
        assert "nextCursor" in (await h.request("resources/list"))["result"]
        assert "nextCursor" in (await h.request("prompts/list"))["result"]


async def test_server_teardown_of_a_subscription() -> None:
    async with harness() as h:
        await h.send({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}, "notifications": {"toolsListChanged": True}}})
        await h.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        h.sent[(str, "sub")] = ("subscriptions/listen", "2026-07-28")
        h.conn.server.features.subscriptions.shutdown()
        final = await h.response("sub")
        assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub"
        cancelled = [m for m in h.messages() if m.get("method") == "notifications/cancelled"]
        assert cancelled and cancelled[0]["params"]["requestId"] == "sub"
