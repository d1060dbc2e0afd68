"""The reference server as an MCP proxy with a static client id (``--auth --proxy-client-id ID``).

Some MCP servers front a third-party authorization server at which they hold one client id of
their own (a "static" one), and let MCP clients register with them dynamically.  The pages warn
of the confused deputy this makes: "MCP proxy servers using static client IDs **MUST** obtain user
consent for each dynamically registered client before forwarding to third-party authorization
servers".  In this mode the server's origin is the authorization server its protected resource
metadata names, and:

* ``/.well-known/oauth-authorization-server``: RFC 8414 metadata of the origin;
* ``/register``: RFC 7591 registration, here (client ids of the proxy's own);
* ``/authorize``: a registered client, one of its redirect URIs, PKCE S256 -- then a consent page
  naming the client and where its answer goes (200, HTML), never a redirect onwards;
* ``/consent`` (POST, the page's form, ``approve=yes``): only now the request goes on to the
  third-party authorization server, with the static client id, the proxy's ``/callback`` and a
  PKCE challenge of the proxy's own;
* ``/callback``: the third party's code is redeemed (static client id and secret); the client is
  sent back to its redirect URI with a code of the proxy's (``iss`` = the origin);
* ``/token``: that code for the third party's tokens (the client's PKCE verifier checked), and
  refresh tokens relayed with the static client's credentials.
"""

from __future__ import annotations

import html
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from conformance.wire.oauth import pkce_s256

__all__ = ["OAuthProxy", "PROXY_PATHS"]

PROXY_PATHS = ("/.well-known/oauth-authorization-server", "/authorize", "/token", "/register", "/consent", "/callback")
PENDING_TTL = 600.0


def _with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = parts.query + ("&" if parts.query else "") + urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


