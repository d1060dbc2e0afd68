"""The method table: every MCP method, who sends it, and when it exists.  Pure data.

Read off the ``ClientRequest``/``ServerRequest``/``ClientNotification``/``ServerNotification``
unions of each version's official schema (``tests/test_spec_tables.py`` re-derives the table from
the schemas and compares), with capability gates from the feature pages.

``capability`` names the capability that gates the method, as a dotted path into the *receiver's*
declared capabilities for requests (``tools``, ``resources.subscribe``, ``logging``,
``completions``), or into the *sender's* for notifications that announce a feature
(``tools.listChanged``).  ``None`` means every implementation must handle it.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.spec.versions import VERSIONS

__all__ = ["Method", "METHODS", "methods_for", "lookup", "C2S", "S2C", "REQUEST", "NOTIFICATION"]

C2S = "client-to-server"
S2C = "server-to-client"
REQUEST = "request"
NOTIFICATION = "notification"


@dataclass(frozen=True)
class Method:
    name: str
    direction: str  # C2S | S2C
    kind: str  # REQUEST | NOTIFICATION
    request_def: str  # schema definition of the whole message (e.g. "CallToolRequest")
    params_def: str | None  # schema definition of params (None where params are inline/optional)
    result_def: str | None  # schema definition of the result (requests only)
    capability: str | None = None
    since: str = VERSIONS[0]
    until: str | None = None  # last version that has it (inclusive)

    @property
    def versions(self) -> tuple[str, ...]:
        lo = VERSIONS.index(self.since)
        hi = VERSIONS.index(self.until) if self.until else len(VERSIONS) - 1
        return VERSIONS[lo : hi + 1]

    def exists_in(self, version: str) -> bool:
        return version in self.versions


_FIRST, _V2503, _V2506, _V2511, _V2607 = VERSIONS

METHODS: tuple[Method, ...] = (
    # lifecycle
    Method("initialize", C2S, REQUEST, "InitializeRequest", "InitializeRequestParams", "InitializeResult", until=_V2511),
    Method("notifications/initialized", C2S, NOTIFICATION, "InitializedNotification", None, None, until=_V2511),
    Method("server/discover", C2S, REQUEST, "DiscoverRequest", "RequestParams", "DiscoverResult", since=_V2607),
    # utilities
    Method("ping", C2S, REQUEST, "PingRequest", None, "EmptyResult", until=_V2511),
    Method("ping", S2C, REQUEST, "PingRequest", None, "EmptyResult", until=_V2511),
    Method("notifications/cancelled", C2S, NOTIFICATION, "CancelledNotification", "CancelledNotificationParams", None),
    Method("notifications/cancelled", S2C, NOTIFICATION, "CancelledNotification", "CancelledNotificationParams", None),
    Method("notifications/progress", C2S, NOTIFICATION, "ProgressNotification", "ProgressNotificationParams", None, until=_V2511),
    Method("notifications/progress", S2C, NOTIFICATION, "ProgressNotification", "ProgressNotificationParams", None),
    Method("logging/setLevel", C2S, REQUEST, "SetLevelRequest", "SetLevelRequestParams", "EmptyResult", capability="logging", until=_V2511),
    Method("notifications/message", S2C, NOTIFICATION, "LoggingMessageNotification", "LoggingMessageNotificationParams", None, capability="logging"),
    Method("completion/complete", C2S, REQUEST, "CompleteRequest", "CompleteRequestParams", "CompleteResult", capability="completions"),
    # tools
    Method("tools/list", C2S, REQUEST, "ListToolsRequest", "PaginatedRequestParams", "ListToolsResult", capability="tools"),
    Method("tools/call", C2S, REQUEST, "CallToolRequest", "CallToolRequestParams", "CallToolResult", capability="tools"),
    Method("notifications/tools/list_changed", S2C, NOTIFICATION, "ToolListChangedNotification", None, None, capability="tools.listChanged"),
    # resources
    Method("resources/list", C2S, REQUEST, "ListResourcesRequest", "PaginatedRequestParams", "ListResourcesResult", capability="resources"),
    Method("resources/templates/list", C2S, REQUEST, "ListResourceTemplatesRequest", "PaginatedRequestParams", "ListResourceTemplatesResult", capability="resources"),
    Method("resources/read", C2S, REQUEST, "ReadResourceRequest", "ReadResourceRequestParams", "ReadResourceResult", capability="resources"),
    Method("resources/subscribe", C2S, REQUEST, "SubscribeRequest", "SubscribeRequestParams", "EmptyResult", capability="resources.subscribe", until=_V2511),
    Method("resources/unsubscribe", C2S, REQUEST, "UnsubscribeRequest", "UnsubscribeRequestParams", "EmptyResult", capability="resources.subscribe", until=_V2511),
    Method("notifications/resources/list_changed", S2C, NOTIFICATION, "ResourceListChangedNotification", None, None, capability="resources.listChanged"),
    Method("notifications/resources/updated", S2C, NOTIFICATION, "ResourceUpdatedNotification", "ResourceUpdatedNotificationParams", None, capability="resources.subscribe"),
    # prompts
    Method("prompts/list", C2S, REQUEST, "ListPromptsRequest", "PaginatedRequestParams", "ListPromptsResult", capability="prompts"),
    Method("prompts/get", C2S, REQUEST, "GetPromptRequest", "GetPromptRequestParams", "GetPromptResult", capability="prompts"),
    Method("notifications/prompts/list_changed", S2C, NOTIFICATION, "PromptListChangedNotification", None, None, capability="prompts.listChanged"),
    # subscriptions (2026-07-28)
    Method("subscriptions/listen", C2S, REQUEST, "SubscriptionsListenRequest", "SubscriptionsListenRequestParams", "SubscriptionsListenResult", since=_V2607),
    Method("notifications/subscriptions/acknowledged", S2C, NOTIFICATION, "SubscriptionsAcknowledgedNotification", "SubscriptionsAcknowledgedNotificationParams", None, since=_V2607),
    # client features (server-initiated requests; replaced by InputRequiredResult in 2026-07-28)
    Method("roots/list", S2C, REQUEST, "ListRootsRequest", None, "ListRootsResult", capability="roots", until=_V2511),
    Method("notifications/roots/list_changed", C2S, NOTIFICATION, "RootsListChangedNotification", None, None, capability="roots.listChanged", until=_V2511),
    Method("sampling/createMessage", S2C, REQUEST, "CreateMessageRequest", "CreateMessageRequestParams", "CreateMessageResult", capability="sampling", until=_V2511),
    Method("elicitation/create", S2C, REQUEST, "ElicitRequest", "ElicitRequestParams", "ElicitResult", capability="elicitation", since=_V2506, until=_V2511),
    Method("notifications/elicitation/complete", S2C, NOTIFICATION, "ElicitationCompleteNotification", None, None, capability="elicitation.url", since=_V2511, until=_V2511),
    # tasks (2025-11-25, both directions)
    *(
        Method(name, d, REQUEST, req, params, result, capability=cap, since=_V2511, until=_V2511)
        for d in (C2S, S2C)
        for name, req, params, result, cap in (
            ("tasks/get", "GetTaskRequest", None, "GetTaskResult", "tasks"),
            ("tasks/result", "GetTaskPayloadRequest", None, "GetTaskPayloadResult", "tasks"),
            ("tasks/list", "ListTasksRequest", "PaginatedRequestParams", "ListTasksResult", "tasks.list"),
            ("tasks/cancel", "CancelTaskRequest", None, "CancelTaskResult", "tasks.cancel"),
        )
    ),
    *(
        Method("notifications/tasks/status", d, NOTIFICATION, "TaskStatusNotification", "TaskStatusNotificationParams", None, capability="tasks", since=_V2511, until=_V2511)
        for d in (C2S, S2C)
    ),
)

_INDEX: dict[tuple[str, str], Method] = {(m.name, m.direction): m for m in METHODS}


def lookup(name: str, direction: str, version: str | None = None) -> Method | None:
    """The method ``name`` sent in ``direction``; ``None`` if unknown (or absent in ``version``)."""
    m = _INDEX.get((name, direction))
    if m is None or (version is not None and not m.exists_in(version)):
        return None
    return m


def methods_for(version: str, *, direction: str | None = None, kind: str | None = None) -> list[Method]:
    return [
        m
        for m in METHODS
        if m.exists_in(version) and (direction is None or m.direction == direction) and (kind is None or m.kind == kind)
    ]
