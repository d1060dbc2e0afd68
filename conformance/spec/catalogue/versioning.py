"""basic/versioning (2026-07-28): per-request protocol version negotiation, removed methods, and
interoperability with initialize-based (legacy) clients."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

V = "2026-07-28"
PAGE = "basic/versioning"

define(
    "versioning.unsupported-version",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "protocol-version-negotiation"),
    quote=(
        "If the server does not implement the requested version (whether the version is unknown "
        "to the server, or is a known version the server has chosen not to support), it MUST "
        "respond with an `UnsupportedProtocolVersionError` listing the versions it does support"
    ),
    area="versioning",
    aliases=("sep-2575-server-unsupported-version-error",),
    note=(
        "Probe: server/discover declaring protocol version 1900-01-01 in _meta (and, on HTTP, in "
        "MCP-Protocol-Version). Expected: error -32022 whose data.supported lists the versions "
        "the server supports (each a string, none of them 1900-01-01)."
    ),
)

define(
    "versioning.modern-only.initialize-names-versions",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "backward-compatibility-with-initialization-based-versions"),
    quote=(
        "A server that supports only modern versions SHOULD name the protocol versions it "
        "supports in any error it returns to an `initialize` request, on any transport: legacy "
        "clients have no fall-forward mechanism, and this message may be the only diagnostic "
        "they can surface to users."
    ),
    area="versioning",
    note=(
        "Probe: a legacy client's initialize (protocolVersion 2025-11-25, no _meta, on HTTP "
        "without the 2026-07-28 request headers) on a fresh connection. A result means the server "
        "is dual-era (it MAY implement both behaviours) and the rule does not apply; an error must "
        "name at least one of the versions server/discover lists (in its message or data)."
    ),
)

define(
    "versioning.removed-methods",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "backward-compatibility-with-initialization-based-versions"),
    quote="A request carrying modern per-request `_meta` is served statelessly according to this revision.",
    area="versioning",
    aliases=(
        "sep-2575-http-server-method-not-found-404-initialize",
        "sep-2575-http-server-method-not-found-404-ping",
        "sep-2575-http-server-method-not-found-404-logging-setlevel",
        "sep-2575-http-server-method-not-found-404-resources-subscribe",
        "sep-2575-http-server-method-not-found-404-resources-unsubscribe",
    ),
    note=(
        "The changelog removes ping, logging/setLevel, resources/subscribe and "
        "resources/unsubscribe (and the initialize handshake) from 2026-07-28, so a request for "
        "one of them that carries the 2026-07-28 _meta asks for a method this revision does not "
        "have: expected JSON-RPC's -32601 (Method not found). No sentence says so in RFC 2119 "
        "words, so this is graded SHOULD and any error response is accepted (-32601 preferred); "
        "a result is flagged. initialize is the exception a dual-era server may make ('An "
        "initialize request selects legacy semantics'): a result to it is accepted. On HTTP the "
        "status of a -32601 answer is headers.unknown-method-404."
    ),
)

_EXTENSION_IDS_QUOTE = (
    "Extension identifiers MUST follow the `_meta` key naming rules, with a mandatory prefix."
)

define(
    "versioning.extension-identifiers",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "extension-negotiation"),
    quote=_EXTENSION_IDS_QUOTE,
    area="versioning",
    note=(
        "Checked on every capabilities object the server sent during the run that advertises "
        "extensions (the DiscoverResult's capabilities.extensions): each key must have a prefix "
        "(a slash) that is a series of dot-separated labels, each starting with a letter, ending "
        "with a letter or digit and holding only letters, digits and hyphens, and a name that, "
        "unless empty, begins and ends with an ASCII letter or digit (basic/index#_meta). Skipped "
        "when the server advertises no extension."
    ),
)

define(
    "versioning.extension-fallback",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "extension-negotiation"),
    quote=(
        "If one party supports an extension but the other does not, the supporting party MUST either "
        "revert to core protocol behavior or reject the request with an appropriate error."
    ),
    area="versioning",
    note=(
        "Checked on every result the server sent to a 2026-07-28 request during the run, when the "
        "server advertises extensions: a request whose client capabilities name no extension must "
        "get a core result (resultType complete or input_required) or an error; another resultType "
        "is an extension's behaviour the client did not opt in to. The tasks extension's own form "
        "of the rule (a CreateTaskResult, resultType task) is judged by tasks.ext.undeclared.no-task."
    ),
)
