"""StreamableHttpTransport against the purpose-built Starlette peer (tests/transports/conftest.py)."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest

from conformance.transports import ConnectError, HttpExchange, PeerSilent, StreamableHttpTransport, TransportClosed, TransportTimeout
from conformance.wire.headers import header_value, request_metadata_headers
from conformance.wire.envelope import Kind

from .conftest import SESSION, HttpPeer
from .util import Recorder

pytestmark = pytest.mark.anyio


def req(method: str, id: Any = 1, **params: Any) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params:
        msg["params"] = params
    return json.dumps(msg).encode()


def notif(method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": method}).encode()


async def wait_for(predicate: Any, what: str, timeout: float = 10.0) -> None:
    """Poll ``predicate`` with a deadline (for things only the server thread can observe)."""
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)
    assert predicate(), f"timed out waiting for {what}"


async def echoed_headers(t: StreamableHttpTransport, **opts: Any) -> dict[str, str]:
    await t.send(req("echo/headers", id="h"), **opts)
    got = await t.receive()
    assert got.envelope is not None and got.envelope.id == "h"
    return {k.lower(): v for k, v in got.envelope.result["headers"].items()}


async def test_json_response_is_a_message_and_session_is_captured(http_peer: HttpPeer) -> None:
    t = StreamableHttpTransport(http_peer.url(), protocol_version="2025-11-25")
    rec = Recorder(t)
    async with t:
        ex = await t.send(req("initialize", id=0))
        assert isinstance(ex, HttpExchange)
        assert (ex.method, ex.status, ex.content_type) == ("POST", 200, "application/json")
        assert ex.headers["mcp-session-id"] == SESSION and ex.done.is_set()
        got = await t.receive()
        assert got.raw == ex.body
        assert got.envelope is not None and got.envelope.kind is Kind.RESULT and got.envelope.id == 0
        assert got.meta == {"stream": ex.stream, "http_status": 200, "content_type": "application/json"}
        assert t.session_id == SESSION
        headers = await echoed_headers(t)
    assert headers["accept"] == "application/json, text/event-stream"
    assert headers["content-type"] == "application/json"
    assert headers["mcp-session-id"] == SESSION
    assert headers["mcp-protocol-version"] == "2025-11-25"
    assert "mcp-method" not in headers
    line = rec.first(f"POST {http_peer.url()} -> 200 OK")
    assert line["status"] == 200 and line["response_headers"]["mcp-session-id"] == SESSION
    assert rec.first("session id captured")["session_id"] == SESSION


async def test_caller_headers_override_and_none_removes(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url(), headers={"Origin": "http://evil.example", "User-Agent": None}) as t:
        headers = await echoed_headers(t, headers={"Accept": "application/json", "Content-Type": None, "X-Extra": "1"})
    assert headers["accept"] == "application/json"
    assert "content-type" not in headers and "user-agent" not in headers
    assert headers["origin"] == "http://evil.example" and headers["x-extra"] == "1"
    assert "mcp-session-id" not in headers and "mcp-protocol-version" not in headers


async def test_request_metadata_headers(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url(), request_headers=True, protocol_version="2026-07-28") as t:
        ex = await t.send(req("tools/call", name="get_weather", arguments={}))
        await t.receive()
        assert ex.request_headers["mcp-method"] == "tools/call"
        assert ex.request_headers["mcp-name"] == "get_weather"
        ex = await t.send(req("resources/read", uri="file:///projects/app/config.json"))
        await t.receive()
        assert ex.request_headers["mcp-name"] == "file:///projects/app/config.json"
        ex = await t.send(req("prompts/get", name="Hello, 世界"))
        await t.receive()
        assert ex.request_headers["mcp-name"] == "=?base64?" + base64.b64encode("Hello, 世界".encode()).decode() + "?="
        ex = await t.send(req("tools/list"))
        await t.receive()
        assert ex.request_headers["mcp-method"] == "tools/list" and "mcp-name" not in ex.request_headers
        ex = await t.send(b"not json")
        assert "mcp-method" not in ex.request_headers


def test_header_value_encoding_follows_the_spec_examples() -> None:
    # 2026-07-28 basic/transports/streamable-http#value-encoding, "Encoding examples"
    assert header_value("us-west1") == "us-west1"
    assert header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?="
    assert header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    assert request_metadata_headers(notif("notifications/initialized")) == [("Mcp-Method", "notifications/initialized")]
    assert request_metadata_headers(b"[1]") == []


async def test_202_delivers_nothing(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url()) as t:
        ex = await t.send(notif("notifications/initialized"))
        assert ex.status == 202 and ex.body == b""
        await t.send(req("ping", id=7))
        got = await t.receive()  # the first message is the ping's answer: the 202 carried none
        assert got.envelope is not None and got.envelope.id == 7


async def test_sse_response_messages_priming_and_retry(http_peer: HttpPeer) -> None:
    t = StreamableHttpTransport(http_peer.url())
    rec = Recorder(t)
    async with t:
        ex = await t.send(req("sse/stream", id=5))
        assert ex.is_sse and ex.headers["x-accel-buffering"] == "no"
        first = await t.receive()
        second = await t.receive()
        assert first.envelope is not None and first.envelope.method == "notifications/progress"
        assert first.meta == {"stream": ex.stream, "http_status": 200, "sse_id": "e1", "sse_event": "message"}
        assert second.envelope is not None and second.envelope.id == 5 and second.meta["sse_id"] == "e2"
        assert await ex.wait_done(10)
    assert ex.closed_by == "server" and ex.last_event_id == "e2"
    assert [e.id for e in ex.sse_events] == ["p0", "e1", None, "e2"]
    assert rec.first("SSE priming event")["sse_id"] == "p0"
    assert rec.first("SSE retry")["retry"] == 50
    texts = rec.texts()
    assert texts.index("SSE stream opened") < texts.index("SSE stream ended by the server")


async def test_error_status_with_json_body_is_delivered(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url()) as t:
        ex = await t.send(req("error/400"))
        assert ex.status == 400
        got = await t.receive()
        assert got.meta["http_status"] == 400
        assert got.envelope is not None and got.envelope.kind is Kind.ERROR and got.envelope.error_code == -32600
        ex = await t.send(req("text/404"))
        assert ex.status == 404 and ex.body == b"no such session"
        await t.send(req("ping", id="after"))
        got = await t.receive()  # the text error page was not a message
        assert got.envelope is not None and got.envelope.id == "after"


async def test_wrong_content_type_and_oversized_body_are_problems(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url(), max_body_bytes=1000) as t:
        await t.send(req("json/text-plain"))
        got = await t.receive()
        assert got.problem is not None and "text/plain" in got.problem
        assert got.envelope is not None and got.envelope.kind is Kind.RESULT
        ex = await t.send(req("json/huge"))
        assert ex.body is not None and len(ex.body) == 1000
        assert ex.problems == ["response body exceeds 1000 bytes (truncated)"]
        got = await t.receive()
        assert got.envelope is None and got.problem == ex.problems[0]


async def test_stalled_body_is_bounded_and_recorded(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url(), timeout=0.3) as t:
        ex = await t.send(req("json/stall", id="st"))
        assert ex.status == 200 and ex.body == b'{"jsonrpc":"2.0",'
        assert ex.problems and "not complete within 0.3 s" in ex.problems[0]
        assert ex.closed_by == "client" and ex.stalled
    await wait_for(lambda: "stall:st" in http_peer.state.disconnected, "the server to see the disconnect")


async def test_no_answer_is_a_timeout(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url(), timeout=0.3) as t:
        # the server took the request and never answered: its silence (PeerSilent), a TransportTimeout
        with pytest.raises(PeerSilent, match="no response headers within 0.3 s"):
            await t.send(req("slow", id="sl"))
        await t.send(req("ping", id=2))  # still usable
        assert (await t.receive()).envelope.id == 2  # type: ignore[union-attr]
    await wait_for(lambda: "slow:sl" in http_peer.state.disconnected, "the server to see the disconnect")


async def test_refused_port_is_a_connect_error(free_port: int) -> None:
    url = f"http://127.0.0.1:{free_port}/mcp"
    async with StreamableHttpTransport(url) as t:
        with anyio.fail_after(5):
            with pytest.raises(ConnectError) as info:
                await t.send(req("ping"))
    assert url in str(info.value) and "Connection refused" in str(info.value)
    assert info.value.detail["url"] == url


@pytest.mark.parametrize("url", ["ftp://example.test/mcp", "not a url", "/mcp", "http:///mcp"])
async def test_bad_url_is_a_connect_error(url: str) -> None:
    t = StreamableHttpTransport(url)
    with pytest.raises(ConnectError, match="bad URL"):
        await t.start()
    await t.aclose()


async def test_get_stream_close_and_resume(http_peer: HttpPeer) -> None:
    http_peer.state.disconnected.discard("get")
    async with StreamableHttpTransport(http_peer.url()) as t:
        ex = await t.open_get_stream()
        assert ex.is_sse and ex.request_headers["accept"] == "text/event-stream"
        got = await t.receive()
        assert got.envelope is not None and got.envelope.method == "hello"
        assert got.meta["stream"] == ex.stream and ex.stream.startswith("get:")
        assert t.open_streams == [ex.stream]
        await t.close_stream(ex.stream)
        assert ex.done.is_set() and ex.closed_by == "client" and t.open_streams == []
        await wait_for(lambda: "get" in http_peer.state.disconnected, "the server to see the disconnect")
        await t.close_stream(ex.stream)  # already closed: no-op
        again = await t.open_get_stream(last_event_id=ex.last_event_id)
        assert again.request_headers["last-event-id"] == "g1"
        got = await t.receive()
        assert got.envelope is not None and got.envelope.method == "resumed"
        assert got.envelope.params == {"after": "g1"} and got.meta["sse_id"] == "g1+1"


async def test_get_not_offered_delete_and_raw_requests(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url("/post-only")) as t:
        ex = await t.open_get_stream()
        assert ex.status == 405 and ex.headers["allow"] == "POST" and not ex.is_sse
    async with StreamableHttpTransport(http_peer.url()) as t:
        assert (await t.delete_session()).status == 404
        await t.send(req("initialize", id=0))
        await t.receive()
        ex = await t.delete_session()
        assert ex.status == 200 and ex.request_headers["mcp-session-id"] == SESSION
        ex = await t.raw_request("put", body=b"{}", headers={"Content-Type": "text/plain"})
        assert ex.method == "PUT" and ex.status == 405
        ex = await t.raw_request("GET", headers={"Accept": "application/json"})
        assert ex.status == 406 and ex.body == b"not acceptable"
        http_peer.state.disconnected.discard("get")
        ex = await t.raw_request("GET", read_body=False)
        assert ex.is_sse and ex.done.is_set() and ex.body is None and ex.closed_by == "client"
        await wait_for(lambda: "get" in http_peer.state.disconnected, "the server to see the disconnect")


async def test_other_session_id_is_not_adopted(http_peer: HttpPeer) -> None:
    t = StreamableHttpTransport(http_peer.url())
    rec = Recorder(t)
    async with t:
        await t.send(req("initialize", id=0))
        await t.send(req("other/session"))
        assert t.session_id == SESSION
    assert rec.first("response carries a different session id")["session_id"] == "someone-else"


async def test_invalid_utf8_in_sse_is_a_problem(http_peer: HttpPeer) -> None:
    async with StreamableHttpTransport(http_peer.url()) as t:
        ex = await t.send(req("sse/bad-utf8", id=9))
        got = await t.receive()
        assert got.problem is not None and "invalid UTF-8" in got.problem
        assert got.envelope is not None and got.envelope.method == "x"
        assert (await t.receive()).envelope.id == 9  # type: ignore[union-attr]
        assert await ex.wait_done(10)
        assert any("invalid UTF-8" in p for p in ex.problems)


async def test_aclose_ends_open_streams(http_peer: HttpPeer) -> None:
    t = StreamableHttpTransport(http_peer.url())
    async with t:
        ex = await t.send(req("sse/hold", id="hd"))
        got = await t.receive()
        assert got.envelope is not None and got.envelope.method == "notifications/message"
        assert not ex.done.is_set()
    assert ex.done.is_set() and ex.closed_by == "client"
    await wait_for(lambda: "hold:hd" in http_peer.state.disconnected, "the server to see the disconnect")
    with pytest.raises(TransportClosed):
        await t.receive()
    with pytest.raises(TransportClosed):
        await t.send(req("ping"))
    await t.aclose()  # idempotent


async def test_cancelled_receive_cleans_up(http_peer: HttpPeer) -> None:
    box: dict[str, HttpExchange] = {}

    async def run() -> None:
        async with StreamableHttpTransport(http_peer.url()) as t:
            box["ex"] = await t.send(req("sse/hold", id="cx"))
            await t.receive()
            await t.receive()  # nothing more comes

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await wait_for(lambda: "ex" in box, "the stream to open")
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert box["ex"].done.is_set() and box["ex"].closed_by == "client"
    await wait_for(lambda: "hold:cx" in http_peer.state.disconnected, "the server to see the disconnect")


async def test_flood_is_held_back_not_buffered(http_peer: HttpPeer) -> None:
    """A server streaming without end: the reader stops at a full queue (TCP backpressure), drops nothing."""
    async with StreamableHttpTransport(http_peer.url(), max_queued=4) as t:
        ex = await t.send(req("sse/flood", id="fl"))
        stats = t._send_q.statistics
        await wait_for(lambda: stats().tasks_waiting_send == 1, "the reader to block on the full queue")
        assert stats().current_buffer_used == 4
        for n in range(1, 201):  # in order, nothing lost
            got = await t.receive()
            assert got.envelope is not None and got.envelope.params["n"] == n
        await wait_for(lambda: stats().tasks_waiting_send == 1, "the reader to block again")
        assert stats().current_buffer_used == 4
    assert ex.closed_by == "client"
    await wait_for(lambda: "flood:fl" in http_peer.state.disconnected, "the server to see the disconnect")


async def test_a_post_never_answered_is_the_peers_silence_for_the_raw_peer(http_peer: HttpPeer) -> None:
    """Through RawPeer, a request whose POST gets no response headers -- or a body that never ends --
    is the same ExpectTimeout as a response that never comes (a verdict about the peer), not a
    transport failure of ours; the peer stays usable."""
    from conformance.runtime.peer import ExpectTimeout, RawPeer

    async with RawPeer(StreamableHttpTransport(http_peer.url(), timeout=0.3), version="2025-11-25", timeout=0.3) as peer:
        with pytest.raises(ExpectTimeout, match=r'the response to request "sl" \(slow\).*no response headers within 0.3 s'):
            await peer.request("slow", id="sl")
        with pytest.raises(ExpectTimeout, match=r'the response to request "st" \(json/stall\).*not complete within 0.3 s'):
            await peer.request("json/stall", id="st")
        assert (await peer.call("ping")) == {"method": "ping"}  # still usable (this test peer echoes)
