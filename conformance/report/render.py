"""Every rendering of a report, by format name: ``{file name: text}``.  Pure, no I/O.

The plugin (at the end of a run) and ``mcp-conformance report`` (offline) both write what
:func:`render` returns into the report directory, so the two always produce the same files.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

__all__ = ["FORMATS", "DEFAULT_FORMATS", "FILES", "render", "prepare", "parse_formats", "report_json"]

# format name -> the files it writes
FILES: dict[str, tuple[str, ...]] = {
    "json": ("report.json",),
    "html": ("report.html",),
    "junit": ("junit.xml",),
    "badge": ("badge.svg", "badge.json"),
    "markdown": ("summary.md",),
}
FORMATS: tuple[str, ...] = tuple(FILES)
DEFAULT_FORMATS: tuple[str, ...] = FORMATS


def report_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def _renderers() -> dict[str, Callable[[Mapping[str, Any]], str]]:
    from conformance.report.badge import badge_endpoint, badge_svg
    from conformance.report.html import render_html
    from conformance.report.junit import render_junit
    from conformance.report.markdown import render_markdown

    return {
        "report.json": report_json,
        "report.html": render_html,
        "junit.xml": render_junit,
        "badge.svg": badge_svg,
        "badge.json": lambda r: json.dumps(badge_endpoint(r), ensure_ascii=False) + "\n",
        "summary.md": render_markdown,
    }


def prepare(formats: Iterable[str] = DEFAULT_FORMATS) -> None:
    """Import the renderers of ``formats`` and compile the HTML templates ahead of :func:`render`
    (the plugin does it in the background while a run waits on its target)."""
    _renderers()
    if "html" in formats:
        from conformance.report.html import prepare as prepare_html

        prepare_html()


def parse_formats(values: Iterable[str] | None) -> tuple[str, ...]:
    """Format names from ``--report-format`` values (repeatable, comma-separated; ``all``,
    ``none`` = report.json only).  report.json is always written.  Raises ValueError."""
    chosen: list[str] = []
    given = [p.strip().lower() for v in (values or []) for p in str(v).split(",") if p.strip()]
    if not given:
        return DEFAULT_FORMATS
    for name in given:
        if name == "all":
            chosen += [f for f in FORMATS if f not in chosen]
        elif name == "none":
            continue
        elif name in FILES:
            if name not in chosen:
                chosen.append(name)
        else:
            raise ValueError(f"unknown report format {name!r}; use {', '.join(FORMATS)}, all or none")
    if "json" not in chosen:
        chosen.insert(0, "json")
    return tuple(f for f in FORMATS if f in chosen)


def render(report: Mapping[str, Any], formats: Iterable[str] = DEFAULT_FORMATS) -> dict[str, str]:
    """``{file name: text}`` for the given formats."""
    renderers = _renderers()
    out: dict[str, str] = {}
    for fmt in formats:
        for name in FILES[fmt]:
            out[name] = renderers[name](report)
    return out
