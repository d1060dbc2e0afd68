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

# -- task-augmented requests (2025-11-25) ---------------------------------------------------------

LEGACY_PAGE = "basic/utilities/progress"
_TASK_PROBE = (
    "Probe (scenario task_progress): a task-augmented tools/call with a progressToken on a task-capable tool that "
    "reports progress (execution.taskSupport optional or required; the reference server's slow), then tasks/get until "
    "the task is terminal, tasks/result and a ping."
)

define(
    "progress.task.same-token",
    "MUST",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", LEGACY_PAGE, "behavior-requirements"),
    quote=(
        "For task-augmented requests, the `progressToken` provided in the original request MUST continue to be used "
        "for progress notifications throughout the task's lifetime, even after the `CreateTaskResult` has been "
        "returned. The progress token remains valid and associated with the task until the task reaches a terminal "
        "status."
    ),
    area="progress",
    note=(
        _TASK_PROBE + " Judged over the whole run, on every connection: a progress notification whose related-task "
        "_meta names a task created on that connection must carry the progressToken of the request that created it "
        "(such a notification with another token is reported here, not again as progress.token). A task that reports "
        "no progress is not judged ('Receivers of progress requests MAY: - Choose not to send any progress "
        "notifications')."
    ),
)

define(
    "progress.task.stops-at-terminal",
    "MUST",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", LEGACY_PAGE, "behavior-requirements"),
    quote=(
        "Progress notifications for tasks MUST stop after the task reaches a terminal status (`completed`, `failed`, "
        "or `cancelled`)"
    ),
    area="progress",
    transports=("stdio", "sse"),
    note=(
        _TASK_PROBE + " No progress notification for the task (its token, or its related-task _meta) may arrive after "
        "the first tasks/get answer that shows it terminal, up to the answer to the ping. Judged where one stream "
        "carries every server message in order (stdio, HTTP+SSE); over streamable HTTP the notifications and the "
        "tasks/get answers travel on different streams, so their order on the wire does not show which the server "
        "sent first. Needs a task that reported progress."
    ),
)
