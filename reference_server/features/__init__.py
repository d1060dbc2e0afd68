"""The reference server's features: lifecycle, tools, resources, prompts, logging, completion,
subscriptions.

Each module contributes request handlers (``server.handlers[method]``) and the capabilities it
declares; :class:`Features` holds the registries and wires the modules into a :class:`Server`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server

__all__ = ["Features"]


class Features:
    def __init__(self, server: "Server") -> None:
        from reference_server.features import lifecycle, prompts, resources, subscriptions, tasks, tools, utilities

        self.server = server
        self.tools = tools.ToolRegistry(server)
        self.resources = resources.ResourceRegistry()
        self.prompts = prompts.PromptRegistry()
        self.subscriptions = subscriptions.Subscriptions(server)
        self._modules = [lifecycle, utilities, prompts, resources, tools, subscriptions, tasks]

    def install(self, server: "Server") -> None:
        for mod in self._modules:
            mod.install(server, self)

    def capabilities(self, version: str) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        for mod in self._modules:
            fn = getattr(mod, "capabilities", None)
            if fn is not None:
                caps.update(fn(self, version))
        return dict(sorted(caps.items()))
