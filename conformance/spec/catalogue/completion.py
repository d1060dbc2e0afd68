"""server/utilities/completion: ``completion/complete`` for prompt arguments and resource templates."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, spec_url

PAGE = "server/utilities/completion"

define(
    "completion.capability.declared",
    "MUST",
    since="2025-03-26",
    url=spec_url(LATEST, PAGE, "capabilities"),
    quote="Servers that support completions MUST declare the `completions` capability",
    area="completion",
    note=(
        "Checked when the capability is absent: a server that answers completion/complete with "
        "suggestions anyway supports completions without declaring them. 2024-11-05 has no "
        "`completions` capability (completion is not gated there)."
    ),
)

define(
    "completion.complete.result",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "requesting-completions"),
    quote=(
        "To get completion suggestions, clients send a `completion/complete` request specifying what is "
        "being completed through a reference type"
    ),
    area="completion",
    aliases=("completion-complete",),
    note=(
        "No RFC 2119 keyword: a server that supports completion (the `completions` capability; in "
        "2024-11-05, any server that does not answer -32601) is expected to answer a request for an "
        "argument of a prompt or resource template it lists with a result (the suggestions may be "
        "empty). An error is graded as a warning."
    ),
)

define(
    "completion.values.max-100",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "completion-results"),
    quote="Maximum 100 items per response",
    area="completion",
    note=(
        "No RFC 2119 keyword on the page (the schema: 'Must not exceed 100 items'; 2026-07-28's schema "
        "also enforces maxItems 100). More than 100 values is graded as a warning."
    ),
)

define(
    "completion.complete.unknown-prompt",
    "SHOULD",
    since="2025-03-26",
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote=(
        "Servers SHOULD return standard JSON-RPC errors for common failure cases: - Method not found: "
        "`-32601` (Capability not supported) - Invalid prompt name: `-32602` (Invalid params)"
    ),
    area="completion",
)
