"""The badge: shields-style SVG and endpoint JSON, coloured by score."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conformance.report import badge as B
from conformance.report import summary as S

from .conftest import stored

SVG = "{http://www.w3.org/2000/svg}"


def _report(must: tuple[int, int], should: tuple[int, int] = (0, 0), *, strict: bool = False, versions=("2025-11-25",),
            status: str = "complete", code: int = 0) -> dict:
    results = []
    for level, (passed, checked) in (("MUST", must), ("SHOULD", should)):
        results += [{"requirement": "r", "level": level, "outcome": "pass"}] * passed
        results += [{"requirement": "r", "level": level, "outcome": "fail"}] * (checked - passed)
    return {"versions": list(versions), "results": results, "strict": strict, "status": status, "exit_code": code}


# shields' coverage colours: the thresholds are the definition being tested
@pytest.mark.parametrize("passed,checked,color", [
    (100, 100, "brightgreen"), (99, 100, "green"), (95, 100, "green"), (94, 100, "yellowgreen"), (90, 100, "yellowgreen"),
    (89, 100, "yellow"), (75, 100, "yellow"), (74, 100, "orange"), (50, 100, "orange"), (49, 100, "red"), (0, 5, "red"),
    (0, 0, "lightgrey"),
])
def test_colour_by_score(passed: int, checked: int, color: str) -> None:
    assert B.color_for(passed, checked) == color


def test_the_message_is_the_must_score_rounded_down() -> None:
    f = B.badge_fields(_report((4999, 5000)))
    assert f == {"label": "MCP 2025-11-25", "message": "MUST 99.9%", "color": "green"}
    assert B.badge_fields(_report((3, 3)))["message"] == "MUST 100%"


def test_strict_adds_the_should_score_and_the_worse_colour() -> None:
    f = B.badge_fields(_report((3, 3), (1, 2), strict=True))
    assert f["message"] == f"MUST 100% · SHOULD {S.percent_text(1, 2)}" and f["color"] == "orange"
    assert B.badge_fields(_report((3, 3), (1, 2)))["message"] == "MUST 100%"


def test_runs_without_a_score() -> None:
    assert B.badge_fields(_report((0, 0)))["message"] == "no MUST checked"
    assert B.badge_fields(_report((1, 1), status="target-error", code=3)) == {"label": "MCP 2025-11-25", "message": "unreachable", "color": "red"}
    assert B.badge_fields(_report((1, 1), status="interrupted", code=130))["color"] == "lightgrey"


def test_several_versions_are_named_as_a_range() -> None:
    assert B.badge_fields(_report((1, 1), versions=("2024-11-05", "2025-03-26", "2026-07-28")))["label"] == "MCP 2024-11-05–2026-07-28"


def test_endpoint_json_is_what_shields_reads(real_report: dict) -> None:
    data = B.badge_endpoint(real_report)
    assert set(data) == {"schemaVersion", "label", "message", "color"} and data["schemaVersion"] == 1
    must = S.score(real_report["results"], "MUST")
    assert data["message"] == f"MUST {S.percent_text(must['passed'], must['checked'])}"
    assert data["color"] == B.color_for(must["passed"], must["checked"])
    json.dumps(data)


def test_svg_is_well_formed_sized_to_its_text_and_coloured(real_report: dict) -> None:
    svg = B.badge_svg(real_report)
    root = ET.fromstring(svg)
    fields = B.badge_fields(real_report)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts == [fields["label"]] * 2 + [fields["message"]] * 2
    assert root.find(f"{SVG}title").text == f"{fields['label']}: {fields['message']}"
    width = int(root.get("width"))
    expected = round(B.text_width(fields["label"]) + 10) + round(B.text_width(fields["message"]) + 10)
    assert width == expected
    fills = [r.get("fill") for r in root.iter(f"{SVG}rect")]
    assert B.COLORS[fields["color"]] in fills


def test_text_width_grows_with_the_text() -> None:
    assert B.text_width("MUST 100%") > B.text_width("MUST 99%") > 0
    assert B.text_width("W") > B.text_width("i")


def test_svg_escapes_its_text() -> None:
    svg = B.render_svg('<a href="x">&', "1 < 2", "#4c1")
    root = ET.fromstring(svg)
    assert [t.text for t in root.iter(f"{SVG}text")][:2] == ['<a href="x">&'] * 2


def test_stored_reports_badges() -> None:
    rep = stored("report-reference-stdio.json.gz")
    assert B.badge_fields(rep)["message"] == "MUST 100%" and B.badge_fields(rep)["color"] == "brightgreen"
    rep = stored("report-server-everything-stdio.json.gz")
    assert B.badge_fields(rep)["color"] != "brightgreen"
