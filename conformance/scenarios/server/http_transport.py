"""basic/transports#streamable-http (2025-03-26 .. 2025-11-25) and basic/transports/streamable-http
(2026-07-28): POST answers, Accept / Content-Type, sessions, MCP-Protocol-Version, Origin, the GET
stream, SSE priming / retry / resumption, several streams.

Deliberately odd requests go through a :class:`~._http.Probe` (a second transport sharing the
session), so their answers never reach the connection other scenarios use.  Checks over "every
POST / every stream of the run" read the connections' transcripts back (:func:`~._http.streams_of`)
and run last (``order=900``).
"""

from __future__ import annotations

import re
from typing import Any

import anyio

from conformance.server.context import ScenarioContext
from conformance.runtime.records import Connection
from conformance.runtime.peer import PeerError, RawPeer
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec.versions import LATEST_STATEFUL, Transport, spec
from conformance.spec.meta import PROTOCOL_VERSION_KEY
from conformance.transports.base import PeerSilent, TransportError, TransportTimeout
from conformance.transports.exchange import JSON_TYPE, SSE_TYPE, HttpExchange
from conformance.wire.envelope import MISSING, Envelope, Kind, dumps, id_repr, parse_envelope

from ._helpers import is_response
from ._http import (
    FOREIGN_ORIGIN,
    Probe,
    StreamInfo,
    describe,
    id_key,
    is_loopback,
    notification_message,
    official_tools,
    request_message,
    streams_of,
    wait_until,
)

RCT = "transport.http.post.request-content-type"
RCT26 = "transport.http.post.request-content-type-2026"
A202 = "transport.http.post.accepted-202"
A202_26 = "transport.http.post.accepted-202-2026"
NREF26 = "transport.http.post.notification-refused-2026"
ENDPOINT26 = "transport.http.endpoint-post-2026"
XACCEL = "transport.http.sse.x-accel-buffering"
RELATED26 = "transport.http.sse.notifications-related-2026"
ENDS26 = "transport.http.sse.response-ends-stream-2026"
NOT_ACC = "transport.http.post.not-accepted-error-status"
ACCEPT = "transport.http.post.accept-406"
CTYPE = "transport.http.post.content-type-415"
SID_ASCII = "transport.http.session.id-visible-ascii"
SID_MISSING = "transport.http.session.missing-400"
SID_UNKNOWN = "transport.http.session.unknown-404"
SID_SECURE = "transport.http.session.id-secure"
PV = "transport.http.protocol-version.invalid-400"
PV_ABSENT = "transport.http.protocol-version.absent-assumed"
ORIGIN_V = "transport.http.origin.validate"
ORIGIN_403 = "transport.http.origin.invalid-403"
BIND = "transport.http.bind-localhost"
GET_SSE = "transport.http.get.sse-or-405"
GET_NO_RESP = "transport.http.get.no-response"
GETDEL26 = "transport.http.get-delete-405-2026"
PRIMING = "transport.http.sse.priming-event"
RETRY = "transport.http.sse.retry-before-close"
EID = "transport.http.sse.event-id-unique"
RESUME = "transport.http.resume.same-stream"
BROADCAST = "transport.http.streams.no-broadcast"
RELATE = "transport.http.sse.messages-relate"
EARLY = "transport.http.sse.no-close-before-response"
EVENTUAL = "transport.http.sse.eventual-response"
AFTER = "transport.http.sse.close-after-response"
AFTER_0326 = "transport.http.sse.close-after-responses-2025-03-26"
NOT_CANCEL = "transport.http.sse.disconnect-not-cancel"
UNRELATED = "transport.http.get.messages-unrelated"

HTTP = [Transport.STREAMABLE_HTTP]
MAX_REPORTED = 10
UNKNOWN_SESSION = "mcp-conformance-never-issued-session-0123456789abcdef"
PROGRESS_FIXTURE = "test_tool_with_progress"  # official runner fixture: progress notifications, then a result
RECONNECT_FIXTURE = "test_reconnection"  # official runner fixture: closes its SSE connection before answering
SETTLE = 0.3  # seconds we keep listening for a message that must not come (bounded, after a barrier)
LEFT_OPEN = 1.0  # seconds an SSE answer stayed open after its last response, until we closed it: not closed


def _ok(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


class _Tally:
    """At most MAX_REPORTED failed checks per requirement; a pass when none failed."""

    def __init__(self, ctx: ScenarioContext) -> None:
        self.ctx = ctx
        self.counts: dict[str, int] = {}
        self.checked: dict[str, int] = {}

    def seen(self, requirement: str, n: int = 1) -> None:
        self.checked[requirement] = self.checked.get(requirement, 0) + n

    def fail(self, requirement: str, *, peer: RawPeer | None = None, **kw: Any) -> None:
        self.seen(requirement)
        n = self.counts[requirement] = self.counts.get(requirement, 0) + 1
        if n <= MAX_REPORTED:
            self.ctx.check(requirement, False, peer=peer, **kw)

    def finish(self, requirement: str, passed: str, *, nothing: str | None = None) -> None:
        n = self.counts.get(requirement, 0)
        if n == 0:
            if self.checked.get(requirement, 0) == 0 and nothing is not None:
                self.ctx.not_reached(requirement, nothing)
            else:
                self.ctx.check(requirement, True, message=passed)
        elif n > MAX_REPORTED:
            self.ctx.note(f"{n} violations in all; the first {MAX_REPORTED} are reported", requirement=requirement)


def _streams(ctx: ScenarioContext) -> list[tuple[Connection, dict[str, StreamInfo]]]:
    return [(conn, streams_of(conn.transcript)) for conn in ctx.connections()]


def _session_of(peer: RawPeer) -> str | None:
    return getattr(peer.transport, "session_id", None)


def _note_seq(peer: RawPeer, text: str) -> list[int]:
    for entry in reversed(peer.transcript.entries):
        if entry.text and entry.text.startswith(text):
            return [entry.seq]
    return []


# -- POST answers --------------------------------------------------------------------------------------


def _error_body(body: bytes) -> bool:
    """The body is a JSON-RPC error response (a refusal told in JSON-RPC)."""
    env = parse_envelope(body) if body else None
    return env is not None and env.kind is Kind.ERROR


MALFORMED_NOTIFICATION = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "mcp-conformance: not an object"}


