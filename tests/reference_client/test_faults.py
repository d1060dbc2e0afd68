"""The reference client's faults (``--fault NAME``), without the suite: each fault changes what
the client writes in exactly the intended way and nothing else.

A scripted server (:class:`ScriptServer`, in memory) plays what the suite's server does in its
``probes`` run: after the handshake, on the first request, it pings the client, sends an unknown
method, roots/list, sampling/createMessage, elicitation/create, a notification, an invalid
cancel (and a batch on 2025-03-26), then answers.  The same script is run against the strict
client and the faulty one; the two transcripts of what the client wrote are compared.  The wire
effects that live in the links (headers, PUT, stdin order, DELETE, 404) are checked on the real
links, over an httpx mock transport and a tiny child process.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import signal
import time
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import anyio
import httpx
import pytest

from conformance.spec.methods import C2S
from conformance.spec.versions import VERSIONS, spec
from reference_client.core import ClientCore, default_capabilities, other_id
from reference_client.faults import FAULTS, behaviour
from reference_client.http_links import HttpLink, SseLink
from reference_client.links import Garbage, LinkClosed, StdioLink, Tweak, dumps
from reference_client.session import ClientQuit, Session, StepFailed, tour

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from fixtures.broken_clients.defects import DEFECTS  # noqa: E402

LEGACY = [v for v in VERSIONS if not spec(v).stateless]
MODERN = "2026-07-28"
CURSOR = "mcpc:Page 2/2="  # as the suite's server
TOOLS = [{"name": "add_numbers", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}}]
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"


# pages=MODE: prompts/list in pages whose second nextCursor is the empty string (a valid cursor), or
# resources/list in pages of two, one and no resources (the short second page has a nextCursor); the
# last pages are empty so that a fault that stops early removes the list request only
LIST_PAGES: dict[tuple[str, str], tuple[str, dict[Any, tuple[list[Any], Any]]]] = {
    ("prompts/list", "prompts"): ("prompts", {None: ([{"name": "p1"}], "P2"), "P2": ([], ""), "": ([], None)}),
    ("resources/list", "resources"): ("resources", {
        None: ([{"uri": "test://r1", "name": "r1"}, {"uri": "test://r2", "name": "r2"}], "R2"),
        "R2": ([{"uri": "test://r3", "name": "r3"}], "R3"),
        "R3": ([], None)}),
}


# -- a scripted server -------------------------------------------------------------------------------


class ScriptServer:
    """A small MCP server, enough for the tour and the probes.  ``era``: legacy (server/discover is
    an unknown method before initialize), modern (initialize is refused), dual (both)."""

    def __init__(self, version: str, *, era: str | None = None, server_caps: dict[str, Any] | None = None,
                 offer: str | None = None, probes: bool = True, never_answer: frozenset[str] = frozenset(),
                 input_required: bool = False, refuse: list[str] | None = None, refuse_every: bool = False,
                 pages: bool | str = False) -> None:
        self.version = version
        self.pages = pages  # tools/list in two pages (nextCursor CURSOR; another cursor: -32602)
        self.refused_cursor = False
        # server/discover refused with -32022 listing ``refuse``: the first one (``refuse_every``: each one)
        self.refuse, self.refuse_every, self.refused = refuse, refuse_every, 0
        self.input_required = input_required  # tools/call without inputResponses: an InputRequiredResult
        self.never_answer = never_answer  # methods it never answers (after the handshake)
        self.era = era or ("modern" if spec(version).stateless else "legacy")
        self.caps = server_caps if server_caps is not None else {"tools": {}}
        self.offer = offer
        self.probes = probes
        self.negotiated: str | None = None
        self.operating = False
        self.victim_seen = False
        self.received: list[Any] = []

    def _result(self, rid: Any, result: dict[str, Any]) -> dict[str, Any]:
        if self.negotiated == MODERN:
            result = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", **result}
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    @staticmethod
    def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}

    def handle(self, msg: Any) -> list[Any]:
        self.received.append(msg)
        if isinstance(msg, list):
            return [out for m in msg for out in self.handle(m)]
        if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
            return []
        method = msg["method"]
        if "id" not in msg:
            return []
        rid = msg["id"]
        if method == "notifications/initialized":
            return []  # (with an id: fault notification-with-id) not answered
        if method == "server/discover":
            if self.refuse is not None and (self.refuse_every or not self.refused):
                self.refused += 1
                return [{"jsonrpc": "2.0", "id": rid, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                                 "data": {"supported": self.refuse, "requested": MODERN}}}]
            if self.era == "legacy":
                return [self._error(rid, -32601, "Method not found")]
            self.negotiated = MODERN
            self.operating = True
            return [self._result(rid, {"supportedVersions": [MODERN], "capabilities": self.caps})]
        if method == "initialize":
            if self.era == "modern":
                return [self._error(rid, -32601, "Method not found: initialize")]
            asked = (msg.get("params") or {}).get("protocolVersion")
            self.negotiated = self.offer or (asked if asked == self.version else self.version)
            self.operating = True
            return [self._result(rid, {"protocolVersion": self.negotiated, "capabilities": self.caps,
                                       "serverInfo": {"name": "script", "version": "1"}})]
        out: list[Any] = []
        if self.operating and method in self.never_answer:
            return []
        if self.operating and not self.victim_seen and isinstance(rid, int) and rid < 900_000:
            self.victim_seen = True
            out.extend(self._probes())
        if method == "tools/call" and self.input_required:
            params = msg.get("params") or {}
            if "inputResponses" not in params:
                return out + [{"jsonrpc": "2.0", "id": rid, "result": {
                    "resultType": "input_required", "requestState": "S",
                    "inputRequests": {"r": {"method": "roots/list"}}}}]
            return out + [self._result(rid, {"resultType": "complete", "content": []})]
        if method == "ping":
            return out + [self._result(rid, {})]
        if method == "resources/templates/list" and self.pages == "stale":  # the cursor is refused once
            cursor = (msg.get("params") or {}).get("cursor")
            if cursor == "T2" and not self.refused_cursor:
                self.refused_cursor = True
                return out + [self._error(rid, -32602, "Invalid cursor")]
            return out + [self._result(rid, {"resourceTemplates": [] if cursor else [{"uriTemplate": "test://t/{x}", "name": "t"}],
                                             **({} if cursor else {"nextCursor": "T2"})})]
        listing = LIST_PAGES.get((method, self.pages)) if isinstance(self.pages, str) else None
        if listing is not None:
            key, pages = listing
            cursor = (msg.get("params") or {}).get("cursor")
            if cursor not in pages:
                return out + [self._error(rid, -32602, "Invalid cursor")]
            items, nxt = pages[cursor]
            return out + [self._result(rid, {key: items, **({"nextCursor": nxt} if nxt is not None else {})})]
        if method == "tools/list" and "tools" in self.caps and self.pages is True:
            cursor = (msg.get("params") or {}).get("cursor")
            if cursor is None:
                return out + [self._result(rid, {"tools": TOOLS, "nextCursor": CURSOR})]
            if cursor != CURSOR:
                return out + [self._error(rid, -32602, "Invalid cursor")]
            return out + [self._result(rid, {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})]
        if method == "tools/list" and "tools" in self.caps:
            return out + [self._result(rid, {"tools": TOOLS})]
        if method == "logging/setLevel" and "logging" in self.caps:
            return out + [self._result(rid, {})]
        return out + [self._error(rid, -32601, f"Method not found: {method}")]

    def _probes(self) -> list[Any]:
        if not self.probes:
            return []
        v = self.negotiated if self.negotiated in VERSIONS else self.version
        invalid_cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}
        if v == MODERN:
            return [invalid_cancel]
        out: list[Any] = [
            {"jsonrpc": "2.0", "id": 101, "method": "ping"},
            {"jsonrpc": "2.0", "id": "102", "method": "x-conformance/unknown"},
            {"jsonrpc": "2.0", "id": 103, "method": "roots/list"},
            {"jsonrpc": "2.0", "id": 104, "method": "sampling/createMessage",
             "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}},
        ]
        if spec(v).elicitation:
            out.append({"jsonrpc": "2.0", "id": 105, "method": "elicitation/create", "params": {
                "message": "name?", "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string"}, "color": {"type": "string", "default": "Red"}}, "required": ["name"]}}})
        init = next((m for m in self.received if isinstance(m, dict) and m.get("method") == "initialize"), {})
        declared = ((init.get("params") or {}).get("capabilities") or {}).get("elicitation")
        if v == "2025-11-25" and isinstance(declared, dict) and "url" not in declared:  # url mode, which the client (form only) did not declare
            out.append({"jsonrpc": "2.0", "id": 109, "method": "elicitation/create", "params": {
                "mode": "url", "message": "open this", "url": "http://127.0.0.1:9/x", "elicitationId": "e1"}})  # (port 9: refused at once)
        sampling = ((init.get("params") or {}).get("capabilities") or {}).get("sampling")
        if v == "2025-11-25" and isinstance(sampling, dict) and "tools" not in sampling:  # tools it did not declare
            out.append({"jsonrpc": "2.0", "id": 111, "method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "time?"}}], "maxTokens": 5,
                "tools": [{"name": "get_time", "inputSchema": {"type": "object"}}]}})
        if v == "2025-11-25" and isinstance(sampling, dict) and "tools" in sampling:  # tool loops the page forbids
            use = {"type": "tool_use", "id": "c1", "name": "get_time", "input": {}}
            res = {"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "noon"}]}
            for rid, last in ((112, [res, {"type": "text", "text": "and?"}]), (113, [{"type": "text", "text": "and?"}])):
                out.append({"jsonrpc": "2.0", "id": rid, "method": "sampling/createMessage", "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "time?"}},
                                 {"role": "assistant", "content": [use]}, {"role": "user", "content": last}],
                    "maxTokens": 5, "tools": [{"name": "get_time", "inputSchema": {"type": "object"}}]}})
        out.append({"jsonrpc": "2.0", "id": "108", "method": "ping"})  # an id that is a string of digits
        out.append({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}})
        out.append(invalid_cancel)
        if v == "2025-11-25" and declared is not None:  # a completion of an elicitation never started (ignored)
            out.append({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                        "params": {"elicitationId": "never-started"}})
        # a ping that is not JSON (a trailing comma): the strict client answers -32700, id null
        out.append(Garbage(b'{"jsonrpc":"2.0","id":110,"method":"ping",}', "stdout", True))
        # the server cancels a request of its own the client has answered (the race; ignored when strict)
        out.append({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 101}})
        if spec(v).batching:
            out.append([{"jsonrpc": "2.0", "id": 106, "method": "ping"}, {"jsonrpc": "2.0", "id": 107, "method": "ping"},
                        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "b"}}])
        return out


@dataclass
class Wire:
    """One thing the client wrote."""

    raw: bytes
    tweak: Tweak | None = None
    quiet: bool = False
    protocol_version: str | None = None

    @property
    def value(self) -> Any:
        try:
            return json.loads(self.raw)
        except ValueError:
            return None

    def key(self) -> str:
        t = self.tweak
        extra = f" {t.http_method} -{list(t.drop_headers)} +{t.set_headers} {t.url}" if t and t.raw is None else ""
        return self.raw.decode("utf-8", "replace") + extra


class MemoryLink:
    """A link to a :class:`ScriptServer` in memory; records every write."""

    def __init__(self, server: ScriptServer, transport: str = "stdio") -> None:
        self.server = server
        self.transport = transport
        self.sent: list[Wire] = []
        self.stateless = False
        self.protocol_version: str | None = None
        self.session_id: str | None = None
        self.session_expired = False
        self.endpoint = "http://127.0.0.1:1/messages?session_id=abc"
        self.close_stdin_first = True
        self.delete_session = True
        self._send, self._recv = anyio.create_memory_object_stream[Any](1000)

    async def send(self, msg: Any, headers: Any = None, *, tweak: Tweak | None = None, quiet: bool = False) -> None:
        raw = tweak.raw if tweak is not None and tweak.raw is not None else dumps(msg) + b"\n"
        self.sent.append(Wire(raw, tweak, quiet, self.protocol_version))
        try:
            parsed = json.loads(raw)
        except ValueError:
            return
        for out in self.server.handle(parsed):
            await self._send.send(out)

    async def send_together(self, msgs: list[Any]) -> None:
        for m in msgs:
            await self.send(m)

    async def receive(self) -> Any:
        return await self._recv.receive()

    async def abort(self, rid: Any) -> None:
        self.sent.append(Wire(f"<abort {rid!r}>".encode()))

    def new_session(self) -> None:
        self.session_id = None
        self.session_expired = False

    def open_stream(self) -> None:
        pass

    def close(self) -> None:
        self._send.close()
        self._recv.close()

    async def __aenter__(self) -> "MemoryLink":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class Run:
    sent: list[Wire]
    core: ClientCore
    server: ScriptServer
    outcome: Any = None
    log: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return [w.key() for w in self.sent]

    @property
    def values(self) -> list[Any]:
        return [w.value for w in self.sent]


def run(fault: str | None = None, *, version: str = "2025-11-25", mode: str | None = None, transport: str = "stdio",
        caps: dict[str, Any] | None = None, timeout: float = 0.3, limit: float | None = None, **server: Any) -> Run:
    """The client's tour against the scripted server; ``limit``: cut it off after that many seconds
    (outcome None: still running)."""
    srv = ScriptServer(version, **server)
    mode = mode or version
    start = MODERN if mode == "dual" else mode
    log: list[str] = []

    async def main() -> Run:
        core = ClientCore(start, fault=fault, transport=transport, capabilities=dict(caps or {}))
        outcome: Any = None
        async with MemoryLink(srv, transport) as link:
            session = Session(core, link, timeout=timeout, log=log.append)
            with anyio.move_on_after(limit if limit is not None else math.inf):
                try:
                    outcome = await tour(session, call_tools=False, mode=mode)
                except (StepFailed, ClientQuit) as exc:
                    outcome = exc
        return Run(link.sent, core, srv, outcome, log)

    return anyio.run(main)


def diff(strict: Run, faulty: Run) -> list[tuple[str, list[Wire], list[Wire]]]:
    ops = difflib.SequenceMatcher(a=strict.keys, b=faulty.keys, autojunk=False).get_opcodes()
    return [(tag, strict.sent[i1:i2], faulty.sent[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def only(changes: list[tuple[str, list[Wire], list[Wire]]], tag: str) -> tuple[list[Wire], list[Wire]]:
    assert len(changes) == 1, [(t, [w.key() for w in a], [w.key() for w in b]) for t, a, b in changes]
    got, before, after = changes[0]
    assert got == tag, (got, [w.key() for w in before], [w.key() for w in after])
    return before, after


def one_extra(strict: Run, faulty: Run) -> Wire:
    _, added = only(diff(strict, faulty), "insert")
    assert len(added) == 1, [w.key() for w in added]
    return added[0]


def one_changed(strict: Run, faulty: Run) -> tuple[Any, Any]:
    before, after = only(diff(strict, faulty), "replace")
    assert len(before) == len(after) == 1, ([w.key() for w in before], [w.key() for w in after])
    return before[0].value, after[0].value


def one_removed(strict: Run, faulty: Run) -> Any:
    removed, _ = only(diff(strict, faulty), "delete")
    assert len(removed) == 1, [w.key() for w in removed]
    return removed[0].value


def is_request(v: Any, method: str | None = None) -> bool:
    return isinstance(v, dict) and "id" in v and "method" in v and (method is None or v["method"] == method)


def is_reply(v: Any, rid: Any) -> bool:
    return isinstance(v, dict) and "method" not in v and type(v.get("id")) is type(rid) and v.get("id") == rid


# -- the fault table -----------------------------------------------------------------------------------


def test_every_fault_has_one_defect_and_back() -> None:
    assert set(DEFECTS) == set(FAULTS)
    assert len(FAULTS) >= 35
    for name, d in DEFECTS.items():
        f = FAULTS[name]
        assert d.requirement.startswith("client."), name
        for v in d.versions:
            exists = [t for t in d.transports if t in {x.value for x in spec(v).transports}]
            assert exists, (name, v)
            for t in exists:  # the combinations of the table that exist (no streamable HTTP on 2024-11-05)
                assert f.acts(v, t), f"{name} is inert on {v} {t}, where DEFECTS says it shows"


def test_defects_name_requirements_of_the_catalogue() -> None:
    from conformance.spec.requirements import catalogue

    cat = catalogue()
    for name, d in DEFECTS.items():
        if d.requirement not in cat:
            pytest.skip(f"the client catalogue does not have {d.requirement} yet")
        req = cat[d.requirement]
        assert req.role == "client", name
        for v in d.versions:
            for t in d.transports:
                if t in {x.value for x in spec(v).transports}:
                    assert req.applies_to(v, t), f"{name}: {d.requirement} does not apply to {v} {t}"
        for other in d.also:
            assert other in cat, (name, other)


def test_default_is_strict() -> None:
    core = ClientCore("2025-11-25")
    assert core.fault is None and not any(core.faulty(n) for n in FAULTS)
    assert core.capabilities == default_capabilities("2025-11-25")


# -- strict behaviour the suite relies on ----------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY)
def test_strict_client_answers_the_probes(version: str) -> None:
    r = run(version=version)
    assert isinstance(r.outcome, list) and not r.outcome, r.log
    values = r.values
    replies = {json.dumps(v.get("id")): v for v in values if isinstance(v, dict) and "method" not in v}
    assert replies[json.dumps(101)] == {"jsonrpc": "2.0", "id": 101, "result": {}}
    assert replies[json.dumps("102")]["error"]["code"] == -32601
    assert replies[json.dumps("108")] == {"jsonrpc": "2.0", "id": "108", "result": {}}  # "108", not 108
    assert replies[json.dumps(103)]["result"]["roots"][0]["uri"].startswith("file://")
    assert "result" in replies[json.dumps(104)]
    if spec(version).elicitation:
        assert "result" in replies[json.dumps(105)]
        assert replies[json.dumps(105)]["result"]["content"]["color"] == "Red"  # the default, pre-populated
    if version == "2025-11-25":
        assert replies[json.dumps(109)]["error"]["code"] == -32602  # a mode it did not declare
    if spec(version).batching:  # answered as one batch
        batch = [v for v in values if isinstance(v, list)]
        assert batch == [[{"jsonrpc": "2.0", "id": 106, "result": {}}, {"jsonrpc": "2.0", "id": 107, "result": {}}]]
    # never a response to a notification; ids: unique integers
    ids = [v["id"] for v in values if is_request(v)]
    assert len(ids) == len(set(ids)) and all(type(i) is int for i in ids)
    # one answer with id null: the -32700 to the ping that is not JSON (a notification is never answered)
    assert [v for v in values if isinstance(v, dict) and v.get("id", 0) is None] == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}]
    assert json.dumps(110) not in replies  # it was not read leniently
    # initialize first, then initialized, then the rest
    assert is_request(values[0], "initialize") and values[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_strict_client_declares_only_and_uses_only_what_is_declared() -> None:
    caps = {"roots": {}}  # no sampling, no elicitation
    r = run(version="2025-11-25", caps=caps)
    replies = {json.dumps(v.get("id")): v for v in r.values if isinstance(v, dict) and "method" not in v}
    assert replies[json.dumps(104)]["error"]["code"] == -32601 and replies[json.dumps(105)]["error"]["code"] == -32601
    methods = [v["method"] for v in r.values if is_request(v)]
    assert "prompts/list" not in methods and "resources/list" not in methods and "logging/setLevel" not in methods


def test_strict_client_sends_no_response_on_2026() -> None:
    core = ClientCore(MODERN)
    inc = core.receive({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert inc.reply is None and core.violations


def test_batches_only_on_2025_03_26() -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]
    assert ClientCore("2025-03-26").receive(batch).kind == "batch"
    core = ClientCore("2025-06-18")
    assert core.receive(batch).kind == "invalid" and core.violations


def test_cancelled_server_request_gets_no_answer_and_invalid_cancels_are_ignored() -> None:
    core = ClientCore("2025-11-25")
    assert core.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}).reply is None
    assert core.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}).reply is None
    assert core.quit is None
    assert core.cancelled_by_server(9)


def test_late_answers_to_abandoned_requests_are_ignored() -> None:
    core = ClientCore("2025-11-25")
    msg = core.request("tools/list")
    core.cancel(msg["id"], "timeout")
    assert core.receive({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}).kind == "ignored"
    assert not core.violations
    assert core.receive({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}).kind == "invalid"


def test_other_id() -> None:
    assert other_id(7) == "7" and other_id("7") == 7 and other_id("srv-1") == "srv-1-wrong"


# -- dual era ----------------------------------------------------------------------------------------------


def test_dual_era_probes_with_discover_and_stays_modern() -> None:
    r = run(mode="dual", version=MODERN)
    first = r.values[0]
    assert is_request(first, "server/discover")
    meta = first["params"]["_meta"]
    assert meta[PV] == MODERN and CAPS in meta and INFO in meta
    assert r.core.negotiated == MODERN
    assert not any(is_request(v, "initialize") for v in r.values)
    for v in r.values:  # every request carries the per-request _meta; no responses written
        assert is_request(v) and PV in v["params"]["_meta"] and CAPS in v["params"]["_meta"]


@pytest.mark.parametrize("version", LEGACY)
def test_dual_era_falls_back_to_initialize_on_an_error(version: str) -> None:
    r = run(mode="dual", version=version)
    assert is_request(r.values[0], "server/discover")
    init = r.values[1]
    assert is_request(init, "initialize") and init["params"]["protocolVersion"] == "2025-11-25"
    assert "_meta" not in init["params"]
    assert r.core.negotiated == version and r.outcome == [], r.log


def test_dual_era_falls_back_on_silence_within_the_probe_timeout() -> None:
    class Silent(ScriptServer):
        def handle(self, msg: Any) -> list[Any]:
            if isinstance(msg, dict) and msg.get("method") == "server/discover":
                return []
            return super().handle(msg)

    srv = Silent("2025-06-18")

    async def main() -> tuple[ClientCore, list[Wire], float]:
        async with MemoryLink(srv) as link:
            core = ClientCore(MODERN, transport="stdio")
            session = Session(core, link, timeout=60)
            t0 = anyio.current_time()
            with anyio.fail_after(10):
                from reference_client.session import handshake

                await handshake(session, "dual")
        return core, link.sent, anyio.current_time() - t0

    core, sent, took = anyio.run(main)
    assert core.negotiated == "2025-06-18" and 2.5 < took < 5  # min(timeout, 3 s)
    assert [w.value.get("method") for w in sent] == ["server/discover", "initialize", "notifications/initialized"]


def test_unsupported_protocol_version_error_picks_a_mutual_version() -> None:
    class Modern2025(ScriptServer):
        def handle(self, msg: Any) -> list[Any]:
            if isinstance(msg, dict) and msg.get("method") == "server/discover":
                return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32022, "message": "Unsupported protocol version",
                                                                        "data": {"supported": ["2025-06-18", "2099-01-01"], "requested": MODERN}}}]
            return super().handle(msg)

    srv = Modern2025("2025-06-18")

    async def main() -> tuple[ClientCore, list[Wire]]:
        from reference_client.session import handshake

        async with MemoryLink(srv) as link:
            core = ClientCore(MODERN, transport="stdio")
            await handshake(Session(core, link, timeout=1), "dual")
        return core, link.sent

    core, sent = anyio.run(main)
    assert core.negotiated == "2025-06-18"
    assert sent[1].value["params"]["protocolVersion"] == "2025-06-18"


@pytest.mark.parametrize("offer", ["1999-01-01", MODERN])
def test_unsupported_version_disconnects_at_once(offer: str) -> None:
    r = run(version="2025-11-25", offer=offer)
    assert isinstance(r.outcome, StepFailed) and "does not support" in str(r.outcome)
    assert [w.value.get("method") for w in r.sent] == ["initialize"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
def test_a_counter_offer_is_spoken_exactly(version: str) -> None:
    r = run(version=version, mode="2025-11-25")
    assert r.core.negotiated == version and r.outcome == []
    # MCP-Protocol-Version only from 2025-06-18 (and only over streamable HTTP)
    r = run(version=version, mode="2025-11-25", transport="streamable-http")
    pvs = {w.protocol_version for w in r.sent[2:]}
    assert pvs == ({version} if spec(version).protocol_version_header else {None})


def test_sse_does_not_probe() -> None:
    r = run(mode="dual", version="2024-11-05", transport="sse")
    assert is_request(r.values[0], "initialize") and r.core.negotiated == "2024-11-05"


# -- every fault: the transcript differs from the strict one exactly as intended --------------------------


def _expect_extra(pred: Callable[[Wire], bool]) -> Callable[[Run, Run], None]:
    def check(strict: Run, faulty: Run) -> None:
        w = one_extra(strict, faulty)
        assert w.quiet or w.value is None or not is_request(w.value) or faulty.core.method_of(w.value.get("id")) is None
        assert pred(w), w.key()
    return check


def _harmless(w: Wire, version: str) -> bool:
    return is_request(w.value, "server/discover" if spec(version).stateless else "ping")


def _expect_changed(what: Callable[[Any], bool], pred: Callable[[Any, Any], bool]) -> Callable[[Run, Run], None]:
    """Exactly one message changed: one that ``what`` picks, changed as ``pred`` says."""
    def check(strict: Run, faulty: Run) -> None:
        before, after = one_changed(strict, faulty)
        assert what(before), before
        assert pred(before, after), (before, after)
    return check


def _expect_reply_changed(rid: Any, pred: Callable[[Any, Any], bool]) -> Callable[[Run, Run], None]:
    return _expect_changed(lambda v: is_reply(v, rid), pred)


def _expect_removed(pred: Callable[[Any], bool]) -> Callable[[Run, Run], None]:
    def check(strict: Run, faulty: Run) -> None:
        assert pred(one_removed(strict, faulty))
    return check


def _check_prefetch(strict: Run, faulty: Run) -> None:
    # the fetch is not on the MCP wire: the same messages, and the fault says it fetched the URL
    assert diff(strict, faulty) == []
    assert any("fault prefetch-url: fetched http://127.0.0.1:9/x" in line for line in faulty.log), faulty.log
    assert not any("prefetch-url" in line for line in strict.log)


def _no_diff(strict: Run, faulty: Run) -> None:
    assert diff(strict, faulty) == []  # the fault lives in a link (shutdown, DELETE, 404): tested below


def _check_reuse_inflight(strict: Run, faulty: Run) -> None:
    w = one_extra(strict, faulty)
    victim = next(x for x in faulty.sent if x.value and is_request(x.value) and x.value["method"] != "server/discover")
    assert w.value == victim.value


def _check_shared_token(strict: Run, faulty: Run) -> None:
    changes = diff(strict, faulty)
    assert len(changes) == 1 and changes[0][0] == "replace", changes
    _, before, after = changes[0]
    assert len(before) == 1 and len(after) == 2
    victim, extra = after[0].value, after[1].value
    token = victim["params"]["_meta"]["progressToken"]
    assert extra["params"]["_meta"]["progressToken"] == token
    stripped = json.loads(json.dumps(victim))
    del stripped["params"]["_meta"]["progressToken"]
    if not stripped["params"]["_meta"]:
        del stripped["params"]["_meta"]
    if not stripped["params"]:
        del stripped["params"]
    assert stripped == before[0].value


def _check_initialize_changed(pred: Callable[[Any, Any], bool]) -> Callable[[Run, Run], None]:
    def check(strict: Run, faulty: Run) -> None:
        before, after = one_changed(strict, faulty)
        assert is_request(before, "initialize") and pred(before, after)
    return check


def _check_carry_on(strict: Run, faulty: Run) -> None:
    assert [w.value.get("method") for w in strict.sent] == ["initialize"]
    methods = [w.value.get("method") if isinstance(w.value, dict) else None for w in faulty.sent]
    assert methods[:3] == ["initialize", "notifications/initialized", "ping"]


def _check_quit(strict: Run, faulty: Run) -> None:
    assert isinstance(faulty.outcome, ClientQuit)
    assert faulty.keys == strict.keys[:len(faulty.keys)] and len(faulty.keys) < len(strict.keys)


def _check_meta_without_info(strict: Run, faulty: Run) -> None:
    assert len(strict.sent) == len(faulty.sent)
    for a, b in zip(strict.values, faulty.values):
        assert INFO in a["params"]["_meta"] and INFO not in b["params"]["_meta"]
        b["params"]["_meta"][INFO] = a["params"]["_meta"][INFO]
        assert a == b


def _check_discover_first(strict: Run, faulty: Run) -> None:
    assert is_request(strict.values[0], "server/discover") and strict.core.negotiated == MODERN
    assert is_request(faulty.values[0], "initialize")
    assert not any(is_request(v, "server/discover") for v in faulty.values[:1])


def _before_initialize(strict: Run, faulty: Run) -> None:
    w = one_extra(strict, faulty)
    i = faulty.sent.index(w)
    assert is_request(w.value, "tools/list") and is_request(faulty.values[i + 1], "initialize")


def _during_initialize(strict: Run, faulty: Run) -> None:
    w = one_extra(strict, faulty)
    i = faulty.sent.index(w)
    assert is_request(faulty.values[i - 1], "initialize")
    assert is_request(w.value, "tools/list") or w.value.get("method") == "notifications/cancelled"


CHECKS: dict[str, Callable[[Run, Run], None]] = {
    "jsonrpc-1.0": _expect_extra(lambda w: w.value["jsonrpc"] == "1.0"),
    "float-id": _expect_extra(lambda w: isinstance(w.value["id"], float)),
    "float-progress-token": _expect_extra(lambda w: w.value["params"]["_meta"]["progressToken"] == 7.5),
    "null-id": _expect_extra(lambda w: w.value["id"] is None and "method" in w.value),
    "reuse-answered-id": _expect_extra(lambda w: is_request(w.value, "ping") and w.value["id"] == 2),
    "reuse-initialize-id": _expect_extra(lambda w: is_request(w.value, "ping") and w.value["id"] == 1),
    "reuse-inflight-id": _check_reuse_inflight,
    "notification-with-id": None,  # set below
    "cancel-unknown-id": _expect_extra(lambda w: w.value["method"] == "notifications/cancelled"
                                       and w.value["params"]["requestId"] == "mcp-reference-client-never-sent"),
    "shared-progress-token": _check_shared_token,
    "response-wrong-id": None,  # set below: both ping answers change
    "error-wrong-id": None,  # set below: several error answers change
    "digit-id-as-number": _expect_reply_changed("108", lambda a, b: b == {**a, "id": 108}),
    "error-digit-id-as-number": _expect_reply_changed("102", lambda a, b: b == {**a, "id": 102}),
    "result-and-error": None,  # set below: both ping answers change
    "string-error-code": _expect_reply_changed(104, lambda a, b: a["error"]["code"] == -32601 and b["error"]["code"] == "-32601"),
    "unknown-method-wrong-code": _expect_reply_changed("102", lambda a, b: b == {**a, "error": {**a["error"], "code": -32600}}),
    "answer-notification": None,  # set below
    "ignore-batch": _expect_removed(lambda v: isinstance(v, list)),
    "ignore-ping": None,  # set below: both ping answers go
    "exit-on-invalid-cancel": _check_quit,
    "answer-cancelled": _no_diff,  # needs a link with a task group: on the wire in tests/broken_clients
    "exit-on-cancel-race": _check_quit,
    "request-before-initialize": _before_initialize,
    "no-client-info": _check_initialize_changed(lambda a, b: "clientInfo" not in b["params"]
                                                and {**b["params"], "clientInfo": a["params"]["clientInfo"]} == a["params"]),
    "no-initialized": _expect_removed(lambda v: v == {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    "request-during-initialize": _during_initialize,
    "accept-unsupported-version": _check_carry_on,
    "undeclared-server-capability": _expect_extra(lambda w: w.value["method"] in ("prompts/list", "resources/list", "logging/setLevel", "completion/complete")),
    "cancel-initialize": _during_initialize,
    "initialize-before-discover": _check_discover_first,
    "undeclared-roots": _expect_reply_changed(103, lambda a, b: a["error"]["code"] == -32601 and b["result"]["roots"]),
    "roots-unsupported-internal-error": _expect_reply_changed(103, lambda a, b: a["error"]["code"] == -32601 and b["error"]["code"] == -32603),
    "https-root": _expect_reply_changed(103, lambda a, b: b["result"]["roots"][0]["uri"].startswith("https://")),
    "undeclared-sampling": _expect_reply_changed(104, lambda a, b: a["error"]["code"] == -32601 and b["result"]["role"] == "assistant"),
    "undeclared-elicitation": _expect_reply_changed(105, lambda a, b: a["error"]["code"] == -32601 and b["result"]["action"] == "accept"),
    "modify-cursor": _expect_changed(lambda v: is_request(v, "tools/list"),
                                     lambda a, b: a["params"]["cursor"] == CURSOR
                                     and b == {**a, "params": {"cursor": "mcpc%3APage%202%2F2%3D"}}),
    "empty-cursor-ends": None,  # set below: a request goes (the ids after it shift)
    "fixed-page-size": None,
    "no-prompt-pages": None,
    "no-restart-on-invalid-cursor": None,
    "undeclared-mode-answered": _expect_reply_changed(109, lambda a, b: a["error"]["code"] == -32602
                                                      and b == {"jsonrpc": "2.0", "id": 109, "result": {"action": "decline"}}),
    "no-defaults": _expect_reply_changed(105, lambda a, b: a["result"]["content"]["color"] == "Red"
                                         and b["result"]["content"] == {"name": a["result"]["content"]["name"]}),
    "elicitation-invalid-content": _expect_reply_changed(105, lambda a, b: a["result"]["action"] == "accept" and set(
        a["result"]["content"]) == {"name", "color"} and b == {**a, "result": {"action": "accept", "content": {"name": 7, "color": 7}}}),
    "undeclared-sampling-tools": _expect_reply_changed(111, lambda a, b: a["result"]["content"]["type"] == "text"
                                                       and b["result"]["stopReason"] == "toolUse"
                                                       and b["result"]["content"][0]["name"] == "get_time"),
    "unchecked-tool-loop": None,  # set below: both answers change
    "elicitation-no-mode": _check_initialize_changed(lambda a, b: a["params"]["capabilities"]["elicitation"] == {}
                                                     and b["params"]["capabilities"]["elicitation"] == {"mcp-reference-client": {}}),
    "modeless-not-form": _expect_reply_changed(105, lambda a, b: a["result"]["action"] == "accept"
                                               and b["error"]["code"] == -32602),
    "exit-on-unknown-complete": _check_quit,
    "prefetch-url": _check_prefetch,
    "ignore-parse-error": _expect_removed(lambda v: v == {"jsonrpc": "2.0", "id": None,
                                                          "error": {"code": -32700, "message": "Parse error"}}),
    "pretty-json": _expect_extra(lambda w: w.raw.count(b"\n") > 2 and w.value is not None),
    "stdin-garbage": _expect_extra(lambda w: w.value is None and w.raw.endswith(b"\n")),
    "kill-without-closing-stdin": _no_diff,
    "no-escalation": _no_diff,  # in the link: test_fault_no_escalation
    "stdio-write-response": _expect_extra(lambda w: w.value == {"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete"}}),
    "http-write-response": _expect_extra(lambda w: w.value == {"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete"}}),
    "put-message": _expect_extra(lambda w: w.tweak.http_method == "PUT"),
    "accept-json-only": _expect_extra(lambda w: w.tweak.set_headers == {"Accept": "application/json"}),
    "batch-stdio": _expect_extra(lambda w: isinstance(w.value, list) and [v["method"] for v in w.value] == ["ping", "ping"]
                                 and w.raw.rstrip(b"\n").endswith(b"]")),
    "post-array": _expect_extra(lambda w: isinstance(w.value, list) and len(w.value) == 1 and w.value[0]["method"] == "ping"),
    "post-empty-array": _expect_extra(lambda w: w.raw == b"[]" and w.tweak.raw == b"[]"),
    "stderr-is-error": _no_diff,  # in the link, on the server's stderr: its broken-client row (tests/broken_clients)
    "fallback-only-on-32601": _no_diff,  # acts on a refused server/discover only: its broken-client row
    "drop-session-id": _expect_extra(lambda w: w.tweak.drop_headers == ("Mcp-Session-Id",)),
    "get-accept-json": _no_diff,  # the GET lives in the link: test_fault_get_accept_json
    "version-header-asked": None,  # set below
    "no-version-header": _expect_extra(lambda w: w.tweak.drop_headers == ("MCP-Protocol-Version",)),
    "give-up-after-404": _no_diff,
    "no-delete": _no_diff,
    "no-version-header-2026": _expect_extra(lambda w: w.tweak.drop_headers == ("MCP-Protocol-Version",)),
    "version-header-mismatch": _expect_extra(lambda w: w.tweak.set_headers == {"MCP-Protocol-Version": "2099-01-01"}),
    "no-method-header": _expect_extra(lambda w: "Mcp-Method" in w.tweak.drop_headers),
    "post-without-endpoint-query": _expect_extra(lambda w: w.tweak.url == "http://127.0.0.1:1/messages"),
    "meta-without-capabilities": _expect_extra(lambda w: CAPS not in w.value["params"]["_meta"] and PV in w.value["params"]["_meta"]),
    "meta-without-client-info": _check_meta_without_info,
    # the scripted server sends no $schema in requestedSchema: on the wire in tests/broken_clients
    "accept-unknown-dialect": _no_diff,
    "reject-explicit-2020-12": _no_diff,
    "fetch-network-ref": _no_diff,  # the scripted server lists no $ref: on the wire in tests/broken_clients
    "meta-key-empty-label": _expect_extra(lambda w: w.value["params"]["_meta"].get("acme..tools/trace") == "on"),
    "meta-key-name-trailing-hyphen": _expect_extra(lambda w: w.value["params"]["_meta"].get("com.example/trace-") == "on"),
    "meta-key-forward-dns": _expect_extra(lambda w: w.value["params"]["_meta"].get("example.com/trace") == "on"),
    "traceparent-malformed": _expect_extra(lambda w: w.value["params"]["_meta"].get("traceparent") == "00-abc-01"),
    "extension-id-without-prefix": _expect_extra(lambda w: w.value["params"]["_meta"][CAPS].get("extensions") == {"tracing": {}}),
}
# the Mcp-Param-* faults act on tools with x-mcp-header annotations, which the scripted server does
# not list: their headers are checked in test_param_header_faults, on the wire in tests/broken_clients
for _name in ("no-param-headers", "param-header-for-absent", "param-bool-titlecase", "param-no-base64",
              "param-sentinel-plain", "sentinel-uppercase", "keep-invalid-header-tools", "name-no-base64",
              "no-header-mismatch-retry", "fallback-on-modern-400"):
    CHECKS[_name] = _no_diff
# the task faults act on task-augmented requests, tasks/* and tools marked execution.taskSupport,
# which the scripted server never sends nor lists: on the wire in tests/broken_clients, in the
# task store in tests/reference_client/test_tasks.py
for _name in [n for n in FAULTS if n.startswith("task-")]:
    CHECKS[_name] = _no_diff


def _notification_with_id(strict: Run, faulty: Run) -> None:
    before, after = one_changed(strict, faulty)
    assert before == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert after == {**before, "id": 900001}


def _error_wrong_id(strict: Run, faulty: Run) -> None:
    changes = diff(strict, faulty)
    pairs = [(a.value, b.value) for _, before, after in changes for a, b in zip(before, after)]
    assert all(tag == "replace" for tag, *_ in changes) and pairs
    for a, b in pairs:
        assert "error" in a and b == {**a, "id": other_id(a["id"])}
    assert not any(is_reply(a, 101) for a, _ in pairs)  # the ping answer (a result) stays right


def _answer_notification(strict: Run, faulty: Run) -> None:
    changes = diff(strict, faulty)
    added = [w for tag, _, after in changes for w in after]
    assert all(tag == "insert" for tag, *_ in changes) and added
    for w in added:
        assert w.value["id"] is None and w.value["error"]["code"] == -32600


def _cancels(run: Run) -> list[Any]:
    return [v for v in run.values if isinstance(v, dict) and v.get("method") == "notifications/cancelled"]


def _timeout_without_cancel(strict: Run, faulty: Run) -> None:
    assert _cancels(strict) and not _cancels(faulty)  # the strict client cancels what it gave up on
    changes = diff(strict, faulty)
    assert all(tag == "delete" for tag, *_ in changes)
    assert [w.value for _, removed, _ in changes for w in removed] == _cancels(strict)


def _no_timeout(strict: Run, faulty: Run) -> None:
    assert _cancels(strict) and isinstance(strict.outcome, (list, StepFailed))
    assert faulty.outcome is None and not _cancels(faulty)  # still waiting when cut off, nothing cancelled
    unanswered = [v for v in faulty.values if is_request(v) and v["method"] in NEVER]
    assert faulty.values[-1] == unanswered[0]  # it sent nothing after the request it waits for


def _inert_without_a_closed_stream(strict: Run, faulty: Run) -> None:
    assert diff(strict, faulty) == []  # acts only on an SSE answer over HTTP (test_sse_stream_faults)


NEVER = frozenset({"logging/setLevel", "tools/list"})
for _name in ("mrtr-modify-state", "mrtr-same-id", "mrtr-state-leak", "mrtr-no-inputs", "absent-result-type-incomplete"):
    CHECKS[_name] = _inert_without_a_closed_stream  # the tour calls no tool here: test_mrtr_retry_faults
CHECKS["timeout-without-cancel"] = _timeout_without_cancel
CHECKS["no-timeout"] = _no_timeout
for _name in ("sse-answer-ignored", "no-poll", "ignore-retry", "resume-without-last-event-id"):
    CHECKS[_name] = _inert_without_a_closed_stream
CHECKS["notification-with-id"] = _notification_with_id
CHECKS["no-restart"] = _no_diff  # the restart is the process loop's (__main__): on the wire in tests/broken_clients


def _retry_unlisted_version(strict: Run, faulty: Run) -> None:
    assert isinstance(strict.outcome, StepFailed) and [v["method"] for v in strict.values] == ["server/discover"]
    extra = one_extra(strict, faulty).value  # the refused version asked for once more
    assert is_request(extra, "server/discover") and extra["params"]["_meta"][PV] == MODERN


def _no_version_retry(strict: Run, faulty: Run) -> None:
    assert [v["method"] for v in strict.values[:2]] == ["server/discover", "server/discover"] and strict.outcome == []
    assert isinstance(faulty.outcome, StepFailed) and [v["method"] for v in faulty.values] == ["server/discover"]


CHECKS["retry-unlisted-version"] = _retry_unlisted_version
CHECKS["no-version-retry"] = _no_version_retry
def _ping_ids_changed(strict: Run, faulty: Run) -> None:
    changes = diff(strict, faulty)
    pairs = [(a.value, b.value) for _, before, after in changes for a, b in zip(before, after)]
    assert all(tag == "replace" for tag, *_ in changes)
    assert [a["id"] for a, _ in pairs] == [101, "108"]  # the two pings
    for a, b in pairs:
        assert b == {**a, "id": other_id(a["id"])}


CHECKS["response-wrong-id"] = CHECKS["result-wrong-id"] = _ping_ids_changed


def _pings_both(strict: Run, faulty: Run) -> None:
    changes = diff(strict, faulty)
    pairs = [(a.value, b.value) for _, before, after in changes for a, b in zip(before, after)]
    assert all(tag == "replace" for tag, *_ in changes) and [a["id"] for a, _ in pairs] == [101, "108"]
    for a, b in pairs:
        assert b["result"] == {} and "error" in b and b["id"] == a["id"]


def _pings_unanswered(strict: Run, faulty: Run) -> None:
    changes = diff(strict, faulty)
    removed = [w.value for tag, before, _ in changes for w in before]
    assert all(tag == "delete" for tag, *_ in changes)
    assert [v["id"] for v in removed] == [101, "108"] and all(is_reply(v, v["id"]) for v in removed)


def _version_header_asked(strict: Run, faulty: Run) -> None:
    assert strict.values == faulty.values  # the same messages ...
    assert strict.core.negotiated == faulty.core.negotiated == "2025-06-18"  # (asked 2025-11-25: counter-offered)
    init = next(i for i, v in enumerate(strict.values) if is_request(v, "initialize"))
    assert [w.protocol_version for w in faulty.sent[:init + 1]] == [w.protocol_version for w in strict.sent[:init + 1]]
    assert len(strict.sent) > init + 2  # after initialize: the negotiated version, or (fault) the asked one
    assert all(w.protocol_version == "2025-06-18" for w in strict.sent[init + 1:])
    assert all(w.protocol_version == "2025-11-25" for w in faulty.sent[init + 1:])


def _ask_older_version(strict: Run, faulty: Run) -> None:
    init = [w.value for w in strict.sent if is_request(w.value, "initialize")]
    asked = [w.value for w in faulty.sent if is_request(w.value, "initialize")]
    assert len(init) == len(asked) == 1
    version = init[0]["params"]["protocolVersion"]
    assert asked[0]["params"]["protocolVersion"] == VERSIONS[VERSIONS.index(version) - 1]
    assert {k: v for k, v in asked[0]["params"].items() if k != "protocolVersion"} == \
        {k: v for k, v in init[0]["params"].items() if k != "protocolVersion"}


def _pages_removed(method: str, cursors: list[str]) -> Callable[[Run, Run], None]:
    """Only the list requests with ``cursors`` are gone; everything else the client wrote is the
    same but for the ids of the requests after them."""
    def check(strict: Run, faulty: Run) -> None:
        def key(v: Any) -> str:
            return json.dumps({k: x for k, x in v.items() if k != "id"} if isinstance(v, dict) else v, sort_keys=True)
        a, b = [key(v) for v in strict.values], [key(v) for v in faulty.values]
        ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
        removed = [strict.values[i] for tag, i1, i2, _, _ in ops if tag == "delete" for i in range(i1, i2)]
        assert all(tag == "delete" for tag, *_ in ops), ops
        assert [v["params"]["cursor"] for v in removed if is_request(v, method)] == cursors, removed
        assert len(removed) == len(cursors), removed
    return check


CHECKS["empty-cursor-ends"] = _pages_removed("prompts/list", [""])
CHECKS["fixed-page-size"] = _pages_removed("resources/list", ["R3"])
CHECKS["no-prompt-pages"] = _pages_removed("prompts/list", ["P2", ""])


def _no_restart(strict: Run, faulty: Run) -> None:
    """The strict client lists the templates again from the beginning after the refused cursor
    (and follows the cursor again); the faulty one does neither."""
    def listings(r: Run) -> list[Any]:
        return [(v.get("params") or {}).get("cursor") for v in r.values if is_request(v, "resources/templates/list")]
    assert listings(strict) == [None, "T2", None, "T2"], listings(strict)
    assert listings(faulty) == [None, "T2"], listings(faulty)
    others = [v for v in strict.values if not is_request(v, "resources/templates/list")]
    assert [json.dumps({k: x for k, x in v.items() if k != "id"}, sort_keys=True) for v in others] == \
        [json.dumps({k: x for k, x in v.items() if k != "id"}, sort_keys=True)
         for v in faulty.values if not is_request(v, "resources/templates/list")]


CHECKS["no-restart-on-invalid-cursor"] = _no_restart
CHECKS["version-header-asked"] = _version_header_asked
CHECKS["ask-older-version"] = _ask_older_version
CHECKS["result-and-error"] = _pings_both
CHECKS["ignore-ping"] = _pings_unanswered
CHECKS["error-wrong-id"] = _error_wrong_id
CHECKS["answer-notification"] = _answer_notification


def _unchecked_tool_loop(strict: Run, faulty: Run) -> None:
    before, after = only(diff(strict, faulty), "replace")
    assert [w.value["id"] for w in before] == [w.value["id"] for w in after] == [112, 113]
    assert all(w.value["error"]["code"] == -32602 for w in before)
    assert all(w.value["result"]["content"]["type"] == "text" for w in after)


CHECKS["unchecked-tool-loop"] = _unchecked_tool_loop

# the strict baseline some faults are compared with: a client that also leaves the capability out
_BASELINE_CAPS = {
    "undeclared-roots": "roots", "roots-unsupported-internal-error": "roots",
    "undeclared-sampling": "sampling", "string-error-code": "sampling", "undeclared-elicitation": "elicitation",
    "task-undeclared": "tasks", "task-undeclared-type": "tasks",
}
# ... or that declares a capability differently
_BASELINE_DECLARED = {"undeclared-sampling-tools": {"sampling": {}}}
# what the scripted server must do for the fault to show
_SERVER = {
    "accept-unsupported-version": {"offer": "1999-01-01"},
    "undeclared-server-capability": {"server_caps": {"tools": {}, "prompts": {}}},
    "undeclared-server-capability-should": {"server_caps": {"tools": {}, "prompts": {}}},
    "exit-on-invalid-cancel": {"server_caps": {"tools": {}, "prompts": {}}},
    "exit-on-cancel-race": {"server_caps": {"tools": {}, "prompts": {}}},
    "initialize-before-discover": {"era": "dual"},
    "modify-cursor": {"pages": True},
    "empty-cursor-ends": {"pages": "prompts", "server_caps": {"tools": {}, "prompts": {}}},
    "no-prompt-pages": {"pages": "prompts", "server_caps": {"tools": {}, "prompts": {}}},
    "fixed-page-size": {"pages": "resources", "server_caps": {"tools": {}, "resources": {}}},
    "no-restart-on-invalid-cursor": {"pages": "stale", "server_caps": {"tools": {}, "resources": {}}},
    "timeout-without-cancel": {"never_answer": NEVER},
    "timeout-without-cancel-2026": {"never_answer": NEVER},
    "no-timeout": {"never_answer": NEVER, "limit": 2.0},
    "no-timeout-2024": {"never_answer": NEVER, "limit": 2.0},
    "retry-unlisted-version": {"refuse": ["1999-01-01"], "refuse_every": True},
    "no-version-retry": {"refuse": [MODERN]},
}


def _case(name: str) -> tuple[str, str, str]:
    d = DEFECTS[name]
    legacy = [v for v in d.versions if not spec(v).stateless]
    version = legacy[-1] if legacy else d.versions[-1]
    transport = "stdio" if "stdio" in d.transports else d.transports[0]
    return name, version, transport


MRTR = ("undeclared-roots-2026", "undeclared-sampling-2026", "undeclared-elicitation-2026")


@pytest.mark.parametrize("name,version,transport", [_case(n) for n in DEFECTS if n not in MRTR],
                         ids=[n for n in DEFECTS if n not in MRTR])
def test_fault_changes_exactly_what_it_says(name: str, version: str, transport: str) -> None:
    base = behaviour(name)
    mode = "dual" if DEFECTS[name].dual else version
    caps = None
    if base in _BASELINE_CAPS:
        caps = default_capabilities(version)
        caps.pop(_BASELINE_CAPS[base])
    if base in _BASELINE_DECLARED:
        caps = {**default_capabilities(version), **_BASELINE_DECLARED[base]}
        mine = ClientCore(version, fault=name, transport=transport).capabilities
        assert all(mine.get(k) == v for k, v in _BASELINE_DECLARED[base].items())  # the fault declares it so itself
    kw = _SERVER.get(name, {})
    strict = run(None, version=version, mode=mode, transport=transport, caps=caps, **kw)
    faulty = run(name, version=version, mode=mode, transport=transport, caps=caps, **kw)
    if caps is not None:  # the fault must leave that capability out by itself
        assert base not in ("undeclared-roots",) or "roots" not in ClientCore(version, fault=name, transport=transport).capabilities
    check = CHECKS[base]
    check(strict, faulty)


@pytest.mark.parametrize("name", [n for n in DEFECTS if DEFECTS[n].versions != tuple(VERSIONS)])
def test_fault_is_inert_elsewhere(name: str) -> None:
    """On a version where the fault would break a differently named rule, the client is strict."""
    d = DEFECTS[name]
    outside = [v for v in VERSIONS if v not in d.versions and not FAULTS[name].acts(v, None)]
    if not outside or d.dual:
        pytest.skip("acts everywhere it can")
    version = outside[-1] if not spec(outside[-1]).stateless or "stdio" in d.transports else outside[0]
    transport = "stdio" if "stdio" in d.transports else d.transports[0]
    if transport not in {t.value for t in spec(version).transports}:
        transport = "stdio"
    kw = _SERVER.get(name, {})
    strict = run(None, version=version, transport=transport, **kw)
    faulty = run(name, version=version, transport=transport, **kw)
    assert diff(strict, faulty) == []


def test_undeclared_capability_faults_leave_the_capability_out() -> None:
    for name, cap in (("undeclared-roots", "roots"), ("roots-unsupported-internal-error", "roots"),
                      ("undeclared-sampling", "sampling"), ("string-error-code", "sampling"),
                      ("undeclared-elicitation", "elicitation")):
        assert cap not in ClientCore("2025-11-25", fault=name).capabilities
        assert cap in ClientCore("2025-11-25").capabilities
    core = ClientCore(MODERN, fault="undeclared-roots-2026")
    assert "roots" not in core.capabilities
    assert core.input_responses({"r": {"method": "roots/list", "params": {}}}) == {"r": {"roots": [
        {"uri": "file:///tmp/mcp-reference-client", "name": "scratch"}]}}
    assert ClientCore(MODERN).input_responses({"r": {"method": "roots/list"}}) is not None


INPUTS = {
    "roots": {"method": "roots/list", "params": {}},
    "sampling": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}},
    "elicitation": {"method": "elicitation/create", "params": {
        "message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
}


@pytest.mark.parametrize("name", MRTR + ("https-root",))
def test_2026_input_request_faults(name: str) -> None:
    """2026-07-28: the server asks for roots, sampling or elicitation inline (InputRequiredResult);
    the faulty client answers what it did not declare, or a root that is not file://."""
    cap = {"undeclared-roots-2026": "roots", "undeclared-sampling-2026": "sampling",
           "undeclared-elicitation-2026": "elicitation", "https-root": "roots"}[name]
    strict, faulty = ClientCore(MODERN), ClientCore(MODERN, fault=name, transport="stdio")
    requests = {"k": INPUTS[cap]}
    if name == "https-root":
        assert strict.input_responses(requests)["k"]["roots"][0]["uri"].startswith("file://")
        assert faulty.input_responses(requests)["k"]["roots"][0]["uri"].startswith("https://")
        return
    assert cap in strict.capabilities and cap not in faulty.capabilities
    meta = faulty.request("tools/call", {"name": "x"})["params"]["_meta"]
    assert cap not in meta[CAPS]
    undeclared = ClientCore(MODERN, capabilities={k: v for k, v in default_capabilities(MODERN).items() if k != cap})
    assert undeclared.input_responses(requests) is None  # strict: not declared, not answered
    assert faulty.input_responses(requests) == strict.input_responses(requests)


