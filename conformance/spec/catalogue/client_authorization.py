"""basic/authorization (2025-06-18, 2025-11-25) and basic/authorization/* (2026-07-28), as duties of
the client: the MCP client as an OAuth 2.1 client of the server's authorization server.

Checked over HTTP only, and only when the run asks for it (``mcp-conformance client --auth``):
the suite's server is then a protected resource (401 with a ``WWW-Authenticate`` challenge, its
protected resource metadata where the scenario puts it) and the suite's own authorization server
(``conformance.auth``) does the rest; every HTTP request to either is logged in order and judged
(``conformance/scenarios/client/authorization.py``).  Without ``--auth`` these skip with the reason.
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

AREA = "authorization"
HTTP = (Transport.STREAMABLE_HTTP, Transport.SSE)
V03, V06, V11, V26 = "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"
FROM_06 = (V06, V11, V26)
FROM_11 = (V11, V26)
PAGE = "basic/authorization"  # 2025-06-18, 2025-11-25; 2026-07-28: its index page
DISCOVERY = "basic/authorization/authorization-server-discovery"
SECURITY = "basic/authorization/security-considerations"
REGISTRATION = "basic/authorization/client-registration"


def _auth(id: str, level: str, versions: tuple[str, ...], url: str, quote: str, note: str) -> None:
    define(id, level, versions=versions, url=url, quote=quote, role="client", area=AREA, transports=HTTP, note=note)


# -- discovery ---------------------------------------------------------------------------------------

_auth(
    "client.auth.parse-challenge", "MUST", (V06,),
    spec_url(V06, PAGE, "authorization-server-location"),
    "MCP clients MUST be able to parse `WWW-Authenticate` headers and respond appropriately to "
    "`HTTP 401 Unauthorized` responses from the MCP server.",
    "The 401 names the protected resource metadata in `resource_metadata` at a URL no well-known "
    "rule builds (the well-known URIs answer 404): the client fetches that URL and goes on to the "
    "authorization server it names.",
)

_auth(
    "client.auth.prm-from-header", "MUST", FROM_11,
    spec_url(V26, DISCOVERY, "protected-resource-metadata-discovery-requirements"),
    "MCP clients MUST support both discovery mechanisms and use the resource metadata URL from the parsed "
    "`WWW-Authenticate` headers when present",
    "The 401 names the protected resource metadata in `resource_metadata` at a URL no well-known "
    "rule builds: the first metadata request is to that URL (a well-known URI tried first, or "
    "instead, fails).",
)

_auth(
    "client.auth.prm-well-known-order", "MUST", FROM_11,
    spec_url(V26, DISCOVERY, "protected-resource-metadata-discovery-requirements"),
    "otherwise, they MUST fall back to constructing and requesting the well-known URIs in the order listed above.",
    "The 401 has no `resource_metadata`; the metadata is served only at the root well-known URI: "
    "the client requests the path-inserted well-known URI first, then the root one, and uses it.",
)

_auth(
    "client.auth.as-metadata-order", "MUST", FROM_11,
    spec_url(V26, DISCOVERY, "authorization-server-metadata-discovery"),
    "For issuer URLs with path components (e.g., `https://auth.example.com/tenant1`), clients MUST try "
    "endpoints in the following priority order:",
    "The authorization server's issuer has a path (`/tenant1`) and its metadata is served only in the "
    "third form (OpenID Connect, path appended): the client requests the OAuth path-inserted form, "
    "then the OpenID Connect path-inserted form, then the path-appended one, in that order.",
)

_auth(
    "client.auth.as-metadata-order-root", "MUST", FROM_11,
    spec_url(V26, DISCOVERY, "authorization-server-metadata-discovery"),
    "For issuer URLs without path components (e.g., `https://auth.example.com`), clients MUST try:",
    "The authorization server's issuer has no path and its metadata is served only at the OpenID "
    "Connect well-known URI: the client requests the RFC 8414 URI, then the OpenID Connect one, in "
    "that order, and uses it.",
)

_auth(
    "client.auth.metadata-issuer", "MUST", (V26,),
    spec_url(V26, DISCOVERY, "authorization-server-metadata-discovery"),
    "If they differ, the client MUST NOT use the metadata.",
    "The authorization server metadata's `issuer` differs from the issuer the well-known URL was "
    "built from: the client must not use its endpoints (no registration, authorization or token "
    "request).",
)

_auth(
    "client.auth.challenge-scope", "MUST", FROM_11,
    spec_url(V26, PAGE, "scope-selection-strategy"),
    "Clients MUST NOT assume any particular set relationship between the challenged scope set and "
    "`scopes_supported`.",
    "The 401 challenge's `scope` names `mcp:admin`, which the metadata's `scopes_supported` does not "
    "list: the authorization request asks for every challenged scope (the challenge is "
    "authoritative for the request).",
)

# -- PKCE ------------------------------------------------------------------------------------------

_auth(
    "client.auth.pkce", "MUST", (V06,),
    spec_url(V06, PAGE, "authorization-code-protection"),
    "To mitigate this, MCP clients MUST implement PKCE according to OAuth 2.1 Section 7.5.2.",
    "The authorization request carries `code_challenge` (and `code_challenge_method`) and the token "
    "request a `code_verifier` whose challenge is the one sent.",
)

_auth(
    "client.auth.pkce-s256", "MUST", FROM_11,
    spec_url(V26, SECURITY, "authorization-code-protection"),
    "MCP clients MUST use the `S256` code challenge method when technically capable, as required by "
    "OAuth 2.1 Section 4.1.1.",
    "The authorization request has `code_challenge_method=S256` and a `code_challenge`; the token "
    "request's `code_verifier` hashes (S256) to that challenge.",
)

_auth(
    "client.auth.pkce-refuse", "MUST", FROM_11,
    spec_url(V26, SECURITY, "authorization-code-protection"),
    "If `code_challenge_methods_supported` is absent, the authorization server does not support PKCE and MCP "
    "clients MUST refuse to proceed.",
    "The authorization server metadata has no `code_challenge_methods_supported`: the client makes no "
    "authorization request there.",
)

# -- the resource parameter (RFC 8707) --------------------------------------------------------------

_auth(
    "client.auth.resource-both", "MUST", FROM_06,
    spec_url(V26, PAGE, "resource-parameter-implementation"),
    "MUST be included in both authorization requests and token requests.",
    "The authorization request's query and the token request's body (authorization_code grant) both "
    "carry `resource`.",
)

_auth(
    "client.auth.resource-canonical", "MUST", FROM_06,
    spec_url(V26, PAGE, "resource-parameter-implementation"),
    "MUST use the canonical URI of the MCP server as defined in RFC 8707 Section 2.",
    "The `resource` sent is exactly the `resource` of the server's protected resource metadata (the "
    "canonical URI of the endpoint the client was given: lower-case scheme and host, no trailing "
    "slash); a URI with a fragment or another URI fails.",
)

# -- using the token -------------------------------------------------------------------------------

_auth(
    "client.auth.bearer-every-request", "MUST", (V03, *FROM_06),
    spec_url(V26, PAGE, "token-requirements"),
    "Note that authorization MUST be included in every HTTP request from client to server",
    "Once the client has sent a bearer token to the MCP server, every later HTTP request it makes "
    "there (POST, GET, DELETE; on HTTP+SSE the stream and the message POSTs) carries "
    "`Authorization: Bearer`.",
)

_auth(
    "client.auth.no-token-in-query", "MUST", (V03, *FROM_06),
    spec_url(V26, PAGE, "token-requirements"),
    "Access tokens MUST NOT be included in the URI query string",
    "No request to the MCP server or the authorization server has an issued access token (or an "
    "`access_token` parameter) in its URL.",
)

_auth(
    "client.auth.own-as-tokens", "MUST", FROM_06,
    spec_url(V26, PAGE, "token-handling"),
    "MCP clients MUST NOT send tokens to the MCP server other than ones issued by the MCP server's "
    "authorization server.",
    "Every bearer token sent to the MCP server is one the suite's authorization server (the one the "
    "server's metadata names) issued.",
)

# -- redirect URIs, state, iss ---------------------------------------------------------------------

_auth(
    "client.auth.redirect-uri-form", "MUST", FROM_06,
    spec_url(V26, SECURITY, "communication-security"),
    "All redirect URIs MUST be either `localhost` or use HTTPS.",
    "The `redirect_uri` of the authorization request (and every one registered) is https, or http on "
    "a loopback host (`localhost`, `127.0.0.1`, `[::1]`).",
)

_auth(
    "client.auth.redirect-uri-registered", "MUST", FROM_06,
    spec_url(V26, SECURITY, "open-redirection"),
    "MCP clients MUST have redirect URIs registered with the authorization server.",
    "When the client registered dynamically, the `redirect_uri` of its authorization request is one "
    "of the `redirect_uris` it registered.",
)

_auth(
    "client.auth.state", "SHOULD", FROM_06,
    spec_url(V26, SECURITY, "open-redirection"),
    "MCP clients SHOULD use and verify state parameters in the authorization code flow and discard any "
    "results that do not include or have a mismatch with the original state.",
    "The authorization request carries `state`; the authorization server redirects back with another "
    "`state`: the client must not redeem that code (no token request).",
)

_auth(
    "client.auth.iss-validation", "MUST", (V26,),
    spec_url(V26, PAGE, "authorization-response-validation"),
    "On receiving the authorization response, MCP clients MUST apply the validation in RFC9207 Section 2.4 "
    "before transmitting the authorization code to any token endpoint:",
    "The authorization server advertises `authorization_response_iss_parameter_supported` and "
    "redirects back with an `iss` that is not its issuer: the client must not redeem the code (no "
    "token request).",
)

_auth(
    "client.auth.iss-no-normalization", "MUST", (V26,),
    spec_url(V26, PAGE, "authorization-response-validation"),
    "After decoding the `iss` value from the `application/x-www-form-urlencoded` response per RFC 9207 Section "
    "2.4, clients MUST NOT apply scheme or host case folding, default-port elision, trailing-slash, or "
    "percent-encoding normalization (RFC 3986 Sections 6.2.2-6.2.3) before comparison.",
    "The authorization server redirects back with its issuer plus a trailing slash as `iss`: equal "
    "only after normalization, so the client must not redeem the code (no token request).",
)

# -- registration ----------------------------------------------------------------------------------

_auth(
    "client.auth.dcr-application-type", "MUST", (V26,),
    spec_url(V26, REGISTRATION, "application-type-and-redirect-uri-constraints"),
    "MCP clients MUST specify an appropriate `application_type` during Dynamic Client Registration.",
    "The dynamic registration request's body has `application_type` \"native\" or \"web\" "
    "(\"native\" expected with loopback redirect URIs: the SHOULD beside it is not graded here).",
)


# -- 2025-03-26: the MCP server's origin is the authorization server ----------------------------------

_auth(
    "client.auth.base-url-2025-03-26", "MUST", (V03,),
    spec_url(V03, PAGE, "authorization-base-url"),
    "The authorization base URL MUST be determined from the MCP server URL by discarding any existing `path` "
    "component.",
    "The MCP endpoint has a path (`/<run>/mcp`): the client's authorization server metadata request "
    "goes to `/.well-known/oauth-authorization-server` at the root of the server's origin (a request "
    "with the endpoint's path in it before that fails).",
)

_auth(
    "client.auth.metadata-first-2025-03-26", "MUST", (V03,),
    spec_url(V03, PAGE, "fallbacks-for-servers-without-metadata-discovery"),
    "Clients MUST first attempt to discover endpoints via the metadata document before falling back to "
    "default paths.",
    "The server has no metadata (404): the client asks for it before it uses `/authorize`, "
    "`/token` or `/register`.",
)

_auth(
    "client.auth.default-endpoints-2025-03-26", "MUST", (V03,),
    spec_url(V03, PAGE, "fallbacks-for-servers-without-metadata-discovery"),
    "For servers that do not implement OAuth 2.0 Authorization Server Metadata, clients MUST use the following "
    "default endpoint paths relative to the authorization base URL:",
    "The server has no metadata: the client's registration, authorization and token requests go to "
    "`/register`, `/authorize` and `/token` at the root of the server's origin.",
)

_auth(
    "client.auth.pkce-2025-03-26", "MUST", (V03,),
    spec_url(V03, PAGE, "implementation-requirements"),
    "PKCE is REQUIRED for all clients",
    "The authorization request carries `code_challenge` (S256) and the token request a "
    "`code_verifier` whose challenge is the one sent.",
)

_auth(
    "client.auth.redirect-uri-form-2025-03-26", "MUST", (V03,),
    spec_url(V03, PAGE, "security-considerations"),
    "Redirect URIs MUST be either localhost URLs or HTTPS URLs",
    "The `redirect_uri` of the authorization request (and every one registered) is https, or http on "
    "a loopback host (`localhost`, `127.0.0.1`, `[::1]`).",
)


# -- registration: which mechanism, and what is registered (issue 25) -------------------------------

_auth(
    "client.auth.dcr-supported", "SHOULD", (V03, V06),
    spec_url(V06, PAGE, "overview"),
    "SHOULD support the OAuth 2.0 Dynamic Client Registration Protocol (RFC7591).",
    "The authorization server offers dynamic registration only (a `registration_endpoint`; no client ID "
    "metadata document support, no pre-registered client): the client registers there (an RFC 7591 "
    "POST) before its authorization request.  (2025-03-26: \"MCP auth implementations\"; 2025-06-18: "
    "\"Authorization servers and MCP clients\"; the authorization server half is the suite's own.)",
)

_auth(
    "client.auth.cimd-capability", "SHOULD", FROM_11,
    spec_url(V26, REGISTRATION, "advertising-cimd-support"),
    "MCP clients SHOULD check for this capability and MAY fall back to Dynamic Client Registration or "
    "pre-registration if unavailable.",
    "The authorization server's metadata does not advertise `client_id_metadata_document_supported`: the "
    "`client_id` of the client's authorization request is not a URL of its own (a client ID metadata "
    "document) but one the server issued or the run pre-registered.",
)

_auth(
    "client.auth.dcr-native", "SHOULD", (V26,),
    spec_url(V26, REGISTRATION, "application-type-and-redirect-uri-constraints"),
    "Native applications (desktop applications, mobile apps, CLI tools, and locally-hosted web applications "
    "accessed via `localhost`) SHOULD use `application_type: \"native\"`",
    "A dynamic registration whose redirect URIs are all loopback (`localhost`, `127.0.0.1`, `[::1]`: a "
    "locally running client) has `application_type` \"native\".",
)

_auth(
    "client.auth.refresh-grant-type", "SHOULD", (V26,),
    spec_url(V26, PAGE, "refresh-tokens"),
    "SHOULD include `refresh_token` in their `grant_types` client metadata",
    "Of clients that desire refresh tokens: a client that shows it does (it asks for `offline_access`, "
    "which the authorization server lists, or sends a `refresh_token` grant) and registers dynamically "
    "has `refresh_token` in the registration's `grant_types`.",
)

# -- the token in the request ----------------------------------------------------------------------

_auth(
    "client.auth.bearer-header", "MUST", FROM_06,
    spec_url(V26, PAGE, "token-requirements"),
    "MCP client MUST use the Authorization request header field defined in OAuth 2.1 Section 5.1.1:",
    "The access token the suite's authorization server issued reaches the MCP server in an "
    "`Authorization` header with the `Bearer` scheme (case-insensitive): no request carries it in "
    "another header, another scheme or the body instead.",
)

# -- scopes: the initial selection, step-up, retry limits --------------------------------------------

_auth(
    "client.auth.scope-selection", "SHOULD", FROM_11,
    spec_url(V26, PAGE, "scope-selection-strategy"),
    "During the initial authorization handshake, MCP clients SHOULD follow this priority order for scope "
    "selection:",
    "Three cases: the 401 challenge has `scope`: the first authorization request asks for those scopes "
    "(no more; a challenged scope left out is client.auth.challenge-scope's); no challenge `scope` but "
    "`scopes_supported` in the protected resource metadata: all of them; neither: no `scope` parameter.  "
    "`offline_access` is not counted (the 2026-07-28 refresh token section lets clients add it).",
)

_auth(
    "client.auth.step-up", "SHOULD", FROM_11,
    spec_url(V26, PAGE, "step-up-authorization-flow"),
    "Clients SHOULD respond to these errors by requesting a new access token with an increased set of scopes "
    "via a step-up authorization flow or handle the errors in other, appropriate ways.",
    "An authorized request is answered 403 `insufficient_scope` with `scope=\"mcp:admin\"`: a new "
    "authorization request the client makes after it asks for the challenged scope (a client that does "
    "not authorize again handles the error another way: passes).",
)

_auth(
    "client.auth.step-up-union", "SHOULD", (V26,),
    spec_url(V26, PAGE, "scope-selection-strategy"),
    "When re-authorizing, clients SHOULD include these scopes alongside any previously granted scopes to avoid "
    "losing permissions needed for other operations (see Step-Up Authorization Flow).",
    "After the 403 `insufficient_scope` naming `mcp:admin` only, the step-up authorization request asks "
    "for the scopes granted before (`mcp:read mcp:write`) as well as `mcp:admin`.",
)

_auth(
    "client.auth.retry-limit", "SHOULD", FROM_11,
    spec_url(V26, PAGE, "step-up-authorization-flow"),
    "Clients SHOULD implement retry limits and SHOULD track scope upgrade attempts to avoid repeated failures "
    "for the same resource and operation combination.",
    "The authorization server never grants `mcp:admin`, so every step-up ends in the same 403 "
    "`insufficient_scope`: the client makes at most 3 authorization requests after the first 403 (the "
    "official runner's bound), not one per refusal.",
)

_auth(
    "client.auth.per-as-registration", "MUST", (V26,),
    spec_url(V26, DISCOVERY, "authorization-server-location"),
    "Clients MUST maintain separate registration state (client credentials, tokens) per authorization server and "
    "MUST NOT assume that credentials valid for one authorization server will be accepted by another.",
    "Once the client's first token has been served, the protected resource metadata names a second "
    "authorization server and the first one's tokens get 401: at the second, the client presents no "
    "client ID, client secret, refresh token or access token the first one issued (it registers "
    "anew, or uses a client ID metadata document URL, which is portable).",
)

_auth(
    "client.auth.registration-refused", "MUST", (V26,),
    spec_url(V26, REGISTRATION, "application-type-and-redirect-uri-constraints"),
    "MCP clients MUST be prepared to handle registration failures due to redirect URI constraints when "
    "authorization servers implement OIDC.",
    "The registration endpoint answers 400 `invalid_redirect_uri` (no other way to a client ID is "
    "offered): the client makes no authorization request with a client ID it was never given, and "
    "retries registration at most 3 times.",
)

_auth(
    "client.auth.pkce-refuse-oidc", "MUST", FROM_11,
    spec_url(V26, SECURITY, "authorization-code-protection"),
    "MCP clients MUST verify the presence of `code_challenge_methods_supported` in the provider metadata "
    "response. If the field is absent, MCP clients MUST refuse to proceed.",
    "The authorization server's metadata is served only at the OpenID Connect well-known URI (the "
    "RFC 8414 one answers 404) and has no `code_challenge_methods_supported`: the client makes no "
    "authorization request there.",
)

_auth(
    "client.auth.as-metadata-2025-06-18", "MUST", (V06,),
    spec_url(V06, PAGE, "server-metadata-discovery"),
    "MCP clients MUST use the OAuth 2.0 Authorization Server Metadata.",
    "The client asks for the authorization server's RFC 8414 metadata (answered 200) before it uses "
    "any of its endpoints (registration, authorization, token).",
)

_auth(
    "client.auth.client-id-obtained", "MUST", (V26,),
    spec_url(V26, PAGE, "client-registration"),
    "Before initiating the authorization flow, MCP clients MUST obtain a client ID through one of three "
    "registration mechanisms: Client ID Metadata Documents, pre-registration, or Dynamic Client Registration, "
    "following the requirements and selection priority defined in Client Registration.",
    "The `client_id` of the authorization request is one the authorization server issued (its dynamic "
    "registration), one the run pre-registered, or an https client ID metadata document URL: never an "
    "id the client made up.  (The selection priority is not judged here.)",
)

_auth(
    "client.auth.cimd-supported", "SHOULD", FROM_11,
    spec_url(V26, PAGE, "overview"),
    "Authorization servers and MCP clients SHOULD support OAuth Client ID Metadata Documents "
    "(draft-ietf-oauth-client-id-metadata-document-00).",
    "The authorization server advertises `client_id_metadata_document_supported` and offers no other "
    "way to a client ID (no registration endpoint, nothing pre-registered): the client's authorization "
    "request has a URL as its `client_id` (the authorization server half is the suite's own).",
)

_auth(
    "client.auth.cimd-url", "MUST", FROM_11,
    spec_url(V26, REGISTRATION, "implementation-requirements"),
    "The `client_id` URL MUST use the \"https\" scheme and contain a path component, e.g. "
    "`https://example.com/client.json`",
    "Where the client uses a client ID metadata document (a URL `client_id` at an authorization "
    "server that advertises them), the URL is https with a path other than `/`.",
)

_auth(
    "client.auth.no-refresh-assumed", "MUST", (V26,),
    spec_url(V26, PAGE, "refresh-tokens"),
    "MUST NOT assume refresh tokens will be issued; the AS retains discretion",
    "The authorization server issues no refresh token, and the MCP server answers the first token 401 "
    "`invalid_token` once it has served one request with it: the client sends no `refresh_token` grant "
    "(it has none); it authorizes again, or stops.",
)

_auth(
    "client.auth.registration-priority", "SHOULD", FROM_11,
    spec_url(V11, PAGE, "client-registration-approaches"),
    "Clients supporting all options SHOULD",
    "(2025-11-25: \"... SHOULD follow the following priority order:\"; 2026-07-28: \"... SHOULD use the "
    "following priority order:\")  The authorization server offers client ID metadata documents and "
    "dynamic registration: a client that registers dynamically there and then, sent to a second "
    "authorization server that offers metadata documents only, uses one, supports them and did not "
    "put them first.  The pre-registration step is not judged (whether a client has it is not seen).",
)

_auth(
    "client.auth.cimd-hosted", "MUST", FROM_11,
    spec_url(V26, REGISTRATION, "implementation-requirements"),
    "Clients MUST host their metadata document at an HTTPS URL following RFC requirements",
    "The suite's authorization server fetches the client's `client_id` URL before it answers the "
    "authorization request (as a server supporting client ID metadata documents does): answered 200 "
    "with a JSON object, over https (TLS verified, except on a loopback host).  A URL that cannot be "
    "reached from where the suite runs (no answer at all) is not judged.",
)

_auth(
    "client.auth.cimd-document-fields", "MUST", FROM_11,
    spec_url(V26, REGISTRATION, "implementation-requirements"),
    "The metadata document MUST include at least the following properties: `client_id`, `client_name`, "
    "`redirect_uris`",
    "The document fetched from the client's `client_id` URL has `client_id` and `client_name` "
    "(strings) and `redirect_uris` (a non-empty array of strings).",
)

_auth(
    "client.auth.cimd-document-client-id", "MUST", FROM_11,
    spec_url(V26, REGISTRATION, "implementation-requirements"),
    "Clients MUST ensure the `client_id` value in the metadata matches the document URL exactly",
    "The `client_id` of the document fetched is the URL it was fetched from, character for character.",
)
