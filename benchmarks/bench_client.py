#!/usr/bin/env python3
"""The client catalogue for one protocol version against the reference client: wall time, checks.

In one run, side by side, on the same client (``mcp-reference-client``):

(a) ``mcp-conformance client`` over streamable HTTP (``--url {url}``) and over stdio
    (``--stdio {server}``), every client scenario of the version (the client with ``--timeout``
    ``--request-timeout``, default 3 s: the two timeout scenarios wait for it to give up);
(b) the official runner's client mode (npm ``@modelcontextprotocol/conformance``, ``client
    --command mcp-reference-client --scenario NAME``) for every non-authorization client scenario
    it lists for the version (the reference client does no OAuth; the auth/* scenarios would only
    measure their failures), one scenario after another, as ``--scenario`` runs them.

Counting, from each tool's own output: ours -- the sum of every result's ``checks`` in
report.json (each individual check of a requirement), and *verdicts* (requirement x version
results checked); official -- the entries of every ``checks.json`` with status SUCCESS, FAILURE or
WARNING, and *verdicts* the scenarios it ran.  With ``--rounds N`` each contender runs N times
(interleaved) and the median wall time is reported.  Writes ``reports/bench_client.json``.  Not a
test: nothing here asserts a speed.

    .venv/bin/python benchmarks/bench_client.py [--version 2025-11-25] [--rounds 1] [--skip-official]
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_catalogue import OFFICIAL_CHECKS, CHECKED, official_path, official_unavailable  # noqa: E402

RUN_TIMEOUT = 900.0
CLIENT = [sys.executable, "-m", "reference_client"]


def run_ours(transport: str, version: str, workdir: Path, request_timeout: float) -> dict[str, Any]:
    out = workdir / "ours"
    shutil.rmtree(out, ignore_errors=True)
    flag = "--stdio {server}" if transport == "stdio" else "--url {url}"
    command = " ".join([*CLIENT, "--timeout", f"{request_timeout:g}", flag])
    argv = [sys.executable, "-m", "conformance.cli", "client", "--command", command, "--transport", transport,
            "--version", version, "--report-dir", str(out), "--report-format", "none", "-q"]
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    wall = time.monotonic() - started
    path = out / "report.json"
    if not path.exists():
        raise RuntimeError(f"mcp-conformance wrote no report (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    report = json.loads(path.read_text(encoding="utf-8"))
    results = report["results"]
    outcomes = Counter(r["outcome"] for r in results)
    return {"wall": wall, "exit": proc.returncode, "checks": sum(int(r.get("checks") or 0) for r in results),
            "verdicts": sum(outcomes[o] for o in CHECKED), "outcomes": dict(outcomes),
            "client_runs": len(report["implementation"].get("runs") or [])}


def official_scenarios(version: str) -> list[str]:
    """The official runner's client scenarios tagged with ``version``, without authorization ones."""
    res = subprocess.run([str(official_path()), "list"], capture_output=True, text=True, timeout=600)
    section = res.stdout.split("Client scenarios", 1)[-1].split("\n\n", 1)[0]
    out = []
    for line in section.splitlines():
        m = re.match(r"\s+- (\S+) \[([^\]]*)\]", line)
        if m and not m.group(1).startswith("auth/") and version in m.group(2).split(","):
            out.append(m.group(1))
    return out


def run_official(scenarios: list[str], workdir: Path) -> dict[str, Any]:
    out = workdir / "official"
    shutil.rmtree(out, ignore_errors=True)
    installed = ROOT / ".venv" / "bin" / "mcp-reference-client"
    command = str(installed) if installed.exists() else " ".join(CLIENT)
    started = time.monotonic()
    codes = []
    for sc in scenarios:
        proc = subprocess.run([str(official_path()), "client", "--command", command, "--scenario", sc, "-o", str(out)],
                              cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        codes.append(proc.returncode)
    wall = time.monotonic() - started
    statuses: Counter[str] = Counter()
    for f in sorted(glob.glob(str(out / "**" / "checks.json"), recursive=True)):
        statuses.update(c.get("status") for c in json.loads(Path(f).read_text(encoding="utf-8")))
    return {"wall": wall, "exit": max(codes) if codes else None, "checks": sum(statuses[s] for s in OFFICIAL_CHECKS),
            "verdicts": len(scenarios), "outcomes": dict(statuses), "scenarios": scenarios}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="2025-11-25")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--skip-official", action="store_true")
    ap.add_argument("--request-timeout", type=float, default=3.0,
                    help="the reference client's own request timeout in our runs (its --timeout; default 3): our "
                         "two timeout scenarios wait for the client to give up, so they last about this long")
    ap.add_argument("--json", default=str(ROOT / "reports" / "bench_client.json"))
    ns = ap.parse_args(argv)
    contenders: list[tuple[str, str, Callable[[Path], dict[str, Any]]]] = [
        ("mcp-conformance", "streamable-http", lambda w: run_ours("streamable-http", ns.version, w, ns.request_timeout)),
        ("mcp-conformance", "stdio", lambda w: run_ours("stdio", ns.version, w, ns.request_timeout)),
    ]
    if not ns.skip_official:
        reason = official_unavailable()
        if reason:
            print(f"skipped: official runner -- {reason}", file=sys.stderr)
        else:
            scenarios = official_scenarios(ns.version)
            contenders.append(("official", "streamable-http", lambda w: run_official(scenarios, w)))
    samples: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-client-") as tmp:
        for _ in range(ns.rounds):
            for tester, transport, run in contenders:
                samples.setdefault(f"{tester}/{transport}", []).append(run(Path(tmp)))
    rows = []
    for key, runs in samples.items():
        tester, transport = key.split("/")
        wall = statistics.median(r["wall"] for r in runs)
        last = runs[-1]
        rows.append({"tester": tester, "transport": transport, "wall": round(wall, 3),
                     "walls": [round(r["wall"], 3) for r in runs], "checks": last["checks"],
                     "checks_per_second": round(last["checks"] / wall, 1) if wall else None,
                     "verdicts": last["verdicts"], "outcomes": last["outcomes"], "exit": last["exit"],
                     **({"scenarios": last["scenarios"]} if "scenarios" in last else {}),
                     **({"client_runs": last["client_runs"]} if "client_runs" in last else {})})
    ours = next((r for r in rows if r["tester"] == "mcp-conformance" and r["transport"] == "streamable-http"), None)
    theirs = next((r for r in rows if r["tester"] == "official"), None)
    ratio = None
    if ours and theirs and theirs["checks"] and theirs["wall"]:
        ratio = {"checks_ours_over_official": round(ours["checks"] / theirs["checks"], 2),
                 "wall_ours_over_official": round(ours["wall"] / theirs["wall"], 2),
                 "checks_per_second_ours_over_official": round(ours["checks_per_second"] / theirs["checks_per_second"], 2)}
    print(f"{'tester':<16} {'transport':<16} {'wall s':>7} {'checks':>7} {'checks/s':>9} {'verdicts':>9}  outcomes")
    for r in rows:
        print(f"{r['tester']:<16} {r['transport']:<16} {r['wall']:7.2f} {r['checks']:7d} {r['checks_per_second'] or 0:9.1f} "
              f"{r['verdicts']:9d}  {r['outcomes']}")
    if ratio:
        print(f"ours / official (streamable HTTP, {ns.version}): {ratio}")
    Path(ns.json).parent.mkdir(parents=True, exist_ok=True)
    Path(ns.json).write_text(json.dumps({"version": ns.version, "rounds": ns.rounds, "rows": rows, "ratio": ratio},
                                        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
