"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the server, 2026-07-28.

2026-07-28 moved tasks out of the core protocol into an extension; its text is the draft page
``docs/specification/draft/tasks.mdx`` of the repository modelcontextprotocol/experimental-ext-tasks,
not a page of the spec, so these requirements have ``source="extension"``: the coverage map (which
counts the spec pages' sentences) leaves them out, and their URL is the draft's, the same for every
version.  Quotes are the draft's rendered text (emphasis markers dropped, as for the spec pages).

Every rule is judged only on servers that advertise the extension in ``server/discover``
(``capabilities.extensions["io.modelcontextprotocol/tasks"]``); others skip with the reason.

Left out: what only the client does (polling interval, Mcp-Name on tasks/*, deduplicating
inputRequests, the trust model), what no message shows (task ID entropy, designing for future
request types, eventual consistency of acks), key uniqueness over several input rounds (it needs a
tool that asks twice), and status notifications (optional; subscriptions/listen is judged elsewhere).
"""

from __future__ import annotations

from conformance.spec.requirements import define

VERSION = "2026-07-28"
V = (VERSION,)
PAGE = "https://github.com/modelcontextprotocol/experimental-ext-tasks/blob/main/docs/specification/draft/tasks.mdx"
SOURCE = "extension"


def _url(anchor: str) -> str:
    return f"{PAGE}#{anchor}"


_ADVERTISED = (
    "Judged only when server/discover advertises capabilities.extensions[\"io.modelcontextprotocol/tasks\"]. "
)
_TOOLS = (
    "Tools called: the official runner's fixtures when listed (slow_compute, failing_job, protocol_error_job, "
    "greet), then tools the server says change nothing (readOnlyHint: true) or neither destroy anything nor "
    "reach outside, or whose name says they only take time, with arguments built from the inputSchema; a "
    "task-creating tool is one whose call, with the extension declared in the request's client capabilities, "
    "answers with a CreateTaskResult (resultType \"task\", or a taskId and status without content). "
)

define(
    "tasks.ext.undeclared.no-task",
    "MUST",
    versions=V,
    url=_url("capability-negotiation"),
    quote=(
        "A server MUST NOT return `CreateTaskResult` to a client that did not include the extension capability on "
        "its request, regardless of prior declarations."
    ),
    aliases=('sep-2663-server-rejects-undeclared-client',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Probe: the task-creating tools called again without the extension in the request's "
    "client capabilities; a result with resultType \"task\" or a taskId fails. " + _TOOLS,
)

define(
    "tasks.ext.undeclared.missing-capability",
    "MUST",
    versions=V,
    url=_url("capability-negotiation"),
    quote=(
        "If a server is unable to service a request to a client that does not declare this extension capability "
        "without returning `CreateTaskResult`, the server MUST return an error with the code `-32003` (Missing "
        "Required Client Capability), indicating the required extension in the error response"
    ),
    aliases=('sep-2663-server-returns-missing-capability-when-required', 'tasks-required-task-error'),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "The draft's stored text says -32003; the code was renumbered -32021 "
    "(MissingRequiredClientCapabilityError of the 2026-07-28 schema, and what the official runner checks): "
    "both are accepted. Probe: a task-creating tool called without the extension; when it answers with an "
    "error (it cannot serve the call without a task), the code must be -32021 (or -32003) and "
    "error.data.requiredCapabilities.extensions must name io.modelcontextprotocol/tasks. A plain result is "
    "tasks.ext.undeclared.no-task's business. " + _TOOLS,
)

define(
    "tasks.ext.create.result-type",
    "MUST",
    versions=V,
    url=_url("polymorphic-results"),
    quote=(
        "Servers MUST set `resultType` to `\"task\"` when returning a `CreateTaskResult` so that clients can "
        "distinguish it from a standard result."
    ),
    aliases=('sep-2663-result-type-task-on-create',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "A CreateTaskResult is recognised by a string taskId and a status without content. " + _TOOLS,
)

define(
    "tasks.ext.result-type.task-only",
    "MUST",
    versions=V,
    url=_url("polymorphic-results"),
    quote="Servers MUST NOT set `resultType` to `\"task\"` on result types other than `CreateTaskResult`.",
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Judged on the CallToolResults (content, no taskId) of the tools we call with the "
    "extension declared (greet, the official runner's never-a-task fixture, when listed) and on the results of "
    "tasks/get, tasks/update and tasks/cancel of a task we created. " + _TOOLS,
)

define(
    "tasks.ext.create.durable",
    "MUST",
    versions=V,
    url=_url("task-creation"),
    quote=(
        "A server MUST NOT return `CreateTaskResult` until the task is durably created — that is, until a "
        "`tasks/get` for the returned `taskId` would resolve."
    ),
    aliases=('sep-2663-durable-create-strong-consistency',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Probe: tasks/get for the taskId sent as soon as the CreateTaskResult arrives must be "
    "answered with that task (an error fails). " + _TOOLS,
)

define(
    "tasks.ext.get.result-type",
    "MUST",
    versions=V,
    url=_url("response"),
    quote=(
        "The `resultType` field MUST be set to `\"complete\"` on this object as it is the standard result shape "
        "for the `tasks/get` request."
    ),
    aliases=('tasks-result-type-complete-on-non-task-responses',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Judged on every tasks/get result of a task we created.",
)

define(
    "tasks.ext.update.result-type",
    "MUST",
    versions=V,
    url=_url("response-1"),
    quote=(
        "The `resultType` field MUST be set to `\"complete\"` on `UpdateTaskResult` as it is the standard result "
        "shape for the `tasks/update` request."
    ),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Probe: tasks/update of a task we created with an inputResponses entry for a key the "
    "server never issued (the server SHOULD ignore it); judged when it is answered with a result.",
)

define(
    "tasks.ext.cancel.result-type",
    "MUST",
    versions=V,
    url=_url("response-2"),
    quote=(
        "The `resultType` field MUST be set to `\"complete\"` on `CancelTaskResult` as it is the standard result "
        "shape for the `tasks/cancel` request."
    ),
    aliases=('sep-2663-cancel-ack-empty-result',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Probe: tasks/cancel of a task we created; judged when it is answered with a result.",
)

define(
    "tasks.ext.ack.empty",
    "MUST",
    versions=V,
    url=_url("response-1"),
    quote="On success, the server MUST acknowledge the request with an empty result.",
    aliases=('sep-2663-cancel-ack-empty-result', 'tasks-mrtr-tasks-update-resumes'),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "The sentence stands for tasks/update and for tasks/cancel. A result is empty when it "
    "has no member but resultType and _meta (the fields every 2026-07-28 result may carry); task fields "
    "(taskId, status, result, error, inputRequests) in the ack fail. Probes: the tasks/update and tasks/cancel "
    "of tasks.ext.update.result-type and tasks.ext.cancel.result-type.",
)

define(
    "tasks.ext.unknown-id.get",
    "MUST",
    versions=V,
    url=_url("protocol-errors"),
    quote="Servers MUST return this error for `tasks/get`.",
    aliases=('sep-2663-tasks-get-invalid-task-id-32602',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "The error is the one of the list item above it: 'Invalid or nonexistent `taskId`: "
    "`-32602` (Invalid params)'. Probe: tasks/get of a taskId the server never issued, the extension declared.",
)

define(
    "tasks.ext.unknown-id.update-cancel",
    "SHOULD",
    versions=V,
    url=_url("protocol-errors"),
    quote="Servers SHOULD return this error for `tasks/update` and `tasks/cancel`.",
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "-32602, as for tasks/get. Probe: tasks/update and tasks/cancel of a taskId the server "
    "never issued, the extension declared.",
)

define(
    "tasks.ext.failed.error",
    "MUST",
    versions=V,
    url=_url("task-execution-errors"),
    quote=(
        "The `tasks/get` response SHOULD include a `statusMessage` field with diagnostic information about the "
        "failure, and MUST include the `error` field with the JSON-RPC error."
    ),
    aliases=('sep-2663-tasks-get-status-failed',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Graded on the MUST: a tasks/get answer in status failed must carry an error object with "
    "an integer code and a string message (a missing statusMessage is not flagged here). Tasks that end in "
    "failed: protocol_error_job when listed, and any task we created that ends so. " + _TOOLS,
)

define(
    "tasks.ext.tool-error.completed",
    "MUST",
    versions=V,
    url=_url("task-execution-errors"),
    quote=(
        "The `failed` status MUST NOT be used to represent non-JSON-RPC errors, such as a tool result that "
        "completed with `isError: true`."
    ),
    aliases=('sep-2663-tool-error-uses-completed-status',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Probe: failing_job (the official runner's fixture that always ends in a tool execution "
    "error) when listed; and any task we created whose failed answer carries a tool result with isError: true. "
    "Not reached when the server offers neither.",
)

define(
    "tasks.ext.completed.result",
    "MUST",
    versions=V,
    url=_url("task-execution-errors"),
    quote=(
        "If the request completed with a result (even if `isError: true` for tool results), the task uses "
        "`completed` status and the `result` field MUST contain that result."
    ),
    aliases=('sep-2663-tasks-get-status-completed',),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "A tasks/get answer in status completed for a tools/call task must carry result, a "
    "CallToolResult (an object with a content array).",
)

define(
    "tasks.ext.update.ignore-unknown",
    "SHOULD",
    versions=V,
    url=_url("response-1"),
    quote=(
        "A server SHOULD ignore any `inputResponses` responses mapped to a key that is not currently outstanding "
        "for the task — including keys that were never issued, keys that have already been answered, and keys "
        "whose corresponding request has been superseded."
    ),
    area="tasks",
    source=SOURCE,
    note=_ADVERTISED + "Probe: a tool that asks for input (confirm_delete, multi_input when listed, else a tool "
    "whose name or description speaks of input, never one marked destructive) called with the extension and "
    "every input capability declared; once its task is input_required, tasks/update with an answer to a key "
    "never issued must leave it so: the next tasks/get still input_required with the same outstanding keys. "
    "Then the real answers are sent (or the task is cancelled). Not reached when no such tool creates a task.",
)
