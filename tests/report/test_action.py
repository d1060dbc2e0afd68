"""action.yml: well-formed, every input it reads is declared, and its scripts work for real."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from .conftest import ROOT, broken_target

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def _step(name: str) -> dict:
    return next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)


def test_composite_action_is_well_formed() -> None:
    assert ACTION["runs"]["using"] == "composite"
    text = (ROOT / "action.yml").read_text()
    used = set(re.findall(r"inputs\.([a-z-]+)", text))
    assert used <= set(ACTION["inputs"]), used - set(ACTION["inputs"])
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], f"{step['name']}: inputs reach scripts through env, never inline"
    assert {"exit-code", "report-dir", "badge"} <= set(ACTION["outputs"])


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    full = {**os.environ, **env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], env=full, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_run_step_runs_the_suite_and_sets_outputs(tmp_path: Path) -> None:
    out = tmp_path / "github_output"
    env = {
        "GITHUB_OUTPUT": str(out), "MCP_COMMAND": broken_target()[1], "MCP_URL": "", "MCP_TRANSPORT": "",
        "MCP_VERSION": "2025-11-25", "MCP_STRICT": "false", "MCP_BASELINE": "", "MCP_SELECT": "ping.*\nlifecycle.initialize.*",
        "MCP_EXCLUDE": "", "MCP_TIMEOUT": "5", "MCP_REPORT_DIR": "rep",
    }
    proc = _bash(_step("Run the conformance suite")["run"], env, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]  # the step records the code; the gate fails
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs["exit-code"] == "1"
    assert outputs["badge"].startswith("MUST ")
    assert {p.name for p in (tmp_path / "rep").iterdir()} >= {"report.json", "report.html", "junit.xml", "summary.md"}
    summary = tmp_path / "step_summary"
    proc = _bash(_step("Step summary")["run"], {"MCP_REPORT_DIR": "rep", "GITHUB_STEP_SUMMARY": str(summary)}, tmp_path)
    assert proc.returncode == 0 and summary.read_text().startswith("## MCP conformance:")
    gate = _step("Gate")["run"]
    for rc in ("0", "1", "2", "3"):
        assert _bash(gate, {"RC": rc}, tmp_path).returncode == int(rc)
