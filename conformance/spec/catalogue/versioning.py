"""basic/versioning (2026-07-28): per-request protocol version negotiation."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

V = "2026-07-28"

define(
    "versioning.unsupported-version",
    "MUST",
    since=V,
    url=spec_url(V, "basic/versioning", "protocol-version-negotiation"),
    quote=(
        "If the server does not implement the requested version (whether the version is unknown "
        "to the server, or is a known version the server has chosen not to support), it MUST "
        "respond with an `UnsupportedProtocolVersionError` listing the versions it does support"
    ),
    area="versioning",
)
