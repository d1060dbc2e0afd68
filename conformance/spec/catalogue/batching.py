"""JSON-RPC batches: required in 2025-03-26 (basic/index#batching), removed in 2025-06-18."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

V2503 = "2025-03-26"

define(
    "batching.receive",
    "MUST",
    versions=(V2503,),
    url=spec_url(V2503, "basic/index", "batching"),
    quote=(
        "MCP implementations MAY support sending JSON-RPC batches, but MUST support receiving "
        "JSON-RPC batches."
    ),
    area="batching",
    note=(
        "Probe: a batch of two requests and a notification on an initialized session. Every "
        "request must be answered (JSON-RPC 2.0: 'A Response object SHOULD exist for each Request "
        "object, except that there SHOULD NOT be any Response objects for notifications'); the "
        "answers may come as one array or, over HTTP, as separate messages on the response stream "
        "(2025-03-26 transports: 'These responses MAY be batched')."
    ),
)

define(
    "batching.initialize-not-batched",
    "SHOULD",
    versions=(V2503,),
    url=spec_url(V2503, "basic/lifecycle", "initialization"),
    quote="other requests and notifications are not possible until initialization has completed.",
    area="batching",
    note=(
        "The whole sentence: 'The initialize request MUST NOT be part of a JSON-RPC batch, as "
        "other requests and notifications are not possible until initialization has completed.' "
        "It binds the client; what a server does with a batched initialize is not worded. Expected, as practice: not a session initialized "
        "from inside a batch -- an error response (any code), an HTTP 4xx or no answer at all (a "
        "batch left unanswered is batching.receive's concern, judged on a batch of pings). Graded SHOULD."
    ),
)

_REJECT_NOTE = (
    "2025-06-18 removed batching ('Remove support for JSON-RPC batching', changelog), and the "
    "HTTP transport requires the client to POST a single message; no sentence says how a server "
    "reacts to a batch, so this rests on practice and is graded SHOULD. Accepted: an error "
    "response (any code; one for the batch or one per member) or an HTTP 4xx; flagged: the "
    "batch's requests served, or no answer at all. 2024-11-05 says nothing about batches and is "
    "not checked."
)

define(
    "batching.rejected",
    "SHOULD",
    since="2025-06-18",
    until="2025-11-25",
    url=spec_url("2025-11-25", "basic/transports", "stdio"),
    quote="Messages are individual JSON-RPC requests, notifications, or responses.",
    area="batching",
    note=_REJECT_NOTE,
)

define(
    "batching.rejected-stateless",
    "SHOULD",
    versions=("2026-07-28",),
    url=spec_url("2026-07-28", "basic/transports/stdio"),
    quote="Each message is a single JSON-RPC request, notification, or response.",
    area="batching",
    note=_REJECT_NOTE,
)
