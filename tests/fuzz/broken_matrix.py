"""Which envelope / error-code defects of fixtures/broken_servers/ fuzzing alone finds (no scenarios).

Used by tests/fuzz/test_broken_servers.py and runnable by hand:
    python tests/fuzz/broken_matrix.py [--messages N]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "fixtures" / "broken_servers" / "serve.py"

# (defect, requirement it breaks, version): the envelope and error-code defects, run over stdio
ENVELOPE_DEFECTS = [
    ("parse-error-silent", "jsonrpc.error.parse-error", "2025-11-25"),
    ("unknown-method-invalid-request", "jsonrpc.error.method-not-found", "2025-11-25"),
    ("jsonrpc-version-unchecked", "jsonrpc.error.invalid-request", "2025-06-18"),
    ("result-and-error", "jsonrpc.response.result-xor-error", "2024-11-05"),
    ("error-without-message", "basic.response.error-field", "2026-07-28"),
    ("error-code-string", "basic.error.code-integer", "2025-06-18"),
    ("error-id-dropped", "basic.response.error-id-echo", "2025-11-25"),
    ("numeric-string-id-as-integer", "basic.response.result-id-echo", "2025-11-25"),
    ("large-id-truncated", "basic.response.id-echo", "2025-03-26"),
    ("invalid-params-internal-error", "jsonrpc.error.invalid-params", "2025-11-25"),
    ("batch-served-2026", "batching.rejected-stateless", "2026-07-28"),
    ("batch-served", "batching.rejected", "2025-11-25"),
    ("batch-refused", "batching.receive", "2025-03-26"),
    ("ping-answers-error", "ping.response", "2025-11-25"),
    ("stdio-stdout-log-line", "transport.stdio.stdout-only-messages", "2025-11-25"),
]


def run(defect: str, version: str, messages: int = 3000, seed: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "conformance.cli", "fuzz", "--command", f"{sys.executable} {SERVE} {defect}",
               "--version", version, "--max-messages", str(messages), "--seed", str(seed), "--report-dir", tmp,
               "--no-hypothesis", "--no-shrink", "-q"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
        try:
            report = json.loads((Path(tmp) / "report.json").read_text())
        except OSError:
            raise AssertionError(f"no report for {defect}: rc={proc.returncode}\n{proc.stderr[-2000:]}") from None
    found = sorted({f["requirement"] for c in report["fuzz"]["campaigns"] for f in c["findings"]})
    return {"rc": proc.returncode, "found": found, "findings": [f for c in report["fuzz"]["campaigns"] for f in c["findings"]]}


if __name__ == "__main__":
    n = int(sys.argv[sys.argv.index("--messages") + 1]) if "--messages" in sys.argv else 3000
    for defect, req, version in ENVELOPE_DEFECTS:
        got = run(defect, version, n)
        mark = "FOUND " if req in got["found"] else "missed"
        others = [r for r in got["found"] if r != req]
        print(f"{mark} {defect:32} {req:40} {version}  rc={got['rc']}  other findings: {others}")
        for f in got["findings"]:
            if f["requirement"] != req:
                print(f"         other: {f['requirement']} {f['problem']} x{f['count']}: {f['message'][:150]}")