@scenario(requirements=[RCT, RCT26, A202, A202_26, NOT_ACC, NREF26, ENDPOINT26], transports=HTTP, order=900)
async def post_answers(ctx: ScenarioContext) -> None:
    """A request, a notification and a notification whose params are not an object POSTed on the
    shared session, then every POST of the run on this version: a request is answered with
    application/json or text/event-stream; a notification (up to 2025-11-25: or a response) the
    server accepts gets 202 Accepted with no body, one it refuses (cannot accept) an HTTP error
    status -- not a JSON-RPC error under a 2xx status."""
    peer = await ctx.connect()
    rct = RCT if ctx.applies(RCT) else RCT26
    acc = A202 if ctx.applies(A202) else A202_26
    rid = "mcp-conformance-post-probe"
    await peer.send_json(request_message(ctx.version, rid))
    try:
        await peer.expect_response(rid)
    except PeerError as exc:
        ctx.note(f"the request POSTed as a probe got no answer ({exc})", requirement=rct)
    # the same rule in two wordings: 2025-11-25 and earlier (a response or notification), 2026-07-28 (a notification)
    refusal = NREF26 if ctx.applies(NREF26) else NOT_ACC if ctx.applies(NOT_ACC) else None
    refusable = (Kind.NOTIFICATION,) if refusal == NREF26 else (Kind.NOTIFICATION, Kind.RESULT, Kind.ERROR)
    tally = _Tally(ctx)
    own: set[str] = set()
    if refusal is not None:
        bad: HttpExchange = await peer.send_json(MALFORMED_NOTIFICATION)
        own.add(bad.stream)
        _judge_notification_answer(tally, peer, bad, acc, refusal, "a notification whose params are not an object")
    ex: HttpExchange = await peer.send_json(notification_message(ctx.version))
    own.add(ex.stream)
    body = ex.body or b""
    if refusal is not None and _judge_refusal(tally, peer, ex, refusal, "a notifications/cancelled for a request never sent"):
        pass
    elif _ok(ex.status) and (ex.status != 202 or body or ex.is_sse):
        tally.fail(
            acc,
            peer=peer,
            problem="NotificationNot202",
            message=(
                f"a notification the server accepted was answered {ex.status}"
                + (f" with a body ({describe(ex)})" if body or ex.is_sse else "")
                + "; an accepted notification gets 202 Accepted with no body"
            ),
            expected="202 Accepted, no body",
            actual=describe(ex),
            entries=_note_seq(peer, f"POST {ex.url} -> {ex.status}"),
        )
    elif not _ok(ex.status):
        ctx.note(f"the notification probe was refused ({describe(ex)}): allowed ('If the server cannot accept the input, it MUST return an HTTP error status code')", requirement=acc)
    posts = 0
    endpoint = ENDPOINT26 if ctx.applies(ENDPOINT26) else None
    for conn, streams in _streams(ctx):
        for st in streams.values():
            if endpoint is not None and st.method == "POST" and st.status is not None:
                _judge_endpoint(tally, conn, st, ctx.version, endpoint)
            if st.method != "POST" or not _ok(st.status) or not st.sent or (conn.peer is peer and st.name in own):
                continue
            envs = st.sent_envelopes()
            if not envs or any(e.kind in (Kind.PARSE_ERROR, Kind.INVALID) for e in envs):
                continue  # not a well-formed message: nothing to judge here
            posts += 1
            if any(e.kind is Kind.REQUEST for e in envs):
                tally.seen(rct)
                if st.content_type not in (JSON_TYPE, SSE_TYPE):
                    what = ", ".join(sorted({e.method or "?" for e in envs if e.kind is Kind.REQUEST}))
                    tally.fail(
                        rct,
                        peer=conn.peer,
                        problem="WrongResponseContentType",
                        message=(
                            f"a POST carrying a request ({what}) on {conn.label} was answered {st.status} with "
                            f"Content-Type {st.response_headers.get('content-type')!r}; a request is answered with "
                            "application/json or text/event-stream"
                        ),
                        expected=[JSON_TYPE, SSE_TYPE],
                        actual=st.response_headers.get("content-type"),
                        entries=[st.note] if st.note is not None else [],
                    )
            else:
                tally.seen(acc)
                length = st.response_headers.get("content-length")
                has_body = (length not in (None, "0")) or st.is_sse
                refused = [m for m in st.messages() if m.kind is Kind.ERROR]
                if refusal is not None and any(e.kind in refusable for e in envs) and refused:
                    what = ", ".join(sorted({e.method or e.kind.value for e in envs}))
                    tally.fail(
                        refusal,
                        peer=conn.peer,
                        problem="NotificationRefusedWithSuccessStatus",
                        message=(
                            f"a POST of {what} on {conn.label} was refused with a JSON-RPC error under HTTP {st.status}; "
                            "input the server cannot accept gets an HTTP error status (e.g. 400)"
                        ),
                        expected="an HTTP error status (4xx or 5xx)",
                        actual={"status": st.status, "error": refused[0].error},
                        entries=[st.note] if st.note is not None else [],
                    )
                elif st.status != 202 or has_body:
                    what = ", ".join(sorted({e.method or e.kind.value for e in envs}))
                    tally.fail(
                        acc,
                        peer=conn.peer,
                        problem="NotificationNot202",
                        message=(
                            f"a POST of {what} on {conn.label} was accepted with {st.status}"
                            + (" and a body" if has_body else "")
                            + "; accepted notifications and responses get 202 Accepted with no body"
                        ),
                        expected="202 Accepted, no body",
                        actual={"status": st.status, "content-length": length, "content-type": st.response_headers.get("content-type")},
                        entries=[st.note] if st.note is not None else [],
                    )
    passed = f"{posts + 1} successful POST answer(s) checked"
    tally.finish(rct, passed)
    tally.finish(acc, passed)
    if endpoint is not None:
        tally.finish(endpoint, f"{tally.checked.get(endpoint, 0)} POST(s) of 2026-07-28 requests answered by the MCP endpoint",
                     nothing="no POST of a 2026-07-28 request to judge")
    if refusal is not None:
        tally.finish(refusal, "every notification or response the server refused got an HTTP error status",
                     nothing="the server accepted every notification and response POSTed during the run (202): none refused")


