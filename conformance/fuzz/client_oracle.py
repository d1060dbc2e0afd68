"""The fuzz oracle of the client direction: we play the server, the target is a client.  Pure.

What we send a client, and what each message allows back (:func:`expect`, the twin of
:func:`conformance.fuzz.oracle.expect`, with the client's requirements):

* a well-formed server-to-client request (``ping``, ``roots/list``, ``sampling/createMessage``,
  ``elicitation/create``, ``tasks/*``) -- exactly one response with the id echoed verbatim, result
  xor error, schema-valid for the version and the method (``client.basic.schema-valid``); a ping
  with an empty result (``client.ping.respond``); nothing at all is ``client.jsonrpc.response-required``;
* a request for a method no version defines -- error -32601 (``client.jsonrpc.method-not-found``);
* ``roots/list``, ``sampling/createMessage``, ``elicitation/create`` to a client that did not
  declare the capability -- no result (``client.roots.declare``, ``client.sampling.declare``,
  ``client.elicitation.declare``, an accepted elicitation only); roots: -32601
  (``client.roots.unsupported-error``, SHOULD) and ``file://`` URIs (``client.roots.file-uri``);
* a well-formed notification -- no response (``client.basic.notification-no-response``, from
  2025-03-26); a ``notifications/cancelled`` naming no request of ours is an invalid
  cancellation, to be ignored (``client.cancel.invalid-ignored``);
* a batch on 2025-03-26 -- its requests answered (``client.basic.batch-receive``);
* text that is not JSON (not UTF-8 included) -- error -32700 (``client.jsonrpc.parse-error``), or
  from a lenient parser (NaN, Infinity, comments, trailing commas, single quotes) an answer
  with the id it read; silence is a finding (the server side's reading, ``oracle.unparseable``).
  Over streamable HTTP and legacy SSE a frame is judged as the client reads it after the event
  stream's decoding (:func:`expect_sse`: invalid UTF-8 becomes U+FFFD, often in valid JSON);
* anything else malformed (an invalid envelope, a number beyond every range, a
  duplicate member, a batch where the version has none, a response to nothing) and our answers to
  the client's own requests, mutated or not -- anything (or nothing) may come back: only the
  client's survival is judged.

The judgment is :func:`conformance.fuzz.oracle.judge` with the client's requirement ids
(``OracleContext(role="client")``) plus the capability rules above (:func:`judge`); the readings
are the suite's own (``conformance.wire.rules``: ``response_shape_problems``,
``empty_ping_result``, ``elicitation_accepted``, ``non_file_roots``; the schema oracle
``conformance.schema.validate``).

Survival (:func:`liveness`): the client must keep answering the ``ping`` we send behind every
chunk (a barrier), and may end its session only normally.  A barrier unanswered while the client
lives is a stall; death by a signal (SIGSEGV, SIGABRT...) a crash; a clean exit while it was
waiting for our answer to one of its requests, right after well-formed messages only, is a quit
(an invalid cancellation among them: ``client.cancel.invalid-ignored``).  All three cite
``client.ping.respond`` ("The receiver MUST respond promptly"), the ping being the one request every
client must answer.  A client may end its session after a malformed message or after any answer of
ours (it may give up on a server that sends nonsense, or be done): not a finding.
"""

from __future__ import annotations

import functools
import signal
from typing import Any

from conformance.fuzz import oracle as _o
from conformance.fuzz.oracle import ANSWER, ANY, SILENCE, Expect, Finding, OracleContext, finding, id_key
from conformance.schema.validate import validate
from conformance.spec import errors as _errors
from conformance.spec import methods as _methods
from conformance.spec.requirements import get as get_requirement
from conformance.spec.versions import VERSIONS, spec
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, parse_envelope
from conformance.wire.rules import JSONRPC_MEMBERS, elicitation_accepted, loose_id, non_file_roots
from conformance.wire.sse import delivered

