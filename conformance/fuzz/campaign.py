"""The fuzz campaign as a library: what both directions share once their campaign is configured.

Entry-free (no argparse): :mod:`conformance.fuzz.command` (``mcp-conformance fuzz``) and
:mod:`conformance.fuzz.pytest_fuzz` (``--mcp-fuzz``) call it, through the two directions,
:mod:`conformance.fuzz.server_campaign` (we are a server's client) and
:mod:`conformance.fuzz.client_campaign` (we are a client's server).  Here: the usage checks both
share (durations, versions), :func:`run_campaigns` (one campaign per version, shrunk, then the
report), the report's ``fuzz`` section (:func:`report_section`, :func:`finding_entry`) and
:func:`write_report`.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from conformance import __version__
from conformance.runtime.connect import TargetError
from conformance.spec.outcomes import Outcome, grade
from conformance.report.model import EXIT_INTERRUPTED
from conformance.spec.requirements import catalogue
from conformance.spec.requirements import get as get_requirement
from conformance.spec.versions import VERSIONS, Transport, spec

if TYPE_CHECKING:
    from conformance.fuzz.engine import Campaign, SignatureRecord
    from conformance.fuzz.replay import Reproducer

__all__ = ["UsageError", "parse_duration", "parse_versions", "versions_on_transport", "Progress", "interrupted",
           "run_campaigns", "report_section", "finding_entry", "save_finding", "print_section", "write_report", "CampaignAndShrink"]

#: a direction's campaign and shrink: (its config, the report directory, shrink?, strict?) -> (section, findings)
CampaignAndShrink = Callable[[Any, Path, bool, bool], Awaitable[tuple[dict[str, Any], list[Any]]]]


class UsageError(Exception):
    """A usage error of the fuzz command (exit 2), or of ``--mcp-fuzz`` (pytest's usage error)."""


def parse_duration(text: str, option: str = "--budget") -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text or "")
    if not m:
        raise UsageError(f"{option} {text!r}: expected a duration such as 60s, 2m, 500ms or 30")
    value = float(m.group(1))
    return value * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def parse_versions(text: str) -> list[str]:
    """``--version``: a comma list of versions, or ``all``."""
    if text == "all":
        return list(VERSIONS)
    out = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in out if v not in VERSIONS]
    if bad or not out:
        raise UsageError(f"--version {text!r}: unknown version {bad[0] if bad else text!r}; use one of {', '.join(VERSIONS)} or all")
    return out


def versions_on_transport(versions: list[str], transport: Transport, *, every: bool) -> list[str]:
    """The versions that define ``transport``: with ``--version all`` the others are left out
    (said on stderr); named ones that do not define it are a usage error."""
    undefined = [v for v in versions if transport not in spec(v).transports]
    if not undefined:
        return versions
    defined = [v for v in VERSIONS if transport in spec(v).transports]
    if not every or len(undefined) == len(versions):
        raise UsageError(f"--transport {transport.value}: {', '.join(undefined)} {'does' if len(undefined) == 1 else 'do'} not "
                         f"define it; it exists in {', '.join(defined)}")
    print(f"mcp-conformance fuzz: --transport {transport.value} is not defined by {', '.join(undefined)}: "
          "left out", file=sys.stderr)
    return [v for v in versions if v not in undefined]


# -- a run of campaigns -------------------------------------------------------------------------------


class Progress:
    """The one-line live progress on stderr (a terminal only)."""

    def __init__(self, live: bool) -> None:
        self.live = live
        self.width = 0

    def __call__(self, camp: Campaign) -> None:
        if not self.live:
            return
        cfg = camp.cfg
        left = ""
        if cfg.budget is not None:
            left = f"  {max(0.0, cfg.budget - camp.elapsed):.0f}s left"
        elif cfg.max_messages:
            left = f"  {max(0, cfg.max_messages - camp.sent):,} to go"
        line = (f"fuzz {cfg.version} {cfg.target.transport.value}: {camp.sent:,} msgs  {camp.rate:,.0f}/s  "
                f"findings {camp.findings_total} ({len(camp.signatures)} kinds){left}")
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()
        self.width = len(line)

    def done(self) -> None:
        if self.live and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is (or wraps) a Ctrl-C or SIGTERM."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(interrupted(e) for e in exc.exceptions)


