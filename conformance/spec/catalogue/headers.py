"""basic/transports/streamable-http (2026-07-28), Request Metadata: MCP-Protocol-Version,
Mcp-Method / Mcp-Name, Mcp-Param-* (x-mcp-header) and the server's validation of them."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

V = "2026-07-28"
PAGE = "basic/transports/streamable-http"
HTTP = (Transport.STREAMABLE_HTTP,)

define(
    "headers.protocol-version.mismatch",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "protocol-version-header"),
    quote=(
        "The header value MUST match the `io.modelcontextprotocol/protocolVersion` field carried "
        "in the request body's `_meta`. If the values do not match, the server MUST reject the "
        "request with `400 Bad Request` and a `HeaderMismatch` JSON-RPC error (see Server "
        "Validation)."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2575-http-server-header-mismatch-400",),
    note=(
        "Probes: MCP-Protocol-Version 2026-07-28 with _meta naming 1900-01-01, and "
        "MCP-Protocol-Version 1900-01-01 with _meta naming 2026-07-28. Expected: HTTP 400 with "
        "-32020; -32022 (UnsupportedProtocolVersion, also with 400) is accepted too, since one of "
        "the two versions is one the server does not implement and that rule is a MUST of the "
        "same weight. Flagged: the request served, or another status or code."
    ),
)

define(
    "headers.protocol-version.unsupported-400",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "protocol-version-header"),
    quote=(
        "If the server does not implement the requested protocol version (whether the version is "
        "unknown to the server, or is a known version the server has chosen not to support), it "
        "MUST respond with `400 Bad Request` and an `UnsupportedProtocolVersionError` listing its "
        "supported versions."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2575-http-server-unsupported-version-400",),
    note="The error itself (-32022 with data.supported) is versioning.unsupported-version; this is its HTTP status.",
)

define(
    "headers.unknown-method-404",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "protocol-version-header"),
    quote=(
        "If the server does not implement the requested RPC method, it MUST respond with `404 Not "
        "Found` and a JSON-RPC error with code `-32601` (`Method not found`)."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2575-http-server-method-not-found-404",),
    note=(
        "Probe: a method no revision defines, with the 2026-07-28 _meta and headers. Also checked "
        "on the answers to the methods 2026-07-28 removed (versioning.removed-methods): a -32601 "
        "answer says the server does not implement the method, so its status must be 404."
    ),
)

define(
    "headers.validation.mismatch-rejected",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-validation"),
    quote=(
        "Servers that process the request body MUST reject requests where the values specified in "
        "the headers do not match the corresponding values in the request body."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-reject-invalid-headers",),
    note=(
        "Probes: Mcp-Method naming another method; Mcp-Method differing only in case (header "
        "values are case-sensitive); Mcp-Name naming another tool (tools/call of a listed tool). "
        "Flagged: the request served (any 2xx answer). The status and code of the rejection are "
        "headers.validation.status-and-code."
    ),
)

define(
    "headers.validation.missing-rejected",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-validation"),
    quote=(
        "Validation failure conditions include: - A required standard header "
        "(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) is missing."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-reject-invalid-headers",),
    note=(
        "The list names the failures for which 'servers MUST return HTTP status 400 Bad Request' "
        "with HeaderMismatch. Probes: a request without Mcp-Method; a request that names an item "
        "(resources/read, prompts/get, tools/call) without Mcp-Name. A request without "
        "MCP-Protocol-Version is headers.protocol-version.missing-rejected."
    ),
)

define(
    "headers.protocol-version.missing-rejected",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "protocol-version-header"),
    quote=(
        "A server that does not support such clients MUST reject a request without the header per "
        "Server Validation."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-reject-invalid-headers",),
    note=(
        "'such clients': clients of revisions before 2025-06-18, which send no "
        "MCP-Protocol-Version header; a server that supports them 'MAY treat a request that omits "
        "the header as protocol version 2025-03-26'. Probe: server/discover with the 2026-07-28 "
        "_meta and no MCP-Protocol-Version header. Accepted: HTTP 400 with HeaderMismatch, or an "
        "answer under legacy rules (any HTTP 4xx, or a result without resultType). Flagged: the "
        "request served as a 2026-07-28 request."
    ),
)

define(
    "headers.validation.status-and-code",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-validation"),
    quote=(
        "When rejecting a request due to header validation failure, servers MUST return HTTP "
        "status `400 Bad Request` and MUST include a JSON-RPC error response using the following "
        "error code:"
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-reject-error-code", "sep-2243-server-reject-param-mismatch"),
    note=(
        "The code is -32020 (HeaderMismatch). Checked on every rejection of the header probes "
        "(mismatched or missing Mcp-Method, Mcp-Name, Mcp-Param-*; invalid Mcp-Param-* values)."
    ),
)

define(
    "headers.name.base64-decoded",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "value-encoding"),
    quote=(
        "In particular, servers MUST decode an encoded `Mcp-Name` or `Mcp-Param-{Name}` value "
        "before comparing it to the corresponding request body value during Server Validation."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-decode-base64",),
    note=(
        "Probes: tools/call of a listed tool whose Mcp-Name is the Base64 sentinel form "
        "(=?base64?...?=) of its name; for a tool with an x-mcp-header string parameter, the "
        "parameter's header in sentinel form. Also, values that only look Base64-like without "
        "the exact markers are literal: a header 'SGVsbG8=' matches the body value 'SGVsbG8='. "
        "Flagged: such a request rejected."
    ),
)

define(
    "headers.param.validated",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-behavior-for-custom-headers"),
    quote=(
        "Any server that processes the message body MUST validate that encoded header values, "
        "after decoding if Base64-encoded, match the corresponding values in the request body."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-validate-param-match",),
    note=(
        "For a tool whose inputSchema marks a parameter with x-mcp-header (skipped when the server "
        "lists none). Probes: the Mcp-Param-{Name} header with another value than the body's; the "
        "header omitted while the body carries the value ('Client omits header but value is in "
        "body: Server MUST reject the request'). Flagged: the request served."
    ),
)

define(
    "headers.param.invalid-characters",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-behavior-for-custom-headers"),
    quote=(
        "Servers MUST reject requests with a recognized `Mcp-Param-{Name}` header that contains "
        "invalid characters (see Value Encoding)."
    ),
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-reject-invalid-param-chars",),
    note=(
        "Probe: the Base64 sentinel with characters outside the Base64 alphabet "
        "(=?base64?SGVs!!!bG8=?=) for a string parameter marked with x-mcp-header. Flagged: the "
        "request served."
    ),
)

define(
    "headers.param.missing-rejected",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-behavior-for-custom-headers"),
    quote="Server MUST reject the request",
    area="headers",
    transports=HTTP,
    aliases=("sep-2243-server-reject-missing-param",),
    note=(
        "The table's row 'Client omits header but value is in body'. For a tool whose inputSchema "
        "marks a string parameter with x-mcp-header (skipped when the server lists none). Probe: "
        "tools/call with the parameter in the arguments and no Mcp-Param-{Name} header. Flagged: "
        "the request served. The status and code of the rejection are "
        "headers.validation.status-and-code."
    ),
)

define(
    "headers.param.absent-not-expected",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-behavior-for-custom-headers"),
    quote="Server MUST NOT expect the header",
    area="headers",
    transports=HTTP,
    note=(
        "The table's rows 'Parameter value is null' and 'Parameter not in arguments'. For a tool "
        "the suite may call (an official fixture, or one marked read-only) with a parameter marked "
        "x-mcp-header: tools/call with that parameter left out of the arguments, and with it set "
        "to null, and no Mcp-Param-{Name} header. Any answer is accepted (a -32602 for a missing "
        "required argument, a tool error) but a HeaderMismatch (-32020) rejection."
    ),
)

define(
    "headers.param.integer-numeric",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "server-validation"),
    quote=(
        "When validating integer parameter values, servers SHOULD compare the header value and "
        "the body value numerically rather than as strings (e.g., `42.0` and `42` are considered "
        "equal)."
    ),
    area="headers",
    transports=HTTP,
    note=(
        "For a tool the suite may call with an integer parameter marked x-mcp-header (skipped "
        "when there is none): tools/call with the body value 42 and the header 42.0. Flagged "
        "(warning): a HeaderMismatch (-32020) rejection."
    ),
)

define(
    "headers.sentinel.case-sensitive",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "value-encoding"),
    quote="These markers are case-sensitive and MUST appear exactly as shown (lowercase).",
    area="headers",
    transports=HTTP,
    note=(
        "The server's side: a header value with the markers in another case (=?BASE64?...?=) is "
        "not the sentinel and is compared as it is. Probe, for a string parameter marked "
        "x-mcp-header of a tool the suite may call: the body value =?BASE64?SGVsbG8=?= and the "
        "same text in the header. Flagged: a HeaderMismatch (-32020) rejection (the header "
        "decoded to Hello). The client's side is client.http2026.sentinel-lowercase."
    ),
)

_ANNOTATION_QUOTE = (
    "Constraints on `x-mcp-header` values: - MUST NOT be empty - MUST match HTTP field-name token "
    "syntax (`1*tchar`, RFC 9110 Section 5.1) - MUST NOT contain control characters, including "
    "carriage return (CR, `\\r`) or line feed (LF, `\\n`) - MUST be case-insensitively unique among "
    "all `x-mcp-header` values in the `inputSchema` - MUST only be applied to parameters with "
    "primitive types (integer, string, boolean). Parameters with type `number` are not permitted. "
    "Integer values MUST be within the safe range for JavaScript (\u22122<sup>53</sup>+1 to "
    "2<sup>53</sup>\u22121) - MUST only be applied to properties that are _statically reachable_ "
    "from the schema root: reachable via a chain consisting solely of `properties` keys. The chain "
    "MUST NOT pass through `items` (or any other array keyword), composition keywords (`oneOf`, "
    "`anyOf`, `allOf`, `not`), conditional keywords (`if`/`then`/`else`), or `$ref`. Nested object "
    "properties are permitted as long as every step in the chain is a `properties` key. An "
    "`x-mcp-header` annotation anywhere else makes the annotation \u2014 and thus the tool "
    "definition \u2014 invalid."
)

define(
    "headers.param.annotation-valid",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "schema-extension"),
    quote=_ANNOTATION_QUOTE,
    area="headers",
    transports=HTTP,
    note=(
        "The server's side of the constraints (the client's is client.http2026.invalid-tool-"
        "excluded: such a tool is dropped from its tools/list result, so the server loses it). "
        "Judged on every tool of tools/list: each x-mcp-header value a non-empty HTTP token "
        "(which has no control characters), unique case-insensitively within the inputSchema, on "
        "a property typed integer, string or boolean (a type list of those and null is accepted; "
        "an untyped property only when its enum or const values are all of those types), "
        "reached from the root through properties keys only. Of the integer range, what the "
        "schema itself declares: enum, const and default values of an annotated integer "
        "property within -(2^53-1) .. 2^53-1 (the values a client sends are the client's). "
        "Skipped when no tool carries x-mcp-header (the feature is optional for servers)."
    ),
)

define(
    "headers.name-case-insensitive",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "case-sensitivity"),
    quote="Clients and servers MUST use case-insensitive comparisons for header names.",
    area="headers",
    transports=HTTP,
    note=(
        "The server's side. Probes: server/discover with MCP-Protocol-Version and Mcp-Method "
        "spelled in lower case, then in upper case; for a tool with an x-mcp-header parameter "
        "(read-only or an official fixture), tools/call with Mcp-Name and Mcp-Param-{Name} "
        "spelled in lower and upper case. Flagged: a HeaderMismatch (-32020) or any HTTP 400 "
        "refusal, which the same request with the page's spelling does not get. The client's "
        "side (the client reads response header names such as Content-Type) is not judged here."
    ),
)
