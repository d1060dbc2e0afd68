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
