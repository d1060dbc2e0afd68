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
    "PROTOCOL_VERSION",
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "RELATED_TASK",
    "MODEL_IMMEDIATE_RESPONSE",
]

PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION = PREFIX + "protocolVersion"
CLIENT_CAPABILITIES = PREFIX + "clientCapabilities"
CLIENT_INFO = PREFIX + "clientInfo"
LOG_LEVEL = PREFIX + "logLevel"
SERVER_INFO = PREFIX + "serverInfo"
SUBSCRIPTION_ID = PREFIX + "subscriptionId"
RELATED_TASK = PREFIX + "related-task"
MODEL_IMMEDIATE_RESPONSE = PREFIX + "model-immediate-response"
