"""server/tools: tools/list (names, schemas, order), tools/call (result shapes, structured
content, errors), list_changed.

Tools we call are chosen by :func:`._features.safe_tools`: the official runner's fixtures and
read-only tools with an output schema; a conformance run never calls a tool that may change
anything.  tools/call with invalid arguments goes to a read-only tool (it must not run).
"""

from __future__ import annotations

import json
import re
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import scenario
from conformance.spec.versions import LATEST_STATEFUL, VERSIONS, Transport
from conformance.wire.envelope import MISSING, Envelope, Kind, same_id

from . import _features as F

LIST_REQS = ("tools.list.respond", "tools.list.answered")
NAME_CHARS = re.compile(r"^[A-Za-z0-9_.-]*$")
SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"
JSON_SCHEMA_FIXTURE = "json_schema_2020_12_tool"
TRIGGER = "test_trigger_tool_change"
GENERIC_CALL_TIMEOUT = 5.0


@scenario(requirements=["tools.capability.declared"])
async def capability_declared(ctx: ScenarioContext) -> None:
    """A server that does not declare `tools` must not list tools."""
    await F.check_capability_declared(ctx, "tools", "tools/list", "tools", "name", "tool")


@scenario(
    requirements=[
        *LIST_REQS,
        "tools.name.identifier",
        "tools.name.unique",
        "tools.name.length",
        "tools.name.characters",
        "tools.input-schema.valid",
        "tools.output-schema.valid",
        "tools.list.deterministic-order",
        "tools.fixtures.content",
    ],
    capability="tools",
)
async def list_tools(ctx: ScenarioContext) -> None:
    """tools/list followed to its last page: names unique and well formed, input and output
    schemas valid for their dialect, the same order when listed again (2026-07-28), and the
    official runner's JSON Schema 2020-12 fixture preserved."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "tools/list", timeout=ctx.timeout)
    if not F.check_list_answered(ctx, listing, LIST_REQS):
        for rid in ctx.requirements:
            ctx.not_reached(rid, "tools/list gave no list of tools")
        return
    tools = [t for t in listing.items if isinstance(t, dict)]
    entries = listing.envelopes()
    F.check_unique(ctx, ("tools.name.identifier", "tools.name.unique"), listing, "name")
    names = [t.get("name") for t in tools if isinstance(t.get("name"), str)]

    too_long = [n for n in names if not 1 <= len(n) <= 128]
    ctx.check(
        "tools.name.length",
        not too_long,
        problem="ToolNameLength",
        message=(
            f"tool names outside 1..128 characters: {', '.join(repr(n[:40]) + f' ({len(n)})' for n in too_long[:5])}"
            if too_long
            else f"{len(names)} tool name(s) of 1..128 characters"
        ),
        expected="1..128 characters",
        actual=too_long[:10],
        entries=entries,
    )
    odd = [n for n in names if not NAME_CHARS.match(n)]
    ctx.check(
        "tools.name.characters",
        not odd,
        problem="ToolNameCharacters",
        message=(
            f"tool names with characters other than A-Z, a-z, 0-9, '_', '-', '.': {', '.join(repr(n[:60]) for n in odd[:5])}"
            if odd
            else f"{len(names)} tool name(s) use only A-Z, a-z, 0-9, '_', '-', '.'"
        ),
        expected="[A-Za-z0-9_.-]+",
        actual=odd[:10],
        entries=entries,
    )
    _check_schemas(ctx, tools, "inputSchema", "tools.input-schema.valid", entries, required=True)
    _check_schemas(ctx, tools, "outputSchema", "tools.output-schema.valid", entries, required=False)
    if ctx.applies("tools.list.deterministic-order"):
        await _check_order(ctx, peer, listing)
    if ctx.applies("tools.fixtures.content"):
        _check_json_schema_fixture(ctx, tools, entries)


def _check_schemas(ctx: ScenarioContext, tools: list[dict], key: str, req: str, entries: list, *, required: bool) -> None:
    bad: list[str] = []
    unknown: list[str] = []
    checked = 0
    for tool in tools:
        schema = tool.get(key, MISSING)
        if schema is MISSING and not required:
            continue
        checked += 1
        name = tool.get("name")
        if not isinstance(schema, dict):
            bad.append(f"{name}: {key} is {json.dumps(schema)[:60] if schema is not MISSING else 'missing'}, not a JSON Schema object")
            continue
        errors, dialect = F.schema_errors(schema)
        if errors is None:
            unknown.append(f"{name} ({dialect})")
        elif errors:
            bad.append(f"{name}: {errors[0]} (dialect {dialect})")
    if unknown:
        ctx.note(f"{key} not judged for {', '.join(unknown[:5])}: a dialect we do not know", requirement=req)
    if checked == 0:
        ctx.not_reached(req, f"no tool has an {key}")
        return
    ctx.check(
        req,
        not bad,
        problem="InvalidJsonSchema",
        message=(
            f"{len(bad)} tool(s) with an invalid {key}: " + "; ".join(bad[:3])
            if bad
            else f"{checked - len(unknown)} {key}(s) valid against their dialect's meta-schema"
        ),
        expected="a JSON Schema object valid for its declared (or the default 2020-12) dialect",
        actual=bad[:10],
        entries=entries,
    )


async def _check_order(ctx: ScenarioContext, peer, listing: F.Listing) -> None:
    req = "tools.list.deterministic-order"
    again = await F.list_all(peer, "tools/list", timeout=ctx.timeout)
    if not again.complete or not listing.complete:
        ctx.not_reached(req, "tools/list could not be followed to its end twice")
        return
    first = [t.get("name") if isinstance(t, dict) else None for t in listing.items]
    second = [t.get("name") if isinstance(t, dict) else None for t in again.items]
    if sorted(map(str, first)) != sorted(map(str, second)):
        ctx.not_reached(req, "the set of tools changed between two listings (the SHOULD applies to an unchanged set)")
        return
    where = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), None)
    ctx.check(
        req,
        where is None,
        problem="ToolOrderChanged",
        message=(
            f"the same {len(first)} tools came back in another order: position {where} is {first[where]!r} then {second[where]!r}"
            if where is not None
            else f"{len(first)} tool(s) in the same order in two listings"
        ),
        expected=first[:20],
        actual=second[:20],
        entries=[*listing.envelopes(), *again.envelopes()],
    )


def _check_json_schema_fixture(ctx: ScenarioContext, tools: list[dict], entries: list) -> None:
    """The runner's json-schema-2020-12 scenario (2025-11-25 and later): keywords preserved."""
    tool = next((t for t in tools if t.get("name") == JSON_SCHEMA_FIXTURE), None)
    if tool is None or VERSIONS.index(ctx.version) < VERSIONS.index("2025-11-25"):
        ctx.not_reached("tools.fixtures.content", f"the server does not list the runner's fixture {JSON_SCHEMA_FIXTURE!r}")
        return
    schema = tool.get("inputSchema")
    problems: list[str] = []
    if not isinstance(schema, dict):
        problems.append("inputSchema is not an object")
        schema = {}
    if schema.get("$schema") != SCHEMA_2020_12:
        problems.append(f"$schema is {schema.get('$schema', '<absent>')!r}, expected {SCHEMA_2020_12!r}")
    defs = schema.get("$defs")
    if not (isinstance(defs, dict) and "address" in defs):
        problems.append("$defs with the 'address' definition is missing")
    if schema.get("additionalProperties") is not False:
        problems.append(f"additionalProperties is {schema.get('additionalProperties', '<absent>')!r}, expected false")
    if ctx.vspec.stateless:  # SEP-2106 keywords, required by the runner from 2026-07-28
        all_of = schema.get("allOf")
        if not (isinstance(all_of, list) and any(isinstance(x, dict) and isinstance(x.get("anyOf"), list) for x in all_of)):
            problems.append("allOf with a nested anyOf is missing")
        if not all(k in schema for k in ("if", "then", "else")):
            problems.append("if/then/else is missing")
        address = defs.get("address") if isinstance(defs, dict) else None
        if not (isinstance(address, dict) and "$anchor" in address):
            problems.append("$defs.address.$anchor is missing")
    ctx.check(
        "tools.fixtures.content",
        not problems,
        problem="FixtureSchemaStripped",
        message=(
            f"{JSON_SCHEMA_FIXTURE}: " + "; ".join(problems)
            if problems
            else f"{JSON_SCHEMA_FIXTURE}: its JSON Schema 2020-12 keywords are preserved in tools/list"
        ),
        expected="$schema 2020-12, $defs.address, additionalProperties false" + (", allOf/anyOf, if/then/else, $anchor" if ctx.vspec.stateless else ""),
        actual=schema,
        entries=entries,
    )


