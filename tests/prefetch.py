"""Long runs started ahead of the tests that look at them, in the order this process asks for them.

The broken-peer and real-client modules run one CLI process per case and let each test wait for
its own.  Starting every selected case's run when the module's fixture is set up is right in one
process, but under pytest-xdist every worker collects every item and runs only some of them: each
worker would run every case, and a worker that got the module's last items would wait for all the
first ones before its own.  Here a run starts when its test asks for it, together with the next
``jobs - 1`` cases in collection order (the items a worker runs next are, but for stolen ones, the
next ones of its share), so ``jobs`` runs stay in flight and a worker runs only what it tests, plus at
most ``jobs - 1`` runs it guessed wrong.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class Prefetch(Generic[K]):
    """``result(key)``: the run of ``key`` (started now if it was not), and the next ones started."""

    def __init__(self, order: Sequence[K], start: Callable[[K], Any], jobs: int, name: str = "prefetch") -> None:
        self.order = list(dict.fromkeys(order))
        self._index = {k: i for i, k in enumerate(self.order)}
        self._start = start
        self._jobs = max(1, jobs)
        self._pool = ThreadPoolExecutor(max_workers=self._jobs, thread_name_prefix=name)
        self._futures: dict[K, Future] = {}
        self._lock = threading.Lock()

    def _submit(self, key: K) -> Future:
        future = self._futures.get(key)
        if future is None:
            future = self._futures[key] = self._pool.submit(self._start, key)
        return future

    def future(self, key: K) -> Future:
        with self._lock:
            own = self._submit(key)
            i = self._index.get(key)
            if i is not None:
                for ahead in self.order[i + 1 : i + self._jobs]:
                    self._submit(ahead)
            return own

    __getitem__ = future  # runs[key].result(), as with a dict of futures

    def result(self, key: K) -> Any:
        return self.future(key).result()

    def started(self) -> list[K]:
        with self._lock:
            return list(self._futures)

    def close(self, stop: Callable[[], None] | None = None) -> None:
        """Cancel what has not started; ``stop`` ends what is running (the session is ending)."""
        with self._lock:
            futures = list(self._futures.values())
        for f in futures:
            f.cancel()
        if stop is not None and any(not f.done() for f in futures):
            stop()
        self._pool.shutdown(wait=True)
