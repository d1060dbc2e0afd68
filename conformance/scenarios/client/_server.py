"""The suite's scenario server: a plain, full-featured MCP server played on the raw peer.

Every client scenario serves the client with :class:`ScenarioServer` and changes one behaviour
through its hooks (hold the first request, counter-offer a version, refuse with 404...).  It
answers what a small but complete server answers: ``initialize`` (the run's version: echoed when
the client asked for it, counter-offered otherwise), ``server/discover`` on 2026-07-28 (and, as a
legacy server would, an error before ``initialize`` on the other versions), ``ping``, tools (two
pages), prompts (three pages, the second's nextCursor the empty string), resources (pages of two,
one and one) and templates, logging, completion; ``-32601`` for anything else.
Results follow the run's schema (``resultType``, ``ttlMs``, ``cacheScope`` on 2026-07-28), so a
strict client finds nothing to complain about.  Built on the raw wire layer, never an SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import anyio

from conformance import __version__
from conformance.runtime.peer import ConnectionLost, ExpectTimeout, RawPeer
from conformance.spec.versions import VERSIONS, spec
from conformance.spec.meta import PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from conformance.wire.envelope import Envelope, Kind

__all__ = ["CURSOR", "REF_PROBE_PATH", "ScenarioServer", "Answer", "TOOL", "SERVER_INFO", "MODERN", "CACHEABLE", "unsupported_version", "request_meta"]

SERVER_INFO = {"name": "mcp-conformance-scenario-server", "version": __version__}
MODERN = [v for v in VERSIONS if spec(v).stateless]
LEGACY = [v for v in VERSIONS if not spec(v).stateless]
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
                       "resources/read"})
META_PV = PROTOCOL_VERSION_KEY  # (the name the client scenarios use)
#: the nextCursor of tools/list's first page: opaque, with what a sloppy client is tempted to
#: touch (upper case, a space, a colon, a slash, '='); only exactly this string gets page 2
CURSOR = "mcpc:Page 2/2="

TOOL = {
    "name": "add_numbers",
    "description": "Add two numbers (the official runner's fixture name, so its adapters can call it).",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]},
}
TOOL_2 = {
    "name": "echo",
    "description": "Echo a text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}
#: the path, under the suite's HTTP endpoint, that the ``$ref`` of the ref_probe tool names
#: (basic/index#ref-resolution: "Implementations MUST NOT automatically dereference $ref values
#: that resolve to a network URI"): a request for it is a client that fetched it
REF_PROBE_PATH = "mcp-conformance-ref/value.schema.json"


def ref_probe_tool(url: str) -> dict[str, Any]:
    """A read-only tool whose inputSchema has a property that is a ``$ref`` to ``url``."""
    return {"name": "ref_probe", "description": "A tool whose one parameter is defined by a network $ref.",
            "inputSchema": {"type": "object", "properties": {"value": {"$ref": url}}},
            "annotations": {"readOnlyHint": True}}


PROMPT = {"name": "greeting", "description": "A greeting.",
          "arguments": [{"name": "name", "description": "who to greet", "required": False}]}
RESOURCE = {"uri": "mcp-conformance://hello", "name": "hello", "mimeType": "text/plain"}
#: prompts/list in three pages of one; the second page's nextCursor is the empty string, a valid
#: cursor ("an empty string is a valid cursor and thus MUST NOT be treated as the end of results")
PROMPT_CURSOR = "mcpc:prompts 2"
PROMPT_PAGES: dict[Any, tuple[list[dict[str, Any]], str | None]] = {
    None: ([PROMPT], PROMPT_CURSOR),
    PROMPT_CURSOR: ([{"name": "farewell", "description": "A farewell."}], ""),
    "": ([{"name": "thanks", "description": "A thank-you."}], None),
}
#: resources/list in pages of different sizes (two, one, one): the short second page still has a
#: nextCursor ("Page size is determined by the server, and clients MUST NOT assume a fixed page size")
RESOURCE_PAGES: dict[Any, tuple[list[dict[str, Any]], str | None]] = {
    None: ([RESOURCE, {"uri": "mcp-conformance://hello/2", "name": "hello-2", "mimeType": "text/plain"}], "mcpc:resources 2"),
    "mcpc:resources 2": ([{"uri": "mcp-conformance://hello/3", "name": "hello-3", "mimeType": "text/plain"}], "mcpc:resources 3"),
    "mcpc:resources 3": ([{"uri": "mcp-conformance://hello/4", "name": "hello-4", "mimeType": "text/plain"}], None),
}
PROMPT_NAMES = {p["name"] for items, _ in PROMPT_PAGES.values() for p in items}
RESOURCE_URIS = {r["uri"] for items, _ in RESOURCE_PAGES.values() for r in items}
PAGED = {"prompts/list": ("prompts", PROMPT_PAGES), "resources/list": ("resources", RESOURCE_PAGES)}
TEMPLATE = {"uriTemplate": "mcp-conformance://items/{id}", "name": "item", "mimeType": "text/plain"}

Handler = Callable[[Envelope], Awaitable[Any]]


def _is_response(env: Envelope) -> bool:
    if env.kind in (Kind.RESULT, Kind.ERROR):
        return True
    value = env.value if isinstance(env.value, dict) else None
    return bool(value is not None and env.method is None and ("result" in value or "error" in value))


@dataclass
class Answer:
    """What to send for one request: a result, an error, or nothing (``hold``)."""

    result: Any = None
    error: dict[str, Any] | None = None
    hold: bool = False


def request_meta(env: Envelope) -> dict[str, Any]:
    """The ``params._meta`` object of a message ({} when there is none)."""
    params = env.params if isinstance(env.params, dict) else {}
    meta = params.get("_meta")
    return meta if isinstance(meta, dict) else {}


def _progress_token(env: Envelope) -> Any:
    """The request's ``_meta.progressToken`` (a string or an integer), or None."""
    token = request_meta(env).get("progressToken")
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


