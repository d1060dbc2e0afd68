"""The base-protocol scenarios end to end, through the CLI: the reference server comes out clean
on every transport, and a minimal server without long-running tools (the tiny server, from the
session's real-peer runs) gets reasoned skips, not failures.  (One-requirement defects live in
fixtures/broken_servers/defects_basic.py and are run by tests/broken_servers.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.requirements import catalogue
from conformance.spec.versions import VERSIONS
from integration import peer_verdicts as pv

ROOT = Path(__file__).resolve().parents[3]
AREAS = ("jsonrpc.*", "basic.response.*", "basic.error.*", "basic.notifications.*", "lifecycle.*", "ping.*",
         "cancellation.*", "progress.*", "batching.*")
FLAGGED = {"fail", "warning", "error", "stale"}
MINE = ("jsonrpc", "basic.response", "basic.error", "lifecycle", "ping", "cancellation", "progress", "batching")


def _run(tmp_path: Path, target: list[str], versions: list[str], *, timeout: float = 3.0) -> dict:
    argv = [sys.executable, "-m", "conformance.cli", "server", *target, "--report-dir", str(tmp_path), "--timeout", str(timeout)]
    for v in versions:
        argv += ["--version", v]
    for glob in AREAS:
        argv += ["--select", glob]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    report = tmp_path / "report.json"
    assert report.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(report.read_text())


def test_the_reference_server_passes_every_base_requirement_on_stdio(tmp_path: Path) -> None:
    report = _run(tmp_path, [], list(VERSIONS))
    bad = [(r["requirement"], r["version"], r["outcome"], r["reason"]) for r in report["results"] if r["outcome"] in FLAGGED]
    assert bad == []
    passed = {r["requirement"] for r in report["results"] if r["outcome"] == "pass"}
    stdio_reqs = {
        rid for rid, req in catalogue().items()
        if rid.startswith(MINE) and any(req.applies_to(v, "stdio") for v in VERSIONS)
    }
    # every base requirement that applies to stdio is exercised (none only skipped) against the reference server
    assert stdio_reqs - passed == set()


@pytest.mark.parametrize(("transport", "versions"), [("streamable-http", ["2025-03-26", "2026-07-28"]), ("sse", ["2024-11-05", "2025-11-25"])])
def test_the_reference_server_passes_every_base_requirement_over_http(tmp_path: Path, transport: str, versions: list[str]) -> None:
    report = _run(tmp_path, ["--transport", transport], versions)
    bad = [(r["requirement"], r["version"], r["outcome"], r["reason"]) for r in report["results"] if r["outcome"] in FLAGGED]
    assert bad == []
    assert any(r["outcome"] == "pass" and r["requirement"].startswith("batching.") for r in report["results"])


@pytest.mark.integration
@pytest.mark.timeout(pv.RUN_DEADLINE + 120)
def test_a_server_without_long_running_tools_gets_reasoned_skips(real_peer_runs: pv.Runs) -> None:
    """A view over the session's run of the tiny server on stdio (``real_peer_runs``)."""
    run = real_peer_runs.get("tiny", "stdio")
    assert run.report is not None, run.problem
    outcomes = {r["requirement"]: (r["outcome"], r["reason"] or "") for r in run.report["results"]
                if r["version"] == "2025-06-18" and r["requirement"].startswith(MINE)}
    assert [rid for rid, (o, _) in outcomes.items() if o in FLAGGED] == []
    for rid in ("cancellation.no-response", "lifecycle.timeouts.handled", "progress.token", "progress.increasing"):
        outcome, reason = outcomes[rid]
        assert outcome == "skip" and "no tool looks" in reason, (rid, outcome, reason)
    # the rest of the base protocol is judged all the same
    assert outcomes["cancellation.race"][0] == outcomes["jsonrpc.error.invalid-request"][0] == "pass"
