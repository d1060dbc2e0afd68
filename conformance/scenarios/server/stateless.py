"""basic/index (2026-07-28): per-request ``_meta``, client capabilities, statelessness, and the
rules every result and error of the run must follow (resultType, serverInfo, error codes)."""

from __future__ import annotations

import json
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec import errors
from conformance.spec.meta import TASKS_EXTENSION
from conformance.spec.versions import Transport
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Kind, id_repr

from . import _features as F
from ._helpers import barrier
from ._stateless import (
    CLIENT_CAPABILITIES_KEY,
    FULL_CAPS,
    CLIENT_INFO_KEY,
    INPUT_CAPABILITY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    Answer,
    ask,
    describe,
    extension_requests,
    input_candidates,
    input_requests_of,
    is_input_required,
    key,
    list_tools,
    modern_requests,
    verdict,
)

V = "2026-07-28"
LEGACY = "2026-07-28 only: earlier revisions establish this context once, with initialize"
MAX_REPORTED = 10

_CLIENT_INFO = {"name": "mcp-conformance", "version": "0"}


# -- per-request _meta --------------------------------------------------------------------------


@scenario(
    requirements=[
        "stateless.meta.required-fields",
        "stateless.meta.required-fields.http-400",
        "stateless.meta.client-info-optional",
    ],
    since=V,
    skip_reason=LEGACY,
)
async def meta_required_fields(ctx: ScenarioContext) -> None:
    """server/discover without _meta, without protocolVersion, without clientCapabilities: each
    rejected with -32602 (HTTP 400); without clientInfo (not a required field): served."""
    peer = await ctx.connect()
    http = ctx.transport is Transport.STREAMABLE_HTTP
    full = {PROTOCOL_VERSION_KEY: ctx.version, CLIENT_CAPABILITIES_KEY: {}, CLIENT_INFO_KEY: _CLIENT_INFO}
    probes = [
        ("no _meta", {}, False),
        (f"_meta without {PROTOCOL_VERSION_KEY}", {"_meta": {k: v for k, v in full.items() if k != PROTOCOL_VERSION_KEY}}, False),
        (f"_meta without {CLIENT_CAPABILITIES_KEY}", {"_meta": {k: v for k, v in full.items() if k != CLIENT_CAPABILITIES_KEY}}, True),
    ]
    req, req400 = "stateless.meta.required-fields", "stateless.meta.required-fields.http-400"
    for what, params, has_version in probes:
        ans = await ask(peer, "server/discover", params, meta=None)
        if ans.env is None:
            ctx.check(req, False, problem="NoResponse", message=f"server/discover with {what} got no answer within {ctx.timeout:g} s",
                      expected={"error": {"code": errors.INVALID_PARAMS}}, actual="no answer")
            continue
        allowed = {errors.INVALID_PARAMS}
        if http and not has_version:
            allowed.add(errors.HEADER_MISMATCH)  # the MCP-Protocol-Version header no longer matches the body
        if ans.is_error and ans.code not in allowed and not has_version:
            # a request without protocolVersion does not carry modern _meta: a dual-era server may read
            # it as a legacy client's request (before initialize, or without a session on HTTP)
            ctx.check(req, True, message=(
                f"server/discover with {what} was answered with {describe(ans)}: accepted, a request without "
                f"{PROTOCOL_VERSION_KEY} does not carry modern _meta, and a dual-era server may treat it as a legacy client's "
                "request ('A request carrying modern per-request _meta is served statelessly')"), entries=ans.entries())
        else:
            verdict(
                ctx,
                req,
                ans.is_error and ans.code in allowed,
                problem="MalformedMetaAccepted" if ans.is_result else "WrongErrorCode",
                passed=f"server/discover with {what}: rejected with {describe(ans)}",
                failed=f"server/discover with {what} must be rejected with -32602 (Invalid params); got {describe(ans)}",
                expected={"error": {"code": errors.INVALID_PARAMS}},
                actual=ans.error if ans.is_error else ans.env.value,
                json_path="$.error.code" if ans.is_error else "$",
                entries=ans.entries(),
            )
        if http and ans.is_error and ans.code in allowed:
            verdict(ctx, req400, ans.status == 400, problem="WrongHttpStatus",
                      passed=f"server/discover with {what}: rejected with HTTP 400",
                      failed=f"the rejection of server/discover with {what} must have HTTP status 400, got {ans.status}",
                      expected=400, actual=ans.status, entries=ans.entries())
    caps = ctx.server_capabilities
    method = next((m for m, c in (("tools/list", "tools"), ("prompts/list", "prompts"), ("resources/list", "resources")) if isinstance(caps.get(c), dict)), "server/discover")
    ans = await ask(peer, method, {"_meta": {PROTOCOL_VERSION_KEY: ctx.version, CLIENT_CAPABILITIES_KEY: {}}}, meta=None)
    verdict(
        ctx,
        "stateless.meta.client-info-optional",
        ans.is_result,
        problem="ClientInfoRequired",
        passed=f"{method} whose _meta omits {CLIENT_INFO_KEY}: served ({describe(ans)})",
        failed=f"{method} whose _meta omits {CLIENT_INFO_KEY} (not a required field) should be served; got {describe(ans)}",
        expected="a DiscoverResult",
        actual=ans.error if ans.is_error else (ans.env.value if ans.env else "no answer"),
        entries=ans.entries(),
    )


