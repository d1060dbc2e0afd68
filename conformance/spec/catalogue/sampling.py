"""client/sampling, as duties of the server: what a server may put in the sampling/createMessage
requests it sends (up to 2025-11-25 server-to-client requests, in 2026-07-28 the input requests of
an InputRequiredResult).  Tools in sampling exist from 2025-11-25."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, spec_url

PAGE = "client/sampling"
TOOLS_VERSIONS = ("2025-11-25", LATEST)

_PROBE = (
    "Probe (scenario sampling_requests): on connections of its own the suite's client declares sampling, first "
    "without tools (sampling: {}), then with tools (sampling: {tools: {}}), never sampling.context, and calls a tool "
    "that asks for sampling (the official fixture test_sampling, server-everything's sampleLLM or "
    "trigger-sampling-request, or a tool whose name or description speaks of sampling or an LLM). Every "
    "sampling/createMessage the server sends (2026-07-28: every sampling input request of an InputRequiredResult) "
    "is judged; the suite answers with text, and, when sampling.tools is declared and the request offers tools, "
    "with two tool uses of the first tool offered (stopReason toolUse), so that a server that runs a tool loop "
    "sends its tool results back. Skipped when no tool asks for sampling."
)

define(
    "sampling.tools.undeclared",
    "MUST",
    versions=TOOLS_VERSIONS,
    url=spec_url(LATEST, PAGE, "tools-in-sampling"),
    quote=(
        "Servers MUST NOT send tool-enabled sampling requests to Clients that have not declared support for tool use "
        "via the `sampling.tools` capability."
    ),
    area="sampling",
    note=(
        _PROBE + " Tool-enabled: the request carries `tools` or `toolChoice` (the page: 'by providing a `tools` array "
        "and optional `toolChoice` configuration'). Judged on the requests made while the client declared sampling "
        "without tools."
    ),
)

define(
    "sampling.include-context",
    "SHOULD",
    versions=TOOLS_VERSIONS,
    url=spec_url(LATEST, PAGE, "capabilities"),
    quote=(
        "Servers SHOULD avoid using these values (e.g. can just omit `includeContext` since it defaults to "
        "`\"none\"`), and SHOULD NOT use them unless the client declares `sampling.context` capability."
    ),
    area="sampling",
    note=(
        _PROBE + " 'These values' are the soft-deprecated includeContext values \"thisServer\" and \"allServers\"; the "
        "suite's client never declares sampling.context, so a request with either is a warning. \"none\" and no "
        "includeContext pass."
    ),
)

define(
    "sampling.tool-result.only",
    "MUST",
    versions=TOOLS_VERSIONS,
    url=spec_url(LATEST, PAGE, "tool-result-messages"),
    quote='When a user message contains tool results (type: "tool_result"), it MUST contain ONLY tool results.',
    area="sampling",
    note=(
        _PROBE + " Judged on every user message of every sampling request: one with a tool_result block has no block "
        "of another type. Needs a request that carries tool results (a server that runs a tool loop); otherwise "
        "skipped. The same mixing in the message that answers a tool use is judged here only, not again as "
        "sampling.tool-use.balanced."
    ),
)

define(
    "sampling.tool-use.balanced",
    "MUST",
    versions=TOOLS_VERSIONS,
    url=spec_url(LATEST, PAGE, "tool-use-and-result-balance"),
    quote=(
        "When using tool use in sampling, every assistant message containing `ToolUseContent` blocks MUST be followed "
        "by a user message that consists entirely of `ToolResultContent` blocks, with each tool use (e.g. with `id: "
        "$id`) matched by a corresponding tool result (with `toolUseId: $id`), before any other message."
    ),
    area="sampling",
    note=(
        _PROBE + " Judged on the messages of every sampling request: the message right after an assistant message with "
        "tool_use blocks is a user message whose tool_result blocks name every one of their ids (none missing, nothing "
        "between, not the last message). Other content mixed into that user message is sampling.tool-result.only's. "
        "The security consideration 'Servers MUST ensure that when replying to a `stopReason: \"toolUse\"`, each "
        "`ToolUseContent` item is responded to with a `ToolResultContent` item with a matching `toolUseId`...' says "
        "the same of the server's reply to the suite's tool uses. Needs a server that runs a tool loop; otherwise "
        "skipped."
    ),
)

define(
    "sampling.message.role-content",
    "MUST",
    versions=(LATEST,),
    url=spec_url(LATEST, PAGE, "messages"),
    quote=(
        'Sampling messages MUST contain a `role` field of `"user"` or `"assistant"`; and a `content` field '
        "representing the message data."
    ),
    area="sampling",
    note=(
        "Judged over the whole run (scenario sampling_messages): every message of every sampling input request in an "
        "InputRequiredResult the server sent has role \"user\" or \"assistant\" and a content field. The schema says "
        "the same (SamplingMessage); such a message is reported here, not again as basic.schema.messages-valid. The "
        "results a client returns are judged by the client's schema rule (client.basic.schema-valid). 2026-07-28 is the "
        "version with this sentence."
    ),
)
