"""Requests with deadlines over a link, and the tour of a server.

:class:`Session` sends a request and reads until its response arrives, answering the server's
requests meanwhile (unless the server cancelled them); a request unanswered within the timeout is
cancelled with ``notifications/cancelled`` (never ``initialize``) and reported.

:func:`tour` is what ``mcp-reference-client`` does by default: the handshake of the version asked
for, ping, every page of tools/prompts/resources/templates, each tool called with arguments made
from its input schema (tools that may be destructive are left alone), each prompt got, the first
resource read, the log level set; every step is one line on the log, and the tour fails on any
step that fails and on anything invalid the server sent.
"""

from __future__ import annotations

from typing import Any, Callable

import anyio

from conformance.spec import errors as codes
from conformance.spec.versions import VERSIONS, spec
from conformance.wire.headers import mirrored_params, param_header_value, x_mcp_header_problems

from reference_client.core import ClientCore
from reference_client.links import Garbage

__all__ = ["Session", "StepFailed", "tour", "sample_arguments"]


class StepFailed(Exception):
    pass


class Session:
    def __init__(self, core: ClientCore, link: Any, *, timeout: float) -> None:
        self.core = core
        self.link = link
        self.timeout = timeout

    async def call(self, method: str, params: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None,
                   timeout: float | None = None) -> dict[str, Any]:
        msg = self.core.request(method, params)
        rid = msg["id"]
        await self.link.send(msg, headers)
        wait = self.timeout if timeout is None else timeout
        with anyio.move_on_after(wait):
            while True:
                answer = await self._next()
                if answer is not None and answer.get("id") == rid and type(answer.get("id")) is type(rid):
                    return answer
        if method != "initialize":  # "The initialize request MUST NOT be cancelled by clients"
            await self.link.send(self.core.cancel(rid, f"no response within {wait:g} s"))
        raise StepFailed(f"{method}: no response within {wait:g} s (cancelled)")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.link.send(self.core.notification(method, params))

    async def _next(self) -> dict[str, Any] | None:
        item = await self.link.receive()
        if isinstance(item, Garbage):
            self.core.violations.append(f"{item.where}: not JSON: {item.raw[:120]!r}")
            return None
        incoming = self.core.receive(item)
        if incoming.kind == "request" and incoming.reply is not None and not self.core.cancelled_by_server(incoming.id):
            await self.link.send(incoming.reply)
        return item if incoming.kind == "response" else None


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
    for _ in range(100):
        answer = await session.call(method, {"cursor": cursor} if cursor is not None else {})
        result = _result(answer, method)
        page = result.get(key)
        if not isinstance(page, list):
            raise StepFailed(f"{method}: the result has no {key!r} list")
        items.extend(p for p in page if isinstance(p, dict))
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            break
    log(f"{method}: {len(items)} {key}")
    return items


class LeftAlone(StepFailed):
    """The server needs what this client does not do (a capability it did not declare)."""


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


