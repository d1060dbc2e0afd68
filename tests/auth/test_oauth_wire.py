"""conformance.wire.oauth: PKCE, WWW-Authenticate, metadata documents, well-known locations."""

from __future__ import annotations

import pytest

from conformance.wire.oauth import (
    as_metadata_urls,
    authorization_server_metadata,
    bearer_challenge,
    bearer_challenge_of,
    bearer_token_of,
    canonical_resource,
    parse_www_authenticate,
    pkce_s256,
    prm_well_known_urls,
    protected_resource_metadata,
)


def test_pkce_s256_is_the_rfc_7636_appendix_b_example() -> None:
    assert pkce_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


@pytest.mark.parametrize("header, expected", [
    ('Bearer resource_metadata="http://h/.well-known/oauth-protected-resource", scope="a b"',
     [("Bearer", {"resource_metadata": "http://h/.well-known/oauth-protected-resource", "scope": "a b"}, None)]),
    ('Bearer error="invalid_token", error_description="bad \\"x\\""',
     [("Bearer", {"error": "invalid_token", "error_description": 'bad "x"'}, None)]),
    ("Basic abc==, Bearer realm=x", [("Basic", {}, "abc=="), ("Bearer", {"realm": "x"}, None)]),
    ("Bearer", [("Bearer", {}, None)]),
    ('Newauth realm="apps", type=1, Basic realm="simple"',
     [("Newauth", {"realm": "apps", "type": "1"}, None), ("Basic", {"realm": "simple"}, None)]),
    ('bearer  SCOPE = "x"', [("bearer", {"scope": "x"}, None)]),
    ("", []),
])
def test_www_authenticate_challenges_are_read(header: str, expected: list) -> None:
    got = [(c.scheme, c.params, c.token68) for c in parse_www_authenticate(header)]
    assert got == expected


def test_an_unterminated_quote_keeps_what_was_read() -> None:
    (ch,) = parse_www_authenticate('Bearer realm="x", scope="unterminated')
    assert ch.params == {"realm": "x"}


def test_bearer_challenge_round_trips() -> None:
    header = bearer_challenge(error="insufficient_scope", scope="a b", resource_metadata='http://x/"q"', realm=None)
    ch = bearer_challenge_of({"www-authenticate": header})
    assert ch is not None and ch.params == {"error": "insufficient_scope", "scope": "a b", "resource_metadata": 'http://x/"q"'}
    assert bearer_challenge_of({"www-authenticate": "Basic realm=x"}) is None
    assert bearer_challenge_of({}) is None


@pytest.mark.parametrize("value, token", [("Bearer abc", "abc"), ("bearer abc", "abc"), ("Basic abc", None),
                                          ("Bearer", None), ("Bearer a b", None), (None, None)])
def test_bearer_token_of(value: str | None, token: str | None) -> None:
    assert bearer_token_of(value) == token


def test_well_known_locations() -> None:
    assert prm_well_known_urls("http://127.0.0.1:5/mcp") == [
        "http://127.0.0.1:5/.well-known/oauth-protected-resource/mcp",
        "http://127.0.0.1:5/.well-known/oauth-protected-resource"]
    assert prm_well_known_urls("http://h/") == ["http://h/.well-known/oauth-protected-resource"]
    assert as_metadata_urls("https://a/tenant1") == [
        "https://a/.well-known/oauth-authorization-server/tenant1",
        "https://a/.well-known/openid-configuration/tenant1",
        "https://a/tenant1/.well-known/openid-configuration"]
    assert as_metadata_urls("https://a") == ["https://a/.well-known/oauth-authorization-server",
                                             "https://a/.well-known/openid-configuration"]


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/") == "https://mcp.example.com"
    assert canonical_resource("https://mcp.example.com/MCP#frag") == "https://mcp.example.com/MCP"


def test_metadata_documents() -> None:
    prm = protected_resource_metadata("http://r/mcp", ["http://as"], scopes_supported=["a"])
    assert prm == {"resource": "http://r/mcp", "authorization_servers": ["http://as"],
                   "bearer_methods_supported": ["header"], "scopes_supported": ["a"]}
    meta = authorization_server_metadata("http://as/t", pkce_methods=None, registration=False, oidc=True)
    assert meta["issuer"] == "http://as/t" and meta["token_endpoint"] == "http://as/t/token"
    assert "code_challenge_methods_supported" not in meta and "registration_endpoint" not in meta
    assert meta["subject_types_supported"] == ["public"]
    assert authorization_server_metadata("http://as")["code_challenge_methods_supported"] == ["S256"]