SSE_TRANSPORTS = frozenset({"streamable-http", "sse"})  # where the frames we send a client travel as SSE events

__all__ = [
    "context",
    "unsupported",
    "expect",
    "expect_sse",
    "expect_answer",
    "barrier_expect",
    "judge",
    "capability_findings",
    "liveness",
    "crash_signal",
    "pair_unclaimed",
    "resembles",
    "RESPONSE_REQUIRED",
    "PING",
    "NO_RESPONSE",
    "INVALID_CANCEL",
    "BATCH",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
]

RESPONSE_REQUIRED = "client.jsonrpc.response-required"
PING = "client.ping.respond"
NO_RESPONSE = "client.basic.notification-no-response"
INVALID_CANCEL = "client.cancel.invalid-ignored"
BATCH = "client.basic.batch-receive"
METHOD_NOT_FOUND = "client.jsonrpc.method-not-found"
PARSE_ERROR = "client.jsonrpc.parse-error"

CRASH_SIGNALS = {s: s.name for s in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGILL, signal.SIGFPE,
                                     signal.SIGKILL, signal.SIGSYS, signal.SIGTRAP)}


def context(version: str, transport: str = "stdio", client_capabilities: dict | None = None) -> OracleContext:
    return OracleContext(version, transport, role="client", client_capabilities=client_capabilities)


def unsupported(version: str) -> str | None:
    """Why the client direction cannot fuzz ``version`` (None: it can)."""
    if version not in VERSIONS:
        return f"unknown protocol version {version!r}"
    if not spec(version).ping:
        return (f"{version} has no server-to-client requests (no ping to use as a barrier, and clients write no "
                "responses): the client direction fuzzes 2024-11-05 .. 2025-11-25")
    return None


@functools.lru_cache(maxsize=None)
def _applies(rid: str, version: str) -> bool:
    return version in get_requirement(rid).versions


def usable_key(rid: Any) -> Any:
    """A key for an id answers may echo; None for null, absent and booleans (never unique in flight)."""
    if rid is MISSING or rid is None or isinstance(rid, bool):
        return None
    return id_key(rid)


def _any(what: str, rid: Any = MISSING, *, quit_ok: bool = True, cancel: bool = False, member_keys: tuple = (),
         asked: str | None = None) -> Expect:
    return Expect(ANY, key=usable_key(rid), echo=rid, silence_requirement=None, what=what, quit_ok=quit_ok,
                  cancel=cancel, member_keys=member_keys, asked=asked,
                  accepted=("anything, or nothing: only the client's survival is judged",))


# -- expectations ------------------------------------------------------------------------------------


def expect(raw: bytes, ctx: OracleContext) -> list[Expect]:
    """What may answer the frame ``raw`` (exact bytes we sent the client).  On stdio the bytes are
    what the client reads (a frame with newlines is several messages); over streamable HTTP and
    legacy SSE the frame travels as an SSE event, and the client reads what the event stream
    delivers (:func:`expect_sse`)."""
    if ctx.transport in SSE_TRANSPORTS:
        return expect_sse(raw, ctx)
    return _o.per_line(raw, ctx, expect_message)


