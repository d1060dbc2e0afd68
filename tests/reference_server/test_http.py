"""The HTTP front-ends against a real server process: streamable HTTP (legacy sessions and
2026-07-28 stateless) and the legacy HTTP+SSE transport."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from typing import Any, AsyncIterator, Iterator

import anyio
import httpx
import pytest

from conformance.wire.sse import SSEDecoder, SSEEvent
from tests.reference_server.helpers import http_server

pytestmark = pytest.mark.anyio

ACCEPT = "application/json, text/event-stream"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"


class _Server:
    def __init__(self, proc: subprocess.Popen, url: str) -> None:
        self.proc = proc
        self.url = url
        self.log: list[str] = []

    def drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    with http_server("--verbose", "--max-message-bytes", "65536") as (proc, url):
        srv = _Server(proc, url)
        reader = threading.Thread(target=srv.drain, daemon=True)
        reader.start()
        yield srv


@pytest.fixture
def server_url(server: _Server) -> str:
    return server.url


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def _init(version: str = "2025-11-25", caps: dict[str, Any] | None = None, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {"protocolVersion": version, "capabilities": caps or {}, "clientInfo": {"name": "t", "version": "1"}}}


async def _session(client: httpx.AsyncClient, url: str, version: str = "2025-11-25", caps: dict[str, Any] | None = None) -> dict[str, str]:
    r = await client.post(url, json=_init(version, caps), headers={"accept": ACCEPT})
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    headers = {"accept": ACCEPT, "mcp-session-id": sid}
    if version >= "2025-06-18":
        headers["mcp-protocol-version"] = version
    r = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert r.status_code == 202 and r.content == b""
    return headers


async def _events(resp: httpx.Response, *, until_id: Any = None, limit: int = 100) -> list[SSEEvent]:
    dec = SSEDecoder()
    out: list[SSEEvent] = []
    async for chunk in resp.aiter_bytes():
        for ev in dec.feed(chunk):
            out.append(ev)
            if until_id is not None and ev.data:
                msg = json.loads(ev.data)
                if msg.get("id") == until_id and "method" not in msg:
                    return out
        if len(out) >= limit:
            break
    return out


def _modern(method: str, params: dict[str, Any] | None = None, rid: Any = 1, caps: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    p = dict(params or {})
    p["_meta"] = {PV: "2026-07-28", CAPS: caps or {}, **meta}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def _modern_headers(msg: dict[str, Any], **extra: str) -> dict[str, str]:
    h = {"accept": ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": msg["method"]}
    params = msg.get("params", {})
    if msg["method"] in ("tools/call", "prompts/get"):
        h["mcp-name"] = params["name"]
    elif msg["method"] == "resources/read":
        h["mcp-name"] = params["uri"]
    h.update(extra)
    return h


# -- legacy streamable HTTP -----------------------------------------------------------------------


async def test_session_lifecycle(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url)
    sid = headers["mcp-session-id"]
    assert len(sid) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
    r = await client.post(server_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["result"]["content"][0]["text"] == "hi"
    r = await client.post(server_url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers={"accept": ACCEPT})
    assert r.status_code == 400  # no session
    r = await client.delete(server_url, headers={"mcp-session-id": sid})
    assert r.status_code == 200
    r = await client.post(server_url, json={"jsonrpc": "2.0", "id": 4, "method": "ping"}, headers=headers)
    assert r.status_code == 404
    r = await client.post(server_url, json={"jsonrpc": "2.0", "id": 5, "method": "ping"}, headers={**headers, "mcp-session-id": "no-such-session"})
    assert r.status_code == 404


@pytest.mark.parametrize(
    "headers,body,status",
    [
        ({"accept": "application/json"}, None, 406),
        ({"accept": "text/event-stream"}, None, 406),
        ({"accept": ACCEPT, "content-type": "text/plain"}, b"{}", 415),
        ({"accept": ACCEPT, "origin": "http://evil.example.com"}, None, 403),
        ({"accept": ACCEPT, "host": "evil.example.com"}, None, 403),
        ({"accept": ACCEPT, "mcp-protocol-version": "1999-01-01"}, None, 400),
    ],
)
async def test_http_level_refusals(client: httpx.AsyncClient, server_url: str, headers: dict[str, str], body: bytes | None, status: int) -> None:
    content = body if body is not None else json.dumps(_init()).encode()
    hdrs = {"content-type": "application/json", **headers}
    r = await client.post(server_url, content=content, headers=hdrs)
    assert r.status_code == status, r.text
    assert "mcp-session-id" not in r.headers


async def test_local_origin_is_accepted(client: httpx.AsyncClient, server_url: str) -> None:
    port = httpx.URL(server_url).port
    r = await client.post(server_url, json=_init(), headers={"accept": ACCEPT, "origin": f"http://localhost:{port}"})
    assert r.status_code == 200


async def test_invalid_json_and_oversized_bodies(client: httpx.AsyncClient, server_url: str) -> None:
    r = await client.post(server_url, content=b"{not json", headers={"accept": ACCEPT, "content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700 and r.json()["id"] is None
    r = await client.post(server_url, content=b"x" * 70000, headers={"accept": ACCEPT, "content-type": "application/json"})
    assert r.status_code == 413


async def test_sse_stream_priming_progress_and_response(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url)
    body = {"jsonrpc": "2.0", "id": "p", "method": "tools/call", "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "t"}}}
    async with client.stream("POST", server_url, json=body, headers=headers) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = await _events(r)
    assert events[0].data == "" and events[0].id and events[0].retry is not None  # priming
    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids) and all(ids)
    msgs = [json.loads(e.data) for e in events[1:]]
    assert [m.get("method") for m in msgs[:-1]] == ["notifications/progress"] * 3
    assert msgs[-1]["id"] == "p" and "result" in msgs[-1]


async def test_resumption_after_the_server_closes_the_connection(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url)
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "test_reconnection", "arguments": {}}}
    async with client.stream("POST", server_url, json=body, headers=headers) as r:
        events = await _events(r)
    assert events[0].data == "" and events[0].id  # the priming event ...
    assert not [e for e in events if e.data]  # ... and no message: the connection was closed mid-call
    last = events[0].id
    async with client.stream("GET", server_url, headers={**headers, "accept": "text/event-stream", "last-event-id": last}) as r:
        assert r.status_code == 200
        replay = await _events(r, until_id=7)
    result = json.loads(replay[-1].data)
    assert result["id"] == 7 and "result" in result
    r = await client.get(server_url, headers={**headers, "accept": "text/event-stream", "last-event-id": "nope-3"})
    assert r.status_code == 400


async def test_standalone_stream_gets_unrelated_notifications_once(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url)
    get_headers = {**headers, "accept": "text/event-stream"}
    async with client.stream("GET", server_url, headers=get_headers) as r1:
        assert r1.status_code == 200
        dec = SSEDecoder()
        it = r1.aiter_bytes()
        first = dec.feed(await it.__anext__())
        assert first and first[0].data == ""  # priming
        r = await client.post(server_url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "test_trigger_tool_change", "arguments": {}}}, headers=headers)
        assert r.status_code == 200
        with anyio.fail_after(5):
            got: list[SSEEvent] = []
            while not any(e.data for e in got):
                got += dec.feed(await it.__anext__())
        msg = json.loads(next(e.data for e in got if e.data))
        assert msg["method"] == "notifications/tools/list_changed"


async def test_server_to_client_request_over_http(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url, caps={"sampling": {}})
    body = {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}}}
    async with client.stream("POST", server_url, json=body, headers=headers) as r:
        dec = SSEDecoder()
        async for chunk in r.aiter_bytes():
            for ev in dec.feed(chunk):
                if not ev.data:
                    continue
                msg = json.loads(ev.data)
                if msg.get("method") == "sampling/createMessage":
                    answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}
                    a = await client.post(server_url, json=answer, headers=headers)
                    assert a.status_code == 202
                elif msg.get("id") == 11:
                    assert msg["result"]["content"][0]["text"] == "LLM response: hello"
                    return
    raise AssertionError("no tool result")


async def test_batches_only_in_2025_03_26(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url, "2025-03-26")
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    r = await client.post(server_url, json=batch, headers=headers)
    assert r.status_code == 200 and sorted(m["id"] for m in r.json()) == [1, 2]
    headers = await _session(client, server_url, "2025-06-18")
    r = await client.post(server_url, json=batch, headers=headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600


# -- 2026-07-28 ----------------------------------------------------------------------------------


async def test_modern_request_json_with_result_type(client: httpx.AsyncClient, server_url: str) -> None:
    msg = _modern("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    r = await client.post(server_url, json=msg, headers=_modern_headers(msg))
    assert r.status_code == 200 and "mcp-session-id" not in r.headers
    assert r.json()["result"]["resultType"] == "complete"


@pytest.mark.parametrize(
    "msg,headers,status,code",
    [
        (_modern("tools/list"), {"mcp-method": "prompts/list"}, 400, -32020),
        (_modern("tools/list"), {"mcp-method": "TOOLS/LIST"}, 400, -32020),
        (_modern("tools/list"), {"mcp-protocol-version": "2099-01-01"}, 400, -32020),
        (_modern("tools/call", {"name": "echo", "arguments": {"text": "x"}}), {"mcp-name": "other"}, 400, -32020),
        (_modern("tools/call", {"name": "test_custom_header", "arguments": {"region": "eu"}}), {"mcp-param-region": "us"}, 400, -32020),
        (_modern("tools/call", {"name": "test_custom_header", "arguments": {"region": "Hello"}}), {"mcp-param-region": "=?base64?SGVsbG8?="}, 400, -32020),
        (_modern("tools/call", {"name": "test_custom_header", "arguments": {"region": "Hello"}}), {"mcp-param-region": "=?base64?SGVsbG8=?="}, 200, None),
        (_modern("no/such-method"), {}, 404, -32601),
        (_modern("ping"), {}, 404, -32601),
        (_modern("tools/call", {"name": "test_missing_capability", "arguments": {}}), {}, 400, -32021),
        ({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}, {}, 400, -32602),
    ],
)
async def test_modern_validation(client: httpx.AsyncClient, server_url: str, msg: dict[str, Any], headers: dict[str, str], status: int, code: int | None) -> None:
    hdrs = _modern_headers(msg, **headers)
    r = await client.post(server_url, json=msg, headers=hdrs)
    assert r.status_code == status, r.text
    body = r.json()
    if code is None:
        assert "result" in body
    else:
        assert body["error"]["code"] == code and body["id"] == msg["id"]


async def test_modern_missing_method_header_and_unsupported_version(client: httpx.AsyncClient, server_url: str) -> None:
    msg = _modern("tools/list")
    hdrs = _modern_headers(msg)
    del hdrs["mcp-method"]
    r = await client.post(server_url, json=msg, headers=hdrs)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020
    msg["params"]["_meta"][PV] = "2099-01-01"
    r = await client.post(server_url, json=msg, headers={**_modern_headers(msg), "mcp-protocol-version": "2099-01-01"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32022
    assert r.json()["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}


async def test_modern_has_no_get_delete_or_batches(client: httpx.AsyncClient, server_url: str) -> None:
    h = {"accept": "text/event-stream", "mcp-protocol-version": "2026-07-28"}
    assert (await client.get(server_url, headers=h)).status_code == 405
    assert (await client.delete(server_url, headers=h)).status_code == 405
    msg = _modern("tools/list")
    r = await client.post(server_url, json=[msg], headers=_modern_headers(msg))
    assert r.status_code == 400


async def test_modern_subscription_stream(client: httpx.AsyncClient, server_url: str) -> None:
    msg = _modern("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid="s1")
    async with client.stream("POST", server_url, json=msg, headers=_modern_headers(msg)) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        dec = SSEDecoder()
        it = r.aiter_bytes()
        events: list[SSEEvent] = []
        while not events:
            events += [e for e in dec.feed(await it.__anext__()) if e.data]
        ack = json.loads(events[0].data)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        trigger = _modern("tools/call", {"name": "test_trigger_tool_change", "arguments": {}}, rid=2)
        assert (await client.post(server_url, json=trigger, headers=_modern_headers(trigger))).status_code == 200
        with anyio.fail_after(5):
            while len(events) < 2:
                events += [e for e in dec.feed(await it.__anext__()) if e.data]
        change = json.loads(events[1].data)
        assert change["method"] == "notifications/tools/list_changed"
        assert change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "s1"


# -- HTTP+SSE (2024-11-05) ------------------------------------------------------------------------


async def test_legacy_sse_transport(client: httpx.AsyncClient, server_url: str) -> None:
    base = server_url.rsplit("/", 1)[0]
    async with client.stream("GET", base + "/sse", headers={"accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        dec = SSEDecoder()
        it = r.aiter_bytes()
        events: list[SSEEvent] = []
        while not events:
            events += dec.feed(await it.__anext__())
        assert events[0].event == "endpoint"
        endpoint = base + events[0].data
        p = await client.post(endpoint, json=_init("2024-11-05"))
        assert p.status_code == 202
        p = await client.post(endpoint, content=b"{oops", headers={"content-type": "application/json"})
        assert p.status_code == 202
        got: list[dict[str, Any]] = []
        with anyio.fail_after(5):
            while len(got) < 2:
                got += [json.loads(e.data) for e in dec.feed(await it.__anext__()) if e.data and e.event == "message"]
        assert got[0]["result"]["protocolVersion"] == "2024-11-05"
        assert got[1]["error"]["code"] == -32700 and got[1]["id"] is None
    r = await client.post(base + "/messages?session_id=unknown", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 404


async def test_modern_closed_stream_cancels_the_request(client: httpx.AsyncClient, server: _Server) -> None:
    msg = _modern("tools/call", {"name": "slow", "arguments": {"seconds": 60, "steps": 60}}, rid="cancel-me", progressToken="tok")
    async with client.stream("POST", server.url, json=msg, headers=_modern_headers(msg)) as r:
        dec = SSEDecoder()
        it = r.aiter_bytes()
        while not [e for e in dec.feed(await it.__anext__()) if e.data]:
            pass
    with anyio.fail_after(10):
        while not any("cancelled request 'cancel-me'" in line for line in server.log):
            await anyio.sleep(0.05)


async def test_legacy_dropped_stream_does_not_cancel(client: httpx.AsyncClient, server_url: str) -> None:
    headers = await _session(client, server_url)
    body = {"jsonrpc": "2.0", "id": "keep", "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 0.5, "steps": 5}, "_meta": {"progressToken": 1}}}
    async with client.stream("POST", server_url, json=body, headers=headers) as r:
        dec = SSEDecoder()
        it = r.aiter_bytes()
        seen: list[SSEEvent] = []
        while not [e for e in seen if e.data]:
            seen += dec.feed(await it.__anext__())
    last = [e for e in seen if e.id][-1].id
    async with client.stream("GET", server_url, headers={**headers, "accept": "text/event-stream", "last-event-id": last}) as r:
        replay = await _events(r, until_id="keep")
    final = json.loads(replay[-1].data)
    assert final["id"] == "keep" and "result" in final
    assert all(e.id and int(e.id.rsplit("-", 1)[1]) > int(last.rsplit("-", 1)[1]) for e in replay)


# -- random bodies ---------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402

from tests.reference_server.robustness import expected_answers, inputs, is_long_running  # noqa: E402


@pytest.fixture(scope="module")
def fuzz_session(server: _Server) -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    with httpx.Client(timeout=10) as c:
        r = c.post(server.url, json=_init("2025-03-26"), headers={"accept": ACCEPT})
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-session-id": r.headers["mcp-session-id"]}
        c.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        yield c, headers


@settings(max_examples=int(os.environ.get("RS_FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(value=inputs())
def test_random_bodies_over_http(server: _Server, fuzz_session: tuple[httpx.Client, dict[str, str]], value: Any) -> None:
    """Every POST gets a 2xx or 4xx (never 5xx, never a hang); 202 exactly when nothing is owed."""
    if is_long_running(value):
        return
    client, headers = fuzz_session
    body = value if isinstance(value, bytes) else json.dumps(value).encode()
    r = client.post(server.url, content=body, headers=headers)
    assert r.status_code < 500, r.text
    want = expected_answers(body, batching=True)
    if r.status_code == 202:
        assert want == 0 and r.content == b""
    elif r.status_code == 200:
        assert want == 1
        if r.headers["content-type"].startswith("text/event-stream"):
            msgs = [json.loads(e.data) for e in SSEDecoder().feed(r.content) if e.data]
            assert sum(1 for m in msgs if isinstance(m, list) or "method" not in m) == 1
        else:
            assert isinstance(r.json(), (dict, list))
    # the session is still alive
    assert client.post(server.url, json={"jsonrpc": "2.0", "id": "alive", "method": "ping"}, headers=headers).status_code == 200


@settings(max_examples=int(os.environ.get("RS_FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(value=inputs())
def test_random_bodies_over_http_2026(server: _Server, value: Any) -> None:
    """Stateless 2026-07-28 POSTs (headers derived from the body when it has a method)."""
    if is_long_running(value):
        return
    body = value if isinstance(value, bytes) else json.dumps(value).encode()
    headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-protocol-version": "2026-07-28"}
    if isinstance(value, dict) and isinstance(value.get("method"), str) and value["method"].isascii() and value["method"].isprintable():
        headers["mcp-method"] = value["method"]
    with httpx.Client(timeout=10) as client:
        r = client.post(server.url, content=body, headers=headers)
    assert r.status_code < 500, r.text
    if r.status_code == 202:
        assert expected_answers(body, batching=False) == 0