def _judge_endpoint(tally: _Tally, conn: Connection, st: StreamInfo, version: str, rid: str) -> None:
    """A POST of a request of this version: answered by an MCP endpoint (not a bare 404 / 405 / redirect)."""
    envs = st.sent_envelopes()
    if len(envs) != 1 or envs[0].kind is not Kind.REQUEST or st.request_headers.get("mcp-protocol-version") != version:
        return
    params = envs[0].params if isinstance(envs[0].params, dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    if meta.get(PROTOCOL_VERSION_KEY) != version:
        return
    tally.seen(rid)
    status = st.status or 0
    if (status in (404, 405) or 300 <= status < 400) and not st.messages():
        where = st.response_headers.get("location")
        tally.fail(
            rid,
            peer=conn.peer,
            problem="EndpointDoesNotServePost",
            message=(
                f"a POST of {envs[0].method} (id {id_repr(envs[0].id)}) on {conn.label} was answered {status} with no "
                "JSON-RPC message" + (f" (Location: {where})" if where else "")
                + "; the MCP endpoint serves every request over POST at its one path"
            ),
            expected="a JSON-RPC answer from the endpoint (any status this revision assigns)",
            actual={"status": status, "content-type": st.response_headers.get("content-type"), "location": where},
            entries=[st.note] if st.note is not None else [],
        )


def _judge_refusal(tally: _Tally, peer: RawPeer, ex: HttpExchange, rid: str, what: str) -> bool:
    """Judge ``rid`` on a notification POST's answer if it refused the notification; True if it did."""
    body = ex.body or b""
    if not _ok(ex.status) and ex.status >= 400:
        tally.seen(rid)
        return True
    if ex.status < 400 and _error_body(body):
        tally.fail(
            rid,
            peer=peer,
            problem="NotificationRefusedWithSuccessStatus",
            message=f"{what} was refused with a JSON-RPC error under HTTP {ex.status} ({describe(ex)}); a notification the server cannot accept gets an HTTP error status (e.g. 400)",
            expected="an HTTP error status (4xx or 5xx)",
            actual=describe(ex),
            entries=_note_seq(peer, f"POST {ex.url} -> {ex.status}"),
        )
        return True
    return False


def _judge_notification_answer(tally: _Tally, peer: RawPeer, ex: HttpExchange, acc: str, rid: str, what: str) -> None:
    """A notification probe: refused (judged by ``rid``) or accepted (202 with no body, ``acc``)."""
    if _judge_refusal(tally, peer, ex, rid, what):
        return
    tally.seen(acc)
    if ex.status != 202 or ex.body or ex.is_sse:
        tally.fail(
            acc,
            peer=peer,
            problem="NotificationNot202",
            message=f"{what} was answered {describe(ex)}; an accepted notification gets 202 Accepted with no body",
            expected="202 Accepted, no body",
            actual=describe(ex),
            entries=_note_seq(peer, f"POST {ex.url} -> {ex.status}"),
        )


# -- Accept and Content-Type (practice) ------------------------------------------------------------------


@scenario(requirements=[ACCEPT], transports=HTTP)
async def accept_without_event_stream(ctx: ScenarioContext) -> None:
    """A request POSTed with 'Accept: application/json' only (the client must list both types):
    refused with 406 Not Acceptable (practice; any 4xx passes)."""
    peer = await ctx.connect()
    async with Probe(peer, timeout=ctx.timeout) as probe:
        ex = await probe.post(request_message(ctx.version, "mcp-conformance-accept-probe"), headers={"Accept": JSON_TYPE})
    refused = 400 <= ex.status < 500
    ctx.check(
        ACCEPT,
        refused,
        problem="AcceptNotEnforced",
        message=(
            f"a POST whose Accept header lists only application/json was refused with {ex.status}"
            + ("" if ex.status == 406 else " (406 Not Acceptable is the usual answer)")
            if refused
            else f"a POST whose Accept header lacks text/event-stream was answered {describe(ex)}; "
            "the SDKs refuse it with 406 Not Acceptable (practice, not a sentence: a warning)"
        ),
        expected="406 Not Acceptable (any 4xx)",
        actual=describe(ex),
        entries=probe.entries(ex),
    )


@scenario(requirements=[CTYPE], transports=HTTP)
async def content_type_not_json(ctx: ScenarioContext) -> None:
    """A valid request POSTed with 'Content-Type: text/plain': refused with 415 Unsupported Media
    Type (practice; any 4xx passes)."""
    peer = await ctx.connect()
    async with Probe(peer, timeout=ctx.timeout) as probe:
        msg = request_message(ctx.version, "mcp-conformance-content-type-probe")
        ex = await probe.post(None, raw=dumps(msg), headers={"Content-Type": "text/plain"})
    refused = 400 <= ex.status < 500
    ctx.check(
        CTYPE,
        refused,
        problem="ContentTypeNotEnforced",
        message=(
            f"a POST with Content-Type text/plain was refused with {ex.status}"
            + ("" if ex.status == 415 else " (415 Unsupported Media Type is the usual answer)")
            if refused
            else f"a POST with Content-Type text/plain was answered {describe(ex)}; the SDKs refuse it with 415 "
            "(practice, not a sentence: a warning; text/plain is what a browser may POST cross-site without a preflight)"
        ),
        expected="415 Unsupported Media Type (any 4xx)",
        actual=describe(ex),
        entries=probe.entries(ex),
    )


# -- sessions ----------------------------------------------------------------------------------------------


@scenario(requirements=[SID_ASCII], transports=HTTP, until=LATEST_STATEFUL)
async def session_id_visible_ascii(ctx: ScenarioContext) -> None:
    """The session id issued with the InitializeResult: visible ASCII only (0x21 to 0x7E)."""
    peer = await ctx.connect()
    sid = _session_of(peer)
    if sid is None:
        ctx.skip("the server issued no Mcp-Session-Id at initialization (session ids are optional)")
    bad = sorted({f"U+{ord(c):04X}" for c in sid if not 0x21 <= ord(c) <= 0x7E})
    ctx.check(
        SID_ASCII,
        not bad,
        problem="SessionIdNotVisibleAscii",
        message=(
            f"the session id {sid!r} contains characters outside 0x21..0x7E: {', '.join(bad)}"
            if bad
            else f"the session id ({len(sid)} characters) is visible ASCII"
        ),
        expected="visible ASCII characters only (0x21 to 0x7E)",
        actual=sid,
        entries=_note_seq(peer, "session id captured"),
    )


@scenario(requirements=[SID_MISSING], transports=HTTP, until=LATEST_STATEFUL)
async def session_id_missing(ctx: ScenarioContext) -> None:
    """A request without the Mcp-Session-Id header on a server that issued one: 400 Bad Request
    (a server that serves it does not require a session id)."""
    peer = await ctx.connect()
    if _session_of(peer) is None:
        ctx.skip("the server issued no Mcp-Session-Id at initialization: it does not require one")
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        ex = await probe.post(request_message(ctx.version, "mcp-conformance-no-session-probe"))
    if _ok(ex.status):
        ctx.check(SID_MISSING, True, message=f"a request without a session id was served ({ex.status}): the server does not require one", entries=probe.entries(ex))
        return
    ctx.check(
        SID_MISSING,
        ex.status == 400,
        problem="MissingSessionNot400",
        message=f"a request without the Mcp-Session-Id header was refused with {describe(ex)}; servers that require a session id answer 400 Bad Request",
        expected="400 Bad Request",
        actual=describe(ex),
        entries=probe.entries(ex),
    )


@scenario(requirements=[SID_UNKNOWN], transports=HTTP, until=LATEST_STATEFUL)
async def session_id_unknown(ctx: ScenarioContext) -> None:
    """A request carrying a session id the server never issued: 404 Not Found, so that the client
    starts a new session."""
    peer = await ctx.connect()
    if _session_of(peer) is None:
        ctx.skip("the server issued no Mcp-Session-Id at initialization: no sessions to end")
    async with Probe(peer, timeout=ctx.timeout) as probe:
        probe.transport.session_id = UNKNOWN_SESSION
        ex = await probe.post(request_message(ctx.version, "mcp-conformance-unknown-session-probe"))
    ctx.check(
        SID_UNKNOWN,
        ex.status == 404,
        problem="UnknownSessionNot404",
        message=(
            f"a request with the session id {UNKNOWN_SESSION!r}, which the server never issued, was answered "
            f"{describe(ex)}; a session the server does not have (never issued, or ended) gets 404 Not Found, the "
            "status on which a client starts a new session"
        ),
        expected="404 Not Found",
        actual=describe(ex),
        entries=probe.entries(ex),
    )


@scenario(requirements=[SID_UNKNOWN], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def session_delete(ctx: ScenarioContext) -> None:
    """DELETE ends a session (or 405: the server does not let clients end it); after a 2xx, a
    request with that session id gets 404 Not Found."""
    peer = await ctx.connect(fresh=True)
    sid = _session_of(peer)
    if sid is None:
        ctx.skip("the server issued no Mcp-Session-Id at initialization: no session to delete")
    async with Probe(peer, timeout=ctx.timeout) as probe:
        ex = await probe.delete()
        if ex.status == 405:
            ctx.not_reached(SID_UNKNOWN, "DELETE was answered 405 Method Not Allowed: the server does not let clients end sessions (MAY)")
            return
        if not _ok(ex.status):
            ctx.not_reached(SID_UNKNOWN, f"DELETE was answered {describe(ex)}, neither 2xx (session ended) nor 405; no session to probe")
            return
        after = await probe.post(request_message(ctx.version, "mcp-conformance-deleted-session-probe"))
    ctx.check(
        SID_UNKNOWN,
        after.status == 404,
        problem="EndedSessionNot404",
        message=(
            f"DELETE of session {sid!r} was answered {ex.status}, yet a request with that session id was then answered "
            f"{describe(after)}; requests for an ended session get 404 Not Found"
        ),
        expected="404 Not Found",
        actual=describe(after),
        entries=probe.entries(ex, after),
    )


MIN_SESSION_ID = 16  # characters: 128 random bits take 22 in base64url, 32 in hex


def _issued_session_ids(ctx: ScenarioContext) -> list[tuple[str, Connection, int]]:
    """(session id, connection, transcript seq) of every session the server issued this run."""
    out = []
    for conn in ctx.connections():
        for e in conn.transcript.entries:
            sid = e.meta.get("session_id")
            if isinstance(sid, str) and (e.text or "").endswith("session id captured"):
                out.append((sid, conn, e.seq))
    return out


@scenario(requirements=[SID_SECURE], transports=HTTP, until=LATEST_STATEFUL, order=900)
async def session_id_secure(ctx: ScenarioContext) -> None:
    """Every session id the server issued during the run (a new session per connection): unique,
    not short, not a counter or a timestamp (ids that differ only in their digits)."""
    await ctx.connect()
    issued = _issued_session_ids(ctx)
    if not issued:
        ctx.skip("the server issued no Mcp-Session-Id during the run (session ids are optional)")
    tally = _Tally(ctx)
    seen: dict[str, tuple[Connection, int]] = {}
    skeletons: dict[str, tuple[str, Connection, int]] = {}
    for sid, conn, seq in issued:
        tally.seen(SID_SECURE)
        problem = None
        if sid in seen:
            problem = ("SessionIdReused", f"the session id {sid!r} was issued twice (on {seen[sid][0].label} and {conn.label})", [seen[sid][1], seq])
        elif len(sid) < MIN_SESSION_ID:
            problem = ("SessionIdShort", f"the session id {sid!r} issued on {conn.label} has {len(sid)} characters, too few for 128 random bits", [seq])
        else:
            skeleton = re.sub(r"[0-9]", "", sid)
            other = skeletons.get(skeleton)
            if other is not None and other[0] != sid:
                problem = ("SessionIdGuessable", f"the session ids {other[0]!r} and {sid!r} differ only in their digits (a counter or a timestamp: the next one can be guessed)", [other[2], seq])
            skeletons.setdefault(skeleton, (sid, conn, seq))
        seen.setdefault(sid, (conn, seq))
        if problem is not None:
            tally.fail(
                SID_SECURE,
                peer=conn.peer,
                problem=problem[0],
                message=problem[1],
                expected="a globally unique, cryptographically secure session id (e.g. a securely generated UUID)",
                actual=sid,
                entries=problem[2],
            )
    tally.finish(SID_SECURE, f"{len(issued)} session id(s), distinct, at least {MIN_SESSION_ID} characters, none a counter")


# -- MCP-Protocol-Version ------------------------------------------------------------------------------------


@scenario(requirements=[PV], transports=HTTP)
async def protocol_version_header(ctx: ScenarioContext) -> None:
    """Requests on the session with an unsupported (1900-01-01) and an invalid (not-a-version)
    MCP-Protocol-Version header: 400 Bad Request each."""
    peer = await ctx.connect()
    async with Probe(peer, timeout=ctx.timeout) as probe:
        for n, value in enumerate(("1900-01-01", "not-a-version")):
            ex = await probe.post(request_message(ctx.version, f"mcp-conformance-version-header-probe-{n}"), headers={"MCP-Protocol-Version": value})
            ctx.check(
                PV,
                ex.status == 400,
                problem="BadVersionHeaderNot400",
                message=f"a request with MCP-Protocol-Version: {value} was answered {describe(ex)}",
                expected="400 Bad Request",
                actual=describe(ex),
                entries=probe.entries(ex),
            )


@scenario(requirements=[PV_ABSENT], transports=HTTP, since="2025-06-18", until=LATEST_STATEFUL)
async def protocol_version_header_absent(ctx: ScenarioContext) -> None:
    """A ping on the session without the MCP-Protocol-Version header: served (the server knows the
    session's negotiated version; a client of 2025-03-26 never sends the header)."""
    peer = await ctx.connect()
    if _session_of(peer) is None:
        ctx.skip("the server issued no Mcp-Session-Id: without a session it would assume 2025-03-26, which it may not support")
    async with Probe(peer, timeout=ctx.timeout) as probe:
        probe.transport.protocol_version = None
        ex = await probe.post(request_message(ctx.version, "mcp-conformance-no-version-header-probe"))
    ctx.check(
        PV_ABSENT,
        _ok(ex.status),
        problem="AbsentVersionHeaderRefused",
        message=(
            f"a ping on the session without MCP-Protocol-Version was answered {describe(ex)}"
            + ("" if _ok(ex.status) else "; the server knows the version negotiated for the session (or should assume 2025-03-26), so the missing header is no reason to refuse")
        ),
        expected="served (2xx), with the session's negotiated version",
        actual=describe(ex),
        entries=probe.entries(ex),
    )


# -- Origin -------------------------------------------------------------------------------------------------


@scenario(requirements=[ORIGIN_V, ORIGIN_403], transports=HTTP)
async def foreign_origin(ctx: ScenarioContext) -> None:
    """The handshake request (initialize, or server/discover) POSTed with 'Origin:
    http://mcp-conformance.invalid' to a server on a loopback address: refused (403 Forbidden
    where the revision words it)."""
    peer = await ctx.connect()
    url = peer.transport.url  # type: ignore[attr-defined]
    if not is_loopback(url):
        ctx.skip(f"{url} is not a loopback address: which origins are valid depends on the deployment")
    vs = spec(ctx.version)
    if vs.handshake:
        msg: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": "mcp-conformance-origin-probe",
            "method": "initialize",
            "params": {"protocolVersion": ctx.version, "capabilities": {}, "clientInfo": {"name": "mcp-conformance", "version": "0.1.0"}},
        }
    else:
        msg = request_message(ctx.version, "mcp-conformance-origin-probe")
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        try:
            ex = await probe.post(msg, headers={"Origin": FOREIGN_ORIGIN})
        except TransportError as exc:
            if isinstance(exc, TransportTimeout):
                raise
            for rid in (ORIGIN_V, ORIGIN_403):
                ctx.check(rid, True, message=f"a POST from Origin {FOREIGN_ORIGIN} was refused by closing the connection ({exc})")
            return
        minted = ex.headers.get("mcp-session-id")
        if _ok(ex.status) and minted:
            probe.transport.session_id = minted
            try:  # tidy up the session the server should not have opened
                await probe.delete()
            except TransportError:
                pass  # best effort
    served = _ok(ex.status)
    ctx.check(
        ORIGIN_V,
        400 <= ex.status < 500,
        problem="ForeignOriginServed",
        message=(
            f"a POST from Origin {FOREIGN_ORIGIN} to a server on a loopback address was answered {describe(ex)}; "
            + ("the server did not validate the Origin (the DNS rebinding case)" if served else "expected a refusal (4xx)")
        ),
        expected="a 4xx refusal (the status is not worded before 2025-11-25)",
        actual=describe(ex),
        entries=probe.entries(ex),
    )
    ctx.check(
        ORIGIN_403,
        ex.status == 403,
        problem="ForeignOriginNot403",
        message=f"a POST from Origin {FOREIGN_ORIGIN} to a server on a loopback address was answered {describe(ex)}",
        expected="403 Forbidden",
        actual=describe(ex),
        entries=probe.entries(ex),
    )


# -- binding -------------------------------------------------------------------------------------------------

BIND_TIMEOUT = 1.0  # seconds for one TCP connection attempt (a refusal comes at once)


def _local_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback (the source address of its default route,
    and what its host name resolves to)."""
    import socket

    found: set[str] = set()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # UDP: no packet is sent; the kernel picks the source address
            found.add(s.getsockname()[0])
    except OSError:
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM):
            found.add(str(info[4][0]))
    except OSError:
        pass
    return sorted(a for a in found if not a.startswith("127.") and a != "0.0.0.0")


async def _accepts(host: str, port: int) -> bool:
    """A TCP connection to host:port is accepted within BIND_TIMEOUT (then closed at once)."""
    try:
        with anyio.fail_after(BIND_TIMEOUT):
            stream = await anyio.connect_tcp(host, port)
    except (OSError, TimeoutError):
        return False
    await stream.aclose()
    return True


@scenario(requirements=[BIND], transports=[Transport.STREAMABLE_HTTP, Transport.SSE])
async def bind_localhost(ctx: ScenarioContext) -> None:
    """A server on a loopback address: its port on this machine's other addresses (non-loopback
    IPv4 ones, and 127.0.0.2, which a socket bound to all interfaces also accepts) refuses TCP
    connections."""
    import httpx

    peer = await ctx.connect()
    url = getattr(peer.transport, "url", None)
    if not isinstance(url, str) or not is_loopback(url):
        ctx.skip(f"{url} is not a loopback address: the server does not run on this machine (as far as the suite can tell)")
    parsed = httpx.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    others = await anyio.to_thread.run_sync(_local_addresses, abandon_on_cancel=True)
    if (parsed.host or "").startswith("127."):
        others = ["127.0.0.2" if parsed.host != "127.0.0.2" else "127.0.0.3", *others]
    open_on = [a for a in others if await _accepts(a, port)]
    ctx.check(
        BIND,
        not open_on,
        problem="ListensBeyondLocalhost",
        message=(
            f"the server at {url} also accepts TCP connections on {', '.join(f'{a}:{port}' for a in open_on)}: it listens "
            "beyond localhost (bound to all interfaces?)"
            if open_on
            else f"port {port} refuses connections on {', '.join(others) or 'the other addresses'}: bound to localhost only"
        ),
        expected=f"connections refused on {', '.join(others)}",
        actual=open_on,
    )


# -- the GET stream -----------------------------------------------------------------------------------------


@scenario(requirements=[GET_SSE, GET_NO_RESP], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def get_stream(ctx: ScenarioContext) -> None:
    """GET on the endpoint with the session id: an SSE stream or 405; while it is open, requests
    on the session are answered on their POSTs and no response appears on the GET stream."""
    peer = await ctx.connect(fresh=True)
    transport: Any = peer.transport
    g = await transport.open_get_stream()
    g_entries = _note_seq(peer, f"GET {g.url} -> {g.status}")
    is_stream = _ok(g.status) and g.content_type == SSE_TYPE
    ctx.check(
        GET_SSE,
        g.status == 405 or is_stream,
        problem="GetNotSseOr405",
        message=f"GET with Accept: text/event-stream and the session id was answered {describe(g)}",
        expected="200 with Content-Type text/event-stream, or 405 Method Not Allowed",
        actual=describe(g),
        entries=g_entries,
    )
    if not is_stream:
        ctx.not_reached(GET_NO_RESP, f"the GET opened no SSE stream ({g.status})")
        return
    try:
        for n in range(2):
            rid = await peer.request("ping", id=f"mcp-conformance-get-stream-{n}")
            await peer.expect_response(rid)
    except PeerError as exc:
        ctx.note(f"requests sent while the GET stream was open got no answer ({exc})", requirement=GET_NO_RESP)
    await wait_until(lambda: g.done.is_set(), SETTLE)  # a stray message, if any, has had time to come
    await transport.close_stream(g.stream)
    stray = [e for e in peer.transcript.entries if e.direction == "in" and e.meta.get("stream") == g.stream and is_response(e.envelope)]
    ctx.check(
        GET_NO_RESP,
        not stray,
        problem="ResponseOnGetStream",
        message=(
            f"the GET stream ({g.stream}) carried {len(stray)} JSON-RPC response(s) although nothing was resumed: "
            + ", ".join(f"id {id_repr(e.envelope.id)}" for e in stray[:3])
            if stray
            else f"no response on the GET stream ({g.stream}) while requests were answered on their POSTs"
        ),
        expected="requests and notifications only",
        actual=[e.envelope.summary() for e in stray[:3]],
        entries=[e.seq for e in stray[:3]] or g_entries,
    )


@scenario(requirements=[GETDEL26], transports=HTTP, since="2026-07-28")
async def get_delete_stateless(ctx: ScenarioContext) -> None:
    """On a server that supports only 2026-07-28 (it refuses a legacy initialize): GET and DELETE
    on the endpoint, tagged MCP-Protocol-Version: 2026-07-28, get 405 Method Not Allowed."""
    peer = await ctx.connect()
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        try:
            legacy = await _speaks_initialize(probe, ctx.timeout)
        except PeerSilent as exc:
            ctx.skip(f"a legacy client's initialize was not answered ({exc}), so whether the server also speaks "
                     "initialize-based revisions is unknown; the sentence is for servers that support only 2026-07-28")
        if legacy:
            ctx.skip(f"the server also speaks initialize-based revisions ({legacy}); the sentence is for servers that support only 2026-07-28")
        g = await probe.get()
        await probe.close_stream(g)
        d = await probe.delete()
    for method, ex in (("GET", g), ("DELETE", d)):
        ctx.check(
            GETDEL26,
            ex.status == 405,
            problem="Not405",
            message=f"{method} on the MCP endpoint with MCP-Protocol-Version: {ctx.version} was answered {describe(ex)}",
            expected="405 Method Not Allowed",
            actual=describe(ex),
            entries=probe.entries(ex),
        )


async def _speaks_initialize(probe: Probe, timeout: float) -> str | None:
    """POST a legacy client's initialize (no 2026-07-28 headers): the protocol version the server
    answered with, when it did (its session, if any, is deleted again); else None."""
    rid = "mcp-conformance-era-probe"
    msg = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {"protocolVersion": LATEST_STATEFUL, "capabilities": {}, "clientInfo": {"name": "mcp-conformance", "version": "0.1.0"}},
    }
    ex = await probe.post(msg, headers={"MCP-Protocol-Version": None, "Mcp-Method": None, "Mcp-Name": None})
    probe.transport.session_id = None  # the transport keeps a minted session id; the probes after this one carry none
    if not _ok(ex.status):
        return None

    def answer() -> Envelope | None:
        if ex.body:
            return parse_envelope(ex.body)
        return next((i.envelope for i in probe.inbound if i.envelope is not None and i.envelope.id == rid), None)

    await wait_until(lambda: answer() is not None or ex.done.is_set() and not ex.is_sse, timeout)
    env = answer()
    result = env.result if env is not None and env.kind is Kind.RESULT else None
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    sid = ex.headers.get("mcp-session-id")
    if sid:
        try:
            await probe.delete(headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": str(version) if version else None})
        except TransportError:
            pass  # best effort
    return version if isinstance(version, str) else None


# -- SSE streams -----------------------------------------------------------------------------------------------


async def _sse_request(peer: RawPeer, version: str, tools: set[str], tag: str) -> tuple[Any, HttpExchange, str | None]:
    """POST a request likely to be answered with an SSE stream: ping first (servers that always
    stream), else the official progress fixture with a progressToken.  (id, exchange, token)."""
    rid = f"mcp-conformance-{tag}-ping"
    ex = await peer.send_json(request_message(version, rid))
    if ex.is_sse or PROGRESS_FIXTURE not in tools:
        return rid, ex, None
    await peer.expect_response(rid)
    rid = f"mcp-conformance-{tag}-progress"
    token = f"mcp-conformance-{tag}-token"
    params = {"name": PROGRESS_FIXTURE, "arguments": {}, "_meta": {"progressToken": token}}
    ex = await peer.send_json({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    return rid, ex, token


def _first_event_primes(ex: HttpExchange) -> bool:
    first = next(iter(ex.sse_events), None)
    return first is not None and first.id is not None and first.data == ""


@scenario(requirements=[PRIMING, BROADCAST], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def sse_streams(ctx: ScenarioContext) -> None:
    """With a GET stream open (if offered), several requests at once (ping; the official progress
    fixture with a progressToken when listed): every SSE answer starts with a priming event
    (2025-11-25), and no response or progress notification arrives on more than one stream."""
    peer = await ctx.connect(fresh=True)
    transport: Any = peer.transport
    tools = await official_tools(peer, ctx.server_capabilities, timeout=ctx.timeout)
    g = await transport.open_get_stream()
    if not (_ok(g.status) and g.is_sse):
        g = None
    sent: list[tuple[Any, HttpExchange, str | None]] = []

    async def one(tag: str) -> None:
        sent.append(await _sse_request(peer, ctx.version, tools, tag))

    try:
        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(one, f"streams-{n}")
        for rid, _, _ in sent:
            await peer.expect_response(rid)
    except PeerError as exc:
        ctx.note(f"not every request of the probe was answered ({exc})")
    if g is not None:
        await wait_until(lambda: g.done.is_set(), SETTLE)
        await transport.close_stream(g.stream)
    exchanges = [ex for _, ex, _ in sent if ex.is_sse]
    if ctx.applies(PRIMING):
        if not exchanges:
            ctx.not_reached(PRIMING, "every request of the probe was answered with application/json (SSE is optional)")
        for ex in exchanges:
            first = next(iter(ex.sse_events), None)
            ctx.check(
                PRIMING,
                _first_event_primes(ex),
                problem="NoPrimingEvent",
                message=(
                    f"the SSE answer {ex.stream} starts with "
                    + (f"an event with id {first.id!r} and data {first.data[:80]!r}" if first is not None else "no event at all")
                    + ("" if _first_event_primes(ex) else "; it should start with an event that has an id and empty data")
                ),
                expected={"id": "<event id>", "data": ""},
                actual=None if first is None else {"id": first.id, "event": first.event, "data": first.data[:200]},
                entries=_note_seq(peer, f"POST {ex.url} -> {ex.status}"),
            )
    _judge_broadcast(ctx, [(_conn_of(ctx, peer), streams_of(peer.transcript))])


def _answered_on(peer: RawPeer, rid: Any, stream: str) -> bool:
    key = id_key(rid)
    return any(
        e.direction == "in" and e.meta.get("stream") == stream and is_response(e.envelope) and id_key(e.envelope.id) == key
        for e in peer.transcript.entries
    )


@scenario(requirements=[EARLY, EVENTUAL, AFTER, AFTER_0326], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def sse_answer(ctx: ScenarioContext) -> None:
    """A request likely answered with an SSE stream (ping, else the official progress fixture):
    the stream carries the response (2025-11-25: on the stream or on its resumption), then the
    server closes it."""
    peer = await ctx.connect(fresh=True)
    transport: Any = peer.transport
    after = AFTER if ctx.applies(AFTER) else AFTER_0326
    early = EARLY if ctx.applies(EARLY) else EVENTUAL
    tools = await official_tools(peer, ctx.server_capabilities, timeout=ctx.timeout)
    rid, ex, _ = await _sse_request(peer, ctx.version, tools, "sse-answer")
    entries = _note_seq(peer, f"POST {ex.url} -> {ex.status}")
    if not ex.is_sse:
        ctx.skip(f"the request was answered {describe(ex)}, not with an SSE stream (SSE is optional"
                 + ("" if PROGRESS_FIXTURE in tools else f"; the server does not list the official fixture {PROGRESS_FIXTURE!r}") + ")")
    await wait_until(lambda: ex.done.is_set() or _answered_on(peer, rid, ex.stream), ctx.timeout)
    if _answered_on(peer, rid, ex.stream):
        ctx.check(early, True, message=f"the SSE answer {ex.stream} carried the response to {rid!r}", entries=entries)
        closed = await wait_until(lambda: ex.done.is_set(), ctx.timeout)  # at once, from a server that closes it
        ctx.check(
            after,
            closed and ex.closed_by == "server",
            problem="SseStreamLeftOpen",
            message=(
                f"the server closed {ex.stream} after its response"
                if closed and ex.closed_by == "server"
                else f"the SSE answer {ex.stream} was still open {ctx.timeout:g} s after its response ({rid!r}); the server should close it"
                if not closed else f"the SSE answer {ex.stream} ended ({ex.closed_by}) after its response"
            ),
            expected="the server closes the SSE stream after the response",
            actual={"closed_by": ex.closed_by if closed else "still open"},
            entries=entries,
        )
        return
    ctx.not_reached(after, f"no response to {rid!r} arrived on {ex.stream}")
    if not ex.done.is_set():
        ctx.not_reached(early, f"no response to {rid!r} on {ex.stream} within {ctx.timeout:g} s and the stream is still open")
        return
    if ex.closed_by != "server":
        ctx.not_reached(early, f"the SSE answer {ex.stream} ended ({ex.closed_by}) before the response to {rid!r}")
        return
    if early == EARLY:
        ctx.check(
            EARLY,
            False,
            problem="SseStreamClosedBeforeResponse",
            message=f"the server ended the SSE answer {ex.stream} after {len(ex.sse_events)} event(s), without the response to {rid!r}",
            expected="the response on the stream before the server closes it",
            actual=[{"id": ev.id, "data": ev.data[:80]} for ev in ex.sse_events[:5]],
            entries=entries,
        )
        return
    # 2025-11-25: the server may close the connection early; a polling client resumes
    got = False
    resumed = None
    if ex.last_event_id is not None:
        r = await transport.open_get_stream(last_event_id=ex.last_event_id)
        resumed = describe(r)
        try:
            if _ok(r.status) and r.is_sse:
                got = await wait_until(lambda: _answered_on(peer, rid, r.stream) or r.done.is_set(), ctx.timeout) and _answered_on(peer, rid, r.stream)
        finally:
            await transport.close_stream(r.stream)
    ctx.check(
        EVENTUAL,
        got,
        problem="SseResponseNeverSent",
        message=(
            f"the server ended the SSE answer {ex.stream} before the response to {rid!r}; "
            + ("it had no event id to resume from" if ex.last_event_id is None
               else f"resuming with Last-Event-ID {ex.last_event_id!r} was answered {resumed}"
               + ("" if got else f" and brought no response within {ctx.timeout:g} s"))
        ),
        expected="the response on the stream, or on its resumption",
        actual=[{"id": ev.id, "data": ev.data[:80]} for ev in ex.sse_events[:5]],
        entries=entries,
    )


@scenario(requirements=[NOT_CANCEL], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def sse_disconnect(ctx: ScenarioContext) -> None:
    """The official progress fixture's SSE answer is disconnected after its first event with an
    id, then resumed from that event: the response still comes (a disconnection is no
    cancellation)."""
    peer = await ctx.connect(fresh=True)
    transport: Any = peer.transport
    tools = await official_tools(peer, ctx.server_capabilities, timeout=ctx.timeout)
    if PROGRESS_FIXTURE not in tools:
        ctx.skip(f"the server does not list the official fixture {PROGRESS_FIXTURE!r}, a request that takes a while")
    rid = "mcp-conformance-disconnect-probe"
    params = {"name": PROGRESS_FIXTURE, "arguments": {}, "_meta": {"progressToken": "mcp-conformance-disconnect-token"}}
    ex: HttpExchange = await peer.send_json({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    entries = _note_seq(peer, f"POST {ex.url} -> {ex.status}")
    if not ex.is_sse:
        ctx.skip(f"{PROGRESS_FIXTURE} was answered {describe(ex)}, not with an SSE stream: nothing to disconnect")
    await wait_until(lambda: ex.done.is_set() or any(ev.id is not None for ev in ex.sse_events), ctx.timeout)
    first = next((ev.id for ev in ex.sse_events if ev.id is not None), None)
    if first is None:
        ctx.skip(f"the SSE answer {ex.stream} carries no event id: it cannot be resumed (event ids are optional)")
    await transport.close_stream(ex.stream)
    if _answered_on(peer, rid, ex.stream):
        ctx.not_reached(NOT_CANCEL, f"the response to {rid!r} came before the connection could be dropped")
        return
    r = await transport.open_get_stream(last_event_id=first)
    entries += _note_seq(peer, f"GET {r.url} -> {r.status}")
    if not (_ok(r.status) and r.is_sse):
        ctx.not_reached(NOT_CANCEL, f"resuming with Last-Event-ID {first!r} was answered {describe(r)}: the server does not resume (optional)")
        return
    try:
        await wait_until(lambda: r.done.is_set() or _answered_on(peer, rid, r.stream), ctx.timeout)
    finally:
        await transport.close_stream(r.stream)
    got = _answered_on(peer, rid, r.stream)
    shown = [e for e in peer.transcript.entries if e.direction == "in" and e.meta.get("stream") == r.stream]
    if not got and not shown:
        ctx.not_reached(NOT_CANCEL, f"the stream resumed from {first!r} carried nothing: whether the server dropped the request or does not replay cannot be told")
        return
    ctx.check(
        NOT_CANCEL,
        got,
        problem="DisconnectTakenAsCancel",
        message=(
            f"after the connection of {ex.stream} was dropped, the stream resumed from {first!r} carried the response to {rid!r}"
            if got
            else f"after the connection of {ex.stream} was dropped, the stream resumed from {first!r} carried {len(shown)} message(s) "
            f"but not the response to {rid!r} ({'the server ended it' if r.done.is_set() else f'none within {ctx.timeout:g} s'}): "
            "the server seems to have taken the disconnection as a cancellation"
        ),
        expected="the response on the resumed stream",
        actual=[e.envelope.summary() for e in shown[:4] if e.envelope is not None],
        entries=entries,
    )


def _conn_of(ctx: ScenarioContext, peer: RawPeer) -> Connection:
    return next(c for c in ctx.connections() if c.peer is peer)


def _judge_broadcast(ctx: ScenarioContext, conns: list[tuple[Connection, dict[str, StreamInfo]]], tally: _Tally | None = None) -> None:
    """Per connection: no response, server request or progress notification (for one of our
    tokens) arrives on more than one stream (streams resumed with Last-Event-ID excepted)."""
    own = tally is None
    tally = tally or _Tally(ctx)
    messages = 0
    for conn, streams in conns:
        where: dict[tuple[str, str], dict[str, int]] = {}
        for st in streams.values():
            if st.resumes is not None:
                continue
            for entry in st.inbound:
                env = entry.envelope
                if env is None:
                    continue
                for item in env.items if env.kind is Kind.BATCH else [env]:
                    key = _identity(item)
                    if key is None:
                        continue
                    messages += 1
                    where.setdefault(key, {}).setdefault(st.name, entry.seq)
        for key, seen in where.items():
            if len(seen) > 1:
                tally.fail(
                    BROADCAST,
                    peer=conn.peer,
                    problem="MessageBroadcast",
                    message=f"the same {key[0]} ({key[1]}) arrived on {len(seen)} streams of {conn.label}: {', '.join(seen)}",
                    expected="each message on one stream only",
                    actual=sorted(seen),
                    entries=list(seen.values()),
                )
            else:
                tally.seen(BROADCAST)
    if own:
        tally.finish(BROADCAST, f"{messages} message(s) checked", nothing="no response, server request or progress notification arrived over HTTP")


def _identity(env: Any) -> tuple[str, str] | None:
    if env.kind in (Kind.RESULT, Kind.ERROR) and env.id is not None and env.id is not MISSING:
        return "response", f"id {id_key(env.id)}"
    if env.kind is Kind.REQUEST:
        return "server request", f"id {id_key(env.id)}"
    if env.kind is Kind.NOTIFICATION and env.method == "notifications/progress" and isinstance(env.params, dict):
        token = env.params.get("progressToken")
        if isinstance(token, str) and token.startswith("mcp-conformance-"):
            return "progress notification", f"token {token!r}, progress {env.params.get('progress')!r}"
    return None


@scenario(requirements=[RETRY], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def sse_reconnection(ctx: ScenarioContext) -> None:
    """The official fixture test_reconnection (when listed) closes its SSE connection before
    answering: a retry field comes before the close; the answer is then fetched with
    Last-Event-ID."""
    peer = await ctx.connect(fresh=True)
    transport: Any = peer.transport
    tools = await official_tools(peer, ctx.server_capabilities, timeout=ctx.timeout)
    if RECONNECT_FIXTURE not in tools:
        ctx.not_reached(RETRY, f"the server does not list the official fixture tool {RECONNECT_FIXTURE!r}, which closes its connection early on purpose")
        return
    rid = "mcp-conformance-reconnection"
    ex: HttpExchange = await peer.send_json({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": RECONNECT_FIXTURE, "arguments": {}}})
    entries = _note_seq(peer, f"POST {ex.url} -> {ex.status}")
    if not ex.is_sse:
        ctx.not_reached(RETRY, f"{RECONNECT_FIXTURE} was answered {describe(ex)}, not with an SSE stream")
        return
    await ex.wait_done(ctx.timeout)
    answered = any(is_response(e.envelope) and e.meta.get("stream") == ex.stream for e in peer.transcript.entries if e.direction == "in")
    if answered or ex.closed_by != "server":
        ctx.not_reached(RETRY, f"the {RECONNECT_FIXTURE} stream was not closed by the server before its answer")
    else:
        retried = [ev.retry for ev in ex.sse_events if ev.retry is not None]
        ctx.check(
            RETRY,
            bool(retried),
            problem="NoRetryBeforeClose",
            message=(
                f"the server closed the connection of {ex.stream} before answering, after {len(ex.sse_events)} event(s)"
                + (f", with retry {retried[0]} ms" if retried else ", none with a retry field")
            ),
            expected="an SSE event with a retry field before the connection closes",
            actual=[{"id": ev.id, "event": ev.event, "retry": ev.retry, "data": ev.data[:80]} for ev in ex.sse_events[:5]],
            entries=entries,
        )
        if ex.last_event_id is not None:
            r = await transport.open_get_stream(last_event_id=ex.last_event_id)
            try:
                if _ok(r.status):
                    await peer.expect_response(rid)
            except PeerError as exc:
                ctx.note(f"the answer did not arrive after resuming with Last-Event-ID {ex.last_event_id!r} ({exc})")
            finally:
                await transport.close_stream(r.stream)


@scenario(requirements=[RESUME], transports=HTTP, until=LATEST_STATEFUL, connection=ConnectionKind.FRESH)
async def resume_same_stream(ctx: ScenarioContext) -> None:
    """Two SSE answers A and B; then GET with Last-Event-ID set to A's first event id: what is
    replayed belongs to A, never B's messages."""
    peer = await ctx.connect(fresh=True)
    transport: Any = peer.transport
    tools = await official_tools(peer, ctx.server_capabilities, timeout=ctx.timeout)
    try:
        a_id, a, _ = await _sse_request(peer, ctx.version, tools, "resume-a")
        await peer.expect_response(a_id)
        ids = [ev.id for ev in a.sse_events if ev.id is not None]
        if not a.is_sse:
            ctx.skip("requests are answered with application/json: no SSE stream to resume (SSE is optional)")
        if not ids:
            ctx.skip(f"the SSE answer {a.stream} carries no event ids: the server does not offer resumption (event ids are optional)")
        b_id, b, _ = await _sse_request(peer, ctx.version, tools, "resume-b")
        await peer.expect_response(b_id)
    except PeerError as exc:
        ctx.not_reached(RESUME, f"the requests that open the streams were not answered ({exc})")
        return
    last = ids[0]
    r = await transport.open_get_stream(last_event_id=last)
    entries = _note_seq(peer, f"GET {r.url} -> {r.status}")
    if not (_ok(r.status) and r.is_sse):
        ctx.skip(f"GET with Last-Event-ID {last!r} was answered {describe(r)}: the server does not replay (MAY)")
    await wait_until(lambda: r.done.is_set(), min(ctx.timeout, 1.0))
    await transport.close_stream(r.stream)
    a_requests = {id_key(a_id)}
    foreign = [
        e
        for e in peer.transcript.entries
        if e.direction == "in" and e.meta.get("stream") == r.stream and is_response(e.envelope) and id_key(e.envelope.id) not in a_requests
    ]
    ctx.check(
        RESUME,
        not foreign,
        problem="ReplayFromOtherStream",
        message=(
            f"resuming {a.stream} (Last-Event-ID {last!r}) replayed {len(foreign)} response(s) to requests sent on other "
            f"streams: " + ", ".join(f"id {id_repr(e.envelope.id)}" for e in foreign[:3])
            if foreign
            else f"resuming {a.stream} (Last-Event-ID {last!r}) replayed nothing from {b.stream} or any other stream"
        ),
        expected=f"only messages of {a.stream} (the response to id {a_id!r} and its notifications)",
        actual=[e.envelope.summary() for e in foreign[:3]],
        entries=[e.seq for e in foreign[:3]] or entries,
    )


