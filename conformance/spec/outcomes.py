"""Levels, graded outcomes and violations.

Pure data, no I/O.  The grading rule is the product's contract:

* a MUST violated is a ``fail``;
* a SHOULD violated is a ``warning`` (a ``fail`` under strict mode);
* a MAY is informational: violating it is never worse than ``warning`` and only under strict;
* an optional feature the peer did not declare, or a version/transport the requirement does not
  apply to, is a ``skip`` with the reason;
* trouble of our own (harness bug, target that cannot be started or reached) is an ``error``,
  never a ``fail`` of the peer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Level", "Outcome", "Violation", "grade", "worst", "OUTCOME_ORDER"]


class Level(str, enum.Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"

    def __str__(self) -> str:  # used verbatim on the command line and in JSON
        return self.value


class Outcome(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    WARNING = "warning"
    SKIP = "skip"
    ERROR = "error"
    XFAIL = "xfail"  # listed in a baseline and failing as expected
    STALE = "stale"  # listed in a baseline but passing now: the baseline must be updated

    def __str__(self) -> str:
        return self.value


# Severity order used to combine several outcomes into one (highest wins).
OUTCOME_ORDER: dict[Outcome, int] = {
    Outcome.SKIP: 0,
    Outcome.PASS: 1,
    Outcome.XFAIL: 2,
    Outcome.WARNING: 3,
    Outcome.STALE: 4,
    Outcome.FAIL: 5,
    Outcome.ERROR: 6,
}


def worst(outcomes: list[Outcome] | tuple[Outcome, ...]) -> Outcome:
    """The most severe of several outcomes; ``skip`` when there are none."""
    if not outcomes:
        return Outcome.SKIP
    return max(outcomes, key=OUTCOME_ORDER.__getitem__)


def grade(level: Level, violated: bool, *, strict: bool = False) -> Outcome:
    """Grade one checked requirement."""
    if not violated:
        return Outcome.PASS
    if level is Level.MUST:
        return Outcome.FAIL
    if level is Level.SHOULD:
        return Outcome.FAIL if strict else Outcome.WARNING
    # MAY: an optional behaviour described by the spec; a deviation is informational.
    return Outcome.WARNING if strict else Outcome.PASS


@dataclass(frozen=True)
class Violation:
    """One observed breach of a requirement, named ``<Noun><Problem>``.

    ``expected``/``actual`` are JSON-serialisable; ``json_path`` points into the offending message
    when there is one; ``transcript`` lists sequence numbers of the transcript entries that show it.
    """

    requirement: str
    problem: str
    message: str
    expected: Any = None
    actual: Any = None
    json_path: str | None = None
    transcript: tuple[int, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {
            "requirement": self.requirement,
            "problem": self.problem,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
            "json_path": self.json_path,
            "transcript": list(self.transcript),
        }
