"""How to start the client under test: :class:`ClientTarget`, and the placeholders of its command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from conformance.spec.versions import Transport

__all__ = ["ClientTarget", "ClientTargetError", "PLACEHOLDERS", "CALL_TOOL", "CALL_ARGS", "DEFAULT_STALL_TIMEOUT",
           "client_target"]

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


class ClientTargetError(ValueError):
    """The client options do not name a client the suite can start (the message says how to fix it)."""


def client_target(*, command: str, transport: str | None, timeout: float, call_command: str | None = None,
                  run_budget: float | None = None, stall_budget: float | None = None,
                  auth: bool = False) -> ClientTarget:
    """The client options validated, as the ``client`` subcommand, the pytest options and the
    client fuzzer take them; a mistake is a :class:`ClientTargetError`."""
    try:
        kind = Transport(transport) if transport else Transport.STDIO
    except ValueError:
        raise ClientTargetError(
            f"unknown transport {transport!r}; use one of {', '.join(t.value for t in Transport)}"
        ) from None
    if "{port}" in command:
        raise ClientTargetError("the client command takes {server} (stdio), {url} (HTTP) or {config}, not {port}: "
                                "the suite serves the client on a port of its own")
    if kind is Transport.STDIO and "{url}" in command:
        raise ClientTargetError("{url} is for the HTTP transports; on stdio use {server} (the launcher of the "
                                "suite's server), or add --mcp-transport streamable-http / sse")
    if kind is not Transport.STDIO and "{server}" in command:
        raise ClientTargetError(f"{{server}} (a stdio launcher) is for the stdio transport; over {kind.value} use {{url}}")
    # a client CLI may take seconds to start (fastmcp ~4 s idle, over 10 s on a loaded machine):
    # the start-up allowance is not the per-answer timeout
    return ClientTarget(command=command, transport=kind, call_command=call_command,
                        startup_timeout=max(15.0, timeout), run_timeout=run_budget or max(30.0, 3 * timeout),
                        stall_timeout=stall_budget or DEFAULT_STALL_TIMEOUT, auth=auth)
