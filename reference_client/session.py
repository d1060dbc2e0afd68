"""Requests with deadlines over a link, the handshake of either era, and the tour of a server.

:class:`Session` sends a request and reads until its response arrives, answering the server's
requests meanwhile (unless the server cancelled them); a request unanswered within the timeout is
cancelled -- ``notifications/cancelled``, or on 2026-07-28 streamable HTTP by closing its response
stream -- and reported (``initialize`` is never cancelled).  Over streamable HTTP an HTTP 404 to a
request that carried the session id starts a new session (a new ``initialize`` without the id) and
the request is sent again.

:func:`handshake` settles the version.  With one version asked for it does what that version
does (``initialize`` + ``notifications/initialized``, or ``server/discover`` on 2026-07-28).
Without (``dual``, the default) it is the dual-era client of the 2026-07-28 pages: on stdio and
streamable HTTP it probes with ``server/discover`` (2026-07-28 ``_meta``) first; a DiscoverResult
listing 2026-07-28 -> stateless 2026-07-28; ``-32022`` UnsupportedProtocolVersion with
``supported`` -> a mutually supported version; any other error, an HTTP 4xx whose body is not such
an error, or no answer within min(timeout, 3 s) -> legacy: ``initialize`` asking for 2025-11-25.
Over legacy HTTP+SSE there is no probe.  An ``initialize`` answered with a version this client
does not support (2024-11-05 .. 2025-11-25 are) ends the session at once: no
``notifications/initialized``, no further request.

:func:`tour` is what ``mcp-reference-client`` does by default: the handshake, ping, every page of
tools/prompts/resources/templates, each tool called with arguments made from its input schema
(tools that may be destructive are left alone), each prompt got, the first resource read, the log
level set -- only what the server declared; every step is one line on the log, and the tour fails
on any step that fails and on anything invalid the server sent.

Faults (``reference_client.faults``) are injected here (the handshake and the extra messages),
in the core (answers, ids, ``_meta``) and in the links (shutdown, DELETE).
"""

from __future__ import annotations

from urllib.parse import quote

import math

import json
import re
from typing import Any, Callable

import anyio

from conformance.spec import errors as codes
from conformance.spec.versions import VERSIONS, spec
from conformance.wire.headers import header_value, mirrored_params, param_header_value, x_mcp_header_problems

from reference_client.core import MISSING, ClientCore
from reference_client.links import Garbage, HttpRefusal, Tweak, dumps

__all__ = ["Session", "StepFailed", "ClientQuit", "VersionUnsupported", "tour", "handshake", "sample_arguments",
           "DUAL", "LEGACY_VERSIONS", "MODERN_VERSIONS"]

DUAL = "dual"
LEGACY_VERSIONS = tuple(v for v in VERSIONS if not spec(v).stateless)
MODERN_VERSIONS = tuple(v for v in VERSIONS if spec(v).stateless)
PROBE_TIMEOUT = 3.0  # the dual-era probe waits min(timeout, this) for server/discover


class StepFailed(Exception):
    pass


class LeftAlone(StepFailed):
    """The server needs what this client does not do (a capability it did not declare)."""


class Refused(StepFailed):
    """A request was refused with an HTTP error status and no JSON-RPC answer."""

    def __init__(self, method: str, refusal: HttpRefusal) -> None:
        super().__init__(f"{method}: {refusal}")
        self.refusal = refusal


class ProbeTimeout(StepFailed):
    pass


class VersionUnsupported(StepFailed):
    """The server answered initialize with a version this client does not support: disconnect."""


class ClientQuit(Exception):
    """The client stops at once (faults exit-on-invalid-cancel, give-up-after-404)."""