# -- run-wide stream checks -----------------------------------------------------------------------------------


def _announced_version(st: StreamInfo) -> str | None:
    """The protocol version a POST announced: its MCP-Protocol-Version header or, for initialize,
    the version it asked for (None: neither)."""
    header = st.request_headers.get("mcp-protocol-version")
    if header:
        return header.strip()
    for env in st.sent_envelopes():
        if env.kind is Kind.REQUEST and env.method == "initialize" and isinstance(env.params, dict):
            version = env.params.get("protocolVersion")
            return version if isinstance(version, str) else None
    return None


@scenario(requirements=[PRIMING, EID, BROADCAST, GET_NO_RESP, RELATE, UNRELATED, EARLY, AFTER, AFTER_0326], transports=HTTP, until=LATEST_STATEFUL, order=900)
async def streams_run_wide(ctx: ScenarioContext) -> None:
    """Every HTTP exchange of every connection of this version during the run: SSE answers to
    POSTs carry a priming event (2025-11-25), event ids are unique per session, no message on two
    streams, no response on a GET stream that was not resumed, a request's progress notifications
    on its own stream (not another POST's answer, not a GET stream), an SSE answer ended by the
    server after its responses (not before: 2025-03-26, 2025-06-18), not left open."""
    await ctx.connect()
    conns = _streams(ctx)
    tally = _Tally(ctx)
    for conn, streams in conns:
        ids: dict[str, list[tuple[StreamInfo, str, int]]] = {}
        for st in streams.values():
            sse_post = st.method == "POST" and _ok(st.status) and st.is_sse
            # the rule is 2025-11-25's: a POST announcing another version (the unsupported-version
            # probe's initialize) may get what that version's clients handle -- older ones choke
            # on empty data
            if sse_post and ctx.applies(PRIMING) and _announced_version(st) in (None, ctx.version):
                tally.seen(PRIMING)
                if not st.primed:
                    tally.fail(
                        PRIMING,
                        peer=conn.peer,
                        problem="NoPrimingEvent",
                        message=f"the SSE answer {st.name} on {conn.label} carried no event with an id and empty data",
                        expected="an SSE event with an id and empty data, first",
                        actual=[sid for sid, _, _ in st.sse_ids][:5],
                        entries=[st.note] if st.note is not None else [],
                    )
            if st.method == "GET" and st.resumes is None and _ok(st.status):
                responses = [e for e in st.inbound if is_response(e.envelope)]
                tally.seen(GET_NO_RESP)
                if responses:
                    tally.fail(
                        GET_NO_RESP,
                        peer=conn.peer,
                        problem="ResponseOnGetStream",
                        message=f"the GET stream {st.name} on {conn.label} (not a resumption) carried {len(responses)} JSON-RPC response(s)",
                        expected="requests and notifications only",
                        actual=[e.envelope.summary() for e in responses[:3]],
                        entries=[e.seq for e in responses[:3]],
                    )
            for sid, data, seq in st.sse_ids:
                ids.setdefault(sid, []).append((st, data, seq))
        for sid, uses in ids.items():
            tally.seen(EID)
            clash = _id_clash(uses)
            if clash:
                tally.fail(
                    EID,
                    peer=conn.peer,
                    problem="DuplicateEventId",
                    message=f"the SSE event id {sid!r} was used more than once in the session of {conn.label}: {clash}",
                    expected="each event id once per session (a replay on a resumed stream repeats the same event)",
                    actual=[{"stream": st.name, "data": data[:80]} for st, data, _ in uses[:4]],
                    entries=[seq for _, _, seq in uses[:4]],
                )
    _judge_broadcast(ctx, conns, tally)
    _judge_progress_streams(ctx, conns, tally)
    after = AFTER if ctx.applies(AFTER) else AFTER_0326
    _judge_sse_answers(ctx, conns, tally, after)
    if ctx.applies(EARLY):
        tally.finish(EARLY, f"{tally.checked.get(EARLY, 0)} SSE answer(s) ended by the server, each after its responses",
                     nothing="no SSE answer to a POST was ended by the server during the run")
    tally.finish(after, f"{tally.checked.get(after, 0)} SSE answer(s) closed by the server after their responses",
                 nothing="no SSE answer to a POST ended after its responses during the run")
    tally.finish(RELATE, f"{tally.checked.get(RELATE, 0)} progress notification(s) on SSE answers, each on its request's own",
                 nothing="no progress notification for one of our requests arrived on an SSE answer")
    tally.finish(UNRELATED, f"{tally.checked.get(UNRELATED, 0)} progress notification(s) while a GET stream was open, none on it",
                 nothing="no progress notification for one of our requests arrived while a GET stream was open")
    tally.finish(PRIMING, "every SSE answer to a POST carried a priming event", nothing="no POST was answered with an SSE stream during the run")
    tally.finish(EID, f"{tally.checked.get(EID, 0)} SSE event id(s) unique per session", nothing="no SSE event carried an id (ids are optional)")
    tally.finish(GET_NO_RESP, "no response on a GET stream", nothing="no GET stream was opened during the run")
    tally.finish(BROADCAST, "no message on more than one stream", nothing="no response, server request or progress notification arrived over HTTP")