def _mrtr_run(fault: str | None, *, rounds: int | None = None) -> list[Any]:
    """What the client wrote for one tools/call answered with an InputRequiredResult; ``rounds``:
    only the first that many messages (a client that never gives the input is asked again until it
    gives up)."""
    srv = ScriptServer(MODERN, input_required=True, probes=False)

    async def main() -> list[Any]:
        core = ClientCore(MODERN, fault=fault, transport="stdio")
        async with MemoryLink(srv, "stdio") as link:
            session = Session(core, link, timeout=0.5)
            try:
                await session.call_with_input("tools/call", {"name": "add_numbers", "arguments": {"a": 1, "b": 2}})
            except StepFailed:
                if rounds is None:
                    raise
            return [w.value for w in link.sent][:rounds]

    return anyio.run(main)


def test_mrtr_retry_faults() -> None:
    """The retry after an InputRequiredResult: the requestState echoed exactly, a new id, and the
    state on no other request, the inputResponses given -- and each fault breaks exactly one of the four."""
    strict = _mrtr_run(None)
    assert [m["method"] for m in strict] == ["tools/call", "tools/call"]
    first, retry = strict
    assert retry["params"]["requestState"] == "S" and "requestState" not in first["params"]
    assert retry["id"] != first["id"] and "r" in retry["params"]["inputResponses"]
    first, retry = _mrtr_run("mrtr-modify-state")
    assert retry["params"]["requestState"] == "S-modified" and retry["id"] != first["id"]
    first, retry = _mrtr_run("mrtr-same-id")
    assert retry["id"] == first["id"] and retry["params"]["requestState"] == "S"
    first, retry = _mrtr_run("mrtr-no-inputs", rounds=2)
    assert retry["params"]["requestState"] == "S" and "inputResponses" not in retry["params"] and retry["id"] != first["id"]
    first, leak, retry = _mrtr_run("mrtr-state-leak")
    assert leak["method"] == "tools/list" and leak["params"] == {**leak["params"], "requestState": "S"}
    assert retry["params"]["requestState"] == "S" and retry["id"] != first["id"]


