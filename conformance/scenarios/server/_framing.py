"""What the transport rules claim among received frames (no scenarios here).

A stdout line that is not a JSON-RPC message at all is the stdio rule's ("The server MUST NOT write
anything to its stdout that is not a valid MCP message"), and bytes that are not UTF-8 are the
transports' UTF-8 rule's; ``schema.py`` leaves those frames to them so that one defect is reported
under one requirement.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from conformance.spec.requirements import get as get_requirement
from conformance.spec.versions import Transport
from conformance.wire.transcript import Direction, TranscriptEntry
from conformance.wire.envelope import Kind
from conformance.wire.ndjson import looks_like_split_message
from conformance.wire.rules import JSONRPC_MEMBERS, not_a_message

__all__ = [
    "JSONRPC_MEMBERS",
    "utf8_rule_applies",
    "invalid_utf8",
    "stdout_noise",
    "claimed_by_transport",
    "split_runs",
    "split_lines",
]

UTF8 = "transport.utf8"
MAX_SPLIT_LINES = 400  # longest pretty-printed message we try to reassemble


def utf8_rule_applies(version: str) -> bool:
    """'JSON-RPC messages MUST be UTF-8 encoded' is part of ``version`` (2025-03-26 and later)."""
    return version in get_requirement(UTF8).versions


def invalid_utf8(entry: TranscriptEntry) -> bool:
    """An inbound frame (line, body, SSE event) that was not valid UTF-8."""
    problem = entry.meta.get("problem") or ""
    if "invalid UTF-8" in problem:
        return True
    env = entry.envelope
    return env is not None and any("invalid UTF-8" in p for p in env.problems)


def stdout_noise(entry: TranscriptEntry) -> bool:
    """A stdout line that is no JSON-RPC message at all: not JSON, blank, or JSON without any
    JSON-RPC member.  Lines cut at the suite's size limit are not judged here."""
    if entry.direction != Direction.IN:
        return False
    return not_a_message(entry.envelope, truncated=bool(entry.meta.get("truncated")))


def claimed_by_transport(entry: TranscriptEntry, transport: Transport | str, version: str) -> bool:
    """True when a transport rule (not basic.messages.jsonrpc) judges this inbound frame."""
    if entry.direction != Direction.IN:
        return False
    if invalid_utf8(entry):
        return utf8_rule_applies(version) or Transport(transport) is Transport.STDIO
    return Transport(transport) is Transport.STDIO and stdout_noise(entry)


def split_lines(entry: TranscriptEntry) -> int:
    """How many stdout lines an inbound entry spans (> 1: a message the transport reassembled)."""
    lines = entry.meta.get("lines", 1)
    return lines if isinstance(lines, int) else 1


def split_runs(entries: Iterable[TranscriptEntry]) -> Iterator[tuple[str, list[TranscriptEntry]]]:
    """Classify unreadable stdout lines, in order: ``("split", lines)`` for consecutive lines that
    form one JSON message when joined with newlines (a message with embedded newlines; or one
    entry the transport reassembled from several lines, see :func:`split_lines`), and
    ``("noise", [line])`` for any other line that is no JSON-RPC message."""
    run: list[TranscriptEntry] = []

    def flush() -> Iterator[tuple[str, list[TranscriptEntry]]]:
        i = 0
        while i < len(run):
            first = run[i]
            found = None
            if first.envelope is None or first.envelope.kind is not Kind.INVALID:
                for j in range(i + 1, min(len(run), i + MAX_SPLIT_LINES)):
                    if looks_like_split_message(run[i].raw or b"", run[i + 1].raw or b"", *(e.raw or b"" for e in run[i + 2 : j + 1])):
                        found = j
                        break
            if found is not None:
                yield "split", run[i : found + 1]
                i = found + 1
            else:
                yield "noise", [first]
                i += 1

    for entry in entries:
        if entry.direction != Direction.IN:
            continue
        if split_lines(entry) > 1:  # reassembled by the stdio transport
            if run:
                yield from flush()
                run = []
            yield "split", [entry]
            continue
        if stdout_noise(entry) and not invalid_utf8(entry):
            run.append(entry)
            continue
        if run:
            yield from flush()
            run = []
    if run:
        yield from flush()
