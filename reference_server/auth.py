"""The reference server as an OAuth 2.1 resource server (``mcp-reference-server --auth``).

A strict one: every request to an MCP endpoint (streamable HTTP, the legacy SSE stream and its
message endpoint) needs ``Authorization: Bearer <JWT>`` -- signed by a key of the authorization
server's JWKS, issued by it (``iss``), for this server (``aud``, compared in canonical form),
unexpired, with the scopes the server requires; a token anywhere else (the query string) is never
read.  A request without a token, or with one that fails, is answered 401 with a Bearer challenge
(``resource_metadata``, ``scope``, and ``error="invalid_token"`` when a token was given); a token
without the scopes, 403 with ``error="insufficient_scope"``.  The protected resource metadata
(RFC 9728) is served at the well-known URIs (path form and root).  Sessions are no credential:
the token is checked on every request.

Keys come from the JWKS URL (fetched in a worker thread by PyJWT's ``PyJWKClient``, cached; an
unknown ``kid`` makes it fetch again).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from conformance.wire.oauth import (
    PRM_WELL_KNOWN,
    bearer_challenge,
    bearer_token_of,
    canonical_resource,
    protected_resource_metadata,
)

__all__ = ["AuthSettings", "AuthGuard"]

Send = Callable[[dict[str, Any]], Awaitable[None]]


_CONTEXT_KEY = "mcp_reference.authorization_context"  # in the ASGI scope of a request let through


@dataclass
class AuthSettings:
    issuer: str
    resource: str | None = None  # None: the server's own URL, once it is known
    jwks_url: str | None = None  # None: the jwks_uri of the issuer's RFC 8414 metadata
    scopes: tuple[str, ...] = ("mcp:read",)  # required on every request (and scopes_supported)
    implies: dict[str, tuple[str, ...]] = field(default_factory=dict)  # broader scope -> the narrower ones it grants
    # an MCP proxy with a static client id at the issuer (--proxy-client-id): reference_server.oauth_proxy
    proxy_client_id: str | None = None
    proxy_client_secret: str | None = None
    algorithms: tuple[str, ...] = ("ES256", "RS256", "PS256", "EdDSA")
    leeway: int = 0
    extra_metadata: dict[str, Any] = field(default_factory=dict)


ORIGIN_AS = ("/.well-known/oauth-authorization-server", "/authorize", "/token", "/register")


class TokenRejected(Exception):
    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status, self.error, self.description = status, error, description


class AuthGuard:
    """Looks at every HTTP request before the MCP front-end does (see ``HttpFront``)."""

    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings
        self._jwks: Any = None
        self._upstream: dict[str, Any] | None = None  # the issuer's metadata (2025-03-26 origin front)
        self._clients: dict[str, tuple[str, ...]] = {}  # registered through the origin: client_id -> redirect URIs
        self.proxy: Any = None  # reference_server.oauth_proxy.OAuthProxy (--proxy-client-id), or None
        if settings.proxy_client_id:
            from reference_server.oauth_proxy import OAuthProxy

            self.proxy = OAuthProxy(settings.proxy_client_id, settings.proxy_client_secret)

    # -- metadata ---------------------------------------------------------------------------------

    @property
    def resource(self) -> str:
        assert self.settings.resource, "the resource is set once the server's URL is known"
        return self.settings.resource

    def metadata_paths(self) -> tuple[str, ...]:
        path = urlsplit(self.resource).path.rstrip("/")
        return (PRM_WELL_KNOWN + path, PRM_WELL_KNOWN) if path else (PRM_WELL_KNOWN,)

    def metadata_url(self, base: str) -> str:
        return base.rstrip("/") + self.metadata_paths()[0]

    def metadata(self) -> dict[str, Any]:
        servers = [self.settings.issuer]
        if self.proxy is not None:  # the proxy's origin is the authorization server its clients see
            parts = urlsplit(self.resource)
            servers = [f"{parts.scheme}://{parts.netloc}"]
        return protected_resource_metadata(self.resource, servers,
                                           scopes_supported=list(self.settings.scopes),
                                           extra=self.settings.extra_metadata)

    # -- 2025-03-26: the server's origin is its authorization server ---------------------------------
    # ("MCP servers SHOULD ... implement OAuth 2.0 Authorization Server Metadata"; the base URL is the
    # origin.)  A front of the issuer: RFC 8414 metadata at the origin naming the origin's default
    # endpoints; /register and /token relayed to the issuer; /authorize validated here -- a client
    # registered through /register, one of its redirect URIs ("Servers MUST validate redirect URIs
    # to prevent open redirect vulnerabilities") -- then sent on to the issuer's.

    async def origin_as(self, scope: dict[str, Any], receive: Any, send: Send, headers: dict[str, str]) -> bool:
        """Answer a request to the origin's authorization server endpoints, True; else False."""
        path, method = scope["path"], scope["method"]
        if self.proxy is not None:
            return await self._proxy(scope, receive, send, headers)
        if path not in ORIGIN_AS:
            return False
        base = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
        body = await _read_body(receive) if method == "POST" else b""
        try:
            upstream = await self._upstream_metadata()
            if path == ORIGIN_AS[0] and method == "GET":
                doc = self.as_metadata(base, upstream)
                await _send_json(send, 200 if doc is not None else 404, doc if doc is not None else {"error": "not_found"})
            elif path == "/register" and method == "POST":
                status, answer = await _relay(upstream.get("registration_endpoint"), body,
                                              {"content-type": "application/json"})
                if status in (200, 201) and isinstance(answer, dict) and isinstance(answer.get("client_id"), str):
                    uris = answer.get("redirect_uris")
                    self._clients[answer["client_id"]] = tuple(u for u in uris if isinstance(u, str)) \
                        if isinstance(uris, list) else ()
                await _send_json(send, status, answer)
            elif path == "/authorize" and method == "GET":
                status, location, doc = self.authorize_answer(scope.get("query_string", b"").decode("latin-1"), upstream)
                if location is not None:
                    await _send(send, status, b"", [("location", location)])
                else:
                    await _send_json(send, status, doc)
            elif path == "/token" and method == "POST":
                relayed = {k: v for k, v in headers.items() if k in ("content-type", "authorization", "dpop")}
                status, answer = await _relay(upstream.get("token_endpoint"), body, relayed)
                await _send_json(send, status, answer)
            else:
                await _send(send, 405, b"", [("allow", "GET" if path in (ORIGIN_AS[0], "/authorize") else "POST")])
        except (OSError, ValueError, RuntimeError) as exc:
            await _send_json(send, 502, {"error": "temporarily_unavailable", "error_description": str(exc)[:200]})
        return True

    async def _proxy(self, scope: dict[str, Any], receive: Any, send: Send, headers: dict[str, str]) -> bool:
        """--proxy-client-id: the origin is an authorization server in front of the issuer, where it
        holds one static client id (reference_server.oauth_proxy)."""
        from urllib.parse import urlencode

        from reference_server.oauth_proxy import PROXY_PATHS

        path, method = scope["path"], scope["method"]
        if path not in PROXY_PATHS:
            return False
        proxy = self.proxy
        base = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
        query = scope.get("query_string", b"").decode("latin-1")
        body = await _read_body(receive) if method == "POST" else b""
        form_type = {"content-type": "application/x-www-form-urlencoded"}
        try:
            upstream = await self._upstream_metadata()
            if path == PROXY_PATHS[0] and method == "GET":
                await _send_json(send, 200, self.as_metadata(base, upstream))
            elif path == "/register" and method == "POST":
                try:
                    doc = json.loads(body or b"null")
                except ValueError:
                    doc = None
                status, answer = proxy.register(doc)
                await _send_json(send, status, answer)
            elif path == "/authorize" and method == "GET":
                await _send_page(send, proxy.authorize(query, base, upstream))
            elif path == "/consent" and method == "POST":
                await _send_page(send, proxy.consent(body, base, upstream))
            elif path == "/callback" and method == "GET":
                flow, form = proxy.callback_request(query, base)
                status, tokens, error = 400, None, None
                if form is not None:
                    status, tokens = await _relay(upstream.get("token_endpoint"), urlencode(form).encode(), form_type)
                else:
                    error = (parse_qs(query).get("error") or [None])[0]
                await _send_page(send, proxy.callback_answer(flow, status, tokens, base, error))
            elif path == "/token" and method == "POST":
                form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
                if form.get("grant_type") == "authorization_code":
                    status, answer = proxy.redeem(form)
                elif form.get("grant_type") == "refresh_token":  # the third party's, with the static client
                    relayed = {**form, **proxy.credentials()}
                    status, answer = await _relay(upstream.get("token_endpoint"), urlencode(relayed).encode(), form_type)
                else:
                    status, answer = 400, {"error": "unsupported_grant_type"}
                await _send_json(send, status, answer)
            else:
                await _send(send, 405, b"", [("allow", "GET" if path in (PROXY_PATHS[0], "/authorize", "/callback")
                                              else "POST")])
        except (OSError, ValueError, RuntimeError) as exc:
            await _send_json(send, 502, {"error": "temporarily_unavailable", "error_description": str(exc)[:200]})
        return True

    def authorize_answer(self, query: str, upstream: dict[str, Any]) -> tuple[int, str | None, Any]:
        """(status, Location or None, JSON body) of an authorization request: refused here (400,
        never a redirect to a URI the client did not register), else sent on to the issuer's."""
        refusal = self.authorize_refusal({k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()})
        if refusal is not None:
            return 400, None, {"error": "invalid_request", "error_description": refusal}
        target = str(upstream.get("authorization_endpoint"))
        return 302, target + ("&" if "?" in target else "?") + query, None

    def as_metadata(self, base: str, upstream: dict[str, Any]) -> dict[str, Any] | None:
        """RFC 8414 metadata of the origin as authorization server (its endpoints the default paths)."""
        doc = {"issuer": base, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
               "registration_endpoint": f"{base}/register", "response_types_supported": ["code"],
               "code_challenge_methods_supported": ["S256"]}
        for key in ("grant_types_supported", "token_endpoint_auth_methods_supported", "scopes_supported"):
            if key in upstream:
                doc[key] = upstream[key]
        return doc

    def authorize_refusal(self, query: dict[str, str]) -> str | None:
        """Why an authorization request is refused here (None: it goes on): an unknown client, a
        redirect URI it did not register, no PKCE S256."""
        uris = self._clients.get(query.get("client_id", ""))
        if uris is None:
            return "unknown client_id (register at /register)"
        if query.get("redirect_uri") not in uris:
            return "redirect_uri is not one the client registered"
        if not query.get("code_challenge") or query.get("code_challenge_method") != "S256":
            return "PKCE with S256 is required"
        return None

    async def _upstream_metadata(self) -> dict[str, Any]:
        if self._upstream is None:
            import anyio

            self._upstream = await anyio.to_thread.run_sync(_discover_metadata, self.settings.issuer)
        return self._upstream

    # -- the check ---------------------------------------------------------------------------------

    async def guard(self, scope: dict[str, Any], send: Send, headers: dict[str, str], protected: tuple[str, ...]) -> bool:
        """Answer the request here (metadata, 401, 403) and return True, or let it through."""
        path, method = scope["path"], scope["method"]
        if path in self.metadata_paths():
            if method != "GET":
                await _send(send, 405, b"", [("allow", "GET")])
                return True
            await _send(send, 200, json.dumps(self.metadata()).encode(), [("content-type", "application/json")])
            return True
        if path not in protected:
            return False
        token = self.token_of(scope, headers)
        base = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
        if token is None:
            if self.lets_through(scope, headers):
                return False
            await self._challenge(send, 401, base, None, None)
            return True
        try:
            claims = await self.verify(token)
        except TokenRejected as exc:
            await self._challenge(send, exc.status, base, exc.error, exc.description)
            return True
        scope[_CONTEXT_KEY] = self.subject_of(claims)
        return False

    # the authorization context of a request: sessions (and the tasks they hold) are bound to it

    def context_of(self, scope: dict[str, Any]) -> Any:
        """The authorization context the guard let ``scope`` through with (None: no token)."""
        return scope.get(_CONTEXT_KEY)

    def subject_of(self, claims: dict[str, Any]) -> Any:
        """Who a token speaks for: its issuer and subject."""
        return (claims.get("iss"), claims.get("sub"))

    def same_context(self, owner: Any, context: Any) -> bool:
        """Whether a request in ``context`` may use a session bound to ``owner`` ("When an
        authorization context is provided, receivers MUST bind tasks to said context": a session
        holds its tasks, so it is bound to the context that opened it)."""
        return owner == context

    async def verify(self, token: str) -> dict[str, Any]:
        """The token's claims, or :class:`TokenRejected` (401 invalid_token / 403 insufficient_scope)."""
        import anyio
        import jwt

        s = self.settings
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenRejected(401, "invalid_token", f"not a JWT: {exc}") from None
        try:
            key = await anyio.to_thread.run_sync(self._signing_key, token)
            claims = self.decode(token, key)
        except jwt.PyJWTError as exc:
            raise TokenRejected(401, "invalid_token", f"{type(exc).__name__}: {exc} (kid {header.get('kid')!r})") from None
        aud = claims.get("aud")
        if not self.audience_ok(aud):
            raise TokenRejected(401, "invalid_token", f"the token is for {aud!r}, not {self.resource}")
        granted = self.granted(str(claims.get("scope") or "").split())
        missing = [sc for sc in s.scopes if sc not in granted]
        if missing:
            raise TokenRejected(403, "insufficient_scope", f"missing scope(s): {' '.join(missing)}")
        return claims

    # the steps (one method each, so that a broken server can replace exactly one)

    def granted(self, scopes: list[str]) -> set[str]:
        """The scopes a token grants: its own and every narrower one they imply, transitively
        ("Servers MUST account for scope hierarchies, where a broader scope implies narrower ones")."""
        out: set[str] = set()
        todo = list(scopes)
        while todo:
            sc = todo.pop()
            if sc not in out:
                out.add(sc)
                todo.extend(self.settings.implies.get(sc, ()))
        return out

    def token_of(self, scope: dict[str, Any], headers: dict[str, str]) -> str | None:
        """The bearer token: the Authorization header only (never the query string)."""
        return bearer_token_of(headers.get("authorization"))

    def lets_through(self, scope: dict[str, Any], headers: dict[str, str]) -> bool:
        """Whether a request without a token is served anyway: never."""
        return False

    def decode(self, token: str, key: Any) -> dict[str, Any]:
        """Signature, issuer, expiry (and the claims present)."""
        import jwt

        s = self.settings
        return jwt.decode(token, key, algorithms=list(s.algorithms), issuer=s.issuer, leeway=s.leeway,
                          options={"verify_aud": False, "require": ["exp", "iss", "aud"]})

    def audience_ok(self, aud: Any) -> bool:
        """``aud`` (a string or a list) names this server's resource, compared in canonical form
        (upper-case scheme and host accepted)."""
        audiences = aud if isinstance(aud, list) else [aud]
        mine = canonical_resource(self.resource)
        return any(isinstance(a, str) and canonical_resource(a) == mine for a in audiences)

    def challenge(self, status: int, base: str, error: str | None, description: str | None) -> str | None:
        """The WWW-Authenticate value of a 401/403 (None: no header)."""
        return bearer_challenge(error=error, error_description=description,
                                scope=" ".join(self.settings.scopes) or None,
                                resource_metadata=self.metadata_url(base))

    def warm(self) -> None:
        """Fetch the signing keys ahead of the first request (its answer then waits for nothing);
        any trouble is left for the first request to meet."""
        try:
            self._jwks_client().get_signing_keys()
        except Exception:  # noqa: BLE001 - retried (and reported as a 401) on the first token
            pass

    def _jwks_client(self) -> Any:
        from jwt import PyJWKClient

        if self._jwks is None:
            url = self.settings.jwks_url or _discover_jwks(self.settings.issuer)
            self._jwks = PyJWKClient(url, cache_keys=True, lifespan=300, timeout=10)
        return self._jwks

    def _signing_key(self, token: str) -> Any:
        return self._jwks_client().get_signing_key_from_jwt(token).key

    async def _challenge(self, send: Send, status: int, base: str, error: str | None, description: str | None) -> None:
        value = self.challenge(status, base, error, description)
        body = json.dumps({"error": error or "unauthorized",
                           "error_description": description or "an access token is required"}).encode()
        headers = [("content-type", "application/json")]
        if value is not None:
            headers.append(("www-authenticate", value))
        await _send(send, status, body, headers)


