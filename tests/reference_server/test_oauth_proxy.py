"""mcp-reference-server --auth --proxy-client-id: an MCP proxy with a static client id in front of an
authorization server (here the suite's), end to end: a client registers with the proxy, is shown a
consent page (nothing reaches the authorization server before it is approved), approves, is sent
on with the static id, comes back through the proxy's callback with a code of the proxy's, redeems
it (PKCE) for the authorization server's tokens, refreshes them, and is served by the MCP endpoint."""

from __future__ import annotations

import re
import secrets
from typing import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from conformance.auth.core import AuthConfig
from conformance.auth.server import AuthServerHost
from conformance.wire.oauth import pkce_s256

from tests.reference_server.helpers import http_server

STATIC = "mcp-conformance-proxy"
REDIRECT = "http://127.0.0.1:9/callback"


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[AuthServerHost, str]]:
    host = AuthServerHost(AuthConfig(clients={STATIC: "s3cret"})).start()
    try:
        with http_server("--auth", "--issuer", host.issuer, "--proxy-client-id", f"{STATIC}:s3cret") as (_, url):
            yield host, url
    finally:
        host.stop()


def test_a_dynamically_registered_client_consents_before_anything_is_forwarded(proxy: tuple[AuthServerHost, str]) -> None:
    host, url = proxy
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    with httpx.Client(timeout=10, follow_redirects=False) as http:
        prm = http.get(origin + "/.well-known/oauth-protected-resource/mcp").json()
        assert prm["authorization_servers"] == [origin]  # the proxy, not the authorization server behind it
        meta = http.get(origin + "/.well-known/oauth-authorization-server").json()
        reg = http.post(meta["registration_endpoint"], json={"client_name": "Test client", "redirect_uris": [REDIRECT]})
        assert reg.status_code == 201
        client_id = reg.json()["client_id"]
        verifier = secrets.token_urlsafe(48)
        mark = host.server.last_seq
        page = http.get(meta["authorization_endpoint"], params={
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st",
            "code_challenge": pkce_s256(verifier), "code_challenge_method": "S256", "resource": url,
            "scope": "mcp:read"})
        assert page.status_code == 200 and "Test client" in page.text and "127.0.0.1:9" in page.text
        assert not [r for r in host.server.requests(mark) if r.path == "/authorize"]  # nothing forwarded yet
        request_id = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
        onwards = http.post(origin + "/consent", data={"request": request_id, "approve": "yes"})
        assert onwards.status_code == 302
        upstream = parse_qs(urlsplit(onwards.headers["location"]).query)
        assert upstream["client_id"] == [STATIC] and upstream["redirect_uri"] == [origin + "/callback"]
        back = http.get(onwards.headers["location"])  # the authorization server approves at once
        done = http.get(back.headers["location"])  # the proxy's callback
        answer = parse_qs(urlsplit(done.headers["location"]).query)
        assert done.headers["location"].startswith(REDIRECT) and answer["state"] == ["st"] and answer["iss"] == [origin]
        form = {"grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": REDIRECT,
                "client_id": client_id}
        tokens = http.post(meta["token_endpoint"], data={**form, "code_verifier": verifier}).json()
        assert http.post(meta["token_endpoint"], data={**form, "code_verifier": verifier}).status_code == 400  # used
        assert host.server.verify(tokens["access_token"])["client_id"] == STATIC
        refreshed = http.post(meta["token_endpoint"], data={"grant_type": "refresh_token", "client_id": client_id,
                                                           "refresh_token": tokens["refresh_token"]}).json()
        assert refreshed["access_token"] != tokens["access_token"]
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        served = http.post(url, json=init, headers={"Authorization": f"Bearer {refreshed['access_token']}",
                                                    "Accept": "application/json, text/event-stream"})
        assert served.status_code == 200


def test_a_denied_consent_goes_back_with_access_denied(proxy: tuple[AuthServerHost, str]) -> None:
    host, url = proxy
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    with httpx.Client(timeout=10, follow_redirects=False) as http:
        client_id = http.post(origin + "/register", json={"redirect_uris": [REDIRECT]}).json()["client_id"]
        query = urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s2",
                           "code_challenge": pkce_s256("v" * 43), "code_challenge_method": "S256"})
        page = http.get(origin + "/authorize?" + query)
        request_id = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
        mark = host.server.last_seq
        denied = http.post(origin + "/consent", data={"request": request_id, "approve": "no"})
        assert denied.status_code == 302
        assert parse_qs(urlsplit(denied.headers["location"]).query)["error"] == ["access_denied"]
        assert not host.server.requests(mark)  # nothing reached the authorization server
        assert http.post(origin + "/consent", data={"request": request_id, "approve": "yes"}).status_code == 400
