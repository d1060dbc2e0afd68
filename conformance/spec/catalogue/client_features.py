"""client/roots, client/sampling, client/elicitation: the client features, as duties of the client.

Up to 2025-11-25 a client declares its capabilities in the initialize request and the server asks
for roots, sampling and elicitation with requests of its own; in 2026-07-28 the client declares
them in the _meta of each request and the server asks through input requests of an
InputRequiredResult (basic/patterns/mrtr), answered in the retry of the original request.
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

_DECLARE_NOTE = (
    "Support shows only in the answers: the suite's server sends {method} to a client that did "
    "not declare {capability} in its initialize request; an answer with a result means the "
    "client supports the feature without declaring it and is flagged. An error answer is "
    "fine."
)

_DECLARE_NOTE_2026 = (
    "Support shows only in the answers: an input response to a {method} input request (in the "
    "retry of the request that got the InputRequiredResult) from a request whose "
    "io.modelcontextprotocol/clientCapabilities does not include {capability} is flagged. Needs "
    "a client that calls a tool (or gets a prompt, reads a resource)."
)

# -- roots ----------------------------------------------------------------------------------------

define(
    "client.roots.declare",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "client/roots", "capabilities"),
    quote="Clients that support roots MUST declare the `roots` capability during initialization:",
    role="client",
    area="roots",
    note=_DECLARE_NOTE.format(method="roots/list", capability="roots"),
)

define(
    "client.roots.declare-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, "client/roots", "capabilities"),
    quote=(
        "Clients that support roots MUST declare the `roots` capability in "
        "`_meta.io.modelcontextprotocol/clientCapabilities` on each request:"
    ),
    role="client",
    area="roots",
    note=_DECLARE_NOTE_2026.format(method="roots/list", capability="roots"),
)

define(
    "client.roots.unsupported-error",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "client/roots", "error-handling"),
    quote=(
        "Clients SHOULD return standard JSON-RPC errors for common failure cases: - Client does "
        "not support roots: `-32601` (Method not found) - Internal errors: `-32603`"
    ),
    role="client",
    area="roots",
    note=(
        "Probe: roots/list to a client that did not declare roots; an error with code -32601 is "
        "expected, another code gets a warning (a result is client.roots.declare). 2026-07-28 "
        "drops the list: roots/list is an input request there, and 'the client does not need "
        "to replay the initial call with an error message'."
    ),
)

define(
    "client.roots.file-uri",
    "MUST",
    url=spec_url(LATEST, "client/roots", "root"),
    quote="This MUST be a `file://` URI in the current specification.",
    role="client",
    area="roots",
    note=(
        "Judged on every Root.uri the client returned (a roots/list result up to 2025-11-25, a "
        "roots input response in 2026-07-28): it starts with file://. Needs a client that "
        "exposes roots."
    ),
)

# -- sampling -------------------------------------------------------------------------------------

define(
    "client.sampling.declare",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "client/sampling", "capabilities"),
    quote=(
        "Clients that support sampling MUST declare the `sampling` capability during "
        "initialization:"
    ),
    role="client",
    area="sampling",
    note=_DECLARE_NOTE.format(method="sampling/createMessage", capability="sampling"),
)

define(
    "client.sampling.declare-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, "client/sampling", "capabilities"),
    quote=(
        "Clients that support sampling MUST declare the `sampling` capability in "
        "`_meta.io.modelcontextprotocol/clientCapabilities` on each request:"
    ),
    role="client",
    area="sampling",
    note=_DECLARE_NOTE_2026.format(method="sampling/createMessage", capability="sampling"),
)

# -- elicitation (2025-06-18 and later) -------------------------------------------------------------

define(
    "client.elicitation.declare",
    "MUST",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "client/elicitation", "capabilities"),
    quote=(
        "Clients that support elicitation MUST declare the `elicitation` capability during "
        "initialization:"
    ),
    role="client",
    area="elicitation",
    note=(
        _DECLARE_NOTE.format(method="elicitation/create", capability="elicitation")
        + " Elicitation exists from 2025-06-18."
    ),
)

define(
    "client.elicitation.undeclared-mode-error",
    "MUST",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", "client/elicitation", "error-handling"),
    quote=(
        "Clients MUST return standard JSON-RPC errors for common failure cases: - Server sends an "
        "`elicitation/create` request with a mode not declared in client capabilities: `-32602` "
        "(Invalid params)"
    ),
    role="client",
    area="elicitation",
    note=(
        "Probe: to a client that declared elicitation in one mode only (an empty object is form "
        "only: 'an empty capabilities object is equivalent to declaring support for form mode "
        "only'), the suite's server sends elicitation/create in the other mode (url mode with a "
        "url and an elicitationId, or a form); the answer must be the error -32602. A result "
        "(even a decline) or another code is flagged. A client that declared both modes, or no "
        "elicitation (client.elicitation.declare), is not probed. 2025-11-25 is the version with "
        "two modes and server-to-client requests."
    ),
)

define(
    "client.elicitation.defaults",
    "SHOULD",
    since="2025-11-25",
    until=LATEST_STATEFUL,
    url=spec_url("2025-11-25", "client/elicitation", "requested-schema"),
    quote=(
        "All primitive types support optional default values to provide sensible starting "
        "points. Clients that support defaults SHOULD pre-populate form fields with these values."
    ),
    role="client",
    area="elicitation",
    note=(
        "Probe: the form elicitation the suite's server sends a client that declared elicitation "
        "gives every field a default. Reading: a client that accepts the form and returns content "
        "filled it in; a field with a default that its content leaves out was not pre-populated "
        "(a different value is the user's change, and passes). A decline or cancel is not judged. "
        "The client cannot declare whether it supports defaults, so the outcome is a warning. "
        "2026-07-28 has the same sentence; its forms come as InputRequiredResult inputs and are "
        "not judged here yet."
    ),
)

define(
    "client.elicitation.declare-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, "client/elicitation", "capabilities"),
    quote=(
        "Clients that support elicitation MUST declare the `elicitation` capability in "
        "`_meta.io.modelcontextprotocol/clientCapabilities` on each request:"
    ),
    role="client",
    area="elicitation",
    note=_DECLARE_NOTE_2026.format(method="elicitation/create", capability="elicitation"),
)


# -- pagination (server/utilities/pagination) --------------------------------------------------------

define(
    "client.pagination.opaque-cursor",
    "MUST",
    url=spec_url(LATEST, "server/utilities/pagination", "implementation-guidelines"),
    quote=(
        "Clients MUST treat cursors as opaque tokens: - Don't make assumptions about cursor format "
        "- Don't attempt to parse or modify cursors"
    ),
    role="client",
    area="pagination",
    note=(
        "Judged on every request the client sent with params.cursor: the cursor must be, byte for "
        "byte, a nextCursor the suite's server gave it in the run (a cursor changed, decoded, "
        "re-encoded, trimmed or made up is flagged). The suite's server pages tools/list with a "
        "cursor that a sloppy client is tempted to touch (upper case, a space, a colon, a slash, "
        "'='), and answers any other cursor with -32602 (Invalid params). A client that does not "
        "follow nextCursor is not judged here (paging is up to it)."
    ),
)

_MOVED_ON = (
    "Judged only where the client went on after that page (it sent another request later): a client that ends "
    "its run, or is stopped, right after a page is not judged."
)

define(
    "client.pagination.no-fixed-page-size",
    "MUST",
    url=spec_url(LATEST, "server/utilities/pagination", "pagination-model"),
    quote="Page size is determined by the server, and clients MUST NOT assume a fixed page size",
    role="client",
    area="pagination",
    note=(
        "Probe: the suite's server pages resources/list with pages of different sizes (two resources, then one "
        "with a nextCursor, then one). A client that followed the first nextCursor and then stops at the shorter "
        "second page although it carries a nextCursor read the short page as the last one, as a client that "
        "assumes a fixed page size does: flagged. A client that does not follow nextCursor at all is not judged "
        "here (paging is up to it). " + _MOVED_ON
    ),
)

define(
    "client.pagination.empty-cursor",
    "MUST",
    versions=(LATEST,),
    url=spec_url(LATEST, "server/utilities/pagination", "implementation-guidelines"),
    quote=(
        "Don't make any determination based on cursor value other than whether a non-null value was provided "
        "(e.g. an empty string is a valid cursor and thus MUST NOT be treated as the end of results)"
    ),
    role="client",
    area="pagination",
    note=(
        "Probe: the suite's server pages prompts/list in three pages; the second page's nextCursor is the empty "
        "string, and only a request with the cursor \"\" gets the third. A client that followed the first "
        "nextCursor but never asks with \"\" took the empty string as the end of results: flagged. "
        + _MOVED_ON + " Earlier revisions do not word the empty-string case."
    ),
)

define(
    "client.prompts.pagination",
    "SHOULD",
    url=spec_url(LATEST, "server/prompts", "implementation-considerations"),
    quote="Clients SHOULD handle pagination for large prompt lists",
    role="client",
    area="prompts",
    note=(
        "Probe: the suite's server pages prompts/list (one prompt per page). A client that listed prompts, got a "
        "nextCursor and never asked for the next page did not handle the pagination: a warning. " + _MOVED_ON
    ),
)

_CONTENT_NOTE = (
    "Probe: the form elicitation the suite's server sends a client that declared elicitation (server_requests). "
    "Reading: a client that validates what its user entered against requestedSchema returns, when it accepts, "
    "content valid for that schema (JSON Schema 2020-12: every property of the type it gives, enums, required). "
    "A decline or cancel carries no content and is not judged; content the schema does not describe is left to "
    "the schema rule (client.basic.schema-valid). Not validating leaves no trace unless the content is invalid, "
    "so the outcome is a warning (SHOULD)."
)

define(
    "client.elicitation.content-valid",
    "SHOULD",
    versions=("2025-11-25", LATEST),
    url=spec_url("2025-11-25", "client/elicitation", "form-mode-security"),
    quote="Clients SHOULD validate all responses against the provided schema",
    role="client",
    area="elicitation",
    note=_CONTENT_NOTE + " 2026-07-28 has the same sentence: there the form is the elicitation input request of "
                         "the InputRequiredResult the suite's server answers the client's first tools/call (prompts/get, "
                         "resources/read) with (mrtr), and the content judged is the elicitation entry of the retry's "
                         "inputResponses, when the client declared elicitation in that request's _meta.",
)

define(
    "client.elicitation.content-valid-2025-06",
    "SHOULD",
    versions=("2025-06-18",),
    url=spec_url("2025-06-18", "client/elicitation", "security-considerations"),
    quote="Both parties SHOULD validate elicitation content against the provided schema",
    role="client",
    area="elicitation",
    note=_CONTENT_NOTE + " The sentence binds both parties; this is the client's half (the content it returns).",
)

define(
    "client.elicitation.modeless-is-form",
    "MUST",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", "client/elicitation", "elicitation-requests"),
    quote="Clients MUST treat requests without a `mode` field as form mode.",
    role="client",
    area="elicitation",
    note=(
        "Probe: the form elicitation of server_requests has no mode field (a requestedSchema and a message, as "
        "2025-06-18 servers send it). A client that declared form mode (or elicitation as an empty object: 'an empty "
        "capabilities object is equivalent to declaring support for form mode only') and refuses it with -32602, "
        "the refusal of an undeclared mode, did not take it as a form: flagged. Accept, decline, cancel and any other "
        "error are answers to a form. A client that declared url mode only is not judged (for it -32602 is right). "
        "2026-07-28 has the same sentence; its forms come as InputRequiredResult inputs and are not judged here yet."
    ),
)

define(
    "client.elicitation.complete-unknown-ignored",
    "MUST",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", "client/elicitation", "completion-notifications-for-url-mode-elicitation"),
    quote="MUST ignore notifications referencing unknown or already-completed IDs.",
    role="client",
    area="elicitation",
    note=(
        "The sentence is the 'Clients:' item of 'Completion Notifications for URL Mode Elicitation'. Probe: to a "
        "client that declared elicitation, the suite's server sends notifications/elicitation/complete with an "
        "elicitationId it never used, then a ping: the ping must be answered (the client went on), and nothing may "
        "answer the notification (that part is client.basic.notification-no-response). A client that stops "
        "answering, or ends the session, after it did not ignore it. 2026-07-28 drops the notification."
    ),
)

define(
    "client.elicitation.declare-mode",
    "MUST",
    versions=("2025-11-25", LATEST),
    url=spec_url("2025-11-25", "client/elicitation", "capabilities"),
    quote="Clients declaring the `elicitation` capability MUST support at least one mode (`form` or `url`).",
    role="client",
    area="elicitation",
    note=(
        "Read on the initialize request (server_requests, when the probes start): support for a mode is declared by "
        "naming it in the elicitation object ('form', 'url'), and 'For backwards compatibility, an empty capabilities "
        "object is equivalent to declaring support for form mode only.' An elicitation object that is neither empty nor "
        "names form or url declares no mode: flagged. Whether a declared mode really works is judged by the other "
        "elicitation requirements. 2026-07-28 has the same sentence; its capabilities travel in each request's _meta: "
        "read there on the client's first tools/call (prompts/get, resources/read), the request the suite's server "
        "answers with an InputRequiredResult (mrtr)."
    ),
)

define(
    "client.elicitation.url-no-prefetch",
    "MUST",
    versions=("2025-11-25", "2026-07-28"),
    url=spec_url("2025-11-25", "client/elicitation", "safe-url-handling"),
    quote="MUST NOT automatically pre-fetch the URL or any of its metadata.",
    role="client",
    area="elicitation",
    note=(
        "The sentence is an item of 'When handling URL mode elicitation requests, MCP clients:'. Probe (server_requests): "
        "the url of every url mode elicitation the suite's server sends (the undeclared-mode probe to a client that "
        "declared form only; one more to a client that declared url mode) points at a loopback listener of the suite, "
        "which records every connection until the probes end. A fetch of the URL of an elicitation the client did not "
        "accept (declined, cancelled, refused with an error, or left unanswered) was made without the user's consent: "
        "flagged; so is a connection that asks for another path of that host when the client accepted none. After an "
        "accept, a fetch may be the opening the user consented to and is not judged (a client that accepts and then "
        "pre-fetches is not seen). 2026-07-28 (scenario url_input_request): the client's first tools/call, prompts/get "
        "or resources/read is answered with an InputRequiredResult whose one input request is a url mode elicitation "
        "(to a client that did not declare url mode, the undeclared-mode probe); its url is a trap of the same kind, "
        "judged the same way (a retry without an accepting answer, or no retry at all, is no consent)."
    ),
)

define(
    "client.sampling.tools-declare",
    "MUST",
    versions=("2025-11-25", LATEST),
    url=spec_url("2025-11-25", "client/sampling", "tools-in-sampling"),
    quote=(
        "Clients MUST declare support for tool use via the `sampling.tools` capability to receive tool-enabled "
        "sampling requests."
    ),
    role="client",
    area="sampling",
    note=(
        "Probe (server_requests): to a client that declared sampling without tools, the suite's server sends "
        "sampling/createMessage with a tools array (which a server must not do: 'Servers MUST NOT send tool-enabled "
        "sampling requests to Clients that have not declared support'; the suite does it to see the client's answer). "
        "A result with tool use content (a tool_use block, or stopReason toolUse) means the client took part in tool "
        "use it did not declare: flagged. A text answer (the tools ignored), a refusal or any error is fine. A client "
        "that declared sampling.tools, or no sampling, is not probed. 2026-07-28 (scenario input_requests): the "
        "InputRequiredResult asks, next to its other input requests, for a sampling/createMessage with a tools array "
        "when the request's _meta clientCapabilities declare sampling without tools; an input response to it with "
        "tool use content is flagged, a text answer or leaving it out is fine."
    ),
)

define(
    "client.sampling.error-cases",
    "SHOULD",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", "client/sampling", "error-handling"),
    quote=(
        "Clients SHOULD return errors for common failure cases: - User rejected sampling request: `-1` - Tool result "
        "missing in request: `-32602` (Invalid params) - Tool results mixed with other content: `-32602` (Invalid "
        "params)"
    ),
    role="client",
    area="sampling",
    note=(
        "Probes (server_requests), to a client that declared sampling.tools: two sampling/createMessage requests that "
        "offer a tool and carry a tool loop the page forbids: an assistant message with two tool uses followed by a "
        "user message with a tool result for one of them (tool result missing), and a user message that mixes a tool "
        "result with text (tool results mixed with other content). Each is expected to get the error -32602; a result "
        "or another code is a warning. The user's rejection (-1) is the user's decision and is not provoked. A client "
        "that did not declare sampling.tools is not probed. 2024-11-05 to 2025-06-18 have the sentence without the "
        "list (their example is the user's rejection); 2026-07-28 drops it ('the client does not need to replay the "
        "initial call with an error message')."
    ),
)

define(
    "client.pagination.invalid-cursor-refetch",
    "SHOULD",
    versions=(LATEST,),
    url=spec_url(LATEST, "server/utilities/caching", "interaction-with-pagination"),
    quote=(
        "If a cursor becomes invalid (e.g., the server returns an error for a previously valid cursor), the client "
        "SHOULD discard all cached pages and re-fetch from the beginning."
    ),
    role="client",
    area="pagination",
    note=(
        "Probe (the run whose first call is answered without resultType): the suite's server pages "
        "resources/templates/list in two, and refuses the second page's cursor with -32602 the first time the "
        "client sends it (a cursor valid when given, invalid when used). A client that then lists the templates "
        "again without a cursor re-fetches from the beginning; one that goes on to other requests without doing "
        "so gets a warning. What it discards from its cache is not on the wire; the re-fetch is. A client that "
        "does not follow the templates' nextCursor, or ends right after the error, is not judged."
    ),
)

# -- prompts: the client's side of capability negotiation ------------------------------------------------

define(
    "client.prompts.respect-capabilities",
    "SHOULD",
    url=spec_url(LATEST, "server/prompts", "implementation-considerations"),
    quote="Both parties SHOULD respect capability negotiation",
    role="client",
    area="prompts",
    note=(
        "An item of server/prompts' 'Implementation Considerations', read for the client: no prompts/* request to a "
        "server that did not declare the prompts capability.  Judged where the suite's server declares tools alone: "
        "server_requests (up to 2025-11-25, where client.lifecycle.respect-negotiation(-should) judges every "
        "undeclared capability and this one judges prompts/* only, so a client that lists prompts there breaks both) "
        "and mrtr.url_input_request (2026-07-28, whose lifecycle has no such sentence)."
    ),
)