# -- client capabilities and prior context --------------------------------------------------------


def _needed(result: Any) -> dict[str, str]:
    """input request key -> the client capability it needs."""
    out = {}
    for k, req in input_requests_of(result).items():
        method = req.get("method") if isinstance(req, dict) else None
        if method in INPUT_CAPABILITY:
            out[k] = INPUT_CAPABILITY[method]
    return out


def _call_params(tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool["name"], "arguments": {}}


@scenario(
    requirements=[
        "stateless.missing-client-capability",
        "stateless.missing-client-capability.http-400",
        "mrtr.input-requests.declared-capability",
        "stateless.no-prior-context",
    ],
    since=V,
    skip_reason=LEGACY,
    capability="tools",
    connection=ConnectionKind.DISPOSABLE,  # the disposable items before it declare no client capability either
)
async def client_capabilities(ctx: ScenarioContext) -> None:
    """On a fresh connection, tools that ask for client input are called with empty
    clientCapabilities (-32021 naming what is missing, or no input request for it), then with
    every capability declared, then without again (no context carried over)."""
    peer = await ctx.connect(fresh=True)
    tools, failed = await list_tools(peer)
    candidates = input_candidates(tools)
    if not candidates:
        why = "tools/list failed: " + describe(failed) if failed is not None else "no tool of the server looks like it asks for client input"
        ctx.skip(f"{why} (official fixtures such as test_missing_capability, or tools whose name or description mentions input, elicitation, sampling or roots)")
    # 1. empty capabilities first: nothing declared earlier on this connection
    bare: dict[str, Answer] = {}
    for tool in candidates:
        bare[tool["name"]] = await ask(peer, "tools/call", _call_params(tool))
    # 2. everything declared: which tools need which capability
    full: dict[str, Answer] = {}
    for tool in candidates:
        full[tool["name"]] = await ask(peer, "tools/call", _call_params(tool), meta={CLIENT_CAPABILITIES_KEY: FULL_CAPS})
    # 3. empty again, after a request that declared them: nothing may be carried over
    again: dict[str, Answer] = {}
    for tool in candidates:
        if is_input_required(full[tool["name"]]) or bare[tool["name"]].code == errors.MISSING_REQUIRED_CLIENT_CAPABILITY:
            again[tool["name"]] = await ask(peer, "tools/call", _call_params(tool))

    cap_req, cap400 = "stateless.missing-client-capability", "stateless.missing-client-capability.http-400"
    declared_req = "mrtr.input-requests.declared-capability"
    needing = 0
    for tool in candidates:
        name = tool["name"]
        b, f = bare[name], full[name]
        asked = _needed(b.result) if is_input_required(b) else {}
        verdict(
            ctx,
            declared_req,
            not asked,
            problem="UndeclaredInputRequest",
            passed=f"tools/call {name!r} with empty clientCapabilities: {describe(b)}, no input request for an undeclared capability",
            failed=(
                f"tools/call {name!r} with empty clientCapabilities was answered with input requests needing "
                f"{', '.join(sorted(set(asked.values())))}, which the client did not declare"
            ),
            expected="no elicitation/create, sampling/createMessage or roots/list in inputRequests",
            actual={k: input_requests_of(b.result)[k] for k in list(asked)[:3]},
            json_path="$.result.inputRequests",
            entries=b.entries(),
        )
        needs = _needed(f.result) if is_input_required(f) else {}
        if b.code == errors.MISSING_REQUIRED_CLIENT_CAPABILITY:
            needing += 1
            data = b.data()
            caps = data.get("requiredCapabilities", MISSING) if isinstance(data, dict) else MISSING
            verdict(
                ctx,
                cap_req,
                isinstance(caps, dict) and bool(caps) and all(isinstance(v, dict) for v in caps.values()),
                problem="RequiredCapabilitiesMissing",
                passed=f"tools/call {name!r} with empty clientCapabilities: -32021, data.requiredCapabilities {caps}",
                failed=(
                    f"tools/call {name!r}: MissingRequiredClientCapabilityError must list the missing capabilities in "
                    "data.requiredCapabilities (a ClientCapabilities object, e.g. {\"sampling\": {}})"
                ),
                expected={"requiredCapabilities": {"<capability>": {}}},
                actual=data,
                json_path="$.error.data.requiredCapabilities",
                entries=b.entries(),
            )
            if ctx.transport is Transport.STREAMABLE_HTTP:
                verdict(ctx, cap400, b.status == 400, problem="WrongHttpStatus",
                        passed=f"tools/call {name!r}: -32021 with HTTP 400",
                        failed=f"tools/call {name!r}: MissingRequiredClientCapabilityError must have HTTP status 400, got {b.status}",
                          expected=400, actual=b.status, entries=b.entries())
        elif needs and b.is_error:
            needing += 1
            ctx.check(
                cap_req,
                False,
                problem="WrongErrorCode",
                message=(
                    f"tools/call {name!r} needs {', '.join(sorted(set(needs.values())))} (with it declared the server asked "
                    f"for input through it); without it the server answered {describe(b)} instead of "
                    "MissingRequiredClientCapabilityError (-32021)"
                ),
                expected={"error": {"code": errors.MISSING_REQUIRED_CLIENT_CAPABILITY, "data": {"requiredCapabilities": {c: {} for c in sorted(set(needs.values()))}}}},
                actual=b.error,
                json_path="$.error.code",
                entries=[*b.entries(), *f.entries()],
            )
        elif needs:
            needing += 1
            ctx.check(cap_req, True, message=(
                f"tools/call {name!r} asks for input through {', '.join(sorted(set(needs.values())))} when it is declared and "
                f"was answered with {describe(b)} without it (processed without the capability)"), entries=b.entries())
        a = again.get(name)
        if a is not None:
            # what the repeated bare call asks for beyond what the first bare call asked for
            first = set(asked.values())
            carried = {k: c for k, c in (_needed(a.result) if is_input_required(a) else {}).items() if c not in first}
            verdict(
                ctx,
                "stateless.no-prior-context",
                not carried,
                problem="CapabilitiesCarriedOver",
                passed=f"tools/call {name!r} with empty clientCapabilities after a call that declared them: {describe(a)}, nothing carried over",
                failed=(
                    f"tools/call {name!r} with empty clientCapabilities, sent after a call on the same connection that "
                    f"declared {', '.join(sorted(FULL_CAPS))}, was answered with input requests needing "
                    f"{', '.join(sorted(set(carried.values())))}: the server took the capabilities from the earlier request"
                ),
                expected="the same answer as without the earlier request (-32021, or no input request for an undeclared capability)",
                actual={k: input_requests_of(a.result)[k] for k in list(carried)[:3]},
                json_path="$.result.inputRequests",
                entries=[*a.entries(), *f.entries()],
            )
    if not needing:
        why = (
            f"none of the tools tried ({', '.join(t['name'] for t in candidates)}) asked for client input "
            "through elicitation, sampling or roots"
        )
        ctx.not_reached(cap_req, why)
        ctx.not_reached(cap400, why)
    if not again:
        ctx.not_reached("stateless.no-prior-context", "no tool asked for client input, so there is no capability to carry over")


