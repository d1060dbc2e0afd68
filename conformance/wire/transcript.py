"""A transcript of both directions of one connection.  Pure data, no I/O.

Every byte we send and every byte the peer sends is recorded with its time, the parsed envelope,
transport metadata (stream, HTTP status, SSE event id, ...) and, for inbound messages, the schema
findings.  Transport events that are not messages (process started/exited, HTTP status line,
stream opened/closed, framing problems, stderr lines) are recorded as ``note`` entries, so a report
can show exactly what happened on the wire.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from conformance.schema.findings import Finding
from conformance.wire.envelope import Envelope

__all__ = ["Direction", "TranscriptEntry", "Transcript"]


class Direction:
    OUT = "out"  # we sent it
    IN = "in"  # the peer sent it
    NOTE = "note"  # a transport event, not a message


def _raw_json(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        return {"text": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


@dataclass(slots=True)
class TranscriptEntry:
    seq: int
    t: float  # seconds since the transcript started
    direction: str  # Direction.OUT | Direction.IN | Direction.NOTE
    raw: bytes | None = None
    envelope: Envelope | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    text: str | None = None  # for notes: what happened, in a sentence

    def to_json(self, *, max_raw: int | None = None) -> dict[str, Any]:
        raw = self.raw
        truncated = False
        if raw is not None and max_raw is not None and len(raw) > max_raw:
            raw, truncated = raw[:max_raw], True
        out: dict[str, Any] = {"seq": self.seq, "t": round(self.t, 6), "direction": self.direction}
        if raw is not None:
            out["raw"] = _raw_json(raw)
            if truncated:
                out["raw"]["truncated_from"] = len(self.raw or b"")
        if self.envelope is not None:
            out["envelope"] = self.envelope.summary()
        if self.meta:
            out["meta"] = _jsonable(self.meta)
        if self.findings:
            out["findings"] = [f.to_json() for f in self.findings]
        if self.text is not None:
            out["text"] = self.text
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return _raw_json(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


class Transcript:
    """Append-only record; cheap to add to (it sits on the hot path: entries are built positionally)."""

    def __init__(self, *, clock=time.monotonic) -> None:
        self._clock = clock
        self._t0 = clock()
        self.entries: list[TranscriptEntry] = []

    def outbound(self, raw: bytes, envelope: Envelope | None = None, meta: dict[str, Any] | None = None) -> TranscriptEntry:
        entries = self.entries
        entry = TranscriptEntry(len(entries), self._clock() - self._t0, Direction.OUT, raw, envelope, meta or {}, [])
        entries.append(entry)
        return entry

    def inbound(
        self,
        raw: bytes,
        envelope: Envelope | None = None,
        meta: dict[str, Any] | None = None,
        findings: Iterable[Finding] = (),
    ) -> TranscriptEntry:
        entries = self.entries
        entry = TranscriptEntry(len(entries), self._clock() - self._t0, Direction.IN, raw, envelope, meta or {}, list(findings))
        entries.append(entry)
        return entry

    def note(self, text: str, meta: dict[str, Any] | None = None, raw: bytes | None = None) -> TranscriptEntry:
        entries = self.entries
        entry = TranscriptEntry(len(entries), self._clock() - self._t0, Direction.NOTE, raw, None, meta or {}, [], text)
        entries.append(entry)
        return entry

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def excerpt(self, seqs: Iterable[int] = (), *, context: int = 3, limit: int = 40, max_raw: int = 4096) -> list[dict[str, Any]]:
        """Entries around the given sequence numbers (or the last ``limit`` when none are given)."""
        seqs = sorted(set(seqs))
        if not seqs:
            chosen = self.entries[-limit:]
        else:
            keep: set[int] = set()
            for s in seqs:
                keep.update(range(max(0, s - context), min(len(self.entries), s + context + 1)))
            chosen = [self.entries[i] for i in sorted(keep)][:limit]
        return [e.to_json(max_raw=max_raw) for e in chosen]

    def to_jsonl(self, *, max_raw: int | None = None) -> str:
        return "".join(json.dumps(e.to_json(max_raw=max_raw), ensure_ascii=False) + "\n" for e in self.entries)
