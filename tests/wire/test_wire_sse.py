"""SSE decoding: the WHATWG event-stream interpretation, at any chunking."""

from __future__ import annotations

import re
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.wire import SSEDecoder, SSEEvent, encode_event

BOM = b"\xef\xbb\xbf"


def feed_all(stream: bytes, *, cuts: list[int] | None = None, **opts: object) -> tuple[list[SSEEvent], SSEDecoder]:
    d = SSEDecoder(**opts)  # type: ignore[arg-type]
    events: list[SSEEvent] = []
    points = [0, *sorted(cuts or []), len(stream)]
    for a, b in zip(points, points[1:]):
        events += d.feed(stream[a:b])
    events += d.close()
    return events, d


def messages(stream: bytes) -> list[tuple[str, str]]:
    """(event type, data) of the events a browser would dispatch."""
    return [(e.event, e.data) for e in feed_all(stream)[0] if e.dispatched]


# -- the examples of the WHATWG page ------------------------------------------------------------------


def test_whatwg_stock_ticker() -> None:
    assert messages(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [("message", "YHOO\n+2\n10")]


def test_whatwg_four_blocks_and_last_event_id() -> None:
    stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    d = SSEDecoder()
    first = d.feed(stream[: stream.index(b"data:second")])
    assert [(e.data, e.id) for e in first] == [("first event", "1")]
    assert d.last_event_id == "1"
    rest = d.feed(stream[stream.index(b"data:second") :])
    assert [(e.data, e.id) for e in rest] == [("second event", ""), (" third event", None)]
    assert d.last_event_id == ""  # reset by the empty id: no Last-Event-ID on reconnection


def test_whatwg_empty_data_lines() -> None:
    # "The first block fires events with the data set to the empty string, as would the last block
    # if it was followed by a blank line. The middle block fires an event with the data set to a
    # single newline character. The last block is discarded because it is not followed by a blank line."
    events, d = feed_all(b"data\n\ndata\ndata\n\ndata:")
    assert [(e.data, e.dispatched) for e in events] == [("", True), ("\n", True)]


def test_whatwg_space_after_colon_is_optional() -> None:
    assert messages(b"data:test\n\ndata: test\n\n") == [("message", "test"), ("message", "test")]


# -- line endings -------------------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending(eol: bytes) -> None:
    stream = eol.join([b"event: add", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert messages(stream) == [("add", "a\nb"), ("message", "c")]


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    d = SSEDecoder()
    assert d.feed(b"data: a\r") == []
    assert d.feed(b"\ndata: b\r") == []
    assert d.feed(b"\n\r") == [SSEEvent(data="a\nb", raw=b"data: a\r\ndata: b\r\n")]
    assert d.feed(b"\n") == []  # the LF of the blank line's CRLF, not a second blank line
    assert d.feed(b"data: c\n\n") == [SSEEvent(data="c", raw=b"data: c\n")]


def test_cr_cr_is_two_line_endings() -> None:
    assert messages(b"data: a\r\r") == [("message", "a")]


def test_lf_cr_is_two_line_endings() -> None:
    assert messages(b"data: a\n\r") == [("message", "a")]


# -- BOM ----------------------------------------------------------------------------------------------


def test_leading_bom_is_stripped() -> None:
    events, _ = feed_all(BOM + b"data: x\n\n")
    assert [(e.data, e.raw) for e in events] == [("x", BOM + b"data: x\n")]


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
def test_bom_split_across_chunks(cut: int) -> None:
    events, _ = feed_all(BOM + b"data: x\n\n", cuts=[cut])
    assert [e.data for e in events] == ["x"]


def test_only_one_bom_is_stripped() -> None:
    # the second BOM is U+FEFF in the field name "\ufeffdata": an unknown field
    assert messages(BOM + BOM + b"data: x\n\n") == []


def test_bom_later_in_the_stream_is_kept() -> None:
    assert messages(b"data: x\n\n" + BOM + b"data: y\n\n") == [("message", "x")]


def test_short_stream_that_looks_like_a_bom() -> None:
    events, d = feed_all(b"\xef\xbb")
    assert events == []
    assert d.problems  # incomplete


# -- fields -------------------------------------------------------------------------------------------


def test_comments_are_ignored() -> None:
    events, _ = feed_all(b":\n: keep-alive\n\n:x\ndata: a\n:y\n\n")
    assert [(e.data, e.raw) for e in events] == [("a", b":x\ndata: a\n:y\n")]


def test_only_one_space_is_removed() -> None:
    assert messages(b"data:  two\n\n") == [("message", " two")]


def test_field_without_colon_has_empty_value() -> None:
    assert messages(b"data\ndata\n\n") == [("message", "\n")]


def test_value_may_contain_colons() -> None:
    assert messages(b'data: {"a":"b:c"}\n\n') == [("message", '{"a":"b:c"}')]


def test_unknown_fields_and_wrong_case_are_ignored() -> None:
    events, d = feed_all(b"foo: bar\nData: x\ndata : y\ndata: z\n\n")
    assert [e.data for e in events] == ["z"]
    assert d.problems == []


def test_event_type_resets_after_dispatch() -> None:
    assert messages(b"event: a\ndata: 1\n\ndata: 2\n\nevent: b\n\ndata: 3\n\n") == [
        ("a", "1"),
        ("message", "2"),
        ("message", "3"),
    ]


def test_empty_event_type_is_message() -> None:
    assert messages(b"event:\ndata: 1\n\n") == [("message", "1")]


def test_id_with_nul_is_ignored() -> None:
    events, d = feed_all(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [(e.data, e.id) for e in events] == [("a", "1"), ("b", None)]
    assert d.last_event_id == "1"
    assert any("NUL" in p for p in d.problems)


def test_last_event_id_carries_over_and_updates_at_dispatch() -> None:
    d = SSEDecoder()
    assert d.feed(b"id: 7\ndata: a\n") == []
    assert d.last_event_id is None  # set when the block is dispatched, not when the field is read
    assert [e.id for e in d.feed(b"\n")] == ["7"]
    assert d.last_event_id == "7"
    (ev,) = d.feed(b"data: b\n\n")
    assert ev.id is None  # this block has no id field ...
    assert d.last_event_id == "7"  # ... and the last event ID stays


def test_last_event_id_not_updated_by_an_incomplete_block() -> None:
    events, d = feed_all(b"id: 1\ndata: a\n\nid: 2\ndata: b\n")
    assert d.last_event_id == "1"
    assert [e.data for e in events] == ["a"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(b"1000", 1000), (b"0", 0), (b"007", 7), (b"", None), (b" 10", None), (b"10a", None), (b"-1", None), ("²".encode(), None), (b"1.5", None)],
)
def test_retry_digits_only(value: bytes, expected: int | None) -> None:
    events, d = feed_all(b"retry: " + value + b"\ndata: x\n\n")
    assert d.retry == expected
    assert events[0].retry == expected


def test_retry_keeps_the_last_valid_value() -> None:
    _, d = feed_all(b"retry: 5\n\nretry: x\n\n")
    assert d.retry == 5
    assert any("retry" in p for p in d.problems)


# -- blocks without data (MCP priming) ----------------------------------------------------------------


def test_priming_block_with_id_only_is_returned_undispatched() -> None:
    events, d = feed_all(b"id: prime-1\n\n")
    assert events == [SSEEvent(data="", id="prime-1", raw=b"id: prime-1\n", dispatched=False)]
    assert d.last_event_id == "prime-1"


def test_priming_block_with_empty_data_is_dispatched() -> None:
    events, d = feed_all(b"id: prime-1\ndata:\n\n")
    assert events == [SSEEvent(data="", id="prime-1", raw=b"id: prime-1\ndata:\n", dispatched=True)]
    assert d.last_event_id == "prime-1"


def test_retry_only_block_is_returned_undispatched() -> None:
    events, d = feed_all(b"retry: 3000\n\n")
    assert events == [SSEEvent(data="", retry=3000, raw=b"retry: 3000\n", dispatched=False)]
    assert d.retry == 3000


def test_event_type_only_block_is_not_returned() -> None:
    assert feed_all(b"event: x\n\n: c\n\n\n\n")[0] == []


# -- invalid UTF-8, end of stream, limits ---------------------------------------------------------------


def test_invalid_utf8_is_replaced_and_recorded() -> None:
    events, d = feed_all(b"data: ok\n\ndata: a\xffb\n\n")
    assert [e.data for e in events] == ["ok", "a\ufffdb"]
    assert events[1].raw == b"data: a\xffb\n"
    assert d.problems == ["invalid UTF-8 at byte 17 of the stream"]


def test_invalid_utf8_offset_counts_the_bom_and_chunks() -> None:
    stream = BOM + b"data: \xc3(\n\n"
    _, whole = feed_all(stream)
    _, bytewise = feed_all(stream, cuts=list(range(len(stream))))
    offset = stream.index(b"\xc3")
    assert whole.problems == bytewise.problems == [f"invalid UTF-8 at byte {offset} of the stream"]


def test_utf8_split_across_chunks() -> None:
    stream = "data: é😀\n\n".encode()
    events, _ = feed_all(stream, cuts=list(range(len(stream))))
    assert [e.data for e in events] == ["é😀"]


@pytest.mark.parametrize("tail", [b"data: x\n", b"data: x", b"id: 1\n", b"retry: 1\n", b"event: e\n", b"dat"])
def test_incomplete_event_at_close_is_discarded_and_recorded(tail: bytes) -> None:
    events, d = feed_all(b"data: a\n\n" + tail)
    assert [e.data for e in events] == ["a"]
    assert any("incomplete event" in p for p in d.problems)


@pytest.mark.parametrize("tail", [b"", b"\n", b": comment\n", b": comm"])
def test_nothing_pending_at_close(tail: bytes) -> None:
    _, d = feed_all(b"data: a\n\n" + tail)
    assert d.problems == []


def test_feed_after_close_raises_and_close_is_idempotent() -> None:
    d = SSEDecoder()
    assert d.close() == [] and d.close() == []
    with pytest.raises(RuntimeError):
        d.feed(b"data: x\n\n")


def test_problems_are_capped() -> None:
    _, d = feed_all(b"data: \xff\n" * 500 + b"\n")
    assert len(d.problems) == 101
    assert d.problems[-1] == "further problems not recorded"


def test_oversized_event_is_discarded_and_the_next_one_kept() -> None:
    events, d = feed_all(b"data: " + b"x" * 100 + b"\nid: 9\n\ndata: small\n\n", max_event_bytes=50)
    assert [(e.data, e.id) for e in events] == [("small", None)]
    assert d.last_event_id is None  # the id of the discarded block is not adopted
    assert d.problems == ["event exceeds 50 bytes: discarded"]


def test_event_of_exactly_the_limit_is_kept() -> None:
    block = b"data: " + b"x" * 43 + b"\r\n"  # 49 line bytes + one per line ending = 50
    for cut in range(len(block) + 2):
        events, d = feed_all(block + b"\n", cuts=[cut], max_event_bytes=50)
        assert [len(e.data) for e in events] == [43], cut
        assert d.problems == []


def test_event_one_byte_over_the_limit_is_discarded() -> None:
    block = b"data: " + b"x" * 44 + b"\r\n"  # 50 line bytes + 1
    for cut in range(len(block) + 2):
        events, d = feed_all(block + b"\n", cuts=[cut], max_event_bytes=50)
        assert events == [], cut
        assert d.problems == ["event exceeds 50 bytes: discarded"]


def test_memory_is_bounded_for_an_endless_event() -> None:
    limit = 1024 * 1024
    chunk = b"data: " + b"x" * 65530 + b"\n"
    d = SSEDecoder(max_event_bytes=limit)
    tracemalloc.start()
    try:
        for _ in range(160):  # 10 MiB in one block without a blank line
            assert d.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * limit
    assert d.problems == [f"event exceeds {limit} bytes: discarded"]
    assert [e.data for e in d.feed(b"\ndata: next\n\n")] == ["next"]


def test_memory_is_bounded_for_an_endless_line() -> None:
    limit = 1024 * 1024
    chunk = b"x" * 65536
    d = SSEDecoder(max_event_bytes=limit)
    tracemalloc.start()
    try:
        for _ in range(160):  # a 10 MiB line
            assert d.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * limit
    assert [e.data for e in d.feed(b"\n\ndata: next\n\n")] == ["next"]


def test_max_event_bytes_none_means_unbounded() -> None:
    events, _ = feed_all(b"data: " + b"x" * 100_000 + b"\n\n", max_event_bytes=None)
    assert len(events[0].data) == 100_000


# -- encode_event ---------------------------------------------------------------------------------------


def test_encode_event_layout() -> None:
    assert encode_event('{"a":1}') == b'data: {"a":1}\n\n'
    assert encode_event("a\nb", event="message", id="7", retry=1000) == (
        b"event: message\nid: 7\nretry: 1000\ndata: a\ndata: b\n\n"
    )
    assert encode_event("", id="p") == b"id: p\ndata: \n\n"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": "a\rb"},
        {"data": "x", "event": "a\nb"},
        {"data": "x", "id": "a\rb"},
        {"data": "x", "id": "a\x00b"},
        {"data": "x", "retry": -1},
        {"data": "x", "retry": True},
    ],
)
def test_encode_event_rejects_what_cannot_round_trip(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        encode_event(**kwargs)


# -- properties -------------------------------------------------------------------------------------------

line_text = st.text(st.sampled_from(list("ab :\x00é😀\ufeff09")), max_size=8)
raw_junk = st.sampled_from([b"", b"", b"", b"\xff", b"\xc3", b"\xe2\x82"])
field_names = st.sampled_from(["data", "data", "data", "event", "id", "retry", "foo", "", "Data"])
separators = st.sampled_from([":", ": ", ":  ", ""])
values = st.one_of(line_text, st.from_regex(r"[0-9]{1,4}", fullmatch=True))
eols = st.sampled_from([b"\n", b"\r", b"\r\n"])


@st.composite
def sse_lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["field", "field", "field", "comment", "blank", "blank"]))
    if kind == "blank":
        body = b""
    elif kind == "comment":
        body = b":" + draw(line_text).encode()
    else:
        body = (draw(field_names) + draw(separators) + draw(values)).encode() + draw(raw_junk)
    return body + draw(eols)


