"""The reference client's authorization extensions (``reference_client/grants.py``, no I/O, and
their use in ``reference_client/authorize.py``): DPoP proofs (RFC 9449), client authentication
with a signed JWT (RFC 7523 2.2), the client credentials, JWT bearer and token exchange requests,
and the flows against an authorization server simulated in process (httpx mock transport)."""

from __future__ import annotations

import base64
import json
import time
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import reference_client as _package

_REAL = str(Path(__file__).resolve().parents[2] / "reference_client")  # (see test_reference_client_oauth.py)
if _REAL not in list(getattr(_package, "__path__", [])):
    _package.__path__.append(_REAL)

from reference_client import grants, oauth  # noqa: E402
from reference_client.authorize import AuthConfig, Authorizer  # noqa: E402
from reference_client.oauth import OAuthRefused  # noqa: E402

RS = "http://rs.test"
MCP = f"{RS}/mcp"
AS = "http://as.test"
IDP = "http://idp.test"


def _header(token: str) -> dict[str, Any]:
    return json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))


def _verify_proof(proof: str) -> dict[str, Any]:
    head = _header(proof)
    key = jwt.PyJWK(head["jwk"], algorithm=head["alg"]).key
    return jwt.decode(proof, key, algorithms=[head["alg"]])


# -- pure pieces ---------------------------------------------------------------------------------

def test_a_dpop_proof_carries_what_rfc_9449_section_4_2_asks_and_is_fresh_every_time() -> None:
    key = grants.DPoPKey()
    proof = key.proof("post", "https://rs.example/mcp?x=1#f", access_token="tok", nonce="n-1", now=1000)
    head = _header(proof)
    assert head["typ"] == "dpop+jwt" and head["alg"] == "ES256"
    assert set(head["jwk"]) == {"kty", "crv", "x", "y"} and "d" not in head["jwk"]  # the public key only
    claims = _verify_proof(proof)  # signed with the key in its own header
    assert claims["htm"] == "POST" and claims["htu"] == "https://rs.example/mcp" and claims["iat"] == 1000
    assert claims["nonce"] == "n-1" and claims["ath"] == grants.access_token_hash("tok")
    # ath: base64url(SHA-256("tok")) without padding (RFC 9449 section 4.2 / its example token)
    assert grants.access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU") == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    plain = _verify_proof(key.proof("GET", "https://rs.example/mcp"))
    assert "ath" not in plain and "nonce" not in plain
    assert len({_verify_proof(key.proof("POST", "https://a/t"))["jti"] for _ in range(5)}) == 5  # a fresh jti each


def test_a_client_assertion_names_the_client_and_the_issuer_and_refuses_symmetric_algorithms() -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    token = grants.client_assertion("cid", "https://as.example", pem, "ES256")
    claims = jwt.decode(token, private.public_key(), algorithms=["ES256"], audience="https://as.example")
    assert claims["iss"] == claims["sub"] == "cid" and claims["exp"] > claims["iat"] >= int(time.time()) - 5
    assert claims["jti"] != jwt.decode(grants.client_assertion("cid", "https://as.example", pem, "ES256"),
                                       options={"verify_signature": False})["jti"]
    assert grants.client_assertion_fields(token) == {
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "client_assertion": token}
    with pytest.raises(grants.GrantError, match="asymmetric"):
        grants.client_assertion("cid", "https://as.example", "secret", "HS256")
    with pytest.raises(grants.GrantError, match="cannot sign"):
        grants.client_assertion("cid", "https://as.example", "not a key", "ES256")


