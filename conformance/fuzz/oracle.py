"""The fuzz oracle: pure functions over (a sent frame, what came back or a silence bounded by a
barrier).  Every judgment cites a requirement of the catalogue and is graded with
:func:`conformance.spec.outcomes.grade`, like any verdict.

Two steps, both pure:

* :func:`expect` reads the bytes we sent (strictly, with the same parser the suite uses) and says
  which answers the spec allows: an :class:`Expect` per message (a frame may hold several lines on
  stdio).  Where the spec allows several answers, all of them are listed (a Parse error with id null
  or without an id; an Invalid Request with id null or the readable id echoed; any error or a result
  for a schema-invalid call of a known method...).
* :func:`judge` compares one :class:`Expect` with the answers attributed to it (by exact id, or for
  an unreadable id by :func:`conformance.wire.rules.unreadable_answer`) once the frame is settled:
  answered, or silent after a barrier sent behind it was answered and a grace passed.

The readings are the scenarios' own (``conformance.wire.rules``: ``is_response``,
``unreadable_answer``, ``response_shape_problems``, ``not_a_message``; the schema oracle
``conformance.schema.validate``), never a second copy.

Direction: the expectations below are those of a *server* receiving client frames (``C2S``); a
client direction supplies its own :func:`expect` table (server-to-client requests must be answered
exactly once, responses to its requests judged by the client's requirements) and reuses
:func:`judge`, :class:`Finding` and the grading unchanged.
"""

from __future__ import annotations

import functools
import json
import re
from decimal import Decimal
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from conformance.spec.outcomes import Level, Outcome, grade
from conformance.schema.loader import load_schema
from conformance.schema.validate import validate
from conformance.spec import errors as _errors
from conformance.spec import methods as _methods
from conformance.spec.requirements import catalogue, get as get_requirement
from conformance.spec.versions import VERSIONS, spec
from conformance.wire.envelope import MISSING, Envelope, Kind, envelope_of, id_repr, lenient_value, parse_envelope
from conformance.wire.rules import JSONRPC_MEMBERS, empty_ping_result, is_response, loose_id, missing_required_param, not_a_message, response_shape_problems, unreadable_answer

__all__ = [
    "Expect",
    "Finding",
    "OracleContext",
    "expect",
    "judge",
    "id_key",
    "finding",
    "stdout_finding",
    "id_echo_requirement",
    "ANSWER",
    "UNREADABLE",
    "SILENCE",
    "ANY",
    "REJECTED",
    "unparseable",
    "parse_error_reply",
]

ANSWER = "answer"  # exactly one response with this id
UNREADABLE = "unreadable"  # one error with id null / absent (or the readable id echoed)
SILENCE = "silence"  # no response at all (a notification, a response we sent)
ANY = "any"  # anything (or nothing) is allowed; only survival is judged
REJECTED = "rejected"  # a batch where the version has none: one error (any code)

RESPONSE_REQUIRED = "jsonrpc.request.response-required"
SCHEMA_VALID = "basic.schema.messages-valid"


def id_key(value: Any) -> Any:
    """A hashable key for an id that keeps JSON types apart (``"7"`` vs ``7`` vs ``7.0`` vs ``true``);
    ``None`` for null and absent ids."""
    if value is None or value is MISSING:
        return None
    if isinstance(value, (dict, list)):
        return ("json", json.dumps(value, sort_keys=True))
    return (type(value).__name__, value)


@dataclass(frozen=True)
class OracleContext:
    version: str
    transport: str = "stdio"
    server_capabilities: dict | None = None
    #: whose duties are judged: "server" (the target is a server, we are its client) or "client"
    #: (the target is a client, we play its server: :mod:`conformance.fuzz.client_oracle`)
    role: str = "server"
    client_capabilities: dict | None = None  # role "client": what the client declared in initialize


@dataclass(frozen=True)
class Rules:
    """The requirement ids the judge cites, per role (the same sentence has a server and a client twin)."""

    response_required: str
    ping: str
    schema_valid: str
    answer_direction: str  # the direction of the answers judged (their schema)
    parse_error: str = "jsonrpc.error.parse-error"  # text that is not JSON: error -32700


def rules(ctx: OracleContext) -> Rules:
    if ctx.role == "client":
        return Rules("client.jsonrpc.response-required", "client.ping.respond", "client.basic.schema-valid", _methods.C2S,
                     "client.jsonrpc.parse-error")
    return Rules(RESPONSE_REQUIRED, "ping.response", SCHEMA_VALID, _methods.S2C)


def shape_requirement(rid: str, ctx: OracleContext) -> str:
    """The requirement a shape problem of :func:`conformance.wire.rules.response_shape_problems`
    (written for server answers) breaks in ``ctx``'s role: its client twin where the target is a
    client (result xor error: client.basic.result-xor-error up to 2025-06-18, the schema after it
    -- the catalogue note's reading; a broken error object: the schema)."""
    if ctx.role != "client":
        return rid
    twin = {"jsonrpc.response.result-xor-error": "client.basic.result-xor-error",
            "basic.error.code-integer": "client.basic.error-code-integer"}.get(rid)
    if twin is not None and ctx.version in get_requirement(twin).versions:
        return twin
    return "client.basic.schema-valid"


