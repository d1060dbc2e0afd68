"""server/discover and per-request version negotiation (2026-07-28, stateless)."""

from __future__ import annotations

from conformance.context import META_PROTOCOL_VERSION, META_SERVER_INFO, UNSUPPORTED_VERSION_PROBE, ScenarioContext
from conformance.registry import scenario
from conformance.spec import errors
from conformance.wire.envelope import MISSING, Kind, id_repr

from ._helpers import error_field

V = "2026-07-28"
LEGACY = "versions before 2026-07-28 use the initialize handshake (see lifecycle.*)"


@scenario(requirements=["discover.implemented", "discover.server-info"], since=V, skip_reason=LEGACY, order=-1)
async def discover_result(ctx: ScenarioContext) -> None:
    """server/discover: a result listing the supported versions (ours among them) and the
    capabilities, with serverInfo in _meta."""
    peer = await ctx.connect()
    rid = await peer.request("server/discover")
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
    ctx.check(
        "discover.implemented",
        isinstance(versions, list) and ctx.version in versions,
        problem="SupportedVersionsMissing",
        message=f"supportedVersions must list the versions the server supports, {ctx.version} among them (it answered a {ctx.version} request)",
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
    info = meta.get(META_SERVER_INFO, MISSING) if isinstance(meta, dict) else MISSING
    ctx.check(
        "discover.server-info",
        isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str),
        problem="MissingServerInfo",
        message=f"the DiscoverResult should carry _meta[{META_SERVER_INFO!r}] with a name and a version",
        expected={"name": "<string>", "version": "<string>"},
        actual=info,
        json_path=f"$.result._meta['{META_SERVER_INFO}']",
        entries=[env],
    )


@scenario(requirements=["versioning.unsupported-version"], since=V, skip_reason=LEGACY, order=-1)
async def unsupported_version(ctx: ScenarioContext) -> None:
    """A request declaring a protocol version nobody supports: UnsupportedProtocolVersionError
    (-32022) whose data lists the supported versions."""
    peer = await ctx.connect()
    rid = await peer.request(
        "server/discover",
        meta={META_PROTOCOL_VERSION: UNSUPPORTED_VERSION_PROBE},
        headers={"MCP-Protocol-Version": UNSUPPORTED_VERSION_PROBE},
    )
    env = await peer.expect_response(rid)
    req = "versioning.unsupported-version"
    expected = {"error": {"code": errors.UNSUPPORTED_PROTOCOL_VERSION, "data": {"supported": ["..."], "requested": UNSUPPORTED_VERSION_PROBE}}}
    if env.kind is not Kind.ERROR:
        ctx.check(req, False, problem="UnsupportedVersionAccepted",
                  message=f"a request declaring protocol version {UNSUPPORTED_VERSION_PROBE!r} was answered with a {env.kind.value}",
                  expected=expected, actual=env.value, entries=[env])
        return
    ctx.check(
        req,
        env.error_code == errors.UNSUPPORTED_PROTOCOL_VERSION,
        problem="WrongErrorCode",
        message=f"an unsupported protocol version must be answered with UnsupportedProtocolVersionError (-32022), got {id_repr(env.error_code)}",
        expected=expected,
        actual=env.error,
        json_path="$.error.code",
        entries=[env],
    )
    data = error_field(env, "data")
    supported = data.get("supported", MISSING) if isinstance(data, dict) else MISSING
    ctx.check(
        req,
        isinstance(supported, list) and bool(supported) and all(isinstance(v, str) for v in supported),
        problem="SupportedVersionsNotListed",
        message="the error must list the versions the server does support (error.data.supported)",
        expected=["<version>", "..."],
        actual=supported,
        json_path="$.error.data.supported",
        entries=[env],
    )
