"""Spawning servers while another thread changes the environment (pytest's main thread sets
PYTEST_CURRENT_TEST for every test phase while the run's event loop starts processes)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from conformance.runtime.connect import Target
from conformance.transports.stdio import StdioTransport

pytestmark = pytest.mark.anyio

SPAWNS = 24  # with the inherited environment about 1 spawn in 3 failed with EFAULT ("Bad address")


@contextmanager
def environment_churn() -> Iterator[None]:
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            os.environ["MCP_CONFORMANCE_TEST_CHURN"] = "x" * (i % 64)
            for k in range(i % 5):
                os.environ[f"MCP_CONFORMANCE_TEST_CHURN_{k}"] = "y"
            for k in range(i % 5):
                del os.environ[f"MCP_CONFORMANCE_TEST_CHURN_{k}"]
            if i % 3 == 0:
                del os.environ["MCP_CONFORMANCE_TEST_CHURN"]

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        for key in [k for k in os.environ if k.startswith("MCP_CONFORMANCE_TEST_CHURN")]:
            del os.environ[key]


async def test_servers_start_while_another_thread_changes_the_environment() -> None:
    target = Target(command=("cat",), env={"MCP_CONFORMANCE_TEST_EXTRA": "1"})
    with environment_churn():
        for _ in range(SPAWNS):
            transport = StdioTransport(list(target.command or ()), env=target.process_env())
            with anyio.fail_after(10):
                await transport.start()
                await transport.aclose()
    assert target.process_env()["MCP_CONFORMANCE_TEST_EXTRA"] == "1"
    assert "PATH" in Target(command=("cat",)).process_env()  # the whole environment, not only the extras