@dataclass(frozen=True)
class Lazy:
    """A value worked out only when needed (``fn(*args)``); equal when made alike."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]

    def __call__(self) -> Any:
        return self.fn(*self.args)


@dataclass
class Expect:
    kind: str
    key: Any = None  # id_key of the id answers must carry (ANSWER), or of a readable id (UNREADABLE)
    echo: Any = MISSING  # the id as sent, when readable
    codes: frozenset[int] | None = None  # acceptable error codes (None: any)
    result_ok: bool = True
    method: str | None = None  # a result is validated against this method's result definition
    requirement: str = RESPONSE_REQUIRED  # cited when the answer is wrong
    silence_requirement: str | None = RESPONSE_REQUIRED  # cited when nothing came (None: silence is fine)
    what: str = ""  # the frame, in words
    lenient_echo: Any = MISSING  # an id a lenient decoder could have read (invalid UTF-8): any answer with it is accepted
    max_answers: int = 1
    member_keys: tuple[Any, ...] = ()  # REJECTED: ids inside the batch (answers to them mean it was served)
    accepted: tuple[str, ...] = ()  # the answers the spec allows, in words (for reports)
    ping: bool = False  # a ping: the result must be empty (ping.response)
    # the client direction (conformance.fuzz.client_oracle): may the client end the session after
    # this message (a malformed message, or our answer to its request), and is it an invalid
    # cancellation (to be ignored: client.cancel.invalid-ignored)?
    quit_ok: bool = False
    cancel: bool = False
    asked: str | None = None  # the method of the request (whether it is schema-valid or not)
    # the violation class of a silence, where it is more telling than the requirement's default
    # (a finding signature is (requirement, class): each cause of silence gets its own reproducer)
    unanswered: str | Callable[[], str] = ""  # (a callable: worked out only when the silence happens)
    # the bytes as sent are not JSON, although the message as the peer must read it is (an SSE event
    # whose invalid UTF-8 the stream's decoding replaced): error -32700 with id null or without an
    # id, the reading of the bytes as they are, is accepted too (ANSWER, SILENCE)
    parse_error_ok: bool = False


@dataclass
class Finding:
    requirement: str
    problem: str  # violation class: MissingResponse, WrongErrorCode, ...
    message: str
    expected: Any = None
    actual: Any = None
    json_path: str | None = None

    @property
    def signature(self) -> tuple[str, str]:
        return (self.requirement, self.problem)

    def level(self) -> Level:
        return get_requirement(self.requirement).level

    def outcome(self, *, strict: bool = False) -> Outcome:
        return grade(self.level(), True, strict=strict)

    def to_json(self, version: str | None = None) -> dict[str, Any]:
        req = get_requirement(self.requirement)
        url = req.url_for(version) if hasattr(req, "url_for") else req.url
        return {
            "requirement": self.requirement, "level": req.level.value, "url": url, "quote": req.quote,
            "problem": self.problem, "message": self.message, "expected": self.expected, "actual": self.actual,
            "json_path": self.json_path,
        }


def finding(requirement: str, problem: str, message: str, **kw: Any) -> Finding:
    get_requirement(requirement)  # an unknown id is our bug: fail loudly
    return Finding(requirement, problem, message, **kw)


def id_echo_requirement(version: str, is_error: bool, role: str = "server") -> str:
    """``basic.response.id-echo``, or its result/error halves where the version splits it (the
    ``client.basic.*`` twins where the target is a client)."""
    base = "client.basic." if role == "client" else "basic.response."
    req = get_requirement(base + "response-id-echo" if role == "client" else base + "id-echo")
    if version in req.versions:
        return req.id
    return base + ("error-id-echo" if is_error else "result-id-echo")


def known_method(method: str) -> bool:
    return any(m.name == method for m in _methods.METHODS)


_TOP_ID = re.compile(rb'\{\s*"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*,')


def lenient_id_of(raw: bytes) -> Any:
    value = lenient_value(raw)
    if value is MISSING:
        m = _TOP_ID.match(raw)  # too deep for the parser: the id is usually written first
        return json.loads(m.group(1)) if m else MISSING
    if isinstance(value, dict) and "method" in value:
        return value.get("id", MISSING)
    return MISSING


# JSON text that is not JSON but that common parsers accept (RFC 8259 section 9: "A JSON parser MAY
# accept non-JSON forms or extensions."): NaN / Infinity / -Infinity (Python's json, JSON5), comments,
# trailing commas, single-quoted strings (JSON5, Jackson's ALLOW_* features, json5 / hjson readers)
_NON_JSON_FORMS = re.compile(rb"NaN|Infinity|/\*|//|'|,\s*[}\]]")
_LENIENT_TOKEN = re.compile(r"""("(?:[^"\\]|\\.)*")|('(?:[^'\\]|\\.)*')|(/\*.*?\*/|//[^\n]*)|(,)(?=\s*[}\]])|(-?Infinity|NaN)""", re.S)


def _lenient_text(match: "re.Match[str]") -> str:
    dq, sq, comment, comma, const = match.groups()
    if dq is not None:
        return dq
    if sq is not None:  # 'x' -> "x": unescape \' and escape "
        return json.dumps(sq[1:-1].replace("\\'", "'").replace('\\"', '"'), ensure_ascii=False)
    if comment is not None or comma is not None:
        return ""
    return "null"  # the value does not matter: only the id is wanted


def lenient_reading(raw: bytes) -> Any:
    """``raw`` as a lenient parser reads it (NaN, Infinity, comments, trailing commas, single
    quotes; invalid UTF-8 replaced), or MISSING: a reading for telling which request a lenient
    server read (its id), never for judging the message."""
    if not raw.rstrip(b" \t\r\n").endswith((b"}", b"]")) or not _NON_JSON_FORMS.search(raw):
        return MISSING  # cut short (the commonest text that is not JSON), or no form a lenient parser reads
    try:
        return json.loads(_LENIENT_TOKEN.sub(_lenient_text, raw.decode("utf-8", "replace")))
    except (ValueError, RecursionError):
        return MISSING


def lenient_request_id(raw: bytes, env: Envelope) -> Any:
    """The id of the request a lenient reader finds in ``raw`` (not valid JSON): invalid UTF-8
    replaced, or a non-JSON form common parsers accept; MISSING when there is none."""
    if any("UTF-8" in p for p in env.problems):
        return lenient_id_of(raw)
    value = lenient_reading(raw)
    if isinstance(value, dict) and "method" in value:
        return value.get("id", MISSING)
    return MISSING


