"""Resources: list (paginated), templates, read, subscribe/unsubscribe, updated and list_changed.

Resource not found: ``-32002`` up to 2025-11-25 ("Resource not found: -32002",
server/resources#error-handling), ``-32602`` from 2026-07-28 ("servers MUST return a JSON-RPC error
with code -32602"); both carry the requested ``uri`` in ``data`` and never an empty ``contents``.

``test://watched-resource`` changes whenever ``bump()`` is called (the ``touch_resource`` tool):
subscribed legacy connections get ``notifications/resources/updated``, and 2026-07-28
``subscriptions/listen`` streams that listed the URI in ``resourceSubscriptions`` get it tagged
with their subscription id.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from conformance.spec.versions import VERSIONS, spec

from reference_server.errors import RPCError
from reference_server.features.pagination import paginate

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["install", "capabilities", "ResourceRegistry", "PNG_1X1", "WAV_SILENCE"]

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
WAV_SILENCE = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="


def _vi(v: str) -> int:
    return VERSIONS.index(v)


@dataclass
class Resource:
    uri: str
    name: str
    description: str
    mime_type: str
    read: Callable[[], dict[str, Any]]  # -> one ResourceContents (without uri)
    title: str | None = None
    size: int | None = None

    def describe(self, version: str) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.title and _vi(version) >= _vi("2025-06-18"):
            out["title"] = self.title
        out["description"] = self.description
        out["mimeType"] = self.mime_type
        if self.size is not None:
            out["size"] = self.size
        return out


@dataclass
class Template:
    uri_template: str
    name: str
    description: str
    mime_type: str
    pattern: re.Pattern[str]
    read: Callable[[dict[str, str]], dict[str, Any]]
    title: str | None = None
    completions: dict[str, list[str]] = field(default_factory=dict)

    def describe(self, version: str) -> dict[str, Any]:
        out: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        if self.title and _vi(version) >= _vi("2025-06-18"):
            out["title"] = self.title
        out["description"] = self.description
        out["mimeType"] = self.mime_type
        return out

    def match(self, uri: str) -> dict[str, str] | None:
        m = self.pattern.fullmatch(uri)
        return m.groupdict() if m else None


def _template_regex(template: str) -> re.Pattern[str]:
    """RFC 6570 level-1 templates (``{var}``): each variable matches one non-empty path segment."""
    out = ""
    pos = 0
    for m in re.finditer(r"\{([A-Za-z0-9_]+)\}", template):
        out += re.escape(template[pos : m.start()]) + f"(?P<{m.group(1)}>[^/?#]+)"
        pos = m.end()
    return re.compile(out + re.escape(template[pos:]))


class ResourceRegistry:
    def __init__(self) -> None:
        self.resources: dict[str, Resource] = {}
        self.templates: list[Template] = []
        self.watched_version = 0

    def add(self, res: Resource) -> None:
        self.resources[res.uri] = res

    def add_template(self, uri_template: str, name: str, description: str, mime_type: str, read: Callable[[dict[str, str]], dict[str, Any]], *, title: str | None = None, completions: dict[str, list[str]] | None = None) -> None:
        self.templates.append(Template(uri_template, name, description, mime_type, _template_regex(uri_template), read, title, completions or {}))

    def exists(self, uri: str) -> bool:
        return uri in self.resources or any(t.match(uri) is not None for t in self.templates)

    def read(self, uri: str) -> dict[str, Any] | None:
        res = self.resources.get(uri)
        if res is not None:
            return {"uri": uri, "mimeType": res.mime_type, **res.read()}
        for t in self.templates:
            args = t.match(uri)
            if args is not None:
                return {"uri": uri, "mimeType": t.mime_type, **t.read(args)}
        return None


def not_found(ctx: "RequestContext", uri: Any) -> RPCError:
    code = spec(ctx.version).resource_not_found_code
    return RPCError(code, "Resource not found", {"uri": uri})


def capabilities(features: "Features", version: str) -> dict[str, Any]:
    if spec(version).subscribe:
        return {"resources": {"subscribe": True, "listChanged": True}}
    if spec(version).subscriptions_listen:
        # 2026-07-28: updates are delivered on subscriptions/listen streams
        return {"resources": {"subscribe": True, "listChanged": True}}
    return {"resources": {"listChanged": True}}


def _register_fixtures(reg: ResourceRegistry) -> None:
    reg.add(Resource("test://static-text", "static-text", "A static text resource.", "text/plain", lambda: {"text": "This is the content of the static text resource."}, title="Static text"))
    reg.add(Resource("test://static-binary", "static-binary", "A static binary resource (a 1x1 PNG image).", "image/png", lambda: {"blob": PNG_1X1}, title="Static binary"))
    reg.add(
        Resource(
            "test://watched-resource",
            "watched-resource",
            "A resource that changes when the touch_resource tool is called; subscribe to it.",
            "text/plain",
            lambda: {"text": f"Watched resource, version {reg.watched_version}."},
            title="Watched resource",
        )
    )
    for i in range(1, 6):
        reg.add(Resource(f"test://numbered/{i}", f"numbered-{i}", f"Numbered resource {i} of 5 (pagination fixture).", "text/plain", (lambda i=i: {"text": f"Numbered resource {i}."}), title=f"Numbered {i}"))
    reg.add_template(
        "test://template/{id}/data",
        "template-data",
        "Data for an id; the id is substituted into the content.",
        "application/json",
        lambda args: {"text": json.dumps({"id": args["id"], "templateTest": True, "data": f"Data for ID: {args['id']}"}, separators=(",", ":"))},
        title="Template data",
        completions={"id": ["1", "2", "3", "42", "123", "999"]},
    )


def install(server: "Server", features: "Features") -> None:
    reg: ResourceRegistry = features.resources
    _register_fixtures(reg)

    def resources_list(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        items = list(reg.resources.values())
        page, nxt = paginate("resources/list", params, items, server.config.page_size_for("resources/list"))
        out: dict[str, Any] = {"resources": [r.describe(ctx.version) for r in page]}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    def templates_list(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        page, nxt = paginate("resources/templates/list", params, reg.templates, server.config.page_size_for("resources/templates/list"))
        out: dict[str, Any] = {"resourceTemplates": [t.describe(ctx.version) for t in page]}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    def resources_read(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        contents = reg.read(uri) if isinstance(uri, str) else None
        if contents is None:
            raise not_found(ctx, uri)
        return {"contents": [contents]}

    def subscribe(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str) or not reg.exists(uri):
            raise not_found(ctx, uri)
        ctx.conn.subscriptions.add(uri)
        return {}

    def unsubscribe(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise not_found(ctx, uri)
        ctx.conn.subscriptions.discard(uri)
        return {}

    server.handlers["resources/list"] = resources_list
    server.handlers["resources/templates/list"] = templates_list
    server.handlers["resources/read"] = resources_read
    server.handlers["resources/subscribe"] = subscribe
    server.handlers["resources/unsubscribe"] = unsubscribe


async def resource_updated(server: "Server", uri: str) -> None:
    """Tell every subscriber (legacy subscriptions, 2026 listen streams) that ``uri`` changed."""
    await server.broadcast("notifications/resources/updated", {"uri": uri}, only=lambda c: uri in c.subscriptions)
    await server.features.subscriptions.publish("resourceSubscriptions", "notifications/resources/updated", {"uri": uri}, uri=uri)