def test_schema_invalid_faults_say_so() -> None:
    """``also`` names client.basic.schema-valid exactly when the fault's message fails the
    version's schema (so the suite knows that second finding is expected)."""
    from conformance.schema import validate

    wrong = []
    for name, d in DEFECTS.items():
        base = behaviour(name)
        if name in MRTR or CHECKS[base] in (_no_diff, _check_quit, _check_carry_on, _check_discover_first, _check_meta_without_info):
            continue
        name_, version, transport = _case(name)
        caps = None
        if base in _BASELINE_CAPS:
            caps = default_capabilities(version)
            caps.pop(_BASELINE_CAPS[base])
        kw = _SERVER.get(name, {})
        mode = "dual" if d.dual else version
        strict = run(None, version=version, mode=mode, transport=transport, caps=caps, **kw)
        faulty = run(name, version=version, mode=mode, transport=transport, caps=caps, **kw)
        changed = [w for _, _, after in diff(strict, faulty) for w in after]
        server_methods = {101: "ping", "102": "x", 103: "roots/list", 104: "sampling/createMessage", 105: "elicitation/create"}
        invalid = False
        for w in changed:
            v = w.value
            for m in (v if isinstance(v, list) else [v]):
                if not isinstance(m, dict):
                    continue
                answering = server_methods.get(m.get("id")) if "method" not in m else None
                findings = [f for f in validate(m, version, C2S, answering=answering if answering in (
                    "ping", "roots/list", "sampling/createMessage", "elicitation/create") else None)
                            if not str(f.schema_path).startswith("rule:")]
                invalid = invalid or bool(findings)
        if invalid != ("client.basic.schema-valid" in d.also):
            wrong.append((name, invalid))
    assert not wrong, wrong