def id_readings(rid: Any) -> tuple[Any, ...]:
    """The keys of the ids a server may answer a request with id ``rid`` with, besides ``rid``
    itself: for an integer beyond +-(2**53 - 1) the double it reads as (RFC 8259 section 6: only
    integers in [-(2**53)+1, (2**53)-1] "are interoperable in the sense that implementations will
    agree exactly on their numeric values"), written as an integer (exactly, or as the shortest
    decimal that reads back as that double: JavaScript's 18446744073709552000 for 2**64) or as a number
    with a fraction or an exponent."""
    if not isinstance(rid, int) or isinstance(rid, bool) or abs(rid) <= 2**53 - 1:
        return ()
    try:
        f = float(rid)
    except OverflowError:
        return ()
    keys = {id_key(int(f)), id_key(int(Decimal(repr(f)))), id_key(f)}
    keys.discard(id_key(rid))
    return tuple(sorted(keys, key=repr))


def _plain_id(value: Any) -> Any:
    """The id of a message whose answer anything may be, when every reader reads the same one (a
    string, or an integer within the interoperable range): its answers are then attributed to it
    by that id (and their shape judged) rather than left unattributed."""
    rid = value.get("id", MISSING) if isinstance(value, dict) else MISSING
    if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) <= 2**53):
        return rid
    return MISSING


def readable_id(value: Any) -> Any:
    """The id an Invalid Request carries, if a server could read one (any JSON value but absent)."""
    if isinstance(value, dict):
        return value.get("id", MISSING)
    return MISSING


def expect(raw: bytes, ctx: OracleContext, *, headers: dict[str, str] | None = None, value: Any = None) -> list[Expect]:
    """What may answer the frame ``raw`` (exact bytes we sent).  On stdio a frame with newlines is
    several messages; over HTTP it is one body.  A POST with mutated HTTP headers (a wrong
    Content-Type, a session id never issued) is no valid MCP exchange: any answer, or a refusal,
    is accepted and only the server's survival is judged.  ``value``: what ``raw`` is the strict
    encoding of (``Frame.value``), so that it need not be parsed back -- the same expectations."""
    if headers:
        return [Expect(ANY, silence_requirement=None, what=f"a POST with mutated headers {sorted(headers)}",
                       accepted=("any answer or an HTTP refusal",))]
    if value is not None and raw.count(b"[") + raw.count(b"{") <= DEEP:
        # one line (the strict encoding escapes newlines), no duplicate name, nesting no parser refuses
        return _expect_env(envelope_of(raw, value), raw, ctx, in_batch=False)
    return per_line(raw, ctx, expect_message)


def per_line(raw: bytes, ctx: OracleContext, one: Any) -> list[Expect]:
    """``one(message, ctx)`` for each message of the frame: on stdio a frame with newlines is
    several messages (the same id twice in one frame is one expectation, answered once or twice:
    a peer may refuse a reused id or serve both); elsewhere the frame is one message."""
    if ctx.transport == "stdio" and b"\n" in raw:
        out: list[Expect] = []
        for line in raw.split(b"\n"):
            for exp in one(line, ctx):
                twin = next((o for o in out if exp.key is not None and o.key == exp.key), None)
                if twin is not None:
                    twin.max_answers += 1
                    twin.silence_requirement = twin.silence_requirement or exp.silence_requirement
                    continue
                out.append(exp)
        return out
    return one(raw, ctx)


def expect_message(raw: bytes, ctx: OracleContext) -> list[Expect]:
    if not raw.strip(b" \t\r"):
        return [Expect(ANY, what="a blank line", silence_requirement=None, accepted=("anything",))]
    env = parse_envelope(raw)
    if too_deep(env, raw):
        # RFC 8259 section 9: "An implementation may set limits on the maximum depth of nesting." A
        # server may read it, or answer an error (a Parse error included); a request still needs an answer
        rid = lenient_id_of(raw)
        has_id = rid is not MISSING
        return [Expect(ANY, key=id_key(rid) if has_id and not isinstance(rid, bool) else None, echo=rid,
                       silence_requirement=RESPONSE_REQUIRED if has_id else None,
                       what="a message nested deeper than parsers must support",
                       accepted=("any answer (an error, a Parse error included, or a result)",) + (() if has_id else ("no answer",)))]
    return _expect_env(env, raw, ctx, in_batch=False)


