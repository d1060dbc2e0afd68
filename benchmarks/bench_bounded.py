"""Bounded runs against misbehaving servers: wall time of a whole CLI run against each defect of
``fixtures/broken_servers/defects_bounded.py`` (and a silent ``sleep``), next to its bound.

The bound is the issue's: 2 x --timeout x the number of versions run (a run that waits the timeout
once per version, and once more).  The ratio printed is wall / bound (below 1: within the bound).
Each defect runs through the public CLI exactly as ``tests/broken_servers`` runs it; the report
lands in reports/bench_bounded.json.

    .venv/bin/python benchmarks/bench_bounded.py [--timeout 2] [--all-versions]

``--all-versions`` runs every defect with ``--version all`` (the five versions) instead of the
versions it is registered for.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "fixtures" / "broken_servers"
sys.path.insert(0, str(BROKEN))
sys.path.insert(0, str(ROOT))

import defects  # noqa: E402

from conformance.spec.versions import VERSIONS  # noqa: E402

NAMES = ("initialize-slow", "initialize-slow-http", "stdio-pretty-after-initialize", "http-session-never-issued",
         "ping-before-initialize-error", "progress-foreign-token", "exit-on-unknown-method")


def _target(d: defects.Defect) -> list[str]:
    serve = [sys.executable, str(BROKEN / "serve.py"), d.name, "--transport", d.transport]
    if d.transport == "stdio":
        return ["--command", subprocess.list2cmdline(serve), "--transport", "stdio"]
    path = "/sse" if d.transport == "sse" else "/mcp"
    return ["--command", subprocess.list2cmdline([*serve, "--port", "{port}"]),
            "--url", f"http://127.0.0.1:{{port}}{path}", "--transport", d.transport]


def run(name: str, target: list[str], versions: list[str], timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as out:
        argv = [sys.executable, "-m", "conformance.cli", "server", *target, "--report-dir", out,
                "--report-format", "none", "--timeout", str(timeout)]
        for v in versions:
            argv += ["--version", v]
        started = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=900)
        wall = time.monotonic() - started
        report = json.loads((Path(out) / "report.json").read_text())
    bound = 2 * timeout * len(versions)
    flagged = sorted({f"{r['requirement']}={r['outcome']}" for r in report["results"] if r["outcome"] in ("fail", "warning", "error")})
    return {"name": name, "versions": len(versions), "exit": proc.returncode, "wall": round(wall, 2),
            "bound": bound, "ratio": round(wall / bound, 3), "flagged": flagged}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--all-versions", action="store_true")
    args = ap.parse_args()
    rows = []
    for name in NAMES:
        d = defects.get(name)
        versions = list(VERSIONS) if args.all_versions else list(d.versions)
        rows.append(run(name, _target(d), versions, args.timeout))
    rows.append(run("sleep-600 (never answers)", ["--command", "sleep 600"], list(VERSIONS), args.timeout))
    width = max(len(r["name"]) for r in rows)
    print(f"{'server':{width}}  versions  exit   wall  bound  wall/bound  flagged")
    for r in rows:
        print(f"{r['name']:{width}}  {r['versions']:8}  {r['exit']:4}  {r['wall']:5.1f}  {r['bound']:5.0f}  {r['ratio']:10.2f}  "
              f"{', '.join(r['flagged'])}")
    out = ROOT / "reports" / "bench_bounded.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"timeout": args.timeout, "all_versions": args.all_versions, "runs": rows}, indent=2) + "\n")
    print(f"report: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
