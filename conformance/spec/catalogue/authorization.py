"""basic/authorization (2025-03-26 .. 2025-11-25) and basic/authorization/* (2026-07-28): the MCP
server as an OAuth 2.1 resource server.

Checked over HTTP only (the pages: "Implementations using an STDIO transport SHOULD NOT follow
this specification"), and only against a server that requires authorization: the run is told so
(``--auth``: the server trusts the suite's authorization server; ``--auth-token`` /
``--auth-token-command``: a token of the server's own authorization server).  Without either, the
scenarios skip with the reason "the server does not require authorization".
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

AREA = "authorization"
HTTP = [Transport.STREAMABLE_HTTP, Transport.SSE]
V03, V06, V11, V26 = "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"
ALL = (V03, V06, V11, V26)
PRM_VERSIONS = (V06, V11, V26)
INDEX = "basic/authorization"
DISCOVERY = "basic/authorization/authorization-server-discovery"
SECURITY = "basic/authorization/security-considerations"


def _auth(id: str, level: str, versions: tuple[str, ...], url: str, quote: str, note: str) -> None:
    define(id, level, versions=versions, url=url, quote=quote, area=AREA, transports=HTTP, note=note)


# -- protected resource metadata (RFC 9728) and its discovery ---------------------------------------

_auth(
    "auth.server.prm.served", "MUST", PRM_VERSIONS,
    spec_url(V26, DISCOVERY, "authorization-server-location"),
    "MCP servers MUST implement the OAuth 2.0 Protected Resource Metadata (RFC9728) specification to indicate "
    "the locations of authorization servers.",
    "A request without a token is answered 401; the metadata is fetched where the challenge's "
    "`resource_metadata` names it, else at the well-known URIs (the path form, then the root); it "
    "must be a JSON object (200, application/json) with a `resource` string.",
)

_auth(
    "auth.server.prm.authorization-servers", "MUST", PRM_VERSIONS,
    spec_url(V26, DISCOVERY, "authorization-server-location"),
    "The Protected Resource Metadata document returned by the MCP server MUST include the "
    "`authorization_servers` field containing at least one authorization server.",
    "`authorization_servers` of the metadata found: a non-empty array of strings, each an absolute "
    "http(s) URL (RFC 8414 issuer identifiers).",
)

_auth(
    "auth.server.prm.header-2025-06-18", "MUST", (V06,),
    spec_url(V06, INDEX, "authorization-server-location"),
    "MCP servers MUST use the HTTP header `WWW-Authenticate` when returning a _401 Unauthorized_ to indicate "
    "the location of the resource server metadata URL as described in RFC9728 Section 5.1 \"WWW-Authenticate "
    "Response\".",
    "The 401 to a request without a token carries a Bearer challenge whose `resource_metadata` "
    "parameter is an absolute URL, and the metadata is served there.",
)

_auth(
    "auth.server.prm.discoverable", "MUST", (V11, V26),
    spec_url(V26, DISCOVERY, "protected-resource-metadata-discovery-requirements"),
    "MCP servers MUST implement one of the following discovery mechanisms to provide authorization server "
    "location information to MCP clients:",
    "Either mechanism passes: the 401 challenge's `resource_metadata` URL serves the metadata, or a "
    "well-known URI does (the path form, then the root, as RFC 9728 section 3.1 builds them from the "
    "MCP endpoint's URL).",
)

_auth(
    "auth.server.prm.resource-form", "SHOULD", PRM_VERSIONS,
    spec_url(V26, INDEX, "canonical-server-uri"),
    "Note: While both `https://mcp.example.com/` (with trailing slash) and `https://mcp.example.com` (without "
    "trailing slash) are technically valid absolute URIs according to RFC 3986, implementations SHOULD "
    "consistently use the form without the trailing slash for better interoperability unless the trailing "
    "slash is semantically significant for the specific resource.",
    "The `resource` of the protected resource metadata (what clients send as the RFC 8707 `resource` "
    "parameter) does not end with a slash.",
)

_auth(
    "auth.server.challenge-scope", "SHOULD", (V11, V26),
    spec_url(V26, INDEX, "scope-selection-strategy"),
    "MCP servers SHOULD include a `scope` parameter in the `WWW-Authenticate` header as defined in RFC 6750 "
    "Section 3 to indicate the scopes required for accessing the resource.",
    "The Bearer challenge of the 401 to a request without a token has a `scope` parameter.",
)

_auth(
    "auth.server.no-offline-access", "SHOULD", (V26,),
    spec_url(V26, INDEX, "refresh-tokens"),
    "MCP Servers (Protected Resources) SHOULD NOT include `offline_access` in `WWW-Authenticate` scope or "
    "Protected Resource Metadata `scopes_supported`, as refresh tokens are not a resource requirement.",
    "Neither the 401 challenge's `scope` nor the metadata's `scopes_supported` lists `offline_access`.",
)

# -- 401 for what is not a valid token -------------------------------------------------------------

_auth(
    "auth.server.not-proven-401", "MUST", (V03,),
    spec_url(V03, INDEX, "example-authorization-code-grant"),
    "When authorization is required and not yet proven by the client, servers MUST respond with _HTTP 401 "
    "Unauthorized_.",
    "A request without an Authorization header (initialize on a new connection) is answered 401.",
)

_auth(
    "auth.server.status-401", "MUST", ALL,
    spec_url(V26, INDEX, "error-handling"),
    "Servers MUST return appropriate HTTP status codes for authorization errors:",
    "The table's 401 row ('Authorization required or token invalid'): a request without a token is "
    "answered 401 Unauthorized (not 400, 403 or a 2xx).",
)

_auth(
    "auth.server.invalid-token-401", "MUST", ALL,
    spec_url(V26, INDEX, "token-handling"),
    "Invalid or expired tokens MUST receive a HTTP 401 response.",
    "Three tokens, each on a request of its own: one that is no JWT at all, one whose `exp` is in the "
    "past (otherwise valid), one signed with a key the authorization server never published (same "
    "issuer, audience and kid).  Each must be answered 401.",
)

_auth(
    "auth.server.error-response-2025-03-26", "MUST", (V03,),
    spec_url(V03, INDEX, "token-handling"),
    "If validation fails, servers MUST respond according to Section 5.3 error handling requirements.",
    "OAuth 2.1 section 5.3 (RFC 6750 section 3): every 401 for a missing or invalid token carries a "
    "`WWW-Authenticate` header with a Bearer challenge.",
)

_auth(
    "auth.server.error-response", "MUST", PRM_VERSIONS,
    spec_url(V26, INDEX, "token-handling"),
    "If validation fails, servers MUST respond according to OAuth 2.1 Section 5.3 error handling requirements.",
    "OAuth 2.1 section 5.3 (RFC 6750 section 3): every 401 for a missing or invalid token carries a "
    "`WWW-Authenticate` header with a Bearer challenge.",
)

_auth(
    "auth.server.validate-2025-03-26", "MUST", (V03,),
    spec_url(V03, INDEX, "token-handling"),
    "Resource servers MUST validate access tokens as described in Section 5.2.",
    "OAuth 2.1 section 5.2: the resource server checks that the token was issued by its authorization "
    "server and is meant for it.  A token signed with the authorization server's key but naming "
    "another issuer, and one for another audience, must both be refused (401).",
)

_auth(
    "auth.server.audience", "MUST", PRM_VERSIONS,
    spec_url(V26, INDEX, "token-handling"),
    "MCP servers MUST validate that access tokens were issued specifically for them as the intended audience, "
    "according to RFC 8707 Section 2.",
    "A token valid in every other way (the authorization server's key and issuer, unexpired, the "
    "scopes) whose `aud` names another resource is refused with 401.",
)

_auth(
    "auth.server.foreign-issuer", "MUST", PRM_VERSIONS,
    spec_url(V26, INDEX, "token-handling"),
    "MCP servers MUST NOT accept or transit any other tokens.",
    "A token for this server's audience, signed with a key the server trusts, but naming an issuer "
    "other than its authorization server, is refused with 401.",
)

_auth(
    "auth.server.no-token-passthrough", "MUST", PRM_VERSIONS,
    spec_url(V26, SECURITY, "access-token-privilege-restriction"),
    "The MCP server MUST NOT pass through the token it received from the MCP client.",
    "Needs the run told which tool of the server calls an upstream API (--upstream-tool) and the server "
    "pointed at the upstream the suite serves ({upstream}, $MCP_CONFORMANCE_UPSTREAM_URL): the tool is "
    "called with the run's valid token, and no request that reaches the upstream carries that token "
    "(in a header, the query or the body) or any other token the suite's authorization server issued "
    "for the MCP server's audience.  Without the option, or when the call makes no upstream request, "
    "skipped with the reason.",
)

_auth(
    "auth.server.proxy-consent", "MUST", PRM_VERSIONS,
    spec_url(V26, SECURITY, "confused-deputy-problem"),
    "MCP proxy servers using static client IDs MUST obtain user consent for each dynamically registered client "
    "before forwarding to third-party authorization servers (which may require additional consent).",
    "Only for a server the run is told is such a proxy (--proxy-static-client ID: it fronts the suite's "
    "authorization server, where it holds that id).  A client registers at the authorization server the "
    "protected resource metadata names (the proxy's), then asks its authorization endpoint (PKCE S256, "
    "loopback redirects followed): the suite's authorization server must receive no authorization request "
    "for the static id before the user consented; an answer that is a page (the consent) passes.  A refusal, "
    "or a flow the suite cannot follow, leaves it unjudged (skipped, with the reason).",
)

# -- where the token may be ------------------------------------------------------------------------

_auth(
    "auth.server.every-request", "MUST", (V03, V06, V11),
    spec_url(V11, INDEX, "token-requirements"),
    "Note that authorization MUST be included in every HTTP request from client to server, even if they are "
    "part of the same logical session.",
    "The client's duty, from which the server's follows (derived): on a session opened with a valid "
    "token, a request that carries the session (Mcp-Session-Id, or the SSE endpoint's session) but no "
    "Authorization header is answered 401; a session id is no credential.",
)

_auth(
    "auth.server.no-query-token", "MUST", ALL,
    spec_url(V26, INDEX, "token-requirements"),
    "Access tokens MUST NOT be included in the URI query string",
    "The client's duty, from which the server's follows (derived, as OAuth 2.1 section 5 drops the URI "
    "query method): a request whose only token is a valid one in `?access_token=` is refused (401), "
    "never served.",
)

# -- scopes ----------------------------------------------------------------------------------------

_auth(
    "auth.server.insufficient-scope-403", "SHOULD", (V11, V26),
    spec_url(V26, INDEX, "runtime-insufficient-scope-errors"),
    "When a client makes a request with an access token with insufficient scope during runtime operations, "
    "the server SHOULD respond with:",
    "A token valid in every way but without any scope, where the server asks for scopes (its 401 "
    "challenge or metadata names some): answered 403 with a Bearer challenge whose `error` is "
    "`insufficient_scope`.  A server that serves it has no scope to require: skipped.",
)

_auth(
    "auth.server.insufficient-scope-scopes", "SHOULD", (V11,),
    spec_url(V11, INDEX, "runtime-insufficient-scope-errors"),
    "Server Scope Management: When responding with insufficient scope errors, servers SHOULD include the "
    "scopes needed to satisfy the current request in the `scope` parameter.",
    "The 403 insufficient_scope challenge has a non-empty `scope` parameter.",
)

_auth(
    "auth.server.insufficient-scope-scopes-2026", "SHOULD", (V26,),
    spec_url(V26, INDEX, "runtime-insufficient-scope-errors"),
    "Server Scope Management: When responding with insufficient scope errors, servers SHOULD include the "
    "scopes needed to satisfy the current operation in the `scope` parameter, consistent with RFC 6750 "
    "Section 3.1.",
    "The 403 insufficient_scope challenge has a non-empty `scope` parameter.",
)

_auth(
    "auth.server.insufficient-scope-single-challenge", "SHOULD", (V26,),
    spec_url(V26, INDEX, "runtime-insufficient-scope-errors"),
    "Whatever scope-inclusion strategy a server adopts, servers SHOULD include all scopes required for the "
    "current operation in a single challenge.",
    "After the 403 insufficient_scope, a token with exactly the scopes the challenge named (and no other) is "
    "served: one challenge named all that was needed.",
)

_auth(
    "auth.server.scope-hierarchy", "MUST", (V26,),
    spec_url(V26, INDEX, "step-up-authorization-flow"),
    "Servers MUST account for scope hierarchies, where a broader scope implies narrower ones, when deciding "
    "whether a token is sufficient for an operation.",
    "The hierarchy is the server's own (no metadata declares it): the run is told it (--scope-hierarchy "
    "'BROAD>NARROW ...').  A token with exactly the narrower scopes is served (else nothing is judged); "
    "a token with only the broader scope, valid in every other way, must be served as well.  Without the "
    "option, skipped with the reason.",
)

_auth(
    "auth.server.audience-case", "SHOULD", PRM_VERSIONS,
    spec_url(V26, INDEX, "canonical-server-uri"),
    "While the canonical form uses lowercase scheme and host components, implementations SHOULD accept "
    "uppercase scheme and host components for robustness and interoperability.",
    "Read for the resource server's audience check (a reading, not worded for servers alone): a token whose "
    "`aud` is this server's resource with its scheme and host in upper case (HTTP://127.0.0.1:.../mcp) is "
    "served like one in canonical form.",
)

# -- 2025-03-26: the server's origin is its authorization server (issue 25) ----------------------------

_auth(
    "auth.server.as-metadata-2025-03-26", "SHOULD", (V03,),
    spec_url(V03, INDEX, "overview"),
    "MCP servers SHOULD and MCP clients MUST implement OAuth 2.0 Authorization Server Metadata (RFC8414).",
    "The server's part: `/.well-known/oauth-authorization-server` at the origin of the MCP endpoint (the "
    "authorization base URL) answers 200 with an RFC 8414 JSON object naming `authorization_endpoint` and "
    "`token_endpoint`.",
)

_auth(
    "auth.server.default-endpoints-2025-03-26", "MUST", (V03,),
    spec_url(V03, INDEX, "overview"),
    "Servers that do not support Authorization Server Metadata MUST follow the default URI schema.",
    "Only for a server without that metadata: `/authorize` (GET) and `/token`, `/register` (POST) at the "
    "origin answer (anything but 404 / 405: a refusal of the suite's incomplete request is an answer).",
)

_auth(
    "auth.server.dcr-2025-03-26", "SHOULD", (V03,),
    spec_url(V03, INDEX, "overview"),
    "SHOULD support the OAuth 2.0 Dynamic Client Registration Protocol (RFC7591).",
    "The server's part (\"MCP auth implementations\"): an RFC 7591 registration request (a loopback "
    "redirect URI, a public client) to the metadata's `registration_endpoint` (else `/register` at the "
    "origin) is answered 201 with a `client_id`.",
)

_auth(
    "auth.server.redirect-validation-2025-03-26", "MUST", (V03,),
    spec_url(V03, INDEX, "security-considerations"),
    "Servers MUST validate redirect URIs to prevent open redirect vulnerabilities",
    "A client registered with one loopback redirect URI asks the authorization endpoint (PKCE S256, "
    "`state`) to send the answer to https://mcp-conformance.invalid/elsewhere: the server must not "
    "redirect there (a 4xx or its own page passes; a redirect onwards to its upstream authorization "
    "server does too).",
)

_auth(
    "auth.server.https-endpoints-2025-03-26", "MUST", (V03,),
    spec_url(V03, INDEX, "security-considerations"),
    "All authorization endpoints MUST be served over HTTPS",
    "The server's authorization endpoints (those its RFC 8414 metadata names, else `/authorize`, `/token` "
    "and `/register` at the origin of the MCP endpoint) are https URLs.  An http endpoint on a loopback "
    "host (127.0.0.0/8, ::1, localhost) is a local test deployment, where no certificate can be had: "
    "not judged (skipped, with the reason); an http endpoint anywhere else fails.",
)

_auth(
    "auth.server.pkce-required-2025-03-26", "MUST", (V03,),
    spec_url(V03, INDEX, "implementation-requirements"),
    "PKCE is REQUIRED for all clients",
    "The server's part, as the authorization server of 2025-03-26: a client it registered (a public one, "
    "no secret) asks its authorization endpoint, with the registered redirect URI, without "
    "`code_challenge`: no authorization code may come back to the redirect URI (a 4xx, or a redirect "
    "carrying `error`, passes).  Redirects are followed on loopback hosts only (the authorization server "
    "the server relays to, when it is the suite's); a login or consent page in between, or a redirect "
    "elsewhere, leaves it unjudged (skipped, with the reason).",
)

_auth(
    "auth.server.token-rotation-2025-03-26", "SHOULD", (V03,),
    spec_url(V03, INDEX, "implementation-requirements"),
    "Token rotation SHOULD be implemented for enhanced security",
    "The server's part, as the authorization server of 2025-03-26: a client it registered completes the "
    "code flow with PKCE (loopback redirects followed, as for the PKCE check) at its token endpoint; when a "
    "refresh token is issued, refreshing with it must issue a new refresh token (not the same one), and "
    "the used one must then be refused.  A login page in between, or no refresh token issued, leaves it "
    "unjudged (skipped, with the reason).",
)
