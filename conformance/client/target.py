"""How to start the client under test: :class:`ClientTarget`, and the placeholders of its command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from conformance.spec.versions import Transport

__all__ = ["ClientTarget", "PLACEHOLDERS", "CALL_TOOL", "CALL_ARGS", "DEFAULT_STALL_TIMEOUT"]

PLACEHOLDERS = ("{server}", "{url}", "{config}")
CALL_TOOL = "add_numbers"  # the one tool a --call-command is asked to call (the official fixture's name)
CALL_ARGS = {"a": 2, "b": 3}
# longer than the SDKs' default request timeouts (the TypeScript SDK's is 60 s), so that a client
# that has one is seen giving up
DEFAULT_STALL_TIMEOUT = 75.0


@dataclass(frozen=True)
class ClientTarget:
    """How to start the client under test."""

    command: str  # run with sh -c, placeholders substituted
    transport: Transport = Transport.STDIO
    call_command: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    startup_timeout: float = 10.0  # how long a started client may take to connect
    run_timeout: float = 30.0  # how long one client run may take before it is stopped
    #: how long a request the suite never answers waits for the client to give up (the runs of
    #: the timeout scenarios last up to this long instead of ``run_timeout``)
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    default: bool = False
    role: str = "client"
    url: str | None = None  # (for the report's target block)
    #: run the authorization scenarios (``--auth``): the client does OAuth against a protected server
    auth: bool = False

    @property
    def is_http(self) -> bool:
        return self.transport is not Transport.STDIO

    def resolve(self) -> "ClientTarget":
        return self

    def describe(self) -> str:
        return f"the client `{self.command}` ({self.transport.value})"

    def to_json(self) -> dict[str, Any]:
        return {"role": "client", "transport": self.transport.value, "command": [self.command],
                "call_command": self.call_command, "url": None, "cwd": self.cwd,
                "env": dict(self.env) if self.env else {}, "default": self.default, "description": self.describe()}
