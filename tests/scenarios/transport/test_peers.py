"""The transport catalogue against the reference server (no fail, no warning on any transport) and
against real peers (their verdicts kept as expectations: every fail and warning listed here is
backed by a sentence, see the requirement's quote)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.peers import launch

ROOT = Path(__file__).resolve().parents[3]
FLAGGED = ("fail", "warning", "error")
ALL_LEGACY_HTTP = ("2025-03-26", "2025-06-18", "2025-11-25")

pytestmark = pytest.mark.slow


def _run(name: str, transport: str, tmp_path: Path) -> dict[tuple[str, str], str]:
    try:
        argv, _env, url = launch.peer_command(name, transport, port=65000)
    except launch.PeerUnavailable as exc:
        pytest.skip(exc.reason)
    command = shlex.join(argv).replace("65000", "{port}")
    args = [sys.executable, "-m", "conformance.cli", "server", "--command", command, "--transport", transport,
            "--version", "all", "--select", "transport.*", "--timeout", "5", "--report-dir", str(tmp_path)]
    if url:
        args += ["--url", url.replace("65000", "{port}")]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    path = tmp_path / "report.json"
    assert path.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    report = json.loads(path.read_text())
    assert not report.get("errors"), report["errors"]
    return {(r["requirement"], r["version"]): r["outcome"] for r in report["results"] if r["outcome"] in FLAGGED}


def _each(requirement: str, outcome: str, versions: tuple[str, ...]) -> dict[tuple[str, str], str]:
    return {(requirement, v): outcome for v in versions}


@pytest.mark.parametrize("transport", ["stdio", "streamable-http", "sse"])
def test_reference_server_passes_every_transport_requirement(transport: str, tmp_path: Path) -> None:
    assert _run("reference", transport, tmp_path) == {}


EXPECTED: dict[tuple[str, str], dict[tuple[str, str], str]] = {
    ("everything", "stdio"): {},
    ("everything", "sse"): {("transport.sse.origin.validate", "2024-11-05"): "fail"},
    ("everything", "streamable-http"): {
        # accepts a foreign Origin (no DNS rebinding protection)
        **_each("transport.http.origin.validate", "fail", ("2025-03-26", "2025-06-18")),
        ("transport.http.origin.invalid-403", "2025-11-25"): "fail",
        # 400 -32000 "No valid session ID provided" for unknown and deleted sessions
        **_each("transport.http.session.unknown-404", "fail", ALL_LEGACY_HTTP),
        # Last-Event-ID replays the events of every stream after that id
        **_each("transport.http.resume.same-stream", "fail", ALL_LEGACY_HTTP),
    },
    ("sdk", "stdio"): {},
    ("sdk", "sse"): {},
    ("sdk", "streamable-http"): {("transport.http.sse.priming-event", "2025-11-25"): "warning"},
    ("tiny", "stdio"): {},
    ("tiny", "streamable-http"): {
        **_each("transport.http.post.accept-406", "warning", (*ALL_LEGACY_HTTP, "2026-07-28")),
        **_each("transport.http.post.content-type-415", "warning", (*ALL_LEGACY_HTTP, "2026-07-28")),
    },
}


@pytest.mark.integration
@pytest.mark.parametrize(("name", "transport"), sorted(EXPECTED), ids=lambda v: str(v))
def test_real_peer_verdicts(name: str, transport: str, tmp_path: Path) -> None:
    assert _run(name, transport, tmp_path) == EXPECTED[(name, transport)]
