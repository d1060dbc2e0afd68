"""basic/lifecycle: the initialize handshake and version negotiation (2024-11-05 .. 2025-11-25).

2026-07-28 has no handshake; its scenarios are in ``discover.py``.
"""

from __future__ import annotations

from conformance.context import UNSUPPORTED_VERSION_PROBE, ScenarioContext
from conformance.registry import scenario
from conformance.spec import errors
from conformance.spec.versions import LATEST_STATEFUL, VERSIONS
from conformance.wire.envelope import MISSING, Kind, id_repr

from ._helpers import error_field

NO_HANDSHAKE = "2026-07-28 has no initialize handshake (stateless); server/discover replaces it"


def _looks_unsupported(env) -> bool:
    data = error_field(env, "data")
    return env.error_code in (errors.INVALID_PARAMS, errors.UNSUPPORTED_PROTOCOL_VERSION) or (
        isinstance(data, dict) and "supported" in data
    )


@scenario(
    requirements=["lifecycle.initialize.result", "lifecycle.version-negotiation.echo"],
    until=LATEST_STATEFUL,
    fresh=True,
    skip_reason=NO_HANDSHAKE,
    order=-1,
)
async def initialize_handshake(ctx: ScenarioContext) -> None:
    """initialize with the version under test: a result carrying capabilities and serverInfo,
    and the requested version echoed when the server supports it."""
    peer = await ctx.connect(initialize=False, fresh=True)
    env = await peer.initialize(protocol_version=ctx.version)
    if env.kind is Kind.ERROR:
        code, message = env.error_code, error_field(env, "message")
        if _looks_unsupported(env):
            ctx.skip(f"target does not support {ctx.version}: initialize answered error {id_repr(code)} {message!r}")
        ctx.check(
            "lifecycle.initialize.result",
            False,
            problem="InitializeRejected",
            message=f"initialize with protocolVersion {ctx.version!r} was answered with error {id_repr(code)} {message!r}",
            expected="a result with protocolVersion, capabilities and serverInfo",
            actual=env.error,
            entries=[env],
        )
        ctx.not_reached("lifecycle.version-negotiation.echo", "initialize was rejected")
        return
    result = env.result
    if env.kind is not Kind.RESULT or not isinstance(result, dict):
        ctx.check(
            "lifecycle.initialize.result",
            False,
            problem="InvalidInitializeResponse",
            expected="a JSON-RPC result object",
            actual=env.value if env.value is not MISSING else env.raw,
            entries=[env],
        )
        return
    caps = result.get("capabilities", MISSING)
    ctx.check(
        "lifecycle.initialize.result",
        isinstance(caps, dict),
        problem="MissingCapabilities",
        message="the initialize result must carry the server's capabilities (an object)",
        expected="an object",
        actual=caps,
        json_path="$.result.capabilities",
        entries=[env],
    )
    info = result.get("serverInfo", MISSING)
    ok_info = isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)
    ctx.check(
        "lifecycle.initialize.result",
        ok_info,
        problem="MissingServerInfo",
        message="the initialize result must carry serverInfo with a name and a version (strings)",
        expected={"name": "<string>", "version": "<string>"},
        actual=info,
        json_path="$.result.serverInfo",
        entries=[env],
    )
    answered = result.get("protocolVersion", MISSING)
    if answered == ctx.version:
        ctx.check("lifecycle.version-negotiation.echo", True, entries=[env])
        return
    if not isinstance(answered, str):
        ctx.check(
            "lifecycle.version-negotiation.echo",
            False,
            problem="MissingProtocolVersion",
            message="the initialize result must say which protocol version the server will speak",
            expected=ctx.version,
            actual=answered,
            json_path="$.result.protocolVersion",
            entries=[env],
        )
        return
    # Another version: allowed when the server does not support ours.  It does support ours if it
    # offers ours when asked for a version nobody supports.
    probe = await ctx.connect(initialize=False, fresh=True)
    penv = await probe.initialize(protocol_version=UNSUPPORTED_VERSION_PROBE, send_initialized=False)
    offered = penv.result.get("protocolVersion") if penv.kind is Kind.RESULT and isinstance(penv.result, dict) else None
    if offered == ctx.version:
        ctx.check(
            "lifecycle.version-negotiation.echo",
            False,
            problem="VersionNotEchoed",
            message=(
                f"asked for {ctx.version}, the server answered {answered}; yet it offers {ctx.version} "
                f"when asked for the unsupported {UNSUPPORTED_VERSION_PROBE}, so it supports {ctx.version}"
            ),
            expected=ctx.version,
            actual=answered,
            json_path="$.result.protocolVersion",
            entries=[env],
        )
        return
    ctx.skip(f"target does not support {ctx.version}: it answered initialize with protocolVersion {answered!r}")


@scenario(
    requirements=["lifecycle.version-negotiation.fallback"],
    until=LATEST_STATEFUL,
    fresh=True,
    skip_reason=NO_HANDSHAKE,
    order=-1,
)
async def unsupported_version(ctx: ScenarioContext) -> None:
    """initialize with a version no server supports: a result offering a version that exists, or
    an error (the page's Error Handling example shows -32602)."""
    peer = await ctx.connect(initialize=False, fresh=True)
    env = await peer.initialize(protocol_version=UNSUPPORTED_VERSION_PROBE, send_initialized=False)
    req = "lifecycle.version-negotiation.fallback"
    if env.kind is Kind.ERROR:
        code = env.error_code
        ctx.check(
            req,
            True,
            message=(
                f"accepted: initialize with the unsupported version {UNSUPPORTED_VERSION_PROBE!r} was answered with "
                f"error {id_repr(code)} (the page's Error Handling example shows -32602; a result offering a supported "
                "version is the other allowed answer)"
            ),
            entries=[env],
        )
        return
    result = env.result
    if env.kind is not Kind.RESULT or not isinstance(result, dict):
        ctx.check(req, False, problem="InvalidInitializeResponse", expected="a result or an error response",
                  actual=env.value if env.value is not MISSING else env.raw, entries=[env])
        return
    offered = result.get("protocolVersion", MISSING)
    if offered == UNSUPPORTED_VERSION_PROBE:
        ctx.check(req, False, problem="UnsupportedVersionEchoed",
                  message=f"the server echoed {UNSUPPORTED_VERSION_PROBE!r}, a version that does not exist, instead of offering one it supports",
                  expected=f"one of {', '.join(VERSIONS)}", actual=offered, json_path="$.result.protocolVersion", entries=[env])
        return
    ctx.check(
        req,
        isinstance(offered, str) and offered in VERSIONS,
        problem="UnknownProtocolVersion",
        message=f"the server offered {id_repr(offered)}, which is not an MCP protocol version",
        expected=f"one of {', '.join(VERSIONS)}",
        actual=offered,
        json_path="$.result.protocolVersion",
        entries=[env],
    )
