"""LegacySseTransport (2024-11-05 HTTP+SSE) against the purpose-built Starlette peer."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from conformance.transports import ConnectError, HttpStatusError, LegacySseTransport, PeerSilent, TransportClosed
from conformance.wire.envelope import Kind

from .conftest import HttpPeer
from .test_transport_http import wait_for
from .util import Recorder

pytestmark = pytest.mark.anyio


def req(method: str, id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method}).encode()


async def test_endpoint_post_and_message_events(http_peer: HttpPeer) -> None:
    t = LegacySseTransport(http_peer.url("/sse?sid=a1"))
    rec = Recorder(t)
    async with t:
        assert t.endpoint == http_peer.url("/messages?session_id=a1")
        assert rec.first("endpoint received")["same_origin"] is True
        ex = await t.send(req("tools/list", id=3))
        assert ex.status == 202 and ex.url == t.endpoint and ex.problems == []
        assert ex.request_headers["content-type"] == "application/json"
        got = await t.receive()
        assert got.envelope is not None and got.envelope.id == 3 and got.envelope.result == {"echo": "tools/list"}
        assert got.problem is None
        assert t.stream is not None
        assert got.meta == {"stream": t.stream.stream, "http_status": 200, "sse_id": None, "sse_event": "message"}
        assert t.stream.request_headers["accept"] == "text/event-stream"


async def test_relative_endpoint_is_resolved_against_the_sse_url(http_peer: HttpPeer) -> None:
    url = http_peer.url("/sse?sid=rel&endpoint=messages%3Fsession_id%3Drel")
    async with LegacySseTransport(url) as t:
        assert t.endpoint == str(httpx.URL(url).join("messages?session_id=rel"))
        assert t.endpoint == http_peer.url("/messages?session_id=rel")
        await t.send(req("ping", id="r"))
        assert (await t.receive()).envelope.id == "r"  # type: ignore[union-attr]


async def test_other_event_types_are_delivered_with_a_problem(http_peer: HttpPeer) -> None:
    async with LegacySseTransport(http_peer.url("/sse?sid=odd")) as t:
        await t.send(json.dumps({"jsonrpc": "2.0", "method": "legacy/other-type"}).encode())
        got = await t.receive()
        assert got.meta["sse_event"] == "notice"
        assert got.problem == "SSE event type 'notice' (server messages are 'message' events)"
        assert got.envelope is not None and got.envelope.method == "odd"


async def test_server_ending_the_stream_closes_the_transport(http_peer: HttpPeer) -> None:
    async with LegacySseTransport(http_peer.url("/sse?sid=bye")) as t:
        await t.send(req("legacy/bye"))
        got = await t.receive()  # what came before the end is delivered first
        assert got.envelope is not None and got.envelope.method == "bye"
        with anyio.fail_after(10):
            with pytest.raises(TransportClosed, match="the server ended the SSE stream"):
                await t.receive()
        with pytest.raises(TransportClosed):
            await t.receive()


async def test_rejected_post_is_returned_and_its_json_error_delivered(http_peer: HttpPeer) -> None:
    async with LegacySseTransport(http_peer.url("/sse?sid=bad")) as t:
        ex = await t.send(b"{not json")
        assert ex.status == 400
        assert ex.problems == ["POST to the endpoint answered 400 (expected 202 Accepted or 200)"]
        got = await t.receive()
        assert got.meta["http_status"] == 400 and got.meta["stream"] == ex.stream
        assert got.envelope is not None and got.envelope.kind is Kind.ERROR and got.envelope.error_code == -32700


async def test_no_endpoint_event_is_a_timeout(http_peer: HttpPeer) -> None:
    http_peer.state.disconnected.discard("no-endpoint")
    t = LegacySseTransport(http_peer.url("/sse-no-endpoint"), timeout=0.3)
    with pytest.raises(PeerSilent, match="no endpoint event"):
        await t.start()
    await wait_for(lambda: "no-endpoint" in http_peer.state.disconnected, "the server to see the disconnect")


async def test_stream_ending_before_the_endpoint(http_peer: HttpPeer) -> None:
    with pytest.raises(TransportClosed, match="ended before the endpoint event"):
        await LegacySseTransport(http_peer.url("/sse-ends")).start()


async def test_non_sse_answer_is_an_http_status_error(http_peer: HttpPeer) -> None:
    with pytest.raises(HttpStatusError) as info:
        await LegacySseTransport(http_peer.url("/post-only")).start()
    assert info.value.status == 405 and info.value.body == b"method not allowed"
    assert info.value.headers["allow"] == "POST"


async def test_refused_port_is_a_connect_error(free_port: int) -> None:
    url = f"http://127.0.0.1:{free_port}/sse"
    with anyio.fail_after(5):
        with pytest.raises(ConnectError, match="Connection refused"):
            await LegacySseTransport(url).start()


async def test_aclose_closes_the_stream(http_peer: HttpPeer) -> None:
    t = LegacySseTransport(http_peer.url("/sse?sid=cl"))
    async with t:
        stream = t.stream
    assert stream is not None and stream.done.is_set() and stream.closed_by == "client"
    with pytest.raises(TransportClosed):
        await t.receive()
