"""2026-07-28 basic/transports/streamable-http, Custom Headers from Tool Parameters, as duties of
the client: tools whose x-mcp-header annotations break the constraints are not used, and the
designated parameters of a tools/call are mirrored into Mcp-Param-{Name} headers, encoded as
Value Encoding says.  Judged on the tools/call POSTs a client makes to the suite's server."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

V = "2026-07-28"
PAGE = "basic/transports/streamable-http"
HTTP = (Transport.STREAMABLE_HTTP,)

define(
    "client.http2026.param-mirrored",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "custom-headers-from-tool-parameters"),
    quote=(
        "When a server's tool definition includes `x-mcp-header` annotations, conforming clients "
        "MUST mirror the designated parameter values into HTTP headers."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    aliases=("sep-2243-client-supports-custom-headers",),
    note=(
        "Judged on every tools/call the client POSTs for a tool the suite's server listed with "
        "valid x-mcp-header annotations: for each designated parameter with a value (not null) in "
        "the arguments, an Mcp-Param-{Name} header (name compared case-insensitively) whose "
        "value, decoded if in the Base64 sentinel form, is the argument's string form (an integer "
        "compared numerically, a boolean true/false in any case: the exact form is "
        "client.http2026.param-encoded). A header missing or naming another value is flagged; an "
        "unsafe value sent without Base64 is client.http2026.param-base64 only."
    ),
)

define(
    "client.http2026.param-omitted",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-behavior-for-custom-headers"),
    quote="Client MUST omit the header",
    role="client",
    area="transport-http",
    transports=HTTP,
    aliases=("sep-2243-client-omit-null",),
    note=(
        "The table's rows 'Parameter value is null' and 'Parameter not in arguments': a "
        "tools/call that carries an Mcp-Param-{Name} header for a designated parameter absent "
        "from (or null in) its arguments is flagged. The suite's add_numbers tool has an optional "
        "designated parameter (note) that --call-command does not pass."
    ),
)

define(
    "client.http2026.param-encoded",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "value-encoding"),
    quote=(
        "Clients MUST encode parameter values before including them in HTTP headers to ensure "
        "safe transmission and prevent injection attacks."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "The type conversion that follows the sentence: an integer as its decimal string (42, "
        "-7), a boolean as lowercase true or false. Flagged: an Mcp-Param-{Name} header that "
        "names the argument's value in another form (True, 42.0)."
    ),
)

define(
    "client.http2026.param-base64",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "value-encoding"),
    quote=(
        "When a value cannot be safely represented as a plain ASCII header value (e.g., it "
        "contains non-ASCII characters, control characters, or has leading/trailing whitespace), "
        "clients MUST use Base64 encoding of the UTF-8 representation with the following format:"
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "Format: =?base64?{Base64EncodedValue}?=. The suite's header_values tool offers such "
        "values as single-item enums (Hello, 世界; ' padded '; line1\\nline2). Flagged: a "
        "designated parameter whose value is not plain visible ASCII (or has leading or trailing "
        "whitespace) mirrored in a header that is not the sentinel form of its UTF-8 bytes."
    ),
)

define(
    "client.http2026.param-sentinel-literal",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "value-encoding"),
    quote=(
        "To avoid ambiguity, clients MUST also Base64-encode any plain-ASCII value that matches "
        "the sentinel pattern (i.e., starts with `=?base64?` and ends with `?=`)."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note="Probe value (a single-item enum of the header_values tool): =?base64?literal?=. Flagged: the header carries it as it is.",
)

define(
    "client.http2026.sentinel-lowercase",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "value-encoding"),
    quote="These markers are case-sensitive and MUST appear exactly as shown (lowercase).",
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "Flagged: an Mcp-Param-{Name} (or Mcp-Name) header in the form =?BASE64?...?= (the markers "
        "in any other case) whose payload decodes to the value: to a server it is a literal "
        "string, not the sentinel."
    ),
)

define(
    "client.http2026.invalid-tool-excluded",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "schema-extension"),
    quote=(
        "Clients using the Streamable HTTP transport MUST reject tool definitions where any "
        "`x-mcp-header` value violates these constraints. Rejection means the client MUST "
        "exclude the invalid tool from the result of `tools/list`."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "The suite's server lists, besides valid tools, one tool per broken constraint (an empty "
        "x-mcp-header, one that is not a token, one with a control character, two that differ "
        "only in case, one on a number parameter, one under items, one under anyOf). What a "
        "client does with its tools/list result shows when it calls a tool: calling an invalid "
        "one is flagged. Passed when the client called tools the server listed, none of them "
        "invalid; with --call-command (the client calls add_numbers when told), a second run "
        "lists add_numbers with an invalid annotation and the client must not call it."
    ),
)

define(
    "client.http2026.name-base64",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "standard-request-headers"),
    quote=(
        "If the `Mcp-Name` source value cannot be safely represented as a plain ASCII header "
        "value, clients MUST encode it using the Base64 sentinel format described in Value "
        "Encoding."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "The suite's server (scenario param_headers) also lists a tool whose name is not plain "
        "ASCII (header_name_\u00e9t\u00e9). Judged on every tools/call, resources/read and prompts/get "
        "POST whose params.name or params.uri is not plain visible ASCII (or has leading or "
        "trailing whitespace): Mcp-Name must be =?base64?{Base64 of its UTF-8}?=. A missing "
        "Mcp-Name, or a safe value that does not match, is client.http2026.standard-headers."
    ),
)

define(
    "client.http2026.header-mismatch-retry",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "client-behavior"),
    quote=(
        "If the server rejects a request with a `HeaderMismatch` error because required "
        "`Mcp-Param-*` headers are missing or do not match the body, the client SHOULD call "
        "`tools/list` to check for changes to the tool's `inputSchema`, then retry the original "
        "request with the appropriate headers."
    ),
    role="client",
    area="transport-http",
    transports=HTTP,
    note=(
        "Probe (scenario header_mismatch_retry): the suite's server lists add_numbers without "
        "x-mcp-header annotations; the client's first tools/call of it is refused with HTTP 400 "
        "and HeaderMismatch (-32020), the tool now listed with a and b mirrored into "
        "Mcp-Param-A / Mcp-Param-B. Expected: a tools/list, then the same call again with both "
        "headers. Flagged (warning): no tools/list after the refusal, or no retry with the "
        "headers. Skipped when the client makes no tools/call (give --call-command)."
    ),
)
