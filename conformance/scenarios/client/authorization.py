"""basic/authorization: the client as an OAuth 2.1 client (2025-06-18 on, streamable HTTP and SSE).

Each scenario is one client run against a protected MCP endpoint (:mod:`._auth`): the first
request is answered 401 with a Bearer challenge, the protected resource metadata is served where
the scenario puts it, and the suite's authorization server answers the rest -- correctly, or with
the one thing the scenario provokes (no PKCE support advertised, a wrong ``state``, a wrong
``iss``, a metadata ``issuer`` that differs).  Every HTTP request to either server is logged in
order; the verdicts read that log, which is also written into the run's transcript.

Opt-in: without ``mcp-conformance client --auth`` every scenario here skips with the reason, so a
client run without authorization is unchanged.  A client that never starts the flow (no metadata
request after the 401) leaves every requirement "not reached" with what it did instead.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import anyio

from conformance.auth.core import AuthConfig
from conformance.client.context import ClientContext
from conformance.runtime.registry import scenario
from conformance.scenarios.client._auth import CUSTOM_PRM, SKIP_REASON, AuthSite, Hit, Protected
from conformance.scenarios.client._run import Played, describe_exit, play
from conformance.spec.versions import Transport
from conformance.wire.oauth import OAUTH_AS_WELL_KNOWN, OIDC_WELL_KNOWN, PRM_WELL_KNOWN, pkce_s256

HTTP = [Transport.STREAMABLE_HTTP, Transport.SSE]
LOOPBACK = ("localhost", "127.0.0.1", "::1")
NO_FLOW_WAIT = 5.0  # seconds after the first 401 a client may take to start the flow

FLOW = ("client.auth.parse-challenge", "client.auth.prm-from-header", "client.auth.pkce", "client.auth.pkce-s256",
        "client.auth.resource-both", "client.auth.resource-canonical", "client.auth.bearer-every-request",
        "client.auth.no-token-in-query", "client.auth.own-as-tokens", "client.auth.redirect-uri-form",
        "client.auth.redirect-uri-registered", "client.auth.dcr-application-type", "client.auth.bearer-header",
        "client.auth.scope-selection", "client.auth.dcr-supported", "client.auth.cimd-capability",
        "client.auth.dcr-native", "client.auth.refresh-grant-type", "client.auth.as-metadata-2025-06-18",
        "client.auth.client-id-obtained")
#: auth_flow's authorization server: dynamic registration the only way to a client ID (no client ID
#: metadata documents, nothing pre-registered), and ``offline_access`` listed (a client that wants
#: refresh tokens may ask for it)
FLOW_AS = AuthConfig(cimd=False, scopes_supported=("mcp:read", "mcp:write", "offline_access"))
OFFLINE = "offline_access"


async def _play(ctx: ClientContext, protected: Protected, *,
                provoked: Callable[[AuthSite], bool] | None = None) -> tuple[AuthSite, Played]:
    """One client run against the protected endpoint.  ``provoked``: once it holds, the client has
    what the scenario provokes it with; the run ends a grace later (``--timeout``, at most 5 s) if
    the client has not ended it by then (a client that waits for a callback that will never come
    right is not waited for until its own deadline)."""
    if not ctx.target.auth:
        ctx.skip(SKIP_REASON)
    with tempfile.TemporaryDirectory(prefix="mcpc-auth-") as tmp:
        async with AuthSite(ctx, protected) as site:
            async def during(run: Any, server: Any) -> None:
                # a client that stops on the way is not waited for until its whole budget: one that
                # answers the 401 with no step of the flow is stopped once it has done nothing toward
                # authorization for NO_FLOW_WAIT s (at least 2 x --timeout) after the first 401; one
                # that started the flow and has made no request to either server for as long, with
                # no token in use yet, likewise (where it stopped is in site.stalled)
                allowance = max(NO_FLOW_WAIT, 2 * ctx.timeout)
                first_401: float | None = None
                seen, since = len(site.hits()), anyio.current_time()
                while provoked is None or not provoked(site):
                    await anyio.sleep(0.1)
                    now = anyio.current_time()
                    hits = site.hits()
                    if len(hits) != seen:
                        seen, since = len(hits), now
                    if site.started():
                        if site.authorized():
                            if provoked is None:
                                return  # the flow is done: the rest of the run as any other
                            continue
                        if now - since > allowance:
                            site.stalled = (f"the client made no request to either server for {allowance:g} s after "
                                            f"{hits[-1].line()}, and the suite ended its run")
                            server.stop.set()
                            return
                        continue
                    if first_401 is None and any(h.status == 401 for h in site.hits("rs", "mcp")):
                        first_401 = now
                    if first_401 is not None and now - first_401 > allowance:
                        site.stalled = (f"the client did nothing toward authorization for {allowance:g} s after the "
                                        "401, and the suite ended its run")
                        server.stop.set()
                        return
                await anyio.sleep(min(5.0, max(1.0, ctx.timeout)))
                server.stop.set()

            played = await play(ctx, launch=site.launch_options(Path(tmp)), during=during, judge=False)
            _to_transcript(site, played)
            site.browser_text = site.browser_log.read_text(encoding="utf-8") if site.browser_log and \
                site.browser_log.exists() else ""
    return site, played


def _to_transcript(site: AuthSite, played: Played) -> None:
    peer = played.run.peer
    if peer is None:
        return
    peer.transcript.note("authorization: every HTTP request to the MCP server (RS) and the authorization server "
                         "(AS), in order:\n" + "\n".join(site.transcript()))


def _started(ctx: ClientContext, site: AuthSite, played: Played, rids: tuple[str, ...]) -> bool:
    if site.started():
        return True
    first = next((h for h in site.hits("rs", "mcp")), None)
    saw = f"the server answered its first request with {first.final_status()}" if first else "it made no request"
    for rid in rids:
        _not_reached(ctx, site, rid, f"the client did not start OAuth ({saw}; it never asked for the protected resource "
                             f"metadata nor the authorization server; {site.stalled or describe_exit(played.run)})")
    return False


def _not_reached(ctx: ClientContext, site: AuthSite, rid: str, reason: str) -> None:
    """Not reached, with where the client stopped when the suite had to end its run."""
    if site.stalled and site.stalled not in reason:
        reason = f"{reason}; {site.stalled}"
    ctx.not_reached(rid, reason)


def _lines(hits: list[Hit]) -> list[str]:
    return [h.line() for h in hits][:12]


def _token_requests(site: AuthSite) -> list[Hit]:
    return [h for h in site.as_hits("token") if h.form.get("grant_type") == "authorization_code"]


def _registered_uris(site: AuthSite) -> list[list[str]]:
    out = []
    for h in site.as_hits("register"):
        try:
            doc = json.loads(h.body)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("redirect_uris"), list):
            out.append([u for u in doc["redirect_uris"] if isinstance(u, str)])
    return out


# -- the whole flow, done right by the server side ------------------------------------------------

@scenario(requirements=list(FLOW), role="client", transports=HTTP, since="2025-06-18", order=80)
async def auth_flow(ctx: ClientContext) -> None:
    """A protected endpoint whose 401 names its metadata at a URL of its own (the well-known URIs
    answer 404); a correct authorization server with dynamic registration.  The whole flow is
    judged: the metadata URL used, PKCE, ``resource``, redirect URI, registration, and the token on
    every later request, never in a URL."""
    site, played = await _play(ctx, Protected(auth=FLOW_AS))
    if not _started(ctx, site, played, FLOW):
        return
    prm = site.hits("rs", "prm")
    used = [h for h in prm if h.path == CUSTOM_PRM]
    as_seen = bool(site.hits("as"))
    if not prm:
        for rid in ("client.auth.parse-challenge", "client.auth.prm-from-header"):
            _not_reached(ctx, site, rid, "the client asked for no protected resource metadata")
    else:
        ctx.check("client.auth.parse-challenge", bool(used) and as_seen, problem="ChallengeNotFollowed",
                  message=(f"the client fetched the metadata the 401's resource_metadata names ({used[0].line()}) and "
                           "went on to its authorization server") if used and as_seen else
                  "the 401's resource_metadata URL was " + ("fetched, but the client never went on to the "
                                                           "authorization server it names" if used else "never fetched"),
                  expected=f"GET {CUSTOM_PRM}, then the authorization server", actual=_lines(prm))
        first = prm[0]
        ctx.check("client.auth.prm-from-header", first.path == CUSTOM_PRM, problem="ResourceMetadataUrlIgnored",
                  message=f"the first metadata request was the challenge's resource_metadata URL ({first.line()})"
                  if first.path == CUSTOM_PRM else
                  f"the challenge named {CUSTOM_PRM}, and the client's first metadata request was {first.line()}",
                  expected=f"GET {CUSTOM_PRM} first", actual=_lines(prm))
    _judge_authorization_requests(ctx, site)
    _judge_token_use(ctx, site)
    _judge_bearer_header(ctx, site)
    _judge_registration(ctx, site)
    _judge_metadata_used(ctx, site)
    _judge_scope_selection(ctx, site, list(site.protected.scopes_supported or ()),
                           "no scope in the challenge: all of the metadata's scopes_supported")


def _judge_authorization_requests(ctx: ClientContext, site: AuthSite) -> None:
    authorize = site.as_hits("authorize")
    tokens = _token_requests(site)
    pkce_rids = ("client.auth.pkce", "client.auth.pkce-s256", "client.auth.resource-both",
                 "client.auth.resource-canonical", "client.auth.redirect-uri-form", "client.auth.redirect-uri-registered")
    registered = _registered_uris(site)
    if site.as_hits("register"):
        bodies = []
        for h in site.as_hits("register"):
            try:
                bodies.append(json.loads(h.body))
            except ValueError:
                bodies.append(None)
        bad = [b.get("application_type") if isinstance(b, dict) else b for b in bodies
               if not (isinstance(b, dict) and b.get("application_type") in ("native", "web"))]
        ctx.check("client.auth.dcr-application-type", not bad, problem="RegistrationWithoutApplicationType",
                  message="the registration request names application_type "
                          f"{bodies[0].get('application_type')!r}" if not bad else
                  f"a dynamic registration request had application_type {bad[0]!r} (absent or not native/web)",
                  expected='application_type "native" or "web"', actual=bad[0] if bad else None)
    else:
        _not_reached(ctx, site, "client.auth.dcr-application-type", "the client did not register dynamically")
    if not authorize:
        for rid in pkce_rids:
            _not_reached(ctx, site, rid, "the client made no authorization request (it stopped after: "
                                 + "; ".join(_lines(site.hits())[-3:]) + ")")
        return
    pkce_ok, challenged, what = _pkce(authorize[0], tokens)
    for rid in ("client.auth.pkce", "client.auth.pkce-s256"):
        ctx.check(rid, pkce_ok, problem="PkceNotUsed" if not challenged else "PkceWrong",
                  message=f"authorization request: {what}", expected="code_challenge with method S256, verifier matching",
                  actual=what)
    missing = [f"authorization request {h.line()}" for h in authorize if "resource" not in h.params]
    missing += [f"token request {h.line()}" for h in tokens if "resource" not in h.form]
    ctx.check("client.auth.resource-both", not missing, problem="ResourceParameterMissing",
              message="resource is in the authorization request" + (" and the token request" if tokens else
                                                                      " (no token request was made)")
              if not missing else f"no resource parameter in: {'; '.join(missing)}",
              expected="resource in both requests", actual=missing or None)
    sent = [h.params.get("resource") for h in authorize if "resource" in h.params] + \
           [h.form.get("resource") for h in tokens if "resource" in h.form]
    wrong = [r for r in sent if r != site.resource]
    if sent:
        ctx.check("client.auth.resource-canonical", not wrong, problem="ResourceNotCanonical",
                  message=f"resource is {site.resource!r}, the server's canonical URI" if not wrong else
                  f"resource {wrong[0]!r} is not the server's canonical URI {site.resource!r}",
                  expected=site.resource, actual=wrong[0] if wrong else site.resource)
    else:
        _not_reached(ctx, site, "client.auth.resource-canonical", "the client sent no resource parameter")
    uris = [h.params.get("redirect_uri") for h in authorize] + [u for group in registered for u in group]
    bad_form = [u for u in uris if not _redirect_form_ok(u)]
    ctx.check("client.auth.redirect-uri-form", not bad_form, problem="RedirectUriNotLoopbackOrHttps",
              message=f"redirect URI {uris[0]!r} is loopback or https" if not bad_form else
              f"redirect URI {bad_form[0]!r} is neither localhost nor https",
              expected="http://localhost... / http://127.0.0.1... or https://...", actual=bad_form[0] if bad_form else uris[0])
    if registered:
        unregistered = [h.params.get("redirect_uri") for h in authorize
                        if not any(h.params.get("redirect_uri") in group for group in registered)]
        ctx.check("client.auth.redirect-uri-registered", not unregistered, problem="RedirectUriNotRegistered",
                  message="the authorization request's redirect_uri is one the client registered" if not unregistered else
                  f"redirect_uri {unregistered[0]!r} was not among the registered {registered}",
                  expected=registered, actual=unregistered[0] if unregistered else None)
    else:
        _not_reached(ctx, site, "client.auth.redirect-uri-registered",
                        "the client did not register dynamically (pre-registered or a client ID metadata document): "
                        "what it registered cannot be seen")


def _redirect_form_ok(uri: str | None) -> bool:
    if not uri:
        return False
    parts = urlsplit(uri)
    host = (parts.hostname or "").lower()
    return parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK)


def _judge_token_use(ctx: ClientContext, site: AuthSite) -> None:
    mcp = site.hits("rs", "mcp")
    with_token = [h for h in mcp if h.token]
    issued = [h for h in site.as_hits("token") if h.status == 200]
    server = site.server
    # tokens in a URL: an access_token parameter, or any query value that is a token we issued
    in_url = [h for h in site.hits() if "access_token" in h.params
              or (server is not None and any(server.verify(v) for vs in parse_qs(h.query).values() for v in vs
                                             if v.count(".") == 2))]
    if issued or in_url:
        ctx.check("client.auth.no-token-in-query", not in_url, problem="TokenInUrl",
                  message="no request URL carries an access token" if not in_url else
                  f"an access token is in the URL of {in_url[0].line()}", expected="no token in any URL",
                  actual=_lines(in_url) or None)
    else:
        _not_reached(ctx, site, "client.auth.no-token-in-query", "the client obtained no access token")
    if not with_token:
        for rid in ("client.auth.bearer-every-request", "client.auth.own-as-tokens"):
            if rid in ctx.scenario.requirements:
                _not_reached(ctx, site, rid, "the client sent no bearer token to the MCP server"
                                 + ("" if issued else " (it obtained none)"))
        return
    foreign = [h for h in with_token if server is None or server.verify(h.token or "") is None]
    if "client.auth.own-as-tokens" in ctx.scenario.requirements:
        ctx.check("client.auth.own-as-tokens", not foreign, problem="ForeignToken",
                  message=f"every bearer token sent ({len(with_token)} requests) was issued by the server's "
                          "authorization server" if not foreign else
                  f"{foreign[0].line()} carried a token the server's authorization server did not issue",
                  expected="tokens of the server's authorization server only", actual=_lines(foreign) or None)
    start = with_token[0].seq
    bare = [h for h in mcp if h.seq > start and not h.token]
    ctx.check("client.auth.bearer-every-request", not bare, problem="RequestWithoutToken",
              message=f"all {len([h for h in mcp if h.seq >= start])} requests to the MCP server from the first "
                      "with a token on carried Authorization: Bearer" if not bare else
              f"{bare[0].line()} carried no Authorization header, after {with_token[0].line()} did",
              expected="Authorization: Bearer on every request", actual=_lines(bare) or None)


# -- discovery by the well-known URIs ---------------------------------------------------------------

@scenario(requirements=["client.auth.prm-well-known-order", "client.auth.as-metadata-order"], role="client",
          transports=HTTP, since="2025-11-25", order=81)
async def auth_well_known(ctx: ClientContext) -> None:
    """The 401 names no metadata URL; the protected resource metadata is served only at the root
    well-known URI, and the authorization server (issuer ``.../tenant1``) serves its metadata only
    in the OpenID Connect path-appended form: the client must try the candidates in the pages'
    order."""
    protected = Protected(header=False, prm_at=("root",), as_path="/tenant1",
                          auth=AuthConfig(metadata_forms=("oidc-append",)))
    site, played = await _play(ctx, protected)
    rids = ("client.auth.prm-well-known-order", "client.auth.as-metadata-order")
    if not _started(ctx, site, played, rids):
        return
    prm = [h for h in site.hits("rs", "prm")]
    path_form = PRM_WELL_KNOWN + urlsplit(site.endpoint.url).path
    order = [h.path for h in prm]
    expected = [path_form, PRM_WELL_KNOWN]
    ok = order[:2] == expected
    ctx.check("client.auth.prm-well-known-order", ok, problem="WellKnownOrder",
              message="the client asked for the path-inserted well-known URI, then the root one" if ok else
              f"the client's metadata requests were {order[:4]} (the path-inserted URI, then the root, expected)",
              expected=expected, actual=order[:4])
    issuer_path = urlsplit(site.issuer).path
    candidates = [OAUTH_AS_WELL_KNOWN + issuer_path, OIDC_WELL_KNOWN + issuer_path, issuer_path + OIDC_WELL_KNOWN]
    meta = [h.path for h in site.hits("as") if ".well-known" in h.path]
    if not meta:
        _not_reached(ctx, site, "client.auth.as-metadata-order", "the client asked for no authorization server metadata "
                        "(did it find the protected resource metadata? " + "; ".join(_lines(prm)) + ")")
        return
    tried = [p for p in meta if p in candidates]
    upto = tried[: tried.index(candidates[2]) + 1] if candidates[2] in tried else tried
    ok = upto == candidates and all(p in candidates for p in meta[: len(upto)])
    ctx.check("client.auth.as-metadata-order", ok, problem="MetadataDiscoveryOrder",
              message="the client tried OAuth (path inserted), OpenID Connect (path inserted), then OpenID Connect "
                      "(path appended), in that order" if ok else
              f"the client's authorization server metadata requests were {meta[:5]}",
              expected=candidates, actual=meta[:5])


@scenario(requirements=["client.auth.as-metadata-order-root", "client.auth.scope-selection"], role="client",
          transports=HTTP, since="2025-11-25", order=81)
async def auth_oidc_only(ctx: ClientContext) -> None:
    """The authorization server's issuer has no path and serves its metadata only at the OpenID
    Connect well-known URI: the client must try RFC 8414's URI first, then OpenID Connect's.  The
    protected resource metadata has no ``scopes_supported`` and the challenge no ``scope``: the
    authorization request has no ``scope`` parameter (the scope selection's last case)."""
    site, played = await _play(ctx, Protected(scopes_supported=None, auth=AuthConfig(metadata_forms=("oidc-insert",))))
    rid = "client.auth.as-metadata-order-root"
    if not _started(ctx, site, played, (rid, "client.auth.scope-selection")):
        return
    _judge_scope_selection(ctx, site, None, "neither a challenge scope nor scopes_supported: no scope parameter")
    meta = [h.path for h in _as_metadata_requests(site.hits("as"))]
    if not meta:
        _not_reached(ctx, site, rid, "the client asked for no authorization server metadata")
        return
    expected = [OAUTH_AS_WELL_KNOWN, OIDC_WELL_KNOWN]
    ok = meta[:2] == expected
    ctx.check(rid, ok, problem="MetadataDiscoveryOrder",
              message="the client tried RFC 8414's well-known URI, then OpenID Connect's" if ok else
              f"the client's authorization server metadata requests were {meta[:4]}", expected=expected, actual=meta[:4])


# -- the challenge's scope ---------------------------------------------------------------------------

@scenario(requirements=["client.auth.challenge-scope", "client.auth.scope-selection"], role="client", transports=HTTP,
          since="2025-11-25", order=81)
async def auth_challenge_scope(ctx: ClientContext) -> None:
    """The 401 challenge names a scope (``mcp:admin``) the protected resource metadata's
    ``scopes_supported`` does not list: the client must ask for it."""
    site, played = await _play(ctx, Protected(challenge_scope="mcp:admin"))
    rid = "client.auth.challenge-scope"
    if not _started(ctx, site, played, (rid,)):
        return
    authorize = site.as_hits("authorize")
    if not authorize:
        _not_reached(ctx, site, rid, "the client made no authorization request")
        return
    asked = (authorize[0].params.get("scope") or "").split()
    ok = "mcp:admin" in asked
    ctx.check(rid, ok, problem="ChallengedScopeNotRequested",
              message=f"the authorization request asks for {' '.join(asked)!r}, the challenged scope included" if ok else
              f"the challenge asked for scope 'mcp:admin' and the authorization request asks for {' '.join(asked)!r}",
              expected="mcp:admin among the requested scopes", actual=" ".join(asked) or None)
    if ok:
        _judge_scope_selection(ctx, site, ["mcp:admin"], "the challenge's scope")
    else:  # one defect, one verdict: the challenged scope left out is the MUST's
        _not_reached(ctx, site, "client.auth.scope-selection", "the challenged scope was not requested at all "
                     "(client.auth.challenge-scope)")


# -- refusals: what the client must not go on with -------------------------------------------------

def _metadata_fetched(site: AuthSite) -> bool:
    return any(".well-known" in h.path and h.status == 200 for h in site.hits("as"))


def _authorized(site: AuthSite) -> bool:
    return any(h.status == 302 and site.delivered(h) for h in site.as_hits("authorize"))


@scenario(requirements=["client.auth.pkce-refuse"], role="client", transports=HTTP, since="2025-11-25", order=82)
async def auth_no_pkce_support(ctx: ClientContext) -> None:
    """The authorization server's metadata has no ``code_challenge_methods_supported``: the client
    must refuse to proceed (no authorization request)."""
    site, played = await _play(ctx, Protected(auth=AuthConfig(pkce_methods=None, require_pkce=False)),
                               provoked=_metadata_fetched)
    _judge_refused_without_pkce(ctx, site, played, "client.auth.pkce-refuse", "metadata")


def _judge_refused_without_pkce(ctx: ClientContext, site: AuthSite, played: Played, rid: str, what: str) -> None:
    if not _started(ctx, site, played, (rid,)):
        return
    if not _metadata_fetched(site):
        _not_reached(ctx, site, rid, "the client never fetched the authorization server metadata")
        return
    authorize = site.as_hits("authorize")
    ctx.check(rid, not authorize, problem="ProceededWithoutPkceSupport",
              message="the client made no authorization request to a server that advertises no PKCE support"
              if not authorize else f"the {what} has no code_challenge_methods_supported, and the client went on: "
                                    f"{authorize[0].line()}",
              expected="no authorization request", actual=_lines(authorize) or None)


def _code_redeemed(site: AuthSite, after: int) -> list[Hit]:
    return [h for h in _token_requests(site) if h.seq > after]


@scenario(requirements=["client.auth.state"], role="client", transports=HTTP, since="2025-06-18", order=83)
async def auth_wrong_state(ctx: ClientContext) -> None:
    """The authorization server redirects back with a ``state`` that is not the client's: the client
    must discard that response (no token request)."""
    site, played = await _play(ctx, Protected(auth=AuthConfig(state_in_response="wrong")), provoked=_authorized)
    rid = "client.auth.state"
    if not _started(ctx, site, played, (rid,)):
        return
    authorize = site.as_hits("authorize")
    if not authorize:
        _not_reached(ctx, site, rid, "the client made no authorization request")
        return
    if "state" not in authorize[0].params:
        ctx.check(rid, False, problem="StateNotUsed", message=f"the authorization request has no state: {authorize[0].line()}",
                  expected="a state parameter", actual=None)
        return
    answered = [h for h in authorize if h.status == 302 and site.delivered(h)]
    if not answered:
        _not_reached(ctx, site, rid, "the authorization response never reached the client (the browser could not deliver "
                             f"it): {site.browser_text.strip()[-300:] or 'no browser log'}")
        return
    redeemed = _code_redeemed(site, answered[0].seq)
    ctx.check(rid, not redeemed, problem="StateMismatchAccepted",
              message="the client discarded the authorization response with a state that is not its own (no token "
                      "request)" if not redeemed else
              f"the authorization response's state was not the client's, and it redeemed the code: {redeemed[0].line()}",
              expected="no token request", actual=_lines(redeemed) or None)


@scenario(requirements=["client.auth.iss-validation"], role="client", transports=HTTP, since="2026-07-28", order=84)
async def auth_wrong_iss(ctx: ClientContext) -> None:
    """The authorization server advertises RFC 9207 ``iss`` and redirects back with an ``iss`` that is
    not its issuer: the client must not send the code to any token endpoint."""
    site, played = await _play(ctx, Protected(auth=AuthConfig(iss_in_response="wrong")), provoked=_authorized)
    rid = "client.auth.iss-validation"
    if not _started(ctx, site, played, (rid,)):
        return
    answered = [h for h in site.as_hits("authorize") if h.status == 302 and site.delivered(h)]
    if not answered:
        _not_reached(ctx, site, rid, "no authorization response reached the client")
        return
    redeemed = _code_redeemed(site, answered[0].seq)
    ctx.check(rid, not redeemed, problem="IssuerMismatchAccepted",
              message="the client did not redeem a code whose response named another issuer" if not redeemed else
              f"the authorization response's iss was not the issuer, and the client redeemed the code: {redeemed[0].line()}",
              expected="no token request", actual=_lines(redeemed) or None)


@scenario(requirements=["client.auth.iss-validation"], role="client", transports=HTTP, since="2026-07-28", order=84)
async def auth_missing_iss(ctx: ClientContext) -> None:
    """The authorization server advertises ``authorization_response_iss_parameter_supported`` and
    redirects back without ``iss``: the client must reject the response (no token request)."""
    await _judge_not_redeemed(ctx, AuthConfig(iss_in_response="omit"), "client.auth.iss-validation",
                              "the response had no iss although the metadata advertises it")


@scenario(requirements=["client.auth.iss-no-normalization"], role="client", transports=HTTP, since="2026-07-28",
          order=84)
async def auth_normalized_iss(ctx: ClientContext) -> None:
    """The authorization server redirects back with ``iss`` = its issuer plus a trailing slash (equal
    only after normalization): the client must not redeem the code."""
    await _judge_not_redeemed(ctx, AuthConfig(iss_in_response="normalized"), "client.auth.iss-no-normalization",
                              "the response's iss was the issuer with a trailing slash")


async def _judge_not_redeemed(ctx: ClientContext, config: AuthConfig, rid: str, what: str) -> None:
    site, played = await _play(ctx, Protected(auth=config), provoked=_authorized)
    if not _started(ctx, site, played, (rid,)):
        return
    answered = [h for h in site.as_hits("authorize") if h.status == 302 and site.delivered(h)]
    if not answered:
        _not_reached(ctx, site, rid, "no authorization response reached the client")
        return
    redeemed = _code_redeemed(site, answered[0].seq)
    ctx.check(rid, not redeemed, problem="AuthorizationResponseAccepted",
              message=f"{what}, and the client did not redeem the code" if not redeemed else
              f"{what}, and the client redeemed the code: {redeemed[0].line()}",
              expected="no token request", actual=_lines(redeemed) or None)


@scenario(requirements=["client.auth.metadata-issuer"], role="client", transports=HTTP, since="2026-07-28", order=85)
async def auth_metadata_issuer_mismatch(ctx: ClientContext) -> None:
    """The authorization server metadata's ``issuer`` is not the issuer its well-known URL was built
    from: the client must not use it (no registration, authorization or token request)."""
    site, played = await _play(ctx, Protected(auth=AuthConfig(metadata_issuer="https://honest.example")),
                               provoked=_metadata_fetched)
    rid = "client.auth.metadata-issuer"
    if not _started(ctx, site, played, (rid,)):
        return
    if not _metadata_fetched(site):
        _not_reached(ctx, site, rid, "the client never fetched the authorization server metadata")
        return
    used = site.as_hits("register") + site.as_hits("authorize") + site.as_hits("token")
    ctx.check(rid, not used, problem="MismatchedMetadataUsed",
              message="the client did not use metadata whose issuer differs" if not used else
              f"the metadata's issuer differs from the server's, and the client used it: {used[0].line()}",
              expected="no request to its endpoints", actual=_lines(used) or None)


# -- 2025-03-26: the MCP server's origin is its own authorization server --------------------------

LEGACY_FLOW = ("client.auth.base-url-2025-03-26", "client.auth.pkce-2025-03-26", "client.auth.redirect-uri-form-2025-03-26",
               "client.auth.bearer-every-request", "client.auth.no-token-in-query", "client.auth.dcr-supported")


def _as_metadata_requests(hits: list[Hit]) -> list[Hit]:
    """Authorization server metadata requests (RFC 8414 or OpenID Connect), not the protected
    resource metadata probes a client may try first on the same origin."""
    return [h for h in hits if "/.well-known/oauth-authorization-server" in h.path
            or "/.well-known/openid-configuration" in h.path]


def _pkce(authorize: Hit, tokens: list[Hit]) -> tuple[bool, bool, str]:
    """(ok, a code_challenge was sent, what) for an authorization request and the first of the
    token requests ``tokens``: S256, and the verifier hashing to the challenge."""
    challenge, method = authorize.params.get("code_challenge"), authorize.params.get("code_challenge_method")
    verifier_ok: bool | None = None
    what = "no token request was made"
    if tokens:
        verifier = tokens[0].form.get("code_verifier")
        verifier_ok = bool(verifier) and challenge is not None and pkce_s256(verifier) == challenge
        what = ("the token request's code_verifier hashes (S256) to the challenge" if verifier_ok else
                f"the token request's code_verifier {'is missing' if not verifier else 'does not hash to the challenge'}")
    ok = bool(challenge) and method == "S256" and verifier_ok is not False
    return ok, bool(challenge), f"code_challenge {'present' if challenge else 'absent'}, code_challenge_method {method!r}; {what}"


@scenario(requirements=list(LEGACY_FLOW), role="client", transports=HTTP, versions=["2025-03-26"], order=86)
async def auth_flow_2025_03_26(ctx: ClientContext) -> None:
    """2025-03-26: the 401 is a bare Bearer challenge; the MCP server's origin is the authorization
    server (its metadata at the origin's root, dynamic registration, PKCE).  The client must find
    the metadata at the root (the endpoint's path discarded), use PKCE, a loopback or https
    redirect URI, and then the token on every request, never in a URL."""
    site, played = await _play(ctx, Protected(legacy=True, auth=AuthConfig(cimd=False)))
    if not _started(ctx, site, played, LEGACY_FLOW):
        return
    _judge_dcr_supported(ctx, site)
    meta = _as_metadata_requests(site.hits("as"))
    rid = "client.auth.base-url-2025-03-26"
    if not meta:
        _not_reached(ctx, site, rid, "the client asked for no authorization server metadata")
    else:
        ok = meta[0].path == OAUTH_AS_WELL_KNOWN
        ctx.check(rid, ok, problem="BaseUrlKeepsPath",
                  message=f"the first metadata request was at the origin's root ({meta[0].line()})" if ok else
                  f"the first metadata request was {meta[0].line()}, not {OAUTH_AS_WELL_KNOWN} at the origin's root",
                  expected=OAUTH_AS_WELL_KNOWN, actual=[h.path for h in meta[:3]])
    authorize = site.as_hits("authorize")
    if not authorize:
        _not_reached(ctx, site, "client.auth.pkce-2025-03-26", "the client made no authorization request")
        _not_reached(ctx, site, "client.auth.redirect-uri-form-2025-03-26", "the client made no authorization request")
    else:
        # the token request that follows the authorization request
        ok, _, what = _pkce(authorize[0], [h for h in _token_requests(site) if h.seq > authorize[0].seq])
        ctx.check("client.auth.pkce-2025-03-26", ok, problem="PkceNotUsed", message=f"authorization request: {what}",
                  expected="code_challenge with method S256, verifier matching", actual=what)
        uris = [h.params.get("redirect_uri") for h in site.as_hits("authorize")] + \
               [u for group in _registered_uris(site) for u in group]
        bad = [u for u in uris if not _redirect_form_ok(u)]
        ctx.check("client.auth.redirect-uri-form-2025-03-26", not bad, problem="RedirectUriNotLoopbackOrHttps",
                  message=f"redirect URI {uris[0]!r} is loopback or https" if not bad else
                  f"redirect URI {bad[0]!r} is neither localhost nor https", expected="loopback http or https",
                  actual=bad[0] if bad else uris[0])
    _judge_token_use(ctx, site)


@scenario(requirements=["client.auth.metadata-first-2025-03-26", "client.auth.default-endpoints-2025-03-26"],
          role="client", transports=HTTP, versions=["2025-03-26"], order=87)
async def auth_default_endpoints_2025_03_26(ctx: ClientContext) -> None:
    """2025-03-26: the MCP server's origin has no authorization server metadata (404) and serves the
    default endpoints: the client must ask for the metadata first, then use ``/register``,
    ``/authorize`` and ``/token`` at the origin's root."""
    site, played = await _play(ctx, Protected(legacy=True, auth=AuthConfig(metadata_forms=())))
    rids = ("client.auth.metadata-first-2025-03-26", "client.auth.default-endpoints-2025-03-26")
    if not _started(ctx, site, played, rids):
        return
    hits = site.hits("as")
    endpoints = [h for h in hits if h.path.rstrip("/").rsplit("/", 1)[-1] in ("authorize", "token", "register")]
    meta = _as_metadata_requests(hits)
    if not endpoints:
        for rid in rids:
            _not_reached(ctx, site, rid, "the client used no authorization endpoint (" + "; ".join(_lines(hits)[-3:]) + ")")
        return
    ok = bool(meta) and meta[0].seq < endpoints[0].seq
    ctx.check(rids[0], ok, problem="DefaultEndpointsWithoutMetadataAttempt",
              message=f"the client asked for the metadata ({meta[0].line()}) before {endpoints[0].line()}" if ok else
              f"{endpoints[0].line()} came before any metadata request", expected="the metadata request first",
              actual=_lines(hits))
    wrong = [h for h in endpoints if h.path not in ("/authorize", "/token", "/register")]
    ctx.check(rids[1], not wrong, problem="DefaultEndpointsNotAtRoot",
              message="registration, authorization and token requests went to the default paths at the origin's "
                      "root" if not wrong else f"{wrong[0].line()} is not a default endpoint at the origin's root",
              expected=["/register", "/authorize", "/token"], actual=_lines(wrong) or None)


# -- the token's header, the registration, the initial scopes (auth_flow) ------------------------------

def _issued_in(site: AuthSite, text: str) -> bool:
    """Does ``text`` (a header value) hold an access token this run's authorization server issued?"""
    server = site.server
    if server is None:
        return False
    words = text.replace(",", " ").replace("=", " ").split()
    return any(w.count(".") == 2 and server.verify(w) is not None for w in words)


def _judge_bearer_header(ctx: ClientContext, site: AuthSite) -> None:
    rid = "client.auth.bearer-header"
    issued = [h for h in site.as_hits("token") if h.status == 200]
    mcp = site.hits("rs", "mcp")
    # an issued token anywhere in a request to the MCP server but as ``Authorization: Bearer <token>``
    misplaced = [h for h in mcp if any(_issued_in(site, v) for k, v in h.headers.items() if k != "authorization")
                 or (_issued_in(site, h.headers.get("authorization", "")) and not h.token)]
    as_bearer = [h for h in mcp if h.token and site.server is not None and site.server.verify(h.token)]
    if not issued and not misplaced:
        _not_reached(ctx, site, rid, "the client obtained no access token")
        return
    after = [h for h in mcp if issued and h.seq > issued[0].seq]
    if not misplaced and not as_bearer and not after:
        _not_reached(ctx, site, rid, "the client made no request to the MCP server after it obtained a token")
        return
    ok = not misplaced and bool(as_bearer)
    what = (f"{misplaced[0].line()} carried the access token in "
            + ", ".join(f"{k}: {v[:40]}..." for k, v in misplaced[0].headers.items() if _issued_in(site, v))
            if misplaced else f"no request after the token was issued carried it as Authorization: Bearer "
                              f"({after[0].line() if after else 'none'})")
    ctx.check(rid, ok, problem="TokenNotInAuthorizationHeader",
              message=f"the access token went to the MCP server as Authorization: Bearer ({len(as_bearer)} requests)"
              if ok else what, expected="Authorization: Bearer <access-token>", actual=None if ok else what)


def _register_bodies(site: AuthSite) -> list[tuple[Hit, dict[str, Any]]]:
    out = []
    for h in site.as_hits("register"):
        try:
            doc = json.loads(h.body)
        except ValueError:
            continue
        if isinstance(doc, dict):
            out.append((h, doc))
    return out


def _is_url_client_id(client_id: str | None) -> bool:
    return bool(client_id) and urlsplit(client_id or "").scheme in ("http", "https")


def _judge_registration(ctx: ClientContext, site: AuthSite) -> None:
    """auth_flow's authorization server offers dynamic registration only: the client registers
    (DCR SHOULD, 2025-03-26 / 2025-06-18), sends no URL client ID (client ID metadata documents are
    not advertised), registers as a native application (its redirect URIs are loopback), and has
    ``refresh_token`` among its grant types when it shows it wants refresh tokens."""
    authorize = site.as_hits("authorize")
    register = site.as_hits("register")
    bodies = _register_bodies(site)
    _judge_dcr_supported(ctx, site)
    _judge_client_id_obtained(ctx, site)
    rid = "client.auth.cimd-capability"
    if not authorize:
        _not_reached(ctx, site, rid, "the client made no authorization request")
    else:
        # (the suite's registration issues ``client-<hex>`` ids and nothing is pre-registered here)
        urls = [h for h in authorize if _is_url_client_id(h.params.get("client_id"))]
        ctx.check(rid, not urls, problem="ClientIdMetadataDocumentNotAdvertised",
                  message=f"the client's client_id {authorize[0].params.get('client_id')!r} is not a URL of its own "
                          "(the authorization server does not advertise client ID metadata documents)" if not urls else
                  f"the authorization server does not advertise client_id_metadata_document_supported, and the client "
                  f"used the URL client_id {urls[0].params.get('client_id')!r}: {urls[0].line()}",
                  expected="a client_id the server issued (dynamic registration) or pre-registered",
                  actual=urls[0].params.get("client_id") if urls else authorize[0].params.get("client_id"))
    rid = "client.auth.dcr-native"
    typed = [(h, b) for h, b in bodies if b.get("application_type") in ("native", "web")]
    local = [(h, b) for h, b in typed if isinstance(b.get("redirect_uris"), list) and b["redirect_uris"]
             and all(isinstance(u, str) and _loopback(u) for u in b["redirect_uris"])]
    if not local:
        _not_reached(ctx, site, rid, "no dynamic registration with application_type and only loopback redirect URIs"
                     if register else "the client did not register dynamically")
    else:
        web = [(h, b) for h, b in local if b["application_type"] != "native"]
        ctx.check(rid, not web, problem="LoopbackClientNotNative",
                  message="the registration of loopback redirect URIs names application_type \"native\"" if not web else
                  f"the registration of the loopback redirect URIs {web[0][1]['redirect_uris']} names application_type "
                  f"{web[0][1]['application_type']!r}", expected='application_type "native"',
                  actual=web[0][1]["application_type"] if web else "native")
    rid = "client.auth.refresh-grant-type"
    wants = [h for h in authorize if OFFLINE in (h.params.get("scope") or "").split()] + \
            [h for h in site.as_hits("token") if h.form.get("grant_type") == "refresh_token"]
    if not wants:
        _not_reached(ctx, site, rid, "the client showed no wish for refresh tokens (no offline_access asked for, no "
                                     "refresh_token grant)")
    elif not bodies:
        _not_reached(ctx, site, rid, "the client did not register dynamically")
    else:
        missing = [b for _, b in bodies if not (isinstance(b.get("grant_types"), list) and "refresh_token" in b["grant_types"])]
        ctx.check(rid, not missing, problem="RefreshGrantTypeNotRegistered",
                  message="the client wants refresh tokens and registered grant_types with refresh_token" if not missing else
                  f"the client wants refresh tokens ({wants[0].line()}) and registered grant_types "
                  f"{missing[0].get('grant_types')!r}", expected="refresh_token in grant_types",
                  actual=missing[0].get("grant_types") if missing else None)


def _judge_client_id_obtained(ctx: ClientContext, site: AuthSite) -> None:
    rid = "client.auth.client-id-obtained"
    authorize = site.as_hits("authorize")
    if not authorize or site.server is None:
        _not_reached(ctx, site, rid, "the client made no authorization request")
        return
    known = site.server.issued_credentials()
    made_up = [h for h in authorize if h.params.get("client_id") not in known
               and not _cimd_url_ok(h.params.get("client_id"))]
    ctx.check(rid, not made_up, problem="ClientIdNotObtained",
              message=f"the authorization request's client_id {authorize[0].params.get('client_id')!r} was obtained "
                      "(registered here)" if not made_up else
              f"the client_id {made_up[0].params.get('client_id')!r} of {made_up[0].line()} was never issued by the "
              "authorization server nor pre-registered, and is no https client ID metadata document URL",
              expected="a client ID from registration, pre-registration or a client ID metadata document",
              actual=made_up[0].params.get("client_id") if made_up else None)


def _cimd_url_ok(client_id: str | None) -> bool:
    """An https URL with a path other than ``/`` (a client ID metadata document URL)."""
    if not client_id:
        return False
    parts = urlsplit(client_id)
    return parts.scheme == "https" and bool(parts.netloc) and parts.path not in ("", "/")


def _judge_dcr_supported(ctx: ClientContext, site: AuthSite) -> None:
    """The authorization server offers dynamic registration only: the client registers before it
    authorizes."""
    rid = "client.auth.dcr-supported"
    authorize = site.as_hits("authorize")
    register = site.as_hits("register")
    if not _metadata_fetched(site):
        _not_reached(ctx, site, rid, "the client never fetched the authorization server metadata")
    else:
        first = authorize[0].seq if authorize else None
        before = [h for h in register if first is None or h.seq < first]
        ok = bool(before)
        ctx.check(rid, ok, problem="DynamicRegistrationNotUsed",
                  message=f"the client registered dynamically ({before[0].line()}) before authorizing" if ok else
                  (f"the authorization server offers only dynamic registration and the client authorized without it: "
                   f"{authorize[0].line()}" if authorize else
                   "the authorization server offers only dynamic registration (registration_endpoint), and the client "
                   "never registered: it stopped after " + "; ".join(_lines(site.hits())[-2:])),
                  expected="POST registration_endpoint before the authorization request",
                  actual=None if ok else _lines(site.hits("as"))[-4:])


def _judge_metadata_used(ctx: ClientContext, site: AuthSite) -> None:
    """2025-06-18: the authorization server's metadata is asked for (and answered) before any of
    its endpoints is used."""
    rid = "client.auth.as-metadata-2025-06-18"
    hits = site.hits("as")
    endpoints = [h for h in hits if h.path.rstrip("/").rsplit("/", 1)[-1] in ("register", "authorize", "token")]
    if not endpoints:
        _not_reached(ctx, site, rid, "the client used no endpoint of the authorization server")
        return
    meta = [h for h in _as_metadata_requests(hits) if h.status == 200 and h.seq < endpoints[0].seq]
    ctx.check(rid, bool(meta), problem="AuthorizationServerMetadataNotUsed",
              message=f"the client read the authorization server metadata ({meta[0].line()}) before using its endpoints"
              if meta else f"{endpoints[0].line()} came before any authorization server metadata was read",
              expected="GET /.well-known/oauth-authorization-server (200) first", actual=_lines(hits)[:6])


def _loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    return (parts.hostname or "").lower() in LOOPBACK


def _judge_scope_selection(ctx: ClientContext, site: AuthSite, expected: list[str] | None, case: str) -> None:
    """The first authorization request's ``scope`` (``offline_access`` left aside) is ``expected``
    exactly (None: no scope parameter)."""
    rid = "client.auth.scope-selection"
    authorize = site.as_hits("authorize")
    if not authorize:
        _not_reached(ctx, site, rid, "the client made no authorization request")
        return
    first = authorize[0]
    asked = [s for s in (first.params.get("scope") or "").split() if s != OFFLINE]
    want = sorted(set(expected or []))
    ok = sorted(set(asked)) == want
    shown = " ".join(asked) if asked else "no scope"
    ctx.check(rid, ok, problem="ScopeSelectionOrder",
              message=f"{case}: the first authorization request asks for {shown!r}" if ok else
              f"{case} ({' '.join(want) or 'no scope parameter'}) expected; the first authorization request asks for "
              f"{shown!r}: {first.line()}", expected=" ".join(want) or None, actual=" ".join(asked) or None)


# -- step-up authorization after 403 insufficient_scope ---------------------------------------------------

STEP_UP_SCOPE = "mcp:admin"


def _forbidden(site: AuthSite) -> list[Hit]:
    return [h for h in site.hits("rs", "mcp") if h.status == 403]


def _after_403(site: AuthSite) -> list[Hit]:
    first = next(iter(_forbidden(site)), None)
    return [h for h in site.as_hits("authorize") if first is not None and h.seq > first.seq]


RETRY_LIMIT = 3  # authorization requests after the first 403 (the official runner's bound)


@scenario(requirements=["client.auth.step-up", "client.auth.step-up-union", "client.auth.retry-limit"], role="client",
          transports=HTTP, since="2025-11-25", order=88)
async def auth_step_up(ctx: ClientContext) -> None:
    """After the handshake every request needs ``mcp:admin``, which the first token (the metadata's
    ``scopes_supported``) lacks: 403 ``insufficient_scope`` naming it.  The authorization server
    never grants it, so a step-up ends in the same 403.  The client should ask for it in a new
    authorization (with the scopes granted before), and stop after a few tries."""
    site, played = await _play(ctx, Protected(required_scope=STEP_UP_SCOPE,
                                              auth=AuthConfig(granted_scope="mcp:read mcp:write")),
                               provoked=lambda s: len(_after_403(s)) > RETRY_LIMIT)
    rids = ("client.auth.step-up", "client.auth.step-up-union", "client.auth.retry-limit")
    if not _started(ctx, site, played, rids):
        return
    forbidden = _forbidden(site)
    if not forbidden:
        for rid in rids:
            _not_reached(ctx, site, rid, "no request of the client was answered 403 insufficient_scope (it made none "
                                         "after the handshake with a valid token)")
        return
    after = _after_403(site)
    granted = site.scope_of(forbidden[0].token)
    if not after:
        ctx.check("client.auth.step-up", True, message=f"after {forbidden[0].line()} the client did not authorize "
                  "again (the error handled another way)")
        for rid in rids[1:]:
            _not_reached(ctx, site, rid, "the client did not authorize again after the 403")
        return
    asked = (after[0].params.get("scope") or "").split()
    ok = STEP_UP_SCOPE in asked
    ctx.check("client.auth.step-up", ok, problem="StepUpWithoutChallengedScope",
              message=f"after the 403 the client asked for {' '.join(asked)!r}, the challenged scope included" if ok else
              f"the 403 named scope {STEP_UP_SCOPE!r} and the client's next authorization request asks for "
              f"{' '.join(asked) or 'no scope'!r}: {after[0].line()}",
              expected=f"{STEP_UP_SCOPE} among the requested scopes", actual=" ".join(asked) or None)
    lost = [s for s in granted if s not in asked]
    ctx.check("client.auth.step-up-union", not lost, problem="StepUpDropsGrantedScopes",
              message=f"the step-up asks for {' '.join(asked)!r}, the scopes granted before ({' '.join(granted)}) "
                      "included" if not lost else
              f"the step-up asks for {' '.join(asked) or 'no scope'!r} and leaves out {' '.join(lost)!r}, granted "
              f"before: {after[0].line()}", expected=" ".join([*granted, STEP_UP_SCOPE]), actual=" ".join(asked) or None)
    ok = len(after) <= RETRY_LIMIT
    ctx.check("client.auth.retry-limit", ok, problem="NoRetryLimit",
              message=f"{len(after)} authorization request(s) after the first 403 insufficient_scope, then the "
                      "client stopped asking" if ok else
              f"{len(after)} authorization requests after the first 403 insufficient_scope for a scope the server "
              f"never grants (at most {RETRY_LIMIT} expected)", expected=f"<= {RETRY_LIMIT}", actual=_lines(after))


# -- the authorization server moves; registration refused; PKCE with OpenID Connect metadata ------------

@scenario(requirements=["client.auth.per-as-registration"], role="client", transports=HTTP, since="2026-07-28",
          order=89)
async def auth_server_migration(ctx: ClientContext) -> None:
    """Once the client's first token has been served, the protected resource metadata names a second
    authorization server and the first one's tokens get 401 ``invalid_token``: the client must
    present there nothing the first one issued (client ID, secret, refresh or access token)."""
    # (dynamic registration at both: a client ID metadata document URL is portable, nothing to see)
    site, played = await _play(ctx, Protected(migrate=AuthConfig(), auth=AuthConfig(cimd=False)),
                               provoked=lambda s: bool(s.hits("as2")))
    rid = "client.auth.per-as-registration"
    if not _started(ctx, site, played, (rid,)):
        return
    if site.switched is None:
        _not_reached(ctx, site, rid, "the client never had a token served (no authorization completed at the first "
                                     "authorization server)")
        return
    second = site.hits("as2")
    used = [h for h in second if h.path.rstrip("/").rsplit("/", 1)[-1] in ("register", "authorize", "token")]
    if not used:
        _not_reached(ctx, site, rid, "the client used no endpoint of the second authorization server after the "
                                     "metadata named it (" + "; ".join(_lines(site.hits())[-3:]) + ")")
        return
    first = site.server
    known = first.issued_credentials() if first is not None else set()
    leaked = []
    for h in used:
        values = [*h.params.values(), *h.form.values(), h.headers.get("authorization", "")]
        basic = _basic_credentials(h.headers.get("authorization"))
        hits = [v for v in [*values, *basic] if v and (v in known or (first is not None and v.count(".") == 2
                                                                        and first.verify(v) is not None))]
        if hits:
            leaked.append((h, hits[0]))
    ctx.check(rid, not leaked, problem="CredentialsReusedAcrossAuthorizationServers",
              message=f"at the second authorization server the client used nothing the first issued ({_lines(used)[0]})"
              if not leaked else f"{leaked[0][0].line()} (the second authorization server) carries "
                                 f"{leaked[0][1][:60]!r}, which the first authorization server issued",
              expected="a registration of its own at the second authorization server",
              actual=[f"{h.line()}: {v[:40]}" for h, v in leaked][:4] or None)


def _basic_credentials(authorization: str | None) -> list[str]:
    import base64
    from urllib.parse import unquote

    if not authorization or not authorization.lower().startswith("basic "):
        return []
    try:
        user, _, pw = base64.b64decode(authorization[6:].strip()).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return []
    return [unquote(user), unquote(pw)]


@scenario(requirements=["client.auth.registration-refused"], role="client", transports=HTTP, since="2026-07-28",
          order=89)
async def auth_registration_refused(ctx: ClientContext) -> None:
    """The registration endpoint answers 400 ``invalid_redirect_uri`` and nothing else gives a client
    ID: the client must not authorize with an ID it was never given, nor retry registration without
    end."""
    site, played = await _play(ctx, Protected(auth=AuthConfig(registration_error="invalid_redirect_uri", cimd=False)),
                               provoked=lambda s: bool(s.as_hits("register")))
    rid = "client.auth.registration-refused"
    if not _started(ctx, site, played, (rid,)):
        return
    register = site.as_hits("register")
    if not register:
        _not_reached(ctx, site, rid, "the client never tried to register")
        return
    authorize = [h for h in site.as_hits("authorize") if h.seq > register[0].seq]
    ok = not authorize and len(register) <= RETRY_LIMIT
    ctx.check(rid, ok, problem="RegistrationFailureIgnored",
              message=f"registration refused ({len(register)} attempt(s)); the client made no authorization request"
              if ok else (f"registration was refused and the client went on to authorize with client_id "
                          f"{authorize[0].params.get('client_id')!r}: {authorize[0].line()}" if authorize else
                          f"{len(register)} registration attempts after the refusal (at most {RETRY_LIMIT} expected)"),
              expected="no authorization request; a bounded number of registration attempts",
              actual=_lines(authorize or register))


@scenario(requirements=["client.auth.pkce-refuse-oidc"], role="client", transports=HTTP, since="2025-11-25", order=82)
async def auth_no_pkce_support_oidc(ctx: ClientContext) -> None:
    """The authorization server's metadata is only at the OpenID Connect well-known URI and has no
    ``code_challenge_methods_supported``: the client must refuse to proceed."""
    site, played = await _play(ctx, Protected(auth=AuthConfig(pkce_methods=None, require_pkce=False,
                                                              metadata_forms=("oidc-insert",))),
                               provoked=_metadata_fetched)
    _judge_refused_without_pkce(ctx, site, played, "client.auth.pkce-refuse-oidc", "OpenID Connect provider metadata")


# -- client ID metadata documents; no refresh token ------------------------------------------------------

CIMD_DOC = ("client.auth.cimd-hosted", "client.auth.cimd-document-fields", "client.auth.cimd-document-client-id")


@scenario(requirements=["client.auth.cimd-supported", "client.auth.cimd-url", *CIMD_DOC], role="client",
          transports=HTTP, since="2025-11-25", order=89)
async def auth_cimd(ctx: ClientContext) -> None:
    """The authorization server advertises client ID metadata documents and offers no other way to a
    client ID (no registration endpoint, nothing pre-registered): the client should use its
    document's URL as ``client_id``, an https URL with a path."""
    site, played = await _play(ctx, Protected(fetch_documents=True, auth=AuthConfig(cimd=True, registration=False)),
                               provoked=lambda s: bool(s.as_hits("authorize")))
    rids = ("client.auth.cimd-supported", "client.auth.cimd-url", *CIMD_DOC)
    if not _started(ctx, site, played, rids):
        return
    if not _metadata_fetched(site):
        for rid in rids:
            _not_reached(ctx, site, rid, "the client never fetched the authorization server metadata")
        return
    authorize = site.as_hits("authorize")
    urls = [h for h in authorize if _is_url_client_id(h.params.get("client_id"))]
    ctx.check("client.auth.cimd-supported", bool(urls), problem="ClientIdMetadataDocumentNotUsed",
              message=f"the client used the client ID metadata document URL {urls[0].params.get('client_id')!r}" if urls
              else ("the authorization server offers only client ID metadata documents and the client used the "
                    f"client_id {authorize[0].params.get('client_id')!r}" if authorize else
                    "the authorization server offers only client ID metadata documents, and the client made no "
                    "authorization request (it stopped after " + "; ".join(_lines(site.hits())[-2:]) + ")"),
              expected="client_id = the URL of the client's metadata document",
              actual=urls[0].params.get("client_id") if urls else _lines(site.hits("as"))[-3:])
    if not urls:
        for rid in rids[1:]:
            _not_reached(ctx, site, rid, "the client used no client ID metadata document URL")
        return
    bad = [h for h in urls if not _cimd_url_ok(h.params.get("client_id"))]
    ctx.check("client.auth.cimd-url", not bad, problem="ClientIdUrlForm",
              message=f"client_id {urls[0].params.get('client_id')!r} is an https URL with a path" if not bad else
              f"client_id {bad[0].params.get('client_id')!r} is not an https URL with a path component",
              expected="https://<host>/<path>", actual=bad[0].params.get("client_id") if bad else None)
    _judge_document(ctx, site, urls[0].params.get("client_id") or "")


def _judge_document(ctx: ClientContext, site: AuthSite, url: str) -> None:
    """The client ID metadata document the suite's authorization server fetched from ``url``."""
    got = next((d for d in site.documents if d.url == url), None)
    if got is None or got.error is not None:
        why = (f"the document at {url} could not be fetched from here ({got.error})" if got is not None else
               f"the document at {url} was not fetched")
        for rid in CIMD_DOC:
            _not_reached(ctx, site, rid, why)
        return
    tls = "" if got.verified else " (a loopback host: TLS not verified)"
    served = urlsplit(url).scheme == "https" and got.status == 200 and isinstance(got.document, dict)
    ctx.check("client.auth.cimd-hosted", served, problem="ClientMetadataDocumentNotHosted",
              message=f"{url} serves the client's metadata document{tls}" if served else
              f"GET {url} answered {got.status} {got.content_type or ''}".rstrip()
              + ("" if isinstance(got.document, dict) else " (no JSON object)")
              + ("" if urlsplit(url).scheme == "https" else "; and the URL is not https"),
              expected="200, a JSON object, over https", actual={"status": got.status, "content-type": got.content_type})
    if not (got.status == 200 and isinstance(got.document, dict)):
        for rid in CIMD_DOC[1:]:
            _not_reached(ctx, site, rid, f"no metadata document was served at {url} (HTTP {got.status})")
        return
    doc = got.document
    missing = [k for k in ("client_id", "client_name") if not isinstance(doc.get(k), str) or not doc.get(k)]
    uris = doc.get("redirect_uris")
    if not (isinstance(uris, list) and uris and all(isinstance(u, str) for u in uris)):
        missing.append("redirect_uris")
    ctx.check("client.auth.cimd-document-fields", not missing, problem="ClientMetadataDocumentIncomplete",
              message="the document has client_id, client_name and redirect_uris" if not missing else
              f"the document at {url} lacks (or has no valid) {', '.join(missing)}",
              expected=["client_id", "client_name", "redirect_uris"], actual=sorted(doc)[:12])
    same = doc.get("client_id") == url
    ctx.check("client.auth.cimd-document-client-id", same, problem="ClientMetadataDocumentIdMismatch",
              message="the document's client_id is its URL exactly" if same else
              f"the document's client_id {doc.get('client_id')!r} is not its URL {url!r}",
              expected=url, actual=doc.get("client_id"))


@scenario(requirements=["client.auth.no-refresh-assumed"], role="client", transports=HTTP, since="2026-07-28", order=89)
async def auth_no_refresh_token(ctx: ClientContext) -> None:
    """The authorization server issues no refresh token; the MCP server answers the first token
    401 ``invalid_token`` once it has served one request with it: the client must not send a
    ``refresh_token`` grant (it was given none)."""
    site, played = await _play(ctx, Protected(expire_first=True, auth=AuthConfig(refresh_tokens=False)),
                               provoked=lambda s: bool(s.expired) and len(s.as_hits("token")) >= 2)
    rid = "client.auth.no-refresh-assumed"
    if not _started(ctx, site, played, (rid,)):
        return
    if not site.expired:
        _not_reached(ctx, site, rid, "no token of the client was ever served")
        return
    refreshed = [h for h in site.as_hits("token") if h.form.get("grant_type") == "refresh_token"]
    again = [h for h in site.as_hits("authorize")][1:]
    if not refreshed and not again:
        _not_reached(ctx, site, rid, "after its token was refused the client neither authorized again nor tried a "
                                     "refresh (" + "; ".join(_lines(site.hits())[-3:]) + ")")
        return
    ctx.check(rid, not refreshed, problem="RefreshTokenAssumed",
              message=f"no refresh token was issued, and the client authorized again ({again[0].line()})" if not refreshed
              else f"no refresh token was ever issued, and the client sent a refresh_token grant: {refreshed[0].line()}",
              expected="no refresh_token grant", actual=_lines(refreshed) or None)


@scenario(requirements=["client.auth.registration-priority"], role="client", transports=HTTP, since="2025-11-25",
          order=89)
async def auth_registration_priority(ctx: ClientContext) -> None:
    """The authorization server offers client ID metadata documents and dynamic registration.  A
    client that registers dynamically there is then sent (its first token served, the metadata
    changed) to a second authorization server that offers client ID metadata documents only: if it
    uses one there, it supports them, and should have used one at the first.  (Pre-registration,
    the first of the order, is not offered: whether a client has it cannot be seen.)"""
    protected = Protected(auth=AuthConfig(cimd=True, registration=True), migrate=AuthConfig(cimd=True, registration=False))
    site, played = await _play(ctx, protected, provoked=lambda s: bool(s.as_hits("authorize", "as2")))
    rid = "client.auth.registration-priority"
    if not _started(ctx, site, played, (rid,)):
        return
    authorize = site.as_hits("authorize")
    if not authorize:
        _not_reached(ctx, site, rid, "the client made no authorization request")
        return
    first_id = authorize[0].params.get("client_id")
    if _is_url_client_id(first_id):
        ctx.check(rid, True, message=f"offered both, the client used its client ID metadata document ({first_id!r}), "
                                     "not dynamic registration")
        return
    later = [h.params.get("client_id") for h in site.as_hits("authorize", "as2")]
    if not any(_is_url_client_id(c) for c in later):
        _not_reached(ctx, site, rid, f"the client used the client ID {first_id!r} where metadata documents and "
                     "dynamic registration were offered, and showed no support for metadata documents (at the second "
                     "authorization server, which offers nothing else: " + (", ".join(map(repr, later)) or
                                                                             "no authorization request") + ")")
        return
    url = next(c for c in later if _is_url_client_id(c))
    ctx.check(rid, False, problem="RegistrationPriority",
              message=f"offered client ID metadata documents and dynamic registration, the client registered "
                      f"dynamically ({first_id!r}); it supports metadata documents (it used {url!r} where nothing else "
                      "was offered), which come first",
              expected="the client ID metadata document URL where the server supports them",
              actual=_lines(site.as_hits("register") + authorize[:1]))
