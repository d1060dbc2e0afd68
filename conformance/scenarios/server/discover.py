"""server/discover and per-request version negotiation (2026-07-28, stateless)."""

from __future__ import annotations

import json
from typing import Any

from conformance.server.context import UNSUPPORTED_VERSION_PROBE, ScenarioContext
from conformance.spec.meta import PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec import errors
from conformance.spec.versions import Transport
from conformance.wire.envelope import MISSING, Kind, id_repr

from ._helpers import error_field
from ._stateless import Answer, ask, describe, verdict

V = "2026-07-28"
LEGACY = "versions before 2026-07-28 use the initialize handshake (see lifecycle.*)"
LEGACY_PROBE = "2025-11-25"


@scenario(requirements=["discover.implemented", "discover.server-info"], since=V, skip_reason=LEGACY, order=-1)
async def discover_result(ctx: ScenarioContext) -> None:
    """server/discover: a result listing the supported versions (ours among them) and the
    capabilities, with serverInfo in _meta."""
    peer = await ctx.connect()
    rid = await peer.request("server/discover", id="discover-1")  # a string id, as in the page's example
    env = await peer.expect_response(rid)
    if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
        ctx.check(
            "discover.implemented",
            False,
            problem="DiscoverFailed",
            message=f"server/discover was not answered with a result: {env.summary()}",
            expected="a DiscoverResult",
            actual=env.error if env.kind is Kind.ERROR else env.value,
            entries=[env],
        )
        ctx.not_reached("discover.server-info", "server/discover gave no result")
        return
    result = env.result
    versions = result.get("supportedVersions", MISSING)
    verdict(
        ctx,
        "discover.implemented",
        isinstance(versions, list) and ctx.version in versions,
        problem="SupportedVersionsMissing",
        passed=f"server/discover: supportedVersions {versions}",
        failed=f"supportedVersions must list the versions the server supports, {ctx.version} among them (it answered a {ctx.version} request)",
        expected=f"a list containing {ctx.version!r}",
        actual=versions,
        json_path="$.result.supportedVersions",
        entries=[env],
    )
    caps = result.get("capabilities", MISSING)
    ctx.check(
        "discover.implemented",
        isinstance(caps, dict),
        problem="MissingCapabilities",
        expected="an object",
        actual=caps,
        json_path="$.result.capabilities",
        entries=[env],
    )
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO_KEY, MISSING) if isinstance(meta, dict) else MISSING
    verdict(
        ctx,
        "discover.server-info",
        isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str),
        problem="MissingServerInfo",
        passed=f"server/discover: serverInfo {info}",
        failed=f"the DiscoverResult should carry _meta[{SERVER_INFO_KEY!r}] with a name and a version",
        expected={"name": "<string>", "version": "<string>"},
        actual=info,
        json_path=f"$.result._meta['{SERVER_INFO_KEY}']",
        entries=[env],
    )


