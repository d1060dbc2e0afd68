"""The 2026-07-28 area against real peers, on the transports that revision defines (stdio and
streamable HTTP):

* server-everything (npm) is legacy-only: server/discover is answered with -32601 (stdio) or an
  HTTP 400 "Server not initialized" (HTTP), so every requirement is skipped as "target does not
  support 2026-07-28", never failed.
* the official Python SDK serves 2026-07-28 on a fresh connection: no fail and no warning in the
  area; its MRTR and x-mcp-header rules are skipped (it lists no tool that asks for input or
  mirrors a parameter).
* the tiny server: no fail and no warning either.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.peers import launch  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

V = "2026-07-28"
AREAS = ("discover", "versioning", "stateless", "mrtr", "subscriptions", "headers")
FLAGGED = {"fail", "warning", "error", "stale"}
# requirements every 2026-07-28 peer is judged on (nothing optional gates them)
CORE = {
    "discover.implemented",
    "discover.server-info",
    "versioning.unsupported-version",
    "versioning.removed-methods",
    "stateless.meta.required-fields",
    "stateless.result-type",
    "stateless.error-codes.reserved-range",
    "stateless.error-codes.retired",
}


def _target(peer: str, transport: str) -> list[str]:
    if peer == "everything":
        try:
            launch.ensure_installed()
        except launch.PeerUnavailable as exc:
            pytest.skip(f"server-everything: {exc.reason}")
    argv, env, _ = launch.peer_command(peer, transport, port=0 if transport != "stdio" else None)
    if transport == "stdio":
        return ["--command", subprocess.list2cmdline(argv)]
    argv = [a if a != "0" else "{port}" for a in argv]  # the CLI picks the port (and exports PORT)
    return ["--command", subprocess.list2cmdline(argv), "--url", "http://127.0.0.1:{port}/mcp", "--transport", transport]


def _run(tmp_path: Path, peer: str, transport: str) -> dict:
    argv = [sys.executable, "-m", "conformance.cli", "server", *_target(peer, transport), "--version", V,
            "--report-dir", str(tmp_path), "--timeout", "5"]
    for area in AREAS:
        argv += ["--select", f"{area}.*"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    report_path = tmp_path / "report.json"
    assert report_path.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(report_path.read_text())


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_server_everything_is_skipped_as_legacy(tmp_path: Path, transport: str) -> None:
    report = _run(tmp_path, "everything", transport)
    assert report["results"] and all(r["outcome"] == "skip" for r in report["results"])
    judged = [r for r in report["results"] if not r["reason"].startswith(("not applicable", "scenario "))]
    assert judged and all(r["reason"].startswith(f"target does not support {V}: server/discover") for r in judged)


@pytest.mark.parametrize("peer, transport", [("sdk", "stdio"), ("sdk", "streamable-http"), ("tiny", "stdio"), ("tiny", "streamable-http")])
def test_a_2026_peer_has_no_fail_or_warning(tmp_path: Path, peer: str, transport: str) -> None:
    report = _run(tmp_path, peer, transport)
    flagged = {r["requirement"]: r["outcome"] for r in report["results"] if r["outcome"] in FLAGGED}
    assert flagged == {}, report.get("errors")
    passed = {r["requirement"] for r in report["results"] if r["outcome"] == "pass"}
    assert passed >= CORE