# -- faults in the links -------------------------------------------------------------------------------


class MockHttpServer:
    """An httpx mock transport playing a streamable HTTP server (legacy sessions or 2026-07-28)."""

    def __init__(self, version: str, *, expire_after: int | None = None, sse: bool = False, poll_ms: int | None = None) -> None:
        self.script = ScriptServer(version, probes=False)
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []  # when each request came (monotonic)
        self.expire_after = expire_after  # answer the Nth POST that carries the session id with 404
        self.sse = sse  # answer requests with SSE streams (a priming event first)
        self.poll_ms = poll_ms  # the first request after the handshake: priming event with this retry, then closed
        self.closed_at: float | None = None
        self.kept: list[Any] = []  # the answers of the closed stream, for its resumption
        self.session = 0
        self._with_session = 0

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        if request.method == "DELETE":
            return httpx.Response(200)
        if request.method == "GET":
            if self.kept and request.headers.get("last-event-id") == "e-1":
                out, self.kept = self.kept, []
                return httpx.Response(200, headers={"content-type": "text/event-stream"},
                                      content=b"".join(b"data: " + json.dumps(m).encode() + b"\n\n" for m in out))
            return httpx.Response(405)
        body = json.loads(request.content)
        sid = request.headers.get("mcp-session-id")
        if sid is not None:
            self._with_session += 1
            if self.expire_after is not None and self._with_session == self.expire_after:
                self.script.operating = False
                self.script.negotiated = None
                return httpx.Response(404, json={"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Not Found"}})
        out = self.script.handle(body)
        headers = {}
        if isinstance(body, dict) and body.get("method") == "initialize":
            self.session += 1
            headers["Mcp-Session-Id"] = f"session-{self.session}"
        if not out:
            return httpx.Response(202, headers=headers)
        if self.poll_ms is not None and self.closed_at is None and sid is not None and isinstance(body, dict) \
                and body.get("method") not in ("initialize", "ping"):
            self.kept, self.closed_at = out, time.monotonic()
            return httpx.Response(200, headers={**headers, "content-type": "text/event-stream"},
                                  content=f"id: e-1\nretry: {self.poll_ms}\ndata: \n\n".encode())
        if self.sse or self.poll_ms is not None:
            return httpx.Response(200, headers={**headers, "content-type": "text/event-stream"},
                                  content=b"id: e-0\ndata: \n\n" + b"data: " + json.dumps(out[-1]).encode() + b"\n\n")
        return httpx.Response(200, json=out[-1], headers=headers)