# ---------------------------------------------------------------------------------------------
# tools/call


CALL_REQS = (
    "tools.output-schema.conform",
    "tools.structured-content.text-block",
    "tools.result.embedded-resource-capability",
    "tools.fixtures.content",
    "tools.call.execution-error",
    "tools.call.execution-error-result",
    "resources.contents.binary-encoded",
)


@scenario(requirements=list(CALL_REQS), capability="tools")
async def call_results(ctx: ScenarioContext) -> None:
    """Call the tools that are safe to call (the runner's fixtures, read-only tools with an output
    schema whose arguments can be built): structured content conforms to the output schema and is mirrored
    in a text block, embedded resources are backed by the capability and properly encoded, the
    fixtures return the content their runner scenario describes, and the error fixture reports
    `isError: true`."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "tools/list", timeout=ctx.timeout)
    tools = [t for t in listing.items if isinstance(t, dict)]
    plans, how = F.safe_tools(tools)
    if not plans:
        ctx.skip(
            "no tool is safe to call: none is an official runner fixture, and none is marked readOnlyHint with an "
            "outputSchema and arguments we can build from its inputSchema (a conformance run never calls a tool that "
            "may change anything)"
        )
    ctx.note(f"tools called: {how}")
    for rid, why in (
        ("tools.output-schema.conform", "no tool we called has an outputSchema"),
        ("tools.structured-content.text-block", "no tool we called returned structuredContent"),
        ("tools.result.embedded-resource-capability", "no tool we called returned an embedded resource"),
        ("resources.contents.binary-encoded", "no tool we called returned an embedded resource with a blob"),
        ("tools.fixtures.content", "the server lists none of the official runner's content fixtures"),
        ("tools.call.execution-error", f"the server does not list the runner's error fixture {F.ERROR_FIXTURE!r}"),
        ("tools.call.execution-error-result", f"the server does not list the runner's error fixture {F.ERROR_FIXTURE!r}"),
    ):
        ctx.not_reached(rid, why)
    resources_declared = F.declared(ctx.server_capabilities, "resources")
    structured = ctx.vspec.structured_output
    for plan in plans:
        timeout = ctx.timeout if plan.fixture else min(ctx.timeout, GENERIC_CALL_TIMEOUT)
        rid = await peer.request("tools/call", {"name": plan.name, "arguments": plan.args})
        try:
            env = await peer.expect_response(rid, timeout=timeout)
        except PeerError as exc:
            if plan.fixture:
                raise
            await _cancel(peer, rid)
            ctx.note(f"tools/call {plan.name}: no answer within {timeout:g} s ({exc}); cancelled and not judged")
            continue
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            _on_call_error(ctx, plan, env)
            continue
        result = env.result
        if result.get("resultType", "complete") != "complete":
            ctx.note(f"tools/call {plan.name}: resultType {result.get('resultType')!r} (needs client input); not judged")
            continue
        content = result.get("content")
        if structured:
            _check_structured(ctx, plan, env)
        embedded = [c for c in content if isinstance(c, dict) and c.get("type") == "resource"] if isinstance(content, list) else []
        if embedded:
            ctx.check(
                "tools.result.embedded-resource-capability",
                resources_declared,
                problem="EmbeddedResourceWithoutCapability",
                message=(
                    f"tool {plan.name} returned an embedded resource and the server declares `resources`"
                    if resources_declared
                    else f"tool {plan.name} returned an embedded resource, yet the server does not declare the `resources` capability"
                ),
                expected="capabilities.resources declared",
                actual=ctx.server_capabilities,
                entries=[env],
            )
            for item in embedded:
                res = item.get("resource")
                if isinstance(res, dict) and "blob" in res:
                    ok = F.is_base64(res.get("blob"))
                    ctx.check(
                        "resources.contents.binary-encoded",
                        ok,
                        problem="BlobNotBase64",
                        message=(
                            f"tool {plan.name}: the embedded resource {res.get('uri')!r} has a blob that is not valid base64"
                            if not ok
                            else f"tool {plan.name}: the embedded resource {res.get('uri')!r} has a valid base64 blob"
                        ),
                        expected="base64 (RFC 4648, padded)",
                        actual=str(res.get("blob"))[:80],
                        entries=[env],
                    )
        if plan.name == F.ERROR_FIXTURE:
            _check_error_fixture(ctx, env)
        elif plan.fixture:
            problems = _fixture_problems(plan.name, result)
            ctx.check(
                "tools.fixtures.content",
                not problems,
                problem="FixtureContentMismatch",
                message=f"{plan.name}: " + ("; ".join(problems) if problems else "returns the content its runner scenario describes"),
                expected=_FIXTURE_EXPECTED.get(plan.name),
                actual=content,
                entries=[env],
            )


async def _cancel(peer, rid: Any) -> None:
    try:
        await peer.notify("notifications/cancelled", {"requestId": rid, "reason": "mcp-conformance: no answer in time"})
    except PeerError:
        pass


def _on_call_error(ctx: ScenarioContext, plan: F.CallPlan, env: Envelope) -> None:
    what = F.describe_error(env) if env.kind is Kind.ERROR else f"a {env.kind.value}"
    if plan.name == F.ERROR_FIXTURE:
        _check_error_fixture(ctx, env)
    elif plan.fixture:
        ctx.check(
            "tools.fixtures.content",
            False,
            problem="FixtureCallFailed",
            message=f"{plan.name} (an official runner fixture, called with {{}}) was answered with {what}",
            expected=_FIXTURE_EXPECTED.get(plan.name),
            actual=env.error if env.kind is Kind.ERROR else env.value,
            entries=[env],
        )
    else:
        ctx.note(f"tools/call {plan.name} with {json.dumps(plan.args)[:120]} was answered with {what}; not judged")


def _check_structured(ctx: ScenarioContext, plan: F.CallPlan, env: Envelope) -> None:
    result = env.result
    schema = plan.tool.get("outputSchema")
    sc = result.get("structuredContent", MISSING)
    is_error = result.get("isError") is True
    if isinstance(schema, dict) and not is_error:
        if sc is MISSING:
            ctx.check(
                "tools.output-schema.conform",
                False,
                problem="StructuredContentMissing",
                message=f"tool {plan.name} declares an outputSchema, yet its successful result has no structuredContent",
                expected="structuredContent conforming to the outputSchema",
                actual=sorted(result),
                json_path="$.result",
                entries=[env],
            )
        else:
            errors, why = F.instance_errors(schema, sc)
            if errors is None:
                ctx.note(f"tool {plan.name}: structuredContent not judged against its outputSchema: {why}", requirement="tools.output-schema.conform")
            else:
                ctx.check(
                    "tools.output-schema.conform",
                    not errors,
                    problem="StructuredContentMismatch",
                    message=(
                        f"tool {plan.name}: structuredContent does not conform to its outputSchema: " + "; ".join(errors[:3])
                        if errors
                        else f"tool {plan.name}: structuredContent conforms to its outputSchema"
                    ),
                    expected=schema,
                    actual=sc,
                    json_path="$.result.structuredContent",
                    entries=[env],
                )
    if sc is not MISSING:
        mirrored = False
        for text in F.text_blocks(result.get("content")):
            try:
                if json.loads(text) == sc:
                    mirrored = True
                    break
            except ValueError:
                continue
        ctx.check(
            "tools.structured-content.text-block",
            mirrored,
            problem="StructuredContentNotSerialized",
            message=(
                f"tool {plan.name} returns structuredContent and the same JSON in a text block"
                if mirrored
                else f"tool {plan.name} returns structuredContent but no text block holds its serialized JSON"
            ),
            expected=json.dumps(sc)[:200],
            actual=F.text_blocks(result.get("content"))[:3],
            json_path="$.result.content",
            entries=[env],
        )


def _check_error_fixture(ctx: ScenarioContext, env: Envelope) -> None:
    result = env.result if env.kind is Kind.RESULT and isinstance(env.result, dict) else None
    content = result.get("content") if result else None
    texts = F.text_blocks(content)
    ok = result is not None and result.get("isError") is True and any(t for t in texts)
    for req in ("tools.call.execution-error", "tools.call.execution-error-result"):
        ctx.check(
            req,
            ok,
            problem="ExecutionErrorNotReported",
            message=(
                f"{F.ERROR_FIXTURE} reports its failure with isError: true and a message"
                if ok
                else (
                    f"{F.ERROR_FIXTURE} (a tool that always fails) was answered with {F.describe_error(env)}, not a result with isError: true"
                    if env.kind is Kind.ERROR
                    else f"{F.ERROR_FIXTURE} (a tool that always fails) returned isError={result.get('isError', '<absent>') if result else '?'!r} "
                    f"and {len(texts)} text block(s)"
                )
            ),
            expected={"isError": True, "content": [{"type": "text", "text": "<the error message>"}]},
            actual=result if result is not None else env.error,
            entries=[env],
        )


_FIXTURE_EXPECTED: dict[str, Any] = {
    "test_simple_text": {"content": [{"type": "text", "text": "<non-empty>"}]},
    "test_image_content": {"content": [{"type": "image", "data": "<base64>", "mimeType": "image/png"}]},
    "test_audio_content": {"content": [{"type": "audio", "data": "<base64>", "mimeType": "audio/wav"}]},
    "test_embedded_resource": {"content": [{"type": "resource", "resource": {"uri": "<uri>", "mimeType": "<type>", "text": "<text>"}}]},
    "test_multiple_content_types": {"content": [{"type": "text"}, {"type": "image"}, {"type": "resource"}]},
}


def _fixture_problems(name: str, result: dict) -> list[str]:
    """What the official runner's scenario for fixture ``name`` would reject (plus base64 data)."""
    content = result.get("content")
    if not isinstance(content, list) or not content:
        return ["content is missing or empty"]
    items = [c for c in content if isinstance(c, dict)]

    def first(kind: str) -> dict | None:
        return next((c for c in items if c.get("type") == kind), None)

    problems: list[str] = []
    if name == "test_simple_text":
        item = first("text")
        if item is None or not item.get("text"):
            problems.append("no text content with a non-empty text")
    elif name in ("test_image_content", "test_audio_content"):
        kind = "image" if name == "test_image_content" else "audio"
        item = first(kind)
        if item is None:
            problems.append(f"no {kind} content")
        else:
            if not F.is_base64(item.get("data")) or not item.get("data"):
                problems.append(f"the {kind} data is not non-empty base64")
            mime = item.get("mimeType")
            if kind == "audio" and mime != "audio/wav":
                problems.append(f"mimeType is {mime!r}, the runner expects 'audio/wav'")
            if kind == "image" and not (isinstance(mime, str) and mime.startswith("image/")):
                problems.append(f"mimeType is {mime!r}, not an image type")
    elif name == "test_embedded_resource":
        item = first("resource")
        res = item.get("resource") if item else None
        if not isinstance(res, dict):
            problems.append("no resource content")
        else:
            if not res.get("uri"):
                problems.append("the resource has no uri")
            if not res.get("mimeType"):
                problems.append("the resource has no mimeType")
            if not res.get("text") and not res.get("blob"):
                problems.append("the resource has neither text nor blob")
    elif name == "test_multiple_content_types":
        kinds = {c.get("type") for c in items}
        if len(items) < 2:
            problems.append("fewer than two content items")
        for kind in ("text", "image", "resource"):
            if kind not in kinds:
                problems.append(f"no {kind} content")
    return problems


