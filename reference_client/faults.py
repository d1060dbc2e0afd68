"""Named faults of the reference client (``mcp-reference-client --fault NAME``): each makes the
client break exactly one client requirement and keeps everything else strict, so that the
suite's client mode can be shown to flag that requirement and nothing else.

Pure data (no I/O).  A fault *acts* only on the versions and transports listed here; elsewhere it
is inert (the client stays strict), because the same misbehaviour would break another rule there
(a wrong ping id breaks ``response-id-echo`` up to 2025-06-18 and ``result-id-echo`` on
2025-11-25, so the two are two faults).  Where the requirement is observable, and which
requirement that is, is listed in ``fixtures/broken_clients/defects.py``.

Three kinds of fault:

* **reactions** -- the client answers the suite's provocation wrongly (a server ``ping``, an
  unknown method, ``roots/list``, a batch, an invalid cancel, HTTP 404, an unsupported version);
* **the handshake** -- ``initialize`` without clientInfo, no ``notifications/initialized``, a
  request before ``initialize`` or before its answer, ``initialize`` before ``server/discover``;
* **one extra message** -- the defect is carried by one extra, otherwise harmless message (a
  ``ping``, or ``server/discover`` on 2026-07-28) sent right after the first request that follows
  the handshake has been answered, so that a strict server's refusal of it costs nothing else:
  a float or null id, a reused id, ``jsonrpc: "1.0"``, pretty-printed JSON, a non-JSON line, a
  PUT, a JSON array body, a missing header, a POST that drops the endpoint's query, ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

__all__ = ["Fault", "FAULTS", "OAUTH_FAULTS", "KNOWN", "LEGACY", "ALL_VERSIONS", "ALL_TRANSPORTS", "describe", "behaviour"]

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
LEGACY = ALL_VERSIONS[:4]
MODERN = ("2026-07-28",)
FROM_2025_03 = ALL_VERSIONS[1:4]  # streamable HTTP with sessions
FROM_2025_06 = ALL_VERSIONS[2:4]  # MCP-Protocol-Version, no batches
ALL_TRANSPORTS = ("stdio", "streamable-http", "sse")
STDIO = ("stdio",)
HTTP = ("streamable-http",)
SSE = ("sse",)
TASKS = ("2025-11-25",)  # basic/utilities/tasks


@dataclass(frozen=True)
class Fault:
    summary: str  # what the client does wrong, one line
    versions: tuple[str, ...] = ALL_VERSIONS  # where it acts
    transports: tuple[str, ...] = ALL_TRANSPORTS
    skip: tuple[tuple[str, str], ...] = ()  # (version, transport) pairs where it stays inert
    variant_of: str | None = None  # behaves as that fault, on other versions (the catalogue splits the rule)


    def acts(self, version: str | None, transport: str | None) -> bool:
        if version is not None and version not in self.versions:
            return False
        if transport is not None and transport not in self.transports:
            return False
        return (version, transport) not in self.skip


def _f(summary: str, versions: Iterable[str] = ALL_VERSIONS, transports: Iterable[str] = ALL_TRANSPORTS,
       skip: Iterable[tuple[str, str]] = (), variant_of: str | None = None) -> Fault:
    return Fault(summary, tuple(versions), tuple(transports), tuple(skip), variant_of)


def _variant(base: str, versions: Iterable[str], transports: Iterable[str] | None = None) -> Fault:
    """The same misbehaviour as ``base``, acting on other versions (where the catalogue names the
    rule differently, e.g. ``client.http.accept-2026``)."""
    b = FAULTS[base]
    return Fault(b.summary, tuple(versions), tuple(transports or b.transports), b.skip, base)


FAULTS: dict[str, Fault] = {
    # -- JSON-RPC: what the client sends ------------------------------------------------------
    "jsonrpc-1.0": _f('one extra message with "jsonrpc": "1.0" (notifications/roots/list_changed; '
                      "server/discover on 2026-07-28)"),
    "float-id": _f("one extra request with a fractional id (e.g. 7.5)"),
    "null-id": _f("one extra request with id null"),
    "reuse-answered-id": _f("one extra ping reusing the id of an answered request of the session", LEGACY),
    "reuse-initialize-id": _f("one extra ping reusing the id of the session's initialize request", LEGACY),
    "reuse-inflight-id": _f("the first request after the handshake is sent twice at once with one id", MODERN),
    "notification-with-id": _f("notifications/initialized carries an id", LEGACY),
    "cancel-unknown-id": _f("one extra notifications/cancelled naming an id the client never used", LEGACY),
    "float-progress-token": _f("one extra request (ping; server/discover on 2026-07-28) with the progress token 7.5"),
    "shared-progress-token": _f("the first request after the handshake and one extra request, in flight "
                                "together, carry the same progressToken", LEGACY),
    # -- JSON-RPC: how the client answers -------------------------------------------------------
    "response-wrong-id": _f('a server ping is answered with the id changed (7 -> "7", "7" -> 7, "s" -> "s-wrong")',
                            ALL_VERSIONS[:3]),
    "result-wrong-id": _f('a server ping is answered with the id changed (7 -> "7", "7" -> 7, "s" -> "s-wrong")',
                          ("2025-11-25",)),
    "digit-id-as-number": _f('a server ping whose id is a string of digits is answered with it as a number '
                             '("701" -> 701); other ids are echoed exactly', ALL_VERSIONS[:3]),
    "error-digit-id-as-number": _f('error answers to server requests whose id is a string of digits carry it as a '
                                   'number ("702" -> 702)', ("2025-11-25",)),
    "error-wrong-id": _f("error answers (unknown method, undeclared capability) carry the id changed", ("2025-11-25",)),
    "result-and-error": _f("a server ping is answered with both result and error", ALL_VERSIONS[:3]),
    "string-error-code": _f('sampling is not declared and sampling/createMessage is answered with code "-32601" '
                            "(a string)", LEGACY),
    "unknown-method-wrong-code": _f("an unknown server method is answered with -32600 instead of -32601", LEGACY),
    "answer-notification": _f("a server notification is answered (an error response with id null)", FROM_2025_03),
    "ignore-batch": _f("a JSON-RPC batch from the server is dropped unanswered", ("2025-03-26",)),
    "ignore-ping": _f("server pings are not answered", LEGACY),
    "ignore-parse-error": _f("a server message that is not JSON (NaN, a comment, a trailing comma, cut short...) is "
                             "dropped unanswered, no -32700", LEGACY),
    "exit-on-cancel-race": _f("the server's cancellation of a request it sent the client (answered or not) makes the "
                              "client quit", LEGACY),
    "answer-cancelled": _f("sampling/createMessage is answered after a 0.3 s 'model call', even when the server "
                           "cancelled it meanwhile", LEGACY),
    "exit-on-invalid-cancel": _f("an invalid notifications/cancelled (unknown id, no requestId) makes the client quit"),
    # -- lifecycle --------------------------------------------------------------------------------
    "request-before-initialize": _f("tools/list is sent before initialize", LEGACY),
    "no-client-info": _f("initialize without clientInfo", LEGACY),
    "no-initialized": _f("notifications/initialized is never sent", LEGACY),
    "request-during-initialize": _f("tools/list is sent while the initialize request is unanswered", LEGACY),
    "accept-unsupported-version": _f("the client carries on (initialized, requests) after an unsupported version",
                                     LEGACY),
    "undeclared-server-capability": _f("one extra request of a capability the server did not declare "
                                       "(prompts/list, resources/list, logging/setLevel or completion/complete)",
                                       FROM_2025_06),
    "cancel-initialize": _f("the initialize request is cancelled while in flight", LEGACY),
    "no-timeout": _f("no timeout: the client waits for every answer after the handshake for ever",
                     ALL_VERSIONS[1:]),
    "timeout-without-cancel": _f("a request unanswered within the timeout is given up without cancelling it",
                                 FROM_2025_03),
    "retry-unlisted-version": _f("a -32022 UnsupportedProtocolVersion is answered by retrying the refused version, "
                                 "whatever its supported list says", MODERN, ("stdio", "streamable-http")),
    "no-version-retry": _f("a -32022 UnsupportedProtocolVersion ends the client, even when its supported list names "
                           "a version the client speaks", MODERN, ("stdio", "streamable-http")),
    "initialize-before-discover": _f("dual-era, but initialize first (server/discover only if initialize fails)",
                                     transports=("stdio", "streamable-http")),
    "modify-cursor": _f("a nextCursor is sent back URL-encoded (\"a b/c=\" -> \"a%20b%2Fc%3D\"), not as given"),
    "empty-cursor-ends": _f('a nextCursor that is the empty string ends the listing (as if no nextCursor were given)', MODERN),
    "fixed-page-size": _f("a listing stops at a page shorter than its first page, even when that page has a nextCursor"),
    "no-prompt-pages": _f("prompts/list is not followed past its first page (its nextCursor is ignored)"),
    "no-restart-on-invalid-cursor": _f("a listing whose cursor the server refuses is given up, not started again from "
                                       "the beginning", MODERN),
    # -- client capabilities ------------------------------------------------------------------------
    "undeclared-roots": _f("roots is not declared, yet roots/list is answered with roots", LEGACY),
    "roots-unsupported-internal-error": _f("roots is not declared and roots/list is answered -32603", LEGACY),
    "https-root": _f("roots/list is answered with an https:// root"),
    "undeclared-sampling": _f("sampling is not declared, yet sampling/createMessage is answered with a result",
                              LEGACY),
    "undeclared-sampling-tools": _f("sampling.tools is not declared, yet a sampling/createMessage with tools is "
                                    "answered with a tool use (2026-07-28: the input request)", ("2025-11-25", "2026-07-28")),
    "unchecked-tool-loop": _f("sampling.tools is declared, yet a sampling/createMessage whose tool loop breaks the page's "
                              "message rules (a tool result missing, tool results mixed with text) is answered with text, "
                              "not -32602", ("2025-11-25",)),
    "undeclared-elicitation": _f("elicitation is not declared, yet elicitation/create is answered with a result",
                                 FROM_2025_06),
    "undeclared-mode-answered": _f("elicitation/create in a mode the client did not declare (url; it declares form "
                                   "only) is answered with a decline result, not -32602", ("2025-11-25",)),
    "elicitation-invalid-content": _f("a form elicitation is accepted with content of the wrong types for its "
                                      "requestedSchema (a string for a boolean, a number for a string)", ("2025-11-25", "2026-07-28")),
    "elicitation-no-mode": _f("elicitation is declared as {\"mcp-reference-client\": {}}: not empty (which means form "
                              "mode) and naming neither form nor url", ("2025-11-25", "2026-07-28")),
    "modeless-not-form": _f("elicitation/create without a mode field is not taken as form mode: refused with -32602 "
                            "like an undeclared mode", ("2025-11-25",)),
    "prefetch-url": _f("the URL of a url mode elicitation is fetched (an HTTP GET) before the request is answered "
                       "(2026-07-28: an input request); only a URL on the loopback interface (the suite's), never the "
                       "network", ("2025-11-25", "2026-07-28")),
    "exit-on-unknown-complete": _f("notifications/elicitation/complete naming an unknown elicitationId makes the "
                                   "client quit", ("2025-11-25",)),
    "no-defaults": _f("a form elicitation is accepted with the fields that have a default left out", ("2025-11-25",)),
    # -- tasks (2025-11-25): the client as receiver ------------------------------------------------
    "task-undeclared": _f("no tasks capability declared, yet task-augmented sampling/elicitation is answered with a "
                          "CreateTaskResult (and tasks/* served)", TASKS),
    "task-undeclared-type": _f("tasks declared for elicitation only, yet a task-augmented sampling/createMessage "
                               "gets a CreateTaskResult", TASKS),
    "task-plain-result": _f("a task-augmented request of a declared type is answered with the plain result, no "
                            "CreateTaskResult", TASKS),
    "task-int-id": _f("taskIds are integers", TASKS),
    "task-same-id": _f("every task gets the first task's taskId", TASKS),
    "task-list-reopened": _f("tasks/list reports completed tasks as working", TASKS),
    "task-no-created-at": _f("tasks carry no createdAt", TASKS),
    "task-no-last-updated-at": _f("tasks carry no lastUpdatedAt", TASKS),
    "task-no-ttl": _f("tasks/get results carry no ttl", TASKS),
    "task-result-early": _f("tasks/result of a working task is answered at once with an error, not held until it "
                            "ends", TASKS),
    "task-result-task-data": _f("tasks/result returns the task, not the request's result", TASKS),
    "task-result-no-meta": _f("tasks/result results carry no related-task _meta", TASKS),
    "task-meta-routes": _f("tasks/get, tasks/result and tasks/cancel find the task by the related-task _meta, not the "
                           "taskId parameter", TASKS),
    "task-meta-on-results": _f("tasks/get and tasks/list results carry related-task _meta", TASKS),
    "task-list-empty": _f("tasks/list lists no task", TASKS),
    "task-unknown-id-internal-error": _f("an unknown taskId is answered -32603, not -32602", TASKS),
    "task-cancel-terminal-accepted": _f("tasks/cancel of a terminal task is answered with the task (unchanged), not "
                                        "-32602", TASKS),
    "task-cancel-ignored": _f("tasks/cancel of a working task is answered with the task still working", TASKS),
    "task-cancel-reverts": _f("a cancelled task turns completed once its work would have ended", TASKS),
    # -- tasks (2025-11-25): the client as requestor -----------------------------------------------
    "task-ignore-capability": _f("tools marked taskSupport optional/required are called as tasks on a server that "
                                 "does not declare tasks.requests.tools.call", TASKS),
    "task-forbidden-augmented": _f("tools marked forbidden (or unmarked) are called as tasks", TASKS),
    "task-required-plain": _f("tools marked taskSupport required are called plainly", TASKS),
    "task-fast-poll": _f("tasks/get is sent again at once, ignoring pollInterval", TASKS),
    "task-cancel-notification": _f("once a task-augmented tools/call is answered with a CreateTaskResult, the "
                                   "client sends notifications/cancelled for that request (not tasks/cancel), then "
                                   "polls the task as usual", TASKS),
    "task-poll-once": _f("a task is polled once, then given up while still working", TASKS),
    "task-no-input-result": _f("input_required does not make it call tasks/result: it keeps polling", TASKS),
    "task-meta-on-requests": _f("tasks/get and tasks/result requests carry related-task _meta", TASKS),
    "task-wait-notification": _f("a task is not polled: the client waits for notifications/tasks/status, and gives up",
                                 TASKS),
    # -- stdio --------------------------------------------------------------------------------------
    "pretty-json": _f("one extra message written pretty-printed, over several lines", transports=STDIO),
    "stdin-garbage": _f("one extra line that is not JSON written to the server's stdin", transports=STDIO),
    "kill-without-closing-stdin": _f("shutdown by SIGTERM (then SIGKILL) without closing the server's stdin first",
                                     LEGACY, STDIO),
    "batch-stdio": _f("one extra JSON-RPC batch (an array of two pings) written on a version without batches",
                      FROM_2025_06, STDIO),
    "no-escalation": _f("shutdown: stdin closed, then the client exits after 1 s, leaving a server that stays "
                        "running (no SIGTERM, no SIGKILL)", LEGACY, STDIO),
    "fallback-only-on-32601": _f("dual-era: falls back to initialize only when server/discover is answered -32601",
                                 MODERN, STDIO),
    "stderr-is-error": _f("any output on the server's stderr is taken for an error: the session ends at once",
                          ("2025-11-25", "2026-07-28"), STDIO),
    "stdio-write-response": _f("one extra JSON-RPC response written on 2026-07-28", MODERN, STDIO),
    "no-restart": _f("a server process that exits unexpectedly is not started again: the client gives up", MODERN,
                     STDIO),
    # -- streamable HTTP ------------------------------------------------------------------------------
    "put-message": _f("one extra request sent by PUT instead of POST", FROM_2025_03, HTTP),
    "accept-json-only": _f("one extra POST with Accept: application/json only", FROM_2025_03, HTTP),
    "post-empty-array": _f("one extra POST whose body is an empty JSON array (a batch of nothing)", ("2025-03-26",), HTTP),
    "post-array": _f("one extra POST whose body is a JSON array (a batch of one ping)", FROM_2025_06, HTTP),
    "drop-session-id": _f("one extra POST after initialize without the Mcp-Session-Id header", ("2025-11-25",), HTTP),
    "get-accept-json": _f("the GET that opens (or resumes) an SSE stream sends Accept: application/json",
                          FROM_2025_03, HTTP),
    "version-header-asked": _f("after a counter-offer, MCP-Protocol-Version carries the version the client asked "
                               "for, not the negotiated one", FROM_2025_06, HTTP),
    "no-version-header": _f("one extra POST after initialize without MCP-Protocol-Version", FROM_2025_06, HTTP),
    "give-up-after-404": _f("HTTP 404 on a request with the session id ends the client (no new initialize)",
                            ("2025-11-25",), HTTP),
    "sse-answer-ignored": _f("a request answered with an SSE stream is not read (only JSON bodies are)", FROM_2025_03,
                             HTTP),
    "no-poll": _f("an SSE answer whose connection the server closes before the answer is not reconnected",
                  ("2025-11-25",), HTTP),
    "ignore-retry": _f("an SSE stream closed before its answer is resumed at once, ignoring its retry time",
                       ("2025-11-25",), HTTP),
    "resume-without-last-event-id": _f("an SSE stream closed before its answer is reconnected by GET without "
                                       "Last-Event-ID", ("2025-11-25",), HTTP),
    "absent-result-type-incomplete": _f("a tools/call result without resultType is not taken as complete: the call "
                                        "is retried with empty inputResponses", MODERN, ("stdio", "streamable-http")),
    "mrtr-modify-state": _f("the retry after an InputRequiredResult carries its requestState changed", MODERN,
                            ("stdio", "streamable-http")),
    "mrtr-no-inputs": _f("the retry after an InputRequiredResult carries its requestState but no inputResponses", MODERN,
                         ("stdio", "streamable-http")),
    "mrtr-same-id": _f("the retry after an InputRequiredResult reuses the id of the request it retries", MODERN,
                       ("stdio", "streamable-http")),
    "mrtr-state-leak": _f("an InputRequiredResult's requestState also goes on one extra tools/list", MODERN,
                          ("stdio", "streamable-http")),
    "no-delete": _f("the session is not ended with DELETE", ("2025-11-25",), HTTP),
    "http-write-response": _f("one extra JSON-RPC response POSTed on 2026-07-28", MODERN, HTTP),
    "no-version-header-2026": _f("one extra POST without MCP-Protocol-Version on 2026-07-28", MODERN, HTTP),
    "version-header-mismatch": _f("one extra POST whose MCP-Protocol-Version (2099-01-01) differs from its _meta",
                                  MODERN, HTTP),
    "no-method-header": _f("one extra POST without the Mcp-Method header on 2026-07-28", MODERN, HTTP),
    # -- 2026-07-28 Mcp-Param-* headers (x-mcp-header) ----------------------------------------------
    "no-param-headers": _f("tools/call carries no Mcp-Param-* header (x-mcp-header ignored)", MODERN, HTTP),
    "param-header-for-absent": _f("tools/call carries Mcp-Param-{Name}: null for a designated parameter absent "
                                  "from the arguments", MODERN, HTTP),
    "param-bool-titlecase": _f("boolean Mcp-Param-* values are sent as True / False", MODERN, HTTP),
    "param-no-base64": _f("Mcp-Param-* values that are not plain ASCII are sent with those characters replaced by "
                          "'?' and trimmed, not Base64-encoded", MODERN, HTTP),
    "param-sentinel-plain": _f("a plain Mcp-Param-* value that looks like the Base64 sentinel is sent as it is",
                               MODERN, HTTP),
    "sentinel-uppercase": _f("Base64-encoded Mcp-Param-* values are marked =?BASE64?...?=", MODERN, HTTP),
    "fallback-on-modern-400": _f("the dual-era probe falls back to initialize on any error but -32022, also on a "
                                 "400 whose body is a HeaderMismatch or MissingRequiredClientCapability error",
                                 MODERN, HTTP),
    "name-no-base64": _f("a tool name that is not plain ASCII goes in Mcp-Name with those characters replaced by '?', "
                         "not Base64-encoded", MODERN, HTTP),
    "no-header-mismatch-retry": _f("a tools/call refused with HeaderMismatch is not retried (no tools/list, no second "
                                   "call with the tool's current headers)", MODERN, HTTP),
    "keep-invalid-header-tools": _f("tools whose x-mcp-header annotations break the constraints are kept (and "
                                    "called)", MODERN, HTTP),
    # -- legacy HTTP+SSE ------------------------------------------------------------------------------
    "post-without-endpoint-query": _f("one extra POST to the endpoint's path without its query", LEGACY, SSE),
    # -- 2026-07-28 per-request metadata ------------------------------------------------------------
    "meta-without-capabilities": _f("one extra request whose _meta lacks io.modelcontextprotocol/clientCapabilities",
                                    MODERN),
    "meta-without-client-info": _f("no io.modelcontextprotocol/clientInfo in the _meta of any request", MODERN),
    # -- JSON Schema dialects (basic/index#json-schema-usage) ---------------------------------------------
    "accept-unknown-dialect": _f("elicitation/create whose requestedSchema names a JSON Schema dialect the client does "
                                 "not support is served as if it were 2020-12", ("2025-11-25",)),
    "ask-older-version": _f("initialize asks for the version before the one it was told to speak, then goes on with "
                            "the version the server offers", ALL_VERSIONS[1:4]),
    "fetch-network-ref": _f("every http(s) $ref in a listed tool's inputSchema is fetched", MODERN, HTTP),
    "reject-explicit-2020-12": _f("elicitation/create whose requestedSchema names any $schema, 2020-12 too, is "
                                  "refused as an unsupported dialect", ("2025-11-25",)),
    # -- _meta key names, trace context, extension identifiers (basic/index#_meta) ----------------------
    "meta-key-empty-label": _f("one extra request whose _meta carries the key acme..tools/trace (an empty label)",
                               ALL_VERSIONS[2:]),
    "meta-key-name-trailing-hyphen": _f("one extra request whose _meta carries the key com.example/trace- (the name "
                                        "ends with a hyphen)", ALL_VERSIONS[2:]),
    "meta-key-forward-dns": _f("one extra request whose _meta carries the key example.com/trace (forward DNS order)",
                               ALL_VERSIONS[3:]),
    "traceparent-malformed": _f("one extra request whose _meta carries traceparent 00-abc-01", MODERN),
    "extension-id-without-prefix": _f("one extra request whose clientCapabilities advertise the extension 'tracing' "
                                      "(no prefix)", MODERN),
}

# the catalogue splits some rules by version (client.http.accept / client.http.accept-2026, ...):
# one fault per requirement id, the same misbehaviour
FAULTS.update({
    "digit-id-as-number-2025-11-25": _variant("digit-id-as-number", ("2025-11-25",)),
    "no-timeout-2024": _variant("no-timeout", ALL_VERSIONS[:1]),
    "resume-without-last-event-id-2025-03-26": _variant("resume-without-last-event-id", FROM_2025_03[:2]),
    "timeout-without-cancel-2026": _variant("timeout-without-cancel", MODERN, STDIO),  # HTTP: its exit closes the stream
    "cancel-unknown-id-2026": _variant("cancel-unknown-id", MODERN, STDIO),  # HTTP 2026: no client notifications
    "shared-progress-token-2026": _variant("shared-progress-token", MODERN, ("stdio", "streamable-http")),
    "undeclared-server-capability-should": _variant("undeclared-server-capability", ALL_VERSIONS[:2]),
    "undeclared-prompts-2026": _variant("undeclared-server-capability", ALL_VERSIONS[4:]),
    "undeclared-roots-2026": _variant("undeclared-roots", MODERN, ("stdio", "streamable-http")),
    "undeclared-sampling-2026": _variant("undeclared-sampling", MODERN, ("stdio", "streamable-http")),
    "undeclared-elicitation-2026": _variant("undeclared-elicitation", MODERN, ("stdio", "streamable-http")),
    "elicitation-invalid-content-2025-06": _variant("elicitation-invalid-content", ("2025-06-18",)),
    "no-escalation-2026": _variant("no-escalation", MODERN),
    "kill-without-closing-stdin-2026": _variant("kill-without-closing-stdin", MODERN),
    "batch-sse": _variant("batch-stdio", FROM_2025_06, SSE),
    "put-message-2026": _variant("put-message", MODERN),
    "accept-json-only-2026": _variant("accept-json-only", MODERN),
    "drop-session-id-2025-03-26": _variant("drop-session-id", ALL_VERSIONS[1:3]),
    "give-up-after-404-2025-03-26": _variant("give-up-after-404", ALL_VERSIONS[1:3]),
    "no-delete-2025-03-26": _variant("no-delete", ALL_VERSIONS[1:3]),
})


# -- OAuth (the client as an OAuth client: shown only under ``mcp-conformance client --auth``) -----------
# Each breaks one client.auth.* requirement; kept apart from FAULTS (whose every entry the wire
# tests of tests/reference_client compare message by message without authorization).
AUTH_HTTP = ("streamable-http", "sse")
FROM_2025_06_ALL = ALL_VERSIONS[2:]
FROM_2025_11_ALL = ALL_VERSIONS[3:]
OAUTH_FAULTS: dict[str, Fault] = {
    "oauth-no-pkce": _f("the authorization request has no code_challenge, the token request no code_verifier",
                        FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-pkce-plain": _f("PKCE with the plain method (the challenge is the verifier)", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-ignore-pkce-support": _f("goes on with an authorization server whose metadata lists no "
                                    "code_challenge_methods_supported", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-no-resource": _f("no resource parameter in the authorization and token requests", FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-wrong-resource": _f("the resource parameter has a trailing slash the server's canonical URI has not",
                               FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-token-in-query": _f("the access token also in the query string (access_token=) of every request",
                               FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-drop-bearer-once": _f("one request after the first authorized one goes without the Authorization header",
                                 FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-foreign-token": _f("the first request carries a bearer token of another authorization server",
                              FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-ignore-state": _f("an authorization response whose state is not ours is redeemed", FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-ignore-iss": _f("the RFC 9207 iss of the authorization response is not checked", MODERN, AUTH_HTTP),
    "oauth-ignore-metadata-issuer": _f("authorization server metadata whose issuer differs is used", MODERN, AUTH_HTTP),
    "oauth-prm-ignore-header": _f("the challenge's resource_metadata URL is ignored (the well-known URIs only)",
                                  FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-prm-ignore-header-2025-06-18": Fault("the challenge's resource_metadata URL is ignored (the well-known "
                                                "URIs only)", (ALL_VERSIONS[2],), AUTH_HTTP, (), "oauth-prm-ignore-header"),
    "oauth-prm-root-first": _f("the root well-known URI of the protected resource metadata before the path-inserted one",
                               FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-as-metadata-oidc-first": _f("OpenID Connect discovery before RFC 8414 for an issuer with a path",
                                       FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-no-application-type": _f("no application_type in the dynamic registration request", MODERN, AUTH_HTTP),
    "oauth-remote-redirect": _f("registers a second redirect URI, http on a host that is not loopback",
                                FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-unregistered-redirect": _f("registers one redirect URI and sends another in the authorization request",
                                      FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-scopes-supported-over-challenge": _f("asks for the metadata's scopes_supported, not the challenge's scope",
                                                FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-base-url-keeps-path": _f("2025-03-26: the authorization server metadata looked for under the endpoint's path",
                                    (ALL_VERSIONS[1],), AUTH_HTTP),
    "oauth-no-pkce-2025-03-26": Fault("the authorization request has no code_challenge, the token request no "
                                      "code_verifier", (ALL_VERSIONS[1],), AUTH_HTTP, (), "oauth-no-pkce"),
    "oauth-skip-metadata-2025-03-26": _f("2025-03-26: the default endpoints without asking for the metadata first",
                                         (ALL_VERSIONS[1],), AUTH_HTTP),
    "oauth-iss-normalized": _f("the RFC 9207 iss compared after dropping a trailing slash", MODERN, AUTH_HTTP),
    "oauth-as-metadata-oidc-first-root": _f("OpenID Connect discovery before RFC 8414 for an issuer without a path",
                                            FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-token-scheme": _f("the access token sent as Authorization: Token <token> (not the Bearer scheme)",
                             FROM_2025_06_ALL, AUTH_HTTP),
    "oauth-scope-subset": _f("with no scope in the challenge, asks for the first of scopes_supported only",
                             FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-step-up-same-scopes": _f("after 403 insufficient_scope, authorizes again with the same scopes (not the "
                                    "challenged one)", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-step-up-drop-granted": _f("the step-up asks for the challenged scopes only (not those granted before)",
                                     MODERN, AUTH_HTTP),
    "oauth-no-retry-limit": _f("authorizes again on every 403 insufficient_scope, however often it came before",
                               FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-no-dcr": _f("no dynamic client registration (only a pre-registered client or a metadata document URL)",
                       ALL_VERSIONS[1:3], AUTH_HTTP),
    "oauth-cimd-unchecked": _f("uses a client ID metadata document URL where the authorization server does not "
                               "advertise support", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-web-application-type": _f("registers its loopback redirect URI with application_type \"web\"", MODERN,
                                     AUTH_HTTP),
    "oauth-reuse-registration": _f("the client ID registered at one authorization server used at another", MODERN,
                                   AUTH_HTTP),
    "oauth-ignore-registration-failure": _f("a refused registration is ignored: it authorizes with a client ID of its "
                                            "own making", MODERN, AUTH_HTTP),
    "oauth-ignore-pkce-support-oidc": _f("goes on with OpenID Connect provider metadata that lists no "
                                         "code_challenge_methods_supported", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-no-as-metadata": _f("the authorization server's default endpoints, without asking for its metadata",
                               (ALL_VERSIONS[2],), AUTH_HTTP),
    "oauth-unregistered-client-id": _f("authorizes with a client ID of its own making (no registration, no "
                                       "metadata document)", MODERN, AUTH_HTTP),
    "oauth-cimd-http-url": _f("its client ID metadata document URL with the http scheme", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-no-cimd": _f("never uses its client ID metadata document URL", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-assume-refresh": _f("sends a refresh_token grant (an empty refresh token) when none was issued", MODERN,
                               AUTH_HTTP),
    "oauth-dcr-before-cimd": _f("registers dynamically where the authorization server also supports client ID "
                                "metadata documents", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-cimd-not-hosted": _f("its client ID metadata document URL answers 404 (--serve-client-metadata)",
                                FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-cimd-no-client-name": _f("its client ID metadata document has no client_name (--serve-client-metadata)",
                                    FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-cimd-id-mismatch": _f("its client ID metadata document names another URL as client_id "
                                 "(--serve-client-metadata)", FROM_2025_11_ALL, AUTH_HTTP),
    "oauth-no-refresh-grant-type": _f("asks for offline_access but registers grant_types without refresh_token",
                                      MODERN, AUTH_HTTP),
}
KNOWN: dict[str, Fault] = {**FAULTS, **OAUTH_FAULTS}


def behaviour(name: str) -> str:
    """The fault whose misbehaviour ``name`` has (itself, or the one it is a variant of)."""
    return KNOWN[name].variant_of or name


def describe() -> str:
    """The faults, one per line (for ``--help``)."""
    return "\n".join(f"  {name:<34}{fault.summary}" for name, fault in KNOWN.items())
