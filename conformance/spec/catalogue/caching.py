"""server/utilities/caching (2026-07-28): ``ttlMs`` and ``cacheScope`` on cacheable results."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

PAGE = "server/utilities/caching"
V2026 = "2026-07-28"

define(
    "caching.hints.required",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "cacheable-results"),
    quote=(
        'Servers MUST include caching hints on results with `resultType: "complete"` returned by the '
        "following operations:"
    ),
    area="caching",
    aliases=(
        "caching",
        "sep-2549-tools-list-caching-hints",
        "sep-2549-prompts-list-caching-hints",
        "sep-2549-resources-list-caching-hints",
        "sep-2549-resources-templates-list-caching-hints",
        "sep-2549-resources-read-caching-hints",
        "sep-2549-cache-scope-valid",
    ),
    note=(
        "The operations: server/discover, tools/list, prompts/list, resources/list, "
        'resources/templates/list, resources/read. A hint is an integer `ttlMs` and a `cacheScope` of '
        '"public" or "private". The 2026-07-28 schema requires both fields too, so a missing hint is '
        "also a schema mismatch (basic.schema.messages-valid)."
    ),
)

define(
    "caching.ttl.non-negative",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "time-to-live-ttl-field"),
    quote="Servers MUST provide a `ttlMs` value that is `>= 0`.",
    area="caching",
    aliases=("sep-2549-ttl-non-negative",),
    note="The 2026-07-28 schema has `minimum: 0` too, so a negative value is also a schema mismatch.",
)

define(
    "caching.scope.same-across-pages",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "interaction-with-pagination"),
    quote="Servers MUST apply the same `cacheScope` to all response pages for a given list request.",
    area="caching",
)