# ---------------------------------------------------------------------------------------------
# errors


@scenario(requirements=["tools.call.unknown-tool"], capability="tools")
async def unknown_tool(ctx: ScenarioContext) -> None:
    """tools/call for a tool the server does not list: a JSON-RPC error (the page's example:
    -32602 'Unknown tool')."""
    peer = await ctx.connect()
    name = f"mcp_conformance_no_such_tool_{F.unique_token()}"
    rid = await peer.request("tools/call", {"name": name, "arguments": {}})
    env = await peer.expect_response(rid)
    req = "tools.call.unknown-tool"
    if env.kind is Kind.ERROR:
        ctx.check(req, True, message=f"tools/call for the unknown tool {name!r} was answered with {F.describe_error(env)}", entries=[env])
        return
    result = env.result if isinstance(env.result, dict) else {}
    ctx.check(
        req,
        False,
        problem="UnknownToolNotProtocolError",
        message=(
            f"tools/call for the unknown tool {name!r} was answered with a result"
            + (" with isError: true" if result.get("isError") is True else "")
            + "; the page lists unknown tools as protocol errors (JSON-RPC error, e.g. -32602)"
        ),
        expected={"error": {"code": -32602, "message": f"Unknown tool: {name}"}},
        actual=env.result,
        entries=[env],
    )