def expect_sse(raw: bytes, ctx: OracleContext) -> list[Expect]:
    """What may answer ``raw`` sent as one SSE event (:func:`conformance.wire.sse.message_event`).
    The client reads the messages the event stream delivers (:func:`conformance.wire.sse.delivered`):
    "Streams must be decoded using the UTF-8 decode algorithm" (WHATWG HTML, server-sent events),
    so invalid UTF-8 arrives as U+FFFD -- often in valid JSON, a message to be served, not a Parse
    error; a line break inside the frame ends its data line (the rest is another field, or a
    blank line that dispatches early).  Where the bytes were not UTF-8 but the decoded text is a
    well-formed request or notification, error -32700 with id null is accepted as well: JSON text
    "MUST be encoded using UTF-8" (RFC 8259 section 8.1), and a client whose SSE reader refuses
    the bytes reads no JSON."""
    got = delivered(raw)
    if got == [raw]:
        return expect_message(raw, ctx)
    if not got:
        return [_any("a frame whose SSE event delivers no message (its line breaks leave no data line)")]
    not_utf8 = _not_utf8(raw)
    how = "decoded as the SSE stream is (invalid UTF-8 replaced by U+FFFD)" if not_utf8 and len(got) == 1 and \
        b"\n" not in raw and b"\r" not in raw else f"as the SSE event delivers it ({len(got)} message(s): its line breaks end data lines)"
    out: list[Expect] = []
    for text in got:
        for exp in expect_message(text, ctx):
            exp.what = f"{exp.what} ({how})"
            if not_utf8 and exp.kind in (ANSWER, SILENCE):
                exp.parse_error_ok = True
                exp.accepted = exp.accepted + ("error -32700 with id null or without an id (the event's bytes are not UTF-8)",)
            out.append(exp)
    return out


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def expect_message(raw: bytes, ctx: OracleContext) -> list[Expect]:
    if not raw.strip(b" \t\r"):
        return [_any("a blank line")]
    env = parse_envelope(raw)
    if _o.too_deep(env):
        return [_any("a message nested deeper than parsers must support", _o.lenient_id_of(raw))]
    if env.kind is Kind.PARSE_ERROR:
        # not JSON (NaN, a comment, a trailing comma... included, which lenient parsers read): error
        # -32700 (client.jsonrpc.parse-error), or from a lenient parser an answer to the request it
        # read -- judged as the server side is (oracle.unparseable); the client may also give up
        exps = _o.unparseable(env, raw, ctx)
        for exp in exps:
            exp.quit_ok = True
        return exps
    return _expect_env(env, ctx)


