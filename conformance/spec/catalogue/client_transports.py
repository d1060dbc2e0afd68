"""basic/transports, as duties of the client: stdio (2026-07-28: basic/transports/stdio),
streamable HTTP (2025-03-26 .. 2025-11-25 on basic/transports; 2026-07-28:
basic/transports/streamable-http) and the HTTP+SSE transport of 2024-11-05.

The 2026-07-28 header and body rules of streamable HTTP are in client_modern.
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, Transport, spec_url

PAGE = "basic/transports"  # 2024-11-05 .. 2025-11-25
STDIO_PAGE = "basic/transports/stdio"  # 2026-07-28; earlier: basic/transports#stdio
HTTP_PAGE_2026 = "basic/transports/streamable-http"
FIRST_HTTP = "2025-03-26"  # streamable HTTP was introduced in 2025-03-26
STDIO = (Transport.STDIO,)
HTTP = (Transport.STREAMABLE_HTTP,)
SSE = (Transport.SSE,)

# -- stdio ----------------------------------------------------------------------------------------

define(
    "client.stdio.no-embedded-newlines",
    "MUST",
    url=spec_url(LATEST, STDIO_PAGE),
    quote="Messages are delimited by newlines, and MUST NOT contain embedded newlines.",
    role="client",
    area="transport-stdio",
    transports=STDIO,
    note=(
        "Judged on the bytes the client wrote to the server's stdin: every line is one complete "
        "JSON value. A message spread over several lines (pretty-printed JSON, a raw newline "
        "inside a string) or two messages on one line are flagged."
    ),
)

define(
    "client.stdio.only-mcp",
    "MUST",
    url=spec_url(LATEST, STDIO_PAGE),
    quote="The client MUST NOT write anything to the server's `stdin` that is not a valid MCP message.",
    role="client",
    area="transport-stdio",
    transports=STDIO,
    note=(
        "Flags stdin lines that are not MCP messages at all: text that is not JSON, blank lines, "
        "JSON values that are not JSON-RPC messages, and from 2025-06-18 a JSON-RPC batch (the "
        "version has none: its JSONRPCMessage is a single request, notification or response; "
        "changelog 'Remove support for JSON-RPC batching'). A single message that is JSON-RPC but "
        "invalid for the version's schema is judged by client.basic.schema-valid."
    ),
)

define(
    "client.stdio.stderr-not-error",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, STDIO_PAGE),
    quote=(
        "The client MAY capture, forward, or ignore the server's `stderr` output and SHOULD NOT "
        "assume `stderr` output indicates error conditions."
    ),
    role="client",
    area="transport-stdio",
    transports=STDIO,
    note=(
        "Probe (the baseline run): when the client's first request after the handshake arrives, "
        "the suite's server writes an ERROR-looking log line to its stderr and answers 0.3 s "
        "later. A client that ends the session (closes the server's stdin, signals or kills it, "
        "or exits) in between, its request unanswered, took the stderr output for an error. What "
        "a client shows its user is not seen."
    ),
)

define(
    "client.discover.fallback-any-error",
    "MUST",
    since="2026-07-28",
    url=spec_url("2026-07-28", STDIO_PAGE, "backward-compatibility"),
    quote=(
        "The fallback MUST NOT be keyed to one specific error code: legacy servers respond to "
        "unknown pre-`initialize` requests with implementation-defined errors (commonly `-32601` "
        "or `-32602`) or not at all."
    ),
    role="client",
    area="transport-stdio",
    transports=STDIO,
    note=(
        "Two runs in which the suite's server plays a legacy one (initialize answered as "
        "2025-11-25). First server/discover is answered -32601 (Method not found): a client that "
        "then sends initialize supports both eras and falls back; one that does not is "
        "modern-only (or probes not at all) and is not judged. Then server/discover is answered "
        "-32602 (Invalid params): the dual-era client must fall back to initialize again."
    ),
)

# -- streamable HTTP: sending messages --------------------------------------------------------------

_POST_NOTE = (
    "Judged on every HTTP request the client made: each JSON-RPC message travels in the body of "
    "a POST to the MCP endpoint (the URL the client was given); a message in a GET or DELETE, or "
    "sent to another path, is flagged."
)

define(
    "client.http.post",
    "MUST",
    since=FIRST_HTTP,
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "sending-messages-to-the-server"),
    quote="Every JSON-RPC message sent from the client MUST be a new HTTP POST request to the MCP endpoint.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_POST_NOTE + " The first item of the list after it says the same ('The client MUST use HTTP POST "
    "to send JSON-RPC messages to the MCP endpoint.'); that one message is one POST is "
    "client.http.single-message-body.",
)

define(
    "client.http.post-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, HTTP_PAGE_2026, "sending-messages"),
    quote="Every JSON-RPC message sent from the client MUST be a new HTTP POST request to the MCP endpoint.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_POST_NOTE + " The first item of the list after it says the same ('The client MUST use HTTP POST "
    "to send JSON-RPC messages.'); that one message is one POST is client.http2026.single-body.",
)

_ACCEPT_NOTE = (
    "Judged on every POST: the Accept header (all its elements; parameters such as q ignored) "
    "lists both application/json and text/event-stream. A wildcard (*/*, application/*) does not "
    "list them."
)

define(
    "client.http.accept",
    "MUST",
    since=FIRST_HTTP,
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "sending-messages-to-the-server"),
    quote=(
        "The client MUST include an `Accept` header, listing both `application/json` and "
        "`text/event-stream` as supported content types."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_ACCEPT_NOTE,
)

define(
    "client.http.accept-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, HTTP_PAGE_2026, "sending-messages"),
    quote=(
        "The client MUST include an `Accept` header listing both `application/json` and "
        "`text/event-stream` as supported content types."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_ACCEPT_NOTE,
)

define(
    "client.http.single-message-body",
    "MUST",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "sending-messages-to-the-server"),
    quote=(
        "The body of the POST request MUST be a single JSON-RPC _request_, _notification_, or "
        "_response_."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "A POST body that is a JSON array (a batch) or holds more than one message is flagged. "
        "2025-03-26 allowed a batch in a POST body (not applied there); 2026-07-28 is "
        "client.http2026.single-body."
    ),
)

define(
    "client.http.post-body-2025-03-26",
    "MUST",
    versions=(FIRST_HTTP,),
    url=spec_url(FIRST_HTTP, PAGE, "sending-messages-to-the-server"),
    quote="The body of the POST request MUST be one of the following:",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "The list: 'A single JSON-RPC request, notification, or response', 'An array batching one "
        "or more requests and/or notifications', 'An array batching one or more responses'. "
        "Judged on every POST whose body is a JSON array: an empty array, one that mixes responses "
        "with requests or notifications, or one with an element that is not a JSON-RPC message is "
        "flagged. A single message is judged by the JSON-RPC and schema rules (client.basic.*). "
        "2025-06-18 allows no batch at all (client.http.single-message-body)."
    ),
)

# -- streamable HTTP: sessions (2025-03-26 .. 2025-11-25) -------------------------------------------
# 2025-03-26 and 2025-06-18 spell the header `Mcp-Session-Id`, 2025-11-25 `MCP-Session-Id` (header
# names are case-insensitive): one requirement per wording, the -2025-03-26 ones for the first two.

_SESSION_ID_NOTE = (
    "Judged when the server issued a session id with the initialize result: every later HTTP "
    "request of the client (POST, GET, DELETE) carries exactly that id, until the client starts "
    "a new session (an initialize without the header, e.g. after a 404)."
)

define(
    "client.http.session-id",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "session-management"),
    quote=(
        "If an `MCP-Session-Id` is returned by the server during initialization, clients using "
        "the Streamable HTTP transport MUST include it in the `MCP-Session-Id` header on all of "
        "their subsequent HTTP requests."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_SESSION_ID_NOTE,
)

define(
    "client.http.session-id-2025-03-26",
    "MUST",
    since=FIRST_HTTP,
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "session-management"),
    quote=(
        "If an `Mcp-Session-Id` is returned by the server during initialization, clients using "
        "the Streamable HTTP transport MUST include it in the `Mcp-Session-Id` header on all of "
        "their subsequent HTTP requests."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_SESSION_ID_NOTE,
)

_SESSION_404_NOTE = (
    "Probe: the suite's server answers the client's first request after the handshake with 404 "
    "for its session; the client's next request must be an initialize without a session id "
    "header. A client that gives up instead is flagged."
)

define(
    "client.http.session-404-reinitialize",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "session-management"),
    quote=(
        "When a client receives HTTP 404 in response to a request containing an "
        "`MCP-Session-Id`, it MUST start a new session by sending a new `InitializeRequest` "
        "without a session ID attached."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_SESSION_404_NOTE,
)

define(
    "client.http.session-404-reinitialize-2025-03-26",
    "MUST",
    since=FIRST_HTTP,
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "session-management"),
    quote=(
        "When a client receives HTTP 404 in response to a request containing an "
        "`Mcp-Session-Id`, it MUST start a new session by sending a new `InitializeRequest` "
        "without a session ID attached."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_SESSION_404_NOTE,
)

_SESSION_DELETE_NOTE = (
    "Judged when the server issued a session id: before the client goes away (the run ends), a "
    "DELETE on the MCP endpoint carrying the session id is expected; a client that leaves "
    "without it gets a warning."
)

define(
    "client.http.session-delete",
    "SHOULD",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "session-management"),
    quote=(
        "Clients that no longer need a particular session (e.g., because the user is leaving the "
        "client application) SHOULD send an HTTP DELETE to the MCP endpoint with the "
        "`MCP-Session-Id` header, to explicitly terminate the session."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_SESSION_DELETE_NOTE,
)

define(
    "client.http.session-delete-2025-03-26",
    "SHOULD",
    since=FIRST_HTTP,
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "session-management"),
    quote=(
        "Clients that no longer need a particular session (e.g., because the user is leaving the "
        "client application) SHOULD send an HTTP DELETE to the MCP endpoint with the "
        "`Mcp-Session-Id` header, to explicitly terminate the session."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_SESSION_DELETE_NOTE,
)

# -- streamable HTTP: protocol version header (2025-06-18 .. 2025-11-25) ----------------------------

define(
    "client.http.get-accept",
    "MUST",
    since=FIRST_HTTP,
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "listening-for-messages-from-the-server"),
    quote="The client MUST include an `Accept` header, listing `text/event-stream` as a supported content type.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "Judged on every HTTP GET the client sent to the MCP endpoint: the one that opens the "
        "server's SSE stream and those that resume a stream (with Last-Event-ID; the resumability "
        "section sends them the same way). A GET whose Accept does not list text/event-stream "
        "(missing, application/json only, */* alone) is flagged. The POST rule is "
        "client.http.accept; 2026-07-28 has no GET stream."
    ),
)

define(
    "client.http.version-header-negotiated",
    "SHOULD",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "protocol-version-header"),
    quote="The protocol version sent by the client SHOULD be the one negotiated during initialization.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "Judged on every request after the initialize result that carries MCP-Protocol-Version: "
        "its value must be the protocolVersion of the server's initialize result, also when the "
        "server counter-offered an older version than the client asked for (the suite's server "
        "does whenever the client asks for a version other than the run's: a client asking for "
        "2025-11-25 in a 2025-06-18 run is answered 2025-06-18 and must then send "
        "MCP-Protocol-Version: 2025-06-18). A missing header is client.http.version-header."
    ),
)

define(
    "client.http.version-header",
    "MUST",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "protocol-version-header"),
    quote=(
        "If using HTTP, the client MUST include the `MCP-Protocol-Version: <protocol-version>` "
        "HTTP header on all subsequent requests to the MCP server, allowing the MCP server to "
        "respond based on the MCP protocol version."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "'Subsequent' is read as after the initialize request: every later POST, GET and DELETE "
        "carries MCP-Protocol-Version. Its value is worded separately ('The protocol version "
        "sent by the client SHOULD be the one negotiated during initialization.') and judged "
        "with client.lifecycle.respect-negotiation. The lifecycle page repeats the duty in a "
        "note (basic/lifecycle#version-negotiation). 2024-11-05 and 2025-03-26 define no such "
        "header."
    ),
)

# -- HTTP+SSE (2024-11-05) ------------------------------------------------------------------------

define(
    "client.sse.post-to-endpoint",
    "MUST",
    versions=("2024-11-05",),
    url=spec_url("2024-11-05", PAGE, "http-with-sse"),
    quote="All subsequent client messages MUST be sent as HTTP POST requests to this endpoint.",
    role="client",
    area="transport-sse",
    transports=SSE,
    note=(
        "'This endpoint' is the URI of the server's endpoint event, resolved against the SSE "
        "URL. Probe: the endpoint event names a path with a query of its own (and, in a second "
        "variant, an absolute URL); every message the client sent must be a POST to exactly "
        "that URI, query included."
    ),
)

# -- streamable HTTP: SSE answers, polling and resumption ---------------------------------------------

define(
    "client.http.sse-answers",
    "MUST",
    since=FIRST_HTTP,
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "sending-messages-to-the-server"),
    quote="The client MUST support both these cases.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "The two cases: a request answered with `Content-Type: text/event-stream` (an SSE stream) "
        "or with `application/json`. Probe: the suite's server answers every request with an SSE "
        "stream (a priming event first, as 2025-11-25 asks); the client is expected to take the "
        "initialize result from it and go on (notifications/initialized, its next request). The "
        "baseline run answers with JSON."
    ),
)

_POLL_NOTE = (
    "Probe (2025-11-25): the suite's server answers the client's first request after the "
    "handshake with an SSE stream whose first event has an id and a `retry` of 1000 ms, then "
    "closes the connection without answering; the answer is given on the stream the client "
    "opens to resume (GET with Last-Event-ID), or on the next POST."
)

define(
    "client.http.sse-poll",
    "SHOULD",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "sending-messages-to-the-server"),
    quote='The client SHOULD then "poll" the SSE stream by attempting to reconnect.',
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_POLL_NOTE + " A client that never reconnects (it gives up on the request, or waits on "
    "the closed stream until its timeout) is flagged.",
)

define(
    "client.http.sse-retry",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "sending-messages-to-the-server"),
    quote=(
        "The client MUST respect the `retry` field, waiting the given number of milliseconds "
        "before attempting to reconnect."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_POLL_NOTE + " A reconnection (GET) less than the retry time after the server closed the "
    "connection is flagged (0.1 s of slack for the two clocks).",
)

define(
    "client.http.resume-last-event-id",
    "SHOULD",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "resumability-and-redelivery"),
    quote=(
        "If the client wishes to resume after a disconnection (whether due to network failure or "
        "server-initiated closure), it SHOULD issue an HTTP GET to the MCP endpoint, and include "
        "the `Last-Event-ID` header to indicate the last event ID it received."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_POLL_NOTE + " Judged on the client's reconnection: a GET carrying Last-Event-ID with the "
    "id of the last event it received passes; a reconnection by GET without it, or with another "
    "id, is flagged; a client that does not reconnect is judged by client.http.sse-poll.",
)

define(
    "client.http.resume-last-event-id-2025-03-26",
    "SHOULD",
    versions=(FIRST_HTTP, "2025-06-18"),
    url=spec_url("2025-06-18", PAGE, "resumability-and-redelivery"),
    quote=(
        "If the client wishes to resume after a broken connection, it SHOULD issue an HTTP GET to "
        "the MCP endpoint, and include the `Last-Event-ID` header to indicate the last event ID it "
        "received."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_POLL_NOTE.replace("Probe (2025-11-25)", "Probe (as on 2025-11-25)") + " These revisions word "
    "no polling: a client that does not reconnect does not wish to resume and is not judged; one "
    "that reconnects by GET must send Last-Event-ID with the id of the last event it received.",
)