def _expect_env(env: Envelope, raw: bytes, ctx: OracleContext, *, in_batch: bool) -> list[Expect]:
    version = ctx.version
    if env.kind is Kind.PARSE_ERROR:
        return unparseable(env, raw, ctx)
    if env.kind is Kind.BATCH:
        return _expect_batch(env, raw, ctx)
    if _numberish(raw) and (beyond_interoperable(env.value) or is_big_id(env.value)):
        # RFC 8259 section 6: numbers outside IEEE 754 double range / precision "may" not be handled the
        # same everywhere; an error (even a Parse error), a result or a refusal are all acceptable --
        # but not silence after a request whose id can be read ("the Server MUST reply with a Response")
        what, accepted, cls = number_case(env.value)
        return [implementation_defined(env.value, ctx, what, accepted, Lazy(likeliest_cause, (env.value, version, cls)),
                                        malformed=malformed_problems(env))]
    dups = [p for p in env.problems if p.startswith("duplicate key")]
    if any(p[len("duplicate key "):].strip("'\"") in JSONRPC_MEMBERS for p in dups):
        # which of two "id"/"method"/... members a server reads is implementation-defined (RFC 8259 4)
        twice = {p[len("duplicate key "):].strip("'\"") for p in dups}
        # the duplicate is the cause of a silence only where the message, as read, is a valid one
        return [implementation_defined(env.value, ctx, "a message with a duplicate JSON-RPC member",
                                        "anything: RFC 8259 leaves duplicate names to the implementation",
                                        Lazy(duplicate_cause, (env.value, version)),
                                        ids=top_ids(raw) if "id" in twice else None, malformed=malformed_problems(env))]
    bad = [p for p in env.problems if not p.startswith("duplicate key")]
    if env.kind is Kind.INVALID or (env.kind in (Kind.REQUEST, Kind.NOTIFICATION) and bad):
        value = env.value
        if isinstance(value, dict) and "method" not in value and ("result" in value or "error" in value):
            return [Expect(ANY, silence_requirement=None, what="a malformed response", accepted=("anything",))]
        echo = readable_id(value)
        has_id = echo is not MISSING
        params_only = has_id and bad == ['"params" must be an object or an array']
        # only "params" is wrong (null, a string...): Invalid Request, Invalid params, or -- for a
        # method the server does not have -- Method not found are all honest answers
        codes = {_errors.INVALID_REQUEST} | ({_errors.INVALID_PARAMS, _errors.METHOD_NOT_FOUND} if params_only else set())
        if ctx.transport != "stdio" and spec(version).request_headers:
            # the Mcp-Method / Mcp-Name headers are derived from the body: a body without a usable
            # method cannot match them, so HeaderMismatch is as right an answer as Invalid Request
            codes |= {c for c, name in spec(version).error_codes.items() if name == "HeaderMismatch"}
        what = "an invalid Request object (" + "; ".join(bad) + ")"
        return [Expect(
            # a boolean id cannot be unique in flight: attributed by echo among the unkeyed instead
            UNREADABLE, key=None if isinstance(echo, bool) else id_key(echo), echo=echo, codes=frozenset(codes), result_ok=False,
            requirement="jsonrpc.error.invalid-request",
            # without an id a server may have taken it for a (broken) notification: silence accepted
            silence_requirement="jsonrpc.error.invalid-request" if has_id else None,
            what=what,
            accepted=(f"error {sorted(codes)} with id null, without an id, or with the id echoed",)
            + (() if has_id else ("no answer (no id: it may have been read as a notification)",)),
        )]
    if env.kind is Kind.NOTIFICATION:
        return [Expect(SILENCE, requirement="jsonrpc.notification.no-reply", silence_requirement=None,
                       what=f"the notification {env.method!r}", accepted=("no response",))]
    if env.kind in (Kind.RESULT, Kind.ERROR):
        return [Expect(ANY, silence_requirement=None, what="a response to nothing we were asked", accepted=("anything",))]
    # a request with a valid id
    method = env.method or ""
    key = id_key(env.id)
    m = _methods.lookup(method, _methods.C2S, version)
    if m is None or m.kind != _methods.REQUEST:
        if known_method(method):
            return [Expect(ANSWER, key=key, echo=env.id, what=f"a request for {method!r}, not a client request of {version}",
                           accepted=("any error", "a result"))]
        return [Expect(ANSWER, key=key, echo=env.id, codes=frozenset({_errors.METHOD_NOT_FOUND}), result_ok=False,
                       requirement="jsonrpc.error.method-not-found", what=f"a request for the unknown method {method!r}",
                       accepted=("error -32601 with the id echoed",))]
    missing = missing_required_param(method, env.params)
    caps = ctx.server_capabilities or {}
    if missing is not None and isinstance(caps.get(missing[1]), dict) and _valid_with(env.value, missing[0], version):
        # the invalid_params scenario's reading: a declared method without the member it needs
        return [Expect(ANSWER, key=key, echo=env.id, codes=frozenset({_errors.INVALID_PARAMS}), result_ok=False,
                       requirement="jsonrpc.error.invalid-params", what=f"a {method!r} request without the required {missing[0]!r}",
                       accepted=("error -32602 with the id echoed",))]
    valid = _schema_ok(env.value, version)
    extra = unknown_members(env.value, version, m.request_def)
    if method == "ping" and valid:
        return [Expect(ANSWER, key=key, echo=env.id, method=method, codes=frozenset(), requirement="ping.response",
                       what="a ping" + members_text(extra), accepted=("an empty result (only _meta may appear)",), ping=True,
                       unanswered="UnknownMemberUnanswered" if extra else "")]
    return [Expect(ANSWER, key=key, echo=env.id, method=method if valid else None,
                   what=f"a {'schema-valid' if valid else 'schema-invalid'} {method!r} request" + members_text(extra),
                   accepted=("a result valid for the method", "an error (any code)")
                   if valid else ("an error (-32602 or any other code)", "a result (accepting odd input is no MUST violation)"),
                   unanswered="UnknownMemberUnanswered" if extra else "")]


def members_text(extra: list[str]) -> str:
    return f" with {'a member' if len(extra) == 1 else 'members'} nobody defines ({', '.join(extra[:3])})" if extra else ""


