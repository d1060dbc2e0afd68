"""Prove the suite can fail: every broken server is caught on exactly its one requirement.

Each defect in ``fixtures/broken_servers`` is the reference server with one requirement broken.
The suite runs against it through the public CLI; the report must flag that requirement (fail for
a MUST, warning for a SHOULD, as the catalogue grades it) and nothing else -- no other fail,
warning or error anywhere in the report.

The runs are independent processes, so they are started ahead of the tests, ``JOBS`` at a time
(``MCP_CONFORMANCE_DEFECT_JOBS``, default 2), each test waiting for its own; only the defects
selected for this session run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.spec.outcomes import Level
from conformance.spec.requirements import catalogue

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "fixtures" / "broken_servers"
sys.path.insert(0, str(BROKEN))

import defects as registry  # noqa: E402

from tests.prefetch import Prefetch  # noqa: E402

DEFECTS = sorted(registry.load().values(), key=lambda d: d.name)
FLAGGED = {"fail", "warning", "error", "stale"}
JOBS = max(1, int(os.environ.get("MCP_CONFORMANCE_DEFECT_JOBS", "2")))


def _target_args(d: registry.Defect) -> list[str]:
    serve = [sys.executable, str(BROKEN / "serve.py"), d.name, "--transport", d.transport]
    if d.transport == "stdio":
        return ["--command", subprocess.list2cmdline(serve), "--transport", "stdio"]
    path = "/sse" if d.transport == "sse" else "/mcp"
    return [
        "--command", subprocess.list2cmdline([*serve, "--port", "{port}"]),
        "--url", f"http://127.0.0.1:{{port}}{path}",
        "--transport", d.transport,
    ]


def _environ() -> dict[str, str]:
    for _ in range(10):
        try:
            return dict(os.environ)
        except (KeyError, RuntimeError):  # changed by another thread while we copied
            continue
    return dict(os.environ)


# the CLI runs under way, so that an interrupted session (Ctrl-C, SIGTERM) stops them at once
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()


def _stop_live_runs() -> None:
    with _LIVE_LOCK:
        _STOPPING.set()
        live = list(_LIVE)
    for proc in live:
        proc.terminate()  # the CLI stops its servers on SIGTERM


def _run_suite(d: registry.Defect, report_dir: Path) -> tuple[int, dict]:
    # report.json only: the renderings (HTML, JUnit, ...) are tested in tests/report
    argv = [sys.executable, "-m", "conformance.cli", "server", *_target_args(d), "--report-dir", str(report_dir),
            "--report-format", "none", "--timeout", str(d.timeout), *d.suite_args]
    for v in d.versions:
        argv += ["--version", v]
    # an explicit environment: these runs start in threads while pytest's thread sets
    # PYTEST_CURRENT_TEST, and an inherited one can make the spawn fail with EFAULT
    with _LIVE_LOCK:
        if _STOPPING.is_set():
            raise RuntimeError("the session is ending")
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=_environ())
        _LIVE.add(proc)
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    report_path = report_dir / "report.json"
    assert report_path.exists(), f"no report written (exit {proc.returncode})\n{out[-3000:]}\n{err[-3000:]}"
    return proc.returncode, json.loads(report_path.read_text())


def test_defects_are_well_formed() -> None:
    reqs = catalogue()
    assert len(DEFECTS) >= 3
    for d in DEFECTS:
        assert d.requirement in reqs, f"defect {d.name} names unknown requirement {d.requirement}"
        req = reqs[d.requirement]
        assert req.level in (Level.MUST, Level.SHOULD), f"defect {d.name}: a MAY cannot be violated"
        for v in d.versions:
            assert req.applies_to(v, d.transport), f"defect {d.name}: {d.requirement} does not apply to {v}/{d.transport}"


@pytest.fixture(scope="module")
def suite_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefetch[str]]:
    """The selected defects' runs, each started when its first test asks for it together with the
    next ``JOBS - 1`` in test order (tests/prefetch.py: under xdist a worker runs only its share)."""
    selected = [
        item.callspec.params["d"] for item in request.session.items
        if item.module is sys.modules[__name__] and hasattr(item, "callspec") and "d" in item.callspec.params
    ]
    by_name = {d.name: d for d in selected}  # one run per defect, however many tests look at it
    runs = Prefetch(list(by_name), lambda name: _run_suite(by_name[name], tmp_path_factory.mktemp(name)), JOBS,
                    name="defect")
    try:
        yield runs
    finally:
        runs.close(stop=_stop_live_runs)  # the session ended before every run was waited for
        _STOPPING.clear()


@pytest.mark.parametrize("d", DEFECTS, ids=lambda d: d.name)
def test_suite_flags_exactly_the_broken_requirement(d: registry.Defect, suite_runs: Prefetch[str]) -> None:
    req = catalogue()[d.requirement]
    expected = "fail" if req.level is Level.MUST else "warning"
    code, report = suite_runs[d.name].result()
    flagged = sorted({(r["requirement"], r["outcome"]) for r in report["results"] if r["outcome"] in FLAGGED})
    assert flagged == [(d.requirement, expected)], (
        f"defect {d.name!r} ({d.description}) should be reported as {d.requirement}={expected} and nothing else; "
        f"the suite reported {flagged}; errors: {report.get('errors')}"
    )
    # a MUST fail gates the run; a SHOULD warning does not (outside --strict); a server that never
    # answered anything within the run (initialize answered after 30 s) exits 3 with its verdict
    answered = report["implementation"]["answered"]
    assert answered or d.name in NEVER_ANSWER, f"{d.name}: the report says it never answered"
    assert code == (3 if not answered else 1 if expected == "fail" else 0)


# servers that never send a JSON-RPC message the run can read (exit 3: "the target never answered")
NEVER_ANSWER = ("initialize-slow", "initialize-slow-http", "http-never-writes", "http-headers-then-nothing",
                "sse-never-writes", "sse-headers-then-nothing", "initialize-2x-timeout", "initialize-2x-timeout-http",
                "initialize-2x-timeout-sse")

UNUSABLE = {  # defect -> what the one verdict says, and what every other result of the version says
    "initialize-slow": ("InitializeUnanswered", "did not answer initialize"),
    "initialize-slow-http": ("InitializeUnanswered", "did not answer initialize"),
    "http-session-never-issued": ("SessionUnusable", "session cannot be used"),
}


@pytest.mark.parametrize("d", [registry.get(n) for n in UNUSABLE], ids=lambda d: d.name)
def test_an_unusable_version_is_one_verdict_and_everything_else_is_skipped_with_its_reason(
        d: registry.Defect, suite_runs: Prefetch[str]) -> None:
    """No scenario waits for the timeout again: apart from the one failed requirement, every
    result of every version the run covered is a skip whose reason names the unusable session."""
    problem, reason = UNUSABLE[d.name]
    _, report = suite_runs[d.name].result()
    failed = [r for r in report["results"] if r["outcome"] == "fail"]
    assert {r["requirement"] for r in failed} == {d.requirement}
    assert {r["version"] for r in failed} == set(d.versions)
    assert all(v["problem"] == problem for r in failed for v in r["violations"])
    others = [r for r in report["results"] if r["outcome"] != "fail"]
    assert others and all(r["outcome"] == "skip" and reason in r["reason"] for r in others), \
        sorted({(r["outcome"], r["reason"]) for r in others if r["outcome"] != "skip" or reason not in r["reason"]})[:5]


SILENT = {  # issue 23: silence in every form, on every transport -> (problem, what the skips say)
    "initialize-2x-timeout": ("InitializeUnanswered", "did not answer initialize"),
    "initialize-2x-timeout-http": ("InitializeUnanswered", "did not answer initialize"),
    "initialize-2x-timeout-sse": ("InitializeUnanswered", "did not answer initialize"),
    "first-post-slow-http": ("InitializeUnanswered", "did not answer initialize"),
    "first-post-slow-sse": ("InitializeUnanswered", "did not answer initialize"),
    "http-never-writes": ("InitializeUnanswered", "did not answer initialize"),
    "http-headers-then-nothing": ("InitializeUnanswered", "did not answer initialize"),
    "sse-never-writes": ("NoEndpointEvent", "never became usable"),
    "sse-headers-then-nothing": ("NoEndpointEvent", "never became usable"),
    "initialized-notification-held-http": ("NoResponse", "did not answer the POST of notifications/initialized"),
    "initialized-notification-held-sse": ("NoResponse", "did not answer the POST of notifications/initialized"),
}


@pytest.mark.parametrize("d", [registry.get(n) for n in SILENT], ids=lambda d: d.name)
def test_silence_in_any_form_is_one_verdict_per_version_never_an_error(
        d: registry.Defect, suite_runs: Prefetch[str]) -> None:
    """A request left unanswered -- no JSON-RPC response, no HTTP response headers, a body that
    never ends, no SSE endpoint event -- is the target's failure, never an error of ours; a version
    whose handshake went unanswered is that one verdict, and every other result of the version is a
    skip naming it (so nothing else of the version waited the timeout again).  Initialize-based
    versions the silence did not reach (the slow first POST) and 2026-07-28 run as usual."""
    problem, reason = SILENT[d.name]
    code, report = suite_runs[d.name].result()
    assert report["errors"] == [] and not [r for r in report["results"] if r["outcome"] == "error"]
    failed = [r for r in report["results"] if r["outcome"] == "fail"]
    assert {r["requirement"] for r in failed} == {d.requirement}
    assert all(v["problem"] == problem for r in failed for v in r["violations"])
    unusable = {r["version"] for r in failed}
    if d.name.startswith("first-post-slow"):
        assert len(unusable) == 1, unusable  # one POST was slow: one version lost its handshake
    else:
        assert unusable == set(d.versions)
    for version in unusable:
        others = [r for r in report["results"] if r["version"] == version and r["outcome"] != "fail"]
        assert others and all(r["outcome"] == "skip" and reason in r["reason"] for r in others), \
            sorted({(r["outcome"], r["reason"]) for r in others if r["outcome"] != "skip" or reason not in r["reason"]})[:5]
    assert code == (1 if report["implementation"]["answered"] else 3)


@pytest.mark.parametrize("name", ["initialize-2x-timeout", "initialize-2x-timeout-http"])
def test_a_slow_handshake_with_version_all_is_one_verdict_per_version_and_exit_1(name: str, tmp_path: Path) -> None:
    """The issue's run: ``--version all`` against a server that answers initialize after twice the
    timeout (over HTTP holding the POST without response headers).  Each initialize-based version
    is one lifecycle.initialize.result failure with the rest of it skipped; 2026-07-28 (no
    initialize) runs as usual and answers, so the run exits 1 -- with no error of ours."""
    from dataclasses import replace

    from conformance.spec.versions import VERSIONS

    d = replace(registry.get(name), versions=tuple(VERSIONS))
    code, report = _run_suite(d, tmp_path)
    assert report["errors"] == []
    flagged = sorted({(r["requirement"], r["version"], r["outcome"]) for r in report["results"] if r["outcome"] in FLAGGED})
    handshake = [v for v in VERSIONS if v != "2026-07-28" and (v != "2024-11-05" or d.transport == "stdio")]
    assert flagged == [("lifecycle.initialize.result", v, "fail") for v in handshake]
    modern = [r for r in report["results"] if r["version"] == "2026-07-28"]
    assert any(r["outcome"] == "pass" for r in modern)
    assert report["implementation"]["answered"] and code == 1


def test_a_get_stream_that_never_opens_is_the_servers_failure_never_an_error(tmp_path: Path) -> None:
    """A streamable HTTP server that answers every POST and holds the GET of the endpoint without
    response headers: transport.http.get.sse-or-405 fails (and what needs the GET stream), nothing is
    an error of ours, exit 1."""
    launch = (f"import sys; sys.path[:0] = [{str(BROKEN)!r}, {str(ROOT)!r}]; import defects_bounded; "
              "defects_bounded.get_never_opens(); from reference_server.__main__ import main; sys.exit(main(sys.argv[1:]))")
    cmd = subprocess.list2cmdline([sys.executable, "-c", launch, "--transport", "streamable-http", "--port", "{port}"])
    argv = [sys.executable, "-m", "conformance.cli", "server", "--command", cmd, "--url", "http://127.0.0.1:{port}/mcp",
            "--transport", "streamable-http", "--version", "2025-11-25", "--timeout", "2", "--report-dir", str(tmp_path),
            "--report-format", "none"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=_environ(), timeout=300)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["errors"] == [] and not [r for r in report["results"] if r["outcome"] == "error"]
    failed = {r["requirement"] for r in report["results"] if r["outcome"] == "fail"}
    assert "transport.http.get.sse-or-405" in failed
    assert all(r["violations"] and "GET" in r["violations"][0]["message"] for r in report["results"] if r["outcome"] == "fail")
    assert proc.returncode == 1
