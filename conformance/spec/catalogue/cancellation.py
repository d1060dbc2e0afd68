"""basic/utilities/cancellation (2024-11-05 .. 2025-11-25), basic/patterns/cancellation (2026-07-28)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

PAGE = "basic/patterns/cancellation"
LEGACY_PAGE = "basic/utilities/cancellation"  # up to 2025-11-25

_NO_RESPONSE_NOTE = (
    "Probe: a tool call the server takes a while to answer (a tool found in tools/list whose "
    "name suggests it is slow or reports progress, e.g. the reference server's slow, "
    "server-everything's trigger-long-running-operation), cancelled once it is under way; no "
    "response may follow."
)

define(
    "cancellation.no-response",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, LEGACY_PAGE, "behavior-requirements"),
    quote=(
        "Stop processing the cancelled request - Free associated resources - Not send a response "
        "for the cancelled request"
    ),
    area="cancellation",
    note="The list is introduced by 'Receivers of cancellation notifications SHOULD:'. " + _NO_RESPONSE_NOTE,
)

define(
    "cancellation.no-response-2026",
    "SHOULD",
    since=LATEST,
    url=spec_url(LATEST, PAGE, "behavior-requirements"),
    quote=(
        "Servers receiving cancellation notifications SHOULD: - Stop processing the cancelled "
        "request - Free associated resources - Not send a response for the cancelled request"
    ),
    area="cancellation",
    note=(
        "cancellation.no-response of the earlier versions, whose list the receiver's sentence "
        "introduces. " + _NO_RESPONSE_NOTE + " Over streamable HTTP the cancellation signal is "
        "closing the response stream, after which nothing is observable: checked on stdio only."
    ),
)

define(
    "cancellation.invalid-ignored",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote="Invalid cancellation notifications SHOULD be ignored:",
    area="cancellation",
    note=(
        "The list: unknown request IDs, already completed requests, malformed notifications. "
        "Probes: a cancel for an id never used, a cancel without requestId, and (up to 2025-11-25) "
        "a cancel for the initialize request in flight, which 'MUST NOT be cancelled by clients': "
        "the server keeps serving. That cancel is none of the listed invalid kinds, and the page "
        "lets the server honour it ('SHOULD ... Not send a response for the cancelled request') or "
        "ignore it ('MAY ignore ... if the request cannot be cancelled'), so initialize answered or "
        "not are both accepted; only a connection that ends or stops answering is flagged. A "
        "response to the notification itself is jsonrpc.notification.no-reply."
    ),
)

define(
    "cancellation.race",
    "MUST",
    url=spec_url(LATEST, PAGE, "timing-considerations"),
    quote="Both parties MUST handle these race conditions gracefully:",
    area="cancellation",
    note=(
        "The race: a cancellation that arrives after the response was sent. Probe: a cancel for a "
        "request the server already answered; the connection stays open and the next request is "
        "answered."
    ),
)