@scenario(requirements=["tools.name.case-sensitive"], capability="tools")
async def case_sensitive_names(ctx: ScenarioContext) -> None:
    """tools/call of a safe tool under its name with the case of its letters swapped (a name the
    server does not list): an error or an isError result, never the tool's successful result."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "tools/list", timeout=ctx.timeout)
    tools = [t for t in listing.items if isinstance(t, dict)]
    listed = {t.get("name") for t in tools}
    plans, _ = F.safe_tools(tools)
    plan = next((p for p in plans if p.name != F.ERROR_FIXTURE and p.name.swapcase() != p.name
                 and p.name.swapcase() not in listed), None)
    if plan is None:
        ctx.skip("no tool that is safe to call has a name with letters whose case can be swapped "
                 "(a conformance run never calls a tool that may change anything)")
    name = plan.name.swapcase()
    rid = await peer.request("tools/call", {"name": name, "arguments": plan.args})
    env = await peer.expect_response(rid)
    req = "tools.name.case-sensitive"
    what = f"tools/call {name!r} (the listed tool {plan.name!r} with the case of its letters swapped)"
    if env.kind is Kind.ERROR:
        ctx.check(req, True, message=f"{what} was answered with {F.describe_error(env)}: no such tool", entries=[env])
        return
    result = env.result if isinstance(env.result, dict) else {}
    if result.get("resultType", "complete") != "complete":
        ctx.not_reached(req, f"{what} was answered with resultType {result.get('resultType')!r}")
        return
    is_error = result.get("isError") is True
    ctx.check(
        req,
        is_error,
        problem="ToolNameCaseIgnored",
        message=(
            f"{what} was answered with an isError result"
            if is_error
            else f"{what} ran the tool: the server matched the name without regard to case"
        ),
        expected="a JSON-RPC error or an isError result (an unknown tool)",
        actual=env.result,
        entries=[env],
    )


@scenario(requirements=["tools.call.invalid-arguments"], capability="tools")
async def invalid_arguments(ctx: ScenarioContext) -> None:
    """tools/call with a required argument left out: a protocol error or an isError result,
    never a successful result (the tool is a fixture or read-only)."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "tools/list", timeout=ctx.timeout)
    tools = [t for t in listing.items if isinstance(t, dict)]
    plans, _ = F.safe_tools(tools)
    safe = {p.name for p in plans} | {
        t.get("name") for t in tools if isinstance(t.get("annotations"), dict) and t["annotations"].get("readOnlyHint") is True
    }
    target = None
    for tool in tools:
        schema = tool.get("inputSchema")
        required = schema.get("required") if isinstance(schema, dict) else None
        if tool.get("name") in safe and isinstance(required, list) and required and isinstance(required[0], str):
            target = (tool, required[0])
            break
    if target is None:
        ctx.skip("no read-only tool with a required argument to leave out (a conformance run never calls a tool that may change anything)")
    tool, missing = target
    args = F.synth_args(tool["inputSchema"]) or {}
    args.pop(missing, None)
    rid = await peer.request("tools/call", {"name": tool["name"], "arguments": args})
    env = await peer.expect_response(rid)
    req = "tools.call.invalid-arguments"
    what = f"tools/call {tool['name']} without its required argument {missing!r}"
    if env.kind is Kind.ERROR:
        ctx.check(req, True, message=f"{what} was answered with {F.describe_error(env)} (a protocol error)", entries=[env])
        return
    result = env.result if isinstance(env.result, dict) else {}
    if result.get("resultType", "complete") != "complete":
        ctx.not_reached(req, f"{what} was answered with resultType {result.get('resultType')!r}")
        return
    is_error = result.get("isError") is True
    ctx.check(
        req,
        is_error,
        problem="InvalidArgumentsAccepted",
        message=(
            f"{what} was answered with a tool execution error (isError: true)"
            if is_error
            else f"{what} succeeded: the arguments violate its inputSchema, so they were not validated"
        ),
        expected="a JSON-RPC error, or a result with isError: true",
        actual=env.result,
        entries=[env],
    )


