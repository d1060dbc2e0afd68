"""Newline-delimited framing for the MCP stdio transport.  No I/O.

The stdio transport says (2025-11-25, basic/transports#stdio): "Messages are delimited by newlines,
and **MUST NOT** contain embedded newlines."  :class:`NDJSONDecoder` turns a byte stream, fed in
any chunking, into :class:`Frame` objects, one per line, and annotates what a conformance check
wants to know about the framing itself:

* ``"CR before LF"`` -- the line ended with ``\\r\\n`` (the ``\\r`` is removed from ``raw``);
* ``"invalid UTF-8"`` -- the line is not UTF-8 (MCP messages MUST be UTF-8 encoded);
* ``"empty line"`` / ``"whitespace-only line"`` -- nothing to parse;
* ``"line exceeds N bytes (truncated)"`` with ``truncated=True`` -- the line was longer than
  ``max_line_bytes``; the frame keeps its first ``max_line_bytes`` bytes and the rest of the line
  is discarded without being buffered;
* ``"no newline at end of stream"`` -- from :meth:`NDJSONDecoder.close`, for a last line without
  its terminating newline.

Several problems on one line are joined with ``"; "``.  A frame with a problem may still hold a
parseable message; the framing verdict and the message verdict are separate.

Embedded newlines cannot be seen by a framer (the newline *is* the delimiter).  What can be seen is
their effect: a line that is not JSON on its own, followed by line(s) that complete it.
:func:`looks_like_split_message` detects exactly that.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

__all__ = [
    "Frame",
    "NDJSONDecoder",
    "encode_line",
    "looks_like_split_message",
    "SplitJoiner",
    "SPLIT_MESSAGE",
    "DEFAULT_MAX_LINE_BYTES",
]

DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024

CR_BEFORE_LF = "CR before LF"
INVALID_UTF8 = "invalid UTF-8"
EMPTY_LINE = "empty line"
WHITESPACE_LINE = "whitespace-only line"
NO_NEWLINE_AT_END = "no newline at end of stream"

_CR = 0x0D


@dataclass
class Frame:
    """One line of an NDJSON stream."""

    raw: bytes  # the line without its terminating b"\n" (and without a trailing b"\r")
    problem: str | None = None  # framing problems, "; "-joined; None for a clean line
    truncated: bool = False  # the line exceeded max_line_bytes; raw holds its first max bytes
    lines: int = 1  # > 1: one message reassembled from this many lines (see SplitJoiner)


def _too_long(max_line_bytes: int) -> str:
    return f"line exceeds {max_line_bytes} bytes (truncated)"


def _utf8_problem(raw: bytes, *, truncated: bool) -> bool:
    """True if ``raw`` is not valid UTF-8 (an incomplete sequence cut by truncation is allowed)."""
    if raw.isascii():
        return False
    try:
        if truncated:
            codecs.getincrementaldecoder("utf-8")().decode(raw, final=False)
        else:
            raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class NDJSONDecoder:
    """Split a byte stream into lines; correct for any chunking, bounded memory.

    ``feed`` returns the frames completed by ``data``.  The decoder never holds more than about
    ``max_line_bytes`` of an unfinished line: an over-long line is reported once, as soon as it is
    known to be too long (before its newline arrives), and the rest of it is skipped up to the next
    newline.  The result does not depend on how the stream is chunked.
    """

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()  # the unfinished line (at most max_line_bytes + 1 bytes)
        self._discarding = False  # inside an over-long line that has been reported already
        self._closed = False

    # -- public API ---------------------------------------------------------------------------

    def feed(self, data: bytes) -> list[Frame]:
        """Consume ``data``; return the frames of every line it completes."""
        if self._closed:
            raise RuntimeError("NDJSONDecoder.feed() after close()")
        if not data:
            return []
        if not isinstance(data, bytes):
            data = bytes(data)
        out: list[Frame] = []
        if self._discarding:
            nl = data.find(b"\n")
            if nl < 0:
                return out
            self._discarding = False
            data = data[nl + 1 :]
        if self._buf:
            nl = data.find(b"\n")
            if nl < 0:
                self._hold(data, out)
                return out
            line = bytes(self._buf) + data[:nl]
            self._buf = bytearray()
            out.append(self._frame(line))
            data = data[nl + 1 :]
        lines = data.split(b"\n")
        tail = lines.pop()
        frame = self._frame
        out.extend([frame(line) for line in lines])
        if tail:
            self._hold(tail, out)
        return out

    def close(self) -> list[Frame]:
        """End of stream: an unterminated last line becomes a frame with ``"no newline at end of stream"``."""
        if self._closed:
            return []
        self._closed = True
        self._discarding = False
        if not self._buf:
            return []
        raw = bytes(self._buf)
        self._buf = bytearray()
        if len(raw) > self.max_line_bytes:  # max + 1 bytes ending in b"\r": never got its b"\n"
            frame = self._truncated(raw[: self.max_line_bytes])
            frame.problem = f"{frame.problem}; {NO_NEWLINE_AT_END}"
            return [frame]
        problems = [INVALID_UTF8] if _utf8_problem(raw, truncated=False) else []
        problems.append(NO_NEWLINE_AT_END)
        return [Frame(raw, "; ".join(problems))]

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line currently held (never more than ``max_line_bytes + 1``)."""
        return len(self._buf)

    # -- internals ----------------------------------------------------------------------------

    def _frame(self, line: bytes) -> Frame:
        """Frame for a complete line (its b"\\n" already removed)."""
        if line.isascii() and not line.endswith(b"\r") and line and len(line) <= self.max_line_bytes:
            # the common case: a clean ASCII line of sane length
            if line.isspace():
                return Frame(line, WHITESPACE_LINE)
            return Frame(line)
        cr = line.endswith(b"\r")
        if cr:
            line = line[:-1]
        if len(line) > self.max_line_bytes:
            # only what a chunked feed could also know: the line is too long; the rest is unseen
            return self._truncated(line[: self.max_line_bytes])
        problems = [CR_BEFORE_LF] if cr else []
        if _utf8_problem(line, truncated=False):
            problems.append(INVALID_UTF8)
        if not line:
            problems.append(EMPTY_LINE)
        elif line.isspace():
            problems.append(WHITESPACE_LINE)
        return Frame(line, "; ".join(problems) if problems else None)

    def _truncated(self, raw: bytes) -> Frame:
        problems = [_too_long(self.max_line_bytes)]
        if _utf8_problem(raw, truncated=True):
            problems.append(INVALID_UTF8)
        return Frame(raw, "; ".join(problems), True)

    def _hold(self, tail: bytes, out: list[Frame]) -> None:
        """Append ``tail`` (no newline in it) to the unfinished line, or report the line as too long.

        A line is too long when its content without one trailing ``\\r`` exceeds the limit; with
        only a prefix known, that is certain once the prefix has ``max + 2`` bytes, or ``max + 1``
        bytes not ending in ``\\r``.  Deciding on the prefix alone keeps the result independent of
        chunking.
        """
        limit = self.max_line_bytes
        have = len(self._buf)
        total = have + len(tail)
        if total <= limit or (total == limit + 1 and tail[-1] == _CR):
            self._buf += tail
            return
        buf = self._buf
        if have < limit:
            buf += tail[: limit - have]
        else:
            del buf[limit:]
        self._buf = bytearray()
        raw = bytes(buf)
        del buf
        self._discarding = True
        out.append(self._truncated(raw))


