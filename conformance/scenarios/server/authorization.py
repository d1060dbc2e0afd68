"""basic/authorization (2025-03-26 on): the MCP server as an OAuth 2.1 resource server.

Only for a server the run is told requires authorization (``--auth``: it trusts the suite's
authorization server, whose tokens the scenarios mint; ``--auth-token`` /
``--auth-token-command``: a token of its own authorization server).  Otherwise every scenario
here skips with :data:`NOT_REQUIRED` after looking at the shared session (opened without a token),
and sends nothing.

Every odd request goes through a :class:`~._http.Probe` of its own (no session unless the check is
about one), so its answer never reaches a connection other scenarios use: the first request of a
client (``initialize``; ``server/discover`` on 2026-07-28; the ``GET`` of the SSE endpoint on the
legacy transport) without a token, with tokens that are not valid for this server, with the token
in the query string, and a request on an authorized session without the token.  The suite's
authorization server's request log is not consulted here: a resource server is judged by its
answers alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from conformance.runtime.peer import ExpectTimeout, RawPeer
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.runtime.records import ScenarioError
from conformance.server.context import ScenarioContext
from conformance.spec.versions import Transport, spec
from conformance.transports.base import TransportError
from conformance.wire.envelope import dumps
from conformance.wire.oauth import Challenge, bearer_challenge_of, prm_well_known_urls

from ._http import Probe, describe, request_message

HTTP = [Transport.STREAMABLE_HTTP, Transport.SSE]
V03 = "2025-03-26"
SINCE = V03

PRM_SERVED = "auth.server.prm.served"
PRM_AS = "auth.server.prm.authorization-servers"
PRM_HEADER_06 = "auth.server.prm.header-2025-06-18"
PRM_DISCOVERABLE = "auth.server.prm.discoverable"
PRM_RESOURCE_FORM = "auth.server.prm.resource-form"
CHALLENGE_SCOPE = "auth.server.challenge-scope"
NO_OFFLINE = "auth.server.no-offline-access"
NOT_PROVEN = "auth.server.not-proven-401"
STATUS_401 = "auth.server.status-401"
INVALID_401 = "auth.server.invalid-token-401"
ERROR_RESPONSE_03 = "auth.server.error-response-2025-03-26"
ERROR_RESPONSE = "auth.server.error-response"
VALIDATE_03 = "auth.server.validate-2025-03-26"
AUDIENCE = "auth.server.audience"
FOREIGN_ISSUER = "auth.server.foreign-issuer"
EVERY_REQUEST = "auth.server.every-request"
NO_QUERY = "auth.server.no-query-token"
SCOPE_403 = "auth.server.insufficient-scope-403"
SCOPE_SCOPES = "auth.server.insufficient-scope-scopes"
SCOPE_SCOPES_26 = "auth.server.insufficient-scope-scopes-2026"
SCOPE_SINGLE = "auth.server.insufficient-scope-single-challenge"
AUDIENCE_CASE = "auth.server.audience-case"
NO_PASSTHROUGH = "auth.server.no-token-passthrough"
SCOPE_HIERARCHY = "auth.server.scope-hierarchy"
PROXY_CONSENT = "auth.server.proxy-consent"

NOT_REQUIRED = ("the server does not require authorization: its requests were answered without a token (to check "
                "a server that does, run with --auth, --auth-token or --auth-token-command)")
OTHER_RESOURCE = "https://mcp-conformance.invalid/another-resource"
OTHER_ISSUER = "https://mcp-conformance.invalid/another-authorization-server"
MALFORMED = "mcp-conformance-not-a-token"
_CLIENT_INFO = {"name": "mcp-conformance", "version": "0.1.0"}


# -- helpers -------------------------------------------------------------------------------------------


async def _gate(ctx: ScenarioContext) -> tuple[Any, RawPeer]:
    """The run's AuthContext and the shared session; skips when the run has no authorization."""
    peer = await ctx.connect()
    auth = ctx.target.extra.get("auth")
    if auth is None:
        ctx.skip(NOT_REQUIRED)
    return auth, peer


def _with_query(url: str, query: str) -> str:
    """``url`` with ``query`` (already encoded) appended to whatever query it has."""
    return url + ("&" if "?" in url else "?") + query


def _first_request(version: str, rid: str) -> dict[str, Any]:
    """What a client sends first: initialize (server/discover where the version is stateless)."""
    if spec(version).stateless:
        return request_message(version, rid)
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": _CLIENT_INFO}}


async def _attempt(ctx: ScenarioContext, probe: Probe, token: str | None, what: str, *, query: str | None = None) -> Any:
    """The client's first request with ``token`` as the bearer (None: no Authorization header),
    on no session; its exchange (an SSE answer is closed once its headers are in)."""
    probe.transport.session_id = None  # never a session a previous attempt was given
    url = ctx.target.url or ""
    if query:
        url = _with_query(url, query)
    headers: dict[str, Any] = {"Authorization": f"Bearer {token}" if token is not None else None}
    if ctx.target.transport is Transport.SSE:
        return await _request(probe, "GET", headers=headers, url=url)
    body = dumps(_first_request(ctx.version, f"mcp-conformance-auth-{what}"))
    return await _request(probe, "POST", body=body, headers=headers, url=url)


class NoAnswer:
    """What stands for an exchange the server never answered (within the run's timeout)."""

    status = 0
    is_sse = False
    stream = ""
    body = b""

    def __init__(self, why: str) -> None:
        self.why = why
        self.headers: dict[str, str] = {}


async def _request(probe: Probe, method: str, **kwargs: Any) -> Any:
    """One request of the probe; an SSE answer is closed once its headers are in; a request the
    server never answers (or refuses to connect) is a :class:`NoAnswer`, judged like any other
    answer that is not the one expected."""
    try:
        ex = await probe.request(method, **kwargs)
    except TransportError as exc:
        return NoAnswer(str(exc))
    if ex.is_sse:
        await probe.close_stream(ex)
    return ex


def _describe(ex: Any, limit: int = 200) -> str:
    return f"no answer ({ex.why})" if isinstance(ex, NoAnswer) else describe(ex, limit)


def _accepted(ex: Any) -> bool:
    return 200 <= ex.status < 300


def _challenge_text(ex: Any) -> str:
    return ex.headers.get("www-authenticate") or "(no WWW-Authenticate header)"