# ---------------------------------------------------------------------------------------------
# list_changed


@scenario(
    requirements=["tools.list-changed.notification"],
    capability="tools.listChanged",
)
async def list_changed(ctx: ScenarioContext) -> None:
    """With the runner's hook `test_trigger_tool_change`: changing the tool list brings
    notifications/tools/list_changed (the hook is called again to restore the list)."""
    await list_changed_check(ctx, "tools.list-changed.notification", TRIGGER, "notifications/tools/list_changed", "tool")


async def list_changed_check(ctx: ScenarioContext, req: str, trigger: str, method: str, what: str) -> None:
    """Shared by tools, prompts and resources: call ``trigger`` (a fixture tool that changes the
    list and notifies), expect ``method``; call it again to restore the list."""
    peer = await F.cheap_isolated(ctx)
    listing = await F.list_all(peer, "tools/list", timeout=ctx.timeout) if F.declared(ctx.server_capabilities, "tools") else None
    names = {t.get("name") for t in listing.items if isinstance(t, dict)} if listing else set()
    if trigger not in names:
        ctx.skip(f"the server offers no way to change its {what} list (the official runner's hook {trigger!r} is not listed)")
    listen = None
    if ctx.vspec.stateless:
        # 2026-07-28: list_changed is delivered to clients that opened a subscriptions/listen stream
        # asking for it (cancelled at the end: notifications/cancelled on stdio, the stream closed
        # over HTTP, where the connection is this scenario's own)
        listen = await _open_listen(ctx, peer, LISTEN_FLAGS[method])
        if listen is None:
            ctx.not_reached(req, f"subscriptions/listen with {LISTEN_FLAGS[method]}: true was not acknowledged "
                                 "(subscriptions.listen.supported judges that)")
            return
    else:
        how = await F.open_notification_stream(ctx, peer)
        if how:
            ctx.note(how)
    # the change every session of the server sees: alone where other items share the server
    async with ctx.alone():
        mark = len(peer.transcript)
        try:
            rid = await peer.request("tools/call", {"name": trigger, "arguments": {}})
            answer = await peer.expect_response(rid)
            if answer.kind is not Kind.RESULT:
                ctx.not_reached(req, f"{trigger} was answered with {F.describe_error(answer) if answer.kind is Kind.ERROR else answer.kind.value}")
                return
            try:
                note = await peer.expect_notification(method, predicate=F.since(peer, mark))
            except PeerError as exc:
                ctx.check(
                    req,
                    False,
                    problem="ListChangedNotSent",
                    message=f"{trigger} changed the {what} list, but no {method} arrived ({exc})",
                    expected=f"a {method} notification",
                    actual=[e.envelope.summary() for e in F.inbound_after(peer, mark)][:10],
                    entries=[answer],
                )
                return
            ctx.check(req, True, message=f"{trigger} changed the {what} list and {method} arrived", entries=[note])
        finally:
            try:
                rid = await peer.request("tools/call", {"name": trigger, "arguments": {}})
                await peer.expect_response(rid)
            except PeerError:
                pass
            if listen is not None:
                await _close_listen(ctx, peer, listen)


