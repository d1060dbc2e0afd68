"""Requests from the other side: automatic answers, handlers, holding for expect_request."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conformance.runtime.peer import HOLD, ExpectTimeout
from conformance.wire.envelope import Envelope, Kind

pytestmark = pytest.mark.anyio


def asks(*requests: dict[str, Any]):
    """A server that sends ``requests`` when it gets the ``go`` notification."""

    async def handler(server, env: Envelope) -> None:
        if env.kind is Kind.NOTIFICATION and env.method == "go":
            for i, req in enumerate(requests):
                await server.send({"jsonrpc": "2.0", "id": f"s{i}", **req})

    return handler


async def replies(server, n: int) -> list[dict[str, Any]]:
    out = []
    while len(out) < n:
        env = await server.recv()
        if env.is_response:
            out.append(env.value)
    return out


async def test_ping_roots_and_unknown_are_answered(connect) -> None:
    handler = asks({"method": "ping"}, {"method": "roots/list"}, {"method": "elicitation/create", "params": {}}, {"method": "x/y"})
    async with connect(handler, capabilities={"roots": {"listChanged": True}}) as (peer, server):
        await peer.notify("go")
        await server.recv()  # our go
        got = await replies(server, 4)
    assert got == [
        {"jsonrpc": "2.0", "id": "s0", "result": {}},
        {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}},
        {"jsonrpc": "2.0", "id": "s2", "error": {"code": -32601, "message": "Method not found: elicitation/create"}},
        {"jsonrpc": "2.0", "id": "s3", "error": {"code": -32601, "message": "Method not found: x/y"}},
    ]
    auto = [e.meta["auto_reply"] for e in peer.transcript if e.direction == "out" and "auto_reply" in e.meta]
    assert len(auto) == 4


async def test_roots_without_the_capability_is_method_not_found(connect) -> None:
    async with connect(asks({"method": "roots/list"})) as (peer, server):
        await peer.notify("go")
        await server.recv()
        (got,) = await replies(server, 1)
    assert got["error"]["code"] == -32601


async def test_ping_does_not_exist_in_2026(connect) -> None:
    async with connect(asks({"method": "ping"}), version="2026-07-28") as (peer, server):
        await peer.notify("go")
        await server.recv()
        (got,) = await replies(server, 1)
    assert got["error"]["code"] == -32601


async def test_expect_request_waiting_first_takes_the_request(connect) -> None:
    async with connect(asks({"method": "sampling/createMessage", "params": {"maxTokens": 5}})) as (peer, server):
        async with anyio.create_task_group() as tg:
            got: list[Envelope] = []

            async def wait() -> None:
                got.append(await peer.expect_request("sampling/createMessage"))

            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            await peer.notify("go")
        (req,) = got
        assert req.params == {"maxTokens": 5}
        await peer.respond(req.id, {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
        await server.recv()
        (reply,) = await replies(server, 1)
    assert reply["id"] == "s0" and reply["result"]["model"] == "m"
    assert not any("auto_reply" in e.meta for e in peer.transcript if e.direction == "out")


async def test_hold_keeps_requests_for_later(connect) -> None:
    async with connect(asks({"method": "elicitation/create", "params": {}}, {"method": "ping"})) as (peer, server):
        peer.on_request("elicitation/create", HOLD)
        await peer.notify("go")
        await server.recv()
        (ping_reply,) = await replies(server, 1)  # ping still answered automatically
        assert ping_reply["id"] == "s1"
        req = await peer.expect_request("elicitation/create")
        assert req.id == "s0"
        await peer.respond_error(req.id, -1, "declined")
        (reply,) = await replies(server, 1)
    assert reply["error"]["code"] == -1


async def test_late_expect_request_explains_the_automatic_answer(connect) -> None:
    async with connect(asks({"method": "sampling/createMessage", "params": {}})) as (peer, server):
        await peer.notify("go")
        await server.recv()
        await replies(server, 1)
        with pytest.raises(ExpectTimeout) as info:
            await peer.expect_request("sampling/createMessage", timeout=0.05)
    assert "answered automatically" in str(info.value) and "on_request" in str(info.value)


async def test_handlers_sync_and_async(connect) -> None:
    calls: list[Any] = []

    def sync_handler(env: Envelope) -> Any:
        calls.append(env.id)
        return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}

    async def async_handler(env: Envelope) -> Any:
        await anyio.sleep(0)
        calls.append(env.id)
        return {"action": "decline"}

    def holding_handler(env: Envelope) -> Any:
        calls.append(env.id)
        return HOLD

    handler = asks({"method": "roots/list"}, {"method": "elicitation/create", "params": {}}, {"method": "x/held"})
    async with connect(handler) as (peer, server):
        peer.on_request("roots/list", sync_handler)
        peer.on_request("elicitation/create", async_handler)
        peer.on_request("x/held", holding_handler)
        await peer.notify("go")
        await server.recv()
        got = await replies(server, 2)
        held = await peer.expect_request("x/held")
    assert calls == ["s0", "s1", "s2"]
    assert got[0]["result"]["roots"][0]["name"] == "tmp"
    assert got[1]["result"] == {"action": "decline"}
    assert held.id == "s2"


async def test_server_role_answers_ping_and_holds_the_rest(connect) -> None:
    handler = asks({"method": "ping"}, {"method": "initialize", "params": {}})
    async with connect(handler, role="server") as (peer, server):
        await peer.notify("go")
        await server.recv()
        (got,) = await replies(server, 1)
        assert got == {"jsonrpc": "2.0", "id": "s0", "result": {}}
        init = await peer.expect_request("initialize")
        assert init.id == "s1"


async def test_notifications_are_never_answered(connect) -> None:
    async def notifier(server, env: Envelope) -> None:
        if env.method == "go":
            await server.notify("notifications/message", {"level": "info", "data": 1})
            await server.send({"jsonrpc": "2.0", "id": "barrier", "method": "ping"})

    async with connect(notifier) as (peer, server):
        await peer.notify("go")
        await server.recv()
        (reply,) = await replies(server, 1)
        assert reply["id"] == "barrier"  # the ping was the first thing answered
        assert (await peer.expect_notification("notifications/message")).params["data"] == 1
