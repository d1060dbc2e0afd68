"""The HTML report: one self-contained page rendered from the report dict.  Pure, no network.

``render_html(report) -> str`` reads only the report dict (what ``report.json`` holds).  The page
carries its CSS and JavaScript inline and a Content-Security-Policy that allows nothing else (no
fetch, no external script, style, font or image), so it can be opened from disk, attached to a CI
run or printed.  Everything that came from the peer (messages, raw bytes, server names) is
escaped by Jinja's autoescaping; links are emitted only for ``http(s)`` URLs.

Numbers the page shows carry stable ids and data attributes (``#count-fail[data-count]``,
``#score-MUST[data-passed][data-checked]``, ``#shown-results``) so that a browser test can
compare them with ``report.json``.  Filters (outcome, area) live in the URL fragment:
``report.html#outcome=fail,warning&area=lifecycle``.
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import importlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import jinja2
from markupsafe import Markup

from conformance.report import summary as S

__all__ = ["render_html", "render_transcript", "render_extra", "Budget"]

MAX_RAW_CHARS = 2000  # per transcript entry shown
MAX_ENTRIES = 16  # transcript entries shown per finding
MAX_VALUE_CHARS = 4000  # expected / actual as pretty JSON
PAGE_BUDGET = 1_800_000  # characters of findings shown in full; then findings are compact (first
COMPACT_BUDGET = 500_000  # violation, short values, no wire exchange) for this many more characters;
#                           beyond both, a finding is only a cell of the requirements table (and in report.json)
MAX_ROW_NOTES = 3  # notes from passing checks shown per requirement
ROW_DETAIL_BUDGET = 800_000  # characters of requirement details (sentence, reasons, notes) in the table

OUTCOME_LABELS = {
    "pass": "pass",
    "fail": "fail",
    "warning": "warning",
    "skip": "skip",
    "error": "error",
    "xfail": "expected failure",
    "stale": "stale baseline",
}
OUTCOME_MARKS = {"pass": "✓", "fail": "✗", "warning": "!", "skip": "–", "error": "⚠", "xfail": "✗", "stale": "↻"}
FINDING_OUTCOMES = ("fail", "stale", "error", "warning", "xfail")
DIRECTIONS = {"out": ("→", "suite → server"), "in": ("←", "server → suite"), "note": ("·", "event")}


@dataclass
class Budget:
    """How many characters of findings the page may still hold."""

    left: int = PAGE_BUDGET
    compact_left: int = COMPACT_BUDGET
    omitted: int = 0  # findings shown compact (no exchange, short values)
    unlisted: int = 0  # findings not shown as an article at all

    def charge(self, text: str | None) -> None:
        if not text:
            return
        if self.left > 0:
            self.left -= len(text)
        else:
            self.compact_left -= len(text)

    @property
    def exhausted(self) -> bool:
        return self.left <= 0

    @property
    def spent(self) -> bool:
        return self.left <= 0 and self.compact_left <= 0


# -------------------------------------------------------------------------------------------
# small helpers (pure)


def _safe_url(url: Any) -> str | None:
    if isinstance(url, str) and (url.startswith("https://") or url.startswith("http://")):
        return url
    return None


def _pretty(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters in report.json)"
    return text


def _raw_text(raw: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    """(text shown, note) for a transcript entry's raw bytes."""
    if not raw:
        return None, None
    note = None
    if "text" in raw:
        text = str(raw["text"])
    elif "base64" in raw:
        try:
            data = base64.b64decode(str(raw["base64"]), validate=False)
            text = data.decode("utf-8", errors="backslashreplace")
        except (ValueError, TypeError):
            text = str(raw["base64"])
        note = "not valid UTF-8; undecodable bytes shown as \\x.."
    else:
        return None, None
    if raw.get("truncated_from"):
        note = f"{raw['truncated_from']} bytes received, first {len(text)} recorded"
    if len(text) > MAX_RAW_CHARS:
        note = (note + "; " if note else "") + f"{len(text) - MAX_RAW_CHARS} more characters in report.json"
        text = text[:MAX_RAW_CHARS] + "…"
    return text, note


