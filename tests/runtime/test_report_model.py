"""The report model: merging observations, summaries, exit codes, the JSON Schema.  Pure."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from conformance.spec.outcomes import OUTCOME_ORDER, Outcome, worst
from conformance.report.model import (
    MAX_TRANSCRIPT,
    MAX_VIOLATIONS,
    RequirementResult,
    build_report,
    exit_code,
    summarize,
)
from conformance.spec.requirements import catalogue

from .conftest import validate_report

V = "2025-11-25"


def _violation(n: int = 0) -> dict:
    return {"requirement": "ping.response", "problem": "NonEmptyPingResult", "message": f"bad {n}", "expected": {},
            "actual": {"n": n}, "json_path": "$.result", "transcript": [n], "outcome": "fail", "level": "MUST"}


@pytest.mark.parametrize("first,second", list(itertools.product([Outcome.PASS, Outcome.FAIL, Outcome.WARNING, Outcome.SKIP, Outcome.ERROR], repeat=2)))
def test_the_worst_observation_wins_and_a_skip_never_hides_a_check(first: Outcome, second: Outcome) -> None:
    r = RequirementResult("ping.response", V, "stdio")
    r.record(first, reason="why" if first in (Outcome.SKIP, Outcome.ERROR) else None)
    r.record(second, reason="why" if second in (Outcome.SKIP, Outcome.ERROR) else None)
    assert r.outcome is max((first, second), key=OUTCOME_ORDER.__getitem__)
    assert r.outcome is worst([first, second])
    if r.outcome in (Outcome.PASS, Outcome.FAIL, Outcome.WARNING):
        assert r.to_json(None)["reason"] is None
    else:
        assert r.reason == "why"


def test_violations_and_transcripts_are_bounded() -> None:
    r = RequirementResult("ping.response", V, "stdio")
    for n in range(MAX_VIOLATIONS + 5):
        r.record(Outcome.FAIL, violation=_violation(n), transcript=[{"connection": "c", "seq": n * 3 + k} for k in range(3)])
    assert len(r.violations) == MAX_VIOLATIONS and r.violations_dropped == 5
    assert len(r.transcript) == MAX_TRANSCRIPT
    assert r.checks == MAX_VIOLATIONS + 5


def test_default_reason_is_used_only_while_nothing_else_happened() -> None:
    r = RequirementResult("ping.response", V, "stdio", default_reason="not run")
    assert r.to_json(None)["reason"] == "not run"
    r.record(Outcome.SKIP, reason="ping was removed")
    assert r.to_json(None)["reason"] == "ping was removed"
    r.record(Outcome.PASS)
    assert r.to_json(None)["reason"] is None


def _report(outcomes: dict[str, Outcome], **kw) -> dict:
    results = []
    for rid, outcome in outcomes.items():
        r = RequirementResult(rid, V, "stdio")
        r.record(outcome, reason="r" if outcome in (Outcome.SKIP, Outcome.ERROR) else None,
                 violation=_violation() if outcome in (Outcome.FAIL, Outcome.WARNING) else None)
        if r.violations:
            r.violations[0]["outcome"] = outcome.value
        results.append(r)
    args = dict(suite_version="0", started=1_700_000_000.0, finished=1_700_000_001.5, status="complete",
                target={"transport": "stdio", "command": ["x"], "url": None, "description": "stdio: x"},
                transport="stdio", versions=[V], strict=False, selection={"select": [], "exclude": []},
                results=results, requirements=catalogue())
    args.update(kw)
    return build_report(**args)


def test_built_reports_match_the_schema_and_count_by_outcome_and_level() -> None:
    rep = _report({"ping.response": Outcome.PASS, "discover.server-info": Outcome.WARNING, "jsonrpc.error.parse-error": Outcome.SKIP})
    validate_report(rep)
    assert rep["started"] == "2023-11-14T22:13:20.000Z" and rep["duration"] == 1.5
    assert rep["summary"]["total"] == 3
    assert rep["summary"]["by_outcome"]["warning"] == 1
    assert rep["summary"]["by_level"]["SHOULD"]["warning"] == 1 and rep["summary"]["by_level"]["MUST"]["pass"] == 1
    assert {**summarize(rep["results"]), "not_applicable": len(rep["not_applicable"])} == rep["summary"]


@pytest.mark.parametrize(
    ("outcomes", "kw", "code"),
    [
        ({"ping.response": Outcome.PASS, "discover.server-info": Outcome.WARNING}, {}, 0),
        ({"ping.response": Outcome.FAIL}, {}, 1),
        ({"ping.response": Outcome.ERROR}, {"errors": [{"kind": "harness", "message": "bug"}]}, 1),
        ({"ping.response": Outcome.ERROR}, {"errors": [{"kind": "target", "message": "refused"}]}, 3),
        ({"ping.response": Outcome.FAIL}, {"status": "interrupted"}, 130),
        ({}, {"status": "usage-error"}, 2),
    ],
)
def test_exit_codes(outcomes, kw, code: int) -> None:
    rep = _report(outcomes, **kw)
    validate_report(rep)
    assert rep["exit_code"] == exit_code(rep) == code


def test_the_report_layer_imports_no_io() -> None:
    code = (
        "import sys, conformance.report.model, conformance.report\n"
        "bad = [m for m in ('anyio', 'httpx', 'subprocess', 'asyncio', 'socket', 'conformance.runtime.peer', 'conformance.transports') if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
