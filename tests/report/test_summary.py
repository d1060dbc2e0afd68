"""Scores, percentages and the matrix every renderer shares."""

from __future__ import annotations

import pytest

from conformance.report import summary as S


def _r(outcome: str, level: str = "MUST", area: str = "ping", version: str = "2025-11-25", transport: str = "stdio") -> dict:
    return {"requirement": f"{area}.x", "outcome": outcome, "level": level, "area": area, "version": version, "transport": transport}


def test_a_score_counts_what_holds_among_what_was_checked() -> None:
    results = [_r("pass"), _r("stale"), _r("fail"), _r("xfail"), _r("skip"), _r("error"), _r("warning", "SHOULD"), _r("pass", "SHOULD")]
    assert S.score(results, "MUST") == {"passed": 2, "checked": 4, "percent": 50.0}  # skip and error are not the server's
    assert S.score(results, "SHOULD") == {"passed": 1, "checked": 2, "percent": 50.0}
    assert S.score(results, "MAY") == {"passed": 0, "checked": 0, "percent": None}


@pytest.mark.parametrize("passed,checked", [(4999, 5000), (1, 3), (2, 3), (0, 7), (7, 7), (999, 1000), (1, 1000)])
def test_percentages_round_down_so_a_failure_never_reads_100(passed: int, checked: int) -> None:
    text = S.percent_text(passed, checked)
    value = float(text.rstrip("%"))
    exact = 100.0 * passed / checked
    assert value <= exact < value + 0.1 + 1e-9
    assert (text == "100%") == (passed == checked)


def test_nothing_checked_is_not_a_percentage() -> None:
    assert S.percent_text(0, 0) == "n/a"


def test_matrix_cells_hold_the_worst_outcome_and_the_counts() -> None:
    results = [_r("pass"), _r("fail"), _r("skip"), _r("pass", area="lifecycle"), _r("skip", area="lifecycle", version="2024-11-05"),
               _r("pass", transport="streamable-http")]
    mx = S.matrix(results, versions=["2024-11-05", "2025-11-25"], transports=["stdio"])
    assert mx.areas == ["lifecycle", "ping"]
    assert mx.columns == [("2024-11-05", "stdio"), ("2025-11-25", "stdio"), ("2025-11-25", "streamable-http")]
    cell = mx.cell("ping", "2025-11-25", "stdio")
    assert cell.outcome == "fail" and (cell.held, cell.checked, cell.total) == (1, 2, 3)
    assert mx.cell("lifecycle", "2024-11-05", "stdio").outcome == "skip"
    assert mx.cell("ping", "2024-11-05", "stdio").outcome is None


def test_the_real_report_matrix_accounts_for_every_result(real_report: dict) -> None:
    mx = S.matrix(real_report["results"], versions=real_report["versions"], transports=[real_report["transport"]])
    assert sum(c.total for c in mx.cells.values()) == len(real_report["results"])
    counts = S.counts(real_report["results"])
    assert {o: sum(c.counts.get(o, 0) for c in mx.cells.values()) for o in counts} == counts


@pytest.mark.parametrize("status,code,verdict", [("complete", 0, "passed"), ("complete", 1, "failed"), ("target-error", 3, "unreachable"),
                                                  ("interrupted", 130, "interrupted")])
def test_verdict(status: str, code: int, verdict: str) -> None:
    assert S.verdict({"status": status, "exit_code": code, "results": [_r("pass")]}) == verdict


def test_a_run_that_checked_nothing_is_not_called_passed() -> None:
    assert S.verdict({"status": "complete", "exit_code": 0, "results": [_r("skip")]}) == "empty"