def _same_id(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


_AGAIN: Any = object()  # the request must be sent again (in a new session)


SLOW_MODEL = 0.3  # seconds a sampling answer takes under the fault answer-cancelled


class Session:
    def __init__(self, core: ClientCore, link: Any, *, timeout: float, log: Callable[[str], None] | None = None) -> None:
        self.core = core
        self.link = link
        self.timeout = timeout
        self.log = log or (lambda line: None)
        self.transport: str = getattr(link, "transport", "stdio")
        self.core.transport = self.transport
        self.server_caps: dict[str, Any] = {}
        self.asked: str | None = None  # the version initialize asked for (legacy era)
        self.operating = False  # the handshake is done
        self._victim_done = False  # the first request after the handshake has been sent
        self._first_id: Any = None  # ... and its id
        self._init_id: Any = None  # the id of the (last) initialize request
        self._extras_done = False
        self._reinits = 0

    def faulty(self, name: str) -> bool:
        return self.core.faulty(name)

    async def call(self, method: str, params: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None,
                   timeout: float | None = None, probe: bool = False, progress: bool = False,
                   after_send: Callable[[dict[str, Any]], Any] | None = None, rid: Any = MISSING) -> dict[str, Any]:
        """Send a request and wait (``timeout``, default the session's) for its answer (``rid``:
        with that id instead of a fresh one -- a fault's)."""
        for _ in range(4):  # a session that ends (HTTP 404) is started again, and the request repeated
            if self.operating and getattr(self.link, "session_expired", False) and method != "initialize":
                await self._new_session("the server ended the session (HTTP 404)")
            victim = self.operating and not self._victim_done
            try:
                answer = await self._call(method, params, headers=headers, timeout=timeout, probe=probe,
                                          progress=progress, after_send=after_send, victim=victim, rid=rid)
            except StepFailed:
                if victim:
                    await self.extras()
                raise
            if victim:
                await self.extras()
            if answer is not _AGAIN:
                return answer
        raise StepFailed(f"{method}: the session ended (HTTP 404) again and again")

    async def _call(self, method: str, params: dict[str, Any] | None, *, headers: dict[str, str] | None,
                    timeout: float | None, probe: bool, progress: bool,
                    after_send: Callable[[dict[str, Any]], Any] | None, victim: bool, rid: Any = MISSING) -> Any:
        msg = self.core.request(method, params, progress=progress, rid=rid)
        rid = msg["id"]
        if victim:
            self._victim_done = True
            self._first_id = rid
            companions = self._victim_companions(msg)
            if companions:
                await self.link.send_together([msg, *companions])
            else:
                await self.link.send(msg, headers)
        else:
            await self.link.send(msg, headers)
        if after_send is not None:
            await after_send(msg)
        wait = self.timeout if timeout is None else timeout
        if self.faulty("no-timeout") and not probe and method != "initialize" and self.operating:
            wait = math.inf
        expired = False
        auth = getattr(self.link, "auth", None)  # time spent authorizing (OAuth) does not count
        spent = auth.spent() if auth is not None else 0.0
        deadline = anyio.current_time() + wait
        while True:
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as waited:
                while not expired:
                    for answer in await self._next():
                        if isinstance(answer, HttpRefusal):
                            if answer.rid is None or not _same_id(answer.rid, rid):
                                continue
                            self.core.abandon(rid)
                            if answer.expired and method != "initialize":
                                if self.faulty("give-up-after-404"):
                                    raise ClientQuit(f"{method}: the server ended the session (HTTP 404); giving up")
                                expired = True
                                break
                            raise Refused(method, answer)
                        aid = answer.get("id")
                        if _same_id(aid, rid):
                            return answer
                        if probe and aid is None and "error" in answer:
                            self.core.abandon(rid)
                            return answer  # an error about our probe the server could not attribute
            if not waited.cancelled_caught or auth is None or auth.spent() <= spent:
                break
            deadline += auth.spent() - spent
            spent = auth.spent()
        if expired:  # "the client MUST start a new session by sending a new InitializeRequest"
            await self._new_session(f"{method} was answered HTTP 404: the session is gone")
            return _AGAIN
        if probe:
            self.core.abandon(rid)  # a late answer is dropped; the server is taken as legacy
            raise ProbeTimeout(f"{method}: no answer within {wait:g} s")
        if method == "initialize":  # "The initialize request MUST NOT be cancelled by clients"
            self.core.abandon(rid)
            raise StepFailed(f"{method}: no response within {wait:g} s")
        if self.faulty("timeout-without-cancel"):
            self.core.abandon(rid)
            self.log(f"fault timeout-without-cancel: giving up on {method} without cancelling it")
            raise StepFailed(f"{method}: no response within {wait:g} s (not cancelled)")
        await self._cancel(rid, f"no response within {wait:g} s")
        raise StepFailed(f"{method}: no response within {wait:g} s (cancelled)")

    async def _cancel(self, rid: Any, reason: str) -> None:
        """Cancel our request ``rid``: on 2026-07-28 streamable HTTP by closing its response
        stream ("Closing the SSE response stream is the cancellation signal"), elsewhere with
        ``notifications/cancelled``."""
        if self.transport == "streamable-http" and self.core.stateless:
            self.core.abandon(rid)
            await self.link.abort(rid)
        else:
            await self.link.send(self.core.cancel(rid, reason))

    async def call_with_input(self, method: str, params: dict[str, Any], *, headers: dict[str, str] | None = None,
                              rounds: int = 5, progress: bool = False) -> dict[str, Any]:
        """``call``, answering InputRequiredResults (2026-07-28 multi round-trip requests): the
        request is sent again with ``inputResponses`` and the server's ``requestState``."""
        current = params
        rid: Any = MISSING
        retried_absent = False
        for _ in range(rounds):
            answer = await self.call(method, current, headers=headers, progress=progress, rid=rid)
            result = answer.get("result")
            absent = isinstance(result, dict) and "resultType" not in result and not retried_absent
            if absent and self.faulty("absent-result-type-incomplete"):
                # fault: a result without resultType is taken as incomplete and retried (once)
                self.log("fault absent-result-type-incomplete: a result without resultType is retried")
                current, retried_absent = {**params, "inputResponses": {}}, True
                continue
            if not (isinstance(result, dict) and result.get("resultType") == "input_required"):
                return answer
            if self.faulty("prefetch-url") and isinstance(result.get("inputRequests"), dict):
                for request in result["inputRequests"].values():  # fault: url mode input requests too
                    if isinstance(request, dict) and request.get("method") == "elicitation/create":
                        await self._prefetch(request)
            responses = self.core.input_responses(result.get("inputRequests"))
            if responses is None:
                raise LeftAlone(f"{method}: the server asks for input this client does not give ({sorted(result.get('inputRequests') or {})})")
            current = {**params, "inputResponses": responses}
            if self.faulty("mrtr-no-inputs"):
                current = dict(params)
                self.log("fault mrtr-no-inputs: the retry carries no inputResponses")
            if isinstance(result.get("requestState"), str):
                current["requestState"] = result["requestState"]
                if self.faulty("mrtr-modify-state"):
                    current["requestState"] += "-modified"
                    self.log("fault mrtr-modify-state: the requestState is changed in the retry")
            if self.faulty("mrtr-same-id"):
                rid = answer.get("id")
                self.log("fault mrtr-same-id: the retry reuses the id of the request it retries")
            if self.faulty("mrtr-state-leak") and isinstance(result.get("requestState"), str):
                leak = self.core.request("tools/list", {"requestState": result["requestState"]}, extra=True)
                self.core.abandon(leak["id"])
                self.log("fault mrtr-state-leak: the requestState goes on another request")
                await self.link.send(leak, quiet=True)
        raise StepFailed(f"{method}: still asking for input after {rounds} rounds")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.link.send(self.core.notification(method, params))

    async def _next(self) -> list[Any]:
        """The next thing that arrived: the responses in it (and HTTP refusals); requests in it
        are answered, a batch with a batch."""
        item = await self.link.receive()
        if isinstance(item, Garbage):
            self.core.violations.append(f"{item.where}: not JSON: {item.raw[:120]!r}")
            if item.message and not self.core.stateless:
                # JSON-RPC 2.0: "-32700 Parse error: Invalid JSON was received by the server" -- we
                # are the "Server" of what the MCP server sends; the id cannot be read, so null
                if self.faulty("ignore-parse-error"):
                    self.log("fault ignore-parse-error: text that is not JSON is dropped unanswered")
                else:
                    await self.link.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
                                         quiet=True)
            return []
        if isinstance(item, HttpRefusal):
            if item.rid is None:
                self.log(f"the server refused our {item.method or 'message'}: {item}")
                return []
            return [item]
        incoming = self.core.receive(item)
        if self.core.quit:
            raise ClientQuit(self.core.quit)
        items = incoming.items if incoming.kind == "batch" else [incoming]
        if self.faulty("answer-cancelled") and incoming.kind != "batch" and incoming.kind == "request" \
                and incoming.method == "sampling/createMessage" and incoming.reply is not None \
                and getattr(self.link, "_tg", None) is not None:
            # fault: the model call takes a moment, in the background, and a cancellation of the
            # request by the server does not stop its answer
            self.link._tg.start_soon(self._answer_later, incoming.reply)
            return []
        if self.faulty("prefetch-url") and incoming.kind == "request" and incoming.method == "elicitation/create":
            await self._prefetch(incoming.message)
        for i in items:
            if i.later is not None and getattr(self.link, "_tg", None) is not None:
                # a tasks/result of a task still working: answered once the task ends
                self.link._tg.start_soon(self._task_result_later, i.id, *i.later)
        replies = [i.reply for i in items if i.reply is not None
                   and not (i.kind == "request" and self.core.cancelled_by_server(i.id))]
        if replies:
            await self.link.send(replies if incoming.kind == "batch" else replies[0])
        return [i.message for i in items if i.kind == "response"]

    async def _prefetch(self, msg: Any) -> None:
        """Fault prefetch-url: GET the URL of a url mode elicitation before answering it (a link
        preview nobody asked for); only on the loopback interface, never the network."""
        from urllib.parse import urlsplit

        params = msg.get("params") if isinstance(msg, dict) else None
        url = params.get("url") if isinstance(params, dict) and params.get("mode") == "url" else None
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
            return
        with anyio.move_on_after(2.0):
            try:
                async with await anyio.connect_tcp(parts.hostname, parts.port or 80) as stream:
                    target = parts.path + (f"?{parts.query}" if parts.query else "")
                    await stream.send(f"GET {target or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode())
                    await stream.receive(1024)
            except Exception:  # noqa: BLE001 - a failed fetch is still a fetch
                pass
        self.log(f"fault prefetch-url: fetched {url}")

    async def _task_result_later(self, rid: Any, wait: float, tid: str) -> None:
        """``tasks/result`` blocks until the task is terminal ("MUST block the response until the
        task reaches a terminal status"): sent once it has ended (or been cancelled)."""
        from reference_client.tasks import TERMINAL

        with anyio.move_on_after(wait + 0.05):
            while self.core.tasks.tasks.get(tid) is not None \
                    and self.core.tasks.tasks[tid].status(self.core.tasks.clock()) not in TERMINAL:
                await anyio.sleep(0.02)
        if self.core.cancelled_by_server(rid):
            return
        try:
            await self.link.send(self.core.tasks.result_reply(rid, tid), quiet=True)
        except Exception:
            pass

    async def _answer_later(self, reply: dict[str, Any]) -> None:
        await anyio.sleep(SLOW_MODEL)
        if self.core.cancelled_by_server(reply.get("id")):
            self.log(f"fault answer-cancelled: answering {reply.get('id')!r}, which the server cancelled")
        try:
            await self.link.send(reply, quiet=True)
        except Exception:
            pass

    async def _new_session(self, why: str) -> None:
        """HTTP 404 on a request that carried the session id: "the client MUST start a new
        session by sending a new InitializeRequest without a session ID attached"."""
        self._reinits += 1
        if self._reinits > 3:
            raise StepFailed(f"{why}; a new session was started 3 times already")
        self.log(f"{why}; starting a new session")
        self.link.new_session()
        operating, self.operating = self.operating, False
        try:
            await legacy_handshake(self, self.asked or self.core.version, reinit=True)
        finally:
            self.operating = operating

    # -- faults: messages beside the strict ones -----------------------------------------------

    def _harmless(self, *, rid: Any = MISSING, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request any server answers (ping; server/discover on 2026-07-28) that we do not wait for."""
        method = "server/discover" if self.core.stateless else "ping"
        msg = self.core.request(method, params, rid=rid, extra=True)
        self.core.abandon(msg["id"])
        return msg

    def _victim_companions(self, victim: dict[str, Any]) -> list[dict[str, Any]]:
        """Messages sent in the same breath as the first request after the handshake."""
        if self.faulty("reuse-inflight-id"):
            self.core.expect_more(victim["id"])
            return [json.loads(json.dumps(victim))]  # the same request, the same id, in flight twice
        if self.faulty("shared-progress-token"):
            token = f"mcp-reference-client-shared-{victim['id']}"
            params = victim.setdefault("params", {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": token}
            return [self._harmless(params={"_meta": {"progressToken": token}})]
        return []

    async def extras(self) -> None:
        """The fault's one extra message, once, after the first request that follows the
        handshake (or at the end of the tour)."""
        if self._extras_done or not self.operating or self.core.fault is None:
            return
        self._extras_done = True
        for msg, tweak in self._extra_messages():
            self.log(f"fault {self.core.fault}: sending {(tweak.raw if tweak and tweak.raw is not None else dumps(msg))[:160]!r}")
            await self.link.send(msg, tweak=tweak, quiet=True)

    def _extra_messages(self) -> list[tuple[Any, Tweak | None]]:
        f = self.faulty
        modern = self.core.stateless
        if f("jsonrpc-1.0"):
            msg = self._harmless() if modern else self.core.notification("notifications/roots/list_changed")
            return [({**msg, "jsonrpc": "1.0"}, None)]
        if f("float-progress-token"):
            return [(self._harmless(params={"_meta": {"progressToken": 7.5}}), None)]
        if f("float-id"):
            rid = self.core.next_id(extra=True) + 0.5
            return [(self._harmless(rid=rid), None)]
        if f("null-id"):
            return [(self._harmless(rid=None), None)]
        if f("reuse-answered-id") and self._first_id is not None and not self.core.in_flight(self._first_id):
            return [(self._harmless(rid=self._first_id), None)]
        if f("reuse-initialize-id") and self._init_id is not None:
            return [(self._harmless(rid=self._init_id), None)]
        if f("cancel-unknown-id"):
            never = "mcp-reference-client-never-sent"  # this client's ids are integers
            return [(self.core.notification("notifications/cancelled", {"requestId": never, "reason": "mcp-reference-client fault"}), None)]
        if f("pretty-json"):
            msg = self._harmless()
            return [(msg, Tweak(raw=json.dumps(msg, indent=2).encode("utf-8") + b"\n"))]
        if f("stdin-garbage"):
            return [(None, Tweak(raw=b"mcp-reference-client: this line is not an MCP message\n"))]
        if f("stdio-write-response") or f("http-write-response"):
            return [({"jsonrpc": "2.0", "id": 0, "result": {"resultType": "complete"}}, None)]
        if f("put-message"):
            return [(self._harmless(), Tweak(http_method="PUT"))]
        if f("accept-json-only"):
            return [(self._harmless(), Tweak(set_headers={"Accept": "application/json"}))]
        if f("batch-stdio"):  # (and batch-sse) a batch of two pings on a version without batches
            msgs = [self._harmless(), self._harmless()]
            raw = dumps(msgs) + (b"\n" if self.transport == "stdio" else b"")
            return [(msgs, Tweak(raw=raw))]
        if f("post-empty-array"):
            return [(None, Tweak(raw=b"[]"))]
        if f("post-array"):
            msg = self._harmless()
            return [(msg, Tweak(raw=dumps([msg])))]
        if f("drop-session-id"):
            return [(self._harmless(), Tweak(drop_headers=("Mcp-Session-Id",)))]
        if f("no-version-header") or f("no-version-header-2026"):
            return [(self._harmless(), Tweak(drop_headers=("MCP-Protocol-Version",)))]
        if f("version-header-mismatch"):
            return [(self._harmless(), Tweak(set_headers={"MCP-Protocol-Version": "2099-01-01"}))]
        if f("no-method-header"):
            return [(self._harmless(), Tweak(drop_headers=("Mcp-Method", "Mcp-Name")))]
        if f("post-without-endpoint-query"):
            endpoint = getattr(self.link, "endpoint", None) or ""
            return [(self._harmless(), Tweak(url=endpoint.split("?", 1)[0]))]
        for fault, key, value in (("meta-key-empty-label", "acme..tools/trace", "on"),
                                  ("meta-key-name-trailing-hyphen", "com.example/trace-", "on"),
                                  ("meta-key-forward-dns", "example.com/trace", "on"),
                                  ("traceparent-malformed", "traceparent", "00-abc-01")):
            if f(fault):
                return [(self._harmless(params={"_meta": {key: value}}), None)]
        if f("extension-id-without-prefix"):
            from reference_client.core import CLIENT_CAPABILITIES_KEY

            msg = self._harmless()
            meta = msg["params"]["_meta"]
            meta[CLIENT_CAPABILITIES_KEY] = {**meta[CLIENT_CAPABILITIES_KEY], "extensions": {"tracing": {}}}
            return [(msg, None)]
        if f("meta-without-capabilities"):
            from reference_client.core import CLIENT_CAPABILITIES_KEY

            msg = self._harmless()
            del msg["params"]["_meta"][CLIENT_CAPABILITIES_KEY]
            return [(msg, None)]
        if f("undeclared-server-capability"):
            v = self.core.judged_version
            for cap, method, params in (("prompts", "prompts/list", None), ("resources", "resources/list", None),
                                        ("logging", "logging/setLevel", {"level": "info"}),
                                        ("completions", "completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}})):
                from conformance.spec.methods import C2S, lookup

                if cap not in self.server_caps and lookup(method, C2S, v) is not None:
                    msg = self.core.request(method, params, extra=True)
                    self.core.abandon(msg["id"])
                    return [(msg, None)]
        return []


async def handshake(session: Session, mode: str) -> None:
    """Settle the protocol version (``mode``: a version, or ``dual``); sets ``core.negotiated``,
    the link's headers and ``session.server_caps``."""
    core, log = session.core, session.log
    if mode != DUAL and spec(mode).stateless:
        await modern_handshake(session, mode, dual=False)
    elif mode != DUAL:
        await legacy_handshake(session, mode)
    elif session.transport == "sse":  # the legacy transport: no probe
        await legacy_handshake(session, LEGACY_VERSIONS[-1])
    else:
        core.use_version(MODERN_VERSIONS[-1])
        if session.faulty("initialize-before-discover"):
            try:
                await legacy_handshake(session, LEGACY_VERSIONS[-1])
            except VersionUnsupported:
                raise
            except StepFailed as exc:
                log(f"{exc}; probing with server/discover")
                await modern_handshake(session, MODERN_VERSIONS[-1], dual=True)
        else:
            await modern_handshake(session, MODERN_VERSIONS[-1], dual=True)
    session.operating = True


def _set_era(session: Session, version: str) -> None:
    link = session.link
    session.core.use_version(version)
    if hasattr(link, "new_session"):
        link.stateless = spec(version).stateless
        link.new_session()
    link.protocol_version = version if spec(version).stateless else None


def _newest(versions: Any) -> str | None:
    """The newest version of ``versions`` this client knows: modern before legacy."""
    known = [v for v in versions if v in VERSIONS] if isinstance(versions, list) else []
    known.sort(key=lambda v: (spec(v).stateless, VERSIONS.index(v)), reverse=True)
    return known[0] if known else None


def _unsupported_error(answer: Any) -> list[str] | None:
    """The ``supported`` list of a -32022 UnsupportedProtocolVersion error, None for anything
    else (the one modern error this client recognises as such)."""
    error = answer.get("error") if isinstance(answer, dict) and isinstance(answer.get("error"), dict) else None
    if error is None or error.get("code") != codes.UNSUPPORTED_PROTOCOL_VERSION:
        return None
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    supported = data.get("supported")
    return supported if isinstance(supported, list) else None


_MODERN_ERRORS = (codes.HEADER_MISMATCH, codes.MISSING_REQUIRED_CLIENT_CAPABILITY, codes.UNSUPPORTED_PROTOCOL_VERSION)


def _modern_error_code(answer: Any) -> int | None:
    """The code of a JSON-RPC error only a modern (2026-07-28) server sends, else None."""
    error = answer.get("error") if isinstance(answer, dict) and isinstance(answer.get("error"), dict) else None
    code = error.get("code") if error is not None else None
    if code == codes.UNSUPPORTED_PROTOCOL_VERSION:
        return code if _unsupported_error(answer) is not None else None
    return code if code in _MODERN_ERRORS else None


async def modern_handshake(session: Session, version: str, *, dual: bool, retried: bool = False) -> None:
    """``server/discover`` with the per-request ``_meta`` of ``version``.  ``dual``: this is the
    era probe (2026-07-28 basic/transports/stdio#backward-compatibility): anything but a
    DiscoverResult or a recognised modern error means a legacy server."""
    core, log = session.core, session.log
    _set_era(session, version)
    wait = min(session.timeout, PROBE_TIMEOUT) if dual else None
    try:
        answer = await session.call("server/discover", timeout=wait, probe=dual)
    except ProbeTimeout as exc:
        log(f"{exc}: a legacy server")
        await legacy_handshake(session, LEGACY_VERSIONS[-1])
        return
    except Refused as exc:
        if _modern_error_code(exc.refusal.parsed) is None:
            if not dual:
                raise
            log(f"server/discover: {exc.refusal} (not a modern error): a legacy server")
            await legacy_handshake(session, LEGACY_VERSIONS[-1])
            return
        answer = exc.refusal.parsed
    if "error" in answer:
        supported = _unsupported_error(answer)
        err = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        if supported is None and _modern_error_code(answer) is not None and not session.faulty("fallback-on-modern-400"):
            # streamable-http#backward-compatibility: "If the body contains a recognized modern JSON-RPC
            # error, the server speaks a modern version of MCP -- retry using the advertised supported
            # versions or correct the request, rather than falling back."
            if retried:
                raise StepFailed(f"server/discover: error {err.get('code')} {err.get('message')!r} (a modern server)")
            log(f"server/discover: error {err.get('code')}, a modern error: the server speaks 2026-07-28; sending it again")
            await modern_handshake(session, version, dual=False, retried=True)
            return
        if supported is None:
            if not dual or (session.faulty("fallback-only-on-32601") and err.get("code") != -32601):
                raise StepFailed(f"server/discover: error {err.get('code')} {err.get('message')!r}")
            log(f"server/discover: error {err.get('code')} (not a modern error): a legacy server")
            await legacy_handshake(session, LEGACY_VERSIONS[-1])
            return
        # "The client SHOULD select a mutually supported version from the supported list and
        # retry the request, or surface an error to the user if no compatible version exists"
        choice = _newest(supported)
        if session.faulty("retry-unlisted-version"):
            choice = version  # fault: the refused version again, whatever the list says
        if session.faulty("no-version-retry"):
            raise StepFailed(f"server/discover: {version} is unsupported (the server supports {supported!r}); "
                             "fault no-version-retry: giving up")
        if choice is None or (choice == version and retried):
            raise StepFailed(f"server/discover: {version} is unsupported and the server supports {supported!r}, "
                             f"none of which this client speaks ({', '.join(VERSIONS)})")
        log(f"server/discover: {version} was refused as unsupported; using {choice}")
        if spec(choice).stateless:
            await modern_handshake(session, choice, dual=False, retried=True)
        else:
            await legacy_handshake(session, choice)
        return
    result = answer.get("result") if isinstance(answer.get("result"), dict) else None
    versions = result.get("supportedVersions") if result is not None else None
    if not isinstance(versions, list):
        if not dual:
            raise StepFailed("server/discover: the result has no supportedVersions list")
        log("server/discover: not a DiscoverResult: a legacy server")
        await legacy_handshake(session, LEGACY_VERSIONS[-1])
        return
    if version not in versions:
        choice = _newest(versions)
        if choice is None or choice == version:
            raise StepFailed(f"server/discover: the server does not list {version} (it lists {versions!r}), "
                             "nor any version this client speaks")
        log(f"server/discover: the server lists {versions!r}; using {choice}")
        if spec(choice).stateless:
            await modern_handshake(session, choice, dual=False, retried=True)
        else:
            await legacy_handshake(session, choice)
        return
    core.negotiated = version
    session.link.protocol_version = version
    session.server_caps = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
    log(f"server/discover: {version} supported; capabilities {sorted(session.server_caps)}")


async def legacy_handshake(session: Session, asked: str, *, reinit: bool = False) -> None:
    """``initialize`` asking for ``asked``; the server's answer is accepted if this client speaks
    it (2024-11-05 .. 2025-11-25), and then spoken exactly; anything else ends the session at
    once ("If the client does not support the version in the server's response, it SHOULD
    disconnect")."""
    core, log, link = session.core, session.log, session.link
    _set_era(session, asked)
    session.asked = asked
    slow_wire = session.transport != "stdio"  # over HTTP a POST may overtake the one before it

    if session.faulty("request-before-initialize"):
        early = core.request("tools/list", extra=True)
        core.abandon(early["id"])
        log("fault request-before-initialize: tools/list before initialize")
        await link.send(early, quiet=True)
        if slow_wire:
            await anyio.sleep(0.2)

    async def during(msg: dict[str, Any]) -> None:
        if session.faulty("cancel-initialize"):
            if slow_wire:
                await anyio.sleep(0.2)
            log("fault cancel-initialize: cancelling initialize")
            await link.send(core.notification("notifications/cancelled", {"requestId": msg["id"], "reason": "mcp-reference-client fault"}), quiet=True)
        if session.faulty("request-during-initialize"):
            if slow_wire:
                await anyio.sleep(0.2)
            early = core.request("tools/list", extra=True)
            core.abandon(early["id"])
            log("fault request-during-initialize: tools/list before the initialize response")
            await link.send(early, quiet=True)

    answer = await session.call("initialize", core.initialize_params(), after_send=during)
    session._init_id = answer.get("id")
    if "error" in answer:
        err = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        raise StepFailed(f"initialize: error {err.get('code')} {err.get('message')!r}")
    result = answer.get("result")
    if not isinstance(result, dict):
        raise StepFailed("initialize: the result is not an object")
    offered = result.get("protocolVersion")
    if offered not in LEGACY_VERSIONS:
        if not session.faulty("accept-unsupported-version"):
            raise VersionUnsupported(
                f"initialize: the server answered protocol version {offered!r}, which this client does not support "
                f"({', '.join(LEGACY_VERSIONS)} with initialize); disconnecting")
        log(f"fault accept-unsupported-version: carrying on with {offered!r} as {asked}")
        offered = asked
    core.negotiated = offered
    if spec(offered).protocol_version_header and session.transport == "streamable-http":
        link.protocol_version = offered  # "MCP-Protocol-Version: <protocol-version>" on all subsequent requests
        if session.faulty("version-header-asked") and asked != offered and asked in LEGACY_VERSIONS:
            link.protocol_version = asked  # fault: the version it asked for, not the one negotiated
            log(f"fault version-header-asked: MCP-Protocol-Version {asked} (negotiated {offered})")
    session.server_caps = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
    if not session.faulty("no-initialized"):
        note = core.notification("notifications/initialized")
        if session.faulty("notification-with-id"):
            note["id"] = core.next_id(extra=True)
            core.abandon(note["id"])
        await link.send(note)
    if hasattr(link, "open_stream"):
        link.open_stream()
    info = result.get("serverInfo") if isinstance(result.get("serverInfo"), dict) else {}
    log(f"initialize{' (new session)' if reinit else ''}: {offered} with {info.get('name')} {info.get('version')}; "
        f"capabilities {sorted(session.server_caps)}")


def sample_arguments(schema: Any) -> dict[str, Any] | None:
    """Arguments for the required properties of a tool's input schema, or None when one of them
    cannot be made up (a nested object with required members, a pattern)."""
    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        sub = props.get(name) if isinstance(props.get(name), dict) else {}
        value = _sample(sub)
        if value is _NONE:
            return None
        out[name] = value
    for name, sub in props.items():  # optional numbers with a lower bound: the bound (a tool's
        # duration or count at its smallest keeps the tour short)
        if name not in out and isinstance(sub, dict) and sub.get("type") in ("integer", "number") and "minimum" in sub:
            out[name] = sub["minimum"]
    return out


_NONE = object()


def _sample(sub: dict[str, Any]) -> Any:
    typ = sub.get("type")
    if typ in ("integer", "number") and "enum" not in sub and "const" not in sub:
        return sub.get("minimum", 0)  # the smallest allowed: durations and counts stay short
    if "default" in sub:
        return sub["default"]
    if isinstance(sub.get("enum"), list) and sub["enum"]:
        return sub["enum"][0]
    if "const" in sub:
        return sub["const"]
    typ = sub.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), None)
    if typ == "string" and "pattern" not in sub and "format" not in sub:
        return "mcp-reference-client"
    if typ in ("integer", "number"):
        return sub.get("minimum", 0)
    if typ == "boolean":
        return False
    if typ == "array":
        return []
    if typ == "object" and not sub.get("required"):
        return {}
    return _NONE


