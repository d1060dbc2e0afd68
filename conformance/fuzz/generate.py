"""Frame *i* of a campaign, from ``(seed, i)`` alone.  Pure.

``frame_at(plan, i)`` seeds a ``random.Random`` with ``"<seed>:<i>"`` (string seeding is stable
across runs and platforms), picks an operator by weight and a corpus message uniformly, gives the
message a run-unique id and applies the operator.  No state carries from frame to frame, so a frame
can be regenerated for a reproducer (``--seed N --index I``) and the same seed gives the same run.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from conformance.fuzz.corpus import Corpus
from conformance.fuzz.operators import Mutation, OpContext, Operator, Output
from conformance.wire.envelope import dumps

__all__ = ["Frame", "Plan", "frame_at", "frame_id", "answer_at", "run_index", "RUN_STRIDE", "AGAIN"]

RUN_STRIDE = 1_000_000  # the client direction: frame j of client run r is frame r * RUN_STRIDE + j
# frame i sent again takes the ids of frame i + AGAIN: the same id shape (AGAIN is a multiple of the
# 8 shapes of frame_id), a value no campaign reaches, and small integers still below 2^31
AGAIN = 1_000_000_000


def run_index(run: int, j: int) -> int:
    """The campaign-wide index of frame (or answer) ``j`` of client run ``run``."""
    return run * RUN_STRIDE + j


@dataclass(frozen=True)
class Frame:
    index: int
    data: bytes  # exact bytes (stdio adds the newline; an HTTP POST body)
    method: str  # the corpus method it was made from
    operator: str
    mutations: tuple[Mutation, ...] = ()
    headers: dict[str, str] | None = None
    answer: bool = False  # our answer to a request of the client under test (``method`` is the request's)
    # the value ``data`` is the strict encoding of, when it is one (see Output.encode): the oracle
    # then need not parse our own bytes back; never part of a reproducer
    value: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        from conformance.fuzz.replay import encode_bytes

        return {"index": self.index, "data": encode_bytes(self.data), "method": self.method, "operator": self.operator,
                "mutations": [m.to_json() for m in self.mutations], "headers": self.headers, "answer": self.answer}


@dataclass
class Plan:
    seed: int
    corpus: Corpus
    operators: list[Operator]
    transport: str
    _weights: list[float] = field(default_factory=list, init=False, repr=False)
    _seeds: list[bytes] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.operators:
            raise ValueError("no fuzz operator selected")
        if not self.corpus.seeds:
            raise ValueError(f"the corpus for {self.corpus.version} is empty")
        self._weights = [op.weight for op in self.operators]
        self._seeds = [dumps(dict(s.message)) for s in self.corpus.seeds]


def frame_id(index: int, k: int = 0) -> Any:
    """The run-unique id of frame ``index`` (``k`` > 0: the k-th extra request inside it, e.g. in
    a batch).  The shapes rotate, so every id type and the echo traps are always exercised: small
    and large integers (above 2^31 and 2^32), negative integers, plain strings, strings of digits
    (the "7" vs 7 trap), strings that need escaping and non-ASCII strings.  All distinct."""
    if k:
        return f"fz-{index}-{k}"
    shape = index % 8
    if shape in (0, 4):
        return 10_000_000 + index
    if shape == 1:
        return f"fz-{index}"
    if shape == 2:
        return str(700_000_000 + index)
    if shape == 3:
        return 2**40 + index
    if shape == 5:
        return f'fz\\"{index}\u00fc'
    if shape == 6:
        return -(10_000_000 + index)
    return f"fz-{index}-\u4e2d"


def frame_at(plan: Plan, index: int, *, ids_from: int | None = None) -> Frame:
    """Frame ``index``.  ``ids_from``: the same frame (the same draws, so the same operator, message
    and mutation) with the ids of frame ``ids_from`` instead of its own -- a frame sent again
    carries ids never used before (see :data:`AGAIN`)."""
    rng = random.Random(f"{plan.seed}:{index}")
    op = rng.choices(plan.operators, weights=plan._weights)[0]
    c = rng.randrange(len(plan._seeds))
    seed = plan.corpus.seeds[c]
    msg = json.loads(plan._seeds[c])
    ids = index if ids_from is None else ids_from
    if "id" in msg:
        msg["id"] = frame_id(ids)
    ctx = OpContext(plan.corpus.version, plan.transport, ids, plan.corpus.seeds, lambda k, i=ids: frame_id(i, k))
    out: Output = op.fn(rng, msg, ctx)
    data, strict = out.encode()
    return Frame(index, data, seed.method, op.name, tuple(out.mutations), out.headers,
                 value=out.value if strict else None)


def answer_at(seed: int, operators: list[Operator], index: int, response: dict[str, Any], method: str, *,
              version: str, transport: str, p_valid: float = 0.0) -> Frame:
    """Answer ``index`` of a client campaign: ``response`` (the answer the suite's server would give
    to the client's ``method`` request, its id included) mutated by one operator drawn by weight
    from ``Random("<seed>:answer:<index>")`` -- or left as it is with probability ``p_valid`` (the
    handshake, so that most runs get past it).  Pure and deterministic, like :func:`frame_at`."""
    rng = random.Random(f"{seed}:answer:{index}")
    valid = [op for op in operators if op.name == "valid"]
    if valid and rng.random() < p_valid:
        op = valid[0]
    else:
        op = rng.choices(operators, weights=[o.weight for o in operators])[0]
    msg = json.loads(dumps(response))
    ctx = OpContext(version, transport, index, (), lambda k, i=index: f"fz-answer-{i}-{k}", method=method)
    out: Output = op.fn(rng, msg, ctx)
    return Frame(index, out.to_bytes(), method, op.name, tuple(out.mutations), out.headers, answer=True)
