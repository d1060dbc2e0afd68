"""basic/index (2026-07-28): per-request ``_meta``, client capabilities, ``resultType``, the error
code allocation policy, statelessness; and cancellation on stdio (basic/transports/stdio)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

V = "2026-07-28"
PAGE = "basic/index"
HTTP = (Transport.STREAMABLE_HTTP,)

_META_QUOTE = (
    "A request missing any required field is malformed; the server MUST reject it with JSON-RPC "
    "error code `-32602` (Invalid params)."
)
_CAPABILITY_QUOTE = (
    "If processing a request requires a capability the client did not include in "
    "`io.modelcontextprotocol/clientCapabilities`, the server MUST return a "
    "`MissingRequiredClientCapabilityError` (`-32021`) whose `data.requiredCapabilities` lists "
    "the missing capabilities."
)

# -- per-request _meta ----------------------------------------------------------------------------

define(
    "stateless.meta.required-fields",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "_meta"),
    quote=_META_QUOTE,
    area="stateless",
    aliases=(
        "sep-2575-request-meta-invalid-missing-meta",
        "sep-2575-request-meta-invalid-missing-protocol-version",
        "sep-2575-request-meta-invalid-missing-client-capabilities",
    ),
    note=(
        "Probes: server/discover without params._meta, with _meta lacking "
        "io.modelcontextprotocol/protocolVersion, and with _meta lacking "
        "io.modelcontextprotocol/clientCapabilities. The last one declares 2026-07-28 and must "
        "get -32602. The first two carry no modern _meta, and 'A request carrying modern "
        "per-request _meta is served statelessly' (basic/versioning) lets a dual-era server read "
        "them as a legacy client's requests: -32602 is expected, but any error is accepted; on "
        "HTTP, where the MCP-Protocol-Version header still names 2026-07-28, HeaderMismatch "
        "(-32020) is accepted too (the header no longer matches the body)."
    ),
)

define(
    "stateless.meta.required-fields.http-400",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "_meta"),
    quote=_META_QUOTE + " On HTTP, the response status MUST be `400 Bad Request`.",
    area="stateless",
    transports=HTTP,
    aliases=("sep-2575-http-server-meta-invalid-400",),
)

define(
    "stateless.meta.client-info-optional",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "_meta"),
    quote=(
        "Clients SHOULD include `io.modelcontextprotocol/clientInfo` on every request unless "
        "specifically configured not to do so."
    ),
    area="stateless",
    aliases=("sep-2575-request-meta-client-info-optional",),
    note=(
        "The per-request table marks clientInfo 'Required: No' and clients may be configured not "
        "to send it, so a server that rejects a request only because clientInfo is absent refuses "
        "conforming clients. No sentence words the server's duty: graded SHOULD. Probe: a list "
        "request of a declared feature (else server/discover) whose _meta has protocolVersion and "
        "clientCapabilities only."
    ),
)

define(
    "stateless.missing-client-capability",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "_meta"),
    quote=_CAPABILITY_QUOTE,
    area="stateless",
    aliases=("sep-2575-server-rejects-undeclared-capability", "input-required-result-capability-check"),
    note=(
        "Probe: tools that ask for client input (an InputRequiredResult when the client declares "
        "elicitation, sampling and roots; official fixture names first) are called with empty "
        "clientCapabilities. Expected: -32021 whose data.requiredCapabilities is a "
        "ClientCapabilities object naming what is missing, or a result that does not need the "
        "capability. Any other error is flagged. Skipped when no tool asks for input."
    ),
)

define(
    "stateless.missing-client-capability.http-400",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "_meta"),
    quote=_CAPABILITY_QUOTE + " On HTTP, the response status MUST be `400 Bad Request`.",
    area="stateless",
    transports=HTTP,
    aliases=("sep-2575-missing-capability-http-400",),
)

define(
    "stateless.result-meta.server-info",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "_meta"),
    quote=(
        "Servers SHOULD include the following `io.modelcontextprotocol/*` field in every result's "
        "`_meta`, unless specifically configured not to do so, to identify themselves without "
        "relying on any prior connection state:"
    ),
    area="stateless",
    note=(
        "The field is io.modelcontextprotocol/serverInfo (an Implementation: name and version). "
        "Checked on every result the server sent to a 2026-07-28 request during the run "
        "(server/discover has its own requirement, discover.server-info)."
    ),
)

# -- results and errors ---------------------------------------------------------------------------

define(
    "stateless.result-type",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "result-responses"),
    quote="The `result` MUST include a `resultType` field to indicate the type of the result.",
    area="stateless",
    aliases=("input-required-result-result-type",),
    note=(
        "Checked on every result the server sent to a 2026-07-28 request during the run. The value "
        "must indicate a type the client can recognise: 'The set of supported ResultType values "
        "MUST be created from the set defined in the core protocol and include any additional "
        "values of supported extensions that are advertised via capabilities', so 'complete' and "
        "'input_required' are accepted, and any other string only from a server that advertises "
        "extensions in its capabilities."
    ),
)

define(
    "stateless.error-codes.reserved-range",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "error-codes"),
    quote=(
        "Implementations MUST NOT emit any code from this sub-range that is not defined by this "
        "specification and MUST use defined codes only with their specified meanings."
    ),
    area="stateless",
    note=(
        "The sub-range is -32020 to -32099; this revision defines -32020 (HeaderMismatch), -32021 "
        "(MissingRequiredClientCapability) and -32022 (UnsupportedProtocolVersion). Checked on "
        "every error the server sent during the run; the meaning of the defined codes is checked "
        "where the suite provokes them."
    ),
)

define(
    "stateless.error-codes.retired",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "error-codes"),
    quote="Implementations of this protocol version MUST NOT emit these codes:",
    area="stateless",
    note=(
        "The codes: -32002 (resource not found, 2025-11-25 and earlier; replaced by -32602) and "
        "-32042 (URL elicitation required, 2025-11-25 only). Checked on every error the server "
        "sent to a 2026-07-28 request during the run, except a -32002 answer to resources/read: "
        "that one is judged by resources.read.not-found-invalid-params."
    ),
)

define(
    "stateless.error-codes.legacy-range",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "error-codes"),
    quote=(
        "`-32000` to `-32019` — legacy. Codes in this sub-range were allocated by implementations "
        "before this policy was introduced. New codes MUST NOT be allocated in this sub-range, and "
        "new implementations SHOULD NOT use codes from this sub-range at all. Apart from `-32002` "
        "(see below), receivers MUST NOT assume any specific meaning for these codes."
    ),
    area="stateless",
    note=(
        "What the wire shows is a code in -32000..-32019 in an error the server sent to a "
        "2026-07-28 request; whether the code was allocated before the policy, and whether the "
        "implementation is 'new', is not, so the observable part is graded as the SHOULD NOT: a "
        "warning. -32002 is stateless.error-codes.retired's (a MUST). What a receiver assumes "
        "about these codes is internal (the client side of the sentence is not judged)."
    ),
)

define(
    "stateless.error-codes.outside-reserved",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "error-codes"),
    quote=(
        "New error codes for purposes not defined by this specification SHOULD be allocated "
        "outside the JSON-RPC reserved range (`-32768` to `-32000`); the remainder of the integer "
        "space is available for application-defined errors."
    ),
    area="stateless",
    note=(
        "Checked on every error the server sent to a 2026-07-28 request during the run: a code in "
        "-32768..-32100 other than JSON-RPC's own (-32700, -32600 to -32603) is flagged. "
        "-32000..-32019 is stateless.error-codes.legacy-range's, -32020..-32099 "
        "stateless.error-codes.reserved-range's."
    ),
)

define(
    "stateless.no-server-requests",
    "MUST",
    since=V,
    url=spec_url(V, "basic/patterns"),
    quote="Servers MUST NOT initiate JSON-RPC requests, and clients do not send JSON-RPC responses.",
    area="stateless",
    aliases=("sep-2575-http-server-no-independent-requests-on-stream",),
    note=(
        "Server-to-client interactions are input requests inside an InputRequiredResult (MRTR); the "
        "transport pages repeat it ('The server MUST NOT send independent JSON-RPC requests on this "
        "stream', 'The server MUST NOT write JSON-RPC requests to stdout'). Checked on every "
        "message the server sent during the run on connections that spoke 2026-07-28 only (not on "
        "one a dual-era server turned legacy with initialize)."
    ),
)

# -- statelessness --------------------------------------------------------------------------------

define(
    "stateless.no-prior-context",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "statelessness"),
    quote=(
        "Servers MUST NOT rely on prior requests over the same connection to establish context "
        "(e.g., capabilities, protocol version, client identity)."
    ),
    area="stateless",
    note=(
        "Probe: on one connection, a tool that asks for client input is called with the "
        "capability it needs declared, then again with empty clientCapabilities; the second call "
        "must not be answered with an input request for the capability only the first one "
        "declared."
    ),
)

define(
    "stateless.no-connection-affinity",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "statelessness"),
    quote=(
        "Servers SHOULD NOT require that a client reuse the same connection or process to perform "
        "related operations."
    ),
    area="stateless",
    transports=HTTP,
    note=(
        "Probe (streamable HTTP): the retry of a multi round-trip request (inputResponses and the "
        "echoed requestState) is sent on a new HTTP connection; it must be served as on the "
        "original one. On stdio a connection is the server process itself, so this is not checked "
        "there."
    ),
)

define(
    "stateless.cancellation.stdio-no-further-messages",
    "MUST",
    since=V,
    url=spec_url(V, "basic/transports/stdio", "cancellation"),
    quote=(
        "Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT send any "
        "further messages for it."
    ),
    area="stateless",
    transports=(Transport.STDIO,),
    note=(
        "Probe: a subscriptions/listen request is cancelled with notifications/cancelled, a list "
        "change is triggered (a tool named like test_trigger_tool_change) and a second, open "
        "subscription receives its notification; after a barrier nothing tagged with the "
        "cancelled subscription's id, and no response to it, may have arrived. The SHOULD (stop "
        "work) is not observable separately."
    ),
)

define(
    "stateless.cancellation.http-no-further-messages",
    "MUST",
    since=V,
    url=spec_url(V, "basic/transports/streamable-http", "cancellation"),
    quote=(
        "The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT "
        "send any further messages for it."
    ),
    area="stateless",
    transports=HTTP,
    note=(
        "On streamable HTTP closing the request's response stream cancels it, so the closed "
        "stream can carry nothing more; what is judged is every other stream. Probe: a "
        "subscriptions/listen request is cancelled by closing its stream, a list change is "
        "triggered (a tool named like test_trigger_tool_change) and a second, open subscription "
        "receives its notification; after a barrier nothing tagged with the cancelled "
        "subscription's id (io.modelcontextprotocol/subscriptionId), and no response to it, may "
        "have arrived on any stream. The SHOULD (stop work) is not observable separately."
    ),
)

define(
    "stateless.lists.connection-independent",
    "MUST",
    since=V,
    url=spec_url(V, "server/prompts", "capabilities"),
    quote=(
        "This set MAY be empty and MAY change over time (see List Changed Notification), but MUST NOT vary "
        "per-connection or as a side effect of other requests on the connection."
    ),
    area="stateless",
    note=(
        "The same sentence is on the prompts, resources and tools pages (counted once, on the first). Probe: "
        "for each of prompts/list, resources/list and tools/list the server declares, the whole list (every "
        "page) on the shared connection, on a new connection (stdio: a new server process), then on the shared "
        "one again, with nothing else running meanwhile (other items that change a list wait). Compared as "
        "sets of names (URIs for resources): the list may change over time, so only a new connection's list "
        "that differs from two equal lists around it is flagged. The same credentials go on every request "
        "(the set may vary by authorization). Varying 'as a side effect of other requests' is not probed "
        "apart: the shared connection has served the run's other requests before."
    ),
)