@scenario(requirements=["versioning.unsupported-version", "headers.protocol-version.unsupported-400"], since=V, skip_reason=LEGACY, order=-1)
async def unsupported_version(ctx: ScenarioContext) -> None:
    """A request declaring a protocol version nobody supports: UnsupportedProtocolVersionError
    (-32022) whose data lists the supported versions and echoes the requested one (HTTP 400)."""
    peer = await ctx.connect()
    rid = await peer.request(
        "server/discover",
        meta={PROTOCOL_VERSION_KEY: UNSUPPORTED_VERSION_PROBE},
        headers={"MCP-Protocol-Version": UNSUPPORTED_VERSION_PROBE},
    )
    exchange = peer.last_exchange
    env = await peer.expect_response(rid)
    req = "versioning.unsupported-version"
    expected = {"error": {"code": errors.UNSUPPORTED_PROTOCOL_VERSION, "data": {"supported": ["..."], "requested": UNSUPPORTED_VERSION_PROBE}}}
    if env.kind is not Kind.ERROR:
        ctx.check(req, False, problem="UnsupportedVersionAccepted",
                  message=f"a request declaring protocol version {UNSUPPORTED_VERSION_PROBE!r} was answered with a {env.kind.value}",
                  expected=expected, actual=env.value, entries=[env])
        return
    verdict(
        ctx,
        req,
        env.error_code == errors.UNSUPPORTED_PROTOCOL_VERSION,
        problem="WrongErrorCode",
        passed=f"protocol version {UNSUPPORTED_VERSION_PROBE}: error -32022",
        failed=f"an unsupported protocol version must be answered with UnsupportedProtocolVersionError (-32022), got {id_repr(env.error_code)}",
        expected=expected,
        actual=env.error,
        json_path="$.error.code",
        entries=[env],
    )
    data = error_field(env, "data")
    supported = data.get("supported", MISSING) if isinstance(data, dict) else MISSING
    verdict(
        ctx,
        req,
        isinstance(supported, list) and bool(supported) and all(isinstance(v, str) for v in supported) and UNSUPPORTED_VERSION_PROBE not in supported,
        problem="SupportedVersionsNotListed",
        passed=f"error.data.supported lists {supported}",
        failed=f"the error must list the versions the server does support (error.data.supported), {UNSUPPORTED_VERSION_PROBE} not among them",
        expected=["<version>", "..."],
        actual=supported,
        json_path="$.error.data.supported",
        entries=[env],
    )
    requested = data.get("requested", MISSING) if isinstance(data, dict) else MISSING
    verdict(
        ctx,
        req,
        requested == UNSUPPORTED_VERSION_PROBE,
        problem="RequestedVersionNotEchoed",
        passed=f"error.data.requested is {UNSUPPORTED_VERSION_PROBE!r}",
        failed=(
            "UnsupportedProtocolVersionError carries the version the client asked for in error.data.requested "
            f"(the schema requires it); expected {UNSUPPORTED_VERSION_PROBE!r}"
        ),
        expected=UNSUPPORTED_VERSION_PROBE,
        actual=requested,
        json_path="$.error.data.requested",
        entries=[env],
    )
    if env.error_code == errors.UNSUPPORTED_PROTOCOL_VERSION:
        status = getattr(exchange, "status", None)
        verdict(
            ctx,
            "headers.protocol-version.unsupported-400",
            status == 400,
            problem="WrongHttpStatus",
            passed="UnsupportedProtocolVersionError with HTTP 400",
            failed=f"UnsupportedProtocolVersionError must be sent with HTTP status 400, got {status}",
            expected=400,
            actual=status,
            entries=[env],
        )


# -- methods 2026-07-28 removed, and legacy clients ------------------------------------------------

REMOVED = (
    ("ping", {}),
    ("logging/setLevel", {"level": "info"}),
    ("resources/subscribe", {"uri": "mcp-conformance://removed-method-probe"}),
    ("resources/unsubscribe", {"uri": "mcp-conformance://removed-method-probe"}),
)


def _removed_check(ctx: ScenarioContext, method: str, ans: Answer, *, result_ok: str | None = None) -> None:
    if ans.env is None:
        ctx.check("versioning.removed-methods", False, problem="NoResponse",
                  message=f"{method} with the {ctx.version} _meta got no answer within {ctx.timeout:g} s",
                  expected={"error": {"code": errors.METHOD_NOT_FOUND}}, actual="no answer")
        return
    if ans.is_result and result_ok:
        ctx.check("versioning.removed-methods", True, message=f"{method}: {result_ok}", entries=ans.entries())
        return
    verdict(
        ctx,
        "versioning.removed-methods",
        ans.is_error,
        problem="RemovedMethodServed",
        passed=f"{method} with the {ctx.version} _meta: {describe(ans)}",
        failed=f"{method} does not exist in {ctx.version}, yet a request for it carrying the {ctx.version} _meta was answered with {describe(ans)}",
        expected={"error": {"code": errors.METHOD_NOT_FOUND}},
        actual=ans.env.value,
        entries=ans.entries(),
    )
    if ans.is_error and ans.code != errors.METHOD_NOT_FOUND:
        ctx.note(f"{method} was refused with {describe(ans)}; -32601 (Method not found) is what JSON-RPC names for it", requirement="versioning.removed-methods")
    if ctx.transport is Transport.STREAMABLE_HTTP and ans.code == errors.METHOD_NOT_FOUND:
        verdict(
            ctx,
            "headers.unknown-method-404",
            ans.status == 404,
            problem="WrongHttpStatus",
            passed=f"{method}: -32601 with HTTP 404",
            failed=f"{method} was answered with -32601 (the server does not implement it) and HTTP status {ans.status}; that answer must be a 404",
            expected=404,
            actual=ans.status,
            entries=ans.entries(),
        )


