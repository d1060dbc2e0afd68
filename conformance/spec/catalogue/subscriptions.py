"""basic/patterns/subscriptions (2026-07-28): ``subscriptions/listen``, its acknowledgment, tagging
and filter; and the one purpose a server may send ``notifications/cancelled`` for."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

V = "2026-07-28"
PAGE = "basic/patterns/subscriptions"

define(
    "subscriptions.listen.supported",
    "MUST",
    since=V,
    url=spec_url(V, "basic/index"),
    quote="All implementations MUST support the base protocol, versioning, and the message patterns.",
    area="subscriptions",
    note=(
        "Subscribe and Notify (subscriptions/listen) is one of the message patterns. Graded only "
        "for a server that declares a capability whose notifications ride a listen stream "
        "(tools.listChanged, prompts.listChanged, resources.listChanged, resources.subscribe): "
        "such a server must answer subscriptions/listen with its acknowledgment, not an error. A "
        "server that declares none of them is skipped (the official runner does the same)."
    ),
)

define(
    "subscriptions.acknowledged-first",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "acknowledgment"),
    quote=(
        "The server MUST send `notifications/subscriptions/acknowledged` as the first message "
        "carrying the subscription's ID in `_meta` under `io.modelcontextprotocol/subscriptionId`, "
        "and MUST NOT send any notification on the subscription before it."
    ),
    area="subscriptions",
    aliases=("sep-2575-server-sends-subscription-ack",),
    note=(
        "On HTTP the subscription's messages are those of the listen request's response stream; "
        "on stdio those tagged with its id (other subscriptions' messages may interleave)."
    ),
)

define(
    "subscriptions.subscription-id",
    "MUST",
    since=V,
    url=spec_url(V, "basic/index", "_meta"),
    quote=(
        "the server MUST include `io.modelcontextprotocol/subscriptionId` in `_meta` so the client "
        "can correlate the notification with the originating subscription request."
    ),
    area="subscriptions",
    aliases=("sep-2575-server-tags-subscription-id",),
    note=(
        "The sentence begins 'On notifications delivered via a subscriptions/listen stream'. The "
        "subscriptions page adds: 'The value is the JSON-RPC ID of the subscriptions/listen "
        "request', so the tag must equal the listen request's id (same JSON type). Checked on the "
        "acknowledgment and on every notification delivered on a listen stream (HTTP: the "
        "listen's response stream; stdio: list-change and resource-update notifications while "
        "only listen subscriptions exist)."
    ),
)

define(
    "subscriptions.filter",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "opening-a-stream"),
    quote="The server MUST NOT send notification types the client has not explicitly requested.",
    area="subscriptions",
    aliases=("sep-2575-server-honors-notification-filter",),
    note=(
        "Probe: two subscriptions, one for toolsListChanged and one for promptsListChanged; the "
        "tool list is changed (a tool named like test_trigger_tool_change) and once the first "
        "subscription received notifications/tools/list_changed and a barrier request was "
        "answered, the second must have received none. Without such a tool only the "
        "acknowledgments are checked: an acknowledged filter must not add types that were not "
        "requested."
    ),
)

define(
    "subscriptions.server-cancelled-only-for-listen",
    "MUST",
    since=V,
    url=spec_url(V, "basic/patterns/cancellation"),
    quote="Servers MUST NOT send `notifications/cancelled` for any other purpose.",
    area="subscriptions",
    note=(
        "The purpose allowed: 'A server MUST send notifications/cancelled referencing a "
        "subscriptions/listen request ID when it tears down that subscription stream.' Checked on "
        "every notifications/cancelled the server sent during the run: its requestId must be the "
        "id of a subscriptions/listen request of that connection."
    ),
)

define(
    "subscriptions.graceful-end",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "cancellation"),
    quote=(
        "The server tears it down (e.g., during shutdown) — it SHOULD send a successful `subscriptions/listen` "
        "response to signal a graceful end (see Graceful Closure), then close the stream."
    ),
    area="subscriptions",
    transports=(Transport.STDIO,),
    note=(
        "Probe (stdio, a server process of its own): subscriptions/listen, acknowledged; then the server's stdin "
        "is closed, its shutdown signal ('the primary graceful-shutdown signal', transports/stdio#shutdown). The "
        "server ends the subscription during its shutdown, so a result response to the listen request should "
        "reach stdout before it closes; an error response, or none, is a warning. Over HTTP the suite cannot "
        "shut down the one server every item shares."
    ),
)