async def _control(ctx: ScenarioContext, auth: Any, probe: Probe) -> None:
    """The valid token must be served, or nothing here means anything: our setup's trouble."""
    ex = await _attempt(ctx, probe, auth.token(ctx.target.url or ""), "valid-token")
    if not _accepted(ex):
        hint = (f"is the server told to trust the suite's authorization server ({auth.issuer}; {{issuer}}, "
                "{jwks_url}, {resource} in --command)?" if auth.can_mint else "is the --auth-token valid for it?")
        raise ScenarioError(f"the server refused the run's valid token: {_describe(ex)}", kind="setup", hint=hint)


def _check_challenge(ctx: ScenarioContext, ex: Any, probe: Probe, what: str) -> None:
    """OAuth 2.1 section 5.3 / RFC 6750 section 3: a 401 carries a Bearer challenge."""
    if ex.status != 401:
        return
    rid = ERROR_RESPONSE_03 if ctx.version == V03 else ERROR_RESPONSE
    ch = bearer_challenge_of(ex.headers)
    ctx.check(rid, ch is not None, problem="ChallengeMissing",
              message=(f"the 401 to {what} carries a Bearer challenge" if ch is not None else
                       f"the 401 to {what} has no Bearer challenge in WWW-Authenticate ({_challenge_text(ex)}); "
                       "OAuth 2.1 section 5.3 (RFC 6750 section 3) requires one"),
              expected="WWW-Authenticate: Bearer ...", actual=_challenge_text(ex), entries=probe.entries(ex))


# -- discovery: the 401 without a token and the protected resource metadata ------------------------------


@scenario(requirements=[STATUS_401, NOT_PROVEN, ERROR_RESPONSE_03, ERROR_RESPONSE, CHALLENGE_SCOPE, PRM_SERVED,
                        PRM_AS, PRM_HEADER_06, PRM_DISCOVERABLE, PRM_RESOURCE_FORM, NO_OFFLINE],
          transports=HTTP, since=SINCE)
async def unauthenticated_request(ctx: ScenarioContext) -> None:
    """The client's first request without a token: 401 with a Bearer challenge (its `scope`, its
    `resource_metadata`), then the protected resource metadata where the challenge names it, else
    at the well-known URIs: served, `authorization_servers` non-empty, `resource` without a
    trailing slash, no `offline_access` advertised."""
    auth, peer = await _gate(ctx)
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        ex = await _attempt(ctx, probe, None, "no-token")
        ok = ex.status == 401
        for rid in (STATUS_401, NOT_PROVEN):
            ctx.check(rid, ok, problem="UnauthenticatedNot401",
                      message=("the first request without a token was answered 401 Unauthorized" if ok else
                               f"the first request without a token was answered {_describe(ex)}, not 401 Unauthorized"),
                      expected="401 Unauthorized", actual=_describe(ex), entries=probe.entries(ex))
        if not ok:
            ctx.skip("the request without a token was not answered 401: no challenge to read")
        _check_challenge(ctx, ex, probe, "a request without a token")
        ch: Challenge | None = bearer_challenge_of(ex.headers)
        scope = (ch.params.get("scope") or "").split() if ch else []
        ctx.check(CHALLENGE_SCOPE, bool(scope), problem="ChallengeScopeMissing",
                  message=(f"the 401 challenge names the scopes {' '.join(scope)!r}" if scope else
                           f"the 401 challenge has no scope parameter ({_challenge_text(ex)})"),
                  expected="scope=\"...\" in the Bearer challenge", actual=_challenge_text(ex), entries=probe.entries(ex))

        # the metadata: the header's URL, then the well-known URIs (path form, then root)
        header_url = ch.params.get("resource_metadata") if ch else None
        candidates: list[tuple[str, str]] = []
        if header_url:
            candidates.append(("header", header_url))
        candidates += [("well-known", u) for u in prm_well_known_urls(ctx.target.url or "") if u != header_url]
        hit: tuple[str, str, Any] | None = None  # how, where, the document (the first 200 answer)
        tried: list[str] = []
        entries: list[int] = []
        for how, url in candidates:
            if not url.startswith(("http://", "https://")):
                tried.append(f"{url} (not an absolute http(s) URL)")
                continue
            got = await _request(probe, "GET", url=url, headers={"Accept": "application/json"})
            entries += probe.entries(got)
            if getattr(got, "stalled", False):  # headers, then a body that never ended: no document came
                got = NoAnswer(f"GET {url}: {got.status} and its headers, then the body did not end within "
                               f"{ctx.timeout:g} s")
            tried.append(f"{url}: {_describe(got, 120)}")
            if got.status == 200:
                hit = (how, url, _json_object(got))
                break
    if ctx.version == "2025-06-18":
        good = hit is not None and hit[0] == "header"
        ctx.check(PRM_HEADER_06, good, problem="ResourceMetadataNotInHeader",
                  message=(f"the 401 challenge names the metadata URL {header_url}, which serves it" if good else
                           f"the 401 challenge does not lead to the metadata: {_challenge_text(ex)}; tried {tried}"),
                  expected="WWW-Authenticate: Bearer resource_metadata=\"<URL of the metadata>\"",
                  actual=tried, entries=entries or probe.entries(ex))
    ctx.check(PRM_DISCOVERABLE, hit is not None, problem="ResourceMetadataNotFound",
              message=(f"the protected resource metadata was found through the {hit[0]} ({hit[1]})" if hit else
                       f"no protected resource metadata through the 401 challenge nor the well-known URIs: {tried}"),
              expected="resource_metadata in the 401 challenge, or the metadata at a well-known URI", actual=tried,
              entries=entries)
    if hit is None:
        for rid in (PRM_SERVED, PRM_AS, PRM_RESOURCE_FORM):
            ctx.not_reached(rid, "no protected resource metadata was found where a client looks for it ("
                                 + "; ".join(tried)[:600] + ")")
        _offline(ctx, scope, None, entries)
        return
    doc = hit[2]
    valid = isinstance(doc, dict) and isinstance(doc.get("resource"), str)
    ctx.check(PRM_SERVED, valid, problem="ResourceMetadataInvalid",
              message=(f"protected resource metadata served at {hit[1]}" if valid else
                       f"{hit[1]} answered 200 with no protected resource metadata (a JSON object with a resource): "
                       f"{tried[-1]}"),
              expected="200 application/json {\"resource\": ..., \"authorization_servers\": [...]}", actual=tried[-1],
              entries=entries[-1:])
    if not valid:
        for rid in (PRM_AS, PRM_RESOURCE_FORM):
            ctx.not_reached(rid, "the protected resource metadata is not a JSON object with a resource")
        _offline(ctx, scope, None, entries)
        return
    servers = doc.get("authorization_servers")
    good_as = (isinstance(servers, list) and bool(servers)
               and all(isinstance(s, str) and s.startswith(("http://", "https://")) for s in servers))
    ctx.check(PRM_AS, good_as, problem="AuthorizationServersMissing",
              message=(f"authorization_servers lists {servers}" if good_as else
                       f"authorization_servers is {json.dumps(servers) if servers is not None else 'absent'}; the metadata "
                       "must name at least one authorization server (an http(s) issuer URL)"),
              expected="a non-empty array of issuer URLs", actual=servers, entries=entries[-1:])
    resource = doc["resource"]
    ctx.check(PRM_RESOURCE_FORM, not resource.endswith("/"), problem="ResourceTrailingSlash",
              message=(f"resource {resource!r} has no trailing slash" if not resource.endswith("/") else
                       f"resource {resource!r} ends with a slash; the form without it is the one to use"),
              expected="no trailing slash", actual=resource, entries=entries[-1:])
    _offline(ctx, scope, doc, entries)