def http_run(fault: str | None, version: str, *, mode: str | None = None, **kw: Any) -> tuple[MockHttpServer, Any]:
    mock = MockHttpServer(version, **kw)
    mode = mode or version
    start = MODERN if mode == "dual" else mode

    async def main() -> Any:
        core = ClientCore(start, fault=fault, transport="streamable-http")
        link = HttpLink("http://127.0.0.1:1/mcp", stateless=spec(start).stateless, timeout=2,
                        http_transport=httpx.MockTransport(mock.handler))
        link.faulty = core.faulty
        if spec(start).stateless:
            link.protocol_version = start
        outcome: Any = None
        async with link:
            try:
                outcome = await tour(Session(core, link, timeout=2), call_tools=False, mode=mode)
            except (StepFailed, ClientQuit) as exc:
                outcome = exc
            finally:
                link.delete_session = not core.faulty("no-delete")
        return outcome

    return mock, anyio.run(main)


def _posts(mock: MockHttpServer) -> list[httpx.Request]:
    return [r for r in mock.requests if r.method == "POST"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_strict_http_headers(version: str) -> None:
    mock, outcome = http_run(None, version)
    assert outcome == []
    posts = _posts(mock)
    for r in posts:
        assert "application/json" in r.headers["accept"] and "text/event-stream" in r.headers["accept"]
        assert r.headers["content-type"] == "application/json"
        assert not isinstance(json.loads(r.content), list)
    assert "mcp-session-id" not in posts[0].headers and "mcp-protocol-version" not in posts[0].headers
    for r in posts[1:]:
        assert r.headers["mcp-session-id"] == "session-1"
        assert r.headers.get("mcp-protocol-version") == (version if spec(version).protocol_version_header else None)
    delete = [r for r in mock.requests if r.method == "DELETE"]
    assert len(delete) == 1 and delete[0].headers["mcp-session-id"] == "session-1"


def test_strict_http_headers_2026() -> None:
    mock, outcome = http_run(None, MODERN, mode="dual")
    assert outcome == []
    for r in _posts(mock):
        body = json.loads(r.content)
        assert r.headers["mcp-protocol-version"] == body["params"]["_meta"][PV] == MODERN
        assert r.headers["mcp-method"] == body["method"]
        assert "mcp-session-id" not in r.headers
    assert not [r for r in mock.requests if r.method in ("DELETE", "GET")]


def test_http_404_starts_a_new_session_and_repeats_the_request() -> None:
    mock, outcome = http_run(None, "2025-11-25", expire_after=2)  # initialized, then ping -> 404
    assert outcome == []
    methods = [(json.loads(r.content).get("method"), r.headers.get("mcp-session-id")) for r in _posts(mock)]
    i = methods.index(("initialize", None), 1)
    assert methods[i - 1] == ("ping", "session-1") and methods[i + 1] == ("notifications/initialized", "session-2")
    assert ("ping", "session-2") in methods[i:]


def test_sse_answers_are_read_and_a_closed_stream_is_resumed_after_its_retry() -> None:
    mock, outcome = http_run(None, "2025-11-25", sse=True)
    assert outcome == []
    mock, outcome = http_run(None, "2025-11-25", poll_ms=300)
    assert outcome == [] and mock.closed_at is not None and not mock.kept  # the kept answer was taken
    get = _first_get(mock)
    assert get is not None and get[0].headers["last-event-id"] == "e-1" and get[1] - mock.closed_at >= 0.3


def _first_get(mock: MockHttpServer) -> tuple[httpx.Request, float] | None:
    """The first GET after the server closed the stream (the standalone GET stream comes before)."""
    assert mock.closed_at is not None
    return next(((r, t) for r, t in zip(mock.requests, mock.times) if r.method == "GET" and t >= mock.closed_at), None)


def test_sse_stream_faults() -> None:
    mock, outcome = http_run("sse-answer-ignored", "2025-11-25", sse=True)
    assert isinstance(outcome, StepFailed) and "initialize" in str(outcome)
    assert [json.loads(r.content)["method"] for r in _posts(mock)] == ["initialize"]
    mock, outcome = http_run("no-poll", "2025-11-25", poll_ms=300)
    assert mock.closed_at is not None and _first_get(mock) is None
    mock, outcome = http_run("ignore-retry", "2025-11-25", poll_ms=1500)
    get = _first_get(mock)
    assert get is not None and get[0].headers["last-event-id"] == "e-1" and get[1] - mock.closed_at < 1.0
    mock, outcome = http_run("resume-without-last-event-id", "2025-11-25", poll_ms=300)
    get = _first_get(mock)
    assert get is not None and "last-event-id" not in get[0].headers and get[1] - mock.closed_at >= 0.3
    for fault in ("no-poll", "ignore-retry", "resume-without-last-event-id"):  # 2025-11-25 only
        mock, outcome = http_run(fault, "2025-06-18", poll_ms=300)
        get = _first_get(mock)
        assert outcome == [] and get is not None and get[0].headers["last-event-id"] == "e-1", fault


def test_fault_get_accept_json() -> None:
    from types import SimpleNamespace

    link = SimpleNamespace(session_id="s", protocol_version="2025-11-25", faulty=lambda name: False)
    assert HttpLink._stream_headers(link, None)["Accept"] == "text/event-stream"  # type: ignore[arg-type]
    link.faulty = lambda name: name == "get-accept-json"
    headers = HttpLink._stream_headers(link, "e1")  # type: ignore[arg-type]
    assert headers == {"Accept": "application/json", "Mcp-Session-Id": "s", "MCP-Protocol-Version": "2025-11-25",
                       "Last-Event-ID": "e1"}


def test_fault_give_up_after_404() -> None:
    mock, outcome = http_run("give-up-after-404", "2025-11-25", expire_after=2)
    methods = [json.loads(r.content).get("method") for r in _posts(mock)]
    assert methods.count("initialize") == 1 and methods[-1] == "ping"


def test_fault_no_delete() -> None:
    mock, outcome = http_run("no-delete", "2025-11-25")
    assert outcome == [] and not [r for r in mock.requests if r.method == "DELETE"]
    mock, _ = http_run("no-delete", "2025-06-18")  # inert there (no-delete-2025-03-26 acts)
    assert [r for r in mock.requests if r.method == "DELETE"]
    mock, _ = http_run("no-delete-2025-03-26", "2025-06-18")
    assert not [r for r in mock.requests if r.method == "DELETE"]


@pytest.mark.parametrize("fault,version,check", [
    ("accept-json-only", "2025-11-25", lambda r: r.headers["accept"] == "application/json"),
    ("accept-json-only-2026", MODERN, lambda r: r.headers["accept"] == "application/json"),
    ("drop-session-id", "2025-11-25", lambda r: "mcp-session-id" not in r.headers and json.loads(r.content)["method"] == "ping"),
    ("no-version-header", "2025-06-18", lambda r: "mcp-protocol-version" not in r.headers),
    ("no-version-header-2026", MODERN, lambda r: "mcp-protocol-version" not in r.headers),
    ("version-header-mismatch", MODERN, lambda r: r.headers["mcp-protocol-version"] == "2099-01-01"),
    ("no-method-header", MODERN, lambda r: "mcp-method" not in r.headers and r.headers["mcp-protocol-version"] == MODERN),
    ("post-array", "2025-11-25", lambda r: isinstance(json.loads(r.content), list)),
    ("put-message", "2025-11-25", lambda r: r.method == "PUT"),
    ("http-write-response", MODERN, lambda r: "result" in json.loads(r.content)),
])
def test_http_wire_faults(fault: str, version: str, check: Callable[[httpx.Request], bool]) -> None:
    strict, _ = http_run(None, version)
    faulty, _ = http_run(fault, version)
    key = lambda r: (r.method, r.content, tuple(sorted((k, v) for k, v in r.headers.items() if k not in ("content-length",))))  # noqa: E731
    a, b = [key(r) for r in strict.requests], [key(r) for r in faulty.requests]
    extra = [r for r in faulty.requests if key(r) not in a]
    assert len(extra) == 1 and len(b) == len(a) + 1, (a, b)
    assert check(extra[0]), extra[0].headers


def test_sse_post_goes_to_the_endpoint_and_the_fault_drops_its_query() -> None:
    posted: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        posted.append(str(request.url))
        return httpx.Response(202)

    async def main() -> None:
        link = SseLink("http://127.0.0.1:1/sse", timeout=2)
        link.endpoint = "http://127.0.0.1:1/messages?session_id=abc"
        link._client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        await link.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await link.send({"jsonrpc": "2.0", "id": 900001, "method": "ping"}, tweak=Tweak(url="http://127.0.0.1:1/messages"), quiet=True)
        await link._client.aclose()
        link._inbox.shut()

    anyio.run(main)
    assert posted == ["http://127.0.0.1:1/messages?session_id=abc", "http://127.0.0.1:1/messages"]


# a stdio server that records, in order, what happens to it: lines on stdin, EOF, SIGTERM
RECORDER = r"""
import os, signal, sys, time
out = open(sys.argv[1], "a", buffering=1)
def term(*_):
    out.write("SIGTERM\n"); out.flush(); os._exit(0)
signal.signal(signal.SIGTERM, term)
for line in sys.stdin:
    out.write("LINE " + line)
out.write("EOF\n"); out.flush()
time.sleep(30 if len(sys.argv) > 2 else 0)
"""


def _stdio_shutdown(tmp_path: Path, close_stdin_first: bool, *, stubborn: bool = False,
                    escalate: bool = True) -> list[str]:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    record = tmp_path / "record.txt"
    argv = [sys.executable, str(script), str(record)] + (["stubborn"] if stubborn else [])

    async def main() -> None:
        link = StdioLink(argv, close_stdin_first=close_stdin_first)
        link.escalate = escalate
        async with link:
            await link.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await link.send(None, tweak=Tweak(raw=b"pretty\n  json\n"))
            await anyio.sleep(0.5)

    anyio.run(main)
    return record.read_text().splitlines()


def test_stdio_shutdown_closes_stdin_first(tmp_path: Path) -> None:
    lines = _stdio_shutdown(tmp_path, True)
    assert lines[-1] == "EOF" and "SIGTERM" not in lines


def test_stdio_shutdown_escalates_to_sigterm_for_a_server_that_stays(tmp_path: Path) -> None:
    lines = _stdio_shutdown(tmp_path, True, stubborn=True)
    assert lines[-2:] == ["EOF", "SIGTERM"]


def test_stdio_shutdown_escalates_to_sigkill_for_a_server_that_ignores_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "deaf.py"
    record = tmp_path / "record.txt"
    script.write_text("import signal, sys, time\n"
                      "signal.signal(signal.SIGTERM, lambda *a: open(sys.argv[1], 'a').write('SIGTERM\\n'))\n"
                      "sys.stdin.read(); open(sys.argv[1], 'a').write('EOF\\n')\n"
                      "time.sleep(30); open(sys.argv[1], 'a').write('STILL HERE\\n')\n")

    async def main() -> Any:
        link = StdioLink([sys.executable, str(script), str(record)])
        async with link:
            await anyio.sleep(0.3)
        return link.proc.returncode

    code = anyio.run(main)
    assert record.read_text().splitlines() == ["EOF", "SIGTERM"] and code == -signal.SIGKILL


def test_fault_no_escalation(tmp_path: Path) -> None:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    record = tmp_path / "record.txt"

    async def main() -> Any:
        link = StdioLink([sys.executable, str(script), str(record), "stubborn"])
        link.escalate = False
        async with link:
            await link.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        left = link.proc.returncode  # None: left running, no SIGTERM, no SIGKILL
        lines = record.read_text().splitlines()
        os.killpg(link.proc.pid, signal.SIGKILL)  # the test's own clean-up
        await link.proc.aclose()
        return left, lines

    left, lines = anyio.run(main)
    assert left is None and lines[-1] == "EOF" and "SIGTERM" not in lines
    assert ClientCore("2025-11-25", fault="no-escalation", transport="stdio").faulty("no-escalation")
    assert not ClientCore(MODERN, fault="no-escalation", transport="stdio").faulty("no-escalation")
    assert ClientCore(MODERN, fault="no-escalation-2026", transport="stdio").faulty("no-escalation")


def test_fault_kill_without_closing_stdin(tmp_path: Path) -> None:
    lines = _stdio_shutdown(tmp_path, False)
    assert lines[-1] == "SIGTERM" and "EOF" not in lines
    assert lines[:3] == ['LINE {"jsonrpc":"2.0","method":"notifications/initialized"}', "LINE pretty", "LINE   json"]


def test_kill_fault_acts_by_version() -> None:
    assert ClientCore("2025-11-25", fault="kill-without-closing-stdin", transport="stdio").faulty("kill-without-closing-stdin")
    assert not ClientCore(MODERN, fault="kill-without-closing-stdin", transport="stdio").faulty("kill-without-closing-stdin")
    assert ClientCore(MODERN, fault="kill-without-closing-stdin-2026", transport="stdio").faulty("kill-without-closing-stdin")


def test_http_2026_cancels_by_closing_the_stream() -> None:
    class Stall(ScriptServer):
        def handle(self, msg: Any) -> list[Any]:
            if isinstance(msg, dict) and msg.get("method") == "tools/list":
                return []
            return super().handle(msg)

    srv = Stall(MODERN)

    async def main() -> list[Wire]:
        async with MemoryLink(srv, "streamable-http") as link:
            core = ClientCore(MODERN, transport="streamable-http")
            await tour(Session(core, link, timeout=0.3), call_tools=False, mode=MODERN)
        return link.sent

    sent = anyio.run(main)
    assert sent[-1].raw.startswith(b"<abort ") and not any(b"notifications/cancelled" in w.raw for w in sent)
    srv = Stall(MODERN)

    async def main_stdio() -> list[Wire]:
        async with MemoryLink(srv, "stdio") as link:
            core = ClientCore(MODERN, transport="stdio")
            await tour(Session(core, link, timeout=0.3), call_tools=False, mode=MODERN)
        return link.sent

    sent = anyio.run(main_stdio)
    assert sent[-1].value["method"] == "notifications/cancelled"


def test_link_closed_is_raised_for_a_server_that_cannot_start() -> None:
    async def main() -> None:
        async with StdioLink(["/nonexistent/binary"]):
            pass

    with pytest.raises(LinkClosed):
        anyio.run(main)


_XMH_TOOL = {"name": "t", "inputSchema": {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"}, "greeting": {"type": "string", "x-mcp-header": "Greeting"},
    "literal": {"type": "string", "x-mcp-header": "Literal"}, "flag": {"type": "boolean", "x-mcp-header": "Flag"},
    "count": {"type": "integer", "x-mcp-header": "Count"}, "note": {"type": "string", "x-mcp-header": "Note"},
    "opts": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}}}}