# -- every result and error of the run -------------------------------------------------------------


_CORE_RESULT_TYPES = ("complete", "input_required")
# the result types of the extensions we know (the tasks extension: CreateTaskResult's "task")
_EXTENSION_RESULT_TYPES: dict[str, frozenset[str]] = {TASKS_EXTENSION: frozenset({"task"})}
_INPUT_REQUIRED_METHODS = ("tools/call", "prompts/get", "resources/read")
_RESERVED = errors.MCP_RESERVED_RANGE  # -32099 .. -32020
_DEFINED = (errors.HEADER_MISMATCH, errors.MISSING_REQUIRED_CLIENT_CAPABILITY, errors.UNSUPPORTED_PROTOCOL_VERSION)
_LEGACY = range(-32019, -31999)  # -32000 .. -32019
_JSONRPC_RESERVED_LOW = -32768
_JSONRPC_CODES = (errors.PARSE_ERROR, errors.INVALID_REQUEST, errors.METHOD_NOT_FOUND, errors.INVALID_PARAMS, errors.INTERNAL_ERROR)
_RETIRED = {errors.RESOURCE_NOT_FOUND_LEGACY: "resource not found (2025-11-25 and earlier)", errors.URL_ELICITATION_REQUIRED: "URL elicitation required (2025-11-25 only)"}


