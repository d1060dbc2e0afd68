"""basic/utilities (ping, cancellation, progress; 2026-07-28: basic/patterns/cancellation and
basic/patterns/progress, no ping), as duties of the client."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

CANCEL_PAGE = "basic/patterns/cancellation"  # up to 2025-11-25: basic/utilities/cancellation
CANCEL_PAGE_LEGACY = "basic/utilities/cancellation"
PROGRESS_PAGE = "basic/patterns/progress"  # up to 2025-11-25: basic/utilities/progress
PROGRESS_PAGE_LEGACY = "basic/utilities/progress"

# -- ping (2024-11-05 .. 2025-11-25) ----------------------------------------------------------------

define(
    "client.ping.respond",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "basic/utilities/ping", "behavior-requirements"),
    quote="The receiver MUST respond promptly with an empty response",
    role="client",
    area="ping",
    note=(
        "'Promptly' is read as 'within the run's response timeout'; 'empty' as a result object "
        "with no member other than _meta. Probes: the suite's server pings the client after the "
        "initialize result (also before notifications/initialized: the lifecycle page lets a "
        "server send pings then) on every channel it has: stdout (stdio), the SSE stream "
        "(HTTP+SSE), a POST response stream and the GET stream (streamable HTTP). 2026-07-28 "
        "has no ping."
    ),
)

# -- cancellation ---------------------------------------------------------------------------------

_OWN_INFLIGHT_NOTE = (
    "Judged on every notifications/cancelled the client sent: its requestId names a request the "
    "client itself sent that was still unanswered when the cancellation was written. One that "
    "crosses the response on the wire (the response written just before) is accepted, as the "
    "page's Timing Considerations allow."
)

define(
    "client.cancel.reference-own-inflight",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, CANCEL_PAGE_LEGACY, "behavior-requirements"),
    quote=(
        "Cancellation notifications MUST only reference requests that: - Were previously issued "
        "in the same direction - Are believed to still be in-progress"
    ),
    role="client",
    area="cancellation",
    note=_OWN_INFLIGHT_NOTE + " 'In the same direction': a client may not cancel the server's requests.",
)

define(
    "client.cancel.reference-own-inflight-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, CANCEL_PAGE, "behavior-requirements"),
    quote=(
        "Cancellation notifications MUST only reference requests that: - Were previously issued "
        "by the client - Are believed to still be in-progress"
    ),
    role="client",
    area="cancellation",
    note=(
        _OWN_INFLIGHT_NOTE + " 2026-07-28 words the first condition 'issued by the client'; on "
        "streamable HTTP the client cancels by closing the response stream, so cancellation "
        "notifications are expected on stdio only."
    ),
)

define(
    "client.cancel.task-augmented",
    "MUST",
    versions=("2025-11-25",),
    url=spec_url("2025-11-25", CANCEL_PAGE_LEGACY, "behavior-requirements"),
    quote=(
        "For task-augmented requests, the `tasks/cancel` request MUST be used instead of the "
        "`notifications/cancelled` notification. Tasks have their own dedicated cancellation "
        "mechanism that returns the final task state."
    ),
    role="client",
    area="cancellation",
    note=(
        "Judged on every notifications/cancelled the client sent: one that names a task-augmented "
        "request of its own (params.task) that the server had already answered with a "
        "CreateTaskResult (the task exists, and tasks/cancel can cancel it) is flagged; such a "
        "cancellation is reported here only, not again as client.cancel.reference-own-inflight. A "
        "cancellation sent before the CreateTaskResult arrived is not judged here (no task to "
        "cancel yet). Needs a client that calls tools as tasks (the suite's server declares "
        "tasks.requests.tools.call in the tasks scenarios) and cancels one. The server's half "
        "(its task-augmented requests to the client) is not judged."
    ),
)

define(
    "client.cancel.not-initialize",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, CANCEL_PAGE_LEGACY, "behavior-requirements"),
    quote="The `initialize` request MUST NOT be cancelled by clients",
    role="client",
    area="cancellation",
    note=(
        "Probe (slow): the suite's server never answers initialize; a notifications/cancelled "
        "naming the initialize request's id is flagged. Giving up without it (closing the "
        "connection, exiting) is fine."
    ),
)

define(
    "client.cancel.invalid-ignored",
    "SHOULD",
    url=spec_url(LATEST, CANCEL_PAGE, "error-handling"),
    quote="Invalid cancellation notifications SHOULD be ignored:",
    role="client",
    area="cancellation",
    note=(
        "The list: unknown request IDs, already completed requests, malformed notifications. "
        "Probes: the suite's server sends notifications/cancelled for an id it never used and one "
        "without requestId; the client is expected to carry on (answer the next ping up to "
        "2025-11-25, go on with its requests) and not to answer the notification "
        "(client.basic.notification-no-response). A cancellation of a request of the server's own "
        "that the client may already have answered is client.cancel.race. In 2026-07-28 server "
        "cancellations may only reference a subscriptions/listen request, so any other one is "
        "invalid."
    ),
)

define(
    "client.cancel.race",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, CANCEL_PAGE_LEGACY, "timing-considerations"),
    quote="Both parties MUST handle these race conditions gracefully:",
    role="client",
    area="cancellation",
    note=(
        "The race: 'cancellation notifications may arrive after request processing has "
        "completed, and potentially after a response has already been sent.' Probe (up to "
        "2025-11-25, the versions with server-to-client requests): the suite's server writes a "
        "ping and, right behind it, notifications/cancelled for that ping (the server cancelling "
        "its own request); the client may answer the ping or not (both are allowed: the cancel may "
        "come before or after its answer), and must then answer a barrier ping: a client that "
        "stops answering, or goes away, did not handle the race. Receivers 'SHOULD ... Not send a "
        "response for the cancelled request' is not judged: a client that answers at once cannot "
        "have read the cancellation yet."
    ),
)

define(
    "client.cancel.no-response",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, CANCEL_PAGE_LEGACY, "behavior-requirements"),
    quote=(
        "Receivers of cancellation notifications SHOULD: - Stop processing the cancelled request "
        "- Free associated resources - Not send a response for the cancelled request"
    ),
    role="client",
    area="cancellation",
    note=(
        "Probe (up to 2025-11-25, the versions with server-to-client requests): the suite's "
        "server sends a request the client may need time for (sampling/createMessage when the "
        "client declared sampling; else elicitation/create, roots/list, ping), right behind it "
        "notifications/cancelled for it, then a barrier ping. An answer to the cancelled request "
        "that arrives before the client's answer to the barrier is the race the timing section "
        "allows (the client may have answered before it read the cancellation); one that arrives "
        "after it (the suite waits a second more) was sent after the client had read the "
        "cancellation, which came before the barrier on the same channel, and is flagged."
    ),
)

# -- progress -------------------------------------------------------------------------------------

_TOKEN_NOTE = (
    "Judged on every client request with params._meta.progressToken: no two such requests that "
    "are unanswered at the same time share a token (compared as JSON values: \"1\" and 1 "
    "differ). A request the client cancelled no longer counts as active."
)

define(
    "client.progress.token-unique",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PROGRESS_PAGE_LEGACY, "progress-flow"),
    quote=(
        "Progress tokens can be chosen by the sender using any means, but MUST be unique across "
        "all active requests."
    ),
    role="client",
    area="progress",
    note=_TOKEN_NOTE + " Only the client's own tokens are judged here (the sender).",
)

define(
    "client.progress.token-type",
    "MUST",
    url=spec_url(LATEST, PROGRESS_PAGE, "progress-flow"),
    quote="Progress tokens MUST be a string or integer value",
    role="client",
    area="progress",
    note=(
        "Judged on every client request with params._meta.progressToken: a JSON string or integer (a number with a "
        "fraction, a boolean, null, an object or an array is flagged; 7.0 is read as the integer 7, as JSON Schema reads "
        "it). The server's half of the sentence shows in the progress notifications it sends, which must carry the "
        "client's token exactly (progress.token). A message flagged here is not reported again as "
        "client.basic.schema-valid."
    ),
)

define(
    "client.progress.token-unique-2026",
    "MUST",
    since=LATEST,
    url=spec_url(LATEST, PROGRESS_PAGE, "progress-flow"),
    quote=(
        "Progress tokens can be chosen by the client using any means, but MUST be unique across "
        "all active requests."
    ),
    role="client",
    area="progress",
    note=_TOKEN_NOTE + " 2026-07-28 names the client as the one choosing tokens.",
)
