"""Scores, the area x version x transport matrix and other views every renderer shares.

Pure functions of report result dicts (``report["results"]``), so that the HTML page, the badge,
JUnit and the Markdown summary can never disagree about a number.

A *score* is, for one level, the share of checked results that hold: ``pass`` and ``stale`` (a
baseline entry the server now satisfies) count as held; ``fail``, ``warning`` and ``xfail`` (a
known failure is still a failure) as not held; ``skip`` and ``error`` (our own trouble, never the
server's) are not part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from conformance.spec.outcomes import OUTCOME_ORDER, Level, Outcome

__all__ = [
    "OUTCOMES",
    "LEVELS",
    "HELD",
    "CHECKED",
    "counts",
    "score",
    "scores",
    "by_area",
    "percent_text",
    "Cell",
    "Matrix",
    "matrix",
    "verdict",
]

# most severe first: the order in which renderers list outcomes
OUTCOMES: tuple[str, ...] = tuple(o.value for o in sorted(OUTCOME_ORDER, key=OUTCOME_ORDER.__getitem__, reverse=True))
LEVELS: tuple[str, ...] = tuple(lvl.value for lvl in Level)
HELD = frozenset({Outcome.PASS.value, Outcome.STALE.value})
CHECKED = frozenset({Outcome.PASS.value, Outcome.STALE.value, Outcome.FAIL.value, Outcome.WARNING.value, Outcome.XFAIL.value})
_RANK = {o.value: n for o, n in OUTCOME_ORDER.items()}


def counts(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Results per outcome (every outcome present, most severe first)."""
    out = {o: 0 for o in OUTCOMES}
    for r in results:
        out[r["outcome"]] = out.get(r["outcome"], 0) + 1
    return out


def score(results: Iterable[Mapping[str, Any]], level: str) -> dict[str, Any]:
    """``{"passed", "checked", "percent"}`` for one level; ``percent`` is None when nothing of
    that level was checked."""
    passed = checked = 0
    for r in results:
        if r.get("level") != level or r["outcome"] not in CHECKED:
            continue
        checked += 1
        passed += r["outcome"] in HELD
    return {"passed": passed, "checked": checked, "percent": round(100.0 * passed / checked, 2) if checked else None}


def scores(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {lvl: score(results, lvl) for lvl in LEVELS}


def percent_text(passed: int, checked: int) -> str:
    """``passed/checked`` as a percentage rounded *down* to one decimal: 4999 of 5000 is 99.9%,
    never 100%."""
    if not checked:
        return "n/a"
    tenths = passed * 1000 // checked
    whole, frac = divmod(tenths, 10)
    return f"{whole}%" if frac == 0 else f"{whole}.{frac}%"


def by_area(results: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{area: {"total", "by_outcome", "by_level": {level: counts}}}``, areas sorted."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        groups.setdefault(r.get("area") or "other", []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for area in sorted(groups):
        rows = groups[area]
        out[area] = {
            "total": len(rows),
            "by_outcome": counts(rows),
            "by_level": {lvl: counts(r for r in rows if r.get("level") == lvl) for lvl in LEVELS},
        }
    return out


def worst(outcomes: Iterable[str]) -> str | None:
    best: str | None = None
    for o in outcomes:
        if best is None or _RANK.get(o, -1) > _RANK.get(best, -1):
            best = o
    return best


@dataclass
class Cell:
    """One area on one version and transport."""

    outcome: str | None  # the most severe outcome, None when the area has no result there
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0

    @property
    def held(self) -> int:
        return sum(n for o, n in self.counts.items() if o in HELD)

    @property
    def checked(self) -> int:
        return sum(n for o, n in self.counts.items() if o in CHECKED)


@dataclass
class Matrix:
    areas: list[str]
    columns: list[tuple[str, str]]  # (version, transport)
    cells: dict[tuple[str, str, str], Cell]  # (area, version, transport)

    def cell(self, area: str, version: str, transport: str) -> Cell:
        return self.cells.get((area, version, transport)) or Cell(outcome=None)


def matrix(results: Sequence[Mapping[str, Any]], *, versions: Sequence[str] = (), transports: Sequence[str] = ()) -> Matrix:
    """Areas x (version, transport): the worst outcome and the counts of each cell.  Columns are
    the given versions/transports (in that order) plus any others the results contain."""
    vs = list(versions)
    ts = list(transports)
    for r in results:
        if r["version"] not in vs:
            vs.append(r["version"])
        if r["transport"] not in ts:
            ts.append(r["transport"])
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in results:
        groups.setdefault((r.get("area") or "other", r["version"], r["transport"]), []).append(r["outcome"])
    present = {(v, t) for (_, v, t) in groups}
    columns = [(v, t) for t in ts for v in vs if (v, t) in present] or [(v, t) for t in ts for v in vs]
    cells = {}
    for key, outs in groups.items():
        c = {o: 0 for o in OUTCOMES}
        for o in outs:
            c[o] = c.get(o, 0) + 1
        cells[key] = Cell(outcome=worst(outs), counts=c, total=len(outs))
    return Matrix(areas=sorted({k[0] for k in groups}), columns=columns, cells=cells)


def verdict(report: Mapping[str, Any]) -> str:
    """One word for the run: ``passed``, ``failed``, ``unreachable``, ``interrupted``,
    ``usage-error`` or ``empty`` (nothing checked)."""
    status = report.get("status")
    if status == "target-error" and report.get("exit_code") in (3, None):
        return "unreachable"
    if status == "interrupted":
        return "interrupted"
    if status == "usage-error":
        return "usage-error"
    code = report.get("exit_code")
    if code == 3:
        return "unreachable"
    if code not in (0, None):
        return "failed"
    results = report.get("results") or []
    if not any(r["outcome"] in CHECKED for r in results):
        return "empty"
    return "passed"
