"""The feature scenarios end to end, through the CLI: the reference server comes out clean, and
defects that rightly violate two requirements at once are flagged on exactly those two.

(One-requirement defects of these areas live in ``fixtures/broken_servers/defects_features.py``
and are run by ``tests/broken_servers``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.outcomes import Level
from conformance.spec.requirements import catalogue
from conformance.spec.versions import VERSIONS

from .compound_server import COMPOUND

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
AREAS = ("tools", "resources", "prompts", "logging", "completion", "pagination", "caching")
FLAGGED = {"fail", "warning", "error", "stale"}


def _run(tmp_path: Path, target: list[str], versions: list[str], *, select: list[str], timeout: float = 3.0) -> dict:
    argv = [sys.executable, "-m", "conformance.cli", "server", *target, "--report-dir", str(tmp_path), "--timeout", str(timeout)]
    for v in versions:
        argv += ["--version", v]
    for glob in select:
        argv += ["--select", glob]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    report = tmp_path / "report.json"
    assert report.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(report.read_text())


def test_the_reference_server_passes_every_feature_requirement_on_stdio(tmp_path: Path) -> None:
    report = _run(tmp_path, [], list(VERSIONS), select=[f"{a}.*" for a in AREAS])
    bad = [(r["requirement"], r["version"], r["outcome"], r["reason"]) for r in report["results"] if r["outcome"] in FLAGGED]
    assert bad == []
    passed = {r["requirement"].split(".", 1)[0] for r in report["results"] if r["outcome"] == "pass"}
    assert passed == set(AREAS)
    # every version exercised something of every area that exists in it
    for version in VERSIONS:
        areas = {r["requirement"].split(".", 1)[0] for r in report["results"] if r["outcome"] == "pass" and r["version"] == version}
        assert areas >= {"tools", "resources", "prompts", "logging", "completion", "pagination"}, version
    assert {r["version"] for r in report["results"] if r["requirement"].startswith("caching.") and r["outcome"] == "pass"} == {"2026-07-28"}


@pytest.mark.parametrize("name", sorted(COMPOUND))
def test_a_compound_defect_is_flagged_on_exactly_its_requirements(tmp_path: Path, name: str) -> None:
    _, versions, expected = COMPOUND[name]
    cmd = subprocess.list2cmdline([sys.executable, str(HERE / "compound_server.py"), name, "--transport", "stdio"])
    # the feature areas and the schema rule: nothing else of these may be flagged
    report = _run(tmp_path, ["--command", cmd, "--transport", "stdio"], list(versions), select=[*(f"{a}.*" for a in AREAS), "basic.schema.*"])
    reqs = catalogue()
    want = sorted((rid, "fail" if reqs[rid].level is Level.MUST else "warning") for rid in expected)
    got = sorted({(r["requirement"], r["outcome"]) for r in report["results"] if r["outcome"] in FLAGGED})
    assert got == want, report.get("errors")
