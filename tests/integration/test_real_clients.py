"""Real MCP clients, unmodified, under ``mcp-conformance client``: the official Python SDK (through
fixtures/clients/sdk_client.py), the official TypeScript SDK (fixtures/clients/ts_client.mjs), the
fastmcp CLI and the MCP Inspector's CLI -- each on its cheapest transport (stdio) for two versions,
one CLI run per client, whose verdicts must equal ``tests/integration/expected_clients/<client>-<transport>.json``:
every (requirement, version) flagged (fail, warning, error) with its outcome, and the counts of
pass and skip.  Each flagged verdict was read against its sentence; the files say what was seen.

An entry marked ``"suite_mistake": "<why>"`` is a verdict the suite gives today that does not rest
on its sentence (reported to the suite's maintainers): it may show or not, and is left out of the
counts, so the test passes before and after the suite is fixed.

A client that ``scripts/install-clients`` has not installed is skipped with the reason (the test
installs nothing).  Regenerate the files (``suite_mistake`` markers are kept) with

    MCP_CONFORMANCE_UPDATE_CLIENT_VERDICTS=1 scripts/test tests/integration/test_real_clients.py -m integration

and read every new fail and warning against its sentence before committing them.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Mapping

import pytest

from conformance.spec.requirements import catalogue
from tests.prefetch import Prefetch

from . import peer_verdicts as pv

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # fixtures/ is not an installed package
    sys.path.insert(0, str(ROOT))

from fixtures import clients  # noqa: E402

EXPECTED_DIR = Path(__file__).resolve().parent / "expected_clients"
UPDATE = os.environ.get("MCP_CONFORMANCE_UPDATE_CLIENT_VERDICTS") == "1"
# client -> (transport, versions): stdio is the cheapest everywhere (scenarios overlap on fresh
# processes).  2025-03-26 has the batch probe, which every one of these clients leaves unanswered
# (so it costs a whole --timeout): only the two SDK drivers, which start fast, run it.  2025-11-25
# is the latest handshake era, 2026-07-28 the modern era for the clients that speak it (they probe
# server/discover first), 2024-11-05 the oldest.
RUNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sdk": ("stdio", ("2025-03-26", "2026-07-28")),
    "ts-sdk": ("stdio", ("2025-03-26", "2025-11-25")),
    "fastmcp": ("stdio", ("2025-11-25", "2026-07-28")),
    "inspector": ("stdio", ("2024-11-05", "2025-11-25")),
}
RUN_DEADLINE = 240.0  # one CLI run (measured: 40-90 s on 2 busy cores, most of it the timeout scenarios' wait)
# the timeout scenarios wait this long for a client to give up on a request the server never
# answers: above the TypeScript SDK's and the Inspector's default request timeout (60 s)
STALL_TIMEOUT = 65.0
# the CLI runs go two at a time (started ahead of the tests): most of each is spent waiting out
# the clients' own timeouts
LANES = max(1, int(os.environ.get("MCP_CONFORMANCE_CLIENT_LANES", "2")))


def _key(client: str) -> str:
    return f"{client}-{RUNS[client][0]}"


def _load(client: str) -> dict[str, Any] | None:
    path = EXPECTED_DIR / f"{_key(client)}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _tolerant(expected: Mapping[str, Any]) -> dict[str, Any]:
    """``expected`` for :func:`pv.compare`: a suite mistake may show or not, like an unstable verdict."""
    doc = dict(expected)
    doc["verdicts"] = [dict(e, unstable=e["suite_mistake"]) if e.get("suite_mistake") else e for e in expected["verdicts"]]
    return doc


def _document(client: str, run: pv.PeerRun, argv: list[str], exit_code: int,
              previous: Mapping[str, Any] | None) -> dict[str, Any]:
    marked = {(e["requirement"], e["version"]): e["suite_mistake"] for e in (previous or {}).get("verdicts", ())
              if e.get("suite_mistake")}
    doc = pv.expected_from_report(run, _tolerant(previous) if previous else None)
    for e in doc["verdicts"]:
        key = (e["requirement"], e["version"])
        e.pop("unstable", None)
        if key in marked:
            e["suite_mistake"] = marked[key]
    transport, versions = RUNS[client]
    return {
        "client": client,
        "what": clients.CLIENTS[client].what,
        "transport": transport,
        "versions": list(versions),
        "command": clients.command(client, transport, "<installed>"),
        "regenerate": "MCP_CONFORMANCE_UPDATE_CLIENT_VERDICTS=1 scripts/test tests/integration/test_real_clients.py -m integration",
        "exit_code": exit_code,
        "counts": doc["counts"],
        "run_errors": doc["run_errors"],
        "verdicts": doc["verdicts"],
    }


def _run(client: str, report_dir: Path) -> tuple[pv.PeerRun, list[str], int]:
    try:
        path = clients.locate(client)
    except clients.ClientMissing as exc:
        pytest.skip(f"client {client!r} is not installed: {exc.reason}")
    transport, versions = RUNS[client]
    spec = clients.CLIENTS[client]
    argv = [sys.executable, "-m", "conformance.cli", "client", "--command", clients.command(client, transport, path),
            "--transport", transport, "--version", ",".join(versions), "--timeout", f"{spec.timeout:g}",
            "--stall-timeout", f"{STALL_TIMEOUT:g}", "--report-dir", str(report_dir), "--report-format", "none", "-q"]
    run = pv.PeerRun(client, transport, argv=argv)
    begin = time.monotonic()
    with _LOCK:
        if _STOPPING.is_set():
            raise RuntimeError("the session is ending")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                text=True, cwd=ROOT)
        _LIVE.add(proc)
    try:
        try:
            out, err = proc.communicate(timeout=RUN_DEADLINE)
        except subprocess.TimeoutExpired:
            pv._interrupt(proc)  # as Ctrl-C: the CLI stops the client it started
            raise AssertionError(f"the CLI run did not finish within {RUN_DEADLINE:.0f} s: {shlex.join(argv)}") from None
    finally:
        with _LOCK:
            _LIVE.discard(proc)
    run.wall = time.monotonic() - begin
    report = report_dir / "report.json"
    assert report.exists(), f"no report (exit {proc.returncode}): {shlex.join(argv)}\n{out[-3000:]}\n{err[-3000:]}"
    run.report = json.loads(report.read_text())
    return run, argv, proc.returncode


_LIVE: set[subprocess.Popen] = set()
_LOCK = threading.Lock()
_STOPPING = threading.Event()


@pytest.fixture(scope="module")
def client_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefetch[str]]:
    """The selected clients' CLI runs, each started when its test asks for it together with the
    next ``LANES - 1`` (tests/prefetch.py: under xdist a worker runs only its share)."""
    selected = [item.callspec.params["client"] for item in request.session.items
                if item.module is sys.modules[__name__] and item.originalname == "test_real_client_verdicts_are_the_expected_ones"]

    def stop() -> None:
        with _LOCK:
            _STOPPING.set()
            for proc in list(_LIVE):
                pv._interrupt(proc)

    runs = Prefetch(selected, lambda c: _run_or_missing(c, tmp_path_factory.mktemp(c)), LANES, name="real-client")
    try:
        yield runs
    finally:
        runs.close(stop=stop)
        _STOPPING.clear()


def _run_or_missing(client: str, report_dir: Path) -> Any:
    try:
        clients.locate(client)
    except clients.ClientMissing as exc:
        return exc
    return _run(client, report_dir)


@pytest.mark.integration
@pytest.mark.timeout(2 * RUN_DEADLINE + 60)
@pytest.mark.parametrize("client", list(RUNS))
def test_real_client_verdicts_are_the_expected_ones(client: str, client_runs: Prefetch[str]) -> None:
    outcome = client_runs[client].result()
    if isinstance(outcome, clients.ClientMissing):
        pytest.skip(f"client {client!r} is not installed: {outcome.reason}")
    run, argv, code = outcome
    expected = _load(client)
    if UPDATE:
        EXPECTED_DIR.mkdir(exist_ok=True)
        doc = _document(client, run, argv, code, expected)
        (EXPECTED_DIR / f"{_key(client)}.json").write_text(json.dumps(doc, indent=2) + "\n")
        return
    assert expected is not None, f"no {EXPECTED_DIR.name}/{_key(client)}.json: see this module's docstring"
    problems = pv.compare(_tolerant(expected), run)
    if code != expected["exit_code"]:
        problems.append(f"exit code {code}, expected {expected['exit_code']}")
    assert not problems, (
        f"{_key(client)} ({run.wall:.0f} s, {shlex.join(argv)}): the verdicts differ from "
        f"{EXPECTED_DIR.name}/{_key(client)}.json\n  " + "\n  ".join(problems)
        + "\nIf the new verdicts are right (each fail and warning backed by its sentence), regenerate the file "
          "(see this module's docstring)."
    )


# -- fast: the files themselves ----------------------------------------------------------------------
@pytest.mark.parametrize("client", list(RUNS))
def test_expected_client_file_is_well_formed(client: str) -> None:
    doc = _load(client)
    assert doc is not None, f"no {EXPECTED_DIR.name}/{_key(client)}.json"
    transport, versions = RUNS[client]
    assert (doc["client"], doc["transport"], doc["versions"]) == (client, transport, list(versions))
    assert set(doc["counts"]) == {"pass", "skip"} and all(n >= 0 for n in doc["counts"].values())
    reqs = catalogue()
    seen = set()
    for e in doc["verdicts"]:
        key = (e["requirement"], e["version"])
        assert key not in seen, f"{key} listed twice"
        seen.add(key)
        assert e["version"] in versions, e
        assert e["outcome"] in ("fail", "warning", "error"), e
        req = reqs.get(e["requirement"])
        assert req is not None, f"{e['requirement']} is not in the catalogue"
        assert e["version"] in req.versions, f"{e['requirement']} does not apply to {e['version']}"
        assert e["level"] == req.level.value, e
        assert e["summary"], e
        if "suite_mistake" in e:
            assert isinstance(e["suite_mistake"], str) and len(e["suite_mistake"]) > 40, e


def test_tolerant_comparison_lets_a_suite_mistake_go_either_way() -> None:
    def result(requirement: str, outcome: str) -> dict[str, Any]:
        violations = [] if outcome == "pass" else [{"problem": "P", "message": "seen", "outcome": outcome}]
        return {"requirement": requirement, "version": "2025-11-25", "outcome": outcome, "level": "MUST",
                "violations": violations, "violations_dropped": 0, "reason": None, "messages": []}

    now = pv.PeerRun("c", "stdio", report={"results": [result("a.b", "fail"), result("c.d", "pass")], "errors": []})
    fixed = pv.PeerRun("c", "stdio", report={"results": [result("a.b", "pass"), result("c.d", "pass")], "errors": []})
    doc = pv.expected_from_report(now)
    assert pv.compare(doc, fixed)  # strict: the fail must show
    doc["verdicts"][0]["suite_mistake"] = "the check reads a refusal as support; reported with the transcript"
    assert pv.compare(_tolerant(doc), now) == []
    assert pv.compare(_tolerant(doc), fixed) == []
