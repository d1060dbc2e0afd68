"""The pytest surface: --mcp-fuzz adds one item per target and version; a finding fails it with
the requirement, the sentence and the reproducer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "fixtures" / "broken_servers" / "serve.py"


def run(tmp_path: Path, command: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--mcp-server-command", command, "--mcp-fuzz",
         "-m", "mcp_fuzz", "--mcp-fuzz-max-messages", "800", "--mcp-report-dir", str(tmp_path), "-q", *extra],
        capture_output=True, text=True, timeout=240, cwd=tmp_path)


def _reproducers(tmp_path: Path) -> list[dict]:
    import json

    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "fuzz").rglob("reproducers/*.json"))]


def test_one_item_per_version_passing_on_the_reference_server(tmp_path) -> None:
    out = run(tmp_path, "mcp-reference-server", "--mcp-version", "2025-06-18,2026-07-28")
    assert out.returncode == 0, out.stdout[-3000:]
    assert "2 passed" in out.stdout
    assert (tmp_path / "fuzz" / "2026-07-28" / "report.json").is_file()


def test_a_finding_fails_the_item_with_its_reproducer(tmp_path) -> None:
    """(--mcp-fuzz-no-shrink: the findings saved as found, only the three stability replays.)"""
    out = run(tmp_path, f"{sys.executable} {SERVE} parse-error-silent", "--mcp-fuzz-no-shrink")
    assert out.returncode == 1, out.stdout[-3000:]
    assert "mcp_fuzz[2025-11-25-stdio]" in out.stdout and "jsonrpc.error.parse-error [MUST] NoParseErrorResponse" in out.stdout
    assert "reproducer: " in out.stdout and "Invalid JSON was received by the server" in out.stdout
    repros = _reproducers(tmp_path)
    assert repros and all(r["shrink"]["replays"] == 3 and not r["shrink"]["shrunk"] for r in repros), [r["shrink"] for r in repros]


def test_the_shrink_budget_bounds_the_minimising(tmp_path) -> None:
    """--mcp-fuzz-shrink-budget: candidates are tried (more replays than the check that the frame
    reproduces alone plus the three stability replays)."""
    out = run(tmp_path, f"{sys.executable} {SERVE} parse-error-silent", "--mcp-fuzz-shrink-budget", "1s")
    assert out.returncode == 1, out.stdout[-3000:]
    stats = [r["shrink"] for r in _reproducers(tmp_path)]
    assert stats and any(s["replays"] > 4 for s in stats), stats


def test_a_malformed_fuzz_duration_is_a_usage_error_naming_the_option(tmp_path) -> None:
    for option in ("--mcp-fuzz-shrink-budget", "--mcp-fuzz-budget"):
        out = run(tmp_path, "mcp-reference-server", option, "soon")
        assert out.returncode == 4, out.stdout[-2000:] + out.stderr[-2000:]
        assert f"{option} 'soon': expected a duration" in out.stderr, out.stderr[-2000:]
        assert not (tmp_path / "fuzz").exists()
