"""A purpose-built HTTP peer for the transport tests: a Starlette app served by uvicorn on 127.0.0.1.

The server runs in its own thread and event loop (one per test session), so tests drive it over
real sockets without sharing their loop with it.  Each behaviour the tests need has its own
JSON-RPC method (POST /mcp) or path.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from conformance.wire.sse import encode_event

SESSION = "sess-1f2e"


@dataclass
class ServerState:
    """What the server saw, for assertions (written by the server thread, read by tests)."""

    disconnected: set[str] = field(default_factory=set)  # tags of streams whose client went away
    flood_sent: int = 0
    legacy_queues: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def saw_disconnect(self, tag: str) -> None:
        with self.lock:
            self.disconnected.add(tag)


STATE = ServerState()


def rpc(id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def note(method: str, **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def sse(chunks: AsyncIterator[bytes], **headers: str) -> StreamingResponse:
    return StreamingResponse(chunks, media_type="text/event-stream", headers={"Cache-Control": "no-cache", **headers})


async def hold_until_disconnect(request: Request, tag: str) -> None:
    """Keep a plain handler waiting until the client goes away (polling with a deadline)."""
    with anyio.move_on_after(30):
        while not await request.is_disconnected():
            await anyio.sleep(0.01)
    STATE.saw_disconnect(tag)


async def hold_stream(tag: str) -> None:
    """Keep a streaming response open; Starlette cancels it when the client disconnects."""
    try:
        await anyio.sleep(30)
    finally:
        STATE.saw_disconnect(tag)


async def mcp_post(request: Request) -> Response:
    body = await request.body()
    try:
        msg = json.loads(body)
    except ValueError:
        return PlainTextResponse("unparseable body", status_code=400)
    if not isinstance(msg, dict):
        return JSONResponse({"jsonrpc": "2.0", "error": {"code": -32600, "message": "not an object"}}, status_code=400)
    method, mid = msg.get("method"), msg.get("id")
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in request.headers.raw}
    if "id" not in msg:
        return Response(status_code=202)
    if method == "initialize":
        return JSONResponse(rpc(mid, {"protocolVersion": "2025-11-25"}), headers={"Mcp-Session-Id": SESSION})
    if method == "echo/headers":
        return JSONResponse(rpc(mid, {"headers": headers}))
    if method == "other/session":
        return JSONResponse(rpc(mid, {}), headers={"Mcp-Session-Id": "someone-else"})
    if method == "json/text-plain":
        return PlainTextResponse(json.dumps(rpc(mid, {})))
    if method == "json/huge":
        return JSONResponse(rpc(mid, {"pad": "x" * 200_000}))
    if method == "error/400":
        return JSONResponse({"jsonrpc": "2.0", "error": {"code": -32600, "message": "bad request"}}, status_code=400)
    if method == "text/404":
        return PlainTextResponse("no such session", status_code=404)
    if method == "slow":
        await hold_until_disconnect(request, f"slow:{mid}")
        return Response(status_code=204)
    if method == "json/stall":

        async def stall() -> AsyncIterator[bytes]:
            yield b'{"jsonrpc":"2.0",'
            await hold_stream(f"stall:{mid}")

        return StreamingResponse(stall(), media_type="application/json")
    if method == "sse/stream":

        async def events() -> AsyncIterator[bytes]:
            yield encode_event("", id="p0")  # priming: an id and an empty data field
            yield encode_event(note("notifications/progress", progress=1), id="e1")
            yield b"retry: 50\n\n"
            yield b": a comment\n\n"
            yield encode_event(json.dumps(rpc(mid, {"ok": True})), id="e2")

        return sse(events(), **{"X-Accel-Buffering": "no"})
    if method == "sse/hold":

        async def held() -> AsyncIterator[bytes]:
            yield encode_event("", id="h0")
            yield encode_event(note("notifications/message", data="first"), id="h1")
            await hold_stream(f"hold:{mid}")

        return sse(held())
    if method == "sse/bad-utf8":

        async def bad() -> AsyncIterator[bytes]:
            yield b'data: {"jsonrpc":"2.0","method":"x","params":{"s":"\xff"}}\n\n'
            yield encode_event(json.dumps(rpc(mid, {})))

        return sse(bad())
    if method == "sse/flood":

        async def flood() -> AsyncIterator[bytes]:
            pad = "f" * 4000
            n = 0
            try:
                with anyio.move_on_after(30):
                    while True:
                        n += 1
                        STATE.flood_sent = n
                        yield encode_event(note("flood", n=n, pad=pad))
                        await anyio.sleep(0)  # let the server notice a disconnect
            finally:
                STATE.saw_disconnect(f"flood:{mid}")

        return sse(flood())
    return JSONResponse(rpc(mid, {"method": method}))


async def mcp_get(request: Request) -> Response:
    if "text/event-stream" not in request.headers.get("accept", ""):
        return PlainTextResponse("not acceptable", status_code=406)
    last = request.headers.get("last-event-id")

    async def events() -> AsyncIterator[bytes]:
        if last is not None:
            yield encode_event(note("resumed", after=last), id=f"{last}+1")
            return
        yield encode_event(note("hello"), id="g1")
        await hold_stream("get")

    return sse(events())


async def mcp_delete(request: Request) -> Response:
    if request.headers.get("mcp-session-id") != SESSION:
        return PlainTextResponse("unknown session", status_code=404)
    return Response(status_code=200)


async def nope(request: Request) -> Response:
    return PlainTextResponse("method not allowed", status_code=405, headers={"Allow": "POST"})


# -- legacy HTTP+SSE (2024-11-05) ---------------------------------------------------------------


async def legacy_sse(request: Request) -> Response:
    sid = request.query_params.get("sid", "abc")
    send, receive = anyio.create_memory_object_stream[bytes](100)
    STATE.legacy_queues[sid] = send
    endpoint = request.query_params.get("endpoint", f"/messages?session_id={sid}")

    async def events() -> AsyncIterator[bytes]:
        try:
            yield encode_event(endpoint, event="endpoint")
            with receive:
                with anyio.move_on_after(30):
                    async for chunk in receive:
                        if chunk == b"":
                            return
                        yield chunk
        finally:  # the stream is over: its POST endpoint goes with it
            if STATE.legacy_queues.get(sid) is send:
                del STATE.legacy_queues[sid]
            send.close()

    return sse(events())


async def legacy_no_endpoint(request: Request) -> Response:
    async def events() -> AsyncIterator[bytes]:
        yield encode_event(note("not-an-endpoint"))
        await hold_stream("no-endpoint")

    return sse(events())


async def legacy_ends_at_once(request: Request) -> Response:
    async def events() -> AsyncIterator[bytes]:
        yield b": nothing here\n\n"

    return sse(events())


async def legacy_messages(request: Request) -> Response:
    sid = request.query_params.get("session_id", "")
    queue = STATE.legacy_queues.get(sid)
    if queue is None:
        return PlainTextResponse("unknown session", status_code=404)
    body = await request.body()
    try:
        msg = json.loads(body)
    except ValueError:
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, status_code=400)
    method = msg.get("method")
    if method == "legacy/bye":
        await queue.send(encode_event(note("bye"), event="message"))
        await queue.send(b"")
    elif method == "legacy/other-type":
        await queue.send(encode_event(note("odd"), event="notice"))
    elif "id" in msg:
        await queue.send(encode_event(json.dumps(rpc(msg["id"], {"echo": method})), event="message"))
    return PlainTextResponse("Accepted", status_code=202)


app = Starlette(
    routes=[
        Route("/mcp", mcp_post, methods=["POST"]),
        Route("/mcp", mcp_get, methods=["GET"]),
        Route("/mcp", mcp_delete, methods=["DELETE"]),
        Route("/post-only", nope, methods=["GET"]),
        Route("/sse", legacy_sse, methods=["GET"]),
        Route("/sse-no-endpoint", legacy_no_endpoint, methods=["GET"]),
        Route("/sse-ends", legacy_ends_at_once, methods=["GET"]),
        Route("/messages", legacy_messages, methods=["POST"]),
    ]
)


@dataclass
class HttpPeer:
    base: str
    state: ServerState

    def url(self, path: str = "/mcp") -> str:
        return self.base + path


@pytest.fixture(scope="session")
def http_peer() -> Iterator[HttpPeer]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="error", lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:  # polling with a deadline
        assert thread.is_alive() and time.monotonic() < deadline, "the test HTTP server did not start"
        time.sleep(0.01)
    yield HttpPeer(f"http://127.0.0.1:{port}", STATE)
    server.should_exit = True
    thread.join(10)
    sock.close()
    for queue in STATE.legacy_queues.values():  # streams whose response never started
        queue.close()
    STATE.legacy_queues.clear()


@pytest.fixture
def free_port() -> int:
    """A port nothing listens on (bound then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
