"""What a scenario sees: connections handed out, checks recorded and graded.

:class:`ScenarioContext` is what a scenario sees: ``connect()``, ``check()``, ``skip()``,
``require_capability()``.  A requirement's outcome in one scenario run is the worst of its
checks, graded by its level (:func:`conformance.outcomes.grade`); a cited requirement that was
never checked is a ``skip`` ("not reached: ..."); a target we cannot start or reach is an
``error``, never a ``fail``.  The run behind it -- sessions, processes, scheduling -- is
:class:`conformance.runner.Runner`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, NoReturn

import anyio

from conformance.connect import Target, TargetError
from conformance.outcomes import Outcome, Violation, grade
from conformance.peer import ConnectionLost, ErrorResponse, ExpectTimeout, PeerError, RawPeer, UnexpectedMessage
from conformance.registry import Scenario
from conformance.spec.versions import Transport, VersionSpec, spec
from conformance.transcript import Direction, Transcript, TranscriptEntry
from conformance.wire.envelope import MISSING, Envelope, Kind

if TYPE_CHECKING:
    from conformance.runner import Runner

__all__ = [
    "ScenarioContext",
    "ScenarioSkipped",
    "ItemResult",
    "Connection",
    "SessionInfo",
]

UNSUPPORTED_VERSION_PROBE = "1900-01-01"

_EXCERPT_CONTEXT = 2
_EXCERPT_LIMIT = 12
_EXCERPT_RAW = 2048


class ScenarioSkipped(Exception):
    """Raised by :meth:`ScenarioContext.skip`: the scenario's unchecked requirements are skipped."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _NeedSession(Exception):
    """require_capability() before any connection: the runner opens the shared session and
    runs the scenario again from the start."""