def unsupported_version(requested: Any, supported: list[str]) -> Answer:
    """-32022 UnsupportedProtocolVersion (2026-07-28 basic/versioning), listing ``supported``."""
    return Answer(error={"code": -32022, "message": "Unsupported protocol version",
                         "data": {"requested": requested if isinstance(requested, str) else "", "supported": list(supported)}})


@dataclass
class ScenarioServer:
    """Serve one client connection for one version until it goes away or ``stop`` is set."""

    peer: RawPeer
    version: str
    capabilities: dict[str, Any] | None = None  # default: tools, prompts, resources, logging(, completions)
    #: method -> coroutine(env) returning an Answer (or None for the default answer)
    hooks: dict[str, Handler] = field(default_factory=dict)
    #: called once with the first request after the handshake (the "victim"), before it is answered
    on_first_request: Handler | None = None
    #: never answer the first request (after ``on_first_request`` returns)
    drop_first: bool = False
    #: while ``on_first_request`` runs, every other real request waits for it
    hold_others: bool = True
    #: the version to answer initialize with (default: the run's version)
    offer: str | None = None
    #: consulted first for every request: an Answer overrides hooks and the default answer
    gate: Callable[[Envelope], Answer | None] | None = None
    #: before the result of a request that carries a progressToken, send notifications/progress for it
    progress: bool = False
    #: seconds the answer to a request that carries a progressToken is held: another request sent
    #: with the same token meanwhile is in flight with it, as the server sees it (over HTTP+SSE
    #: an answer sent at once can beat the client's next POST)
    progress_hold: float = 0.0
    #: 2026-07-28 over HTTP: the URL the ref_probe tool's $ref names (listed with add_numbers)
    ref_probe: str | None = None
    requests: list[Envelope] = field(default_factory=list)
    initialized: bool = False
    first_request: Envelope | None = None
    stop: Any = None  # anyio.Event

    def __post_init__(self) -> None:
        self.vspec = spec(self.version)
        if self.capabilities is None:
            caps: dict[str, Any] = {"tools": {"listChanged": False}, "prompts": {"listChanged": False},
                                    "resources": {"subscribe": False, "listChanged": False}, "logging": {}}
            if self.version != "2024-11-05":
                caps["completions"] = {}
            self.capabilities = caps
        if self.stop is None:
            self.stop = anyio.Event()
        self.handshake_done = anyio.Event()
        self.exited = anyio.Event()  # set by the run when the client process has exited
        self._inflight = 0
        self._idle = anyio.Event()
        self._held: Any = None  # set while the first request is held (on_first_request runs)

    # -- the loop ---------------------------------------------------------------------------

    async def serve(self, until: float) -> None:
        """Answer requests until the connection ends, ``stop`` is set, or ``until`` (monotonic).
        Answers under way when it stops (a held request, probes) run to their end: they are
        bounded by their own waits, which end early once the client has exited."""
        peer = self.peer
        async with anyio.create_task_group() as answers:
            async with anyio.create_task_group() as tg:
                async def stopper() -> None:
                    await self.stop.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(stopper)
                while True:
                    left = until - anyio.current_time()
                    if left <= 0:
                        break
                    try:
                        env = await peer.expect_message(lambda e: e.kind is Kind.REQUEST, what="a request from the client",
                                                        timeout=left)
                    except (ExpectTimeout, ConnectionLost):
                        break
                    self.requests.append(env)
                    self._inflight += 1
                    answers.start_soon(self._answer, env)
                tg.cancel_scope.cancel()
            with anyio.move_on_after(max(0.0, until - anyio.current_time())) as scope:
                while self._inflight:
                    await self._idle.wait()
            if scope.cancelled_caught:
                answers.cancel_scope.cancel()

    async def response(self, timeout: float) -> Envelope | None:
        """The next response from the client, or None after ``timeout`` or once the client is gone."""
        result: list[Envelope] = []
        async with anyio.create_task_group() as tg:
            async def wait() -> None:
                try:
                    result.append(await self.peer.expect_message(_is_response, what="a response from the client",
                                                                 timeout=timeout))
                except (ExpectTimeout, ConnectionLost):
                    pass
                tg.cancel_scope.cancel()

            async def gone() -> None:
                await self.exited.wait()
                await anyio.sleep(0.2)  # what it wrote before it went is still being read
                tg.cancel_scope.cancel()

            tg.start_soon(wait)
            tg.start_soon(gone)
        return result[0] if result else None

    async def _answer(self, env: Envelope) -> None:
        try:
            await self._answer_one(env)
        finally:
            self._inflight -= 1
            if not self._inflight:
                self._idle.set()
                self._idle = anyio.Event()

    async def _answer_one(self, env: Envelope) -> None:
        method = env.method or ""
        try:
            # the victim is a real request: a notification sent with an id (a client's fault) is
            # answered at once, or a client that does not read that POST's answer would stall
            victim = method not in ("initialize", "ping", "server/discover") and not method.startswith("notifications/")
            if victim and self.first_request is None \
                    and (self.handshake_done.is_set() or not self.vspec.handshake):
                self.first_request = env
                if self.on_first_request is not None:
                    self._held = anyio.Event()
                    try:
                        await self.on_first_request(env)
                    finally:
                        self._held.set()
                if self.drop_first:
                    return
            elif victim and self._held is not None and self.hold_others:
                # while the first request is held, so is every other one: a client that does not
                # wait for that one (it was a side request) cannot finish and leave meanwhile
                await self._held.wait()
            answer = self.gate(env) if self.gate is not None else None
            hook = self.hooks.get(method) if answer is None else None
            if hook is not None:
                answer = await hook(env)
            if answer is None:
                answer = self.default(env)
            if answer.hold:
                return
            if answer.error is not None:
                await self.peer.respond_error(env.id, answer.error.get("code"), answer.error.get("message"),
                                              *([answer.error["data"]] if "data" in answer.error else []))
            else:
                token = _progress_token(env)
                if token is not None and self.progress_hold and method != "initialize":
                    await anyio.sleep(self.progress_hold)
                if self.progress and token is not None and method != "initialize":
                    await self.peer.notify("notifications/progress", {
                        "progressToken": token, "progress": 1, "total": 1, "message": "mcp-conformance: done"})
                await self.peer.respond(env.id, answer.result)
            if method == "initialize" and answer.error is None:
                self.handshake_done.set()
        except (ConnectionLost, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        except Exception as exc:  # the connection went away mid-answer
            self.peer.transcript.note(f"answer to {method} not sent: {exc}")

    # -- default answers --------------------------------------------------------------------

    def _result(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        if self.vspec.stateless:
            result.setdefault("resultType", "complete")
            if method in CACHEABLE:
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "private")
        return result

    def default(self, env: Envelope) -> Answer:
        method = env.method or ""
        params = env.params if isinstance(env.params, dict) else {}
        v = self.vspec
        if method == "initialize":
            if v.stateless:
                requested = params.get("protocolVersion")
                return Answer(error={"code": -32022, "message": "Unsupported protocol version: this server speaks only "
                                     + ", ".join(MODERN),
                                     "data": {"requested": requested if isinstance(requested, str) else "", "supported": MODERN}})
            self.initialized = True
            return Answer(result={"protocolVersion": self.offer or self.version, "capabilities": self.capabilities,
                                  "serverInfo": dict(SERVER_INFO)})
        if method == "server/discover":
            if not v.stateless:  # a legacy server does not know the method
                return Answer(error={"code": -32601, "message": "Method not found: server/discover"})
            self.handshake_done.set()
            return Answer(result=self._result(method, {"supportedVersions": list(MODERN), "capabilities": self.capabilities,
                                                       "_meta": {SERVER_INFO_KEY: dict(SERVER_INFO)}}))
        if method == "ping" and v.ping:
            return Answer(result={})
        if v.stateless:
            requested = request_meta(env).get(META_PV)
            if requested not in MODERN:
                return unsupported_version(requested, MODERN)
        caps = self.capabilities or {}
        if method == "tools/list" and "tools" in caps:
            cursor = params.get("cursor", None)
            if cursor is None:
                first = [TOOL, ref_probe_tool(self.ref_probe)] if self.ref_probe else [TOOL]
                return Answer(result=self._result(method, {"tools": first, "nextCursor": CURSOR}))
            if cursor == CURSOR:
                return Answer(result=self._result(method, {"tools": [TOOL_2]}))
            # "Invalid cursors SHOULD result in an error with code -32602 (Invalid params)."
            return Answer(error={"code": -32602, "message": "Invalid cursor"})
        if method == "tools/call" and "tools" in caps:
            name = params.get("name")
            args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
            if name == "add_numbers":
                a, b = args.get("a"), args.get("b")
                if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
                    return Answer(result=self._result(method, {"content": [{"type": "text", "text": str(a + b)}]}))
                return Answer(result=self._result(method, {"content": [{"type": "text", "text": "a and b must be numbers"}],
                                                           "isError": True}))
            if name == "ref_probe" and self.ref_probe:
                return Answer(result=self._result(method, {"content": [{"type": "text", "text": "ok"}]}))
            if name == "echo":
                return Answer(result=self._result(method, {"content": [{"type": "text", "text": str(args.get("text", ""))}]}))
            return Answer(error={"code": -32602, "message": f"Unknown tool: {name}"})
        if method in PAGED and method.split("/")[0] in caps:
            key, pages = PAGED[method]
            cursor = params.get("cursor", None)
            if not (cursor is None or isinstance(cursor, str)) or cursor not in pages:  # a dict is no key (nor cursor)
                return Answer(error={"code": -32602, "message": "Invalid cursor"})
            items, nxt = pages[cursor]
            return Answer(result=self._result(method, {key: list(items), **({"nextCursor": nxt} if nxt is not None else {})}))
        if method == "prompts/get" and "prompts" in caps:
            if not isinstance(params.get("name"), str) or params["name"] not in PROMPT_NAMES:
                return Answer(error={"code": -32602, "message": "Unknown prompt"})
            who = (params.get("arguments") or {}).get("name", "world") if isinstance(params.get("arguments"), dict) else "world"
            return Answer(result=self._result(method, {"messages": [
                {"role": "user", "content": {"type": "text", "text": f"Hello, {who}!"}}]}))
        if method == "resources/templates/list" and "resources" in caps:
            return Answer(result=self._result(method, {"resourceTemplates": [TEMPLATE]}))
        if method == "resources/read" and "resources" in caps:
            uri = params.get("uri")
            if isinstance(uri, str) and (uri in RESOURCE_URIS or uri.startswith("mcp-conformance://items/")):
                return Answer(result=self._result(method, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]}))
            code = -32602 if v.stateless else -32002
            return Answer(error={"code": code, "message": "Resource not found", "data": {"uri": uri}})
        if method == "logging/setLevel" and "logging" in caps and v.set_level:
            return Answer(result=self._result(method, {}))
        if method == "completion/complete" and "completions" in caps:
            return Answer(result=self._result(method, {"completion": {"values": [], "hasMore": False}}))
        return Answer(error={"code": -32601, "message": f"Method not found: {method}"})
