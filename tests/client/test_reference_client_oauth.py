"""The reference client's OAuth rules (``reference_client/oauth.py``, no I/O) and its flow
(``reference_client/authorize.py``) against an authorization server and resource server simulated
in process (httpx mock transport): discovery order, issuer and PKCE checks, RFC 9207 ``iss``,
``state``, ``resource``, registration per authorization server, step-up and its limit, refresh.
The ``$BROWSER`` mode runs a real program against the real loopback listener."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pathlib import Path

import anyio
import httpx
import pytest

import reference_client as _package

# Under pytest, tests/ comes first on sys.path and tests/reference_client (a test package) shadows
# the real package; its submodules are found through the editable install, which knows only the
# main checkout's files.  The real directory, next to this repository's tests, is added to the path
# the submodules are looked for in.
_REAL = str(Path(__file__).resolve().parents[2] / "reference_client")
if _REAL not in list(getattr(_package, "__path__", [])):
    _package.__path__.append(_REAL)

from reference_client import oauth  # noqa: E402
from reference_client.authorize import AuthConfig, Authorizer  # noqa: E402
from reference_client.oauth import OAuthRefused  # noqa: E402

RS = "http://rs.test"
MCP = f"{RS}/mcp"


# -- pure rules --------------------------------------------------------------------------------

def test_www_authenticate_is_parsed_with_quotes_escapes_and_several_challenges() -> None:
    header = 'DPoP algs="ES256", Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/y\\"z"'
    challenges = oauth.parse_www_authenticate(header)
    assert [s for s, _ in challenges] == ["dpop", "bearer"]
    assert oauth.bearer_challenge(header) == {"error": "insufficient_scope", "scope": "a b", "resource_metadata": 'http://x/y"z'}
    assert oauth.bearer_challenge(["Basic realm=x", "Bearer scope=read"]) == {"scope": "read"}
    assert oauth.bearer_challenge("Basic realm=x") == {}


def test_well_known_candidates_are_in_the_pages_order() -> None:
    assert oauth.prm_candidates("https://e.com/public/mcp") == [
        "https://e.com/.well-known/oauth-protected-resource/public/mcp", "https://e.com/.well-known/oauth-protected-resource"]
    assert oauth.prm_candidates("https://e.com/") == ["https://e.com/.well-known/oauth-protected-resource"]
    assert oauth.as_metadata_candidates("https://a.com/tenant1") == [
        "https://a.com/.well-known/oauth-authorization-server/tenant1",
        "https://a.com/.well-known/openid-configuration/tenant1",
        "https://a.com/tenant1/.well-known/openid-configuration"]
    assert oauth.as_metadata_candidates("https://a.com") == [
        "https://a.com/.well-known/oauth-authorization-server", "https://a.com/.well-known/openid-configuration"]


@pytest.mark.parametrize(("resource", "ok"), [
    (MCP, True), (RS, True), ("HTTP://RS.TEST/mcp", True), ("http://rs.test:80/mcp", True),
    ("https://evil.example.com/mcp", False), ("http://rs.test/other", False), ("http://rs.test/mc", False),
    ("http://rs.test/mcp#f", False), (None, False), ("http://rs.test:99999/mcp", False), ("http://[::1/mcp", False)])
def test_protected_resource_metadata_is_used_only_for_this_server(resource: Any, ok: bool) -> None:
    assert (oauth.resource_refusal(resource, MCP) is None) is ok


def test_metadata_with_another_issuer_or_without_pkce_is_refused() -> None:
    good = {"issuer": "https://a.com", "authorization_endpoint": "https://a.com/authorize", "token_endpoint": "https://a.com/token",
            "code_challenge_methods_supported": ["S256"]}
    assert oauth.metadata_refusal(good, "https://a.com") is None and oauth.pkce_refusal(good) is None
    assert "issuer" in oauth.metadata_refusal({**good, "issuer": "https://a.com/"}, "https://a.com")
    assert oauth.pkce_refusal({k: v for k, v in good.items() if k != "code_challenge_methods_supported"}) is not None
    assert oauth.pkce_refusal({**good, "code_challenge_methods_supported": ["plain"]}) is not None


def test_scope_selection_step_up_union_and_offline_access() -> None:
    assert oauth.initial_scopes("a", {"scopes_supported": ["b"]}, {}) == ["a"]
    assert oauth.initial_scopes(None, {"scopes_supported": ["b", "c"]}, {}) == ["b", "c"]
    assert oauth.initial_scopes(None, {}, {"scopes_supported": ["offline_access"]}) is None  # no scope parameter at all
    assert oauth.initial_scopes("a", {}, {"scopes_supported": ["a", "offline_access"]}) == ["a", "offline_access"]
    assert oauth.initial_scopes("a offline_access", {}, {"scopes_supported": ["a"]}) == ["a"]  # not listed: never asked
    assert oauth.step_up_scopes(["a"], "b") == ["a", "b"]
    assert oauth.step_up_scopes(["a", "b"], "b") is None  # nothing new: another round would not help


def test_pkce_is_s256_of_an_unreserved_verifier() -> None:
    verifier, challenge = oauth.pkce_pair()
    assert 43 <= len(verifier) <= 128 and all(c.isalnum() or c in "-._~" for c in verifier)
    assert challenge == base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


ISS = "http://as.test"


@pytest.mark.parametrize(("supported", "params", "ok"), [
    (True, {"iss": [ISS]}, True),
    (True, {}, False),                            # advertised, absent: reject
    (False, {"iss": [ISS]}, True),
    (False, {"iss": ["https://evil.example.com"]}, False),  # not advertised, present: still compared
    (False, {}, True),
    (True, {"iss": [ISS + "/"]}, False),          # no trailing-slash normalisation
    (True, {"iss": ["HTTP://AS.TEST"]}, False),   # no case folding
    (True, {"iss": ["http://as.test:80"]}, False),  # no default-port elision
    (True, {"iss": [ISS, ISS]}, False),
])
def test_iss_is_validated_by_simple_string_comparison(supported: bool, params: dict[str, list[str]], ok: bool) -> None:
    full = {"code": ["c"], "state": ["s"], **params}
    if ok:
        assert oauth.authorization_code(full, state="s", issuer=ISS, iss_supported=supported) == "c"
    else:
        with pytest.raises(OAuthRefused):
            oauth.authorization_code(full, state="s", issuer=ISS, iss_supported=supported)


def test_state_is_verified_and_an_error_is_not_acted_on_before_iss() -> None:
    for bad in ({"code": ["c"]}, {"code": ["c"], "state": ["other"]}):
        with pytest.raises(OAuthRefused, match="state"):
            oauth.authorization_code(bad, state="s", issuer=ISS, iss_supported=False)
    with pytest.raises(OAuthRefused, match="iss"):  # a forged error response: iss first
        oauth.authorization_code({"error": ["access_denied"], "state": ["s"], "iss": ["x"]}, state="s", issuer=ISS, iss_supported=False)
    with pytest.raises(OAuthRefused, match="access_denied"):
        oauth.authorization_code({"error": ["access_denied"], "state": ["s"]}, state="s", issuer=ISS, iss_supported=False)


def test_token_endpoint_authentication_methods() -> None:
    headers, form = oauth.client_auth("client_secret_basic", "id:1", "s p")
    assert form == {} and base64.b64decode(headers["Authorization"][6:]) == b"id%3A1:s+p"
    assert oauth.client_auth("client_secret_post", "id", "s") == ({}, {"client_id": "id", "client_secret": "s"})
    assert oauth.client_auth("none", "id", None) == ({}, {"client_id": "id"})
    assert oauth.registration_auth_method({"token_endpoint_auth_methods_supported": ["client_secret_post", "none"]}) == "none"
    assert oauth.registration_auth_method({}) == "client_secret_basic"  # RFC 8414 default
    body = oauth.registration_body(client_name="c", redirect_uri="http://127.0.0.1:1/callback", auth_method="none", scopes=None)
    assert body["application_type"] == "native" and "refresh_token" in body["grant_types"]


# -- the flow, against a simulated RS + AS -----------------------------------------------------

class World:
    """A resource server at rs.test and authorization servers at as1.test / as2.test; every
    request recorded; behaviour switched per test."""

    def __init__(self, **opts: Any) -> None:
        self.opts = opts
        self.log: list[httpx.Request] = []
        self.as_url = opts.get("as_url", "http://as1.test")
        self.challenges: dict[str, str] = {}
        self.refresh = opts.get("refresh")
        self.registered = 0

    def paths(self) -> list[str]:
        return [f"{r.method} {r.url.host}{r.url.path}" for r in self.log]

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.log.append(request)
        url = request.url
        host = f"{url.scheme}://{url.host}"
        if host == RS:
            if url.path == self.opts.get("prm_path", "/.well-known/oauth-protected-resource/mcp"):
                doc = {"resource": self.opts.get("resource", MCP), "authorization_servers": [self.as_url]}
                return httpx.Response(200, json=doc)
            return httpx.Response(404)
        issuer = host
        meta_path = "/.well-known/oauth-authorization-server"
        if url.path == meta_path:
            meta = {"issuer": self.opts.get("issuer", issuer), "authorization_endpoint": f"{issuer}/authorize",
                    "token_endpoint": f"{issuer}/token", "registration_endpoint": f"{issuer}/register",
                    "code_challenge_methods_supported": ["S256"], "authorization_response_iss_parameter_supported": True,
                    "token_endpoint_auth_methods_supported": ["none"]}
            if self.opts.get("no_pkce"):
                del meta["code_challenge_methods_supported"]
            if self.opts.get("grants"):
                meta["grant_types_supported"] = self.opts["grants"]
                meta["token_endpoint_auth_methods_supported"] = ["client_secret_basic"]
            return httpx.Response(200, json=meta)
        if url.path == "/register":
            self.registered += 1
            return httpx.Response(201, json={"client_id": f"client-of-{url.host}", "token_endpoint_auth_method": "none"})
        if url.path == "/authorize":
            q = parse_qs(url.query.decode())
            self.challenges[q["state"][0]] = q["code_challenge"][0]
            back = {"code": "the-code", "state": self.opts.get("state", q["state"][0]), "iss": self.opts.get("iss", issuer)}
            return httpx.Response(302, headers={"Location": f"{q['redirect_uri'][0]}?{urlencode(back)}"})
        if url.path == "/token":
            form = parse_qs(request.content.decode())
            doc: dict[str, Any] = {"access_token": f"token-{len(self.log)}", "token_type": "Bearer", "expires_in": 60}
            if self.refresh and form["grant_type"] == ["authorization_code"]:
                doc["refresh_token"] = "r1"
            return httpx.Response(200, json=doc)
        return httpx.Response(404)


def _unauthorized(header: str = "") -> httpx.Response:
    return httpx.Response(401, headers={"WWW-Authenticate": header or 'Bearer error="invalid_token"'})


async def _flow(world: World, responses: list[httpx.Response], version: str = "2025-11-25",
                **config: Any) -> tuple[Authorizer, list[bool]]:
    auth = Authorizer(MCP, lambda: version, AuthConfig(timeout=5, flow_timeout=10, **config),
                      http_transport=httpx.MockTransport(world.handler))
    results = []
    async with auth:
        for response in responses:
            results.append(await auth.challenge(response, auth.generation))
    return auth, results


def test_a_401_without_resource_metadata_walks_the_well_known_uris_and_gets_a_token() -> None:
    world = World(prm_path="/.well-known/oauth-protected-resource")  # only at the root
    auth, ok = anyio.run(_flow, world, [_unauthorized()])
    assert ok == [True] and auth.token
    assert world.paths()[:3] == ["GET rs.test/.well-known/oauth-protected-resource/mcp",
                                 "GET rs.test/.well-known/oauth-protected-resource",
                                 "GET as1.test/.well-known/oauth-authorization-server"]
    authorize = next(r for r in world.log if r.url.path == "/authorize")
    token = next(r for r in world.log if r.url.path == "/token")
    q, form = parse_qs(authorize.url.query.decode()), parse_qs(token.content.decode())
    assert q["resource"] == form["resource"] == [MCP] and q["code_challenge_method"] == ["S256"]
    assert "Authorization" not in authorize.headers and "Authorization" not in token.headers  # never the bearer at the AS
    verifier = form["code_verifier"][0]
    assert base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode() == q["code_challenge"][0]
    assert urlsplit(q["redirect_uri"][0]).hostname == "127.0.0.1"
    register = next(r for r in world.log if r.url.path == "/register")
    assert json.loads(register.content)["application_type"] == "native"


def test_the_header_url_is_used_and_only_it() -> None:
    world = World(prm_path="/custom/prm.json")
    auth, ok = anyio.run(_flow, world, [_unauthorized(f'Bearer resource_metadata="{RS}/custom/prm.json"')])
    assert ok == [True] and world.paths()[0] == "GET rs.test/custom/prm.json"
    world = World()  # the header names a URL that is not there: no fallback to the well-known URIs
    auth, ok = anyio.run(_flow, world, [_unauthorized(f'Bearer resource_metadata="{RS}/custom/prm.json"')])
    assert ok == [False] and world.paths() == ["GET rs.test/custom/prm.json"]


@pytest.mark.parametrize("opts", [{"resource": "https://evil.example.com/mcp"}, {"issuer": "https://attacker.example.com"},
                                  {"no_pkce": True}])
def test_refusals_before_the_authorization_request(opts: dict[str, Any]) -> None:
    world = World(**opts)
    auth, ok = anyio.run(_flow, world, [_unauthorized()])
    assert ok == [False] and auth.token is None and auth.refused
    assert not any(r.url.path in ("/register", "/authorize", "/token") for r in world.log)


@pytest.mark.parametrize("opts", [{"iss": "http://as1.test/"}, {"iss": "https://evil.example.com"}, {"state": "forged"}])
def test_a_bad_authorization_response_never_reaches_the_token_endpoint(opts: dict[str, Any]) -> None:
    world = World(**opts)
    auth, ok = anyio.run(_flow, world, [_unauthorized()])
    assert ok == [False] and auth.token is None
    assert any(r.url.path == "/authorize" for r in world.log) and not any(r.url.path == "/token" for r in world.log)


def test_step_up_asks_for_the_union_once_then_stops() -> None:
    world = World()
    forbidden = httpx.Response(403, headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="write"'})
    auth, ok = anyio.run(_flow, world, [_unauthorized('Bearer scope="read"'), forbidden, forbidden, forbidden, _unauthorized()])
    assert ok == [True, True, False, False, True]  # the refused step-up does not stop a later 401's authorization
    scopes = [parse_qs(r.url.query.decode()).get("scope") for r in world.log if r.url.path == "/authorize"]
    assert scopes == [["read"], ["read write"], None]
    assert world.registered == 1


def test_a_refresh_token_is_used_on_the_next_401() -> None:
    world = World(refresh=True)
    auth, ok = anyio.run(_flow, world, [_unauthorized(), _unauthorized()])
    assert ok == [True, True]
    grants = [parse_qs(r.content.decode())["grant_type"][0] for r in world.log if r.url.path == "/token"]
    assert grants == ["authorization_code", "refresh_token"]
    assert sum(r.url.path == "/authorize" for r in world.log) == 1


def test_a_new_authorization_server_gets_its_own_registration() -> None:
    world = World()

    async def run() -> Authorizer:
        auth = Authorizer(MCP, lambda: "2026-07-28", AuthConfig(timeout=5, flow_timeout=10),
                          http_transport=httpx.MockTransport(world.handler))
        async with auth:
            assert await auth.challenge(_unauthorized(), auth.generation)
            world.as_url = "http://as2.test"
            assert await auth.challenge(_unauthorized(), auth.generation)
        return auth

    anyio.run(run)
    as2 = [r for r in world.log if r.url.host == "as2.test"]
    assert [r.url.path for r in as2][:2] == ["/.well-known/oauth-authorization-server", "/register"]
    assert not any(b"client-of-as1.test" in (r.url.query + r.content) for r in as2)


def test_pre_registered_credentials_stay_with_their_authorization_server() -> None:
    world = World()
    auth, ok = anyio.run(partial(_flow, world, [_unauthorized()], "2025-11-25",
                                 client_id="pre", client_secret="sec", client_issuer="http://other.test"))
    assert ok == [False] and not any(r.url.path in ("/register", "/authorize") for r in world.log)


def test_an_authorization_server_with_only_client_credentials_gets_that_grant_from_a_pre_registered_client() -> None:
    world = World(grants=["client_credentials"])
    auth, ok = anyio.run(partial(_flow, world, [_unauthorized('Bearer scope="s"')], "2025-11-25", client_id="id", client_secret="sec"))
    assert ok == [True] and auth.token
    token = next(r for r in world.log if r.url.path == "/token")
    form = parse_qs(token.content.decode())
    assert form["grant_type"] == ["client_credentials"] and form["resource"] == [MCP] and form["scope"] == ["s"]
    assert base64.b64decode(token.headers["authorization"][6:]) == b"id:sec"
    assert not any(r.url.path in ("/authorize", "/register") for r in world.log)
    world = World(grants=["client_credentials"])  # no credentials: nothing to do there
    auth, ok = anyio.run(_flow, world, [_unauthorized()])
    assert ok == [False] and not any(r.url.path in ("/authorize", "/register", "/token") for r in world.log)


def test_2025_03_26_falls_back_to_the_default_endpoints_of_the_origin() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/register":
            return httpx.Response(201, json={"client_id": "c"})
        if request.url.path == "/authorize":
            q = parse_qs(request.url.query.decode())
            return httpx.Response(302, headers={"Location": f"{q['redirect_uri'][0]}?code=x&state={q['state'][0]}"})
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "t", "token_type": "bearer"})
        return httpx.Response(404)

    seen: list[str] = []

    async def run() -> bool:
        def record(request: httpx.Request) -> httpx.Response:
            seen.append(f"{request.method} {request.url.host}{request.url.path} {request.headers.get('mcp-protocol-version')}")
            return handler(request)

        auth = Authorizer(MCP, lambda: "2025-03-26", AuthConfig(timeout=5), http_transport=httpx.MockTransport(record))
        async with auth:
            return await auth.challenge(_unauthorized(), 0)

    assert anyio.run(run)
    assert seen[0] == "GET rs.test/.well-known/oauth-authorization-server 2025-03-26"
    assert [s.split()[1] for s in seen[1:]] == ["rs.test/register", "rs.test/authorize", "rs.test/token"]


BROWSER_SCRIPT = """
import sys, urllib.parse, urllib.request
q = urllib.parse.parse_qs(urllib.parse.urlsplit(sys.argv[1]).query)
forged = urllib.parse.urlencode({"code": "forged", "state": "not-ours", "iss": "http://as1.test"})
urllib.request.urlopen(q["redirect_uri"][0] + "?" + forged, timeout=5).read()  # discarded
back = urllib.parse.urlencode({"code": "c", "state": q["state"][0], "iss": "http://as1.test"})
urllib.request.urlopen(q["redirect_uri"][0] + "?" + back, timeout=5).read()
"""


def test_browser_mode_takes_the_answer_on_the_loopback_listener(tmp_path: Path) -> None:
    script = tmp_path / "browser.py"  # plays the user agent and the authorization server: straight to the callback
    script.write_text(BROWSER_SCRIPT)
    world = World()
    auth, ok = anyio.run(partial(_flow, world, [_unauthorized()], "2025-11-25", browser=f"{sys.executable} {script}"))
    assert ok == [True] and auth.token, auth.refused
    assert not any(r.url.path == "/authorize" for r in world.log)  # the browser went there, not the client
    token = next(r for r in world.log if r.url.path == "/token")
    assert parse_qs(token.content.decode())["code"] == ["c"]  # not the forged callback's
    assert auth._listener is None  # closed


# -- the links: the bearer on every request once there is a token ------------------------------

def _links() -> Any:
    """``reference_client/http_links.py`` of this checkout, loaded afresh: another test module may
    already have imported ``reference_client.http_links`` through the editable install, which may point
    at another checkout (see the top of this file)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_reference_client_http_links_under_test", Path(_REAL) / "http_links.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def _protected(world: World, inner: Any) -> Any:
    """``world`` plus an MCP endpoint that wants a bearer token from it on every request."""
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "rs.test" and not request.url.path.startswith("/.well-known/"):
            world.log.append(request)
            if not request.headers.get("authorization", "").startswith("Bearer token-"):
                return _unauthorized()
            return inner(request)
        return world.handler(request)
    return handler


