"""basic/transports/streamable-http (2026-07-28), Request Metadata: the server validates
MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* against the body (400, -32020) and
answers an unknown method with 404 and -32601."""

from __future__ import annotations

import base64
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.spec.versions import Transport
from conformance.wire.headers import mirrored_params, x_mcp_header_problems

from ._stateless import PROTOCOL_VERSION_KEY, Answer, ask, describe, list_tools, verdict

V = "2026-07-28"
HTTP = [Transport.STREAMABLE_HTTP]
LEGACY = "the request metadata headers are new in 2026-07-28"
PROBE_VERSION = "1900-01-01"
UNKNOWN_METHOD = "mcp-conformance/no-such-method"
SAFE_TOOL_FIXTURES = ("test_simple_text", "test_custom_header")


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def _rejected(ans: Answer) -> bool:
    """Refused: an error response, or an HTTP 4xx."""
    return ans.is_error or (ans.status is not None and 400 <= ans.status < 500)


def _actual(ans: Answer) -> Any:
    if ans.env is None:
        return {"http_status": ans.status, "body": "none"}
    return {"http_status": ans.status, "body": ans.env.value}


def _check_status_and_code(ctx: ScenarioContext, ans: Answer, what: str) -> None:
    verdict(
        ctx,
        "headers.validation.status-and-code",
        ans.status == 400 and ans.code == errors.HEADER_MISMATCH,
        problem="WrongHttpStatus" if ans.status != 400 else "WrongErrorCode",
        passed=f"{what}: HTTP 400 with HeaderMismatch (-32020)",
        failed=f"{what} was rejected with {describe(ans)}; a header validation failure is answered with HTTP 400 and HeaderMismatch (-32020)",
        expected={"http_status": 400, "error": {"code": errors.HEADER_MISMATCH}},
        actual=_actual(ans),
        entries=ans.entries(),
    )


async def _must_reject(ctx: ScenarioContext, requirement: str, ans: Answer, what: str) -> None:
    if _rejected(ans):
        ctx.check(requirement, True, message=f"{what}: rejected ({describe(ans)})", entries=ans.entries())
        _check_status_and_code(ctx, ans, what)
    else:
        ctx.check(
            requirement,
            False,
            problem="HeaderMismatchAccepted" if ans.env is not None else "NoResponse",
            message=f"{what} was answered with {describe(ans)}; the server must reject it",
            expected={"http_status": 400, "error": {"code": errors.HEADER_MISMATCH}},
            actual=_actual(ans),
            entries=ans.entries(),
        )


# -- MCP-Protocol-Version --------------------------------------------------------------------------


@scenario(requirements=["headers.protocol-version.mismatch"], since=V, transports=HTTP, skip_reason=LEGACY)
async def protocol_version_mismatch(ctx: ScenarioContext) -> None:
    """MCP-Protocol-Version and _meta naming different versions: 400 with HeaderMismatch (or
    UnsupportedProtocolVersion, since one of them is a version the server lacks)."""
    peer = await ctx.connect()
    probes = [
        (f"server/discover with MCP-Protocol-Version {ctx.version} and _meta protocolVersion {PROBE_VERSION}",
         {PROTOCOL_VERSION_KEY: PROBE_VERSION}, {"MCP-Protocol-Version": ctx.version}),
        (f"server/discover with MCP-Protocol-Version {PROBE_VERSION} and _meta protocolVersion {ctx.version}",
         {PROTOCOL_VERSION_KEY: ctx.version}, {"MCP-Protocol-Version": PROBE_VERSION}),
    ]
    for what, meta, headers in probes:
        ans = await ask(peer, "server/discover", meta=meta, headers=headers)
        ok = ans.status == 400 and ans.code in (errors.HEADER_MISMATCH, errors.UNSUPPORTED_PROTOCOL_VERSION)
        verdict(
            ctx,
            "headers.protocol-version.mismatch",
            ok,
            problem="HeaderMismatchAccepted" if ans.is_result else ("WrongHttpStatus" if ans.status != 400 else "WrongErrorCode"),
            passed=f"{what}: {describe(ans)}",
            failed=f"{what} was answered with {describe(ans)}; expected HTTP 400 with HeaderMismatch (-32020)",
            expected={"http_status": 400, "error": {"code": errors.HEADER_MISMATCH}},
            actual=_actual(ans),
            entries=ans.entries(),
        )
        if ok and ans.code == errors.UNSUPPORTED_PROTOCOL_VERSION:
            ctx.note(f"{what}: UnsupportedProtocolVersion (-32022) accepted in place of HeaderMismatch", requirement="headers.protocol-version.mismatch")


