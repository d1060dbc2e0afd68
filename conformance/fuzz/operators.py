"""The registry of named mutation operators.  Pure.

An operator takes a deterministic ``random.Random``, a *copy* of one corpus message (a dict whose
id the generator already set) and an :class:`OpContext`, and returns an :class:`Output`: the
JSON value to send (or exact bytes, for syntax-level operators) plus the list of
:class:`Mutation` records saying what it changed (schemathesis' ``Mutation``: operator, JSON
path, before -> after).  Every record travels with the frame into findings and reproducers.

``OPERATORS`` maps the name to an :class:`Operator` (function, weight in the default mix,
transports it applies to, and what it mutates: ``uses``).  ``--ops`` / ``--exclude-ops`` select by
name.  Three uses, one registry:

* ``c2s`` -- a message we send as the client (fuzzing a server: requests and notifications);
* ``s2c`` -- a message we send as the server (fuzzing a client: server-to-client requests and
  notifications);
* ``answer`` -- our answer to a request of the client under test (fuzzing a client: the response
  to its ``initialize``, ``tools/list``, ...).  The ``answer-*`` operators exist for this use only
  (wrong or missing id, result and error both, a wrong result shape for the method, unknown
  members, a broken error object); the generic ones (truncate, invalid-utf8, huge-string,
  retype-field...) serve every use they make sense for.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.wire.envelope import MISSING, dumps

__all__ = ["Mutation", "Output", "OpContext", "Operator", "OPERATORS", "operator", "select_operators", "sites", "short"]

_MAX_SHORT = 80


def short(value: Any) -> Any:
    """A JSON-able, bounded rendering of a value for a mutation record."""
    if value is MISSING:
        return "<absent>"
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, str):
        return value if len(value) <= _MAX_SHORT else value[:_MAX_SHORT] + f"...({len(value)} chars)"
    if isinstance(value, (int, float, bool)) or value is None:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
            return f"<integer of {len(str(abs(value)))} digits>"
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return repr(value)
        return value
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__}>"
    return text if len(text) <= _MAX_SHORT else text[:_MAX_SHORT] + f"...({len(text)} chars)"


@dataclass(frozen=True)
class Mutation:
    operator: str
    path: str  # JSON path ("$.params.name"), or "bytes[12:14]" for byte-level changes
    before: Any = "<absent>"
    after: Any = "<absent>"
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"operator": self.operator, "path": self.path, "before": self.before, "after": self.after, "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Mutation":
        return cls(data["operator"], data["path"], data.get("before"), data.get("after"), data.get("note", ""))

    def describe(self) -> str:
        return f"{self.operator} at {self.path}: {json.dumps(self.before, ensure_ascii=False)} -> {json.dumps(self.after, ensure_ascii=False)}" + (f" ({self.note})" if self.note else "")


@dataclass
class Output:
    value: Any = MISSING  # the JSON value to send (serialised compactly), or
    data: bytes | None = None  # exact bytes (syntax-level operators); wins over value
    mutations: list[Mutation] = field(default_factory=list)
    headers: dict[str, str] | None = None  # HTTP-level mutations (streamable HTTP only)

    def to_bytes(self) -> bytes:
        return self.encode()[0]

    def encode(self) -> tuple[bytes, bool]:
        """The bytes, and whether they are our strict encoding of :attr:`value` (no exact bytes
        given, and no NaN, infinity, lone surrogate or nesting the strict encoder refuses):
        parsing them gives :attr:`value` back, duplicate names impossible."""
        if self.data is not None:
            return self.data, False
        try:
            return dumps(self.value), True
        except (ValueError, RecursionError):  # NaN/inf/lone surrogates/very deep: the lenient encoder
            return json.dumps(self.value, separators=(",", ":"), ensure_ascii=True).encode("ascii"), False


@dataclass(frozen=True)
class OpContext:
    version: str
    transport: str  # "stdio" | "streamable-http" | "sse"
    index: int  # the frame index (for unique names / ids)
    corpus: tuple[Any, ...] = ()  # the corpus seeds (for batches)
    fresh_id: Callable[[int], Any] = lambda k: f"fz-x-{k}"  # unique ids for extra requests in a frame
    method: str = ""  # ``answer`` use: the method of the request the message answers


OpFn = Callable[[random.Random, dict, OpContext], Output]


@dataclass(frozen=True)
class Operator:
    name: str
    fn: OpFn
    weight: float
    transports: frozenset[str] | None  # None: every transport
    description: str
    uses: frozenset[str] = frozenset({"c2s", "s2c"})  # c2s | s2c | answer (see the module docstring)

    def applies(self, transport: str, use: str = "c2s") -> bool:
        return (self.transports is None or transport in self.transports) and use in self.uses


OPERATORS: dict[str, Operator] = {}


USES = ("c2s", "s2c", "answer")
ALL_USES = frozenset(USES)


def operator(name: str, *, weight: float = 1.0, transports: tuple[str, ...] | None = None,
             uses: tuple[str, ...] = ("c2s", "s2c")) -> Callable[[OpFn], OpFn]:
    def deco(fn: OpFn) -> OpFn:
        OPERATORS[name] = Operator(name, fn, weight, frozenset(transports) if transports else None,
                                   (fn.__doc__ or "").strip().split("\n")[0], frozenset(uses))
        return fn

    return deco


def select_operators(transport: str, include: list[str] | None = None, exclude: list[str] | None = None,
                     use: str = "c2s") -> list[Operator]:
    """The operators for a campaign (``use``: what they mutate), in registry order.  Unknown names
    raise ValueError naming the known ones."""
    for name in [*(include or []), *(exclude or [])]:
        if name not in OPERATORS and name != "all":
            raise ValueError(f"unknown fuzz operator {name!r}; known: {', '.join(OPERATORS)}")
    chosen = [op for op in OPERATORS.values() if op.applies(transport, use)]
    if include and "all" not in include:
        chosen = [op for op in chosen if op.name in include]
    if exclude:
        chosen = [op for op in chosen if op.name not in exclude]
    return chosen


# -- sites: every member and element of a message, uniformly --------------------------------------


def sites(value: Any, path: str = "$", out: list[tuple[str, Any, Any]] | None = None) -> list[tuple[str, Any, Any]]:
    """(path, container, key) for every member/element under ``value`` (the root excluded)."""
    if out is None:
        out = []
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{path}.{k}" if k.isidentifier() else f"{path}[{json.dumps(k)}]"
            out.append((p, value, k))
            sites(v, p, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            p = f"{path}[{i}]"
            out.append((p, value, i))
            sites(v, p, out)
    return out


def _other_type(rng: random.Random, value: Any) -> Any:
    pool = [None, True, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}]
    pool = [p for p in pool if type(p) is not type(value)]
    return rng.choice(pool)


def _unique_id_of_other_type(rng: random.Random, value: Any, index: int, *, usable: bool = False) -> Any:
    """An id of another JSON type that no other frame uses (ids are never reused within a run),
    or now and then null or a boolean (not when ``usable``: an answer must be told apart by it)."""
    pool = [str(index), 20_000_000 + index, index + 0.5, [index], {"i": index}] + ([] if usable else [None, rng.random() < 0.5])
    pool = [p for p in pool if type(p) is not type(value)]
    return rng.choice(pool)


# -- structure ---------------------------------------------------------------------------------------


@operator("valid", weight=3.0, uses=("c2s", "s2c", "answer"))
def _valid(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The corpus message unchanged (answers are judged against the schema)."""
    return Output(msg)