def run_campaigns(target: Any, versions: Sequence[str], report_dir: Path, campaign_and_shrink: CampaignAndShrink, *,
                  config: Callable[[str, Progress], Any], cannot: str, seed: int, strict: bool, shrink: bool, quiet: bool,
                  role: str = "server") -> int:
    """One campaign per version (``config(version, progress)`` its configuration), shrunk (when
    ``shrink``), then the report; the exit code.  Shared by both directions
    (:mod:`~conformance.fuzz.server_campaign`, :mod:`~conformance.fuzz.client_campaign`)."""
    import anyio

    progress = Progress(live=sys.stderr.isatty() and not quiet)
    started = time.time()
    sections: list[dict[str, Any]] = []
    results: list[Any] = []
    errors: list[dict[str, Any]] = []
    status = "complete"
    for version in versions:
        cfg = config(version, progress)
        try:
            done, rows = anyio.run(campaign_and_shrink, cfg, report_dir, shrink, strict)
        except TargetError as exc:
            progress.done()
            errors.append({"kind": "target", "message": f"{version}: {exc}"})
            status = "target-error"
            print(f"mcp-conformance fuzz: {version}: {cannot}: {exc}", file=sys.stderr)
            continue
        except BaseException as exc:  # noqa: BLE001 - anyio wraps Ctrl-C / SIGTERM in an exception group
            if not interrupted(exc):
                raise
            progress.done()
            status = "interrupted"
            print("mcp-conformance fuzz: interrupted; the report holds the campaigns that finished", file=sys.stderr)
            break
        progress.done()
        sections.append(done)
        results.extend(rows)
        if not quiet:
            print_section(done)
    report = write_report(report_dir, target, list(versions), seed=seed, strict=strict, started=started, status=status,
                          sections=sections, findings=results, errors=errors, role=role)
    print(f"report: {report_dir / 'report.json'}", file=sys.stderr)
    return EXIT_INTERRUPTED if status == "interrupted" else int(report["exit_code"])



# -- the report ------------------------------------------------------------------------------------


def report_section(camp: Campaign) -> dict[str, Any]:
    """The report's section of one campaign (either direction); its ``findings`` filled in by the caller."""
    cfg = camp.cfg
    return {
        "version": cfg.version,
        "transport": cfg.target.transport.value,
        "seed": cfg.seed,
        "budget_seconds": cfg.budget,
        "max_messages": cfg.max_messages,
        "stopped_by": camp.stopped_by,
        "messages": camp.sent,
        "judged": camp.judged,
        "barriers": camp.barriers,
        "in_runs": camp.in_runs,
        "sent_again_alone": camp.rechecks,
        "seconds": round(camp.elapsed, 3),
        "judged_per_second": round(camp.rate, 1),
        "window": cfg.window,
        "grace_seconds": cfg.grace,
        "restarts": camp.restarts,
        "unattributed_answers": camp.unattributed,
        "server_requests": camp.server_requests,
        "corpus": {"seeds": len(camp.corpus.seeds) if camp.corpus else 0, "digest": camp.corpus.digest() if camp.corpus else None,
                   "methods": camp.corpus.methods() if camp.corpus else []},
        "tools_called": sorted({s.message["params"]["name"] for s in camp.corpus.seeds if s.source == "tools/list"}) if camp.corpus else [],
        "operators": {name: dict(v) for name, v in camp.by_operator.items()},
        "methods": dict(camp.by_method),
        "memory": camp.memory_summary(),
        "findings": [],
    }


def finding_entry(rec: SignatureRecord, repro: Reproducer | None, path: Path | None, report_dir: Path, strict: bool, version: str | None = None) -> dict[str, Any]:
    """One finding of the report: the record ``rec`` of its signature, graded, with its reproducer."""
    f = rec.finding
    req = get_requirement(f.requirement)
    outcome = grade(req.level, True, strict=strict)
    return {
        "requirement": f.requirement,
        "level": req.level.value,
        "outcome": outcome.value,
        "url": req.url_for(version) if hasattr(req, "url_for") else req.url,
        "quote": req.quote,
        "problem": f.problem,
        "message": f.message,
        "expected": f.expected,
        "actual": f.actual,
        "frame_was": rec.expect_what,
        "accepted": list(rec.accepted),
        "count": rec.count,
        "first_seen_seconds": round(rec.first_seen, 3),
        "operators": dict(rec.operators),
        "methods": dict(rec.methods),
        "reproducer": str(path.relative_to(report_dir)) if path is not None else None,
        "frame": repro.to_json()["frame"] if repro is not None else None,
        "original": repro.to_json()["original"] if repro is not None else None,
        "mutations": repro.mutations if repro is not None else [],
        "index": repro.index if repro is not None else None,
        "shrink": repro.shrink if repro is not None else {},
        "stability": repro.stability if repro is not None else {},
        "detail": {k: v for k, v in rec.detail.items() if isinstance(v, (str, int, float, type(None)))},
    }