class OAuthProxy:
    """The proxy's authorization server logic; HTTP is the caller's (``AuthGuard.origin_as``).
    Every method answers ``(status, headers, body)``; the upstream calls are given to it."""

    def __init__(self, client_id: str, client_secret: str | None) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.clients: dict[str, dict[str, Any]] = {}  # registered here: client_id -> metadata
        self._pending: dict[str, dict[str, Any]] = {}  # consent asked: request id -> the client's request
        self._upstream_flows: dict[str, dict[str, Any]] = {}  # sent upstream: state -> (request, verifier)
        self._codes: dict[str, dict[str, Any]] = {}  # the proxy's codes -> the client's request and tokens

    # -- registration -----------------------------------------------------------------------------

    def register(self, doc: Any) -> tuple[int, dict[str, Any]]:
        uris = doc.get("redirect_uris") if isinstance(doc, dict) else None
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            return 400, {"error": "invalid_redirect_uri", "error_description": "redirect_uris: a non-empty list of URIs"}
        cid = "proxy-client-" + secrets.token_hex(8)
        entry = {"client_id": cid, "client_id_issued_at": int(time.time()), "redirect_uris": list(uris),
                 "client_name": str(doc.get("client_name") or cid), "token_endpoint_auth_method": "none",
                 "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}
        self.clients[cid] = entry
        return 201, entry

    # -- authorization ----------------------------------------------------------------------------

    def refusal(self, q: dict[str, str]) -> str | None:
        client = self.clients.get(q.get("client_id", ""))
        if client is None:
            return "unknown client_id (register at /register)"
        if q.get("redirect_uri") not in client["redirect_uris"]:
            return "redirect_uri is not one the client registered"
        if not q.get("code_challenge") or q.get("code_challenge_method") != "S256":
            return "PKCE with S256 is required"
        if q.get("response_type") != "code":
            return "response_type must be code"
        return None

    def consent_needed(self, q: dict[str, str]) -> bool:
        """Whether the user is asked before the request goes on to the third party: always (a
        broken proxy replaces this step)."""
        return True

    def authorize(self, query: str, base: str, upstream: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        q = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
        refusal = self.refusal(q)
        if refusal is not None:
            return _json(400, {"error": "invalid_request", "error_description": refusal})
        if not self.consent_needed(q):
            return self._onwards(q, base, upstream)
        self._expire()
        request_id = secrets.token_urlsafe(18)
        self._pending[request_id] = {"query": q, "time": time.monotonic()}
        client = self.clients[q["client_id"]]
        back = urlsplit(q["redirect_uri"])
        page = (
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Allow access?</title></head><body>"
            f"<h1>Allow {html.escape(client['client_name'])}?</h1>"
            f"<p>The application <b>{html.escape(client['client_name'])}</b> ({html.escape(client['client_id'])}) asks "
            f"to use this MCP server on your behalf. Its answer goes to <b>{html.escape(back.netloc)}</b>. If you "
            f"allow it, you sign in at {html.escape(str(upstream.get('issuer', 'the authorization server')))}.</p>"
            "<form method=\"post\" action=\"/consent\">"
            f"<input type=\"hidden\" name=\"request\" value=\"{request_id}\">"
            "<button name=\"approve\" value=\"yes\">Allow</button> <button name=\"approve\" value=\"no\">Deny</button>"
            "</form></body></html>"
        ).encode()
        return 200, [("content-type", "text/html; charset=utf-8"), ("cache-control", "no-store")], page

    def consent(self, body: bytes, base: str, upstream: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        pending = self._pending.pop(form.get("request", ""), None)
        if pending is None:
            return _json(400, {"error": "invalid_request", "error_description": "no such consent request"})
        q = pending["query"]
        if form.get("approve") != "yes":
            params = {"error": "access_denied", "iss": base, **({"state": q["state"]} if "state" in q else {})}
            return 302, [("location", _with_query(q["redirect_uri"], params))], b""
        return self._onwards(q, base, upstream)

    def _onwards(self, q: dict[str, str], base: str, upstream: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        """The request goes on to the third party: the static client id, the proxy's callback."""
        state, verifier = secrets.token_urlsafe(18), secrets.token_urlsafe(48)
        self._upstream_flows[state] = {"query": q, "verifier": verifier, "time": time.monotonic()}
        params = {"response_type": "code", "client_id": self.client_id, "redirect_uri": base + "/callback",
                  "state": state, "code_challenge": pkce_s256(verifier), "code_challenge_method": "S256"}
        for key in ("scope", "resource"):
            if key in q:
                params[key] = q[key]
        return 302, [("location", _with_query(str(upstream.get("authorization_endpoint")), params))], b""

    def callback_request(self, query: str, base: str) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        """The flow a callback belongs to, and the token request to redeem its code upstream."""
        q = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
        flow = self._upstream_flows.pop(q.get("state", ""), None)
        if flow is None or "code" not in q:
            return flow, None
        form = {"grant_type": "authorization_code", "code": q["code"], "redirect_uri": base + "/callback",
                "code_verifier": flow["verifier"], **self.credentials()}
        if "resource" in flow["query"]:
            form["resource"] = flow["query"]["resource"]
        return flow, form

    def callback_answer(self, flow: dict[str, Any] | None, status: int, tokens: Any, base: str,
                        upstream_error: str | None = None) -> tuple[int, list[tuple[str, str]], bytes]:
        if flow is None:
            return _json(400, {"error": "invalid_request", "error_description": "unknown state"})
        q = flow["query"]
        extra = {"iss": base, **({"state": q["state"]} if "state" in q else {})}
        if status != 200 or not isinstance(tokens, dict) or "access_token" not in tokens:
            error = upstream_error or "server_error"
            return 302, [("location", _with_query(q["redirect_uri"], {"error": error, **extra}))], b""
        code = secrets.token_urlsafe(24)
        self._codes[code] = {"query": q, "tokens": tokens, "time": time.monotonic()}
        return 302, [("location", _with_query(q["redirect_uri"], {"code": code, **extra}))], b""

    def redeem(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """A proxy code for the third party's tokens."""
        entry = self._codes.pop(form.get("code", ""), None)
        if entry is None:
            return 400, {"error": "invalid_grant"}
        q = entry["query"]
        verifier = form.get("code_verifier") or ""
        if (form.get("client_id") != q["client_id"] or form.get("redirect_uri") != q["redirect_uri"]
                or not verifier or pkce_s256(verifier) != q.get("code_challenge")):
            return 400, {"error": "invalid_grant", "error_description": "client, redirect_uri or PKCE verifier mismatch"}
        return 200, entry["tokens"]

    def credentials(self) -> dict[str, str]:
        return {"client_id": self.client_id, **({"client_secret": self.client_secret} if self.client_secret else {})}

    def _expire(self) -> None:
        now = time.monotonic()
        for table in (self._pending, self._upstream_flows, self._codes):
            for key in [k for k, v in table.items() if now - v["time"] > PENDING_TTL]:
                del table[key]


def _json(status: int, doc: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    import json

    return status, [("content-type", "application/json"), ("cache-control", "no-store")], json.dumps(doc).encode()
