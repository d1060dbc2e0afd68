"""basic/lifecycle: the initialize handshake and version negotiation (2024-11-05 .. 2025-11-25)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST_STATEFUL, spec_url

PAGE = "basic/lifecycle"

define(
    "lifecycle.initialize.result",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "initialization"),
    quote="The server MUST respond with its own capabilities and information",
    area="lifecycle",
    aliases=("server-initialize",),
)

define(
    "lifecycle.version-negotiation.echo",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="If the server supports the requested protocol version, it MUST respond with the same version.",
    area="lifecycle",
    note=(
        "Which versions a server supports is not observable directly: a different answer is "
        "read as 'this version is not supported', unless the same server offers the requested "
        "version when asked for an unsupported one."
    ),
)

define(
    "lifecycle.version-negotiation.fallback",
    "MUST",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "version-negotiation"),
    quote="Otherwise, the server MUST respond with another protocol version it supports.",
    area="lifecycle",
    note=(
        "The Error Handling section of the same page shows an initialize error (-32602, "
        "'Unsupported protocol version') as an example, so both readings are accepted: a result "
        "offering a protocol version that exists, or an error response."
    ),
)
