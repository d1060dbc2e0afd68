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
