"""basic/utilities/progress (2024-11-05 .. 2025-11-25), basic/patterns/progress (2026-07-28)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, spec_url

PAGE = "basic/patterns/progress"

_PROBE = (
    "Probe: a tool call with a progressToken, on a tool found in tools/list that reports progress "
    "(its name or description mentions progress, or it looks slow); skipped when none does."
)

define(
    "progress.token",
    "MUST",
    url=spec_url(LATEST, PAGE, "behavior-requirements"),
    quote="Progress notifications MUST only reference tokens that: - Were provided in an active request",
    area="progress",
    note=_PROBE + " The token must come back exactly: same JSON value and type (\"7\" is not 7).",
)

define(
    "progress.increasing",
    "MUST",
    url=spec_url(LATEST, PAGE, "progress-flow"),
    quote="The `progress` value MUST increase with each notification, even if the total is unknown.",
    area="progress",
    aliases=("tools-call-with-progress",),
    note=_PROBE,
)

define(
    "progress.stops-after-completion",
    "MUST",
    url=spec_url(LATEST, PAGE, "implementation-notes"),
    quote="Progress notifications MUST stop after completion",
    area="progress",
    note=_PROBE + " After the response, a ping (server/discover in 2026-07-28) proves what was sent before it.",
)
