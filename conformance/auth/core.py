"""The suite's authorization server, sans I/O: requests in, responses out, every request logged.

:class:`AuthorizationServer` is fed one parsed HTTP request (:class:`Request`) and answers one
:class:`Response`; :mod:`conformance.auth.server` hosts it on a loopback port.  It is an OAuth 2.1
authorization server for tests: ``/authorize`` approves at once (302 to the redirect URI with
``code``, ``state`` and RFC 9207 ``iss``), ``/token`` verifies PKCE S256 (authorization_code and
refresh_token grants), ``/register`` does RFC 7591 dynamic registration, client ID metadata
document URLs are taken as client ids, ``/introspect`` is RFC 7662, ``/jwks`` the public keys,
and RFC 8414 metadata (and the OpenID Connect variant) is served at the well-known paths of its
issuer.  ``/upstream`` (and below it) stands for an upstream API an MCP server may call: it answers
every request 200 and logs it like the rest, so that what a server sends upstream (its own
credentials, or the client's token passed through) can be read from the log.  Access tokens are JWTs (RFC 9068 shape) signed with a key generated per run (ES256,
through PyJWT and cryptography); :meth:`AuthorizationServer.mint` makes one directly, for any
audience, issuer, scope, expiry and signing key (also a foreign one, not in the JWKS).

Every behaviour can be switched per scenario through :class:`AuthConfig` (PKCE methods not
advertised, a wrong ``iss``, a metadata issuer that differs, registration refused, fewer scopes
granted, ...), because checks need it to misbehave on purpose.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from conformance.wire.oauth import OAUTH_AS_WELL_KNOWN, OIDC_WELL_KNOWN, authorization_server_metadata, pkce_s256

__all__ = ["AuthConfig", "AuthorizationServer", "Request", "Response", "LoggedRequest", "Client", "SigningKey",
           "new_signing_key", "UPSTREAM_PATH"]

UPSTREAM_PATH = "/upstream"


@dataclass(frozen=True)
class AuthConfig:
    """How the authorization server behaves (every switch for a scenario that needs it wrong)."""

    pkce_methods: tuple[str, ...] | None = ("S256",)  # None: code_challenge_methods_supported left out
    require_pkce: bool = True  # /token refuses a code issued without a challenge
    iss_in_response: str = "correct"  # correct | wrong | omit | normalized (RFC 9207 iss on /authorize)
    iss_parameter_supported: bool = True  # authorization_response_iss_parameter_supported advertised
    metadata_issuer: str | None = None  # the issuer written in the metadata (None: the real one)
    registration: bool = True  # registration_endpoint advertised
    registration_error: str | None = None  # /register answers 400 with this error (e.g. invalid_redirect_uri)
    cimd: bool = True  # client_id_metadata_document_supported advertised; URL client ids accepted
    scopes_supported: tuple[str, ...] | None = ("mcp:read", "mcp:write")
    granted_scope: str | None = None  # the scope put in issued tokens (None: what was asked)
    token_lifetime: int = 3600
    refresh_tokens: bool = True
    audience: str | None = None  # aud of issued tokens (None: the request's resource)
    clients: Mapping[str, str | None] = field(default_factory=dict)  # pre-registered: client_id -> secret
    state_in_response: str = "echo"  # echo | wrong | omit (the state of the /authorize redirect)
    #: which well-known forms answer with the metadata (the others 404): "oauth-insert",
    #: "oauth-append", "oidc-insert", "oidc-append" (for an issuer without a path, insert = append)
    metadata_forms: tuple[str, ...] = ("oauth-insert", "oauth-append", "oidc-insert", "oidc-append")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-cased names
    body: bytes = b""


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, doc: Any, headers: Mapping[str, str] | None = None) -> "Response":
        return cls(status, json.dumps(doc).encode(), {"content-type": "application/json", "cache-control": "no-store",
                                                      **(headers or {})})


@dataclass(frozen=True)
class LoggedRequest:
    """One request the authorization server received, in order (for transcripts)."""

    seq: int
    time: float
    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: str
    status: int

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "method": self.method, "path": self.path, "query": self.query,
                "headers": dict(self.headers), "body": self.body, "status": self.status}


@dataclass
class Client:
    client_id: str
    secret: str | None = None
    redirect_uris: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: Any  # a cryptography private key
    jwk: Mapping[str, Any]  # its public JWK


def new_signing_key(kid: str | None = None) -> SigningKey:
    """A fresh P-256 key pair (ES256) and its public JWK."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.algorithms import ECAlgorithm

    private = ec.generate_private_key(ec.SECP256R1())
    kid = kid or secrets.token_hex(8)
    jwk = json.loads(ECAlgorithm.to_jwk(private.public_key()))
    jwk.update({"kid": kid, "use": "sig", "alg": "ES256"})
    return SigningKey(kid, private, jwk)


