"""basic/utilities/tasks (2025-11-25 only; 2026-07-28 moved tasks to an extension), as duties of
the client: the client as the receiver of task-augmented ``sampling/createMessage`` and
``elicitation/create`` (and of ``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``
sent by the server), and the client as the requestor of task-augmented ``tools/call``.

The receiver's rules are the server's (``tasks.py``) with the roles swapped, quoted from the same
sentences.  Left out: what no message shows (ID entropy, rate limits, documentation, resource
limits, binding to an authorization context), ``Tasks MUST begin in the working status`` (a
client's sampling or elicitation task may end before its CreateTaskResult is written, and no
duration of it can be set from outside), and the input_required flow of a client receiver (the
client would have to need input from the server).
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

VERSION = "2025-11-25"
PAGE = "basic/utilities/tasks"
V = (VERSION,)


def _url(anchor: str) -> str:
    return spec_url(VERSION, PAGE, anchor)


_RECEIVER = (
    "The suite's server sends task-augmented sampling/createMessage (and elicitation/create) requests "
    "(params.task with a ttl) to a client that declares tasks.requests.sampling.createMessage "
    "(tasks.requests.elicitation.create); skipped with the reason when the client declares neither (an "
    "optional feature)."
)
_OBSERVED = "Judged on every task message of the client's answers in the receiver scenario."
_REQUESTOR = (
    "The suite's server declares tasks.requests.tools.call and lists tools marked execution.taskSupport "
    "\"required\", \"optional\" and \"forbidden\" (and one without execution); skipped with the reason when "
    "the client calls none of them."
)


def _client(id: str, level: str, anchor: str, quote: str, note: str) -> None:
    define(id, level, versions=V, url=_url(anchor), quote=quote, role="client", area="tasks", note=note)


# -- the client as receiver -----------------------------------------------------------------------

_client(
    "client.tasks.capability.declared", "MUST", "capabilities",
    "Servers and clients that support task-augmented requests MUST declare a `tasks` capability during initialization.",
    "Support shows only in the answers: a client that declares no `tasks` capability and answers a "
    "task-augmented sampling/createMessage or elicitation/create with a CreateTaskResult (a result with a "
    "`task` object) fails. A client that declares `tasks` but not that request type and still creates a task "
    "is client.tasks.undeclared.processed-normally's. Skipped when the client declares no tasks and creates "
    "none.",
)

_client(
    "client.tasks.undeclared.processed-normally", "MUST", "task-support-and-handling",
    "Receivers that do not declare the task capability for a request type MUST process requests of that type "
    "normally, ignoring any task-augmentation metadata if present.",
    "Probe, for a client that declares sampling (elicitation) but not tasks.requests.sampling.createMessage "
    "(tasks.requests.elicitation.create): the request sent plainly and with params.task. A CreateTaskResult "
    "fails (for a client that declares some `tasks` capability), and so does an error where the plain request "
    "got a result.",
)

_client(
    "client.tasks.create.result", "MUST", "result-retrieval",
    "Receivers that accept a task-augmented request MUST return a `CreateTaskResult` as the response.",
    "A result to a task-augmented request of a declared type must carry a `task` object with a taskId; an "
    "error is not an accepted request and is not judged. " + _RECEIVER,
)

_client(
    "client.tasks.id.string", "MUST", "task-id-requirements", "Task IDs MUST be a string value.",
    "The taskId of every CreateTaskResult the client returns. " + _OBSERVED,
)

_client(
    "client.tasks.id.unique", "MUST", "task-id-requirements",
    "Task IDs MUST be unique among all tasks controlled by the receiver.",
    "Probe: two task-augmented requests of the same kind, one after the other; their taskIds differ. " + _RECEIVER,
)

_client(
    "client.tasks.status.valid-paths", "MUST", "task-status-lifecycle",
    "Receivers MUST only transition tasks through the following valid paths: 1. From `working`: may move to "
    "`input_required`, `completed`, `failed`, or `cancelled` 1. From `input_required`: may move to `working`, "
    "`completed`, `failed`, or `cancelled` 1. Tasks with a `completed`, `failed`, or `cancelled` status are in "
    "a terminal state and MUST NOT transition to any other status",
    "Every status the client reports for a task, in order (CreateTaskResult, tasks/get, tasks/list, "
    "tasks/cancel, notifications/tasks/status): none may leave completed or failed (a cancelled task that "
    "changes is client.tasks.cancel.remains-cancelled). " + _OBSERVED,
)

_client(
    "client.tasks.timestamps.created-at", "MUST", "ttl-and-resource-management",
    "Receivers MUST include a `createdAt` ISO 8601-formatted timestamp in all task responses to indicate when "
    "the task was created.",
    "Every task in a CreateTaskResult and in the results of tasks/get, tasks/list and tasks/cancel: createdAt "
    "present and an ISO 8601 date and time (a missing offset or the basic format is accepted). " + _OBSERVED,
)

_client(
    "client.tasks.timestamps.last-updated-at", "MUST", "ttl-and-resource-management",
    "Receivers MUST include a `lastUpdatedAt` ISO 8601-formatted timestamp in all task responses to indicate "
    "when the task was last updated.",
    "As client.tasks.timestamps.created-at, for lastUpdatedAt.",
)

_client(
    "client.tasks.get.ttl", "MUST", "ttl-and-resource-management",
    "Receivers MUST include the actual `ttl` duration (or `null` for unlimited) in `tasks/get` responses.",
    "Every tasks/get result of the client: `ttl` present, a non-negative integer or null. " + _OBSERVED,
)

_client(
    "client.tasks.result.blocks", "MUST", "result-retrieval",
    "When a receiver receives a `tasks/result` request for a task in any other non-terminal status (`working` "
    "or `input_required`), it MUST block the response until the task reaches a terminal status.",
    "Probe: tasks/result sent while tasks/get says the task is working; when it is answered, a tasks/get must "
    "find the task terminal. Skipped when the client's tasks are already terminal at the first tasks/get (its "
    "work took no time). " + _RECEIVER,
)

_client(
    "client.tasks.result.success", "MUST", "task-execution-errors",
    "If the request completed with a JSON-RPC response, `tasks/result` MUST return a successful JSON-RPC "
    "response containing that result.",
    "Probe: the task of a task-augmented request run to completed; tasks/result must be a successful response "
    "with the underlying result, not task data: a CreateMessageResult (role, content, model) for sampling, an "
    "ElicitResult (action) for elicitation, and, when the same request sent plainly twice got the same result, "
    "that result (its _meta is not compared). " + _RECEIVER,
)

_client(
    "client.tasks.result.related-task", "MUST", "related-task-metadata",
    "The `tasks/result` operation MUST include this metadata in its response, as the result structure itself "
    "does not contain the task ID.",
    'Every tasks/result result of the client: _meta["io.modelcontextprotocol/related-task"] is {"taskId": '
    "<that task>}. " + _OBSERVED,
)

_client(
    "client.tasks.meta.param-wins", "MUST", "associating-task-related-messages",
    "For the `tasks/get`, `tasks/result`, and `tasks/cancel` operations, the `taskId` parameter in the request "
    "MUST be used as the source of truth for identifying the target task.",
    "Probe: tasks/get for one task with related-task metadata naming another (or one that does not exist): "
    "the answer is about the task named by the taskId parameter. " + _RECEIVER,
)

_client(
    "client.tasks.meta.not-on-results", "SHOULD", "associating-task-related-messages",
    "Similarly, for the `tasks/get`, `tasks/list`, and `tasks/cancel` operations, receivers SHOULD NOT include "
    "`io.modelcontextprotocol/related-task` metadata in the result messages, as the `taskId` is already "
    "present in the response structure.",
    "Every tasks/get, tasks/list and tasks/cancel result of the client: no related-task key in its _meta. "
    + _OBSERVED,
)

_client(
    "client.tasks.list.retrievable", "MUST", "task-listing",
    "If a task is retrievable via `tasks/get` for a requestor, it MUST be retrievable via `tasks/list` for that "
    "requestor.",
    "Probe, when the client declares tasks.list: the tasks the server created, each answered by tasks/get, "
    "must appear in tasks/list (every page, following nextCursor).",
)

_client(
    "client.tasks.errors.invalid-params", "MUST", "protocol-errors",
    "Receivers MUST return standard JSON-RPC errors for the following protocol error cases:",
    "The cases: an invalid or nonexistent taskId in tasks/get, tasks/result or tasks/cancel, and an invalid or "
    "nonexistent cursor in tasks/list: -32602 (Invalid params). Probes: each with a taskId no task has "
    "(tasks/cancel when tasks.cancel is declared), and tasks/list with a cursor the client never issued (when "
    "tasks.list is declared). Cancelling a terminal task is client.tasks.cancel.terminal-rejected.",
)

_client(
    "client.tasks.cancel.terminal-rejected", "MUST", "task-cancellation",
    "Receivers MUST reject cancellation requests for tasks already in a terminal status (`completed`, "
    "`failed`, or `cancelled`) with error code `-32602` (Invalid params).",
    "Probe, when the client declares tasks.cancel: tasks/cancel for a task tasks/get reports completed (or "
    "failed).",
)

_client(
    "client.tasks.cancel.cancelled", "MUST", "task-cancellation",
    "Upon receiving a valid cancellation request, receivers SHOULD attempt to stop the task execution and MUST "
    "transition the task to `cancelled` status before sending the response.",
    "Probe, when the client declares tasks.cancel: tasks/cancel for a task tasks/get reports working. The "
    "CancelTaskResult must say cancelled, and so must a tasks/get sent after it. A rejection is accepted when "
    "the task had meanwhile ended on its own; skipped when every task is terminal at once.",
)

_client(
    "client.tasks.cancel.remains-cancelled", "MUST", "task-cancellation",
    "Once a task is cancelled, it MUST remain in `cancelled` status even if execution continues to completion "
    "or fails.",
    "Probe: the cancelled task looked up again with tasks/get a while later (up to the answer timeout, at most "
    "1 s): still cancelled. 'Task not found' (-32602) is accepted: receivers MAY delete cancelled tasks.",
)

# -- the client as requestor ----------------------------------------------------------------------

_client(
    "client.tasks.tool.no-capability", "MUST", "tool-level-negotiation",
    "If a server's capabilities do not include `tasks.requests.tools.call`, then clients MUST NOT attempt to use "
    "task augmentation on that server's tools, regardless of the `execution.taskSupport` value.",
    "Judged in the receiver scenario, whose server declares no `tasks` capability and lists, besides its plain "
    "tools, tools marked execution.taskSupport \"optional\" and \"required\": no tools/call may carry "
    "params.task. Skipped when the client calls no tool.",
)

_client(
    "client.tasks.tool.forbidden", "MUST", "tool-level-negotiation",
    "If `execution.taskSupport` is not present or `\"forbidden\"`, clients MUST NOT attempt to invoke the tool as "
    "a task.",
    "A tools/call with params.task of a tool marked \"forbidden\" or without execution.taskSupport fails. "
    + _REQUESTOR,
)

_client(
    "client.tasks.tool.required", "MUST", "tool-level-negotiation",
    "If `execution.taskSupport` is `\"required\"`, clients MUST invoke the tool as a task.",
    "A tools/call without params.task of the tool marked \"required\" fails. " + _REQUESTOR,
)

_client(
    "client.tasks.poll.interval", "SHOULD", "getting-tasks",
    "Requestors SHOULD respect the `pollInterval` provided in responses when determining polling frequency.",
    "The server's tasks say pollInterval 200 ms; two tasks/get of one task less than half that apart (on the "
    "client's side of the wire, as the suite read them) get a warning. " + _REQUESTOR,
)

_client(
    "client.tasks.poll.until-terminal", "SHOULD", "getting-tasks",
    "Requestors SHOULD continue polling until the task reaches a terminal status (`completed`, `failed`, or "
    "`cancelled`), or until encountering the `input_required` status.",
    "The server keeps a task working for several polls: a client that stops asking (no tasks/get, no "
    "tasks/result waiting) before it has seen the task terminal or input_required gets a warning. "
    + _REQUESTOR,
)

_client(
    "client.tasks.input-required.result", "SHOULD", "input-required-status",
    "When the requestor encounters the `input_required` status, it SHOULD preemptively call `tasks/result`.",
    "The server's task of the \"required\" tool reports input_required once the client has polled it; it stays "
    "so until the client calls tasks/result (then it completes) or 3 s pass. A client that saw input_required "
    "in a tasks/get and did not call tasks/result while the task was in that status gets a warning. "
    + _REQUESTOR,
)

_client(
    "client.tasks.meta.not-on-requests", "SHOULD", "associating-task-related-messages",
    "Requestors SHOULD NOT include `io.modelcontextprotocol/related-task` metadata in these requests, and receivers "
    "MUST ignore such metadata if present in favor of the RPC method parameter.",
    "These requests: tasks/get, tasks/result and tasks/cancel. Every one of them the client sends the server: no "
    "related-task key in its params._meta (a warning). " + _REQUESTOR,
)

_client(
    "client.tasks.notifications.not-relied", "MUST", "task-notifications",
    "Requestors MUST NOT rely on receiving the `notifications/tasks/status` notification, as it is optional.",
    "The server sends no notifications/tasks/status. A client that created a task and then neither polled it "
    "(tasks/get) nor asked for its result (tasks/result) before it ended the session was waiting for a "
    "notification that never came, and fails. " + _REQUESTOR,
)
