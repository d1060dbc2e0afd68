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
