"""The reference client's extension grants and proofs: no I/O (``authorize.py`` sends them).

The MCP authorization extensions (``modelcontextprotocol/ext-auth``, SEP-1046, SEP-990, SEP-1932,
SEP-1933) a machine or enterprise client uses instead of, or on top of, the authorization code
flow; every JWT is made with PyJWT and ``cryptography`` (no hand-made cryptography):

* client authentication with a signed JWT (RFC 7523 section 2.2, ``private_key_jwt``):
  :func:`client_assertion` -- ``iss`` and ``sub`` the client ID, ``aud`` the authorization
  server's issuer identifier (RFC 7523 section 3 "a value that identifies the authorization
  server"; draft-ietf-oauth-rfc7523bis: the issuer identifier), a unique ``jti``, a short ``exp``;
  sent as ``client_assertion_type`` / ``client_assertion`` (:func:`client_assertion_fields`);
* the client credentials grant (RFC 6749 section 4.4, the OAuth Client Credentials extension):
  :func:`client_credentials_form`;
* the JWT bearer authorization grant (RFC 7523 section 2.1): :func:`jwt_bearer_form` -- a workload
  identity JWT (SEP-1933), or an ID-JAG (enterprise-managed authorization);
* token exchange for an ID-JAG at the enterprise identity provider (RFC 8693 section 2.1, the
  Enterprise-Managed Authorization extension section 4): :func:`token_exchange_form`, and the
  answer checked by :func:`exchange_refusal`;
* DPoP (RFC 9449): :class:`DPoPKey` holds the client's key pair and makes a fresh proof per
  request (:meth:`DPoPKey.proof`: ``typ`` ``dpop+jwt``, the public ``jwk``, ``jti``, ``htm``,
  ``htu`` without query and fragment, ``iat``, ``ath`` with an access token, ``nonce`` when the
  server supplied one); :func:`dpop_supported` reads the authorization server's metadata;
  :func:`use_dpop_nonce` recognises a server's nonce demand (sections 8 and 9).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from conformance.wire import oauth as wire_oauth

__all__ = [
    "CLIENT_ASSERTION_TYPE", "JWT_BEARER", "TOKEN_EXCHANGE", "ID_JAG", "ID_TOKEN", "ASYMMETRIC_ALGS",
    "client_assertion", "client_assertion_fields", "client_credentials_form", "jwt_bearer_form",
    "token_exchange_form", "exchange_refusal", "DPoPKey", "dpop_supported", "htu", "access_token_hash",
    "use_dpop_nonce", "grants_supported",
]

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"  # RFC 7523 section 2.2
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523 section 2.1
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693 section 2.1
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"  # draft-ietf-oauth-identity-assertion-authz-grant
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"  # RFC 8693 section 3
#: asymmetric JWS algorithms (RFC 9449 section 4.2: "MUST NOT be none or an identifier for a
#: symmetric algorithm"; for private_key_jwt the key is a private key too)
ASYMMETRIC_ALGS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
ASSERTION_LIFETIME = 300  # seconds a client assertion is valid


class GrantError(ValueError):
    """A configuration or answer these grants cannot be made from (the reason is the message)."""


def grants_supported(as_meta: Mapping[str, Any]) -> list[str]:
    """The authorization server's ``grant_types_supported`` (RFC 8414: absent means
    ``authorization_code`` and ``implicit``)."""
    grants = as_meta.get("grant_types_supported")
    if isinstance(grants, list) and all(isinstance(g, str) for g in grants):
        return list(grants)
    return ["authorization_code", "implicit"]


def _scope(form: dict[str, str], scopes: list[str] | None) -> dict[str, str]:
    if scopes:
        form["scope"] = " ".join(scopes)
    return form


# -- client authentication with a JWT (RFC 7523 section 2.2) ----------------------------------

def client_assertion(client_id: str, audience: str, private_key_pem: str, alg: str, *, now: float | None = None) -> str:
    """A client authentication JWT: ``iss`` = ``sub`` = the client ID (RFC 7523 section 3 items
    A and B), ``aud`` the authorization server's issuer identifier, ``exp`` a few minutes ahead,
    ``iat``, and a ``jti`` never used before (section 3 item G: replay protection)."""
    if alg not in ASYMMETRIC_ALGS:
        raise GrantError(f"the client assertion signing algorithm {alg!r} is not an asymmetric JWS algorithm")
    issued = int(now if now is not None else time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": issued, "exp": issued + ASSERTION_LIFETIME,
              "jti": secrets.token_urlsafe(24)}
    try:
        return jwt.encode(claims, private_key_pem, algorithm=alg)
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise GrantError(f"the client's private key cannot sign {alg}: {exc}") from exc


def client_assertion_fields(assertion: str) -> dict[str, str]:
    """The form fields authenticating the client with ``assertion`` (RFC 7523 section 2.2; no
    ``client_id``: the assertion's ``sub`` names the client)."""
    return {"client_assertion_type": CLIENT_ASSERTION_TYPE, "client_assertion": assertion}


# -- grants ------------------------------------------------------------------------------------

def client_credentials_form(resource: str, scopes: list[str] | None) -> dict[str, str]:
    """A client credentials access token request (RFC 6749 section 4.4.2), with the MCP server as
    ``resource`` (RFC 8707; MCP: "MUST be included in ... token requests")."""
    return _scope({"grant_type": "client_credentials", "resource": resource}, scopes)


def jwt_bearer_form(assertion: str, resource: str, scopes: list[str] | None) -> dict[str, str]:
    """A JWT bearer authorization grant request (RFC 7523 section 2.1): ``grant_type``,
    ``assertion`` (exactly one JWT), ``resource``, optional ``scope``."""
    if not assertion or assertion.count(".") != 2:
        raise GrantError("the assertion is not a JWT (RFC 7523 section 2.1: it MUST contain a single JWT)")
    return _scope({"grant_type": JWT_BEARER, "assertion": assertion, "resource": resource}, scopes)


def token_exchange_form(subject_token: str, *, audience: str, resource: str, scopes: list[str] | None,
                        subject_token_type: str = ID_TOKEN) -> dict[str, str]:
    """The token exchange request for an ID-JAG at the identity provider (RFC 8693 section 2.1;
    Enterprise-Managed Authorization section 4): ``requested_token_type`` id-jag, ``audience``
    the issuer of the MCP server's authorization server, ``resource`` the MCP server's resource
    identifier, ``subject_token`` the identity assertion and its type; optional ``scope``."""
    if not subject_token:
        raise GrantError("no identity assertion (ID token) to exchange")
    return _scope({"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG, "audience": audience,
                   "resource": resource, "subject_token": subject_token, "subject_token_type": subject_token_type},
                  scopes)


def exchange_refusal(doc: Any) -> str | None:
    """Why a token exchange answer is not an ID-JAG this client can present, None when it is
    (RFC 8693 section 2.2.1: ``access_token``, ``issued_token_type``, ``token_type``; the extension:
    ``issued_token_type`` id-jag)."""
    if not isinstance(doc, dict):
        return "the token exchange response is not a JSON object"
    if doc.get("issued_token_type") != ID_JAG:
        return f"the token exchange response's issued_token_type is {doc.get('issued_token_type')!r}, not {ID_JAG}"
    token = doc.get("access_token")
    if not isinstance(token, str) or token.count(".") != 2:
        return "the token exchange response's access_token is not a JWT (the ID-JAG)"
    if not isinstance(doc.get("token_type"), str):
        return "the token exchange response has no token_type"
    return None


# -- DPoP (RFC 9449) ---------------------------------------------------------------------------

def dpop_supported(as_meta: Mapping[str, Any], alg: str = "ES256") -> bool:
    """The authorization server supports DPoP with ``alg`` (RFC 9449 section 5.1:
    ``dpop_signing_alg_values_supported`` "the presence of this parameter signals support")."""
    algs = as_meta.get("dpop_signing_alg_values_supported")
    return isinstance(algs, list) and alg in algs


def htu(url: str) -> str:
    """The ``htu`` of a request to ``url``: its target URI without query and fragment (RFC 9449
    section 4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def access_token_hash(access_token: str) -> str:
    """``ath``: base64url (no padding) of the SHA-256 of the ASCII access token (RFC 9449 section 4.2)."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class DPoPKey:
    """The client's DPoP key pair (P-256, ES256), one per run: every token bound to it is used
    with proofs it signs."""

    alg = "ES256"

    def __init__(self, private_key: ec.EllipticCurvePrivateKey | None = None) -> None:
        self._key = private_key or ec.generate_private_key(ec.SECP256R1())
        jwk = jwt.algorithms.ECAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        self.public_jwk = {k: jwk[k] for k in ("kty", "crv", "x", "y")}  # the public members only

    def proof(self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None,
              now: float | None = None) -> str:
        """A DPoP proof JWT for one request (RFC 9449 section 4.2): a fresh ``jti`` every time."""
        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(24), "htm": method.upper(), "htu": htu(url),
                                  "iat": int(now if now is not None else time.time())}
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._key, algorithm=self.alg, headers={"typ": "dpop+jwt", "jwk": self.public_jwk})


def use_dpop_nonce(status: int, headers: Mapping[str, str], doc: Any = None,
                   www_authenticate: list[str] | None = None) -> str | None:
    """The nonce a server demands, None when this answer is not such a demand: the authorization
    server's 400 ``{"error": "use_dpop_nonce"}`` (RFC 9449 section 8) or the resource server's 401
    with a ``DPoP`` challenge ``error="use_dpop_nonce"`` (section 9), each with a ``DPoP-Nonce``
    header."""
    nonce = headers.get("dpop-nonce")
    if not nonce:
        return None
    if status == 400 and isinstance(doc, dict) and doc.get("error") == "use_dpop_nonce":
        return nonce
    if status == 401:
        for challenge in wire_oauth.parse_www_authenticate(www_authenticate or []):
            if challenge.scheme.lower() == "dpop" and challenge.params.get("error") == "use_dpop_nonce":
                return nonce
    return None
