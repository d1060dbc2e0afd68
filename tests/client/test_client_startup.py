"""The client's start-up allowance: a client that has not connected yet but is still busy
starting (using CPU) is given more time; an idle one is not."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import anyio
import pytest

from conformance.client.role import client_run
from conformance.client.target import ClientTarget
from tests.cli.conftest import live_processes

pytestmark = pytest.mark.anyio

FAKE = Path(__file__).parent / "fake_client.py"
V = "2025-11-25"


async def _connect(mode: str, token: str, busy: float = 3.0) -> tuple[bool, str]:
    command = f"FAKE_CLIENT_BUSY={busy:g} {shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {mode} {token} {{server}}"
    runner = client_run(ClientTarget(command=command, startup_timeout=1.5), versions=[V], timeout=5)
    async with anyio.create_task_group() as host:
        await host.start(runner.start)
        try:
            run = await runner.role.launch(V, "startup-probe")
            peer = await runner.role.connected(run)
            return peer is not None, run.tail()
        finally:
            await runner.aclose()
            host.cancel_scope.cancel()


async def test_a_client_still_busy_starting_gets_past_the_allowance(tmp_path: Path) -> None:
    token = f"busy-{tmp_path.name}"
    ok, tail = await _connect("slow-start", token)  # 3 s of CPU before it starts the server: 2x the 1.5 s allowance
    assert ok, tail
    assert not live_processes(token)


async def test_an_idle_client_that_never_connects_ends_at_the_allowance(tmp_path: Path) -> None:
    token = f"idle-{tmp_path.name}"
    ok, _ = await _connect("hang", token)
    assert not ok
    assert not live_processes(token)
