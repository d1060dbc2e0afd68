"""The send side is raw: bytes verbatim, any JSON value, any id."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.runtime.peer import AUTO, ConnectionLost, RawPeer
from conformance.transports.base import Inbound, Transport, TransportClosed
from conformance.transports.memory import memory_pair
from conformance.wire.envelope import MISSING, Kind, same_id

from .conftest import silent  # noqa: F401  (helpers live in conftest)

pytestmark = pytest.mark.anyio


async def test_send_raw_is_verbatim(connect) -> None:
    async with connect(silent) as (peer, server):
        await peer.send_raw(b'{"jsonrpc":"2.0", "id":1,"id":2, "method":"ping"}')
        await peer.send_raw(b"{not json")
        await peer.send_raw(b"")
        first = await server.recv()
        assert first.raw == b'{"jsonrpc":"2.0", "id":1,"id":2, "method":"ping"}'
        assert any("duplicate key" in p for p in first.problems)
        assert (await server.recv()).raw == b"{not json"
        assert (await server.recv()).raw == b""
    outbound = [e for e in peer.transcript if e.direction == "out"]
    assert [e.raw for e in outbound] == [first.raw, b"{not json", b""]
    assert outbound[1].envelope is not None and outbound[1].envelope.kind is Kind.PARSE_ERROR


async def test_send_json_any_value(connect) -> None:
    async with connect(silent) as (peer, server):
        await peer.send_json([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "n"}])
        await peer.send_json("just a string")
        await peer.send_json(None)
        batch = await server.recv()
        assert batch.kind is Kind.BATCH and [i.kind for i in batch.items] == [Kind.REQUEST, Kind.NOTIFICATION]
        assert (await server.recv()).value == "just a string"
        assert (await server.recv()).value is None


async def test_explicit_ids_are_sent_with_their_exact_type(connect) -> None:
    ids: list[Any] = [None, "7", 7, 1.5, True, 0, "", {"a": 1}, [1]]
    async with connect(silent) as (peer, server):
        for value in ids:
            got = await peer.request("ping", id=value)
            assert same_id(got, value)
        for value in ids:
            env = await server.recv()
            assert env.id == value and type(env.id) is type(value)
            assert json.loads(env.raw)["id"] == value


async def test_duplicate_ids_are_sent_as_asked(connect) -> None:
    async with connect(silent) as (peer, server):
        await peer.request("ping", id=5)
        await peer.request("tools/list", id=5)
        assert (await server.recv()).id == 5
        assert (await server.recv()).id == 5
        assert peer.sent_method(5) == "tools/list"  # the last one wins for validation


async def test_auto_ids_are_unique_integers_and_avoid_explicit_ones(connect) -> None:
    async with connect(silent) as (peer, _server):
        await peer.request("ping", id=2)
        await peer.request("ping", id="3")  # a string 3 does not block the integer 3
        auto = [await peer.request("ping") for _ in range(4)]
        auto.append(await peer.request("ping", id=AUTO))
    assert all(type(i) is int for i in auto)
    assert len(set(auto)) == len(auto)
    assert 2 not in auto
    assert 3 in auto


async def test_request_notify_respond_shapes(connect) -> None:
    async with connect(silent) as (peer, server):
        await peer.request("a", id=1)
        await peer.request("b", {"x": 1}, id=2)
        await peer.request("c", [1, 2], id=3)
        await peer.notify("n")
        await peer.notify("m", {"y": 2})
        await peer.respond("r", {"ok": True})
        await peer.respond_error(9, -32000, "bad")
        await peer.respond_error(10, -32000, "bad", data={"why": 1})
        await peer.respond_error(None, "not-an-int", 5)
        got = [json.loads((await server.recv()).raw) for _ in range(9)]
    assert got == [
        {"jsonrpc": "2.0", "id": 1, "method": "a"},
        {"jsonrpc": "2.0", "id": 2, "method": "b", "params": {"x": 1}},
        {"jsonrpc": "2.0", "id": 3, "method": "c", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": "n"},
        {"jsonrpc": "2.0", "method": "m", "params": {"y": 2}},
        {"jsonrpc": "2.0", "id": "r", "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "bad"}},
        {"jsonrpc": "2.0", "id": 10, "error": {"code": -32000, "message": "bad", "data": {"why": 1}}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": "not-an-int", "message": 5}},
    ]


async def test_raw_requests_are_tracked_for_validation(connect) -> None:
    async def answer(server, env) -> None:
        for item in env.items or [env]:
            if item.kind is Kind.REQUEST:
                await server.result(item.id, {})

    async with connect(answer) as (peer, _server):
        await peer.send_json({"jsonrpc": "2.0", "id": "x", "method": "tools/list"})
        await peer.send_raw(b'{"jsonrpc":"2.0","id":8,"method":"prompts/list"}')
        await peer.send_json([{"jsonrpc": "2.0", "id": 11, "method": "resources/list"}])
        await peer.send_bytes(b'{"jsonrpc":"2.0","id":12,"method":"ping"}\n')
        for rid in ("x", 8, 11, 12):
            await peer.expect_response(rid)
    answering = {e.envelope.id: e.meta.get("answering") for e in peer.transcript if e.direction == "in"}
    assert answering == {"x": "tools/list", 8: "prompts/list", 11: "resources/list", 12: "ping"}


async def test_send_bytes_needs_a_transport_that_can(connect) -> None:
    class NoBytes(Transport):
        name = "no-bytes"

        async def send(self, data: bytes, **opts: Any) -> None:
            pass

        async def receive(self) -> Inbound:
            raise TransportClosed("nothing")

        async def aclose(self) -> None:
            pass

    async with RawPeer(NoBytes(), version="2025-11-25") as peer:
        with pytest.raises(TypeError):
            await peer.send_bytes(b"x")


async def test_send_after_the_other_side_closed_is_connection_lost() -> None:
    ours, theirs = memory_pair()
    async with RawPeer(ours, version="2025-11-25", timeout=2) as peer:
        await theirs.aclose()
        await peer.expect_close()
        with pytest.raises(ConnectionLost) as info:
            await peer.request("ping")
        assert isinstance(info.value.cause, TransportClosed)
    assert any(e.direction == "note" and "send failed" in (e.text or "") for e in peer.transcript)


async def test_transport_options_are_passed_through_and_recorded(connect) -> None:
    seen: list[dict[str, Any]] = []

    class Recording(Transport):
        name = "recording"

        async def send(self, data: bytes, **opts: Any) -> str:
            seen.append(opts)
            return "exchange"

        async def receive(self) -> Inbound:
            raise TransportClosed("nothing")

        async def aclose(self) -> None:
            pass

    async with RawPeer(Recording(), version="2025-11-25") as peer:
        await peer.request("ping", headers={"X-Test": "1"})
        await peer.notify("n", headers={"X-Other": None})
        assert peer.last_exchange == "exchange"
    assert seen == [{"headers": {"X-Test": "1"}}, {"headers": {"X-Other": None}}]
    out = [e for e in peer.transcript if e.direction == "out"]
    assert out[0].meta["opts"] == {"headers": {"X-Test": "1"}}
    assert out[0].envelope is not None and out[0].envelope.params is MISSING
