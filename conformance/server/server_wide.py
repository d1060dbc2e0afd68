"""The server-wide lock: over HTTP every session is on the one server, so the part of an item that
changes what every session sees (``ctx.alone()``) runs while no other item does, and a part that
only watches its own request steps aside (``ctx.aside()``)."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio

__all__ = ["ServerWide"]


class ServerWide:
    """A readers-writer lock for items on one server: ``alone`` (a change every session sees)
    waits until no item runs and keeps the others out; ``together`` waits while one is waiting
    or running (so it is not starved).  No item waits for another while it holds either."""

    def __init__(self) -> None:
        self.running = 0
        self.alone_running = False
        self.alone_waiting = 0
        self._changed = anyio.Event()

    async def _wait(self) -> None:
        await self._changed.wait()

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    @contextlib.asynccontextmanager
    async def together(self) -> Any:
        while self.alone_running or self.alone_waiting:
            await self._wait()
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._notify()

    @contextlib.asynccontextmanager
    async def aside(self) -> Any:
        """For an item that holds ``together`` and now only watches what no change on another
        session can alter (the answer to its own request): it gives its place up while it
        watches, so a part that runs alone need not wait for the watch to end, and takes it back
        after, once no part runs alone.  Taken back also when cancelled (the count stays right)."""
        self.running -= 1
        self._notify()
        try:
            yield
        finally:
            try:
                while self.alone_running:
                    await self._wait()
            finally:
                self.running += 1

    @contextlib.asynccontextmanager
    async def alone_within(self) -> Any:
        """``alone`` for an item that holds ``together``: it gives its place up while it waits
        and runs alone, and takes it back at once after (no wait: nothing can be cancelled
        between, so the count stays right)."""
        self.running -= 1
        self._notify()
        try:
            async with self.alone():
                yield
        finally:
            self.running += 1

    @contextlib.asynccontextmanager
    async def alone(self) -> Any:
        self.alone_waiting += 1
        try:
            while self.alone_running or self.running:
                await self._wait()
        finally:
            self.alone_waiting -= 1
        self.alone_running = True
        try:
            yield
        finally:
            self.alone_running = False
            self._notify()
