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

define(
    "jsonrpc.error.invalid-request",
    "MUST",
    url=f"{URL}#error_object",
    quote="-32600 Invalid Request: The JSON sent is not a valid Request object.",
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "The code comes from the table of pre-defined errors (JSON-RPC 2.0 section 5.1); the "
        "specification's example 'rpc call with invalid Request object' answers "
        '{"jsonrpc": "2.0", "method": 1, "params": "bar"} with code -32600 and id null. Probes: '
        '"method" of the wrong type, "method" missing, "jsonrpc" other than "2.0", an id that is '
        "neither a string nor an integer. The response id may be null or the id echoed where it "
        "could be read (GUIDE: 'Invalid Request whose id is readable')."
    ),
)

define(
    "jsonrpc.error.invalid-params",
    "MUST",
    url=f"{URL}#error_object",
    quote="-32602 Invalid params: Invalid method parameter(s).",
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "The code comes from the table of pre-defined errors (JSON-RPC 2.0 section 5.1). Probe: a "
        "method the server declares, with params that break the version's schema (a required "
        "member missing, e.g. tools/call without a tool name). Every MCP version keeps -32602 as "
        "INVALID_PARAMS in its schema; 2025-11-25 and later answer invalid *tool arguments* with an "
        "isError result instead (server/tools), which is not what this probe sends."
    ),
)

define(
    "jsonrpc.response.result-xor-error",
    "MUST",
    url=f"{URL}#response_object",
    quote="Either the result member or error member MUST be included, but both members MUST NOT be included.",
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "Checked on every response the server sent during the run, on every connection. MCP "
        "repeats it up to 2025-06-18 ('Either a result or an error MUST be set. A response MUST "
        "NOT set both.') and splits responses into result and error responses from 2025-11-25."
    ),
)

define(
    "jsonrpc.error.object",
    "MUST",
    versions=("2024-11-05",),
    url=f"{URL}#error_object",
    quote=(
        "When a rpc call encounters an error, the Response Object MUST contain the error member "
        "with a value that is a Object with the following members:"
    ),
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "The members are code and message ('A String providing a short description of the "
        "error'); data may be omitted. MCP says the same: 'errors MUST include an error code and "
        "message at minimum' (2025-03-26, 2025-06-18), 'Error responses MUST include an error "
        "field with a code and message' (2025-11-25 and later). Checked on every error response "
        "of the run; the integer type of the code is basic.error.code-integer. Cited for 2024-11-05 "
        "only: from 2025-03-26 basic/index words the rule itself (basic.error.code-message, "
        "basic.response.error-field), and those sentences are cited there."
    ),
)

define(
    "jsonrpc.request.response-required",
    "MUST",
    url=f"{URL}#response_object",
    quote="When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
    area="jsonrpc",
    source="jsonrpc",
    note=(
        "Judged by the fuzzer: a request (valid or not, with an id we could read) left unanswered after a "
        "barrier request sent behind it was answered and a grace period passed, or a server that stopped "
        "answering (exited, crashed, stalled). A request whose id could not be read is judged by "
        "jsonrpc.error.parse-error / jsonrpc.error.invalid-request instead."
    ),
)
