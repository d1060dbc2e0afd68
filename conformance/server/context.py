"""What a server scenario sees: connections handed out by the server role's pool, checks recorded.

:class:`ScenarioContext` adds to the role-free :class:`~conformance.runtime.judge.Judge`
(``check()``, ``skip()``, ``note()``, ``not_reached()``) what a scenario needs to drive a server:
``connect()`` (the version's shared session, a fresh connection, the disposable one),
``once()``, ``require_capability()``, ``alone()``/``aside()``.  The connections come from
:class:`~conformance.server.role.ServerRole` through its public interface; a target we cannot
start or reach is an ``error``, never a ``fail``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable

import anyio

from conformance.runtime.connect import Target, TargetError
from conformance.runtime.peer import PeerError, RawPeer
from conformance.runtime.registry import Scenario
from conformance.runtime.judge import Judge
from conformance.runtime.records import Connection, NeedSession, ScenarioError, SessionInfo
from conformance.wire.envelope import MISSING, Envelope, Kind

if TYPE_CHECKING:
    from conformance.runtime.run import Run
    from conformance.server.role import ServerRole

__all__ = ["ScenarioContext", "UNSUPPORTED_VERSION_PROBE"]

UNSUPPORTED_VERSION_PROBE = "1900-01-01"


def _dig(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return MISSING
        cur = cur[part]
    return cur


class ScenarioContext(Judge):
    """Handed to every server scenario: connections, checks, skips.  One per scenario run."""

    def __init__(self, run: "Run[ServerRole]", pool: "ServerRole", scenario: Scenario, version: str,
                 requirements: Iterable[str]) -> None:
        super().__init__(run, scenario, version, requirements)
        self._pool = pool
        self.target: Target = pool.target
        self._fresh: list[Connection] = []
        self._disposable: Connection | None = None  # the version's disposable connection, while this item has it
        self._info: SessionInfo | None = None

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

    # -- connections --------------------------------------------------------------------------

    async def connect(self, *, initialize: bool = True, fresh: bool = False, **peer_opts: Any) -> RawPeer:
        """A connection for this scenario's version.

        ``initialize=True, fresh=False`` (default): the shared session (initialized, or for a
        stateless version a peer with automatic ``_meta`` whose ``server/discover`` ran once).
        ``fresh=True`` or any ``peer_opts`` (RawPeer options, ``headers`` for HTTP): a new
        connection, initialized unless ``initialize=False``.  Skips the scenario when the target
        does not support the version; a target that cannot be reached is an error."""
        failed = self._pool.handshake_failure(self.version)
        if failed is not None:
            raise failed  # the plain handshake of this version already failed: don't wait again
        known = self._pool.sessions.get(self.version)
        if initialize and known is not None and known.unsupported:
            self._info = known  # the shared handshake found the version unsupported: don't ask again
            self.skip(known.unsupported)
        if not fresh and initialize and not peer_opts and not self._pool.own_connection(self.scenario):
            conn = await self._pool.shared(self.version)
        elif (self._pool.shares_disposable(self.scenario) and not self._fresh
              and (not peer_opts or (not initialize and set(peer_opts) <= {"capabilities"}))):
            # an initialized one takes its turn on the version's disposable connection; a pristine
            # one is new, and goes on to the next disposable item if it ends up initialized (the
            # client capabilities it declared in its initialize then stay declared)
            if initialize:
                conn = await self._pool.disposable(self.version, self.scenario.id)
            else:
                conn = await self._pool.fresh(self.version, initialize=False, **peer_opts)
            self._fresh.append(conn)
            self._disposable = conn
        else:
            conn = await self._pool.fresh(self.version, initialize=initialize, **peer_opts)
            self._fresh.append(conn)
        if conn.info is not None:
            self._info = conn.info
            if conn.info.unsupported:
                self.skip(conn.info.unsupported)
        self._last = conn
        return conn.peer

    async def once(self, key: str, probe: Callable[[RawPeer], Awaitable[Any]]) -> tuple[Any, RawPeer]:
        """``await probe(peer)`` on a connection of its own (pristine: no handshake), once per run
        for every version's item of an ``ONCE`` scenario: what the probe sends must not depend on
        the version under test.  The first item to get here runs it (on the connections planned
        for the first version it applies to); the others wait and judge the same answer -- or get
        the same exception.  Returns ``(what probe returned, the probe's peer)``; later checks of
        this item without a peer point at that connection."""
        pool = self._pool
        while True:
            slot = pool.once_slot(key)
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
            slot = pool.claim_once(key)
            try:
                conn = await pool.fresh(pool.once_version(self.scenario.id, self.version), initialize=False)
                self._fresh.append(conn)
                slot.conn = self._last = conn
                slot.value = await probe(conn.peer)
            except anyio.get_cancelled_exc_class():
                pool.forget_once(key, slot)  # another version's item runs it again
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
            conn = await self._pool.shared(self.version)
        except (ScenarioError, TargetError, PeerError):
            return None
        env = conn.info.response if conn.info is not None else None
        if env is None or env.kind is not Kind.RESULT:
            return None
        self._last = conn
        return env

    async def session_info(self) -> SessionInfo:
        """The shared session's handshake facts (opens the shared session if needed)."""
        conn = await self._pool.shared(self.version)
        if conn.info is not None:
            self._info = conn.info
        return conn.info or SessionInfo(self.version)

    def require_capability(self, path: str) -> None:
        """Skip unless the server declared the capability (dotted path, e.g. ``resources.subscribe``).

        Called before the scenario connected, it asks the server role to open the shared session and
        start the scenario again (nothing has been sent yet, so that is safe)."""
        info = self._info or self._pool.sessions.get(self.version)
        if info is None:
            if self._last is not None:  # connected, but only fresh connections without a handshake
                raise RuntimeError("require_capability() needs the server's capabilities: use connect() (initialized) first")
            raise NeedSession()
        self._info = info
        if info.unsupported:
            self.skip(info.unsupported)
        value = _dig(info.capabilities, path)
        if value is MISSING or value is None or value is False:
            self.skip(f"server did not declare capability {path!r}")

    def alone(self) -> Any:
        """``async with ctx.alone():`` the part of a scenario that changes what every session of
        the server sees (a tool list, a watched resource), where items on other sessions of the
        same server could see it (HTTP, overlapping items): it runs while no other item does.
        The rest of the scenario (discovering whether it applies at all) runs beside the others.
        Elsewhere (stdio: a server per session; ``--jobs 1``) it changes nothing."""
        return self._pool.alone()

    def aside(self) -> Any:
        """``async with ctx.aside():`` a wait whose outcome no other item's change can alter (the
        answer to this scenario's own request on its own session): where items share the server,
        a part of another item that runs alone (:meth:`alone`) need not wait for it to end.
        Elsewhere it changes nothing."""
        return self._pool.aside()