def _fmt_seconds(t: Any) -> str:
    try:
        t = float(t)
    except (TypeError, ValueError):
        return ""
    return f"{t:.4f} s"


def _fmt_delta(d: float | None) -> str:
    if d is None:
        return ""
    if d < 1.0:
        return f"+{d * 1000:.1f} ms"
    return f"+{d:.3f} s"


def _fmt_duration(d: Any) -> str:
    try:
        d = float(d)
    except (TypeError, ValueError):
        return ""
    if d < 1.0:
        return f"{d * 1000:.1f} ms"
    if d < 120:
        return f"{d:.2f} s"
    return f"{int(d // 60)} min {d % 60:.0f} s"


def _summary_of(entry: Mapping[str, Any]) -> str:
    env = entry.get("envelope") or {}
    parts = []
    kind = env.get("kind")
    if kind:
        parts.append(str(kind))
    if env.get("method"):
        parts.append(str(env["method"]))
    if "id" in env:
        parts.append(f"id {json.dumps(env['id'], ensure_ascii=False)}")
    if env.get("code") is not None:
        parts.append(f"code {env['code']}")
    return " ".join(parts)


def _meta_tags(meta: Mapping[str, Any] | None) -> list[str]:
    out = []
    for k, v in (meta or {}).items():
        if isinstance(v, (dict, list)):
            continue
        if k == "http_status":
            out.append(f"HTTP {v}")
        elif k == "answering":
            out.append(f"answers {v}")
        elif k == "stream":
            out.append(str(v))
        else:
            text = f"{k}={v}"
            out.append(text if len(text) <= 60 else text[:57] + "…")
    return out


def _slug(*parts: Any) -> str:
    return "-".join(str(p) for p in parts).replace(" ", "_")


# -------------------------------------------------------------------------------------------
# the wire exchange


def render_transcript(
    entries: Sequence[Mapping[str, Any]],
    *,
    cited: Iterable[tuple[str | None, int]] = (),
    anchor: str = "",
) -> list[dict[str, Any]]:
    """View rows for transcript entries (grouped by connection, in order, with the time since the
    previous entry of the same connection); ``cited`` (connection, seq) pairs are marked."""
    cited_set = set(cited)
    cited_seqs = {s for (_, s) in cited_set}
    ordered = list(entries)
    if len(ordered) > MAX_ENTRIES:  # the cited entries and their neighbours first, then the latest
        keep: set[int] = set()
        for i, e in enumerate(ordered):
            if (e.get("connection"), e.get("seq")) in cited_set:
                keep.update(range(max(0, i - 2), min(len(ordered), i + 3)))
        chosen = sorted(keep)[:MAX_ENTRIES]
        for i in range(len(ordered) - 1, -1, -1):
            if len(chosen) >= MAX_ENTRIES:
                break
            if i not in keep:
                chosen.append(i)
        ordered = [ordered[i] for i in sorted(chosen)]
    rows = []
    last_t: dict[Any, float] = {}
    prev_conn: Any = object()
    for e in ordered:
        conn = e.get("connection")
        try:
            t = float(e.get("t", 0.0))
        except (TypeError, ValueError):
            t = 0.0
        delta = t - last_t[conn] if conn in last_t else None
        last_t[conn] = t
        raw, raw_note = _raw_text(e.get("raw"))
        direction = str(e.get("direction", "note"))
        arrow, words = DIRECTIONS.get(direction, ("?", direction))
        seq = e.get("seq")
        rows.append({
            "id": _slug(anchor, conn or "c", seq) if anchor else None,
            "new_connection": conn != prev_conn,
            "connection": conn,
            "seq": seq,
            "t": _fmt_seconds(e.get("t")),
            "delta": _fmt_delta(delta),
            "direction": direction if direction in DIRECTIONS else "note",
            "short": direction if direction in ("in", "out") else "",
            "arrow": arrow,
            "words": words,
            "summary": _summary_of(e),
            "text": e.get("text"),
            "raw": raw,
            "raw_note": raw_note,
            "tags": _meta_tags(e.get("meta")),
            "problems": [str(p) for p in ((e.get("envelope") or {}).get("problems") or [])],
            "findings": [f"{f.get('json_path', '')}: {f.get('message', '')}" for f in (e.get("findings") or [])],
            "cited": (conn, seq) in cited_set or (conn is None and seq in cited_seqs),
        })
        prev_conn = conn
    return rows


