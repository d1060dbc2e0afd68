"""pytest-html, when it is active: Requirement, Level and Spec columns (:class:`PytestHtml`,
registered by the plugin only then) and an item's requirements -- sentence, violations, wire
exchange -- as an extra (:func:`add_html_extras`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from conformance.spec.requirements import catalogue

if TYPE_CHECKING:
    from conformance.plugin.items import McpItem

__all__ = ["PytestHtml", "add_html_extras"]


def _requirements_of(report: pytest.TestReport) -> list[tuple[str, str, str]]:
    out = []
    for key, value in report.user_properties:
        if key == "mcp_requirement":
            rid, level, url = (str(value).split(" ", 2) + ["", ""])[:3]
            out.append((rid, level, url))
    return out


class PytestHtml:
    """pytest-html hooks: Requirement, Level and Spec columns (registered only when it is active)."""

    @staticmethod
    def pytest_html_results_table_header(cells: list[str]) -> None:
        cells.insert(2, '<th class="sortable" data-column-type="mcpRequirement">Requirement</th>')
        cells.insert(3, '<th class="sortable" data-column-type="mcpLevel">Level</th>')
        cells.insert(4, "<th>Spec</th>")

    @staticmethod
    def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
        from html import escape

        reqs = _requirements_of(report)
        levels = [lvl for lvl in ("MUST", "SHOULD", "MAY") if any(r[1] == lvl for r in reqs)]
        links = "<br>".join(
            f'<a href="{escape(url)}" target="_blank" rel="noreferrer noopener">{escape(url.rsplit("/", 1)[-1])}</a>'
            for _, _, url in reqs if url.startswith(("https://", "http://"))
        )
        cells.insert(2, f'<td class="col-mcpRequirement">{"<br>".join(escape(r[0]) for r in reqs)}</td>')
        cells.insert(3, f'<td class="col-mcpLevel">{escape(levels[0]) if levels else ""}</td>')
        cells.insert(4, f'<td class="col-mcpSpec">{links}</td>')


def add_html_extras(item: McpItem, report: pytest.TestReport) -> None:
    """The item's requirements (sentence, violations, wire exchange) as a pytest-html extra."""
    from pytest_html import extras

    from conformance.report.html import render_extra

    runner = item.run.runner
    if runner is None:
        return
    reqs = catalogue()
    transport = item.run.target.transport.value
    rows = []
    for rid, _, _ in _requirements_of(report):
        res = runner.results.get((rid, item.version, transport))
        if res is not None:
            row = res.to_json(reqs.get(rid))
            row["violations"] = [v for v in row["violations"] if v.get("scenario") in (None, item.scenario.id)]
            rows.append(row)
    if rows:
        report.extras = [*getattr(report, "extras", []), extras.html(render_extra(rows))]
