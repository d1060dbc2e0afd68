"""JSON-RPC 2.0 (https://www.jsonrpc.org/specification) as a duty of the client: the receiver of
the requests an MCP server sends (up to 2025-11-25).  The server-side twin is
``jsonrpc.request.response-required`` (``jsonrpc.py``); -32601 for an unknown method is
``client.jsonrpc.method-not-found`` (``client_basic.py``)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST_STATEFUL

JSONRPC_URL = "https://www.jsonrpc.org/specification"

define(
    "client.jsonrpc.response-required",
    "MUST",
    until=LATEST_STATEFUL,
    url=f"{JSONRPC_URL}#response_object",
    quote="When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
    role="client",
    area="basic",
    source="jsonrpc",
    note=(
        "In JSON-RPC terms the client under test is the 'Server' of the requests the MCP server sends it "
        "('The Server is defined as the origin of Response objects and the handler of Request objects'; MCP: "
        "'All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification'). Judged by "
        "the fuzzer (mcp-conformance fuzz --client-command): a server-to-client request whose id the client "
        "could read (a string or an integer), left unanswered after a ping sent behind it was answered and a "
        "grace period passed. A ping left unanswered is client.ping.respond, an unknown method "
        "client.jsonrpc.method-not-found. Up to 2025-11-25: in 2026-07-28 servers send no requests."
    ),
)

define(
    "client.jsonrpc.parse-error",
    "MUST",
    until=LATEST_STATEFUL,
    url=f"{JSONRPC_URL}#error_object",
    quote=(
        "-32700 Parse error: Invalid JSON was received by the server. "
        "An error occurred on the server while parsing the JSON text."
    ),
    role="client",
    area="basic",
    source="jsonrpc",
    note=(
        "The server-side twin is jsonrpc.error.parse-error, on the same sentence and at the same level: MCP says "
        "'All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification' (basic/index#messages), "
        "and in JSON-RPC terms the client is the 'Server' of what the MCP server sends it ('The Server is defined as the "
        "origin of Response objects and the handler of Request objects'). Judged where the MCP server can send messages: "
        "a message that is not valid JSON (the specification's example 'rpc call with invalid JSON' answers with code "
        "-32700 and id null) must be answered with error -32700; silence, a result or another code is a finding. 'A JSON "
        "parser MAY accept non-JSON forms or extensions' (RFC 8259 section 9): a client whose parser reads NaN, Infinity, "
        "comments, trailing commas or single quotes may answer the request it read, with its id, and that is accepted; "
        "a notification a lenient parser reads may stay unanswered. A client may also end its session after such a "
        "message (only its survival is judged then). Up to 2025-11-25: in 2026-07-28 servers send no requests."
    ),
)
