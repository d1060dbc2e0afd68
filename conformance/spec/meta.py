"""The reserved ``_meta`` keys of the protocol (basic/index#meta): one spelling for the suite, the
reference peers and the fuzzer.

2026-07-28 carries per-request state in ``_meta`` (basic/versioning, basic/lifecycle): the
protocol version, the client's capabilities and information, the log level; results carry the
server's information; ``subscriptions/listen`` streams are told apart by a subscription id.
2025-11-25 tasks mark what belongs to a task with ``related-task``.
"""

from __future__ import annotations

__all__ = [
    "PREFIX",
    "PROTOCOL_VERSION_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "RELATED_TASK_KEY",
    "MODEL_IMMEDIATE_RESPONSE_KEY",
    "TASKS_EXTENSION",
]

PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_KEY = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES_KEY = PREFIX + "clientCapabilities"
CLIENT_INFO_KEY = PREFIX + "clientInfo"
LOG_LEVEL_KEY = PREFIX + "logLevel"
SERVER_INFO_KEY = PREFIX + "serverInfo"
SUBSCRIPTION_ID_KEY = PREFIX + "subscriptionId"
RELATED_TASK_KEY = PREFIX + "related-task"
MODEL_IMMEDIATE_RESPONSE_KEY = PREFIX + "model-immediate-response"

# The 2026-07-28 tasks extension (SEP-2663, experimental-ext-tasks): its identifier in
# capabilities.extensions (server/discover) and in the per-request client capabilities.
TASKS_EXTENSION = PREFIX + "tasks"
