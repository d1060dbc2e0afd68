"""The records both roles and the runtime share: what a run hands out and what it keeps.

:class:`Connection` (a connection handed out during the run, labelled for transcripts),
:class:`SessionInfo` (what a server's handshake told us), :class:`ItemResult` (the outcome of one
scenario x version x transport), :class:`Once` (a probe run once for every version's item), and
the exceptions a scenario ends with (:class:`ScenarioSkipped`, :class:`ScenarioError`,
:class:`VersionUnusable`, :class:`NeedSession`).  They sit below the run, the scheduler and the
contexts of both roles, and import none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from conformance.spec.outcomes import Outcome
from conformance.runtime.peer import ConnectionLost, ErrorResponse, ExpectTimeout, PeerError, RawPeer, UnexpectedMessage
from conformance.wire.transcript import Transcript
from conformance.wire.envelope import Envelope

__all__ = [
    "Connection",
    "ItemResult",
    "NeedSession",
    "Once",
    "ScenarioError",
    "ScenarioSkipped",
    "SessionInfo",
    "VersionUnusable",
    "peer_error_violation",
]


class ScenarioSkipped(Exception):
    """Raised by :meth:`ScenarioContext.skip`: the scenario's unchecked requirements are skipped."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NeedSession(Exception):
    """require_capability() before any connection: the server role opens the shared session and
    runs the scenario again from the start."""


class ScenarioError(Exception):
    """Raised when the shared session for a version could not be established (not the target's
    fault for *this* scenario): the item's unchecked requirements become ``error``."""

    def __init__(self, message: str, *, kind: str = "target", hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.hint = hint


class VersionUnusable(ScenarioError):
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


def peer_error_violation(exc: PeerError) -> tuple[str, str, Any, Any]:
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


class Once:
    """What :meth:`ScenarioContext.once` got: the probe's connection, and its result or exception."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.conn: Connection | None = None
        self.value: Any = None
        self.error: Exception | None = None
        self.cancelled = False
