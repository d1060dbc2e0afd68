"""initialize() and the per-request _meta of stateless versions."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.runtime.peer import RawPeer
from conformance.transports.memory import MemoryTransport, memory_pair
from conformance.wire.envelope import Envelope, Kind

from .conftest import INIT_RESULT, silent, standard

pytestmark = pytest.mark.anyio

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"


class HttpLike(MemoryTransport):
    protocol_version: str | None = None


def http_like_pair() -> tuple[HttpLike, MemoryTransport]:
    a, b = memory_pair()
    return HttpLike(a._send_stream, a._receive_stream, label="http-like"), b


async def test_initialize_success(connect) -> None:
    async with connect(standard, transport_factory=http_like_pair, capabilities={"roots": {}}) as (peer, server):
        env = await peer.initialize()
        assert env.kind is Kind.RESULT
        assert peer.negotiated_version == INIT_RESULT["protocolVersion"]
        assert peer.server_capabilities == INIT_RESULT["capabilities"]
        assert peer.server_info == INIT_RESULT["serverInfo"]
        assert peer.transport.protocol_version == INIT_RESULT["protocolVersion"]
        init = await server.recv()
        initialized = await server.recv()
    assert init.method == "initialize"
    assert init.params == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {}},
        "clientInfo": peer.client_info,
    }
    assert set(peer.client_info) >= {"name", "version"}
    assert initialized.kind is Kind.NOTIFICATION and initialized.method == "notifications/initialized"
    assert "params" not in initialized.value


async def test_initialize_options(connect) -> None:
    async with connect(standard) as (peer, server):
        await peer.initialize(protocol_version="1999-01-01", capabilities={"x": {}}, client_info={"name": "n", "version": "1"}, send_initialized=False)
        init = await server.recv()
        await peer.call("ping")  # barrier: no initialized notification came in between
        assert (await server.recv()).method == "ping"
    assert init.params == {"protocolVersion": "1999-01-01", "capabilities": {"x": {}}, "clientInfo": {"name": "n", "version": "1"}}


async def test_initialize_error_is_returned_not_judged(connect) -> None:
    async def refuses(server, env: Envelope) -> None:
        if env.kind is Kind.REQUEST:
            await server.error(env.id, -32602, "Unsupported protocol version")

    async with connect(refuses) as (peer, server):
        env = await peer.initialize()
        assert env.kind is Kind.ERROR and env.error_code == -32602
        assert peer.negotiated_version is None and peer.server_capabilities is None
        await peer.request("ping", id="barrier")
        await server.recv()
        assert (await server.recv()).id == "barrier"  # no initialized notification after an error


async def test_initialize_with_a_strange_result(connect) -> None:
    async def odd(server, env: Envelope) -> None:
        if env.kind is Kind.REQUEST:
            await server.result(env.id, {"protocolVersion": 5, "capabilities": []})

    async with connect(odd) as (peer, _):
        env = await peer.initialize(send_initialized=False)
        assert env.result == {"protocolVersion": 5, "capabilities": []}
        assert peer.negotiated_version is None and peer.server_capabilities is None
        assert peer.initialize_result == env.result


async def test_stateless_requests_carry_meta(connect) -> None:
    caps: dict[str, Any] = {"elicitation": {}}
    async with connect(silent, version="2026-07-28", capabilities=caps, client_info={"name": "c", "version": "2"}) as (peer, server):
        await peer.request("tools/list")
        await peer.request("tools/call", {"name": "t", "arguments": {}})
        await peer.request("tools/call", {"name": "t", "_meta": {PV: "2025-11-25", "progressToken": 1}})
        await peer.request("tools/list", meta=None)
        await peer.request("tools/list", meta={"progressToken": "p", CAPS: {}})
        await peer.request("tools/list", [1, 2])
        await peer.request("tools/list", {"_meta": "not an object"})
        await peer.notify("notifications/cancelled", {"requestId": 1})
        got = [await server.recv() for _ in range(8)]
    auto = {PV: "2026-07-28", CAPS: caps, INFO: {"name": "c", "version": "2"}}
    assert got[0].params == {"_meta": auto}
    assert got[1].params == {"name": "t", "arguments": {}, "_meta": auto}
    assert got[2].params == {"name": "t", "_meta": {**auto, PV: "2025-11-25", "progressToken": 1}}  # caller wins
    assert "params" not in got[3].value
    assert got[4].params == {"_meta": {**auto, "progressToken": "p", CAPS: {}}}
    assert got[5].params == [1, 2]
    assert got[6].params == {"_meta": "not an object"}
    assert got[7].params == {"requestId": 1}  # notifications get no _meta


async def test_caller_params_are_not_mutated(connect) -> None:
    params = {"name": "t", "_meta": {"progressToken": 1}}
    async with connect(silent, version="2026-07-28") as (peer, server):
        await peer.request("tools/call", params)
        await server.recv()
    assert params == {"name": "t", "_meta": {"progressToken": 1}}


async def test_no_meta_when_disabled_or_stateful(connect) -> None:
    async with connect(silent, version="2026-07-28", auto_meta=False) as (peer, server):
        await peer.request("tools/list")
        await peer.request("tools/list", meta={"progressToken": 3})
        assert "params" not in (await server.recv()).value
        assert (await server.recv()).params == {"_meta": {"progressToken": 3}}
    async with connect(silent, version="2025-11-25") as (peer, server):
        await peer.request("tools/list")
        await peer.request("tools/list", meta={"progressToken": 3})
        assert "params" not in (await server.recv()).value
        assert (await server.recv()).params == {"_meta": {"progressToken": 3}}
    async with connect(silent, version="2026-07-28", role="server") as (peer, server):
        await peer.request("x/y")
        assert "params" not in (await server.recv()).value


async def test_meta_must_be_a_dict_or_sentinel(connect) -> None:
    async with connect(silent, version="2026-07-28") as (peer, _):
        with pytest.raises(TypeError):
            await peer.request("tools/list", meta=["nope"])


async def test_raw_peer_rejects_unknown_role() -> None:
    a, b = memory_pair()
    with pytest.raises(ValueError):
        RawPeer(a, version="2025-11-25", role="proxy")
    await a.aclose()
    await b.aclose()