def _expect_env(env: Envelope, ctx: OracleContext) -> list[Expect]:
    version = ctx.version
    if env.kind is Kind.BATCH:
        return _expect_batch(env, ctx)
    value = env.value
    rid = _o.readable_id(value)
    # what RFC 8259 leaves to the implementation: any answer, but a request whose id can be read
    # must be answered (client.jsonrpc.response-required)
    if _o.beyond_interoperable(value) or _o.is_big_id(value):
        what, accepted, cls = _o.number_case(value)
        exp = _o.implementation_defined(value, ctx, what, accepted, _o.Lazy(_o.likeliest_cause, (value, version, cls, _methods.S2C)),
                                         malformed=_o.malformed_problems(env))
        exp.quit_ok = True
        return [exp]
    dups = [p for p in env.problems if p.startswith("duplicate key")]
    if any(p[len("duplicate key "):].strip("'\"") in JSONRPC_MEMBERS for p in dups):
        twice = {p[len("duplicate key "):].strip("'\"") for p in dups}
        exp = _o.implementation_defined(value, ctx, "a message with a duplicate JSON-RPC member",
                                         "anything: RFC 8259 leaves duplicate names to the implementation",
                                         _o.Lazy(_o.duplicate_cause, (value, version, _methods.S2C)),
                                         ids=_o.top_ids(env.raw) if "id" in twice else None,
                                         malformed=_o.malformed_problems(env))
        exp.quit_ok = True
        return [exp]
    bad = [p for p in env.problems if not p.startswith("duplicate key")]
    if env.kind is Kind.INVALID or (env.kind in (Kind.REQUEST, Kind.NOTIFICATION) and bad):
        return [_any("an invalid JSON-RPC message (" + ("; ".join(bad) or "not a request, notification or response") + ")", rid)]
    if env.kind in (Kind.RESULT, Kind.ERROR):
        return [_any("a response to no request of the client", rid)]
    method = env.method or ""
    if env.kind is Kind.NOTIFICATION:
        cancel = method == "notifications/cancelled"  # every requestId we send names no request of ours
        what = f"the notification {method!r}" + (" (an invalid cancellation: no request of ours has that id)" if cancel else "")
        if _applies(NO_RESPONSE, version):
            return [Expect(SILENCE, requirement=NO_RESPONSE, silence_requirement=None, what=what, cancel=cancel,
                           asked=method, accepted=("no response",))]
        # 2024-11-05: notifications "do not expect a response" (no keyword): only survival
        return [_any(what, quit_ok=False, cancel=cancel, asked=method)]
    # a request with a usable id
    key = id_key(env.id)
    m = _methods.lookup(method, _methods.S2C, version)
    if m is None or m.kind != _methods.REQUEST:
        if _o.known_method(method):
            return [Expect(ANSWER, key=key, echo=env.id, requirement=RESPONSE_REQUIRED, silence_requirement=RESPONSE_REQUIRED,
                           asked=method, what=f"a request for {method!r}, not a server-to-client request of {version}",
                           accepted=("any error", "a result"))]
        return [Expect(ANSWER, key=key, echo=env.id, codes=frozenset({_errors.METHOD_NOT_FOUND}), result_ok=False,
                       requirement=METHOD_NOT_FOUND, silence_requirement=METHOD_NOT_FOUND, asked=method,
                       what=f"a request for the unknown method {method!r}", accepted=("error -32601 with the id echoed",))]
    valid = _schema_ok(env.value, version)
    extra = _o.unknown_members(env.value, version, m.request_def)
    silent = "UnknownMemberUnanswered" if extra else ""
    if method == "ping" and valid:
        return [Expect(ANSWER, key=key, echo=env.id, method="ping", codes=frozenset(), requirement=PING, silence_requirement=PING,
                       asked=method, what="a ping" + _o.members_text(extra), accepted=("an empty result (only _meta may appear)",),
                       ping=True, unanswered=silent)]
    return [Expect(ANSWER, key=key, echo=env.id, method=method if valid else None, requirement=RESPONSE_REQUIRED,
                   silence_requirement=RESPONSE_REQUIRED, asked=method, unanswered=silent,
                   what=f"a {'schema-valid' if valid else 'schema-invalid'} {method!r} request" + _o.members_text(extra),
                   accepted=("a result valid for the method", "an error (any code)") if valid
                   else ("an error (any code)", "a result"))]


def _schema_ok(value: Any, version: str) -> bool:
    try:
        return not validate(value, version, _methods.S2C)
    except Exception:  # noqa: BLE001 - a schema that cannot be loaded: judge leniently
        return False


def _expect_batch(env: Envelope, ctx: OracleContext) -> list[Expect]:
    keys = tuple(k for k in (usable_key(i.id) for i in env.items if i.kind is Kind.REQUEST) if k is not None)
    if not spec(ctx.version).batching or not env.items:
        what = "an empty batch" if not env.items else f"a JSON-RPC batch ({ctx.version} has no batches)"
        return [_any(what, member_keys=keys)]
    out: list[Expect] = []
    for item in env.items:
        for exp in _expect_env(item, ctx):
            if exp.kind == ANSWER:
                exp.silence_requirement = BATCH  # "MUST support receiving JSON-RPC batches"
            out.append(exp)
    # a refusal of the whole batch (an error without a usable id) is taken here; its requests then
    # count as unanswered under client.basic.batch-receive
    out.append(_any(f"a JSON-RPC batch of {len(env.items)}", quit_ok=any(x.quit_ok for x in out)))
    return out


def expect_answer(raw: bytes, ctx: OracleContext, method: str, request_id: Any, *, mutated: bool = True) -> Expect:
    """Our answer ``raw`` to the client's ``method`` request ``request_id``: anything may follow,
    the client may even end its session; only its survival is judged."""
    what = f"our {'mutated ' if mutated else ''}answer to the client's {method} request (id {id_repr(request_id)})"
    return _any(what, request_id, asked=method)