def _judge_sse_answers(ctx: ScenarioContext, conns: list[tuple[Connection, dict[str, StreamInfo]]], tally: _Tally, after: str) -> None:
    """SSE answers to POSTs that have ended: ended by the server before the response to each of
    their requests (we did not cancel) -> EARLY (2025-03-26, 2025-06-18); every response in and
    the stream closed by us LEFT_OPEN s or more after the last -> the server left it open."""
    for conn, streams in conns:
        cancelled: set[str] = set()
        for e in conn.transcript.entries:
            env = e.envelope
            if e.direction == "out" and env is not None and env.kind is Kind.NOTIFICATION and env.method == "notifications/cancelled" and isinstance(env.params, dict):
                cancelled.add(id_key(env.params.get("requestId")))
        for st in streams.values():
            if st.method != "POST" or not _ok(st.status) or not st.is_sse or st.ended is None:
                continue
            wanted = st.request_ids() - cancelled
            if not wanted:
                continue
            answered: dict[str, float] = {}
            for entry in st.inbound:
                for env in (entry.envelope.items if entry.envelope is not None and entry.envelope.kind is Kind.BATCH else [entry.envelope]):
                    if env is not None and is_response(env):
                        answered.setdefault(id_key(env.id), entry.t)
            missing = wanted - set(answered)
            if missing:
                if st.ended == "server" and ctx.applies(EARLY):
                    tally.fail(
                        EARLY,
                        peer=conn.peer,
                        problem="SseStreamClosedBeforeResponse",
                        message=f"the server ended the SSE answer {st.name} on {conn.label} without the response to {', '.join(sorted(missing))}",
                        expected="the response to each request of the POST before the server closes the stream",
                        actual=sorted(missing),
                        entries=[st.note] if st.note is not None else [],
                    )
                continue
            if st.ended == "server":
                tally.seen(after)
                if ctx.applies(EARLY):
                    tally.seen(EARLY)
            elif st.ended == "client" and st.ended_at is not None and st.ended_at - max(answered.values()) >= LEFT_OPEN:
                tally.fail(
                    after,
                    peer=conn.peer,
                    problem="SseStreamLeftOpen",
                    message=(
                        f"the SSE answer {st.name} on {conn.label} stayed open {st.ended_at - max(answered.values()):.1f} s after "
                        "its last response, until the suite closed it; the server should close it after the response"
                    ),
                    expected="the server closes the SSE stream after the response",
                    actual="closed by the suite",
                    entries=[st.note] if st.note is not None else [],
                )


