"""Sans-I/O harness for the reference server's core: feed JSON values, collect what it sends; and
:func:`http_server`, a real server process on a free loopback port."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import anyio

from conformance.spec.versions import VERSIONS, spec
from reference_server.core import Connection, Outgoing, ServerConfig
from reference_server.features import build_server

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
MODERN = [v for v in VERSIONS if spec(v).stateless]
LEGACY = [v for v in VERSIONS if spec(v).handshake]


ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def http_server(*args: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """``python -m reference_server --transport streamable-http --port 0 ARGS``: the process (its
    stderr piped, read up to the "listening on" line) and its URL; always ended (SIGTERM, then
    SIGKILL)."""
    proc = subprocess.Popen([sys.executable, "-m", "reference_server", "--transport", "streamable-http", "--port", "0",
                             *args], cwd=ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ})
    try:
        assert proc.stderr is not None
        url = None
        for _ in range(50):
            m = re.search(r"listening on (\S+)", proc.stderr.readline())
            if m:
                url = m.group(1)
                break
        assert url, "the server did not start"
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def meta(version: str = "2026-07-28", **extra: Any) -> dict[str, Any]:
    return {PV: version, CAPS: extra.pop("caps", {}), "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}, **extra}


class Harness:
    """One connection; ``out`` collects every :class:`Outgoing` the core produced.

    Every message the server sends is checked against the official schema of the version in use
    (the request's, or the negotiated one) as the method it answers; ``findings`` collects any
    non-conformance and the :func:`harness` context manager fails the test on exit if there is one.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.out: list[Outgoing] = []
        self.changed = anyio.Event()
        self._next = 1000
        self.sent: dict[tuple[type, Any], tuple[str, str | None]] = {}  # id -> (method, modern version)
        self.findings: list[tuple[Any, Any]] = []
        self.check_schema = True

    def _version_for(self, msg: dict[str, Any]) -> tuple[str | None, str | None]:
        rid = msg.get("id")
        entry = self.sent.get((type(rid), rid)) if "method" not in msg else None
        method, modern = entry if entry else (None, None)
        return (modern or self.conn.version), method

    async def sink(self, out: Outgoing) -> None:
        self.out.append(out)
        if self.check_schema and out.kind in ("response", "notification", "request"):
            from conformance.schema import validate
            from conformance.spec.methods import S2C

            msg = json.loads(out.data)
            if isinstance(msg, dict):
                version, method = self._version_for(msg)
                if isinstance(msg.get("params"), dict) and "io.modelcontextprotocol/subscriptionId" in (msg["params"].get("_meta") or {}):
                    version = "2026-07-28"
                if version is not None and not (msg.get("id", 0) is None and "error" in msg):
                    findings = validate(msg, version, S2C, answering=method)
                    if findings:
                        self.findings.append((msg, [str(f) for f in findings]))
        self.changed.set()
        self.changed = anyio.Event()

    def messages(self) -> list[Any]:
        return [json.loads(o.data) for o in self.out if o.kind in ("response", "notification", "request")]

    async def send(self, value: Any) -> None:
        await self.conn.receive(value, sink=self.sink)

    async def wait_for(self, pred, timeout: float = 5.0) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for m in self.messages():
                    if pred(m):
                        return m
                await self.changed.wait()

    async def response(self, rid: Any, timeout: float = 5.0) -> dict[str, Any]:
        return await self.wait_for(lambda m: isinstance(m, dict) and "method" not in m and m.get("id") == rid and type(m.get("id")) is type(rid), timeout)

    async def request(self, method: str, params: dict[str, Any] | None = None, *, rid: Any = None) -> dict[str, Any]:
        if rid is None:
            self._next += 1
            rid = self._next
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        pv = (params or {}).get("_meta", {}).get(PV) if isinstance((params or {}).get("_meta"), dict) else None
        self.sent[(type(rid), rid)] = (method, pv if pv in MODERN else None)
        await self.send(msg)
        return await self.response(rid)

    async def modern(self, method: str, params: dict[str, Any] | None = None, *, version: str = "2026-07-28", rid: Any = None, **meta_extra: Any) -> dict[str, Any]:
        p = dict(params or {})
        p["_meta"] = {**meta(version, **meta_extra), **p.get("_meta", {})}
        return await self.request(method, p, rid=rid)

    async def initialize(self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = await self.request("initialize", {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": {"name": "t", "version": "1"}}, rid=0)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return resp


@asynccontextmanager
async def harness(config: ServerConfig | None = None, *, stateless: bool = False) -> AsyncIterator[Harness]:
    server = build_server(config or ServerConfig())
    async with anyio.create_task_group() as tg:
        h: Harness | None = None

        async def default_sink(out: Outgoing) -> None:
            assert h is not None
            await h.sink(out)

        conn = Connection(server, task_group=tg, sink=default_sink, stateless=stateless)
        h = Harness(conn)
        try:
            yield h
        finally:
            conn.close()
            tg.cancel_scope.cancel()
    assert not h.findings, f"the server sent messages its schema forbids: {h.findings}"