def barrier_expect(rid: Any) -> Expect:
    """The ping we send behind a chunk: it must be answered (an empty result, the id echoed)."""
    return Expect(ANSWER, key=id_key(rid), echo=rid, method="ping", codes=frozenset(), requirement=PING, silence_requirement=PING,
                  asked="ping", what="the ping sent as a barrier", accepted=("an empty result (only _meta may appear)",), ping=True)


# -- judging -----------------------------------------------------------------------------------------


def judge(exp: Expect, answers: list[Envelope], ctx: OracleContext, **kw: Any) -> list[Finding]:
    """The findings for one settled expectation (:func:`conformance.fuzz.oracle.judge` with the
    client's requirement ids, and the capability rules)."""
    out = _o.judge(exp, answers, ctx, **kw)
    read = [a for a in answers if not (exp.parse_error_ok and _o.parse_error_reply(a))]  # (a -32700: the bytes read as sent)
    if exp.kind == ANSWER and read and exp.asked:
        out.extend(capability_findings(exp.asked, read[0], ctx))
    return out


def capability_findings(method: str, env: Envelope, ctx: OracleContext) -> list[Finding]:
    """roots/list, sampling/createMessage, elicitation/create answered by a client that did not
    declare the capability (the server_requests scenario's readings); roots that are not file://."""
    caps = ctx.client_capabilities
    if caps is None:  # what the client declared is unknown (no initialize seen)
        return []
    version = ctx.version
    out: list[Finding] = []

    def cite(rid: str, problem: str, message: str, **kw: Any) -> None:
        if _applies(rid, version):
            out.append(finding(rid, problem, message, **kw))

    is_result = env.kind is Kind.RESULT
    if method == "roots/list":
        if "roots" not in caps:
            if is_result:
                cite("client.roots.declare", "UndeclaredRoots",
                     "the client answered roots/list with roots but did not declare the roots capability",
                     expected="-32601 (roots not declared)", actual="a result")
            elif env.kind is Kind.ERROR and isinstance(env.error_code, int) and not isinstance(env.error_code, bool) \
                    and env.error_code != _errors.METHOD_NOT_FOUND:
                cite("client.roots.unsupported-error", "WrongErrorCode",
                     f"roots/list to a client without roots was answered with error {env.error_code}",
                     expected="-32601 (Method not found)", actual=env.error_code, json_path="$.error.code")
        elif is_result:
            bad = non_file_roots(env.result)
            if bad:
                cite("client.roots.file-uri", "RootNotFileUri", f"root URI {bad[0]!r} is not a file:// URI",
                     expected="file:// URIs", actual=bad[0], json_path="$.result.roots")
    elif method == "sampling/createMessage" and "sampling" not in caps and is_result:
        cite("client.sampling.declare", "UndeclaredSampling",
             "the client answered sampling/createMessage with a result but did not declare the sampling capability",
             expected="an error (sampling not declared)", actual="a result")
    elif method == "elicitation/create" and "elicitation" not in caps and is_result and elicitation_accepted(env.result):
        cite("client.elicitation.declare", "UndeclaredElicitation",
             "the client accepted elicitation/create but did not declare the elicitation capability",
             expected="an error (elicitation not declared)", actual=env.result if isinstance(env.result, dict) else None)
    return out


def resembles(got: Any, sent: Any) -> bool:
    """An id ``got`` back that is ``sent`` changed: the same loosely ("7" for 7), or one a prefix of
    the other ("fz-7-x" for "fz-7")."""
    if got is MISSING or got is None or sent is MISSING or sent is None:
        return False
    if loose_id(got) == loose_id(sent):
        return True
    g, s = str(got), str(sent)
    return len(s) >= 3 and len(g) >= 3 and (g.startswith(s) or s.startswith(g))