def _offline(ctx: ScenarioContext, challenge_scope: list[str], doc: dict | None, entries: list[int]) -> None:
    supported = doc.get("scopes_supported") if doc else None
    where = []
    if "offline_access" in challenge_scope:
        where.append("the 401 challenge's scope")
    if isinstance(supported, list) and "offline_access" in supported:
        where.append("the metadata's scopes_supported")
    ctx.check(NO_OFFLINE, not where, problem="OfflineAccessAdvertised",
              message=("offline_access is advertised in neither the challenge nor the metadata" if not where else
                       f"offline_access is advertised in {' and '.join(where)}; refresh tokens are not a resource "
                       "requirement"),
              expected="no offline_access", actual={"challenge scope": challenge_scope, "scopes_supported": supported},
              entries=entries[-1:])


def _json_object(ex: Any) -> Any:
    try:
        return json.loads(ex.body or b"")
    except ValueError:
        return None


# -- tokens that are not valid for this server --------------------------------------------------------------


@scenario(requirements=[INVALID_401, ERROR_RESPONSE_03, ERROR_RESPONSE, VALIDATE_03, AUDIENCE, FOREIGN_ISSUER,
                        AUDIENCE_CASE],
          transports=HTTP, since=SINCE)
async def invalid_tokens(ctx: ScenarioContext) -> None:
    """The client's first request with a token that is no JWT, an expired one, one signed with a
    key the authorization server never published, one for another audience and one naming another
    issuer: each refused with 401 and a Bearer challenge (the valid token, first, is served); one
    whose audience has the scheme and host in upper case: served."""
    auth, peer = await _gate(ctx)
    resource = ctx.target.url or ""
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        await _control(ctx, auth, probe)
        cases: list[tuple[str, str, str]] = [(INVALID_401, "malformed", MALFORMED)]
        if auth.can_mint:
            server, scope = auth.server, auth.scope
            cases += [
                (INVALID_401, "expired", server.mint(audience=resource, scope=scope, expires_in=-600)),
                (INVALID_401, "forged", server.mint(audience=resource, scope=scope, key="foreign", kid=server.key.kid)),
                (VALIDATE_03 if ctx.version == V03 else AUDIENCE, "wrong-audience",
                 server.mint(audience=OTHER_RESOURCE, scope=scope)),
                (VALIDATE_03 if ctx.version == V03 else FOREIGN_ISSUER, "foreign-issuer",
                 server.mint(audience=resource, scope=scope, issuer=OTHER_ISSUER)),
            ]
        else:
            for rid in (VALIDATE_03, AUDIENCE, FOREIGN_ISSUER, AUDIENCE_CASE):
                ctx.not_reached(rid, _no_mint())
        labels = {"malformed": "a token that is no JWT", "expired": "an expired token",
                  "forged": "a token signed with a key the authorization server never published",
                  "wrong-audience": f"a token for another audience ({OTHER_RESOURCE})",
                  "foreign-issuer": f"a token naming another issuer ({OTHER_ISSUER})"}
        for rid, what, token in cases:
            ex = await _attempt(ctx, probe, token, what)
            ok = ex.status == 401
            ctx.check(rid, ok, problem="InvalidTokenAccepted" if _accepted(ex) else "InvalidTokenNot401",
                      message=(f"{labels[what]} was refused with 401" if ok else
                               f"{labels[what]} was answered {_describe(ex)}, not 401 Unauthorized"),
                      expected="401 Unauthorized", actual=_describe(ex), entries=probe.entries(ex))
            _check_challenge(ctx, ex, probe, labels[what])
        if auth.can_mint and ctx.version != V03:
            upper = _upper_scheme_and_host(resource)
            ex = await _attempt(ctx, probe, auth.server.mint(audience=upper, scope=auth.scope), "upper-case-audience")
            ctx.check(AUDIENCE_CASE, _accepted(ex), problem="UpperCaseAudienceRefused",
                      message=(f"a token for {upper} (scheme and host in upper case) was served" if _accepted(ex) else
                               f"a token for {upper} (this server's resource, scheme and host in upper case) was "
                               f"answered {_describe(ex)}"),
                      expected="2xx (served)", actual=_describe(ex), entries=probe.entries(ex))


