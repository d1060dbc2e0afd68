"""basic/utilities/tasks (2025-11-25 only; 2026-07-28 moved tasks to an extension): the server as
the receiver of task-augmented ``tools/call`` and of ``tasks/get``, ``tasks/result``,
``tasks/list`` and ``tasks/cancel``.

Left out: what only the requestor does (polling, pollInterval, not relying on notifications) and what
no message shows (ID entropy, rate limits, documentation, resource limits).  Binding tasks to the
authorization context is checked on a server the run is told requires authorization (``--auth``).
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

VERSION = "2025-11-25"
PAGE = "basic/utilities/tasks"
V = (VERSION,)


def _url(anchor: str) -> str:
    return spec_url(VERSION, PAGE, anchor)


_TOOLS = (
    "Tools called: those tools/list marks with execution.taskSupport (\"optional\" or \"required\"; absent "
    "or \"forbidden\" for the forbidden rule) that the server says change nothing (readOnlyHint: true) or "
    "neither destroy anything nor reach outside (destructiveHint: false and openWorldHint: false), or whose "
    "name says they only take time (slow, sleep, delay, wait), and whose required arguments can be built "
    "from the inputSchema; skipped with the reason when the server offers none."
)

define(
    "tasks.capability.declared",
    "MUST",
    versions=V,
    url=_url("capabilities"),
    quote="Servers and clients that support task-augmented requests MUST declare a `tasks` capability during initialization.",
    area="tasks",
    note=(
        "Evidence that the server supports task-augmented tool calls: tools/list marks a tool "
        "execution.taskSupport \"optional\" or \"required\". With such a tool, a server that declares no "
        "`tasks` capability fails; without any, the rule is skipped. (A server that declares `tasks` but "
        "not tasks.requests.tools.call and still creates a task is tasks.undeclared.processed-normally.)"
    ),
)

define(
    "tasks.undeclared.processed-normally",
    "MUST",
    versions=V,
    url=_url("task-support-and-handling"),
    quote=(
        "Receivers that do not declare the task capability for a request type MUST process requests of that "
        "type normally, ignoring any task-augmentation metadata if present."
    ),
    area="tasks",
    note=(
        "Probe, when the server declares tools but not tasks.requests.tools.call: a tool call with "
        "params.task, of a tool we may call (readOnlyHint: true, arguments built from its inputSchema), and "
        "the same call without it. A CreateTaskResult (a result with `task` and no `content`) fails, and so "
        "does an error where the plain call succeeded."
    ),
)

define(
    "tasks.tool.required-without-task",
    "MUST",
    versions=V,
    url=_url("tool-level-negotiation"),
    quote="Servers MUST return a `-32601` (Method not found) error if a client does not attempt to do so.",
    area="tasks",
    note=(
        "The sentence before: 'If execution.taskSupport is \"required\", clients MUST invoke the tool as a "
        "task.' Probe, when the server declares tasks.requests.tools.call: a tool marked \"required\" called "
        "without params.task must be answered with error -32601. " + _TOOLS
    ),
)

define(
    "tasks.tool.forbidden-with-task",
    "SHOULD",
    versions=V,
    url=_url("tool-level-negotiation"),
    quote="Servers SHOULD return a `-32601` (Method not found) error if a client attempts to do so.",
    area="tasks",
    note=(
        "The sentence before: 'If execution.taskSupport is not present or \"forbidden\", clients MUST NOT "
        "attempt to invoke the tool as a task.' Probe, when the server declares tasks.requests.tools.call: "
        "such a tool called with params.task; anything but error -32601 is a warning. " + _TOOLS
    ),
)

define(
    "tasks.create.result",
    "MUST",
    versions=V,
    url=_url("result-retrieval"),
    quote="Receivers that accept a task-augmented request MUST return a `CreateTaskResult` as the response.",
    area="tasks",
    note=(
        "Probe: a tool call with params.task of a tool marked \"optional\" or \"required\", on a server "
        "declaring tasks.requests.tools.call. A result must carry a `task` object; an error is not an "
        "accepted request and is not judged (the next tool is tried). " + _TOOLS
    ),
)

define(
    "tasks.create.promptly",
    "SHOULD",
    versions=V,
    url=_url("result-retrieval"),
    quote="This result SHOULD be returned as soon as possible after accepting the task.",
    area="tasks",
    note=(
        "Probe: a task-capable tool whose duration we can set (a seconds/duration argument), asked to take "
        "a while; a CreateTaskResult that only comes once that time has passed was held back until the "
        "work was done. Skipped when no such tool is offered."
    ),
)

define(
    "tasks.create.working",
    "MUST",
    versions=V,
    url=_url("task-status-lifecycle"),
    quote="Tasks MUST begin in the `working` status when created.",
    area="tasks",
    note=(
        "Judged on the CreateTaskResult of a task-capable tool asked to take a while (a duration argument), "
        "answered before that time passed: its status must be working. Another status in the "
        "CreateTaskResult of a quick tool may be the task's state after it moved on, and is not judged."
    ),
)

define(
    "tasks.id.string",
    "MUST",
    versions=V,
    url=_url("task-id-requirements"),
    quote="Task IDs MUST be a string value.",
    area="tasks",
    note="The taskId of every CreateTaskResult.",
)

define(
    "tasks.id.unique",
    "MUST",
    versions=V,
    url=_url("task-id-requirements"),
    quote="Task IDs MUST be unique among all tasks controlled by the receiver.",
    area="tasks",
    note="Probe: several tasks created on one connection; their taskIds differ.",
)

define(
    "tasks.status.valid-paths",
    "MUST",
    versions=V,
    url=_url("task-status-lifecycle"),
    quote=(
        "Receivers MUST only transition tasks through the following valid paths: 1. From `working`: may move "
        "to `input_required`, `completed`, `failed`, or `cancelled` 1. From `input_required`: may move to "
        "`working`, `completed`, `failed`, or `cancelled` 1. Tasks with a `completed`, `failed`, or "
        "`cancelled` status are in a terminal state and MUST NOT transition to any other status"
    ),
    area="tasks",
    note=(
        "Every status the server reports for a task, in the order it reports them (CreateTaskResult, "
        "tasks/get, tasks/list, tasks/cancel, notifications/tasks/status): the only paths the list rules "
        "out lead out of completed or failed (a cancelled task that changes is "
        "tasks.cancel.remains-cancelled)."
    ),
)

define(
    "tasks.timestamps.created-at",
    "MUST",
    versions=V,
    url=_url("ttl-and-resource-management"),
    quote=(
        "Receivers MUST include a `createdAt` ISO 8601-formatted timestamp in all task responses to indicate "
        "when the task was created."
    ),
    area="tasks",
    note=(
        "Every task in a CreateTaskResult and in the results of tasks/get, tasks/list and tasks/cancel: "
        "createdAt present and an ISO 8601 date and time (the page links RFC 3339 section 5; a missing "
        "offset or the basic format is accepted)."
    ),
)

define(
    "tasks.timestamps.last-updated-at",
    "MUST",
    versions=V,
    url=_url("ttl-and-resource-management"),
    quote=(
        "Receivers MUST include a `lastUpdatedAt` ISO 8601-formatted timestamp in all task responses to "
        "indicate when the task was last updated."
    ),
    area="tasks",
    note="As tasks.timestamps.created-at, for lastUpdatedAt.",
)

define(
    "tasks.get.ttl",
    "MUST",
    versions=V,
    url=_url("ttl-and-resource-management"),
    quote="Receivers MUST include the actual `ttl` duration (or `null` for unlimited) in `tasks/get` responses.",
    area="tasks",
    note="Every tasks/get result: `ttl` present, a non-negative integer or null.",
)

define(
    "tasks.result.blocks",
    "MUST",
    versions=V,
    url=_url("result-retrieval"),
    quote=(
        "When a receiver receives a `tasks/result` request for a task in any other non-terminal status "
        "(`working` or `input_required`), it MUST block the response until the task reaches a terminal status."
    ),
    area="tasks",
    note=(
        "Probe: tasks/result sent while the task is working (a tasks/get said so just before); when it is "
        "answered, a tasks/get must find the task terminal. An answer while the task is still working "
        "(a result or an error such as 'not finished') fails."
    ),
)

define(
    "tasks.result.terminal",
    "MUST",
    versions=V,
    url=_url("result-retrieval"),
    quote=(
        "When a receiver receives a `tasks/result` request for a task in a terminal status (`completed`, "
        "`failed`, or `cancelled`), it MUST return the final result of the underlying request, whether that "
        "is a successful result or a JSON-RPC error."
    ),
    area="tasks",
    note=(
        "Probe: tasks/result for a task that tasks/get reports terminal (completed, failed or, after "
        "tasks/cancel, cancelled) must be answered -- with a result or a JSON-RPC error, either is accepted "
        "(a cancelled call produced no result) -- and not with task data (a `task` object or a taskId/status "
        "pair in place of the result). What the answer must be is tasks.result.success's (a result) and "
        "tasks.result.error's (an error)."
    ),
)

define(
    "tasks.result.success",
    "MUST",
    versions=V,
    url=_url("task-execution-errors"),
    quote=(
        "If the request completed with a JSON-RPC response, `tasks/result` MUST return a successful JSON-RPC "
        "response containing that result."
    ),
    area="tasks",
    note=(
        "Probe: a tool whose plain call with the same arguments is answered with a result, called as a task "
        "and run to its end: tasks/result must be a successful response with that CallToolResult -- the "
        "same isError, and, when two plain calls gave the same content, that content (the result's _meta "
        "is not compared)."
    ),
)

define(
    "tasks.result.related-task",
    "MUST",
    versions=V,
    url=_url("related-task-metadata"),
    quote=(
        "The `tasks/result` operation MUST include this metadata in its response, as the result structure "
        "itself does not contain the task ID."
    ),
    area="tasks",
    note='Every tasks/result result: _meta["io.modelcontextprotocol/related-task"] is {"taskId": <that task>}.',
)

define(
    "tasks.related.messages",
    "MUST",
    versions=V,
    url=_url("associating-task-related-messages"),
    quote=(
        "All requests, notifications, and responses related to a task MUST include the "
        "`io.modelcontextprotocol/related-task` key in their `_meta` field, with the value set to an object "
        "with a `taskId` matching the associated task ID."
    ),
    area="tasks",
    note=(
        "Judged on the progress notifications for the progressToken of a task-augmented tools/call that "
        "arrive after its CreateTaskResult (the task's messages; tasks/get, tasks/list and tasks/cancel "
        "results are excepted by the page), and on the elicitation/create or sampling/createMessage a task "
        "sends the client in the probe of tasks.input-required.status ('The receiver MUST include the "
        "io.modelcontextprotocol/related-task metadata in the request to associate it with the task'). "
        "Skipped when the tasks send none."
    ),
)

define(
    "tasks.meta.param-wins",
    "MUST",
    versions=V,
    url=_url("associating-task-related-messages"),
    quote=(
        "For the `tasks/get`, `tasks/result`, and `tasks/cancel` operations, the `taskId` parameter in the "
        "request MUST be used as the source of truth for identifying the target task."
    ),
    area="tasks",
    note=(
        "Probe: tasks/get for one task with related-task metadata naming another (or one that does not "
        "exist): the answer is about the task named by the taskId parameter."
    ),
)

define(
    "tasks.meta.not-on-results",
    "SHOULD",
    versions=V,
    url=_url("associating-task-related-messages"),
    quote=(
        "Similarly, for the `tasks/get`, `tasks/list`, and `tasks/cancel` operations, receivers SHOULD NOT "
        "include `io.modelcontextprotocol/related-task` metadata in the result messages, as the `taskId` is "
        "already present in the response structure."
    ),
    area="tasks",
    note="Every tasks/get, tasks/list and tasks/cancel result: no related-task key in its _meta.",
)

define(
    "tasks.status-notification.no-related-task",
    "SHOULD",
    versions=V,
    url=_url("task-notifications"),
    quote=(
        "When sent, the `notifications/tasks/status` notification SHOULD NOT include the "
        "`io.modelcontextprotocol/related-task` metadata, as the task ID is already present in the "
        "notification parameters."
    ),
    area="tasks",
    note="Every notifications/tasks/status during the task probes; skipped when the server sends none.",
)

define(
    "tasks.list.retrievable",
    "MUST",
    versions=V,
    url=_url("task-listing"),
    quote=(
        "If a task is retrievable via `tasks/get` for a requestor, it MUST be retrievable via `tasks/list` for "
        "that requestor."
    ),
    area="tasks",
    note=(
        "Probe, when the server declares tasks.list: tasks created on the connection, each answered by "
        "tasks/get, must appear in tasks/list (every page, following nextCursor)."
    ),
)

define(
    "tasks.errors.invalid-params",
    "MUST",
    versions=V,
    url=_url("protocol-errors"),
    quote="Receivers MUST return standard JSON-RPC errors for the following protocol error cases:",
    area="tasks",
    note=(
        "The cases: an invalid or nonexistent taskId in tasks/get, tasks/result or tasks/cancel, and an "
        "invalid or nonexistent cursor in tasks/list: -32602 (Invalid params). Probes: each with a taskId "
        "that no task has (tasks/cancel when tasks.cancel is declared), and tasks/list with a cursor the "
        "server never issued (when tasks.list is declared). Cancelling a terminal task, the third case, is "
        "tasks.cancel.terminal-rejected."
    ),
)

define(
    "tasks.cancel.terminal-rejected",
    "MUST",
    versions=V,
    url=_url("task-cancellation"),
    quote=(
        "Receivers MUST reject cancellation requests for tasks already in a terminal status (`completed`, "
        "`failed`, or `cancelled`) with error code `-32602` (Invalid params)."
    ),
    area="tasks",
    note="Probe, when the server declares tasks.cancel: tasks/cancel for a task tasks/get reports completed (or failed).",
)

define(
    "tasks.cancel.cancelled",
    "MUST",
    versions=V,
    url=_url("task-cancellation"),
    quote=(
        "Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution and "
        "MUST transition the task to `cancelled` status before sending the response."
    ),
    area="tasks",
    note=(
        "Probe, when the server declares tasks.cancel: tasks/cancel for a task tasks/get reports working "
        "(preferably of a tool asked to take a while). "
        "The CancelTaskResult must say cancelled, and so must a tasks/get sent after it. A rejection is "
        "accepted when the task had meanwhile ended on its own (tasks/get finds it completed or failed)."
    ),
)

define(
    "tasks.cancel.remains-cancelled",
    "MUST",
    versions=V,
    url=_url("task-cancellation"),
    quote="Once a task is cancelled, it MUST remain in `cancelled` status even if execution continues to completion or fails.",
    area="tasks",
    note=(
        "Probe: the cancelled task looked up again with tasks/get once the time it would have taken has "
        "passed (a tool asked to take a while; for a tool whose duration we cannot set, the answer timeout, "
        "at most 5 s, after its creation): still cancelled. 'Task not found' (-32602) is accepted: receivers "
        "MAY delete cancelled tasks at any time."
    ),
)

define(
    "tasks.failed.status-message",
    "SHOULD",
    versions=V,
    url=_url("task-execution-errors"),
    quote="The `tasks/get` response SHOULD include a `statusMessage` field with diagnostic information about the failure.",
    area="tasks",
    note=(
        "Probe: a task-capable tool whose plain call ends in an error (isError: true) called as a task; "
        "once tasks/get reports it failed, that response should carry a non-empty statusMessage. Skipped "
        "when no offered tool fails."
    ),
)

define(
    "tasks.get.no-sse",
    "SHOULD",
    versions=V,
    transports=("streamable-http",),
    url=_url("input-required-status"),
    quote=(
        "Where possible, servers SHOULD NOT upgrade to an SSE stream in response to a `tasks/get` request, as "
        "the client has indicated it wishes to poll for a result."
    ),
    area="tasks",
    note="Every tasks/get of the run over streamable HTTP: answered as application/json, not on an SSE stream.",
)

define(
    "tasks.result.error",
    "MUST",
    versions=V,
    url=_url("task-execution-errors"),
    quote="If the underlying request resulted in a JSON-RPC error, `tasks/result` MUST return that same JSON-RPC error.",
    area="tasks",
    note=(
        "Probe: a task-capable tool whose plain call with the same arguments is answered with a JSON-RPC "
        "error, called as a task and run to its end: tasks/result must be an error with the same code (the "
        "message is not compared). Skipped when no offered tool ends in a JSON-RPC error. " + _TOOLS
    ),
)

define(
    "tasks.requestor.declared-only",
    "SHOULD",
    versions=V,
    url=_url("capability-negotiation"),
    quote=(
        "Requestors SHOULD only augment requests with a task if the corresponding capability has been "
        "declared by the receiver."
    ),
    area="tasks",
    note=(
        "The server as requestor. Judged on every request the server sent the suite's client during the "
        "run: one with params.task must be of a type the client declared under tasks.requests in its "
        "initialize (sampling/createMessage: tasks.requests.sampling.createMessage; elicitation/create: "
        "tasks.requests.elicitation.create; the list is exhaustive). The suite's client declares no `tasks` "
        "capability, so any task-augmented request is flagged ('If capabilities.tasks is not defined, the peer "
        "SHOULD NOT attempt to create tasks during requests'). Skipped when the server sent no request."
    ),
)

define(
    "tasks.id.receiver-generated",
    "MUST",
    versions=V,
    url=_url("task-id-requirements"),
    quote="Task IDs MUST be generated by the receiver when creating a task.",
    area="tasks",
    note=(
        "The requestor has no say in the ID: TaskMetadata carries only a ttl. Probe: a task-augmented call "
        "whose params.task also names a taskId of ours (a field the receiver may ignore; an error refusing "
        "it is accepted and not judged); the CreateTaskResult's taskId must not be the one we named. " + _TOOLS
    ),
)

_INPUT = (
    "Probe (a connection whose client declares elicitation and sampling): a task-capable tool that asks the "
    "client for input (its name or description speaks of elicitation, input, asking or confirming; never one "
    "marked destructive) called as a task; tasks/get polled, and tasks/result sent once the task says "
    "input_required, until the server's elicitation/create or sampling/createMessage arrives. Judged where "
    "that request reaches the suite (stdio, HTTP+SSE, and streamable HTTP on a stream of a request we sent; the "
    "suite does not open the GET stream); skipped when no such tool asks. "
)

define(
    "tasks.input-required.status",
    "SHOULD",
    versions=V,
    url=_url("input-required-status"),
    quote=(
        "When the task receiver has messages for the requestor that are necessary to complete the task, the "
        "receiver SHOULD move the task to the `input_required` status."
    ),
    area="tasks",
    note=_INPUT + "A tasks/get sent after the server's request arrived, before it is answered, must say "
    "input_required.",
)

define(
    "tasks.input-required.resumes",
    "SHOULD",
    versions=V,
    url=_url("input-required-status"),
    quote=(
        "When the receiver receives all required input, the task SHOULD transition out of `input_required` "
        "status (typically back to `working`)."
    ),
    area="tasks",
    note=_INPUT + "Once the request is answered (an accepted elicitation whose content satisfies the requested "
    "schema, or a text sampling result), tasks/get is polled for up to the answer timeout: the task must leave "
    "input_required (working, or a terminal status). Not judged when the server asks again meanwhile.",
)

define(
    "tasks.auth-context-bound",
    "MUST",
    versions=V,
    transports=("streamable-http",),
    url=_url("task-isolation-and-access-control"),
    quote="When an authorization context is provided, receivers MUST bind tasks to said context.",
    area="tasks",
    note=(
        "Only for a server the run says requires authorization and whose tokens the suite can mint (--auth). "
        "A task is created with the run's token (subject A); then, with a token valid in every way but for "
        "another subject (B): tasks/get, tasks/list, tasks/cancel and tasks/result, first on the session "
        "that created the task (the Authorization header changed), then on a session opened with B's token. "
        "Each must be refused (an HTTP error status or a JSON-RPC error) or, for tasks/list, leave the task "
        "out. Streamable HTTP only (on the legacy SSE transport a refusal of a POST has no body to read). The page's two sentences that say how (reject tasks/get, tasks/result and tasks/cancel; "
        "tasks/list only the requestor's tasks) are this check. " + _TOOLS
    ),
)
