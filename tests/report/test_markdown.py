"""The Markdown step summary."""

from __future__ import annotations

import re

from conformance.report import summary as S
from conformance.report.markdown import MAX_ITEMS, render_markdown

from .conftest import hostile_report, stored


def test_verdict_scores_and_counts(real_report: dict) -> None:
    md = render_markdown(real_report)
    verdict = S.verdict(real_report)
    assert md.splitlines()[0].startswith("## MCP conformance:") and verdict.split("-")[0] in md.splitlines()[0]
    for lvl in ("MUST", "SHOULD"):
        sc = S.score(real_report["results"], lvl)
        assert f"| {lvl} | {S.percent_text(sc['passed'], sc['checked'])} | {sc['passed']} / {sc['checked']} |" in md
    for outcome, n in S.counts(real_report["results"]).items():
        if n:
            assert f" {n} {outcome}" in md
    assert f"exit code {real_report['exit_code']}" in md


def test_every_failing_requirement_is_listed_with_its_spec_link(real_report: dict) -> None:
    md = render_markdown(real_report)
    for r in real_report["results"]:
        if r["outcome"] in ("fail", "stale", "error"):
            assert f"`{r['requirement']}`" in md
            if r["outcome"] == "fail":
                assert f"]({r['url']})" in md


def test_identical_failures_on_several_versions_are_said_once() -> None:
    rep = stored("report-server-everything-stdio.json.gz")
    md = render_markdown(rep)
    line = next(l for l in md.splitlines() if "`jsonrpc.error.parse-error`" in l)
    failing_versions = [r["version"] for r in rep["results"] if r["requirement"] == "jsonrpc.error.parse-error" and r["outcome"] == "fail"]
    assert len(failing_versions) > 1 and all(v in line for v in failing_versions)
    assert md.count("`jsonrpc.error.parse-error`") == 1


def test_baseline_section() -> None:
    md = render_markdown(stored("report-broken-ping-baseline.json.gz"))
    assert "### Baseline" in md and "1 stale" in md and "`server-initialize`" in md and "### Expected failures" in md


def test_hostile_strings_are_escaped() -> None:
    md = render_markdown(hostile_report())
    assert "\x00" not in md and "\x1b" not in md and "\\x1b" in md  # control characters made visible
    # code spans are literal in Markdown; everywhere else no markup survives
    outside = re.sub(r"(`+)(?:(?!\1).)*?\1", "", md)
    assert "<" not in outside and "HostileProblem" in outside
    spans = re.findall(r"(`+) ?((?:(?!\1).)*?) ?\1(?!`)", md)
    assert any("<script>alert(1)</script>" in body and "`x`" in body for fence, body in spans if len(fence) == 2)


def test_long_lists_are_capped() -> None:
    rep = stored("report-server-everything-stdio.json.gz")
    template = next(r for r in rep["results"] if r["outcome"] == "fail")
    rep["results"] = [dict(template, requirement=f"many.r{i:03d}") for i in range(MAX_ITEMS + 7)]
    md = render_markdown(rep)
    assert "… and 7 more in report.html" in md
    assert len(md.encode()) < 1024 * 1024