def _upper_scheme_and_host(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return scheme.upper() + sep + host.upper() + slash + path


def _no_mint() -> str:
    from conformance.auth.context import NO_MINT

    return NO_MINT


# -- where the token must be: every request, never the query string ------------------------------------------


@scenario(requirements=[NO_QUERY, EVERY_REQUEST], transports=HTTP, since=SINCE, connection=ConnectionKind.FRESH)
async def token_placement(ctx: ScenarioContext) -> None:
    """The valid token only in the query string (`?access_token=`) is refused; on a session opened
    with the valid token, a request carrying the session but no Authorization header is refused
    with 401 (a session id is no credential; versions with sessions)."""
    auth, _ = await _gate(ctx)
    peer = await ctx.connect(fresh=True)  # its answers (SSE: on its stream) reach no other scenario
    token = auth.token(ctx.target.url or "")
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        await _control(ctx, auth, probe)
        ex = await _attempt(ctx, probe, None, "query-token", query=f"access_token={token}")
        ctx.check(NO_QUERY, not _accepted(ex), problem="QueryTokenAccepted",
                  message=(f"the token in the query string alone was refused ({ex.status})" if not _accepted(ex) else
                           f"the token in the query string alone was accepted: {_describe(ex)}"),
                  expected="401 Unauthorized", actual=_describe(ex), entries=probe.entries(ex))
    if spec(ctx.version).stateless:
        return  # no session (EVERY_REQUEST does not apply to 2026-07-28)
    ping = dumps({"jsonrpc": "2.0", "id": "mcp-conformance-auth-session-only", "method": "ping"})
    if ctx.target.transport is Transport.SSE:
        endpoint = getattr(peer.transport, "endpoint", None)
        async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
            ex = await _request(probe, "POST", body=ping, url=endpoint, headers={"Authorization": None})
            where = f"the SSE session's endpoint ({endpoint})"
    else:
        async with Probe(peer, timeout=ctx.timeout, session=True) as probe:
            ex = await _request(probe, "POST", body=ping, headers={"Authorization": None})
            where = f"the session {probe.transport.session_id!r}"
    ok = ex.status == 401
    ctx.check(EVERY_REQUEST, ok, problem="SessionAcceptedWithoutToken" if _accepted(ex) else "SessionWithoutTokenNot401",
              message=(f"a ping on {where} without the token was refused with 401" if ok else
                       f"a ping on {where} without the token was answered {_describe(ex)}: a session id is no credential"),
              expected="401 Unauthorized", actual=_describe(ex), entries=probe.entries(ex))


# -- scopes ----------------------------------------------------------------------------------------------------


@scenario(requirements=[SCOPE_403, SCOPE_SCOPES, SCOPE_SCOPES_26, SCOPE_SINGLE], transports=HTTP, since="2025-11-25")
async def insufficient_scope(ctx: ScenarioContext) -> None:
    """A token valid in every way but with no scope: a server that requires scopes answers 403
    with error="insufficient_scope" and the scopes needed; one that serves it requires none
    (skipped)."""
    auth, peer = await _gate(ctx)
    if not auth.can_mint:
        ctx.skip(_no_mint())
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        await _control(ctx, auth, probe)
        token = auth.server.mint(audience=ctx.target.url or "", scope=None)
        ex = await _attempt(ctx, probe, token, "no-scope")
    if _accepted(ex):
        ctx.skip("the server served a token without any scope: it requires none, so there is no insufficient scope "
                 "to check")
    ch = bearer_challenge_of(ex.headers)
    ok = ex.status == 403 and ch is not None and ch.params.get("error") == "insufficient_scope"
    ctx.check(SCOPE_403, ok, problem="InsufficientScopeNot403",
              message=("a token without the scopes needed was refused with 403 error=\"insufficient_scope\"" if ok else
                       f"a token without the scopes needed was answered {_describe(ex)} ({_challenge_text(ex)}), not "
                       "403 with error=\"insufficient_scope\""),
              expected="403 Forbidden, WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"...\"",
              actual=f"{ex.status} {_challenge_text(ex)}", entries=probe.entries(ex))
    if not ok:
        for rid in (SCOPE_SCOPES, SCOPE_SCOPES_26, SCOPE_SINGLE):
            ctx.not_reached(rid, "no insufficient_scope challenge to read")
        return
    scope = (ch.params.get("scope") or "").split() if ch else []
    rid = SCOPE_SCOPES_26 if spec(ctx.version).stateless else SCOPE_SCOPES
    ctx.check(rid, bool(scope), problem="InsufficientScopeWithoutScopes",
              message=(f"the insufficient_scope challenge names the scopes {' '.join(scope)!r}" if scope else
                       f"the insufficient_scope challenge names no scope ({_challenge_text(ex)})"),
              expected="scope=\"<the scopes needed>\"", actual=_challenge_text(ex), entries=probe.entries(ex))
    if not scope:
        ctx.not_reached(SCOPE_SINGLE, "the insufficient_scope challenge names no scope")
        return
    if ctx.applies(SCOPE_SINGLE):
        async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
            retry = await _attempt(ctx, probe, auth.server.mint(audience=ctx.target.url or "", scope=" ".join(scope)),
                                   "challenged-scopes")
        ctx.check(SCOPE_SINGLE, _accepted(retry), problem="ChallengeScopesNotEnough",
                  message=(f"a token with exactly the challenged scopes {' '.join(scope)!r} was served" if _accepted(retry)
                           else f"a token with exactly the challenged scopes {' '.join(scope)!r} was answered "
                           f"{_describe(retry)} ({_challenge_text(retry)}): the challenge did not name all the "
                           "scopes needed"),
                  expected="2xx (served)", actual=f"{retry.status} {_challenge_text(retry)}",
                  entries=probe.entries(retry))




# -- registering a client with the server as authorization server (2025-03-26; a proxy) ----------------------

CALLBACK = "http://127.0.0.1:9/mcp-conformance-callback"  # a loopback redirect URI nothing listens on


def _registration(name: str) -> bytes:
    """An RFC 7591 registration of a public client with the :data:`CALLBACK` redirect URI."""
    return json.dumps({"client_name": name, "redirect_uris": [CALLBACK], "grant_types": ["authorization_code",
                       "refresh_token"], "response_types": ["code"], "token_endpoint_auth_method": "none"}).encode()


# -- MCP proxies with a static client id: consent before forwarding ------------------------------------------

NO_PROXY = ("the server is not known to be an MCP proxy with a static client id at a third-party authorization "
            "server (nothing in its metadata says so): give --proxy-static-client ID[:SECRET], the id it holds at "
            "the suite's authorization server, which it must front, to check this")


async def _get_json(probe: Probe, url: str) -> tuple[Any, Any]:
    ex = await _request(probe, "GET", url=url, headers={"Accept": "application/json", "Authorization": None})
    doc = _json_object(ex) if not isinstance(ex, NoAnswer) and ex.status == 200 else None
    return ex, doc if isinstance(doc, dict) else None


@scenario(requirements=[PROXY_CONSENT], transports=HTTP, since="2025-06-18", connection=ConnectionKind.FRESH)
async def proxy_consent(ctx: ScenarioContext) -> None:
    """A proxy (--proxy-static-client) in front of the suite's authorization server: a client that
    registers with it dynamically and asks its authorization endpoint must be asked for consent
    before the proxy sends anything on to the suite's authorization server."""
    import secrets
    from urllib.parse import urlencode

    from conformance.wire.oauth import as_metadata_urls, pkce_s256

    auth, peer = await _gate(ctx)
    if not auth.can_mint or auth.proxy_client is None:
        ctx.skip(NO_PROXY if auth.can_mint else _no_mint())
    server = auth.server
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        prm = None
        for url in prm_well_known_urls(ctx.target.url or ""):
            ex, prm = await _get_json(probe, url)
            if prm is not None:
                break
        servers = prm.get("authorization_servers") if prm else None
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            ctx.skip("the protected resource metadata names no authorization server (auth.server.prm.* judge that)")
        front = servers[0].rstrip("/")
        if front == server.issuer.rstrip("/"):
            ctx.skip(f"the protected resource metadata names the suite's authorization server ({front}) itself: clients "
                     "are not sent through the proxy, so it forwards no dynamically registered client")
        meta = None
        for url in as_metadata_urls(front):
            ex, meta = await _get_json(probe, url)
            if meta is not None:
                break
        if not meta or not isinstance(meta.get("authorization_endpoint"), str):
            ctx.skip(f"the proxy's authorization server ({front}) serves no RFC 8414 metadata with an "
                     "authorization_endpoint")
        if not isinstance(meta.get("registration_endpoint"), str):
            ctx.skip(f"the proxy's authorization server ({front}) offers no dynamic registration: no client can "
                     "register with it dynamically")
        redirect = CALLBACK
        reg = await _request(probe, "POST", url=meta["registration_endpoint"],
                             body=_registration("mcp-conformance (dynamically registered)"),
                             headers={"Accept": "application/json", "Content-Type": "application/json",
                                      "Authorization": None})
        answer = _json_object(reg) if not isinstance(reg, NoAnswer) else None
        client_id = answer.get("client_id") if isinstance(answer, dict) else None
        if reg.status not in (200, 201) or not isinstance(client_id, str):
            ctx.skip(f"registering a client with the proxy ({meta['registration_endpoint']}) was answered "
                     f"{_describe(reg, 120)}")
        mark = server.last_seq
        query = urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
                           "code_challenge": pkce_s256(secrets.token_urlsafe(48)), "code_challenge_method": "S256",
                           "state": "mcp-conformance-proxy", "resource": ctx.target.url or ""})
        endpoint = meta["authorization_endpoint"]
        f = await _follow(probe, _with_query(endpoint, query), redirect)
    forwarded = [r for r in server.requests(mark) if r.path.endswith("/authorize")]
    if forwarded:
        r = forwarded[0]
        static = auth.proxy_client in (parse_qs(r.query).get("client_id") or [])
        ctx.check(PROXY_CONSENT, False, problem="ForwardedWithoutConsent",
                  message=(f"the proxy sent the newly registered client's authorization request on to the third-party "
                           f"authorization server (GET {r.path}, client_id "
                           f"{'the static ' + repr(auth.proxy_client) if static else 'another'}) without asking the "
                           "user's consent first"),
                  expected="a consent page before anything reaches the third-party authorization server",
                  actual=f.hops, entries=f.entries)
    elif f.how == "page":
        ctx.check(PROXY_CONSENT, True, message=f"the proxy's authorization endpoint {f.why} and sent nothing on to the "
                  "third-party authorization server", entries=f.entries)
    else:
        ctx.not_reached(PROXY_CONSENT, f"the authorization request {f.why}, and nothing reached the third-party "
                        "authorization server: whether the proxy asks for consent cannot be seen")


