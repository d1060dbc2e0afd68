"""The server under test named by the options: :func:`server_target`, the one validation of a
command / URL / transport, as ``mcp-conformance server``, the pytest options and the fuzz command
take them (the client's is :func:`conformance.client.target.client_target`)."""

from __future__ import annotations

from typing import Mapping, Sequence
from urllib.parse import urlsplit

from conformance.runtime.connect import Target, parse_command
from conformance.spec.versions import Transport

__all__ = ["ServerTargetError", "PYTEST_FLAGS", "server_target"]

#: the flags a mistake is named by: the pytest plugin's (the CLI passes its own on to them)
PYTEST_FLAGS: Mapping[str, str] = {"command": "--mcp-server-command", "url": "--mcp-server-url",
                                   "transport": "--mcp-transport"}


class ServerTargetError(ValueError):
    """The server options do not name a server the suite can start or reach (the message says how
    to fix it)."""


def server_target(*, command: str | Sequence[str] | None, url: str | None, transport: str | None,
                  timeout: float = 10.0, cwd: str | None = None, default: bool = False,
                  flags: Mapping[str, str] = PYTEST_FLAGS) -> Target:
    """The server options validated into a (not yet resolved) :class:`Target`: a URL, or a command
    taking ``{port}``, means an HTTP server (the URL then derived), else stdio; a mistake is a
    :class:`ServerTargetError` naming ``flags``."""
    argv = parse_command(command)
    url = (url or "").strip() or None
    if transport:
        try:
            kind = Transport(transport)
        except ValueError:
            raise ServerTargetError(
                f"unknown transport {transport!r}; use one of {', '.join(t.value for t in Transport)}"
            ) from None
    else:  # a URL, or a command taking {port}, means an HTTP server
        kind = Transport.STREAMABLE_HTTP if url or (argv and any("{port}" in a for a in argv)) else Transport.STDIO
    if kind is Transport.STDIO:
        if url:
            raise ServerTargetError(
                f"{flags['url']} is for HTTP transports; for stdio give only {flags['command']} "
                f"(or add {flags['transport']} streamable-http / sse)"
            )
        if not argv:
            raise ServerTargetError(f"the stdio transport needs {flags['command']} (the command that starts the server)")
    else:
        if not url:
            if argv and any("{port}" in a for a in argv):
                url = "http://127.0.0.1:{port}" + ("/sse" if kind is Transport.SSE else "/mcp")
            else:
                raise ServerTargetError(
                    f"the {kind.value} transport needs {flags['url']} (e.g. http://127.0.0.1:8000/mcp), "
                    f"or a {flags['command']} that uses {{port}}"
                )
        parts = urlsplit(url.replace("{port}", "1"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ServerTargetError(f"{flags['url']} {url!r} is not an http:// or https:// URL")
        try:
            parts.port
        except ValueError:
            raise ServerTargetError(f"{flags['url']} {url!r} has an invalid port") from None
    return Target(
        transport=kind,
        command=argv,
        url=url,
        cwd=cwd,
        startup_timeout=max(5.0, timeout),
        default=default,
    )
