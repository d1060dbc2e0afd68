#!/usr/bin/env python3
"""The client direction of the fuzzer: messages per second that ``mcp-conformance fuzz
--client-command`` sends the reference client (``mcp-reference-client``) and judges, per transport.

    .venv/bin/python benchmarks/bench_fuzz_client.py [--seconds 15] [--transports stdio,streamable-http]
        [--jobs 1,2] [--json reports/bench_fuzz_client.json]

One campaign per transport and ``--jobs`` value (version 2025-11-25, seed 0, a time budget), in
this process: "messages/s" = messages we sent the client (mutated server-to-client requests and
notifications, and our answers to its requests; barrier pings not counted) / wall time from the
first client start to the last judgment, client start-ups included (a campaign is many client
runs: the reference client tours the server, a dozen requests, and exits; each request is held
for a round of messages).  Also: client runs, the client's CPU (the processes we started: the
client, its server launcher, the relay) against ours, and findings (expected: none).  On 2 cores the
client and we share the machine: the figure is the client's speed as much as ours.  Run it under
``flock /work/heavy.lock`` on a shared machine.  Not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from conformance.client.target import ClientTarget  # noqa: E402
from conformance.fuzz.client_engine import ClientFuzzConfig, run_client_campaign  # noqa: E402
from conformance.spec.versions import Transport  # noqa: E402

VERSION = "2025-11-25"
COMMANDS = {
    "stdio": "mcp-reference-client --stdio {server}",
    "streamable-http": "mcp-reference-client --url {url}",
    "sse": "mcp-reference-client --sse-url {url}",
}


def _cpu() -> tuple[float, float]:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


def one(transport: str, seconds: float, jobs: int) -> dict[str, Any]:
    target = ClientTarget(command=COMMANDS[transport], transport=Transport(transport), startup_timeout=15.0)
    cfg = ClientFuzzConfig(target=target, version=VERSION, seed=0, budget=seconds, jobs=jobs)
    ours0, theirs0 = _cpu()
    t0 = time.monotonic()
    camp = anyio.run(run_client_campaign, cfg)
    wall = time.monotonic() - t0
    ours1, theirs1 = _cpu()
    return {
        "transport": transport, "jobs": jobs, "messages": camp.sent, "judged": camp.judged,
        "seconds": round(camp.elapsed, 3), "wall_seconds": round(wall, 3),
        "messages_per_second": round(camp.sent / camp.elapsed, 1) if camp.elapsed else 0.0,
        "judged_per_second": round(camp.rate, 1), "client_runs": camp.runs, "answers": camp.answers,
        "barriers": camp.barriers, "cpu_ours_seconds": round(ours1 - ours0, 2), "cpu_client_seconds": round(theirs1 - theirs0, 2),
        "findings": [{"requirement": r.finding.requirement, "problem": r.finding.problem, "count": r.count,
                      "message": r.finding.message[:200]} for r in camp.signatures.values()],
        "runs_ended": dict(camp.ended), "tolerated_exits": dict(camp.tolerated_exits),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=15.0, help="budget per campaign (default 15)")
    ap.add_argument("--transports", default="stdio", help="comma list of stdio, streamable-http, sse (default stdio)")
    ap.add_argument("--jobs", default="2", help="comma list of client runs at once to compare (default 2)")
    ap.add_argument("--json", help="write the figures here")
    ns = ap.parse_args()
    out: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
                           "version": VERSION, "seconds": ns.seconds, "runs": []}
    for transport in ns.transports.split(","):
        for jobs in (int(j) for j in ns.jobs.split(",")):
            got = one(transport, ns.seconds, jobs)
            print(f"{transport:15} jobs {jobs}: {got['messages_per_second']:7,.0f} messages/s ({got['messages']:,} in "
                  f"{got['seconds']:.1f} s, {got['client_runs']} client runs, {got['answers']} answers); CPU ours "
                  f"{got['cpu_ours_seconds']:.1f} s, client {got['cpu_client_seconds']:.1f} s; "
                  f"{len(got['findings'])} finding kinds", flush=True)
            for f in got["findings"]:
                print(f"{'':17} finding {f['requirement']} {f['problem']} x{f['count']}: {f['message'][:120]}")
            out["runs"].append(got)
    if ns.json:
        Path(ns.json).parent.mkdir(parents=True, exist_ok=True)
        Path(ns.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