# -- scope hierarchies -----------------------------------------------------------------------------------------

NO_HIERARCHY = ("the server's scope hierarchy is not known (no metadata declares which scope implies which): give "
                "--scope-hierarchy 'BROAD>NARROW [NARROW ...]' to check that a token with only the broader scope is "
                "served")


@scenario(requirements=[SCOPE_HIERARCHY], transports=HTTP, since="2026-07-28")
async def scope_hierarchy(ctx: ScenarioContext) -> None:
    """For each broader scope the run names (--scope-hierarchy): a token with exactly its narrower
    scopes is served (the control), and so must be one with only the broader scope."""
    auth, peer = await _gate(ctx)
    if not auth.can_mint:
        ctx.skip(_no_mint())
    if not auth.scope_hierarchy:
        ctx.skip(NO_HIERARCHY)
    resource = ctx.target.url or ""
    judged = 0
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        for broad, narrow in auth.scope_hierarchy.items():
            control = await _attempt(ctx, probe, auth.server.mint(audience=resource, scope=" ".join(narrow)),
                                     "narrow-scopes")
            if not _accepted(control):
                ctx.note(f"a token with the narrower scopes {' '.join(narrow)!r} was answered {_describe(control)}: "
                         f"they do not suffice for the first request, so {broad!r} implying them shows nothing here",
                         requirement=SCOPE_HIERARCHY)
                continue
            ex = await _attempt(ctx, probe, auth.server.mint(audience=resource, scope=broad), "broad-scope")
            judged += 1
            ctx.check(SCOPE_HIERARCHY, _accepted(ex), problem="BroaderScopeRefused",
                      message=(f"a token with only {broad!r} (which implies {' '.join(narrow)!r}) was served"
                               if _accepted(ex) else
                               f"a token with only {broad!r}, which implies {' '.join(narrow)!r}, was answered "
                               f"{_describe(ex)} ({_challenge_text(ex)}) although {' '.join(narrow)!r} suffice"),
                      expected="2xx (served, as a token with the narrower scopes is)",
                      actual=f"{ex.status} {_challenge_text(ex)}", entries=probe.entries(control) + probe.entries(ex))
    if not judged:
        ctx.skip("no narrower scopes of --scope-hierarchy suffice for the first request on their own: nothing shows "
                 "whether the broader scope is accounted for")


# -- no token passthrough: what the server sends to an upstream API ---------------------------------------

NO_UPSTREAM_TOOL = ("which tool of the server calls an upstream API is not known (nothing in MCP says so): give "
                    "--upstream-tool NAME (or 'NAME {JSON arguments}') and point the server at the upstream the suite "
                    "serves ({upstream} in --command, or $MCP_CONFORMANCE_UPSTREAM_URL) to check this")


