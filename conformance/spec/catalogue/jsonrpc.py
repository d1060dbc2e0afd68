"""JSON-RPC 2.0 itself (https://www.jsonrpc.org/specification), which every MCP version builds on.

MCP says "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
specification" (basic/index#messages); these are the sentences of JSON-RPC 2.0 our checks rest on.
"""

from __future__ import annotations

from conformance.spec.requirements import define

URL = "https://www.jsonrpc.org/specification"

define(
    "jsonrpc.notification.no-reply",
    "MUST",
    url=f"{URL}#notification",
    quote="The Server MUST NOT reply to a Notification, including those that are within a batch request.",
    area="jsonrpc",
    source="jsonrpc",
)

define(
    "jsonrpc.response.null-id-when-unreadable",
    "MUST",
    url=f"{URL}#response_object",
    quote=(
        "If there was an error in detecting the id in the Request object "
        "(e.g. Parse error/Invalid Request), it MUST be Null."
    ),
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "No MCP schema allows a null id (RequestId is string | integer); for an unreadable "
        "request JSON-RPC 2.0 requires null, so null is accepted (GUIDE: 'Parse-error id')."
    ),
)

define(
    "jsonrpc.error.parse-error",
    "MUST",
    url=f"{URL}#error_object",
    quote=(
        "-32700 Parse error: Invalid JSON was received by the server. "
        "An error occurred on the server while parsing the JSON text."
    ),
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "The code comes from the table of pre-defined errors (section 5.1); the specification's "
        "example 'rpc call with invalid JSON' answers with code -32700 and id null. Real servers "
        "differ on stdio (some stay silent or exit): this check rests on JSON-RPC 2.0 itself."
    ),
)

define(
    "jsonrpc.error.method-not-found",
    "MUST",
    url=f"{URL}#error_object",
    quote="-32601 Method not found: The method does not exist / is not available.",
    area="jsonrpc",
    source="jsonrpc",
    note="The code comes from the table of pre-defined errors (JSON-RPC 2.0 section 5.1).",
)
