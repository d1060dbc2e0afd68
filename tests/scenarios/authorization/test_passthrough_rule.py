"""auth.server.no-token-passthrough judged on what reached the upstream, wherever the token travels:
any header, the query, the body; also a token issued for the MCP server other than the run's.  The
server's own credentials, and a token issued for the upstream's audience, are no passthrough."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.auth.core import AuthorizationServer, Request
from conformance.scenarios.server.authorization import _passed_through

RESOURCE = "http://127.0.0.1:9/mcp"


@pytest.fixture
def server() -> AuthorizationServer:
    return AuthorizationServer("http://127.0.0.1:1")


def _upstream(server: AuthorizationServer, headers: dict[str, str] | None = None, query: str = "", body: bytes = b""):
    server.handle(Request("POST", "/upstream/x", query, headers or {}, body))
    return server.upstream_requests()[-1]


def test_the_clients_token_anywhere_is_passed_through(server: AuthorizationServer) -> None:
    auth = SimpleNamespace(server=server)
    token = server.mint(audience=RESOURCE, scope="mcp:read")
    for kwargs, where in [({"headers": {"authorization": f"Bearer {token}"}}, "header authorization"),
                          ({"headers": {"x-upstream-key": token}}, "header x-upstream-key"),
                          ({"query": f"access_token={token}"}, "query"),
                          ({"body": f'{{"token": "{token}"}}'.encode()}, "body")]:
        assert _passed_through(auth, _upstream(server, **kwargs), token, RESOURCE) == f"the client's token, in the {where}"


def test_another_token_issued_for_the_mcp_server_is_passed_through_too(server: AuthorizationServer) -> None:
    auth = SimpleNamespace(server=server)
    run_token = server.mint(audience=RESOURCE, scope="mcp:read")
    other = server.mint(audience=[RESOURCE, "http://elsewhere"], subject="someone-else")
    found = _passed_through(auth, _upstream(server, {"authorization": f"Bearer {other}"}), run_token, RESOURCE)
    assert found is not None and "issued for the MCP server" in found


def test_own_credentials_and_an_upstream_token_are_no_passthrough(server: AuthorizationServer) -> None:
    auth = SimpleNamespace(server=server)
    token = server.mint(audience=RESOURCE, scope="mcp:read")
    own = server.mint(audience=server.upstream_url, subject="the-mcp-server")
    for headers in ({"authorization": "Bearer mcp-reference-server-abc"}, {"authorization": f"Bearer {own}"}, {}):
        assert _passed_through(auth, _upstream(server, headers), token, RESOURCE) is None


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.8.0.1", True), ("[::1]", True),
                                            ("localhost", True), ("a.localhost", True), ("LOCALHOST", True),
                                            ("10.0.0.1", False), ("example.com", False), ("localhost.example", False),
                                            ("[2001:db8::1]", False), ("", False)])
def test_what_counts_as_a_loopback_host_for_the_https_rule(host: str, loopback: bool) -> None:
    from conformance.scenarios.server.authorization import _is_loopback

    assert _is_loopback(host) is loopback