def _passed_through(auth: Any, req: Any, token: str, resource: str) -> str | None:
    """Where ``req`` (a request the upstream received) carries a token the MCP client gave: the
    run's token itself, or a bearer our authorization server issued for the MCP server's audience
    (only the MCP server's clients hold those); None when it carries neither."""
    places = [*((f"header {k}", str(v)) for k, v in req.headers.items()), ("query", req.query or ""),
              ("body", req.body or "")]  # every place of the request where a token can travel
    for where, text in places:
        if token in text:
            return f"the client's token, in the {where}"
    bearer = req.headers.get("authorization", "")
    if bearer[:7].lower() == "bearer ":
        claims = auth.server.verify(bearer[7:].strip())
        aud = claims.get("aud") if claims else None
        if claims and (aud == resource or (isinstance(aud, list) and resource in aud)):
            return "a token issued for the MCP server (its audience), in the Authorization header"
    return None


def _upstream_summary(req: Any) -> dict[str, Any]:
    auth_header = req.headers.get("authorization")
    shown = auth_header if auth_header is None or len(auth_header) <= 60 else auth_header[:57] + "..."
    return {"seq": req.seq, "method": req.method, "path": req.path, "query": req.query, "authorization": shown}


@scenario(requirements=[NO_PASSTHROUGH], transports=HTTP, since="2025-06-18")
async def token_passthrough(ctx: ScenarioContext) -> None:
    """The server's tool that calls an upstream API (--upstream-tool), called with the run's valid
    token: the requests that reach the upstream (the suite serves it beside its authorization
    server, which logs them) carry the server's own credentials, never the client's token."""
    auth, peer = await _gate(ctx)
    if not auth.can_mint:
        ctx.skip(_no_mint())
    tool = auth.upstream_tool
    if tool is None:
        ctx.skip(NO_UPSTREAM_TOOL)
    resource = ctx.target.url or ""
    token = auth.token(resource)
    server = auth.server
    mark = server.last_seq
    params = {"name": tool.name, "arguments": auth.upstream_arguments()}
    try:  # the upstream requests made until the answer (or the timeout) are judged either way
        answer = json.dumps(await peer.call("tools/call", params, timeout=ctx.timeout), default=str)[:160]
    except (ExpectTimeout, TransportError) as exc:
        answer = f"no answer: {exc}"
    requests = server.upstream_requests(mark)
    if not requests:
        ctx.skip(f"tools/call {tool.name} (--upstream-tool) made no request to the upstream API "
                 f"({server.upstream_url}) before its answer ({answer}): is the server told to call it "
                 "({upstream} in --command, or $MCP_CONFORMANCE_UPSTREAM_URL)?")
    leaks = [(r, where) for r in requests if (where := _passed_through(auth, r, token, resource)) is not None]
    shown = [_upstream_summary(r) for r in requests]
    ok = not leaks
    ctx.check(NO_PASSTHROUGH, ok, problem="TokenPassedThrough",
              message=(f"tools/call {tool.name} reached the upstream API {len(requests)} time(s), never with the "
                       "client's token" if ok else
                       f"tools/call {tool.name} passed the token it received from the client through to the upstream "
                       f"API: {leaks[0][1]} of {leaks[0][0].method} {leaks[0][0].path} (upstream request "
                       f"#{leaks[0][0].seq} of the authorization server's log)"),
              expected="upstream requests with the server's own credentials (a token issued for the upstream)",
              actual=shown)


# -- 2025-03-26: the server's origin is its authorization server ----------------------------------------------

AS_METADATA_03 = "auth.server.as-metadata-2025-03-26"
DEFAULT_ENDPOINTS_03 = "auth.server.default-endpoints-2025-03-26"
DCR_03 = "auth.server.dcr-2025-03-26"
REDIRECT_03 = "auth.server.redirect-validation-2025-03-26"
HTTPS_03 = "auth.server.https-endpoints-2025-03-26"
PKCE_03 = "auth.server.pkce-required-2025-03-26"
ROTATION_03 = "auth.server.token-rotation-2025-03-26"
MAX_HOPS = 5
ELSEWHERE = "https://mcp-conformance.invalid/elsewhere"
_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # (RFC 7636 appendix B's, with any verifier: never redeemed)


@scenario(requirements=[AS_METADATA_03, DEFAULT_ENDPOINTS_03, DCR_03, REDIRECT_03, HTTPS_03, PKCE_03, ROTATION_03],
          transports=HTTP,
          versions=[V03], connection=ConnectionKind.FRESH)
