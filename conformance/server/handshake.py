"""The server's handshake on a connection (``initialize``, or ``server/discover`` for a stateless
version), what it told us, and its two verdicts.

The handshake is the pool's, not a scenario's, yet two of its outcomes are verdicts every item of
the version would otherwise wait the timeout for: an ``initialize`` never answered
(``lifecycle.initialize.result``) and, over HTTP, a session that refuses the ping right after it
opened (``ping.response``).  Each is raised once as a
:class:`~conformance.runtime.records.VersionUnusable`, which the pool keeps for the version.
"""

from __future__ import annotations

from typing import Any, Callable

from conformance.runtime.connect import Target, TargetError, target_error
from conformance.runtime.peer import ExpectTimeout, PeerError, RawPeer
from conformance.runtime.records import Connection, ScenarioError, SessionInfo, VersionUnusable
from conformance.spec import errors as _errors
from conformance.spec.meta import SERVER_INFO_KEY
from conformance.spec.versions import Transport, spec
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, parse_envelope, same_id

__all__ = ["Handshake"]

_MODERN_REJECTIONS = (_errors.HEADER_MISMATCH, _errors.MISSING_REQUIRED_CLIENT_CAPABILITY)


class Handshake:
    """``await handshake(conn)``: the handshake of ``conn``'s version on it, and what it told us.
    ``unusable`` is given each :class:`VersionUnusable` before it is raised and returns the one
    to raise (the version's first)."""

    def __init__(self, target: Target, timeout: float, unusable: Callable[[VersionUnusable], VersionUnusable]) -> None:
        self.target = target
        self.timeout = timeout
        self._unusable = unusable

    async def __call__(self, conn: Connection) -> SessionInfo:
        """``initialize`` (or, stateless, ``server/discover``) and what it told us."""
        version = conn.version
        peer = conn.peer
        info = SessionInfo(version)
        try:
            if spec(version).stateless:
                await self._discover(peer, info)
            else:
                await self._initialize(peer, info)
        except PeerError as exc:
            http = _http_failure(peer, self.target)
            if http is not None:
                raise ScenarioError(http.message, kind="target", hint=http.hint) from exc
            if isinstance(exc, ExpectTimeout) and not spec(version).stateless and peer.initialize_result is not MISSING:
                raise self._unusable(self._initialized_unanswered(conn, exc)) from exc
            if isinstance(exc, ExpectTimeout) and not spec(version).stateless:
                waited = f"{exc.waited:.3g}"
                raise self._unusable(VersionUnusable(
                    "lifecycle.initialize.result",
                    problem="InitializeUnanswered",
                    message=(f"initialize ({version}) was not answered within {waited} s (the suite's timeout: a client "
                             "SHOULD establish timeouts); the server MUST respond with its capabilities and information"),
                    expected="an initialize result within the timeout",
                    actual=f"no response within {waited} s",
                    reason=(f"not reached: the server did not answer initialize for {version} within {waited} s "
                            "(see lifecycle.initialize.result)"),
                    conn=conn,
                    hint="raise --timeout if the server is merely slow to start",
                )) from exc
            raise ScenarioError(self._handshake_failure(version, exc), kind="target",
                                 hint="check that the target is an MCP server speaking this transport") from exc
        return info

    def _initialized_unanswered(self, conn: Connection, exc: ExpectTimeout) -> VersionUnusable:
        """``initialize`` was answered, and the POST of ``notifications/initialized`` was not (no
        response headers within the timeout): the session cannot start -- one verdict, the POST's
        202 Accepted (the endpoint's, on legacy SSE)."""
        sse = self.target.transport is Transport.SSE
        rid = "transport.sse.post-endpoint" if sse else "transport.http.post.accepted-202"
        return VersionUnusable(
            rid,
            problem="NoResponse",
            message=(f"the POST of notifications/initialized ({conn.version}) was not answered: {exc}; "
                     "the server MUST return 202 Accepted for input it accepts"),
            expected="202 Accepted within the timeout",
            actual=f"no response headers within {exc.waited:.3g} s",
            reason=(f"not reached: the server did not answer the POST of notifications/initialized for {conn.version} "
                    f"within {exc.waited:.3g} s (see {rid})"),
            conn=conn,
            hint="raise --timeout if the server is merely slow",
        )

    def _first_answer_timeout(self, peer: RawPeer) -> float:
        """How long the handshake waits: a stdio server that has not said anything yet may still
        be starting (its interpreter, its imports), which takes seconds on a loaded machine, so
        the start-up deadline applies; afterwards the per-answer ``timeout``."""
        if self.target.transport is Transport.STDIO and not peer.inbound:
            return max(self.timeout, self.target.startup_timeout)
        return self.timeout

    def _handshake_failure(self, version: str, exc: PeerError) -> str:
        what = "server/discover" if spec(version).stateless else "initialize"
        return f"the target did not complete {what} for {version}: {exc}"

    async def _initialize(self, peer: RawPeer, info: SessionInfo) -> None:
        version = info.version
        env = await peer.initialize(protocol_version=version, timeout=self._first_answer_timeout(peer))
        if env.kind is Kind.ERROR:
            code = env.error_code
            msg = env.error.get("message") if isinstance(env.error, dict) else None
            data = env.error.get("data") if isinstance(env.error, dict) else None
            supported = data.get("supported") if isinstance(data, dict) else None
            if code in (_errors.INVALID_PARAMS, _errors.UNSUPPORTED_PROTOCOL_VERSION) or isinstance(supported, list):
                extra = f" (it supports {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
                info.unsupported = f"target does not support {version}: initialize answered error {code} {msg!r}{extra}"
                return
            raise ScenarioError(
                f"initialize for {version} failed: error {id_repr(code)} {msg!r}",
                kind="target",
                hint="see the lifecycle.* requirements of this version in the report",
            )
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            raise ScenarioError(f"initialize for {version} got no usable result: {env.summary()}", kind="target")
        result = env.result
        info.result = result
        info.response = env
        info.negotiated_version = peer.negotiated_version
        info.capabilities = peer.server_capabilities or {}
        info.server_info = peer.server_info or {}
        instr = result.get("instructions")
        info.instructions = instr if isinstance(instr, str) else None
        if info.negotiated_version != version:
            info.unsupported = (
                f"target does not support {version}: it answered initialize with protocolVersion "
                f"{id_repr(result.get('protocolVersion', MISSING))}"
            )

    async def _discover(self, peer: RawPeer, info: SessionInfo) -> None:
        """``server/discover`` as a dual-era client probes (2026-07-28 basic/versioning#backward-
        compatibility-with-initialization-based-versions): a ``DiscoverResult`` or a recognized
        modern error identifies a modern server; any other error, silence, or (HTTP) a 4xx without
        a modern JSON-RPC error body identifies a legacy one, and the version is skipped."""
        version = info.version
        legacy = f"target does not support {version}"
        wait = self._first_answer_timeout(peer)
        silent = (f"{legacy}: no answer to server/discover within {wait:g} s "
                  "(legacy servers may stay silent: basic/transports/stdio#backward-compatibility)")
        try:
            rid = await peer.request("server/discover")
        except ExpectTimeout:  # HTTP: the POST was never answered (no headers, a body that never ended)
            info.unsupported = silent
            return
        exchange = peer.last_exchange
        status = getattr(exchange, "status", None)
        if isinstance(status, int) and status >= 400 and not _json_rpc_body(exchange):
            # "If the body is empty or is not a recognized modern JSON-RPC error, fall back to
            # initialize" (basic/transports/streamable-http#backward-compatibility)
            info.unsupported = (
                f"{legacy}: server/discover was answered with HTTP {status} and no JSON-RPC error "
                "(a legacy server: streamable-http#backward-compatibility)"
            )
            return

        def answer(env: Envelope) -> bool:
            # the response, or (HTTP) a legacy server's 4xx error body that carries id null
            if env.kind not in (Kind.RESULT, Kind.ERROR):
                return False
            return same_id(env.id, rid) or (env.kind is Kind.ERROR and (env.id is None or env.id is MISSING))

        try:
            env = await peer.expect_message(answer, what=f"the response to server/discover (id {id_repr(rid)})", timeout=wait)
        except ExpectTimeout:
            if _http_failure(peer, self.target) is not None:
                raise
            info.unsupported = silent
            return
        if env.kind is Kind.ERROR:
            code = env.error_code
            data = env.error.get("data") if isinstance(env.error, dict) else None
            supported = data.get("supported") if isinstance(data, dict) else None
            msg = env.error.get("message") if isinstance(env.error, dict) else None
            if code == _errors.UNSUPPORTED_PROTOCOL_VERSION:
                extra = f" (it supports {', '.join(map(str, supported))})" if isinstance(supported, list) else ""
                info.unsupported = f"{legacy}: server/discover answered UnsupportedProtocolVersion{extra}"
            elif same_id(env.id, rid) and (
                code in _MODERN_REJECTIONS or (status == 404 and code == _errors.METHOD_NOT_FOUND)
            ):
                # a recognized modern error (on HTTP a 404 with -32601 is one too: "a modern server
                # returns one for unsupported version, unknown method, or header-validation
                # failure"): a modern server refused the probe itself; discover.* judges that
                info.result = None
            else:
                where = f"HTTP {status} with " if isinstance(status, int) and status >= 400 else ""
                info.unsupported = (
                    f"{legacy}: server/discover was answered with {where}error {id_repr(code)} {msg!r} "
                    "(a legacy, initialize-based server: any error that is not a recognized modern error "
                    "identifies one, basic/versioning#backward-compatibility-with-initialization-based-versions)"
                )
            return
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            raise ScenarioError(f"server/discover for {version} got no usable result: {env.summary()}", kind="target")
        result = env.result
        info.result = result
        caps = result.get("capabilities")
        info.capabilities = caps if isinstance(caps, dict) else {}
        meta = result.get("_meta")
        sinfo = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        info.server_info = sinfo if isinstance(sinfo, dict) else {}
        instr = result.get("instructions")
        info.instructions = instr if isinstance(instr, str) else None
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and version in versions:
            info.negotiated_version = version
        elif isinstance(versions, list):
            info.unsupported = f"target does not support {version}: server/discover lists {', '.join(map(str, versions))}"
        else:
            info.negotiated_version = version

    async def probe_session(self, conn: Connection) -> None:
        """Over HTTP, a ping on the session ``initialize`` just opened: a session whose requests
        are refused with an HTTP error status (a server that requires a session id it never
        issued, ...) cannot be used, and that is one verdict (ping.response), not a failure per
        scenario.  Stateless versions have neither sessions nor ping."""
        version = conn.version
        if not self.target.is_http or not spec(version).ping:
            return
        peer = conn.peer
        rid = await peer.request("ping")
        status = getattr(peer.last_exchange, "status", None)
        if not isinstance(status, int) or status < 400:
            return  # answered (or still to be answered) on the session: the ping scenarios judge it
        try:
            env: Envelope | None = await peer.expect_response(rid, timeout=min(1.0, self.timeout))
        except PeerError:
            env = None
        body = env.summary() if env is not None else "no JSON-RPC body"
        sid = getattr(peer.transport, "session_id", None)
        issued = f"session id {sid!r}" if sid else "no session id (none was issued)"
        raise self._unusable(VersionUnusable(
            "ping.response",
            problem="SessionUnusable",
            message=(f"a ping on the {version} session initialize opened ({issued}) was refused with HTTP {status} "
                     f"({body}): the session cannot be used, so no other check of {version} can run"),
            expected="an empty result on the session initialize opened",
            actual={"http_status": status, "body": body},
            reason=(f"not reached: the {version} session cannot be used (a ping after initialize was refused with "
                    f"HTTP {status}; see ping.response)"),
            conn=conn,
            hint="the server must accept requests on the session its initialize response opened",
        ))


def _json_rpc_body(exchange: Any) -> bool:
    """Whether an HTTP exchange's (non-SSE) body is a JSON-RPC message (else: an error page or nothing)."""
    if getattr(exchange, "is_sse", False):
        return True
    body = getattr(exchange, "body", None)
    if not body:
        return False
    env = parse_envelope(body)
    return env.kind in (Kind.RESULT, Kind.ERROR, Kind.BATCH)


def _http_failure(peer: RawPeer, target: Target) -> TargetError | None:
    """A TargetError when the last HTTP exchange of ``peer`` was answered with an error status
    and no JSON-RPC message (404: wrong path, 405: wrong transport, ...)."""
    exchange = peer.last_exchange
    status = getattr(exchange, "status", None)
    if not isinstance(status, int) or status < 400 or peer.inbound:
        return None
    from conformance.transports.base import HttpStatusError

    headers = getattr(exchange, "headers", None) or {}
    body = getattr(exchange, "body", None) or b""
    return target_error(HttpStatusError(f"HTTP {status}", status=status, headers=dict(headers), body=body), target, doing="initializing")
