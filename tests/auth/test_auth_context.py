"""conformance.auth.context: how a run is told that the server requires authorization."""

from __future__ import annotations

import shlex
import sys

import pytest

from conformance.auth.context import ENV_AUTH_SERVER_URL, ENV_UPSTREAM_URL, AuthSetupError, attach
from conformance.runtime.connect import Target
from conformance.spec.versions import Transport

HTTP = Target(transport=Transport.STREAMABLE_HTTP, url="http://127.0.0.1:{port}/mcp",
              command=("server", "--issuer", "{issuer}", "--jwks", "{jwks_url}", "--resource", "{resource}",
                       "--port", "{port}"))


def _py(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


def test_no_option_leaves_the_target_as_it_is() -> None:
    target, close = attach(HTTP, auth=False, token=None, token_command=None)
    assert target is HTTP and "auth" not in target.extra
    close()


def test_auth_starts_the_authorization_server_and_fills_the_placeholders() -> None:
    target, close = attach(HTTP, auth=True, token=None, token_command=None)
    try:
        ctx = target.extra["auth"]
        issuer = ctx.issuer
        assert issuer.startswith("http://127.0.0.1:") and target.env[ENV_AUTH_SERVER_URL] == issuer
        assert target.command == ("server", "--issuer", issuer, "--jwks", issuer + "/jwks",
                                  "--resource", "http://127.0.0.1:{port}/mcp", "--port", "{port}")
        resolved = target.resolve(4321)  # {port} everywhere, the resource included
        assert resolved.command[6] == "http://127.0.0.1:4321/mcp"
        token = ctx.token(resolved.url)
        assert ctx.server.verify(token)["aud"] == resolved.url and ctx.token(resolved.url) == token
        assert ctx.headers(resolved.url) == {"Authorization": f"Bearer {token}"}
    finally:
        close()
    assert ctx.host._thread is None  # stopped


def test_a_token_command_is_run_once_for_the_token() -> None:
    target, close = attach(HTTP, auth=False, token=None, token_command=_py("print('  tok-123  ')"))
    ctx = target.extra["auth"]
    assert not ctx.can_mint and ctx.token("http://anything") == "tok-123" and ctx.server is None
    assert target.command == HTTP.command  # nothing to fill in: the server has its own authorization server
    close()


@pytest.mark.parametrize("code, why", [("import sys; sys.exit(3)", "exit 3"), ("print('a b')", "one token"),
                                       ("print('')", "one token")])
def test_a_token_command_that_prints_no_token_is_a_usage_error(code: str, why: str) -> None:
    with pytest.raises(AuthSetupError, match=why):
        attach(HTTP, auth=False, token=None, token_command=_py(code))


def test_one_option_at_a_time_and_http_only() -> None:
    with pytest.raises(AuthSetupError, match="give one of"):
        attach(HTTP, auth=True, token="t", token_command=None)
    stdio = Target(transport=Transport.STDIO, command=("server",))
    with pytest.raises(AuthSetupError, match="over HTTP only"):
        attach(stdio, auth=True, token=None, token_command=None)


def test_upstream_placeholder_env_and_tool_arguments() -> None:
    target = Target(transport=Transport.STREAMABLE_HTTP, url="http://127.0.0.1:{port}/mcp",
                    command=("server", "--upstream", "{upstream}"))
    target, close = attach(target, auth=True, token=None, token_command=None,
                           upstream_tool='fetch {"url": "{upstream}/data", "n": [1, "{upstream}"]}')
    try:
        ctx = target.extra["auth"]
        upstream = ctx.issuer + "/upstream"
        assert target.command == ("server", "--upstream", upstream)
        assert target.env[ENV_UPSTREAM_URL] == upstream == ctx.server.upstream_url
        assert ctx.upstream_tool.name == "fetch"
        assert ctx.upstream_arguments() == {"url": upstream + "/data", "n": [1, upstream]}
    finally:
        close()


@pytest.mark.parametrize("text, why", [("", "needs the name"), ("fetch {not json", "JSON object"),
                                       ("fetch [1]", "JSON object, not list")])
def test_a_malformed_upstream_tool_is_a_usage_error(text: str, why: str) -> None:
    with pytest.raises(AuthSetupError, match=why):
        attach(HTTP, auth=True, token=None, token_command=None, upstream_tool=text)


def test_an_upstream_tool_needs_the_suites_authorization_server() -> None:
    for kwargs in ({"token": "tok", "token_command": None}, {"token": None, "token_command": None}):
        with pytest.raises(AuthSetupError, match="--upstream-tool needs --auth"):
            attach(HTTP, auth=False, upstream_tool="fetch", **kwargs)


def test_scope_hierarchy_is_parsed_and_needs_the_suites_authorization_server() -> None:
    from conformance.auth.context import parse_scope_hierarchy

    assert parse_scope_hierarchy(["a:admin>a:read a:write", "a:admin>a:read a:list", "b>c"]) == {
        "a:admin": ("a:read", "a:write", "a:list"), "b": ("c",)}
    for bad in ("a:admin", "a b>c", ">c", "a>", "a>a"):
        with pytest.raises(AuthSetupError, match="--scope-hierarchy"):
            parse_scope_hierarchy([bad])
    with pytest.raises(AuthSetupError, match="--scope-hierarchy needs --auth"):
        attach(HTTP, auth=False, token="tok", token_command=None, scope_hierarchy=["a>b"])
    target, close = attach(HTTP, auth=True, token=None, token_command=None, scope_hierarchy=["a>b"])
    try:
        assert target.extra["auth"].scope_hierarchy == {"a": ("b",)}
    finally:
        close()


def test_a_proxy_static_client_is_pre_registered_at_the_suites_authorization_server() -> None:
    with pytest.raises(AuthSetupError, match="--proxy-static-client needs --auth"):
        attach(HTTP, auth=False, token="tok", token_command=None, proxy_static_client="proxy")
    with pytest.raises(AuthSetupError, match="--proxy-static-client needs --auth"):
        attach(HTTP, auth=True, token=None, token_command=None, proxy_static_client=":secret")
    target, close = attach(HTTP, auth=True, token=None, token_command=None, proxy_static_client="proxy:s3cret")
    try:
        ctx = target.extra["auth"]
        assert ctx.proxy_client == "proxy" and ctx.server.config.clients == {"proxy": "s3cret"}
    finally:
        close()