def hidden_entries(entries: Sequence[Mapping[str, Any]]) -> int:
    """How many of ``entries`` :func:`render_transcript` leaves out."""
    return max(0, len(entries) - MAX_ENTRIES)


# -------------------------------------------------------------------------------------------
# view model


@dataclass
class _View:
    report: Mapping[str, Any]
    budget: Budget = field(default_factory=Budget)
    anchors: set[str] = field(default_factory=set)  # findings rendered as articles

    def build(self) -> dict[str, Any]:
        rep = self.report
        results = list(rep.get("results") or [])
        versions = list(rep.get("versions") or [])
        transports = [rep["transport"]] if rep.get("transport") else []
        counts = S.counts(results)
        scores = S.scores(results)
        mx = S.matrix(results, versions=versions, transports=transports)
        areas = sorted({r.get("area") or "other" for r in results})
        finding_html = self._render_findings(results)
        return {
            "title": self._title(),
            "verdict": S.verdict(rep),
            "exit_code": rep.get("exit_code"),
            "status": rep.get("status"),
            "meta": self._meta(),
            "implementation": self._implementation(),
            "total": len(results),
            "counts": [(o, OUTCOME_LABELS.get(o, o), OUTCOME_MARKS.get(o, ""), n) for o, n in counts.items()],
            "scores": [self._score(lvl, scores[lvl]) for lvl in ("MUST", "SHOULD", "MAY")],
            "matrix": self._matrix(mx),
            "areas": areas,
            "outcomes": [(o, OUTCOME_LABELS.get(o, o)) for o in S.OUTCOMES],
            "finding_html": finding_html,
            "findings_total": len(finding_html) + self.budget.unlisted,
            "findings_shown": len(finding_html),
            "unlisted": self.budget.unlisted,
            "omitted": self.budget.omitted,
            "errors": self._errors(),
            "not_applicable": list(rep.get("not_applicable") or []),
            "not_applicable_groups": _na_groups(rep.get("not_applicable") or []),
            "notes": [str(w) for w in rep.get("warnings") or []],
            "baseline": rep.get("baseline"),
            "columns": mx.columns,
            "rows": self._rows(results, mx.columns),
            "strict": bool(rep.get("strict")),
            "spec_coverage": self._spec_coverage(results, versions),
        }

    @staticmethod
    def _spec_coverage(results: list[Mapping[str, Any]], versions: list[str]) -> dict[str, Any] | None:
        """How many of the normative sentences of the versions run the run checked (coverage map;
        a requirement counts where it has a verdict: pass, fail, warning, not a skip)."""
        from conformance.spec import coverage

        ran = {(r.get("requirement"), r.get("version")) for r in results if r.get("outcome") in S.CHECKED}
        known = [v for v in versions if v in coverage.versions()]
        if not known:
            return None
        return coverage.run_coverage(ran, known)

    def _title(self) -> str:
        info = self.report.get("implementation") or {}
        client = self.report.get("role") == "client"
        impl = (info.get("client_info") if client else info.get("server_info")) or {}
        name = impl.get("title") or impl.get("name")
        what = "MCP client conformance" if client else "MCP conformance"
        return f"{what}: {name}" if name else f"{what} report"

    def _meta(self) -> list[tuple[str, str]]:
        rep = self.report
        target = rep.get("target") or {}
        impl = (rep.get("implementation") or {}).get("server_info") or {}
        rows = [("role", "client (the suite played the server)" if rep.get("role") == "client" else "server"),
                ("target", str(target.get("description") or target.get("url") or ""))]
        if impl:
            rows.append(("server", " ".join(str(x) for x in (impl.get("name"), impl.get("version")) if x)))
        client = (rep.get("implementation") or {}).get("client_info") or {}
        if client:
            rows.append(("client", " ".join(str(x) for x in (client.get("name"), client.get("version")) if x)))
        rows.append(("transport", str(rep.get("transport", ""))))
        rows.append(("versions", ", ".join(rep.get("versions") or [])))
        if target.get("env"):
            rows.append(("environment", ", ".join(sorted(str(k) for k in target["env"])) + " (values not shown)"))
        sel = rep.get("selection") or {}
        if sel.get("select") or sel.get("exclude"):
            parts = [f"select {', '.join(sel.get('select') or [])}" if sel.get("select") else "",
                     f"exclude {', '.join(sel.get('exclude') or [])}" if sel.get("exclude") else ""]
            rows.append(("selection", "; ".join(p for p in parts if p)))
        rows.append(("grading", "strict: SHOULD violations fail" if rep.get("strict") else "MUST violations fail; SHOULD violations warn"))
        suite = rep.get("suite") or {}
        rows.append(("suite", f"{suite.get('name', 'mcp-conformance')} {suite.get('version', '')}".strip()))
        rows.append(("started", str(rep.get("started") or "")))
        rows.append(("duration", _fmt_duration(rep.get("duration"))))
        return rows

    def _implementation(self) -> list[dict[str, Any]]:
        by_version = (self.report.get("implementation") or {}).get("by_version") or {}
        out = []
        for v in self.report.get("versions") or sorted(by_version):
            info = by_version.get(v)
            if not info:
                continue
            si = info.get("server_info") or {}
            out.append({
                "version": v,
                "negotiated": info.get("protocol_version"),
                "server": " ".join(str(x) for x in (si.get("name"), si.get("version")) if x),
                "capabilities": ", ".join(sorted(str(k) for k in (info.get("capabilities") or {}))),
                "unsupported": info.get("unsupported"),
            })
        return out

    @staticmethod
    def _score(level: str, sc: Mapping[str, Any]) -> dict[str, Any]:
        passed, checked = int(sc.get("passed", 0)), int(sc.get("checked", 0))
        return {
            "level": level,
            "passed": passed,
            "checked": checked,
            "text": S.percent_text(passed, checked),
            "width": round(100.0 * passed / checked, 2) if checked else 0,
            "band": _band(passed, checked),
        }

    def _matrix(self, mx: S.Matrix) -> dict[str, Any]:
        transports: list[tuple[str, int]] = []
        for _, t in mx.columns:
            if transports and transports[-1][0] == t:
                transports[-1] = (t, transports[-1][1] + 1)
            else:
                transports.append((t, 1))
        by_version = (self.report.get("implementation") or {}).get("by_version") or {}
        headers = []
        for v, t in mx.columns:
            why = (by_version.get(v) or {}).get("unsupported")
            headers.append({"version": v, "transport": t, "unsupported": why})
        rows = []
        idle = []  # areas with nothing checked anywhere: one line under the table
        for area in mx.areas:
            if not any(mx.cell(area, v, t).checked or mx.cell(area, v, t).outcome == "error" for v, t in mx.columns):
                idle.append(area)
                continue
            cells = []
            for v, t in mx.columns:
                c = mx.cell(area, v, t)
                if c.outcome is None:
                    cells.append({"outcome": "none", "text": "", "title": "no requirement of this area applies"})
                    continue
                detail = ", ".join(f"{n} {OUTCOME_LABELS.get(o, o)}" for o, n in c.counts.items() if n)
                text = f"{c.held}/{c.checked}" if c.checked else OUTCOME_LABELS.get(c.outcome, c.outcome)
                cells.append({"outcome": c.outcome, "text": text, "mark": OUTCOME_MARKS.get(c.outcome, ""),
                              "title": f"{area} on {v} ({t}): {detail}", "area": area})
            rows.append({"area": area, "cells": cells})
        return {"transports": transports, "columns": mx.columns, "headers": headers, "rows": rows, "idle": idle}

    def _errors(self) -> list[dict[str, Any]]:
        grouped: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
        for e in self.report.get("errors") or []:
            key = (e.get("kind"), e.get("message"), e.get("hint"))
            g = grouped.setdefault(key, {"kind": e.get("kind"), "message": e.get("message"), "hint": e.get("hint"),
                                         "where": []})
            where = " ".join(str(x) for x in (e.get("scenario"), f"[{e['version']}]" if e.get("version") else None) if x)
            if where and where not in g["where"]:
                g["where"].append(where)
        return list(grouped.values())

    def _render_findings(self, results: list[Mapping[str, Any]]) -> list[Markup]:
        """Every fail, stale, error, warning and xfail result as an ``<article>``, most severe
        first; identical violations on several versions point at the first; once the page's
        budget is spent, findings are compact (first violation, short values, no exchange)."""
        order = {o: i for i, o in enumerate(FINDING_OUTCOMES)}
        chosen = [r for r in results if r["outcome"] in order]
        chosen.sort(key=lambda r: (order[r["outcome"]], r.get("area") or "", r["requirement"]))
        tpl = _env().get_template("finding.html.j2")
        out: list[Markup] = []
        first_of: dict[tuple[str, str, str], dict[str, Any]] = {}
        for r in chosen:
            if self.budget.spent:
                self.budget.unlisted += 1
                continue
            compact = self.budget.exhausted
            f = self._finding(r, compact=compact)
            key = (r["requirement"], r["outcome"], f["signature"])
            same = first_of.get(key)
            if same is not None and f["signature"]:
                f["same_as"] = {"anchor": same["anchor"], "where": f"{same['version']} {same['transport']}"}
            else:
                first_of[key] = f
            if compact:
                self.budget.omitted += 1
            html = tpl.render(f=f)
            self.budget.charge(html)
            out.append(Markup(html))
            self.anchors.add(f["anchor"])
        return out

    def _finding(self, r: Mapping[str, Any], *, compact: bool = False) -> dict[str, Any]:
        anchor = _slug("f", r["requirement"], r["version"], r["transport"])
        violations = []
        cited: list[tuple[str | None, int]] = []
        limit = 300 if compact else MAX_VALUE_CHARS
        for v in (r.get("violations") or [])[: 1 if compact else None]:
            seqs = list(dict.fromkeys(s for s in v.get("transcript") or [] if isinstance(s, int)))
            cited += [(v.get("connection"), s) for s in seqs]
            violations.append({
                "problem": v.get("problem"),
                "message": v.get("message"),
                "outcome": v.get("outcome"),
                "expected": None if v.get("expected") is None else _pretty(v.get("expected"), limit),
                "actual": None if v.get("actual") is None else _pretty(v.get("actual"), limit),
                "json_path": v.get("json_path"),
                "scenario": v.get("scenario"),
                "connection": v.get("connection"),
                "seqs": seqs,
                "links": [(s, _slug(anchor, v.get("connection") or "c", s)) for s in seqs],
            })
        transcript = list(r.get("transcript") or [])
        wire: list[dict[str, Any]] = []
        hidden = 0
        if transcript and not compact:
            wire = render_transcript(transcript, cited=cited, anchor=anchor)
            hidden = hidden_entries(transcript)
        shown_rows = {w["id"] for w in wire}
        for x in violations:  # link only to entries on the page
            x["links"] = [(seq, a) for seq, a in x["links"] if a in shown_rows]
        base = r.get("baseline") or None
        if r["outcome"] == "stale":  # a pass: nothing to show but the entry
            violations = []
        signature = json.dumps([[v["problem"], v["message"], v["expected"], v["actual"], v["json_path"]] for v in violations]
                               + [r.get("reason"), (base or {}).get("entry")], ensure_ascii=False)
        return {
            "signature": signature if violations or r.get("reason") or base else "",
            "same_as": None,
            "anchor": anchor,
            "requirement": r["requirement"],
            "version": r["version"],
            "transport": r["transport"],
            "level": r.get("level"),
            "area": r.get("area") or "other",
            "outcome": r["outcome"],
            "label": OUTCOME_LABELS.get(r["outcome"], r["outcome"]),
            "mark": OUTCOME_MARKS.get(r["outcome"], ""),
            "quote": r.get("quote"),
            "url": _safe_url(r.get("url")),
            "url_text": r.get("url"),
            "note": r.get("note"),
            "reason": r.get("reason"),
            "scenarios": list(r.get("scenarios") or []),
            "aliases": list(r.get("aliases") or []),
            "duration": _fmt_duration(r.get("duration")),
            "violations": violations,
            "dropped": r.get("violations_dropped") or 0,
            "messages": list(r.get("messages") or []),
            "wire": wire,
            "compact": compact,
            "wire_hidden": hidden,
            "baseline": base,
        }

    def _rows(self, results: list[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        by_req: dict[str, dict[str, Any]] = {}
        for r in results:
            row = by_req.get(r["requirement"])
            if row is None:
                row = by_req[r["requirement"]] = {
                    "id": r["requirement"],
                    "level": r.get("level"),
                    "area": r.get("area") or "other",
                    "quote": r.get("quote"),
                    "url": _safe_url(r.get("url")),
                    "note": r.get("note"),
                    "aliases": list(r.get("aliases") or []),
                    "cells": {},
                    "reasons": [],
                    "messages": [],
                }
            reason = r.get("reason")
            base = r.get("baseline")
            title = OUTCOME_LABELS.get(r["outcome"], r["outcome"])
            if reason:
                title += f": {reason}"
            if base:
                title += f" (baseline entry {base.get('entry')}, was {base.get('original')})"
            anchor = _slug("f", r["requirement"], r["version"], r["transport"])
            row["cells"][(r["version"], r["transport"])] = {
                "outcome": r["outcome"],
                "label": OUTCOME_LABELS.get(r["outcome"], r["outcome"]),
                "mark": OUTCOME_MARKS.get(r["outcome"], ""),
                "title": title,
                "link": anchor if anchor in self.anchors else None,
            }
            if reason:
                row["reasons"].append((f"{r['version']} {r['transport']}", reason))
            for m in r.get("messages") or []:
                if m not in row["messages"] and len(row["messages"]) < MAX_ROW_NOTES:
                    row["messages"].append(m)
        rows = sorted(by_req.values(), key=lambda x: (x["area"], x["id"]))
        detail_left = ROW_DETAIL_BUDGET
        for row in rows:
            row["outcomes"] = " ".join(sorted({c["outcome"] for c in row["cells"].values()}))
            row["cell_list"] = [row["cells"].get(col) for col in columns]
            # one line per distinct reason, naming where it applies
            grouped: dict[str, list[str]] = {}
            for where, text in row["reasons"]:
                grouped.setdefault(text, []).append(where)
            if len(grouped) == 1 and len(row["reasons"]) == len(columns) > 1:
                row["reasons"] = [("everywhere", next(iter(grouped)))]
            else:
                row["reasons"] = [(", ".join(w), t) for t, w in grouped.items()]
            size = len(row["quote"] or "") + len(row["note"] or "") + sum(len(w) + len(t) for w, t in row["reasons"]) \
                + sum(len(m) for m in row["messages"]) + 200
            row["bare"] = detail_left <= 0  # the page's budget for details is spent: id, level and cells only
            detail_left -= 0 if row["bare"] else size
        return rows


def _band(passed: int, checked: int) -> str:
    if not checked:
        return "none"
    if passed == checked:
        return "full"
    p = 100.0 * passed / checked
    if p >= 90:
        return "high"
    if p >= 60:
        return "mid"
    return "low"


# -------------------------------------------------------------------------------------------
# rendering


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("conformance.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["first_line"] = _first_line
    env.filters["has_more"] = lambda text: _first_line(text) != str(text or "").strip()
    return env


def _first_line(text: Any) -> str:
    """The first line of a message (a traceback's summary comes first), at most 400 characters."""
    s = str(text or "").strip()
    line = s.split("\n", 1)[0].strip()
    marker = line.find(" Traceback (most recent call last)")
    if marker > 0:
        line = line[:marker]
    return line if len(line) <= 400 else line[:399] + "…"


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str, str, str]:
    env = _env()
    loader = env.loader
    assert loader is not None
    css = loader.get_source(env, "report.css")[0]
    js = loader.get_source(env, "report.js")[0]
    return css, js, _csp_hash(css), _csp_hash(js)


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _na_groups(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """Not-applicable rows grouped by the requirement's span ("2026-07-28 rules", "HTTP rules"):
    (reason without the version, ["requirement@version", ...])."""
    groups: dict[str, list[str]] = {}
    for r in rows:
        reason = str(r.get("reason") or "not applicable")
        key = reason.split(": ", 1)[1] if reason.startswith("not applicable to ") and ": " in reason else reason
        groups.setdefault(key, []).append(f"{r.get('requirement')}@{r.get('version')}")
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def prepare() -> None:
    """Compile the templates and read the assets now (cached for :func:`render_html`)."""
    _assets()
    for name in ("report.html.j2", "finding.html.j2"):
        _env().get_template(name)
    importlib.import_module("conformance.report.fuzz")  # render_html's fragment


def render_html(report: Mapping[str, Any]) -> str:
    """The self-contained HTML page for ``report`` (a report.json dict)."""
    css, js, css_hash, js_hash = _assets()
    view = _View(report).build()
    csp = (f"default-src 'none'; style-src '{css_hash}'; script-src '{js_hash}'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    from conformance.report.fuzz import html_fragment

    return _env().get_template("report.html.j2").render(v=view, css=Markup(css), js=Markup(js), csp=csp,
                                                        fuzz=Markup(html_fragment(report)))


# -------------------------------------------------------------------------------------------
# a fragment for pytest-html (the transcript as an "extra" of a test)

_EXTRA_COLORS = {"pass": "#1a7f37", "fail": "#c0262d", "warning": "#9a6700", "skip": "#5b636e", "error": "#7c3aed",
                 "xfail": "#8a3a3f", "stale": "#b35900"}


def render_extra(results: Sequence[Mapping[str, Any]]) -> str:
    """An HTML fragment (inline styles only; it lives inside pytest-html's page) with, per report
    result dict: outcome, level, requirement, the spec sentence and link, the violations and the
    wire exchange."""
    e = _html.escape
    parts = ['<div class="mcp-conformance" style="font:13px/1.4 sans-serif">']
    for r in results:
        color = _EXTRA_COLORS.get(r.get("outcome", ""), "#333")
        url = _safe_url(r.get("url"))
        link = f' <a href="{e(url)}" target="_blank" rel="noreferrer noopener">spec</a>' if url else ""
        parts.append(
            f'<p style="margin:8px 0 2px"><b style="color:{color}">{e(str(r.get("outcome", "")).upper())}</b> '
            f'{e(str(r.get("level") or ""))} <code>{e(str(r.get("requirement", "")))}</code> '
            f'({e(str(r.get("version", "")))}, {e(str(r.get("transport", "")))}){link}</p>'
            f'<div style="margin:0 0 4px 12px;font-style:italic">\u201c{e(str(r.get("quote") or ""))}\u201d</div>'
        )
        if r.get("reason"):
            parts.append(f'<div style="margin-left:12px">{e(_first_line(r["reason"]))}</div>')
        for v in r.get("violations") or []:
            lines = [f"{v.get('problem', '')}: {v.get('message', '')}"]
            if v.get("expected") is not None:
                lines.append(f"expected: {_pretty(v['expected'], 800)}")
            if v.get("actual") is not None:
                lines.append(f"actual:   {_pretty(v['actual'], 800)}")
            if v.get("json_path"):
                lines.append(f"at:       {v['json_path']}")
            parts.append(f'<pre style="margin:2px 0 2px 12px;white-space:pre-wrap">{e(chr(10).join(lines))}</pre>')
        rows = render_transcript(r.get("transcript") or [], cited=[(v.get("connection"), s) for v in r.get("violations") or []
                                                                     for s in v.get("transcript") or []])
        if rows:
            out = []
            for w in rows:
                if w["new_connection"] and w["connection"]:
                    out.append(f"connection {w['connection']}")
                mark = "*" if w["cited"] else " "
                body = w["raw"] if w["raw"] is not None else (w["text"] or "")
                out.append(f"{mark}#{w['seq']} {w['t']:>10} {w['arrow']} {w['summary']} {' '.join(w['tags'])}".rstrip())
                if body:
                    out.append(f"      {body}")
            parts.append('<details open style="margin-left:12px"><summary>wire exchange (* = cited)</summary>'
                         f'<pre style="white-space:pre-wrap;word-break:break-all">{e(chr(10).join(out))}</pre></details>')
    parts.append("</div>")
    return "".join(parts)
