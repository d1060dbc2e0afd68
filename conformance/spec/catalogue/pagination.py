"""server/utilities/pagination: opaque cursors on tools/list, prompts/list, resources/list and
resources/templates/list."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, spec_url

PAGE = "server/utilities/pagination"

define(
    "pagination.invalid-cursor",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote="Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
    area="pagination",
    note="Checked on every list method the server declares, with a cursor the server never issued.",
)

define(
    "pagination.stable-cursors",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "implementation-guidelines"),
    quote="Servers SHOULD: - Provide stable cursors",
    area="pagination",
    note=(
        "Read as: a `nextCursor` the server issued leads to the next page (no error), the same cursor "
        "sent again returns the same page, and following cursors ends (no cursor repeats)."
    ),
)
