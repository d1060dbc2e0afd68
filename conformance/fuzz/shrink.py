"""JSON-aware delta debugging of a failing frame.  Pure: the caller runs the replays.

:func:`shrink_steps` is a generator: it yields a candidate frame (bytes) and is sent back whether
the candidate still reproduces the *same signature* (the caller replays it on a fresh connection);
its return value is the smallest frame found.  Two drivers: :func:`shrink` (synchronous, a pure
predicate) and :func:`shrink_within` (an async predicate -- a replay on the peer -- within a time
budget: what both fuzz directions use).  Candidates are tried coarse to fine and are always
strictly shorter than the best frame so far, so the search ends; ``max_steps`` bounds the replays.

Structural candidates first (the frame parses as JSON): drop an object member or array element,
replace a container by an empty one, a string by ``""``, a number by ``0``, halve a long string.
Then byte-level ddmin (drop halves, quarters... of the bytes; on stdio drop whole lines), which also
covers frames that are not JSON or whose exact bytes matter (duplicate keys, huge number literals).
"""

from __future__ import annotations

import json
import time
from typing import Any, Awaitable, Callable, Generator, Iterator

from conformance.wire.envelope import MISSING, parse_value

__all__ = ["candidates", "shrink_steps", "shrink", "shrink_within"]


def _encode(value: Any) -> bytes | None:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (ValueError, RecursionError, UnicodeEncodeError):
        return None


def _variants(value: Any) -> Iterator[Any]:
    """Simpler versions of ``value``, each one change."""
    if isinstance(value, dict):
        for k in list(value):
            yield {kk: vv for kk, vv in value.items() if kk != k}
        for k, v in value.items():
            for sub in _variants(v):
                yield {**value, k: sub}
    elif isinstance(value, list):
        n = len(value)
        if n > 1:
            yield value[: n // 2]
            yield value[n // 2 :]
        for i in range(n):
            yield value[:i] + value[i + 1 :]
        for i, v in enumerate(value):
            for sub in _variants(v):
                yield value[:i] + [sub] + value[i + 1 :]
    elif isinstance(value, str):
        if len(value) > 1:
            yield value[: len(value) // 2]
        if value:
            yield ""
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        if value != 0:
            yield 0


def _structural(data: bytes) -> Iterator[bytes]:
    value, problems = parse_value(data)
    if value is MISSING or problems:
        return
    if isinstance(value, (dict, list)):
        # containers emptied first (big steps), then one change at a time
        for sub in _variants(value):
            enc = _encode(sub)
            if enc is not None and len(enc) < len(data):
                yield enc


def _bytewise(data: bytes) -> Iterator[bytes]:
    if b"\n" in data.strip(b"\n"):
        lines = data.split(b"\n")
        for i in range(len(lines)):
            yield b"\n".join(lines[:i] + lines[i + 1 :])
    n = len(data)
    chunk = n // 2
    while chunk >= 1:
        for start in range(0, n, chunk):
            cand = data[:start] + data[start + chunk :]
            if cand and len(cand) < n:
                yield cand
        chunk //= 2


def candidates(data: bytes) -> Iterator[bytes]:
    seen: set[bytes] = set()
    for cand in (*_structural(data), *_bytewise(data)):
        if cand not in seen and len(cand) < len(data):
            seen.add(cand)
            yield cand


def shrink_steps(data: bytes, *, max_steps: int = 200) -> Generator[bytes, bool, bytes]:
    best = data
    steps = 0
    improved = True
    while improved and steps < max_steps:
        improved = False
        for cand in candidates(best):
            steps += 1
            ok = yield cand
            if ok:
                best = cand
                improved = True
                break
            if steps >= max_steps:
                break
    return best


def shrink(data: bytes, still_fails: Callable[[bytes], bool], *, max_steps: int = 200) -> tuple[bytes, int]:
    """Synchronous driver (tests, pure predicates): the smallest frame and the replays used."""
    gen = shrink_steps(data, max_steps=max_steps)
    n = 0
    try:
        cand = next(gen)
        while True:
            n += 1
            cand = gen.send(still_fails(cand))
    except StopIteration as stop:
        return stop.value, n


async def shrink_within(data: bytes, still_fails: Callable[[bytes], Awaitable[bool]], *, started: float, budget: float,
                        max_steps: int = 100, keep: Callable[[bytes], None] | None = None,
                        clock: Callable[[], float] = time.monotonic) -> bytes:
    """The budgeted async driver: candidates of ``data`` replayed (``still_fails``) while less than
    ``budget`` seconds have passed since ``started`` (on ``clock``); the smallest frame that still
    fails (``data`` itself when none does or no time is left).  A candidate under way when the
    budget ends is finished, never cut: the budget is checked before each replay.  ``keep`` is
    given each smaller frame that still fails as it is found, so a caller whose replay raises
    keeps the best frame so far."""
    best = data
    gen = shrink_steps(data, max_steps=max_steps)
    try:
        cand = next(gen)
        while clock() - started < budget:
            ok = await still_fails(cand)
            if ok:
                best = cand
                if keep is not None:
                    keep(cand)
            cand = gen.send(ok)
    except StopIteration as stop:
        best = stop.value
    return best
