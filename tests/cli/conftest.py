"""Helpers for the CLI tests: run ``python -m conformance.cli`` as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.conftest import BAD, PY, TINY, bad_cmd, live_processes, tiny_cmd, validate_report  # noqa: F401

CLI = [sys.executable, "-m", "conformance.cli"]


class Run:
    def __init__(self, proc: subprocess.CompletedProcess, cwd: Path) -> None:
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.cwd = cwd

    @property
    def report(self) -> dict[str, Any] | None:
        path = self.cwd / "reports" / "report.json"
        if not path.exists():
            return None
        report = json.loads(path.read_text(encoding="utf-8"))
        validate_report(report)
        return report


@pytest.fixture
def cli(tmp_path: Path):
    """Run the CLI in an empty directory; a hard timeout keeps a hang from blocking the suite."""

    def run(*args: str, timeout: float = 60) -> Run:
        proc = subprocess.run([*CLI, *args], cwd=tmp_path, capture_output=True, text=True, timeout=timeout)
        return Run(proc, tmp_path)

    return run