@operator("drop-field", weight=2.0, uses=("c2s", "s2c", "answer"))
def _drop_field(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Remove one member or element (any depth, chosen uniformly)."""
    all_sites = sites(msg)
    path, container, key = rng.choice(all_sites)
    before = container[key]
    if isinstance(container, dict):
        del container[key]
    else:
        container.pop(key)
    return Output(msg, mutations=[Mutation("drop-field", path, short(before))])


@operator("duplicate-field", uses=("c2s", "s2c", "answer"))
def _duplicate_field(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Repeat one member of an object with another value (duplicate JSON keys)."""
    objs = [(p, c, k) for p, c, k in sites(msg) if isinstance(c, dict)]
    path, container, key = rng.choice(objs)
    # a second id no other frame uses (either may be read, and answers are told apart by id)
    other = _unique_id_of_other_type(rng, container[key], ctx.index, usable=True) if path == "$.id" else _other_type(rng, container[key])
    # serialise by hand: the duplicate goes before or after the original member
    marker = "\x00mcp-conformance-dup\x00"
    container[marker] = other
    text = dumps(msg).decode("utf-8")
    key_json = json.dumps(key, ensure_ascii=False)
    dup = key_json + ":" + json.dumps(other, separators=(",", ":"))
    marker_member = json.dumps(marker, ensure_ascii=False) + ":" + json.dumps(other, separators=(",", ":"))
    text = text.replace(marker_member, dup, 1)
    del container[marker]
    return Output(data=text.encode("utf-8"), mutations=[Mutation("duplicate-field", path, short(container[key]), short(other), "the key appears twice")])


@operator("retype-field", weight=2.0, uses=("c2s", "s2c", "answer"))
def _retype_field(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Give one member or element a value of another JSON type."""
    path, container, key = rng.choice(sites(msg))
    before = container[key]
    after = _unique_id_of_other_type(rng, before, ctx.index) if path == "$.id" else _other_type(rng, before)
    container[key] = after
    return Output(msg, mutations=[Mutation("retype-field", path, short(before), short(after))])


@operator("id-wrong-type", uses=("c2s", "s2c", "answer"))
def _id_wrong_type(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Replace the id with a number with a fraction, a boolean, an object or an array."""
    before = msg.get("id", MISSING)
    after = rng.choice([ctx.index + 0.5, True, False, {"id": ctx.index}, [ctx.index]])
    msg["id"] = after
    return Output(msg, mutations=[Mutation("id-wrong-type", "$.id", short(before), short(after))])


@operator("id-null", uses=("c2s", "s2c", "answer"))
def _id_null(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Set the id to null."""
    before = msg.get("id", MISSING)
    msg["id"] = None
    return Output(msg, mutations=[Mutation("id-null", "$.id", short(before), None)])


@operator("id-reuse", weight=0.5, transports=("stdio",), uses=("c2s", "s2c", "answer"))
def _id_reuse(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Send the same request twice in a row with the same id (duplicate ids in flight)."""
    line = dumps(msg)
    return Output(data=line + b"\n" + line, mutations=[Mutation("id-reuse", "$.id", short(msg.get("id", MISSING)), short(msg.get("id", MISSING)), "sent twice")])


@operator("huge-number", weight=0.5, uses=("c2s", "s2c", "answer"))
def _huge_number(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A number outside every interoperable range (10**400, -10**400, 1e400, 2**64) at one site (not the id)."""
    cands = [(p, c, k) for p, c, k in sites(msg) if p != "$.id"]
    if not cands:
        return Output(msg)
    path, container, key = rng.choice(cands)
    before = container[key]
    after_text = rng.choice(["1" + "0" * 400, "-1" + "0" * 400, "1e400", "18446744073709551616"])
    marker = "mcp-conformance-huge-number-marker"
    container[key] = marker
    text = dumps(msg).decode("utf-8").replace(json.dumps(marker), after_text, 1)
    return Output(data=text.encode("utf-8"), mutations=[Mutation("huge-number", path, short(before), short(after_text))])


# -- what parsers disagree on: members nobody defines, non-JSON forms, large integers ----------------

UNKNOWN_NAMES = ("x-mcp-conformance", "unknownMember", "zzz", "__proto__", "constructor", "$ref", "")
UNKNOWN_VALUES: tuple[Any, ...] = (None, 1, "x", [], {}, {"nested": [1, 2]}, True)


def _objects(msg: dict) -> list[tuple[str, dict]]:
    """The envelope, its params (made if absent), params._meta (made if absent) and every object
    inside them: each level of a request where a member may be added."""
    params = msg.get("params")
    if params is None and "method" in msg:
        params = msg["params"] = {}
    if isinstance(params, dict) and not isinstance(params.get("_meta", {}), dict):
        params = None
    if isinstance(params, dict):
        params.setdefault("_meta", {})
    return [("$", msg)] + [(p, c[k]) for p, c, k in sites(msg) if isinstance(c[k], dict)]


@operator("unknown-member", weight=0.2)
def _unknown_member(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Members nobody defines, at one level of the message: the envelope, params, params._meta or an
    object inside them (any answer but silence: the message is still a request)."""
    objs = _objects(msg)
    path, obj = rng.choice(objs)
    name = rng.choice(UNKNOWN_NAMES)
    if name in obj:
        name = f"x-mcp-conformance-{ctx.index}"
    value = rng.choice(UNKNOWN_VALUES)
    obj[name] = value
    # the params / _meta made for it are part of the change
    _drop_empty_meta(msg, keep=obj)
    p = f"{path}.{name}" if name.isidentifier() else f"{path}[{json.dumps(name)}]"
    return Output(msg, mutations=[Mutation("unknown-member", p, "<absent>", short(value), "a member nobody defines")])


def _drop_empty_meta(msg: dict, keep: dict) -> None:
    params = msg.get("params")
    if isinstance(params, dict) and params.get("_meta") == {} and params["_meta"] is not keep:
        del params["_meta"]
        if params == {} and params is not keep:
            del msg["params"]


# text common parsers accept but that is not JSON (RFC 8259 section 9: "A JSON parser MAY accept
# non-JSON forms or extensions."): Python's json reads NaN / Infinity, JSON5 and Jackson's ALLOW_*
# features comments, trailing commas and single quotes
NON_JSON_FORMS = ("NaN", "Infinity", "-Infinity", "comment", "trailing-comma", "single-quotes")
_MARK = "mcp-conformance-lenient-marker"


@operator("lenient-syntax", weight=0.15)
def _lenient_syntax(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Text common JSON parsers accept but that is not JSON, inside an otherwise valid message:
    NaN, Infinity, -Infinity in params, a comment, a trailing comma, single-quoted names."""
    form = rng.choice(NON_JSON_FORMS)
    if form in ("NaN", "Infinity", "-Infinity"):
        objs = [(p, o) for p, o in _objects(msg) if p != "$"]
        path, obj = rng.choice(objs)
        obj["x-mcp-conformance"] = _MARK
        _drop_empty_meta(msg, keep=obj)
        text = dumps(msg).decode("utf-8").replace(json.dumps(_MARK), form, 1)
        where = f"{path}.x-mcp-conformance"
    elif form == "comment":
        text = dumps(msg).decode("utf-8")
        at = rng.choice([1, len(text) - 1])  # after the opening brace, or before the closing one
        text = text[:at] + "/* mcp-conformance */" + text[at:]
        where = f"bytes[{at}]"
    elif form == "trailing-comma":
        objs = [(p, o) for p, o in [("$", msg)] + [(p, c[k]) for p, c, k in sites(msg) if isinstance(c[k], dict) and c[k]]]
        path, obj = rng.choice(objs)
        obj[_MARK] = 0
        text = dumps(msg).decode("utf-8").replace("," + json.dumps(_MARK) + ":0", ",", 1)
        where = path
    else:
        names = re.compile(r'(?<![\\])"([A-Za-z0-9_]+)":')
        text = names.sub(r"'\1':", dumps(msg).decode("utf-8"))
        where = "$"
    return Output(data=text.encode("utf-8"), mutations=[Mutation("lenient-syntax", where, "<valid JSON>", form,
                                                                 "not JSON, but common parsers accept it")])


#: anchors of the integers parsers disagree on: +-(2^53 - 1) (the last integer every reader agrees on,
#: RFC 8259 section 6), 2^53 + 1 (the first a double cannot hold), 2^63 - 1 / 2^63 (int64), 2^64 - 1 /
#: 2^64 (uint64); each with the direction the frame index moves it (8192 apart: two frames never read
#: alike, even rounded to a double, so answers are told apart by id)
BIG_ANCHORS: tuple[tuple[int, int], ...] = ((2**53 - 1, -1), (2**53 + 1, 8192), (2**63 - 1, -8192), (2**63, 8192),
                                            (2**64 - 1, -8192), (2**64, 8192))


def big_integer(rng: random.Random, index: int) -> int:
    anchor, step = rng.choice(BIG_ANCHORS)
    value = anchor + step * index
    return -value if rng.random() < 0.5 else value


@operator("big-id", weight=0.15)
def _big_id(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """An integer id or progress token at or beyond +-(2^53 - 1), +-2^63, +-2^64 (unique per frame)."""
    value = big_integer(rng, ctx.index)
    if "id" in msg and (rng.random() < 0.6 or "method" not in msg):
        before = msg["id"]
        msg["id"] = value
        return Output(msg, mutations=[Mutation("big-id", "$.id", short(before), value)])
    params = msg.get("params")
    if params is None:
        params = msg["params"] = {}
    if not isinstance(params, dict):
        return Output(msg)
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        meta = params["_meta"] = {}
    before = meta.get("progressToken", MISSING)
    meta["progressToken"] = value
    return Output(msg, mutations=[Mutation("big-id", "$.params._meta.progressToken", short(before), value)])


@operator("huge-string", weight=0.1, uses=("c2s", "s2c", "answer"))
def _huge_string(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A 256 KiB string at one site (not the id; over HTTP not what goes into headers either:
    header size limits are the HTTP server's business)."""
    in_headers = {"$.id"} if ctx.transport == "stdio" else {"$.id", "$.method", "$.params.name", "$.params.uri", "$.params._meta"}
    cands = [(p, c, k) for p, c, k in sites(msg) if p not in in_headers and not p.startswith("$.params._meta")]
    if not cands:
        return Output(msg)
    path, container, key = rng.choice(cands)
    before = container[key]
    container[key] = "A" * (256 * 1024)
    return Output(msg, mutations=[Mutation("huge-string", path, short(before), f"<string of {256 * 1024} chars>")])


@operator("deep-nesting", weight=0.1)
def _deep_nesting(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Params nested 64-4096 arrays deep."""
    depth = rng.choice([64, 512, 4096])
    msg_text = dumps({k: v for k, v in msg.items() if k != "params"}).decode("utf-8")
    nested = "[" * depth + "]" * depth
    text = msg_text[:-1] + ',"params":{"deep":' + nested + "}}"
    return Output(data=text.encode("utf-8"), mutations=[Mutation("deep-nesting", "$.params.deep", "<absent>", f"<{depth} nested arrays>")])


# -- syntax ------------------------------------------------------------------------------------------


@operator("invalid-utf8", uses=("c2s", "s2c", "answer"))
def _invalid_utf8(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Bytes that are not UTF-8 inside a string of the message."""
    data = dumps(msg)
    quotes = [i for i, b in enumerate(data) if b == 0x22]
    at = rng.choice(quotes) + 1 if quotes else len(data) // 2
    bad = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xe2\x82", b"\x80"])
    return Output(data=data[:at] + bad + data[at:], mutations=[Mutation("invalid-utf8", f"bytes[{at}]", "", bad.hex())])


@operator("truncate", weight=1.5, uses=("c2s", "s2c", "answer"))
def _truncate(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The message cut short at a random byte."""
    data = dumps(msg)
    at = rng.randrange(1, len(data))
    return Output(data=data[:at], mutations=[Mutation("truncate", f"bytes[{at}:]", short(data[at:]), "<cut>")])


@operator("garbage", weight=0.5, uses=("c2s", "s2c", "answer"))
def _garbage(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Text that is not JSON at all."""
    text = rng.choice([b"hello", b"{", b"}", b"{'jsonrpc': '2.0'}", b"NaN", b"[1,]", b'{"a":1,}', b"\x00\x01\x02", b"nul"])
    return Output(data=text, mutations=[Mutation("garbage", "$", "<message>", short(text))])


@operator("embedded-newline", weight=0.5, transports=("stdio",), uses=("c2s", "s2c", "answer"))
def _embedded_newline(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A raw newline between two tokens: on stdio the message becomes two lines, neither valid JSON."""
    data = dumps(msg)
    commas = [i for i, b in enumerate(data) if b in (0x2C, 0x3A)]  # after "," or ":" (outside strings, roughly)
    at = (rng.choice(commas) + 1) if commas else len(data) // 2
    return Output(data=data[:at] + b"\n" + data[at:], mutations=[Mutation("embedded-newline", f"bytes[{at}]", "", "\\n")])


@operator("not-an-object", weight=0.5, uses=("c2s", "s2c", "answer"))
def _not_an_object(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Valid JSON that is not an object: a number, a string, null, true."""
    after = rng.choice([1, "ping", None, True, 0.5])
    return Output(after, mutations=[Mutation("not-an-object", "$", "<message>", short(after))])


@operator("jsonrpc-version", uses=("c2s", "s2c", "answer"))
def _jsonrpc_version(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """"jsonrpc" other than "2.0", or missing."""
    after = rng.choice(["1.0", "2", 2.0, MISSING])
    before = msg.get("jsonrpc", MISSING)
    if after is MISSING:
        msg.pop("jsonrpc", None)
    else:
        msg["jsonrpc"] = after
    return Output(msg, mutations=[Mutation("jsonrpc-version", "$.jsonrpc", short(before), short(after))])


@operator("method-wrong-type", weight=0.5)
def _method_wrong_type(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """"method" a number, null, an array, or missing."""
    before = msg.get("method", MISSING)
    after = rng.choice([1, None, ["ping"], MISSING])
    if after is MISSING:
        msg.pop("method", None)
    else:
        msg["method"] = after
    return Output(msg, mutations=[Mutation("method-wrong-type", "$.method", short(before), short(after))])


@operator("params-wrong-type", weight=0.5)
def _params_wrong_type(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """"params" a string, a number, true or null."""
    before = msg.get("params", MISSING)
    after = rng.choice(["bar", 1, True, None])
    msg["params"] = after
    return Output(msg, mutations=[Mutation("params-wrong-type", "$.params", short(before), short(after))])


# -- methods and notifications ----------------------------------------------------------------------


@operator("unknown-method")
def _unknown_method(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A request or notification for a method nobody defines."""
    before = msg.get("method", MISSING)
    after = rng.choice(["mcp-conformance/fuzz-unknown", "tools/lisst", "Ping", "rpc.discover", "notifications/mcp-conformance/unknown"])
    if "id" in msg and after.startswith("notifications/"):
        after = "mcp-conformance/fuzz-unknown-" + after.rsplit("/", 1)[-1]
    msg["method"] = after
    return Output(msg, mutations=[Mutation("unknown-method", "$.method", short(before), after)])


@operator("as-notification")
def _as_notification(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The request without its id (a notification: must not be answered)."""
    before = msg.pop("id", MISSING)
    return Output(msg, mutations=[Mutation("as-notification", "$.id", short(before), "<absent>")])


@operator("cancel-random", weight=0.5)
def _cancel_random(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """notifications/cancelled for an id never sent (or of a finished request)."""
    rid = rng.choice([f"fz-never-{ctx.index}", 10**6 + ctx.index, 0, -1])
    out = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid, "reason": "fuzz"}}
    if isinstance(msg.get("params"), dict) and "_meta" in msg["params"]:
        out["params"]["_meta"] = msg["params"]["_meta"]
    return Output(out, mutations=[Mutation("cancel-random", "$.params.requestId", "<message>", short(rid))])


@operator("response-shaped", weight=0.3)
def _response_shaped(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A response (result or error) for an id the server never used: must not be answered."""
    rid = f"fz-resp-{ctx.index}"
    out = rng.choice([{"jsonrpc": "2.0", "id": rid, "result": {}},
                      {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "fuzz"}}])
    return Output(out, mutations=[Mutation("response-shaped", "$", "<message>", short(out))])


@operator("batch", weight=0.5)
def _batch(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A JSON-RPC batch: this message and up to two more corpus messages (every version)."""
    items = [msg]
    for k in range(rng.randrange(0, 3)):
        if not ctx.corpus:
            break
        seed = rng.choice(ctx.corpus)
        extra = json.loads(dumps(dict(seed.message)))
        if "id" in extra:
            extra["id"] = ctx.fresh_id(k + 1)
        items.append(extra)
    return Output(items, mutations=[Mutation("batch", "$", "<message>", f"<batch of {len(items)}>")])


@operator("empty-batch", weight=0.2)
def _empty_batch(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """An empty JSON array."""
    return Output([], mutations=[Mutation("empty-batch", "$", "<message>", "[]")])


# -- HTTP level ---------------------------------------------------------------------------------------


@operator("http-content-type", weight=0.3, transports=("streamable-http",), uses=("c2s",))
def _http_content_type(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """POST with a Content-Type other than application/json."""
    ct = rng.choice(["text/plain", "application/x-www-form-urlencoded", "application/json-seq"])
    return Output(msg, headers={"Content-Type": ct}, mutations=[Mutation("http-content-type", "header:Content-Type", "application/json", ct)])


@operator("http-session-id", weight=0.3, transports=("streamable-http",), uses=("c2s",))
def _http_session_id(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """POST with an Mcp-Session-Id the server never issued."""
    sid = rng.choice(["mcp-conformance-no-such-session", "0", "-"])
    return Output(msg, headers={"Mcp-Session-Id": sid}, mutations=[Mutation("http-session-id", "header:Mcp-Session-Id", "<issued>", sid)])


# -- answers: our response to a request of the client under test --------------------------------------
# (the message is the response the suite's server would have sent: {"jsonrpc", "id", "result" | "error"})


def _flip_id(value: Any, index: int) -> Any:
    """An id changed the way sloppy implementations change it: 7 -> "7", "7" -> 7, "s" -> "s-<n>"."""
    if isinstance(value, bool) or value is None or value is MISSING:
        return f"fz-answer-{index}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, str):
        return f"{value}-{index}"
    return f"fz-answer-{index}"


@operator("answer-wrong-id", uses=("answer",))
def _answer_wrong_id(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The answer carries another id (its JSON type flipped: 7 -> "7", "7" -> 7; a string changed)."""
    before = msg.get("id", MISSING)
    after = _flip_id(before, ctx.index) if rng.random() < 0.8 else 900_000_000 + ctx.index
    msg["id"] = after
    return Output(msg, mutations=[Mutation("answer-wrong-id", "$.id", short(before), short(after))])


@operator("answer-no-id", weight=0.5, uses=("answer",))
def _answer_no_id(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The answer without an id member."""
    before = msg.pop("id", MISSING)
    return Output(msg, mutations=[Mutation("answer-no-id", "$.id", short(before), "<absent>")])


@operator("answer-result-and-error", uses=("answer",))
def _answer_result_and_error(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The answer carries both "result" and "error"."""
    if "result" not in msg:
        msg["result"] = {}
        added, path = {}, "$.result"
    else:
        added = {"code": -32603, "message": "mcp-conformance fuzz: both"}
        msg["error"] = added
        path = "$.error"
    return Output(msg, mutations=[Mutation("answer-result-and-error", path, "<absent>", short(added), "result and error both")])


@operator("answer-neither", weight=0.5, uses=("answer",))
def _answer_neither(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """The answer carries neither "result" nor "error"."""
    before = {k: msg.pop(k) for k in ("result", "error") if k in msg}
    return Output(msg, mutations=[Mutation("answer-neither", "$", short(before), "<absent>", "no result, no error")])


@operator("answer-wrong-shape", weight=2.0, uses=("answer",))
def _answer_wrong_shape(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """A result of the wrong shape for the method: not an object, or one of its members dropped or of another type."""
    result = msg.get("result", MISSING)
    if not isinstance(result, dict) or not result or rng.random() < 0.25:
        after = rng.choice([[], "x", 1, None, True, [result] if result is not MISSING else [{}]])
        msg["result"] = after
        return Output(msg, mutations=[Mutation("answer-wrong-shape", "$.result", short(result), short(after),
                                               f"the {ctx.method or 'method'} result is not an object")])
    key = rng.choice(sorted(result))
    before = result[key]
    if rng.random() < 0.5:
        del result[key]
        return Output(msg, mutations=[Mutation("answer-wrong-shape", f"$.result.{key}", short(before), "<absent>",
                                               f"a member of the {ctx.method or 'method'} result dropped")])
    if isinstance(before, list) and before and rng.random() < 0.5:
        i = rng.randrange(len(before))
        elem = before[i]
        before[i] = _other_type(rng, elem)
        return Output(msg, mutations=[Mutation("answer-wrong-shape", f"$.result.{key}[{i}]", short(elem), short(before[i]))])
    after = _other_type(rng, before)
    result[key] = after
    return Output(msg, mutations=[Mutation("answer-wrong-shape", f"$.result.{key}", short(before), short(after))])


@operator("answer-unknown-fields", uses=("answer",))
def _answer_unknown_fields(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """Members nobody defines, in the envelope, the result or any object inside it."""
    objs = [("$", msg)] + [(p, c[k]) for p, c, k in sites(msg) if isinstance(c[k], dict)]
    muts = []
    for _ in range(rng.randrange(1, 4)):
        path, obj = rng.choice(objs)
        name = rng.choice(["x-mcp-conformance", "unknownField", "_meta_", "__proto__", "constructor", "$ref"])
        value = rng.choice([None, 1, "x", [], {}, {"nested": [1, 2]}])
        obj[name] = value
        muts.append(Mutation("answer-unknown-fields", f"{path}.{name}", "<absent>", short(value)))
    return Output(msg, mutations=muts)


@operator("answer-error-shape", uses=("answer",))
def _answer_error_shape(rng: random.Random, msg: dict, ctx: OpContext) -> Output:
    """An error answer with a broken error object: a string or fractional code, no message, not an object."""
    before = msg.pop("result", MISSING)
    error = rng.choice([
        {"code": "-32603", "message": "string code"}, {"code": -32603.5, "message": "fractional code"},
        {"code": -32603}, {"message": "no code"}, "an error", None, [], {"code": 2**63, "message": "huge code"},
        {"code": -32603, "message": 7}, {"code": -32603, "message": "x", "data": {"deep": [[[[[]]]]]}},
    ])
    msg["error"] = error
    return Output(msg, mutations=[Mutation("answer-error-shape", "$.error", short(before), short(error))])
