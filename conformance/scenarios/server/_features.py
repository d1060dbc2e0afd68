"""Helpers shared by the server-feature scenarios (tools, resources, prompts, logging, completion,
pagination, caching).  No scenarios here.

* :func:`list_all` follows ``nextCursor`` to the end of a list method and keeps every page.
* :func:`safe_tools` picks the tools we may call: the official runner's fixtures (known
  behaviour) and tools the server marks ``readOnlyHint: true`` that have an ``outputSchema`` and
  whose arguments we can build from their ``inputSchema`` (:func:`synth_args`).  We never call a
  tool that may change anything.
* JSON Schema helpers: the validator class of a schema's dialect, meta-schema errors.
* Content checks shared by tool results and prompt messages (base64, MIME types).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Iterable

from conformance.runtime.peer import ExpectTimeout, PeerError, RawPeer
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr

__all__ = [
    "LISTS",
    "Page",
    "Listing",
    "list_all",
    "request",
    "describe_error",
    "unique_token",
    "duplicates",
    "is_base64",
    "is_mime_type",
    "dialect_validator",
    "schema_errors",
    "instance_errors",
    "synth_args",
    "safe_tools",
    "CallPlan",
    "CONTENT_FIXTURES",
    "inbound_after",
    "stream_of",
    "since",
    "text_blocks",
    "declared",
    "check_list_answered",
    "check_unique",
    "open_notification_stream",
    "cheap_isolated",
]

# list method -> (result key, capability that gates it, what an item is identified by)
LISTS: dict[str, tuple[str, str, str]] = {
    "tools/list": ("tools", "tools", "name"),
    "prompts/list": ("prompts", "prompts", "name"),
    "resources/list": ("resources", "resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "resources", "uriTemplate"),
}

MAX_PAGES = 100


# ---------------------------------------------------------------------------------------------
# requests


async def request(peer: RawPeer, method: str, params: Any = MISSING, *, timeout: float | None = None, meta: Any = None) -> Envelope | None:
    """Send a request and return its response envelope; ``None`` when none arrived in time
    (the timeout is for the caller to grade).  ``meta``: extra ``_meta`` fields."""
    if meta is None:
        rid = await peer.request(method, params)
    else:
        rid = await peer.request(method, params, meta=meta)
    try:
        return await peer.expect_response(rid, timeout=timeout)
    except ExpectTimeout:
        return None


def describe_error(env: Envelope) -> str:
    err = env.error if isinstance(env.error, dict) else {}
    return f"error {id_repr(err.get('code', MISSING))} {err.get('message')!r}"


def unique_token() -> str:
    return secrets.token_hex(4)


# ---------------------------------------------------------------------------------------------
# pagination


@dataclass
class Page:
    cursor: Any  # the cursor we sent (None: the first page)
    env: Envelope
    items: list[Any]
    next_cursor: Any  # MISSING when absent


@dataclass
class Listing:
    """Every page of one list method, in order, and how the walk ended."""

    method: str
    key: str
    pages: list[Page] = field(default_factory=list)
    error: Envelope | None = None  # an error response to one of the page requests
    error_cursor: Any = None  # the cursor of that request (None: the first page)
    problem: str | None = None  # why the walk stopped early, in words
    problem_kind: str | None = None  # "timeout" | "not-a-list" | "cursor-repeats" | "too-many-pages" | "connection"

    @property
    def items(self) -> list[Any]:
        return [item for page in self.pages for item in page.items]

    @property
    def first(self) -> Envelope | None:
        if self.pages:
            return self.pages[0].env
        return self.error if self.error_cursor is None else None

    @property
    def complete(self) -> bool:
        return self.error is None and self.problem is None

    def ids(self, field_name: str) -> list[Any]:
        return [item.get(field_name) if isinstance(item, dict) else None for item in self.items]

    def envelopes(self) -> list[Envelope]:
        out = [p.env for p in self.pages]
        if self.error is not None:
            out.append(self.error)
        return out


async def list_all(peer: RawPeer, method: str, *, timeout: float | None = None, max_pages: int = MAX_PAGES) -> Listing:
    """Request ``method`` and follow ``nextCursor`` until a page has none (any string, the empty
    one included, is a cursor: 2026-07-28 says so and older revisions call cursors opaque)."""
    key = LISTS[method][0]
    out = Listing(method, key)
    cursor: Any = None
    seen: set[str] = set()
    while True:
        params: Any = MISSING if cursor is None else {"cursor": cursor}
        try:
            env = await request(peer, method, params, timeout=timeout)
        except PeerError as exc:
            out.problem, out.problem_kind = f"{method} failed: {exc}", "connection"
            return out
        if env is None:
            where = "the first page" if cursor is None else f"the page after cursor {cursor!r:.60}"
            out.problem, out.problem_kind = f"no answer to {method} for {where} within the timeout", "timeout"
            return out
        if env.kind is Kind.ERROR:
            out.error, out.error_cursor = env, cursor
            return out
        result = env.result if env.kind is Kind.RESULT else None
        items = result.get(key) if isinstance(result, dict) else None
        if not isinstance(items, list):
            out.problem, out.problem_kind = f"the {method} result has no `{key}` array", "not-a-list"
            out.error_cursor = cursor
            out.pages.append(Page(cursor, env, [], MISSING))
            return out
        nxt = result.get("nextCursor", MISSING)
        out.pages.append(Page(cursor, env, items, nxt))
        if nxt is MISSING or nxt is None or not isinstance(nxt, str):
            return out
        if nxt in seen or nxt == cursor:
            out.problem, out.problem_kind = f"nextCursor {nxt!r:.60} repeats: following it would never end", "cursor-repeats"
            return out
        if len(out.pages) >= max_pages:
            out.problem, out.problem_kind = f"more than {max_pages} pages; stopped following nextCursor", "too-many-pages"
            return out
        seen.add(nxt)
        cursor = nxt


def duplicates(values: Iterable[Any]) -> list[Any]:
    seen: set[str] = set()
    dup: list[Any] = []
    for v in values:
        k = json.dumps(v, sort_keys=True)
        if k in seen and v not in dup:
            dup.append(v)
        seen.add(k)
    return dup


# ---------------------------------------------------------------------------------------------
# content


_MIME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$")


def is_base64(value: Any) -> bool:
    """Standard base64 (RFC 4648 section 4) with padding; whitespace is not allowed."""
    if not isinstance(value, str):
        return False
    if len(value) % 4:
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def is_mime_type(value: Any) -> bool:
    return isinstance(value, str) and bool(_MIME.match(value))


def text_blocks(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [c["text"] for c in content if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)]


# ---------------------------------------------------------------------------------------------
# JSON Schema


def _meta_schema_classes() -> dict[str, Any]:
    from conformance.schema.validate import import_jsonschema

    validators = import_jsonschema().validators

    out: dict[str, Any] = {}
    for cls in (
        validators.Draft4Validator,
        validators.Draft6Validator,
        validators.Draft7Validator,
        validators.Draft201909Validator,
        validators.Draft202012Validator,
    ):
        uri = cls.META_SCHEMA.get("$id") or cls.META_SCHEMA.get("id")
        out[_norm_uri(uri)] = cls
    return out


def _norm_uri(uri: Any) -> str:
    text = str(uri).strip().rstrip("#")
    return text.replace("https://", "http://", 1)


_CLASSES: dict[str, Any] | None = None


def dialect_validator(schema: Any) -> tuple[Any, str]:
    """The jsonschema validator class for ``schema``'s dialect and its name; ``(None, reason)``
    when the schema names a dialect we do not know.  No ``$schema``: 2020-12 (the MCP default)."""
    global _CLASSES
    from conformance.schema.validate import import_jsonschema

    validators = import_jsonschema().validators

    if _CLASSES is None:
        _CLASSES = _meta_schema_classes()
    declared = schema.get("$schema", MISSING) if isinstance(schema, dict) else MISSING
    if declared is MISSING:
        return validators.Draft202012Validator, "2020-12 (the default)"
    if not isinstance(declared, str):
        return None, f"`$schema` is not a string: {declared!r:.80}"
    cls = _CLASSES.get(_norm_uri(declared))
    if cls is None:
        return None, f"unknown dialect {declared!r:.80}"
    return cls, declared


def schema_errors(schema: Any) -> tuple[list[str] | None, str]:
    """Meta-schema errors of ``schema`` (``[]`` when valid); ``(None, reason)`` when its dialect is unknown."""
    if not isinstance(schema, dict):
        return [f"not a JSON object: {json.dumps(schema)[:80]}"], "-"
    cls, dialect = dialect_validator(schema)
    if cls is None:
        return None, dialect
    meta = cls(cls.META_SCHEMA)
    errors = sorted(meta.iter_errors(schema), key=lambda e: list(e.absolute_path))
    return [_error_text(e) for e in errors[:5]], dialect


def instance_errors(schema: Any, instance: Any) -> tuple[list[str] | None, str]:
    """Errors of ``instance`` against ``schema``; ``(None, reason)`` when we cannot judge (unknown
    dialect, an invalid schema, a reference we cannot resolve)."""
    cls, dialect = dialect_validator(schema)
    if cls is None:
        return None, dialect
    try:
        if list(cls(cls.META_SCHEMA).iter_errors(schema)):
            return None, "the schema itself is invalid"
        errors = list(cls(schema).iter_errors(instance))
    except Exception as exc:  # unresolvable $ref and similar: not the instance's fault
        return None, f"the schema could not be applied: {exc.__class__.__name__}: {str(exc)[:120]}"
    return [_error_text(e) for e in errors[:5]], dialect


def _error_text(err: Any) -> str:
    path = "/".join(str(p) for p in err.absolute_path)
    return f"{path or '(root)'}: {err.message[:200]}"


# ---------------------------------------------------------------------------------------------
# which tools we call, with which arguments


_NOPE = object()
TOKEN = "mcp-conformance"

#: the official runner's content fixtures: name -> what its scenario checks (see tools.py)
CONTENT_FIXTURES = (
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
)
ERROR_FIXTURE = "test_error_handling"
MAX_GENERIC_CALLS = 8


def _value_for(schema: Any, depth: int = 0) -> Any:
    if depth > 4 or not isinstance(schema, dict):
        return _NOPE
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        text = TOKEN
        if isinstance(lo, int) and len(text) < lo:
            text = text + "x" * (lo - len(text))
        if isinstance(hi, int) and len(text) > hi:
            text = text[:hi]
        return text
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        value: Any = 1
        if isinstance(lo, (int, float)) and not isinstance(lo, bool):
            value = lo if "minimum" in schema else lo + 1
        hi = schema.get("maximum")
        if isinstance(hi, (int, float)) and not isinstance(hi, bool) and value > hi:
            value = hi
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "array":
        return [] if not schema.get("minItems") else _NOPE
    if kind == "object":
        return _object_for(schema, depth + 1)
    return _NOPE


def _object_for(schema: dict[str, Any], depth: int) -> Any:
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    out: dict[str, Any] = {}
    for name in required:
        value = _value_for(props.get(name), depth)
        if value is _NOPE:
            return _NOPE
        out[name] = value
    return out


def synth_args(schema: Any) -> dict[str, Any] | None:
    """The smallest arguments we can build that satisfy ``schema`` (an object schema): required
    properties only, from const/default/enum/examples or a plain value of their type; ``None`` when
    we cannot (and are not sure), so the tool is not called."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    args = _object_for(schema, 0)
    if args is _NOPE:
        return None
    errors, _ = instance_errors(schema, args)
    if errors is None or errors:
        return None
    return args


