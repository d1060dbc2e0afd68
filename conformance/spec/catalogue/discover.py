"""server/discover (2026-07-28): the stateless replacement of the initialize handshake."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

V = "2026-07-28"

define(
    "discover.implemented",
    "MUST",
    since=V,
    url=spec_url(V, "server/discover", "response"),
    quote=(
        "`server/discover` lets a client query a server's supported protocol versions, "
        "capabilities, and identity before sending any other requests. Servers MUST implement it."
    ),
    area="discover",
    aliases=("sep-2575-server-implements-discover",),
    note=(
        "Probe: server/discover (with a string id, as in the page's example) answered with a "
        "result whose supportedVersions lists the version asked for and whose capabilities is an "
        "object. A target that answers the suite's first server/discover with a non-modern error "
        "or not at all is a legacy server: the version is skipped as not supported."
    ),
)

define(
    "discover.server-info",
    "SHOULD",
    since=V,
    url=spec_url(V, "server/discover", "discoverresult"),
    quote=(
        "`_meta['io.modelcontextprotocol/serverInfo']`: Name and version of the server "
        "software. Servers SHOULD include this field."
    ),
    area="discover",
    aliases=("sep-2575-server-identifies-in-result-meta",),
)
