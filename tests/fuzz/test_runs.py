"""Frames sent in runs (no barrier each), and runs in doubt sent again alone."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from conformance.runtime.connect import Target
from conformance.fuzz import engine
from conformance.fuzz import oracle
from conformance.fuzz.generate import AGAIN, Frame

SERVER = Path(__file__).with_name("drop_one_server.py")
V = "2025-11-25"
DROPPED = 17


def frames(monkeypatch: pytest.MonkeyPatch, drop: int | None, *, ids: bool = False) -> None:
    """Every frame: a truncated request without id (unreadable: exactly one -32700 answer due), or
    with ``ids`` an invalid Request with an id (``"jsonrpc": "1.0"``: exactly one -32600 due), now
    and then a notification (no answer due); ``drop`` holds the word the server leaves unanswered."""

    def frame_at(plan, index: int, *, ids_from: int | None = None) -> Frame:
        word = "DROP" if index == drop else f"n{index}"
        if index % 5 == 4:
            data = b'{"jsonrpc":"2.0","method":"notifications/' + word.encode() + b'"}'
        elif ids:
            rid = index if ids_from is None else ids_from
            data = b'{"jsonrpc":"1.0","id":%d,"method":"%s"}' % (rid, word.encode())
        else:
            data = b'{"jsonrpc":"2.0","method":"' + word.encode() + b'","params":{'
        return Frame(index=index, data=data, method="tools/list", operator="truncate")

    monkeypatch.setattr(engine, "frame_at", frame_at)


def campaign(messages: int, server: Path = SERVER, **config: int) -> engine.Campaign:
    cfg = engine.FuzzConfig(target=Target(command=(sys.executable, str(server))), version=V, max_messages=messages,
                            budget=None, grace=0.1, final=0.5, deadline=5.0, **config)
    return anyio.run(engine.run_campaign, cfg)


@pytest.mark.parametrize("ids", [False, True], ids=["no-id", "id"])
def test_the_frames_are_the_kinds_that_go_in_runs(monkeypatch: pytest.MonkeyPatch, ids: bool) -> None:
    frames(monkeypatch, DROPPED, ids=ids)
    ctx = oracle.OracleContext(V, "stdio", {})
    frame = engine.frame_at(None, 3)
    assert engine._exact_one(frame, oracle.expect(frame.data, ctx))
    note = engine.frame_at(None, 4)
    assert engine._silent_one(note, oracle.expect(note.data, ctx))


@pytest.mark.parametrize("ids", [False, True], ids=["no-id", "id"])
def test_a_conformant_answer_to_every_frame_of_a_run_needs_no_recheck(monkeypatch: pytest.MonkeyPatch, ids: bool) -> None:
    frames(monkeypatch, None, ids=ids)
    camp = campaign(80)
    assert camp.judged == 80 and not camp.signatures
    assert camp.in_runs == 80 and camp.rechecks == 0
    assert camp.barriers < 20  # one per chunk of 32 (and the last), not one per frame


@pytest.mark.parametrize("ids", [False, True], ids=["no-id", "id"])
def test_a_frame_left_unanswered_in_a_run_is_found_alone_and_named_exactly(monkeypatch: pytest.MonkeyPatch, ids: bool) -> None:
    frames(monkeypatch, DROPPED, ids=ids)
    camp = campaign(80)
    assert camp.rechecks > 0  # its run was in doubt: its frames were sent again, each alone
    recs = list(camp.signatures.values())
    requirement = "jsonrpc.error.invalid-request" if ids else "jsonrpc.error.parse-error"
    # exactly the dropped frame; no frame sent again was refused for an id used before (the
    # server answers a reused id with a code the oracle rejects)
    assert [(r.finding.requirement, r.count) for r in recs] == [(requirement, 1)], recs
    assert recs[0].frame is not None and recs[0].frame.index == DROPPED
    if ids:  # the reproducer is the frame as judged alone: the same frame with an id never sent before
        assert b'"id":%d,' % (DROPPED + AGAIN) in recs[0].frame.data
    assert camp.judged == 80  # judged once each, however often sent


LATE = Path(__file__).with_name("late_ping_server.py")


def late_frames(monkeypatch: pytest.MonkeyPatch, drop: int | None, *, unreadable_from: int) -> None:
    """Requests for unknown methods (answered with their id; the answers overtake the late ping
    answers, so the server is seen answering out of order), invalid Requests with ids and
    notifications; from ``unreadable_from`` on also lines that are not JSON (answered with id null)."""

    def frame_at(plan, index: int, *, ids_from: int | None = None) -> Frame:
        word = "DROP" if index == drop else f"n{index}"
        rid = index if ids_from is None else ids_from
        if index % 4 == 0:
            data = b'{"jsonrpc":"2.0","id":%d,"method":"%s"}' % (rid, word.encode())
        elif index % 4 == 1:
            data = b'{"jsonrpc":"2.0","method":"notifications/' + word.encode() + b'"}'
        elif index >= unreadable_from:
            data = b'{"jsonrpc":"2.0","method":"' + word.encode() + b'","params":{'
        else:
            data = b'{"jsonrpc":"1.0","id":%d,"method":"%s"}' % (rid, word.encode())
        return Frame(index=index, data=data, method="tools/list", operator="truncate")

    monkeypatch.setattr(engine, "frame_at", frame_at)


def test_out_of_order_without_answers_lacking_an_id_nothing_waits_for_the_frame_before(monkeypatch: pytest.MonkeyPatch) -> None:
    late_frames(monkeypatch, None, unreadable_from=10**9)
    camp = campaign(600, LATE)
    assert camp.out_of_order
    assert camp.judged == 600 and not camp.signatures
    assert camp.one_at_a_time == 0  # every answer carries its id: nothing to tell apart


@pytest.mark.parametrize("drop", [None, 362])
def test_out_of_order_the_first_answer_without_an_id_puts_what_could_own_it_in_doubt(monkeypatch: pytest.MonkeyPatch, drop: int | None) -> None:
    late_frames(monkeypatch, drop, unreadable_from=300)  # the reordering is seen long before
    camp = campaign(600, LATE)
    assert camp.out_of_order
    assert camp.rechecks > 0  # the frames that could own the first answer without an id went again, alone
    assert camp.one_at_a_time > 0  # after it, one such frame at a time
    assert camp.judged == 600
    recs = list(camp.signatures.values())
    if drop is None:
        assert not recs, recs  # each unreadable line judged by its own answer
    else:
        assert [(r.finding.requirement, r.count) for r in recs] == [("jsonrpc.error.parse-error", 1)], recs
        assert recs[0].frame is not None and recs[0].frame.index == drop


def test_a_window_smaller_than_a_chunk_still_gets_its_barriers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Frames in runs have no barrier of their own: a full window puts one behind them."""
    frames(monkeypatch, None)
    camp = campaign(40, window=4, chunk=32)
    assert camp.judged == 40 and not camp.signatures and not camp.restarts


