"""report.json: every produced report matches report.schema.json, and the schema is strict."""

from __future__ import annotations

import copy

import pytest

from conformance.report.baseline import apply_baseline, parse_baseline
from conformance.report.model import exit_code, summarize

from .conftest import STORED, schema_errors, small, stored, validate_report


def test_real_reports_match_the_schema(real_report: dict) -> None:
    validate_report(real_report)


def test_the_live_report_matches_the_schema(live_report: dict) -> None:
    validate_report(live_report)


def test_summary_and_exit_code_are_what_the_results_say(real_report: dict) -> None:
    assert real_report["summary"] == summarize(real_report["results"])
    assert real_report["exit_code"] == exit_code(real_report)
    by_area = real_report["summary"]["by_area"]
    assert sum(a["total"] for a in by_area.values()) == real_report["summary"]["total"] == len(real_report["results"])


@pytest.mark.parametrize("name", STORED)
def test_reports_with_a_baseline_applied_match_the_schema(name: str) -> None:
    rep = small(stored(name), per_outcome=25)
    failing = sorted({r["requirement"] for r in rep["results"] if r["outcome"] in ("fail", "warning")})
    passing = sorted({r["requirement"] for r in rep["results"] if r["outcome"] == "pass"})
    text = "\n".join(failing[:3] + passing[:2] + ["no.such.requirement"])
    validate_report(apply_baseline(rep, parse_baseline(text)))


def _mutations() -> list[tuple[str, object]]:
    def top_key(r: dict) -> None:
        r["surprise"] = 1

    def result_key(r: dict) -> None:
        r["results"][0]["surprise"] = 1

    def entry_key(r: dict) -> None:
        next(x for x in r["results"] if x["transcript"])["transcript"][0]["surprise"] = 1

    def xfail_without_baseline(r: dict) -> None:
        x = next(x for x in r["results"] if x["outcome"] == "fail")
        x["outcome"] = "xfail"

    def fail_without_violation(r: dict) -> None:
        x = next(x for x in r["results"] if x["outcome"] == "fail")
        x["violations"] = []

    def skip_without_reason(r: dict) -> None:
        x = next(x for x in r["results"] if x["outcome"] == "skip")
        x["reason"] = None

    def summary_without_scores(r: dict) -> None:
        del r["summary"]["scores"]

    def unknown_outcome(r: dict) -> None:
        r["results"][0]["outcome"] = "flaky"

    def raw_without_text_or_base64(r: dict) -> None:
        next(x for x in r["results"] if x["transcript"])["transcript"][0]["raw"] = {}

    def bad_violation_problem(r: dict) -> None:
        next(x for x in r["results"] if x["outcome"] == "fail")["violations"][0]["problem"] = "not a Noun Problem"

    return [(f.__name__, f) for f in (top_key, result_key, entry_key, xfail_without_baseline, fail_without_violation,
                                      skip_without_reason, summary_without_scores, unknown_outcome,
                                      raw_without_text_or_base64, bad_violation_problem)]


@pytest.mark.parametrize("name,mutate", _mutations(), ids=[n for n, _ in _mutations()])
def test_the_schema_rejects_what_a_report_never_holds(name: str, mutate) -> None:
    rep = small(stored("report-server-everything-stdio.json.gz"))
    validate_report(rep)
    broken = copy.deepcopy(rep)
    mutate(broken)
    assert schema_errors(broken), f"the schema accepted a report with {name}"


def test_exit_code_3_only_when_nothing_was_judged() -> None:
    from conformance.report.model import EXIT_FAILED, EXIT_TARGET, exit_code

    target_error = [{"kind": "target", "message": "the server process exited during the run"}]
    never = {"status": "target-error", "errors": target_error, "summary": {"by_outcome": {"error": 5, "skip": 3}}}
    assert exit_code(never) == EXIT_TARGET
    reached = {"status": "complete", "errors": target_error, "summary": {"by_outcome": {"pass": 4, "fail": 2, "error": 5}}}
    assert exit_code(reached) == EXIT_FAILED
    passed_then_lost = {"status": "target-error", "errors": target_error, "summary": {"by_outcome": {"pass": 4, "error": 1}}}
    assert exit_code(passed_then_lost) == EXIT_FAILED


def test_exit_code_3_when_the_target_never_answered_even_with_verdicts() -> None:
    from conformance.report.model import EXIT_FAILED, EXIT_TARGET, exit_code

    silent = {"status": "complete", "errors": [], "implementation": {"answered": False},
              "summary": {"by_outcome": {"fail": 4, "skip": 400}}}
    assert exit_code(silent) == EXIT_TARGET
    slow = {"status": "complete", "errors": [], "implementation": {"answered": True},
            "summary": {"by_outcome": {"fail": 4, "skip": 400}}}
    assert exit_code(slow) == EXIT_FAILED