def _progress_of(env: Any) -> tuple[str, str] | None:
    """(token key, progress) of a progress notification."""
    if env.kind is Kind.NOTIFICATION and env.method == "notifications/progress" and isinstance(env.params, dict) and "progressToken" in env.params:
        return id_key(env.params["progressToken"]), id_key(env.params.get("progress"))
    return None


def _judge_progress_streams(ctx: ScenarioContext, conns: list[tuple[Connection, dict[str, StreamInfo]]], tally: _Tally) -> None:
    """A progress notification for one of our requests (its progressToken) belongs on the SSE
    answer to that request's POST: on another POST's answer it does not relate to the originating
    request; on a GET stream it relates to a running request.  One that also came on its own
    stream is a broadcast (transport.http.streams.no-broadcast)."""
    for conn, streams in conns:
        home: dict[str, str] = {}  # token key -> the stream of the POST whose request carried it
        for st in streams.values():
            if st.method != "POST":
                continue
            for env in st.sent_envelopes():
                meta = env.params.get("_meta") if env.kind is Kind.REQUEST and isinstance(env.params, dict) else None
                if isinstance(meta, dict) and "progressToken" in meta:
                    home[id_key(meta["progressToken"])] = st.name
        if not home:
            continue
        where: dict[tuple[str, str], set[str]] = {}
        for st in streams.values():
            for env in st.messages():
                key = _progress_of(env)
                if key is not None:
                    where.setdefault(key, set()).add(st.name)
        get_open = any(st.method == "GET" and st.resumes is None and _ok(st.status) and st.is_sse for st in streams.values())
        for st in streams.values():
            if st.resumes is not None or not _ok(st.status):
                continue
            for entry in st.inbound:
                env = entry.envelope
                for item in (env.items if env is not None and env.kind is Kind.BATCH else [env] if env is not None else []):
                    key = _progress_of(item)
                    if key is None or key[0] not in home:
                        continue
                    own = home[key[0]]
                    if get_open:
                        tally.seen(UNRELATED)
                    if st.method == "POST":
                        tally.seen(RELATE)
                    if own == st.name or own in where.get(key, set()):
                        continue  # on its own stream (a copy elsewhere is a broadcast)
                    rule = UNRELATED if st.method == "GET" else RELATE
                    tally.fail(
                        rule,
                        peer=conn.peer,
                        problem="ProgressOnGetStream" if rule == UNRELATED else "ProgressOnOtherRequestStream",
                        message=(
                            f"a progress notification (token {key[0]}) for the request POSTed on {own} arrived on "
                            + (f"the GET stream {st.name} while that request was running" if rule == UNRELATED
                               else f"{st.name}, the SSE answer to another POST")
                            + f" of {conn.label}, not on {own}"
                        ),
                        expected=f"on {own}, the SSE answer to the request it reports on",
                        actual=st.name,
                        entries=[entry.seq],
                    )


