"""basic/transports#streamable-http (2025-03-26 .. 2025-11-25) and
basic/transports/streamable-http (2026-07-28)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, Transport, spec_url

PAGE = "basic/transports"  # 2025-03-26 .. 2025-11-25
PAGE_2026 = "basic/transports/streamable-http"
V2026 = "2026-07-28"
HTTP = [Transport.STREAMABLE_HTTP]
AREA = "transport-http"
FIRST = "2025-03-26"  # streamable HTTP was introduced in 2025-03-26


def _url(anchor: str) -> str:
    return spec_url(LATEST_STATEFUL, PAGE, anchor)


# -- POST ------------------------------------------------------------------------------------------

define(
    "transport.http.post.request-content-type",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote=(
        "the server MUST either return `Content-Type: text/event-stream`, to initiate an SSE "
        "stream, or `Content-Type: application/json`, to return one JSON object."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on every successful (2xx) answer to a POST that carried a request; an HTTP error "
        "status is judged by the rules about that status."
    ),
)

define(
    "transport.http.post.request-content-type-2026",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "sending-messages"),
    quote=(
        "If the body is a JSON-RPC _request_, the server MUST return either `Content-Type: "
        "application/json` (a single JSON object) or `Content-Type: text/event-stream` (an SSE "
        "response stream)."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on every successful (2xx) answer to a POST that carried a request; 2026-07-28 "
        "assigns HTTP error statuses to JSON-RPC errors, which are judged by their own rules."
    ),
)

define(
    "transport.http.post.accepted-202",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote="If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body.",
    area=AREA,
    transports=HTTP,
    note="An HTTP error status means the server did not accept the input, which the page allows.",
)

define(
    "transport.http.post.accepted-202-2026",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "sending-messages"),
    quote="If the server accepts it, the server MUST return HTTP status code `202 Accepted` with no body.",
    area=AREA,
    transports=HTTP,
    note="An HTTP error status means the server did not accept the notification, which the page allows.",
)

define(
    "transport.http.post.not-accepted-error-status",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote="If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).",
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on every POST whose body carries no request (notifications, responses), and on a "
        "probe: a notification whose params is not an object (JSON-RPC 2.0 wants a structured "
        "value).  Accepting it (202) or refusing it with a 4xx or 5xx both pass; an answer that "
        "says the input was not accepted (a JSON-RPC error in its body) with a status below 400 "
        "fails.  A 2xx without an error is an accepted input, judged by "
        "transport.http.post.accepted-202."
    ),
)

define(
    "transport.http.sse.messages-relate",
    "SHOULD",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote="These messages SHOULD relate to the originating client _request_.",
    area=AREA,
    transports=HTTP,
    note=(
        "The sentence follows 'The server MAY send JSON-RPC requests and notifications before "
        "sending the JSON-RPC response' (2025-03-26: 'a JSON-RPC response').  Judged on the "
        "messages whose request is known: a progress notification carrying the progressToken of "
        "one of our requests that arrives on the SSE answer to another POST (and not on its "
        "own).  Other notifications and server requests name no request.  The same message on "
        "both streams is transport.http.streams.no-broadcast."
    ),
)

define(
    "transport.http.post.accept-406",
    "SHOULD",
    since=FIRST,
    url=spec_url(LATEST, PAGE_2026, "sending-messages"),
    quote="listing both `application/json` and `text/event-stream` as supported content types",
    area=AREA,
    transports=HTTP,
    note=(
        "Rests on practice, not a sentence, so a warning at most.  Only the client's duty is "
        "worded ('The client MUST include an Accept header, listing both application/json and "
        "text/event-stream as supported content types'); how a server treats a POST whose Accept "
        "lacks text/event-stream is not.  The official SDKs answer 406 Not Acceptable (RFC 9110 "
        "15.5.7); any 4xx refusal is accepted, serving the request is reported."
    ),
)

define(
    "transport.http.post.content-type-415",
    "SHOULD",
    since=FIRST,
    url=spec_url(LATEST, "basic/transports", "messages"),
    quote="MCP uses JSON-RPC to encode messages.",
    area=AREA,
    transports=HTTP,
    note=(
        "Rests on practice, not a sentence, so a warning at most: no revision words the "
        "Content-Type of a POST.  The official SDKs refuse a body not declared application/json "
        "(415 Unsupported Media Type, RFC 9110 15.5.16), which also keeps browsers' "
        "preflight-free text/plain cross-site POSTs away from local servers.  Any 4xx refusal is "
        "accepted, serving the request is reported."
    ),
)

# -- sessions --------------------------------------------------------------------------------------

define(
    "transport.http.session.id-visible-ascii",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("session-management"),
    quote="The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E).",
    area=AREA,
    transports=HTTP,
    aliases=("server-session-id-visible-ascii",),
)

define(
    "transport.http.session.missing-400",
    "SHOULD",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("session-management"),
    quote="Servers that require a session ID SHOULD respond to requests without an",
    area=AREA,
    transports=HTTP,
    note=(
        "The sentence continues: '`Mcp-Session-Id` header (other than initialization) with HTTP "
        "400 Bad Request.' (2025-11-25 spells the header MCP-Session-Id; header names are "
        "case-insensitive).  A server that serves such a request evidently does not require a "
        "session id and passes; one that refuses it with another status gets a warning."
    ),
)

define(
    "transport.http.session.unknown-404",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("session-management"),
    quote=(
        "The server MAY terminate the session at any time, after which it MUST respond to "
        "requests containing that session ID with HTTP 404 Not Found."
    ),
    area=AREA,
    transports=HTTP,
    aliases=("server-session-terminated-returns-404",),
    note=(
        "Checked twice: after a DELETE the server answered with 2xx (it ended the session), and "
        "with a session id the server never issued.  A server cannot tell an id it never issued "
        "from one it terminated (by a restart, an eviction), and the client starts a new session "
        "only on 404, so both must be answered 404."
    ),
)

define(
    "transport.http.protocol-version.invalid-400",
    "MUST",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=_url("protocol-version-header"),
    quote=(
        "If the server receives a request with an invalid or unsupported `MCP-Protocol-Version`, "
        "it MUST respond with `400 Bad Request`."
    ),
    area=AREA,
    transports=HTTP,
)

define(
    "transport.http.session.id-secure",
    "SHOULD",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("session-management"),
    quote=(
        "The session ID SHOULD be globally unique and cryptographically secure (e.g., a securely "
        "generated UUID, a JWT, or a cryptographic hash)."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on every session id the server issued during the run (one per connection): two "
        "sessions with the same id, an id shorter than 16 characters (too short to hold the 128 "
        "random bits of a UUID in any usual encoding), or two ids that differ only in their digits "
        "(a counter or a timestamp: the next id can be guessed) get a warning.  Whether the "
        "randomness is cryptographic cannot be seen; an id that passes is not proven secure."
    ),
)

define(
    "transport.http.protocol-version.absent-assumed",
    "SHOULD",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=_url("protocol-version-header"),
    quote=(
        "For backwards compatibility, if the server does _not_ receive an `MCP-Protocol-Version` "
        "header, and has no other way to identify the version - for example, by relying on the "
        "protocol version negotiated during initialization - the server SHOULD assume protocol "
        "version `2025-03-26`."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Probe: a ping on the session without the MCP-Protocol-Version header.  The server knows "
        "the version negotiated for the session, so it has a way to identify the version and "
        "serves the request; refusing it for the missing header (the client of 2025-03-26 never "
        "sends it) gets a warning.  A server that issued no session id is not judged: without a "
        "session it would assume 2025-03-26, which it may not support (400 is then its answer)."
    ),
)

# -- security ----------------------------------------------------------------------------------------

define(
    "transport.http.origin.validate",
    "MUST",
    versions=("2025-03-26", "2025-06-18"),
    url=spec_url("2025-06-18", PAGE, "security-warning"),
    quote=(
        "Servers MUST validate the `Origin` header on all incoming connections to prevent DNS "
        "rebinding attacks"
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Which origins are valid is the server's policy; for a server on a loopback address an "
        "Origin naming another host (the reserved http://mcp-conformance.invalid) is the DNS "
        "rebinding case the sentence names, so serving it is a failure to validate.  These "
        "revisions do not word the status: any 4xx refusal passes.  From 2025-11-25 the same "
        "bullet words 403 Forbidden (transport.http.origin.invalid-403), checked instead."
    ),
)

define(
    "transport.http.origin.invalid-403",
    "MUST",
    since="2025-11-25",
    url=spec_url(V2026, PAGE_2026, "security--endpoint"),
    quote="If the `Origin` header is present and invalid, servers MUST respond with HTTP 403 Forbidden.",
    area=AREA,
    transports=HTTP,
    aliases=("dns-rebinding-protection", "localhost-host-rebinding-rejected"),
    note=(
        "Probed with Origin http://mcp-conformance.invalid (a reserved name) against a server on a "
        "loopback address: the DNS rebinding case, invalid under any policy of a local server."
    ),
)

define(
    "transport.http.bind-localhost",
    "SHOULD",
    since="2024-11-05",
    url=spec_url(V2026, PAGE_2026, "security--endpoint"),
    quote=(
        "When running locally, servers SHOULD bind only to localhost (127.0.0.1) rather than all "
        "network interfaces (0.0.0.0)"
    ),
    area=AREA,
    transports=[Transport.STREAMABLE_HTTP, Transport.SSE],
    note=(
        "Judged when the server's URL names a loopback address (it runs on this machine): a TCP "
        "connection to its port on this machine's other addresses -- each non-loopback IPv4 "
        "address, and 127.0.0.2, which a socket bound to 0.0.0.0 also accepts on Linux while one "
        "bound to 127.0.0.1 does not -- must be refused. One accepted is a warning: the server "
        "listens beyond 127.0.0.1. 2024-11-05 words it for the HTTP+SSE transport."
    ),
)

# -- GET stream ------------------------------------------------------------------------------------

define(
    "transport.http.get.sse-or-405",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("listening-for-messages-from-the-server"),
    quote=(
        "The server MUST either return `Content-Type: text/event-stream` in response to this HTTP "
        "GET, or else return HTTP 405 Method Not Allowed, indicating that the server does not "
        "offer an SSE stream at this endpoint."
    ),
    area=AREA,
    transports=HTTP,
    note="Probed with a valid session id and Accept: text/event-stream.",
)

define(
    "transport.http.get.no-response",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("listening-for-messages-from-the-server"),
    quote=(
        "The server MUST NOT send a JSON-RPC _response_ on the stream unless resuming a stream "
        "associated with a previous client request."
    ),
    area=AREA,
    transports=HTTP,
    note="Every GET stream of the run without Last-Event-ID is checked.",
)

define(
    "transport.http.get-delete-405-2026",
    "SHOULD",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "earlier-streamable-http-revisions"),
    quote=(
        "A server that supports only this revision and receives such traffic from an older client "
        "SHOULD respond as follows: - HTTP GET or DELETE to the MCP endpoint: respond with `405 "
        "Method Not Allowed`."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged only on a server that supports only this revision: one that answers a legacy "
        "client's initialize (no 2026-07-28 headers) is skipped, since it serves GET and DELETE "
        "for those clients.  Probed with MCP-Protocol-Version: 2026-07-28 and no session id."
    ),
)

define(
    "transport.http.get.messages-unrelated",
    "SHOULD",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("listening-for-messages-from-the-server"),
    quote="These messages SHOULD be unrelated to any concurrently-running JSON-RPC _request_ from the client.",
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on the messages whose request is known: a progress notification carrying the "
        "progressToken of one of our requests that arrives on a GET stream (not a resumption) "
        "and not on the request's own stream.  Other notifications and server requests name no "
        "request, so which one they relate to cannot be seen.  The same message on both streams "
        "is transport.http.streams.no-broadcast."
    ),
)

# -- SSE streams: priming, retry, resumption, several streams --------------------------------------

define(
    "transport.http.sse.priming-event",
    "SHOULD",
    since="2025-11-25",
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote=(
        "The server SHOULD immediately send an SSE event consisting of an event ID and an empty "
        "`data` field in order to prime the client to reconnect (using that event ID as "
        "`Last-Event-ID`)."
    ),
    area=AREA,
    transports=HTTP,
    aliases=("server-sse-priming-event",),
    note="'Immediately' is read as 'first on the stream'; every SSE answer to a POST in the run is checked.",
)

define(
    "transport.http.sse.retry-before-close",
    "SHOULD",
    since="2025-11-25",
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote=(
        "If the server does close the _connection_ prior to terminating the _SSE stream_, it "
        "SHOULD send an SSE event with a standard `retry` field before closing the connection."
    ),
    area=AREA,
    transports=HTTP,
    aliases=("server-sse-retry-field",),
    note=(
        "Checked with the official fixture tool test_reconnection, when the server lists it: it "
        "closes its SSE connection before answering.  Elsewhere a stream that ends without a "
        "response cannot be told apart from one the server terminated (a cancelled request), so "
        "it is not judged."
    ),
)

_SSE_ANSWER_NOTE = (
    "Probe: a request likely answered with an SSE stream (ping; else the official progress "
    "fixture test_tool_with_progress with a progressToken), on a connection of its own; and every "
    "SSE answer to a POST of the run that has ended.  Requests we cancelled are left out (the "
    "server owes them no response)."
)

define(
    "transport.http.sse.no-close-before-response",
    "SHOULD",
    versions=(FIRST, "2025-06-18"),
    url=spec_url("2025-06-18", PAGE, "sending-messages-to-the-server"),
    quote="The server SHOULD NOT close the SSE stream before sending",
    area=AREA,
    transports=HTTP,
    note=(
        "The sentence goes on: 2025-03-26 'a JSON-RPC response per each received JSON-RPC "
        "request, unless the session expires.', 2025-06-18 'the JSON-RPC response for the "
        "received JSON-RPC request, unless the session expires.'  An SSE answer the server ended "
        "without the response to each request of its POST gets a warning (the session had not "
        "expired: the suite goes on using it).  2025-11-25 lets the server close the connection "
        "early and have the client poll (transport.http.sse.eventual-response).  "
        + _SSE_ANSWER_NOTE
    ),
)

define(
    "transport.http.sse.eventual-response",
    "SHOULD",
    versions=("2025-11-25",),
    url=_url("sending-messages-to-the-server"),
    quote=(
        "The SSE stream SHOULD eventually include a JSON-RPC _response_ for the JSON-RPC "
        "_request_ sent in the POST body."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on the probe's SSE answer only: when the server ends it before the response, the "
        "suite resumes it (GET with the last event id as Last-Event-ID), as a polling client "
        "does, and waits up to --timeout for the response there.  A stream without event ids "
        "cannot be resumed, so its response is lost.  Earlier revisions word the same duty as "
        "'SHOULD NOT close the SSE stream before sending' the response "
        "(transport.http.sse.no-close-before-response)."
    ),
)

_CLOSE_AFTER_NOTE = (
    "Judged on the probe's SSE answer (still open --timeout after its response: a warning) and on "
    "every SSE answer to a POST of the run that the suite closed itself at least 1 s after the "
    "last response arrived on it.  " + _SSE_ANSWER_NOTE
)

define(
    "transport.http.sse.close-after-response",
    "SHOULD",
    versions=("2025-06-18", "2025-11-25"),
    url=_url("sending-messages-to-the-server"),
    quote="After the JSON-RPC _response_ has been sent, the server SHOULD",
    area=AREA,
    transports=HTTP,
    note=(
        "The sentence ends 'close the SSE stream.' (2025-06-18) or 'terminate the SSE stream.' "
        "(2025-11-25).  " + _CLOSE_AFTER_NOTE
    ),
)

define(
    "transport.http.sse.close-after-responses-2025-03-26",
    "SHOULD",
    versions=(FIRST,),
    url=spec_url(FIRST, PAGE, "sending-messages-to-the-server"),
    quote="After all JSON-RPC _responses_ have been sent, the server SHOULD close the SSE stream.",
    area=AREA,
    transports=HTTP,
    note="2025-03-26 allows a batch of requests in a POST: all their responses.  " + _CLOSE_AFTER_NOTE,
)

define(
    "transport.http.sse.disconnect-not-cancel",
    "SHOULD",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("sending-messages-to-the-server"),
    quote="Disconnection SHOULD NOT be interpreted as the client cancelling its request.",
    area=AREA,
    transports=HTTP,
    note=(
        "The server's duty (2026-07-28 turns it round: closing the stream cancels).  Probe, when "
        "the server lists the official fixture test_tool_with_progress and answers it with an "
        "SSE stream whose events have ids: the suite drops the connection after the first event "
        "with an id and resumes the stream from that event (GET with Last-Event-ID).  The "
        "response must come on the resumed stream.  Only a server that shows it resumes (it "
        "replays or sends something there) and then ends the stream, or stays silent for "
        "--timeout, without the response is judged to have dropped the request; a refused or "
        "empty resumption says nothing (resumption is optional)."
    ),
)

define(
    "transport.http.sse.event-id-unique",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("resumability-and-redelivery"),
    quote=(
        "If present, the ID MUST be globally unique across all streams within that session—or all "
        "streams with that specific client, if session management is not in use."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Every SSE event id of the run, per session.  An event replayed with its id and data on a "
        "stream resumed with Last-Event-ID is the same event, not a second use of the id (which "
        "stream it may be replayed on is transport.http.resume.same-stream)."
    ),
)

define(
    "transport.http.resume.same-stream",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("resumability-and-redelivery"),
    quote="The server MUST NOT replay messages that would have been delivered on a different stream.",
    area=AREA,
    transports=HTTP,
    note=(
        "Resumption is optional (servers MAY attach event ids, MAY replay): without event ids, or "
        "when the GET with Last-Event-ID is refused, the rule is skipped with the reason.  A "
        "response on the resumed stream to a request that was sent on another stream is a "
        "message of that other stream."
    ),
)

define(
    "transport.http.streams.no-broadcast",
    "MUST",
    since=FIRST,
    until=LATEST_STATEFUL,
    url=_url("multiple-connections"),
    quote=(
        "The server MUST send each of its JSON-RPC messages on only one of the connected streams; "
        "that is, it MUST NOT broadcast the same message across multiple streams."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on messages that are recognisably the same message: responses (one per request "
        "id), server requests (one per id) and progress notifications for a token we chose.  "
        "Streams resumed with Last-Event-ID replay legitimately and are left to "
        "transport.http.resume.same-stream."
    ),
)

# -- 2026-07-28: the endpoint, notifications, SSE response streams -----------------------------------

define(
    "transport.http.endpoint-post-2026",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE_2026),
    quote=(
        "The server MUST provide a single HTTP endpoint path (hereafter referred to as the MCP "
        "endpoint) that supports POST."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "The endpoint is the URL the suite was given. Judged on every POST of the run carrying a "
        "2026-07-28 request (its _meta and MCP-Protocol-Version naming the version): an answer "
        "that is 404 Not Found, 405 Method Not Allowed or a redirect (3xx) with no JSON-RPC "
        "message in its body says the path does not serve MCP over POST (a 404 of this revision "
        "carries a -32601 error; errors of other statuses are judged by their own rules)."
    ),
)


define(
    "transport.http.post.notification-refused-2026",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "sending-messages"),
    quote="If the server cannot accept it, it MUST return an HTTP error status code (e.g., `400 Bad Request`).",
    area=AREA,
    transports=HTTP,
    note=(
        "'it' is a JSON-RPC notification POSTed to the endpoint. Judged on every notification "
        "POST of the run (the suite sends notifications/cancelled for a request never sent): a "
        "refusal told in a JSON-RPC error body under a 1xx, 2xx or 3xx status is flagged. A 4xx "
        "or 5xx passes, with or without a body; accepting the notification is judged by "
        "transport.http.post.accepted-202-2026."
    ),
)

define(
    "transport.http.sse.notifications-related-2026",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "receiving-messages"),
    quote="These notifications MUST relate to the originating client request.",
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on every SSE answer to a POSTed request of the run, subscriptions/listen "
        "excepted (its stream carries the change notifications the client opted in to). "
        "Flagged: a notification that only a listen stream carries (list_changed, "
        "resources/updated, subscriptions/acknowledged), and a notifications/progress for the "
        "progressToken of another request of ours (a token no request carried references no "
        "active request: progress.token). "
        "notifications/message and notification methods this revision does not define are "
        "accepted: nothing shows they belong to another request."
    ),
)

define(
    "transport.http.sse.response-ends-stream-2026",
    "SHOULD",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "receiving-messages"),
    quote="The final JSON-RPC _response_ SHOULD terminate the stream.",
    area=AREA,
    transports=HTTP,
    note=(
        "Probe: a request likely to be answered with an SSE stream (server/discover, else the "
        "official fixture test_tool_with_progress with a progressToken); after its response, "
        "the server has --timeout seconds to end the stream. Flagged (warning): the stream "
        "still open then, or a message after the response. Skipped when no request was "
        "answered with SSE (application/json is allowed)."
    ),
)

define(
    "transport.http.sse.x-accel-buffering",
    "SHOULD",
    since=V2026,
    url=spec_url(V2026, PAGE_2026, "receiving-messages"),
    quote=(
        "When initiating an SSE stream, servers SHOULD include the `X-Accel-Buffering: no` header "
        "in the HTTP response."
    ),
    area=AREA,
    transports=HTTP,
    note=(
        "Judged on every POST of the run answered with text/event-stream: the X-Accel-Buffering "
        "header with the value no (compared case-insensitively, as nginx does)."
    ),
)
