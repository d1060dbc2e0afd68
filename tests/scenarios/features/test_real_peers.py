"""The feature areas against real peers, every version and transport they speak: the verdicts we
expect, each backed by a sentence (see the requirement's quote).

* server-everything (npm): unknown tools answered with an isError result (tools.call.unknown-tool,
  the page's example is a -32602 error), -32603 for an invalid log level (logging.set-level.invalid
  names -32602), invalid cursors accepted (pagination.invalid-cursor), -32602 for a missing
  resource where 2024-11-05 .. 2025-11-25 name -32002 (resources.read.not-found-code).
* the official Python SDK: the same for unknown tools, cursors and missing resources, and error
  code 0 / -32603 where prompts/get of an unknown prompt or without a required argument should be
  -32602 (prompts.get.unknown-name, prompts.get.missing-arguments).
* the tiny server: none.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.versions import VERSIONS

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fixtures.peers import launch  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

AREAS = ("tools", "resources", "prompts", "logging", "completion", "pagination", "caching")
LEGACY = VERSIONS[:4]
NO_2024 = VERSIONS[1:4]

W = "warning"
EVERYTHING = {
    "logging.set-level.invalid": W,
    "pagination.invalid-cursor": W,
    "resources.read.not-found-code": W,
    "tools.call.unknown-tool": W,
}
SDK = {
    "pagination.invalid-cursor": W,
    "prompts.get.missing-arguments": W,
    "prompts.get.unknown-name": W,
    "resources.read.not-found-code": W,
    "tools.call.unknown-tool": W,
}

# (peer, transport) -> {(requirement, version): outcome} for every fail and warning
CASES: dict[tuple[str, str], dict[tuple[str, str], str]] = {
    ("everything", "stdio"): {(r, v): o for r, o in EVERYTHING.items() for v in LEGACY},
    ("everything", "sse"): {(r, v): o for r, o in EVERYTHING.items() for v in LEGACY},
    ("everything", "streamable-http"): {(r, v): o for r, o in EVERYTHING.items() for v in NO_2024},
    ("sdk", "stdio"): {(r, v): o for r, o in SDK.items() for v in VERSIONS if r != "resources.read.not-found-code" or v in LEGACY},
    ("sdk", "sse"): {(r, v): o for r, o in SDK.items() for v in LEGACY},
    ("sdk", "streamable-http"): {
        (r, v): o for r, o in SDK.items() for v in VERSIONS[1:] if r != "resources.read.not-found-code" or v in NO_2024
    },
    ("tiny", "stdio"): {},
    ("tiny", "streamable-http"): {},
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
    path = "/sse" if transport == "sse" else "/mcp"
    return ["--command", subprocess.list2cmdline(argv), "--url", f"http://127.0.0.1:{{port}}{path}", "--transport", transport]


@pytest.mark.parametrize("peer, transport", sorted(CASES), ids=lambda x: str(x))
def test_feature_verdicts_on_a_real_peer(tmp_path: Path, peer: str, transport: str) -> None:
    argv = [sys.executable, "-m", "conformance.cli", "server", *_target(peer, transport), "--version", "all",
            "--report-dir", str(tmp_path), "--timeout", "5"]
    for area in AREAS:
        argv += ["--select", f"{area}.*"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    report_path = tmp_path / "report.json"
    assert report_path.exists(), f"no report (exit {proc.returncode})\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    report = json.loads(report_path.read_text())
    got = {(r["requirement"], r["version"]): r["outcome"] for r in report["results"] if r["outcome"] in ("fail", "warning", "error", "stale")}
    assert got == CASES[(peer, transport)], report.get("errors")
    # and the areas were exercised, not skipped wholesale
    assert sum(1 for r in report["results"] if r["outcome"] == "pass") >= 30