def _id_clash(uses: list[tuple[StreamInfo, str, int]]) -> str | None:
    """Why these uses of one event id are not one event (None: they are).  A use on a stream
    resumed with Last-Event-ID is a replay of an earlier event, whichever stream it came from:
    which stream may be replayed is transport.http.resume.same-stream."""
    fresh = [(st, data) for st, data, _ in uses if st.resumes is None]
    if len(fresh) < 2:
        return None
    (first_st, first_data), (st, data) = fresh[0], fresh[1]
    if st is first_st:
        return f"twice on {st.name}"
    return f"on {first_st.name} and {st.name}" + ("" if data == first_data else " with different data")


# -- 2026-07-28: SSE response streams ---------------------------------------------------------------------

V2026 = "2026-07-28"
# notifications that only a subscriptions/listen stream carries in 2026-07-28 (basic/patterns/subscriptions)
LISTEN_ONLY = (
    "notifications/subscriptions/acknowledged",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
)


def _progress_token(env: Envelope) -> Any:
    params = env.params if isinstance(env.params, dict) else {}
    meta = params.get("_meta")
    return meta.get("progressToken", MISSING) if isinstance(meta, dict) else MISSING


def _token_key(token: Any) -> tuple[str, str]:
    return type(token).__name__, repr(token)


