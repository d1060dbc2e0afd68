"""Baselines of expected failures: parse them, apply them to a report.  Pure, no I/O.

Two formats are accepted:

* the official conformance runner's ``--expected-failures`` YAML::

      server:
        - server-initialize          # a whole scenario may fail
        - tools-call:some-check-id   # only this check may fail
      client:
        - initialize

  Entries are matched against the ``aliases`` of our requirements (the official runner's scenario
  and check ids): an entry matches a requirement when the entry as written, its scenario part or
  its check part is one of them.

* a list of our requirement ids (or aliases), as YAML (a list, or ``requirements:``) or as plain
  text, one per line, ``#`` comments allowed.  ``id@version`` and ``id@version/transport`` narrow
  an entry to one version (and transport)::

      ping.response
      jsonrpc.error.parse-error@2024-11-05
      lifecycle.initialize.result@2025-11-25/streamable-http

Applying a baseline follows the official runner's rules, per entry: when a result it matches
fails (or warns) the entry is *expected* and those results become ``xfail``; when none fails and
one passes, the entry is *stale* and the passing results become ``stale``, which fails the run
(exit 1) so the baseline stays honest; when it matches nothing that was checked (not run,
skipped, another role) it is *unmatched*, reported but not an error.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Mapping

import yaml

from conformance.spec.outcomes import Outcome
from conformance.report.model import exit_code, summarize
from conformance.spec.versions import VERSIONS, Transport

__all__ = [
    "Baseline",
    "BaselineEntry",
    "BaselineError",
    "parse_baseline",
    "apply_baseline",
    "strip_baseline",
]

OFFICIAL = "official-yaml"
REQUIREMENTS = "requirements"
_ROLES = ("server", "client")
_FAILING = {Outcome.FAIL.value, Outcome.WARNING.value}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_PLAIN_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*(@[0-9]{4}-[0-9]{2}-[0-9]{2}(/[a-z-]+)?)?$")


class BaselineError(ValueError):
    """The baseline file cannot be understood; the message names the entry and the fix."""


@dataclass(frozen=True)
class BaselineEntry:
    text: str  # as written
    role: str | None  # "server" / "client" (official YAML), None for our requirement lists
    scenario: str  # official scenario id, or our requirement id / alias
    check: str | None = None  # official check id ("scenario:check")
    version: str | None = None
    transport: str | None = None

    def keys(self) -> set[str]:
        keys = {self.text, self.scenario}
        if self.check:
            keys.add(self.check)
        return keys

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "role": self.role, "scenario": self.scenario, "check": self.check,
                "version": self.version, "transport": self.transport}


@dataclass(frozen=True)
class Baseline:
    entries: tuple[BaselineEntry, ...]
    format: str  # "official-yaml" | "requirements"
    source: str = "baseline"

    def entry_for(self, result: Mapping[str, Any], *, role: str = "server") -> BaselineEntry | None:
        """The first entry that lists ``result`` (a dict with ``requirement``, ``aliases``,
        ``version``, ``transport``), or None."""
        for e in self.entries:
            if (e.role is None or e.role == role) and _matches(e, result):
                return e
        return None


def parse_baseline(text: str, *, source: str = "baseline") -> Baseline:
    """Parse a baseline (official YAML, YAML list or plain text); raise :class:`BaselineError`."""
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln]
    if lines and all(_PLAIN_LINE.match(ln) for ln in lines):
        return Baseline(_dedupe(_requirement_entry(ln, source) for ln in lines), REQUIREMENTS, source)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BaselineError(f"{source}: not valid YAML ({_yaml_where(exc)}); expected `server:`/`client:` lists "
                            "of the official runner's scenario ids, or a list of requirement ids") from None
    if data is None:
        return Baseline((), REQUIREMENTS, source)
    if isinstance(data, list):
        return Baseline(_dedupe(_requirement_entry(_scalar(e, "list", source), source) for e in data), REQUIREMENTS, source)
    if not isinstance(data, dict):
        raise BaselineError(f"{source}: expected `server:`/`client:` lists or a list of requirement ids, "
                            f"not a {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in (*_ROLES, REQUIREMENTS))
    if unknown:
        raise BaselineError(f"{source}: unknown key(s) {', '.join(unknown)}; use `server:`, `client:` "
                            "(the official runner's format) or `requirements:`")
    entries: list[BaselineEntry] = []
    for role in _ROLES:
        if role in data:
            entries += _official_section(data[role], role, source)
    if REQUIREMENTS in data:
        items = data[REQUIREMENTS] or []
        if not isinstance(items, list):
            raise BaselineError(f"{source}: `requirements` must be a list of requirement ids")
        entries += [_requirement_entry(_scalar(e, REQUIREMENTS, source), source) for e in items]
    fmt = OFFICIAL if any(r in data for r in _ROLES) else REQUIREMENTS
    return Baseline(_dedupe(entries), fmt, source)


def _yaml_where(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"line {mark.line + 1}: {problem}" if mark is not None else str(problem)


def _scalar(entry: Any, section: str, source: str) -> str:
    if isinstance(entry, dict) and len(entry) == 1:
        (key, value), = entry.items()
        if value is not None and not isinstance(value, (dict, list)):
            raise BaselineError(f"{source}: {section} entry {{{key}: {value}}} is a mapping; did you write "
                                f"'- {key}: {value}'? Remove the space after the colon: '- {key}:{value}'")
    if isinstance(entry, (dict, list)) or entry is None or isinstance(entry, bool):
        raise BaselineError(f"{source}: {section} entry {entry!r} is not a scenario or requirement id")
    text = str(entry).strip()
    if not text:
        raise BaselineError(f"{source}: an empty {section} entry")
    return text


def _official_section(items: Any, role: str, source: str) -> list[BaselineEntry]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise BaselineError(f"{source}: `{role}` must be a list of scenario names")
    out = []
    for item in items:
        text = _scalar(item, role, source)
        scenario, sep, check = text.partition(":")
        if sep and (not scenario or not check):
            raise BaselineError(f"{source}: {role} entry {text!r} is not '<scenario>' or '<scenario>:<check-id>'; "
                                "both sides of the colon are required")
        out.append(BaselineEntry(text=text, role=role, scenario=scenario, check=check or None))
    whole = {e.scenario for e in out if e.check is None}
    for e in out:
        if e.check is not None and e.scenario in whole:
            raise BaselineError(f"{source}: {e.scenario!r} expects the whole scenario to fail, so {e.text!r} "
                                "is redundant; remove one or the other")
    return out


def _requirement_entry(text: str, source: str) -> BaselineEntry:
    rid, _, where = text.partition("@")
    version, _, transport = where.partition("/")
    if not _ID.match(rid):
        raise BaselineError(f"{source}: {text!r} is not a requirement id (e.g. 'ping.response' or "
                            "'ping.response@2025-11-25')")
    if where and version not in VERSIONS:
        raise BaselineError(f"{source}: {text!r} names unknown version {version!r}; use one of {', '.join(VERSIONS)}")
    transports = [t.value for t in Transport]
    if transport and transport not in transports:
        raise BaselineError(f"{source}: {text!r} names unknown transport {transport!r}; use one of {', '.join(transports)}")
    return BaselineEntry(text=text, role=None, scenario=rid, version=version or None, transport=transport or None)


def _dedupe(entries: Any) -> tuple[BaselineEntry, ...]:
    seen: dict[tuple[str | None, str], BaselineEntry] = {}
    for e in entries:
        seen.setdefault((e.role, e.text), e)
    return tuple(seen.values())


# -------------------------------------------------------------------------------------------
# applying


def _names(result: Mapping[str, Any]) -> set[str]:
    return {result["requirement"], *(result.get("aliases") or [])}


def _matches(entry: BaselineEntry, result: Mapping[str, Any]) -> bool:
    if entry.version and result["version"] != entry.version:
        return False
    if entry.transport and result["transport"] != entry.transport:
        return False
    return bool(entry.keys() & _names(result))


def strip_baseline(report: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``report`` with any applied baseline undone (original outcomes back)."""
    rep = copy.deepcopy(dict(report))
    if "baseline" not in rep and not any("baseline" in r for r in rep.get("results", [])):
        return rep
    for r in rep["results"]:
        mark = r.pop("baseline", None)
        if mark:
            r["outcome"] = mark["original"]
    rep.pop("baseline", None)
    rep["summary"] = _summary(rep, rep["results"])
    rep["exit_code"] = exit_code(rep)
    return rep