def test_the_frames_of_a_run_go_in_one_write_that_ends_with_its_barrier(monkeypatch: pytest.MonkeyPatch) -> None:
    """On stdio, frames without a barrier of their own wait in the outbox: one write carries a
    chunk of them and ends with the barrier behind them (not one system call per frame)."""
    frames(monkeypatch, None)
    from conformance.transports.stdio import StdioTransport

    writes: list[bytes] = []
    send = StdioTransport.send

    async def counting(self: StdioTransport, data: bytes, **kw: object) -> None:
        writes.append(data)
        await send(self, data, **kw)

    monkeypatch.setattr(StdioTransport, "send", counting)
    camp = campaign(96, chunk=16)
    assert camp.judged == 96 and not camp.signatures
    runs = [w for w in writes if re.search(rb'"method":"(notifications/)?n[0-9]', w)]
    assert sum(w.count(b"\n") + 1 for w in runs) >= 96 + 96 // 16  # every frame and a barrier per chunk went out
    assert len(runs) <= 96 // 16 + 2, [w.count(b"\n") + 1 for w in runs]
    assert all(b'"method":"ping"' in w.rsplit(b"\n", 1)[-1] for w in runs), [w.rsplit(b"\n", 1)[-1] for w in runs]


def test_a_campaign_runs_with_the_collector_s_thresholds_raised_and_restores_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    frames(monkeypatch, None)
    during: list[tuple[int, int, int]] = []
    make = engine.frame_at

    def recording(plan, index: int, **kw: object) -> Frame:
        during.append(gc.get_threshold())
        return make(plan, index, **kw)

    monkeypatch.setattr(engine, "frame_at", recording)
    before = gc.get_threshold()
    camp = campaign(20)
    assert camp.judged == 20 and gc.get_threshold() == before
    assert during and all(t[0] >= 50_000 and t[0] > before[0] for t in during)
