"""basic/lifecycle (2024-11-05 .. 2025-11-25), as duties of the client: the initialize handshake,
version negotiation, operation, stdio shutdown (2026-07-28: basic/transports/stdio) and timeouts
(2026-07-28: basic/patterns/cancellation)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, Transport, spec_url

PAGE = "basic/lifecycle"
AREA = "lifecycle"
STDIO = (Transport.STDIO,)

# -- initialization ---------------------------------------------------------------------------------

define(
    "client.lifecycle.initialize-first",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote="The initialization phase MUST be the first interaction between client and server.",
    role="client",
    area=AREA,
    note=(
        "The first request the client sends to a server (stdio process, HTTP+SSE connection, "
        "streamable HTTP endpoint) must be initialize. A server/discover probe answered with an "
        "error is accepted before it: the 2026-07-28 stdio page asks clients that support both "
        "eras to probe first ('SHOULD probe with server/discover before sending any other "
        "request'), and a legacy server sees exactly that. Any other message before initialize "
        "is flagged."
    ),
)

define(
    "client.lifecycle.initialize-contents",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote=(
        "The client MUST initiate this phase by sending an `initialize` request containing: "
        "- Protocol version supported - Client capabilities - Client implementation information"
    ),
    role="client",
    area=AREA,
    aliases=("initialize", "mcp-client-initialization"),
    note=(
        "Judged on the initialize request: params.protocolVersion (a string), "
        "params.capabilities (an object) and params.clientInfo (an Implementation with name and "
        "version); the rest of its shape is client.basic.schema-valid."
    ),
)

define(
    "client.lifecycle.initialized-sent",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote=(
        "After successful initialization, the client MUST send an `initialized` notification to "
        "indicate it is ready to begin normal operations:"
    ),
    role="client",
    area=AREA,
    note=(
        "Judged after an initialize result that echoes the version the client asked for: "
        "notifications/initialized must follow, before any request other than ping. Not expected "
        "after an initialize error, nor after a version the client does not support (it should "
        "disconnect: client.lifecycle.version-unsupported-disconnect)."
    ),
)

define(
    "client.lifecycle.no-request-before-init-response",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote=(
        "The client SHOULD NOT send requests other than pings before the server has responded "
        "to the `initialize` request."
    ),
    role="client",
    area=AREA,
    note=(
        "Probe: the suite's server holds the initialize result for a while; a request other than "
        "ping sent in that window is flagged (notifications are not requests)."
    ),
)

# -- version negotiation ----------------------------------------------------------------------------

define(
    "client.lifecycle.version-supported",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="In the `initialize` request, the client MUST send a protocol version it supports.",
    role="client",
    area=AREA,
    note=(
        "Which versions a client supports is not observable directly. Probe: the suite's server "
        "answers with the version the client requested; a client that then disconnects or does "
        "not go on (no notifications/initialized, no requests) did not support the version it "
        "sent."
    ),
)

define(
    "client.lifecycle.version-latest",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="This SHOULD be the latest version supported by the client.",
    role="client",
    area=AREA,
    note=(
        "Which versions a client supports shows in what it goes on with. Judged on every run of "
        "the version under test V: the suite's server answers initialize with V (echoed when asked "
        "for, counter-offered otherwise); a client that asked for an earlier version than V and "
        "then went on with V (notifications/initialized and requests) supports V, so what it asked "
        "for was not its latest. A client that asked for V (or later) is not faulted; one that "
        "does not go on is client.lifecycle.version-unsupported-disconnect's. A client the user "
        "configured to ask for an older version reads the same on the wire and is flagged too."
    ),
)

define(
    "client.lifecycle.version-unsupported-disconnect",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote=(
        "If the client does not support the version in the server's response, it SHOULD "
        "disconnect."
    ),
    role="client",
    area=AREA,
    note=(
        "Probe: initialize answered with a protocol version no revision defines; expected within "
        "the run's timeout: no notifications/initialized and no further requests, and on stdio "
        "the server's stdin closed (or the client gone); on HTTP no further POST (a DELETE of "
        "the session is fine). Graded SHOULD as the lifecycle page words it, although the "
        "description of InitializeResult.protocolVersion in the official schema.json of every "
        "version up to 2025-11-25 says 'If the client cannot support this version, it MUST "
        "disconnect.': the prose page is the normative text, the schema description a comment."
    ),
)

# -- operation --------------------------------------------------------------------------------------

_NEGOTIATION_NOTE = (
    "Judged on every client message after the handshake: a request that needs a server "
    "capability the suite's server did not declare (resources/*, prompts/*, logging/setLevel, "
    "completion/complete, tasks/* when it declares only tools; resources/subscribe without "
    "resources.subscribe) is flagged; on HTTP the MCP-Protocol-Version header (2025-06-18 and "
    "later) names the negotiated version. Messages the negotiated version's schema does not "
    "define are client.basic.schema-valid."
)

define(
    "client.lifecycle.respect-negotiation",
    "MUST",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "operation"),
    quote=(
        "Both parties MUST: - Respect the negotiated protocol version - Only use capabilities "
        "that were successfully negotiated"
    ),
    role="client",
    area=AREA,
    note=_NEGOTIATION_NOTE,
)

define(
    "client.lifecycle.respect-negotiation-should",
    "SHOULD",
    until="2025-03-26",
    url=spec_url("2025-03-26", PAGE, "operation"),
    quote=(
        "Both parties SHOULD: - Respect the negotiated protocol version - Only use capabilities "
        "that were successfully negotiated"
    ),
    role="client",
    area=AREA,
    note=_NEGOTIATION_NOTE + " 2024-11-05 and 2025-03-26 word it SHOULD (MUST from 2025-06-18).",
)

# -- shutdown (stdio) -------------------------------------------------------------------------------

_SHUTDOWN_NOTE = (
    "Observed from the suite's stdio server process, which records stdin end-of-file, the "
    "signals it receives and its own end. Expected when the client is done: stdin closed first; "
    "a forced termination (SIGTERM, then SIGKILL) only after the server failed to exit. Probe: a "
    "stubborn server that ignores end-of-file and SIGTERM shows the escalation (scenario "
    "stdio_escalation): after stdin is closed it must get SIGTERM, then SIGKILL; a client that "
    "exits leaving it running, or stops at SIGTERM, is flagged (2026-07-28: the server must be "
    "forcibly terminated, by whatever signals). 'A reasonable time' is not measured: only the "
    "order is judged."
)

define(
    "client.lifecycle.stdio-shutdown",
    "SHOULD",
    until=LATEST_STATEFUL,
    transports=STDIO,
    url=spec_url(LATEST_STATEFUL, PAGE, "stdio"),
    quote=(
        "For the stdio transport, the client SHOULD initiate shutdown by: 1. First, closing the "
        "input stream to the child process (the server) 2. Waiting for the server to exit, or "
        "sending `SIGTERM` if the server does not exit within a reasonable time 3. Sending "
        "`SIGKILL` if the server does not exit within a reasonable time after `SIGTERM`"
    ),
    role="client",
    area=AREA,
    note=_SHUTDOWN_NOTE,
)

define(
    "client.lifecycle.stdio-shutdown-2026",
    "SHOULD",
    since=LATEST,
    transports=STDIO,
    url=spec_url(LATEST, "basic/transports/stdio", "shutdown"),
    quote=(
        "The client SHOULD initiate shutdown by: 1. Closing the input stream to the child "
        "process (the server). 2. Waiting for the server to exit. 3. If the server does not exit "
        "within a reasonable time, forcibly terminating the process using the mechanism "
        "appropriate for the operating system."
    ),
    role="client",
    area=AREA,
    note=(
        _SHUTDOWN_NOTE + " 2026-07-28 words it on the stdio transport page ('On POSIX systems, "
        "forced termination typically escalates from SIGTERM to SIGKILL')."
    ),
)

# -- timeouts ---------------------------------------------------------------------------------------

_TIMEOUT_NOTE = (
    "Probe (slow): the suite's server never answers one request of the client (the first after "
    "the handshake); within a generous budget the client is expected to give up on it: cancel it "
    "(notifications/cancelled; on streamable HTTP in 2026-07-28, closing the response stream), "
    "close the connection or exit. A client still waiting when the budget ends is flagged."
)

define(
    "client.lifecycle.timeouts",
    "SHOULD",
    since="2025-03-26",
    url=spec_url(LATEST, "basic/patterns/cancellation", "timeouts"),
    quote=(
        "Implementations SHOULD establish timeouts for all sent requests, to prevent hung "
        "connections and resource exhaustion."
    ),
    role="client",
    area=AREA,
    note=_TIMEOUT_NOTE + " Up to 2025-11-25 the sentence is on basic/lifecycle#timeouts.",
)

define(
    "client.lifecycle.timeouts-2024",
    "SHOULD",
    versions=("2024-11-05",),
    url=spec_url("2024-11-05", PAGE, "error-handling"),
    quote=(
        "Implementations SHOULD implement appropriate timeouts for all requests, to prevent hung "
        "connections and resource exhaustion."
    ),
    role="client",
    area=AREA,
    note=_TIMEOUT_NOTE + " 2024-11-05 words it in the Error Handling section.",
)

_TIMEOUT_CANCEL_NOTE = (
    "Probe (slow), with client.lifecycle.timeouts: when the client gives up on the request the "
    "suite's server never answers, it is expected to say so: a notifications/cancelled naming "
    "that request (on streamable HTTP in 2026-07-28, closing that request's response stream). "
    "A client that stops waiting without it (it exits, or goes on with other requests) is "
    "flagged; one still waiting when the run's budget ends is not judged here."
)

define(
    "client.lifecycle.timeout-cancel",
    "SHOULD",
    since="2025-03-26",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "timeouts"),
    quote=(
        "When the request has not received a success or error response within the timeout "
        "period, the sender SHOULD issue a cancellation notification for that request and stop "
        "waiting for a response."
    ),
    role="client",
    area=AREA,
    note=_TIMEOUT_CANCEL_NOTE,
)

define(
    "client.lifecycle.timeout-cancel-2026",
    "SHOULD",
    since=LATEST,
    url=spec_url(LATEST, "basic/patterns/cancellation", "timeouts"),
    quote=(
        "When the request has not received a success or error response within the timeout "
        "period, the sender SHOULD cancel the request and stop waiting for a response."
    ),
    role="client",
    area=AREA,
    note=_TIMEOUT_CANCEL_NOTE + " 2026-07-28: 'Streamable HTTP: closing the response stream for "
    "the request, which constitutes cancellation. stdio: sending a notifications/cancelled "
    "notification referencing the request ID.'",
)
