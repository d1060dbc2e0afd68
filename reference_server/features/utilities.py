"""Logging (``logging/setLevel``, ``notifications/message``) and completion (``completion/complete``).

Logging: up to 2025-11-25 the client sets a connection-wide level with ``logging/setLevel``
(until then every level is sent); from 2026-07-28 the level comes with each request in
``_meta["io.modelcontextprotocol/logLevel"]`` and "If absent, the server MUST NOT send any
notifications/message notifications for this request."

Completion: values for prompt arguments and resource-template variables, filtered by prefix,
at most 100 ("values: Array of completion values. Must not exceed 100 items.").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformance.spec import errors as codes
from conformance.spec.versions import VERSIONS, spec

from reference_server.errors import RPCError

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["install", "capabilities"]


def capabilities(features: "Features", version: str) -> dict[str, Any]:
    caps: dict[str, Any] = {"logging": {}}
    if version != VERSIONS[0]:  # 2024-11-05 has no "completions" capability (completion is ungated)
        caps["completions"] = {}
    return caps


def install(server: "Server", features: "Features") -> None:
    def set_level(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        ctx.conn.log_level = params["level"]  # validated against LoggingLevel by the schema
        return {}

    def complete(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        ref = params.get("ref") or {}
        arg = params.get("argument") or {}
        name, value = arg.get("name"), arg.get("value", "")
        candidates: list[str] | None = None
        if ref.get("type") == "ref/prompt":
            prompt = features.prompts.get(ref.get("name"), ctx.version)
            if prompt is None:
                raise RPCError(codes.INVALID_PARAMS, f"Invalid prompt name: {ref.get('name')}", {"ref": ref})
            if name not in {a["name"] for a in prompt.arguments}:
                raise RPCError(codes.INVALID_PARAMS, f"Prompt {prompt.name} has no argument {name!r}", {"ref": ref, "argument": name})
            candidates = prompt.completions.get(name, [])
        elif ref.get("type") == "ref/resource":
            uri = ref.get("uri")
            template = next((t for t in features.resources.templates if t.uri_template == uri), None)
            if template is None:
                if isinstance(uri, str) and uri in features.resources.resources:
                    candidates = []  # a plain resource has nothing to complete
                else:
                    raise RPCError(spec(ctx.version).resource_not_found_code, "Resource not found", {"uri": uri})
            else:
                candidates = template.completions.get(name, [])
        else:
            raise RPCError(codes.INVALID_PARAMS, f"Invalid params: unknown reference type {ref.get('type')!r}", {"ref": ref})
        matches = [c for c in candidates if c.startswith(value)]
        return {"completion": {"values": matches[:100], "total": len(matches), "hasMore": len(matches) > 100}}

    server.handlers["logging/setLevel"] = set_level
    server.handlers["completion/complete"] = complete
