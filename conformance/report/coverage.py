"""Renderings of the coverage map (``mcp-conformance coverage``): text, Markdown, HTML, JSON.

Pure: takes the sentences of :mod:`conformance.spec.coverage` and returns a string.
"""

from __future__ import annotations

import html
import json
from typing import Iterable, Sequence

from conformance.spec.coverage import REASONS, STATUS_LABELS, STATUSES, Sentence, counts

__all__ = ["render", "summary", "FORMATS"]

FORMATS = ("text", "markdown", "html", "json")
_COLUMNS = ("sentences", *STATUSES)
_HEADERS = ("sentences", "checked", "not testable", "restatements", "authorization", "not yet checked")


def _share(c: dict[str, int]) -> str:
    return f"{100 * c['checked'] / c['sentences']:.0f} %" if c["sentences"] else "-"


def _by(sentences: Iterable[Sentence]) -> dict[str, dict[str, list[Sentence]]]:
    out: dict[str, dict[str, list[Sentence]]] = {}
    for s in sentences:
        out.setdefault(s.version, {}).setdefault(s.page, []).append(s)
    return out


def summary(sentences: Sequence[Sentence]) -> dict:
    """Counts per version (and per page) and over all versions."""
    grouped = _by(sentences)
    versions = {}
    for version, pages in grouped.items():
        flat = [s for rows in pages.values() for s in rows]
        c = counts(flat)
        versions[version] = {**c, "checked_share": _share(c), "pages": {p: counts(rows) for p, rows in pages.items()}}
    total = counts(sentences)
    return {"versions": versions, "total": {**total, "checked_share": _share(total)}}


def _where(s: Sentence) -> str:
    if s.status == "checked":
        return ", ".join(s.checked_by)
    if s.status == "not-testable":
        return REASONS.get(s.reason or "", s.reason or "") + (f" ({s.note})" if s.note else "")
    if s.status == "restatement":
        return f"restates {s.restates}" + (f" ({s.note})" if s.note else "")
    return s.note or ""


def _text(sentences: Sequence[Sentence], *, listing: bool, heading: str) -> str:
    summ = summary(sentences)
    width = max([len(p) for v in summ["versions"].values() for p in v["pages"]] + [12])
    lines = [heading, ""]
    head = f"{'':{width}}  " + "  ".join(f"{h:>{max(len(h), 5)}}" for h in _HEADERS) + "  checked share"

    def row(name: str, c: dict) -> str:
        return f"{name:{width}}  " + "  ".join(f"{c[k]:>{max(len(h), 5)}}" for k, h in zip(_COLUMNS, _HEADERS)) + f"  {_share(c):>13}"

    lines.append(head)
    for version, v in summ["versions"].items():
        lines.append(row(version, v))
    lines.append(row("all versions", summ["total"]))
    for version, pages in _by(sentences).items():
        lines += ["", f"{version}:", head]
        for page, rows in pages.items():
            lines.append(row(page, counts(rows)))
            if listing:
                for s in rows:
                    lines.append(f"    [{s.status}] {s.key} ({s.role}) {s.text}")
                    if _where(s):
                        lines.append(f"        {_where(s)}")
    return "\n".join(lines) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(sentences: Sequence[Sentence], *, listing: bool, heading: str) -> str:
    summ = summary(sentences)
    out = [f"# {heading}", "", "| version | " + " | ".join(_HEADERS) + " | checked share |",
           "|---|" + "---:|" * (len(_HEADERS) + 1)]
    for version, v in summ["versions"].items():
        out.append(f"| {version} | " + " | ".join(str(v[k]) for k in _COLUMNS) + f" | {v['checked_share']} |")
    t = summ["total"]
    out.append("| all versions | " + " | ".join(str(t[k]) for k in _COLUMNS) + f" | {t['checked_share']} |")
    for version, pages in _by(sentences).items():
        out += ["", f"## {version}", "", "| page | " + " | ".join(_HEADERS) + " | checked share |",
                "|---|" + "---:|" * (len(_HEADERS) + 1)]
        for page, rows in pages.items():
            c = counts(rows)
            out.append(f"| {page} | " + " | ".join(str(c[k]) for k in _COLUMNS) + f" | {_share(c)} |")
        if listing:
            for page, rows in pages.items():
                out += ["", f"### {version} {page}", "", "| status | sentence | where it stands |", "|---|---|---|"]
                for s in rows:
                    out.append(f"| {STATUS_LABELS[s.status]} | {_md_escape(s.text)} | {_md_escape(_where(s))} |")
    return "\n".join(out) + "\n"


_CSS = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 16px}"
    "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}td.n{text-align:right}"
    ".checked{background:#e6f4e6}.not-testable{background:#f0f0f0}.restatement{background:#f4f0e6}"
    ".authorization{background:#e8eef8}.not-yet-checked{background:#fbe9e9}code{font-size:12px}"
)


def _html(sentences: Sequence[Sentence], *, heading: str) -> str:
    e = html.escape
    summ = summary(sentences)
    head = "<tr><th></th>" + "".join(f"<th>{e(h)}</th>" for h in _HEADERS) + "<th>checked share</th></tr>"

    def row(name: str, c: dict) -> str:
        return f"<tr><th>{e(name)}</th>" + "".join(f'<td class="n">{c[k]}</td>' for k in _COLUMNS) + f'<td class="n">{_share(c)}</td></tr>'

    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{e(heading)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{e(heading)}</h1>",
             f'<table id="summary">{head}']
    for version, v in summ["versions"].items():
        parts.append(row(version, v))
    parts.append(row("all versions", summ["total"]) + "</table>")
    for version, pages in _by(sentences).items():
        parts.append(f'<h2 id="v-{e(version)}">{e(version)}</h2><table>{head}')
        for page, rows in pages.items():
            parts.append(row(page, counts(rows)))
        parts.append("</table>")
        for page, rows in pages.items():
            parts.append(f"<h3>{e(version)} {e(page)}</h3><table><tr><th>status</th><th>sentence</th>"
                         "<th>where it stands</th><th>role</th></tr>")
            for s in rows:
                parts.append(f'<tr class="{s.status}" id="s-{e(version)}-{s.key}"><td>{e(STATUS_LABELS[s.status])}</td>'
                             f"<td>{e(s.text)}</td><td>{e(_where(s))}</td><td>{e(s.role)}</td></tr>")
            parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)


def render(sentences: Sequence[Sentence], fmt: str, *, listing: bool = False, heading: str = "MCP spec coverage") -> str:
    """The map of ``sentences`` as ``fmt`` (text and Markdown list the sentences with ``listing``;
    HTML and JSON always do)."""
    if fmt == "text":
        return _text(sentences, listing=listing, heading=heading)
    if fmt == "markdown":
        return _markdown(sentences, listing=listing, heading=heading)
    if fmt == "html":
        return _html(sentences, heading=heading)
    if fmt == "json":
        return json.dumps({**summary(sentences), "sentences": [s.to_json() for s in sentences]}, indent=1) + "\n"
    raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
