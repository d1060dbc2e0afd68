"""benchmarks/bench_report.py runs end to end (no speed is asserted: timed assertions flake)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT


def test_bench_report_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_report.py"), "--results", "200", "--rounds", "1",
                           "--json", str(out), "--quiet"], capture_output=True, text=True, timeout=110, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(out.read_text())
    for case in ("realistic", "worst"):
        c = data["cases"][case]
        assert sum(c["summary"].values()) == 200
        assert {"html", "junit", "markdown", "badge"} <= set(c["formats"])
        assert all(f["bytes"] > 0 and f["median_s"] >= 0 for f in c["formats"].values())
    assert data["cases"]["realistic"]["report_json_bytes"] > 0