def _b64url_json(segment: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


class AuthorizationServer:
    """The authorization server's logic for one run.  ``issuer`` is its URL (set once the host
    knows its port); thread-safe (the host runs in a thread of its own, scenarios mint tokens
    from the suite's)."""

    def __init__(self, issuer: str = "http://127.0.0.1", config: AuthConfig | None = None) -> None:
        self.issuer = issuer.rstrip("/")
        self.config = config or AuthConfig()
        self.key = new_signing_key()
        self.foreign_key = new_signing_key()  # never published: tokens signed with it are forgeries
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._clients: dict[str, Client] = {cid: Client(cid, sec) for cid, sec in self.config.clients.items()}
        self._codes: dict[str, dict[str, Any]] = {}
        self._refresh: dict[str, dict[str, Any]] = {}
        self._refresh_issued: set[str] = set()  # every refresh token handed out (used ones too)
        #: called with every logged request, in order, as it is logged (a harness that merges this
        #: log with another server's)
        self.listener: Any = None

    # -- configuration -------------------------------------------------------------------------

    def configure(self, **changes: Any) -> AuthConfig:
        """Switch behaviours (see :class:`AuthConfig`); returns the previous configuration."""
        with self._lock:
            previous = self.config
            self.config = replace(self.config, **changes)
            for cid, sec in self.config.clients.items():
                self._clients.setdefault(cid, Client(cid, sec))
            return previous

    @property
    def jwks_url(self) -> str:
        return self.issuer + "/jwks"

    @property
    def upstream_url(self) -> str:
        """The upstream API an MCP server under test may be told to call (``{upstream}``)."""
        return self.issuer + UPSTREAM_PATH

    def upstream_requests(self, since: int = 0) -> list[LoggedRequest]:
        """The logged requests to the upstream API after sequence number ``since``."""
        path = urlsplit(self.issuer).path.rstrip("/") + UPSTREAM_PATH
        return [r for r in self.requests(since) if r.path == path or r.path.startswith(path + "/")]

    def jwks(self) -> dict[str, Any]:
        return {"keys": [dict(self.key.jwk)]}

    def metadata(self, *, oidc: bool = False) -> dict[str, Any]:
        c = self.config
        return authorization_server_metadata(
            c.metadata_issuer or self.issuer, pkce_methods=c.pkce_methods, registration=c.registration, cimd=c.cimd,
            iss_parameter_supported=c.iss_parameter_supported, scopes_supported=c.scopes_supported, oidc=oidc,
            endpoints_base=self.issuer)

    # -- tokens ---------------------------------------------------------------------------------

    def mint(self, *, audience: str | list[str] | None, issuer: str | None = None, scope: str | None = None,
             expires_in: float = 3600, subject: str = "mcp-conformance-user", client_id: str = "mcp-conformance",
             key: str | SigningKey = "own", claims: Mapping[str, Any] | None = None, kid: str | None = None) -> str:
        """An access token (a JWT, RFC 9068 shape).  ``audience=None`` leaves ``aud`` out;
        ``expires_in`` may be negative (expired); ``key``: ``"own"`` (published in the JWKS),
        ``"foreign"`` (never published) or a :class:`SigningKey`; ``issuer`` defaults to ours."""
        import jwt

        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": issuer if issuer is not None else self.issuer,
            "sub": subject,
            "client_id": client_id,
            "iat": now,
            "nbf": now - 5,
            "exp": now + int(expires_in),
            "jti": secrets.token_hex(12),
        }
        if audience is not None:
            payload["aud"] = audience
        if scope is not None:
            payload["scope"] = scope
        payload.update(claims or {})
        signing = self.key if key == "own" else self.foreign_key if key == "foreign" else key
        assert isinstance(signing, SigningKey)
        return jwt.encode(payload, signing.private, algorithm="ES256",
                          headers={"kid": kid or signing.kid, "typ": "at+jwt"})

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a token we issued and that is still valid (signature, issuer, expiry),
        else None.  The audience is not checked here (introspection reports it)."""
        import jwt

        try:
            return jwt.decode(token, self.key.private.public_key(), algorithms=["ES256"], issuer=self.issuer,
                              options={"verify_aud": False, "require": ["exp", "iss"]})
        except jwt.PyJWTError:
            return None

    # -- requests -------------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        """Answer one request, and log it (in arrival order)."""
        try:
            response = self._route(request)
        except Exception as exc:  # our own bug: a 500 naming it, never a hang
            response = Response.json(500, {"error": "server_error", "error_description": f"{type(exc).__name__}: {exc}"})
        with self._lock:
            entry = LoggedRequest(len(self.log) + 1, time.time(), request.method, request.path, request.query,
                                  dict(request.headers), request.body.decode("utf-8", "replace"), response.status)
            self.log.append(entry)
            if self.listener is not None:
                self.listener(entry)
        return response

    def issued_credentials(self) -> set[str]:
        """The client IDs and secrets this server knows (registered or pre-registered; not client ID
        metadata document URLs, which are portable) and every refresh token it issued: what
        another authorization server must never be shown."""
        with self._lock:
            out = {cid for cid in self._clients if not cid.startswith(("https://", "http://"))}
            out.update(c.secret for c in self._clients.values() if c.secret)
            out.update(self._refresh_issued)
        return out

    @property
    def last_seq(self) -> int:
        """The sequence number of the last logged request (0: none yet): a mark for :meth:`requests`."""
        with self._lock:
            return self.log[-1].seq if self.log else 0

    def requests(self, since: int = 0) -> list[LoggedRequest]:
        """The logged requests after sequence number ``since``."""
        with self._lock:
            return [r for r in self.log if r.seq > since]

    def _route(self, r: Request) -> Response:
        issuer_path = urlsplit(self.issuer).path.rstrip("/")
        path = r.path
        forms = self.config.metadata_forms
        if r.method == "GET" and path in (OAUTH_AS_WELL_KNOWN + issuer_path, issuer_path + OAUTH_AS_WELL_KNOWN):
            if ("oauth-insert" in forms and path == OAUTH_AS_WELL_KNOWN + issuer_path) or \
                    ("oauth-append" in forms and path == issuer_path + OAUTH_AS_WELL_KNOWN):
                return Response.json(200, self.metadata())
        if r.method == "GET" and path in (OIDC_WELL_KNOWN + issuer_path, issuer_path + OIDC_WELL_KNOWN):
            if ("oidc-insert" in forms and path == OIDC_WELL_KNOWN + issuer_path) or \
                    ("oidc-append" in forms and path == issuer_path + OIDC_WELL_KNOWN):
                return Response.json(200, self.metadata(oidc=True))
            return Response.json(404, {"error": "not_found", "error_description": f"{r.method} {path}"})
        rel = path[len(issuer_path):] if issuer_path and path.startswith(issuer_path) else path
        if r.method == "GET" and rel == "/jwks":
            return Response.json(200, self.jwks())
        if r.method == "GET" and rel == "/authorize":
            return self._authorize(r)
        if r.method == "POST" and rel == "/token":
            return self._token(r)
        if r.method == "POST" and rel == "/register":
            return self._register(r)
        if r.method == "POST" and rel == "/introspect":
            return self._introspect(r)
        if rel == UPSTREAM_PATH or rel.startswith(UPSTREAM_PATH + "/"):
            return Response.json(200, {"service": "mcp-conformance upstream API", "method": r.method, "path": path})
        return Response.json(404, {"error": "not_found", "error_description": f"{r.method} {path}"})

    def _client(self, client_id: str) -> Client | None:
        with self._lock:
            known = self._clients.get(client_id)
        if known is not None:
            return known
        if self.config.cimd and client_id.startswith(("https://", "http://")) and urlsplit(client_id).path not in ("", "/"):
            # a client ID metadata document URL: accepted as the client id (the document is not
            # fetched: the suite reaches no outside host)
            client = Client(client_id)
            with self._lock:
                self._clients[client_id] = client
            return client
        return None

    def _authorize(self, r: Request) -> Response:
        q = {k: v[0] for k, v in parse_qs(r.query, keep_blank_values=True).items()}
        redirect_uri = q.get("redirect_uri")
        client = self._client(q.get("client_id", ""))
        if client is None or not redirect_uri:
            return Response.json(400, {"error": "invalid_request", "error_description": "unknown client_id or no redirect_uri"})
        if client.redirect_uris and redirect_uri not in client.redirect_uris:
            return Response.json(400, {"error": "invalid_request", "error_description": "redirect_uri is not registered"})
        params: dict[str, str] = {}
        if q.get("response_type") != "code":
            params["error"] = "unsupported_response_type"
        elif self.config.require_pkce and (not q.get("code_challenge") or q.get("code_challenge_method", "plain") != "S256"):
            params["error"] = "invalid_request"
            params["error_description"] = "PKCE with S256 is required"
        else:
            code = secrets.token_urlsafe(24)
            with self._lock:
                self._codes[code] = {"client_id": client.client_id, "redirect_uri": redirect_uri,
                                     "challenge": q.get("code_challenge"), "method": q.get("code_challenge_method"),
                                     "scope": q.get("scope"), "resource": q.get("resource"), "time": time.time()}
            params["code"] = code
        state = self.config.state_in_response
        if "state" in q and state == "echo":
            params["state"] = q["state"]
        elif state == "wrong":
            params["state"] = "not-the-state-" + secrets.token_hex(6)
        iss = {"correct": self.issuer, "wrong": "https://wrong-issuer.invalid", "omit": None,
               "normalized": self.issuer + "/"}[self.config.iss_in_response]
        if iss is not None:
            params["iss"] = iss
        parts = urlsplit(redirect_uri)
        query = parts.query + ("&" if parts.query else "") + urlencode(params)
        return Response(302, b"", {"location": urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))})

    def _form(self, r: Request) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(r.body.decode("utf-8", "replace"), keep_blank_values=True).items()}

    def _client_auth(self, r: Request, form: Mapping[str, str]) -> tuple[str | None, Response | None]:
        """The authenticated (or public) client id of a token request, or the 401 refusing it."""
        cid, secret = form.get("client_id"), form.get("client_secret")
        auth = r.headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            try:
                from urllib.parse import unquote

                raw = base64.b64decode(auth[6:].strip()).decode("utf-8")
                user, _, pw = raw.partition(":")
                cid, secret = unquote(user), unquote(pw)
            except (ValueError, UnicodeDecodeError):
                return None, Response.json(401, {"error": "invalid_client"})
        client = self._client(cid or "")
        if client is None or (client.secret is not None and secret != client.secret):
            return None, Response.json(401, {"error": "invalid_client"})
        return client.client_id, None

    def _token(self, r: Request) -> Response:
        form = self._form(r)
        cid, refused = self._client_auth(r, form)
        if refused is not None:
            return refused
        grant = form.get("grant_type")
        if grant == "authorization_code":
            with self._lock:
                entry = self._codes.pop(form.get("code", ""), None)
            if entry is None or entry["client_id"] != cid or entry["redirect_uri"] != form.get("redirect_uri"):
                return Response.json(400, {"error": "invalid_grant"})
            if entry["challenge"] is not None or self.config.require_pkce:
                verifier = form.get("code_verifier")
                if not verifier or entry["challenge"] is None or pkce_s256(verifier) != entry["challenge"]:
                    return Response.json(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
            scope, resource = entry["scope"], form.get("resource") or entry["resource"]
        elif grant == "refresh_token":
            with self._lock:
                entry = self._refresh.pop(form.get("refresh_token", ""), None)  # rotated: used once
            if entry is None or entry["client_id"] != cid:
                return Response.json(400, {"error": "invalid_grant"})
            scope, resource = form.get("scope") or entry["scope"], form.get("resource") or entry["resource"]
        else:
            return Response.json(400, {"error": "unsupported_grant_type"})
        return Response.json(200, self._issue(cid or "", scope, resource))

    def _issue(self, client_id: str, scope: str | None, resource: str | None) -> dict[str, Any]:
        c = self.config
        granted = c.granted_scope if c.granted_scope is not None else scope
        token = self.mint(audience=c.audience or resource, scope=granted, expires_in=c.token_lifetime, client_id=client_id)
        out: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "expires_in": c.token_lifetime}
        if granted:
            out["scope"] = granted
        if c.refresh_tokens:
            rt = secrets.token_urlsafe(24)
            with self._lock:
                self._refresh[rt] = {"client_id": client_id, "scope": granted, "resource": resource}
                self._refresh_issued.add(rt)
            out["refresh_token"] = rt
        return out

    def _register(self, r: Request) -> Response:
        if not self.config.registration:
            return Response.json(404, {"error": "not_found"})
        if self.config.registration_error:
            return Response.json(400, {"error": self.config.registration_error,
                                       "error_description": "registration refused (configured)"})
        try:
            doc = json.loads(r.body or b"{}")
        except ValueError:
            return Response.json(400, {"error": "invalid_client_metadata", "error_description": "body is not JSON"})
        if not isinstance(doc, dict):
            return Response.json(400, {"error": "invalid_client_metadata"})
        uris = doc.get("redirect_uris")
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            return Response.json(400, {"error": "invalid_redirect_uri"})
        method = doc.get("token_endpoint_auth_method", "client_secret_basic")
        secret = None if method == "none" else secrets.token_urlsafe(24)
        client = Client("client-" + secrets.token_hex(8), secret, tuple(uris), doc)
        with self._lock:
            self._clients[client.client_id] = client
        out = {**doc, "client_id": client.client_id, "client_id_issued_at": int(time.time()),
               "token_endpoint_auth_method": method}
        if secret is not None:
            out["client_secret"] = secret
            out["client_secret_expires_at"] = 0
        return Response.json(201, out)

    def _introspect(self, r: Request) -> Response:
        form = self._form(r)
        claims = self.verify(form.get("token", ""))
        if claims is None:
            return Response.json(200, {"active": False})
        return Response.json(200, {"active": True, "token_type": "Bearer", **claims})
