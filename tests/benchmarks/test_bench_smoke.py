"""benchmarks/bench_roundtrip.py runs end to end and writes a well-formed report.

Nothing here looks at speed (timed assertions flake on shared machines): only that every client
ran on every transport and method, checked its answers, and that the validating peer really
validated.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_roundtrip.py"
CLIENTS = ["bare-sync", "bare-async", "transport", "peer", "peer+validate"]


def test_bench_roundtrip_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--seconds", "0.03", "--rounds", "2", "--warmup", "0.01", "--json", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["config"]["rounds"] == 2
    assert report["clients"] == CLIENTS
    seen = {(r["transport"], r["method"]) for r in report["results"]}
    assert seen == {(t, m) for t in ("stdio", "streamable-http") for m in ("tools/call", "ping")}
    for res in report["results"]:
        assert list(res["rows"]) == CLIENTS
        for name, row in res["rows"].items():
            where = f"{res['transport']} {res['method']} {name}"
            assert len(row["samples"]) == 2, where
            assert all(s > 0 for s in row["samples"]), where
            assert row["min"] <= row["median"] <= row["max"], where
            assert row["round_trips"] > 0 and row["answers_checked"] >= row["round_trips"], where
            assert row["wrong_answers"] == 0, where
            assert row["cpu_us_per_round_trip"] > 0, where
        assert res["rows"]["peer+validate"]["validated_without_findings"] >= res["rows"]["peer+validate"]["round_trips"]
        head = res["headline"]
        assert head["ratio_of_medians"] > 0 and head["cpu_ratio"] > 0 and len(head["round_ratios"]) == 2
        assert res["ratios_of_medians"]["bare-async / peer+validate"] == head["ratio_of_medians"]
    assert "headline" in proc.stdout and str(out) in proc.stdout
