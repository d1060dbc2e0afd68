"""Bounded runs against misbehaving servers: wall time of a whole CLI run against each defect of
``fixtures/broken_servers/defects_bounded.py`` (and a silent ``sleep``), next to its bound.

Two bounds: the issue's, 2 x --timeout x the number of versions run (a run that waits the timeout
once per version, and once more), and the README's ("Bounded runs": the default --run-timeout, 60 +
timeout x (2 x versions + items run / 4), items counted from the CLI's summary line).  The ratios
printed are wall / bound (below 1: within the bound).  ``errors`` counts the report's ``error``
results (the suite's own trouble: a silent server must never cause one).  The slow servers
(``initialize-2x-timeout*``, ``first-post-slow-*``) answer after twice --timeout
(``MCP_BROKEN_SLOW_SECONDS``; on stdio twice the first answer's deadline, max(5, --timeout)).
Each defect runs through the public CLI exactly as ``tests/broken_servers`` runs it; the report
lands in reports/bench_bounded.json.

    .venv/bin/python benchmarks/bench_bounded.py [--timeout 2] [--all-versions] [--only NAME ...] [--auth]

``--all-versions`` runs every defect with ``--version all`` (the five versions) instead of the
versions it is registered for.  ``--auth`` runs the authorization cases instead (issue 25,
"Bounded"; 2025-11-25, streamable HTTP): clients that stop in the middle of the OAuth flow
(``fixtures/broken_clients/stalling_oauth_client.py``: after the 401, after the metadata, before
/token) and ``sleep 600`` under ``mcp-conformance client --auth`` (the requirements of
``authorization.auth_flow``), and resource servers whose protected resource metadata is never
answered or answered with headers and then nothing (``--auth --select 'auth.server.prm.*'``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
         "ping-before-initialize-error", "progress-foreign-token", "exit-on-unknown-method",
         # silence in every form (issue 23): stdio, streamable HTTP, legacy SSE
         "initialize-2x-timeout", "initialize-2x-timeout-http", "initialize-2x-timeout-sse",
         "first-post-slow-http", "first-post-slow-sse", "http-never-writes", "sse-never-writes",
         "http-headers-then-nothing", "sse-headers-then-nothing", "initialized-notification-held-http",
         "initialized-notification-held-sse")
SLEEP = "sleep-600 (never answers)"
STALLING = ROOT / "fixtures" / "broken_clients" / "stalling_oauth_client.py"
FLOW = ("parse-challenge", "prm-from-header", "pkce", "pkce-s256", "resource-both", "resource-canonical",
        "bearer-every-request", "no-token-in-query", "own-as-tokens", "redirect-uri-form", "redirect-uri-registered",
        "dcr-application-type")


def _auth_runs() -> dict[str, list[str]]:
    """The authorization cases: name -> the CLI arguments (role first)."""
    def client(command: str) -> list[str]:
        return ["client", "--command", command, "--transport", "streamable-http", "--auth",
                *[a for rid in FLOW for a in ("--select", f"client.auth.{rid}")]]

    def server(name: str) -> list[str]:
        return ["server", *_target(defects.get(name)), "--auth", "--select", "auth.server.prm.*"]

    stalling = f"{subprocess.list2cmdline([sys.executable, str(STALLING)])} {{stage}} {{{{url}}}}"
    return {**{f"client-stalls-{stage}": client(stalling.format(stage=stage))
               for stage in ("after-challenge", "after-metadata", "before-token")},
            "client-sleep-600": client("sleep 600 # {url}"),
            "server-auth-prm-never-answers": server("auth-prm-never-answers"),
            "server-auth-prm-headers-then-nothing": server("auth-prm-headers-then-nothing")}


def _target(d: defects.Defect) -> list[str]:
    serve = [sys.executable, str(BROKEN / "serve.py"), d.name, "--transport", d.transport]
    if d.transport == "stdio":
        return ["--command", subprocess.list2cmdline(serve), "--transport", "stdio"]
    path = "/sse" if d.transport == "sse" else "/mcp"
    return ["--command", subprocess.list2cmdline([*serve, "--port", "{port}"]),
            "--url", f"http://127.0.0.1:{{port}}{path}", "--transport", d.transport]


def run(name: str, target: list[str], versions: list[str], timeout: float, slow: float | None = None) -> dict:
    role = [] if target[0] in ("server", "client") else ["server"]
    with tempfile.TemporaryDirectory() as out:
        argv = [sys.executable, "-m", "conformance.cli", *role, *target, "--report-dir", out,
                "--report-format", "none", "--timeout", str(timeout)]
        for v in versions:
            argv += ["--version", v]
        env = {**os.environ, "MCP_BROKEN_SLOW_SECONDS": str(slow or 2 * timeout)}
        started = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=3600, env=env)
        wall = time.monotonic() - started
        report = json.loads((Path(out) / "report.json").read_text())
    bound = 2 * timeout * len(versions)
    summary = [line for line in proc.stdout.splitlines() if re.search(r" in [0-9.]+s", line)]
    items = sum(int(n) for n in re.findall(r"(\d+) (?:passed|failed|skipped|errors?|xfailed|xpassed)", summary[-1])) if summary else 0
    readme = 60 + timeout * (2 * len(versions) + items / 4)
    results = report["results"]
    flagged = sorted({f"{r['requirement']}={r['outcome']}" for r in results if r["outcome"] in ("fail", "warning", "error")})
    return {"name": name, "versions": len(versions), "exit": proc.returncode, "wall": round(wall, 2),
            "bound": bound, "ratio": round(wall / bound, 3), "items": items, "readme_bound": round(readme, 1),
            "readme_ratio": round(wall / readme, 3), "errors": sum(r["outcome"] == "error" for r in results),
            "skips": sum(r["outcome"] == "skip" for r in results), "flagged": flagged}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--all-versions", action="store_true")
    ap.add_argument("--only", nargs="+", metavar="NAME", help=f"run only these (defect names, or {SLEEP!r})")
    ap.add_argument("--auth", action="store_true", help="the authorization cases (see above)")
    args = ap.parse_args()
    rows = []
    auth = _auth_runs() if args.auth else {}
    for name in args.only or (list(auth) if args.auth else [*NAMES, SLEEP]):
        if name in auth:
            rows.append(run(name, auth[name], ["2025-11-25"], args.timeout))
            print(rows[-1], flush=True)
            continue
        if name == SLEEP:
            rows.append(run(SLEEP, ["--command", "sleep 600"], list(VERSIONS), args.timeout))
            continue
        d = defects.get(name)
        versions = list(VERSIONS) if args.all_versions else list(d.versions)
        # twice the deadline of the first answer: on stdio the start-up allowance, max(5, timeout)
        slow = 2 * (max(5.0, args.timeout) if d.transport == "stdio" else args.timeout)
        rows.append(run(name, _target(d), versions, args.timeout, slow))
        print(rows[-1], flush=True)
    width = max(len(r["name"]) for r in rows)
    print(f"{'server':{width}}  versions  exit   wall  bound  wall/bound  items  README bound  wall/README  errors  flagged")
    for r in rows:
        print(f"{r['name']:{width}}  {r['versions']:8}  {r['exit']:4}  {r['wall']:5.1f}  {r['bound']:5.0f}  {r['ratio']:10.2f}  "
              f"{r['items']:5}  {r['readme_bound']:12.0f}  {r['readme_ratio']:11.2f}  {r['errors']:6}  {', '.join(r['flagged'])}")
    out = Path(os.environ.get("BENCH_BOUNDED_OUT") or ROOT / "reports" / "bench_bounded.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"timeout": args.timeout, "all_versions": args.all_versions, "runs": rows}, indent=2) + "\n")
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
