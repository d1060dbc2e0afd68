#!/usr/bin/env python3
"""Round trips per second through our stack (transport + raw peer + schema validation) against
bare client loops, on the same trivial echo server (``fixtures/peers/tiny_server.py``).

For each transport (stdio, streamable HTTP) and each method (``tools/call`` echo, ``ping``), one
request in flight, protocol 2025-11-25 after the ``initialize`` handshake, these clients run side
by side in one process, each on its own server process and connection:

``bare-sync``      stdio: ``subprocess`` pipes (write a line, flush, readline);
                   HTTP: one keep-alive ``http.client`` connection
``bare-async``     stdio: asyncio pipes (write a line, drain, readline);
                   HTTP: one keep-alive ``httpx.AsyncClient``, the headers our transport sends
``transport``      ``StdioTransport`` / ``StreamableHttpTransport`` send + receive, no peer
``peer``           ``RawPeer.call`` over the transport, validation off
``peer+validate``  ``RawPeer.call`` with schema validation on (what scenarios use)

Bare loops do not parse: they compare each answer with the exact bytes the server must send (the
echoed text and the request id), so a wrong answer stops the benchmark.  The peer loops check the
returned result and, after every timed slice, that every answer was validated without findings.

Each round gives every client ``--seconds`` per method, cut into ``--chunks`` slices run
interleaved (A B C D E, E D C B A, ...), so drift in machine load hits every client alike; a
rate is the median over rounds, with min and max, and the client process's CPU time per round
trip is reported beside it (steadier than wall time on a loaded machine).  The headline is the overhead ratio
``bare-async rate / peer+validate rate`` (time per round trip of our stack over the bare loop),
per transport and method, given as the ratio of medians and as the median of per-round ratios.

    .venv/bin/python benchmarks/bench_roundtrip.py [--seconds 0.5] [--rounds 5] [--chunks 5] [--warmup 0.3]
        [--transports stdio,streamable-http] [--methods tools/call,ping] [--json reports/bench_roundtrip.json]

The clients share one process, and the peers keep a transcript of every message: after a few
rounds that is ~10^5 entries, which no scenario's connection ever holds.  A full cyclic-GC
collection walks all of it and lands on whichever client triggers it (the first method measured
paid up to 1.5x more for it).  So before each slice everything kept so far is ``gc.freeze()``-d
(outside the timing): each slice pays for the collections its own allocations cause, over what it
made.  ``--no-freeze`` measures without that.

Not a test: nothing here asserts a speed (timed assertions flake on shared machines).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import http.client
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_SHARED_SCHEMAS = ROOT.parent / "shared" / "mcp-spec" / "schemas"
if "MCP_CONFORMANCE_SCHEMA_DIR" not in os.environ and _SHARED_SCHEMAS.is_dir():
    os.environ["MCP_CONFORMANCE_SCHEMA_DIR"] = str(_SHARED_SCHEMAS)

import anyio  # noqa: E402
import httpx  # noqa: E402

from conformance.runtime.peer import RawPeer  # noqa: E402
from conformance.transports.http import StreamableHttpTransport  # noqa: E402
from conformance.transports.stdio import StdioTransport  # noqa: E402
from fixtures.peers.launch import peer_command, spawn, start_peer  # noqa: E402

VERSION = "2025-11-25"
TEXT = "hello, benchmark"
CLIENTS = ("bare-sync", "bare-async", "transport", "peer", "peer+validate")
TRANSPORTS = ("stdio", "streamable-http")
METHODS = ("tools/call", "ping")
HEADLINE = ("bare-async", "peer+validate")


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


PARAMS: dict[str, Any] = {"tools/call": {"name": "echo", "arguments": {"text": TEXT}}, "ping": None}
RESULTS: dict[str, Any] = {"tools/call": {"content": [{"type": "text", "text": TEXT}]}, "ping": {}}
INIT = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


class WrongAnswer(RuntimeError):
    """A client got something other than the exact expected answer: the numbers would be worthless."""


class Wire:
    """Exact request and answer bytes for one method (the bytes RawPeer sends and tiny_server answers)."""

    def __init__(self, method: str) -> None:
        self.method = method
        params = PARAMS[method]
        tail: dict[str, Any] = {"method": method}
        if params is not None:
            tail["params"] = params
        # RawPeer's key order: jsonrpc, id, method, params; tiny_server's: jsonrpc, id, result
        self._req_head = b'{"jsonrpc":"2.0","id":'
        self._req_tail = b"," + _dumps(tail)[1:]
        self._ans_head = b'{"jsonrpc":"2.0","id":'
        self._ans_tail = b',"result":' + _dumps(RESULTS[method]) + b"}"

    def request(self, i: int) -> bytes:
        return self._req_head + str(i).encode() + self._req_tail

    def answer(self, i: int) -> bytes:
        return self._ans_head + str(i).encode() + self._ans_tail


def _check_result(method: str, result: Any, what: str) -> None:
    if result != RESULTS[method]:
        raise WrongAnswer(f"{what}: unexpected result for {method}: {json.dumps(result)[:300]}")


# -- clients ----------------------------------------------------------------------------------------
# Each client runs its own tight loop for ``seconds`` and returns (round trips, elapsed seconds).
# The deadline is looked at every 4 round trips; the rate divides by the elapsed time measured.


class Client:
    name = ""

    def __init__(self) -> None:
        self.answers = 0  # answers checked (warm-up included)
        self.validated = 0  # inbound messages validated without findings (peer+validate)

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        raise NotImplementedError


class StdioBareSync(Client):
    name = "bare-sync"

    def __init__(self, proc: subprocess.Popen) -> None:
        super().__init__()
        self.proc = proc
        self.next_id = 1
        self._call(_dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}))
        self.proc.stdin.write(_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"\n")
        self.proc.stdin.flush()

    def _call(self, body: bytes) -> bytes:
        self.proc.stdin.write(body + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise WrongAnswer("bare-sync: the server closed stdout")
        return line

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        w, r = self.proc.stdin, self.proc.stdout
        write, flush, readline = w.write, w.flush, r.readline
        i = self.next_id
        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        while True:
            write(wire.request(i) + b"\n")
            flush()
            if readline() != wire.answer(i) + b"\n":
                raise WrongAnswer(f"{self.name}: wrong answer to request {i}")
            i += 1
            n += 1
            if not n & 3 and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - t0
        self.next_id = i
        self.answers += n
        return n, elapsed


class StdioBareAsync(Client):
    name = "bare-async"

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        super().__init__()
        self.proc = proc
        self.next_id = 1

    @classmethod
    async def open(cls, argv: list[str], stack: contextlib.AsyncExitStack) -> "StdioBareAsync":
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
        )
        stack.push_async_callback(_stop_async_process, proc)
        self = cls(proc)
        self.proc.stdin.write(_dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}) + b"\n")
        await self.proc.stdin.drain()
        if not await self.proc.stdout.readline():
            raise WrongAnswer("bare-async: no answer to initialize")
        self.proc.stdin.write(_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"\n")
        return self

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        w, r = self.proc.stdin, self.proc.stdout
        write, drain, readline = w.write, w.drain, r.readline
        i = self.next_id
        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        while True:
            write(wire.request(i) + b"\n")
            await drain()
            if await readline() != wire.answer(i) + b"\n":
                raise WrongAnswer(f"{self.name}: wrong answer to request {i}")
            i += 1
            n += 1
            if not n & 3 and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - t0
        self.next_id = i
        self.answers += n
        return n, elapsed


async def _stop_async_process(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(Exception):
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), 2.0)
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


class HttpBareSync(Client):
    name = "bare-sync"

    def __init__(self, url: str) -> None:
        super().__init__()
        u = http.client.urlsplit(url)
        self.path = u.path
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        status, sid, _ = self._post(_dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}))
        if status != 200 or not sid:
            raise WrongAnswer(f"bare-sync: initialize answered HTTP {status}, session {sid!r}")
        self.headers["Mcp-Session-Id"] = sid
        self.headers["MCP-Protocol-Version"] = VERSION
        status, _, _ = self._post(_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        if status != 202:
            raise WrongAnswer(f"bare-sync: notifications/initialized answered HTTP {status}")
        self.next_id = 1

    def _post(self, body: bytes) -> tuple[int, str | None, bytes]:
        self.conn.request("POST", self.path, body=body, headers=self.headers)
        resp = self.conn.getresponse()
        data = resp.read()
        return resp.status, resp.getheader("Mcp-Session-Id"), data

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        conn, path, headers = self.conn, self.path, self.headers
        i = self.next_id
        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        while True:
            conn.request("POST", path, body=wire.request(i), headers=headers)
            resp = conn.getresponse()
            if resp.status != 200 or resp.read() != wire.answer(i):
                raise WrongAnswer(f"{self.name}: wrong answer to request {i} (HTTP {resp.status})")
            i += 1
            n += 1
            if not n & 3 and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - t0
        self.next_id = i
        self.answers += n
        return n, elapsed

    def close(self) -> None:
        self.conn.close()


class HttpBareAsync(Client):
    name = "bare-async"

    def __init__(self, url: str, client: httpx.AsyncClient) -> None:
        super().__init__()
        self.url = url
        self.client = client
        # the headers StreamableHttpTransport sends on a POST (httpx adds the same defaults to both)
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        self.next_id = 1

    @classmethod
    async def open(cls, url: str, stack: contextlib.AsyncExitStack) -> "HttpBareAsync":
        client = await stack.enter_async_context(httpx.AsyncClient(trust_env=False, follow_redirects=False, timeout=30))
        self = cls(url, client)
        resp = await client.post(url, content=_dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}), headers=self.headers)
        sid = resp.headers.get("mcp-session-id")
        if resp.status_code != 200 or not sid:
            raise WrongAnswer(f"bare-async: initialize answered HTTP {resp.status_code}, session {sid!r}")
        self.headers["Mcp-Session-Id"] = sid
        self.headers["MCP-Protocol-Version"] = VERSION
        resp = await client.post(url, content=_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers=self.headers)
        if resp.status_code != 202:
            raise WrongAnswer(f"bare-async: notifications/initialized answered HTTP {resp.status_code}")
        return self

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        post, url, headers = self.client.post, self.url, self.headers
        i = self.next_id
        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        while True:
            resp = await post(url, content=wire.request(i), headers=headers)
            if resp.status_code != 200 or resp.content != wire.answer(i):
                raise WrongAnswer(f"{self.name}: wrong answer to request {i} (HTTP {resp.status_code})")
            i += 1
            n += 1
            if not n & 3 and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - t0
        self.next_id = i
        self.answers += n
        return n, elapsed


class TransportOnly(Client):
    """The transport without the peer: send one body, receive one Inbound (parsed envelope)."""

    name = "transport"

    def __init__(self, transport: Any) -> None:
        super().__init__()
        self.t = transport
        self.next_id = 1

    @classmethod
    async def open(cls, transport: Any, stack: contextlib.AsyncExitStack) -> "TransportOnly":
        await stack.enter_async_context(transport)
        self = cls(transport)
        await transport.send(_dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}))
        item = await transport.receive()
        if item.envelope is None or item.envelope.result is None:
            raise WrongAnswer(f"transport: bad answer to initialize: {item.raw[:300]!r}")
        if hasattr(transport, "protocol_version"):
            transport.protocol_version = VERSION
        await transport.send(_dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return self

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        send, receive = self.t.send, self.t.receive
        i = self.next_id
        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        while True:
            await send(wire.request(i))
            item = await receive()
            if item.raw != wire.answer(i) or item.problem is not None:
                raise WrongAnswer(f"{self.name}: wrong answer to request {i}: {item.raw[:300]!r} {item.problem or ''}")
            i += 1
            n += 1
            if not n & 3 and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - t0
        self.next_id = i
        self.answers += n
        return n, elapsed


class PeerClient(Client):
    def __init__(self, peer: RawPeer, *, validate: bool) -> None:
        super().__init__()
        self.peer = peer
        self.validate = validate
        self.name = "peer+validate" if validate else "peer"

    @classmethod
    async def open(cls, transport: Any, stack: contextlib.AsyncExitStack, *, validate: bool) -> "PeerClient":
        peer = RawPeer(transport, version=VERSION, validate=validate, timeout=30)
        await stack.enter_async_context(peer)
        self = cls(peer, validate=validate)
        env = await peer.initialize()
        if env.result is None or peer.negotiated_version != VERSION:
            raise WrongAnswer(f"{self.name}: initialize failed: {env.raw[:300]!r}")
        if validate and (peer.validation_problem or peer.findings_of(env)):
            raise WrongAnswer(f"{self.name}: validation is not working: {peer.validation_problem or peer.findings_of(env)}")
        return self

    async def run(self, wire: Wire, seconds: float) -> tuple[int, float]:
        peer = self.peer
        call = peer.call
        method = wire.method
        params = PARAMS[method]
        expected = RESULTS[method]
        first_entry = len(peer.transcript)
        n = 0
        t0 = time.perf_counter()
        deadline = t0 + seconds
        if params is None:
            while True:
                result = await call(method)
                if result != expected:
                    _check_result(method, result, self.name)
                n += 1
                if not n & 3 and time.perf_counter() >= deadline:
                    break
        else:
            while True:
                result = await call(method, params)
                if result != expected:
                    _check_result(method, result, self.name)
                n += 1
                if not n & 3 and time.perf_counter() >= deadline:
                    break
        elapsed = time.perf_counter() - t0
        self.answers += n
        self._audit(first_entry, n)
        return n, elapsed

    def _audit(self, first_entry: int, n: int) -> None:
        """After the timed slice: every answer was recorded, and (validating) none had findings."""
        peer = self.peer
        if peer.validate and (peer.validation_problem is not None or peer._validator is None):
            raise WrongAnswer(f"{self.name}: validation stopped: {peer.validation_problem}")
        inbound = [e for e in peer.transcript.entries[first_entry:] if e.direction == "in"]
        if len(inbound) != n:
            raise WrongAnswer(f"{self.name}: {n} round trips but {len(inbound)} inbound messages recorded")
        bad = [e for e in inbound if e.findings]
        if bad:
            raise WrongAnswer(f"{self.name}: schema findings on a correct answer: {bad[0].findings}")
        if self.validate:
            self.validated += len(inbound)


# -- the run --------------------------------------------------------------------------------------


async def open_clients(transport: str, stack: contextlib.AsyncExitStack, sync_stack: contextlib.ExitStack) -> dict[str, Client]:
    clients: dict[str, Client] = {}
    if transport == "stdio":
        argv, env, _ = peer_command("tiny", "stdio")
        proc = sync_stack.enter_context(spawn(argv, env=env))
        clients["bare-sync"] = StdioBareSync(proc)
        clients["bare-async"] = await StdioBareAsync.open(list(argv), stack)
        clients["transport"] = await TransportOnly.open(StdioTransport(argv), stack)
        clients["peer"] = await PeerClient.open(StdioTransport(argv), stack, validate=False)
        clients["peer+validate"] = await PeerClient.open(StdioTransport(argv), stack, validate=True)
    else:
        urls = [sync_stack.enter_context(start_peer("tiny", transport)).url for _ in CLIENTS]
        bare_sync = HttpBareSync(urls[0])
        sync_stack.callback(bare_sync.close)
        clients["bare-sync"] = bare_sync
        clients["bare-async"] = await HttpBareAsync.open(urls[1], stack)
        clients["transport"] = await TransportOnly.open(StreamableHttpTransport(urls[2]), stack)
        clients["peer"] = await PeerClient.open(StreamableHttpTransport(urls[3]), stack, validate=False)
        clients["peer+validate"] = await PeerClient.open(StreamableHttpTransport(urls[4]), stack, validate=True)
    return clients


def _summary(samples: list[float]) -> dict[str, Any]:
    med = statistics.median(samples)
    return {
        "samples": [round(s, 1) for s in samples],
        "median": round(med, 1),
        "min": round(min(samples), 1),
        "max": round(max(samples), 1),
        "spread": round((max(samples) - min(samples)) / med, 3) if med else None,  # (max - min) / median
        "us_per_round_trip": round(1e6 / med, 2) if med else None,
    }


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    wires = {m: Wire(m) for m in opts.methods}
    samples: dict[tuple[str, str, str], list[float]] = {}
    cpu_samples: dict[tuple[str, str, str], list[float]] = {}  # client process CPU us per round trip
    counts: dict[tuple[str, str, str], int] = {}
    async with contextlib.AsyncExitStack() as stack:
        with contextlib.ExitStack() as sync_stack:
            try:
                clients = {t: await open_clients(t, stack, sync_stack) for t in opts.transports}
                for t, by_name in clients.items():  # warm-up: imports, compiled validators, caches
                    for m in opts.methods:
                        for c in by_name.values():
                            await c.run(wires[m], opts.warmup)
                for r in range(opts.rounds):
                    for t, by_name in clients.items():
                        for m in opts.methods:
                            # a round gives each client `seconds`, in `chunks` slices interleaved
                            # A B C D E, E D C B A, ... so load drift within the round hits all alike
                            order = list(by_name.values())
                            if r % 2:
                                order.reverse()
                            acc = {c.name: [0, 0.0, 0.0] for c in order}  # round trips, seconds, cpu
                            for k in range(opts.chunks):
                                for c in order if k % 2 == 0 else order[::-1]:
                                    if opts.freeze:
                                        # what every client kept so far (transcripts of ~10^5 messages,
                                        # which no scenario's connection ever holds) out of the cyclic
                                        # GC's sight: a full collection in this slice then walks only
                                        # what this slice made, not the others' history
                                        gc.freeze()
                                    cpu0 = time.process_time()
                                    n, elapsed = await c.run(wires[m], opts.seconds / opts.chunks)
                                    a = acc[c.name]
                                    a[0] += n
                                    a[1] += elapsed
                                    a[2] += time.process_time() - cpu0
                            for name, (n, elapsed, cpu) in acc.items():
                                key = (t, m, name)
                                samples.setdefault(key, []).append(n / elapsed)
                                cpu_samples.setdefault(key, []).append(cpu / n * 1e6)
                                counts[key] = counts.get(key, 0) + n
                    if not opts.quiet:
                        print(f"round {r + 1}/{opts.rounds} done", file=sys.stderr, flush=True)
            finally:
                await stack.aclose()  # async clients before the sync stack stops the HTTP servers
    results = []
    for t in opts.transports:
        for m in opts.methods:
            rows = {}
            for name in CLIENTS:
                key = (t, m, name)
                c = clients[t][name]
                rows[name] = {
                    **_summary(samples[key]),
                    "cpu_us_per_round_trip": round(statistics.median(cpu_samples[key]), 2),
                    "round_trips": counts[key],
                    "answers_checked": c.answers,
                    "wrong_answers": 0,
                }
                if name == "peer+validate":
                    rows[name]["validated_without_findings"] = c.validated
            base, ours = HEADLINE
            paired = [b / o for b, o in zip(samples[(t, m, base)], samples[(t, m, ours)])]
            ratios = {f"{base} / {name}": round(rows[base]["median"] / rows[name]["median"], 2) for name in CLIENTS if name != base}
            results.append(
                {
                    "transport": t,
                    "method": m,
                    "rows": rows,
                    "ratios_of_medians": ratios,
                    "headline": {
                        "what": f"time per round trip, {ours} over {base}",
                        "ratio_of_medians": ratios[f"{base} / {ours}"],
                        "median_of_round_ratios": round(statistics.median(paired), 2),
                        "round_ratios": [round(x, 2) for x in paired],
                        # client CPU per round trip, ours over the bare loop's (steadier under load)
                        "cpu_ratio": round(statistics.median(cpu_samples[(t, m, ours)]) / statistics.median(cpu_samples[(t, m, base)]), 2),
                    },
                }
            )
    return {
        "benchmark": "request/response round trips per second, one in flight, tiny_server echo, protocol " + VERSION,
        "clients": list(CLIENTS),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(), "loadavg": list(os.getloadavg())},
        "config": {"gc_freeze_before_slices": opts.freeze, "rounds": opts.rounds, "seconds": opts.seconds, "chunks": opts.chunks, "warmup": opts.warmup, "transports": list(opts.transports), "methods": list(opts.methods)},
        "results": results,
    }


def print_table(report: dict[str, Any]) -> None:
    cfg = report["config"]
    print(
        f"\nround trips per second: median of {cfg['rounds']} rounds of {cfg['seconds']:g} s per client, "
        f"each in {cfg['chunks']} interleaved slices (min..max over rounds)"
    )
    for res in report["results"]:
        print(f"\n{res['transport']} {res['method']}")
        base = res["rows"][HEADLINE[0]]["median"]
        for name, row in res["rows"].items():
            print(
                f"  {name:14} {row['median']:9.0f} rt/s  {row['us_per_round_trip']:8.1f} us/rt"
                f"  ({row['min']:.0f}..{row['max']:.0f})  cpu {row['cpu_us_per_round_trip']:6.1f} us/rt"
                f"  x{base / row['median']:.2f} of bare-async time"
            )
        h = res["headline"]
        print(
            f"  headline: {h['what']}: {h['ratio_of_medians']:.2f}x (median of round ratios "
            f"{h['median_of_round_ratios']:.2f}x; client CPU per round trip {h['cpu_ratio']:.2f}x)"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.5, help="length of one timed slice (default 0.5)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--warmup", type=float, default=0.3, help="untimed slice per client and method first (default 0.3)")
    ap.add_argument("--chunks", type=int, default=5, help="interleaved slices per client and round (default 5)")
    ap.add_argument("--transports", default=",".join(TRANSPORTS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--json", default=str(ROOT / "reports" / "bench_roundtrip.json"))
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--no-freeze", dest="freeze", action="store_false",
                    help="do not gc.freeze() before each slice: full collections then walk every client's "
                         "accumulated transcript and land on whichever client happens to trigger them")
    opts = ap.parse_args(argv)
    opts.transports = [t.strip() for t in opts.transports.split(",") if t.strip()]
    opts.methods = [m.strip() for m in opts.methods.split(",") if m.strip()]
    for t in opts.transports:
        if t not in TRANSPORTS:
            ap.error(f"unknown transport {t!r}; known: {', '.join(TRANSPORTS)}")
    for m in opts.methods:
        if m not in METHODS:
            ap.error(f"unknown method {m!r}; known: {', '.join(METHODS)}")
    if opts.rounds < 1 or opts.seconds <= 0 or opts.chunks < 1:
        ap.error("--rounds and --chunks must be >= 1 and --seconds > 0")
    report = anyio.run(run, opts, backend="asyncio")
    print_table(report)
    path = Path(opts.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nreport: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
