"""What a client scenario sees: ``launch()`` the client, play the server on its connection,
``check()`` what it did (:class:`ClientContext`, beside the server role's
:class:`~conformance.server.context.ScenarioContext` on the role-free
:class:`~conformance.runtime.judge.Judge`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from conformance.client.target import ClientTarget
from conformance.runtime.connect import TargetError
from conformance.runtime.peer import RawPeer
from conformance.runtime.registry import Scenario
from conformance.runtime.judge import Judge

if TYPE_CHECKING:
    from conformance.client.role import ClientRole, ClientRun
    from conformance.runtime.run import Run

__all__ = ["ClientContext"]


class ClientContext(Judge):
    """What a client scenario sees: ``launch()`` the client, play the server on its connection,
    ``check()`` what it did."""

    def __init__(self, run: "Run[ClientRole]", client: "ClientRole", scenario: Scenario, version: str,
                 requirements: Iterable[str]) -> None:
        super().__init__(run, scenario, version, requirements)
        self.client = client
        self.target: ClientTarget = client.target
        self.runs: list[ClientRun] = []

    async def launch(self, **opts: Any) -> "ClientRun":
        client = self.client
        if client.no_show is not None and not client.ever_connected:
            # as a server that never answers makes the rest of its version skip at once: the
            # misconfigured command is one verdict's wait, not one per item
            raise TargetError(
                f"not started: {client.no_show}, and no run of it ever has",
                hint="pass {server} (stdio) or {url} (HTTP) where the client expects the server, or raise --timeout",
            )
        run = await client.launch(self.version, self.scenario.id.split(".")[-1], **opts)
        self.runs.append(run)
        return run

    async def connected(self, run: "ClientRun", timeout: float | None = None) -> RawPeer | None:
        peer = await self.client.connected(run, timeout)
        if peer is not None:
            self._last = run.conn
        return peer

    async def wait_exit(self, run: "ClientRun", timeout: float) -> bool:
        return await self.client.wait_exit(run, timeout)

    def use(self, run: "ClientRun") -> None:
        """Make ``run``'s connection the default for transcript excerpts of later checks."""
        if run.conn is not None:
            self._last = run.conn
