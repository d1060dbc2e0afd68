"""Real OAuth clients, unmodified library code, under ``mcp-conformance client --auth``: the Python
SDK's ``OAuthClientProvider`` (``fixtures/clients/sdk_client.py --oauth``) and the TypeScript SDK's
auth provider flow (``fixtures/clients/ts_client.mjs --oauth``), each over streamable HTTP on
2025-11-25 and 2026-07-28, the authorization scenarios only (``--select 'client.auth.*'``).  The
suite's headless browser (``$BROWSER``) carries the authorization URL to their loopback
callbacks.  Their verdicts must equal ``tests/integration/expected_clients/<client>-auth-streamable-http.json``
(every flagged verdict with its outcome, and the pass / skip counts); each flagged verdict there
was read against its sentence.  Regenerate with ``MCP_CONFORMANCE_UPDATE_CLIENT_VERDICTS=1``.

A client whose runtime is missing (no ``mcp`` in this interpreter, no installed TypeScript SDK)
is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPECTED_DIR = Path(__file__).resolve().parent / "expected_clients"
UPDATE = os.environ.get("MCP_CONFORMANCE_UPDATE_CLIENT_VERDICTS") == "1"
VERSIONS = ("2025-11-25", "2026-07-28")
TS_SDK = Path(os.environ.get("MCP_CONFORMANCE_CLIENTS_DIR", Path.home() / ".cache" / "mcp-conformance" / "clients")) \
    / "ts-sdk-1.32.2" / "node_modules" / "@modelcontextprotocol" / "sdk"

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]


def _command(client: str) -> str | None:
    if client == "sdk":
        try:
            import mcp  # noqa: F401
        except ImportError:
            return None
        return f"{shlex.quote(sys.executable)} {ROOT / 'fixtures' / 'clients' / 'sdk_client.py'} --oauth --timeout 10 --url {{url}}"
    if not (TS_SDK / "package.json").exists():
        return None
    return f"node {ROOT / 'fixtures' / 'clients' / 'ts_client.mjs'} --sdk {TS_SDK} --oauth --url {{url}}"


@pytest.mark.parametrize("client", ["sdk", "ts-sdk"])
def test_real_oauth_client_verdicts(client: str, tmp_path: Path) -> None:
    command = _command(client)
    if command is None:
        pytest.skip(f"{client} is not installed here (scripts/install-clients {client})")
    argv = [sys.executable, "-m", "conformance.cli", "client", "--command", command, "--transport", "streamable-http",
            "--auth", "--select", "client.auth.*", "--timeout", "3", "--report-dir", str(tmp_path),
            "--report-format", "none", "-q"]
    for v in VERSIONS:
        argv += ["--version", v]
    subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=280)
    report = json.loads((tmp_path / "report.json").read_text())
    flagged = sorted([r["requirement"], r["version"], r["outcome"]] for r in report["results"]
                     if r["outcome"] in ("fail", "warning", "error"))
    counts = {k: sum(1 for r in report["results"] if r["outcome"] == k) for k in ("pass", "skip")}
    path = EXPECTED_DIR / f"{client}-auth-streamable-http.json"
    if UPDATE:
        previous = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({"client": client, "versions": list(VERSIONS), "flagged": flagged, "counts": counts,
                                    "why": previous.get("why", {})}, indent=1) + "\n")
        pytest.skip("expectations written")
    expected = json.loads(path.read_text())
    assert flagged == expected["flagged"], (flagged, report.get("errors"))
    assert counts == expected["counts"]
