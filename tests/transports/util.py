"""Helpers shared by the transport tests."""

from __future__ import annotations

from typing import Any

import anyio

from conformance.transports import Transport


class Recorder:
    """Collects a transport's events."""

    def __init__(self, transport: Transport) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        transport.events = lambda text, meta: self.events.append((text, meta))

    def texts(self) -> list[str]:
        return [t for t, _ in self.events]

    def first(self, prefix: str) -> dict[str, Any]:
        for text, meta in self.events:
            if text.startswith(prefix):
                return meta
        raise AssertionError(f"no event starting with {prefix!r} in {self.texts()}")

    def all(self, prefix: str) -> list[dict[str, Any]]:
        return [meta for text, meta in self.events if text.startswith(prefix)]


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


async def wait_gone(pid: int, timeout: float = 10.0) -> None:
    """Poll (with a deadline) until ``pid`` is gone; fail if it outlives the deadline."""
    with anyio.move_on_after(timeout):
        while not process_gone(pid):
            await anyio.sleep(0.01)
    assert process_gone(pid), f"process {pid} is still running"
