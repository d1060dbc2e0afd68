"""What every client run is judged on, from the wire alone ("W" checks).

Each client scenario ends with :func:`judge_run`: the messages the client wrote (parsed, validated
against the version's client-to-server schema by the raw peer as they arrived), the HTTP requests
it made, and what its server process saw (stdin closed, signals).  A message is charged to the
most specific rule it breaks and only to that one (a float id is ``request-id-type``, not also
``schema-valid``), so a client with one defect gets one verdict.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

from conformance.client.context import ClientContext
from conformance.client.role import ClientRun
from conformance.scenarios.client._server import META_PV, REF_PROBE_PATH
from conformance.scenarios.client._server import request_meta as _meta
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY
from conformance.spec.versions import Transport, spec
from conformance.wire.transcript import Direction, TranscriptEntry
from conformance.wire import meta_keys as mk
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr
from conformance.wire.headers import header_value

__all__ = ["W_REQUIREMENTS", "judge_run", "Wire", "wire_of", "engaged", "pick", "PROMPTS_RESPECT",
           "judge_prompts_respected"]

PROMPTS_RESPECT = "client.prompts.respect-capabilities"

META_CAPS = CLIENT_CAPABILITIES_KEY
META_INFO = CLIENT_INFO_KEY

W_REQUIREMENTS = (
    "client.basic.jsonrpc",
    "client.basic.schema-valid",
    "client.basic.request-id-type",
    "client.basic.request-id-not-null",
    "client.basic.request-id-unique",
    "client.basic.request-id-unique-inflight",
    "client.basic.notification-no-id",
    "client.lifecycle.initialize-first",
    "client.lifecycle.initialize-contents",
    "client.lifecycle.initialized-sent",
    "client.lifecycle.no-request-before-init-response",
    "client.cancel.reference-own-inflight",
    "client.cancel.reference-own-inflight-2026",
    "client.cancel.not-initialize",
    "client.cancel.task-augmented",
    "client.progress.token-unique",
    "client.progress.token-unique-2026",
    "client.progress.token-type",
    "client.pagination.opaque-cursor",
    "client.pagination.no-fixed-page-size",
    "client.pagination.empty-cursor",
    "client.prompts.pagination",
    "client.stdio.no-embedded-newlines",
    "client.stdio.only-mcp",
    "client.stdio.no-responses",
    "client.http.post",
    "client.http.post-2026",
    "client.http.accept",
    "client.http.accept-2026",
    "client.http.session-id",
    "client.http.session-id-2025-03-26",
    "client.http.version-header",
    "client.http.version-header-negotiated",
    "client.http.get-accept",
    "client.http.single-message-body",
    "client.http.post-body-2025-03-26",
    "client.sse.post-to-endpoint",
    "client.meta.required-fields",
    "client.meta.client-info",
    "client.http2026.no-responses",
    "client.http2026.version-header",
    "client.http2026.version-header-matches-meta",
    "client.http2026.standard-headers",
    "client.http2026.name-base64",
    "client.http2026.single-body",
    "client.basic.meta-key-prefix",
    "client.basic.meta-key-name",
    "client.basic.meta-reverse-dns",
    "client.basic.meta-trace-context",
    "client.versioning.extension-identifiers",
    "client.basic.schema-no-network-ref",
    "client.lifecycle.version-latest",
)


def judge_prompts_respected(ctx: ClientContext, w: "Wire", declared: dict[str, Any], peer: Any = None) -> None:
    """server/prompts: "Both parties SHOULD respect capability negotiation": no prompts/* request
    to a server that did not declare prompts (``declared``: what the suite's server declared)."""
    if "prompts" in declared:
        ctx.not_reached(PROMPTS_RESPECT, "the suite's server declared prompts in this scenario")
        return
    used = [m for m in w.requests() if (m.env.method or "").startswith("prompts/")]
    if used:
        ctx.check(PROMPTS_RESPECT, False, problem="UndeclaredPromptsUsed",
                  message=f"the client sent {used[0].env.method}, but the server did not declare the prompts capability",
                  expected="no prompts/* request (prompts not declared)", actual=used[0].env.method,
                  entries=[used[0].entry], peer=peer)
    elif w.requests():
        ctx.check(PROMPTS_RESPECT, True, message="the client sent no prompts/* request to a server without prompts")
    else:
        ctx.not_reached(PROMPTS_RESPECT, "the client sent no request after the handshake")


def pick(version: str, base: str) -> str:
    """The requirement id of ``base``'s family that carries the sentence in ``version`` (the
    catalogue splits a rule where its wording changed: ``-2026``, ``-2024``, ``-2025-03-26``)."""
    from conformance.spec.requirements import catalogue

    reqs = catalogue()
    for rid in (base, f"{base}-2026", f"{base}-2024", f"{base}-2025-03-26"):
        req = reqs.get(rid)
        if req is not None and version in req.versions:
            return rid
    return base


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _key(value: Any) -> Any:
    return (type(value).__name__, repr(value))


@dataclass
class Msg:
    """One message the client wrote (a batch member counts as its own message)."""

    env: Envelope
    entry: TranscriptEntry
    top: Envelope
    meta: dict[str, Any]

    @property
    def t(self) -> float:
        return self.entry.t


@dataclass
class Wire:
    """The client's side of one run, sorted out for the checks."""

    run: ClientRun
    msgs: list[Msg] = field(default_factory=list)
    garbage: list[TranscriptEntry] = field(default_factory=list)  # not JSON at all
    split: list[TranscriptEntry] = field(default_factory=list)  # one message over several lines
    out: list[TranscriptEntry] = field(default_factory=list)  # what we sent

    def requests(self) -> list[Msg]:
        return [m for m in self.msgs if m.env.kind is Kind.REQUEST]

    def answered_at(self, rid: Any) -> float | None:
        """When we sent the response to the client's request ``rid`` (transcript time); None also
        for a response that never reached the client (held on an SSE stream it did not resume)."""
        ep = self.run.endpoint
        if ep is not None and ep.held_answers:
            from conformance.transports.http_server import key_of

            if rid is not MISSING and key_of(rid) in ep.held_answers:
                return None
        for e in self.out:
            env = e.envelope
            if env is not None and env.kind in (Kind.RESULT, Kind.ERROR) and _same(env.id, rid):
                return e.t
        return None


def _same(a: Any, b: Any) -> bool:
    return a is not MISSING and b is not MISSING and type(a) is type(b) and a == b


def wire_of(run: ClientRun) -> Wire:
    w = Wire(run)
    peer = run.peer
    if peer is None:
        return w
    for entry in peer.transcript.entries:
        if entry.direction == Direction.OUT:
            w.out.append(entry)
            continue
        if entry.direction != Direction.IN:
            continue
        env = entry.envelope
        meta = entry.meta or {}
        if meta.get("lines", 1) > 1:
            w.split.append(entry)
        if env is None or env.kind is Kind.PARSE_ERROR:
            if entry.raw is not None and entry.raw.strip():
                w.garbage.append(entry)
            continue
        if env.kind is Kind.BATCH:
            for member in env.items:
                w.msgs.append(Msg(member, entry, env, meta))
        else:
            w.msgs.append(Msg(env, entry, env, meta))
    return w


def _task_created(w: Wire, request: Msg, t: float) -> bool:
    """``request`` is task-augmented (params.task) and we had answered it with a CreateTaskResult
    by time ``t``."""
    params = request.env.params if isinstance(request.env.params, dict) else {}
    if not isinstance(params.get("task"), dict):
        return False
    for e in w.out:
        env = e.envelope
        if env is not None and env.kind is Kind.RESULT and _same(env.id, request.env.id) and e.t <= t:
            return isinstance(env.result, dict) and isinstance(env.result.get("task"), dict)
    return False


def engaged(w: Wire, version: str) -> bool:
    """Whether the client spoke ``version`` with the suite's server in this run: it went on after
    our initialize result (legacy), or sent a request naming the version in ``_meta`` (2026-07-28)."""
    if spec(version).stateless:
        return any(_meta(m.env).get(META_PV) == version for m in w.requests() if m.env.method != "server/discover") or \
            any(_meta(m.env).get(META_PV) == version for m in w.requests())
    init = [m for m in w.msgs if m.env.method == "initialize" and m.env.kind is Kind.REQUEST]
    if not init:
        return False
    answered = w.answered_at(init[0].env.id)
    if answered is None:
        return False
    return any(m.t > answered and m.env.method not in ("initialize", "server/discover") for m in w.msgs)


NO_BATCH_VERSIONS = ("2025-06-18", "2025-11-25")  # batching removed; 2026-07-28 has rules of its own
_ID_PROBLEMS = ('"id" must be a string or an integer',)


def judge_run(ctx: ClientContext, run: ClientRun, *, unsupported_offer: bool = False) -> Wire:
    """Judge the W requirements on what the client did in ``run``; returns the sorted wire."""
    w = wire_of(run)
    version = ctx.version
    vspec = spec(version)
    peer = run.peer
    if peer is None:
        return w
    ctx.use(run)
    flagged: set[int] = set()  # ids of envelopes already charged to a specific rule

    def fail(rid: str, msg: Msg | TranscriptEntry | None, problem: str, message: str, expected: Any = None,
             actual: Any = None) -> None:
        entries = []
        if isinstance(msg, Msg):
            entries = [msg.entry]
            flagged.add(id(msg.env))
        elif isinstance(msg, TranscriptEntry):
            entries = [msg]
        ctx.check(rid, False, problem=problem, message=message, expected=expected, actual=actual, entries=entries, peer=peer)

    def ok(rid: str, message: str = "") -> None:
        ctx.check(rid, True, message=message, peer=peer)

    stdio = ctx.transport is Transport.STDIO
    batches = []
    if version in NO_BATCH_VERSIONS and ctx.transport is not Transport.STREAMABLE_HTTP:
        batches = [m for m in w.msgs if m.top is not m.env and m.top.kind is Kind.BATCH]

    # -- framing (stdio) ----------------------------------------------------------------------
    if stdio:
        for entry in w.split:
            fail("client.stdio.no-embedded-newlines", entry, "EmbeddedNewline",
                 f"the client wrote one message over {entry.meta.get('lines')} lines: messages are delimited by newlines "
                 "and must not contain embedded newlines", expected="one message per line", actual=_raw(entry))
        if w.msgs and not w.split:
            ok("client.stdio.no-embedded-newlines")
        for entry in w.garbage:
            fail("client.stdio.only-mcp", entry, "NotAnMcpMessage",
                 "the client wrote a line to the server's stdin that is not a JSON-RPC message (not JSON)",
                 expected="only MCP messages on the server's stdin", actual=_raw(entry))
        if w.msgs and not w.garbage and not batches:
            ok("client.stdio.only-mcp")

    # -- batches where the version has none (2025-06-18, 2025-11-25): on stdio not a valid MCP
    #    message of the version (client.stdio.only-mcp), over HTTP+SSE not schema-valid; streamable
    #    HTTP by the POST body rule (_judge_http)
    if batches:
        first = {id(m.top): m for m in reversed(batches)}
        rid = "client.stdio.only-mcp" if stdio else "client.basic.schema-valid"
        for m in list(first.values())[:1]:
            fail(rid, m.entry, "BatchSent",
                 f"the client sent a JSON-RPC batch of {len(m.top.items)} on {version}, which has no batches "
                 "(removed in 2025-06-18): not a valid MCP message of that version",
                 expected="individual JSON-RPC requests, notifications or responses", actual=_raw(m.entry))
            for b in batches:
                flagged.add(id(b.env))

    # -- JSON-RPC envelope --------------------------------------------------------------------
    for m in w.msgs:
        env = m.env
        probs = [p for p in env.problems if not p.startswith(_ID_PROBLEMS)]
        if env.kind is Kind.INVALID and not any("both" in p for p in probs) or any("jsonrpc" in p for p in probs):
            fail("client.basic.jsonrpc", m, "NotJsonRpc2",
                 f"the client sent a message that is not JSON-RPC 2.0: {'; '.join(probs) or 'not a request, notification or response'}",
                 expected="a JSON-RPC 2.0 request, notification or response", actual=_raw(m.entry))
    if not stdio:
        for entry in w.garbage:
            fail("client.basic.jsonrpc", entry, "NotJson", "the client POSTed a body that is not JSON",
                 expected="a JSON-RPC 2.0 message", actual=_raw(entry))
    if w.msgs and not any(id(m.env) in flagged for m in w.msgs) and not (not stdio and w.garbage):
        ok("client.basic.jsonrpc")

    reqs = [m for m in w.msgs if m.env.kind is Kind.REQUEST]
    for m in reqs:
        rid = m.env.id
        if m.env.method and m.env.method.startswith("notifications/"):
            fail("client.basic.notification-no-id", m, "NotificationWithId",
                 f"the notification {m.env.method} carries an id ({id_repr(rid)}): notifications must not include an id",
                 expected="no id", actual=rid)
            continue
        if rid is None:
            fail("client.basic.request-id-not-null", m, "NullRequestId", f"the {m.env.method} request has id null",
                 expected="a string or integer id", actual=None)
        elif not _valid_id(rid):
            fail("client.basic.request-id-type", m, "BadRequestIdType",
                 f"the {m.env.method} request has the id {id_repr(rid)} ({type(rid).__name__}): request ids must be strings or integers",
                 expected="a string or an integer", actual=rid)
    if reqs:
        if not any(id(m.env) in flagged and m.env.id is None for m in reqs):
            ok("client.basic.request-id-not-null")
        if not any(id(m.env) in flagged and m.env.id is not None for m in reqs):
            ok("client.basic.request-id-type")
    notes = [m for m in w.msgs if m.env.method and m.env.method.startswith("notifications/")]
    if notes and not any(id(m.env) in flagged for m in notes):
        ok("client.basic.notification-no-id")

    # ids unique: per session (<= 2025-11-25) or among requests in flight (2026-07-28)
    real = [m for m in reqs if _valid_id(m.env.id) and not (m.env.method or "").startswith("notifications/")]
    if vspec.stateless:
        bad = None
        for i, m in enumerate(real):
            for prev in real[:i]:
                if _same(prev.env.id, m.env.id):
                    done = w.answered_at(prev.env.id)
                    if done is None or done > m.t:
                        bad = (prev, m)
                        break
            if bad:
                break
        if bad:
            fail("client.basic.request-id-unique-inflight", bad[1], "DuplicateInFlightId",
                 f"the client sent {bad[1].env.method} with the id {id_repr(bad[1].env.id)} while its {bad[0].env.method} "
                 "with the same id was still unanswered", expected="no two requests in flight with one id", actual=bad[1].env.id)
        elif real:
            ok("client.basic.request-id-unique-inflight")
    else:
        seen: dict[Any, Msg] = {}
        dup = None
        scope: Any = None  # without a session id: the scope of the last initialize
        for m in real:
            session = _session_of(m, run)
            if session is _NEW_SCOPE:
                session = scope = ("init", m.entry.seq)
            elif session is None:
                session = scope
            k = (session, _key(m.env.id))
            if k in seen:
                dup = (seen[k], m)
                break
            seen[k] = m
        if dup:
            fail("client.basic.request-id-unique", dup[1], "ReusedRequestId",
                 f"the client reused the request id {id_repr(dup[1].env.id)} in one session ({dup[0].env.method}, then "
                 f"{dup[1].env.method})", expected="a request id not used before in the session", actual=dup[1].env.id)
        elif real:
            ok("client.basic.request-id-unique")

    # -- lifecycle ----------------------------------------------------------------------------
    init_msgs = [m for m in reqs if m.env.method == "initialize"]
    if vspec.handshake and w.msgs:
        first = next((m for m in w.msgs if m.env.method != "server/discover"), None)
        if init_msgs and first is not None:
            if first.env.method != "initialize":
                fail("client.lifecycle.initialize-first", first, "InitializeNotFirst",
                     f"the client's first message was {first.env.method or first.env.kind.value}, not initialize",
                     expected="initialize first (a server/discover probe before it is allowed)", actual=first.env.method)
            else:
                ok("client.lifecycle.initialize-first")
                if any(m.env.method == "server/discover" for m in w.msgs[:1]):
                    ctx.note("the client probed with server/discover before initialize, as the 2026-07-28 stdio page "
                             "asks dual-era clients to; accepted", requirement="client.lifecycle.initialize-first")
        elif first is not None and not init_msgs and first.env.method not in ("ping",):
            fail("client.lifecycle.initialize-first", first, "NoInitialize",
                 f"the client sent {first.env.method or first.env.kind.value} without ever sending initialize",
                 expected="initialize first", actual=first.env.method)
        for m in init_msgs[:1]:
            problems = _initialize_problems(m.env)
            if problems:
                fail("client.lifecycle.initialize-contents", m, "IncompleteInitialize",
                     "the initialize request lacks " + "; ".join(problems),
                     expected="protocolVersion (string), capabilities (object), clientInfo {name, version}",
                     actual=m.env.params if m.env.params is not MISSING else None)
            else:
                ok("client.lifecycle.initialize-contents")
        if init_msgs and not unsupported_offer:
            _judge_initialized(ctx, w, init_msgs[0], fail, ok)
            _judge_version_latest(ctx, w, init_msgs[0], fail, ok)
        if init_msgs:
            answered = w.answered_at(init_msgs[0].env.id)
            early = [m for m in reqs if m.t > init_msgs[0].t and (answered is None or m.t < answered)
                     and m.env.method not in ("ping", "initialize")]
            if early and answered is not None:
                fail("client.lifecycle.no-request-before-init-response", early[0], "RequestBeforeInitializeResponse",
                     f"the client sent {early[0].env.method} before the server had responded to initialize",
                     expected="only pings before the initialize response", actual=early[0].env.method)
            elif answered is not None:
                ok("client.lifecycle.no-request-before-init-response")

    # -- cancellation and progress --------------------------------------------------------------
    for m in w.msgs:
        if m.env.method != "notifications/cancelled" or m.env.kind is not Kind.NOTIFICATION:
            continue
        params = m.env.params if isinstance(m.env.params, dict) else {}
        target = params.get("requestId", MISSING)
        mine = [r for r in real if _same(r.env.id, target) and r.t <= m.t]
        if mine and mine[-1].env.method == "initialize":
            fail("client.cancel.not-initialize", m, "InitializeCancelled",
                 "the client cancelled its initialize request", expected="initialize is never cancelled", actual=params)
            continue
        if mine and _task_created(w, mine[-1], m.t):
            fail("client.cancel.task-augmented", m, "TaskCancelledByNotification",
                 f"the client cancelled its task-augmented {mine[-1].env.method} (id {id_repr(target)}) with "
                 "notifications/cancelled after the server had answered it with a CreateTaskResult",
                 expected="tasks/cancel for the task", actual=params)
            continue
        if mine and isinstance((mine[-1].env.params or {}).get("task") if isinstance(mine[-1].env.params, dict) else None, dict):
            ok("client.cancel.task-augmented")
        if not mine:
            fail(pick(version, "client.cancel.reference-own-inflight"), m, "CancelOfUnknownRequest",
                 f"the client cancelled {id_repr(target)}, which is not a request it sent", expected="the id of a request "
                 "the client issued and that is still in progress", actual=params)
            continue
        done = w.answered_at(target)
        if done is not None and done < m.t - 1.0:  # allow the race: our answer may still have been in flight
            fail(pick(version, "client.cancel.reference-own-inflight"), m, "CancelOfFinishedRequest",
                 f"the client cancelled {id_repr(target)} {m.t - done:.2f} s after the server had answered it",
                 expected="a request still in progress", actual=params)
        else:
            ok(pick(version, "client.cancel.reference-own-inflight"))
    ctx.not_reached("client.cancel.task-augmented", "the client cancelled no task-augmented request")
    if init_msgs and not any(m.env.method == "notifications/cancelled" and _same((m.env.params or {}).get("requestId", MISSING) if isinstance(m.env.params, dict) else MISSING, init_msgs[0].env.id) for m in w.msgs):
        ok("client.cancel.not-initialize")
    tokens: list[tuple[Msg, Any]] = [(m, _meta(m.env).get("progressToken", MISSING)) for m in real]
    tokens = [(m, t) for m, t in tokens if t is not MISSING]
    typed = [(m, t) for m, t in tokens if isinstance(t, str) or (isinstance(t, int) and not isinstance(t, bool))
             or (isinstance(t, float) and t.is_integer())]
    for m, tok in [(m, t) for m, t in tokens if not any(m is n for n, _ in typed)][:3]:
        fail("client.progress.token-type", m, "ProgressTokenType",
             f"the client's {m.env.method} carries the progress token {tok!r} ({type(tok).__name__}), neither a string "
             "nor an integer", expected="a string or an integer", actual=tok)
    if tokens and len(typed) == len(tokens):
        ok("client.progress.token-type")
    clash = None
    for i, (m, tok) in enumerate(tokens):
        for prev, ptok in tokens[:i]:
            if _same(ptok, tok):
                done = w.answered_at(prev.env.id)
                if done is None or done > m.t:
                    clash = (prev, m, tok)
        if clash:
            break
    if clash:
        fail(pick(version, "client.progress.token-unique"), clash[1], "DuplicateProgressToken",
             f"the client used the progress token {id_repr(clash[2])} on {clash[1].env.method} while {clash[0].env.method} "
             "with the same token was still active", expected="progress tokens unique across active requests", actual=clash[2])
    elif tokens:
        ok(pick(version, "client.progress.token-unique"))

    # -- cursors: exactly a nextCursor we gave ----------------------------------------------------
    given = {e.envelope.result["nextCursor"] for e in w.out
             if e.envelope is not None and e.envelope.kind is Kind.RESULT and isinstance(e.envelope.result, dict)
             and isinstance(e.envelope.result.get("nextCursor"), str)}
    # (a null cursor is no cursor, not a changed one: the schema rule takes it)
    paged = [m for m in real if isinstance(m.env.params, dict) and isinstance(m.env.params.get("cursor"), str)]
    alien = [m for m in paged if m.env.params.get("cursor") not in given]
    if alien:
        m = alien[0]
        fail("client.pagination.opaque-cursor", m, "CursorModified",
             f"the client's {m.env.method} sent the cursor {m.env.params.get('cursor')!r}, which is not a nextCursor "
             "the server gave", expected=sorted(given) or "no cursor (the server gave none)",
             actual=m.env.params.get("cursor"))
    elif paged:
        ok("client.pagination.opaque-cursor")
    else:
        ctx.not_reached("client.pagination.opaque-cursor", "the client sent no request with a cursor")

    # -- _meta keys, trace context values, extension identifiers -----------------------------------
    _judge_meta_keys(ctx, w, fail, ok)
    # -- pagination: the pages the client followed --------------------------------------------------
    _judge_pages(ctx, w, real, fail, ok)

    # -- 2026-07-28: per-request _meta, no responses ---------------------------------------------
    if vspec.stateless:
        real = [m for m in real if m.env.method != "initialize"]  # a dual-era client's legacy handshake has no _meta
        for m in real:
            meta = _meta(m.env)
            missing = [k for k in (META_PV, META_CAPS) if k not in meta]
            if missing:
                fail("client.meta.required-fields", m, "MissingRequestMeta",
                     f"the {m.env.method} request lacks {', '.join(missing)} in params._meta",
                     expected=f"{META_PV} and {META_CAPS} on every request", actual=meta or None)
        if real and not any(id(m.env) in flagged for m in real):
            ok("client.meta.required-fields")
        no_info = [m for m in real if META_INFO not in _meta(m.env)]
        if no_info:
            fail("client.meta.client-info", no_info[0], "MissingClientInfo",
                 f"the {no_info[0].env.method} request carries no {META_INFO} in params._meta",
                 expected=f"{META_INFO} on every request", actual=_meta(no_info[0].env) or None)
        elif real:
            ok("client.meta.client-info")
        rid = "client.stdio.no-responses" if stdio else "client.http2026.no-responses"
        responses = [m for m in w.msgs if m.env.kind in (Kind.RESULT, Kind.ERROR)]
        if responses:
            fail(rid, responses[0], "ClientResponse", "the client wrote a JSON-RPC response on 2026-07-28",
                 expected="no responses from the client", actual=_raw(responses[0].entry))
        elif w.msgs:
            ok(rid)

    # -- a network $ref in a tool's inputSchema (2026-07-28, HTTP: where the suite listens) --------------
    if "client.basic.schema-no-network-ref" in ctx.requirements:
        _judge_network_ref(ctx, run, w)

    # -- HTTP -----------------------------------------------------------------------------------
    if run.endpoint is not None:
        _judge_http(ctx, run, w, fail, ok, negotiated=not unsupported_offer)

    # -- what the client never did: say so (a skip with the reason) --------------------------------
    if not any(m.env.method == "notifications/cancelled" for m in w.msgs):
        for rid in ("client.cancel.reference-own-inflight", "client.cancel.reference-own-inflight-2026",
                    "client.cancel.task-augmented"):
            ctx.not_reached(rid, "the client sent no notifications/cancelled in this run")
    if not tokens:
        for rid in ("client.progress.token-unique", "client.progress.token-unique-2026", "client.progress.token-type"):
            ctx.not_reached(rid, "the client sent no request with a progress token")
    if not notes:
        ctx.not_reached("client.basic.notification-no-id", "the client sent no notification")

    # -- schema validity, for what no specific rule took ---------------------------------------------
    invalid = [m for m in w.msgs if id(m.env) not in flagged and m.env.kind is not Kind.INVALID
               and m.top is m.env and m.entry.findings]
    for m in invalid[:3]:
        f = m.entry.findings[0]
        fail("client.basic.schema-valid", m, "SchemaMismatch",
             f"the client's {m.env.method or m.env.kind.value} does not match the {version} schema: {f}",
             expected=f.definition or "the official schema", actual=f.json_path, )
    sse_batch = ctx.transport is Transport.SSE and version in NO_BATCH_VERSIONS and \
        any(m.top is not m.env and m.top.kind is Kind.BATCH for m in w.msgs)
    if w.msgs and not invalid and not sse_batch:
        ok("client.basic.schema-valid")
    return w


_META_RULES = {  # requirement -> (rule of meta_keys, problem, the skip reason when nothing was judged)
    "client.basic.meta-key-prefix": (mk.PREFIX, "InvalidMetaKeyPrefix", "the client sent no _meta key"),
    "client.basic.meta-key-name": (mk.NAME, "InvalidMetaKeyName", "the client sent no _meta key"),
    "client.basic.meta-reverse-dns": (mk.REVERSE_DNS, "PrefixNotReverseDns",
                                      "the client sent no _meta key with a prefix of two labels or more"),
    "client.basic.meta-trace-context": (mk.TRACE, "InvalidTraceContext",
                                        "the client sent no traceparent, tracestate or baggage in _meta"),
    "client.versioning.extension-identifiers": (mk.EXTENSION, "InvalidExtensionIdentifier",
                                                "the client advertised no extension"),
}


def _judge_meta_keys(ctx: ClientContext, w: Wire, fail: Any, ok: Any) -> None:
    """basic/index#_meta and basic/versioning#extension-negotiation on every message the client
    wrote: the first violation of each rule is reported (the W checks' way)."""
    active = {rule: rid for rid, (rule, *_) in _META_RULES.items() if rid in ctx.requirements}
    if not active:
        return
    seen = {rule: 0 for rule in active}
    first: dict[str, tuple[Msg, str, str]] = {}
    for m in w.msgs:
        found, counted = mk.findings(m.env.value)
        for rule in active:
            seen[rule] += counted[rule]
        for rule, path, why in found:
            if rule in active and rule not in first:
                first[rule] = (m, path, why)
    for rule, rid in active.items():
        _, problem, skip = _META_RULES[rid]
        if rule in first:
            m, path, why = first[rule]
            ctx.check(rid, False, problem=problem, message=f"the client's {m.env.method or m.env.kind.value}: {why}",
                      expected="the W3C Trace Context / W3C Baggage format" if rule == mk.TRACE
                      else "a key name as basic/index#_meta defines it", actual=path, json_path=path,
                      entries=[m.entry], peer=w.run.peer)
        elif seen[rule]:
            ok(rid)
        else:
            ctx.not_reached(rid, skip)


def _judge_network_ref(ctx: ClientContext, run: ClientRun, w: Wire) -> None:
    """The ref_probe tool's inputSchema holds a $ref to a URL of the suite's own HTTP endpoint: any
    request for it is the client dereferencing a network $ref."""
    rid = "client.basic.schema-no-network-ref"
    listed = next((e for e in w.out if e.envelope is not None and e.envelope.kind is Kind.RESULT
                   and REF_PROBE_PATH in (e.raw or b"").decode("utf-8", "replace")), None)
    ep = run.endpoint
    if listed is None or ep is None:
        ctx.not_reached(rid, "the client was not sent the tool whose inputSchema holds a network $ref (it listed no "
                             "tools, or this run's server lists others)")
        return
    fetched = [r for r in ep.requests if r.path.endswith("/" + REF_PROBE_PATH)]
    if fetched:
        r = fetched[0]
        ctx.check(rid, False, problem="NetworkRefDereferenced",
                  message=f"the client fetched {r.method} {r.path}, the network URI a $ref of the ref_probe tool's "
                          "inputSchema names: it dereferenced a network $ref by itself",
                  expected="no request for the $ref's URI", actual=f"{r.method} {r.path}", entries=[listed], peer=run.peer)
    else:
        ctx.check(rid, True, message="the tool whose inputSchema holds a $ref to a network URI of the suite's "
                                     "server was listed; nothing fetched it", peer=run.peer)


_LIST_KEYS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
              "resources/templates/list": "resourceTemplates"}


@dataclass
class _Page:
    """One page the client asked for and the suite's server gave it."""

    msg: Msg
    cursor: Any  # the cursor the client sent (None: the first page)
    next: Any  # our nextCursor (None: none)
    count: int
    answered: float


def _pages_of(w: Wire, real: list[Msg]) -> list[_Page]:
    results: dict[Any, list[tuple[float, dict[str, Any]]]] = {}
    for e in w.out:
        env = e.envelope
        if env is not None and env.kind is Kind.RESULT and isinstance(env.result, dict):
            results.setdefault(_key(env.id), []).append((e.t, env.result))
    pages = []
    for m in real:
        key = _LIST_KEYS.get(m.env.method or "")
        if key is None:
            continue
        answer = next(((t, r) for t, r in results.get(_key(m.env.id), []) if t >= m.t), None)
        if answer is None:
            continue
        params = m.env.params if isinstance(m.env.params, dict) else {}
        items = answer[1].get(key)
        pages.append(_Page(m, params.get("cursor"), answer[1].get("nextCursor"), len(items) if isinstance(items, list) else 0,
                           answer[0]))
    return pages


def _judge_pages(ctx: ClientContext, w: Wire, real: list[Msg], fail: Any, ok: Any) -> None:
    """The client followed our nextCursor where it went on after the page: an empty-string cursor
    (2026-07-28), a page shorter than the one before it, the prompts list's pages."""
    pages = _pages_of(w, real)
    judged: set[str] = set()
    for p in pages:
        if not isinstance(p.next, str):
            continue
        method = p.msg.env.method
        if p.next == "":
            rid = "client.pagination.empty-cursor"
        elif p.cursor is not None and any(q.next == p.cursor and q.msg.env.method == method and p.count < q.count
                                          for q in pages):
            rid = "client.pagination.no-fixed-page-size"
        elif method == "prompts/list" and p.cursor is None:
            rid = "client.prompts.pagination"
        else:
            continue
        # any cursor sent after the page counts: a cursor sent back changed is client.pagination.opaque-cursor's
        followed = any(m.env.method == method and isinstance(m.env.params, dict) and isinstance(m.env.params.get("cursor"), str)
                       and m.t > p.answered for m in real)
        if followed:
            judged.add(rid)
            ok(rid)
            continue
        later = next((m for m in real if m.t > p.answered), None)
        if later is None:
            continue  # the client ended (or was stopped) right after the page: not judged
        judged.add(rid)
        if rid == "client.pagination.empty-cursor":
            why = ("whose nextCursor is the empty string, a valid cursor: it took it as the end of results "
                   f"(it went on with {later.env.method})")
        elif rid == "client.pagination.no-fixed-page-size":
            why = (f"of {p.count} item(s), shorter than the page before it, and did not ask for the next page although "
                   f"the page carries the nextCursor {p.next!r}: as if the page size were fixed (it went on with "
                   f"{later.env.method})")
        else:
            why = (f"with the nextCursor {p.next!r} and never asked for the next page: the prompt list's pagination "
                   f"was not handled (it went on with {later.env.method})")
        fail(rid, p.msg, "NextCursorNotFollowed", f"the client got a {method} page {why}",
             expected=f"{method} with the cursor {p.next!r}", actual=None)
    reasons = {
        "client.pagination.empty-cursor": "the client did not follow prompts/list to the page whose nextCursor is the empty string",
        "client.pagination.no-fixed-page-size": "the client did not follow resources/list to its shorter second page",
        "client.prompts.pagination": "the client did not list prompts (or got no page with a nextCursor and went on)",
    }
    for rid, why in reasons.items():
        if rid not in judged:
            ctx.not_reached(rid, why)


def _raw(entry: TranscriptEntry) -> str:
    raw = entry.raw or b""
    text = raw.decode("utf-8", "replace")
    return text if len(text) <= 300 else text[:300] + "..."


def _session_of(m: Msg, run: ClientRun) -> Any:
    """The session a client message belongs to, for the request-id rule: on streamable HTTP the
    Mcp-Session-Id it carries, and for an initialize POST the id our answer to it issued (the
    initialize request is part of the session it opens: "counting every request from initialize
    on"); without session ids, each initialize starts a new scope.  stdio (one server process)
    and HTTP+SSE (one SSE connection, named by the endpoint's session_id) are one session each."""
    meta = m.meta
    headers = meta.get("headers") or {}
    sid = headers.get("mcp-session-id")
    if sid:
        return sid
    if meta.get("path", "").endswith("/messages"):  # HTTP+SSE: the endpoint's session
        for part in (meta.get("query") or "").split("&"):
            if part.startswith("session_id="):
                return part[len("session_id="):]
        return None
    ep = run.endpoint
    if m.env.method == "initialize" and ep is not None:
        rec = next((r for r in ep.requests if r.n == meta.get("http_request")), None)
        if rec is not None and rec.issued_session:
            return rec.issued_session
        return _NEW_SCOPE
    return None


_NEW_SCOPE = object()  # an initialize on streamable HTTP without session ids: a new scope from here


def _initialize_problems(env: Envelope) -> list[str]:
    params = env.params if isinstance(env.params, dict) else None
    if params is None:
        return ["params"]
    out = []
    if not isinstance(params.get("protocolVersion"), str):
        out.append("protocolVersion (a string)")
    if not isinstance(params.get("capabilities"), dict):
        out.append("capabilities (an object)")
    info = params.get("clientInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        out.append("clientInfo with name and version")
    return out


def _judge_initialized(ctx: ClientContext, w: Wire, init: Msg, fail: Any, ok: Any) -> None:
    answered = w.answered_at(init.env.id)
    if answered is None:
        return
    # did our answer succeed? (an error answer starts nothing)
    ours = next((e for e in w.out if e.envelope is not None and _same(e.envelope.id, init.env.id)), None)
    if ours is None or ours.envelope is None or ours.envelope.kind is not Kind.RESULT:
        return
    after = [m for m in w.msgs if m.t >= answered]
    # (a notifications/initialized that wrongly carries an id still initializes: notification-no-id takes it)
    inited = next((m for m in after if m.env.method == "notifications/initialized"), None)
    others = [m for m in after if m.env.kind is Kind.REQUEST and m.env.method not in ("ping", "initialize")
              and not (m.env.method or "").startswith("notifications/")]
    if inited is None and (others or w.run.exited is not None or True):
        if not others and not after:
            # the client went away without a word after our result: a client that does not
            # support the version we offered may do that (it asked for another one)
            asked = (init.env.params or {}).get("protocolVersion") if isinstance(init.env.params, dict) else None
            offered = (ours.envelope.result or {}).get("protocolVersion") if isinstance(ours.envelope.result, dict) else None
            if asked != offered:
                ctx.not_reached("client.lifecycle.initialized-sent",
                                f"the client asked for {asked} and disconnected when offered {offered}")
                return
        fail("client.lifecycle.initialized-sent", others[0] if others else init, "InitializedNotSent",
             "the client never sent notifications/initialized after the initialize result"
             + (f" (it sent {others[0].env.method} instead)" if others else ""),
             expected="notifications/initialized after a successful initialize", actual=None)
        return
    if inited is not None and others and others[0].t < inited.t:
        fail("client.lifecycle.initialized-sent", others[0], "RequestBeforeInitialized",
             f"the client sent {others[0].env.method} before notifications/initialized",
             expected="notifications/initialized first", actual=others[0].env.method)
        return
    ok("client.lifecycle.initialized-sent")


def _judge_version_latest(ctx: ClientContext, w: Wire, init: Msg, fail: Any, ok: Any) -> None:
    """The version in initialize "SHOULD be the latest version supported by the client": a client
    that goes on with a later version our initialize result offered supports a later one."""
    rid = "client.lifecycle.version-latest"
    if rid not in ctx.requirements:
        return
    from conformance.spec.versions import VERSIONS

    asked = init.env.params.get("protocolVersion") if isinstance(init.env.params, dict) else None
    offered = _offered_version(w)
    if asked not in VERSIONS or offered not in VERSIONS or not engaged(w, ctx.version):
        ctx.not_reached(rid, "the client did not go on after an initialize result naming a known version")
        return
    if VERSIONS.index(offered) > VERSIONS.index(asked):
        fail(rid, init, "InitializeVersionNotLatest",
             f"the client asked for {asked} in initialize, then went on with {offered}, which the server offered: it "
             f"supports the later {offered}, so {asked} was not the latest version it supports",
             expected=f"protocolVersion {offered} or later", actual=asked)
    else:
        ok(rid, f"the client asked for {asked} and went on with {offered}: no later version seen supported")


def _batch_body_problem(body: bytes) -> str | None:
    """What is wrong with a POST body that is a JSON array, for 2025-03-26 (None: a batch of
    requests and/or notifications, or of responses)."""
    try:
        value = json.loads(body)
    except ValueError:
        return None  # not JSON: the JSON-RPC rules say so
    if not isinstance(value, list):
        return None
    if not value:
        return "an empty JSON array (a batch of nothing)"
    kinds = set()
    for item in value:
        if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
            return "an array with an element that is not a JSON-RPC message"
        if "method" in item:
            kinds.add("request or notification")
        elif "result" in item or "error" in item:
            kinds.add("response")
        else:
            return "an array with an element that is not a JSON-RPC message"
    if len(kinds) > 1:
        return "an array that mixes responses with requests or notifications"
    return None


def _judge_http(ctx: ClientContext, run: ClientRun, w: Wire, fail: Any, ok: Any, *, negotiated: bool = True) -> None:
    ep = run.endpoint
    version = ctx.version
    vspec = spec(version)
    reqs = ep.requests
    posts = [r for r in reqs if r.method == "POST"]
    if not posts and not any(r.body.strip() for r in reqs):
        return
    if ctx.transport is Transport.SSE:
        wrong = [r for r in posts if ep.endpoint_path is not None and (r.path + ("?" + r.query if r.query else "")) != ep.endpoint_path]
        if wrong:
            r = wrong[0]
            ctx.check("client.sse.post-to-endpoint", False, problem="PostNotToEndpoint",
                      message=f"the client POSTed to {r.path}{'?' + r.query if r.query else ''}, not to the endpoint the "
                              f"server named ({ep.endpoint_path})", expected=ep.endpoint_path,
                      actual=r.path + ("?" + r.query if r.query else ""), peer=run.peer)
        else:
            ctx.check("client.sse.post-to-endpoint", True, peer=run.peer)
        return
    other = [r for r in reqs if r.method not in ("POST", "GET", "DELETE") and r.body.strip()]
    post_rid = pick(version, "client.http.post")
    if other:
        ctx.check(post_rid, False, problem="MessageNotPosted",
                  message=f"the client sent a JSON-RPC message with HTTP {other[0].method} (request #{other[0].n})",
                  expected="HTTP POST", actual=other[0].method, peer=run.peer)
    else:
        ctx.check(post_rid, True, peer=run.peer)
    bad_accept = [r for r in posts if not _accepts_both(r.header("accept"))]
    if bad_accept:
        r = bad_accept[0]
        ctx.check(pick(version, "client.http.accept"), False, problem="AcceptIncomplete",
                  message=f"POST #{r.n} has Accept: {r.header('accept')!r}; it must list both application/json and text/event-stream",
                  expected="application/json, text/event-stream", actual=r.header("accept"), peer=run.peer)
    else:
        ctx.check(pick(version, "client.http.accept"), True, peer=run.peer)
    if not vspec.stateless:  # the GET that opens or resumes an SSE stream lists text/event-stream
        gets = [r for r in reqs if r.method == "GET"]
        bad_get = [r for r in gets if "text/event-stream" not in _media_types(r.header("accept"))]
        if bad_get:
            r = bad_get[0]
            ctx.check("client.http.get-accept", False, problem="GetAcceptWithoutEventStream",
                      message=f"GET #{r.n}{' (resuming a stream)' if r.header('last-event-id') else ''} has Accept: "
                              f"{r.header('accept')!r}; it must list text/event-stream",
                      expected="text/event-stream", actual=r.header("accept"), peer=run.peer)
        elif gets:
            ctx.check("client.http.get-accept", True, peer=run.peer)
        else:
            ctx.not_reached("client.http.get-accept", "the client sent no GET")
    arrays = [r for r in posts if r.body.lstrip()[:1] == b"["]
    if vspec.stateless:
        rid = "client.http2026.single-body"
    else:
        rid = "client.http.single-message-body"
    if version not in ("2024-11-05", "2025-03-26"):
        if arrays:
            ctx.check(rid, False, problem="BatchBody", message=f"POST #{arrays[0].n} carries a JSON array (a batch)",
                      expected="a single JSON-RPC message per POST", actual=arrays[0].body[:200].decode("utf-8", "replace"),
                      peer=run.peer)
        else:
            ctx.check(rid, True, peer=run.peer)
    if version == "2025-03-26":
        shapes = [(r, why) for r in arrays if (why := _batch_body_problem(r.body)) is not None]
        if shapes:
            r, why = shapes[0]
            ctx.check("client.http.post-body-2025-03-26", False, problem="BatchBodyShape",
                      message=f"POST #{r.n} carries {why}",
                      expected="a single message, an array of one or more requests and/or notifications, or an "
                               "array of one or more responses",
                      actual=r.body[:200].decode("utf-8", "replace"), peer=run.peer)
        elif posts:
            ctx.check("client.http.post-body-2025-03-26", True, peer=run.peer,
                      message=f"{len(posts)} POST body(ies), {len(arrays)} of them a batch of one kind")
    if vspec.stateless:
        # a legacy client's initialize to this modern server is the expected failure of the
        # versioning page's compatibility matrix ("Legacy clients have no fall-forward
        # mechanism"), not a 2026-07-28 message: the header rules judge the modern requests
        posts = [r for r in posts if not _legacy_initialize(r)]
        if not posts:
            for rid in ("client.http2026.version-header", "client.http2026.version-header-matches-meta",
                        "client.http2026.standard-headers", "client.http2026.name-base64", "client.http2026.single-body"):
                ctx.not_reached(rid, "the client sent only a legacy initialize: it does not speak 2026-07-28")
            return
        missing = [r for r in posts if not r.header("mcp-protocol-version")]
        if missing:
            ctx.check("client.http2026.version-header", False, problem="MissingProtocolVersionHeader",
                      message=f"POST #{missing[0].n} has no MCP-Protocol-Version header", expected=version, actual=None, peer=run.peer)
        else:
            ctx.check("client.http2026.version-header", True, peer=run.peer)
        mismatched = []
        no_method = []
        names: list[tuple[Any, str, str, str | None]] = []  # (POST, method, name or uri, Mcp-Name)
        for r in posts:
            for env in r.envelopes[:1]:
                pv = _meta(env).get(META_PV) if env.kind is Kind.REQUEST else None
                hv = r.header("mcp-protocol-version")
                if pv is not None and hv is not None and hv != pv:
                    mismatched.append((r, hv, pv))
                if env.method is not None and r.header("mcp-method") != env.method:
                    no_method.append((r, env.method))
                key = _NAMED.get(env.method or "") if env.kind is Kind.REQUEST else None
                source = env.params.get(key) if key is not None and isinstance(env.params, dict) else None
                if isinstance(source, str):
                    names.append((r, env.method, source, r.header("mcp-name")))
        if mismatched:
            r, hv, pv = mismatched[0]
            ctx.check("client.http2026.version-header-matches-meta", False, problem="ProtocolVersionHeaderMismatch",
                      message=f"POST #{r.n}: MCP-Protocol-Version {hv!r} but _meta names {pv!r}", expected=pv, actual=hv,
                      peer=run.peer)
        elif posts:
            ctx.check("client.http2026.version-header-matches-meta", True, peer=run.peer)
        unencoded, wrong_name = [], []
        for r, method, source, got in names:
            if header_value(source) != source:  # not a plain ASCII header value: the sentinel form
                if got is None or _sentinel_decoded(got) != source:
                    unencoded.append((r, method, source, got))
            elif got is None or (got != source and _sentinel_decoded(got) != source):
                wrong_name.append((r, method, source, got))
        if no_method:
            r, method = no_method[0]
            ctx.check("client.http2026.standard-headers", False, problem="MissingMcpMethodHeader",
                      message=f"POST #{r.n} ({method}) has Mcp-Method {r.header('mcp-method')!r}", expected=method,
                      actual=r.header("mcp-method"), peer=run.peer)
        elif wrong_name:
            r, method, source, got = wrong_name[0]
            ctx.check("client.http2026.standard-headers", False, problem="MissingMcpNameHeader" if got is None else "McpNameMismatch",
                      message=f"POST #{r.n} ({method} of {source!r}) has " + ("no Mcp-Name header" if got is None else f"Mcp-Name {got!r}"),
                      expected=source, actual=got, peer=run.peer)
        else:
            ctx.check("client.http2026.standard-headers", True, peer=run.peer)
        unsafe = [n for n in names if header_value(n[2]) != n[2]]
        if unencoded:
            r, method, source, got = unencoded[0]
            ctx.check("client.http2026.name-base64", False, problem="McpNameNotBase64",
                      message=f"POST #{r.n} ({method} of {source!r}, not a plain ASCII header value) has "
                              + ("no Mcp-Name header" if got is None else f"Mcp-Name {got!r}")
                              + "; it must be the Base64 sentinel form =?base64?...?=",
                      expected=header_value(source), actual=got, peer=run.peer)
        elif unsafe:
            ctx.check("client.http2026.name-base64", True, peer=run.peer)
        else:
            ctx.not_reached("client.http2026.name-base64",
                            "the client named no tool, prompt or resource that is not a plain ASCII header value")
        return
    # sessions and the version header (2025-03-26 .. 2025-11-25)
    after = []
    init_done = None  # when the (first) initialize was answered
    for r in reqs:
        if r.envelopes and any(e.method == "initialize" for e in r.envelopes):
            if init_done is None and r.status == 200 and r.answered is not None:
                init_done = r.answered
            continue  # a new session starts without an id
        if init_done is not None and r.t > init_done:
            after.append(r)
    init_ids = [m.env.id for m in w.msgs if m.env.method == "initialize" and m.env.kind is Kind.REQUEST]

    def cancels_initialize(r: Any) -> bool:
        """A POST that carries only the cancellation of an initialize request: it belongs to the
        time before the session (and the version) was known, however late the answer made it."""
        return bool(r.envelopes) and all(
            e.method == "notifications/cancelled" and isinstance(e.params, dict)
            and any(_same(e.params.get("requestId", MISSING), i) for i in init_ids) for e in r.envelopes)

    if ep.sessions_issued and after:
        lost = [r for r in after if r.header("mcp-session-id") not in ep.sessions_issued and not cancels_initialize(r)]
        if lost:
            r = lost[0]
            ctx.check(pick(version, "client.http.session-id"), False, problem="SessionIdNotSent",
                      message=f"{r.method} #{r.n} carries Mcp-Session-Id {r.header('mcp-session-id')!r}, not the id the "
                              "server issued", expected=ep.sessions_issued[-1], actual=r.header("mcp-session-id"), peer=run.peer)
        else:
            ctx.check(pick(version, "client.http.session-id"), True, peer=run.peer)
    if version not in ("2024-11-05", "2025-03-26") and after and negotiated:
        nohdr = [r for r in after if not r.header("mcp-protocol-version") and not cancels_initialize(r)]
        if nohdr:
            r = nohdr[0]
            ctx.check("client.http.version-header", False, problem="MissingProtocolVersionHeader",
                      message=f"{r.method} #{r.n} after initialization has no MCP-Protocol-Version header",
                      expected=version, actual=None, peer=run.peer)
        else:
            ctx.check("client.http.version-header", True, peer=run.peer)
        # its value: the version our initialize result named (also after a counter-offer)
        offered = _offered_version(w)
        if offered is not None:
            wrong = [r for r in after if r.header("mcp-protocol-version") and r.header("mcp-protocol-version") != offered]
            if wrong:
                r = wrong[0]
                ctx.check("client.http.version-header-negotiated", False, problem="ProtocolVersionHeaderNotNegotiated",
                          message=f"{r.method} #{r.n} has MCP-Protocol-Version {r.header('mcp-protocol-version')!r}, "
                                  f"but the version negotiated in initialize was {offered!r}",
                          expected=offered, actual=r.header("mcp-protocol-version"), peer=run.peer)
            elif any(r.header("mcp-protocol-version") for r in after):
                ctx.check("client.http.version-header-negotiated", True, peer=run.peer)


def _offered_version(w: Wire) -> str | None:
    """The protocolVersion of our (last successful) initialize result: the negotiated version."""
    init_ids = [m.env.id for m in w.msgs if m.env.method == "initialize" and m.env.kind is Kind.REQUEST]
    offered = None
    for e in w.out:
        env = e.envelope
        if env is not None and env.kind is Kind.RESULT and isinstance(env.result, dict) \
                and any(_same(env.id, i) for i in init_ids) and isinstance(env.result.get("protocolVersion"), str):
            offered = env.result["protocolVersion"]
    return offered


_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # the standard headers' table
_SENTINEL = re.compile(r"=\?base64\?(.*)\?=\Z", re.S)


def _sentinel_decoded(value: str) -> str | None:
    """The text a ``=?base64?...?=`` header value carries (None: not that form, or not valid Base64 / UTF-8)."""
    m = _SENTINEL.match(value.strip(" \t"))
    if m is None:
        return None
    try:
        return base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def _media_types(value: str | None) -> set[str]:
    return {part.split(";")[0].strip().lower() for part in (value or "").split(",") if part.strip()}


def _legacy_initialize(r: Any) -> bool:
    return bool(r.envelopes) and all(e.method == "initialize" and META_PV not in _meta(e) for e in r.envelopes)


def _accepts_both(value: str | None) -> bool:
    if not value:
        return False
    types = {part.split(";")[0].strip().lower() for part in value.split(",")}
    return "application/json" in types and "text/event-stream" in types