def encode_line(body: bytes) -> bytes:
    """``body + b"\\n"``; a body with an embedded newline cannot be framed and raises ValueError."""
    if b"\n" in body:
        raise ValueError("an NDJSON message must not contain an embedded newline")
    return bytes(body) + b"\n"


def _is_json(text: str, *, strict: bool) -> tuple[bool, object]:
    try:
        return True, json.loads(text, strict=strict)
    except (ValueError, RecursionError):
        return False, None


def looks_like_split_message(prev: bytes, cur: bytes, *more: bytes) -> bool:
    """True when a message seems to have been split by embedded newlines.

    Detects exactly this: ``prev`` alone is not a JSON text, and ``prev``, ``cur`` (and any
    ``more`` lines) joined with ``b"\\n"`` form one JSON object or array.  That is the tell-tale of
    a pretty-printed message (newlines between tokens) or of a raw newline inside a string (JSON
    forbids control characters in strings, so the joined text is parsed leniently for that case).
    Lines with invalid UTF-8 never match.  A transport that keeps the lines which failed to parse
    can call this with the first of them and the lines that followed.
    """
    lines = (prev, cur, *more)
    try:
        texts = [line.decode("utf-8") for line in lines]
    except UnicodeDecodeError:
        return False
    first = texts[0].strip()
    if not first or _is_json(first, strict=True)[0] or _is_json(first, strict=False)[0]:
        return False
    ok, value = _is_json("\n".join(texts), strict=False)
    return ok and isinstance(value, (dict, list))


