"""JSON-RPC 2.0 envelopes parsed from raw bytes, without losing anything.  No I/O.

The parser keeps the raw bytes, the exact JSON value and the exact id type (``"7"`` is not ``7``,
``1.0`` is not ``1``), flags duplicate object keys (the last one wins, as in most JSON parsers,
and the duplicate is reported) and classifies the message.  It never raises on bad input: a
message that is not JSON, not UTF-8 or not a JSON-RPC envelope comes back with ``kind`` INVALID
or PARSE_ERROR and a list of problems.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Kind",
    "Envelope",
    "MISSING",
    "parse_envelope",
    "envelope_of",
    "parse_value",
    "dumps",
    "same_id",
    "id_repr",
]


class _Missing:
    """Sentinel for an absent member (distinct from JSON ``null``)."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Kind(str, enum.Enum):
    REQUEST = "request"  # method + id
    NOTIFICATION = "notification"  # method, no id member
    RESULT = "result"  # id + result
    ERROR = "error"  # error (id may be null/absent for unreadable requests)
    BATCH = "batch"  # a JSON array; see Envelope.items
    INVALID = "invalid"  # valid JSON that is not a JSON-RPC 2.0 message
    PARSE_ERROR = "parse-error"  # not UTF-8, or not JSON

    def __str__(self) -> str:
        return self.value


@dataclass
class Envelope:
    raw: bytes
    kind: Kind
    value: Any = MISSING  # the parsed JSON value (MISSING when it did not parse)
    id: Any = MISSING  # exact type kept: str, int, float, bool, None or MISSING
    method: str | None = None
    params: Any = MISSING
    result: Any = MISSING
    error: Any = MISSING
    problems: list[str] = field(default_factory=list)
    items: list["Envelope"] = field(default_factory=list)  # members of a batch
    #: PARSE_ERROR only: a response whose bytes are not UTF-8 but which, read with those bytes
    #: replaced, is an object with an id and a result or an error -- that id, so that whoever
    #: waits for the response learns at once that it came unreadable (never judged as the id)
    lenient_id: Any = MISSING

    @property
    def is_response(self) -> bool:
        return self.kind in (Kind.RESULT, Kind.ERROR)

    @property
    def has_id(self) -> bool:
        return self.id is not MISSING

    @property
    def error_code(self) -> Any:
        if isinstance(self.error, dict):
            return self.error.get("code", MISSING)
        return MISSING

    def summary(self) -> dict[str, Any]:
        """A small JSON-serialisable description for transcripts and reports."""
        out: dict[str, Any] = {"kind": self.kind.value}
        if self.id is not MISSING:
            out["id"] = self.id
        if self.method is not None:
            out["method"] = self.method
        if self.kind is Kind.ERROR and isinstance(self.error, dict):
            out["code"] = self.error.get("code")
        if self.items:
            out["items"] = [i.summary() for i in self.items]
        if self.problems:
            out["problems"] = list(self.problems)
        return out


