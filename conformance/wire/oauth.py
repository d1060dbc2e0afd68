"""OAuth facts the suite, its authorization server and the reference server share.  No I/O.

* PKCE (RFC 7636): :func:`pkce_s256` computes the S256 challenge of a verifier.
* ``WWW-Authenticate`` (RFC 9110 section 11.6.1, RFC 6750 section 3): :func:`parse_www_authenticate`
  reads the challenges of a header value (auth-params, quoted strings with escapes, token68);
  :func:`bearer_challenge` writes one.
* Metadata documents: :func:`protected_resource_metadata` (RFC 9728),
  :func:`authorization_server_metadata` (RFC 8414, and the OpenID Connect discovery variant).
* Well-known locations: :func:`prm_well_known_urls` (RFC 9728 section 3.1, path form then root),
  :func:`as_metadata_urls` (RFC 8414 section 3.1 and OpenID Connect discovery, in the order the
  2025-11-25 authorization page lists them).
* :func:`canonical_resource`: the canonical URI of an MCP server (lower-case scheme and host, no
  fragment, no trailing slash on an empty path).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "Challenge",
    "pkce_s256",
    "parse_www_authenticate",
    "bearer_challenge",
    "bearer_challenge_of",
    "protected_resource_metadata",
    "authorization_server_metadata",
    "prm_well_known_urls",
    "as_metadata_urls",
    "canonical_resource",
    "bearer_token_of",
    "parse_scope_hierarchy",
    "PRM_WELL_KNOWN",
    "OAUTH_AS_WELL_KNOWN",
    "OIDC_WELL_KNOWN",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


def pkce_s256(verifier: str) -> str:
    """``BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))`` without padding (RFC 7636 section 4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass
class Challenge:
    """One challenge of a ``WWW-Authenticate`` header: its scheme (as sent), its auth-params
    (names lower-cased) and its token68, if any."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def is_bearer(self) -> bool:
        return self.scheme.lower() == "bearer"


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_TOKEN68 = r"[A-Za-z0-9\-._~+/]+=*"
_WS = r"[ \t]*"


def parse_www_authenticate(value: str | Iterable[str] | None) -> list[Challenge]:
    """The challenges of one ``WWW-Authenticate`` value (or several header lines).  Lenient
    about whitespace; a part that does not parse ends the reading of that value (what was read
    stays).  Never raises."""
    if value is None:
        return []
    values = [value] if isinstance(value, str) else list(value)
    out: list[Challenge] = []
    for text in values:
        out.extend(_parse_one(text))
    return out


def _parse_one(text: str) -> list[Challenge]:
    out: list[Challenge] = []
    pos, n = 0, len(text)
    current: Challenge | None = None
    while pos < n:
        pos = _SEP.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            break
        pm = _PARAM.match(text, pos)
        if current is not None and pm:
            name = pm.group(1).lower()
            pos = pm.end()
            if text[pos] == '"':
                val, pos = _quoted(text, pos)
                if val is None:
                    break
            else:
                vm = _TOKEN_RE.match(text, pos)
                if not vm:
                    break
                val, pos = vm.group(0), vm.end()
            current.params.setdefault(name, val)
            continue
        sm = _TOKEN_RE.match(text, pos)
        if not sm:
            break
        current = Challenge(sm.group(0))
        out.append(current)
        pos = sm.end()
        tm = _TOKEN68_RE.match(text, pos)  # token68 right after the scheme, alone up to "," or the end
        if tm:
            current.token68 = tm.group(1)
            pos = tm.end()
    return out


_SEP = re.compile(r"[ \t]*(?:,[ \t]*)*")
_TOKEN_RE = re.compile(_TOKEN)
_PARAM = re.compile(rf"({_TOKEN}){_WS}={_WS}(?=[^=, \t])")
_TOKEN68_RE = re.compile(rf" +({_TOKEN68}){_WS}(?=,|$)")


def _quoted(text: str, pos: int) -> tuple[str | None, int]:
    assert text[pos] == '"'
    pos += 1
    buf: list[str] = []
    while pos < len(text):
        c = text[pos]
        if c == "\\" and pos + 1 < len(text):
            buf.append(text[pos + 1])
            pos += 2
            continue
        if c == '"':
            return "".join(buf), pos + 1
        buf.append(c)
        pos += 1
    return None, pos


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_challenge(**params: str | None) -> str:
    """``Bearer name="value", ...`` for the params that are not None, in the order given."""
    parts = [f"{k}={_quote(v)}" for k, v in params.items() if v is not None]
    return "Bearer" + (" " + ", ".join(parts) if parts else "")


def bearer_challenge_of(headers: Mapping[str, str] | None) -> Challenge | None:
    """The Bearer challenge of a response's (lower-cased) headers, if any."""
    for ch in parse_www_authenticate((headers or {}).get("www-authenticate")):
        if ch.is_bearer:
            return ch
    return None


def bearer_token_of(authorization: str | None) -> str | None:
    """The token of ``Authorization: Bearer <token>`` (scheme case-insensitive), else None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token


def canonical_resource(url: str) -> str:
    """The canonical form of an MCP server URI: scheme and host lower-cased, no fragment, the
    path kept as is except that an empty or ``/`` path is dropped (the form without the slash)."""
    parts = urlsplit(url.strip())
    path = parts.path
    if path == "/":
        path = ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def prm_well_known_urls(resource_url: str) -> list[str]:
    """Where the protected resource metadata of ``resource_url`` may be (RFC 9728 section 3.1):
    the well-known path inserted before the resource's path, then at the root (no duplicate)."""
    parts = urlsplit(resource_url)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = []
    if path:
        urls.append(base + PRM_WELL_KNOWN + path)
    urls.append(base + PRM_WELL_KNOWN)
    return urls


def as_metadata_urls(issuer: str) -> list[str]:
    """Authorization server metadata locations in the priority order of the 2025-11-25 page:
    with a path, OAuth (path inserted), OIDC (path inserted), OIDC (path appended); without one,
    OAuth then OIDC."""
    parts = urlsplit(issuer)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if path:
        return [base + OAUTH_AS_WELL_KNOWN + path, base + OIDC_WELL_KNOWN + path, base + path + OIDC_WELL_KNOWN]
    return [base + OAUTH_AS_WELL_KNOWN, base + OIDC_WELL_KNOWN]


def protected_resource_metadata(resource: str, authorization_servers: Sequence[str], *,
                                scopes_supported: Sequence[str] | None = None,
                                extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An RFC 9728 document: ``resource``, ``authorization_servers``, bearer in the header only."""
    doc: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    if scopes_supported is not None:
        doc["scopes_supported"] = list(scopes_supported)
    doc.update(extra or {})
    return doc


def authorization_server_metadata(issuer: str, *, pkce_methods: Sequence[str] | None = ("S256",),
                                  registration: bool = True, cimd: bool = True,
                                  iss_parameter_supported: bool = True,
                                  scopes_supported: Sequence[str] | None = None,
                                  grant_types: Sequence[str] = ("authorization_code", "refresh_token"),
                                  oidc: bool = False, endpoints_base: str | None = None,
                                  extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An RFC 8414 document (``oidc``: the OpenID Connect discovery variant, with its required
    fields).  ``pkce_methods=None`` leaves ``code_challenge_methods_supported`` out."""
    base = (endpoints_base or issuer).rstrip("/")
    doc: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/token",
        "jwks_uri": base + "/jwks",
        "introspection_endpoint": base + "/introspect",
        "response_types_supported": ["code"],
        "grant_types_supported": list(grant_types),
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
    }
    if registration:
        doc["registration_endpoint"] = base + "/register"
    if pkce_methods is not None:
        doc["code_challenge_methods_supported"] = list(pkce_methods)
    if cimd:
        doc["client_id_metadata_document_supported"] = True
    if iss_parameter_supported:
        doc["authorization_response_iss_parameter_supported"] = True
    if scopes_supported is not None:
        doc["scopes_supported"] = list(scopes_supported)
    if oidc:
        doc["subject_types_supported"] = ["public"]
        doc["id_token_signing_alg_values_supported"] = ["ES256"]
    doc.update(extra or {})
    return doc


def parse_scope_hierarchy(entries: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``['BROAD>NARROW [NARROW ...]', ...]`` (a server's scopes that imply narrower ones) as
    {broad: narrower scopes}, entries for one broad scope merged; ValueError naming the entry that
    is not one broader scope, '>', and narrower ones other than it."""
    out: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        broad, sep, narrow = entry.partition(">")
        broad_scopes, narrow_scopes = broad.split(), tuple(narrow.split())
        if not sep or len(broad_scopes) != 1 or not narrow_scopes or broad_scopes[0] in narrow_scopes:
            raise ValueError(f"{entry!r}: give one broader scope, '>', and the narrower scopes it implies, e.g. "
                             "'files:admin>files:read files:write'")
        out[broad_scopes[0]] = tuple(dict.fromkeys(out.get(broad_scopes[0], ()) + narrow_scopes))
    return out
