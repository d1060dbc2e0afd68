"""SplitJoiner: messages spread over several stdout lines are reassembled (one framing verdict,
and the run goes on); anything that cannot become a message comes back line by line."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.wire.ndjson import NDJSONDecoder, SplitJoiner


def _run(data: bytes, chunks: int = 1) -> list:
    dec, joiner, out = NDJSONDecoder(), SplitJoiner(), []
    step = max(1, len(data) // chunks)
    for i in range(0, len(data), step):
        for f in dec.feed(data[i : i + step]):
            out += joiner.push(f)
    for f in dec.close():
        out += joiner.push(f)
    return out + joiner.flush()


def test_pretty_printed_message_is_one_frame_with_its_line_count() -> None:
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a", "description": "brackets } ] { [ \" in a string"}]}}
    text = json.dumps(msg, indent=2)
    frames = _run(b'{"jsonrpc":"2.0","id":0,"result":{}}\n' + text.encode() + b"\n")
    assert [f.lines for f in frames] == [1, text.count("\n") + 1]
    assert json.loads(frames[1].raw) == msg
    assert frames[1].problem == f"embedded newlines: one message over {text.count(chr(10)) + 1} lines"
    assert frames[0].problem is None


def test_noise_and_an_unfinished_object_come_back_line_by_line() -> None:
    data = b'garbage\n{\nnot json\n{"jsonrpc":"2.0","id":2,"result":{}}\n'
    frames = _run(data)
    assert [f.raw for f in frames] == [b"garbage", b"{", b"not json", b'{"jsonrpc":"2.0","id":2,"result":{}}']
    assert all(f.lines == 1 for f in frames)


def test_unbalanced_run_is_flushed_at_end_of_stream() -> None:
    frames = _run(b'{\n  "a": 1,\n')
    assert [f.raw for f in frames] == [b"{", b'  "a": 1,']


def test_a_raw_newline_inside_a_string_is_reassembled() -> None:
    frames = _run(b'{"jsonrpc":"2.0","id":3,"result":{"t":"one\ntwo"}}\n')
    assert len(frames) == 1 and frames[0].lines == 2


def test_balanced_but_invalid_run_is_not_a_message() -> None:
    frames = _run(b"{\n  nonsense\n}\n")
    assert [f.raw for f in frames] == [b"{", b"  nonsense", b"}"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), st.recursive(st.none() | st.integers() | st.text(max_size=8),
                                                                lambda c: st.lists(c, max_size=3), max_leaves=6),
                                max_size=4), min_size=1, max_size=4),
       st.integers(min_value=1, max_value=7))
def test_any_chunking_of_pretty_and_compact_messages(values: list, chunks: int) -> None:
    data = b""
    for i, v in enumerate(values):
        data += (json.dumps(v, indent=1) if i % 2 else json.dumps(v)).encode() + b"\n"
    frames = _run(data, chunks)
    assert [json.loads(f.raw) for f in frames] == values
