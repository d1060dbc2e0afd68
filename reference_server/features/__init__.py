"""The reference server's features: lifecycle, tools, resources, prompts, logging, completion,
subscriptions, tasks (2025-11-25) and the tasks extension (2026-07-28).

Each module contributes request handlers (``server.handlers[method]``) and the capabilities it
declares; :class:`Features` holds the registries and wires the modules into a
:class:`~reference_server.core.Server`, and :func:`build_server` composes the two.  The core never
imports the features: they sit above it and type against :mod:`reference_server.messages`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reference_server.core import Server
from reference_server.features import (
    lifecycle,
    official_fixtures,
    prompts,
    resources,
    subscriptions,
    tasks,
    tasks_ext,
    tool_fixtures,
    tools,
    utilities,
)

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import ServerConfig

__all__ = ["Features", "build_server"]


class Features:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.tools = tools.ToolRegistry(server)
        self.resources = resources.ResourceRegistry()
        self.prompts = prompts.PromptRegistry()
        self.subscriptions = subscriptions.Subscriptions(server)
        self._modules = [lifecycle, utilities, prompts, resources, tools, subscriptions, tasks, tasks_ext]

    def install(self, server: Server) -> None:
        for mod in self._modules:
            mod.install(server, self)
            if mod is tools:  # the fixture tools of the suite and of the official runner
                tool_fixtures.register(self.tools)
                official_fixtures.register(self.tools)
                if server.config.upstream:  # --upstream: a tool that calls it with the server's own credentials
                    from reference_server import upstream

                    upstream.register(self.tools, upstream.Upstream(server.config.upstream))

    def capabilities(self, version: str) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        for mod in self._modules:
            fn = getattr(mod, "capabilities", None)
            if fn is not None:
                caps.update(fn(self, version))
        return dict(sorted(caps.items()))


def build_server(config: "ServerConfig | None" = None) -> Server:
    """The reference server: the protocol core with every feature installed."""
    return Server(config, features=Features)
