"""server/utilities/logging: the logging capability, logging/setLevel (up to 2025-11-25) and the
per-request log level in ``_meta`` (2026-07-28)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

PAGE = "server/utilities/logging"
V2026 = "2026-07-28"

define(
    "logging.capability.declared",
    "MUST",
    url=spec_url(LATEST, PAGE, "capabilities"),
    quote="Servers that emit log message notifications MUST declare the `logging` capability",
    area="logging",
    note="Checked over the whole run: without the capability, no notifications/message may arrive on any connection.",
)

define(
    "logging.set-level.accepted",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "message-flow"),
    quote="Client->>Server: logging/setLevel (info) Server-->>Client: Empty Result",
    area="logging",
    aliases=("logging-set-level",),
    note=(
        "The page's message flow (no RFC 2119 keyword; the client MAY send logging/setLevel): a server "
        "that declares `logging` answers it with an empty result. An error is graded as a warning."
    ),
)

define(
    "logging.set-level.invalid",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "error-handling"),
    quote="Servers SHOULD return standard JSON-RPC errors for common failure cases: - Invalid log level: `-32602` (Invalid params)",
    area="logging",
)

define(
    "logging.set-level.filter",
    "SHOULD",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, "schema", "setlevelrequestparams"),
    quote=(
        "The server should send all logs at this level and higher (i.e., more severe) to the client as "
        "notifications/message."
    ),
    area="logging",
    note=(
        "The schema's description of SetLevelRequestParams.level (lower-case 'should'; the logging "
        "page's diagram says the same: 'Only sends error level and above'). Read as: after "
        "logging/setLevel, no message below the level. Only testable when the server offers a tool "
        "that logs: the official runner's fixture `test_tool_with_logging`."
    ),
)

define(
    "logging.meta.absent-no-messages",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "per-request-log-level"),
    quote="The server MUST NOT emit `notifications/message` for a request that does not include this field.",
    area="logging",
    aliases=("sep-2575-server-no-log-without-loglevel",),
    note=(
        "Checked over the whole run (our requests carry no log level unless a scenario asks for one) "
        "and with the fixture `test_logging_tool` when the server lists it."
    ),
)

define(
    "logging.meta.same-stream",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "per-request-log-level"),
    quote=(
        "`notifications/message` is request-scoped: the server MUST NOT deliver it on a "
        "`subscriptions/listen` stream or on any stream other than the one carrying the response to the "
        "request that set the log level."
    ),
    area="logging",
    transports=("streamable-http",),
    note="Observable on streamable HTTP, where each request has its own response stream.",
)

define(
    "logging.meta.invalid-level",
    "SHOULD",
    since=V2026,
    url=spec_url(V2026, PAGE, "error-handling"),
    quote=(
        "If the `io.modelcontextprotocol/logLevel` value carried in a request's `_meta` is not a "
        "recognized log level, the server SHOULD reject that request with a standard JSON-RPC error: - "
        "Invalid log level: `-32602` (Invalid params)"
    ),
    area="logging",
)
