#!/usr/bin/env python3
"""tools/call round trips per second: the reference server vs a server on the official Python SDK.

Both servers expose the same ``echo`` tool (name, input schema ``{"text": string}``, answer text);
the SDK server is ``fixtures/peers/sdk_server.py`` (``mcp`` from PyPI).  Both are measured side by
side in one run, on stdio and on streamable HTTP, with the same minimal client (blocking pipes; one
keep-alive ``http.client`` connection), one request in flight, protocol version 2025-11-25 after
the ``initialize`` handshake.  Rounds are interleaved (ref, sdk, ref, sdk, ...) so machine-load drift
hits both alike; the headline is the ratio of medians.  Every answer is checked for the echoed
text, so a server that answers with an error cannot look fast.

    .venv/bin/python benchmarks/bench_reference_vs_sdk.py [--rounds 5] [--seconds 2]
        [--transports stdio,streamable-http] [--peers reference,sdk,tiny] [--json reports/bench_reference_vs_sdk.json]

Not a test: nothing here asserts a speed (timed assertions flake on shared machines).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fixtures.peers.launch import PeerUnavailable, spawn, start_peer  # noqa: E402

VERSION = "2025-11-25"
TEXT = "hello, benchmark"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(i: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": TEXT}}}, separators=(",", ":")).encode()


def _check(msg: dict[str, Any], i: int) -> None:
    if msg.get("id") != i or msg.get("result", {}).get("content", [{}])[0].get("text") != TEXT:
        raise RuntimeError(f"unexpected answer to request {i}: {json.dumps(msg)[:300]}")


class StdioClient:
    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.w = proc.stdin
        self.r = proc.stdout
        self.send(INIT)
        self.read(0)
        self.send(INITIALIZED)

    def send(self, msg: Any) -> None:
        self.w.write(json.dumps(msg).encode() + b"\n")
        self.w.flush()

    def read(self, i: int) -> dict[str, Any]:
        while True:
            line = self.r.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == i and "method" not in msg:
                return msg

    def round_trip(self, i: int) -> None:
        self.w.write(_call(i) + b"\n")
        self.w.flush()
        _check(self.read(i), i)


class HttpClient:
    def __init__(self, url: str) -> None:
        u = http.client.urlsplit(url)
        self.path = u.path
        self.host, self.port = u.hostname, u.port
        self.reconnects = 0
        self._connect()
        self.headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        status, headers, body = self.post(json.dumps(INIT).encode())
        if status != 200:
            raise RuntimeError(f"initialize: HTTP {status}: {body[:300]!r}")
        sid = headers.get("mcp-session-id")
        if sid:
            self.headers["mcp-session-id"] = sid
        self.headers["mcp-protocol-version"] = VERSION
        status, _, body = self.post(json.dumps(INITIALIZED).encode())
        if status != 202:
            raise RuntimeError(f"notifications/initialized: HTTP {status}: {body[:300]!r}")

    def _connect(self) -> None:
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def post(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            self.conn.request("POST", self.path, body=body, headers=self.headers)
            resp = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed an idle keep-alive connection while the other contender ran
            self.conn.close()
            self._connect()
            self.reconnects += 1
            self.conn.request("POST", self.path, body=body, headers=self.headers)
            resp = self.conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data

    def round_trip(self, i: int) -> None:
        status, headers, body = self.post(_call(i))
        if status != 200:
            raise RuntimeError(f"tools/call: HTTP {status}: {body[:300]!r}")
        if headers.get("content-type", "").startswith("text/event-stream"):
            for line in body.splitlines():
                if line.startswith(b"data:") and line[5:].strip():
                    msg = json.loads(line[5:])
                    if msg.get("id") == i and "method" not in msg:
                        _check(msg, i)
                        return
            raise RuntimeError(f"no answer in the SSE stream: {body[:300]!r}")
        _check(json.loads(body), i)


def measure(rt: Callable[[int], None], seconds: float, start: int) -> tuple[float, int]:
    n = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    i = start
    while True:
        rt(i)
        i += 1
        n += 1
        if (n & 31) == 0 and time.perf_counter() >= deadline:
            break
    return n / (time.perf_counter() - t0), i


def run_transport(transport: str, peers: list[str], rounds: int, seconds: float, warmup: float) -> dict[str, Any]:
    clients: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    with ExitStack() as stack:
        for name in peers:
            try:
                info = stack.enter_context(start_peer(name, transport))
            except PeerUnavailable as exc:
                skipped[name] = str(exc)
                continue
            if transport == "stdio":
                proc = stack.enter_context(spawn(info.argv, env=info.env))
                clients[name] = StdioClient(proc)
            else:
                clients[name] = HttpClient(info.url)
        counters = {name: 1 for name in clients}
        for name, c in clients.items():  # warm-up: imports, schema compilation, caches
            _, counters[name] = measure(c.round_trip, warmup, counters[name])
        samples: dict[str, list[float]] = {name: [] for name in clients}
        for r in range(rounds):
            order = list(clients) if r % 2 == 0 else list(reversed(clients))
            for name in order:
                rate, counters[name] = measure(clients[name].round_trip, seconds, counters[name])
                samples[name].append(rate)
    out: dict[str, Any] = {"transport": transport, "samples": samples, "skipped": skipped}
    out["median"] = {name: statistics.median(v) for name, v in samples.items() if v}
    if "reference" in out["median"] and "sdk" in out["median"]:
        out["ratio_reference_vs_sdk"] = out["median"]["reference"] / out["median"]["sdk"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--transports", default="stdio,streamable-http")
    ap.add_argument("--peers", default="reference,sdk")
    ap.add_argument("--json", default=str(ROOT / "reports" / "bench_reference_vs_sdk.json"))
    opts = ap.parse_args(argv)
    peers = [p.strip() for p in opts.peers.split(",") if p.strip()]
    results = []
    for transport in [t.strip() for t in opts.transports.split(",") if t.strip()]:
        res = run_transport(transport, peers, opts.rounds, opts.seconds, opts.warmup)
        results.append(res)
        print(f"\n{transport}: tools/call round trips per second (median of {opts.rounds} interleaved rounds of {opts.seconds:g} s)")
        for name, v in res["samples"].items():
            if v:
                print(f"  {name:10} {res['median'][name]:9.0f}   (min {min(v):.0f}, max {max(v):.0f})")
        for name, why in res["skipped"].items():
            print(f"  {name:10} skipped: {why}")
        if "ratio_reference_vs_sdk" in res:
            print(f"  ratio reference / sdk: {res['ratio_reference_vs_sdk']:.2f}x")
    try:
        import mcp  # noqa: F401
        from importlib.metadata import version

        sdk_version = version("mcp")
    except Exception:  # pragma: no cover
        sdk_version = None
    report = {
        "benchmark": "tools/call echo round trips per second, one in flight, protocol 2025-11-25",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "sdk_version": sdk_version,
        "rounds": opts.rounds,
        "seconds": opts.seconds,
        "results": results,
    }
    path = Path(opts.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2))
    print(f"\nreport: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
