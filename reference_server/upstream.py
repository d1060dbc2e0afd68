"""The reference server as a client of an upstream API (``mcp-reference-server --upstream URL``).

An MCP server that calls an upstream API on a client's behalf must use credentials of its own
there: "The MCP server **MUST NOT** pass through the token it received from the MCP client"
(basic/authorization, Access Token Privilege Restriction).  The ``call_upstream`` tool (only with
``--upstream``, or ``$MCP_CONFORMANCE_UPSTREAM_URL``) sends one GET to the upstream with the
server's own bearer credential, a random one per process (the suite's upstream accepts any; a real
server would hold a token the upstream's authorization server issued to it), and returns the
upstream's status.  The suite checks what reached the upstream (``--upstream-tool call_upstream``).
"""

from __future__ import annotations

import secrets
from typing import Any

__all__ = ["Upstream", "ENV_UPSTREAM_URL", "TOOL_NAME"]

ENV_UPSTREAM_URL = "MCP_CONFORMANCE_UPSTREAM_URL"
TOOL_NAME = "call_upstream"
TIMEOUT = 10.0


class Upstream:
    """The upstream API and the server's own credential for it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.credential = "mcp-reference-server-" + secrets.token_urlsafe(24)

    def authorization(self) -> str:
        """The Authorization header the server sends upstream: its own credential, never the client's."""
        return f"Bearer {self.credential}"

    async def call(self) -> tuple[int, str]:
        """One GET to the upstream: its status and the start of its body (in a worker thread, bounded)."""
        import anyio

        def get() -> tuple[int, str]:
            import urllib.error
            import urllib.request

            req = urllib.request.Request(self.url, headers={"Authorization": self.authorization(),
                                                            "Accept": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 (the URL the run gave)
                    return resp.status, resp.read(2000).decode("utf-8", "replace")
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read(2000).decode("utf-8", "replace")

        return await anyio.to_thread.run_sync(get, abandon_on_cancel=True)


def register(registry: Any, upstream: Upstream) -> None:
    """The ``call_upstream`` tool on ``registry``."""
    from reference_server.features.tools import Tool, result, text

    async def handler(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
        try:
            status, body = await upstream.call()
        except OSError as exc:
            return result(text(f"the upstream API ({upstream.url}) could not be reached: {exc}"), is_error=True)
        return result(text(f"the upstream API answered {status}: {body[:500]}"), is_error=not 200 <= status < 300)

    registry.add(Tool(TOOL_NAME, "Calls the upstream API the server was given (--upstream) with the server's own "
                      "credentials and returns its answer.", {"type": "object", "properties": {}, "additionalProperties": False}, handler,
                      title="Call upstream", annotations={"readOnlyHint": True, "openWorldHint": True}))
