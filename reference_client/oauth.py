"""The reference client's OAuth rules: no I/O (``authorize.py`` moves the bytes).

What a strict MCP client does when a server answers 401 (the authorization pages of 2025-03-26,
2025-06-18, 2025-11-25 and the four 2026-07-28 pages):

* ``WWW-Authenticate`` parsed (:func:`parse_www_authenticate`); the ``resource_metadata`` URL it
  names is used when present, else the well-known URIs in the order the pages list them
  (:func:`prm_candidates`: path insertion first, then the root);
* the protected resource metadata is used only when its ``resource`` is this server
  (:func:`resource_refusal`); its ``resource`` string is then sent as is, in both requests;
* authorization server metadata is looked for at :func:`as_metadata_candidates` in the pages'
  priority order (RFC 8414 with path insertion, OpenID Connect with path insertion, OpenID
  Connect appended), and used only when its ``issuer`` is identical to the identifier the URL was
  built from and it lists ``S256`` in ``code_challenge_methods_supported``
  (:func:`metadata_refusal`); on 2025-03-26 the authorization base URL is the server's origin and
  the default endpoints stand in when there is no metadata (:func:`legacy_base`);
* scopes: the challenge's ``scope``, else the PRM's ``scopes_supported``, else none
  (:func:`initial_scopes`); ``offline_access`` only when the authorization server lists it; a
  step-up asks for the union of what was asked before and what the 403 challenge names, and
  only when that adds a scope (:func:`step_up_scopes`) -- otherwise another round would not help;
* PKCE S256 (:func:`pkce_pair`), a fresh ``state`` per request, RFC 9207 ``iss`` validation by
  simple string comparison before the code goes anywhere (:func:`authorization_code`);
* the token endpoint authentication method from the registration, else the best the
  authorization server supports (:func:`registration_auth_method`, :func:`client_auth`).
"""

from __future__ import annotations

import base64
import secrets
from typing import Any, Mapping
from urllib.parse import parse_qs, quote_plus, urlencode, urlsplit, urlunsplit

from conformance.wire import oauth as wire_oauth

__all__ = [
    "OAuthRefused", "parse_www_authenticate", "bearer_challenge", "prm_candidates", "as_metadata_candidates",
    "legacy_base", "legacy_endpoints", "resource_refusal", "metadata_refusal", "initial_scopes", "step_up_scopes",
    "pkce_pair", "new_state", "authorization_url", "callback_params", "authorization_code",
    "registration_auth_method", "client_auth", "registration_body", "token_refusal", "client_credentials_only",
    "auth_challenge", "prereg_auth_method",
]

OFFLINE_ACCESS = "offline_access"


class OAuthRefused(Exception):
    """The client will not go on with this authorization (the reason is the message)."""


# -- WWW-Authenticate (RFC 9110 section 11.6.1; the parser is conformance.wire.oauth's) ----------

def parse_www_authenticate(values: list[str] | str) -> list[tuple[str, dict[str, str]]]:
    """Every challenge in the header field values: ``[(scheme lower-cased, {param lower-cased:
    value})]``; quoted strings unescaped.  Unparseable rests are dropped."""
    return [(c.scheme.lower(), c.params) for c in wire_oauth.parse_www_authenticate(values)]


def bearer_challenge(values: list[str] | str) -> dict[str, str]:
    """The parameters of the ``Bearer`` challenge ({} when there is none)."""
    for scheme, params in parse_www_authenticate(values):
        if scheme == "bearer":
            return params
    return {}


def auth_challenge(values: list[str] | str, scheme: str = "bearer") -> dict[str, str]:
    """The parameters of the challenge of ``scheme`` (the one the client's token is used with),
    else of the other of ``Bearer`` and ``DPoP`` (RFC 9449 section 7.1; RFC 9728 section 5.1:
    ``resource_metadata`` may come with other schemes, "such as DPoP"); {} when neither is there."""
    found = {s: p for s, p in reversed(parse_www_authenticate(values)) if s in ("bearer", "dpop")}
    other = "dpop" if scheme == "bearer" else "bearer"
    return found.get(scheme) or found.get(other) or {}


# -- discovery URLs ----------------------------------------------------------------------------

