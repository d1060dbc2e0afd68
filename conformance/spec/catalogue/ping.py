"""basic/utilities/ping (2024-11-05 .. 2025-11-25; removed in 2026-07-28)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST_STATEFUL, spec_url

define(
    "ping.response",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "basic/utilities/ping", "behavior-requirements"),
    quote="The receiver MUST respond promptly with an empty response",
    area="ping",
    aliases=("ping",),
    note=(
        "'Promptly' is read as 'within the configured timeout' (--mcp-timeout). Every ping is "
        "judged, also one sent before initialize: the lifecycle page lets a client send pings "
        "before the server has responded to initialize ('The client SHOULD NOT send requests "
        "other than pings before the server has responded to the initialize request'). Not over "
        "streamable HTTP before initialize, where a request without a session id is answered with "
        "HTTP 400 by servers that require sessions (transports: session management)."
    ),
)