@scenario(requirements=["headers.unknown-method-404"], since=V, transports=HTTP, skip_reason=LEGACY)
async def unknown_method_404(ctx: ScenarioContext) -> None:
    """A method no revision defines, with the 2026-07-28 _meta and headers: 404 with -32601."""
    peer = await ctx.connect()
    ans = await ask(peer, UNKNOWN_METHOD, {})
    verdict(
        ctx,
        "headers.unknown-method-404",
        ans.status == 404 and ans.code == errors.METHOD_NOT_FOUND,
        problem="WrongHttpStatus" if ans.code == errors.METHOD_NOT_FOUND else "WrongErrorCode",
        passed=f"{UNKNOWN_METHOD}: {describe(ans)}",
        failed=f"{UNKNOWN_METHOD} was answered with {describe(ans)}; an unimplemented method is answered with HTTP 404 and -32601",
        expected={"http_status": 404, "error": {"code": errors.METHOD_NOT_FOUND}},
        actual=_actual(ans),
        entries=ans.entries(),
    )


# -- Mcp-Method / Mcp-Name -------------------------------------------------------------------------

CASE = "headers.name-case-insensitive"


def _case_verdict(ctx: ScenarioContext, ans: Answer, what: str) -> None:
    """A request whose metadata header names are spelled in another case: anything but a header
    validation refusal (the same request with the page's spelling is not refused)."""
    verdict(
        ctx,
        CASE,
        _not_mismatch(ans),
        problem="HeaderNameCaseSensitive",
        passed=f"{what}: {describe(ans)}",
        failed=f"{what} was rejected with {describe(ans)}; header names are case-insensitive, so these are the same headers",
        expected="served as with the page's spelling",
        actual=_actual(ans),
        entries=ans.entries(),
    )


async def _name_target(ctx: ScenarioContext, peer: Any) -> tuple[str, dict[str, Any], str, bool] | None:
    """(method, params, name, safe to execute) for a request that carries Mcp-Name: a listed
    resource, else a prompt without required arguments, else a tool the server lists."""
    caps = ctx.server_capabilities
    if isinstance(caps.get("resources"), dict):
        ans = await ask(peer, "resources/list")
        items = ans.result.get("resources") if isinstance(ans.result, dict) else None
        for r in items or []:
            if isinstance(r, dict) and isinstance(r.get("uri"), str):
                return "resources/read", {"uri": r["uri"]}, r["uri"], True
    if isinstance(caps.get("prompts"), dict):
        ans = await ask(peer, "prompts/list")
        items = ans.result.get("prompts") if isinstance(ans.result, dict) else None
        for p in items or []:
            if isinstance(p, dict) and isinstance(p.get("name"), str):
                args = p.get("arguments") if isinstance(p.get("arguments"), list) else []
                if not any(isinstance(a, dict) and a.get("required") for a in args):
                    return "prompts/get", {"name": p["name"], "arguments": {}}, p["name"], True
    if isinstance(caps.get("tools"), dict):
        tools, _ = await list_tools(peer)
        for t in tools:
            ann = t.get("annotations") if isinstance(t.get("annotations"), dict) else {}
            safe = t["name"] in SAFE_TOOL_FIXTURES or ann.get("readOnlyHint") is True
            if safe:
                return "tools/call", {"name": t["name"], "arguments": {}}, t["name"], True
        if tools:
            return "tools/call", {"name": tools[0]["name"], "arguments": {}}, tools[0]["name"], False
    return None