def pair_unclaimed(unanswered: list[Expect], unclaimed: list[Envelope], ctx: OracleContext) -> list[tuple[int, Envelope, Finding]]:
    """Responses whose id matches no request of ours, paired with the requests of the same chunk
    left without an answer: first by resemblance (:func:`resembles`), then the rest in order when
    their numbers agree (a client reads its input in order).  Each pair is one answer whose id was
    not echoed -- one violation, not a missing answer plus a stray one."""
    out: list[tuple[int, Envelope, Finding]] = []
    taken: dict[int, int] = {}
    rest: list[Envelope] = []
    for env in unclaimed:
        i = next((i for i, exp in enumerate(unanswered) if taken.get(i, 0) < exp.max_answers and resembles(env.id, exp.echo)), None)
        if i is None:
            rest.append(env)
            continue
        taken[i] = taken.get(i, 0) + 1
        out.append((i, env, _o.not_echoed(ctx.version, unanswered[i], env, unanswered[i].echo, role="client")))
    left = [i for i in range(len(unanswered)) if i not in taken]
    if rest and len(left) == len(rest):
        out += [(i, env, _o.not_echoed(ctx.version, unanswered[i], env, unanswered[i].echo, role="client"))
                for i, env in zip(left, rest)]
    return out


# -- survival ----------------------------------------------------------------------------------------


def crash_signal(returncode: int | None) -> str | None:
    """The name of the crash signal that ended a process (its return code as ``subprocess`` or a
    shell reports it: -N, or 128+N), or None for a normal exit."""
    if returncode is None:
        return None
    n = -returncode if returncode < 0 else (returncode - 128 if returncode > 128 else 0)
    for sig, name in CRASH_SIGNALS.items():
        if int(sig) == n:
            return name
    return None


def liveness(suspects: list[Expect], *, crash: str | None = None, stalled: float | None = None, exited: bool = False,
             held: bool = False, returncode: int | None = None) -> tuple[Finding, list[int]] | None:
    """Judge how a client run ended (or stopped), given ``suspects``: the messages the client may
    have been reading when it stopped (after the last one it answered, up to the next request it
    should have answered), in order.  Returns the finding and the indexes of the suspects it may be
    charged to (the likeliest first; more than one: the replays decide), or None when the end is
    normal.

    * ``stalled``: the client lives but left the barrier unanswered for that many seconds;
    * ``crash``: it died of that signal (one we did not send);
    * ``exited``: it exited (or closed the connection) normally; ``held``: while one of its own
      requests was still waiting for our answer.  A quit is charged only to well-formed messages
      (an invalid cancellation first); a client may give up on a server that sends malformed
      messages, or end its session after an answer of ours.
    """
    everyone = list(range(len(suspects)))
    if stalled is not None:
        return finding(PING, "ClientStalled", f"the ping sent as a barrier was not answered within {stalled:.1f} s, and the "
                       "client is still running", expected="an answer to ping, promptly", actual="no answer"), everyone
    if crash is not None:
        return finding(PING, "ClientCrashed", f"the client died of {crash} before answering the ping sent as a barrier",
                       expected="the client keeps answering", actual={"returncode": returncode, "signal": crash}), everyone
    if not exited or not suspects or not held:
        return None  # nothing was pending, or the client was not waiting for us: it may be done
    valid = [i for i, s in enumerate(suspects) if not s.quit_ok]
    if not valid:
        return None
    cancels = [i for i in valid if suspects[i].cancel]
    if cancels:
        order = cancels + [i for i in valid if i not in cancels]
        return finding(INVALID_CANCEL, "QuitOnInvalidCancel",
                       f"the client ended its session after {suspects[cancels[0]].what}, while its own request was still "
                       "pending and before answering the ping sent as a barrier", expected="the invalid cancellation ignored",
                       actual={"returncode": returncode}), order
    return finding(PING, "ClientQuit", f"the client ended its session (exit code {returncode}) after well-formed messages "
                   f"({suspects[valid[0]].what}), while its own request was still pending and before answering the ping "
                   "sent as a barrier", expected="the client keeps answering", actual={"returncode": returncode}), valid