def _discover_metadata(issuer: str) -> dict[str, Any]:
    """The issuer's RFC 8414 metadata (or its OpenID Connect discovery)."""
    import urllib.request

    from conformance.wire.oauth import as_metadata_urls

    for url in as_metadata_urls(issuer):
        try:
            with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 (an http(s) URL we were given)
                doc = json.loads(r.read())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict):
            return doc
    raise RuntimeError(f"no metadata for the issuer {issuer}")


def _discover_jwks(issuer: str) -> str:
    """The ``jwks_uri`` of the issuer's RFC 8414 metadata (or its OpenID Connect discovery)."""
    doc = _discover_metadata(issuer)
    if isinstance(doc.get("jwks_uri"), str):
        return doc["jwks_uri"]
    raise RuntimeError(f"no jwks_uri in the metadata of {issuer}")


async def _relay(url: Any, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    """POST ``body`` to the issuer's endpoint ``url``: its status and JSON answer."""
    import anyio

    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise RuntimeError("the issuer has no such endpoint")

    def post() -> tuple[int, Any]:
        import urllib.error
        import urllib.request

        request = urllib.request.Request(url, data=body, headers={**headers, "accept": "application/json"},
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as r:  # noqa: S310 (the issuer's endpoint)
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw or b"null")
        except ValueError:
            return status, {"error": "server_error", "error_description": "the issuer's answer is not JSON"}

    return await anyio.to_thread.run_sync(post)


async def _read_body(receive: Any, limit: int = 1 << 20) -> bytes:
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body") or len(body) > limit:
            return body


async def _send_json(send: Send, status: int, doc: Any) -> None:
    await _send(send, status, json.dumps(doc).encode(), [("content-type", "application/json"), ("cache-control", "no-store")])


async def _send_page(send: Send, answer: tuple[int, list[tuple[str, str]], bytes]) -> None:
    status, headers, body = answer
    await _send(send, status, body, headers)


async def _send(send: Send, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
