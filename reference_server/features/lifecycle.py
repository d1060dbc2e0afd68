"""Lifecycle: ``initialize`` (version negotiation), ``ping``, ``server/discover``.

2025-11-25 basic/lifecycle#version-negotiation: "If the server supports the requested protocol
version, it MUST respond with the same version. Otherwise, the server MUST respond with another
protocol version it supports. This SHOULD be the latest version supported by the server."
The version is chosen by the core before validation (the request is validated against it).
"""

from __future__ import annotations
from conformance.spec.meta import SERVER_INFO_KEY

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["install"]


def install(server: "Server", features: "Features") -> None:
    def initialize(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        conn = ctx.conn
        version = ctx.version  # the requested one if served, else the latest legacy version
        conn.version = version
        caps = params.get("capabilities")
        conn.client_capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        conn.client_info = info if isinstance(info, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": server.capabilities(version),
            "serverInfo": server.server_info(version),
        }
        if server.config.instructions:
            result["instructions"] = server.config.instructions
        return result

    def ping(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def discover(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        version = ctx.version
        result: dict[str, Any] = {
            # versions a client may name in per-request _meta (legacy ones need initialize)
            "supportedVersions": list(server.config.modern_versions),
            "capabilities": server.capabilities(version),
            "_meta": {SERVER_INFO_KEY: server.server_info(version)},
        }
        if server.config.instructions:
            result["instructions"] = server.config.instructions
        return result

    server.handlers["initialize"] = initialize
    server.handlers["ping"] = ping
    server.handlers["server/discover"] = discover
