"""The reference server's tools.

Our own: ``echo``, ``add``, ``add_structured`` (structured output), ``slow`` (progress,
cancellation), ``fail`` (a tool execution error), ``fail_rpc`` (a JSON-RPC error, as a plain call
and as a task: 2025-11-25's tasks/result returns that same error).  The official runner's server scenarios call
fixture tools by fixed names (``test_simple_text``, ...); they are defined in
:mod:`reference_server.features.official_fixtures`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio

from conformance.spec import errors as codes

from reference_server.errors import RPCError
from reference_server.features.tools import Tool, result, text

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.messages import RequestContext
    from reference_server.features.tools import ToolRegistry

__all__ = ["register"]


def _echo(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(text(args["text"]))


def _number(value: float) -> int | float:
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 else value


def _add(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(text(json.dumps(_number(args["a"] + args["b"]))))


def _add_structured(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    value = {"sum": _number(args["a"] + args["b"])}
    # "a tool that returns structured content SHOULD also return the serialized JSON in a
    # TextContent block" (server/tools#structured-content)
    return result(text(json.dumps(value)), structured=value)


async def _slow(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    seconds = float(args.get("seconds", 5.0))
    steps = int(args.get("steps", 5))
    for i in range(steps):
        await ctx.progress(i, steps, f"step {i} of {steps}")
        await anyio.sleep(seconds / steps)
    await ctx.progress(steps, steps, "done")
    return result(text(f"slept {seconds:g} seconds in {steps} steps"))


async def _slow_task(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return await _slow(ctx, args)


def _fail(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    message = args.get("message", "this tool always fails")
    return result(text(message), is_error=True)


def _fail_rpc(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    raise RPCError(codes.INTERNAL_ERROR, "Internal error: fail_rpc always ends in a JSON-RPC error")


_NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number", "description": "first addend"}, "b": {"type": "number", "description": "second addend"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def register(registry: "ToolRegistry") -> None:
    registry.add(
        Tool(
            "echo",
            "Returns the given text unchanged.",
            # the same definition as the other benchmark peers' echo (fixtures/peers)
            {"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo back"}}, "required": ["text"]},
            _echo,
            title="Echo",
            task_support="optional",
            annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
        )
    )
    registry.add(Tool("add", "Adds two numbers; the sum is returned as text.", _NUMBERS, _add, title="Add", task_support="optional", annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}))
    registry.add(
        Tool(
            "add_structured",
            "Adds two numbers; the sum is returned as structured content conforming to the output schema.",
            _NUMBERS,
            _add_structured,
            title="Add (structured)",
            output_schema={"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"], "additionalProperties": False},
            annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
            since="2025-06-18",
        )
    )
    registry.add(
        Tool(
            "slow",
            "Works for `seconds` (default 5), reporting progress in `steps` (default 5) when the request carries a progressToken; stops when cancelled.",
            {
                "type": "object",
                "properties": {
                    "seconds": {"type": "number", "minimum": 0, "maximum": 600},
                    "steps": {"type": "integer", "minimum": 1, "maximum": 1000},
                },
                "additionalProperties": False,
            },
            _slow,
            title="Slow",
            task_support="optional",
            annotations={"readOnlyHint": True, "openWorldHint": False},
        )
    )
    registry.add(
        Tool(
            "fail",
            "Always ends in a tool execution error (isError: true) with the given message.",
            {"type": "object", "properties": {"message": {"type": "string"}}, "additionalProperties": False},
            _fail,
            title="Fail",
            task_support="optional",
            annotations={"readOnlyHint": True, "openWorldHint": False},
        )
    )
    registry.add(
        Tool(
            "fail_rpc",
            "Always ends in a JSON-RPC error (-32603), also when called as a task (2025-11-25).",
            {"type": "object", "properties": {}, "additionalProperties": False},
            _fail_rpc,
            title="Fail (JSON-RPC error)",
            task_support="optional",
            annotations={"readOnlyHint": True, "openWorldHint": False},
            since="2025-11-25",
            until="2025-11-25",
        )
    )
    registry.add(
        Tool(
            "slow_task",
            "Like slow, but must be called as a task (execution.taskSupport: required; 2025-11-25).",
            {"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 600}, "steps": {"type": "integer", "minimum": 1, "maximum": 1000}}, "additionalProperties": False},
            _slow_task,
            title="Slow task",
            task_support="required",
            since="2025-11-25",
            until="2025-11-25",
        )
    )
