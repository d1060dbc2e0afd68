"""The report model: ``report.json`` as a plain dict built by pure functions.  No I/O.

The runtime accumulates one :class:`RequirementResult` per requirement x version x transport
while scenarios run; :func:`build_report` turns them, with the run's metadata, into the canonical
report dict.  Every other format (HTML, JUnit, badge, Markdown) is a pure function of that dict,
which ``report.schema.json`` (beside this module) describes.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from conformance.spec.outcomes import OUTCOME_ORDER, Level, Outcome, worst
from conformance.report import summary as _summary
from conformance.spec.requirements import Requirement
from conformance.spec.versions import VERSIONS, spec

__all__ = [
    "REPORT_FORMAT",
    "MAX_VIOLATIONS",
    "MAX_TRANSCRIPT",
    "RequirementResult",
    "build_report",
    "summarize",
    "exit_code",
    "iso_time",
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_TARGET",
    "EXIT_INTERRUPTED",
]

REPORT_FORMAT = "mcp-conformance-report/1"
MAX_VIOLATIONS = 20  # per result; more are counted, not kept
MAX_TRANSCRIPT = 40  # transcript entries kept per result

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_TARGET = 3
EXIT_INTERRUPTED = 130


@dataclass
class RequirementResult:
    """What the run found for one requirement on one version and transport."""

    requirement: str
    version: str
    transport: str
    outcome: Outcome = Outcome.SKIP
    reason: str | None = None  # why it was skipped, or what went wrong (error)
    scenarios: list[str] = field(default_factory=list)
    duration: float = 0.0
    checks: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)
    violations_dropped: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # notes from passing checks ("accepted: ...")
    reached: bool = False  # a scenario citing it ran (whether or not it checked it)
    default_reason: str | None = None  # the skip reason when nothing else happened to it

    def add_scenario(self, scenario_id: str, duration: float = 0.0) -> None:
        if scenario_id not in self.scenarios:
            self.scenarios.append(scenario_id)
        self.duration += duration
        self.reached = True

    def record(
        self,
        outcome: Outcome,
        *,
        reason: str | None = None,
        violation: Mapping[str, Any] | None = None,
        transcript: Iterable[Mapping[str, Any]] = (),
        message: str | None = None,
        checked: bool = True,
    ) -> None:
        """Merge one observation: the worst outcome wins (a skip never hides a pass)."""
        if checked:
            self.checks += 1
        before = self.outcome
        self.outcome = worst([before, outcome])
        if outcome in (Outcome.SKIP, Outcome.ERROR) and reason:
            if self.outcome is outcome and (before is not outcome or not self.reason):
                self.reason = reason
        elif self.outcome is not Outcome.SKIP and before is Outcome.SKIP:
            self.reason = None
        if violation is not None:
            if len(self.violations) < MAX_VIOLATIONS:
                self.violations.append(dict(violation))
            else:
                self.violations_dropped += 1
        if message and message not in self.messages and len(self.messages) < MAX_VIOLATIONS:
            self.messages.append(message)
        room = MAX_TRANSCRIPT - len(self.transcript)
        if room > 0:
            # violations' evidence first: a passing check only fills an empty excerpt
            if violation is not None or not self.transcript:
                seen = {(e.get("connection"), e.get("seq")) for e in self.transcript}
                for entry in transcript:
                    key = (entry.get("connection"), entry.get("seq"))
                    if key in seen:
                        continue
                    self.transcript.append(dict(entry))
                    seen.add(key)
                    room -= 1
                    if room <= 0:
                        break

    def to_json(self, req: Requirement | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requirement": self.requirement,
            "version": self.version,
            "transport": self.transport,
            "level": req.level.value if req else None,
            "url": req.url_for(self.version) if req else None,
            "quote": req.quote if req else None,
            "area": req.area if req else None,
            "source": req.source if req else None,
            "aliases": list(req.aliases) if req else [],
            "note": req.note if req else None,
            "outcome": self.outcome.value,
            "reason": self.reason or (self.default_reason if self.outcome is Outcome.SKIP else None),
            "scenarios": list(self.scenarios),
            "duration": round(self.duration, 6),
            "checks": self.checks,
            "violations": list(self.violations),
            "violations_dropped": self.violations_dropped,
            "messages": list(self.messages),
            "transcript": list(self.transcript),
        }
        return out


def _applies(req: Requirement, version: str, transport: str) -> bool:
    if not req.applies_to(version, transport):
        return False
    return version not in VERSIONS or transport in {t.value for t in spec(version).transports}


def iso_time(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return _dt.datetime.fromtimestamp(epoch, tz=_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def summarize(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts by outcome, by level and by area, and the score of each level (of report result
    dicts; see :mod:`conformance.report.summary`)."""
    results = list(results)
    outcomes = [o.value for o in sorted(OUTCOME_ORDER, key=OUTCOME_ORDER.__getitem__)]
    by_outcome = {o: 0 for o in outcomes}
    by_level: dict[str, dict[str, int]] = {lvl.value: {o: 0 for o in outcomes} for lvl in Level}
    total = 0
    for r in results:
        total += 1
        by_outcome[r["outcome"]] = by_outcome.get(r["outcome"], 0) + 1
        level = r.get("level")
        if level in by_level:
            by_level[level][r["outcome"]] += 1
    return {
        "total": total,
        "by_outcome": by_outcome,
        "by_level": by_level,
        "by_area": _summary.by_area(results),
        "scores": _summary.scores(results),
    }