def _unrelated(note: Envelope, request: Envelope, others: set[tuple[str, str]]) -> str | None:
    """Why a notification on ``request``'s response stream does not relate to it (None: it may).
    ``others``: the progress tokens of the other requests we sent; a progress notification for a
    token no request of ours carried is progress.token's (it references no active request)."""
    if note.method in LISTEN_ONLY:
        return f"{note.method} (a change notification: only a subscriptions/listen stream carries it)"
    if note.method == "notifications/progress":
        params = note.params if isinstance(note.params, dict) else {}
        token, ours = params.get("progressToken", MISSING), _progress_token(request)
        if ours is not MISSING and _token_key(token) == _token_key(ours):
            return None
        if token is MISSING or _token_key(token) not in others:
            return None  # a token of no request of ours: judged by progress.token
        if ours is MISSING:
            return f"notifications/progress for token {token!r}, another request's, though this request carried no progressToken"
        return f"notifications/progress for token {token!r}, another request's, not this request's {ours!r}"
    return None


@scenario(requirements=[XACCEL, RELATED26], transports=HTTP, since=V2026, order=900)
async def sse_streams_2026(ctx: ScenarioContext) -> None:
    """Every POST of the run answered with an SSE stream: the response carries X-Accel-Buffering:
    no, and every notification on the stream relates to the request (progress for its own
    progressToken; no change notifications, which only subscriptions/listen streams carry)."""
    await ctx.connect()
    tally = _Tally(ctx)
    for conn, streams in _streams(ctx):
        tokens: dict[tuple[str, str], str] = {}  # progress token -> the stream of the request that carried it
        for st in streams.values():
            for env in st.sent_envelopes():
                token = _progress_token(env) if env.kind is Kind.REQUEST else MISSING
                if token is not MISSING:
                    tokens.setdefault(_token_key(token), st.name)
        for st in streams.values():
            if st.method != "POST" or not _ok(st.status) or not st.is_sse:
                continue
            tally.seen(XACCEL)
            value = st.response_headers.get("x-accel-buffering")
            if (value or "").strip().lower() != "no":
                tally.fail(
                    XACCEL,
                    peer=conn.peer,
                    problem="NoAccelBufferingHeader",
                    message=(
                        f"the SSE answer {st.name} on {conn.label} has "
                        + ("no X-Accel-Buffering header" if value is None else f"X-Accel-Buffering: {value!r}")
                        + "; reverse proxies such as nginx may then buffer its events"
                    ),
                    expected="X-Accel-Buffering: no",
                    actual=value,
                    entries=[st.note] if st.note is not None else [],
                )
            requests = [e for e in st.sent_envelopes() if e.kind is Kind.REQUEST]
            if len(requests) != 1 or requests[0].method == "subscriptions/listen":
                continue
            request = requests[0]
            for entry in st.inbound:
                env = entry.envelope
                if env is None or env.kind is not Kind.NOTIFICATION:
                    continue
                tally.seen(RELATED26)
                why = _unrelated(env, request, {k for k, where in tokens.items() if where != st.name})
                if why is not None:
                    tally.fail(
                        RELATED26,
                        peer=conn.peer,
                        problem="UnrelatedNotification",
                        message=f"the SSE answer {st.name} to {request.method} (id {id_repr(request.id)}) on {conn.label} carried {why}",
                        expected="notifications about this request only (its progress, its log messages)",
                        actual=env.summary(),
                        entries=[entry.seq],
                    )
    tally.finish(XACCEL, f"{tally.checked.get(XACCEL, 0)} SSE answer(s) carried X-Accel-Buffering: no",
                 nothing="no POST was answered with an SSE stream during the run (application/json is allowed)")
    tally.finish(RELATED26, f"{tally.checked.get(RELATED26, 0)} notification(s) on request streams, each about its request",
                 nothing="no notification arrived on the SSE answer to a request during the run")


@scenario(requirements=[ENDS26], transports=HTTP, since=V2026)
async def response_ends_stream(ctx: ScenarioContext) -> None:
    """A request answered with an SSE stream (server/discover, else the official progress fixture
    with a progressToken): once the response has arrived, the server ends the stream."""
    peer = await ctx.connect()
    rid: Any = "mcp-conformance-stream-end-discover"
    ex: HttpExchange = await peer.send_json(request_message(ctx.version, rid))
    if not ex.is_sse:
        try:
            await peer.expect_response(rid)
        except PeerError as exc:
            ctx.note(f"server/discover got no answer ({exc})", requirement=ENDS26)
        tools = await official_tools(peer, ctx.server_capabilities, timeout=ctx.timeout)
        if PROGRESS_FIXTURE not in tools:
            ctx.skip(f"server/discover was answered with application/json and the server does not list {PROGRESS_FIXTURE!r}: "
                     "no request to answer with an SSE stream (SSE is optional)")
        rid = "mcp-conformance-stream-end-progress"
        params = {"name": PROGRESS_FIXTURE, "arguments": {}, "_meta": {"progressToken": "mcp-conformance-stream-end-token"}}
        ex = await peer.send_json(request_message(ctx.version, rid, "tools/call", params))
        if not ex.is_sse:
            ctx.skip(f"{PROGRESS_FIXTURE} was answered {describe(ex)}, not with an SSE stream (SSE is optional)")
    try:
        response = await peer.expect_response(rid)
    except PeerError as exc:
        ctx.not_reached(ENDS26, f"the SSE answer {ex.stream} carried no response ({exc})")
        await peer.transport.close_stream(ex.stream)  # type: ignore[attr-defined]
        return
    await wait_until(lambda: ex.done.is_set(), ctx.timeout)  # a server that ends it returns at once
    ended = ex.done.is_set() and ex.closed_by in ("server", "error")  # (a connection dropped after the response ends it too)
    if not ex.done.is_set():
        await peer.transport.close_stream(ex.stream)  # type: ignore[attr-defined]
    entry = peer.entry_of(response)
    after = [e for e in peer.transcript.entries
             if e.direction == "in" and e.meta.get("stream") == ex.stream and entry is not None and e.seq > entry.seq and e.envelope is not None]
    wait = ctx.timeout
    ctx.check(
        ENDS26,
        ended and not after,
        problem="MessageAfterResponse" if after else "StreamNotEnded",
        message=(
            f"the SSE answer {ex.stream} carried {len(after)} message(s) after the response: "
            + ", ".join(e.envelope.summary() for e in after[:3])
            if after
            else f"the SSE answer {ex.stream} ended after its response" if ended
            else f"the SSE answer {ex.stream} was still open {wait:g} s after its response"
        ),
        expected="the stream ends with the response",
        actual=[e.envelope.summary() for e in after[:3]] if after else ("ended" if ended else f"open after {wait:g} s"),
        entries=[entry.seq] if entry is not None else [],
    )
