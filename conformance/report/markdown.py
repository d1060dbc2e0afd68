"""A Markdown summary of the report dict, for a CI step summary (``$GITHUB_STEP_SUMMARY``).  Pure.

Short by design: the verdict, the MUST/SHOULD scores, the area x version matrix, then every
failure (identical violations on several versions said once), warnings, run problems and the
baseline; the full detail is in report.html.  Everything from the peer is escaped (GitHub renders
some HTML in Markdown) and long lists are capped so the summary stays far below GitHub's 1 MiB.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from conformance.report import summary as S

__all__ = ["render_markdown"]

MAX_ITEMS = 50  # findings listed per section
MAX_CODE = 160  # characters of an expected/actual value

_ICONS = {"pass": "✅", "fail": "❌", "warning": "⚠️", "skip": "⏭️", "error": "💥", "xfail": "🔕", "stale": "♻️", "none": ""}
_VERDICT = {
    "passed": "✅ passed",
    "failed": "❌ failed",
    "unreachable": "💥 target unreachable",
    "interrupted": "⏹️ interrupted",
    "usage-error": "💥 usage error",
    "empty": "⏭️ nothing checked",
}
_SPECIAL = re.compile(r"([\\`*_\[\]{}<>|#~!])")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _visible(s: str) -> str:
    """Control characters (a peer may send them) as ``\\xNN``."""
    return _CONTROL.sub(lambda m: "\\x%02x" % ord(m.group()), s)


def _text(value: Any, limit: int = 400) -> str:
    """Inline Markdown text: one line, special characters escaped, HTML neutralised."""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    s = _visible(" ".join(s.split()))
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    s = s.replace("&", "&amp;")
    return _SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;"}.get(m.group(1), "\\" + m.group(1)), s)


def _code(value: Any, limit: int = MAX_CODE, *, in_table: bool = False) -> str:
    """A code span holding ``value`` verbatim (fenced by more backticks than it contains)."""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    s = _visible(" ".join(s.split()))
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    if in_table:
        s = s.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def _link(text: str, url: Any) -> str:
    if isinstance(url, str) and url.startswith(("https://", "http://")) and not re.search(r"[\s()<>]", url):
        return f"[{text}]({url})"
    return text


def _group(results: list[Mapping[str, Any]], outcome: str, *, transports: bool = True) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for r in results:
        if r["outcome"] != outcome:
            continue
        v = (r.get("violations") or [{}])[0]
        key = json.dumps([r["requirement"], v.get("problem"), v.get("message"), v.get("expected"), v.get("actual"),
                          r.get("reason"), (r.get("baseline") or {}).get("entry")], ensure_ascii=False, default=str)
        g = groups.setdefault(key, {"r": r, "v": v, "where": []})
        g["where"].append(f"{r['version']} {r['transport']}" if transports else r["version"])
    return list(groups.values())


def _finding_lines(g: Mapping[str, Any]) -> list[str]:
    r, v = g["r"], g["v"]
    where = ", ".join(g["where"])
    head = f"- {_ICONS.get(r['outcome'], '')} **{r.get('level')}** {_code(r['requirement'])} ({_text(where)})"
    if r["outcome"] == "stale":
        head += f": listed in the baseline as {_code((r.get('baseline') or {}).get('entry', ''))} but passes now; remove the entry"
    elif r["outcome"] == "error":
        head += f": {_text(r.get('reason') or 'error')}"
    elif v:
        head += f": {_text(v.get('problem') or '')}: {_text(v.get('message') or '')}"
    lines = [head]
    if r.get("quote"):
        lines.append(f"  > {_text(r['quote'])} — {_link('spec', r.get('url'))}")
    if v and r["outcome"] in ("fail", "warning", "xfail") and (v.get("expected") is not None or v.get("actual") is not None):
        parts = []
        if v.get("expected") is not None:
            parts.append(f"expected {_code(v['expected'])}")
        if v.get("actual") is not None:
            parts.append(f"actual {_code(v['actual'])}")
        if v.get("json_path"):
            parts.append(f"at {_code(v['json_path'])}")
        lines.append("  " + " · ".join(parts))
    return lines


def render_markdown(report: Mapping[str, Any], *, html_name: str | None = "report.html") -> str:
    """The Markdown summary of ``report``; ``html_name`` is mentioned as where the details are."""
    results = list(report.get("results") or [])
    verdict = S.verdict(report)
    info = report.get("implementation") or {}
    client = report.get("role") == "client"
    impl = (info.get("client_info") if client else info.get("server_info")) or {}
    target = report.get("target") or {}
    out: list[str] = []
    out.append(f"## MCP {'client ' if client else ''}conformance: {_VERDICT.get(verdict, verdict)}")
    out.append("")
    who = " ".join(str(x) for x in (impl.get("name"), impl.get("version")) if x) or target.get("description") or "target"
    facts = [f"**{_text(who)}**", _text(report.get("transport") or ""), _text(", ".join(report.get("versions") or [])),
             f"exit code {report.get('exit_code')}"]
    if report.get("strict"):
        facts.append("strict")
    out.append(" · ".join(f for f in facts if f))
    out.append("")
    scores = S.scores(results)
    out.append("| level | score | held / checked |")
    out.append("|---|---:|---:|")
    for lvl in ("MUST", "SHOULD"):
        sc = scores[lvl]
        out.append(f"| {lvl} | {S.percent_text(sc['passed'], sc['checked'])} | {sc['passed']} / {sc['checked']} |")
    out.append("")
    counts = S.counts(results)
    na = len(report.get("not_applicable") or [])
    out.append(f"{len(results)} results: " + " · ".join(f"{_ICONS[o]} {n} {o}" for o, n in counts.items() if n)
               + (f" ({na} not applicable to these versions or this transport, not counted)" if na else ""))
    out.append("")
    mx = S.matrix(results, versions=report.get("versions") or [], transports=[report["transport"]] if report.get("transport") else [])
    if mx.areas:
        multi = len({t for _, t in mx.columns}) > 1
        header = ["area"] + [f"{v} {t}" if multi else v for v, t in mx.columns]
        out.append("| " + " | ".join(header) + " |")
        out.append("|---" * len(header) + "|")
        for area in mx.areas:
            cells = [_text(area)]
            for v, t in mx.columns:
                c = mx.cell(area, v, t)
                if c.outcome is None:
                    cells.append("")
                elif c.checked:
                    cells.append(f"{_ICONS.get(c.outcome, '')} {c.held}/{c.checked}")
                else:
                    cells.append(f"{_ICONS.get(c.outcome, '')} {c.outcome}")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    sections = [("fail", "Failures"), ("stale", "Stale baseline entries"), ("error", "Errors (not the server's fault)"),
                ("warning", "Warnings (SHOULD)"), ("xfail", "Expected failures (baseline)")]
    for outcome, title in sections:
        groups = _group(results, outcome, transports=len({r["transport"] for r in results}) > 1)
        if not groups:
            continue
        out.append(f"### {title} ({sum(len(g['where']) for g in groups)})")
        out.append("")
        for g in groups[:MAX_ITEMS]:
            out += _finding_lines(g)
        if len(groups) > MAX_ITEMS:
            out.append(f"- … and {len(groups) - MAX_ITEMS} more" + (f" in {html_name}" if html_name else ""))
        out.append("")
    problems = list(dict.fromkeys(
        f"{e.get('kind')}: {e.get('message')}" + (f" — how to fix: {e['hint']}" if e.get("hint") else "")
        for e in report.get("errors") or []))
    notes = [str(w) for w in report.get("warnings") or []]
    if problems or notes:
        out.append("### Run problems")
        out.append("")
        out += [f"- {_text(p)}" for p in problems[:MAX_ITEMS]]
        out += [f"- note: {_text(n)}" for n in notes[:MAX_ITEMS]]
        out.append("")
    base = report.get("baseline")
    if base:
        out.append(f"### Baseline {_code(base.get('source', ''))}")
        out.append("")
        for key, what in (("expected", "failing as expected"), ("stale", "stale (passing now: remove them)"),
                          ("unmatched", "matched nothing checked in this run")):
            items = base.get(key) or []
            listed = ", ".join(_code(i) for i in items[:MAX_ITEMS]) + (" …" if len(items) > MAX_ITEMS else "")
            out.append(f"- {len(items)} {what}" + (f": {listed}" if items else ""))
        out.append("")
    from conformance.report.fuzz import markdown_lines

    out += markdown_lines(report, _code, _text)  # mcp-conformance fuzz: the campaigns and reproducers
    if html_name:
        out.append(f"Details (spec sentences, expected vs actual, the wire exchange): {_code(html_name)}.")
        out.append("")
    return "\n".join(out)