async def origin_authorization_server(ctx: ScenarioContext) -> None:
    """2025-03-26: the authorization base URL is the origin of the MCP endpoint.  Its RFC 8414
    metadata (else the default endpoints), dynamic registration, and the authorization endpoint's
    refusal to send an answer to a redirect URI the client did not register."""
    auth, _ = await _gate(ctx)
    peer = await ctx.connect(fresh=True)
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(ctx.target.url or "")
    base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    json_headers = {"Accept": "application/json", "Authorization": None}
    async with Probe(peer, timeout=ctx.timeout, session=False) as probe:
        meta_ex = await _request(probe, "GET", url=base + "/.well-known/oauth-authorization-server", headers=json_headers)
        doc = _json_object(meta_ex) if meta_ex.status == 200 else None
        has_meta = isinstance(doc, dict) and all(isinstance(doc.get(k), str) for k in ("authorization_endpoint",
                                                                                         "token_endpoint"))
        ctx.check(AS_METADATA_03, has_meta, problem="AuthorizationServerMetadataMissing",
                  message=(f"{base}/.well-known/oauth-authorization-server serves RFC 8414 metadata" if has_meta else
                           f"{base}/.well-known/oauth-authorization-server answered {_describe(meta_ex)}"),
                  expected="200 application/json {authorization_endpoint, token_endpoint, ...}",
                  actual=_describe(meta_ex), entries=probe.entries(meta_ex))
        endpoints = {"authorize": f"{base}/authorize", "token": f"{base}/token", "register": f"{base}/register"}
        if has_meta:
            assert isinstance(doc, dict)
            endpoints["authorize"], endpoints["token"] = doc["authorization_endpoint"], doc["token_endpoint"]
            reg = doc.get("registration_endpoint")
            endpoints["register"] = reg if isinstance(reg, str) else ""
            ctx.not_reached(DEFAULT_ENDPOINTS_03, "the server serves authorization server metadata (the default "
                                                  "endpoints are for servers that do not)")
        else:
            answers = []
            for name, method in (("authorize", "GET"), ("token", "POST"), ("register", "POST")):
                ex = await _request(probe, method, url=endpoints[name], headers={**json_headers,
                                    "Content-Type": "application/x-www-form-urlencoded" if method == "POST" else None},
                                    body=b"" if method == "POST" else None)
                answers.append((name, ex))
            missing = [f"{_method_of(n)} /{n}: {_describe(ex, 80)}" for n, ex in answers
                       if isinstance(ex, NoAnswer) or ex.status in (404, 405)]
            ctx.check(DEFAULT_ENDPOINTS_03, not missing, problem="DefaultEndpointsMissing",
                      message=("without metadata, /authorize, /token and /register answer at the origin" if not missing
                               else "without authorization server metadata, the default endpoints are not there: "
                               + "; ".join(missing)),
                      expected="/authorize, /token, /register at the origin", actual=missing or None,
                      entries=[e for _, ex in answers for e in probe.entries(ex)])
        _check_https(ctx, endpoints, "its RFC 8414 metadata" if has_meta else "the default URI schema",
                     probe.entries(meta_ex))
        # dynamic registration
        redirect = CALLBACK
        client_id: str | None = None
        if not endpoints["register"]:
            ctx.check(DCR_03, False, problem="DynamicRegistrationMissing",
                      message="the authorization server metadata names no registration_endpoint",
                      expected="registration_endpoint", actual=sorted(doc)[:20] if isinstance(doc, dict) else None,
                      entries=probe.entries(meta_ex))
        else:
            reg_ex = await _request(probe, "POST", url=endpoints["register"], body=_registration("mcp-conformance"),
                                    headers={**json_headers, "Content-Type": "application/json"})
            answer = _json_object(reg_ex)
            if reg_ex.status in (200, 201) and isinstance(answer, dict) and isinstance(answer.get("client_id"), str):
                client_id = answer["client_id"]
            ctx.check(DCR_03, client_id is not None, problem="DynamicRegistrationRefused",
                      message=(f"the registration endpoint registered the client ({reg_ex.status}, client_id "
                               f"{client_id!r})" if client_id else
                               f"an RFC 7591 registration at {endpoints['register']} was answered {_describe(reg_ex)}"),
                      expected="201 {client_id, ...}", actual=_describe(reg_ex), entries=probe.entries(reg_ex))
        if client_id is None:
            for rid in (REDIRECT_03, PKCE_03, ROTATION_03):
                ctx.not_reached(rid, "no client could be registered to ask the authorization endpoint with")
            return
        query = urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": ELSEWHERE,
                           "code_challenge": _CHALLENGE, "code_challenge_method": "S256",
                           "state": "mcp-conformance-state"})
        target = _with_query(endpoints["authorize"], query)
        ex = await _request(probe, "GET", url=target, headers={"Authorization": None})
        location = ex.headers.get("location", "") if 300 <= ex.status < 400 else ""
        to = urlsplit(location)
        elsewhere = urlsplit(ELSEWHERE)
        open_redirect = bool(location) and (to.scheme, to.netloc, to.path) == (elsewhere.scheme, elsewhere.netloc,
                                                                               elsewhere.path)
        ctx.check(REDIRECT_03, not open_redirect, problem="OpenRedirect",
                  message=(f"an authorization request for the unregistered redirect URI {ELSEWHERE} was answered "
                           f"{ex.status}{' (to ' + location[:100] + ')' if location else ''}, not sent there"
                           if not open_redirect else
                           f"the authorization endpoint sent the answer to {location[:160]}, a redirect URI the client "
                           f"never registered (it registered {redirect})"),
                  expected=f"no redirect to {ELSEWHERE}", actual=f"{ex.status} {location[:160]}".strip(),
                  entries=probe.entries(ex))
        # PKCE required: the registered redirect URI, no code_challenge; no code may come back
        query = urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
                           "state": "mcp-conformance-no-pkce"})
        await _judge_no_pkce(ctx, probe, _with_query(endpoints["authorize"], query), redirect)
        if ctx.applies(ROTATION_03):
            await _judge_rotation(ctx, probe, endpoints, client_id, redirect)


@dataclass(frozen=True)
class _Followed:
    """Where an authorization request ended: ``how`` is "back" (at the redirect URI: ``params``
    its query), "refused" (a 4xx), "page" (a 2xx: a login or consent page), "error" (a 5xx, a 3xx
    without Location, no answer), "away" (a redirect to a host that is not loopback) or "loop"
    (too many redirects)."""

    how: str
    why: str
    params: dict[str, list[str]]
    hops: list[str]
    entries: list[int]


async def _follow(probe: Probe, url: str, redirect: str) -> _Followed:
    """Follow an authorization request (loopback redirects only) until it is refused, comes back
    to ``redirect`` or leaves what the suite can follow."""
    from urllib.parse import parse_qs, urljoin, urlsplit

    back = urlsplit(redirect)
    hops: list[str] = []
    entries: list[int] = []
    for _ in range(MAX_HOPS):
        ex = await _request(probe, "GET", url=url, headers={"Authorization": None, "Accept": "text/html, application/json"})
        entries += probe.entries(ex)
        hops.append(f"GET {url[:120]} -> {_describe(ex, 80)}")
        location = urljoin(url, ex.headers.get("location", "")) if 300 <= ex.status < 400 else ""
        if not location:
            if not isinstance(ex, NoAnswer) and 200 <= ex.status < 300:
                return _Followed("page", f"ended on a page ({_describe(ex, 80)}: a login or consent step)", {}, hops,
                                 entries)
            if not isinstance(ex, NoAnswer) and 400 <= ex.status < 500:
                return _Followed("refused", f"refused ({_describe(ex, 80)})", {}, hops, entries)
            return _Followed("error", f"ended on {_describe(ex, 80)}", {}, hops, entries)
        to = urlsplit(location)
        if (to.scheme, to.netloc, to.path) == (back.scheme, back.netloc, back.path):
            hops.append(f"-> {location[:160]}")
            return _Followed("back", "came back to the redirect URI", parse_qs(to.query), hops, entries)
        if not _is_loopback(to.hostname or ""):
            return _Followed("away", f"went on to {to.scheme}://{to.netloc} (redirects are followed on loopback hosts "
                             "only)", {}, hops, entries)
        url = location
    return _Followed("loop", f"was redirected more than {MAX_HOPS} times", {}, hops, entries)