_XMH_ARGS = {"region": "us-west1", "greeting": " Hello, 世界", "literal": "=?base64?literal?=", "flag": True, "count": 42,
             "note": None, "opts": {"zone": "b"}}


def _param_headers_of(fault: str | None) -> dict[str, str]:
    from reference_client.session import _param_headers

    from types import SimpleNamespace

    link = SimpleNamespace(transport="streamable-http")
    session = Session(ClientCore(MODERN, fault=fault, transport="streamable-http"), link, timeout=1)
    return _param_headers(session, _XMH_TOOL, _XMH_ARGS)


def test_param_headers_and_their_faults() -> None:
    """2026-07-28 streamable-http#value-encoding: the strict client's Mcp-Param-* headers, and each
    fault changing exactly its own part of them."""
    strict = {"Mcp-Param-Region": "us-west1", "Mcp-Param-Greeting": "=?base64?IEhlbGxvLCDkuJbnlYw=?=",
              "Mcp-Param-Literal": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "Mcp-Param-Flag": "true",
              "Mcp-Param-Count": "42", "Mcp-Param-Zone": "b"}
    assert _param_headers_of(None) == strict
    changed = {
        "no-param-headers": {},
        "param-header-for-absent": {**strict, "Mcp-Param-Note": "null"},
        "param-bool-titlecase": {**strict, "Mcp-Param-Flag": "True"},
        "param-no-base64": {**strict, "Mcp-Param-Greeting": "Hello, ??"},
        "param-sentinel-plain": {**strict, "Mcp-Param-Literal": "=?base64?literal?="},
        "sentinel-uppercase": {**strict, "Mcp-Param-Greeting": "=?BASE64?IEhlbGxvLCDkuJbnlYw=?=",
                               "Mcp-Param-Literal": "=?BASE64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
        "keep-invalid-header-tools": strict,
    }
    for fault, expected in changed.items():
        assert _param_headers_of(fault) == expected, fault


def test_requested_schema_dialects() -> None:
    """2020-12 (named or the default) is served; any other $schema is refused with an error; the
    two dialect faults break exactly one of those."""
    def answer(fault: str | None, dialect: str | None) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}}
        if dialect is not None:
            schema["$schema"] = dialect
        core = ClientCore("2025-11-25", fault=fault)
        out = core._answer("r1", "elicitation/create", {"mode": "form", "message": "?", "requestedSchema": schema})
        assert out is not None
        return out

    d2020, unknown = "https://json-schema.org/draft/2020-12/schema", "https://example.invalid/no-such-dialect"
    assert answer(None, None)["result"]["action"] == "accept"
    assert answer(None, d2020)["result"]["action"] == "accept"
    assert answer(None, unknown)["error"]["code"] == -32602
    assert answer("accept-unknown-dialect", unknown)["result"]["action"] == "accept"
    assert answer("reject-explicit-2020-12", d2020)["error"]["code"] == -32602
    assert answer("reject-explicit-2020-12", None)["result"]["action"] == "accept"
