"""The scenario registry: plain async functions registered with :func:`scenario`.

A scenario is choreography (``conformance/scenarios/<role>/<page>.py``): it asks its
:class:`~conformance.server.context.ScenarioContext` for a connection, sends, waits with deadlines and
calls ``ctx.check(requirement_id, ok, ...)``.  It declares the requirement ids it checks; every
id is validated against the catalogue when the module is imported, so a typo fails at once.

    @scenario(requirements=["jsonrpc.error.method-not-found"])
    async def unknown_method(ctx): ...

The versions a scenario applies to are its own ``versions``/``since``/``until`` (default: every
version), narrowed to versions at least one cited requirement applies to.  What it connects on is
one :class:`ConnectionKind` (default: the version's shared session).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from enum import Enum
from typing import Awaitable, Callable, Iterable, Sequence

from conformance.spec.requirements import get as _get_requirement
from conformance.spec.versions import VERSIONS, Transport, spec

__all__ = ["ConnectionKind", "Scenario", "scenario", "scenarios", "ScenarioDefinitionError"]

ROLES = ("server", "client")


class ScenarioDefinitionError(ValueError):
    """A scenario declaration is wrong (unknown requirement id, unknown version, duplicate id)."""


class ConnectionKind(Enum):
    """What a scenario's items connect on (``@scenario(connection=...)``, one kind per scenario).

    On stdio, where a connection is a process, ``APART`` stays on the shared session and the
    ``DISPOSABLE`` items of a version take turns on one process, handed on while it still answers a
    round trip (one that connects with ``initialize=False`` starts it, and hands it on once
    initialized: give it a low ``order``); elsewhere each has its own.  Server scenarios only: a
    client scenario's run is its own (the client command started for it).
    """

    SHARED = "shared"  # the version's shared session, reused by every item that does not disturb it
    APART = "apart"  # mostly waits (it would hold the shared items up): a session of its own over HTTP
    FRESH = "fresh"  # disturbs connection state (its own handshake, input that may kill the server): its own connection
    DISPOSABLE = "disposable"  # may break its session, needs no pristine one, judges nothing the session saw before
    ONCE = "once"  # sends the same whatever the version: one probe per run via ScenarioContext.once, judged by each version

    @property
    def fresh(self) -> bool:
        """Never on the shared session: connections of its own (``FRESH``, ``DISPOSABLE``, ``ONCE``)."""
        return self in (ConnectionKind.FRESH, ConnectionKind.DISPOSABLE, ConnectionKind.ONCE)


@dataclass(frozen=True)
class Scenario:
    """One registered scenario."""

    id: str  # "<page>.<function>", e.g. "lifecycle.initialize_handshake"
    func: Callable[..., Awaitable[None]]
    requirements: tuple[str, ...]
    role: str
    versions: frozenset[str]
    transports: frozenset[Transport]
    capability: str | None
    doc: str
    skip_reason: str | None = None  # why the scenario does not apply where it does not
    order: int = 0  # run order within a version (lower first); the transcript-wide checks run last
    waits: bool = False  # mostly waits on the peer's own clock (its timeout): runs beside the busy items
    connection: ConnectionKind = ConnectionKind.SHARED  # what its items connect on
    module: str = ""
    line: int = 0

    def applies_to(self, version: str, transport: Transport | str) -> bool:
        return self.inapplicable(version, transport) is None

    def inapplicable(self, version: str, transport: Transport | str) -> str | None:
        """Why this scenario does not run on ``version``/``transport``; ``None`` when it does."""
        transport = Transport(transport)
        vspec = spec(version)
        if transport not in vspec.transports:
            return f"{version} does not define the {transport.value} transport"
        if version not in self.versions:
            if self.skip_reason:
                return self.skip_reason
            return f"scenario {self.id} applies to {_span(self.versions)}, not {version}"
        if transport not in self.transports:
            names = ", ".join(sorted(t.value for t in self.transports))
            return f"scenario {self.id} applies to the {names} transport(s), not {transport.value}"
        return None


def _span(versions: Iterable[str]) -> str:
    ordered = [v for v in VERSIONS if v in set(versions)]
    if not ordered:
        return "no version"
    if len(ordered) == 1:
        return ordered[0]
    return f"{ordered[0]} .. {ordered[-1]}"


_REGISTRY: dict[str, Scenario] = {}
_LOADED: set[str] = set()


def _version_range(versions: Iterable[str] | None, since: str | None, until: str | None, where: str) -> frozenset[str]:
    for v in (since, until):
        if v is not None and v not in VERSIONS:
            raise ScenarioDefinitionError(f"{where}: unknown version {v!r}; use one of {', '.join(VERSIONS)}")
    if versions is not None:
        out = frozenset(versions)
        unknown = out - set(VERSIONS)
        if unknown:
            raise ScenarioDefinitionError(f"{where}: unknown versions {sorted(unknown)}")
    else:
        out = frozenset(VERSIONS)
    lo = VERSIONS.index(since) if since else 0
    hi = VERSIONS.index(until) if until else len(VERSIONS) - 1
    return frozenset(v for v in out if lo <= VERSIONS.index(v) <= hi)


def scenario(
    *,
    requirements: Sequence[str],
    id: str | None = None,
    versions: Iterable[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    transports: Iterable[Transport | str] | None = None,
    capability: str | None = None,
    connection: ConnectionKind = ConnectionKind.SHARED,
    role: str = "server",
    skip_reason: str | None = None,
    order: int = 0,
    waits: bool = False,
) -> Callable[[Callable[..., Awaitable[None]]], Callable[..., Awaitable[None]]]:
    """Register an async scenario function that checks ``requirements``.

    ``capability``: a dotted path into the server's declared capabilities; when absent the
    scenario's requirements are skipped with the reason.  ``skip_reason``: the reason reported
    for versions outside ``versions``/``since``/``until`` (e.g. "ping was removed in 2026-07-28").
    ``connection``: what its items connect on (:class:`ConnectionKind`).  ``order``: run order
    within a version (lower first).  ``waits``: the scenario spends its time waiting for the
    peer's own timer (a client's request timeout); a runner may run such items beside the others
    rather than in their slots.
    """
    if role not in ROLES:
        raise ScenarioDefinitionError(f"role must be one of {ROLES}, not {role!r}")
    if not isinstance(connection, ConnectionKind):
        raise ScenarioDefinitionError(f"connection must be a ConnectionKind, not {connection!r}")
    if role == "client" and connection is not ConnectionKind.SHARED:
        raise ScenarioDefinitionError(f"connection={connection} is for server scenarios: every client scenario runs its own client")
    reqs = tuple(requirements)
    if not reqs:
        raise ScenarioDefinitionError("a scenario must cite at least one requirement")

    def register(func: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
        module = getattr(func, "__module__", "") or ""
        page = module.rsplit(".", 1)[-1]
        sid = id or f"{page}.{func.__name__}"
        where = f"scenario {sid}"
        cited = []
        for rid in reqs:
            try:
                cited.append(_get_requirement(rid))
            except KeyError:
                raise ScenarioDefinitionError(
                    f"{where} cites unknown requirement id {rid!r}; define it in conformance/spec/catalogue/"
                ) from None
        for req in cited:
            if req.role != role:
                raise ScenarioDefinitionError(f"{where} ({role}) cites {req.id}, a {req.role} requirement")
        vs = _version_range(versions, since, until, where)
        covered = set().union(*(r.versions for r in cited))
        vs = frozenset(v for v in vs if v in covered)
        ts = frozenset(Transport(t) for t in transports) if transports else frozenset(Transport)
        code = getattr(func, "__code__", None)
        sc = Scenario(
            id=sid,
            func=func,
            requirements=reqs,
            role=role,
            versions=vs,
            transports=ts,
            capability=capability,
            doc=" ".join((func.__doc__ or "").split()),
            skip_reason=skip_reason,
            order=order,
            waits=waits,
            connection=connection,
            module=module,
            line=code.co_firstlineno if code is not None else 0,
        )
        old = _REGISTRY.get(sid)
        if old is not None and (old.module, old.func.__qualname__) != (sc.module, func.__qualname__):
            raise ScenarioDefinitionError(f"scenario id {sid!r} is registered twice ({old.module} and {module})")
        _REGISTRY[sid] = sc
        func.__mcp_scenario__ = sc  # type: ignore[attr-defined]
        return func

    return register


def scenarios(role: str = "server") -> list[Scenario]:
    """Every scenario of ``role``, importing ``conformance.scenarios.<role>.*`` once; in run order."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, not {role!r}")
    if role not in _LOADED:
        try:
            pkg = importlib.import_module(f"conformance.scenarios.{role}")
        except ModuleNotFoundError:
            pkg = None
        if pkg is not None:
            for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
                importlib.import_module(f"{pkg.__name__}.{info.name}")
        _LOADED.add(role)
    found = [s for s in _REGISTRY.values() if s.role == role]
    return sorted(found, key=lambda s: (s.order, s.module, s.line, s.id))
