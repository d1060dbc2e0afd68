"""basic/index: the base protocol (messages, notifications, schema)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, spec_url

PAGE = "basic/index"

define(
    "basic.messages.jsonrpc",
    "MUST",
    url=spec_url(LATEST, PAGE, "messages"),
    quote=(
        "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification."
    ),
    area="basic",
)

define(
    "basic.notifications.no-response",
    "MUST",
    since="2025-03-26",
    url=spec_url(LATEST, PAGE, "notifications"),
    quote=(
        "Notifications are sent from the client to the server or vice versa, as a one-way "
        "message. The receiver MUST NOT send a response."
    ),
    area="basic",
)

define(
    "basic.schema.messages-valid",
    "MUST",
    url=spec_url(LATEST, PAGE, "schema"),
    quote=(
        "The full specification of the protocol is defined as a TypeScript schema. "
        "This is the source of truth for all protocol messages and structures."
    ),
    area="basic",
    note=(
        "The sentence has no RFC 2119 keyword; it makes the schema the definition of every "
        "protocol message, and MCP requires every message to follow JSON-RPC 2.0 (MUST), so a "
        "message the official JSON Schema of the version rejects is graded as a MUST violation. "
        "An error response with id null to an unreadable request is accepted "
        "(jsonrpc.response.null-id-when-unreadable)."
    ),
)

# -- responses: ids and error objects ------------------------------------------------------------
# Up to 2025-06-18 one sentence covers every response (2024-11-05 has it on basic/messages);
# 2025-11-25 splits it into result responses and error responses.

define(
    "basic.response.id-echo",
    "MUST",
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "responses"),
    quote="Responses MUST include the same ID as the request they correspond to.",
    area="basic",
    note=(
        "The same ID means the same JSON value and type: \"7\" and 7 are different ids. Probes: "
        "string ids (one that looks like a number), an integer id with the same digits, a large "
        "integer (2^53 - 1, exact in every JSON implementation), a string that needs escaping."
    ),
)

define(
    "basic.response.result-id-echo",
    "MUST",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "result-responses"),
    quote="Result responses MUST include the same ID as the request they correspond to.",
    area="basic",
    note=(
        "The same ID means the same JSON value and type: \"7\" and 7 are different ids. Probes: "
        "string ids (one that looks like a number), an integer id with the same digits, a large "
        "integer (2^53 - 1, exact in every JSON implementation), a string that needs escaping."
    ),
)

define(
    "basic.response.error-id-echo",
    "MUST",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "error-responses"),
    quote=(
        "Error responses MUST include the same ID as the request they correspond to (except in "
        "error cases where the ID could not be read due a malformed request)."
    ),
    area="basic",
    note="Probe: requests for an unknown method with a string id and with an integer id.",
)

define(
    "basic.error.code-integer",
    "MUST",
    url=spec_url(LATEST, PAGE, "error-responses"),
    quote="Error codes MUST be integers.",
    area="basic",
    note="Checked on every error response the server sent during the run, on every connection.",
)

# -- _meta key names (2025-06-18 and later) ---------------------------------------------------------

_META_KEYS_NOTE = (
    "Checked on every `_meta` object of every message the server sent during the run: "
    "params._meta, result._meta and those of the protocol objects inside (tools, resources, "
    "prompts, content blocks, ...), not those inside data of the server's own (structured "
    "content, arguments, schemas, error data, experimental and extension settings). A key is an "
    "optional prefix (everything up to the last slash) and a name."
)

define(
    "basic.meta.key-prefix",
    "MUST",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "_meta"),
    quote=(
        "If specified, MUST be a series of labels separated by dots (`.`), followed by a slash "
        "(`/`). - Labels MUST start with a letter and end with a letter or digit; interior "
        "characters can be letters, digits, or hyphens (`-`)."
    ),
    area="basic",
    note=_META_KEYS_NOTE + (
        " Flagged: an empty prefix ('/x'), an empty label ('a..b/x'), a prefix holding a slash "
        "('a/b/x'), a label that starts with a digit or a hyphen, ends with a hyphen, or holds "
        "another character ('a_b/x')."
    ),
)

define(
    "basic.meta.key-name",
    "MUST",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "_meta"),
    quote="Unless empty, MUST begin and end with an alphanumeric character (`[a-z0-9A-Z]`).",
    area="basic",
    note=_META_KEYS_NOTE + (
        " Flagged: a non-empty name whose first or last character is not an ASCII letter or digit "
        "('_x', 'x-'). The characters in between are not judged: the page only says a name MAY "
        "contain hyphens, underscores, dots and alphanumerics there."
    ),
)

define(
    "basic.meta.reverse-dns",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "_meta"),
    quote="Implementations SHOULD use reverse DNS notation (e.g., `com.example/` rather than `example.com/`).",
    area="basic",
    note=_META_KEYS_NOTE + (
        " Flagged: a prefix of two labels or more in forward DNS order, that is whose last label is "
        "a top-level domain (a two-letter country code or a common generic one: com, org, net, io, "
        "dev, ai, ...) and whose first label is not ('example.com/'). A single-label prefix "
        "('acme/') or one whose order cannot be told is not judged."
    ),
)

define(
    "basic.meta.trace-context",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, PAGE, "_meta"),
    quote=(
        "When present, their values MUST follow W3C Trace Context and W3C Baggage formats "
        "respectively."
    ),
    area="basic",
    note=(
        "The keys are traceparent, tracestate (W3C Trace Context) and baggage (W3C Baggage). "
        "Checked on every `_meta` object of every message the server sent during the run (as for "
        "basic.meta.key-prefix): a value that is not a string, a traceparent other than "
        "version-traceid-parentid-flags in lower-case hex (version ff, an all-zero trace-id or "
        "parent-id), a tracestate or baggage list member that is not key=value in its grammar. "
        "Skipped when the server sent none of the keys."
    ),
)

# -- the members of results and errors ------------------------------------------------------------------
# JSON-RPC 2.0 words them too (jsonrpc.error.object, jsonrpc.response.result-xor-error); where a
# version's own page words a rule, its sentence is cited (conformance.wire.rules.shape_requirement).

_SHAPES_NOTE = "Checked on every response the server sent during the run, on every connection."

define(
    "basic.error.code-message",
    "MUST",
    versions=("2025-03-26", "2025-06-18"),
    url=spec_url("2025-06-18", PAGE, "responses"),
    quote=(
        "Results MAY follow any JSON object structure, while errors MUST include an error code and "
        "message at minimum."
    ),
    area="basic",
    note=_SHAPES_NOTE + (
        " Flagged: an error member that is not an object, an error object without code, or without "
        "a message string (JSON-RPC 2.0: 'A String providing a short description of the error'). "
        "A code that is not an integer is basic.error.code-integer."
    ),
)

define(
    "basic.response.error-field",
    "MUST",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "error-responses"),
    quote="Error responses MUST include an `error` field with a `code` and `message`.",
    area="basic",
    note=_SHAPES_NOTE + (
        " Flagged: an error member that is not an object, an error object without code, or without "
        "a message string (the schema's Error.message is a string). A code that is not an integer is "
        "basic.error.code-integer."
    ),
)

define(
    "basic.response.result-field",
    "MUST",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "result-responses"),
    quote="Result responses MUST include a `result` field.",
    area="basic",
    note=_SHAPES_NOTE + (
        " Flagged: a response (an id, no method) with neither result nor error: it is no error "
        "response, so as a result response it lacks its result. A response with both is "
        "jsonrpc.response.result-xor-error."
    ),
)
