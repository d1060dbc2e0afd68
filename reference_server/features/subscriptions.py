"""``subscriptions/listen`` (2026-07-28, basic/patterns/subscriptions) and list_changed fan-out.

"The server MUST send notifications/subscriptions/acknowledged as the first message carrying the
subscription's ID in _meta under io.modelcontextprotocol/subscriptionId" and "MUST NOT send
notification types the client has not explicitly requested."  Every notification on the stream
carries the subscription id (the JSON-RPC id of the listen request).  The stream lasts until the
client cancels it (closes the HTTP stream, or ``notifications/cancelled`` on stdio) or the server
shuts down, in which case the listen request is answered with a ``SubscriptionsListenResult``.

Legacy connections (2024-11-05 .. 2025-11-25) get ``list_changed`` notifications on their default
stream when they were negotiated with the ``listChanged`` capability (always declared here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from reference_server.messages import SUBSCRIPTION_ID_KEY, Outgoing
from conformance.wire.envelope import dumps

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["Subscriptions", "install"]

_FLAG_FOR = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


@dataclass(eq=False)
class _Listener:
    ctx: "RequestContext"
    flags: dict[str, Any] = field(default_factory=dict)
    uris: set[str] = field(default_factory=set)
    done: anyio.Event = field(default_factory=anyio.Event)


class Subscriptions:
    def __init__(self, server: "Server") -> None:
        self.server = server
        self.listeners: set[_Listener] = set()

    async def publish(self, flag: str, method: str, params: dict[str, Any] | None = None, *, uri: str | None = None) -> None:
        for lst in list(self.listeners):
            if lst.ctx.cancelled or lst.ctx.finished:
                self.listeners.discard(lst)
                continue
            if flag == "resourceSubscriptions":
                if uri not in lst.uris:
                    continue
            elif not lst.flags.get(flag):
                continue
            body = dict(params or {})
            body["_meta"] = {SUBSCRIPTION_ID_KEY: lst.ctx.id}
            msg = {"jsonrpc": "2.0", "method": method, "params": body}
            try:
                await lst.ctx.sink(Outgoing(dumps(msg), "notification", message=msg, related=lst.ctx.id))
            except Exception:  # a stream that went away; its request is being cancelled
                self.listeners.discard(lst)

    async def list_changed(self, method: str) -> None:
        """A list changed: legacy connections on their default stream, modern listeners by filter."""
        await self.server.broadcast(method, None, only=lambda c: c.version is not None and c.initialized)
        await self.publish(_FLAG_FOR[method], method)

    def shutdown(self) -> None:
        for lst in list(self.listeners):
            lst.done.set()


def install(server: "Server", features: "Features") -> None:
    subs: Subscriptions = features.subscriptions

    async def listen(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("notifications") or {}
        honored: dict[str, Any] = {}
        for flag in ("toolsListChanged", "promptsListChanged", "resourcesListChanged"):
            if requested.get(flag) is True:
                honored[flag] = True
        uris = [u for u in requested.get("resourceSubscriptions") or [] if isinstance(u, str) and features.resources.exists(u)]
        if "resourceSubscriptions" in requested:
            honored["resourceSubscriptions"] = uris
        ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"_meta": {SUBSCRIPTION_ID_KEY: ctx.id}, "notifications": honored}}
        await ctx.sink(Outgoing(dumps(ack), "notification", message=ack, related=ctx.id))
        lst = _Listener(ctx, {k: v for k, v in honored.items() if v is True}, set(uris))
        subs.listeners.add(lst)
        try:
            await lst.done.wait()  # until cancelled (client) or server shutdown (graceful closure)
        finally:
            subs.listeners.discard(lst)
        # The server tears the subscription down.  basic/patterns/cancellation: "A server MUST send
        # notifications/cancelled referencing a subscriptions/listen request ID when it tears down
        # that subscription stream"; basic/patterns/subscriptions: it "SHOULD respond to the
        # original subscriptions/listen request with a completion result before closing the stream".
        await ctx.notify("notifications/cancelled", {"requestId": ctx.id, "reason": "the server is shutting down", "_meta": {SUBSCRIPTION_ID_KEY: ctx.id}})
        return {"_meta": {SUBSCRIPTION_ID_KEY: ctx.id}}

    server.handlers["subscriptions/listen"] = listen
