"""basic/transports#http-with-sse: the HTTP+SSE transport of 2024-11-05 (an SSE endpoint whose
first event names the endpoint for POSTs; server messages as SSE ``message`` events)."""

from __future__ import annotations

from typing import Any


from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import scenario
from conformance.spec.versions import Transport
from conformance.wire.transcript import Direction
from conformance.transports.base import TransportError, TransportTimeout
from conformance.transports.exchange import SSE_TYPE, HttpExchange
from conformance.wire.envelope import Kind, dumps

from ._http import FOREIGN_ORIGIN, Probe, describe, is_loopback, notification_message, request_message, streams_of, wait_until

ENDPOINT = "transport.sse.endpoint-event"
POST = "transport.sse.post-endpoint"
MESSAGES = "transport.sse.message-events"
ORIGIN = "transport.sse.origin.validate"

SSE = [Transport.SSE]
MAX_REPORTED = 10


def _ok(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


async def _attempt(request: Any) -> HttpExchange | TransportError:
    """The exchange, or the connection error (not a timeout) that ended it."""
    try:
        return await request
    except TransportTimeout:
        raise
    except TransportError as exc:
        return exc


def _note_seq(peer: Any, text: str) -> list[int]:
    for entry in reversed(peer.transcript.entries):
        if entry.text and entry.text.startswith(text):
            return [entry.seq]
    return []


@scenario(requirements=[ENDPOINT], transports=SSE)
async def endpoint_event(ctx: ScenarioContext) -> None:
    """A connection of our own to the SSE endpoint: its first event is `endpoint`, whose data is
    a URI reference (resolving to an http(s) URL) for the POSTs."""
    peer = await ctx.connect()
    url = peer.transport.url  # type: ignore[attr-defined]
    async with Probe(peer, timeout=ctx.timeout, url=url, session=False) as probe:
        ex = await probe.request("GET", headers={"Accept": SSE_TYPE})
        entries = probe.entries(ex)
        if not (_ok(ex.status) and ex.is_sse):
            ctx.check(
                ENDPOINT,
                False,
                problem="NoEventStream",
                message=f"GET {url} was answered {describe(ex)}, not with an SSE stream that could carry the endpoint event",
                expected="200 text/event-stream, first event `endpoint`",
                actual=describe(ex),
                entries=entries,
            )
            return
        await wait_until(lambda: bool(ex.sse_events) or ex.done.is_set(), ctx.timeout)
        events = list(ex.sse_events)
        await probe.close_stream(ex)
    first = events[0] if events else None
    if first is None:
        ctx.check(ENDPOINT, False, problem="NoEndpointEvent", message=f"no event arrived on {url} within {ctx.timeout:g} s",
                  expected="an `endpoint` event", actual="no event", entries=entries)
        return
    later = next((n for n, ev in enumerate(events) if ev.event == "endpoint"), None)
    if first.event != "endpoint":
        ctx.check(
            ENDPOINT,
            False,
            problem="EndpointEventNotFirst",
            message=(
                f"the first event on {url} is a {first.event!r} event ({first.data[:80]!r})"
                + (f"; the endpoint event came as event #{later + 1}" if later is not None else "; no endpoint event followed yet")
                + ": the server sends the endpoint event when the client connects"
            ),
            expected={"event": "endpoint", "data": "<URI>"},
            actual={"event": first.event, "data": first.data[:200]},
            entries=entries,
        )
        return
    data = first.data.strip()
    import httpx  # here, not at import: a stdio run imports every scenario module, and needs no httpx

    try:
        resolved = httpx.URL(url).join(data) if data else None
    except (httpx.InvalidURL, ValueError, TypeError):
        resolved = None
    ok = resolved is not None and resolved.scheme in ("http", "https") and bool(resolved.host)
    ctx.check(
        ENDPOINT,
        ok,
        problem="InvalidEndpointUri",
        message=(
            f"the endpoint event names {data!r} (resolved: {resolved})" if ok
            else f"the endpoint event's data {first.data!r} is not a URI reference that resolves to an http(s) URL"
        ),
        expected="a URI for the client to POST its messages to",
        actual=first.data[:200],
        entries=entries,
    )


@scenario(requirements=[POST, MESSAGES], transports=SSE, order=900)
async def post_and_message_events(ctx: ScenarioContext) -> None:
    """A notification and a request POSTed to the endpoint: both accepted (2xx), the response
    arrives on the SSE stream as a `message` event; then every POST and every event of the run
    on this version."""
    peer = await ctx.connect()
    transport: Any = peer.transport
    stream = transport.stream.stream if transport.stream is not None else None
    notification: HttpExchange = await peer.send_json(notification_message(ctx.version))
    rid = "mcp-conformance-sse-probe"
    request: HttpExchange = await peer.send_json(request_message(ctx.version, rid))
    for ex, what in ((notification, "a notification"), (request, "a request")):
        ctx.check(
            POST,
            _ok(ex.status),
            problem="PostRefused",
            message=f"{what} POSTed to the endpoint was answered {describe(ex)}",
            expected="2xx (202 Accepted is usual)",
            actual=describe(ex),
            entries=_note_seq(peer, f"POST {ex.url} -> {ex.status}"),
        )
    try:
        env = await peer.expect_response(rid)
    except PeerError as exc:
        ctx.check(
            MESSAGES,
            False,
            problem="ResponseNotOnStream",
            message=f"the response to the request POSTed to the endpoint did not arrive on the SSE stream ({exc}); the POST was answered {describe(request)}",
            expected="the response as a `message` event on the SSE stream",
            actual=describe(request),
        )
    else:
        entry = peer.entry_of(env)
        where = entry.meta.get("stream") if entry is not None else None
        ctx.check(
            MESSAGES,
            where == stream,
            problem="ResponseNotOnStream",
            message=f"the response arrived on {where}, not on the SSE stream {stream}",
            expected=stream,
            actual=where,
            entries=[env],
        )
    bad = {POST: 0, MESSAGES: 0}
    for conn in ctx.connections():
        for entry in conn.transcript.entries:
            if entry.direction != Direction.IN or entry.envelope is None:
                continue
            kind = entry.meta.get("sse_event")
            if kind is not None and kind != "message":
                bad[MESSAGES] += 1
                if bad[MESSAGES] <= MAX_REPORTED:
                    ctx.check(
                        MESSAGES,
                        False,
                        problem="NotAMessageEvent",
                        message=f"a server message on {conn.label} came as an SSE {kind!r} event",
                        expected="event: message (or no event field)",
                        actual=kind,
                        entries=[entry.seq],
                        peer=conn.peer,
                    )
        for st in streams_of(conn.transcript).values():
            if st.method != "POST" or st.status is None or _ok(st.status) or not st.sent:
                continue
            if any(e.meta.get("opts") for e in st.sent):
                continue  # sent with odd headers on purpose
            envs = st.sent_envelopes()
            if not envs or any(e.kind in (Kind.PARSE_ERROR, Kind.INVALID, Kind.BATCH) or e.problems for e in envs):
                continue  # not a valid message (e.g. the invalid-request probes): refusing it is no refusal of the endpoint
            bad[POST] += 1
            if bad[POST] <= MAX_REPORTED:
                ctx.check(
                    POST,
                    False,
                    problem="PostRefused",
                    message=f"a POST of {', '.join(e.method or e.kind.value for e in envs)} to the endpoint on {conn.label} was answered {st.status}",
                    expected="2xx",
                    actual=st.status,
                    entries=[st.note] if st.note is not None else [],
                    peer=conn.peer,
                )
    for req, n in bad.items():
        if n > MAX_REPORTED:
            ctx.note(f"{n} violations in all; the first {MAX_REPORTED} are reported", requirement=req)


@scenario(requirements=[ORIGIN], transports=SSE)
async def foreign_origin(ctx: ScenarioContext) -> None:
    """With 'Origin: http://mcp-conformance.invalid', a server on a loopback address refuses both
    the SSE connection and a POST to the endpoint (any 4xx; the status is not worded)."""
    peer = await ctx.connect()
    transport: Any = peer.transport
    url, endpoint = transport.url, transport.endpoint
    if not is_loopback(url):
        ctx.skip(f"{url} is not a loopback address: which origins are valid depends on the deployment")
    headers = {"Origin": FOREIGN_ORIGIN}
    # one probe (one HTTP connection) per request: a refused connection is not reused
    async with Probe(peer, timeout=ctx.timeout, url=url, session=False) as probe:
        g = await _attempt(probe.request("GET", headers={**headers, "Accept": SSE_TYPE}))
        if isinstance(g, HttpExchange) and g.is_sse:
            await probe.close_stream(g)
        g_entries = probe.entries(g) if isinstance(g, HttpExchange) else []
    async with Probe(peer, timeout=ctx.timeout, url=url, session=False) as probe:
        body = dumps(request_message(ctx.version, "mcp-conformance-origin-probe"))
        p = await _attempt(probe.request("POST", body=body, headers={**headers, "Content-Type": "application/json"}, url=endpoint))
        p_entries = probe.entries(p) if isinstance(p, HttpExchange) else []
    for ex, what, entries in ((g, f"the SSE connection (GET {url})", g_entries), (p, f"a POST to the endpoint {endpoint}", p_entries)):
        if not isinstance(ex, HttpExchange):
            ctx.check(ORIGIN, True, message=f"{what} from Origin {FOREIGN_ORIGIN} was refused by closing the connection ({ex})")
            continue
        refused = 400 <= ex.status < 500
        ctx.check(
            ORIGIN,
            refused,
            problem="ForeignOriginServed",
            message=(
                f"{what} from Origin {FOREIGN_ORIGIN} was answered {describe(ex)}"
                + ("" if refused else ": the server did not validate the Origin (the DNS rebinding case)")
            ),
            expected="a 4xx refusal (403 Forbidden is usual)",
            actual=describe(ex),
            entries=entries,
        )
