#!/usr/bin/env python3
"""The whole catalogue for one protocol version (or all five): wall time, checks and checks per second.

In one run, side by side:

(a) ``mcp-conformance`` against the reference server on stdio (the CLI starts it);
(b) ``mcp-conformance`` and the official runner (npm ``@modelcontextprotocol/conformance``,
    ``server --url ... --suite active --spec-version <version>``) against the reference server on
    streamable HTTP;
(c) the same two against server-everything (npm) on streamable HTTP.

Every contender gets a server process of its own, started through ``fixtures/peers/launch.py``
(free 127.0.0.1 port, always stopped) and ready before the clock starts, so wall time is the
tester's own.  Counting, from each tool's own output:

* ours: ``report.json`` -- *verdicts* (requirement x version results that were checked: pass,
  warning, fail, xfail), and *checks* (the sum of every result's ``checks``: each individual
  ``ctx.check``);
* official: every ``checks.json`` in its results directory -- *checks* are the entries with status
  SUCCESS, FAILURE or WARNING (SKIPPED and INFO are counted apart), *verdicts* the scenarios it ran.

With ``PYTHONDONTWRITEBYTECODE`` set (as on this machine) the project's bytecode is compiled first,
as ``tests/conftest.py`` does: otherwise every CLI and server process compiles each module from
source, which is not what an installed package does (``--no-compile`` keeps that cost in).

Checks per second = checks / wall time.  With ``--rounds N`` every contender runs N times (rounds
interleaved) and the median wall time is reported.  The official runner's parts are skipped with a
clear message when npm is unreachable (it cannot be installed), server-everything's likewise.
Writes ``reports/bench_catalogue.json`` and prints a table.  Not a test: nothing here asserts a
speed.

    .venv/bin/python benchmarks/bench_catalogue.py [--version 2025-11-25] [--rounds 1]
        [--skip-official] [--skip-everything] [--json reports/bench_catalogue.json]
"""

from __future__ import annotations

import argparse
import compileall
import glob
import json
import os
import platform
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

from fixtures.peers.launch import PeerStartError, PeerUnavailable, start_peer  # noqa: E402

RUN_TIMEOUT = 900.0
CHECKED = ("pass", "warning", "fail", "xfail", "stale")
OFFICIAL_CHECKS = ("SUCCESS", "FAILURE", "WARNING")


# -- the two testers ---------------------------------------------------------------------------------