def test_streamable_http_sends_the_token_on_every_request_after_a_401() -> None:
    HttpLink = _links().HttpLink

    world = World()

    def mcp(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            body = json.loads(request.content)
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}},
                                  headers={"Mcp-Session-Id": "s1"} if body["method"] == "initialize" else {})
        return httpx.Response(405 if request.method == "GET" else 200)

    async def run() -> Any:
        transport = httpx.MockTransport(_protected(world, mcp))
        auth = Authorizer(MCP, lambda: "2025-11-25", AuthConfig(timeout=5), http_transport=transport)
        async with auth:
            link = HttpLink(MCP, stateless=False, timeout=5, http_transport=transport)
            link.auth = auth
            async with link:
                await link.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
                first = await link.receive()
                link.open_stream()
                await link.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
                second = await link.receive()
        return first, second

    first, second = anyio.run(run)
    assert first["id"] == 1 and second["id"] == 2
    mcp_requests = [r for r in world.log if r.url.host == "rs.test" and r.url.path == "/mcp"]
    assert [r.method for r in mcp_requests[:2]] == ["POST", "POST"]  # the 401, then the same request with the token
    assert "authorization" not in mcp_requests[0].headers
    assert {r.method for r in mcp_requests[1:]} >= {"POST", "GET", "DELETE"}
    assert all(r.headers["authorization"].startswith("Bearer token-") for r in mcp_requests[1:])
    assert not any("token-" in str(r.url) for r in world.log)  # never a token in a URL


def test_http_sse_sends_the_token_on_the_stream_and_every_post() -> None:
    SseLink = _links().SseLink

    world = World(resource=f"{RS}/sse", prm_path="/.well-known/oauth-protected-resource/sse")

    def sse(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, headers={"Content-Type": "text/event-stream"},
                                  content=b"event: endpoint\ndata: /messages?s=1\n\n")
        return httpx.Response(202)

    async def run() -> None:
        transport = httpx.MockTransport(_protected(world, sse))
        auth = Authorizer(f"{RS}/sse", lambda: "2024-11-05", AuthConfig(timeout=5), http_transport=transport)
        async with auth:
            link = SseLink(f"{RS}/sse", timeout=5, http_transport=transport)
            link.auth = auth
            async with link:
                await link.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})

    anyio.run(run)
    rs = [r for r in world.log if r.url.host == "rs.test" and not r.url.path.startswith("/.well-known/")]
    assert [(r.method, r.url.path, "authorization" in r.headers) for r in rs] == [
        ("GET", "/sse", False), ("GET", "/sse", True), ("POST", "/messages", True)]
