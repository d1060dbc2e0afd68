"""The tasks extension (2026-07-28) end to end through the CLI, one stdio run each: the reference
server passes every tasks.ext.* requirement; a server that does not advertise the extension has
each one skipped with the reason; the requirements cite the draft page of the extension.

(One-requirement defects live in ``fixtures/broken_servers/defects_tasks_ext.py`` and are run by
``tests/broken_servers``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.meta import TASKS_EXTENSION
from conformance.spec.requirements import catalogue

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
VERSION = "2026-07-28"
FLAGGED = {"fail", "warning", "error", "stale"}
EXT = {rid: req for rid, req in catalogue().items() if rid.startswith("tasks.ext.")}
PAGE = "https://github.com/modelcontextprotocol/experimental-ext-tasks/blob/main/docs/specification/draft/tasks.mdx#"


def _run(tmp_path: Path, target: list[str]) -> dict:
    argv = [sys.executable, "-m", "conformance.cli", "server", *target, "--report-dir", str(tmp_path),
            "--report-format", "none", "--timeout", "2", "--version", VERSION, "--select", "tasks.ext.*"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
    report = tmp_path / "report.json"
    assert report.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(report.read_text())


def test_the_requirements_cite_the_extension_draft_for_2026_07_28_only() -> None:
    assert len(EXT) >= 10
    for rid, req in EXT.items():
        assert req.source == "extension" and req.versions == {VERSION}, rid
        assert req.url.startswith(PAGE) and req.url_for(VERSION) == req.url, rid


def test_the_reference_server_passes_every_tasks_ext_requirement(tmp_path: Path) -> None:
    report = _run(tmp_path, ["--transport", "stdio"])
    outcomes = {r["requirement"]: (r["outcome"], r["reason"]) for r in report["results"]}
    assert sorted(outcomes) == sorted(EXT)
    assert {rid: o for rid, o in outcomes.items() if o[0] != "pass"} == {}


def test_a_server_without_the_extension_has_every_requirement_skipped_with_the_reason(tmp_path: Path) -> None:
    cmd = subprocess.list2cmdline([sys.executable, str(HERE / "unadvertised_server.py"), "--transport", "stdio"])
    report = _run(tmp_path, ["--command", cmd, "--transport", "stdio"])
    results = report["results"]
    assert sorted(r["requirement"] for r in results) == sorted(EXT)
    assert all(r["outcome"] == "skip" and TASKS_EXTENSION in r["reason"] for r in results), \
        [(r["requirement"], r["outcome"], r["reason"]) for r in results]