async def _pages(session: Session, method: str, key: str, log: Callable[[str], None]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: Any = None
    first: int | None = None  # the size of the first page
    restarted = False  # once: a refused cursor sends the listing back to its beginning
    for _ in range(100):
        if cursor is not None and session.faulty("modify-cursor"):
            cursor = quote(cursor, safe="")  # fault: the opaque cursor URL-encoded ("a b" -> "a%20b")
            log(f"fault modify-cursor: sending the cursor as {cursor!r}")
        answer = await session.call(method, {"cursor": cursor} if cursor is not None else {})
        if "error" in answer and cursor is not None and not restarted and _modern(session):
            # "If a cursor becomes invalid (e.g., the server returns an error for a previously valid
            # cursor), the client SHOULD discard all cached pages and re-fetch from the beginning"
            # (2026-07-28 server/utilities/caching#interaction-with-pagination)
            if session.faulty("no-restart-on-invalid-cursor"):
                log(f"fault no-restart-on-invalid-cursor: {method}'s cursor was refused; giving up")
            else:
                log(f"{method}: the cursor was refused; listing again from the beginning")
                items, cursor, first, restarted = [], None, None, True
                continue
        result = _result(answer, method)
        page = result.get(key)
        if not isinstance(page, list):
            raise StepFailed(f"{method}: the result has no {key!r} list")
        items.extend(p for p in page if isinstance(p, dict))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            break
        if cursor == "" and session.faulty("empty-cursor-ends"):
            log(f"fault empty-cursor-ends: {method}'s nextCursor is the empty string; stopping")
            break
        if first is not None and len(page) < first and session.faulty("fixed-page-size"):
            log(f"fault fixed-page-size: {method} page of {len(page)} < {first}; stopping")
            break
        if method == "prompts/list" and session.faulty("no-prompt-pages"):
            log("fault no-prompt-pages: prompts/list's nextCursor ignored")
            break
        if first is None:
            first = len(page)
    log(f"{method}: {len(items)} {key}")
    return items


def _modern(session: Session) -> bool:
    version = session.core.negotiated or session.core.version
    return version in VERSIONS and spec(version).stateless


def _result(answer: dict[str, Any], method: str) -> dict[str, Any]:
    if "error" in answer:
        err = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        if err.get("code") == codes.MISSING_REQUIRED_CLIENT_CAPABILITY:
            raise LeftAlone(f"{method}: needs a client capability this tour does not declare ({err.get('message')!r})")
        raise StepFailed(f"{method}: error {err.get('code')} {err.get('message')!r}")
    result = answer.get("result")
    if not isinstance(result, dict):
        raise StepFailed(f"{method}: the result is not an object")
    return result


async def tour(session: Session, log: Callable[[str], None] | None = None, *, call_tools: bool = True,
               mode: str | None = None) -> list[str]:
    """The whole tour; returns the steps that failed (the server's violations are in the core).
    ``mode``: the version to ask for, or ``dual`` (default: the core's version)."""
    core = session.core
    log = log or session.log
    failed: list[str] = []

    async def step(name: str, coro: Any) -> Any:
        try:
            return await coro
        except LeftAlone as exc:
            log(f"{exc}: left alone")
            return None
        except StepFailed as exc:
            failed.append(str(exc))
            log(f"FAILED {exc}")
            return None

    await handshake(session, mode or core.version)
    caps = session.server_caps
    version = core.negotiated or core.version
    v = version
    if spec(v).ping:
        await step("ping", _ping(session, log))
    if "logging" in caps and spec(v).set_level:
        await step("logging/setLevel", _ok(session, "logging/setLevel", {"level": "info"}, log))
    if "tools" in caps:
        tools = await step("tools/list", _pages(session, "tools/list", "tools", log)) or []
        if session.faulty("fetch-network-ref"):
            await _fetch_network_refs(tools, log)
        if getattr(session.link, "stateless", False) and not session.faulty("keep-invalid-header-tools"):
            tools = _valid_header_tools(tools, log)  # streamable HTTP, 2026-07-28
        seen = len(core.notifications)
        scenario_args = _official_scenario_arguments(tools)
        if call_tools:
            for tool in tools:
                if any(n.get("method") == "notifications/tools/list_changed" for n in core.notifications[seen:]):
                    seen = len(core.notifications)  # the list changed: call only what is still there
                    names = {t.get("name") for t in await step("tools/list", _pages(session, "tools/list", "tools", log)) or []}
                    if tool.get("name") not in names:
                        continue
                await step(f"tools/call {tool.get('name')}", _call_tool(session, tool, log, scenario_args.get(tool.get("name"))))
    if "prompts" in caps:
        prompts = await step("prompts/list", _pages(session, "prompts/list", "prompts", log)) or []
        for prompt in prompts[:10]:
            args = {a["name"]: _prompt_argument(a["name"]) for a in prompt.get("arguments") or []
                    if isinstance(a, dict) and a.get("required") and isinstance(a.get("name"), str)}
            await step(f"prompts/get {prompt.get('name')}", _ok(session, "prompts/get", {"name": prompt.get("name"), "arguments": args}, log))
    if "resources" in caps:
        resources = await step("resources/list", _pages(session, "resources/list", "resources", log)) or []
        await step("resources/templates/list", _pages(session, "resources/templates/list", "resourceTemplates", log))
        if resources and isinstance(resources[0].get("uri"), str):
            await step("resources/read", _ok(session, "resources/read", {"uri": resources[0]["uri"]}, log))
    await session.extras()  # a fault's extra message, if no request followed the handshake
    return failed


def _valid_header_tools(tools: list[dict[str, Any]], log: Callable[[str], None]) -> list[dict[str, Any]]:
    """"Clients using the Streamable HTTP transport MUST reject tool definitions where any
    x-mcp-header value violates these constraints" (2026-07-28 server/tools#x-mcp-header): the tool
    is excluded, with a warning naming it and the reason."""
    kept = []
    for tool in tools:
        problems = x_mcp_header_problems(tool.get("inputSchema"))
        if problems:
            log(f"warning: tool {tool.get('name')!r} rejected: {problems[0]}")
        else:
            kept.append(tool)
    return kept


def _prompt_argument(name: str) -> str:
    """A value for a required prompt argument (they are strings without a schema): a URI where
    the name asks for one, else a plain word."""
    return "test://mcp-reference-client" if "uri" in name.lower() or "url" in name.lower() else "mcp-reference-client"


async def _ping(session: Session, log: Callable[[str], None]) -> None:
    result = _result(await session.call("ping"), "ping")
    if set(result) - {"_meta"}:
        raise StepFailed(f"ping: the result must be empty, got {result!r}")
    log("ping: empty result")


async def _ok(session: Session, method: str, params: dict[str, Any], log: Callable[[str], None]) -> None:
    _result(await session.call_with_input(method, params), method)
    log(f"{method} {params.get('name') or params.get('uri') or params.get('level') or ''}: ok".replace("  ", " "))


def _official_scenario_arguments(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Arguments the official runner's client scenarios ask for (MCP_CONFORMANCE_SCENARIO), by
    tool name: the tool calls of MCP_CONFORMANCE_CONTEXT, and for json-schema-2020-12-preservation
    the focal tool's inputSchema passed back verbatim to its echo tool."""
    import json
    import os

    out: dict[str, dict[str, Any]] = {}
    if not os.environ.get("MCP_CONFORMANCE_SCENARIO"):
        return out
    try:  # the scenario's context: {"toolCalls": [{"name": ..., "arguments": {...}}, ...]}
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError:
        context = {}
    for call in context.get("toolCalls") or [] if isinstance(context, dict) else []:
        if isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(call.get("arguments"), dict):
            out[call["name"]] = call["arguments"]
    if os.environ.get("MCP_CONFORMANCE_SCENARIO") == "json-schema-2020-12-preservation":
        focal = next((t for t in tools if t.get("name") == "json_schema_2020_12_tool"), None)
        if focal is not None:
            out["json_schema_echo"] = {"schema": focal.get("inputSchema")}
    return out


async def _fetch_network_refs(tools: list[Any], log: Callable[[str], None]) -> None:
    """Fault fetch-network-ref: every $ref of a tool's inputSchema that is an http(s) URL is fetched
    (as a validator that resolves remote references by default would)."""
    import httpx

    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = [node["$ref"]] if isinstance(node.get("$ref"), str) and node["$ref"].startswith(("http://", "https://")) else []
            return found + [r for v in node.values() for r in refs(v)]
        if isinstance(node, list):
            return [r for v in node for r in refs(v)]
        return []

    urls = [u for t in tools if isinstance(t, dict) for u in refs(t.get("inputSchema"))]
    if not urls:
        return
    async with httpx.AsyncClient(timeout=2.0) as client:
        for url in urls:
            log(f"fault fetch-network-ref: GET {url}")
            try:
                await client.get(url)
            except httpx.HTTPError:
                pass


async def _call_tool(session: Session, tool: dict[str, Any], log: Callable[[str], None],
                     given: dict[str, Any] | None = None) -> None:
    name = tool.get("name")
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    if annotations.get("destructiveHint") is True or annotations.get("readOnlyHint") is False and annotations.get("destructiveHint") is not False:
        log(f"tools/call {name}: left alone (may be destructive)")
        return
    execution = tool.get("execution") if isinstance(tool.get("execution"), dict) else {}
    support = execution.get("taskSupport") if execution.get("taskSupport") in ("optional", "required") else "forbidden"
    as_task = _as_task(session, support, log)
    if support == "required" and not as_task and not session.faulty("task-required-plain"):
        log(f"tools/call {name}: left alone (it must be called as a task, and the server does not declare "
            "tasks.requests.tools.call)")
        return
    args = given if given is not None else sample_arguments(tool.get("inputSchema"))
    if args is None:
        log(f"tools/call {name}: left alone (cannot make up its required arguments)")
        return
    if as_task:
        await _call_tool_as_task(session, name, args, log)
        return
    headers = _param_headers(session, tool, args)
    if session.faulty("name-no-base64") and isinstance(name, str) and header_value(name) != name:
        headers["Mcp-Name"] = "".join(c if " " <= c <= "~" else "?" for c in name).strip()
    answer = await session.call_with_input("tools/call", {"name": name, "arguments": args}, headers=headers, progress=True)
    error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
    if error.get("code") == codes.HEADER_MISMATCH and not session.faulty("no-header-mismatch-retry"):
        # 2026-07-28 streamable-http#client-behavior: "the client SHOULD call tools/list to check for
        # changes to the tool's inputSchema, then retry the original request with the appropriate headers"
        listed = {t.get("name"): t for t in await _pages(session, "tools/list", "tools", lambda _: None) if isinstance(t, dict)}
        fresh = listed.get(name)
        if fresh is None:
            raise LeftAlone(f"tools/call {name}: HeaderMismatch, and no longer listed")
        if x_mcp_header_problems(fresh.get("inputSchema")):
            raise LeftAlone(f"tools/call {name}: HeaderMismatch, and its x-mcp-header annotations are now invalid")
        log(f"tools/call {name}: HeaderMismatch; listed again, called with its current x-mcp-header annotations")
        headers = _param_headers(session, fresh, args)
        answer = await session.call_with_input("tools/call", {"name": name, "arguments": args}, headers=headers, progress=True)
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
    if error.get("code") == codes.INVALID_PARAMS:  # gone meanwhile? (a list change we were not told of)
        listed = {t.get("name") for t in await _pages(session, "tools/list", "tools", lambda _: None)}
        if name not in listed:
            raise LeftAlone(f"tools/call {name}: no longer listed")
    if error and isinstance(error.get("code"), int) and "result" not in answer:
        # a JSON-RPC error is an answer a tool call may get (the server's own trouble, or a tool
        # that ends in one: 2025-11-25's tasks/result returns that same error): not a violation
        log(f"tools/call {name}: error {error.get('code')} {error.get('message')!r}")
        return
    result = _result(answer, f"tools/call {name}")
    log(f"tools/call {name}: {'isError result' if result.get('isError') else 'ok'}")


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 tchar (what an HTTP library sends)
_SENTINEL_LIKE = re.compile(r"=\?base64\?.*\?=\Z", re.S)


def _param_headers(session: Session, tool: dict[str, Any], args: dict[str, Any]) -> dict[str, str]:
    """The Mcp-Param-{Name} headers of a tools/call (2026-07-28 streamable-http#client-behavior):
    the value at each x-mcp-header property's path, encoded (Value Encoding); none for a
    parameter absent or null."""
    headers: dict[str, str] = {}
    if session.faulty("no-param-headers"):
        return headers
    for path, header, _ in mirrored_params(tool.get("inputSchema")):
        if not _HEADER_NAME.fullmatch(header):  # (only a kept invalid tool has one)
            continue
        value: Any = args
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            if session.faulty("param-header-for-absent"):
                headers[f"Mcp-Param-{header}"] = "null"
            continue
        headers[f"Mcp-Param-{header}"] = _param_header(session, value)
    return headers


def _param_header(session: Session, value: Any) -> str:
    if isinstance(value, bool) and session.faulty("param-bool-titlecase"):
        return str(value)
    text = param_header_value(value)
    if not isinstance(value, str) or text == value:
        return text
    if _SENTINEL_LIKE.match(value) and value.isascii() and value.isprintable() and value == value.strip():
        if session.faulty("param-sentinel-plain"):
            return value
    elif session.faulty("param-no-base64"):
        return "".join(c if " " <= c <= "~" else "?" for c in value).strip()
    if session.faulty("sentinel-uppercase"):
        return "=?BASE64?" + text[len("=?base64?"):]
    return text


# -- tools called as tasks (2025-11-25 basic/utilities/tasks, the client as requestor) ----------------

TASK_TTL = 60_000
MIN_POLL = 0.05  # seconds: the least wait between two tasks/get when the server suggests none
MAX_POLL = 2.0  # ... and the most, whatever pollInterval says (the tour must end)
POLL_WAIT_MIN = 10.0  # seconds a task is polled for, at least (else 3 x --timeout)
NOTIFICATION_WAIT = 1.0  # fault task-wait-notification: how long it waits for a status notification


def _tools_call_tasks(session: Session) -> bool:
    caps = session.server_caps.get("tasks") if isinstance(session.server_caps.get("tasks"), dict) else {}
    requests = caps.get("requests") if isinstance(caps.get("requests"), dict) else {}
    tools = requests.get("tools") if isinstance(requests.get("tools"), dict) else {}
    return "call" in tools


def _as_task(session: Session, support: str, log: Callable[[str], None]) -> bool:
    """Call the tool as a task?  Only where the server declares tasks.requests.tools.call ("If a
    server's capabilities do not include tasks.requests.tools.call, then clients MUST NOT attempt
    to use task augmentation on that server's tools"), and then exactly for ``required`` tools
    ("clients MUST invoke the tool as a task"; ``optional`` ones are called plainly, which the page
    allows; ``forbidden`` or absent: "clients MUST NOT attempt to invoke the tool as a task")."""
    if not spec(session.core.judged_version).tasks:
        return False
    declared = _tools_call_tasks(session)
    if not declared:
        return session.faulty("task-ignore-capability") and support in ("optional", "required")
    if support == "required":
        return not session.faulty("task-required-plain")
    if support == "forbidden":
        return session.faulty("task-forbidden-augmented")
    return False


async def _call_tool_as_task(session: Session, name: Any, args: dict[str, Any], log: Callable[[str], None]) -> None:
    """A task-augmented tools/call: the CreateTaskResult, then tasks/get every pollInterval until the
    task is terminal ("Requestors SHOULD respect the pollInterval", "SHOULD continue polling until
    the task reaches a terminal status ... or until encountering the input_required status"), and
    tasks/result (at once on input_required: "it SHOULD preemptively call tasks/result").  The
    server's notifications/tasks/status are not waited for ("Requestors MUST NOT rely on receiving"
    them)."""
    answer = await session.call("tools/call", {"name": name, "arguments": args, "task": {"ttl": TASK_TTL}}, progress=True)
    error = answer.get("error") if isinstance(answer.get("error"), dict) else None
    if error is not None:
        log(f"tools/call {name} (as a task): error {error.get('code')} {error.get('message')!r}")
        return
    result = _result(answer, f"tools/call {name}")
    task = result.get("task")
    if not isinstance(task, dict):  # the server ran it as a plain call
        log(f"tools/call {name} (as a task): answered with the call's result, no task")
        return
    tid = task.get("taskId")
    if not isinstance(tid, str):
        raise StepFailed(f"tools/call {name}: the CreateTaskResult has no string taskId")
    log(f"tools/call {name}: task {tid} {task.get('status')}")
    if session.faulty("task-cancel-notification"):
        # fault: the task is cancelled with notifications/cancelled for its tools/call, not tasks/cancel
        await session.notify("notifications/cancelled", {"requestId": answer.get("id"), "reason": "mcp-reference-client fault"})
    if session.faulty("task-wait-notification"):
        await _wait_for_status_notification(session, tid, log)
        return
    status, interval = task.get("status"), task.get("pollInterval")
    deadline = anyio.current_time() + max(POLL_WAIT_MIN, 3 * session.timeout)
    polled = 0
    while status not in ("completed", "failed", "cancelled"):
        if status == "input_required" and not session.faulty("task-no-input-result"):
            log(f"tasks/get {tid}: input_required; asking for the result")
            break
        if anyio.current_time() >= deadline:
            raise StepFailed(f"tools/call {name}: task {tid} still {status} after {max(POLL_WAIT_MIN, 3 * session.timeout):g} s")
        if session.faulty("task-poll-once") and polled:
            log(f"fault task-poll-once: task {tid} is {status}; no more polling")
            return
        wait = interval / 1000 if isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval > 0 else MIN_POLL
        if session.faulty("task-fast-poll"):
            wait = 0.0
        await anyio.sleep(min(MAX_POLL, max(0.0 if session.faulty("task-fast-poll") else MIN_POLL, wait)))
        got = _result(await session.call("tasks/get", _task_params(session, tid)), "tasks/get")
        polled += 1
        status, interval = got.get("status"), got.get("pollInterval", interval)
    timeout = max(session.timeout, deadline - anyio.current_time())
    final = await session.call("tasks/result", _task_params(session, tid), timeout=timeout)
    if "error" in final:
        err = final.get("error") if isinstance(final.get("error"), dict) else {}
        log(f"tasks/result {tid}: error {err.get('code')} {err.get('message')!r}")
        return
    out = _result(final, "tasks/result")
    log(f"tools/call {name}: task {tid} {'isError result' if out.get('isError') else 'ok'}")


def _task_params(session: Session, tid: str) -> dict[str, Any]:
    """The params of tasks/get and tasks/result: the taskId, and no related-task metadata
    ("Requestors SHOULD NOT include io.modelcontextprotocol/related-task metadata in these
    requests"; fault task-meta-on-requests adds it)."""
    if session.faulty("task-meta-on-requests"):
        from conformance.spec.meta import RELATED_TASK_KEY

        return {"taskId": tid, "_meta": {RELATED_TASK_KEY: {"taskId": tid}}}
    return {"taskId": tid}


async def _wait_for_status_notification(session: Session, tid: str, log: Callable[[str], None]) -> None:
    """Fault task-wait-notification: no polling; a notifications/tasks/status is waited for a
    moment (reading what arrives), and the task is given up when none comes."""
    seen = len(session.core.notifications)
    with anyio.move_on_after(NOTIFICATION_WAIT):
        while True:
            for n in session.core.notifications[seen:]:
                params = n.get("params") if isinstance(n.get("params"), dict) else {}
                if n.get("method") == "notifications/tasks/status" and params.get("taskId") == tid:
                    log(f"fault task-wait-notification: task {tid} is {params.get('status')}")
                    return
            seen = len(session.core.notifications)
            await session._next()
    log(f"fault task-wait-notification: no status notification for task {tid}; giving up")