@scenario(
    requirements=[
        "headers.validation.mismatch-rejected",
        "headers.validation.missing-rejected",
        "headers.protocol-version.missing-rejected",
        "headers.validation.status-and-code",
        "headers.name.base64-decoded",
        "headers.name-case-insensitive",
    ],
    since=V,
    transports=HTTP,
    skip_reason=LEGACY,
)
async def standard_headers(ctx: ScenarioContext) -> None:
    """Mcp-Method naming another method (also only in case), Mcp-Name naming another item, each
    of MCP-Protocol-Version / Mcp-Method / Mcp-Name missing: rejected with 400 and -32020; an
    Mcp-Name in Base64 sentinel form: decoded and accepted."""
    peer = await ctx.connect()
    mismatch, missing = "headers.validation.mismatch-rejected", "headers.validation.missing-rejected"
    ans = await ask(peer, "server/discover", headers={"Mcp-Method": "tools/list"})
    await _must_reject(ctx, mismatch, ans, "server/discover with Mcp-Method: tools/list")
    ans = await ask(peer, "server/discover", headers={"Mcp-Method": "SERVER/DISCOVER"})
    await _must_reject(ctx, mismatch, ans, "server/discover with Mcp-Method: SERVER/DISCOVER (header values are case-sensitive)")
    ans = await ask(peer, "server/discover", headers={"Mcp-Method": None})
    await _must_reject(ctx, missing, ans, "server/discover without Mcp-Method")
    for spell in (str.lower, str.upper):
        names = {spell("MCP-Protocol-Version"): ctx.version, spell("Mcp-Method"): "server/discover"}
        ans = await ask(peer, "server/discover", headers=names)
        _case_verdict(ctx, ans, f"server/discover with the header names {', '.join(names)}")

    ans = await ask(peer, "server/discover", headers={"MCP-Protocol-Version": None})
    what = "server/discover without MCP-Protocol-Version"
    result = ans.result
    pv_missing = "headers.protocol-version.missing-rejected"
    if ans.status == 400 and ans.code == errors.HEADER_MISMATCH:
        ctx.check(pv_missing, True, message=f"{what}: rejected ({describe(ans)})", entries=ans.entries())
    elif _rejected(ans) or (isinstance(result, dict) and "resultType" not in result):
        ctx.check(pv_missing, True, message=(
            f"{what}: answered with {describe(ans)}, accepted: a server that supports clients older than 2025-06-18 "
            "MAY treat a request without the header as protocol version 2025-03-26"), entries=ans.entries())
    else:
        ctx.check(pv_missing, False, problem="MissingHeaderAccepted",
                  message=f"{what} was served as a 2026-07-28 request ({describe(ans)}); the server must reject it per Server Validation",
                  expected={"http_status": 400, "error": {"code": errors.HEADER_MISMATCH}}, actual=_actual(ans), entries=ans.entries())

    target = await _name_target(ctx, peer)
    if target is None:
        why = "the server lists no resource, argument-free prompt or tool to address with Mcp-Name"
        ctx.not_reached("headers.name.base64-decoded", why)
        ctx.note(f"Mcp-Name probes not run: {why}")
        return
    method, params, name, safe = target
    ans = await ask(peer, method, params, headers={"Mcp-Name": "mcp-conformance-wrong-name"})
    await _must_reject(ctx, mismatch, ans, f"{method} of {name!r} with Mcp-Name: mcp-conformance-wrong-name")
    ans = await ask(peer, method, params, headers={"Mcp-Name": None})
    await _must_reject(ctx, missing, ans, f"{method} of {name!r} without Mcp-Name")
    if not safe:
        why = f"the only Mcp-Name target is the tool {name!r}, which is not marked read-only: not executed"
        ctx.not_reached("headers.name.base64-decoded", why)
        ctx.note(f"Mcp-Name spelling probes not sent: {why}", requirement=CASE)
        return
    for spell in (str.lower, str.upper):
        ans = await ask(peer, method, params, headers={spell("Mcp-Name"): name})
        _case_verdict(ctx, ans, f"{method} of {name!r} with the header name {spell('Mcp-Name')}")
    encoded = _b64(name)
    ans = await ask(peer, method, params, headers={"Mcp-Name": encoded})
    verdict(
        ctx,
        "headers.name.base64-decoded",
        not (_rejected(ans) and (ans.code == errors.HEADER_MISMATCH or ans.status == 400)),
        problem="EncodedNameRejected",
        passed=f"{method} of {name!r} with Mcp-Name: {encoded} (its Base64 sentinel form): {describe(ans)}",
        failed=f"{method} of {name!r} with Mcp-Name: {encoded} (its Base64 sentinel form) was answered with {describe(ans)}; the server must decode it before comparing",
        expected="the request served as with the plain name",
        actual=_actual(ans),
        entries=ans.entries(),
    )


