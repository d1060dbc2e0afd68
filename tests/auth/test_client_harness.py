"""The pieces of the client authorization harness that need no client: the authorization
server's switches the client scenarios use (state in the redirect, which metadata forms answer,
the request listener) and the headless browser (conformance/auth/browser.py)."""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from conformance.auth.core import AuthConfig, AuthorizationServer, Request
from conformance.auth.browser import visit

REDIRECT = "http://127.0.0.1:9/callback"


def _authorize(server: AuthorizationServer, state: str = "s-1") -> dict[str, list[str]]:
    query = urlencode({"response_type": "code", "client_id": "https://client.example/meta.json", "redirect_uri": REDIRECT,
                       "code_challenge": "c" * 43, "code_challenge_method": "S256", "state": state})
    answer = server.handle(Request("GET", "/authorize", query))
    assert answer.status == 302
    return parse_qs(urlsplit(answer.headers["location"]).query)


def test_state_in_the_redirect_echoed_wrong_or_left_out() -> None:
    server = AuthorizationServer("http://127.0.0.1:1")
    assert _authorize(server)["state"] == ["s-1"]
    server.configure(state_in_response="wrong")
    wrong = _authorize(server)["state"]
    assert wrong != ["s-1"] and wrong[0]
    server.configure(state_in_response="omit")
    assert "state" not in _authorize(server)


def test_only_the_chosen_metadata_forms_answer() -> None:
    server = AuthorizationServer("http://127.0.0.1:1/tenant1", AuthConfig(metadata_forms=("oidc-append",)))
    status = {path: server.handle(Request("GET", path)).status for path in (
        "/.well-known/oauth-authorization-server/tenant1", "/tenant1/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration")}
    assert status == {"/.well-known/oauth-authorization-server/tenant1": 404,
                      "/tenant1/.well-known/oauth-authorization-server": 404,
                      "/.well-known/openid-configuration/tenant1": 404,
                      "/tenant1/.well-known/openid-configuration": 200}


def test_the_listener_sees_every_request_in_order() -> None:
    server = AuthorizationServer("http://127.0.0.1:1")
    seen: list[tuple[int, str]] = []
    server.listener = lambda entry: seen.append((entry.seq, entry.path))
    server.handle(Request("GET", "/.well-known/oauth-authorization-server"))
    server.handle(Request("POST", "/token", body=b"grant_type=x"))
    assert seen == [(1, "/.well-known/oauth-authorization-server"), (2, "/token")]


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []
    location = ""
    called_back = threading.Event()

    def do_GET(self) -> None:  # noqa: N802
        type(self).hits.append(self.path)
        if self.path.startswith("/callback"):
            type(self).called_back.set()
        if self.path.startswith("/authorize"):
            self.send_response(302)
            self.send_header("Location", type(self).location)
        else:
            self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Handler", (_Recorder,), {"hits": [], "location": "", "called_back": threading.Event()})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", handler
    finally:
        srv.shutdown()
        srv.server_close()


def test_the_browser_follows_the_redirect_to_a_loopback_callback(site: tuple[str, type[_Recorder]], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    base, handler = site
    handler.location = f"{base}/callback?code=c1&state=s1"
    monkeypatch.setenv("MCP_CONFORMANCE_BROWSER_LOG", str(tmp_path / "log"))
    assert visit(f"{base}/authorize?x=1") == 0
    assert handler.hits == ["/authorize?x=1", "/callback?code=c1&state=s1"]
    log = (tmp_path / "log").read_text().splitlines()
    assert len(log) == 2 and log[1].split(" -> ")[1].startswith("200")


def test_the_browser_never_follows_a_redirect_off_the_machine(site: tuple[str, type[_Recorder]]) -> None:
    base, handler = site
    handler.location = "http://client.example/callback?code=c1"
    assert visit(f"{base}/authorize") == 3
    assert handler.hits == ["/authorize"]
    assert visit("file:///etc/passwd") == 2


def test_the_browser_command_returns_at_once(site: tuple[str, type[_Recorder]], tmp_path: Path) -> None:
    """As a BROWSER command it returns before the visit is done (a client that waits for its browser
    command is not held) and the visit still happens (the child stays in the caller's process group)."""
    import subprocess
    import sys

    base, handler = site
    handler.location = f"{base}/callback?code=c2"
    log = tmp_path / "log"
    env = {**os.environ, "MCP_CONFORMANCE_BROWSER_LOG": str(log)}
    script = Path(__file__).resolve().parents[2] / "conformance" / "auth" / "browser.py"
    done = subprocess.run([sys.executable, str(script), f"{base}/authorize"], env=env, timeout=10)
    assert done.returncode == 0
    assert handler.called_back.wait(10)  # the detached visit ends at the callback
    assert handler.hits == ["/authorize", "/callback?code=c2"]