def _result_key(r: Mapping[str, Any]) -> tuple:
    v = r["version"]
    return (VERSIONS.index(v) if v in VERSIONS else len(VERSIONS), r["transport"], r["requirement"])


def build_report(
    *,
    suite_version: str,
    started: float,
    finished: float | None,
    status: str,
    target: Mapping[str, Any],
    transport: str,
    versions: Iterable[str],
    strict: bool,
    selection: Mapping[str, Any],
    results: Iterable[RequirementResult],
    requirements: Mapping[str, Requirement],
    implementation: Mapping[str, Any] | None = None,
    errors: Iterable[Mapping[str, Any]] = (),
    warnings: Iterable[str] = (),
    code: int | None = None,
    role: str = "server",
) -> dict[str, Any]:
    """The canonical report dict (what ``report.json`` holds)."""
    rows: list[dict[str, Any]] = []
    not_applicable: list[dict[str, Any]] = []
    for r in results:
        req = requirements.get(r.requirement)
        if req is not None and r.outcome is Outcome.SKIP and not _applies(req, r.version, r.transport):
            # outside the requirement's versions or transports, or a transport the version does not
            # define (streamable HTTP in 2024-11-05): not a skip of the target, not counted
            not_applicable.append({"requirement": r.requirement, "version": r.version, "transport": r.transport,
                                   "level": req.level.value, "area": req.area,
                                   "reason": r.reason or r.default_reason or "not applicable"})
        else:
            rows.append(r.to_json(req))
    rows.sort(key=_result_key)
    not_applicable.sort(key=_result_key)
    summary = summarize(rows)
    summary["not_applicable"] = len(not_applicable)
    report: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "suite": {"name": "mcp-conformance", "version": suite_version},
        "role": role,
        "status": status,
        "started": iso_time(started),
        "finished": iso_time(finished),
        "duration": round((finished - started), 3) if finished is not None else None,
        "target": dict(target),
        "transport": transport,
        "versions": [v for v in VERSIONS if v in set(versions)],
        "strict": strict,
        "selection": dict(selection),
        "implementation": dict(implementation or {}),
        "results": rows,
        "not_applicable": not_applicable,
        "errors": [dict(e) for e in errors],
        "warnings": list(warnings),
        "summary": summary,
    }
    report["exit_code"] = code if code is not None else exit_code(report)
    return report


def exit_code(report: Mapping[str, Any]) -> int:
    """The CLI's exit code for a report: 3 the target never answered, 1 a failure (or an error,
    also a target error after the target answered), 130 interrupted, 2 usage error, else 0.  Warnings pass unless strict graded them fail."""
    status = report.get("status")
    if status == "usage-error":
        return EXIT_USAGE
    if status == "interrupted":
        return EXIT_INTERRUPTED
    errors = list(report.get("errors") or [])
    counts = report.get("summary", {}).get("by_outcome", {})
    # 3 is for a target that never answered (its silence may still have earned verdicts, such as
    # an unanswered initialize); once it answered anything, the verdicts decide, and a target
    # error later in the run is an error among them
    answered = (report.get("implementation") or {}).get("answered")
    if answered is None:  # a report without the flag: answered if anything passed or failed
        answered = any(counts.get(o.value) for o in (Outcome.PASS, Outcome.FAIL, Outcome.WARNING, Outcome.XFAIL, Outcome.STALE))
    if not answered and (status == "target-error" or counts.get(Outcome.FAIL.value) or any(e.get("kind") == "target" for e in errors)):
        return EXIT_TARGET
    if counts.get(Outcome.FAIL.value) or counts.get(Outcome.ERROR.value) or counts.get(Outcome.STALE.value) or errors:
        return EXIT_FAILED
    return EXIT_OK
