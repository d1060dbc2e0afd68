"""JUnit XML: valid against the JUnit XSD, one testcase per result, outcomes mapped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import lru_cache

import xmlschema

from conformance.report import summary as S
from conformance.report.junit import render_junit

from .conftest import XSD_FILE, hostile_report, stored


@lru_cache(maxsize=1)
def _xsd() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD_FILE))


def test_valid_against_the_junit_xsd(real_report: dict) -> None:
    _xsd().validate(render_junit(real_report))


def test_the_xsd_rejects_what_junit_readers_reject() -> None:
    assert not _xsd().is_valid('<testsuites><testsuite name="x" tests="1"/></testsuites>')  # failures/errors required
    assert not _xsd().is_valid('<testsuites><testsuite name="x" tests="1" failures="0" errors="0"><testcase/></testsuite></testsuites>')
    assert not _xsd().is_valid('<testsuites><testsuite name="x" tests="0" failures="0" errors="0" time="1e-3"/></testsuites>')


def test_one_testcase_per_result_with_its_outcome(real_report: dict) -> None:
    root = ET.fromstring(render_junit(real_report))
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert len(cases) == len(real_report["results"]) == len(list(root.iter("testcase")))
    for r in real_report["results"]:
        case = cases[(f"mcp-conformance.{r['version']}.{r['transport']}", r["requirement"])]
        kinds = [child.tag for child in case if child.tag != "system-out"]
        expected = {"pass": [], "warning": [], "fail": ["failure"], "stale": ["failure"], "skip": ["skipped"],
                    "xfail": ["skipped"], "error": ["error"]}[r["outcome"]]
        assert kinds == expected, (r["requirement"], r["outcome"], kinds)
        if r["outcome"] == "skip":
            assert case.find("skipped").get("message") == r["reason"]
        if r["outcome"] == "fail":
            failure = case.find("failure")
            assert failure.get("type") == r["violations"][0]["problem"]
            assert r["quote"] in failure.text and r["url"] in failure.text
        if r["outcome"] == "warning":
            assert r["violations"][0]["problem"] in case.find("system-out").text


def test_suite_counts_match_the_report(real_report: dict) -> None:
    root = ET.fromstring(render_junit(real_report))
    counts = S.counts(real_report["results"])
    assert int(root.get("tests")) == len(real_report["results"])
    assert int(root.get("failures")) == counts["fail"] + counts["stale"]
    assert int(root.get("errors")) == counts["error"]
    suites = [s for s in root.iter("testsuite") if s.get("name") != "mcp-conformance run"]
    assert sum(int(s.get("skipped")) for s in suites) == counts["skip"] + counts["xfail"]
    assert {s.get("name") for s in suites} == {f"mcp-conformance {r['version']} {r['transport']}" for r in real_report["results"]}


def test_warnings_are_suite_properties() -> None:
    rep = stored("report-server-everything-stdio.json.gz")
    root = ET.fromstring(render_junit(rep))
    props = [(p.get("name"), p.get("value")) for p in root.iter("property")]
    warned = [r for r in rep["results"] if r["outcome"] == "warning"]
    assert warned
    assert sum(int(v) for k, v in props if k == "mcp.warnings") == len(warned)
    assert len([1 for k, _ in props if k == "mcp.warning"]) == len(warned)


def test_run_problems_are_reported() -> None:
    rep = stored("report-broken-ping-baseline.json.gz")
    assert rep["errors"]
    root = ET.fromstring(render_junit(rep))
    err = [s for s in root.iter("testsuite") if s.get("name") == "mcp-conformance run"][0].find("system-err").text
    assert rep["errors"][0]["message"][:80] in err


def test_hostile_strings_stay_valid_xml() -> None:
    rep = hostile_report()
    xml = render_junit(rep)
    _xsd().validate(xml)
    root = ET.fromstring(xml)
    failure = next(root.iter("failure"))
    assert "<script>alert(1)</script>" in failure.get("message")  # escaped on the wire, intact once parsed
    assert "\\x00" in failure.get("message") and "\x00" not in xml and "\x1b" not in xml
