"""JSON-aware delta debugging, and the reproducer file format."""

from __future__ import annotations

import json

import pytest

from conformance.fuzz.oracle import OracleContext, expect
from conformance.fuzz.replay import FORMAT, Reproducer, ReproducerError
from conformance.fuzz.shrink import candidates, shrink, shrink_within


def test_candidates_are_strictly_shorter_and_structural_first() -> None:
    data = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,3]}}}'
    cands = list(candidates(data))
    assert cands and all(len(c) < len(data) for c in cands)
    assert json.loads(cands[0])  # the first ones are JSON


def _keeps_method(b: bytes) -> bool:
    try:
        value = json.loads(b)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("method") == "tools/call"


_CALL = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,3],"b":"long string"}}}'


def test_shrink_keeps_what_the_predicate_needs() -> None:
    best, n = shrink(_CALL, _keeps_method)
    assert json.loads(best) == {"method": "tools/call"}
    assert 0 < n <= 200


def test_shrink_with_the_oracle_as_predicate_keeps_the_signature() -> None:
    ctx = OracleContext("2025-11-25")
    data = b'{"jsonrpc":"2.0","id":"fz-3","method":"tools/call","params":{"name":"x"'
    best, _ = shrink(data, lambda b: expect(b, ctx)[0].requirement == "jsonrpc.error.parse-error")
    assert len(best) == 1 and expect(best, ctx)[0].requirement == "jsonrpc.error.parse-error"


class _Clock:
    """A clock that moves one second per replay (the replays are the only thing that takes time)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.tried: list[bytes] = []

    async def replay(self, cand: bytes) -> bool:
        self.tried.append(cand)
        self.now += 1.0
        return _keeps_method(cand)


def test_shrink_within_an_ample_budget_finds_what_the_synchronous_driver_finds() -> None:
    import anyio

    clock = _Clock()
    best = anyio.run(lambda: shrink_within(_CALL, clock.replay, started=0.0, budget=1e9, max_steps=200, clock=lambda: clock.now))
    assert (best, len(clock.tried)) == shrink(_CALL, _keeps_method, max_steps=200)


def test_shrink_within_stops_at_the_budget_and_keeps_the_best_so_far() -> None:
    import anyio

    clock = _Clock()
    kept: list[bytes] = []
    best = anyio.run(lambda: shrink_within(_CALL, clock.replay, started=0.0, budget=3.0, keep=kept.append,
                                           clock=lambda: clock.now))
    assert len(clock.tried) == 3  # checked before each replay: 0, 1 and 2 seconds in
    assert kept == [c for c in clock.tried if _keeps_method(c)]
    assert best == (kept[-1] if kept else _CALL) and len(best) < len(_CALL)


def test_shrink_within_with_no_time_left_replays_nothing() -> None:
    import anyio

    clock = _Clock()
    clock.now = 10.0
    assert anyio.run(lambda: shrink_within(_CALL, clock.replay, started=0.0, budget=10.0, clock=lambda: clock.now)) == _CALL
    assert clock.tried == []


def test_shrink_within_hands_the_best_so_far_to_keep_before_a_replay_raises() -> None:
    import anyio

    kept: list[bytes] = []
    calls = [0]

    async def flaky(cand: bytes) -> bool:
        calls[0] += 1
        if calls[0] == 4:
            raise OSError("the peer went away")
        return _keeps_method(cand)

    with pytest.raises(OSError):
        anyio.run(lambda: shrink_within(_CALL, flaky, started=0.0, budget=1e9, keep=kept.append, clock=lambda: 0.0))
    assert kept and all(_keeps_method(k) and len(k) < len(_CALL) for k in kept)


def test_shrink_is_bounded() -> None:
    _, n = shrink(bytes(i % 251 for i in range(5000)), lambda b: False, max_steps=50)
    assert n == 50


def _repro(frame: bytes) -> Reproducer:
    return Reproducer("2025-11-25", "stdio", 7, 42, frame, frame + b"!", ["truncate"],
                      [{"operator": "truncate", "path": "bytes[3:]", "before": "x", "after": "<cut>", "note": ""}],
                      ("jsonrpc.error.parse-error", "NoParseErrorResponse"), {"requirement": "jsonrpc.error.parse-error"},
                      prefix=[b"\xff\xfe"])


@pytest.mark.parametrize("frame", [b'{"a":', b'{"\xff":1}', "ü".encode()])
def test_reproducer_round_trip_keeps_exact_bytes(frame: bytes) -> None:
    r = _repro(frame)
    data = json.loads(json.dumps(r.to_json()))
    assert data["format"] == FORMAT
    back = Reproducer.from_json(data)
    assert back.frame == frame and back.original == frame + b"!" and back.prefix == [b"\xff\xfe"]
    assert back.signature == r.signature and back.seed == 7 and back.index == 42


def test_reproducer_errors_name_the_problem() -> None:
    with pytest.raises(ReproducerError, match="format"):
        Reproducer.from_json({"format": "other"})
    data = _repro(b"{").to_json()
    del data["signature"]
    with pytest.raises(ReproducerError, match="signature"):
        Reproducer.from_json(data)
    data = _repro(b"{").to_json()
    data["frame"] = {"base64": "***"}
    with pytest.raises(ReproducerError, match="base64"):
        Reproducer.from_json(data)
