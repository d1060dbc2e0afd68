"""NDJSON framing: problems, chunking independence, bounded memory."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.wire import Frame, NDJSONDecoder, encode_line, looks_like_split_message


def decode(stream: bytes, *, chunks: list[int] | None = None, max_line_bytes: int = 64) -> list[Frame]:
    """Frames of ``stream`` fed whole, or cut at the sorted positions ``chunks``, then closed."""
    d = NDJSONDecoder(max_line_bytes=max_line_bytes)
    out: list[Frame] = []
    cuts = [0, *sorted(chunks or []), len(stream)]
    for a, b in zip(cuts, cuts[1:]):
        out += d.feed(stream[a:b])
        assert d.buffered <= max_line_bytes + 1
    return out + d.close()


def test_clean_lines() -> None:
    assert decode(b'{"a":1}\n{"b":2}\n') == [Frame(b'{"a":1}'), Frame(b'{"b":2}')]


def test_cr_before_lf_is_removed_and_reported() -> None:
    assert decode(b"{}\r\n") == [Frame(b"{}", "CR before LF")]


def test_only_one_cr_is_removed() -> None:
    assert decode(b"{}\r\r\n") == [Frame(b"{}\r", "CR before LF")]


def test_cr_alone_is_not_a_line_ending() -> None:
    assert decode(b"{}\r{}\n") == [Frame(b"{}\r{}")]


def test_invalid_utf8() -> None:
    assert decode(b'{"a":"\xc3\x28"}\n') == [Frame(b'{"a":"\xc3\x28"}', "invalid UTF-8")]


def test_valid_utf8_is_clean() -> None:
    line = json.dumps({"a": "é€😀"}, ensure_ascii=False).encode()
    assert decode(line + b"\n") == [Frame(line)]


def test_empty_and_blank_lines() -> None:
    assert decode(b"\n \t\n\r\n") == [
        Frame(b"", "empty line"),
        Frame(b" \t", "whitespace-only line"),
        Frame(b"", "CR before LF; empty line"),
    ]


def test_unterminated_last_line_at_close() -> None:
    d = NDJSONDecoder()
    assert d.feed(b'{"a":1}\n{"b"') == [Frame(b'{"a":1}')]
    assert d.feed(b":2}") == []
    assert d.close() == [Frame(b'{"b":2}', "no newline at end of stream")]


def test_unterminated_invalid_utf8_last_line() -> None:
    assert decode(b"\xff") == [Frame(b"\xff", "invalid UTF-8; no newline at end of stream")]


def test_close_without_pending_data() -> None:
    d = NDJSONDecoder()
    assert d.feed(b"{}\n") == [Frame(b"{}")]
    assert d.close() == []
    assert d.close() == []
    with pytest.raises(RuntimeError):
        d.feed(b"{}\n")


def test_several_problems_are_joined() -> None:
    assert decode(b"\xff\r\n") == [Frame(b"\xff", "CR before LF; invalid UTF-8")]


def test_raw_keeps_the_bytes() -> None:
    line = b'{"jsonrpc":"2.0",  "id":"7" , "method":"ping"}'
    (frame,) = decode(line + b"\n")
    assert frame.raw == line


def test_accepts_bytearray_and_memoryview() -> None:
    d = NDJSONDecoder()
    assert d.feed(bytearray(b"{}\n")) + d.feed(memoryview(b"[]\n")) == [Frame(b"{}"), Frame(b"[]")]


# -- over-long lines --------------------------------------------------------------------------------


def test_long_line_is_truncated_once_and_the_next_line_is_intact() -> None:
    frames = decode(b"x" * 100 + b"\n{}\n", max_line_bytes=10)
    assert frames == [Frame(b"x" * 10, "line exceeds 10 bytes (truncated)", True), Frame(b"{}")]


def test_long_line_is_reported_before_its_newline() -> None:
    d = NDJSONDecoder(max_line_bytes=10)
    assert d.feed(b"x" * 5) == []
    assert d.feed(b"y" * 6) == [Frame(b"xxxxxyyyyy", "line exceeds 10 bytes (truncated)", True)]
    assert d.feed(b"z" * 1000) == []
    assert d.feed(b"z\n{}\n") == [Frame(b"{}")]
    assert d.close() == []


@pytest.mark.parametrize("cut", range(0, 13))
def test_line_of_exactly_max_bytes_with_crlf_is_not_truncated(cut: int) -> None:
    stream = b"a" * 10 + b"\r\n"
    assert decode(stream, chunks=[cut], max_line_bytes=10) == [Frame(b"a" * 10, "CR before LF")]


@pytest.mark.parametrize("cut", range(0, 13))
def test_line_of_max_plus_one_bytes_is_truncated(cut: int) -> None:
    stream = b"a" * 11 + b"\n"
    assert decode(stream, chunks=[cut], max_line_bytes=10) == [
        Frame(b"a" * 10, "line exceeds 10 bytes (truncated)", True)
    ]


def test_unterminated_max_plus_cr_at_close() -> None:
    assert decode(b"a" * 10 + b"\r", max_line_bytes=10) == [
        Frame(b"a" * 10, "line exceeds 10 bytes (truncated); no newline at end of stream", True)
    ]


def test_truncation_inside_a_utf8_sequence_is_not_invalid_utf8() -> None:
    frames = decode("aé".encode() * 10 + b"\n", max_line_bytes=5)  # a, é(2), a, first byte of é
    assert frames == [Frame("aéa".encode() + b"\xc3", "line exceeds 5 bytes (truncated)", True)]


def test_truncated_line_with_invalid_utf8_is_reported() -> None:
    frames = decode(b"\xff" * 20 + b"\n", max_line_bytes=5)
    assert frames == [Frame(b"\xff" * 5, "line exceeds 5 bytes (truncated); invalid UTF-8", True)]


def test_huge_line_in_one_chunk() -> None:
    (frame, after) = decode(b"x" * (10 * 1024 * 1024) + b"\n{}\n", max_line_bytes=1024)
    assert frame.truncated and len(frame.raw) == 1024
    assert after == Frame(b"{}")


def test_memory_is_bounded_for_an_endless_line() -> None:
    limit = 1024 * 1024
    chunk = b"x" * 65536
    d = NDJSONDecoder(max_line_bytes=limit)
    frames: list[Frame] = []
    tracemalloc.start()
    try:
        for _ in range(160):  # 10 MiB without a newline
            frames += d.feed(chunk)
            assert d.buffered <= limit + 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(frames) == 1 and frames[0].truncated and len(frames[0].raw) == limit
    assert peak < 2.5 * limit  # the unfinished line and the truncated frame, not 10 MiB
    assert d.feed(b"tail\n{}\n") == [Frame(b"{}")]


def test_max_line_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError):
        NDJSONDecoder(max_line_bytes=0)


# -- chunking independence (property) ---------------------------------------------------------------

pieces = st.sampled_from([b"\n", b"\r", b"\r\n", b"{}", b"a", b" ", b"\xff", b"\xc3", b"\xa9", "é".encode(), b"xxxxx"])
streams = st.lists(pieces, max_size=40).map(b"".join)


def model(stream: bytes, max_line_bytes: int) -> list[tuple[bytes, bool]]:
    """(raw, truncated) per line, computed directly from the definition."""
    lines = stream.split(b"\n")
    tail = lines.pop()
    out = []
    for line in lines:
        if line.endswith(b"\r"):
            line = line[:-1]
        out.append((line[:max_line_bytes], len(line) > max_line_bytes))
    if tail:
        out.append((tail[:max_line_bytes], len(tail) > max_line_bytes))
    return out


@given(streams, st.integers(1, 12), st.data())
def test_any_chunking_gives_the_same_frames(stream: bytes, max_line_bytes: int, data: st.DataObject) -> None:
    whole = decode(stream, max_line_bytes=max_line_bytes)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10))
    assert decode(stream, chunks=cuts, max_line_bytes=max_line_bytes) == whole
    assert decode(stream, chunks=list(range(len(stream))), max_line_bytes=max_line_bytes) == whole
    assert [(f.raw, f.truncated) for f in whole] == model(stream, max_line_bytes)


@given(streams, st.data())
def test_problems_match_the_line(stream: bytes, data: st.DataObject) -> None:
    frames = decode(stream, max_line_bytes=1000)
    lines = stream.split(b"\n")
    tail = lines.pop()
    assert len(frames) == len(lines) + (1 if tail else 0)
    for frame, line in zip(frames, [*lines, tail]):
        problems = frame.problem.split("; ") if frame.problem else []
        is_last_unterminated = frame is frames[-1] and bool(tail)
        assert ("CR before LF" in problems) == (line.endswith(b"\r") and not is_last_unterminated)
        try:
            frame.raw.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        assert ("invalid UTF-8" in problems) is not valid
        assert ("empty line" in problems) == (frame.raw == b"" and not is_last_unterminated)
        assert ("no newline at end of stream" in problems) is is_last_unterminated


@given(st.lists(st.binary(max_size=20).filter(lambda b: b"\n" not in b), max_size=10), st.data())
def test_encode_line_round_trips(bodies: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(encode_line(b) for b in bodies)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=5))
    frames = decode(stream, chunks=cuts, max_line_bytes=100)
    expected = [b[:-1] if b.endswith(b"\r") else b for b in bodies]
    assert [f.raw for f in frames] == expected


def test_encode_line_rejects_embedded_newline() -> None:
    assert encode_line(b"{}") == b"{}\n"
    with pytest.raises(ValueError):
        encode_line(b'{"a":\n1}')


# -- embedded newlines ------------------------------------------------------------------------------


def test_pretty_printed_message_is_detected() -> None:
    lines = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"a": [1, 2]}}, indent=2).encode().split(b"\n")
    assert len(lines) > 3
    assert looks_like_split_message(*lines)
    assert not looks_like_split_message(*lines[:2])  # a prefix is not complete yet


def test_two_line_split_is_detected() -> None:
    assert looks_like_split_message(b'{"jsonrpc":"2.0",', b'"method":"ping","id":1}')


def test_raw_newline_inside_a_string_is_detected() -> None:
    assert looks_like_split_message(b'{"jsonrpc":"2.0","method":"log","params":{"m":"a', b'b"}}')


@pytest.mark.parametrize(
    ("prev", "cur"),
    [
        (b'{"a":1}', b'{"b":2}'),  # two complete messages
        (b'{"a":1}', b""),  # a complete message, then an empty line
        (b"[1]", b"  "),  # a complete batch, then a blank line
        (b"{", b"{"),  # garbage that stays garbage
        (b'"a', b'b"'),  # completes to a JSON string, not a message
        (b"", b"{}"),  # an empty line before a message
        (b"{\xff", b"}"),  # not UTF-8
        (b"[1,", b"2]x"),  # completes to something that is still not JSON
    ],
)
def test_non_splits_are_not_detected(prev: bytes, cur: bytes) -> None:
    assert not looks_like_split_message(prev, cur)
