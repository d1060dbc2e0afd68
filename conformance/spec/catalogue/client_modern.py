"""2026-07-28, as duties of the client: per-request _meta (basic/index#_meta), the server/discover
probe (server/discover), no client responses (basic/transports/stdio, basic/transports/streamable-
http) and the request headers and body of stateless streamable HTTP.

These rules bind requests of the 2026-07-28 era: every request of a client that never sends
initialize, and the server/discover probe of a client that supports both eras (after a fallback
to initialize the rules of the negotiated version apply).
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

V = "2026-07-28"
STDIO = (Transport.STDIO,)
HTTP = (Transport.STREAMABLE_HTTP,)
HTTP_PAGE = "basic/transports/streamable-http"

# -- per-request _meta ----------------------------------------------------------------------------

define(
    "client.meta.required-fields",
    "MUST",
    since=V,
    url=spec_url(V, "basic/index", "_meta"),
    quote=(
        "Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; "
        "fields marked as required MUST be included on every request."
    ),
    role="client",
    area="stateless",
    aliases=("request-metadata", "sep-2575-client-populates-meta"),
    note=(
        "The table marks two fields required: io.modelcontextprotocol/protocolVersion (a "
        "string) and io.modelcontextprotocol/clientCapabilities (a ClientCapabilities object). "
        "Judged on every request of the 2026-07-28 era, server/discover included, in "
        "params._meta. Notifications are not requests."
    ),
)

define(
    "client.meta.client-info",
    "SHOULD",
    since=V,
    url=spec_url(V, "basic/index", "_meta"),
    quote=(
        "Clients SHOULD include `io.modelcontextprotocol/clientInfo` on every request unless "
        "specifically configured not to do so."
    ),
    role="client",
    area="stateless",
    aliases=("sep-2575-client-sends-client-info",),
    note=(
        "The field is an Implementation (name and version). Whether a client was 'specifically "
        "configured not to' is not observable: a request of the 2026-07-28 era without it gets a "
        "warning."
    ),
)

# -- server/discover ------------------------------------------------------------------------------

define(
    "client.discover.first",
    "SHOULD",
    since=V,
    url=spec_url(V, "server/discover", "when-to-call"),
    quote=(
        "A client that supports both modern (per-request `_meta`) and legacy (`initialize` "
        "handshake) servers SHOULD send `server/discover` first; see stdio: Backward "
        "Compatibility for the fallback rules."
    ),
    role="client",
    area="stateless",
    transports=STDIO,
    note=(
        "The sentence is the 'stdio backward-compatibility probe' case of the page (on HTTP the "
        "status codes drive the fallback); the stdio page words the same duty ('SHOULD probe "
        "with server/discover before sending any other request, setting its preferred modern "
        "version in _meta'). Only a client that shows both eras to the same server (a request "
        "with 2026-07-28 _meta and an initialize) is judged: its first request must be "
        "server/discover. A client that only ever initializes cannot be told from a legacy-only "
        "client and is not judged."
    ),
)

# -- results of an earlier version ----------------------------------------------------------------

define(
    "client.result-type.absent-complete",
    "MUST",
    since=V,
    url=spec_url(V, "basic/index", "resulttype"),
    quote=(
        "For backward compatibility with servers implementing earlier protocol versions, which do "
        "not include `resultType`, clients MUST treat an absent `resultType` as `\"complete\"`."
    ),
    role="client",
    area="stateless",
    aliases=("sep-2322-default-result-type-complete",),
    note=(
        "The description of Result.resultType in the generated schema page says the same ('the "
        "client MUST treat the absent field as \"complete\"'). Probe "
        "(result_type_absent): the client's first tools/call, prompts/get or resources/read is "
        "answered with its result without resultType (otherwise complete); a client that then "
        "retries that request with inputResponses or a requestState did not take it as complete "
        "(the official runner's check). The result breaks the 2026-07-28 schema (resultType is "
        "required there): a client may note that, but must still treat it as complete."
    ),
)

# -- version negotiation --------------------------------------------------------------------------

define(
    "client.version.retry-supported",
    "SHOULD",
    since=V,
    url=spec_url(V, "basic/versioning", "protocol-version-negotiation"),
    quote=(
        "The client SHOULD select a mutually supported version from the `supported` list and "
        "retry the request, or surface an error to the user if no compatible version exists."
    ),
    role="client",
    area="stateless",
    aliases=("sep-2575-client-retry-supported-version",),
    note=(
        "Two probes, each judged from the client's first request of the 2026-07-28 era (one with "
        "protocolVersion in _meta, server/discover included) that the suite's server refuses with "
        "-32022 UnsupportedProtocolVersion (HTTP 400). version_retry refuses only that request, "
        "its supported list naming the version the client asked for (as the official runner "
        "does): expected a later request declaring a listed version (the retry); a client that "
        "sends nothing more gave up although a compatible version exists. version_none_supported "
        "refuses every request and lists only 1999-01-01: expected no further request declaring "
        "a version outside the list (the client surfaces an error). In both, a request declaring "
        "an unlisted version after the refusal (the same one again, or an initialize fallback "
        "with a legacy version: 'Do not fall back to initialize', basic/transports/stdio "
        "backward compatibility) is the violation; an initialize asking for a listed version is "
        "a retry. A client that never sends a 2026-07-28 request is not judged."
    ),
)

define(
    "client.http2026.inspect-400-body",
    "SHOULD",
    since=V,
    url=spec_url(V, HTTP_PAGE, "backward-compatibility"),
    quote=(
        "On `400 Bad Request`, the client SHOULD inspect the response body before falling back: "
        "modern servers also use `400` for `UnsupportedProtocolVersionError`, "
        "`MissingRequiredClientCapabilityError`, and header-validation failures."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "Probe (scenario modern_400_no_fallback): the client's first request of the 2026-07-28 "
        "era is refused with HTTP 400 and HeaderMismatch (-32020), a recognised modern error; "
        "everything after it is answered. 'If the body contains a recognized modern JSON-RPC "
        "error, the server speaks a modern version of MCP -- retry ... or correct the request, "
        "rather than falling back.' Flagged (warning): an initialize after the refusal. A retry, "
        "another 2026-07-28 request or nothing more passes. A client that sends no 2026-07-28 "
        "request is not judged; the -32022 case is client.version.retry-supported."
    ),
)

# -- no client responses --------------------------------------------------------------------------

_NO_RESPONSES_NOTE = (
    "Judged on every message of the 2026-07-28 era: an object with a result or an error member "
    "is flagged. The suite's server sends no requests in 2026-07-28 ('Servers MUST NOT initiate "
    "JSON-RPC requests, and clients do not send JSON-RPC responses.', basic/patterns), so such a "
    "response answers nothing."
)

define(
    "client.stdio.no-responses",
    "MUST",
    since=V,
    url=spec_url(V, "basic/transports/stdio", "sending-messages"),
    quote="The client MUST NOT write JSON-RPC _responses_.",
    role="client",
    area="transport-stdio",
    transports=STDIO,
    note=_NO_RESPONSES_NOTE,
)

define(
    "client.stdio.restart",
    "SHOULD",
    since=V,
    url=spec_url(V, "basic/transports/stdio", "unexpected-termination"),
    quote="If the server process exits unexpectedly, the client SHOULD restart it.",
    role="client",
    area="transport-stdio",
    transports=STDIO,
    note=(
        "Scenario stdio_restart: when the client's first request after server/discover arrives, the suite's server "
        "process exits (code 1) without answering it.  The client should start the server again: a second launch of "
        "the server command (a new relay connection) within the wait (twice the run's timeout, at least 4 s) "
        "passes; a client that exits, or stays without starting it, is flagged (SHOULD).  The new process is not "
        "served: what matters is that it was started."
    ),
)

define(
    "client.http2026.no-responses",
    "MUST",
    since=V,
    url=spec_url(V, HTTP_PAGE, "sending-messages"),
    quote="The client MUST NOT send JSON-RPC _responses_.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=_NO_RESPONSES_NOTE,
)

# -- stateless streamable HTTP: headers and body ----------------------------------------------------

define(
    "client.http2026.version-header",
    "MUST",
    since=V,
    url=spec_url(V, HTTP_PAGE, "protocol-version-header"),
    quote="Every POST request to the MCP endpoint MUST include an `MCP-Protocol-Version` header.",
    role="client",
    area="transport-http",
    transports=HTTP,
    aliases=("sep-2575-http-client-sends-version-header",),
    note="Judged on every POST of the 2026-07-28 era, server/discover included.",
)

define(
    "client.http2026.version-header-matches-meta",
    "MUST",
    since=V,
    url=spec_url(V, HTTP_PAGE, "protocol-version-header"),
    quote=(
        "The header value MUST match the `io.modelcontextprotocol/protocolVersion` field carried "
        "in the request body's `_meta`."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    aliases=("sep-2575-http-version-header-matches-meta",),
    note=(
        "Compared as strings, on every POST of a request that has both (a missing header is "
        "client.http2026.version-header, a missing field client.meta.required-fields)."
    ),
)

define(
    "client.http2026.standard-headers",
    "MUST",
    since=V,
    url=spec_url(V, HTTP_PAGE, "standard-request-headers"),
    quote="These headers are REQUIRED for compliance.",
    role="client",
    area="transport-http",
    transports=HTTP,
    aliases=("http-standard-headers",),
    note=(
        "REQUIRED is RFC 2119's synonym of MUST: graded MUST. The headers (the table above the "
        "sentence): Mcp-Method, from method, on all requests; Mcp-Name, from params.name or "
        "params.uri, on tools/call, resources/read and prompts/get requests. Judged on every "
        "POST carrying a request: Mcp-Method equal to the body's method, and for those three "
        "methods Mcp-Name equal to the name or uri (or its Base64 sentinel form, which the page "
        "requires when the value cannot be a plain ASCII header value). Notification POSTs are "
        "not judged: 'header requirements for notification POSTs are not defined by this "
        "revision'."
    ),
)

define(
    "client.http2026.single-body",
    "MUST",
    since=V,
    url=spec_url(V, HTTP_PAGE, "sending-messages"),
    quote="The body of the HTTP POST MUST be a single JSON-RPC _request_ or _notification_.",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "A POST body that is a JSON array or holds more than one message is flagged; a response "
        "in the body is client.http2026.no-responses."
    ),
)

# -- multi round-trip requests (InputRequiredResult) -------------------------------------------------

MRTR_PAGE = "basic/patterns/mrtr"
_MRTR_NOTE = (
    "Probe (scenario input_requests): the suite's server answers the client's first tools/call, "
    "prompts/get or resources/read with an InputRequiredResult carrying inputRequests and a "
    "requestState; judged on the client's retry (the same method with inputResponses) and on "
    "every other request it sends meanwhile. A client that makes no such request (give "
    "--call-command to make it call a tool) or does not retry is a skip with the reason."
)

define(
    "client.mrtr.echo-state",
    "MUST",
    versions=(V,),
    url=spec_url(V, MRTR_PAGE, "client-requirements-basic-workflow"),
    quote=(
        "If an `InputRequiredResult` contains the `requestState` field, the client MUST echo back "
        "the exact value of that field when retrying the original request."
    ),
    role="client",
    area="mrtr",
    note=_MRTR_NOTE,
)

define(
    "client.mrtr.construct-inputs",
    "MUST",
    versions=(V,),
    url=spec_url(V, MRTR_PAGE, "client-requirements-basic-workflow"),
    quote=(
        "If a client receives an `InputRequiredResult` that contains the `inputRequests` field, the "
        "client MUST construct the requested inputs before retrying the original request."
    ),
    role="client",
    area="mrtr",
    note=_MRTR_NOTE + " Flagged: a retry (the same method and target, carrying the requestState) "
    "without an inputResponses object. Which of the requests it answers is not judged here (a "
    "client answers only what it declared; a decline is an answer).",
)

define(
    "client.mrtr.new-id",
    "MUST",
    versions=(V,),
    url=spec_url(V, MRTR_PAGE, "client-requirements-basic-workflow"),
    quote="The JSON-RPC `id` MUST be different between the initial request and the retry, as they are independent requests.",
    role="client",
    area="mrtr",
    note=_MRTR_NOTE + " Ids are compared as JSON values: 7 and \"7\" differ.",
)

define(
    "client.mrtr.retry-only",
    "MUST",
    versions=(V,),
    url=spec_url(V, MRTR_PAGE, "client-requirements-basic-workflow"),
    quote=(
        "Both the `inputRequests` and `requestState` fields affect only the client's retry of the "
        "original request. They MUST NOT be used for any other request that the client may be "
        "sending in parallel."
    ),
    role="client",
    area="mrtr",
    note=_MRTR_NOTE + " Flagged: a request other than the retry of the original request (another "
    "method, or the same method with other arguments) that carries the requestState or "
    "inputResponses answering those inputRequests.",
)

# -- extension identifiers (basic/versioning) ------------------------------------------------------

define(
    "client.versioning.extension-identifiers",
    "MUST",
    since=V,
    url=spec_url(V, "basic/versioning", "extension-negotiation"),
    quote="Extension identifiers MUST follow the `_meta` key naming rules, with a mandatory prefix.",
    role="client",
    area="versioning",
    note=(
        "Judged on every request the client sent: the keys of "
        "_meta['io.modelcontextprotocol/clientCapabilities'].extensions must each have a prefix "
        "(a slash) of dot-separated labels and a valid name, as the server-side twin "
        "versioning.extension-identifiers says. Skipped when the client advertises no extension."
    ),
)
