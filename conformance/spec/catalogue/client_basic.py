"""basic/index (2024-11-05: basic/messages): the JSON-RPC message rules, as duties of the client.

Clients send requests and notifications in every version.  They send responses only up to
2025-11-25: in 2026-07-28 "Servers MUST NOT initiate JSON-RPC requests, and clients do not send
JSON-RPC responses" (basic/patterns), and the transport pages forbid client responses
(client.stdio.no-responses, client.http2026.no-responses), so the response rules below apply to
clients up to 2025-11-25 only.  Judged by the suite's server: on every message the client sent
("W"), or on the client's answers to requests the suite's server sent on purpose ("P").
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

PAGE = "basic/index"  # 2024-11-05: basic/messages (and basic/index for the first sentence)
AREA = "basic"
JSONRPC_URL = "https://www.jsonrpc.org/specification"

_NO_2026_RESPONSES = (
    " In 2026-07-28 clients send no JSON-RPC responses (the suite's server sends no requests; "
    "client.stdio.no-responses, client.http2026.no-responses), so the sentence, which that "
    "revision keeps, has no client message to apply to there."
)

_ID_PROBES = (
    "Probes: the suite's server sends requests (ping, roots/list, sampling/createMessage, "
    "elicitation/create, a method that does not exist) with string ids: strings of digits for "
    "the pings and the unknown method (\"701\"), other strings for the rest; the same ID means "
    "the same JSON value and type (\"701\" and 701 are different ids, so a client that answers "
    "\"701\" with 701 fails)."
)

# -- messages ---------------------------------------------------------------------------------------

define(
    "client.basic.jsonrpc",
    "MUST",
    url=spec_url(LATEST, PAGE, "messages"),
    quote="All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
    role="client",
    area=AREA,
    note=(
        "Judged on every message the client sent during the run: one JSON value per message, a "
        "JSON-RPC 2.0 object with jsonrpc \"2.0\" (a request, a notification or, up to 2025-11-25, "
        "a response). 2024-11-05 has this sentence on basic/index; its basic/messages page words "
        "it 'All messages in MCP MUST follow the JSON-RPC 2.0 specification.'"
    ),
)

define(
    "client.basic.schema-valid",
    "MUST",
    url=spec_url(LATEST, PAGE, "schema"),
    quote=(
        "The full specification of the protocol is defined as a TypeScript schema. "
        "This is the source of truth for all protocol messages and structures."
    ),
    role="client",
    area=AREA,
    note=(
        "The sentence has no RFC 2119 keyword; it makes the schema the definition of every "
        "protocol message, and MCP requires every message to follow JSON-RPC 2.0 (MUST), so a "
        "client message that the official JSON Schema of the version in use rejects (a request as "
        "a ClientRequest, a notification as a ClientNotification, a response as a ClientResult or "
        "a JSON-RPC error) is graded as a MUST violation, like basic.schema.messages-valid for "
        "servers. The version in use is the negotiated one (up to 2025-11-25) or the one named "
        "in the request's _meta (2026-07-28)."
    ),
)

# -- requests ---------------------------------------------------------------------------------------

define(
    "client.basic.request-id-type",
    "MUST",
    url=spec_url(LATEST, PAGE, "requests"),
    quote="Requests MUST include a string or integer ID.",
    role="client",
    area=AREA,
    note=(
        "Judged on every request the client sent: an id member that is a string or an integer "
        "(not a fraction, a boolean, an array or an object)."
    ),
)

define(
    "client.basic.request-id-not-null",
    "MUST",
    url=spec_url(LATEST, PAGE, "requests"),
    quote="Unlike base JSON-RPC, the ID MUST NOT be `null`.",
    role="client",
    area=AREA,
    note="Judged on every request the client sent.",
)

define(
    "client.basic.request-id-unique",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "requests"),
    quote=(
        "The request ID MUST NOT have been previously used by the requestor within the same "
        "session."
    ),
    role="client",
    area=AREA,
    note=(
        "Judged on every request the client sent, per session, counting every request from "
        "initialize on (the initialize request belongs to the session it opens: on streamable "
        "HTTP, to the MCP-Session-Id our answer to it issued): one stdio server process, one "
        "HTTP+SSE connection, one MCP-Session-Id on streamable HTTP (without a session id: from "
        "one initialize to the next). A new session (a new initialize, e.g. after a 404) starts a "
        "new scope. Only the client's own ids count (the requestor); ids of the server's requests "
        "are a separate space. 2026-07-28 narrows the rule to requests in flight "
        "(client.basic.request-id-unique-inflight)."
    ),
)

define(
    "client.basic.request-id-unique-inflight",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, PAGE, "requests"),
    quote=(
        "The request ID MUST NOT match the ID of any other request the sender has issued and not "
        "yet received a response for."
    ),
    role="client",
    area=AREA,
    note=(
        "Judged per stdio server process, and over all POSTs to the MCP endpoint on streamable "
        "HTTP (2026-07-28 has no sessions): a request whose id equals that of an earlier client "
        "request still unanswered is flagged; reusing an id after its response arrived is "
        "allowed. A request the client cancelled (notifications/cancelled on stdio, closing the "
        "response stream on HTTP) no longer counts as unanswered."
    ),
)

# -- responses (the client answering the suite's server) ---------------------------------------------
# Up to 2025-06-18 one sentence covers every response (2024-11-05 has it on basic/messages);
# 2025-11-25 splits it into result responses and error responses.

define(
    "client.basic.response-id-echo",
    "MUST",
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "responses"),
    quote="Responses MUST include the same ID as the request they correspond to.",
    role="client",
    area=AREA,
    note=_ID_PROBES,
)

define(
    "client.basic.result-id-echo",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "result-responses"),
    quote="Result responses MUST include the same ID as the request they correspond to.",
    role="client",
    area=AREA,
    note=_ID_PROBES + _NO_2026_RESPONSES,
)

define(
    "client.basic.error-id-echo",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "error-responses"),
    quote=(
        "Error responses MUST include the same ID as the request they correspond to (except in "
        "error cases where the ID could not be read due a malformed request)."
    ),
    role="client",
    area=AREA,
    note=(
        "Probes: requests the client is expected to refuse (a method that does not exist, "
        "roots/list, sampling/createMessage or elicitation/create to a client that did not "
        "declare the capability) with string and integer ids; the suite's server sends only "
        "well-formed requests, so the exception does not arise." + _NO_2026_RESPONSES
    ),
)

define(
    "client.basic.result-xor-error",
    "MUST",
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "responses"),
    quote="Either a `result` or an `error` MUST be set. A response MUST NOT set both.",
    role="client",
    area=AREA,
    note=(
        "Judged on every response the client sent. 2025-11-25 no longer words it this way: it "
        "splits responses into result responses ('Result responses MUST include a `result` "
        "field.') and error responses ('Error responses MUST include an `error` field with a "
        "`code` and `message`.'), whose schema definitions admit only one of the two members; "
        "there a response with both, or with neither, is judged by client.basic.schema-valid."
    ),
)

define(
    "client.basic.error-code-integer",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "error-responses"),
    quote="Error codes MUST be integers.",
    role="client",
    area=AREA,
    note="Judged on every error response the client sent." + _NO_2026_RESPONSES,
)

define(
    "client.jsonrpc.method-not-found",
    "MUST",
    until=LATEST_STATEFUL,
    url=f"{JSONRPC_URL}#error_object",
    quote="-32601 Method not found: The method does not exist / is not available.",
    role="client",
    area=AREA,
    source="jsonrpc",
    note=(
        "The code comes from the table of pre-defined errors (JSON-RPC 2.0 section 5.1). Judged "
        "when the suite's server sends the client a request for a method no MCP version defines: "
        "the client's error response must carry -32601. roots/list to a client without roots is "
        "client.roots.unsupported-error. Up to 2025-11-25 only: in 2026-07-28 servers send no "
        "requests."
    ),
)

# -- notifications ----------------------------------------------------------------------------------

define(
    "client.basic.notification-no-id",
    "MUST",
    url=spec_url(LATEST, PAGE, "notifications"),
    quote="Notifications MUST NOT include an ID.",
    role="client",
    area=AREA,
    note=(
        "Judged on every notification the client sent (notifications/initialized, "
        "notifications/cancelled, notifications/progress, notifications/roots/list_changed, ...): "
        "a message with a notification method and an id member is flagged."
    ),
)

define(
    "client.basic.notification-no-response",
    "MUST",
    since="2025-03-26",
    url=spec_url(LATEST, PAGE, "notifications"),
    quote=(
        "Notifications are sent from the client to the server or vice versa, as a one-way "
        "message. The receiver MUST NOT send a response."
    ),
    role="client",
    area=AREA,
    note=(
        "Probe: the suite's server sends notifications (a list change, a log message, progress "
        "for an unknown token, invalid cancellations), then a ping as a barrier (up to "
        "2025-11-25); a client response whose id matches no request of the server (or that "
        "arrives with id null) is flagged. 2024-11-05 only says notifications 'do not expect a "
        "response' (no keyword): not applied there."
    ),
)

# -- batches (2025-03-26 only) ----------------------------------------------------------------------

define(
    "client.basic.batch-receive",
    "MUST",
    versions=("2025-03-26",),
    url=spec_url("2025-03-26", PAGE, "batching"),
    quote=(
        "MCP implementations MAY support sending JSON-RPC batches, but MUST support receiving "
        "JSON-RPC batches."
    ),
    role="client",
    area=AREA,
    note=(
        "Only 2025-03-26 has the sentence (2024-11-05 does not mention batches, 2025-06-18 "
        "removed them), and it binds clients as well. Probe, after the client negotiated "
        "2025-03-26: the suite's server sends one JSON array holding two pings and a "
        "notification as a single message of the transport; both pings must be answered, as a "
        "batch or one by one."
    ),
)

# -- _meta key names (2025-06-18 and later) ---------------------------------------------------------

_META_KEYS_NOTE = (
    "Judged on every `_meta` object of every message the client sent: params._meta of its "
    "requests and notifications, result._meta of its responses (up to 2025-11-25) and those of "
    "the protocol objects inside, not those inside data of its own (arguments, form content, "
    "schemas, experimental and extension settings). The server-side twin is "
)

define(
    "client.basic.meta-key-prefix",
    "MUST",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "_meta"),
    quote=(
        "If specified, MUST be a series of labels separated by dots (`.`), followed by a slash "
        "(`/`). - Labels MUST start with a letter and end with a letter or digit; interior "
        "characters can be letters, digits, or hyphens (`-`)."
    ),
    role="client",
    area=AREA,
    note=_META_KEYS_NOTE + "basic.meta.key-prefix, whose note says what is flagged.",
)

define(
    "client.basic.meta-key-name",
    "MUST",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "_meta"),
    quote="Unless empty, MUST begin and end with an alphanumeric character (`[a-z0-9A-Z]`).",
    role="client",
    area=AREA,
    note=_META_KEYS_NOTE + "basic.meta.key-name, whose note says what is flagged.",
)

define(
    "client.basic.meta-reverse-dns",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "_meta"),
    quote="Implementations SHOULD use reverse DNS notation (e.g., `com.example/` rather than `example.com/`).",
    role="client",
    area=AREA,
    note=_META_KEYS_NOTE + "basic.meta.reverse-dns, whose note says what is flagged.",
)

define(
    "client.basic.meta-trace-context",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, PAGE, "_meta"),
    quote=(
        "When present, their values MUST follow W3C Trace Context and W3C Baggage formats "
        "respectively."
    ),
    role="client",
    area=AREA,
    note=_META_KEYS_NOTE + (
        "basic.meta.trace-context, whose note says what is flagged (the page's example puts "
        "traceparent in the _meta of a client's tools/call). Skipped when the client sent none "
        "of traceparent, tracestate, baggage."
    ),
)

# -- JSON Schema dialects (2025-11-25 and later) -------------------------------------------------------

_DIALECT_PROBE = (
    "Probe, with the other server requests of 2025-11-25 (scenario server_requests), to a client "
    "that declared elicitation in form mode: elicitation/create whose requestedSchema (which may "
    "carry $schema) is a one-field form. In 2026-07-28 elicitation is an input request inside an "
    "InputRequiredResult and the client sends no responses, so there is no error for it to return: "
    "the rule is judged on 2025-11-25 only."
)

define(
    "client.basic.schema-dialect-2020-12",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "schema-dialect"),
    quote=(
        "Supported dialects: Implementations MUST support at least 2020-12 and SHOULD document "
        "which additional dialects they support"
    ),
    role="client",
    area=AREA,
    note=_DIALECT_PROBE + (
        " The form names \"$schema\": \"https://json-schema.org/draft/2020-12/schema\"; judged "
        "against the same client's answer to the form without $schema (the default dialect, "
        "2020-12 too): a result there and an error here means the client does not support 2020-12 "
        "named explicitly. A client that refused the plain form as well is not judged. Documentation "
        "of further dialects is not observable."
    ),
)

define(
    "client.basic.schema-dialect-unsupported",
    "MUST",
    versions=(LATEST_STATEFUL,),
    url=spec_url(LATEST_STATEFUL, PAGE, "implementation-requirements"),
    quote=(
        "Clients and servers MUST validate schemas according to their declared or default dialect. "
        "They MUST handle unsupported dialects gracefully by returning an appropriate error "
        "indicating the dialect is not supported."
    ),
    role="client",
    area=AREA,
    note=_DIALECT_PROBE + (
        " The form names \"$schema\": \"https://mcp-conformance.invalid/json-schema/no-such-dialect\", "
        "a URI that names no dialect, so no implementation supports it: expected an error response "
        "(any code; the wording of its message is not judged). A result -- accept, decline or "
        "cancel -- is flagged: the client served or refused the form as a form instead of saying the "
        "dialect is not supported; no answer within the timeout is flagged too."
    ),
)

define(
    "client.basic.schema-no-network-ref",
    "MUST",
    since=LATEST,
    transports=("streamable-http",),
    url=spec_url(LATEST, PAGE, "ref-resolution"),
    quote="Implementations MUST NOT automatically dereference `$ref` values that resolve to a network URI.",
    role="client",
    area=AREA,
    note=(
        "Probe, in every 2026-07-28 run over streamable HTTP whose scenario server lists its default "
        "tools: beside add_numbers, the first page of tools/list holds ref_probe, whose inputSchema "
        "defines its one property as {\"$ref\": \"http://127.0.0.1:<port>/<token>/mcp-conformance-"
        "ref/value.schema.json\"}, a URI of the suite's own HTTP listener. Any HTTP request for it "
        "during the run is the client dereferencing a network $ref (an opt-in mode that does so 'MUST be "
        "disabled by default'). A pass says only that nothing fetched it: a client that never looked "
        "at the schema passes as well. On stdio the suite has no listener to see a fetch."
    ),
)
