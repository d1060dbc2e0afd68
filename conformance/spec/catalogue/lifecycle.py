"""basic/lifecycle: the initialize handshake and version negotiation (2024-11-05 .. 2025-11-25)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST_STATEFUL, spec_url

PAGE = "basic/lifecycle"

define(
    "lifecycle.initialize.result",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote="The server MUST respond with its own capabilities and information",
    area="lifecycle",
    aliases=("server-initialize",),
)

define(
    "lifecycle.version-negotiation.echo",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="If the server supports the requested protocol version, it MUST respond with the same version.",
    area="lifecycle",
    note=(
        "Which versions a server supports is not observable directly: a different answer is "
        "read as 'this version is not supported', unless the same server offers the requested "
        "version when asked for an unsupported one."
    ),
)

define(
    "lifecycle.version-negotiation.fallback",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="Otherwise, the server MUST respond with another protocol version it supports.",
    area="lifecycle",
    note=(
        "The Error Handling section of the same page shows an initialize error (-32602, "
        "'Unsupported protocol version') as an example, so both readings are accepted: a result "
        "offering a protocol version that exists, or an error response."
    ),
)

define(
    "lifecycle.version-negotiation.fallback-latest",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="This SHOULD be the latest version supported by the server.",
    area="lifecycle",
    note=(
        "Which versions a server supports shows in what it echoes. Judged per version under test "
        "V, with the probes lifecycle.version-negotiation.echo and .fallback already make: a "
        "server that echoes V (so supports it) but answers initialize for an unsupported version "
        "with an earlier version than V did not offer its latest. An error answer to the "
        "unsupported version is .fallback's to judge (skipped here)."
    ),
)


# -- before, during and after the handshake --------------------------------------------------------
# Only the client's duties are worded for what precedes initialization; what a server does with an
# early message rests on practice and JSON-RPC ("the Server MUST reply with a Response"), so these
# are graded SHOULD at most (GUIDE: "Requests before initialize").

_EARLY = "The client SHOULD NOT send requests other than pings before the server has responded to the `initialize` request."

define(
    "lifecycle.before-initialize.request",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote=_EARLY,
    area="lifecycle",
    note=(
        "Only the client's duty is worded; the server's reaction is not (any error code is "
        "accepted, and so is a result). Expected: the request is answered (JSON-RPC 2.0: 'the "
        "Server MUST reply with a Response') and initialize still works afterwards. Graded SHOULD "
        "because the client broke the rule first."
    ),
)

define(
    "lifecycle.initialize.repeat",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE),
    quote=(
        "The Model Context Protocol (MCP) defines a rigorous lifecycle for client-server "
        "connections that ensures proper capability negotiation and state management."
    ),
    area="lifecycle",
    note=(
        "No revision says how a server answers a second initialize on an initialized connection "
        "(GUIDE: 'Second initialize'): an error and a result are both accepted. Expected, as "
        "practice: an answer (JSON-RPC 2.0: 'the Server MUST reply with a Response') and a session "
        "that keeps working. Graded SHOULD."
    ),
)

define(
    "lifecycle.initialized.server-requests",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote=(
        "The server SHOULD NOT send requests other than pings and logging before receiving the "
        "`initialized` notification."
    ),
    area="lifecycle",
    note=(
        "Probe: initialize with client capabilities that allow server requests (roots, sampling, "
        "elicitation), no initialized notification, then a ping; requests other than ping that "
        "arrive meanwhile are flagged."
    ),
)

_CAPS_NOTE = (
    "Checked on every connection of the run: a server request needs the client capability that "
    "gates it (sampling/createMessage: sampling, roots/list: roots, elicitation/create: "
    "elicitation, ...), as the client declared it in its initialize request. The server's own "
    "side (a feature notification without the capability declared) is checked by the feature "
    "pages' requirements (logging.capability.declared, ...)."
)

define(
    "lifecycle.operation.capabilities",
    "MUST",
    since="2025-06-18",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "operation"),
    quote=(
        "Both parties MUST: - Respect the negotiated protocol version - Only use capabilities "
        "that were successfully negotiated"
    ),
    area="lifecycle",
    note=_CAPS_NOTE,
)

define(
    "lifecycle.operation.capabilities-should",
    "SHOULD",
    until="2025-03-26",
    url=spec_url("2025-03-26", PAGE, "operation"),
    quote=(
        "Both parties SHOULD: - Respect the negotiated protocol version - Only use capabilities "
        "that were successfully negotiated"
    ),
    area="lifecycle",
    note=_CAPS_NOTE + " 2024-11-05 and 2025-03-26 word it SHOULD (MUST from 2025-06-18).",
)

define(
    "lifecycle.shutdown.stdio",
    "SHOULD",
    until=LATEST_STATEFUL,
    transports=("stdio",),
    url=spec_url(LATEST_STATEFUL, PAGE, "stdio"),
    quote=(
        "For the stdio transport, the client SHOULD initiate shutdown by: 1. First, closing the "
        "input stream to the child process (the server) 2. Waiting for the server to exit, or "
        "sending `SIGTERM` if the server does not exit within a reasonable time"
    ),
    area="lifecycle",
    note=(
        "Only the client's steps are worded up to 2025-11-25; a server that does not exit when its "
        "stdin closes forces the client to signal it. Expected, as practice: exit within the "
        "timeout (--mcp-timeout). Graded SHOULD. 2026-07-28 words the server's duty itself on the "
        "stdio transport page ('Servers SHOULD exit promptly when their standard input is closed')."
    ),
)

define(
    "lifecycle.timeouts.handled",
    "SHOULD",
    since="2025-03-26",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "error-handling"),
    quote=(
        "Implementations SHOULD be prepared to handle these error cases: - Protocol version "
        "mismatch - Failure to negotiate required capabilities - Request timeouts"
    ),
    area="lifecycle",
    note=(
        "Probe: a request the client gives up on, as the Timeouts section says a client does "
        "('the sender SHOULD issue a cancellation notification for that request and stop waiting "
        "for a response'); the server is expected to keep serving: the next requests are answered "
        "within the timeout and the connection stays open."
    ),
)
