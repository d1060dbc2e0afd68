"""The suite's authorization server (conformance.auth): one host for the module, real HTTP on
127.0.0.1, the flows a client makes and the switches scenarios use."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from conformance.auth.core import AuthConfig, AuthorizationServer, Request
from conformance.auth.server import AuthServerHost
from conformance.wire.oauth import pkce_s256

REDIRECT = "http://127.0.0.1:9/callback"
VERIFIER = "v" * 43


@pytest.fixture(scope="module")
def host() -> Iterator[AuthServerHost]:
    with AuthServerHost(AuthConfig(clients={"pre": "secret"})) as h:
        yield h


@pytest.fixture
def http(host: AuthServerHost) -> Iterator[httpx.Client]:
    previous = host.server.config
    with httpx.Client(base_url=host.issuer, timeout=5) as c:
        yield c
    host.server.config = previous


def _register(http: httpx.Client) -> str:
    r = http.post("/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    assert r.status_code == 201
    return r.json()["client_id"]


def _authorize(http: httpx.Client, client_id: str, **extra: str) -> dict[str, str]:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st",
              "code_challenge": pkce_s256(VERIFIER), "code_challenge_method": "S256", "resource": "http://r/mcp",
              "scope": "mcp:read", **extra}
    r = http.get("/authorize", params=params)
    assert r.status_code == 302
    loc = r.headers["location"]
    assert loc.startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(loc).query).items()}


def test_metadata_at_both_well_knowns_and_jwks(host: AuthServerHost, http: httpx.Client) -> None:
    oauth = http.get("/.well-known/oauth-authorization-server").json()
    oidc = http.get("/.well-known/openid-configuration").json()
    assert oauth["issuer"] == oidc["issuer"] == host.issuer
    assert oauth["code_challenge_methods_supported"] == ["S256"]
    assert "subject_types_supported" in oidc and "subject_types_supported" not in oauth
    keys = http.get("/jwks").json()["keys"]
    assert [k["kid"] for k in keys] == [host.server.key.kid]


def test_code_flow_with_pkce_refresh_and_introspection(host: AuthServerHost, http: httpx.Client) -> None:
    cid = _register(http)
    got = _authorize(http, cid)
    assert got["state"] == "st" and got["iss"] == host.issuer
    bad = http.post("/token", data={"grant_type": "authorization_code", "code": got["code"], "client_id": cid,
                                    "redirect_uri": REDIRECT, "code_verifier": "w" * 43})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_grant"  # and the code is spent
    got = _authorize(http, cid)
    r = http.post("/token", data={"grant_type": "authorization_code", "code": got["code"], "client_id": cid,
                                  "redirect_uri": REDIRECT, "code_verifier": VERIFIER})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    tok = r.json()
    claims = jwt.decode(tok["access_token"], options={"verify_signature": False})
    assert claims["aud"] == "http://r/mcp" and claims["scope"] == "mcp:read" and claims["iss"] == host.issuer
    intro = http.post("/introspect", data={"token": tok["access_token"]}).json()
    assert intro["active"] is True and intro["aud"] == "http://r/mcp"
    again = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "client_id": cid})
    assert again.status_code == 200
    reused = http.post("/token", data={"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "client_id": cid})
    assert reused.status_code == 400  # rotated


def test_pre_registered_client_authenticates_with_basic(http: httpx.Client) -> None:
    got = _authorize(http, "pre")
    basic = "Basic " + base64.b64encode(b"pre:wrong").decode()
    data = {"grant_type": "authorization_code", "code": got["code"], "redirect_uri": REDIRECT, "code_verifier": VERIFIER}
    assert http.post("/token", data=data, headers={"Authorization": basic}).status_code == 401
    got = _authorize(http, "pre")
    basic = "Basic " + base64.b64encode(b"pre:secret").decode()
    r = http.post("/token", data={**data, "code": got["code"]}, headers={"Authorization": basic})
    assert r.status_code == 200


def test_a_client_id_metadata_document_url_is_a_client_id(host: AuthServerHost, http: httpx.Client) -> None:
    assert "code" in _authorize(http, "https://client.example/metadata.json")
    host.server.configure(cimd=False)
    r = http.get("/authorize", params={"client_id": "https://other.example/m.json", "redirect_uri": REDIRECT})
    assert r.status_code == 400


def test_switches(host: AuthServerHost, http: httpx.Client) -> None:
    host.server.configure(pkce_methods=None, registration=False, metadata_issuer="https://elsewhere.invalid",
                          iss_in_response="wrong")
    meta = http.get("/.well-known/oauth-authorization-server").json()
    assert "code_challenge_methods_supported" not in meta and "registration_endpoint" not in meta
    assert meta["issuer"] == "https://elsewhere.invalid"
    assert _authorize(http, "pre")["iss"] == "https://wrong-issuer.invalid"
    host.server.configure(iss_in_response="omit", registration=True, registration_error="invalid_redirect_uri")
    assert "iss" not in _authorize(http, "pre")
    r = http.post("/register", json={"redirect_uris": [REDIRECT]})
    assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri"
    host.server.configure(registration_error=None)
    params = {"response_type": "code", "client_id": "pre", "redirect_uri": REDIRECT, "state": "s"}
    no_pkce = http.get("/authorize", params=params)  # PKCE required: an error redirect
    assert parse_qs(urlsplit(no_pkce.headers["location"]).query)["error"] == ["invalid_request"]


def test_minted_tokens_verify_only_with_our_key_and_issuer() -> None:
    core = AuthorizationServer("http://127.0.0.1:1")
    own = core.mint(audience="http://r/mcp", scope="a")
    assert core.verify(own)["aud"] == "http://r/mcp"
    assert core.verify(core.mint(audience="x", key="foreign")) is None
    assert core.verify(core.mint(audience="x", issuer="http://other")) is None
    assert core.verify(core.mint(audience="x", expires_in=-60)) is None
    header = json.loads(base64.urlsafe_b64decode(own.split(".")[0] + "=="))
    assert header == {"alg": "ES256", "kid": core.key.kid, "typ": "at+jwt"}


def test_every_request_is_logged_in_order(host: AuthServerHost, http: httpx.Client) -> None:
    since = host.server.last_seq
    http.get("/jwks")
    http.post("/introspect", data={"token": "garbage"}, headers={"X-Probe": "1"})
    http.get("/nothing?a=1")
    got = [(r.method, r.path, r.query, r.status) for r in host.server.requests(since)]
    assert got == [("GET", "/jwks", "", 200), ("POST", "/introspect", "", 200), ("GET", "/nothing", "a=1", 404)]
    assert host.server.requests(since)[1].headers["x-probe"] == "1"
    assert host.server.requests(since)[1].body == "token=garbage"


def test_an_issuer_with_a_path_serves_its_metadata_at_both_forms() -> None:
    core = AuthorizationServer("http://127.0.0.1:1/tenant1")
    for path in ("/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1",
                 "/tenant1/.well-known/openid-configuration"):
        assert core.handle(Request("GET", path)).status == 200, path
    assert core.handle(Request("GET", "/tenant1/jwks")).status == 200
    assert core.handle(Request("GET", "/.well-known/oauth-authorization-server")).status == 404


def test_the_host_stops_and_frees_its_port() -> None:
    import socket

    h = AuthServerHost().start()
    port = h.port
    h.stop()
    with socket.socket() as s:
        s.settimeout(1)
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_the_upstream_api_answers_everything_and_only_its_requests_are_the_upstreams() -> None:
    core = AuthorizationServer("http://127.0.0.1:1/tenant1")
    assert core.upstream_url == "http://127.0.0.1:1/tenant1/upstream"
    assert core.handle(Request("GET", "/tenant1/upstream", headers={"authorization": "Bearer own"})).status == 200
    assert core.handle(Request("POST", "/tenant1/upstream/items", "q=1", body=b"{}")).status == 200
    assert core.handle(Request("GET", "/tenant1/upstreams")).status == 404
    assert core.handle(Request("GET", "/tenant1/jwks")).status == 200
    got = [(r.method, r.path, r.query) for r in core.upstream_requests()]
    assert got == [("GET", "/tenant1/upstream", ""), ("POST", "/tenant1/upstream/items", "q=1")]
    assert core.upstream_requests(1) == core.upstream_requests()[1:]  # after the first logged request
    assert core.upstream_requests()[0].headers["authorization"] == "Bearer own"