sse_streams = st.tuples(st.sampled_from([b"", BOM]), st.lists(sse_lines(), max_size=25), raw_junk).map(
    lambda t: t[0] + b"".join(t[1]) + t[2]
)


def whatwg(stream: bytes) -> tuple[list[tuple[str, str, str | None, int | None, bool]], str | None, int | None]:
    """A direct, non-incremental reading of the WHATWG algorithm (plus the undispatched id/retry blocks)."""
    text = stream.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)[:-1]  # the last piece has no line ending: discarded
    events = []
    data, etype, id_buffer, last_id, retry = "", "", None, None, None
    block_id: str | None = None
    block_retry: int | None = None
    for line in lines:
        if line == "":
            last_id = id_buffer
            if data:
                events.append((data[:-1], etype or "message", block_id, block_retry, True))
            elif block_id is not None or block_retry is not None:
                events.append(("", etype or "message", block_id, block_retry, False))
            data, etype, block_id, block_retry = "", "", None, None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data += value + "\n"
        elif name == "event":
            etype = value
        elif name == "id" and "\x00" not in value:
            id_buffer = block_id = value
        elif name == "retry" and re.fullmatch(r"[0-9]+", value):
            retry = block_retry = int(value)
    return events, last_id, retry


@given(sse_streams)
def test_decoder_matches_the_whatwg_algorithm(stream: bytes) -> None:
    events, d = feed_all(stream, max_event_bytes=None)
    expected, last_id, retry = whatwg(stream)
    assert [(e.data, e.event, e.id, e.retry, e.dispatched) for e in events] == expected
    assert (d.last_event_id, d.retry) == (last_id, retry)
    pos = 0
    for e in events:  # raw: the block's bytes, in stream order
        pos = stream.find(e.raw, pos)
        assert pos >= 0
        pos += len(e.raw)


