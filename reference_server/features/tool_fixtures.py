"""The reference server's tools.

Our own: ``echo``, ``add``, ``add_structured`` (structured output), ``slow`` (progress,
cancellation), ``fail`` (a tool execution error), ``fail_rpc`` (a JSON-RPC error, as a plain call
and as a task: 2025-11-25's tasks/result returns that same error), ``sampling_with_tools`` (a
sampling tool loop, 2025-11-25 and later: tools offered only to a client that declared
``sampling.tools``, its tool uses answered with one tool result each).  The official runner's server scenarios call
fixture tools by fixed names (``test_simple_text``, ...); they are defined in
:mod:`reference_server.features.official_fixtures`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio

from conformance.spec import errors as codes

from reference_server.errors import RPCError
from reference_server.features.inputs import InputRequired, InputState
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


# -- a sampling tool loop (client/sampling#tools-in-sampling) ---------------------------------------

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The current weather of a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
WEATHER_PROMPT = "What is the weather like in Paris?"


def _sampling_tools_declared(ctx: "RequestContext") -> bool:
    sampling = ctx.client_capabilities.get("sampling")
    return isinstance(sampling, dict) and isinstance(sampling.get("tools"), dict)


def first_request(ctx: "RequestContext") -> dict[str, Any]:
    """The first sampling request: tools only for a client that declared ``sampling.tools``
    ("Servers MUST NOT send tool-enabled sampling requests to Clients that have not declared
    support for tool use")."""
    params: dict[str, Any] = {"messages": [{"role": "user", "content": {"type": "text", "text": WEATHER_PROMPT}}], "maxTokens": 100}
    if _sampling_tools_declared(ctx):
        params["tools"] = [WEATHER_TOOL]
    return {"method": "sampling/createMessage", "params": params}


def follow_up(first: dict[str, Any], answer: dict[str, Any], uses: list[dict[str, Any]]) -> dict[str, Any]:
    """The next sampling request after the client's tool uses: the conversation so far, then one
    user message of tool results only, one per tool use (client/sampling#tool-use-and-result-balance)."""
    results = [{"type": "tool_result", "toolUseId": u["id"], "content": [{"type": "text", "text": "18 degrees, partly cloudy"}]} for u in uses]
    messages = [*first["params"]["messages"], {"role": "assistant", "content": answer.get("content")}, {"role": "user", "content": results}]
    params = {**first["params"], "messages": messages}
    return {"method": "sampling/createMessage", "params": params}


def _tool_uses(answer: Any) -> list[dict[str, Any]]:
    content = answer.get("content") if isinstance(answer, dict) else None
    blocks = content if isinstance(content, list) else [content]
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def _sampling_with_tools(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    step = inputs.state.get("step", 0) if isinstance(inputs.state, dict) else 0
    answer = inputs.responses.get("llm")
    if step == 0 or not isinstance(answer, dict):
        return InputRequired({"llm": first_request(ctx)}, state={"step": 1})
    uses = _tool_uses(answer)
    if step == 1 and uses and _sampling_tools_declared(ctx):
        return InputRequired({"llm": follow_up(first_request(ctx), answer, uses)}, state={"step": 2})
    content = answer.get("content")
    reply = content.get("text") if isinstance(content, dict) else None
    return result(text(f"LLM response: {reply if reply is not None else json.dumps(content)}"))


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
            "sampling_with_tools",
            "Asks the client's LLM (sampling/createMessage) about the weather, offering a get_weather tool when the client declared sampling.tools, and sends the tool results back.",
            {"type": "object", "properties": {}, "additionalProperties": False},
            _sampling_with_tools,
            title="Sampling with tools",
            since="2025-11-25",
            uses_inputs=True,
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
