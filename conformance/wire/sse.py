"""Server-sent events: the WHATWG event-stream interpretation, sans I/O.

Implements https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
exactly, for a byte stream fed in any chunking:

* lines end with CRLF, LF or CR; a CR at the end of one chunk and an LF at the start of the next
  are one line ending;
* one UTF-8 byte order mark at the very start of the stream is skipped;
* the stream is decoded as UTF-8 with replacement characters; each invalid sequence is recorded
  in :attr:`SSEDecoder.problems`;
* a line starting with ``:`` is a comment; otherwise the field name is the text before the first
  ``:`` (or the whole line) and the value the text after it, with one leading space removed;
* ``data`` appends the value and a LF to the data buffer; ``event`` sets the event type; ``id``
  sets the last event ID buffer unless the value contains NUL; ``retry`` sets the reconnection
  time if the value is ASCII digits only; other fields are ignored;
* a blank line dispatches: the last event ID is updated, and if the data buffer is not empty an
  event is dispatched with the buffer minus its final LF and the type (``message`` by default);
* at end of stream an incomplete event is discarded.

One extension for MCP, whose servers "SHOULD immediately send an SSE event consisting of an event
ID and an empty ``data`` field" to prime reconnection (basic/transports#sending-messages-to-the-server):
a block with an ``id`` or ``retry`` field but no ``data`` line is not dispatched by a browser, yet
the last event ID / reconnection time do change.  :meth:`SSEDecoder.feed` returns such a block too,
as an :class:`SSEEvent` with ``data=""`` and ``dispatched=False``, so a transport can record it.
(A block with an ``id`` and an empty ``data:`` line *is* dispatched, with ``data=""`` and
``dispatched=True``.)  Consumers that deliver messages must skip events whose ``data`` is empty
or that are not ``dispatched``.

Events are bounded: a block larger than ``max_event_bytes`` is discarded (and recorded in
``problems``) without being buffered, so a peer streaming an endless event cannot exhaust memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEDecoder", "encode_event", "message_event", "delivered", "DEFAULT_MAX_EVENT_BYTES"]

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
MAX_PROBLEMS = 100

_BOM = b"\xef\xbb\xbf"
_EOL = re.compile(rb"\r\n|\r|\n")
_CR = 0x0D
_LF = 0x0A
_COLON = 0x3A


@dataclass
class SSEEvent:
    """One event block.

    ``id`` and ``retry`` are the values of the ``id`` / ``retry`` fields *of this block* (``None``
    when the block has none); the WHATWG "last event ID", which carries over from earlier blocks,
    is :attr:`SSEDecoder.last_event_id`.  ``raw`` holds the block's lines as received, with their
    line endings, but not the blank line that ended the block (a BOM at the start of the stream
    is part of the first block's ``raw``).
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None
    raw: bytes = b""  # the bytes of this event block as received
    dispatched: bool = True  # False: an id/retry-only block a browser would not dispatch (see module doc)


class SSEDecoder:
    """Feed bytes, get :class:`SSEEvent` objects; the result does not depend on chunking."""

    def __init__(self, *, max_event_bytes: int | None = DEFAULT_MAX_EVENT_BYTES) -> None:
        if max_event_bytes is not None and max_event_bytes < 1:
            raise ValueError("max_event_bytes must be at least 1 (or None for no limit)")
        self.max_event_bytes = max_event_bytes
        self.last_event_id: str | None = None  # the WHATWG "last event ID string" (None: never set)
        self.retry: int | None = None  # the latest reconnection time in milliseconds
        self.problems: list[str] = []
        self._head: bytearray | None = bytearray()  # the first bytes, until the BOM is decided
        self._base = 0  # stream offset of the current chunk's first byte
        self._partial = bytearray()  # an unfinished line
        self._partial_start = 0  # its stream offset
        self._partial_seen = False  # (discarding) the unfinished line had content
        self._skip_lf = False  # the last chunk ended with CR: a leading LF belongs to that line ending
        self._lf_to_raw = False  # ... and goes into the current block's raw
        self._discarding = False  # skipping an over-large block up to its blank line
        self._closed = False
        self._reset_block()
        self._id_buffer: str | None = None  # the WHATWG "last event ID buffer"

    # -- public API ---------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Consume ``data``; return the event blocks it completes."""
        if self._closed:
            raise RuntimeError("SSEDecoder.feed() after close()")
        out: list[SSEEvent] = []
        if not data:
            return out
        data = bytes(data)
        if self._head is not None:
            self._head += data
            if len(self._head) < 3 and _BOM.startswith(self._head):
                return out
            data = bytes(self._head)
            self._head = None
            if data.startswith(_BOM):
                self._raw += _BOM
                data = data[3:]
                self._base += 3
        if self._skip_lf and data:
            self._skip_lf = False
            if data[0] == _LF:
                if self._lf_to_raw:
                    self._raw += b"\n"
                data = data[1:]
                self._base += 1
        if not data:
            return out
        pos = 0
        last_cr_end = False
        for m in _EOL.finditer(data):
            start, end = m.span()
            self._line(data, pos, start, end, out)
            pos = end
            last_cr_end = end == len(data) and data[start] == _CR and end - start == 1
        if last_cr_end:
            self._skip_lf = True
        if pos < len(data):
            if self._discarding:
                self._partial_seen = True
            else:
                if not self._partial:
                    self._partial_start = self._base + pos
                self._partial += data[pos:]
                if self._over_limit(len(self._partial)):
                    self._discard()
                    self._partial_seen = True
        self._base += len(data)
        return out

    def close(self) -> list[SSEEvent]:
        """End of stream.  An incomplete event is discarded (as the WHATWG algorithm says) and,
        if it held anything a browser would have acted on, recorded in ``problems``."""
        if self._closed:
            return []
        self._closed = True
        pending = bool(self._head) or bool(self._data) or bool(self._event) or self._block_id is not None
        pending = pending or self._block_retry is not None
        pending = pending or (bool(self._partial) and self._partial[0] != _COLON)
        if pending and not self._discarding:
            self._problem("stream ended before the blank line that ends an event: the incomplete event is discarded")
        self._partial = bytearray()
        self._reset_block()
        return []

    # -- internals ----------------------------------------------------------------------------

    def _reset_block(self) -> None:
        self._raw = bytearray()
        self._size = 0  # line bytes of this block, one byte per line ending
        self._data: list[str] = []
        self._event = ""
        self._block_id: str | None = None
        self._block_retry: int | None = None

    def _problem(self, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)
        elif len(self.problems) == MAX_PROBLEMS:
            self.problems.append("further problems not recorded")

    def _over_limit(self, extra: int) -> bool:
        return self.max_event_bytes is not None and self._size + extra > self.max_event_bytes

    def _discard(self) -> None:
        self._problem(f"event exceeds {self.max_event_bytes} bytes: discarded")
        self._discarding = True
        self._partial = bytearray()
        self._reset_block()

    def _line(self, data: bytes, pos: int, start: int, end: int, out: list[SSEEvent]) -> None:
        """Handle the line ``data[pos:start]`` (after any unfinished part) ending with ``data[start:end]``."""
        self._lf_to_raw = False
        if self._discarding:
            blank = start == pos and not self._partial_seen
            self._partial_seen = False
            if blank:
                self._discarding = False
                self._reset_block()
            return
        if self._partial:
            offset = self._partial_start
            line = bytes(self._partial) + data[pos:start]
            self._partial = bytearray()
        else:
            offset = self._base + pos
            line = data[pos:start]
        if not line:
            self._dispatch(out)
            return
        if self._over_limit(len(line) + 1):
            self._discard()
            return
        self._size += len(line) + 1
        self._raw += line
        self._raw += data[start:end]
        self._lf_to_raw = True
        if line.isascii():
            text = line.decode("ascii")
        else:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._problem(f"invalid UTF-8 at byte {offset + exc.start} of the stream")
                text = line.decode("utf-8", "replace")
        if line[0] == _COLON:
            return  # comment
        name, colon, value = text.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\x00" in value:
                self._problem(f"id field containing NUL ignored: {value!r}")
            else:
                self._id_buffer = self._block_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry = self._block_retry = int(value)
            else:
                self._problem(f"retry field that is not ASCII digits ignored: {value!r}")

    def _dispatch(self, out: list[SSEEvent]) -> None:
        self.last_event_id = self._id_buffer
        if self._data or self._block_id is not None or self._block_retry is not None:
            out.append(
                SSEEvent(
                    data="\n".join(self._data),
                    event=self._event or "message",
                    id=self._block_id,
                    retry=self._block_retry,
                    raw=bytes(self._raw),
                    dispatched=bool(self._data),
                )
            )
        self._reset_block()


def encode_event(data: str, *, event: str | None = None, id: str | None = None, retry: int | None = None) -> bytes:
    """One SSE event block (``event``, ``id``, ``retry``, one ``data`` line per line of ``data``, blank line).

    ``data`` may contain LF (it becomes several ``data`` lines) but not CR, which the decoder
    would turn into a line break: that would not round-trip, so it raises ValueError, as do
    ``event``/``id`` with a line break, an ``id`` with NUL and a negative ``retry``.
    """
    if "\r" in data:
        raise ValueError("SSE data cannot carry CR (it would decode as a line break)")
    parts: list[str] = []
    if event is not None:
        if "\r" in event or "\n" in event:
            raise ValueError("an SSE event type cannot contain a line break")
        parts.append(f"event: {event}\n")
    if id is not None:
        if "\r" in id or "\n" in id or "\x00" in id:
            raise ValueError("an SSE id cannot contain a line break or NUL")
        parts.append(f"id: {id}\n")
    if retry is not None:
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 0:
            raise ValueError("an SSE retry must be a non-negative integer (milliseconds)")
        parts.append(f"retry: {retry}\n")
    parts.extend(f"data: {line}\n" for line in data.split("\n"))
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def message_event(data: bytes) -> bytes:
    """The event block the suite's HTTP server writes for one message it sends (whatever the bytes:
    a fuzzed frame may be no JSON, not UTF-8, or carry a line break): ``event: message``, one
    ``data:`` line holding ``data`` as it is, a blank line."""
    return b"event: message\ndata: " + data + b"\n\n"


def delivered(data: bytes) -> list[bytes]:
    """What a client reading the event stream as the WHATWG standard says receives, as messages,
    for the bytes ``data`` sent as one :func:`message_event`: the data of each ``message`` event
    dispatched, re-encoded as UTF-8.  "Streams must be decoded using the UTF-8 decode algorithm"
    (invalid bytes become U+FFFD); a LF, CR or CRLF inside ``data`` ends its ``data:`` line (what
    follows is another field, ignored unless it is one, and a blank line dispatches the event
    early); NUL passes through.  ``[data]`` when the bytes arrive unchanged."""
    if b"\n" not in data and b"\r" not in data:
        try:
            data.decode("utf-8")
            return [data]
        except UnicodeDecodeError:
            return [data.decode("utf-8", "replace").encode("utf-8")]
    decoder = SSEDecoder(max_event_bytes=None)
    events = decoder.feed(message_event(data))
    return [e.data.encode("utf-8") for e in events if e.dispatched and e.event == "message"]