# -- Mcp-Param-* (x-mcp-header) ---------------------------------------------------------------------


def _plain_value(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(schema, dict) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    return {"integer": 0, "number": 0, "boolean": False, "object": {}, "array": []}.get(kind, "mcp-conformance")


def _header_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _set(args: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    cur = args
    for step in path[:-1]:
        cur = cur.setdefault(step, {})
    cur[path[-1]] = value


@scenario(
    requirements=[
        "headers.param.validated",
        "headers.param.missing-rejected",
        "headers.param.invalid-characters",
        "headers.name.base64-decoded",
        "headers.validation.status-and-code",
        "headers.param.absent-not-expected",
        "headers.param.integer-numeric",
        "headers.sentinel.case-sensitive",
        "headers.name-case-insensitive",
    ],
    since=V,
    transports=HTTP,
    skip_reason=LEGACY,
    capability="tools",
)
async def custom_param_headers(ctx: ScenarioContext) -> None:
    """For a tool with an x-mcp-header string parameter: Mcp-Param-{Name} with another value,
    omitted, or with invalid Base64 is rejected (400, -32020); its Base64 sentinel form, a
    Base64-looking literal and upper-case markers (a literal) are accepted; with the parameter
    absent or null no header is expected; an integer header 42.0 matches the body's 42."""
    peer = await ctx.connect()
    tools, failed = await list_tools(peer)
    chosen = None
    for tool in tools:
        mirrored = mirrored_params(tool.get("inputSchema"))
        strings = [m for m in mirrored if m[2] == "string" and len(m[0]) == 1]
        if strings:
            chosen = (tool, strings[0], mirrored)
            break
    if chosen is None:
        why = "tools/list failed: " + describe(failed) if failed is not None else "no tool marks a string parameter with x-mcp-header"
        ctx.skip(f"{why} (x-mcp-header is optional for servers)")
    tool, (path, header, _), mirrored = chosen
    name = tool["name"]
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    base: dict[str, Any] = {}
    for prop in required:
        if (prop,) != path:
            base[prop] = _plain_value(props.get(prop))
    other_headers = {f"Mcp-Param-{h}": _header_text(base[p[0]]) for p, h, _ in mirrored if len(p) == 1 and p != path and p[0] in base}
    hname = f"Mcp-Param-{header}"

    async def call(value: Any, header_value: str | None) -> Answer:
        args = dict(base)
        _set(args, path, value)
        return await ask(peer, "tools/call", {"name": name, "arguments": args}, headers={**other_headers, hname: header_value})

    validated = "headers.param.validated"
    ans = await call("mcp-conformance", "mcp-conformance-other")
    await _must_reject(ctx, validated, ans, f"tools/call {name!r} with {path[0]}='mcp-conformance' and {hname}: mcp-conformance-other")
    ans = await call("mcp-conformance", None)
    await _must_reject(ctx, "headers.param.missing-rejected", ans,
                       f"tools/call {name!r} with {path[0]}='mcp-conformance' and no {hname} header")
    ans = await call("Hello", "=?base64?SGVs!!!bG8=?=")
    await _must_reject(ctx, "headers.param.invalid-characters", ans, f"tools/call {name!r} with {hname}: =?base64?SGVs!!!bG8=?= (not Base64)")

    ann = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    if not (name in SAFE_TOOL_FIXTURES or ann.get("readOnlyHint") is True):
        for rid in ("headers.name.base64-decoded", "headers.param.absent-not-expected", "headers.param.integer-numeric",
                    "headers.sentinel.case-sensitive", CASE):
            ctx.not_reached(rid, f"the tool {name!r} is not marked read-only: the probes it would serve are not sent")
        return
    await _served_probes(ctx, peer, name, base, other_headers, path, hname, mirrored)
    for spell in (str.lower, str.upper):
        args = dict(base)
        _set(args, path, "mcp-conformance")
        ans = await ask(peer, "tools/call", {"name": name, "arguments": args},
                        headers={**other_headers, spell(hname): "mcp-conformance"})
        _case_verdict(ctx, ans, f"tools/call {name!r} with the header name {spell(hname)}")
    await _absent_probes(ctx, peer, name, base, other_headers, path, hname)
    await _integer_probe(ctx, peer, name, {**base, path[0]: "mcp-conformance"}, {**other_headers, hname: "mcp-conformance"},
                         mirrored)


def _not_mismatch(ans: Answer) -> bool:
    """Not refused as a header mismatch (any other answer: served, -32602, a tool error)."""
    return not (_rejected(ans) and (ans.code == errors.HEADER_MISMATCH or (ans.status == 400 and ans.code is None)))


async def _served_probes(ctx: ScenarioContext, peer: Any, name: str, base: dict[str, Any], other_headers: dict[str, str],
                         path: tuple[str, ...], hname: str, mirrored: Any) -> None:
    async def call(value: Any, header_value: str | None) -> Answer:
        args = dict(base)
        _set(args, path, value)
        return await ask(peer, "tools/call", {"name": name, "arguments": args}, headers={**other_headers, hname: header_value})

    ans = await call("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=")
    what = f"tools/call {name!r} with {path[0]}='=?BASE64?SGVsbG8=?=' and {hname}: =?BASE64?SGVsbG8=?= (upper-case markers: a literal)"
    verdict(
        ctx,
        "headers.sentinel.case-sensitive",
        _not_mismatch(ans),
        problem="SentinelMarkersCaseInsensitive",
        passed=f"{what}: {describe(ans)}",
        failed=f"{what} was answered with {describe(ans)}; the markers are case-sensitive, so the value is not Base64 and matches the body",
        expected="the request served",
        actual=_actual(ans),
        entries=ans.entries(),
    )
    for value, header_value, why in (
        ("Hello", _b64("Hello"), "its Base64 sentinel form"),
        ("SGVsbG8=", "SGVsbG8=", "the same literal text (no sentinel markers: not Base64)"),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8=", "the same literal text (no closing ?=: not the sentinel)"),
    ):
        ans = await call(value, header_value)
        verdict(
            ctx,
            "headers.name.base64-decoded",
            not (_rejected(ans) and (ans.code == errors.HEADER_MISMATCH or ans.status == 400)),
            problem="EncodedParamRejected",
            passed=f"tools/call {name!r} with {path[0]}={value!r} and {hname}: {header_value} ({why}): {describe(ans)}",
            failed=f"tools/call {name!r} with {path[0]}={value!r} and {hname}: {header_value} ({why}) was answered with {describe(ans)}; the server must compare the decoded (or literal) value",
            expected="the request served",
            actual=_actual(ans),
            entries=ans.entries(),
        )


async def _absent_probes(ctx: ScenarioContext, peer: Any, name: str, base: dict[str, Any], other_headers: dict[str, str],
                         path: tuple[str, ...], hname: str) -> None:
    """The designated parameter left out, then null, and no header: anything but HeaderMismatch."""
    for how, args in (("left out", dict(base)), ("null", {**base, path[0]: None})):
        ans = await ask(peer, "tools/call", {"name": name, "arguments": args}, headers={**other_headers, hname: None})
        what = f"tools/call {name!r} with {path[0]} {how} and no {hname} header"
        verdict(
            ctx,
            "headers.param.absent-not-expected",
            _not_mismatch(ans),
            problem="AbsentParamHeaderExpected",
            passed=f"{what}: {describe(ans)}",
            failed=f"{what} was rejected with {describe(ans)}; with no value in the body the server must not expect the header",
            expected="any answer but HeaderMismatch (-32020)",
            actual=_actual(ans),
            entries=ans.entries(),
        )


async def _integer_probe(ctx: ScenarioContext, peer: Any, name: str, base: dict[str, Any], other_headers: dict[str, str],
                         mirrored: Any) -> None:
    ints = [(p, h) for p, h, t in mirrored if t == "integer" and len(p) == 1]  # (base: the string parameter set)
    if not ints:
        ctx.not_reached("headers.param.integer-numeric", f"the tool {name!r} marks no integer parameter with x-mcp-header")
        return
    (prop,), header = ints[0]
    hname = f"Mcp-Param-{header}"
    headers = {**other_headers, hname: "42.0"}
    ans = await ask(peer, "tools/call", {"name": name, "arguments": {**base, prop: 42}}, headers=headers)
    what = f"tools/call {name!r} with {prop}=42 and {hname}: 42.0"
    verdict(
        ctx,
        "headers.param.integer-numeric",
        _not_mismatch(ans),
        problem="IntegerComparedAsString",
        passed=f"{what}: {describe(ans)}",
        failed=f"{what} was rejected with {describe(ans)}; integer values should be compared numerically (42.0 equals 42)",
        expected="the request served",
        actual=_actual(ans),
        entries=ans.entries(),
    )


# -- x-mcp-header constraints (the server's tool definitions) ------------------------------------------


def _annotated(node: Any) -> bool:
    if isinstance(node, dict):
        return "x-mcp-header" in node or any(_annotated(v) for v in node.values())
    if isinstance(node, list):
        return any(_annotated(v) for v in node)
    return False


@scenario(requirements=["headers.param.annotation-valid"], since=V, transports=HTTP, skip_reason=LEGACY, capability="tools")
async def x_mcp_header_annotations(ctx: ScenarioContext) -> None:
    """Every tool of tools/list whose inputSchema carries x-mcp-header: each annotation keeps the
    constraints (a non-empty HTTP token, unique case-insensitively, on an integer, string or
    boolean property reached through properties keys only)."""
    peer = await ctx.connect()
    tools, failed = await list_tools(peer)
    annotated = [t for t in tools if _annotated(t.get("inputSchema"))]
    if not annotated:
        why = "tools/list failed: " + describe(failed) if failed is not None else "no tool carries x-mcp-header"
        ctx.skip(f"{why} (x-mcp-header is optional for servers)")
    bad = [(t, x_mcp_header_problems(t.get("inputSchema"))) for t in annotated]
    bad = [(t, problems) for t, problems in bad if problems]
    for tool, problems in bad:
        ctx.check(
            "headers.param.annotation-valid",
            False,
            problem="InvalidHeaderAnnotation",
            message=(f"the tool {tool['name']!r} breaks the x-mcp-header constraints: {'; '.join(problems[:3])}"
                     " (a client on streamable HTTP must drop it from its tool list)"),
            expected="x-mcp-header values that keep the constraints",
            actual=problems,
        )
    if not bad:
        ctx.check("headers.param.annotation-valid", True,
                  message=f"{len(annotated)} tool(s) with x-mcp-header annotations, all within the constraints: "
                          + ", ".join(t["name"] for t in annotated[:5]))