@dataclass
class CallPlan:
    tool: dict[str, Any]
    args: dict[str, Any]
    fixture: bool

    @property
    def name(self) -> str:
        return str(self.tool.get("name"))


def _read_only(tool: dict[str, Any]) -> bool:
    ann = tool.get("annotations")
    if not isinstance(ann, dict) or ann.get("readOnlyHint") is not True:
        return False
    if ann.get("destructiveHint") is True:
        return False
    execution = tool.get("execution")
    if isinstance(execution, dict) and execution.get("taskSupport") == "required":
        return False
    return True


def safe_tools(tools: list[Any]) -> tuple[list[CallPlan], str]:
    """The tools we call and their arguments, and a sentence saying how they were chosen.

    The official runner's content fixtures (and its error fixture) are called with ``{}``; other
    tools only when marked ``readOnlyHint: true`` (not destructive, not task-only), when they
    declare an ``outputSchema`` (there is something to check beyond the schema: structured
    content) and their required arguments can be built from the schema.  A read-only tool may
    still reveal things (server-everything's get-env returns its environment, which would end up
    in our report), so nothing else is called."""
    by_name = {t.get("name"): t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
    plans: list[CallPlan] = []
    fixtures = [n for n in (*CONTENT_FIXTURES, ERROR_FIXTURE) if n in by_name]
    for name in fixtures:
        plans.append(CallPlan(by_name[name], {}, True))
    generic: list[CallPlan] = []
    for tool in by_name.values():
        if tool.get("name") in fixtures or not _read_only(tool) or not isinstance(tool.get("outputSchema"), dict):
            continue
        args = synth_args(tool.get("inputSchema"))
        if args is None:
            continue
        generic.append(CallPlan(tool, args, False))
    generic = generic[:MAX_GENERIC_CALLS]
    parts = []
    if fixtures:
        parts.append(f"the official runner's fixture tools ({', '.join(fixtures)})")
    if generic:
        parts.append(f"read-only tools with an outputSchema whose arguments could be built ({', '.join(p.name for p in generic)})")
    plans.extend(generic)
    return plans, " and ".join(parts) or "none"


# ---------------------------------------------------------------------------------------------
# transcript helpers


def inbound_after(peer: RawPeer, mark: int, *, method: str | None = None) -> list[Any]:
    """Inbound transcript entries with a parsed envelope after transcript position ``mark``
    (``len(peer.transcript)`` taken before sending), optionally only notifications ``method``."""
    out = []
    for entry in peer.transcript.entries[mark:]:
        env = entry.envelope
        if entry.direction != Direction.IN or env is None:
            continue
        if method is not None and not (env.kind is Kind.NOTIFICATION and env.method == method):
            continue
        out.append(entry)
    return out


def since(peer: RawPeer, mark: int) -> Any:
    """A predicate for ``expect_*``: the message arrived after transcript position ``mark``."""

    def pred(env: Envelope) -> bool:
        entry = peer.entry_of(env)
        return entry is not None and entry.seq >= mark

    return pred


def stream_of(peer: RawPeer, env: Envelope) -> Any:
    entry = peer.entry_of(env)
    return entry.meta.get("stream") if entry is not None else None


# ---------------------------------------------------------------------------------------------
# verdict helpers


def declared(capabilities: Any, path: str) -> bool:
    """The capability at the dotted ``path`` is present (an object, ``true``), as
    ``ScenarioContext.require_capability`` reads it."""
    cur = capabilities
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    return cur is not None and cur is not False


def check_list_answered(ctx: Any, listing: Listing, requirements: Iterable[str]) -> bool:
    """Grade the answer to the first page of ``listing`` under ``requirements`` (the 2026-07-28
    MUST and the older revisions' SHOULD; only the one of the version is active).  True when the
    first page came back as a result with its items array."""
    method = listing.method
    first = listing.pages[0] if listing.pages else None
    ok = first is not None and not (listing.problem_kind == "not-a-list" and len(listing.pages) == 1)
    for rid in requirements:
        if ok:
            n = len(listing.items)
            ctx.check(rid, True, message=f"{method}: {n} item(s) on {len(listing.pages)} page(s)", entries=[first.env])
        elif listing.error is not None and listing.error_cursor is None:
            ctx.check(
                rid,
                False,
                problem="ListRejected",
                message=f"the server declares the capability, yet {method} was answered with {describe_error(listing.error)}",
                expected=f"a result with a `{listing.key}` array",
                actual=listing.error.error,
                entries=[listing.error],
            )
        elif first is not None:
            ctx.check(
                rid,
                False,
                problem="ListResultMalformed",
                message=f"{method}: {listing.problem}",
                expected=f"a result with a `{listing.key}` array",
                actual=first.env.result if first.env.kind is Kind.RESULT else first.env.value,
                entries=[first.env],
            )
        else:
            ctx.check(
                rid,
                False,
                problem="ListNotAnswered",
                message=f"{method}: {listing.problem}",
                expected=f"a result with a `{listing.key}` array",
                actual="no answer",
            )
    if ok and not listing.complete:
        ctx.note(f"{method}: the walk over its pages stopped early: {listing.problem or describe_error(listing.error)}")
    return ok


def check_unique(ctx: Any, requirements: Iterable[str], listing: Listing, field_name: str) -> None:
    """No identifier twice across all pages of ``listing``."""
    values = [v for v in listing.ids(field_name) if v is not None]
    dup = duplicates(values)
    for rid in requirements:
        ctx.check(
            rid,
            not dup,
            problem="DuplicateIdentifier",
            message=(
                f"{listing.method} lists {', '.join(repr(d) for d in dup[:5])} more than once "
                f"(across {len(listing.pages)} page(s)); `{field_name}` identifies an item"
                if dup
                else f"{len(values)} distinct `{field_name}` value(s) across {len(listing.pages)} page(s)"
            ),
            expected=f"every `{field_name}` once",
            actual=dup[:10],
            entries=listing.envelopes(),
        )


async def cheap_isolated(ctx: Any) -> RawPeer:
    """A connection for a scenario that changes session state and restores it: its own session on
    streamable HTTP (cheap there), the shared one elsewhere (a new stdio process costs ~0.5 s)."""
    from conformance.spec.versions import Transport

    return await ctx.connect(fresh=ctx.transport is Transport.STREAMABLE_HTTP)


async def open_notification_stream(ctx: Any, peer: RawPeer) -> str:
    """On streamable HTTP (a session-based version), open the GET stream the server may use for
    messages unrelated to a request (list_changed, resources/updated); a sentence saying what
    happened.  Other transports deliver everything on the one connection."""
    from conformance.spec.versions import Transport

    if ctx.transport is not Transport.STREAMABLE_HTTP or not ctx.vspec.get_stream:
        return ""
    opener = getattr(peer.transport, "open_get_stream", None)
    if opener is None:
        return ""
    try:
        exchange = await opener()
    except Exception as exc:  # noqa: BLE001 - the notification may still come on a POST stream
        return f"the GET stream could not be opened ({exc}); notifications may still arrive on a POST response stream"
    status = getattr(exchange, "status", None)
    if status != 200:
        return f"GET on the endpoint answered HTTP {status}; notifications may still arrive on a POST response stream"
    return "a GET stream was opened for notifications"


async def check_capability_declared(ctx: Any, capability: str, method: str, key: str, label: str, noun: str) -> None:
    """``<capability>.capability.declared``: a server that does not declare the capability must
    not list items for it (``label`` names each listed item, e.g. ``name`` or ``uri``)."""
    peer = await ctx.connect()
    req = f"{capability}.capability.declared"
    if declared(ctx.server_capabilities, capability):
        ctx.check(req, True, message=f"the server declares the {capability} capability")
        return
    env = await request(peer, method, timeout=ctx.timeout)
    items = env.result.get(key) if env is not None and env.kind is Kind.RESULT and isinstance(env.result, dict) else None
    listed = isinstance(items, list) and len(items) > 0
    ctx.check(
        req,
        not listed,
        problem="UndeclaredCapabilityUsed",
        message=(
            f"the server does not declare `{capability}`, yet {method} lists {len(items) if listed else 0} {noun}(s)"
            if listed
            else f"the server does not declare `{capability}` and lists none"
        ),
        expected=f"no {key} (an error such as -32601, or an empty list)",
        actual=[i.get(label) for i in items[:10] if isinstance(i, dict)] if listed else (env.summary() if env is not None else "no answer"),
        entries=[env] if env is not None else [],
    )
