"""server/resources: listing and reading resources, templates, not-found errors, subscriptions."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

PAGE = "server/resources"
V2026 = "2026-07-28"

define(
    "resources.capability.declared",
    "MUST",
    url=spec_url(LATEST, PAGE, "capabilities"),
    quote="Servers that support resources MUST declare the `resources` capability",
    area="resources",
    note=(
        "Checked when the capability is absent: a server that lists resources anyway "
        "(resources/list answered with at least one resource) supports them without declaring them."
    ),
)

define(
    "resources.list.respond",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "capabilities"),
    quote=(
        "Servers that declare the `resources` capability MUST respond to `resources/list` requests with "
        "the set of resources currently available to the requesting client."
    ),
    area="resources",
    aliases=("resources-list",),
)

define(
    "resources.list.answered",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "listing-resources"),
    quote="To discover available resources, clients send a `resources/list` request.",
    area="resources",
    aliases=("resources-list",),
    note=(
        "These revisions word no duty for the server: a server that declares `resources` and answers "
        "resources/list with an error is graded as a warning (2026-07-28 makes it a MUST: "
        "resources.list.respond)."
    ),
)

define(
    "resources.uri.identifier",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "resource"),
    quote="`uri`: Unique identifier for the resource",
    area="resources",
    note=(
        "A data-type description without an RFC 2119 keyword: the same URI listed twice across the "
        "pages of resources/list is graded as a warning."
    ),
)

define(
    "resources.contents.text-or-blob",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "resource-contents"),
    quote="Resources can contain either text or binary data",
    area="resources",
    note=(
        "No RFC 2119 keyword. The schema's union (TextResourceContents | BlobResourceContents) also "
        "accepts an item carrying both `text` and `blob`; such an item is graded as a warning."
    ),
)

define(
    "resources.contents.binary-encoded",
    "MUST",
    url=spec_url(LATEST, PAGE, "security-considerations"),
    quote="Binary data MUST be properly encoded",
    area="resources",
    note=(
        "Checked on every `blob` we read (resources/read, and embedded resources in tool results and "
        "prompt messages): it must be valid base64 (RFC 4648, padding required)."
    ),
)

define(
    "resources.read.not-found-code",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "error-handling"),
    quote="Servers SHOULD return standard JSON-RPC errors for common failure cases: - Resource not found: `-32002`",
    area="resources",
)

define(
    "resources.read.not-found-invalid-params",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "error-handling"),
    quote=(
        "If the requested resource does not exist, servers MUST return a JSON-RPC error with code "
        "`-32602` (Invalid Params)."
    ),
    area="resources",
    aliases=("sep-2164-error-code",),
    note="The official runner grades the code as a SHOULD; the 2026-07-28 page words it as a MUST.",
)

define(
    "resources.read.not-found-no-empty-contents",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "error-handling"),
    quote="Servers MUST NOT return an empty `contents` array for a non-existent resource.",
    area="resources",
    aliases=("sep-2164-no-empty-contents",),
)

define(
    "resources.subscribe.answered",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "capabilities"),
    quote="`subscribe`: whether the client can subscribe to be notified of changes to individual resources.",
    area="resources",
    aliases=("resources-subscribe", "resources-unsubscribe"),
    note=(
        "No RFC 2119 keyword: a server that declares `subscribe` is expected to answer "
        "resources/subscribe and resources/unsubscribe for a resource it lists with a result (the "
        "schema's EmptyResult); an error is graded as a warning."
    ),
)

define(
    "resources.subscribe.updated",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "subscriptions"),
    quote="Clients can subscribe to specific resources and receive notifications when they change",
    area="resources",
    note=(
        "No RFC 2119 keyword. Only testable when the server offers a way to change a resource: the "
        "reference server's `touch_resource` tool (on `test://watched-resource`). After subscribing, a "
        "change must bring notifications/resources/updated for the URI; after unsubscribing, none."
    ),
)

define(
    "resources.fixtures.content",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "resource-contents"),
    quote="Resources can contain either text or binary data",
    area="resources",
    aliases=("resources-read-text", "resources-read-binary", "resources-templates-read"),
    note=(
        "Deeper content checks on the official runner's fixture resources, only when the server offers "
        "them (test://static-text, test://static-binary, the template test://template/{id}/data): each "
        "must read as its runner scenario describes. The runner's fixture contract, not a spec "
        "sentence, hence at most a warning."
    ),
)

define(
    "resources.list-changed.notification",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "list-changed-notification"),
    quote=(
        "When the list of available resources changes, servers that declared the `listChanged` "
        "capability SHOULD send a notification"
    ),
    area="resources",
    note=(
        "Only testable when the server offers a way to change its resource list: the official runner's diagnostic "
        "hook `test_trigger_resource_list_change` (called twice: the change, then the list put back). Up to 2025-11-25 the "
        "notification may come on any stream of the session (streamable HTTP: the GET stream is opened "
        "first); in 2026-07-28 the suite first opens a subscriptions/listen stream with `resourcesListChanged: true` "
        "(the page's sentence goes on: 'to clients that have opened a `subscriptions/listen` stream with "
        "`resourcesListChanged: true`'), and the notification must arrive after the change."
    ),
)

define(
    "resources.uri.validate",
    "MUST",
    url=spec_url(LATEST, PAGE, "security-considerations"),
    quote="Servers MUST validate all resource URIs",
    area="resources",
    note=(
        "Probe: resources/read of strings that are not RFC 3986 URIs (a raw space and angle brackets, "
        "characters a URI must percent-encode), built from the server's own offer: the first resource template "
        "with one expression filled with 'mcp conformance <not a uri>' unencoded, and the first listed resource's "
        "URI with ' <mcp-conformance>' appended. Each must be refused with a JSON-RPC error (any code); a result "
        "means the server took a string that is not a URI as one (a template matched loosely, a URI trimmed) "
        "without validating it. A server that lists neither resources nor templates is not probed."
    ),
)

define(
    "resources.uri.custom-scheme",
    "MUST",
    since="2025-06-18",
    url=spec_url(LATEST, PAGE, "custom-uri-schemes"),
    quote="Custom URI schemes MUST be in accordance with RFC3986, taking the above guidance in to account.",
    area="resources",
    note=(
        "Judged on the resource templates (resources/templates/list, followed to its last page) whose scheme is "
        "not one the page names (https, file, git): the template with every expression replaced by 'x' must be an "
        "RFC 3986 URI (a scheme of a letter followed by letters, digits, '+', '-' or '.'; only characters a URI "
        "allows). The schema's uri-template format lets such a template through. A listed resource URI that is "
        "not an RFC 3986 URI is already flagged by the schema (format: uri) under basic.schema.messages-valid."
    ),
)

define(
    "resources.file.no-traversal",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "security-considerations"),
    quote="Servers MUST sanitize file paths to prevent directory traversal attacks when serving `file://` resources",
    area="resources",
    note=(
        "Probe, when the server lists file:// resources (or file:// templates): the suite writes a canary file "
        "with a random token in a new temporary directory outside every directory the server serves, and reads "
        "it through the server by climbing out of a served directory with '..' segments (plain, then "
        "percent-encoded as %2e%2e). Contents carrying the token mean the server followed the traversal: a fail. "
        "An error, or contents without the token, pass (the canary exists only on the suite's host: a server on "
        "another host cannot reach it, and its sanitizing is not judged). No file of the host other than the "
        "canary is ever asked for."
    ),
)