def apply_baseline(report: Mapping[str, Any], baseline: Baseline, *, role: str = "server") -> dict[str, Any]:
    """A copy of ``report`` with ``baseline`` applied (replacing any applied before): outcomes
    ``xfail``/``stale`` with the entry that caused them, ``report["baseline"]`` listing expected,
    stale and unmatched entries, summary and exit code recomputed."""
    rep = strip_baseline(report)
    results = rep["results"]
    expected: list[str] = []
    stale: list[str] = []
    unmatched: list[str] = []
    changes: dict[int, tuple[str, str]] = {}  # result index -> (new outcome, entry)
    for entry in baseline.entries:
        if entry.role is not None and entry.role != role:
            unmatched.append(entry.text)
            continue
        matched = [i for i, r in enumerate(results) if _matches(entry, r)]
        failing = [i for i in matched if results[i]["outcome"] in _FAILING]
        passing = [i for i in matched if results[i]["outcome"] == Outcome.PASS.value]
        if failing:
            expected.append(entry.text)
            for i in failing:
                changes.setdefault(i, (Outcome.XFAIL.value, entry.text))
        elif passing:
            stale.append(entry.text)
            for i in passing:
                changes.setdefault(i, (Outcome.STALE.value, entry.text))
        else:
            unmatched.append(entry.text)
    for i, (outcome, text) in changes.items():
        r = results[i]
        r["baseline"] = {"entry": text, "original": r["outcome"]}
        r["outcome"] = outcome
    rep["baseline"] = {
        "source": baseline.source,
        "format": baseline.format,
        "entries": [e.to_json() for e in baseline.entries],
        "expected": expected,
        "stale": stale,
        "unmatched": unmatched,
    }
    rep["summary"] = _summary(rep, results)
    rep["exit_code"] = exit_code(rep)
    return rep


def _summary(rep: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary of ``results``, keeping the report's count of not-applicable combinations."""
    out = summarize(results)
    if "not_applicable" in rep:
        out["not_applicable"] = len(rep["not_applicable"] or [])
    return out