@given(sse_streams, st.data())
def test_any_chunking_gives_the_same_events(stream: bytes, data: st.DataObject) -> None:
    events, d = feed_all(stream)
    state = (events, d.last_event_id, d.retry, d.problems)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=12))
    for points in (cuts, list(range(len(stream)))):
        e2, d2 = feed_all(stream, cuts=points)
        assert (e2, d2.last_event_id, d2.retry, d2.problems) == state


@given(sse_streams, st.integers(1, 40), st.data())
def test_event_limit_is_chunking_independent(stream: bytes, limit: int, data: st.DataObject) -> None:
    events, d = feed_all(stream, max_event_bytes=limit)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=12))
    for points in (cuts, list(range(len(stream)))):
        e2, d2 = feed_all(stream, cuts=points, max_event_bytes=limit)
        assert (e2, d2.last_event_id, d2.retry, d2.problems) == (events, d.last_event_id, d.retry, d.problems)
    for e in events:
        assert len(e.raw.removeprefix(BOM).replace(b"\r\n", b"\n")) <= limit


no_cr_text = st.text().filter(lambda s: "\r" not in s)
no_break_text = st.text().filter(lambda s: "\r" not in s and "\n" not in s)


@st.composite
def encoded_events(draw: st.DrawFn) -> tuple[str, str | None, str | None, int | None]:
    return (
        draw(no_cr_text),
        draw(st.none() | no_break_text),
        draw(st.none() | no_break_text.filter(lambda s: "\x00" not in s)),
        draw(st.none() | st.integers(0, 2**40)),
    )


@given(st.lists(encoded_events(), min_size=1, max_size=5), st.data())
def test_encode_event_round_trips(specs: list[tuple[str, str | None, str | None, int | None]], data: st.DataObject) -> None:
    stream = b"".join(encode_event(dt, event=ev, id=i, retry=r) for dt, ev, i, r in specs)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=8))
    events, d = feed_all(stream, cuts=cuts)
    assert [(e.data, e.event, e.id, e.retry, e.dispatched) for e in events] == [
        (dt, ev or "message", i, r, True) for dt, ev, i, r in specs
    ]
    assert d.problems == []
    ids = [i for _, _, i, _ in specs if i is not None]
    assert d.last_event_id == (ids[-1] if ids else None)