def test_the_grant_requests() -> None:
    assert grants.client_credentials_form(MCP, ["a", "b"]) == {"grant_type": "client_credentials", "resource": MCP, "scope": "a b"}
    assert grants.client_credentials_form(MCP, None) == {"grant_type": "client_credentials", "resource": MCP}
    assert grants.jwt_bearer_form("h.p.s", MCP, None) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "h.p.s", "resource": MCP}
    with pytest.raises(grants.GrantError):
        grants.jwt_bearer_form("not-a-jwt", MCP, None)
    assert grants.token_exchange_form("id.tok.en", audience=AS, resource=MCP, scopes=["r"]) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag", "audience": AS, "resource": MCP,
        "subject_token": "id.tok.en", "subject_token_type": "urn:ietf:params:oauth:token-type:id_token", "scope": "r"}
    ok = {"access_token": "a.b.c", "issued_token_type": grants.ID_JAG, "token_type": "N_A"}
    assert grants.exchange_refusal(ok) is None
    assert "issued_token_type" in grants.exchange_refusal({**ok, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
    assert "not a JWT" in grants.exchange_refusal({**ok, "access_token": "opaque"})


def test_nonce_demands_challenges_token_types_and_the_pre_registered_method() -> None:
    assert grants.use_dpop_nonce(400, {"dpop-nonce": "n"}, {"error": "use_dpop_nonce"}) == "n"
    assert grants.use_dpop_nonce(400, {}, {"error": "use_dpop_nonce"}) is None
    assert grants.use_dpop_nonce(400, {"dpop-nonce": "n"}, {"error": "invalid_grant"}) is None
    assert grants.use_dpop_nonce(401, {"dpop-nonce": "n"}, None, ['DPoP error="use_dpop_nonce"']) == "n"
    assert grants.use_dpop_nonce(401, {"dpop-nonce": "n"}, None, ['Bearer error="invalid_token"']) is None
    assert oauth.auth_challenge('DPoP resource_metadata="http://m"') == {"resource_metadata": "http://m"}
    both = 'Bearer scope="b", DPoP scope="d"'
    assert oauth.auth_challenge(both)["scope"] == "b" and oauth.auth_challenge(both, "dpop")["scope"] == "d"
    assert oauth.token_refusal({"access_token": "t", "token_type": "DPoP"}) is not None  # no proof was sent
    assert oauth.token_refusal({"access_token": "t", "token_type": "DPoP"}, dpop=True) is None
    jwt_as = {"token_endpoint_auth_methods_supported": ["private_key_jwt"], "token_endpoint_auth_signing_alg_values_supported": ["ES256"]}
    assert oauth.prereg_auth_method(jwt_as, secret=False, key_alg="ES256") == "private_key_jwt"
    with pytest.raises(OAuthRefused, match="RS256"):
        oauth.prereg_auth_method(jwt_as, secret=False, key_alg="RS256")
    assert oauth.prereg_auth_method({}, secret=True, key_alg="ES256") == "client_secret_basic"  # falls back to the secret
    assert oauth.prereg_auth_method({}, secret=False, key_alg=None) == "none"


# -- the flows -----------------------------------------------------------------------------------

class World:
    """rs.test names as.test; as.test offers ``grants`` and (``dpop``) DPoP, demanding a nonce
    first when ``nonce``; idp.test does token exchange.  Every request recorded."""

    def __init__(self, *, grant_types: list[str] | None = None, dpop: bool = False, nonce: bool = False,
                 methods: list[str] | None = None, token_error: str | None = None, pkce: bool = True) -> None:
        self.grant_types, self.dpop, self.nonce, self.methods, self.token_error = grant_types, dpop, nonce, methods, token_error
        self.pkce = pkce
        self.log: list[httpx.Request] = []

    def forms(self, host: str) -> list[dict[str, list[str]]]:
        return [parse_qs(r.content.decode()) for r in self.log if r.url.host == host and r.url.path == "/token"]

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.log.append(request)
        url = request.url
        if url.host == "rs.test":
            if url.path == "/.well-known/oauth-protected-resource/mcp":
                return httpx.Response(200, json={"resource": MCP, "authorization_servers": [AS]})
            return httpx.Response(404)
        if url.host == "idp.test" and url.path == "/token":
            return httpx.Response(200, json={"access_token": "id.jag.jwt", "issued_token_type": grants.ID_JAG, "token_type": "N_A"})
        if url.path == "/.well-known/oauth-authorization-server":
            meta: dict[str, Any] = {"issuer": AS, "authorization_endpoint": f"{AS}/authorize", "token_endpoint": f"{AS}/token",
                                    "code_challenge_methods_supported": ["S256"],
                                    "token_endpoint_auth_methods_supported": self.methods or ["client_secret_basic"]}
            if self.grant_types:
                meta["grant_types_supported"] = self.grant_types
            if not self.pkce:
                del meta["code_challenge_methods_supported"]
            if self.dpop:
                meta["dpop_signing_alg_values_supported"] = ["ES256"]
            return httpx.Response(200, json=meta)
        if url.path == "/token":
            if self.token_error:
                return httpx.Response(400, json={"error": self.token_error})
            proof = request.headers.get("dpop")
            if self.nonce and (proof is None or _verify_proof(proof).get("nonce") != "as-nonce"):
                return httpx.Response(400, headers={"DPoP-Nonce": "as-nonce"}, json={"error": "use_dpop_nonce"})
            return httpx.Response(200, json={"access_token": "at", "token_type": "DPoP" if proof else "Bearer"})
        return httpx.Response(404)


async def _flow(world: World, responses: list[httpx.Response], **config: Any) -> tuple[Authorizer, list[bool], list[dict[str, str]]]:
    auth = Authorizer(MCP, lambda: "2025-11-25", AuthConfig(timeout=5, flow_timeout=10, **config),
                      http_transport=httpx.MockTransport(world.handler))
    results, headers = [], []
    async with auth:
        for response in responses:
            response.request = httpx.Request("POST", MCP)
            results.append(await auth.challenge(response, auth.generation))
            headers.append(auth.header("POST", MCP))
    return auth, results, headers


def test_dpop_binds_the_token_and_honours_the_nonces_of_both_servers() -> None:
    world = World(dpop=True, nonce=True, grant_types=["client_credentials"])
    rs_nonce = httpx.Response(401, headers={"WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": "rs-nonce"})
    auth, ok, headers = anyio.run(partial(_flow, world, [httpx.Response(401, headers={"WWW-Authenticate": "DPoP"}), rs_nonce],
                                          client_id="id", client_secret="sec"))
    assert ok == [True, True] and auth.token_type == "dpop"
    tokens = [r for r in world.log if r.url.path == "/token"]
    assert len(tokens) == 2  # the nonce demand answered once, and the resource server's one needs no new token
    first, second = (_verify_proof(r.headers["dpop"]) for r in tokens)
    assert "nonce" not in first and second["nonce"] == "as-nonce" and first["jti"] != second["jti"]
    assert second["htm"] == "POST" and second["htu"] == f"{AS}/token" and "ath" not in second
    for h, nonce in zip(headers, [None, "rs-nonce"]):
        assert h["Authorization"] == "DPoP at"
        claims = _verify_proof(h["DPoP"])
        assert claims["ath"] == grants.access_token_hash("at") and claims["htu"] == MCP and claims.get("nonce") == nonce
    # without DPoP at the authorization server, or with DPoP turned off: a bearer token and no proof
    for world, cfg in ((World(grant_types=["client_credentials"]), {}), (World(dpop=True, grant_types=["client_credentials"]), {"dpop": False})):
        auth, ok, headers = anyio.run(partial(_flow, world, [httpx.Response(401)], client_id="id", client_secret="sec", **cfg))
        assert ok == [True] and headers == [{"Authorization": "Bearer at"}]
        assert "dpop" not in next(r for r in world.log if r.url.path == "/token").headers


def test_client_credentials_with_a_private_key_send_a_fresh_client_assertion() -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    world = World(grant_types=["client_credentials"], methods=["private_key_jwt"])
    auth, ok, _ = anyio.run(partial(_flow, world, [httpx.Response(401, headers={"WWW-Authenticate": 'Bearer scope="s"'})],
                                    client_id="cid", client_key_pem=pem))
    assert ok == [True]
    (form,) = world.forms("as.test")
    assert form["grant_type"] == ["client_credentials"] and form["resource"] == [MCP] and form["scope"] == ["s"]
    assert "client_id" not in form and form["client_assertion_type"] == [grants.CLIENT_ASSERTION_TYPE]
    claims = jwt.decode(form["client_assertion"][0], private.public_key(), algorithms=["ES256"], audience=AS)
    assert claims["iss"] == claims["sub"] == "cid"


def test_enterprise_managed_exchanges_the_id_token_then_presents_the_id_jag() -> None:
    world = World(grant_types=[grants.JWT_BEARER])
    auth, ok, _ = anyio.run(partial(_flow, world, [httpx.Response(401)], client_id="cid", client_secret="sec",
                                    id_token="the.id.token", idp_token_endpoint=f"{IDP}/token", idp_client_id="idp-cid"))
    assert ok == [True] and auth.token == "at"
    (exchange,) = world.forms("idp.test")
    assert exchange == {"grant_type": [grants.TOKEN_EXCHANGE], "requested_token_type": [grants.ID_JAG], "audience": [AS],
                        "resource": [MCP], "subject_token": ["the.id.token"], "subject_token_type": [grants.ID_TOKEN],
                        "client_id": ["idp-cid"]}
    (bearer,) = world.forms("as.test")
    assert bearer == {"grant_type": [grants.JWT_BEARER], "assertion": ["id.jag.jwt"], "resource": [MCP]}
    token = next(r for r in world.log if r.url.host == "as.test" and r.url.path == "/token")
    assert base64.b64decode(token.headers["authorization"][6:]) == b"cid:sec"
    assert not any(r.url.path in ("/authorize", "/register") for r in world.log)


def test_a_workload_presents_its_jwt_and_does_not_retry_or_fall_back_when_refused() -> None:
    world = World(grant_types=[grants.JWT_BEARER], methods=["none"])
    auth, ok, _ = anyio.run(partial(_flow, world, [httpx.Response(401)], client_id="wl", assertion="w.jwt.sig"))
    assert ok == [True] and world.forms("as.test") == [
        {"grant_type": [grants.JWT_BEARER], "assertion": ["w.jwt.sig"], "resource": [MCP], "client_id": ["wl"]}]
    world = World(grant_types=[grants.JWT_BEARER], methods=["none"], token_error="invalid_grant")
    auth, ok, _ = anyio.run(partial(_flow, world, [httpx.Response(401), httpx.Response(401)], assertion="w.jwt.sig"))
    assert ok == [False, False] and "invalid_grant" in (auth.refused or "")
    assert len(world.forms("as.test")) == 1 and "client_id" not in world.forms("as.test")[0]  # no retry, no client ID
    world = World(grant_types=[grants.JWT_BEARER], methods=["none"], pkce=False)  # PKCE is the code flow's: not needed
    auth, ok, _ = anyio.run(partial(_flow, world, [httpx.Response(401)], assertion="w.jwt.sig"))
    assert ok == [True] and len(world.forms("as.test")) == 1
    world = World(grant_types=["authorization_code"])  # no JWT bearer grant there: no other grant tried
    auth, ok, _ = anyio.run(partial(_flow, world, [httpx.Response(401)], assertion="w.jwt.sig"))
    assert ok == [False] and not any(r.url.path in ("/token", "/authorize", "/register") for r in world.log)
