"""Frames without ids sent in runs (no barrier each), and runs in doubt sent again alone."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from conformance.connect import Target
from conformance.fuzz import engine
from conformance.fuzz import oracle
from conformance.fuzz.generate import Frame

SERVER = Path(__file__).with_name("drop_one_server.py")
V = "2025-11-25"
DROPPED = 17


def frames(monkeypatch: pytest.MonkeyPatch, drop: int | None) -> None:
    """Every frame: a truncated request without id (unreadable: exactly one -32700 answer due);
    ``drop`` holds the word the server leaves unanswered."""

    def frame_at(plan, index: int) -> Frame:
        word = "DROP" if index == drop else f"n{index}"
        data = b'{"jsonrpc":"2.0","method":"' + word.encode() + b'","params":{'
        return Frame(index=index, data=data, method="tools/list", operator="truncate")

    monkeypatch.setattr(engine, "frame_at", frame_at)


def campaign(messages: int) -> engine.Campaign:
    cfg = engine.FuzzConfig(target=Target(command=(sys.executable, str(SERVER))), version=V, max_messages=messages,
                            budget=None, grace=0.1, final=0.5, deadline=5.0)
    return anyio.run(engine.run_campaign, cfg)


def test_the_frames_are_the_kind_that_goes_in_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    frames(monkeypatch, DROPPED)
    frame = engine.frame_at(None, 3)
    exps = oracle.expect(frame.data, oracle.OracleContext(V, "stdio", {}))
    assert engine._anonymous_exact_one(frame, exps)


def test_a_conformant_answer_to_every_frame_of_a_run_needs_no_recheck(monkeypatch: pytest.MonkeyPatch) -> None:
    frames(monkeypatch, None)
    camp = campaign(80)
    assert camp.judged == 80 and not camp.signatures
    assert camp.in_runs == 80 and camp.rechecks == 0
    assert camp.barriers < 20  # one per chunk of 32 (and the last), not one per frame


def test_a_frame_left_unanswered_in_a_run_is_found_alone_and_named_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    frames(monkeypatch, DROPPED)
    camp = campaign(80)
    assert camp.rechecks > 0  # its run was in doubt: its frames were sent again, each alone
    recs = list(camp.signatures.values())
    assert [(r.finding.requirement, r.count) for r in recs] == [("jsonrpc.error.parse-error", 1)], recs
    assert recs[0].frame is not None and recs[0].frame.index == DROPPED
    assert camp.judged == 80  # judged once each, however often sent
