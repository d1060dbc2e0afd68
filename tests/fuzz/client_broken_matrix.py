"""Which faults of fixtures/broken_clients/ fuzzing a client finds on its own (no scenarios), and
with which requirement.  Runnable by hand (tests/fuzz/test_client_campaign.py checks one end to end):

    python tests/fuzz/client_broken_matrix.py [--messages 3000] [--only NAME,...] [--transport stdio]

Every fault is run with the version (the newest it acts on that the client direction fuzzes, i.e.
up to 2025-11-25) and transport (stdio when it acts there) of fixtures/broken_clients/defects.py.
"FOUND" means a finding cites the fault's requirement; other findings are listed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.broken_clients.defects import DEFECTS  # noqa: E402

FUZZABLE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
COMMANDS = {"stdio": "mcp-reference-client --stdio {server}", "streamable-http": "mcp-reference-client --url {url}",
            "sse": "mcp-reference-client --sse-url {url}"}


def run(name: str, version: str, transport: str, messages: int = 3000, seed: int = 0, shrink: bool = False) -> dict:
    d = DEFECTS[name]
    cmd = f"{COMMANDS[transport]} --fault {name}" + ("" if not d.dual else "")
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "conformance.cli", "fuzz", "--client-command", cmd, "--transport", transport,
                "--version", version, "--max-messages", str(messages), "--seed", str(seed), "--report-dir", tmp, "-q"]
        if not shrink:
            argv.append("--no-shrink")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=ROOT)
        try:
            report = json.loads((Path(tmp) / "report.json").read_text())
        except OSError:
            return {"rc": proc.returncode, "found": [], "findings": [], "error": proc.stderr[-500:]}
    findings = [f for c in report["fuzz"]["campaigns"] for f in c["findings"]]
    return {"rc": proc.returncode, "found": sorted({f["requirement"] for f in findings}), "findings": findings,
            "error": "; ".join(e["message"] for e in report.get("errors", []))}


def plan(transport_wanted: str | None = None) -> list[tuple[str, str, str]]:
    out = []
    for name, d in DEFECTS.items():
        versions = [v for v in d.versions if v in FUZZABLE]
        if not versions:
            continue
        transports = list(d.transports)
        t = transport_wanted if transport_wanted in transports else ("stdio" if "stdio" in transports else transports[0])
        out.append((name, versions[-1], t))
    return out


if __name__ == "__main__":
    n = int(sys.argv[sys.argv.index("--messages") + 1]) if "--messages" in sys.argv else 3000
    only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else None
    tw = sys.argv[sys.argv.index("--transport") + 1] if "--transport" in sys.argv else None
    for name, version, transport in plan(tw):
        if only and name not in only:
            continue
        req = DEFECTS[name].requirement
        got = run(name, version, transport, n)
        mark = "FOUND " if req in got["found"] else "missed"
        others = [r for r in got["found"] if r != req]
        print(f"{mark} {name:36} {req:48} {version} {transport:15} rc={got['rc']} other: {others} {got['error'][:120]}", flush=True)
