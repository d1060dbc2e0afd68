"""Prove the client suite can fail: every broken client is caught on exactly its one requirement.

Each defect in ``fixtures/broken_clients/defects.py`` is the reference client with one fault
(``mcp-reference-client --fault NAME``).  The suite runs against it through the public CLI
(``mcp-conformance client``); the report must flag that requirement (fail for a MUST, warning for a
SHOULD, as the catalogue grades it) and nothing else -- no other fail, warning or error (a
requirement the defect table lists under ``also`` is tolerated: the one message breaks it too).

One run per defect, on one of its transports (taken in turn, so that every transport is
covered) and one of its versions; the runs are independent processes, started ahead of the tests
``JOBS`` at a time (``MCP_CONFORMANCE_DEFECT_JOBS``, default 2).  The strict client (no fault) is
one more run, on every transport and version, that must come out clean.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.spec.outcomes import Level
from conformance.spec.requirements import catalogue
from tests.prefetch import Prefetch

ROOT = Path(__file__).resolve().parents[2]


def _load_table() -> dict:
    # by path, under a name of its own: fixtures/broken_servers has a ``defects`` module too
    spec = importlib.util.spec_from_file_location("broken_client_defects", ROOT / "fixtures" / "broken_clients" / "defects.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.DEFECTS


DEFECTS = _load_table()

FLAGGED = {"fail", "warning", "error", "stale"}
JOBS = max(1, int(os.environ.get("MCP_CONFORMANCE_DEFECT_JOBS", "2")))
FLAG = {"stdio": "--stdio {server}", "streamable-http": "--url {url}", "sse": "--sse-url {url}"}


@dataclass(frozen=True)
class Case:
    name: str  # the fault ("" for the strict client)
    transport: str
    version: str


def _cases() -> list[Case]:
    out = []
    for i, (name, d) in enumerate(sorted(DEFECTS.items())):
        transport = d.transports[i % len(d.transports)]
        versions = [v for v in d.versions if (transport, v) not in (("streamable-http", "2024-11-05"), ("sse", "2026-07-28"))]
        version = "2024-11-05" if transport == "sse" and "2024-11-05" in versions else versions[-1]
        out.append(Case(name, transport, version))
    return out


CASES = _cases()

_LIVE: set[subprocess.Popen] = set()
_LOCK = threading.Lock()
_STOPPING = threading.Event()


def client_command(case: Case, *, dual: bool = False) -> str:
    version = "" if dual else f" --version {case.version}"
    fault = f" --fault {case.name}" if case.name else ""
    return f"{shlex.quote(sys.executable)} -m reference_client {FLAG[case.transport]}{version} --timeout 3{fault}"


def run_suite(command: str, transport: str, versions: list[str], report_dir: Path) -> tuple[int, dict]:
    argv = [sys.executable, "-m", "conformance.cli", "client", "--command", command, "--transport", transport,
            "--timeout", "2", "--stall-timeout", "10", "--report-dir", str(report_dir), "--report-format", "none", "-q"]
    for v in versions:
        argv += ["--version", v]
    with _LOCK:
        if _STOPPING.is_set():
            raise RuntimeError("the session is ending")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                env=dict(os.environ))
        _LIVE.add(proc)
    try:
        out, err = proc.communicate(timeout=400)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    finally:
        with _LOCK:
            _LIVE.discard(proc)
    report = report_dir / "report.json"
    assert report.exists(), f"no report written (exit {proc.returncode})\n{out[-3000:]}\n{err[-3000:]}"
    return proc.returncode, json.loads(report.read_text())


def test_defects_name_client_requirements_where_they_apply() -> None:
    reqs = catalogue()
    assert len(DEFECTS) >= 30
    for name, d in DEFECTS.items():
        req = reqs[d.requirement]
        assert req.role == "client", f"{name}: {d.requirement} is a {req.role} requirement"
        assert req.level in (Level.MUST, Level.SHOULD)
        for v in d.versions:
            for t in d.transports:
                if t == "sse" and v == "2026-07-28":
                    continue
                assert v in req.versions, f"{name}: {d.requirement} is not part of {v}"
    covered = {t for c in CASES for t in [c.transport]}
    assert covered == {"stdio", "streamable-http", "sse"}


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefetch[str]]:
    """The selected cases' runs, each started when its test asks for it together with the next
    ``JOBS - 1`` in test order (tests/prefetch.py: under xdist a worker runs only its share)."""
    selected = [item.callspec.params["case"] for item in request.session.items
                if item.module is sys.modules[__name__] and hasattr(item, "callspec") and "case" in item.callspec.params]
    by_name = {case.name: case for case in reversed(selected)}  # the first case of a name, as before
    order = list(dict.fromkeys(case.name for case in selected))

    def start(name: str) -> tuple[int, dict]:
        case = by_name[name]
        d = DEFECTS[name]
        return run_suite(client_command(case, dual=d.dual), case.transport, [case.version], tmp_path_factory.mktemp(name))

    def stop() -> None:
        with _LOCK:
            _STOPPING.set()
            for proc in list(_LIVE):
                proc.terminate()

    prefetch = Prefetch(order, start, JOBS, name="broken-client")
    try:
        yield prefetch
    finally:
        prefetch.close(stop=stop)
        _STOPPING.clear()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.name}-{c.transport}-{c.version}")
def test_suite_flags_exactly_the_broken_client_requirement(case: Case, runs: Prefetch[str]) -> None:
    d = DEFECTS[case.name]
    req = catalogue()[d.requirement]
    expected = "fail" if req.level is Level.MUST else "warning"
    code, report = runs[case.name].result()
    assert report["role"] == "client"
    flagged = {(r["requirement"], r["outcome"]) for r in report["results"] if r["outcome"] in FLAGGED}
    tolerated = {(rid, "fail" if catalogue()[rid].level is Level.MUST else "warning") for rid in d.also}
    assert (d.requirement, expected) in flagged, (
        f"fault {case.name!r} ({d.note}) should be reported as {d.requirement}={expected}; the suite reported "
        f"{sorted(flagged)}; errors: {report.get('errors')}")
    assert flagged - tolerated == {(d.requirement, expected)}, (
        f"fault {case.name!r} should be reported as {d.requirement}={expected} and nothing else; the suite reported "
        f"{sorted(flagged)}; errors: {report.get('errors')}")
    assert code == (1 if expected == "fail" else 0)
