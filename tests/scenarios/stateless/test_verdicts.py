"""The 2026-07-28 scenarios end to end, through the CLI: the reference server comes out clean and
exercises every requirement of the area (dual-era, and modern-only for the initialize rule); a
legacy-only server is skipped as one that does not support 2026-07-28, never failed.

(One-requirement defects of the area live in ``fixtures/broken_servers/defects_stateless.py`` and
are run by ``tests/broken_servers``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.requirements import catalogue
from conformance.spec.versions import Transport

ROOT = Path(__file__).resolve().parents[3]
V = "2026-07-28"
AREAS = ("discover", "versioning", "stateless", "mrtr", "subscriptions", "headers")
SELECT = [f"{a}.*" for a in AREAS]
FLAGGED = {"fail", "warning", "error", "stale"}
REFERENCE = [sys.executable, "-m", "reference_server"]


def _run(tmp_path: Path, target: list[str], *, transport: str, select: list[str] = SELECT, timeout: float = 3.0) -> dict:
    argv = [sys.executable, "-m", "conformance.cli", "server", *target, "--transport", transport,
            "--version", V, "--report-dir", str(tmp_path), "--timeout", str(timeout)]
    for glob in select:
        argv += ["--select", glob]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    report = tmp_path / "report.json"
    assert report.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(report.read_text())


def _http_target(args: list[str]) -> list[str]:
    cmd = subprocess.list2cmdline([*args, "--transport", "streamable-http", "--port", "{port}"])
    return ["--command", cmd, "--url", "http://127.0.0.1:{port}/mcp"]


def _ours(transport: str) -> set[str]:
    return {r.id for r in catalogue().values() if r.role == "server" and r.area in AREAS and r.applies_to(V, transport)}


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_the_reference_server_is_clean_and_exercises_every_requirement(tmp_path: Path, transport: str) -> None:
    target = [] if transport == "stdio" else _http_target(REFERENCE)
    report = _run(tmp_path, target, transport=transport)
    outcomes = {r["requirement"]: r["outcome"] for r in report["results"]}
    assert {rid: o for rid, o in outcomes.items() if o in FLAGGED} == {}, report.get("errors")
    passed = {rid for rid, o in outcomes.items() if o == "pass"}
    # the reference server is dual-era, so the modern-only rule does not apply to it
    assert passed == _ours(transport) - {"versioning.modern-only.initialize-names-versions"}


def test_a_modern_only_reference_server_names_its_versions_to_legacy_clients(tmp_path: Path) -> None:
    cmd = subprocess.list2cmdline([*REFERENCE, "--versions", V])
    report = _run(tmp_path, ["--command", cmd], transport="stdio", select=["versioning.*", "discover.*"])
    outcomes = {r["requirement"]: r["outcome"] for r in report["results"]}
    assert outcomes == {rid: "pass" for rid in _ours("stdio") if rid.startswith(("versioning.", "discover."))}


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_a_legacy_only_server_is_skipped_as_not_supporting_2026(tmp_path: Path, transport: str) -> None:
    args = [*REFERENCE, "--versions", "2025-11-25"]
    target = ["--command", subprocess.list2cmdline(args)] if transport == "stdio" else _http_target(args)
    report = _run(tmp_path, target, transport=transport)
    results = [r for r in report["results"] if Transport(transport) in catalogue()[r["requirement"]].transports]
    assert results and all(r["outcome"] == "skip" for r in results)
    reasons = {r["reason"].split(":")[0] for r in results if "not applicable" not in r["reason"] and "applies to" not in r["reason"]}
    assert reasons == {f"target does not support {V}"}
