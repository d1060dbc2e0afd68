"""server/prompts: listing and getting prompts, their messages, errors, list changes."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, LATEST_STATEFUL, spec_url

PAGE = "server/prompts"
V2026 = "2026-07-28"

define(
    "prompts.capability.declared",
    "MUST",
    url=spec_url(LATEST, PAGE, "capabilities"),
    quote="Servers that support prompts MUST declare the `prompts` capability",
    area="prompts",
    note=(
        "Checked when the capability is absent: a server that lists prompts anyway (prompts/list "
        "answered with at least one prompt) supports them without declaring them."
    ),
)

define(
    "prompts.list.respond",
    "MUST",
    since=V2026,
    url=spec_url(V2026, PAGE, "capabilities"),
    quote=(
        "Servers that declare the `prompts` capability MUST respond to `prompts/list` requests with the "
        "set of prompts currently available to the requesting client."
    ),
    area="prompts",
    aliases=("prompts-list",),
)

define(
    "prompts.list.answered",
    "SHOULD",
    until=LATEST_STATEFUL,
    url=spec_url(LATEST_STATEFUL, PAGE, "listing-prompts"),
    quote="To retrieve available prompts, clients send a `prompts/list` request.",
    area="prompts",
    aliases=("prompts-list",),
    note=(
        "These revisions word no duty for the server: a server that declares `prompts` and answers "
        "prompts/list with an error is graded as a warning (2026-07-28 makes it a MUST: "
        "prompts.list.respond)."
    ),
)

define(
    "prompts.name.identifier",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "prompt"),
    quote="`name`: Unique identifier for the prompt",
    area="prompts",
    note=(
        "A data-type description without an RFC 2119 keyword: two prompts with the same name across "
        "the pages of prompts/list are graded as a warning."
    ),
)

define(
    "prompts.get.unknown-name",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote=(
        "Servers SHOULD return standard JSON-RPC errors for common failure cases: - Invalid prompt name: "
        "`-32602` (Invalid params)"
    ),
    area="prompts",
)

define(
    "prompts.get.missing-arguments",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "error-handling"),
    quote="Missing required arguments: `-32602` (Invalid params)",
    area="prompts",
    note="The second item of the same SHOULD list ('Servers SHOULD return standard JSON-RPC errors for common failure cases').",
)

define(
    "prompts.content.image",
    "MUST",
    url=spec_url(LATEST, PAGE, "image-content"),
    quote="The image data MUST be base64-encoded and include a valid MIME type.",
    area="prompts",
    note="Checked on every image in the prompt messages we get: `data` valid base64, `mimeType` a type/subtype media type.",
)

define(
    "prompts.content.audio",
    "MUST",
    since="2025-03-26",
    url=spec_url(LATEST, PAGE, "audio-content"),
    quote="The audio data MUST be base64-encoded and include a valid MIME type.",
    area="prompts",
    note="Checked on every audio item in the prompt messages we get: `data` valid base64, `mimeType` a type/subtype media type.",
)

define(
    "prompts.content.embedded-resource",
    "MUST",
    url=spec_url(LATEST, PAGE, "embedded-resources"),
    quote=(
        "Resources can contain either text or binary (blob) data and MUST include: - A valid resource URI "
        "- The appropriate MIME type - Either text content or base64-encoded blob data"
    ),
    area="prompts",
    note=(
        "Checked on every embedded resource in the prompt messages we get: a URI with a scheme, a "
        "`mimeType` (the schema leaves it optional, this sentence does not), and `text` or valid base64 `blob`."
    ),
)

define(
    "prompts.fixtures.content",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "getting-a-prompt"),
    quote="To retrieve a specific prompt, clients send a `prompts/get` request.",
    area="prompts",
    aliases=(
        "prompts-get-simple",
        "prompts-get-with-args",
        "prompts-get-embedded-resource",
        "prompts-get-with-image",
    ),
    note=(
        "Deeper content checks on the official runner's fixture prompts, only when the server lists "
        "them by their fixed names (test_simple_prompt, test_prompt_with_arguments, ...): each must "
        "render as its runner scenario describes. The runner's fixture contract, not a spec sentence, "
        "hence at most a warning."
    ),
)

define(
    "prompts.list-changed.notification",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "list-changed-notification"),
    quote=(
        "When the list of available prompts changes, servers that declared the `listChanged` capability "
        "SHOULD send a notification"
    ),
    area="prompts",
    note=(
        "Only testable when the server offers a way to change its prompt list: the official runner's diagnostic "
        "hook `test_trigger_prompt_change` (called twice: the change, then the list put back). Up to 2025-11-25 the "
        "notification may come on any stream of the session (streamable HTTP: the GET stream is opened "
        "first); in 2026-07-28 the suite first opens a subscriptions/listen stream with `promptsListChanged: true` "
        "(the page's sentence goes on: 'to clients that have opened a `subscriptions/listen` stream with "
        "`promptsListChanged: true`'), and the notification must arrive after the change."
    ),
)

define(
    "prompts.get.validate-arguments",
    "SHOULD",
    url=spec_url(LATEST, PAGE, "implementation-considerations"),
    quote="Servers SHOULD validate prompt arguments before processing",
    area="prompts",
    note=(
        "Probe: prompts/get for a listed prompt with a required argument, every required argument given, one of "
        "them as the number 42 instead of a string (prompt arguments are strings: the schema's `arguments` is a "
        "map of string to string). Any JSON-RPC error is a validation (the code is not judged here); a rendered "
        "prompt means the value was processed unvalidated (coerced or used as it came). A required argument "
        "left out is prompts.get.missing-arguments."
    ),
)
