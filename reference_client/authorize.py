"""The reference client's OAuth flow over HTTP (the rules are in ``oauth.py``).

:class:`Authorizer` is given to :class:`reference_client.http_links.HttpLink`: the link puts
``Authorization: Bearer`` on every request once a token exists (never a token in a URL), and hands
every 401, and every 403 ``insufficient_scope``, to :meth:`Authorizer.challenge`, then repeats the
request with the new token (a bounded number of times).  The flow:

1. protected resource metadata: the ``resource_metadata`` URL of the challenge, else the
   well-known URIs in order (2025-06-18 and later); on 2025-03-26 the server's origin is the
   authorization base URL, with the default endpoints when it has no metadata;
2. authorization server metadata, in the pages' priority order, issuer-checked, PKCE-checked;
3. a client ID, kept per authorization server (keyed by its ``issuer``): pre-registered
   credentials (bound to one issuer), else a client ID metadata document URL when the server
   supports them, else dynamic registration (``application_type: native``);
4. the authorization request (PKCE S256, ``state``, ``resource``, the selected scopes) through the
   user agent: either ``$BROWSER`` (it opens the URL; the answer comes to a loopback listener on
   127.0.0.1) or, headless, the client fetches the URL itself without following the redirect and
   reads the response from ``Location`` (the official runner's convention);
5. ``iss`` and ``state`` validated, then the token request (``code_verifier``, ``resource``, the
   client's authentication method); a refresh token, when one was issued, is tried first on the
   next 401 from the same authorization server.

Instead of 3-5, a grant without a user (``grants.py``): client credentials (secret or
``private_key_jwt``), a workload JWT, or an ID-JAG from a token exchange at the identity provider,
each with the JWT bearer grant.  Where the authorization server supports DPoP, every token request
carries a proof and a ``DPoP`` token is sent with a fresh proof per request (nonces honoured).

Every wait has a deadline; the listener and the browser process are closed by :meth:`aclose`.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

import anyio
import httpx

from conformance.wire import oauth as wire_oauth

from reference_client import grants, oauth
from reference_client.http_links import http_client
from reference_client.oauth import OAuthRefused

__all__ = ["AuthConfig", "Authorizer", "RUNNER_CIMD_URL", "OAuthRefused"]

#: the client ID metadata document URL the official runner's client scenarios expect
RUNNER_CIMD_URL = "https://conformance-test.local/client-metadata.json"
FAULT_CIMD_URL = "https://mcp-reference-client.invalid/client.json"  # (fault oauth-cimd-unchecked)
MAX_AUTHORIZATIONS = 5  # authorization requests in one run: no endless loop whatever the server does
MAX_STEP_UPS = 2


@dataclass
class AuthConfig:
    client_name: str = "mcp-reference-client"
    client_id: str | None = None  # pre-registered
    client_secret: str | None = None
    client_issuer: str | None = None  # the authorization server the pre-registered client belongs to
    client_metadata_url: str | None = None  # a client ID metadata document this client is known by
    serve_client_metadata: bool = False  # host that document itself (reference_client/cimd.py; tests)
    browser: str | None = None  # a $BROWSER command: open the URL there; None: fetch it (headless)
    timeout: float = 10.0  # each HTTP request
    flow_timeout: float = 60.0  # one whole authorization (a person at a browser may be slow)
    offline: bool = True  # ask for refresh tokens (grant type; offline_access where listed)
    # -- the extensions (reference_client/grants.py) --
    client_key_pem: str | None = None  # the pre-registered client's private key: private_key_jwt (RFC 7523 2.2)
    client_key_alg: str = "ES256"
    assertion: str | None = None  # a workload identity JWT: the JWT bearer grant (RFC 7523 2.1, SEP-1933)
    id_token: str | None = None  # an identity assertion: token exchange for an ID-JAG, then the JWT bearer grant
    idp_token_endpoint: str | None = None  # the identity provider's token endpoint (the exchange)
    idp_client_id: str | None = None  # this client at the identity provider
    idp_client_secret: str | None = None
    dpop: bool = True  # DPoP-bound tokens (RFC 9449) where the authorization server supports them


class _NoMetadata(OAuthRefused):
    """Every well-known protected resource metadata URI answered 404 (and the challenge named none)."""


@dataclass
class _Registration:
    issuer: str
    client_id: str
    secret: str | None
    method: str


@dataclass
class _Grant:
    issuer: str
    meta: dict[str, Any]
    resource: str
    scopes: list[str] | None
    access_token: str
    refresh_token: str | None
    expires_at: float | None
    step_ups: int = 0
    kind: str = "authorization_code"  # or client_credentials, workload (JWT bearer), enterprise (ID-JAG)
    token_type: str = "bearer"  # or dpop (RFC 9449: bound to this run's DPoP key)


@dataclass
class Authorizer:
    server_url: str
    version: Callable[[], str]  # the protocol version in use (2025-03-26 discovers the old way)
    config: AuthConfig = field(default_factory=AuthConfig)
    log: Callable[[str], None] = lambda line: None
    http_transport: Any = None  # tests: an httpx mock transport
    #: the injected fault (``reference_client.faults.OAUTH_FAULTS``): does it act as ``name`` here?
    fault: Callable[[str], bool] = lambda name: False
    token: str | None = None
    generation: int = 0  # bumped on every new token
    refused: str | None = None  # why the client last refused to go on authorizing
    _halted: bool = False  # no more authorization in this run
    authorizations: int = 0
    _registrations: dict[str, _Registration] = field(default_factory=dict)
    _grant: _Grant | None = None
    _prereg_issuer: str | None = None
    _lock: Any = None
    _client: Any = None
    _listener: Any = None
    _callbacks: Any = None
    _tg: Any = None
    redirect_uri: str | None = None
    _spent: float = 0.0  # seconds spent in finished flows
    _busy_since: float | None = None
    _headers_given: int = 0  # (fault oauth-drop-bearer-once) bearer headers handed out
    token_type: str = "bearer"  # of ``token``: bearer, or dpop (sent with a DPoP proof per request)
    _dpop_key: Any = None  # grants.DPoPKey, made on first use, one per run
    _nonces: dict[str, str] = field(default_factory=dict)  # DPoP-Nonce per server origin (RFC 9449 8, 9)
    _documents: Any = None  # the client ID metadata document host (config.serve_client_metadata)

    def _metadata_document(self, url: str) -> dict[str, Any] | None:
        """This client's client ID metadata document, served at ``url`` (None: not served)."""
        if self.fault("oauth-cimd-not-hosted"):
            return None
        doc: dict[str, Any] = {"client_id": url, "client_name": self.config.client_name,
                               "redirect_uris": [self.redirect_uri] if self.redirect_uri else [],
                               "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                               "token_endpoint_auth_method": "none", "application_type": "native"}
        if self.fault("oauth-cimd-no-client-name"):
            del doc["client_name"]
        if self.fault("oauth-cimd-id-mismatch"):
            doc["client_id"] = url.rsplit("/", 1)[0] + "/client.json"
        return doc

    def spent(self) -> float:
        """Seconds spent authorizing so far (a flow under way counts): the session does not count
        them against its wait for an answer."""
        busy = anyio.current_time() - self._busy_since if self._busy_since is not None else 0.0
        return self._spent + busy

    async def __aenter__(self) -> "Authorizer":
        self._lock = anyio.Lock()
        self._prereg_issuer = self.config.client_issuer
        self._client = http_client(self.http_transport, timeout=self.config.timeout, follow_redirects=False)
        self._tg = anyio.create_task_group()  # entered here: the listener is served in it (from any task)
        await self._tg.__aenter__()
        if self.fault("oauth-foreign-token"):
            self.token = "stale-token-of-another-authorization-server"
        if self.config.serve_client_metadata and not self.config.client_metadata_url:
            from reference_client.cimd import DocumentHost

            self._documents = DocumentHost(self._metadata_document, timeout=self.config.timeout)
            self.config.client_metadata_url = await self._documents.start(self._tg)
            await self._redirect_uri()  # the document names it
        return self

    async def aclose(self) -> None:
        if self._tg is not None:  # first, and outside any shield: the task group's scope must be the innermost
            tg, self._tg = self._tg, None
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            if self._documents is not None:
                await self._documents.aclose()
                self._documents = None
            if self._listener is not None:
                await self._listener.aclose()
                self._listener = None
            if self._callbacks is not None:
                for stream in self._callbacks:
                    stream.close()
                self._callbacks = None
            if self._client is not None:
                await self._client.aclose()

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def header(self, method: str = "POST", url: str | None = None) -> dict[str, str]:
        """The authorization headers of a ``method`` request to ``url``: ``Bearer``, or for a
        DPoP-bound token ``DPoP`` and a fresh proof of it (RFC 9449 section 7.1)."""
        if self.token and self.generation and self.fault("oauth-drop-bearer-once"):
            self._headers_given += 1
            if self._headers_given == 3:
                return {}
        if not self.token:
            return {}
        if self.generation and self.fault("oauth-token-scheme"):
            return {"Authorization": f"Token {self.token}"}
        if self.token_type == "dpop" and self._dpop_key is not None:
            target = url or self.server_url
            proof = self._dpop_key.proof(method, target, access_token=self.token, nonce=self._nonces.get(_origin(target)))
            return {"Authorization": f"DPoP {self.token}", "DPoP": proof}
        return {"Authorization": f"Bearer {self.token}"}

    def observe(self, response: httpx.Response) -> None:
        """Keep a ``DPoP-Nonce`` the resource server sends with any answer, for the next proof
        (RFC 9449 section 9)."""
        nonce = response.headers.get("dpop-nonce")
        if nonce and self.token_type == "dpop":
            self._nonces[_origin(str(response.request.url))] = nonce

    def url_for(self, url: str) -> str:
        """The URL a request goes to (the fault oauth-token-in-query adds the token to it)."""
        if self.token and self.generation and self.fault("oauth-token-in-query"):
            from urllib.parse import quote

            return url + ("&" if "?" in url else "?") + "access_token=" + quote(self.token, safe="")
        return url

    def wants(self, response: httpx.Response) -> bool:
        """Is this an answer the flow acts on: 401, or 403 with error="insufficient_scope"."""
        if response.status_code == 401:
            return True
        if response.status_code == 403:
            challenge = oauth.auth_challenge(response.headers.get_list("www-authenticate"), self.token_type)
            return challenge.get("error") == "insufficient_scope"
        return False

    async def challenge(self, response: httpx.Response, generation: int) -> bool:
        """Act on a 401 / 403 answer to a request sent with token ``generation``; True: a new
        token is there, send the request again."""
        async with self._lock:
            if self._halted:
                return False
            challenges = response.headers.get_list("www-authenticate")
            if self.token_type == "dpop" and self.generation == generation:
                nonce = grants.use_dpop_nonce(response.status_code, response.headers, None, challenges)
                if nonce is not None:  # RFC 9449 section 9: the same request again, its proof with this nonce
                    self._nonces[_origin(str(response.request.url))] = nonce
                    self.log("authorization: the resource server asks for a DPoP nonce; sending the request again")
                    return True
            if self.generation != generation and self.token:
                return True  # another request already got a new token
            params = oauth.auth_challenge(challenges, self.token_type)
            self._busy_since = anyio.current_time()
            try:
                with anyio.fail_after(self.config.flow_timeout):
                    if response.status_code == 403:
                        await self._step_up(params)
                    else:
                        await self._unauthorized(params)
            except OAuthRefused as exc:
                self.refused = str(exc)
                self.log(f"authorization: refused: {exc}")
                # a refused step-up leaves the token as it is (a later 401 may still authorize);
                # anything else ends authorizing for this run: no hammering a server that failed
                self._halted = response.status_code != 403 or self._grant is None
                return False
            except TimeoutError:
                self.refused = f"the authorization did not complete within {self.config.flow_timeout:g} s"
                self._halted = True
                self.log(f"authorization: {self.refused}")
                return False
            except httpx.HTTPError as exc:
                self.refused = f"an authorization request failed: {exc!r}"
                self._halted = True
                self.log(f"authorization: {self.refused}")
                return False
            except (httpx.InvalidURL, ValueError) as exc:  # a URL from a server that cannot be used
                self.refused = f"an authorization URL from the server cannot be used: {exc}"
                self._halted = True
                self.log(f"authorization: {self.refused}")
                return False
            finally:
                self._spent += anyio.current_time() - self._busy_since
                self._busy_since = None
            return True

    # -- the flow ----------------------------------------------------------------------------

    async def _unauthorized(self, params: dict[str, str]) -> None:
        if self.version() == "2025-03-26":
            meta, issuer = await self._legacy_metadata()
            prm: dict[str, Any] = {}
            resource = wire_oauth.canonical_resource(self.server_url)
        else:
            try:
                prm, resource = await self._protected_resource(params.get("resource_metadata"))
            except _NoMetadata:
                # no protected resource metadata at all (every well-known URI 404, none named): a
                # 2025-03-26 server, before the version is known (the first request of a dual-era
                # client) -- its origin is its authorization server
                self.log("authorization: no protected resource metadata; the 2025-03-26 discovery")
                meta, issuer = await self._legacy_metadata()
                prm, resource = {}, wire_oauth.canonical_resource(self.server_url)
            else:
                meta, issuer = await self._authorization_server(prm["authorization_servers"])
        grant = self._grant
        if grant is not None and (grant.refresh_token or self.fault("oauth-assume-refresh")) and grant.issuer == issuer \
                and grant.resource == resource:
            if await self._refresh(grant):
                return
        kind = self._machine_grant(meta)
        if kind is not None:
            scopes = oauth.initial_scopes(params.get("scope"), prm, meta, offline=False)
            await self._grant_without_user(kind, issuer, meta, resource, scopes)
            return
        challenged = None if self.fault("oauth-scopes-supported-over-challenge") else params.get("scope")
        scopes = oauth.initial_scopes(challenged, prm, meta, offline=self.config.offline)
        if scopes and not challenged and self.fault("oauth-scope-subset"):
            scopes = scopes[:1] + [s for s in scopes[1:] if s == oauth.OFFLINE_ACCESS]
        await self._authorize(issuer, meta, resource, scopes)

    def _machine_grant(self, meta: dict[str, Any]) -> str | None:
        """The grant without a user at a browser this client uses, None for the authorization code
        flow: what it was given decides (an identity assertion: enterprise-managed; a workload
        JWT: the JWT bearer grant -- never falling back to another grant), else the authorization
        server offering only client credentials."""
        cfg = self.config
        if cfg.id_token:
            return "enterprise"
        if cfg.assertion:
            return "workload"
        if oauth.client_credentials_only(meta):
            return "client_credentials"
        return None

    async def _grant_without_user(self, kind: str, issuer: str, meta: dict[str, Any], resource: str,
                                  scopes: list[str] | None, *, step_ups: int = 0) -> None:
        """An access token from a grant without a user at a browser: client credentials (RFC 6749
        4.4, pre-registered credentials), a workload identity JWT (RFC 7523 2.1, SEP-1933), or an
        ID-JAG exchanged for the user's identity assertion (RFC 8693, then RFC 7523 2.1)."""
        cfg = self.config
        if kind != "client_credentials" and grants.JWT_BEARER not in grants.grants_supported(meta):
            raise OAuthRefused(f"{issuer} does not offer the JWT bearer grant (grant_types_supported "
                               f"{grants.grants_supported(meta)!r}), and this client, given "
                               f"{'an identity assertion' if kind == 'enterprise' else 'a workload JWT'}, uses no other")
        if kind == "client_credentials" and not (cfg.client_id and (cfg.client_secret or cfg.client_key_pem)):
            raise OAuthRefused(f"{issuer} offers only the client_credentials grant, and this client has no "
                               "pre-registered client ID with a secret or a key for it")
        if self.authorizations >= MAX_AUTHORIZATIONS:
            raise OAuthRefused(f"{self.authorizations} authorizations in this run already: giving up (retry limit)")
        # a workload needs no client ID (RFC 7523 3.1: "with or without client authentication or identification")
        reg = await self._registration(issuer, meta, scopes) if kind != "workload" or cfg.client_id else None
        self.authorizations += 1
        try:
            if kind == "client_credentials":
                form = grants.client_credentials_form(resource, scopes)
            elif kind == "workload":
                form = grants.jwt_bearer_form(cfg.assertion or "", resource, scopes)
            else:
                form = grants.jwt_bearer_form(await self._id_jag(issuer, resource, scopes), resource, scopes)
        except grants.GrantError as exc:
            raise OAuthRefused(str(exc)) from exc
        doc = await self._token(meta, reg, form)
        self._take(doc, issuer, meta, resource, scopes, step_ups, kind=kind)

    async def _id_jag(self, issuer: str, resource: str, scopes: list[str] | None) -> str:
        """Exchange the identity assertion for an ID-JAG at the identity provider's token endpoint
        (RFC 8693; Enterprise-Managed Authorization section 4): audience the authorization
        server's issuer, resource the MCP server."""
        cfg = self.config
        if not cfg.idp_token_endpoint:
            raise OAuthRefused("an identity assertion but no identity provider token endpoint to exchange it at")
        form = grants.token_exchange_form(cfg.id_token or "", audience=issuer, resource=resource, scopes=scopes)
        method = "client_secret_basic" if cfg.idp_client_secret else "none"
        headers: dict[str, str] = {}
        if cfg.idp_client_id:
            headers, extra = oauth.client_auth(method, cfg.idp_client_id, cfg.idp_client_secret)
            form.update(extra)
        url = cfg.idp_token_endpoint
        response = await self._client.post(url, data=form, headers={"Accept": "application/json", **headers})
        self.log(f"authorization: POST {url} (token exchange for an ID-JAG) -> {response.status_code}")
        doc = _json(response)
        if response.status_code != 200:
            err = f": {doc.get('error')}" if isinstance(doc, dict) and doc.get("error") else ""
            raise OAuthRefused(f"the identity provider's token exchange answered HTTP {response.status_code}{err}")
        refusal = grants.exchange_refusal(doc)
        if refusal is not None:
            raise OAuthRefused(refusal)
        return doc["access_token"]

    async def _step_up(self, params: dict[str, str]) -> None:
        grant = self._grant
        if grant is None:
            await self._unauthorized(params)
            return
        scopes = oauth.step_up_scopes(grant.scopes, params.get("scope"))
        if self.fault("oauth-step-up-same-scopes"):
            scopes = list(grant.scopes or [])
        elif self.fault("oauth-step-up-drop-granted") and scopes is not None:
            scopes = (params.get("scope") or "").split()
        elif self.fault("oauth-no-retry-limit") and scopes is None:
            scopes = list(grant.scopes or [])
        if scopes is None:
            raise OAuthRefused(f"403 insufficient_scope asks for {params.get('scope')!r}, which this token was already "
                               "authorized for: another authorization would not help (retry limit)")
        if grant.step_ups >= MAX_STEP_UPS and not self.fault("oauth-no-retry-limit"):
            raise OAuthRefused(f"403 insufficient_scope after {grant.step_ups} step-up authorizations: giving up (retry limit)")
        self.log(f"authorization: step-up for scopes {' '.join(scopes)}")
        if grant.kind != "authorization_code":
            await self._grant_without_user(grant.kind, grant.issuer, grant.meta, grant.resource, scopes,
                                           step_ups=grant.step_ups + 1)
            return
        scopes = oauth.with_offline(scopes, grant.meta) if self.config.offline else scopes
        await self._authorize(grant.issuer, grant.meta, grant.resource, scopes, step_ups=grant.step_ups + 1)

    async def _get_json(self, url: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        response = await self._client.get(url, headers={"Accept": "application/json", **(headers or {})})
        try:
            return response.status_code, response.json() if response.status_code == 200 else None
        except (ValueError, RecursionError):
            return response.status_code, None

    async def _protected_resource(self, header_url: str | None) -> tuple[dict[str, Any], str]:
        """The PRM document and the resource to ask for: the challenge's URL when it names one
        (and then only that), else the well-known URIs in order."""
        candidates = [header_url] if header_url else oauth.prm_candidates(self.server_url)
        if self.fault("oauth-prm-ignore-header"):
            candidates = oauth.prm_candidates(self.server_url)
        if self.fault("oauth-prm-root-first") and not header_url:
            candidates = candidates[::-1]
        why: list[str] = []
        for url in candidates:
            status, doc = await self._get_json(url)
            self.log(f"authorization: GET {url} -> {status}")
            if status != 200 or not isinstance(doc, dict):
                why.append(f"{url}: HTTP {status}" + ("" if status != 200 else " (not a JSON object)"))
                continue
            refusal = oauth.resource_refusal(doc.get("resource"), self.server_url)
            if refusal is None:
                servers = doc.get("authorization_servers")
                if isinstance(servers, list) and servers and all(isinstance(s, str) for s in servers):
                    return doc, doc["resource"]
                refusal = "it names no authorization_servers"
            why.append(f"{url}: {refusal}")
        if not header_url and all(w.endswith("HTTP 404") for w in why):
            raise _NoMetadata("no protected resource metadata: " + "; ".join(why))
        raise OAuthRefused("no usable protected resource metadata: " + "; ".join(why))

    async def _authorization_server(self, servers: list[str]) -> tuple[dict[str, Any], str]:
        why: list[str] = []
        for issuer in servers:
            if self.fault("oauth-no-as-metadata"):
                self.log("authorization: (fault) the default endpoints, without the metadata")
                return oauth.legacy_endpoints(issuer), issuer
            urls = oauth.as_metadata_candidates(issuer)
            if self.fault("oauth-as-metadata-oidc-first") and len(urls) == 3:
                urls = [urls[1], urls[2], urls[0]]
            if self.fault("oauth-as-metadata-oidc-first-root") and len(urls) == 2:
                urls = urls[::-1]
            for url in urls:
                status, doc = await self._get_json(url)
                self.log(f"authorization: GET {url} -> {status}")
                if status != 200:
                    why.append(f"{url}: HTTP {status}")
                    continue
                refusal = oauth.metadata_refusal(doc, issuer)
                if self.fault("oauth-ignore-metadata-issuer") and isinstance(doc, dict):
                    refusal = None
                if refusal is not None:  # "If they differ, the client MUST NOT use the metadata"
                    why.append(f"{url}: {refusal}")
                    continue
                # PKCE protects the authorization code: a grant without one does not need it
                refusal = oauth.pkce_refusal(doc) if self._machine_grant(doc) is None else None
                if refusal is not None and not self.fault("oauth-ignore-pkce-support") and \
                        not (self.fault("oauth-ignore-pkce-support-oidc") and "openid-configuration" in url):
                    raise OAuthRefused(refusal)
                return doc, issuer
        raise OAuthRefused("no usable authorization server metadata: " + "; ".join(why))

    async def _legacy_metadata(self) -> tuple[dict[str, Any], str]:
        """2025-03-26: the metadata at the authorization base URL, else the default endpoints."""
        base = oauth.legacy_base(self.server_url)
        url = f"{base}/.well-known/oauth-authorization-server"
        if self.fault("oauth-base-url-keeps-path"):
            url = f"{base}/.well-known/oauth-authorization-server{urlsplit(self.server_url).path}"
        if self.fault("oauth-skip-metadata-2025-03-26"):
            self.log("authorization: (fault) the 2025-03-26 default endpoints without the metadata")
            return oauth.legacy_endpoints(base), base
        status, doc = await self._get_json(url, {"MCP-Protocol-Version": "2025-03-26"})
        self.log(f"authorization: GET {url} -> {status}")
        if status == 200:
            refusal = oauth.metadata_refusal(doc, base) or (oauth.pkce_refusal(doc) if self._machine_grant(doc) is None else None)
            if refusal is not None:
                raise OAuthRefused(refusal)
            return doc, base
        if status != 404:
            raise OAuthRefused(f"{url}: HTTP {status}")
        self.log("authorization: no metadata; the 2025-03-26 default endpoints")
        return oauth.legacy_endpoints(base), base

    async def _registration(self, issuer: str, meta: dict[str, Any], scopes: list[str] | None) -> _Registration:
        """The client ID for ``issuer``, kept per authorization server and never used at another."""
        known = self._registrations.get(issuer)
        if known is None and self._registrations and self.fault("oauth-reuse-registration"):
            known = next(iter(self._registrations.values()))
        if known is not None:
            return known
        cfg = self.config
        if self.fault("oauth-unregistered-client-id"):
            reg = _Registration(issuer, "mcp-reference-client", None, "none")
            self.log("authorization: (fault) the client ID 'mcp-reference-client', never registered")
        elif cfg.client_id:
            if self._prereg_issuer is None:
                self._prereg_issuer = issuer
            if self._prereg_issuer != issuer:
                raise OAuthRefused(f"the pre-registered client belongs to {self._prereg_issuer!r}, and the server now "
                                   f"names {issuer!r}: not using those credentials there")
            reg = _Registration(issuer, cfg.client_id, cfg.client_secret,
                                oauth.prereg_auth_method(meta, secret=bool(cfg.client_secret),
                                                         key_alg=cfg.client_key_alg if cfg.client_key_pem else None))
            self.log(f"authorization: pre-registered client {cfg.client_id!r} ({reg.method})")
        elif self.fault("oauth-cimd-unchecked"):
            reg = _Registration(issuer, cfg.client_metadata_url or FAULT_CIMD_URL, None, "none")
            self.log(f"authorization: (fault) client ID metadata document {reg.client_id}, whatever the server supports")
        elif cfg.client_metadata_url and meta.get("client_id_metadata_document_supported") is True \
                and not self.fault("oauth-no-cimd") and not (self.fault("oauth-dcr-before-cimd")
                                                            and isinstance(meta.get("registration_endpoint"), str)):
            url = cfg.client_metadata_url
            if self.fault("oauth-cimd-http-url"):
                url = "http://" + url.split("://", 1)[-1]
            reg = _Registration(issuer, url, None, "none")
            self.log(f"authorization: client ID metadata document {cfg.client_metadata_url}")
        elif isinstance(meta.get("registration_endpoint"), str) and not self.fault("oauth-no-dcr"):
            reg = await self._register(issuer, meta, scopes)
        else:
            raise OAuthRefused(f"{issuer} offers no way to get a client ID here (no pre-registered client, "
                               "no client ID metadata document support, no registration_endpoint)")
        self._registrations[issuer] = reg
        return reg

    async def _register(self, issuer: str, meta: dict[str, Any], scopes: list[str] | None) -> _Registration:
        method = oauth.registration_auth_method(meta)
        body = oauth.registration_body(client_name=self.config.client_name, redirect_uri=await self._redirect_uri(),
                                       auth_method=method, scopes=scopes)
        if not self.config.offline:
            body["grant_types"] = ["authorization_code"]
        if self.fault("oauth-no-application-type"):
            body.pop("application_type", None)
        if self.fault("oauth-web-application-type"):
            body["application_type"] = "web"
        if self.fault("oauth-no-refresh-grant-type"):
            body["grant_types"] = ["authorization_code"]
        if self.fault("oauth-remote-redirect"):
            body["redirect_uris"] = [*body["redirect_uris"], "http://mcp-client.example/callback"]
        if self.fault("oauth-unregistered-redirect"):
            body["redirect_uris"] = [u.replace("/callback", "/registered") for u in body["redirect_uris"]]
        url = meta["registration_endpoint"]
        response = await self._client.post(url, json=body, headers={"Accept": "application/json"})
        self.log(f"authorization: POST {url} (registration) -> {response.status_code}")
        try:
            doc = response.json()
        except (ValueError, RecursionError):
            doc = None
        if response.status_code not in (200, 201) or not isinstance(doc, dict) or not isinstance(doc.get("client_id"), str):
            if self.fault("oauth-ignore-registration-failure"):
                return _Registration(issuer, "mcp-reference-client-unregistered", None, "none")
            detail = ""
            if isinstance(doc, dict) and doc.get("error"):
                detail = f": {doc.get('error')} {doc.get('error_description') or ''}".rstrip()
            raise OAuthRefused(f"dynamic client registration at {url} failed (HTTP {response.status_code}){detail}")
        secret = doc.get("client_secret") if isinstance(doc.get("client_secret"), str) else None
        got = doc.get("token_endpoint_auth_method")
        method = got if isinstance(got, str) and got in ("none", "client_secret_basic", "client_secret_post") else method
        if method != "none" and secret is None:
            method = "none"  # no secret came back: a public client, whatever was asked for
        return _Registration(issuer, doc["client_id"], secret, method)

    async def _redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/callback`` of a loopback listener (opened once per run)."""
        if self.redirect_uri is None:
            self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
            port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
            self.redirect_uri = f"http://127.0.0.1:{port}/callback"
            send, recv = anyio.create_memory_object_stream[str](10)
            self._callbacks = (send, recv)
            self._tg.start_soon(self._serve)
        return self.redirect_uri

    async def _serve(self) -> None:
        async def handle(stream: Any) -> None:
            async with stream:
                data = b""
                with anyio.move_on_after(self.config.timeout):
                    while b"\r\n\r\n" not in data and len(data) < 16384:
                        try:
                            chunk = await stream.receive(4096)
                        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                            break
                        data += chunk
                line = data.split(b"\r\n", 1)[0].decode("latin-1")
                parts = line.split(" ")
                target = parts[1] if len(parts) >= 2 and parts[0] == "GET" else ""
                found = urlsplit(target).path == "/callback"
                text = b"mcp-reference-client: authorization received; you can close this window.\n" if found else b"not found\n"
                head = (f"HTTP/1.1 {'200 OK' if found else '404 Not Found'}\r\nContent-Type: text/plain\r\n"
                        f"Content-Length: {len(text)}\r\nConnection: close\r\n\r\n").encode("ascii")
                try:
                    await stream.send(head + text)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                if found and self._callbacks is not None:
                    try:
                        self._callbacks[0].send_nowait(f"http://{urlsplit(self.redirect_uri or '').netloc}{target}")
                    except anyio.WouldBlock:
                        pass

        try:
            await self._listener.serve(handle)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _user_agent(self, url: str, redirect_uri: str, state: str) -> dict[str, list[str]]:
        """Send the user agent to the authorization endpoint; the response's query parameters."""
        if self.config.browser:
            return await self._browser(url, redirect_uri, state)
        response = await self._client.get(url)
        location = response.headers.get("location")
        self.log(f"authorization: GET {urlsplit(url).path} (authorization request) -> {response.status_code}")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise OAuthRefused(f"the authorization endpoint answered HTTP {response.status_code} without a redirect "
                               "(this headless client does not fill in login pages; set BROWSER)")
        return oauth.callback_params(location, redirect_uri)

    async def _browser(self, url: str, redirect_uri: str, state: str) -> dict[str, list[str]]:
        command = self.config.browser.split(os.pathsep)[0]  # as Python's webbrowser reads $BROWSER
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise OAuthRefused(f"$BROWSER {command!r} cannot be read as a command: {exc}") from exc
        if not words:
            raise OAuthRefused("$BROWSER is empty")
        argv = [w.replace("%s", url) for w in words] if "%s" in command else [*words, url]
        self.log(f"authorization: opening the authorization URL with {argv[0]}")
        try:
            proc = await anyio.open_process(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise OAuthRefused(f"$BROWSER {argv[0]!r} cannot be started: {exc.strerror or exc}") from exc
        try:
            while True:  # a callback without our state (a stale tab, another program) is discarded
                params = oauth.callback_params(await self._callbacks[1].receive(), redirect_uri)
                if params.get("state") == [state] or self.fault("oauth-ignore-state"):
                    return params
                self.log("authorization: a callback without our state: discarded")
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(proc)

    async def _authorize(self, issuer: str, meta: dict[str, Any], resource: str, scopes: list[str] | None, *,
                         step_ups: int = 0) -> None:
        if self.authorizations >= MAX_AUTHORIZATIONS:
            raise OAuthRefused(f"{self.authorizations} authorizations in this run already: giving up (retry limit)")
        reg = await self._registration(issuer, meta, scopes)
        redirect_uri = await self._redirect_uri()
        verifier, challenge = oauth.pkce_pair()
        method: str | None = "S256"
        if self.fault("oauth-no-pkce"):
            method = None
        elif self.fault("oauth-pkce-plain"):
            method, challenge = "plain", verifier
        sent_resource: str | None = resource
        if self.fault("oauth-no-resource"):
            sent_resource = None
        elif self.fault("oauth-wrong-resource"):
            sent_resource = resource + "/"
        state = oauth.new_state()
        url = oauth.authorization_url(meta["authorization_endpoint"], client_id=reg.client_id, redirect_uri=redirect_uri,
                                      challenge=challenge, state=state, resource=sent_resource, scopes=scopes,
                                      method=method)
        self.authorizations += 1
        params = await self._user_agent(url, redirect_uri, state)
        if self.fault("oauth-ignore-state") and params.get("state"):
            state = params["state"][0]
        iss_supported = meta.get("authorization_response_iss_parameter_supported") is True
        if self.fault("oauth-iss-normalized") and params.get("iss"):
            params = {**params, "iss": [params["iss"][0].rstrip("/")]}
        if self.fault("oauth-ignore-iss"):
            params = {k: v for k, v in params.items() if k != "iss"}
            iss_supported = False
        code = oauth.authorization_code(params, state=state, issuer=issuer, iss_supported=iss_supported)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if method is not None:
            form["code_verifier"] = verifier
        if sent_resource is not None:
            form["resource"] = sent_resource
        doc = await self._token(meta, reg, form)
        self._take(doc, issuer, meta, resource, scopes, step_ups)

    def _client_auth(self, reg: _Registration | None) -> tuple[dict[str, str], dict[str, str]]:
        if reg is None:
            return {}, {}
        if reg.method == "private_key_jwt":
            try:  # a fresh assertion per request (its jti is used once), audience the issuer
                assertion = grants.client_assertion(reg.client_id, reg.issuer, self.config.client_key_pem or "",
                                                    self.config.client_key_alg)
            except grants.GrantError as exc:
                raise OAuthRefused(str(exc)) from exc
            return {}, grants.client_assertion_fields(assertion)
        return oauth.client_auth(reg.method, reg.client_id, reg.secret)

    async def _token(self, meta: dict[str, Any], reg: _Registration | None, form: dict[str, str]) -> dict[str, Any]:
        """A token request; with a DPoP proof when the authorization server supports DPoP (RFC 9449
        section 5), sent once more with the nonce it asks for (section 8)."""
        url = meta["token_endpoint"]
        dpop = self._dpop(meta)
        for attempt in range(2):
            headers, extra = self._client_auth(reg)
            if dpop is not None:
                headers["DPoP"] = dpop.proof("POST", url, nonce=self._nonces.get(_origin(url)))
            response = await self._client.post(url, data={**form, **extra},
                                               headers={"Accept": "application/json", **headers})
            self.log(f"authorization: POST {url} ({form['grant_type']}{', DPoP' if dpop else ''}) -> {response.status_code}")
            doc = _json(response)
            if dpop is not None and response.headers.get("dpop-nonce"):
                self._nonces[_origin(url)] = response.headers["dpop-nonce"]
                if attempt == 0 and grants.use_dpop_nonce(response.status_code, response.headers, doc) is not None:
                    continue  # the same request, its proof with the authorization server's nonce
            break
        if response.status_code != 200:
            err = f": {doc.get('error')}" if isinstance(doc, dict) and doc.get("error") else ""
            raise OAuthRefused(f"the token endpoint answered HTTP {response.status_code}{err}")
        refusal = oauth.token_refusal(doc, dpop=dpop is not None)
        if refusal is not None:
            raise OAuthRefused(refusal)
        return doc

    def _dpop(self, meta: dict[str, Any]) -> grants.DPoPKey | None:
        """This run's DPoP key when tokens from this authorization server are to be DPoP-bound."""
        if not self.config.dpop or not grants.dpop_supported(meta, grants.DPoPKey.alg):
            return None
        if self._dpop_key is None:
            self._dpop_key = grants.DPoPKey()
        return self._dpop_key

    def _take(self, doc: dict[str, Any], issuer: str, meta: dict[str, Any], resource: str, scopes: list[str] | None,
              step_ups: int, refresh: str | None = None, kind: str = "authorization_code") -> None:
        expires = doc.get("expires_in")
        new_refresh = doc.get("refresh_token") if isinstance(doc.get("refresh_token"), str) else refresh
        token_type = "dpop" if doc["token_type"].lower() == "dpop" else "bearer"
        self._grant = _Grant(issuer, meta, resource, scopes, doc["access_token"], new_refresh,
                             time.monotonic() + expires if isinstance(expires, (int, float)) else None, step_ups, kind,
                             token_type)
        self.token = doc["access_token"]
        self.token_type = token_type
        self.generation += 1
        self.log(f"authorization: token from {issuer}" + (" (with a refresh token)" if new_refresh else ""))

    async def _refresh(self, grant: _Grant) -> bool:
        """Use the refresh token (RFC 6749 section 6, with ``resource``); False when refused."""
        reg = self._registrations.get(grant.issuer)
        if reg is None or (grant.refresh_token is None and not self.fault("oauth-assume-refresh")):
            return False
        try:
            doc = await self._token(grant.meta, reg, {"grant_type": "refresh_token", "refresh_token": grant.refresh_token or "",
                                                      "resource": grant.resource})
        except OAuthRefused as exc:
            self.log(f"authorization: refresh refused ({exc}); authorizing again")
            grant.refresh_token = None
            return False
        self._take(doc, grant.issuer, grant.meta, grant.resource, grant.scopes, grant.step_ups, grant.refresh_token, grant.kind)
        return True


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (ValueError, RecursionError):
        return None


async def _stop(proc: Any) -> None:
    """End the browser process group: it may have exited already (xdg-open hands over)."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if proc.returncode is not None:
            break
        if sig is not None:
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        with anyio.move_on_after(2.0):
            await proc.wait()
    await proc.aclose()


def runner_context() -> dict[str, Any]:
    """``MCP_CONFORMANCE_CONTEXT`` (the official runner's scenario context), {} when unset or not JSON."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}