LISTEN_FLAGS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


async def _open_listen(ctx: ScenarioContext, peer: Any, flag: str) -> tuple[str, Any] | None:
    """subscriptions/listen asking for ``flag`` only; (its id, its HTTP response stream) once
    acknowledged, None when the server refused it or sent no acknowledgment in time."""
    rid = f"mcp-conformance-listen-{F.unique_token()}"
    mark = len(peer.transcript)
    await peer.request("subscriptions/listen", {"notifications": {flag: True}}, id=rid)
    stream = getattr(peer.last_exchange, "stream", None) if ctx.transport is Transport.STREAMABLE_HTTP else None
    after = F.since(peer, mark)
    try:
        first = await peer.expect_message(
            lambda e: after(e) and ((e.kind is Kind.NOTIFICATION and e.method == "notifications/subscriptions/acknowledged")
                                    or (e.kind in (Kind.RESULT, Kind.ERROR) and same_id(e.id, rid))),
            what=f"the acknowledgment of subscription {rid!r}", timeout=ctx.timeout)
    except PeerError:
        return None
    return (rid, stream) if first.kind is Kind.NOTIFICATION else None


async def _close_listen(ctx: ScenarioContext, peer: Any, listen: tuple[str, Any]) -> None:
    rid, stream = listen
    try:
        if ctx.transport is Transport.STREAMABLE_HTTP:
            closer = getattr(peer.transport, "close_stream", None)
            if closer is not None and stream is not None:
                await closer(stream)
        else:
            await peer.notify("notifications/cancelled", {"requestId": rid, "reason": "mcp-conformance: done listening"})
    except PeerError:
        pass