@functools.lru_cache(maxsize=None)
def _defined_members(version: str, definition: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The members the schema of ``version`` defines for the message ``definition`` and for its
    params (None: the schema cannot tell)."""
    try:
        doc = load_schema(version)
    except Exception:  # noqa: BLE001 - no schema: no reading
        return None
    defs = doc.get("$defs") or doc.get("definitions") or {}

    def resolve(node: Any) -> Any:
        for _ in range(16):
            if not (isinstance(node, dict) and "$ref" in node):
                break
            node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        return node

    def names(node: Any) -> set[str]:
        node = resolve(node)
        if not isinstance(node, dict):
            return set()
        out = set(node.get("properties") or {})
        for branch in (*node.get("allOf", ()), *node.get("anyOf", ()), *node.get("oneOf", ())):
            out |= names(branch)
        return out

    node = resolve(defs.get(definition))
    if not isinstance(node, dict):
        return None
    top = names(node)
    params = resolve((node.get("properties") or {}).get("params", {}))
    return frozenset(top | set(JSONRPC_MEMBERS)), frozenset(names(params) | {"_meta"})  # every version's requests take _meta


def unknown_members(value: Any, version: str, definition: str) -> list[str]:
    """Paths of the members of a request nobody defines: in the envelope, or in its params (the
    schema's own members; ``_meta`` and what lies inside open objects are anybody's)."""
    known = _defined_members(version, definition)
    if known is None or not isinstance(value, dict):
        return []
    top, params = known
    out = [f"$.{k}" for k in value if k not in top] if value.keys() - top else []  # (in order, when any)
    p = value.get("params")
    if isinstance(p, dict) and params and p.keys() - params:
        out += [f"$.params.{k}" for k in p if k not in params]
    return out


def is_big_id(value: Any) -> bool:
    rid = value.get("id") if isinstance(value, dict) else None
    return isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) > 2**53 - 1


def top_ids(raw: bytes) -> list[Any]:
    """Every value of the top-level "id" member of ``raw`` (a name given twice: either may be read)."""
    found: list[Any] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found[:] = [v for k, v in items if k == "id"]  # the last object closed is the top level
        return dict(items)

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    return found


def number_case(value: Any) -> tuple[str, str, str]:
    """(what, accepted, silence class) of a message with a number beyond the interoperable range."""
    if is_big_id(value):
        return ("a request whose integer id is beyond +-(2^53 - 1)",
                "any answer (the id echoed as sent or as a double reads it, or null): RFC 8259 leaves such numbers to the implementation",
                "LargeIdUnanswered")
    return ("a message with a number outside the interoperable range",
            "any answer: RFC 8259 leaves such numbers to the implementation", "OutOfRangeNumberUnanswered")


def likeliest_cause(value: Any, version: str, cls: str, direction: str = _methods.C2S) -> str:
    """``cls``, unless the message also has a member nobody defines: that is then named the cause."""
    m = _methods.lookup(value.get("method") if isinstance(value.get("method"), str) else "", direction, version)
    return "UnknownMemberUnanswered" if m is not None and unknown_members(value, version, m.request_def) else cls


def duplicate_cause(value: Any, version: str, direction: str = _methods.C2S) -> str:
    """The class of a silence after a duplicate name: the duplicate's only where the message as
    read is schema-valid and has no member nobody defines (else it is the silence of any request,
    or of one with such a member)."""
    m = _methods.lookup(value.get("method") if isinstance(value.get("method"), str) else "", direction, version)
    if m is not None and unknown_members(value, version, m.request_def):
        return "UnknownMemberUnanswered"
    try:
        valid = not validate(value, version, direction)
    except Exception:  # noqa: BLE001
        valid = False
    return "DuplicateMemberUnanswered" if valid else ""


def malformed_problems(env: Envelope) -> list[str]:
    """What makes ``env`` (as read, the last of duplicate names winning) an invalid Request besides
    what RFC 8259 leaves to the implementation."""
    bad = [p for p in env.problems if not p.startswith("duplicate key")]
    if env.kind in (Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR) and not bad:
        return []
    return bad or ["not a Request object"]


def implementation_defined(value: Any, ctx: OracleContext, what: str, accepted: str, unanswered: str | Callable[[], str] = "", *,
                            ids: list[Any] | None = None, malformed: list[str] | None = None) -> Expect:
    """A message RFC 8259 leaves to the implementation (a number beyond the interoperable range, a
    name given twice): every answer is accepted.  A request whose id can be read -- the id as sent,
    as a double reads it, or (a duplicate "id") either of its values -- must still be answered:
    silence is a finding (the server's, or in the client direction the client's, response duty)."""
    request = isinstance(value, dict) and "method" in value and not ("result" in value or "error" in value)
    if ids is None:
        ids = [value["id"]] if isinstance(value, dict) and "id" in value else []
    usable = [i for i in ids if i is not None and not isinstance(i, bool)]
    keys: list[Any] = []
    for i in usable:
        for k in (id_key(i), *id_readings(i)):
            if k not in keys:
                keys.append(k)
    rid = usable[0] if len(ids) == 1 and usable else MISSING
    # the one id every reader reads the same keys the answer; otherwise its readings route it
    key = id_key(rid) if rid is not MISSING and not id_readings(rid) else None
    required = rules(ctx).response_required if request and ids else None
    if malformed and required:
        what += " that is also an invalid Request object (" + "; ".join(malformed) + ")"
        # its own rule (-32600) owns the silence; a client owes nothing for an invalid message
        required, unanswered = ("jsonrpc.error.invalid-request", "NoInvalidRequestResponse") if ctx.role != "client" else (None, "")
    return Expect(ANY, key=key, echo=rid, member_keys=tuple(k for k in keys if k != key), silence_requirement=required,
                  unanswered=unanswered,
                  what=what, accepted=(accepted + (", but a response: the request has an id" if required else ""),)
                  + (() if required else ("no answer",)))


def _valid_with(value: Any, member: str, version: str) -> bool:
    """The request would be schema-valid with ``member`` present: the member is its only defect."""
    fixed = dict(value)
    fixed["params"] = {**value["params"], member: "mcp-conformance://x" if member == "uri" else "x"}
    return _schema_ok(fixed, version)


DEEP = 64  # nesting deeper than this is left to the implementation's limits


# what a number beyond the interoperable range needs in the text: 16 digits in a row, an exponent, or
# (a batch member re-serialised) Infinity
# (strings match too: only a quick way to skip the walk of the value where it cannot find one)
_NUMBERISH = re.compile(rb"[0-9]{16}|[0-9][eE]|Infinity")  # what _numberish finds, as a regular expression
# digits -> "0", e/E -> "e", every other byte -> " ": a number beyond the interoperable range needs
# 16 digits in a row or an exponent, which are then plain substrings (memmem, not a regex scan:
# the regex takes 50-75 ms per MB, and the huge-string operators send megabytes)
_NUM_TABLE = bytes(48 if 48 <= i <= 57 else 101 if i in (69, 101) else 32 for i in range(256))


def _numberish(raw: bytes) -> bool:
    """Whether ``raw`` may hold a number beyond the interoperable range (``_NUMBERISH`` matches)."""
    if b"Infinity" in raw:
        return True
    mapped = raw.translate(_NUM_TABLE)
    return b"0000000000000000" in mapped or b"0e" in mapped


def too_deep(env: Envelope, raw: bytes = b"") -> bool:
    if any("recursion" in p for p in env.problems):
        return True
    if raw and raw.count(b"[") + raw.count(b"{") <= DEEP:
        return False  # each level opens one: the walk cannot find more
    return env.value is not MISSING and _depth(env.value, 0) > DEEP


def _depth(value: Any, d: int) -> int:
    if d > DEEP:
        return d
    if isinstance(value, dict):
        return max((_depth(v, d + 1) for v in value.values()), default=d + 1)
    if isinstance(value, list):
        return max((_depth(v, d + 1) for v in value), default=d + 1)
    return d


def beyond_interoperable(value: Any, depth: int = 0) -> bool:
    """A number JSON parsers may not all read alike: infinite as a double (1e400), or an integer
    beyond +-(2**53 - 1) -- ids excepted, which are judged as ids (echoed verbatim)."""
    if depth > 64:
        return False
    if isinstance(value, float):
        return value in (float("inf"), float("-inf"))
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > 2**53 - 1
    if isinstance(value, dict):
        return any(beyond_interoperable(v, depth + 1) for k, v in value.items() if not (depth == 0 and k == "id"))
    if isinstance(value, list):
        return any(beyond_interoperable(v, depth + 1) for v in value)
    return False


def _schema_ok(value: Any, version: str) -> bool:
    try:
        return not validate(value, version, _methods.C2S)
    except Exception:  # noqa: BLE001 - a schema that cannot be loaded: judge leniently
        return False


def unparseable(env: Envelope, raw: bytes, ctx: OracleContext) -> list[Expect]:
    """What may answer ``raw``, text that is not JSON (``env`` its parse): error -32700 (the
    role's parse-error requirement), or -- from a lenient parser -- an answer to what it read."""
    parse_error = rules(ctx).parse_error
    # not JSON, so -32700; but "A JSON parser MAY accept non-JSON forms or extensions" (RFC 8259
    # section 9): a server whose decoder reads invalid UTF-8 leniently, or NaN, comments, trailing
    # commas, single quotes, may answer the request it read -- any answer with that id is accepted.
    # Silence never is: either way a response is due
    utf8 = any("UTF-8" in p for p in env.problems)
    reading = MISSING if utf8 else lenient_reading(raw)
    lenient = lenient_id_of(raw) if utf8 else (reading.get("id", MISSING) if isinstance(reading, dict) and "method" in reading else MISSING)
    lkey = id_key(lenient) if lenient is not MISSING and not isinstance(lenient, bool) else None
    if not utf8 and lenient is MISSING and isinstance(reading, dict) and "method" in reading:
        # a notification to a lenient parser: it must not answer it; a strict one answers -32700
        return [Expect(ANY, silence_requirement=None, what="a notification that is not valid JSON (a form common parsers accept)",
                       accepted=("error -32700 with id null or without an id", "no answer (a lenient parser reads a notification)"))]
    return [Expect(
        UNREADABLE, codes=frozenset({_errors.PARSE_ERROR}), result_ok=False,
        requirement=parse_error, silence_requirement=parse_error,
        what="a message that is not valid JSON" + (" (invalid UTF-8)" if utf8 and lenient is not MISSING else
                                                    " (a request to a lenient parser)" if lenient is not MISSING else ""),
        lenient_echo=lenient, member_keys=(lkey, *id_readings(lenient)) if lkey is not None else (),
        unanswered="LenientJsonRequestUnanswered" if lenient is not MISSING and not utf8 else "",
        accepted=("error -32700 with id null", "error -32700 without an id")
        + (("any answer with the id a lenient " + ("UTF-8 decoder" if utf8 else "JSON parser") + " reads",)
           if lenient is not MISSING else ()),
    )]


def _expect_batch(env: Envelope, raw: bytes, ctx: OracleContext) -> list[Expect]:
    version = ctx.version
    if spec(version).batching:
        if not env.items:
            return [Expect(UNREADABLE, codes=frozenset({_errors.INVALID_REQUEST}), result_ok=False,
                           requirement="jsonrpc.error.invalid-request", silence_requirement="jsonrpc.error.invalid-request",
                           what="an empty batch", accepted=("error -32600 with id null",))]
        out: list[Expect] = []
        for item in env.items:
            for exp in _expect_env(item, item.raw, ctx, in_batch=True):
                if exp.kind == ANSWER and exp.silence_requirement == RESPONSE_REQUIRED:
                    exp.silence_requirement = "batching.receive"  # 'MUST support receiving JSON-RPC batches'
                out.append(exp)
        # a refusal of the whole batch (an error without a usable id) is taken here; its requests
        # then count as unanswered under batching.receive
        out.append(Expect(ANY, silence_requirement=None, what=f"a JSON-RPC batch of {len(env.items)}", accepted=("anything",)))
        return out
    keys = tuple(id_key(i.id) for i in env.items if i.kind is Kind.REQUEST and id_key(i.id) is not None)
    if version == VERSIONS[0]:  # 2024-11-05 says nothing about batches
        return [Expect(ANY, silence_requirement=None, member_keys=keys, what="a batch (2024-11-05 says nothing about batches)",
                       accepted=("anything",))]
    req = "batching.rejected-stateless" if spec(version).stateless else "batching.rejected"
    return [Expect(REJECTED, requirement=req, silence_requirement=req, member_keys=keys,
                   what=f"a JSON-RPC batch of {len(env.items)} ({version} has no batching)",
                   accepted=("one error response (any code)", "an HTTP 4xx"))]


# -- judging -------------------------------------------------------------------------------------------


def _answer_text(env: Envelope) -> str:
    if env.kind is Kind.ERROR:
        return f"error {id_repr(env.error_code)} (id {id_repr(env.id)})"
    return f"{env.kind.value} (id {id_repr(env.id)})"


def judge(exp: Expect, answers: list[Envelope], ctx: OracleContext, *, refused: int | None = None,
          barrier: str = "ping", grace: float = 0.0) -> list[Finding]:
    """The findings for one settled expectation: ``answers`` attributed to it (in arrival order),
    ``refused`` the HTTP 4xx/5xx status its POST got (if any)."""
    out: list[Finding] = []
    r = rules(ctx)
    for env in answers:
        out.extend(shape_findings(env, ctx))
    if exp.parse_error_ok and exp.kind in (ANSWER, SILENCE):
        # a Parse error, the reading of the bytes as sent, is one of the answers allowed
        read_as_sent = [a for a in answers if parse_error_reply(a)]
        if read_as_sent:
            answers = [a for a in answers if not parse_error_reply(a)]
            if not answers:
                return out
    if exp.kind == ANY:
        if not answers and refused is None and exp.silence_requirement is not None:
            out.append(finding(exp.silence_requirement, _unanswered(exp) or "MissingResponse",
                               f"no response to {exp.what} (nor within {grace:g} s after the answer to the {barrier} sent after it)",
                               expected=" or ".join(exp.accepted), actual="no response"))
        return out
    if exp.kind == SILENCE:
        if answers:
            out.append(finding(exp.requirement, "NotificationAnswered",
                               f"{exp.what} was answered: {', '.join(_answer_text(a) for a in answers[:3])}",
                               expected="no response", actual=[a.summary() for a in answers[:3]]))
        return out
    if not answers:
        if refused is not None or exp.silence_requirement is None:
            return out
        cls = _unanswered(exp) or {"jsonrpc.error.parse-error": "NoParseErrorResponse", "client.jsonrpc.parse-error": "NoParseErrorResponse", "jsonrpc.error.invalid-request": "NoInvalidRequestResponse",
               "client.ping.respond": "PingNotAnswered", "client.basic.batch-receive": "BatchUnanswered",
               "client.jsonrpc.method-not-found": "UnknownMethodNotAnswered"}.get(
            exp.silence_requirement, "BatchUnanswered" if exp.kind == REJECTED else "MissingResponse")
        out.append(finding(exp.silence_requirement, cls,
                           f"no response to {exp.what} (nor within {grace:g} s after the answer to the {barrier} sent after it)",
                           expected=" or ".join(exp.accepted) or "a response", actual="no response"))
        return out
    if exp.kind == REJECTED:
        served = [a for a in answers if a.kind is Kind.RESULT]
        if served:
            out.append(finding(exp.requirement, "BatchServed", f"{exp.what} was served ({len(served)} result(s)); an error response is expected",
                               expected=" or ".join(exp.accepted), actual=[a.summary() for a in served[:3]]))
        return out
    if len(answers) > exp.max_answers:
        out.append(finding(r.response_required, "DuplicateResponse",
                           f"{exp.what} was answered {len(answers)} times: {', '.join(_answer_text(a) for a in answers[:3])}",
                           expected="exactly one response", actual=[a.summary() for a in answers[:3]]))
    env = answers[0]
    if exp.max_answers > 1 and env.kind is Kind.ERROR:
        # the same id twice in flight: an error may be the refusal of the reused id, sent before
        # the first request's own answer -- the result, if one came, is the answer to judge
        env = next((a for a in answers if a.kind is Kind.RESULT), env)
    if exp.lenient_echo is not MISSING and env.id is not MISSING and env.id is not None and id_key(env.id) == id_key(exp.lenient_echo):
        return out  # a lenient decode answered as the request it read: accepted
    is_error = env.kind is Kind.ERROR
    if is_error:
        code = env.error_code
        if exp.ping:
            out.append(finding(r.ping, "PingRejected", f"a ping was answered with error {id_repr(code)}",
                               expected={"result": {}}, actual=env.error, json_path="$.error"))
        elif exp.codes is not None and code not in exp.codes and isinstance(code, int) and not isinstance(code, bool):
            out.append(finding(exp.requirement, "WrongErrorCode",
                               f"{exp.what} must be answered with error {' or '.join(str(c) for c in sorted(exp.codes))}, got error {id_repr(code)}",
                               expected={"error": {"code": sorted(exp.codes)}}, actual=env.error, json_path="$.error.code"))
        if exp.kind == UNREADABLE and exp.requirement == "jsonrpc.error.parse-error" and env.id is not None and env.id is not MISSING:
            out.append(finding("jsonrpc.response.null-id-when-unreadable", "NonNullIdForUnreadableRequest",
                               f"the id of an unreadable request cannot be detected, so the response id must be null, got {id_repr(env.id)}",
                               expected=None, actual=env.id, json_path="$.id"))
    elif env.kind is Kind.RESULT:
        if not exp.result_ok:
            problem = {"jsonrpc.error.method-not-found": "UnknownMethodAccepted", "jsonrpc.error.parse-error": "InvalidJsonAccepted",
                       "client.jsonrpc.parse-error": "InvalidJsonAccepted",
                       "jsonrpc.error.invalid-request": "InvalidRequestAccepted",
                       "client.jsonrpc.method-not-found": "UnknownMethodAccepted"}.get(exp.requirement, "Accepted")
            out.append(finding(exp.requirement, problem, f"{exp.what} was answered with a result; expected {' or '.join(exp.accepted)}",
                               expected=" or ".join(exp.accepted), actual=env.value if _small(env.value) else env.summary()))
        elif exp.ping and not empty_ping_result(env.result):
            out.append(finding(r.ping, "NonEmptyPingResult", "the ping result must be an empty object (only _meta may appear)",
                               expected={}, actual=env.result if _small(env.result) else "<large>", json_path="$.result"))
        elif exp.method is not None:
            out.extend(result_findings(env, exp.method, ctx.version, ctx))
    return out


def _unanswered(exp: Expect) -> str:
    return exp.unanswered() if callable(exp.unanswered) else exp.unanswered


def _small(value: Any) -> bool:
    try:
        return len(json.dumps(value)) < 2000
    except (TypeError, ValueError):
        return False


def shape_findings(env: Envelope, ctx: OracleContext | None = None) -> list[Finding]:
    """Result xor error, the error object, an integer code (the scenarios' response_shapes reading)."""
    value = env.value
    out = []
    for req, problem in response_shape_problems(value, ctx.version if ctx is not None else None):
        cls = {"jsonrpc.response.result-xor-error": "ResultXorError", "basic.response.result-field": "ResultXorError",
               "jsonrpc.error.object": "MalformedErrorObject", "basic.error.code-message": "MalformedErrorObject",
               "basic.response.error-field": "MalformedErrorObject"}.get(req, "NonIntegerErrorCode")
        rid = shape_requirement(req, ctx) if ctx is not None else req
        out.append(finding(rid, cls, problem, actual=sorted(value) if isinstance(value, dict) else value))
    return out


def result_findings(env: Envelope, method: str, version: str, ctx: OracleContext | None = None) -> list[Finding]:
    """A result checked against the schema of ``method``'s result (basic.schema.messages-valid;
    client.basic.schema-valid for a client's answers)."""
    r = rules(ctx) if ctx is not None else rules(OracleContext(version))
    try:
        problems = validate(env.value, version, r.answer_direction, answering=method)
    except Exception as exc:  # noqa: BLE001
        return [finding(r.schema_valid, "SchemaUnavailable", f"the schema could not check the answer: {exc}")]
    if not problems:
        return []
    first = problems[0]
    return [finding(r.schema_valid, "SchemaMismatch",
                    f"the answer to {method!r} does not match the {version} schema: {first.message}"
                    + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                    expected=getattr(first, "schema_path", None), actual=getattr(first, "json_path", None),
                    json_path=getattr(first, "json_path", None))]


def stdout_finding(env: Envelope | None, raw: bytes, *, truncated: bool = False) -> Finding | None:
    """A stdout line that is no JSON-RPC message (transport.stdio.stdout-only-messages)."""
    if not not_a_message(env, truncated=truncated):
        return None
    return finding("transport.stdio.stdout-only-messages", "NonJsonOnStdout",
                   f"the server wrote something that is not a JSON-RPC message to stdout: {raw[:120]!r}",
                   expected="only JSON-RPC messages", actual=raw[:200].decode("utf-8", "backslashreplace"))


def near_miss(env: Envelope, pending_keys: Iterable[Any]) -> Any:
    """A pending id the answer's id matches only loosely ("7" for 7): an id not echoed verbatim."""
    if env.id is MISSING or env.id is None:
        return MISSING
    lid = loose_id(env.id)
    got = env.id
    for k in pending_keys:
        if k is None or not isinstance(k, tuple) or k[0] == "json" or id_key(got) == k:
            continue
        sent = k[1]
        if loose_id(sent) == lid:
            return sent
        if k[0] == "int" and isinstance(got, (int, float)) and not isinstance(got, bool) and abs(sent) > 2**31:
            # a large integer cut to 32 bits or rounded through a double by the server
            if got in ((sent & 0xFFFFFFFF), ((sent + 2**31) % 2**32) - 2**31) or (isinstance(got, float) and got == float(sent)):
                return sent
    return MISSING


def parse_error_reply(env: Envelope) -> bool:
    """``env`` is error -32700 with id null or without an id: the answer to text that is not JSON."""
    return env.kind is Kind.ERROR and env.error_code == _errors.PARSE_ERROR and (env.id is None or env.id is MISSING)


def accepts_unattributed(exp: Expect, env: Envelope) -> bool:
    """``env`` (with no id we can look up) may be the answer to ``exp``: the scenarios' reading of an
    answer to an unreadable request (id null, absent, or the readable id echoed)."""
    if exp.parse_error_ok and exp.kind in (ANSWER, SILENCE):
        return parse_error_reply(env)
    if exp.kind == UNREADABLE:
        return unreadable_answer(env, exp.echo) or (exp.lenient_echo is not MISSING and unreadable_answer(env, exp.lenient_echo))
    if exp.kind == REJECTED:
        return unreadable_answer(env)
    if exp.kind == ANY:
        return is_response(env)  # anything is allowed, so an answer without a usable id may be its
    return False


def known_requirements() -> set[str]:
    return set(catalogue())


def not_echoed(version: str, exp: Expect | None, env: Envelope, sent: Any, role: str = "server") -> Finding:
    """The request ``sent`` (its id) was answered by ``env`` with another id, or none."""
    got = "without its id (id " + ("null" if env.id is None else "<absent>") + ")" if env.id is None or env.id is MISSING \
        else f"with id {json.dumps(env.id)}"
    what = exp.what if exp is not None else "the request"
    return finding(id_echo_requirement(version, env.kind is Kind.ERROR, role), "IdNotEchoed",
                   f"{what} (id {json.dumps(sent)}) was answered {got}: the response must carry the same id, same JSON type and value",
                   expected=sent, actual=None if env.id is None else ("<absent>" if env.id is MISSING else env.id), json_path="$.id")


def owner_within(exps: list[Expect], answered: list[bool], env: Envelope, version: str) -> tuple[int | None, Finding | None]:
    """Which of one frame's expectations ``env`` answers (a POST's own answers, a replay): by exact
    id; else an id cut or rounded (not echoed); else, without a usable id, one that may be answered
    so, or a request expecting exactly this error code (its id not echoed), or a notification."""
    k = id_key(env.id)
    if k is not None:
        i = next((i for i, x in enumerate(exps) if x.key == k or k in x.member_keys), None)
        if i is not None:
            return i, None
        miss = near_miss(env, [x.key for x in exps])
        if miss is MISSING:
            return None, None
        i = next(i for i, x in enumerate(exps) if x.key == id_key(miss))
        return i, not_echoed(version, exps[i], env, miss)
    i = next((i for i, x in enumerate(exps) if not answered[i] and accepts_unattributed(x, env)), None)
    if i is not None:
        return i, None
    if env.kind is Kind.ERROR:
        i = next((i for i, x in enumerate(exps) if x.kind == ANSWER and not answered[i] and x.codes and env.error_code in x.codes), None)
        if i is not None:
            return i, not_echoed(version, exps[i], env, exps[i].echo)
    return next((i for i, x in enumerate(exps) if x.kind == SILENCE), None), None