SPLIT_MESSAGE = "embedded newlines"
MAX_SPLIT_LINES = 100_000  # the most lines one reassembled message may span
_OPENERS = (b"{", b"[")
_SPECIAL = re.compile(rb'["\\{}\[\]]')


class SplitJoiner:
    """Reassemble messages a peer spread over several lines (pretty-printed JSON).

    The framing rule is broken either way; what this decides is whether the run can go on.  A
    line that opens a JSON object or array without closing it starts a *held* run; the brackets
    outside strings are counted line by line (linear in the bytes held) and when they balance,
    the run joined with ``b"\\n"`` is parsed once: one JSON object or array comes out as one
    :class:`Frame` whose ``raw`` is the joined lines, ``lines`` their number and ``problem``
    ``"embedded newlines: one message over N lines"``.  A held run that cannot become a message
    (it does not parse once balanced, a complete one-line message or a framing problem arrives,
    more than ``max_lines`` lines or ``max_bytes`` bytes) comes out line by line, as received.

    Clean one-line messages pass straight through (two byte comparisons each).
    """

    def __init__(self, *, max_lines: int = MAX_SPLIT_LINES, max_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._held: list[Frame] = []
        self._size = 0
        self._depth = 0
        self._in_string = False

    @property
    def holding(self) -> int:
        """Lines currently held (an unfinished split message)."""
        return len(self._held)

    def push(self, frame: Frame) -> list[Frame]:
        """The frames ``frame`` completes (none while a split message is still open)."""
        held = self._held
        if not held:
            if frame.problem is not None or frame.raw.strip()[:1] not in _OPENERS:
                return [frame]
            if frame.raw[:1] == b"{" and frame.raw.rstrip()[-1:] == b"}":
                return [frame]  # the usual one-line message: no bracket scan (the fuzzer's hot path)
            depth, in_string = _brackets(frame.raw, 0, False)
            if depth <= 0 and not in_string:
                return [frame]  # balanced on its own line: a message, or noise for the checks
            self._held, self._size, self._depth, self._in_string = [frame], len(frame.raw), depth, in_string
            return []
        if frame.problem is not None or (not self._in_string and _balanced_line(frame.raw)):
            return [*self.flush(), *self.push(frame)]
        held.append(frame)
        self._size += len(frame.raw) + 1
        self._depth, self._in_string = _brackets(frame.raw, self._depth, self._in_string)
        if self._depth <= 0 and not self._in_string:
            joined = b"\n".join(f.raw for f in held)
            if self._depth == 0 and _is_container(joined):
                n = len(held)
                self._held, self._size = [], 0
                return [Frame(joined, f"{SPLIT_MESSAGE}: one message over {n} lines", lines=n)]
            return self.flush()
        if len(held) >= self.max_lines or self._size > self.max_bytes:
            return self.flush()
        return []

    def flush(self) -> list[Frame]:
        """Give back the held lines as they were received (end of stream, or no message)."""
        out, self._held, self._size, self._depth, self._in_string = self._held, [], 0, 0, False
        return out


def _brackets(line: bytes, depth: int, in_string: bool) -> tuple[int, bool]:
    """Bracket depth and string state after ``line`` (brackets inside strings do not count)."""
    skip = -1
    for m in _SPECIAL.finditer(line):
        i = m.start()
        if i < skip:
            continue
        c = line[i]
        if in_string:
            if c == 0x5C:  # backslash: the next character is escaped
                skip = i + 2
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x7B, 0x5B):
            depth += 1
        elif c in (0x7D, 0x5D):
            depth -= 1
    return depth, in_string


def _balanced_line(raw: bytes) -> bool:
    """A line that is a one-line message by itself: a whole JSON object starting at the first
    column (the inner lines of a pretty-printed message are indented, and may be whole arrays)."""
    return raw[:1] == b"{" and _brackets(raw, 0, False) == (0, False) and _is_container(raw.rstrip())


def _is_container(text: bytes) -> bool:
    try:
        value = json.loads(text.decode("utf-8"), strict=False)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, (dict, list))
