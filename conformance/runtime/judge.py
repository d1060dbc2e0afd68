"""What a scenario of either role records: checks graded by their requirement's level, skips,
notes, and the transcript excerpts that show them.

:class:`Judge` is the role-free half of a scenario's context (:class:`~conformance.server.context.ScenarioContext`
for the server role, :class:`~conformance.client.context.ClientContext` for the client role add
what the scenario drives).  A requirement's outcome in one scenario run is the worst of its
checks, graded by its level (:func:`conformance.spec.outcomes.grade`); a cited requirement that was
never checked is a ``skip`` ("not reached: ..."); what a check found reaches the run's results
when the item is applied, in run order (:meth:`conformance.runtime.run.Run.run_item`).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterable, NoReturn

from conformance.spec.outcomes import Outcome, Violation, grade
from conformance.runtime.peer import RawPeer
from conformance.runtime.registry import Scenario
from conformance.runtime.records import Connection, ScenarioSkipped
from conformance.spec.versions import Transport, VersionSpec, spec
from conformance.wire.transcript import Direction, TranscriptEntry
from conformance.wire.envelope import MISSING, Envelope

if TYPE_CHECKING:
    from conformance.runtime.run import Run

__all__ = ["Judge"]

_EXCERPT_CONTEXT = 2
_EXCERPT_LIMIT = 12
_EXCERPT_RAW = 2048


def _jsonable(value: Any) -> Any:
    if value is MISSING:
        return "<absent>"
    if isinstance(value, Envelope):
        return value.summary()
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, BaseException):
        return str(value)
    return repr(value)


def _short(value: Any, limit: int = 300) -> str:
    import json

    try:
        text = json.dumps(_jsonable(value), ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."



class Judge:
    """Handed to every scenario (through its role's context): checks, skips, notes.  One per
    scenario run."""

    def __init__(self, run: "Run[Any]", scenario: Scenario, version: str, requirements: Iterable[str]) -> None:
        self._run = run
        self.scenario = scenario
        self.version = version
        self.vspec: VersionSpec = spec(version)
        self.transport: Transport = run.target.transport
        self.strict: bool = run.strict
        self.timeout: float = run.timeout
        self._active = tuple(requirements)  # cited, selected and applicable here
        self._checks: dict[str, list[Outcome]] = {}
        self._notes: dict[str, str] = {}  # not-reached reasons given by the scenario
        self._violations: list[dict[str, Any]] = []
        self._messages: list[str] = []
        self._excerpts: dict[str, list[dict[str, Any]]] = {}
        self._last: Connection | None = None  # where checks without a peer point
        # What this run found, applied to the run's results when the item is committed (in
        # run order, also when items ran concurrently): see Run.run_item.
        self._ops: list[Callable[[], None]] = []

    def _record(self, requirement: str, outcome: Outcome, **kwargs: Any) -> None:
        self._ops.append(partial(self._run.result(requirement, self.version).record, outcome, **kwargs))

    @property
    def requirements(self) -> tuple[str, ...]:
        """The cited requirements that are selected and apply to this version and transport."""
        return self._active

    def applies(self, requirement: str) -> bool:
        return requirement in self._active

    def connections(self) -> list[Connection]:
        """Every connection of this version and transport opened so far in the run."""
        return [c for c in self._run.connections if c.version == self.version]

    def label_of(self, peer: RawPeer) -> str:
        for c in self._run.connections:
            if c.peer is peer:
                return c.label
        return "?"

    # -- verdicts -----------------------------------------------------------------------------

    def skip(self, reason: str) -> NoReturn:
        """Skip the scenario's unchecked requirements with ``reason``."""
        raise ScenarioSkipped(reason)

    def not_reached(self, requirement: str, why: str) -> None:
        """Say why ``requirement`` will not be checked (reported as 'not reached: <why>')."""
        self._notes[requirement] = why

    def note(self, message: str, *, requirement: str | None = None) -> None:
        """A remark for the report (e.g. which reading of an ambiguous rule was accepted), on
        ``requirement`` (default: every requirement this scenario checks)."""
        if message not in self._messages:
            self._messages.append(message)
        targets = [requirement] if requirement else list(self._active)
        for rid in targets:
            if rid in self._active:
                self._record(rid, Outcome.SKIP, message=message, checked=False)

    def check(
        self,
        requirement: str,
        ok: bool,
        *,
        problem: str = "",
        message: str = "",
        expected: Any = None,
        actual: Any = None,
        json_path: str | None = None,
        entries: Iterable[Any] = (),
        peer: RawPeer | None = None,
    ) -> bool:
        """Record one check of ``requirement``; returns ``ok``.

        ``problem`` names the violation ``<Noun><Problem>``; ``expected``/``actual`` say what the
        rule allows and what we saw; ``entries`` are transcript sequence numbers, transcript
        entries or envelopes showing it (default: the last message received)."""
        if requirement not in self.scenario.requirements:
            raise ValueError(f"scenario {self.scenario.id} checks {requirement!r} but does not cite it")
        if requirement not in self._active:
            return bool(ok)  # not selected, or not part of this version/transport
        req = self._run.requirement(requirement)
        ok = bool(ok)
        outcome = grade(req.level, not ok, strict=self.strict)
        self._checks.setdefault(requirement, []).append(outcome)
        conn = self._conn_of(peer)
        seqs = self._seqs(conn, entries)
        excerpt = self._excerpt(conn, seqs)
        if ok:
            if message and message not in self._messages:
                self._messages.append(message)
            if requirement not in self._excerpts:
                self._excerpts[requirement] = excerpt[-4:]
            self._record(requirement, outcome, transcript=excerpt[-4:], message=message or None)
            return True
        text = message or _default_message(problem, expected, actual)
        violation = Violation(
            requirement=requirement,
            problem=problem or "RequirementViolated",
            message=text,
            expected=_jsonable(expected),
            actual=_jsonable(actual),
            json_path=json_path,
            transcript=tuple(seqs),
        ).to_json()
        violation["outcome"] = outcome.value
        violation["level"] = req.level.value
        violation["connection"] = conn.label if conn else None
        violation["scenario"] = self.scenario.id
        self._violations.append(violation)
        self._record(requirement, outcome, violation=violation, transcript=excerpt)
        return False

    # -- helpers ------------------------------------------------------------------------------

    def _conn_of(self, peer: RawPeer | None) -> Connection | None:
        if peer is None:
            return self._last
        for c in self._run.connections:
            if c.peer is peer:
                return c
        return self._last

    @staticmethod
    def _seqs(conn: Connection | None, entries: Iterable[Any]) -> list[int]:
        out: list[int] = []
        for e in entries:
            if isinstance(e, int) and not isinstance(e, bool):
                out.append(e)
            elif isinstance(e, TranscriptEntry):
                out.append(e.seq)
            elif isinstance(e, Envelope) and conn is not None:
                entry = conn.peer.entry_of(e)
                if entry is not None:
                    out.append(entry.seq)
        if not out and conn is not None:
            for entry in reversed(conn.transcript.entries):
                if entry.direction == Direction.IN:
                    out.append(entry.seq)
                    break
            else:
                if conn.transcript.entries:
                    out.append(conn.transcript.entries[-1].seq)
        return out

    @staticmethod
    def _excerpt(conn: Connection | None, seqs: list[int]) -> list[dict[str, Any]]:
        if conn is None:
            return []
        rows = conn.transcript.excerpt(seqs, context=_EXCERPT_CONTEXT, limit=_EXCERPT_LIMIT, max_raw=_EXCERPT_RAW)
        for r in rows:
            r["connection"] = conn.label
        return rows


def _default_message(problem: str, expected: Any, actual: Any) -> str:
    parts = [problem or "requirement violated"]
    if expected is not None:
        parts.append(f"expected {_short(expected)}")
    if actual is not None:
        parts.append(f"got {_short(actual)}")
    return ": ".join(parts[:1]) + (": " + ", ".join(parts[1:]) if len(parts) > 1 else "")