def run_ours(target: list[str], version: str, workdir: Path) -> dict[str, Any]:
    """One ``mcp-conformance server`` run; wall time and what its report.json counted."""
    out = workdir / "ours"
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "conformance.cli", "server", *target, "--version", version,
            "--report-dir", str(out), "--report-format", "none", "-q"]
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    wall = time.monotonic() - started
    path = out / "report.json"
    if not path.exists():
        raise RuntimeError(f"mcp-conformance wrote no report (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    report = json.loads(path.read_text(encoding="utf-8"))
    results = report["results"]
    outcomes = Counter(r["outcome"] for r in results)
    return {
        "wall": wall,
        "exit": proc.returncode,
        "checks": sum(int(r.get("checks") or 0) for r in results),
        "verdicts": sum(outcomes[o] for o in CHECKED),
        "outcomes": dict(outcomes),
        "errors": len(report.get("errors") or []),
    }


def official_path() -> Path:
    env = os.environ.get("OFFICIAL_CONFORMANCE")
    return Path(env) if env else ROOT.parent / "shared" / "tools" / "official-conformance"


def official_unavailable() -> str | None:
    """Why the official runner cannot run here (None: it can)."""
    path = official_path()
    if not path.exists():
        return f"the official runner wrapper is not at {path} (set OFFICIAL_CONFORMANCE)"
    home = Path(os.environ.get("OFFICIAL_CONFORMANCE_HOME", Path.home() / ".cache" / "official-conformance"))
    if (home / "node_modules" / "@modelcontextprotocol" / "conformance" / "package.json").exists():
        return None
    if shutil.which("npm") is None:
        return "npm is not installed, so the official runner cannot be installed"
    try:
        ok = subprocess.run(["npm", "ping"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        return "the npm registry is unreachable, so the official runner (@modelcontextprotocol/conformance) cannot be installed"
    # install it now (untimed): the wrapper installs on first use
    res = subprocess.run([str(path), "list"], capture_output=True, text=True, timeout=1200)
    if res.returncode != 0:
        return f"the official runner could not be installed: {(res.stderr or res.stdout)[-1000:]}"
    return None


def run_official(url: str, version: str, workdir: Path) -> dict[str, Any]:
    """The official runner's active suite for ``version`` -- for ``all``, one run per version, one
    after the other (it takes one ``--spec-version`` at a time), their walls and checks summed."""
    if version == "all":
        from conformance.spec.versions import VERSIONS

        runs = [_run_official(url, v, workdir) for v in VERSIONS]
        total: dict[str, Any] = {"wall": sum(r["wall"] for r in runs), "exit": max(r["exit"] for r in runs),
                                 "checks": sum(r["checks"] for r in runs), "verdicts": sum(r["verdicts"] for r in runs),
                                 "failed_scenarios": sum(r["failed_scenarios"] for r in runs),
                                 "by_version": {v: {"wall": round(r["wall"], 3), "checks": r["checks"]} for v, r in zip(VERSIONS, runs)}}
        outcomes: Counter[str] = Counter()
        for r in runs:
            outcomes.update(r["outcomes"])
        total["outcomes"] = dict(outcomes)
        return total
    return _run_official(url, version, workdir)


def _run_official(url: str, version: str, workdir: Path) -> dict[str, Any]:
    out = workdir / "official"
    shutil.rmtree(out, ignore_errors=True)
    argv = [str(official_path()), "server", "--url", url, "--suite", "active", "--spec-version", version, "-o", str(out)]
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    wall = time.monotonic() - started
    files = sorted(glob.glob(str(out / "*" / "checks.json")))
    if not files:
        if version != "all" and proc.returncode != 0 and "version" in (proc.stdout + proc.stderr).lower():
            return {"wall": wall, "exit": proc.returncode, "checks": 0, "verdicts": 0, "outcomes": {}, "failed_scenarios": 0,
                    "unsupported": (proc.stdout + proc.stderr).strip()[-300:]}
        raise RuntimeError(f"the official runner wrote no results (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    statuses: Counter[str] = Counter()
    failed_scenarios = 0
    for f in files:
        checks = json.loads(Path(f).read_text(encoding="utf-8"))
        scen = Counter(c.get("status") for c in checks)
        statuses.update(scen)
        failed_scenarios += bool(scen["FAILURE"])
    return {
        "wall": wall,
        "exit": proc.returncode,
        "checks": sum(statuses[s] for s in OFFICIAL_CHECKS),
        "verdicts": len(files),  # scenarios run
        "outcomes": dict(statuses),
        "failed_scenarios": failed_scenarios,
    }


# -- contenders ----------------------------------------------------------------------------------------


def _with_http_peer(peer: str, fn: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    with start_peer(peer, "streamable-http") as info:
        assert info.url is not None
        return fn(info.url)


def contenders(version: str, workdir: Path, *, official: bool, everything: bool) -> list[dict[str, Any]]:
    """What to run: name, server, transport, tester, and a zero-argument runner (or a skip reason)."""
    out: list[dict[str, Any]] = []
    reason = None if official else "--skip-official"
    if official:
        reason = official_unavailable()
        if reason:
            print(f"skipped: official runner -- {reason}", file=sys.stderr)
    ev_reason = None if everything else "--skip-everything"
    if everything:
        try:
            with start_peer("everything", "stdio"):  # installs it (untimed); nothing starts on stdio
                pass
        except (PeerUnavailable, PeerStartError) as exc:
            ev_reason = getattr(exc, "reason", None) or str(exc)
            print(f"skipped: server-everything -- {ev_reason}", file=sys.stderr)

    def add(server: str, transport: str, tester: str, run: Callable[[], dict[str, Any]], skip: str | None = None) -> None:
        out.append({"server": server, "transport": transport, "tester": tester, "run": run, "skip": skip})

    add("reference", "stdio", "mcp-conformance", lambda: run_ours([], version, workdir))
    add("reference", "streamable-http", "mcp-conformance",
        lambda: _with_http_peer("reference", lambda url: run_ours(["--url", url, "--transport", "streamable-http"], version, workdir)))
    add("reference", "streamable-http", "official",
        lambda: _with_http_peer("reference", lambda url: run_official(url, version, workdir)), reason)
    add("everything", "streamable-http", "mcp-conformance",
        lambda: _with_http_peer("everything", lambda url: run_ours(["--url", url, "--transport", "streamable-http"], version, workdir)),
        ev_reason)
    add("everything", "streamable-http", "official",
        lambda: _with_http_peer("everything", lambda url: run_official(url, version, workdir)), ev_reason or reason)
    return out


def _summarise(samples: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [s["wall"] for s in samples]
    wall = statistics.median(walls)
    last = samples[-1]
    checks = last["checks"]
    return {
        "wall": round(wall, 3),
        "walls": [round(w, 3) for w in walls],
        "checks": checks,
        "checks_per_second": round(checks / wall, 1) if wall > 0 else None,
        "verdicts": last["verdicts"],
        "outcomes": last["outcomes"],
        "exit": last["exit"],
        **({"errors": last["errors"]} if "errors" in last else {}),
        **({"failed_scenarios": last["failed_scenarios"]} if "failed_scenarios" in last else {}),
        "checks_per_round": [s["checks"] for s in samples],
    }


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "cpus": str(os.cpu_count())}
    try:
        out["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out["node"] = "unavailable"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="2025-11-25",
                    help="protocol version, or 'all' (ours: one --version all run; the official runner: one run per version) (default 2025-11-25)")
    ap.add_argument("--rounds", type=int, default=1, help="runs per contender, interleaved (median wall time)")
    ap.add_argument("--skip-official", action="store_true", help="leave out the official runner")
    ap.add_argument("--skip-everything", action="store_true", help="leave out server-everything")
    ap.add_argument("--no-compile", action="store_true", help="do not compile the project's bytecode first")
    ap.add_argument("--json", default=str(ROOT / "reports" / "bench_catalogue.json"))
    ns = ap.parse_args(argv)
    bytecode = "written by Python"
    if sys.dont_write_bytecode:
        bytecode = "not written (PYTHONDONTWRITEBYTECODE), compiled from source in every process"
        if not ns.no_compile:
            for package in ("conformance", "reference_server", "fixtures"):
                compileall.compile_dir(ROOT / package, quiet=1, workers=0)
            bytecode = "compiled before the runs (PYTHONDONTWRITEBYTECODE is set)"
    os.environ.setdefault("MCP_CONFORMANCE_SCHEMA_DIR", str(ROOT.parent / "shared" / "mcp-spec" / "schemas"))
    workdir = Path(tempfile.mkdtemp(prefix="bench-catalogue-"))
    try:
        plan = contenders(ns.version, workdir, official=not ns.skip_official, everything=not ns.skip_everything)
        samples: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(plan))}
        for rnd in range(ns.rounds):
            order = list(range(len(plan))) if rnd % 2 == 0 else list(reversed(range(len(plan))))
            for i in order:
                c = plan[i]
                if c["skip"]:
                    continue
                print(f"round {rnd + 1}/{ns.rounds}: {c['tester']} on {c['server']} ({c['transport']}) ...", file=sys.stderr, flush=True)
                samples[i].append(c["run"]())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rows = []
    for i, c in enumerate(plan):
        row = {k: c[k] for k in ("server", "transport", "tester")}
        if c["skip"]:
            row["skipped"] = c["skip"]
        else:
            row.update(_summarise(samples[i]))
        rows.append(row)
    ratios = {}
    for server in ("reference", "everything"):
        ours = next((r for r in rows if r["server"] == server and r["tester"] == "mcp-conformance"
                     and r["transport"] == "streamable-http" and "wall" in r), None)
        theirs = next((r for r in rows if r["server"] == server and r["tester"] == "official" and "wall" in r), None)
        if ours and theirs:
            ratios[f"{server}/streamable-http"] = {
                "wall_official_over_ours": round(theirs["wall"] / ours["wall"], 2),
                "checks_ours_over_official": round(ours["checks"] / theirs["checks"], 2) if theirs["checks"] else None,
                "checks_per_second_ours_over_official": round(ours["checks_per_second"] / theirs["checks_per_second"], 2)
                if theirs["checks_per_second"] else None,
            }
    result = {"version": ns.version, "rounds": ns.rounds, "machine": _versions(), "bytecode": bytecode,
              "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rows": rows, "ratios": ratios}
    path = Path(ns.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwhole catalogue, protocol version {ns.version} (median of {ns.rounds} round(s)); project bytecode {bytecode}\n")
    head = f"{'server':<11} {'transport':<16} {'tester':<16} {'wall s':>7} {'checks':>7} {'checks/s':>9} {'verdicts':>9}  outcomes"
    print(head)
    print("-" * len(head))
    for r in rows:
        if "skipped" in r:
            print(f"{r['server']:<11} {r['transport']:<16} {r['tester']:<16} skipped: {r['skipped']}")
            continue
        outs = ", ".join(f"{n} {o}" for o, n in sorted(r["outcomes"].items()))
        print(f"{r['server']:<11} {r['transport']:<16} {r['tester']:<16} {r['wall']:7.2f} {r['checks']:7d} "
              f"{r['checks_per_second']:9.1f} {r['verdicts']:9d}  {outs}")
    for name, ratio in ratios.items():
        print(f"{name}: official takes {ratio['wall_official_over_ours']}x our wall time; we make "
              f"{ratio['checks_ours_over_official']}x its checks, {ratio['checks_per_second_ours_over_official']}x per second")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
