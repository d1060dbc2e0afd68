#!/usr/bin/env python3
"""Judged fuzz messages per second: ``mcp-conformance fuzz`` against the reference server,
server-everything and the Python SDK server (stdio, streamable HTTP, legacy HTTP+SSE), side by side in one run
with the PyPI fuzzer ``mcp-fuzzer`` in its protocol mode on the same servers.

    .venv/bin/python benchmarks/bench_fuzz.py [--seconds 10] [--peers reference,everything,sdk]
        [--transports stdio,streamable-http,sse] [--mcp-fuzzer /tmp/mcpfuzzer-venv/bin/mcp-fuzzer]
        [--long 100000] [--json reports/bench_fuzz.json]

* ours: one campaign per peer and transport (version 2025-11-25, seed 0, a time budget, the
  CLI's default corpus: schema seeds and the cached hypothesis examples), in this process; "judged/s" = messages sent and judged by the oracle / wall time from the first frame to
  the last judgment (the final deadline for unanswered frames included).  Findings are listed.
* mcp-fuzzer (install it in a scratch venv, never as a project dependency:
  ``python -m venv /tmp/mcpfuzzer-venv && /tmp/mcpfuzzer-venv/bin/pip install mcp-fuzzer``):
  ``--mode protocol --runs 3`` against the same command; its messages = the sum of the "N runs" of
  its protocol summary, its time = the wall time of the process (start-up included, as a user sees it).
* ``--long N``: N messages against the reference server on each transport: findings (expected:
  none) and the server's resident memory (first vs last quarter of the samples: flat or not).

Run it under ``flock /work/heavy.lock`` on a shared machine.  Not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from conformance.runtime.connect import Target  # noqa: E402
from conformance.fuzz.engine import FuzzConfig, run_campaign  # noqa: E402
from conformance.fuzz.server_campaign import corpus_extra  # noqa: E402
from fixtures.peers.launch import PeerUnavailable, free_port, peer_command  # noqa: E402

VERSION = "2025-11-25"


def _target(peer: str, transport: str) -> Target:
    if transport == "stdio":
        argv, env, _ = peer_command(peer, "stdio")
        return Target(command=argv, env=env or None)
    port = free_port()
    argv, env, url = peer_command(peer, transport, port=port)
    return Target(transport=transport, command=argv, url=url, env=env or None, port=port)


def ours(peer: str, transport: str, *, seconds: float | None, messages: int | None) -> dict[str, Any]:
    target = _target(peer, transport)
    cfg = FuzzConfig(target=target, version=VERSION, seed=0, budget=seconds, max_messages=messages,
                     window=32 if transport == "streamable-http" else 256,
                     extra_corpus=corpus_extra(VERSION, True))  # the CLI's default corpus (hypothesis examples)
    camp = anyio.run(run_campaign, cfg)
    return {
        "messages": camp.sent, "judged": camp.judged, "seconds": round(camp.elapsed, 3), "judged_per_second": round(camp.rate, 1),
        "restarts": camp.restarts, "out_of_order": camp.out_of_order,
        "findings": [{"requirement": r.finding.requirement, "problem": r.finding.problem, "count": r.count,
                      "message": r.finding.message[:200]} for r in camp.signatures.values()],
        "memory": camp.memory_summary(),
    }


def theirs(exe: str, peer: str) -> dict[str, Any] | None:
    if not exe or not os.path.exists(exe):
        return None
    argv, env, _ = peer_command(peer, "stdio")
    t0 = time.monotonic()
    proc = subprocess.run([exe, "--mode", "protocol", "--protocol", "stdio", "--endpoint", shlex.join(argv), "--runs", "3",
                           "--no-network", "--output-dir", f"/tmp/bench-mcp-fuzzer-{peer}"],
                          capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})})
    wall = time.monotonic() - t0
    runs = sum(int(m.group(1)) for m in re.finditer(r"^\s+\w+: (\d+) runs,", proc.stdout, re.M))
    return {"messages": runs, "seconds": round(wall, 3), "messages_per_second": round(runs / wall, 2) if wall else 0.0,
            "returncode": proc.returncode, "accepted_malformed_findings": sum(int(m.group(1)) for m in re.finditer(r"(\d+) accepted-malformed", proc.stdout))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--peers", default="reference,everything,sdk")
    ap.add_argument("--transports", default="stdio,streamable-http")
    ap.add_argument("--mcp-fuzzer", default="/tmp/mcpfuzzer-venv/bin/mcp-fuzzer")
    ap.add_argument("--long", type=int, default=0, help="also N messages against the reference server per transport")
    ap.add_argument("--json", help="write the figures here")
    ns = ap.parse_args()
    out: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
                           "version": VERSION, "seconds": ns.seconds, "runs": []}
    for peer in ns.peers.split(","):
        for transport in ns.transports.split(","):
            try:
                got = ours(peer, transport, seconds=ns.seconds, messages=None)
            except (PeerUnavailable, ValueError) as exc:
                print(f"{peer:10} {transport:15} skipped: {exc}")
                continue
            row: dict[str, Any] = {"peer": peer, "transport": transport, "ours": got}
            line = (f"{peer:10} {transport:15} ours {got['judged_per_second']:9,.0f} judged/s "
                    f"({got['messages']:,} messages in {got['seconds']:.1f} s, {len(got['findings'])} finding kinds)")
            if transport == "stdio":
                th = theirs(ns.mcp_fuzzer, peer)
                if th is not None:
                    row["mcp_fuzzer"] = th
                    ratio = got["judged_per_second"] / th["messages_per_second"] if th["messages_per_second"] else float("inf")
                    row["ratio"] = round(ratio, 1)
                    line += f" | mcp-fuzzer {th['messages_per_second']:.1f}/s ({th['messages']} in {th['seconds']:.1f} s) -> {ratio:,.0f}x"
            print(line, flush=True)
            for f in got["findings"]:
                print(f"{'':27} finding {f['requirement']} {f['problem']} x{f['count']}: {f['message'][:120]}")
            out["runs"].append(row)
    if ns.long:
        out["long"] = []
        for transport in ns.transports.split(","):
            got = ours("reference", transport, seconds=None, messages=ns.long)
            mem = got["memory"]
            print(f"long: reference {transport}: {got['messages']:,} messages, {len(got['findings'])} findings, "
                  f"{got['judged_per_second']:,.0f} judged/s; memory first-quarter median {mem.get('first_quarter_median_kib')} KiB, "
                  f"last-quarter median {mem.get('last_quarter_median_kib')} KiB, peak {mem.get('peak_kib')} KiB", flush=True)
            out["long"].append({"transport": transport, **got})
    if ns.json:
        Path(ns.json).parent.mkdir(parents=True, exist_ok=True)
        Path(ns.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
