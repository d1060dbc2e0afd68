"""server/tools: listing and calling tools, their names and schemas, errors, list changes."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

PAGE = "server/tools"
V2026 = "2026-07-28"

define(
    "tools.capability.declared",
    "MUST",
    url=spec_url(LATEST, PAGE, "capabilities"),
    quote="Servers that support tools MUST declare the `tools` capability",
    area="tools",
    note=(
        "Checked when the capability is absent: a server that lists tools anyway (tools/list "
        "answered with at least one tool) supports tools without declaring them."
    ),
)

define(
    "tools.list.respond",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "capabilities"),
    quote=(
        "Servers that declare the `tools` capability MUST respond to `tools/list` requests with the "
        "set of tools currently available to the requesting client."
    ),
    area="tools",
    aliases=("tools-list",),
)

define(
    "tools.list.answered",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "listing-tools"),
    quote="To discover available tools, clients send a `tools/list` request.",
    area="tools",
    aliases=("tools-list",),
    note=(
        "These revisions word no duty for the server: the `tools` capability 'Exposes callable "
        "tools' and tools/list is how a client discovers them, so a server that declares the "
        "capability and answers tools/list with an error is graded as a warning (2026-07-28 makes "
        "it a MUST: tools.list.respond)."
    ),
)

define(
    "tools.name.identifier",
    "SHOULD",
    until="2025-06-18",
    url=spec_url("2025-06-18", PAGE, "tool"),
    quote="`name`: Unique identifier for the tool",
    area="tools",
    note=(
        "A data-type description without an RFC 2119 keyword (2025-11-25 words it as 'Tool names "
        "SHOULD be unique within a server'): two tools with the same name across the pages of "
        "tools/list are graded as a warning."
    ),
)

define(
    "tools.name.unique",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "tool-names"),
    quote="Tool names SHOULD be unique within a server.",
    area="tools",
)

define(
    "tools.name.length",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "tool-names"),
    quote="Tool names SHOULD be between 1 and 128 characters in length (inclusive).",
    area="tools",
    aliases=("tools-name-format",),
)

define(
    "tools.name.characters",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "tool-names"),
    quote=(
        "The following SHOULD be the only allowed characters: uppercase and lowercase ASCII letters (A-Z, a-z), "
        "digits (0-9), underscore (\\_), hyphen (-), and dot (.) - Tool names SHOULD NOT contain spaces, commas, "
        "or other special characters."
    ),
    area="tools",
    aliases=("tools-name-format",),
    note=(
        "Two items of the Tool Names list, one check: every listed tool name is checked against the allowed "
        "characters (ASCII letters, digits, underscore, hyphen and dot); a space, a comma or any other "
        "character is a warning."
    ),
)

define(
    "tools.name.case-sensitive",
    "SHOULD",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "tool-names"),
    quote="Tool names SHOULD be considered case-sensitive.",
    area="tools",
    note=(
        "Probe: tools/call of a tool that is safe to call (an official runner fixture, or read-only with an "
        "outputSchema), its name with the case of every letter swapped, a name the server does not list. A "
        "server that considers names case-sensitive does not know that tool: a JSON-RPC error or an isError "
        "result. A successful result means the server matched the name without regard to case."
    ),
)

define(
    "tools.list.deterministic-order",
    "SHOULD",
    since=V2026,
    url=spec_url(V2026, PAGE, "capabilities"),
    quote=(
        "Servers SHOULD return tools in a deterministic order (i.e., the same ordering across requests "
        "when the underlying set of tools has not changed)."
    ),
    area="tools",
    aliases=("tools-list-deterministic-order",),
)

define(
    "tools.input-schema.valid",
    "MUST",
    since="2025-11-25",
    url=spec_url(LATEST, PAGE, "tool"),
    quote="MUST be a valid JSON Schema object (not `null`)",
    area="tools",
    note=(
        "The sentence is about `inputSchema`. It is checked against the meta-schema of its declared "
        "dialect (`$schema`), or 2020-12 when none is declared; a dialect we do not know is not judged."
    ),
)

define(
    "tools.output-schema.valid",
    "MUST",
    since="2025-11-25",
    url=spec_url(LATEST, "basic/index", "schema-validation"),
    quote="Schemas MUST be valid according to their declared or default dialect",
    area="tools",
    note="Checked for every tool's `outputSchema`, against the meta-schema of its declared (or the default 2020-12) dialect.",
)

define(
    "tools.output-schema.conform",
    "MUST",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "output-schema"),
    quote="Servers MUST provide structured results that conform to this schema.",
    area="tools",
    note=(
        "Checked on the tools we call (see tools.call.*): a successful result of a tool with an "
        "`outputSchema` must carry `structuredContent` that validates against it; a result with "
        "`isError: true` is not judged."
    ),
)

define(
    "tools.structured-content.text-block",
    "SHOULD",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "structured-content"),
    quote=(
        "For backwards compatibility, a tool that returns structured content SHOULD also return the "
        "serialized JSON in a TextContent block."
    ),
    area="tools",
    note="A text block whose text parses as JSON equal to `structuredContent` satisfies it (whitespace and key order are free).",
)

define(
    "tools.result.embedded-resource-capability",
    "SHOULD",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "embedded-resources"),
    quote="Servers that use embedded resources SHOULD implement the `resources` capability",
    area="tools",
)

define(
    "tools.call.unknown-tool",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote='"code": -32602, "message": "Unknown tool: invalid_tool_name"',
    area="tools",
    note=(
        "The page lists unknown tools under Protocol Errors (standard JSON-RPC errors) and shows "
        "this -32602 error as its example, without an RFC 2119 keyword; SDKs often answer with an "
        "`isError` result instead. Any JSON-RPC error passes; a result (even with isError) is a "
        "warning (GUIDE: 'Unknown tool')."
    ),
)

define(
    "tools.call.invalid-arguments",
    "MUST",
    url=spec_url(LATEST, PAGE, "security-considerations"),
    quote="Servers MUST: - Validate all tool inputs",
    area="tools",
    note=(
        "Arguments that violate the tool's `inputSchema` (a required property left out) must not "
        "run the tool as if they were valid. Both answers the revisions describe are accepted: a "
        "protocol error (up to 2025-06-18 'Invalid arguments' are listed as protocol errors) or a "
        "tool execution error with `isError: true` (2025-11-25 lists 'Input validation errors' as "
        "execution errors); only a successful result fails."
    ),
)

define(
    "tools.call.execution-error",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "error-handling"),
    quote="Tool Execution Errors: Reported in tool results with `isError: true`",
    area="tools",
    aliases=("tools-call-error",),
    note=(
        "No RFC 2119 keyword. Checked with the official runner's fixture `test_error_handling` "
        "(a tool that always fails): its result must carry `isError: true` and a message."
    ),
)

define(
    "tools.call.execution-error-result",
    "SHOULD",
    since=V2026,
    url=spec_url(V2026, PAGE, "error-handling"),
    quote="They are reported in tool results with `isError: true`",
    area="tools",
    aliases=("tools-call-error",),
    note=(
        "No RFC 2119 keyword ('They' are Tool Execution Errors). Checked with the official runner's "
        "fixture `test_error_handling`: its result must carry `isError: true` and a message."
    ),
)

define(
    "tools.fixtures.content",
    "SHOULD",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "tool-result"),
    quote=(
        "Unstructured content is returned in the `content` field of a result, and can contain multiple "
        "content items of different types"
    ),
    area="tools",
    aliases=(
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "json-schema-2020-12",
    ),
    note=(
        "Deeper content checks on the official runner's fixture tools, only when the server lists "
        "them by their fixed names (test_simple_text, test_image_content, ...): each must return the "
        "content its runner scenario describes. This is the runner's fixture contract, not a spec "
        "sentence, hence at most a warning."
    ),
)

define(
    "tools.list-changed.notification",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "list-changed-notification"),
    quote=(
        "When the list of available tools changes, servers that declared the `listChanged` capability "
        "SHOULD send a notification"
    ),
    area="tools",
    note=(
        "Only testable when the server offers a way to change its tool list: the official runner's diagnostic "
        "hook `test_trigger_tool_change` (called twice: the change, then the list put back). Up to 2025-11-25 the "
        "notification may come on any stream of the session (streamable HTTP: the GET stream is opened "
        "first); in 2026-07-28 the suite first opens a subscriptions/listen stream with `toolsListChanged: true` "
        "(the page's sentence goes on: 'to clients that have opened a `subscriptions/listen` stream with "
        "`toolsListChanged: true`'), and the notification must arrive after the change."
    ),
)
