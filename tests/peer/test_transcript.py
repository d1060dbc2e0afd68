"""The transcript: both directions, notes, findings from the schema oracle; inbound bookkeeping."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from conformance.runtime.peer import RawPeer
from conformance.transports.base import Inbound, Transport, TransportClosed
from conformance.wire.envelope import Envelope, Kind, parse_envelope

from .conftest import standard

pytestmark = pytest.mark.anyio

validate_mod = pytest.importorskip("conformance.schema.validate")


async def test_both_directions_and_notes_are_recorded_as_jsonl(connect) -> None:
    async def noisy(server, env: Envelope) -> None:
        if env.kind is Kind.REQUEST:
            await server.notify("notifications/message", {"level": "info", "data": "hi"})
            await server.send({"jsonrpc": "2.0", "id": "s", "method": "ping"})
        await standard(server, env)

    async with connect(noisy) as (peer, _server):
        await peer.initialize()
        await peer.send_raw(b"\xff\xfe not utf-8")
        await peer.expect_message(lambda e: e.kind is Kind.ERROR, what="an error")
    entries = peer.transcript.entries
    directions = {e.direction for e in entries}
    assert directions == {"in", "out", "note"}
    lines = peer.transcript.to_jsonl().splitlines()
    assert len(lines) == len(entries)
    parsed = [json.loads(line) for line in lines]
    assert parsed[0]["direction"] == "out" and parsed[0]["envelope"]["method"] == "initialize"
    # the inbound side keeps transport meta and what the response answers
    init_response = next(p for p in parsed if p["direction"] == "in" and p.get("envelope", {}).get("id") == 1)
    assert init_response["meta"]["stream"] == "memory" and init_response["meta"]["answering"] == "initialize"
    # the automatic ping reply and the close are there too
    assert any(p["direction"] == "out" and p.get("meta", {}).get("auto_reply") for p in parsed)
    assert parsed[-1]["direction"] == "note" and "clos" in parsed[-1]["text"]
    # raw bytes that are not UTF-8 survive as base64
    assert any("base64" in p.get("raw", {}) for p in parsed)
    assert len(peer.inbound) == sum(1 for e in entries if e.direction == "in")


async def test_schema_findings_for_an_invalid_inbound_message(connect) -> None:
    async def bad_tools(server, env: Envelope) -> None:
        if env.method == "tools/list":
            await server.result(env.id, {"tools": [{"name": 5}]})  # name must be a string, inputSchema missing
        elif env.method == "ping":
            await server.result(env.id, {})

    async with connect(bad_tools) as (peer, _):
        assert peer.validation_problem is None
        bad = await peer.expect_response(await peer.request("tools/list"))
        good = await peer.expect_response(await peer.request("ping"))
    findings = peer.findings_of(bad)
    assert findings, "a ListToolsResult with a numeric tool name must produce findings"
    assert any("ListToolsResult" in (f.definition or "") or "Tool" in (f.definition or "") or "tools" in f.json_path for f in findings)
    assert peer.findings_of(good) == []
    entry = peer.entry_of(bad)
    assert entry is not None and entry.findings == findings
    line = json.loads(peer.transcript.to_jsonl().splitlines()[entry.seq])
    assert line["findings"] and line["findings"][0]["json_path"].startswith("$")


async def test_findings_use_the_answered_method(connect) -> None:
    # the same result is fine for ping and wrong for tools/list: validation needs the method
    async def empty(server, env: Envelope) -> None:
        if env.kind is Kind.REQUEST:
            await server.result(env.id, {})

    async with connect(empty) as (peer, _):
        ping = await peer.expect_response(await peer.request("ping"))
        tools = await peer.expect_response(await peer.request("tools/list"))
    assert peer.findings_of(ping) == []
    assert peer.findings_of(tools)


async def test_null_id_and_server_request_findings(connect) -> None:
    async def odd(server, env: Envelope) -> None:
        await server.send({"jsonrpc": "2.0", "id": None, "result": {}})

    async with connect(odd) as (peer, _):
        await peer.notify("go")
        env = await peer.expect_response(None)
    assert any(f.schema_path == "rule:id-not-null" for f in peer.findings_of(env))


async def test_batch_members_are_validated_against_their_requests(connect) -> None:
    async def batcher(server, env: Envelope) -> None:
        if env.kind is Kind.BATCH:
            await server.send([{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "id": 2, "result": {}}])

    async with connect(batcher, version="2025-03-26") as (peer, _):
        await peer.send_json([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
        first = await peer.expect_response(1)
        second = await peer.expect_response(2)
    entry = peer.entry_of(first)
    assert entry is not None and entry is peer.entry_of(second)  # one message, one entry
    assert entry.findings and all(f.json_path.startswith("$[1]") for f in entry.findings)


async def test_validate_false_records_no_findings(connect) -> None:
    async def bad(server, env: Envelope) -> None:
        await server.result(env.id, {"tools": "nope"})

    async with connect(bad, validate=False) as (peer, _):
        env = await peer.expect_response(await peer.request("tools/list"))
    assert peer.findings_of(env) == []


async def test_configure_before_the_first_message_is_as_if_constructed_so(connect) -> None:
    async def bad(server, env: Envelope) -> None:
        if env.method == "initialize":
            await standard(server, env)
        elif env.kind is Kind.REQUEST:
            await server.result(env.id, {"tools": "nope"})

    async with connect(bad) as (peer, _):
        peer.configure(validate=False, capabilities={"roots": {}})
        init = await peer.initialize()
        env = await peer.expect_response(await peer.request("tools/list"))
        with pytest.raises(RuntimeError):
            peer.configure(validate=True)  # too late: messages have gone both ways
        with pytest.raises(TypeError):
            peer.configure(headers={})  # how it connects is not the peer's to change
    assert peer.findings_of(env) == []
    sent = next(e for e in peer.transcript.entries if e.direction == "out" and e.envelope.method == "initialize")
    assert sent.envelope.params["capabilities"] == {"roots": {}} and init.kind is Kind.RESULT


async def test_broken_oracle_is_noted_once_and_validation_stops(connect, monkeypatch) -> None:
    calls: list[Any] = []

    def broken(*args: Any, **kw: Any) -> list[Any]:
        calls.append(args)
        raise validate_mod.SchemaError("no schema for you") if hasattr(validate_mod, "SchemaError") else RuntimeError("x")

    async with connect(standard) as (peer, _):
        monkeypatch.setattr(peer, "_validator", broken)
        await peer.call("ping")
        await peer.call("ping")
    assert len(calls) == 1
    assert peer.validation_problem and "no schema" in peer.validation_problem
    assert sum("schema validation unavailable" in (e.text or "") for e in peer.transcript) == 1


class _Frames(Transport):
    """Delivers fixed inbound items (framing problems included), then closes."""

    name = "frames"

    def __init__(self, items: list[Inbound]) -> None:
        self.items = items

    async def send(self, data: bytes, **opts: Any) -> None:
        pass

    async def receive(self) -> Inbound:
        await anyio.sleep(0)
        if self.items:
            return self.items.pop(0)
        raise TransportClosed("done")

    async def aclose(self) -> None:
        pass


async def test_framing_problems_are_recorded() -> None:
    items = [
        Inbound(raw=b"\x00garbage", envelope=None, problem="not a message", meta={"stream": "stdout"}),
        Inbound(raw=b'{"jsonrpc":"2.0","method":"x"}', envelope=parse_envelope(b'{"jsonrpc":"2.0","method":"x"}'), problem="CR before LF", meta={"stream": "stdout"}),
    ]
    async with RawPeer(_Frames(items), version="2025-11-25") as peer:
        await peer.expect_close()
        env = await peer.expect_notification("x")
    assert len(peer.inbound) == 2
    inbound = [e for e in peer.transcript if e.direction == "in"]
    assert inbound[0].envelope is None and inbound[0].meta["problem"] == "not a message"
    assert inbound[1].meta["problem"] == "CR before LF" and peer.entry_of(env) is inbound[1]


async def test_transport_events_become_notes() -> None:
    class Eventful(_Frames):
        async def start(self) -> None:
            self._event("process started", pid=42)

    outside: list[str] = []
    transport = Eventful([])
    transport.events = lambda text, meta: outside.append(text)
    async with RawPeer(transport, version="2025-11-25") as peer:
        await peer.expect_close()
    notes = [e for e in peer.transcript if e.direction == "note"]
    assert notes[0].text == "process started" and notes[0].meta == {"pid": 42}
    assert outside == ["process started"]  # an existing sink still gets the events