_INPUT_REQUIRED_RULES = ("mrtr.input-required.non-empty", "mrtr.input-requests.kinds", "mrtr.input-requests.unique-keys")
_INPUT_REQUEST_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")


class _Keyed(dict):
    """A JSON object that remembers its keys in the order (and number) the text gave them."""

    keys_seen: list[str]


def _keyed(pairs: list[tuple[str, Any]]) -> _Keyed:
    obj = _Keyed(pairs)
    obj.keys_seen = [k for k, _ in pairs]
    return obj


def _repeated_input_keys(raw: bytes | None) -> list[str]:
    """The keys that appear more than once in the result's inputRequests object, read on the
    JSON text as received (a parsed object keeps one of them)."""
    if not raw:
        return []
    try:
        msg = json.loads(raw, object_pairs_hook=_keyed)
    except (ValueError, RecursionError):
        return []
    result = msg.get("result") if isinstance(msg, dict) else None
    reqs = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(reqs, _Keyed):
        return []
    return sorted({k for k in reqs.keys_seen if reqs.keys_seen.count(k) > 1})


def _input_required_problems(result: dict[str, Any], raw: bytes | None, where: str) -> list[tuple[str, dict[str, Any]]]:
    """What an InputRequiredResult breaks of the server requirements of basic/patterns/mrtr."""
    out: list[tuple[str, dict[str, Any]]] = []
    reqs, state = result.get("inputRequests", MISSING), result.get("requestState", MISSING)
    if not isinstance(reqs, dict) and not isinstance(state, str):
        out.append(("mrtr.input-required.non-empty", dict(
            problem="EmptyInputRequired",
            message=f"{where} is an InputRequiredResult with neither inputRequests nor requestState",
            expected={"inputRequests": "{...}", "requestState": "<string>"},
            actual={k: v for k, v in result.items() if k != "_meta"}, json_path="$.result")))
    for name, value in (reqs.items() if isinstance(reqs, dict) else ()):
        method = value.get("method") if isinstance(value, dict) else None
        if method not in _INPUT_REQUEST_METHODS:
            out.append(("mrtr.input-requests.kinds", dict(
                problem="UnsupportedInputRequest",
                message=(f"{where}: inputRequests[{name!r}] is " + (f"a {method} request" if isinstance(method, str) else
                         "not a request object") + f"; input requests are {', '.join(_INPUT_REQUEST_METHODS)} only"),
                expected={"method": " | ".join(_INPUT_REQUEST_METHODS)}, actual=value, json_path=f"$.result.inputRequests['{name}']")))
            break
    repeated = _repeated_input_keys(raw)
    if repeated:
        out.append(("mrtr.input-requests.unique-keys", dict(
            problem="DuplicateInputRequestKey",
            message=(f"{where}: the inputRequests object names {', '.join(map(repr, repeated))} more than once; a "
                     "client keeps only one of the requests under each key"),
            expected="unique keys", actual=repeated, json_path="$.result.inputRequests")))
    return out


