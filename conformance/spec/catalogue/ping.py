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
    note="'Promptly' is read as 'within the configured timeout' (--mcp-timeout).",
)
