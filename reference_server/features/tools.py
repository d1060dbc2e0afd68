"""Tools: ``tools/list`` (paginated), ``tools/call``, ``notifications/tools/list_changed``.

Tool definitions and results are shaped per negotiated version: ``annotations`` from 2025-03-26,
``title``/``outputSchema``/``structuredContent`` from 2025-06-18, ``icons`` from 2025-11-25; content
types ``audio`` from 2025-03-26 and ``resource_link`` from 2025-06-18.  Tools whose content or
behaviour a version cannot express are not listed (and cannot be called) in that version.

Arguments are validated against the tool's ``inputSchema``: up to 2025-06-18 a mismatch is a
protocol error (-32602); from 2025-11-25 it is a tool execution error (``isError: true``), as the
tools page's "Error Handling" section classifies input validation errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from conformance.spec import errors as codes
from conformance.spec.versions import VERSIONS, spec

from reference_server.errors import RPCError
from reference_server.features.pagination import paginate

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["Tool", "ToolRegistry", "install", "capabilities", "text"]


def _vi(version: str) -> int:
    return VERSIONS.index(version)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def result(*content: dict[str, Any], is_error: bool = False, structured: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"content": list(content)}
    if is_error:
        out["isError"] = True
    if structured is not None:
        out["structuredContent"] = structured
    return out


ToolHandler = Callable[["RequestContext", dict[str, Any]], Any]


@dataclass
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: ToolHandler
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    since: str = VERSIONS[0]
    until: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields for the newest versions (icons, execution)
    uses_inputs: bool = False  # handler(ctx, args, inputs) may return InputRequired (sampling, elicitation, roots)
    task_support: str | None = None  # 2025-11-25 execution.taskSupport: "optional" | "required" (None: forbidden)
    # the 2026-07-28 tasks extension: "optional" (a task when the request declares the extension),
    # "required" (-32021 without it), None (never a task); ext_gather_first: MRTR input first
    ext_task: str | None = None
    ext_gather_first: bool = False
    _validator: Any = field(default=None, repr=False)

    def exists_in(self, version: str) -> bool:
        v = _vi(version)
        return _vi(self.since) <= v and (self.until is None or v <= _vi(self.until))

    def describe(self, version: str) -> dict[str, Any]:
        v = _vi(version)
        out: dict[str, Any] = {"name": self.name}
        if self.title and v >= _vi("2025-06-18"):
            out["title"] = self.title
        out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema is not None and v >= _vi("2025-06-18"):
            out["outputSchema"] = self.output_schema
        if self.annotations and v >= _vi("2025-03-26"):
            out["annotations"] = self.annotations
        if v >= _vi("2025-11-25"):
            out.update(self.extra)
        if self.task_support is not None and spec(version).tasks:
            out["execution"] = {"taskSupport": self.task_support}
        return out

    def argument_errors(self, arguments: dict[str, Any]) -> list[str]:
        if self._validator is None:
            from conformance.schema.validate import import_jsonschema

            js = import_jsonschema()
            Draft202012Validator, Draft7Validator = js.Draft202012Validator, js.Draft7Validator

            schema = self.input_schema
            cls = Draft7Validator if "draft-07" in str(schema.get("$schema", "")) else Draft202012Validator
            self._validator = cls(schema)
        return [f"{'/'.join(str(p) for p in e.absolute_path) or '(arguments)'}: {e.message}" for e in self._validator.iter_errors(arguments)]


class ToolRegistry:
    def __init__(self, server: "Server") -> None:
        self.server = server
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> Tool:
        self._tools[tool.name] = tool
        return tool

    def remove(self, name: str) -> bool:
        return self._tools.pop(name, None) is not None

    def get(self, name: str, version: str) -> Tool | None:
        t = self._tools.get(name)
        return t if t is not None and t.exists_in(version) else None

    def visible(self, version: str) -> list[Tool]:
        return [t for t in self._tools.values() if t.exists_in(version)]


async def _call_with_inputs(ctx: "RequestContext", tool: Tool, args: dict[str, Any]) -> Any:
    from reference_server.features.inputs import run_with_inputs

    def on_missing(missing: dict[str, Any]) -> dict[str, Any]:
        return result(text(f"Tool {tool.name} needs the client capability {', '.join(missing)}, which the client did not declare."), is_error=True)

    try:
        return await run_with_inputs(ctx, lambda inputs: tool.handler(ctx, args, inputs), on_missing=on_missing)
    except RPCError as err:
        if ctx.modern or err.code in (codes.INVALID_PARAMS,):
            raise
        # legacy: the client answered our request with an error (or not in time)
        return result(text(f"Tool {tool.name} failed: the client answered {err.code}: {err.message}"), is_error=True)


def capabilities(features: "Features", version: str) -> dict[str, Any]:
    return {"tools": {"listChanged": True}}


def install(server: "Server", features: "Features") -> None:
    registry: ToolRegistry = features.tools

    def tools_list(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        tools = registry.visible(ctx.version)
        page, nxt = paginate("tools/list", params, tools, server.config.page_size_for("tools/list"))
        out: dict[str, Any] = {"tools": [t.describe(ctx.version) for t in page]}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    def tools_call(ctx: "RequestContext", params: dict[str, Any]) -> Any:
        name = params.get("name")
        tool = registry.get(name, ctx.version) if isinstance(name, str) else None
        if tool is None:
            raise RPCError(codes.INVALID_PARAMS, f"Unknown tool: {name}", {"name": name})
        args = params.get("arguments")
        if args is None:
            args = {}
        problems = tool.argument_errors(args) if isinstance(args, dict) else ["arguments must be an object"]
        if problems:
            message = f"Invalid arguments for tool {tool.name}: " + "; ".join(problems)
            if _vi(ctx.version) >= _vi("2025-11-25"):
                return result(text(message), is_error=True)
            raise RPCError(codes.INVALID_PARAMS, message, {"name": tool.name, "problems": problems})
        if spec(ctx.version).tasks and not ctx.modern:
            as_task = isinstance(params.get("task"), dict)
            if as_task and tool.task_support not in ("optional", "required"):
                raise RPCError(codes.METHOD_NOT_FOUND, f"Method not found: tool {tool.name} does not support task-augmented execution (execution.taskSupport is forbidden)", {"name": tool.name, "taskSupport": "forbidden"})
            if not as_task and tool.task_support == "required":
                raise RPCError(codes.METHOD_NOT_FOUND, f"Method not found: tool {tool.name} must be called as a task (execution.taskSupport is required)", {"name": tool.name, "taskSupport": "required"})
            if as_task:
                from reference_server.features.tasks import start_task

                run = (lambda bg: _call_with_inputs(bg, tool, args)) if tool.uses_inputs else (lambda bg: tool.handler(bg, args))
                return start_task(ctx, run, failed=lambda res: isinstance(res, dict) and res.get("isError") is True)
        if ctx.modern and tool.ext_task is not None:
            from reference_server.features.tasks_ext import call_tool

            return call_tool(ctx, tool, args)
        if tool.uses_inputs:
            return _call_with_inputs(ctx, tool, args)
        return tool.handler(ctx, args)

    server.handlers["tools/list"] = tools_list
    server.handlers["tools/call"] = tools_call
