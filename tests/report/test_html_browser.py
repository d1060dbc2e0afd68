"""The HTML report in a real browser: headless Chromium (Debian ``chromium``) loads the file.

The page's script runs (so the Content-Security-Policy hashes are right), nothing is refused by
the policy, the counts the page shows after its script ran equal report.json's, the filters in the
URL fragment show exactly the matching results, and a screenshot can be taken.

Skipped, with the reason, where Chromium is not installed (``.ci/run`` installs it on Debian).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conformance.report import summary as S
from conformance.report.html import render_html

from .conftest import stored

CHROMIUM = os.environ.get("MCP_CONFORMANCE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (Debian: apt-get install -y chromium; or set MCP_CONFORMANCE_CHROMIUM)",
)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0"]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=90)


def _load(tmp_path: Path, page: Path, fragment: str = "") -> tuple[str, str]:
    proc = _chromium(tmp_path, "--dump-dom", page.as_uri() + fragment)
    assert proc.returncode == 0 and "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def _attr(dom: str, element_id: str, attr: str) -> str:
    m = re.search(rf'<[^>]*\bid="{re.escape(element_id)}"[^>]*>', dom)
    assert m, element_id
    a = re.search(rf'\b{attr}="([^"]*)"', m.group(0))
    assert a, (element_id, attr)
    return a.group(1)


def _output(dom: str, element_id: str) -> int:
    m = re.search(rf'<output id="{element_id}">(\d+)</output>', dom)
    assert m, element_id
    return int(m.group(1))


def _write(tmp_path: Path, report: dict) -> Path:
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def everything() -> dict:
    return stored("report-server-everything-stdio.json.gz")


def test_the_page_runs_under_its_policy_and_shows_report_json_counts(tmp_path: Path, everything: dict) -> None:
    dom, log = _load(tmp_path, _write(tmp_path, everything))
    assert 'data-ready="1"' in dom, "the page's script did not run"
    assert "Content Security Policy" not in log, [l for l in log.splitlines() if "Content Security Policy" in l][:3]
    summary = everything["summary"]
    # what the script counted in the rendered table, one cell per result
    dom_counts = json.loads(html.unescape(re.search(r'data-dom-counts="([^"]*)"', dom).group(1)))
    assert dom_counts == {o: n for o, n in summary["by_outcome"].items() if n}
    for outcome, n in summary["by_outcome"].items():
        assert _attr(dom, f"count-{outcome}", "data-count") == str(n)
    for lvl in ("MUST", "SHOULD"):
        sc = summary["scores"][lvl]
        assert (_attr(dom, f"score-{lvl}", "data-passed"), _attr(dom, f"score-{lvl}", "data-checked")) == (str(sc["passed"]), str(sc["checked"]))
    findings = [r for r in everything["results"] if r["outcome"] in ("fail", "warning", "error", "xfail", "stale")]
    assert _output(dom, "shown-results") == summary["total"]
    assert _output(dom, "shown-findings") == len(findings)
    assert _output(dom, "shown-rows") == len({r["requirement"] for r in everything["results"]})


@pytest.mark.parametrize("outcomes", [["fail"], ["warning", "skip"]])
def test_outcome_filter_in_the_fragment(tmp_path: Path, everything: dict, outcomes: list[str]) -> None:
    dom, _ = _load(tmp_path, _write(tmp_path, everything), "#outcome=" + ",".join(outcomes))
    results = everything["results"]
    assert _output(dom, "shown-results") == sum(1 for r in results if r["outcome"] in outcomes)
    assert _output(dom, "shown-findings") == sum(1 for r in results if r["outcome"] in outcomes and r["outcome"] in ("fail", "warning"))
    assert _output(dom, "shown-rows") == len({r["requirement"] for r in results if r["outcome"] in outcomes})
    shown_articles = re.findall(r'<article class="finding[^"]*"[^>]*data-outcome="([a-z]+)"(?![^>]*hidden)', dom)
    assert set(shown_articles) <= set(outcomes) and len(shown_articles) == _output(dom, "shown-findings")


def test_area_filter_in_the_fragment(tmp_path: Path, everything: dict) -> None:
    area, n = Counter(r["area"] for r in everything["results"] if r["outcome"] in ("fail", "warning")).most_common(1)[0]
    dom, _ = _load(tmp_path, _write(tmp_path, everything), f"#area={area}")
    assert _output(dom, "shown-results") == sum(1 for r in everything["results"] if r["area"] == area)
    assert _output(dom, "shown-findings") == n


def test_a_report_with_a_baseline_and_run_problems(tmp_path: Path) -> None:
    rep = stored("report-broken-ping-baseline.json.gz")
    dom, log = _load(tmp_path, _write(tmp_path, rep))
    assert 'data-ready="1"' in dom and "Content Security Policy" not in log
    assert _attr(dom, "baseline-stale", "data-count") == str(len(rep["baseline"]["stale"]))
    assert _attr(dom, "verdict", "data-verdict") == S.verdict(rep)
    assert _output(dom, "shown-results") == rep["summary"]["total"]


def test_a_screenshot_of_the_page(tmp_path: Path, everything: dict) -> None:
    shot = tmp_path / "report.png"
    proc = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,1800", _write(tmp_path, everything).as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a rendered page, not a blank one
