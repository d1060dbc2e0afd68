"""basic/patterns/mrtr (2026-07-28): multi round-trip requests (InputRequiredResult)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import spec_url

V = "2026-07-28"
PAGE = "basic/patterns/mrtr"

define(
    "mrtr.input-requests.declared-capability",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-requirements-basic-workflow"),
    quote=(
        "Servers MUST NOT send an `inputRequests` that the client has not declared support for in "
        "its capabilities."
    ),
    area="mrtr",
    aliases=("input-required-result-capability-check",),
    note=(
        "Probe: on a fresh connection, tools that ask for client input are first called with "
        "empty clientCapabilities; no elicitation/create, sampling/createMessage or roots/list "
        "may appear in an inputRequests answer to those calls."
    ),
)

define(
    "mrtr.supported-requests",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "supported-requests"),
    quote="Servers MUST NOT send `InputRequiredResult` responses on any other client requests.",
    area="mrtr",
    aliases=("input-required-result-unsupported-methods",),
    note=(
        "The supported requests are prompts/get, resources/read and tools/call. Checked on every "
        "result the server sent to a 2026-07-28 request during the run: resultType "
        "'input_required' is flagged on any other method."
    ),
)

define(
    "mrtr.retry.completes",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "multi-round-trip-requests"),
    quote=(
        "Server determines it has sufficient information to complete the operation, and responds "
        "with the final result."
    ),
    area="mrtr",
    aliases=(
        "input-required-result-basic-elicitation",
        "input-required-result-basic-sampling",
        "input-required-result-basic-list-roots",
        "input-required-result-request-state",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
    ),
    note=(
        "The step of the flow has no RFC 2119 keyword: graded SHOULD. Probe: a tool that answered "
        "with an InputRequiredResult is retried with a new id, the same arguments, inputResponses "
        "for every input request (an accepted elicitation whose content satisfies the requested "
        "schema, or a decline when it cannot be built; a text sampling result; an empty root "
        "list) and the exact requestState, for up to four rounds. Accepted: a final result, or "
        "another InputRequiredResult ('Servers MAY choose to return an InputRequiredResult on "
        "multiple attempts'); flagged: an error."
    ),
)

define(
    "mrtr.missing-input.re-request",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "error-handling"),
    quote=(
        "If the client fails to send all the information requested in a previous "
        "`InputRequests`, and the missing information is necessary for the server to process the "
        "request, the server SHOULD respond with a new `InputRequiredResult` requesting the "
        "missing information again, rather than returning an error."
    ),
    area="mrtr",
    aliases=("input-required-result-missing-input-response",),
    note=(
        "Probe: the retry carries the echoed requestState but no inputResponses. Accepted: a new "
        "InputRequiredResult, or a final result (the information was not necessary); flagged: an "
        "error response."
    ),
)

define(
    "mrtr.input-responses.ignore-unknown",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "error-handling"),
    quote=(
        "If additional, unexpected parameters are provided in the `InputResponses` object, the "
        "server SHOULD ignore any information it does not recognize or need."
    ),
    area="mrtr",
    aliases=("input-required-result-ignore-extra-params",),
    note=(
        "Probe: the complete retry plus one more InputResponses entry under a key the server "
        "never asked for. Flagged: an error where the same retry without the extra entry was "
        "served."
    ),
)
