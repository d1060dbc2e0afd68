"""What a run of ``mcp-conformance server`` knows about authorization: :class:`AuthContext`.

Given to the target (``Target.extra["auth"]``) when the run is told that the server requires
authorization:

* ``--auth``: the suite starts its own authorization server (:class:`~.server.AuthServerHost`) for
  the run and the server under test is told to trust it -- ``{issuer}``, ``{jwks_url}`` and
  ``{resource}`` in ``--command`` become its issuer URL, its JWKS URL and the MCP endpoint's URL,
  and ``MCP_CONFORMANCE_AUTH_SERVER_URL`` (the name the official runner's drafts use) is set to the
  issuer.  Tokens are minted for every check (:attr:`AuthContext.server`).  ``{upstream}`` (and
  ``MCP_CONFORMANCE_UPSTREAM_URL``) is an upstream API the suite serves beside it: with
  ``--upstream-tool NAME [JSON]``, the tool of the server that calls it, the run can see what the
  server sends upstream (no token passthrough).
* ``--auth-token TOKEN`` / ``--auth-token-command CMD``: the server has an authorization server of
  its own; the token given (or printed by the command, run once) is the valid one.  Nothing can be
  minted: the checks that need a token of our making skip with :data:`NO_MINT`.

Every connection of the run carries ``Authorization: Bearer <the valid token>`` (see
:meth:`AuthContext.headers`); the authorization scenarios take it off, or change it, on purpose.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, replace
from typing import Any, Callable

from conformance.auth.core import AuthConfig, AuthorizationServer

__all__ = ["AuthContext", "attach", "AuthSetupError", "NO_MINT", "DEFAULT_SCOPE", "ENV_AUTH_SERVER_URL",
           "PLACEHOLDERS", "ENV_UPSTREAM_URL", "UpstreamTool", "parse_upstream_tool", "parse_scope_hierarchy"]

ENV_AUTH_SERVER_URL = "MCP_CONFORMANCE_AUTH_SERVER_URL"
ENV_UPSTREAM_URL = "MCP_CONFORMANCE_UPSTREAM_URL"
PLACEHOLDERS = ("{issuer}", "{jwks_url}", "{resource}", "{upstream}")
NO_MINT = ("the server's authorization server is not the suite's (--auth-token / --auth-token-command): tokens "
           "with another audience, issuer, expiry or scope cannot be made for it (run with --auth, and a server "
           "told to trust the suite's authorization server, to check this)")
TOKEN_COMMAND_TIMEOUT = 30.0


class AuthSetupError(Exception):
    """The authorization options cannot be used (a usage error, said with the fix)."""


@dataclass(frozen=True)
class UpstreamTool:
    """``--upstream-tool NAME [JSON]``: the server's tool that calls the upstream API, and its
    arguments (a JSON object; ``{upstream}`` in it becomes the upstream's URL)."""

    name: str
    arguments: dict[str, Any]


def parse_scope_hierarchy(entries: list[str]) -> dict[str, tuple[str, ...]]:
    """``--scope-hierarchy`` (conformance.wire.oauth.parse_scope_hierarchy); a usage error otherwise."""
    from conformance.wire.oauth import parse_scope_hierarchy as parse

    try:
        return parse(entries)
    except ValueError as exc:
        raise AuthSetupError(f"--scope-hierarchy {exc}") from None


def parse_upstream_tool(text: str) -> UpstreamTool:
    """``NAME`` or ``NAME {"arg": ...}`` (a tool name has no whitespace); a usage error otherwise."""
    name, _, rest = text.strip().partition(" ")
    if not name:
        raise AuthSetupError("--upstream-tool needs the name of the server's tool that calls the upstream API, "
                             "e.g. --upstream-tool fetch_data or --upstream-tool 'fetch_data {\"url\": \"{upstream}\"}'")
    arguments: Any = {}
    if rest.strip():
        try:
            arguments = json.loads(rest)
        except ValueError as exc:
            raise AuthSetupError(f"--upstream-tool {text!r}: the arguments after the tool name must be a JSON object "
                                 f"({exc})") from None
        if not isinstance(arguments, dict):
            raise AuthSetupError(f"--upstream-tool {text!r}: the arguments after the tool name must be a JSON object, "
                                 f"not {type(arguments).__name__}")
    return UpstreamTool(name, arguments)


class AuthContext:
    """The run's authorization: the suite's authorization server (or none) and the valid token."""

    def __init__(self, host: Any = None, token: str | None = None, upstream_tool: UpstreamTool | None = None,
                 scope_hierarchy: dict[str, tuple[str, ...]] | None = None, proxy_client: str | None = None) -> None:
        self.host = host  # an AuthServerHost, or None (a token of the server's own authorization server)
        self.static_token = token
        self.upstream_tool = upstream_tool  # the server's tool that calls {upstream} (--upstream-tool)
        self.scope_hierarchy = scope_hierarchy or {}  # broad scope -> the narrower ones (--scope-hierarchy)
        self.proxy_client = proxy_client  # the static client id of a proxy server (--proxy-static-client)
        self._tokens: dict[str, str] = {}

    @property
    def server(self) -> AuthorizationServer | None:
        """The suite's authorization server (mint, log, configure), or None under --auth-token."""
        return self.host.server if self.host is not None else None

    @property
    def can_mint(self) -> bool:
        return self.host is not None

    @property
    def issuer(self) -> str | None:
        return self.host.issuer if self.host is not None else None

    @property
    def scope(self) -> str:
        """The scopes every token the suite mints carries (the authorization server's scopes_supported)."""
        server = self.server
        scopes = server.config.scopes_supported if server is not None else None
        return " ".join(scopes or DEFAULT_SCOPES)

    def token(self, resource: str) -> str:
        """The valid token for the MCP endpoint ``resource`` (minted once per resource)."""
        if self.static_token is not None:
            return self.static_token
        assert self.server is not None
        if resource not in self._tokens:
            self._tokens[resource] = self.server.mint(audience=resource, scope=self.scope)
        return self._tokens[resource]

    def headers(self, resource: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(resource)}"}

    def substitute(self, text: str, resource: str) -> str:
        if self.host is None:
            return text
        return (text.replace("{issuer}", self.host.issuer).replace("{jwks_url}", self.host.server.jwks_url)
                .replace("{resource}", resource).replace("{upstream}", self.host.server.upstream_url))

    def upstream_arguments(self) -> dict[str, Any]:
        """The upstream tool's arguments, ``{upstream}`` filled in (in every string of them)."""
        assert self.upstream_tool is not None and self.host is not None
        url = self.host.server.upstream_url

        def fill(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace("{upstream}", url)
            if isinstance(value, list):
                return [fill(v) for v in value]
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value

        return fill(self.upstream_tool.arguments)

    def close(self) -> None:
        if self.host is not None:
            self.host.stop()


DEFAULT_SCOPES = ("mcp:read", "mcp:write")
DEFAULT_SCOPE = " ".join(DEFAULT_SCOPES)


def _run_token_command(command: str, timeout: float | None = None) -> str:
    """The token the command prints.  It runs in a process group of its own, ended whole (SIGKILL)
    when it has printed nothing within ``timeout`` s: a command that hangs (a login waiting for a
    browser, a child process holding its output open) neither holds the run nor outlives it."""
    import os
    import signal

    timeout = TOKEN_COMMAND_TIMEOUT if timeout is None else timeout
    try:
        proc = subprocess.Popen(shlex.split(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except (OSError, ValueError) as exc:
        raise AuthSetupError(f"--auth-token-command {command!r} cannot be run: {exc}") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    exited = proc.poll() is not None
    try:  # the command and anything it started (its group), whether it ended or not
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    if timed_out:
        stdout, stderr = proc.communicate()  # what came before the kill (the pipes are closed now)
        if not exited:
            raise AuthSetupError(f"--auth-token-command {command!r} printed no token within {timeout:g} s (it was "
                                 "stopped, with every process it started)")
    token = stdout.strip()
    if proc.returncode != 0 or not token or any(c.isspace() for c in token):
        raise AuthSetupError(f"--auth-token-command {command!r} must print one token and exit 0 "
                             f"(exit {proc.returncode}, stderr {stderr.strip()[-300:]!r})")
    return token


def attach(target: Any, *, auth: bool, token: str | None, token_command: str | None,
           config: AuthConfig | None = None, upstream_tool: str | None = None,
           scope_hierarchy: list[str] | None = None,
           proxy_static_client: str | None = None) -> tuple[Any, Callable[[], None]]:
    """``target`` with the run's :class:`AuthContext` (``target.extra["auth"]``), its command's
    placeholders filled in and the environment variables set; and the function that ends it (stops
    the authorization server).  The target as is when no authorization option is given."""
    if upstream_tool is not None and not auth:
        raise AuthSetupError("--upstream-tool needs --auth: the upstream API the tool calls is served by the suite "
                             "beside its authorization server ({upstream} in --command, or $" + ENV_UPSTREAM_URL + ")")
    tool = parse_upstream_tool(upstream_tool) if upstream_tool is not None else None
    if scope_hierarchy and not auth:
        raise AuthSetupError("--scope-hierarchy needs --auth: the check mints a token with only the broader scope, "
                             "which only the suite's authorization server can")
    hierarchy = parse_scope_hierarchy(list(scope_hierarchy or ()))
    proxy_id, _, proxy_secret = (proxy_static_client or "").partition(":")
    if proxy_static_client is not None and (not auth or not proxy_id.strip()):
        raise AuthSetupError("--proxy-static-client needs --auth and a client id (ID or ID:SECRET): the id is "
                             "pre-registered at the suite's authorization server, which the proxy fronts")
    if proxy_id:
        config = replace(config or AuthConfig(), clients={**(config.clients if config else {}),
                                                          proxy_id: proxy_secret or None})
    if not (auth or token or token_command):
        return target, lambda: None
    if sum(bool(x) for x in (auth, token, token_command)) > 1:
        raise AuthSetupError("give one of --auth (the server trusts the suite's authorization server), --auth-token "
                             "or --auth-token-command (a token of the server's own authorization server)")
    if not target.is_http:
        raise AuthSetupError("authorization is checked over HTTP only (the spec: stdio implementations should not "
                             "follow it): add --transport streamable-http or sse")
    if not auth:
        ctx = AuthContext(token=token if token else _run_token_command(token_command or ""))
        return replace(target, extra={**target.extra, "auth": ctx}), ctx.close
    from conformance.auth.server import AuthServerHost

    host = AuthServerHost(config).start()
    ctx = AuthContext(host=host, upstream_tool=tool, scope_hierarchy=hierarchy, proxy_client=proxy_id or None)
    resource = target.url or ""  # may still hold {port}: Target.resolve fills it in everywhere
    command = tuple(ctx.substitute(a, resource) for a in target.command) if target.command else None
    env = {**(target.env or {}), ENV_AUTH_SERVER_URL: host.issuer, ENV_UPSTREAM_URL: host.server.upstream_url}
    return replace(target, command=command, env=env, extra={**target.extra, "auth": ctx}), ctx.close