class _ScenarioError(Exception):
    """Raised when the shared session for a version could not be established (not the target's
    fault for *this* scenario): the item's unchecked requirements become ``error``."""

    def __init__(self, message: str, *, kind: str = "target", hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.hint = hint


class _VersionUnusable(_ScenarioError):
    """The target cannot be used for a version at all: its handshake was not answered within the
    timeout, or the session it opened refuses every request.  That is one verdict (``verdict``,
    a failed check of ``requirement``), recorded by every item citing the requirement; every other
    item of the version is skipped at once with ``reason`` -- no item waits the timeout again."""

    def __init__(self, requirement: str, *, problem: str, message: str, expected: Any, actual: Any,
                 reason: str, conn: "Connection | None" = None, hint: str | None = None,
                 version: str | None = None) -> None:
        super().__init__(reason, kind="target", hint=hint)
        self.version = version  # the version made unusable (else conn's)
        self.requirement = requirement
        self.problem = problem
        self.verdict = message
        self.expected = expected
        self.actual = actual
        self.reason = reason
        self.conn = conn


# -------------------------------------------------------------------------------------------
# data


@dataclass
class SessionInfo:
    """What the handshake (``initialize`` or ``server/discover``) of a session told us."""

    version: str
    negotiated_version: str | None = None
    capabilities: dict = field(default_factory=dict)
    server_info: dict = field(default_factory=dict)
    instructions: str | None = None
    result: Any = None
    unsupported: str | None = None  # why this version is not served by the target (-> skip)
    response: Envelope | None = None  # the initialize response, when it was a result

    def to_json(self) -> dict[str, Any]:
        return {
            "requested_version": self.version,
            "protocol_version": self.negotiated_version,
            "server_info": self.server_info,
            "capabilities": self.capabilities,
            "instructions": self.instructions,
            "unsupported": self.unsupported,
        }


@dataclass
class Connection:
    """A connection handed out during the run (shared or fresh), labelled for transcripts."""

    label: str
    peer: RawPeer
    version: str
    shared: bool
    info: SessionInfo | None = None
    _close: Any = None  # anyio.Event: ask the host task to close it
    _done: Any = None  # anyio.Event: the host task finished

    @property
    def transcript(self) -> Transcript:
        return self.peer.transcript

    @property
    def alive(self) -> bool:
        return self.peer.closed is None and not self._done.is_set()


@dataclass
class ItemResult:
    """The outcome of one scenario x version x transport run (what a pytest item reports)."""

    scenario: str
    version: str
    transport: str
    outcome: Outcome = Outcome.SKIP
    requirements: dict[str, Outcome] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # skip/error reason per requirement
    violations: list[dict[str, Any]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None  # "target" | "harness"
    hint: str | None = None
    skip_reason: str | None = None
    duration: float = 0.0

    def failures(self) -> list[dict[str, Any]]:
        return [v for v in self.violations if v.get("outcome") == Outcome.FAIL.value]

    def warnings(self) -> list[dict[str, Any]]:
        return [v for v in self.violations if v.get("outcome") == Outcome.WARNING.value]


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


def _dig(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return MISSING
        cur = cur[part]
    return cur


# -------------------------------------------------------------------------------------------
# the scenario's view


class ScenarioContext:
    """Handed to every scenario: connections, checks, skips.  One per scenario run."""

    def __init__(self, runner: "Runner", scenario: Scenario, version: str, requirements: Iterable[str]) -> None:
        self._runner = runner
        self.scenario = scenario
        self.version = version
        self.vspec: VersionSpec = spec(version)
        self.transport: Transport = runner.target.transport
        self.target: Target = runner.target
        self.strict: bool = runner.strict
        self.timeout: float = runner.timeout
        self._active = tuple(requirements)  # cited, selected and applicable here
        self._checks: dict[str, list[Outcome]] = {}
        self._notes: dict[str, str] = {}  # not-reached reasons given by the scenario
        self._violations: list[dict[str, Any]] = []
        self._messages: list[str] = []
        self._excerpts: dict[str, list[dict[str, Any]]] = {}
        self._fresh: list[Connection] = []
        self._disposable: Connection | None = None  # the version's disposable connection, while this item has it
        self._last: Connection | None = None
        self._info: SessionInfo | None = None
        # What this run found, applied to the runner's results when the item is committed (in
        # run order, also when items ran concurrently): see Runner.run_item.
        self._ops: list[Callable[[], None]] = []

    def _record(self, requirement: str, outcome: Outcome, **kwargs: Any) -> None:
        self._ops.append(partial(self._runner.result(requirement, self.version).record, outcome, **kwargs))

    # -- session facts ------------------------------------------------------------------------

    @property
    def server_capabilities(self) -> dict:
        return self._info.capabilities if self._info else {}

    @property
    def server_info(self) -> dict:
        return self._info.server_info if self._info else {}

    @property
    def negotiated_version(self) -> str | None:
        return self._info.negotiated_version if self._info else None

    @property
    def requirements(self) -> tuple[str, ...]:
        """The cited requirements that are selected and apply to this version and transport."""
        return self._active

    def applies(self, requirement: str) -> bool:
        return requirement in self._active

    # -- connections --------------------------------------------------------------------------

    async def connect(self, *, initialize: bool = True, fresh: bool = False, **peer_opts: Any) -> RawPeer:
        """A connection for this scenario's version.

        ``initialize=True, fresh=False`` (default): the shared session (initialized, or for a
        stateless version a peer with automatic ``_meta`` whose ``server/discover`` ran once).
        ``fresh=True`` or any ``peer_opts`` (RawPeer options, ``headers`` for HTTP): a new
        connection, initialized unless ``initialize=False``.  Skips the scenario when the target
        does not support the version; a target that cannot be reached is an error."""
        failed = self._runner._shared_error.get(self.version)
        if failed is not None:
            raise failed  # the plain handshake of this version already failed: don't wait again
        known = self._runner.sessions.get(self.version)
        if initialize and known is not None and known.unsupported:
            self._info = known  # the shared handshake found the version unsupported: don't ask again
            self.skip(known.unsupported)
        if not fresh and initialize and not peer_opts and not self._runner.own_connection(self.scenario):
            conn = await self._runner.shared(self.version)
        elif (self._runner.shares_disposable(self.scenario) and not self._fresh
              and (not peer_opts or (not initialize and set(peer_opts) <= {"capabilities"}))):
            # an initialized one takes its turn on the version's disposable connection; a pristine
            # one is new, and goes on to the next disposable item if it ends up initialized (the
            # client capabilities it declared in its initialize then stay declared)
            if initialize:
                conn = await self._runner.disposable(self.version, self.scenario.id)
            else:
                conn = await self._runner.fresh(self.version, initialize=False, **peer_opts)
            self._fresh.append(conn)
            self._disposable = conn
        else:
            conn = await self._runner.fresh(self.version, initialize=initialize, **peer_opts)
            self._fresh.append(conn)
        if conn.info is not None:
            self._info = conn.info
            if conn.info.unsupported:
                self.skip(conn.info.unsupported)
        self._last = conn
        return conn.peer

    async def once(self, key: str, probe: Callable[[RawPeer], Awaitable[Any]]) -> tuple[Any, RawPeer]:
        """``await probe(peer)`` on a connection of its own (pristine: no handshake), once per run
        for every version's item of a ``once`` scenario: what the probe sends must not depend on
        the version under test.  The first item to get here runs it (on the connections planned
        for the first version it applies to); the others wait and judge the same answer -- or get
        the same exception.  Returns ``(what probe returned, the probe's peer)``; later checks of
        this item without a peer point at that connection."""
        runner = self._runner
        while True:
            slot = runner._once.get(key)
            if slot is not None:
                await slot.done.wait()
                if slot.cancelled:  # the item that ran it was cancelled: this one runs it
                    continue
                if slot.conn is not None:
                    self._last = slot.conn
                if slot.error is not None:
                    raise slot.error
                assert slot.conn is not None
                return slot.value, slot.conn.peer
            slot = runner._once[key] = _Once()
            try:
                conn = await runner.fresh(runner._once_home.get(self.scenario.id, self.version), initialize=False)
                self._fresh.append(conn)
                slot.conn = self._last = conn
                slot.value = await probe(conn.peer)
            except anyio.get_cancelled_exc_class():
                if runner._once.get(key) is slot:
                    del runner._once[key]  # another version's item runs it again
                slot.cancelled = True
                raise
            except Exception as exc:
                slot.error = exc
                raise
            finally:
                slot.done.set()
            return slot.value, conn.peer

    async def shared_handshake(self) -> Envelope | None:
        """The result that answered the shared session's ``initialize`` -- the same request a
        handshake scenario would send on a connection of its own -- for judging without starting
        one (on stdio a process); later checks of this scenario without a peer point at the
        shared session.  None when the shared handshake got no result (an error, silence, a
        stateless version): the caller makes its own and judges what it gets."""
        try:
            conn = await self._runner.shared(self.version)
        except (_ScenarioError, TargetError, PeerError):
            return None
        env = conn.info.response if conn.info is not None else None
        if env is None or env.kind is not Kind.RESULT:
            return None
        self._last = conn
        return env

    async def session_info(self) -> SessionInfo:
        """The shared session's handshake facts (opens the shared session if needed)."""
        conn = await self._runner.shared(self.version)
        if conn.info is not None:
            self._info = conn.info
        return conn.info or SessionInfo(self.version)

    def connections(self) -> list[Connection]:
        """Every connection of this version and transport opened so far in the run."""
        return [c for c in self._runner.connections if c.version == self.version]

    def label_of(self, peer: RawPeer) -> str:
        for c in self._runner.connections:
            if c.peer is peer:
                return c.label
        return "?"

    # -- verdicts -----------------------------------------------------------------------------

    def skip(self, reason: str) -> NoReturn:
        """Skip the scenario's unchecked requirements with ``reason``."""
        raise ScenarioSkipped(reason)

    def require_capability(self, path: str) -> None:
        """Skip unless the server declared the capability (dotted path, e.g. ``resources.subscribe``).

        Called before the scenario connected, it asks the runner to open the shared session and
        start the scenario again (nothing has been sent yet, so that is safe)."""
        info = self._info or self._runner.sessions.get(self.version)
        if info is None:
            if self._last is not None:  # connected, but only fresh connections without a handshake
                raise RuntimeError("require_capability() needs the server's capabilities: use connect() (initialized) first")
            raise _NeedSession()
        self._info = info
        if info.unsupported:
            self.skip(info.unsupported)
        value = _dig(info.capabilities, path)
        if value is MISSING or value is None or value is False:
            self.skip(f"server did not declare capability {path!r}")

    def not_reached(self, requirement: str, why: str) -> None:
        """Say why ``requirement`` will not be checked (reported as 'not reached: <why>')."""
        self._notes[requirement] = why

    def alone(self) -> Any:
        """``async with ctx.alone():`` the part of a scenario that changes what every session of
        the server sees (a tool list, a watched resource), where items on other sessions of the
        same server could see it (HTTP, overlapping items): it runs while no other item does.
        The rest of the scenario (discovering whether it applies at all) runs beside the others.
        Elsewhere (stdio: a server per session; ``--jobs 1``) it changes nothing."""
        wide = self._runner._server_wide
        if wide is None:
            return contextlib.nullcontext()
        return wide.alone_within()

    def aside(self) -> Any:
        """``async with ctx.aside():`` a wait whose outcome no other item's change can alter (the
        answer to this scenario's own request on its own session): where items share the server,
        a part of another item that runs alone (:meth:`alone`) need not wait for it to end.
        Elsewhere it changes nothing."""
        wide = self._runner._server_wide
        if wide is None:
            return contextlib.nullcontext()
        return wide.aside()

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
        req = self._runner.requirement(requirement)
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
        for c in self._runner.connections:
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


def _peer_error_violation(exc: PeerError) -> tuple[str, str, Any, Any]:
    """(problem, message, expected, actual) for an expectation that failed inside a scenario."""
    if isinstance(exc, ExpectTimeout):
        return "NoResponse", str(exc), exc.what, f"nothing matching within {exc.waited:.3g} s"
    if isinstance(exc, ConnectionLost):
        return "ConnectionLost", str(exc), exc.what or "an open connection", str(exc.cause)
    if isinstance(exc, UnexpectedMessage):
        return "UnexpectedMessage", str(exc), exc.why, exc.envelope.summary()
    if isinstance(exc, ErrorResponse):
        return "ErrorResponse", str(exc), "a result", exc.envelope.summary()
    return type(exc).__name__, str(exc), None, None


class _Once:
    """What :meth:`ScenarioContext.once` got: the probe's connection, and its result or exception."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.conn: Connection | None = None
        self.value: Any = None
        self.error: Exception | None = None
        self.cancelled = False
