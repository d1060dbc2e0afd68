"""JSON-RPC 2.0 and MCP error codes.  Pure data."""

from __future__ import annotations

from conformance.spec.versions import spec

__all__ = [
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "INVALID_PARAMS",
    "INTERNAL_ERROR",
    "JSONRPC_CODES",
    "SERVER_ERROR_RANGE",
    "MCP_RESERVED_RANGE",
    "RESOURCE_NOT_FOUND_LEGACY",
    "URL_ELICITATION_REQUIRED",
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "codes_for",
    "name_of",
]

# JSON-RPC 2.0, section 5.1
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

JSONRPC_CODES: dict[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
}

# -32000..-32099: "Reserved for implementation-defined server-errors" (JSON-RPC 2.0)
SERVER_ERROR_RANGE = range(-32099, -31999)
# 2026-07-28 basic/index#error-codes: -32020..-32099 reserved for the MCP specification
MCP_RESERVED_RANGE = range(-32099, -32019)

RESOURCE_NOT_FOUND_LEGACY = -32002  # 2024-11-05 .. 2025-11-25
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only
HEADER_MISMATCH = -32020  # 2026-07-28
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28


def codes_for(version: str) -> dict[int, str]:
    """Every error code with a defined meaning in ``version``."""
    return {**JSONRPC_CODES, **spec(version).error_codes}


def name_of(code: int, version: str | None = None) -> str:
    table = codes_for(version) if version else {**JSONRPC_CODES, RESOURCE_NOT_FOUND_LEGACY: "ResourceNotFound", URL_ELICITATION_REQUIRED: "URLElicitationRequired", HEADER_MISMATCH: "HeaderMismatch", MISSING_REQUIRED_CLIENT_CAPABILITY: "MissingRequiredClientCapability", UNSUPPORTED_PROTOCOL_VERSION: "UnsupportedProtocolVersion"}
    if code in table:
        return table[code]
    if code in SERVER_ERROR_RANGE:
        return "implementation-defined server error"
    return "application-defined error"