@scenario(
    requirements=[
        "stateless.result-type",
        "stateless.result-meta.server-info",
        "stateless.error-codes.reserved-range",
        "stateless.error-codes.retired",
        "stateless.error-codes.legacy-range",
        "stateless.error-codes.outside-reserved",
        "versioning.extension-fallback",
        "mrtr.supported-requests",
        "mrtr.input-required.non-empty",
        "mrtr.input-requests.kinds",
        "mrtr.input-requests.unique-keys",
        "subscriptions.server-cancelled-only-for-listen",
        "stateless.no-server-requests",
    ],
    since=V,
    skip_reason=LEGACY,
    order=990,
)
async def results_and_errors(ctx: ScenarioContext) -> None:
    """Every answer the server gave to a 2026-07-28 request during the run, on every connection:
    results carry a known resultType and serverInfo, input_required only where MRTR is allowed,
    error codes within the allocation policy; notifications/cancelled only for subscriptions."""
    peer = await ctx.connect()
    try:
        await barrier(peer, ctx.version)  # at least one result, whatever ran before
    except PeerError as exc:
        ctx.note(f"the closing round trip failed ({exc}); the messages received so far are checked")
    info = await ctx.session_info()
    caps = info.capabilities if isinstance(info.capabilities, dict) else {}
    extensions = caps.get("extensions") if isinstance(caps.get("extensions"), dict) else {}
    counts = {r: 0 for r in ctx.requirements}
    bad = {r: 0 for r in ctx.requirements}
    seen_results = seen_errors = seen_input = 0

    def flag(rid: str, **kw: Any) -> None:
        bad[rid] = bad.get(rid, 0) + 1
        if bad[rid] <= MAX_REPORTED:
            ctx.check(rid, False, **kw)

    for conn in ctx.connections():
        if conn.info is not None and conn.info.unsupported:
            continue
        cpeer = conn.peer
        sent = modern_requests(cpeer, ctx.version)
        opted = extension_requests(cpeer, ctx.version) if extensions else set()
        listens = {k for k, m in sent.items() if m == "subscriptions/listen"}
        legacy = any(e.direction == Direction.OUT and e.envelope is not None and e.envelope.method == "initialize"
                     for e in cpeer.transcript.entries)  # a dual-era server may have turned it legacy
        for entry in cpeer.transcript.entries:
            env = entry.envelope
            if entry.direction != Direction.IN or env is None:
                continue
            if env.kind is Kind.REQUEST and sent and not legacy:
                counts["stateless.no-server-requests"] = 1
                flag("stateless.no-server-requests", problem="ServerInitiatedRequest",
                     message=(f"the server sent a {env.method} request (id {id_repr(env.id)}) on {conn.label}; in 2026-07-28 "
                              "servers ask for client input with an InputRequiredResult, never with a request of their own"),
                     expected="no JSON-RPC request from the server", actual=env.summary(), entries=[entry.seq], peer=cpeer)
                continue
            if env.kind is Kind.NOTIFICATION and env.method == "notifications/cancelled" and sent:
                params = env.params if isinstance(env.params, dict) else {}
                rid = params.get("requestId", MISSING)
                counts["subscriptions.server-cancelled-only-for-listen"] = 1
                if rid is MISSING or key(rid) not in listens:
                    flag("subscriptions.server-cancelled-only-for-listen", problem="CancelledForOtherPurpose",
                         message=(f"the server sent notifications/cancelled for request {id_repr(rid)} on {conn.label}, which is not "
                                  "a subscriptions/listen request; servers send it only when they tear down a subscription"),
                         expected="requestId of a subscriptions/listen request", actual=params, json_path="$.params.requestId",
                         entries=[entry.seq], peer=cpeer)
                continue
            if env.kind not in (Kind.RESULT, Kind.ERROR) or env.id is MISSING or env.id is None:
                continue
            method = sent.get(key(env.id))
            if method is None or method == "initialize":
                continue  # not an answer to a 2026-07-28 request (initialize: a dual-era server's legacy handshake)
            where = f"the {env.kind.value} to {method} (id {id_repr(env.id)}) on {conn.label}"
            if env.kind is Kind.RESULT:
                seen_results += 1
                result = env.result if isinstance(env.result, dict) else {}
                rt = result.get("resultType", MISSING)
                # a resultType of an extension the server advertises: "task" of the tasks extension;
                # an extension we do not know may define any (we cannot tell)
                # the answer to a request that opted in to an extension the server advertises, or to
                # one of the tasks extension's methods, is that extension's to judge (tasks.ext.*)
                theirs = key(env.id) in opted or (TASKS_EXTENSION in extensions and method.startswith("tasks/"))
                known = theirs or rt in _CORE_RESULT_TYPES or (isinstance(rt, str) and any(
                    name not in _EXTENSION_RESULT_TYPES or rt in _EXTENSION_RESULT_TYPES[name] for name in extensions))
                if not known:
                    flag("stateless.result-type", problem="MissingResultType" if rt is MISSING else "UnknownResultType",
                         message=(f"{where} has no resultType" if rt is MISSING else
                                  f"{where} has resultType {rt!r}, not one of {', '.join(_CORE_RESULT_TYPES)} "
                                  "(and no extension the server advertises defines it)"),
                         expected={"resultType": "complete | input_required"}, actual=rt, json_path="$.result.resultType",
                         entries=[entry.seq], peer=cpeer)
                if known and extensions and isinstance(rt, str) and rt not in _CORE_RESULT_TYPES and key(env.id) not in opted \
                        and not method.startswith("tasks/") and rt not in _EXTENSION_RESULT_TYPES[TASKS_EXTENSION]:
                    # ("task" to a request without the tasks extension is tasks.ext.undeclared.no-task's; a value
                    # no advertised extension can define is stateless.result-type's)
                    flag("versioning.extension-fallback", problem="ExtensionResultWithoutOptIn",
                         message=(f"{where} has resultType {rt!r}, which no core result has, though the request named no "
                                  "extension in its client capabilities: a server supporting an extension the client "
                                  "does not must answer with core behaviour or an error"),
                         expected={"resultType": "complete | input_required"}, actual=rt, json_path="$.result.resultType",
                         entries=[entry.seq], peer=cpeer)
                if rt == "input_required" and method not in _INPUT_REQUIRED_METHODS:
                    flag("mrtr.supported-requests", problem="InputRequiredOnUnsupportedMethod",
                         message=f"{where} is an InputRequiredResult; only {', '.join(_INPUT_REQUIRED_METHODS)} may answer with one",
                         expected=f"a final result for {method}", actual=result, json_path="$.result.resultType",
                         entries=[entry.seq], peer=cpeer)
                if rt == "input_required":
                    seen_input += 1
                    for rid, kw in _input_required_problems(result, entry.raw, where):
                        flag(rid, entries=[entry.seq], peer=cpeer, **kw)
                meta = result.get("_meta")
                sinfo = meta.get(SERVER_INFO_KEY, MISSING) if isinstance(meta, dict) else MISSING
                if method != "server/discover" and not (isinstance(sinfo, dict) and isinstance(sinfo.get("name"), str) and isinstance(sinfo.get("version"), str)):
                    flag("stateless.result-meta.server-info", problem="MissingServerInfo",
                         message=f"{where} does not carry _meta[{SERVER_INFO_KEY!r}] with a name and a version",
                         expected={"name": "<string>", "version": "<string>"}, actual=sinfo,
                         json_path=f"$.result._meta['{SERVER_INFO_KEY}']", entries=[entry.seq], peer=cpeer)
            else:
                seen_errors += 1
                code = env.error_code
                if isinstance(code, int) and code in _RESERVED and code not in _DEFINED:
                    flag("stateless.error-codes.reserved-range", problem="UndefinedReservedCode",
                         message=(f"{where} uses code {code}, in the range -32020..-32099 that only the MCP specification "
                                  "allocates; 2026-07-28 defines -32020, -32021 and -32022 there"),
                         expected="a code defined by the specification, or one outside -32768..-32000", actual=env.error,
                         json_path="$.error.code", entries=[entry.seq], peer=cpeer)
                if isinstance(code, int) and not isinstance(code, bool) and code in _LEGACY and code != errors.RESOURCE_NOT_FOUND_LEGACY:
                    flag("stateless.error-codes.legacy-range", problem="LegacyRangeCode",
                         message=(f"{where} uses code {code}, in the legacy sub-range -32000..-32019 that new "
                                  "implementations should not use at all"),
                         expected="a code outside -32768..-32000, or one the specification defines", actual=env.error,
                         json_path="$.error.code", entries=[entry.seq], peer=cpeer)
                if isinstance(code, int) and not isinstance(code, bool) and _JSONRPC_RESERVED_LOW <= code < _RESERVED.start \
                        and code not in _JSONRPC_CODES:
                    flag("stateless.error-codes.outside-reserved", problem="CodeInJsonRpcReservedRange",
                         message=(f"{where} uses code {code}, in the JSON-RPC reserved range -32768..-32000 but none of "
                                  "JSON-RPC's own codes; new codes belong outside it"),
                         expected="a code outside -32768..-32000, or one JSON-RPC or MCP defines", actual=env.error,
                         json_path="$.error.code", entries=[entry.seq], peer=cpeer)
                if code in _RETIRED and not (code == errors.RESOURCE_NOT_FOUND_LEGACY and method == "resources/read"):
                    flag("stateless.error-codes.retired", problem="RetiredErrorCode",
                         message=f"{where} uses code {code} ({_RETIRED[code]}), which implementations of 2026-07-28 must not emit",
                         expected=f"not {code}", actual=env.error, json_path="$.error.code", entries=[entry.seq], peer=cpeer)
    n_conn = len([c for c in ctx.connections() if not (c.info and c.info.unsupported)])
    summary = f"{seen_results} result(s) and {seen_errors} error(s) answering 2026-07-28 requests on {n_conn} connection(s)"
    for rid in ctx.requirements:
        if bad.get(rid):
            if bad[rid] > MAX_REPORTED:
                ctx.note(f"{bad[rid]} violations in all; the first {MAX_REPORTED} are reported", requirement=rid)
            continue
        if rid == "subscriptions.server-cancelled-only-for-listen" and not counts.get(rid):
            ctx.check(rid, True, message="the server sent no notifications/cancelled during the run")
        elif rid == "stateless.no-server-requests":
            ctx.check(rid, True, message=f"the server sent no request on {n_conn} connection(s)")
        elif rid == "versioning.extension-fallback" and not extensions:
            ctx.not_reached(rid, "the server advertises no extension")
        elif rid.startswith("stateless.error-codes."):
            ctx.check(rid, True, message=summary)
        elif rid in _INPUT_REQUIRED_RULES:
            if seen_input:
                ctx.check(rid, True, message=f"{seen_input} InputRequiredResult(s) on {n_conn} connection(s)")
            else:
                ctx.not_reached(rid, "the server answered no 2026-07-28 request with an InputRequiredResult during the run")
        elif seen_results:
            ctx.check(rid, True, message=summary)
        else:
            ctx.not_reached(rid, "no result answered a 2026-07-28 request during the run")


