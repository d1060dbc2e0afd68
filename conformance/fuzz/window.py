"""The fuzz engines' window, sans I/O: what both directions keep about the messages in flight.

Both engines (:mod:`conformance.fuzz.engine`, we fuzz a server; :mod:`conformance.fuzz.client_engine`,
we fuzz a client) send frames, prove them read by barriers, give their answers a grace, suspect an
unanswered one and report it only after a final deadline.  What they share lives here, free of
I/O (no transport, no clock: times are passed in, findings leave through callbacks):

* :class:`Pend` -- one expected answer (or silence) of one frame in flight, until it is judged.
* :class:`Keyed` -- the registry of pends by the ids their answers must carry (the frame's id and
  its batch members'), and the attribution of an answer whose id matches none exactly to the pend
  whose id it matches loosely (a near miss: ``"7"`` for ``7``, a large integer cut to 32 bits).
* :class:`Due` -- pends waiting for a deadline, settled through the engine's callback once it
  passes: the final stage of both engines (pends still unanswered after their grace, judged when
  their final deadline passes, or, where the engine says so, as soon as an answer is found), and
  the server engine's grace (pends proven read, until the end of their grace).

What stays in each engine is how frames are written, how barriers are sent and read, and the
peer's process; and the reading of answers without a usable id, which follows each direction's
proof of order (the server engine's barriers and runs, the client engine's read position).
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterator

from conformance.fuzz.generate import Frame
from conformance.fuzz.oracle import Expect, id_key, near_miss
from conformance.wire.envelope import MISSING, Envelope
from conformance.wire.rules import loose_id

__all__ = ["Pend", "Keyed", "Due"]


class Pend:
    """One expectation of one frame in flight: the answers attributed to it until it is judged.

    ``seq`` is its send number (barriers prove what was sent before them; the client engine also
    reads how far the client had read by it); ``settle_at`` when it is due: the end of its grace,
    then, as a suspect, its final deadline.  The rest is one direction's bookkeeping: ``refused``,
    ``run`` and ``recheck`` the server engine's (an HTTP refusal; the run it was sent in without a
    barrier of its own; sent again alone), ``settled``, ``seg`` and ``loose`` the client engine's
    (judged; its chunk; answers without a usable id it took)."""

    __slots__ = ("frame", "exp", "answers", "seq", "settle_at", "refused", "run", "recheck", "settled", "seg", "loose")

    def __init__(self, frame: Frame, exp: Expect, seq: int = 0) -> None:
        self.frame = frame
        self.exp = exp
        self.answers: list[Envelope] = []
        self.seq = seq
        self.settle_at: float | None = None
        self.refused: int | None = None
        self.run: int | None = None
        self.recheck = False
        self.settled = False
        self.seg: Any = None
        self.loose = 0


class Keyed:
    """The pends in flight by the ids their answers must carry.

    ``add`` registers a pend under its expectation's key (replacing a pend registered under it, or
    not: ``replace``) and under its batch members' keys (the first pend registered keeps a member
    key); ``forget`` takes out what is still this pend's.  With ``loose_index`` the loose form of
    each key is indexed too, so that a near miss is looked up instead of compared with every key
    in flight (the server engine's window is large); without it every key is a candidate, in the
    order registered."""

    __slots__ = ("keys", "loose", "indexed")

    def __init__(self, *, loose_index: bool = False) -> None:
        self.keys: dict[Any, Pend] = {}
        self.loose: dict[str, Any] = {}  # loose_id of a pending id -> its key (with loose_index)
        self.indexed = loose_index

    def __contains__(self, key: Any) -> bool:
        return key in self.keys

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys)

    def get(self, key: Any) -> Pend | None:
        return self.keys.get(key)

    def add(self, p: Pend, *, replace: bool = True) -> None:
        keys = self.keys
        key = p.exp.key
        if key is not None and (replace or key not in keys):
            keys[key] = p
            if self.indexed and key[0] != "json":
                self.loose[loose_id(key[1])] = key
        for mk in p.exp.member_keys:
            keys.setdefault(mk, p)

    def forget(self, p: Pend) -> None:
        keys = self.keys
        key = p.exp.key
        if key is not None and keys.get(key) is p:
            del keys[key]
            if self.indexed and isinstance(key, tuple) and key[0] != "json":
                self.loose.pop(loose_id(key[1]), None)
        for mk in p.exp.member_keys:
            if keys.get(mk) is p:
                del keys[mk]

    def near_miss(self, env: Envelope) -> tuple[Pend, Any] | None:
        """The pend whose id ``env``'s id matches only loosely, and that id (:func:`oracle.near_miss`):
        the answer is that pend's, its id not echoed verbatim; None when there is none."""
        keys = self.keys
        if self.indexed:
            # candidates: the same digits as another type, or a large integer cut or rounded
            cands = [self.loose.get(loose_id(env.id))]
            if isinstance(env.id, (int, float)) and not isinstance(env.id, bool):
                cands += [k for k in keys if isinstance(k, tuple) and k[0] == "int" and abs(k[1]) > 2**31]
            miss = near_miss(env, [k for k in cands if k is not None and k in keys])
        else:
            miss = near_miss(env, list(keys))
        if miss is MISSING:
            return None
        p = keys.get(id_key(miss))
        return None if p is None else (p, miss)


class Due:
    """Pends each due at its ``settle_at`` (the end of its grace; a suspect's final deadline), in
    the order added, which is the order due (each stage adds its pends with one delay from now)."""

    __slots__ = ("queue",)

    def __init__(self) -> None:
        self.queue: collections.deque[Pend] = collections.deque()

    def __bool__(self) -> bool:
        return bool(self.queue)

    def __len__(self) -> int:
        return len(self.queue)

    def __iter__(self) -> Iterator[Pend]:
        return iter(self.queue)

    def due(self, now: float) -> bool:
        """Is the first pend due by ``now``?"""
        q = self.queue
        return bool(q) and q[0].settle_at <= now  # type: ignore[operator]

    def add(self, p: Pend, due: float) -> None:
        p.settle_at = due
        self.queue.append(p)

    def settle(self, now: float, judge: Callable[[Pend], None], *, everything: bool = False,
               early: Callable[[Pend], bool] | None = None) -> None:
        """``judge`` each pend due by ``now`` (every one with ``everything``), in order; with
        ``early``, also each one it says need not wait any longer (an answer was found for it)."""
        q = self.queue
        if early is None:
            while q and (everything or q[0].settle_at <= now):  # type: ignore[operator]
                judge(q.popleft())
            return
        keep: collections.deque[Pend] = collections.deque()
        for p in q:
            if early(p) or everything or p.settle_at <= now:  # type: ignore[operator]
                judge(p)
            else:
                keep.append(p)
        self.queue = keep
