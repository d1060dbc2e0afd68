"""N consecutive CLI runs against one target; every run must give the same verdicts.

Run through ``scripts/flake-check`` (which sets up .venv and the schema directory)::

    scripts/flake-check [N] [--transport T ...] [--version V ...] [--keep DIR] [--role client] [-- CLI ARGS...]

Each run is ``mcp-conformance server`` (default: the bundled reference server, every version, on
stdio) writing its own report.json.  A verdict is (requirement, version, transport) -> outcome;
runs are compared per transport with the first run of that transport.  Prints every difference
(which runs said what), the outcomes counted, and the spread of wall times; writes
``reports/flake_check.json``.  Exit status: 0 identical verdicts in every run, 1 a difference (or
a run that wrote no report), 2 usage.  Arguments after ``--`` go to every CLI run (another
target: ``-- --command "python my_server.py"``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 900.0  # seconds per CLI run: a run that hangs is a finding too

Verdicts = dict[tuple[str, str, str], str]


def _run(index: int, transport: str, versions: list[str], extra: list[str], out: Path, role: str = "server") -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "conformance.cli", role, "--transport", transport,
            "--report-dir", str(out), "--report-format", "none", "-q", *extra]
    for v in versions:
        argv += ["--version", v]
    started = time.monotonic()
    try:
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        code: int | None = proc.returncode
        tail = (proc.stdout[-1500:] + proc.stderr[-1500:]).strip()
    except subprocess.TimeoutExpired as exc:
        code, tail = None, f"did not finish within {RUN_TIMEOUT:g} s: {exc}"
    wall = time.monotonic() - started
    report_path = out / "report.json"
    if code is None or not report_path.exists():
        return {"run": index, "transport": transport, "wall": wall, "exit": code, "error": tail or "no report.json"}
    report = json.loads(report_path.read_text(encoding="utf-8"))
    report_path.unlink()  # the next run of this transport writes its own
    verdicts = {(r["requirement"], r["version"], r["transport"]): r["outcome"] for r in report["results"]}
    return {
        "run": index, "transport": transport, "wall": wall, "exit": code, "verdicts": verdicts,
        "counts": dict(Counter(verdicts.values())), "errors": len(report.get("errors") or []),
    }


def _differences(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every verdict on which the runs of one transport disagree: which runs said what."""
    out = []
    usable = [r for r in runs if "verdicts" in r]
    keys = sorted({k for r in usable for k in r["verdicts"]})
    for key in keys:
        said: dict[str, list[int]] = {}
        for r in usable:
            said.setdefault(r["verdicts"].get(key, "<absent>"), []).append(r["run"])
        if len(said) > 1:
            out.append({"requirement": key[0], "version": key[1], "transport": key[2], "outcomes": said})
    return out


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, extra = args[:cut], args[cut + 1:]
    ap = argparse.ArgumentParser(prog="scripts/flake-check", description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=20, help="runs per transport (default 20)")
    ap.add_argument("--transport", action="append", choices=("stdio", "streamable-http", "sse"),
                    help="transport to check, repeatable (default stdio)")
    ap.add_argument("--version", action="append", help="protocol version(s), repeatable (default all)")
    ap.add_argument("--keep", metavar="DIR", help="keep every run's report.json under DIR")
    ap.add_argument("--role", choices=("server", "client"), default="server",
                    help="server (default) or client: `mcp-conformance client`; give the client with "
                         "-- --command \"mcp-reference-client --stdio {server}\"")
    ap.add_argument("--json", default=str(ROOT / "reports" / "flake_check.json"), help="summary file")
    ns = ap.parse_args(args)
    if ns.n < 2:
        ap.error("N must be at least 2 (runs are compared with each other)")
    transports = ns.transport or ["stdio"]
    versions = ns.version or ["all"]
    workdir = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix="flake-check-"))
    results: dict[str, list[dict[str, Any]]] = {}
    for transport in transports:
        runs = results.setdefault(transport, [])
        for i in range(1, ns.n + 1):
            out = workdir / transport / f"run-{i:03d}"
            r = _run(i, transport, versions, extra, out, ns.role)
            runs.append(r)
            if ns.keep and "verdicts" in r:
                (out / "verdicts.json").write_text(json.dumps(
                    [{"requirement": k[0], "version": k[1], "transport": k[2], "outcome": v} for k, v in sorted(r["verdicts"].items())],
                    indent=1) + "\n", encoding="utf-8")
            state = r.get("error") and "NO REPORT" or " ".join(f"{n} {o}" for o, n in sorted(r["counts"].items()))
            print(f"{transport:15} run {i:3d}/{ns.n}: {r['wall']:6.2f} s  exit {r['exit']}  {state}", flush=True)
    summary: dict[str, Any] = {"n": ns.n, "role": ns.role, "versions": versions, "cli_args": extra, "transports": {}}
    failed = False
    print()
    for transport, runs in results.items():
        broken = [r for r in runs if "error" in r]
        diffs = _differences(runs)
        exits = sorted({r["exit"] for r in runs}, key=str)
        walls = [r["wall"] for r in runs if "error" not in r]
        spread = _spread(walls)
        verdicts = len(runs[0]["verdicts"]) if "verdicts" in runs[0] else 0
        ok = not broken and not diffs and len(exits) == 1
        failed |= not ok
        summary["transports"][transport] = {
            "runs": len(runs), "verdicts_per_run": verdicts, "identical": ok, "differences": diffs,
            "runs_without_report": [{"run": r["run"], "exit": r["exit"], "why": r["error"]} for r in broken],
            "exit_codes": exits, "wall": spread, "walls": walls,
            "outcomes": runs[0].get("counts", {}),
        }
        head = "IDENTICAL" if ok else "DIFFERENT"
        print(f"{transport}: {head} -- {len(runs)} runs x {verdicts} verdicts; exit codes {exits}; "
              f"outcomes {runs[0].get('counts', {})}")
        if spread:
            print(f"  wall time: min {spread['min']:.2f} s, median {spread['median']:.2f} s, max {spread['max']:.2f} s, "
                  f"stdev {spread['stdev']:.2f} s")
        for r in broken:
            print(f"  run {r['run']}: no report (exit {r['exit']}): {r['error'][-600:]}")
        for d in diffs:
            said = "; ".join(f"{o} in runs {','.join(map(str, rs))}" for o, rs in d["outcomes"].items())
            print(f"  {d['requirement']} [{d['version']}, {d['transport']}]: {said}")
    path = Path(ns.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"summary: {path}" + (f"; reports kept in {workdir}" if ns.keep else ""))
    if not ns.keep:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