def _pairs_hook(problems: list[str]):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                problems.append(f"duplicate key {key!r}")
            obj[key] = value
        return obj

    return hook


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _DuplicateKey(Exception):
    """Raised by the fast parse at the first duplicate key: the exact parse then reports them."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


# One decoder for every message (json.loads with options builds a new one per call); a duplicate
# key sends the text to the exact, problem-collecting parse below.
_decode_unique = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_reject_constant).decode


def parse_value(raw: bytes | str) -> tuple[Any, list[str]]:
    """Parse JSON strictly (UTF-8 only, no NaN/Infinity); returns (value or MISSING, problems)."""
    problems: list[str] = []
    if isinstance(raw, (bytes, bytearray, memoryview)):
        raw = bytes(raw)
        if raw.startswith(b"\xef\xbb\xbf"):
            problems.append("UTF-8 byte order mark before the JSON text")
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"invalid UTF-8 at byte {exc.start}")
            return MISSING, problems
    else:
        text = raw
    try:
        if text[:1] == "\ufeff":  # json.loads' own BOM complaint, as before
            raise _DuplicateKey
        value = _decode_unique(text)
    except _DuplicateKey:
        try:
            value = json.loads(text, object_pairs_hook=_pairs_hook(problems), parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            problems.append(f"invalid JSON: {exc}")
            return MISSING, problems
    except (ValueError, RecursionError) as exc:
        problems.append(f"invalid JSON: {exc}")
        return MISSING, problems
    return value, problems


def _classify(raw: bytes, value: Any, problems: list[str], *, in_batch: bool = False) -> Envelope:
    if isinstance(value, list):
        if in_batch:
            return Envelope(raw=raw, kind=Kind.INVALID, value=value, problems=[*problems, "nested array is not a JSON-RPC message"])
        env = Envelope(raw=raw, kind=Kind.BATCH, value=value, problems=list(problems))
        if not value:
            env.problems.append("empty batch")
        env.items = [_classify(_item_raw(v), v, [], in_batch=True) for v in value]
        return env
    if not isinstance(value, dict):
        return Envelope(raw=raw, kind=Kind.INVALID, value=value, problems=[*problems, f"a JSON-RPC message must be an object, not {type(value).__name__ if value is not None else 'null'}"])
    probs = list(problems)
    if value.get("jsonrpc", MISSING) != "2.0":
        probs.append('"jsonrpc" must be exactly "2.0"')
    msg_id = value.get("id", MISSING)
    method = value.get("method", MISSING)
    has_result = "result" in value
    has_error = "error" in value
    env = Envelope(
        raw=raw,
        kind=Kind.INVALID,
        value=value,
        id=msg_id,
        params=value.get("params", MISSING),
        result=value.get("result", MISSING),
        error=value.get("error", MISSING),
        problems=probs,
    )
    if method is not MISSING:
        if not isinstance(method, str):
            probs.append('"method" must be a string')
            return env
        env.method = method
        if has_result or has_error:
            probs.append('a request or notification must not carry "result" or "error"')
        if "params" in value and not isinstance(value["params"], (dict, list)):
            probs.append('"params" must be an object or an array')
        env.kind = Kind.REQUEST if msg_id is not MISSING else Kind.NOTIFICATION
        if env.kind is Kind.REQUEST and not _valid_id(msg_id):
            probs.append(f'"id" must be a string or an integer, not {_type_name(msg_id)}')
        return env
    if has_result and has_error:
        probs.append('a response must not carry both "result" and "error"')
        return env
    if has_result:
        env.kind = Kind.RESULT
        if msg_id is MISSING:
            probs.append('a result response must carry an "id"')
        elif not _valid_id(msg_id):
            probs.append(f'"id" must be a string or an integer, not {_type_name(msg_id)}')
        return env
    if has_error:
        env.kind = Kind.ERROR
        err = value["error"]
        if not isinstance(err, dict):
            probs.append('"error" must be an object')
        else:
            code = err.get("code", MISSING)
            if code is MISSING:
                probs.append('"error" must carry a "code"')
            elif isinstance(code, bool) or not isinstance(code, int):
                probs.append('"error.code" must be an integer')
            if not isinstance(err.get("message", MISSING), str):
                probs.append('"error" must carry a string "message"')
        if msg_id is not MISSING and msg_id is not None and not _valid_id(msg_id):
            probs.append(f'"id" must be a string or an integer, not {_type_name(msg_id)}')
        return env
    probs.append('neither "method", "result" nor "error" is present')
    return env


def _item_raw(value: Any) -> bytes:
    """Bytes for one batch member (re-serialised; the batch envelope keeps the bytes received)."""
    try:
        return dumps(value)
    except ValueError:  # 1e400 parses to inf; "\ud800" parses to a lone surrogate: not UTF-8-encodable
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a number with a fraction"
    return {dict: "an object", list: "an array"}.get(type(value), type(value).__name__)


def parse_envelope(raw: bytes | str) -> Envelope:
    """Parse one framed message (an NDJSON line, an SSE ``data`` payload, an HTTP body)."""
    raw_bytes = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    value, problems = parse_value(raw_bytes)
    if value is MISSING:
        env = Envelope(raw=raw_bytes, kind=Kind.PARSE_ERROR, problems=problems)
        if problems and problems[-1].startswith("invalid UTF-8"):
            env.lenient_id = _lenient_response_id(raw_bytes)
        return env
    return _classify(raw_bytes, value, problems)


def envelope_of(raw: bytes, value: Any) -> Envelope:
    """What :func:`parse_envelope` gives for ``raw`` when ``raw`` is known to be :func:`dumps`
    of ``value`` (bytes we encoded ourselves, which parse back to ``value``): without parsing."""
    return _classify(raw, value, [])


def lenient_value(raw: bytes) -> Any:
    """``raw`` parsed as JSON with its invalid UTF-8 replaced (U+FFFD), or MISSING: a reading for
    telling which message something is (its id), never for judging it."""
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return MISSING


def _lenient_response_id(raw: bytes) -> Any:
    """The id of a response that is JSON once its invalid UTF-8 is replaced, else MISSING."""
    value = lenient_value(raw)
    if not isinstance(value, dict) or "method" in value or not ("result" in value or "error" in value):
        return MISSING
    rid = value.get("id", MISSING)
    return rid if _valid_id(rid) else MISSING


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, the form we put on the wire (no embedded newlines)."""
    return _encode(value).encode("utf-8")


def same_id(a: Any, b: Any) -> bool:
    """Ids are equal only with the same JSON type: ``"7" != 7`` and ``1 != 1.0 != true``."""
    if a is MISSING or b is MISSING:
        return a is b
    return type(a) is type(b) and a == b


def id_repr(value: Any) -> str:
    """The id as it appears in JSON, for messages: ``7``, ``"7"``, ``null``, ``<absent>``."""
    if value is MISSING:
        return "<absent>"
    return json.dumps(value)