async def tour(session: Session, log: Callable[[str], None], *, call_tools: bool = True) -> list[str]:
    """The whole tour; returns the steps that failed (the server's violations are in the core)."""
    core = session.core
    version = core.version
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

    # the handshake
    if spec(version).stateless:
        answer = await session.call("server/discover")
        retry = _supported_instead(answer, version)
        if retry is not None:
            # "The client SHOULD select a mutually supported version from the supported list and
            # retry the request" (2026-07-28 basic/versioning)
            log(f"server/discover: {version} was refused as unsupported; retrying with {retry}")
            core.version = version = retry
            session.link.protocol_version = retry if spec(retry).stateless else None
            if hasattr(session.link, "stateless"):
                session.link.stateless = spec(retry).stateless
            if not spec(retry).stateless:
                return await tour(session, log, call_tools=call_tools)
            answer = await session.call("server/discover")
        result = _result(answer, "server/discover")
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or version not in versions:
            raise StepFailed(f"server/discover: the server does not list {version} (it lists {versions!r})")
        core.negotiated = version
        session.link.protocol_version = version
        caps = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
        log(f"server/discover: {version} supported; capabilities {sorted(caps)}")
    else:
        answer = await session.call("initialize", core.initialize_params())
        result = _result(answer, "initialize")
        offered = result.get("protocolVersion")
        if offered not in VERSIONS:
            raise StepFailed(f"initialize: the server offered {offered!r}, a version this client does not support")
        core.negotiated = offered
        session.link.protocol_version = offered
        caps = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
        await session.notify("notifications/initialized")
        if hasattr(session.link, "open_stream"):
            session.link.open_stream()
        info = result.get("serverInfo") if isinstance(result.get("serverInfo"), dict) else {}
        log(f"initialize: {offered} with {info.get('name')} {info.get('version')}; capabilities {sorted(caps)}")
    v = core.negotiated or version
    if spec(v).ping:
        await step("ping", _ping(session, log))
    if "logging" in caps and not spec(v).stateless:
        await step("logging/setLevel", _ok(session, "logging/setLevel", {"level": "info"}, log))
    if "tools" in caps:
        tools = await step("tools/list", _pages(session, "tools/list", "tools", log)) or []
        if getattr(session.link, "stateless", False):  # streamable HTTP, 2026-07-28
            tools = _valid_header_tools(tools, log)
        seen = len(core.notifications)
        if call_tools:
            for tool in tools:
                if any(n.get("method") == "notifications/tools/list_changed" for n in core.notifications[seen:]):
                    seen = len(core.notifications)  # the list changed: call only what is still there
                    names = {t.get("name") for t in await step("tools/list", _pages(session, "tools/list", "tools", log)) or []}
                    if tool.get("name") not in names:
                        continue
                await step(f"tools/call {tool.get('name')}", _call_tool(session, tool, log))
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


def _supported_instead(answer: dict[str, Any], version: str) -> str | None:
    """The newest version both sides know, from an UnsupportedProtocolVersion error's
    ``data.supported`` (stateless versions first); None when the answer is no such error."""
    error = answer.get("error") if isinstance(answer.get("error"), dict) else None
    if error is None or error.get("code") != codes.UNSUPPORTED_PROTOCOL_VERSION:
        return None
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    offered = [v for v in data.get("supported") or [] if v in VERSIONS]  # ours too: retried once
    offered.sort(key=lambda v: (spec(v).stateless, VERSIONS.index(v)), reverse=True)
    return offered[0] if offered else None


async def _ping(session: Session, log: Callable[[str], None]) -> None:
    result = _result(await session.call("ping"), "ping")
    if set(result) - {"_meta"}:
        raise StepFailed(f"ping: the result must be empty, got {result!r}")
    log("ping: empty result")


async def _ok(session: Session, method: str, params: dict[str, Any], log: Callable[[str], None]) -> None:
    _result(await session.call(method, params), method)
    log(f"{method} {params.get('name') or params.get('uri') or params.get('level') or ''}: ok".replace("  ", " "))


async def _call_tool(session: Session, tool: dict[str, Any], log: Callable[[str], None]) -> None:
    name = tool.get("name")
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    if annotations.get("destructiveHint") is True or annotations.get("readOnlyHint") is False and annotations.get("destructiveHint") is not False:
        log(f"tools/call {name}: left alone (may be destructive)")
        return
    execution = tool.get("execution") if isinstance(tool.get("execution"), dict) else {}
    if execution.get("taskSupport") == "required":
        log(f"tools/call {name}: left alone (it must be called as a task)")
        return
    args = sample_arguments(tool.get("inputSchema"))
    if args is None:
        log(f"tools/call {name}: left alone (cannot make up its required arguments)")
        return
    headers = {}
    for path, header, _ in mirrored_params(tool.get("inputSchema")):
        value: Any = args
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            headers[f"Mcp-Param-{header}"] = param_header_value(value)
    answer = await session.call("tools/call", {"name": name, "arguments": args}, headers=headers)
    error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
    if error.get("code") == codes.INVALID_PARAMS:  # gone meanwhile? (a list change we were not told of)
        listed = {t.get("name") for t in await _pages(session, "tools/list", "tools", lambda _: None)}
        if name not in listed:
            raise LeftAlone(f"tools/call {name}: no longer listed")
    result = _result(answer, f"tools/call {name}")
    log(f"tools/call {name}: {'isError result' if result.get('isError') else 'ok'}")