@scenario(requirements=["versioning.removed-methods", "headers.unknown-method-404"], since=V, skip_reason=LEGACY)
async def removed_methods(ctx: ScenarioContext) -> None:
    """ping, logging/setLevel, resources/subscribe and resources/unsubscribe with the 2026-07-28
    _meta: refused (-32601; on HTTP with status 404)."""
    peer = await ctx.connect()
    for method, params in REMOVED:
        _removed_check(ctx, method, await ask(peer, method, params))


async def _end_session(peer: Any) -> None:
    """HTTP: a legacy session the probe may have opened is ended (DELETE), as a courtesy."""
    if getattr(peer.transport, "session_id", None):
        try:
            await peer.transport.delete_session()
        except Exception:  # noqa: BLE001 - courtesy only
            pass


@scenario(
    requirements=["versioning.removed-methods", "headers.unknown-method-404", "versioning.modern-only.initialize-names-versions"],
    since=V,
    skip_reason=LEGACY,
    connection=ConnectionKind.FRESH,
)
async def initialize_probes(ctx: ScenarioContext) -> None:
    """On a fresh connection, initialize carrying the 2026-07-28 _meta (refused, or served as the
    legacy handshake by a dual-era server); on another, a legacy client's initialize as its first
    message, whose error from a modern-only server names the versions it supports."""
    info = await ctx.session_info()
    supported = info.result.get("supportedVersions") if isinstance(info.result, dict) else None
    supported = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else [ctx.version]
    http = ctx.transport is Transport.STREAMABLE_HTTP
    params = {"protocolVersion": LEGACY_PROBE, "capabilities": {}, "clientInfo": {"name": "mcp-conformance", "version": "0"}}
    peer = await ctx.connect(fresh=True, validate=False)  # answers may follow a legacy schema
    modern = await ask(peer, "initialize", params)
    _removed_check(ctx, "initialize", modern, result_ok="served as a legacy initialize (a dual-era server: 'An initialize request selects legacy semantics')")
    await _end_session(peer)
    # a legacy client opens with initialize: the first message of its connection
    names = "versioning.modern-only.initialize-names-versions"
    peer = await ctx.connect(fresh=True, initialize=False, validate=False)
    headers = {"MCP-Protocol-Version": None, "Mcp-Method": None} if http else None
    legacy = await ask(peer, "initialize", params, meta=None, headers=headers)
    await _end_session(peer)
    refused_bare = legacy.env is None and legacy.status is not None and legacy.status >= 400
    if legacy.is_result or (legacy.env is None and not refused_bare):
        ctx.not_reached(names, f"a legacy client's initialize was answered with {describe(legacy)}: the server is not modern-only")
        return
    text = json.dumps(legacy.error, ensure_ascii=False) if legacy.is_error else ""
    named = [v for v in supported if v in text]
    verdict(
        ctx,
        names,
        bool(named),
        problem="SupportedVersionsNotNamed",
        passed=f"a legacy client's initialize was refused with {describe(legacy)}, naming {', '.join(named)}",
        failed=(
            f"a legacy client's initialize was refused with {describe(legacy)}; a modern-only server should name the versions "
            f"it supports ({', '.join(supported)}) in that error, the only diagnostic a legacy client can show"
        ),
        expected=f"an error whose message or data names {', '.join(supported)}",
        actual=legacy.error if legacy.is_error else f"HTTP {legacy.status} without a JSON-RPC error",
        entries=legacy.entries(),
    )
