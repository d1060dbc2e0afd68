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

_EVERY_INPUT_REQUIRED = (
    "Checked on every InputRequiredResult (resultType 'input_required') the server sent to a "
    "2026-07-28 request during the run, on every connection. "
)

define(
    "mrtr.input-required.non-empty",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-requirements-basic-workflow"),
    quote="Servers MUST include at least one of `inputRequests` or `requestState` in every `InputRequiredResult` response.",
    area="mrtr",
    note=_EVERY_INPUT_REQUIRED + "Flagged: neither an inputRequests object nor a requestState string.",
)

define(
    "mrtr.input-requests.kinds",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-requirements-basic-workflow"),
    quote=(
        "`inputRequests` values are request objects that MUST be one of `ElicitRequest`, "
        "`CreateMessageRequest`, or `ListRootsRequest`"
    ),
    area="mrtr",
    note=_EVERY_INPUT_REQUIRED + "Every value of inputRequests must be an object whose method is "
    "elicitation/create, sampling/createMessage or roots/list (the shape of its params is the "
    "schema checks' business).",
)

define(
    "mrtr.input-requests.unique-keys",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-requirements-basic-workflow"),
    quote="`inputRequests` keys are server assigned identifiers and MUST be unique within the scope of the request.",
    area="mrtr",
    note=_EVERY_INPUT_REQUIRED + "Read on the JSON text as received: a key that appears twice in "
    "one inputRequests object (a parser would keep only one of the two requests) is flagged. Keys "
    "reused across the rounds of a retried request are not judged: each retry is a new request, "
    "and the server may ask for missing information again.",
)

define(
    "mrtr.no-assumed-retry",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-requirements-basic-workflow"),
    quote=(
        "Servers MUST NOT assume that clients will fulfill the `inputRequests` or retry the "
        "original request."
    ),
    area="mrtr",
    note=(
        "Probe: a tool that answered with an InputRequiredResult is called afresh (a new id, no "
        "requestState, no inputResponses) without the first answer being retried; the fresh call "
        "must be served as the first one was (another InputRequiredResult or a final result). An "
        "error, or no answer, where the first call got an InputRequiredResult fails."
    ),
)

define(
    "mrtr.input-responses.validated",
    "SHOULD",
    since=V,
    url=spec_url(V, PAGE, "error-handling"),
    quote=(
        "Servers SHOULD validate that the data provided by the client is a valid `InputResponses` "
        "object and that the information inside can be correctly parsed."
    ),
    area="mrtr",
    note=(
        "The next sentence says what follows: 'Protocol errors (malformed JSON, invalid schema, "
        "internal server errors) SHOULD return a JSON-RPC error response'. Probe: a tool whose "
        "InputRequiredResult carried inputRequests, retried with the echoed requestState and an "
        "inputResponses that is not an InputResponses object (a string). Accepted: a JSON-RPC "
        "error, or a new InputRequiredResult asking again (the information is missing); flagged: a "
        "final result, the invalid answers taken as given."
    ),
)

define(
    "mrtr.request-state.untrusted",
    "MUST",
    since=V,
    url=spec_url(V, PAGE, "server-requirements-basic-workflow"),
    quote=(
        "If a client request contains a `requestState` field, servers MUST treat `requestState` "
        "as an attacker-controlled input."
    ),
    area="mrtr",
    note=(
        "Whether a tampered state must be rejected depends on what it carries ('Integrity "
        "protection MAY be omitted only when tampering can cause nothing worse than request "
        "failure'), which cannot be seen; what can: a server that trusts the input breaks on it. "
        "Probe: a tool that answered with an InputRequiredResult carrying a requestState, retried "
        "with the inputResponses and a requestState the server never issued (the issued one with "
        "characters changed, and text that is not even the same shape). Each retry must be "
        "answered (a result, an InputRequiredResult or a JSON-RPC error -- a rejection is what the "
        "page asks of a protected state) and the server must keep serving: a retry left "
        "unanswered, a dropped connection or a later request left unanswered fails."
    ),
)
