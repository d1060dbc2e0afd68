"""The CLI's progress display: a line redrawn in place on a terminal, nothing in CI logs."""

from __future__ import annotations

import argparse
import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformance.cli import _Progress

from .conftest import CLI, LIVE_SELECTION, broken_target


def test_not_a_terminal_shows_no_progress(live_run: tuple[subprocess.CompletedProcess, Path]) -> None:
    proc, _ = live_run
    assert "\r" not in proc.stdout + proc.stderr
    assert not any(line.startswith("mcp-conformance ") for line in proc.stdout.splitlines())  # no "..xx" letters
    assert "collected" in proc.stdout and "report: " in proc.stdout


def _ns(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(**{"verbose": 0, "quiet": False, **kw})


def test_live_only_on_a_terminal_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert _Progress.wanted(_ns())
    assert not _Progress.wanted(_ns(verbose=1)) and not _Progress.wanted(_ns(quiet=True))
    monkeypatch.setenv("CI", "true")
    assert not _Progress.wanted(_ns())
    monkeypatch.delenv("CI")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert not _Progress.wanted(_ns())


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_terminal_gets_a_line_redrawn_in_place(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TERM"] = "xterm"
    proc = subprocess.Popen([*CLI, "server", *broken_target(), *LIVE_SELECTION, "--report-format", "none"],
                            stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path, env=env, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    text = out.decode("utf-8", "replace")
    assert proc.returncode == 1, text[-2000:]
    frames = text.split("\r\x1b[K")
    assert any(f.startswith("[") and "%" in f and "ping." in f for f in frames), text[:2000]
    total = int(next(f for f in frames if f.startswith("[")).split("/", 1)[1].split("]", 1)[0])
    assert any(f.startswith(f"[{total}/{total}] 100%") for f in frames)
    # the line is cleared before the summary is printed
    assert text.index("mcp-conformance ====") > text.rindex("\r\x1b[K")