async def _judge_no_pkce(ctx: ScenarioContext, probe: Probe, url: str, redirect: str) -> None:
    """The authorization request without PKCE must not bring a code back to ``redirect``."""
    f = await _follow(probe, url, redirect)
    if f.how == "refused":
        ctx.check(PKCE_03, True, message=f"an authorization request without PKCE was {f.why}", entries=f.entries)
    elif f.how == "back":
        code = "code" in f.params and "error" not in f.params
        ctx.check(PKCE_03, not code, problem="AuthorizationWithoutPkce",
                  message=(f"an authorization request without code_challenge came back to the redirect URI with "
                           f"error={f.params.get('error', ['?'])[0]!r}" if not code else
                           "an authorization request without code_challenge came back to the redirect URI with an "
                           "authorization code: PKCE is not required"),
                  expected="a refusal (4xx, or error=invalid_request at the redirect URI)", actual=f.hops,
                  entries=f.entries)
    else:
        ctx.not_reached(PKCE_03, f"the authorization request without PKCE {f.why}: whether a code would follow "
                                 "cannot be seen")


async def _token_request(probe: Probe, url: str, form: dict[str, str]) -> tuple[Any, Any]:
    """A POST of ``form`` to the token endpoint ``url``: the exchange and its JSON object (or None)."""
    from urllib.parse import urlencode

    ex = await _request(probe, "POST", url=url, body=urlencode(form).encode(),
                        headers={"Authorization": None, "Accept": "application/json",
                                 "Content-Type": "application/x-www-form-urlencoded"})
    answer = _json_object(ex) if not isinstance(ex, NoAnswer) else None
    return ex, answer if isinstance(answer, dict) else None


async def _judge_rotation(ctx: ScenarioContext, probe: Probe, endpoints: dict[str, str], client_id: str,
                          redirect: str) -> None:
    """The code flow with PKCE to a refresh token, then two refreshes with it: the first must bring a
    new refresh token, the second (the used one again) must be refused."""
    import secrets
    from urllib.parse import urlencode

    from conformance.wire.oauth import pkce_s256

    verifier = secrets.token_urlsafe(48)
    query = urlencode({"response_type": "code", "client_id": client_id, "redirect_uri": redirect,
                       "code_challenge": pkce_s256(verifier), "code_challenge_method": "S256",
                       "state": "mcp-conformance-rotation"})
    f = await _follow(probe, _with_query(endpoints["authorize"], query), redirect)
    code = (f.params.get("code") or [None])[0] if f.how == "back" else None
    if code is None:
        ctx.not_reached(ROTATION_03, f"the authorization request (with PKCE) {f.why}"
                        + (f" without a code ({f.params})" if f.how == "back" else "") + ": no code to get tokens with")
        return
    token_url = endpoints["token"]
    ex, tokens = await _token_request(probe, token_url, {"grant_type": "authorization_code", "code": code,
                                                         "redirect_uri": redirect, "client_id": client_id,
                                                         "code_verifier": verifier})
    first = tokens.get("refresh_token") if tokens else None
    if not isinstance(first, str) or not first:
        ctx.not_reached(ROTATION_03, f"the token endpoint answered the code with {_describe(ex, 120)}: no refresh "
                        "token was issued, so there is nothing to rotate")
        return
    refresh = {"grant_type": "refresh_token", "refresh_token": first, "client_id": client_id}
    ex2, renewed = await _token_request(probe, token_url, refresh)
    if renewed is None or not isinstance(renewed.get("access_token"), str):
        ctx.not_reached(ROTATION_03, f"refreshing with the refresh token just issued was answered {_describe(ex2, 120)}")
        return
    second = renewed.get("refresh_token")
    rotated = isinstance(second, str) and bool(second) and second != first
    ctx.check(ROTATION_03, rotated, problem="RefreshTokenNotRotated",
              message=("refreshing issued a new refresh token" if rotated else
                       "refreshing issued " + ("the same refresh token again" if second == first else
                                               "no new refresh token") + ": the refresh token is not rotated"),
              expected="a new refresh_token in the refresh answer",
              actual="the same refresh_token" if second == first else ("a new one" if rotated else "none"),
              entries=probe.entries(ex2))
    if not rotated:
        return
    ex3, reused = await _token_request(probe, token_url, refresh)
    refused = reused is None or not isinstance(reused.get("access_token"), str)
    ctx.check(ROTATION_03, refused, problem="RotatedRefreshTokenStillValid",
              message=(f"the refresh token already used was refused ({_describe(ex3, 80)})" if refused else
                       "the refresh token already used (and replaced) was accepted again: rotation does not "
                       "invalidate the old one"),
              expected="400 invalid_grant for the used refresh token", actual=_describe(ex3, 120),
              entries=probe.entries(ex3))


def _is_loopback(host: str) -> bool:
    import ipaddress

    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_https(ctx: ScenarioContext, endpoints: dict[str, str], source: str, entries: list[int]) -> None:
    """2025-03-26: "All authorization endpoints MUST be served over HTTPS"; an http endpoint on a
    loopback host is a local test deployment (no certificate to be had): not judged."""
    from urllib.parse import urlsplit

    plain = {name: url for name, url in endpoints.items() if url and urlsplit(url).scheme.lower() != "https"}
    remote = {name: url for name, url in plain.items() if not _is_loopback(urlsplit(url).hostname or "")}
    if plain and not remote:
        ctx.not_reached(HTTPS_03, "the authorization endpoints are plain http on a loopback host ("
                        + ", ".join(sorted(set(plain.values()))) + "): a local test deployment, where no certificate "
                        "can be had; run against the deployed server's https URL to check this")
        return
    ctx.check(HTTPS_03, not remote, problem="AuthorizationEndpointNotHttps",
              message=(f"the authorization endpoints of {source} are https URLs" if not remote else
                       f"authorization endpoints of {source} are not served over HTTPS: "
                       + "; ".join(f"{name} {url}" for name, url in sorted(remote.items()))),
              expected="https:// authorization endpoints", actual=dict(sorted(endpoints.items())), entries=entries)


def _method_of(endpoint: str) -> str:
    return "GET" if endpoint == "authorize" else "POST"
