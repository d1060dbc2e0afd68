"""client/elicitation, as duties of the server: the elicitation requests it sends (2025-06-18 and
2025-11-25: ``elicitation/create`` requests; 2026-07-28: ``elicitation/create`` input requests of an
InputRequiredResult), the URLElicitationRequiredError (-32042) and the completion notification
(2025-11-25), and what it does with the client's answers.

All are judged by ``scenarios/server/elicitation.py``: tools that elicit (the official runner's
fixtures, or tools whose name or description speaks of elicitation and that need no argument and
are not marked destructive) are called with the elicitation capability declared, first in form
mode only, then in both modes; every elicitation request the server makes is answered the way a
client would and judged.  The client's half of the page is ``client_features.py``.
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, spec_url

PAGE = "client/elicitation"
V2506, V2511 = "2025-06-18", "2025-11-25"
MODES = (V2511, LATEST)  # the versions with form and url modes

_PROBE = (
    "Probe: tools that elicit (official fixtures test_elicitation, test_elicitation_sep1034_defaults, "
    "test_elicitation_sep1330_enums, test_url_elicitation, test_url_elicitation_required; else tools whose "
    "name or description speaks of elicitation, need no argument and are not marked destructive) are called "
    "with elicitation declared (form mode only, then form and url); every elicitation/create the server sends "
    "(2026-07-28: every elicitation/create input request of an InputRequiredResult) is judged. Skipped when no "
    "tool elicits. "
)

define(
    "elicitation.request.declared-mode",
    "MUST",
    versions=MODES,
    url=spec_url(V2511, PAGE, "capabilities"),
    quote="Servers MUST NOT send elicitation requests with modes that are not supported by the client.",
    area="elicitation",
    note=_PROBE + (
        "A client that declares elicitation as an empty object supports form mode only ('an empty capabilities "
        "object is equivalent to declaring support for form mode only'); a request without mode is form mode. "
        "On the calls that declared form mode only, an elicitation request in url mode is flagged."
    ),
)

define(
    "elicitation.request.message",
    "MUST",
    versions=MODES,
    url=spec_url(V2511, PAGE, "elicitation-requests"),
    quote="All elicitation requests MUST include the following parameters:",
    area="elicitation",
    note=_PROBE + (
        "The parameters of the table: `message` (a string, required) and `mode` ('form' or 'url'; optional for "
        "form mode). A request without a string message, or with a mode that is neither, is flagged. On "
        "2025-11-25 the schema requires the same (basic.schema.messages-valid flags it too); the 2026-07-28 "
        "schema does not look inside input requests."
    ),
)

define(
    "elicitation.request.form-params",
    "MUST",
    versions=MODES,
    url=spec_url(V2511, PAGE, "form-mode-elicitation-requests"),
    quote=(
        'Form mode elicitation requests MUST either specify `mode: "form"` or omit the `mode` field, and include '
        "these additional parameters:"
    ),
    area="elicitation",
    note=_PROBE + (
        "A request without mode or with mode 'form' must carry `requestedSchema`, a JSON Schema object "
        "(type 'object' with an object of properties). As for elicitation.request.message, 2025-11-25's "
        "schema flags the same."
    ),
)

define(
    "elicitation.request.url-params",
    "MUST",
    versions=MODES,
    url=spec_url(V2511, PAGE, "url-mode-elicitation-requests"),
    quote=(
        'URL mode elicitation requests MUST specify `mode: "url"`, a `message`, and include these additional '
        "parameters:"
    ),
    area="elicitation",
    note=_PROBE + (
        "A request with mode 'url' must carry a string `message` and a string `url`, and on 2025-11-25 a string "
        "`elicitationId` (2026-07-28's table has `url` only: the requestState correlates). As for "
        "elicitation.request.message, 2025-11-25's schema flags the same."
    ),
)

define(
    "elicitation.request.url-valid",
    "MUST",
    versions=MODES,
    url=spec_url(V2511, PAGE, "url-mode-elicitation-requests"),
    quote="The `url` parameter MUST contain a valid URL.",
    area="elicitation",
    note=_PROBE + (
        "Valid: an absolute URL (RFC 3986: a scheme, then for http and https a host), with no whitespace or "
        "control characters. A relative reference ('/connect', 'example.com/connect') or text is flagged. Also "
        "judged on the elicitations of a URLElicitationRequiredError (2025-11-25)."
    ),
)

define(
    "elicitation.request.no-sensitive",
    "MUST",
    versions=(V2506, *MODES),
    url=spec_url(V2511, PAGE, "form-mode-security"),
    quote="Servers MUST NOT request sensitive information",
    area="elicitation",
    note=_PROBE + (
        "2025-06-18: 'Servers MUST NOT request sensitive information through elicitation'; 2025-11-25 and later: "
        "'... (passwords, API keys, etc.) via form mode', where 'sensitive information' means 'secrets and "
        "credentials that grant access or authorize transactions' (a name, an email address or a username is "
        "not). What a form asks for is read from the names, titles and descriptions of its requestedSchema's "
        "properties: a field for a password or passphrase, an API key, an access or refresh token, a client "
        "secret or private key, a payment card number or its security code (CVV/CVC) is flagged. The reading is "
        "lexical: a form that asks for a secret in other words is not seen."
    ),
)

define(
    "elicitation.request.form-no-urls",
    "SHOULD",
    versions=MODES,
    url=spec_url(V2511, PAGE, "safe-url-handling"),
    quote="SHOULD NOT include URLs intended to be clickable in any field of a form mode elicitation request.",
    area="elicitation",
    note=_PROBE + (
        "The sentence is an item of 'MCP servers requesting elicitation:'. A form mode request whose message, "
        "or a title, description, default, enum value or option title of its requestedSchema, contains an http, "
        "https or www. URL is flagged (a warning)."
    ),
)

define(
    "elicitation.request.url-https",
    "SHOULD",
    versions=MODES,
    url=spec_url(V2511, PAGE, "safe-url-handling"),
    quote="SHOULD use HTTPS URLs for non-development environments.",
    area="elicitation",
    note=_PROBE + (
        "The sentence is an item of 'MCP servers requesting elicitation:'. A url mode request whose url is "
        "http:// on a host that is not a development one (localhost, *.localhost, *.test, *.local, a loopback "
        "or private address) is flagged (a warning)."
    ),
)

define(
    "elicitation.request.url-no-user-data",
    "MUST",
    versions=MODES,
    url=spec_url(V2511, PAGE, "safe-url-handling"),
    quote="MUST NOT include sensitive information about the end-user",
    area="elicitation",
    note=_PROBE + (
        "The sentence is an item of 'MCP servers requesting elicitation:' ('... including credentials, "
        "personal[ly] identifiable information, etc., in the URL sent to the client in a URL elicitation "
        "request'; the wording differs by a word between 2025-11-25 and 2026-07-28). Read on the url: a password "
        "in its user information, a query or fragment parameter named for a credential (password, access_token, "
        "id_token, refresh_token, api_key, client_secret, ...) or a value that is an email address is flagged. "
        "Other personal data the suite cannot know is not seen."
    ),
)

define(
    "elicitation.url-required.elicitations",
    "MUST",
    versions=(V2511,),
    url=spec_url(V2511, PAGE, "url-elicitation-required-error"),
    quote=(
        "The server MUST NOT return this error except when URL mode elicitation is required. The error MUST "
        "include a list of elicitations that are required to complete before the original can be retried. Any "
        "elicitations returned in the error MUST be URL mode elicitations and have an `elicitationId` property."
    ),
    area="elicitation",
    note=(
        "Judged on every -32042 (URLElicitationRequiredError) error the server returned in the elicitation "
        "probes (tools called with elicitation declared in both modes): error.data.elicitations must be a "
        "non-empty array whose every item has mode 'url' and a string elicitationId. An error -32042 that lists "
        "no URL mode elicitation says a URL mode elicitation is required without naming one: flagged as this "
        "error returned when none is required. 2025-11-25 only (2026-07-28 retires -32042)."
    ),
)

define(
    "elicitation.url-required.code",
    "MUST",
    versions=(V2511,),
    url=spec_url(V2511, PAGE, "error-handling"),
    quote=(
        "Servers MUST return standard JSON-RPC errors for common failure cases: - When a request cannot be "
        "processed until an elicitation is completed: `-32042` (`URLElicitationRequiredError`)"
    ),
    area="elicitation",
    note=(
        "Judged on the errors the server returned in the elicitation probes: an error whose data lists URL mode "
        "elicitations to complete (data.elicitations with mode 'url' items) says the request cannot be processed "
        "until they are completed, and must carry code -32042. 2025-11-25 only."
    ),
)

define(
    "elicitation.complete.elicitation-id",
    "MUST",
    versions=(V2511,),
    url=spec_url(V2511, PAGE, "completion-notifications-for-url-mode-elicitation"),
    quote="MUST include the `elicitationId` established in the original `elicitation/create` request.",
    area="elicitation",
    note=(
        "The sentence is an item of 'Servers sending notifications:'. Judged on every "
        "notifications/elicitation/complete the server sent on the connections of the elicitation probes: its "
        "elicitationId must be one the server established on that connection (in an elicitation/create request "
        "in url mode, or an elicitation of a -32042 error). Not flagged when the server sends none (the "
        "notification is a MAY). 2025-11-25 only."
    ),
)

define(
    "elicitation.complete.initiator-only",
    "MUST",
    versions=(V2511,),
    transports=("streamable-http", "sse"),
    url=spec_url(V2511, PAGE, "completion-notifications-for-url-mode-elicitation"),
    quote="MUST only send the notification to the client that initiated the elicitation request.",
    area="elicitation",
    note=(
        "The sentence is an item of 'Servers sending notifications:'. Over HTTP, where clients share one server: the "
        "connection of the elicitation probes that declared form mode only keeps its GET stream open (streamable "
        "HTTP; the SSE connection is its stream) while the other connection goes through the url mode elicitation; "
        "a notifications/elicitation/complete that reaches a connection naming an elicitationId established only on "
        "the other one went to a client that did not initiate it: flagged. On stdio every client has a server of "
        "its own. Not judged when the server sends no completion (a MAY). 2025-11-25 only."
    ),
)

define(
    "elicitation.content.validated",
    "SHOULD",
    versions=MODES,
    url=spec_url(V2511, PAGE, "form-mode-security"),
    quote="Servers SHOULD validate received data matches the requested schema",
    area="elicitation",
    note=_PROBE + (
        "Probe: the first form elicitation of a tool is accepted with content that does not match its "
        "requestedSchema: every property given a value of another type that carries a unique mark (a string "
        "property gets the number 7301946, any other property the text 'mcp-conformance-invalid-7301946'; the "
        "content stays within what ElicitResult allows). A server that validates refuses it in some way (an "
        "error, an isError result, the form asked again); a result that is not an error and shows the mark back "
        "was built from the invalid data: flagged (a warning). A result that shows nothing of it is not judged "
        "(the server may have ignored the data). 2025-06-18 says 'Both parties SHOULD validate elicitation "
        "content' (the client's half is client.elicitation.content-valid-2025-06)."
    ),
)

define(
    "elicitation.declined.handled",
    "MUST",
    versions=(LATEST,),
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote=(
        "Servers SHOULD NOT assume that elicitation requests will always succeed, and MUST handle cases where the "
        "user declines or cancels the elicitation, or where the client fails to process the request."
    ),
    area="elicitation",
    note=_PROBE + (
        "Probe: a tool that asked for a form is retried with the elicitation answered 'decline', then 'cancel' "
        "(with the echoed requestState). Handled: any result (a final one, an isError one, or another "
        "InputRequiredResult) or a JSON-RPC error other than -32603 (Internal error). No answer, or an internal "
        "error, is flagged. A client failing to process the request has no input response shape of its own in "
        "2026-07-28 and is not probed."
    ),
)
