"""One client run: start the client, serve it with the scenario server, end it, judge it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import anyio

from conformance.client.context import ClientContext
from conformance.client.role import ClientRun
from conformance.runtime.connect import TargetError
from conformance.scenarios.client._judge import Wire, engaged, judge_run
from conformance.scenarios.client._server import REF_PROBE_PATH, ScenarioServer
from conformance.spec.versions import spec

__all__ = ["Played", "play", "describe_exit"]


@dataclass
class Played:
    run: ClientRun
    server: ScenarioServer | None
    wire: Wire
    engaged: bool
    ended_by_client: bool  # the client exited (or ended its server) before we had to stop it
    #: stdio: what the client did to its server process, as it stood before the suite ended the
    #: client (the suite's own end of the run kills what the client left behind)
    relay_facts: Any = None
    client_exited: bool = False  # the client had exited by itself by then


def describe_exit(run: ClientRun) -> str:
    if run.exit_code is None:
        return "it was still running"
    tail = run.tail().strip().splitlines()[-3:]
    shown = f"; its stderr ends: {' | '.join(tail)[:300]}" if tail else ""
    return f"it exited with code {run.exit_code}{shown}"


async def play(
    ctx: ClientContext,
    *,
    configure: Callable[[ScenarioServer], None] | None = None,
    during: Callable[[ClientRun, ScenarioServer], Awaitable[None]] | None = None,
    launch: dict[str, Any] | None = None,
    unsupported_offer: bool = False,
    judge: bool = True,
    setup: Callable[[ClientRun], None] | None = None,
    budget: float | None = None,
    linger: float = 0.0,
    relaunch: float = 0.0,
) -> Played:
    """Start the client, play the server until the client is done (it exits, or closes the
    server's stdin) or the run's budget passes (``budget``, default ``--client-timeout``), then
    end it and judge what it did.  ``linger``: once the connection has ended, wait up to that long
    for the client to exit by itself, reading what it does to its server meanwhile (stdio).
    ``relaunch`` (stdio): once the connection has ended, wait up to that long for the client to
    start its server again (a second relay connection, in ``run.relay.connections``), or to exit."""
    client = ctx.client
    run = await ctx.launch(**(launch or {}))
    if setup is not None:
        setup(run)
    peer = await ctx.connected(run)
    if peer is None:
        if run.exit_code is not None:
            raise TargetError(
                f"the client exited (code {run.exit_code}) without connecting to the suite's server; {describe_exit(run)}",
                hint="run the command by hand with the URL or launcher the suite passes ({url} / {server}, or appended "
                     "as the last argument) and check that it connects",
            )
        raise TargetError(
            f"the client did not connect to the suite's server within {client.target.startup_timeout:g} s",
            hint="pass {server} (stdio) or {url} (HTTP) where the client expects the server, or raise --timeout",
        )
    server = ScenarioServer(peer, ctx.version)
    if run.endpoint is not None and spec(ctx.version).stateless:
        server.ref_probe = run.endpoint.url.rsplit("/", 1)[0] + "/" + REF_PROBE_PATH
    if configure is not None:
        configure(server)
    budget = client.target.run_timeout if budget is None else budget
    until = anyio.current_time() + budget
    ended_by_client = False
    async with anyio.create_task_group() as tg:
        async def watch_exit() -> None:
            nonlocal ended_by_client
            await ctx.wait_exit(run, budget)
            if run.exit_code is not None:
                ended_by_client = True
                server.exited.set()
                await anyio.sleep(0.1)  # the last requests it made are still being read
            server.stop.set()

        async def watch_stdio() -> None:
            nonlocal ended_by_client
            relay = run.relay_transport
            if relay is None:
                return
            gone = await relay.wait_gone(budget)
            if gone:
                ended_by_client = True
                server.exited.set()

        async def extra() -> None:
            if during is not None:
                await during(run, server)

        tg.start_soon(watch_exit)
        tg.start_soon(watch_stdio)
        tg.start_soon(extra)
        await server.serve(until)
        server.stop.set()
        tg.cancel_scope.cancel()
    relay = run.relay_transport
    if linger and relay is not None and run.exit_code is None:
        # the connection has ended (stdin closed), the client has not: watch what it does to its
        # server meanwhile (signals, the kill) until it exits, within ``linger`` s
        async with anyio.create_task_group() as tg:
            async def frames() -> None:
                await relay.wait_gone(linger)

            tg.start_soon(frames)
            await ctx.wait_exit(run, linger)
            tg.cancel_scope.cancel()
    if relaunch and run.relay is not None and run.exit_code is None:
        async with anyio.create_task_group() as tg:
            async def second() -> None:
                await run.relay.accept(relaunch)  # the next connection (the first was accepted above)
                tg.cancel_scope.cancel()

            async def gone() -> None:
                await ctx.wait_exit(run, relaunch)
                tg.cancel_scope.cancel()

            tg.start_soon(second)
            tg.start_soon(gone)
    snapshot = None
    if relay is not None:
        await relay.wait_gone(0.5)
        facts = relay.facts
        if facts.stdin_closed is not None or facts.signals or facts.killed is not None:
            ended_by_client = True  # the client ended its server (how: the shutdown check says)
        snapshot = dataclasses.replace(facts, signals=list(facts.signals))
    client_exited = run.exit_code is not None
    # the server is done with the client: a client that did not end the session itself is ended now
    await client.end_client(run, 2.0)  # a client that ended its session gets the time to exit by itself
    wire = judge_run(ctx, run, unsupported_offer=unsupported_offer) if judge else Wire(run)
    return Played(run, server, wire, engaged(wire, ctx.version), ended_by_client, snapshot, client_exited)
