"""With pytest-html active: Requirement, Level and Spec columns and the transcript as an extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import broken_target

pytest.importorskip("pytest_html")


def _run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    command = broken_target()[1]
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q",
            f"--mcp-server-command={command}", "--mcp-version=2025-11-25", "--mcp-select=ping.*", "--mcp-timeout=5",
            "--mcp-report-format=none", *extra]
    return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_columns_and_transcript_extra(tmp_path: Path) -> None:
    proc = _run(tmp_path, "--html=out.html", "--self-contained-html")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    # pytest-html keeps rows and extras as escaped JSON in the page
    assert "Requirement</th>" in page and "Level</th>" in page and "Spec</th>" in page
    assert "col-mcpRequirement\\&#34;&gt;ping.response" in page
    assert "col-mcpLevel\\&#34;&gt;MUST" in page
    assert "modelcontextprotocol.io/specification" in page
    assert "wire exchange (* = cited)" in page and "PingRejected" in page


def test_nothing_added_without_pytest_html_output(tmp_path: Path) -> None:
    proc = _run(tmp_path)
    assert proc.returncode == 1 and "INTERNALERROR" not in proc.stdout + proc.stderr
