"""The five MCP protocol versions and their feature gates.  Pure data.

Every fact here is read off ``docs/<version>/`` of the official specification; the pages are
named next to each gate.  Scenarios never compare version strings: they ask a gate
(``spec(version).batching``) so a future version is one new row.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = [
    "VERSIONS",
    "LATEST",
    "LATEST_STATEFUL",
    "Transport",
    "VersionSpec",
    "spec",
    "parse_versions",
    "UnknownVersionError",
    "SPEC_BASE_URL",
    "spec_url",
]

SPEC_BASE_URL = "https://modelcontextprotocol.io/specification"


class Transport(str, enum.Enum):
    STDIO = "stdio"
    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"  # the legacy HTTP+SSE transport of 2024-11-05

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class VersionSpec:
    version: str
    # schema facts (schemas/<version>.json manifest repeats them)
    dialect: str  # "draft-07" | "2020-12"
    defs_key: str  # "definitions" | "$defs"
    # lifecycle
    handshake: bool  # initialize / notifications/initialized
    stateless: bool  # per-request _meta, server/discover, no sessions (2026-07-28)
    # basic
    batching: bool  # JSON-RPC batches must be accepted (2025-03-26 only)
    result_type_required: bool  # every result carries resultType (2026-07-28)
    ping: bool
    set_level: bool  # logging/setLevel
    subscribe: bool  # resources/subscribe + unsubscribe
    subscriptions_listen: bool  # subscriptions/listen (2026-07-28)
    server_requests: bool  # server may send sampling/elicitation/roots requests (pre-MRTR)
    input_required: bool  # InputRequiredResult / MRTR (2026-07-28)
    elicitation: bool
    tasks: bool  # tasks utility in core (2025-11-25 only)
    structured_output: bool  # Tool.outputSchema / structuredContent
    # transports
    transports: frozenset[Transport]
    session_header: bool  # Mcp-Session-Id (streamable HTTP)
    protocol_version_header: bool  # MCP-Protocol-Version header (HTTP)
    get_stream: bool  # GET on the MCP endpoint opens an SSE stream
    resumability: bool  # SSE event ids + Last-Event-ID
    sse_priming: bool  # server SHOULD send an event id + empty data first (2025-11-25)
    request_headers: bool  # Mcp-Method / Mcp-Name (2026-07-28)
    origin_403: bool  # invalid Origin -> 403 is a worded MUST (2025-11-25 and later)
    # error codes this version defines beyond JSON-RPC's
    error_codes: dict[int, str] = field(default_factory=dict)
    resource_not_found_code: int = -32002

    @property
    def url(self) -> str:
        return f"{SPEC_BASE_URL}/{self.version}"


_JSONRPC_ONLY: dict[int, str] = {}

_V = [
    VersionSpec(
        version="2024-11-05",
        dialect="draft-07",
        defs_key="definitions",
        handshake=True,
        stateless=False,
        batching=False,  # the revision says nothing about batches
        result_type_required=False,
        ping=True,
        set_level=True,
        subscribe=True,
        subscriptions_listen=False,
        server_requests=True,
        input_required=False,
        elicitation=False,
        tasks=False,
        structured_output=False,
        transports=frozenset({Transport.STDIO, Transport.SSE}),
        session_header=False,
        protocol_version_header=False,
        get_stream=False,
        resumability=False,
        sse_priming=False,
        request_headers=False,
        origin_403=False,
        error_codes={-32002: "ResourceNotFound"},
    ),
    VersionSpec(
        version="2025-03-26",
        dialect="draft-07",
        defs_key="definitions",
        handshake=True,
        stateless=False,
        batching=True,  # basic/index.mdx#batching: implementations MUST support receiving batches
        result_type_required=False,
        ping=True,
        set_level=True,
        subscribe=True,
        subscriptions_listen=False,
        server_requests=True,
        input_required=False,
        elicitation=False,
        tasks=False,
        structured_output=False,
        transports=frozenset({Transport.STDIO, Transport.STREAMABLE_HTTP, Transport.SSE}),
        session_header=True,
        protocol_version_header=False,
        get_stream=True,
        resumability=True,
        sse_priming=False,
        request_headers=False,
        origin_403=False,
        error_codes={-32002: "ResourceNotFound"},
    ),
    VersionSpec(
        version="2025-06-18",
        dialect="draft-07",
        defs_key="definitions",
        handshake=True,
        stateless=False,
        batching=False,  # changelog: "Remove support for JSON-RPC batching"
        result_type_required=False,
        ping=True,
        set_level=True,
        subscribe=True,
        subscriptions_listen=False,
        server_requests=True,
        input_required=False,
        elicitation=True,
        tasks=False,
        structured_output=True,
        transports=frozenset({Transport.STDIO, Transport.STREAMABLE_HTTP, Transport.SSE}),
        session_header=True,
        protocol_version_header=True,
        get_stream=True,
        resumability=True,
        sse_priming=False,
        request_headers=False,
        origin_403=False,
        error_codes={-32002: "ResourceNotFound"},
    ),
    VersionSpec(
        version="2025-11-25",
        dialect="2020-12",
        defs_key="$defs",
        handshake=True,
        stateless=False,
        batching=False,
        result_type_required=False,
        ping=True,
        set_level=True,
        subscribe=True,
        subscriptions_listen=False,
        server_requests=True,
        input_required=False,
        elicitation=True,
        tasks=True,
        structured_output=True,
        transports=frozenset({Transport.STDIO, Transport.STREAMABLE_HTTP, Transport.SSE}),
        session_header=True,
        protocol_version_header=True,
        get_stream=True,
        resumability=True,
        sse_priming=True,
        request_headers=False,
        origin_403=True,
        error_codes={-32002: "ResourceNotFound", -32042: "URLElicitationRequired"},
    ),
    VersionSpec(
        version="2026-07-28",
        dialect="2020-12",
        defs_key="$defs",
        handshake=False,
        stateless=True,
        batching=False,
        result_type_required=True,
        ping=False,
        set_level=False,
        subscribe=False,
        subscriptions_listen=True,
        server_requests=False,
        input_required=True,
        elicitation=True,
        tasks=False,
        structured_output=True,
        # HTTP+SSE is "Deprecated" but still specified for backward compatibility; servers that
        # speak 2026-07-28 are reached over stdio or streamable HTTP.
        transports=frozenset({Transport.STDIO, Transport.STREAMABLE_HTTP}),
        session_header=False,
        protocol_version_header=True,
        get_stream=False,
        resumability=False,
        sse_priming=False,
        request_headers=True,
        origin_403=True,
        error_codes={
            -32020: "HeaderMismatch",
            -32021: "MissingRequiredClientCapability",
            -32022: "UnsupportedProtocolVersion",
        },
        resource_not_found_code=-32602,
    ),
]

VERSIONS: tuple[str, ...] = tuple(v.version for v in _V)
_BY_VERSION: dict[str, VersionSpec] = {v.version: v for v in _V}
LATEST: str = VERSIONS[-1]
LATEST_STATEFUL: str = "2025-11-25"


class UnknownVersionError(ValueError):
    """A protocol version string that is not one of :data:`VERSIONS`."""

    def __init__(self, version: str) -> None:
        super().__init__(
            f"unknown MCP protocol version {version!r}; "
            f"use one of {', '.join(VERSIONS)} or 'all'"
        )
        self.version = version


def spec(version: str) -> VersionSpec:
    try:
        return _BY_VERSION[version]
    except KeyError:
        raise UnknownVersionError(version) from None


def parse_versions(values: list[str] | tuple[str, ...] | None, *, default: tuple[str, ...] = (LATEST_STATEFUL,)) -> tuple[str, ...]:
    """Expand ``--mcp-version`` values (repeatable, comma lists, ``all``) to known versions, in order."""
    if not values:
        return default
    wanted: set[str] = set()
    for value in values:
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                continue
            if part == "all":
                wanted.update(VERSIONS)
            else:
                wanted.add(spec(part).version)
    return tuple(v for v in VERSIONS if v in wanted)


def spec_url(version: str, page: str, anchor: str | None = None) -> str:
    """URL of a spec page for a version, e.g. ``spec_url("2025-11-25", "basic/lifecycle", "version-negotiation")``."""
    url = f"{SPEC_BASE_URL}/{version}/{page.strip('/')}"
    return f"{url}#{anchor}" if anchor else url
