"""The client suite's authorization checks can fail, and fail on the right requirement.

Every OAuth fault of the reference client (``fixtures/broken_clients/defects.py`` AUTH_DEFECTS,
``mcp-reference-client --fault NAME``) is run through the public CLI with ``--auth`` on the one
authorization scenario that provokes it (every requirement that scenario judges selected): the
report must flag exactly that requirement (fail for a MUST, warning for a SHOULD) and nothing
else.  The strict reference client, on every authorization scenario (2026-07-28 over streamable
HTTP, 2025-06-18 over HTTP+SSE, 2025-03-26 over streamable HTTP), must come out clean: every requirement passes.

Runs are independent processes started ahead of the tests, ``MCP_CONFORMANCE_DEFECT_JOBS`` at a
time (default 4: they mostly wait); each uses ``--timeout 2``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.spec.outcomes import Level
from conformance.runtime.registry import scenarios
from conformance.spec.requirements import catalogue
from tests.prefetch import Prefetch

ROOT = Path(__file__).resolve().parents[2]
JOBS = max(1, int(os.environ.get("MCP_CONFORMANCE_DEFECT_JOBS", "4")))  # the runs mostly wait (25 % of a core each)
FLAG = {"streamable-http": "--url {url}", "sse": "--sse-url {url}"}
FLAGGED = {"fail", "warning", "error", "stale"}


def _table() -> dict:
    spec = importlib.util.spec_from_file_location("broken_client_defects_auth",
                                                  ROOT / "fixtures" / "broken_clients" / "defects.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.AUTH_DEFECTS


AUTH_DEFECTS = _table()
AUTH_SCENARIOS = {sc.id.split(".")[-1]: sc for sc in scenarios("client") if sc.id.startswith("authorization.")}
STRICT = (("2026-07-28", "streamable-http"), ("2025-06-18", "sse"), ("2025-03-26", "streamable-http"))


def _suite(fault: str, version: str, transport: str, select: list[str], report_dir: Path) -> dict:
    fault_arg = f" --fault {fault}" if fault else ""
    command = (f"{shlex.quote(sys.executable)} -m reference_client {FLAG[transport]} --version {version} --timeout 3 "
               f"--serve-client-metadata{fault_arg}")
    argv = [sys.executable, "-m", "conformance.cli", "client", "--command", command, "--transport", transport,
            "--version", version, "--auth", "--timeout", "2", "--jobs", "6", "--report-dir", str(report_dir),
            "--report-format", "none", "-q"]
    for rid in select:
        argv += ["--select", rid]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=dict(os.environ))
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    report = report_dir / "report.json"
    assert report.exists(), f"no report written (exit {proc.returncode})\n{out[-2000:]}\n{err[-2000:]}"
    return json.loads(report.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefetch[str]]:
    """Each run started when its test asks for it, with the next ``JOBS - 1`` in test order
    (tests/prefetch.py: under xdist a worker runs only its share)."""
    plans: dict[str, tuple] = {}
    for version, transport in STRICT:
        plans[f"strict-{version}-{transport}"] = ("", version, transport, ["client.auth.*"], "strict")
    wanted = os.environ.get("MCP_CONFORMANCE_OAUTH_FAULTS")  # (a comma-separated subset, for a quick look)
    for name in sorted(AUTH_DEFECTS):  # the order of the tests
        if wanted and name not in wanted.split(","):
            continue
        d = AUTH_DEFECTS[name]
        plans[name] = (name, d.version, d.transport, list(AUTH_SCENARIOS[d.scenario].requirements), name)

    def start(key: str) -> dict:
        fault, version, transport, select, where = plans[key]
        return _suite(fault, version, transport, select, tmp_path_factory.mktemp(where))

    tmp_path_factory.getbasetemp()  # made once here: mktemp from several threads at once raced on it
    prefetch = Prefetch(list(plans), start, JOBS, name="oauth-client")
    try:
        yield prefetch
    finally:
        prefetch.close()


def _oauth_faults() -> dict:
    # by path: in one pytest process ``reference_client`` may resolve to another checkout (editable install)
    spec = importlib.util.spec_from_file_location("reference_client_faults_here", ROOT / "reference_client" / "faults.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.OAUTH_FAULTS


def test_table_names_client_auth_requirements_where_they_apply() -> None:
    OAUTH_FAULTS = _oauth_faults()

    cat = catalogue()
    assert set(AUTH_DEFECTS) == set(OAUTH_FAULTS)
    assert len(AUTH_DEFECTS) >= 20
    for name, d in AUTH_DEFECTS.items():
        req = cat[d.requirement]
        assert req.role == "client" and d.requirement.startswith("client.auth."), name
        assert req.applies_to(d.version, d.transport), (name, d.version, d.transport)
        assert OAUTH_FAULTS[name].acts(d.version, d.transport), name
        assert d.requirement in AUTH_SCENARIOS[d.scenario].requirements, name


@pytest.mark.parametrize("version,transport", STRICT)
def test_reference_client_is_clean_under_the_authorization_scenarios(version: str, transport: str,
                                                                    runs: Prefetch[str]) -> None:
    report = runs[f"strict-{version}-{transport}"].result()
    outcomes = {r["requirement"]: r["outcome"] for r in report["results"]}
    assert outcomes, report.get("errors")
    assert set(outcomes.values()) == {"pass"}, (outcomes, report.get("errors"))
    expected = {rid for sc in AUTH_SCENARIOS.values() for rid in sc.requirements
                if catalogue()[rid].applies_to(version, transport)}
    assert set(outcomes) == expected


@pytest.mark.parametrize("name", sorted(AUTH_DEFECTS))
def test_suite_flags_exactly_the_oauth_fault(name: str, runs: Prefetch[str]) -> None:
    d = AUTH_DEFECTS[name]
    expected = "fail" if catalogue()[d.requirement].level is Level.MUST else "warning"
    if name not in runs.order:
        pytest.skip("not in MCP_CONFORMANCE_OAUTH_FAULTS")
    report = runs[name].result()
    flagged = {(r["requirement"], r["outcome"]) for r in report["results"] if r["outcome"] in FLAGGED}
    assert flagged == {(d.requirement, expected)}, (
        f"fault {name!r} ({d.note}) should be reported as {d.requirement}={expected} and nothing else; the suite "
        f"reported {sorted(flagged)}; errors: {report.get('errors')}")
