"""The transport catalogue against the reference server: no fail, no warning on any transport.
(Real peers: tests/integration/test_real_peer_verdicts.py, one run of the whole catalogue per peer
x transport, with every fail and warning in tests/integration/expected/.)"""

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


@pytest.mark.parametrize("transport", ["stdio", "streamable-http", "sse"])
def test_reference_server_passes_every_transport_requirement(transport: str, tmp_path: Path) -> None:
    assert _run("reference", transport, tmp_path) == {}


# The real peers' transport verdicts are part of their whole-catalogue runs: see
# tests/integration/test_real_peer_verdicts.py and tests/integration/expected/.
