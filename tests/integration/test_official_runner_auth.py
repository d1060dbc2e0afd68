"""The official conformance runner's client suites against the reference client: every scored
``auth/*`` scenario of ``--requirements 2025-11-25`` and ``--requirements 2026-07-28`` (the
runner's own authorization and resource servers; the client fetches the authorization URL
itself, the runner's convention), and the 2025-03-26 back-compat ones, with no failure and no
warning.  Slow (45-90 s a requirement set, about 100-170 s in all), so opt-in: it runs only with
``MCP_CONFORMANCE_OFFICIAL_RUNNER=1`` and the runner installed (``../shared/tools/official-conformance``
installs it on first use; this test never installs), and is skipped otherwise.  The extension scenarios (client credentials,
DPoP, enterprise-managed, workload identity), which the runner runs but does not score, are asserted
too: the reference client implements them (``reference_client/grants.py``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOME = Path(os.environ.get("OFFICIAL_CONFORMANCE_HOME", Path.home() / ".cache" / "official-conformance"))
RUNNER = Path(os.environ.get("OFFICIAL_CONFORMANCE", ROOT.parent / "shared" / "tools" / "official-conformance"))
BACK_COMPAT = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"]
#: the runner's unscored extension scenarios (``Not scored ... (extension)``), asserted all the same
EXTENSIONS = ["auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/enterprise-managed-authorization",
              "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"]


def _runner() -> Path:
    if os.environ.get("MCP_CONFORMANCE_OFFICIAL_RUNNER") != "1":
        pytest.skip("opt-in (slow): set MCP_CONFORMANCE_OFFICIAL_RUNNER=1 to run the official runner's client suites")
    if not RUNNER.exists():
        pytest.skip(f"the official runner wrapper is not at {RUNNER} (set OFFICIAL_CONFORMANCE)")
    if not (HOME / "node_modules" / "@modelcontextprotocol" / "conformance" / "package.json").exists():
        pytest.skip(f"the official runner is not installed in {HOME} (run {RUNNER} list once)")
    return RUNNER


def _not_scored(stdout: str) -> set[str]:
    out: set[str] = set()
    section = False
    for line in stdout.splitlines():
        if line.startswith("Not scored"):
            section = True
            continue
        m = re.match(r"\s+[✓✗]\s+(\S+)", line) if section else None
        if m:
            out.add(m.group(1))
        elif section and line.strip():
            section = False
    return out


def _verdicts(outdir: Path) -> dict[str, dict[str, list[str]]]:
    """scenario -> status -> check ids, from the runner's result directories."""
    per: dict[str, dict[str, list[str]]] = {}
    for f in outdir.glob("**/checks.json"):
        rel = f.parent.relative_to(outdir)
        name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", str(rel))
        for check in json.loads(f.read_text()):
            per.setdefault(name, {}).setdefault(check["status"], []).append(check["id"])
    return per


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("run", ["2025-11-25", "2026-07-28", "2025-03-26"])
def test_the_official_runner_finds_nothing_wrong_with_the_reference_clients_oauth(tmp_path: Path, run: str) -> None:
    runner = _runner()
    command = f"{sys.executable} -m reference_client --timeout 30"  # each answer; a loaded machine is slow
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("BROWSER", None)  # the runner's convention: the client fetches the authorization URL itself
    outs: list[str] = []
    if run == "2025-03-26":
        invocations = [["--scenario", s, "--spec-version", "2025-03-26"] for s in BACK_COMPAT]
    else:
        invocations = [["--requirements", run]]
    for args in invocations:
        # --timeout: the runner starts every scenario's client at once; on a loaded machine 30 s
        # (its default) can pass before a Python client has even started
        res = subprocess.run([str(runner), "client", "--command", command, *args, "--timeout", "180000", "-o", str(tmp_path)],
                             capture_output=True, text=True, timeout=840, env=env, cwd=ROOT)
        outs.append(res.stdout)
    verdicts = _verdicts(tmp_path)
    unscored = set().union(*(_not_scored(o) for o in outs))
    auth = {name: v for name, v in verdicts.items() if name.startswith("auth/") and (name not in unscored or name in EXTENSIONS)}
    assert auth, "the runner ran no auth scenario:\n" + "\n".join(o[-3000:] for o in outs)
    if run == "2025-03-26":
        assert sorted(auth) == sorted(BACK_COMPAT)
    else:
        assert set(EXTENSIONS) <= set(auth), f"{run}: the runner ran no {sorted(set(EXTENSIONS) - set(auth))}"
    bad = {name: {s: ids for s, ids in v.items() if s in ("FAILURE", "WARNING")} for name, v in auth.items()}
    bad = {name: v for name, v in bad.items() if v}
    assert not bad, f"{run}: " + json.dumps(bad, indent=1)
    assert all(v.get("SUCCESS") for v in auth.values())