_LISTS = (("prompts", "prompts/list", "name"), ("resources", "resources/list", "uri"), ("tools", "tools/list", "name"))


@scenario(requirements=["stateless.lists.connection-independent"], since=V, skip_reason=LEGACY)
async def lists_per_connection(ctx: ScenarioContext) -> None:
    """prompts/list, resources/list and tools/list (every page) on the shared connection, on a new
    one, and on the shared one again: a new connection sees the same set."""
    shared = await ctx.connect()
    lists = [entry for entry in _LISTS if F.declared(ctx.server_capabilities, entry[0])]
    if not lists:
        ctx.skip("the server declares none of prompts, resources, tools")
    other = await ctx.connect(fresh=True)
    req = "stateless.lists.connection-independent"

    async def names(peer: Any, method: str, field: str) -> set[Any] | None:
        listing = await F.list_all(peer, method, timeout=ctx.timeout)
        if not listing.complete or not listing.pages:
            return None
        return {item.get(field) for item in listing.items if isinstance(item, dict)}

    async with ctx.alone():  # no other item changes a list meanwhile
        for _, method, field in lists:
            before = await names(shared, method, field)
            fresh = await names(other, method, field)
            after = await names(shared, method, field)
            if before is None or fresh is None or after is None:
                ctx.note(f"{method} was not answered with a list on every connection; not judged", requirement=req)
                continue
            if before != after:
                ctx.note(f"{method} changed on the shared connection while we compared (it may change over time); "
                         "not judged", requirement=req)
                continue
            ctx.check(
                req,
                fresh == before,
                problem="ListVariesPerConnection",
                message=(
                    f"{method} lists the same {len(before)} item(s) on a new connection"
                    if fresh == before else
                    f"{method} on a new connection differs from the list the shared connection gave before and after "
                    f"it: only there {sorted(map(str, fresh - before))[:5]}, missing {sorted(map(str, before - fresh))[:5]}"
                ),
                expected=sorted(map(str, before))[:20],
                actual=sorted(map(str, fresh))[:20],
            )