def save_finding(section: dict[str, Any], rec: SignatureRecord, repro: Reproducer | None, report_dir: Path, name: str, *, strict: bool,
                 version: str) -> dict[str, Any]:
    """The reproducer ``repro`` (if any) saved as ``reproducers/<name>.json`` under ``report_dir``,
    and the finding of ``rec`` entered in ``section``; the entry."""
    path = None
    if repro is not None:
        repro_dir = report_dir / "reproducers"
        repro_dir.mkdir(parents=True, exist_ok=True)
        path = repro_dir / f"{name}.json"
        path.write_text(json.dumps(repro.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    entry = finding_entry(rec, repro, path, report_dir, strict, version)
    section["findings"].append(entry)
    return entry


def print_section(section: dict[str, Any]) -> None:
    print(f"fuzz {section['version']} over {section['transport']}: {section['messages']:,} messages, "
          f"{section['judged']:,} judged in {section['seconds']:.1f} s ({section['judged_per_second']:,.0f}/s), "
          f"{len(section['findings'])} finding(s)")
    for f in section["findings"]:
        print(f"  {f['outcome'].upper():7} {f['requirement']} [{f['level']}] {f['problem']} x{f['count']}: {f['message'][:160]}")
        if f.get("reproducer"):
            print(f"          reproducer: {f['reproducer']}  (mcp-conformance fuzz --replay ...)")
    mem = section["memory"]
    if mem.get("sampled"):
        who = "client" if section.get("role") == "client" else "server"
        print(f"  {who} memory: {mem['start_kib']} KiB at start, peak {mem['peak_kib']} KiB, {mem['end_kib']} KiB at the end")
    if section.get("role") == "client":
        if "times (" in (section.get("stopped_by") or ""):
            print(f"  stopped early: {section['stopped_by']}")
        print(f"  {section['client_runs']} client run(s), {section['answers']} answers to its requests "
              f"({section['mutated_answers']} mutated); runs ended: "
              + ", ".join(f"{k} x{v}" for k, v in section["runs_ended"].items()))
        if section.get("tolerated_exits"):
            print("  the client ended its session after malformed input (not a finding): "
                  + ", ".join(f"{k} x{v}" for k, v in section["tolerated_exits"].items()))
        for u in section.get("unconfirmed") or []:
            print(f"  dropped {u['requirement']} {u['problem']} x{u['count']}: {u['why']}")


def write_report(report_dir: Path, target: Any, versions: list[str], *, seed: int, strict: bool, started: float, status: str,
                 sections: list[dict[str, Any]], findings: list[dict[str, Any]], errors: list[dict[str, Any]],
                 role: str = "server") -> dict[str, Any]:
    """``report.json`` (with its ``fuzz`` section) and its renderings in ``report_dir``; the report."""
    from conformance.report.model import RequirementResult, build_report
    from conformance.report.render import render

    results: dict[tuple[str, str], RequirementResult] = {}
    for section in sections:
        for f in section["findings"]:
            key = (f["requirement"], section["version"])
            r = results.get(key)
            if r is None:
                r = results[key] = RequirementResult(f["requirement"], section["version"], section["transport"])
                r.add_scenario("fuzz")
            r.record(Outcome(f["outcome"]), violation={
                "requirement": f["requirement"], "problem": f["problem"], "message": f["message"],
                "expected": f["expected"], "actual": f["actual"], "json_path": None, "transcript": [],
                "outcome": f["outcome"], "level": f["level"], "scenario": "fuzz", "reproducer": f["reproducer"],
            })
    report = build_report(
        suite_version=__version__, started=started, finished=time.time(), status=status, target=target.to_json(),
        transport=target.transport.value, versions=versions, strict=strict, selection={"select": ["fuzz"], "exclude": []},
        results=list(results.values()), requirements=catalogue(), errors=errors, role=role,
    )
    report["fuzz"] = {"seed": seed, "campaigns": sections}
    report_dir.mkdir(parents=True, exist_ok=True)
    for name, text in render(report).items():
        (report_dir / name).write_text(text, encoding="utf-8")
    return report