def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def prm_candidates(server_url: str) -> list[str]:
    """The well-known protected resource metadata URIs, in the order the pages list them: at the
    path of the MCP endpoint (RFC 9728 path insertion), then at the root."""
    return wire_oauth.prm_well_known_urls(server_url)


def as_metadata_candidates(issuer: str) -> list[str]:
    """Where the authorization server metadata of ``issuer`` is looked for, in the pages' priority
    order (2025-11-25 / 2026-07-28 "Authorization Server Metadata Discovery": RFC 8414 and OpenID
    Connect, path inserted first)."""
    return wire_oauth.as_metadata_urls(issuer)


def legacy_base(server_url: str) -> str:
    """2025-03-26: "The authorization base URL MUST be determined from the MCP server URL by
    discarding any existing path component"."""
    return _origin(server_url)


def legacy_endpoints(base: str) -> dict[str, str]:
    """2025-03-26 default endpoints, for an authorization server without metadata."""
    return {"issuer": base, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register"}


def _norm(url: str) -> tuple[str, str, str]:
    parts = urlsplit(url)
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    host = (parts.hostname or "").lower() + (f":{port}" if port is not None and port != default else "")
    return parts.scheme.lower(), host, parts.path.rstrip("/")


def resource_refusal(resource: Any, server_url: str) -> str | None:
    """Why a protected resource metadata document whose ``resource`` is ``resource`` must not be
    used for ``server_url`` (RFC 9728 section 3.3), None when it may: same scheme and authority,
    and its path is the server's path or a segment prefix of it."""
    if not isinstance(resource, str) or not resource:
        return "its resource member is missing"
    try:
        parts = urlsplit(resource)
    except ValueError as exc:
        return f"its resource {resource!r} is not a usable URI ({exc})"
    if not parts.scheme or not parts.netloc or parts.fragment:
        return f"its resource {resource!r} is not an absolute URI without a fragment"
    try:
        rs, rh, rp = _norm(resource)
        ss, sh, sp = _norm(server_url)
    except ValueError as exc:  # a port out of range, a broken IPv6 literal
        return f"its resource {resource!r} is not a usable URI ({exc})"
    if (rs, rh) != (ss, sh) or not (sp == rp or sp.startswith(rp + "/")):
        return f"its resource {resource!r} is not this server ({server_url})"
    return None


def metadata_refusal(doc: Any, issuer: str) -> str | None:
    """Why authorization server metadata fetched for ``issuer`` must not be used, None when it
    may: the ``issuer`` in it must be identical to the identifier the URL was built from; the
    endpoints must be there."""
    if not isinstance(doc, dict):
        return "it is not a JSON object"
    if doc.get("issuer") != issuer:
        return f"its issuer {doc.get('issuer')!r} is not {issuer!r}, the issuer its URL was built from"
    for key in ("authorization_endpoint", "token_endpoint"):
        if not isinstance(doc.get(key), str) or not urlsplit(doc[key]).scheme:
            return f"its {key} is missing"
    return None


def pkce_refusal(doc: Mapping[str, Any]) -> str | None:
    """"If code_challenge_methods_supported is absent, the authorization server does not support
    PKCE and MCP clients MUST refuse to proceed"; S256 is the only method this client uses."""
    methods = doc.get("code_challenge_methods_supported")
    if methods is None:
        return "the authorization server metadata has no code_challenge_methods_supported (no PKCE): refusing to proceed"
    if not isinstance(methods, list) or "S256" not in methods:
        return f"the authorization server does not support PKCE S256 (code_challenge_methods_supported {methods!r})"
    return None


# -- scopes ------------------------------------------------------------------------------------

def _scope_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return list(value)
    return None


def initial_scopes(challenge_scope: str | None, prm: Mapping[str, Any], as_meta: Mapping[str, Any], *,
                   offline: bool = True) -> list[str] | None:
    """The scope selection order: the challenge's ``scope``, else every ``scopes_supported`` of
    the PRM, else no ``scope`` parameter (None).  ``offline_access`` is added (this client asks for
    refresh tokens) only when the authorization server's metadata lists it, and only to a scope
    parameter that is sent anyway."""
    scopes = _scope_list(challenge_scope) if challenge_scope else None
    if scopes is None:
        scopes = _scope_list(prm.get("scopes_supported"))
    if not scopes:
        return None
    return with_offline(scopes, as_meta) if offline else scopes


def with_offline(scopes: list[str], as_meta: Mapping[str, Any]) -> list[str]:
    supported = _scope_list(as_meta.get("scopes_supported")) or []
    if OFFLINE_ACCESS in supported and OFFLINE_ACCESS not in scopes:
        return [*scopes, OFFLINE_ACCESS]
    if OFFLINE_ACCESS not in supported:
        return [s for s in scopes if s != OFFLINE_ACCESS]
    return scopes


def step_up_scopes(previous: list[str] | None, challenge_scope: str | None) -> list[str] | None:
    """The scopes of a step-up after 403 ``insufficient_scope``: what was asked before plus what
    the challenge names (2026-07-28: "include these scopes alongside any previously granted
    scopes"); None when the challenge adds nothing (asking again would not help: the retry
    limit)."""
    challenged = _scope_list(challenge_scope) or []
    before = list(previous or [])
    new = [s for s in challenged if s not in before]
    return before + new if new else None


# -- the authorization request and response ---------------------------------------------------

def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge): 64 characters of the unreserved set, and
    BASE64URL(SHA256(verifier)) without padding."""
    verifier = secrets.token_urlsafe(48)
    return verifier, wire_oauth.pkce_s256(verifier)


def new_state() -> str:
    return secrets.token_urlsafe(32)


def authorization_url(endpoint: str, *, client_id: str, redirect_uri: str, challenge: str, state: str,
                      resource: str | None, scopes: list[str] | None, method: str | None = "S256") -> str:
    """(``method`` None: no PKCE; ``resource`` None: none sent -- both only for injected faults.)"""
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
              "code_challenge": challenge, "code_challenge_method": method or "", "state": state, "resource": resource or ""}
    if method is None:
        del params["code_challenge"], params["code_challenge_method"]
    if resource is None:
        del params["resource"]
    if scopes:
        params["scope"] = " ".join(scopes)
    parts = urlsplit(endpoint)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def callback_params(location: str, redirect_uri: str) -> dict[str, list[str]]:
    """The query parameters of a redirect to ``redirect_uri`` (form-decoded, every value kept);
    a redirect elsewhere is refused."""
    got, want = urlsplit(location), urlsplit(redirect_uri)
    if (got.scheme, got.netloc, got.path) != (want.scheme, want.netloc, want.path):
        raise OAuthRefused(f"the authorization endpoint redirected to {location[:200]!r}, not to our redirect URI")
    return parse_qs(got.query, keep_blank_values=True)


def authorization_code(params: Mapping[str, list[str]], *, state: str, issuer: str, iss_supported: bool) -> str:
    """The code of an authorization response, validated before it goes to any token endpoint:
    RFC 9207 ``iss`` first (compared with the recorded issuer by simple string comparison, no
    normalisation; required when the metadata advertises it; an error response is not acted on
    before that), then ``state`` (discarded when missing or different), then the error, then the
    code."""
    iss = params.get("iss")
    if iss is not None and len(iss) != 1:
        raise OAuthRefused("the authorization response carries iss more than once")
    if iss is None and iss_supported:
        raise OAuthRefused("the authorization server advertises authorization_response_iss_parameter_supported "
                           "but its response has no iss: rejected (RFC 9207 section 2.4)")
    if iss is not None and iss[0] != issuer:
        raise OAuthRefused(f"the authorization response's iss {iss[0]!r} is not the recorded issuer {issuer!r}: "
                           "rejected (RFC 9207 section 2.4)")
    got_state = params.get("state")
    if got_state != [state]:
        raise OAuthRefused("the authorization response's state is missing or not ours: discarded")
    if params.get("error"):
        desc = (params.get("error_description") or [""])[0]
        raise OAuthRefused(f"the authorization server refused: {params['error'][0]}" + (f" ({desc})" if desc else ""))
    code = params.get("code")
    if not code or len(code) != 1 or not code[0]:
        raise OAuthRefused("the authorization response has no code")
    return code[0]


# -- client registration and authentication ---------------------------------------------------

def registration_auth_method(as_meta: Mapping[str, Any]) -> str:
    """The token endpoint authentication method to ask for: a public client ("none", PKCE) when
    the authorization server allows it, else client_secret_basic, else client_secret_post (RFC
    8414: absent means client_secret_basic)."""
    supported = _scope_list(as_meta.get("token_endpoint_auth_methods_supported")) or ["client_secret_basic"]
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "client_secret_basic"


def client_credentials_only(as_meta: Mapping[str, Any]) -> bool:
    """The authorization server lists grant types, client_credentials among them and not
    authorization_code (RFC 8414: absent means authorization_code and implicit)."""
    grants = _scope_list(as_meta.get("grant_types_supported"))
    return grants is not None and "client_credentials" in grants and "authorization_code" not in grants


def secret_auth_method(as_meta: Mapping[str, Any]) -> str:
    """For a client with a secret (pre-registered): basic unless only post is supported."""
    supported = _scope_list(as_meta.get("token_endpoint_auth_methods_supported")) or ["client_secret_basic"]
    if "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def registration_body(*, client_name: str, redirect_uri: str, auth_method: str, scopes: list[str] | None) -> dict[str, Any]:
    """An RFC 7591 registration request: a native application (its redirect URI is a loopback
    one), authorization_code and refresh_token grants."""
    body: dict[str, Any] = {"client_name": client_name, "redirect_uris": [redirect_uri],
                            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                            "token_endpoint_auth_method": auth_method, "application_type": "native"}
    if scopes:
        body["scope"] = " ".join(scopes)
    return body


def client_auth(method: str, client_id: str, secret: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """(headers, form fields) authenticating the client at the token endpoint."""
    if method == "client_secret_basic":
        if not secret:
            raise OAuthRefused("client_secret_basic needs a client secret, and the registration gave none")
        raw = f"{quote_plus(client_id)}:{quote_plus(secret)}".encode("utf-8")
        return {"Authorization": "Basic " + base64.b64encode(raw).decode("ascii")}, {}
    if method == "client_secret_post":
        if not secret:
            raise OAuthRefused("client_secret_post needs a client secret, and the registration gave none")
        return {}, {"client_id": client_id, "client_secret": secret}
    return {}, {"client_id": client_id}


def token_refusal(doc: Any, *, dpop: bool = False) -> str | None:
    """Why a token endpoint answer is not a usable access token, None when it is: a ``Bearer``
    token, or (``dpop``: the request carried a DPoP proof) a ``DPoP`` one (RFC 9449 section 5;
    token types are case-insensitive, RFC 6749 section 5.1)."""
    if not isinstance(doc, dict):
        return "the token response is not a JSON object"
    if not isinstance(doc.get("access_token"), str) or not doc["access_token"]:
        return "the token response has no access_token"
    kinds = ("bearer", "dpop") if dpop else ("bearer",)
    if not isinstance(doc.get("token_type"), str) or doc["token_type"].lower() not in kinds:
        return f"the token response's token_type is {doc.get('token_type')!r}, not {' or '.join(k.title() if k == 'bearer' else 'DPoP' for k in kinds)}"
    return None


def prereg_auth_method(as_meta: Mapping[str, Any], *, secret: bool, key_alg: str | None) -> str:
    """How a pre-registered client authenticates at the token endpoint: with a signed JWT
    (``private_key_jwt``, RFC 7523 section 2.2; the Client Credentials extension: "JWT
    Authentication (RECOMMENDED)") when it holds a key and the authorization server accepts that
    method and algorithm, else with its secret, else as a public client ("none")."""
    supported = _scope_list(as_meta.get("token_endpoint_auth_methods_supported")) or ["client_secret_basic"]
    why = None
    if key_alg:
        algs = _scope_list(as_meta.get("token_endpoint_auth_signing_alg_values_supported"))
        if "private_key_jwt" not in supported:
            why = f"the authorization server does not accept private_key_jwt (token_endpoint_auth_methods_supported {supported!r})"
        elif algs is not None and key_alg not in algs:
            why = f"the authorization server does not accept {key_alg} client assertions (token_endpoint_auth_signing_alg_values_supported {algs!r})"
        else:
            return "private_key_jwt"
    if secret:
        return secret_auth_method(as_meta)
    if why:
        raise OAuthRefused(why)
    return "none"
