"""stdout framing: what the stdio and UTF-8 rules claim among received lines (pure, no I/O)."""

from __future__ import annotations

import json

import pytest

from conformance.scenarios.server._framing import claimed_by_transport, invalid_utf8, split_runs, stdout_noise
from conformance.wire.transcript import Transcript
from conformance.transports.stdio import StdioTransport
from conformance.wire.ndjson import NDJSONDecoder

PING_ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {}}
LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": {"a": [1, 2]}}}


def _stdout(data: bytes) -> Transcript:
    """What the stdio transport and the raw peer record for these stdout bytes."""
    decoder = NDJSONDecoder()
    transcript = Transcript()
    for frame in [*decoder.feed(data), *decoder.close()]:
        item = StdioTransport._inbound(frame)
        transcript.inbound(item.raw, item.envelope, {**item.meta, **({"problem": item.problem} if item.problem else {})})
    return transcript


def _line(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _pretty(value: object) -> bytes:
    return json.dumps(value, indent=2).encode() + b"\n"


def test_a_pretty_printed_message_is_one_split_run_and_nothing_else() -> None:
    t = _stdout(_line(PING_ANSWER) + _pretty(LOG) + _line(PING_ANSWER))
    runs = list(split_runs(t.entries))
    assert [kind for kind, _ in runs] == ["split"]
    (_, lines), = runs
    assert b"\n".join(e.raw for e in lines) == _pretty(LOG).rstrip(b"\n")


def test_log_lines_blank_lines_and_json_logs_are_noise_each() -> None:
    log_json = {"level": "info", "msg": "server started"}
    t = _stdout(b"Server starting...\n" + b"\n" + _line(log_json) + _line(PING_ANSWER))
    runs = list(split_runs(t.entries))
    assert [(kind, [e.raw for e in lines]) for kind, lines in runs] == [
        ("noise", [b"Server starting..."]),
        ("noise", [b""]),
        ("noise", [_line(log_json).rstrip(b"\n")]),
    ]


def test_noise_before_a_pretty_printed_message_and_two_messages_in_a_row() -> None:
    t = _stdout(b"debug: hello\n" + _pretty(PING_ANSWER) + _pretty(LOG))
    runs = [(kind, len(lines)) for kind, lines in split_runs(t.entries)]
    assert runs == [("noise", 1), ("split", _pretty(PING_ANSWER).count(b"\n")), ("split", _pretty(LOG).count(b"\n"))]


def test_malformed_json_rpc_is_not_stdout_noise() -> None:
    # JSON-RPC-shaped but invalid: basic.messages.jsonrpc judges it, not the stdio rule
    t = _stdout(_line({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}) + _line([1, 2]))
    shaped, array = t.entries
    assert not stdout_noise(shaped)
    assert stdout_noise(array)


def test_a_crlf_line_is_a_readable_message_with_a_framing_problem() -> None:
    (entry,) = _stdout(_line(PING_ANSWER).replace(b"\n", b"\r\n")).entries
    assert entry.envelope is not None and entry.envelope.value == PING_ANSWER
    assert "CR before LF" in entry.meta["problem"]
    assert not stdout_noise(entry) and list(split_runs([entry])) == []


@pytest.mark.parametrize(
    ("version", "transport", "claimed"),
    [
        ("2024-11-05", "stdio", True),  # no UTF-8 sentence: the stdio rule takes it
        ("2024-11-05", "sse", False),  # ... nothing on HTTP: basic.messages.jsonrpc
        ("2025-03-26", "stdio", True),
        ("2025-11-25", "streamable-http", True),
        ("2026-07-28", "stdio", True),
    ],
)
def test_invalid_utf8_is_claimed_where_a_transport_rule_covers_it(version: str, transport: str, claimed: bool) -> None:
    (entry,) = _stdout(b'{"jsonrpc":"2.0","id":1,"result":{"x":"\xff"}}\n').entries
    assert invalid_utf8(entry)
    assert claimed_by_transport(entry, transport, version) is claimed


def test_stdout_noise_is_claimed_on_stdio_only() -> None:
    (entry,) = _stdout(b"hello\n").entries
    assert claimed_by_transport(entry, "stdio", "2025-11-25")
    assert not claimed_by_transport(entry, "streamable-http", "2025-11-25")
