"""Fixture tools with the fixed names the official conformance runner's server scenarios call.

Each tool does exactly what the scenario's "Server Implementation Requirements" describe
(``@modelcontextprotocol/conformance``, ``official-conformance list``), in every version where
its content can be expressed.  Tools that need client input (sampling, elicitation, roots) are
written once, MRTR style (:mod:`reference_server.features.inputs`): 2026-07-28 answers with an
``InputRequiredResult``, earlier versions send the requests to the client.

Diagnostic hooks used by the runner's 2026-07-28 ``server-stateless`` scenario and by our suite:
``test_trigger_tool_change`` / ``test_trigger_prompt_change`` / ``test_trigger_resource_list_change``
(toggle a dynamic item and emit the ``list_changed`` notification) and ``touch_resource``
(change ``test://watched-resource`` and notify its subscribers).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio

from reference_server.messages import Outgoing
from reference_server.features.inputs import InputRequired, InputState, accepted, elicit, list_roots, sample
from reference_server.features.resources import PNG_1X1, WAV_SILENCE, Resource, resource_updated
from reference_server.features.tools import Tool, result, text

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.messages import RequestContext
    from reference_server.features.tools import ToolRegistry

__all__ = ["register"]

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_MODERN = "2026-07-28"


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


# -- content -------------------------------------------------------------------------------------


def _simple_text(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(text("This is a simple text response for testing."))


def _image(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result({"type": "image", "data": PNG_1X1, "mimeType": "image/png"})


def _audio(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result({"type": "audio", "data": WAV_SILENCE, "mimeType": "audio/wav"})


def _embedded(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result({"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}})


def _mixed(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(
        text("Multiple content types test:"),
        {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": json.dumps({"test": "data", "value": 123})}},
    )


def _error(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(text("This tool intentionally returns an error for testing"), is_error=True)


# -- the tasks extension (2026-07-28, the runner's tasks-* scenarios) ------------------------------


def _greet(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(text(f"Hello, {args.get('name', 'World')}!"))


async def _slow_compute(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    seconds = min(float(args.get("seconds", 1)), 600.0)
    await anyio.sleep(seconds)
    return result(text(f"{args.get('label', 'slow_compute')}: computed after {seconds:g} s"), structured={"seconds": seconds, "label": args.get("label", "")})


async def _failing_job(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    await anyio.sleep(0.5)
    return result(text("failing_job: the job failed (a tool execution error, isError: true)"), is_error=True)


async def _protocol_error_job(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    from reference_server.errors import RPCError
    from conformance.spec import errors as codes

    await anyio.sleep(0.05)
    raise RPCError(codes.INTERNAL_ERROR, "protocol_error_job: the job ended in a JSON-RPC internal error", {"job": "protocol_error_job"})


_CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _confirm_delete(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    filename = args.get("filename", "file")
    if "confirm" not in inputs.responses:
        return InputRequired({"confirm": elicit(ctx.version, f"Delete {filename}?", _CONFIRM)})
    content = accepted(inputs.responses["confirm"])
    if content is not None and content.get("confirm") is True:
        return result(text(f"Deleted {filename}"))
    return result(text(f"Kept {filename}: the deletion was not confirmed"))


def _multi_input(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    wanted = {"name": elicit(ctx.version, "What is your name?", _NAME), "confirm": elicit(ctx.version, "Proceed?", _CONFIRM)}
    if not all(k in inputs.responses for k in wanted):
        return InputRequired({k: v for k, v in wanted.items() if k not in inputs.responses})
    name = (accepted(inputs.responses["name"]) or {}).get("name")
    confirmed = (accepted(inputs.responses["confirm"]) or {}).get("confirm")
    return result(text(f"multi_input: name={name!r}, confirm={confirmed!r}"))


def _tool_with_task(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    content = accepted(inputs.responses.get("user_name"))
    if content is None or not isinstance(content.get("name"), str):
        return InputRequired({"user_name": elicit(ctx.version, "What is your name?", _NAME)})
    return result(text(f"Hello, {content['name']}! (gathered over MRTR, computed in a task)"))


# -- notifications during a call -------------------------------------------------------------------


async def _with_logging(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    await ctx.log("info", "Tool execution started", "test_tool_with_logging")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool processing data", "test_tool_with_logging")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool execution completed", "test_tool_with_logging")
    return result(text("Tool with logging executed successfully"))


async def _logging_tool(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    # 2026-07-28: no notifications/message unless the request carried _meta logLevel
    await ctx.log("info", "test_logging_tool ran", "test_logging_tool")
    return result(text("Logged at info (only if the request asked for a log level)."))


async def _with_progress(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    await ctx.progress(0, 100, "started")
    await anyio.sleep(0.05)
    await ctx.progress(50, 100, "half way")
    await anyio.sleep(0.05)
    await ctx.progress(100, 100, "done")
    return result(text("Tool with progress executed successfully"))


async def _reconnection(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    # Close this request's SSE connection (not the stream): the client reconnects with
    # Last-Event-ID (GET) and receives the result there (2025-11-25 transports#resumability).
    await ctx.sink(Outgoing(b"", "disconnect", related=ctx.id))
    await anyio.sleep(0.1)
    return result(text("Reconnection test completed: this result was delivered after the stream was closed."))


# -- client input (sampling, elicitation, roots) ----------------------------------------------------


def _sampling(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("llm")
    if not isinstance(resp, dict):
        return InputRequired({"llm": sample(args["prompt"], 100)})
    content = resp.get("content")
    reply = content.get("text") if isinstance(content, dict) else None
    return result(text(f"LLM response: {reply if reply is not None else json.dumps(content)}"))


def _elicitation(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("user")
    if not isinstance(resp, dict):
        schema = _obj({"username": {"type": "string", "description": "User's response"}, "email": {"type": "string", "description": "User's email address"}}, ["username", "email"])
        schema.pop("additionalProperties")
        return InputRequired({"user": elicit(ctx.version, args["message"], schema)})
    return result(text(f"User response: action={resp.get('action')}, content={json.dumps(resp.get('content', {}))}"))


def _elicitation_defaults(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("defaults")
    if not isinstance(resp, dict):
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your name", "default": "John Doe"},
                "age": {"type": "integer", "description": "Your age", "default": 30},
                "score": {"type": "number", "description": "Your score", "default": 95.5},
                "status": {"type": "string", "description": "Your status", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verified?", "default": True},
            },
        }
        return InputRequired({"defaults": elicit(ctx.version, "Please review the pre-filled values.", schema)})
    return result(text(f"Elicitation completed: action={resp.get('action')}, content={json.dumps(resp.get('content', {}))}"))


def _elicitation_enums(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("enums")
    if not isinstance(resp, dict):
        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "title": "Untitled single", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "title": "Titled single",
                    "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}],
                },
                "legacyEnum": {"type": "string", "title": "Legacy titled", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "title": "Untitled multi", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {
                    "type": "array",
                    "title": "Titled multi",
                    "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]},
                },
            },
        }
        return InputRequired({"enums": elicit(ctx.version, "Please choose.", schema)})
    return result(text(f"Elicitation completed: action={resp.get('action')}, content={json.dumps(resp.get('content', {}))}"))


def _roots(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("roots")
    if not isinstance(resp, dict) or not isinstance(resp.get("roots"), list):
        return InputRequired({"roots": list_roots()})
    uris = [r.get("uri") for r in resp["roots"] if isinstance(r, dict)]
    return result(text(f"Client roots: {json.dumps(uris)}"))


# 2026-07-28 InputRequiredResult fixtures ---------------------------------------------------------


def _ir_elicitation(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    content = accepted(inputs.responses.get("user_name"))
    if content is None or not isinstance(content.get("name"), str):
        return InputRequired({"user_name": elicit(ctx.version, "What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})})
    return result(text(f"Hello, {content['name']}!"))


def _ir_sampling(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("capital_question")
    if not isinstance(resp, dict) or not isinstance(resp.get("content"), (dict, list)):
        return InputRequired({"capital_question": sample("What is the capital of France?", 100)})
    content = resp["content"]
    reply = content.get("text") if isinstance(content, dict) else json.dumps(content)
    return result(text(f"The model said: {reply}"))


def _ir_roots(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("client_roots")
    if not isinstance(resp, dict) or not isinstance(resp.get("roots"), list):
        return InputRequired({"client_roots": list_roots()})
    uris = [r.get("uri") for r in resp["roots"] if isinstance(r, dict)]
    return result(text(f"Client roots: {', '.join(str(u) for u in uris)}"))


def _ir_request_state(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    content = accepted(inputs.responses.get("confirm"))
    if content is None or inputs.state != {"step": "confirm"}:
        return InputRequired(
            {"confirm": elicit(ctx.version, "Please confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})},
            state={"step": "confirm"},
        )
    return result(text(f"state-ok: confirmed={content.get('ok')}"))


def _ir_multiple(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    r = inputs.responses
    name = accepted(r.get("user_name"))
    greeting = r.get("greeting")
    roots = r.get("client_roots")
    if name is None or not isinstance(greeting, dict) or not isinstance(roots, dict) or inputs.state != {"step": "all"}:
        return InputRequired(
            {
                "user_name": elicit(ctx.version, "What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                "greeting": sample("Generate a greeting", 50),
                "client_roots": list_roots(),
            },
            state={"step": "all"},
        )
    return result(text(f"Got name={name.get('name')!r}, a greeting, and {len(roots.get('roots') or [])} root(s)."))


def _ir_multi_round(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    state = inputs.state if isinstance(inputs.state, dict) else {}
    if state.get("step") == 2:
        color = accepted(inputs.responses.get("step2"))
        if color is not None and isinstance(color.get("color"), str):
            return result(text(f"Hello {state.get('name')}, your favorite color is {color['color']}."))
        return InputRequired(
            {"step2": elicit(ctx.version, "Step 2: What is your favorite color?", {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]})},
            state=state,
        )
    name = accepted(inputs.responses.get("step1"))
    if state.get("step") == 1 and name is not None and isinstance(name.get("name"), str):
        return InputRequired(
            {"step2": elicit(ctx.version, "Step 2: What is your favorite color?", {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]})},
            state={"step": 2, "name": name["name"]},
        )
    return InputRequired(
        {"step1": elicit(ctx.version, "Step 1: What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})},
        state={"step": 1},
    )


def _ir_tampered(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    # the state is HMAC-protected by the framework: a tampered requestState never reaches here
    content = accepted(inputs.responses.get("confirm"))
    if content is None or inputs.state != {"grant": "confirm"}:
        return InputRequired(
            {"confirm": elicit(ctx.version, "Please confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})},
            state={"grant": "confirm"},
        )
    return result(text("state verified"))


def _ir_capabilities(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    caps = ctx.client_capabilities
    wanted: dict[str, dict[str, Any]] = {}
    if isinstance(caps.get("sampling"), dict):
        wanted["sample"] = sample("Say hello.", 20)
    if isinstance(caps.get("elicitation"), dict):
        wanted["ask"] = elicit(ctx.version, "Say hello.", {"type": "object", "properties": {"hello": {"type": "string"}}})
    if isinstance(caps.get("roots"), dict):
        wanted["roots"] = list_roots()
    if not wanted:
        wanted["sample"] = sample("Say hello.", 20)  # the framework answers -32021 (sampling not declared)
    if all(k in inputs.responses for k in wanted):
        return result(text(f"Received input for: {', '.join(sorted(wanted))}"))
    return InputRequired(wanted)


def _missing_capability(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    resp = inputs.responses.get("sample")
    if not isinstance(resp, dict):
        return InputRequired({"sample": sample("This tool needs sampling.", 20)})
    return result(text("sampling was available"))


async def _streaming_elicitation(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    content = accepted(inputs.responses.get("answer"))
    if content is None:
        await ctx.progress(0, 1, "waiting for the user")
        return InputRequired({"answer": elicit(ctx.version, "Please answer.", {"type": "object", "properties": {"answer": {"type": "string"}}})})
    return result(text(f"answer={content.get('answer')}"))


def _custom_header(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    return result(text(f"region={args['region']} query={args.get('query', '')} priority={args.get('priority', '')}"))


async def _url_elicitation_tool(ctx: "RequestContext", args: dict[str, Any], inputs: InputState) -> Any:
    import secrets

    resp = inputs.responses.get("link")
    if not isinstance(resp, dict):
        eid = secrets.token_hex(8)
        params: dict[str, Any] = {"mode": "url", "message": "Please open this page to connect your account.", "url": f"https://example.com/connect?elicitationId={eid}"}
        if ctx.version == "2025-11-25":
            params["elicitationId"] = eid  # removed in 2026-07-28 (requestState correlates instead)
        return InputRequired({"link": {"method": "elicitation/create", "params": params}}, state={"elicitationId": eid})
    eid = (inputs.state or {}).get("elicitationId")
    if ctx.version == "2025-11-25" and eid and resp.get("action") == "accept":
        # "Servers MAY send a notifications/elicitation/complete notification when an out-of-band
        # interaction started by URL mode elicitation is completed" (client/elicitation)
        await ctx.notify("notifications/elicitation/complete", {"elicitationId": eid})
    return result(text(f"URL elicitation finished: action={resp.get('action')}"))


def _url_elicitation_required(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
    from reference_server.errors import RPCError
    import secrets

    elicitation = ctx.client_capabilities.get("elicitation")
    if not (isinstance(elicitation, dict) and "url" in elicitation):
        return result(text("This tool needs URL mode elicitation, which the client did not declare."), is_error=True)
    eid = secrets.token_hex(8)
    raise RPCError(
        -32042,
        "This request requires more information.",
        {"elicitations": [{"mode": "url", "elicitationId": eid, "url": f"https://example.com/authorize?elicitationId={eid}", "message": "Authorization is required to continue."}]},
    )


# -- list changes and resource updates -----------------------------------------------------------


def register(registry: "ToolRegistry") -> None:
    server = registry.server
    features = server.features
    add = registry.add

    add(Tool("test_simple_text", "Returns simple text content.", _NO_ARGS, _simple_text, title="Simple text"))
    add(Tool("test_image_content", "Returns image content (a 1x1 PNG).", _NO_ARGS, _image, title="Image content"))
    add(Tool("test_audio_content", "Returns audio content (a short WAV).", _NO_ARGS, _audio, title="Audio content", since="2025-03-26"))
    add(Tool("test_embedded_resource", "Returns an embedded resource.", _NO_ARGS, _embedded, title="Embedded resource"))
    add(Tool("test_multiple_content_types", "Returns text, image and resource content.", _NO_ARGS, _mixed, title="Mixed content"))
    add(Tool("test_tool_with_logging", "Sends three info log messages while it runs.", _NO_ARGS, _with_logging, title="Logging tool"))
    add(Tool("test_error_handling", "Always returns a tool execution error.", _NO_ARGS, _error, title="Error tool"))
    add(Tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100 when asked (progressToken).", _NO_ARGS, _with_progress, title="Progress tool", task_support="optional"))
    add(Tool("test_sampling", "Asks the client's LLM (sampling/createMessage) with the given prompt.", _obj({"prompt": {"type": "string", "description": "The prompt to send to the LLM"}}, ["prompt"]), _sampling, title="Sampling", uses_inputs=True))
    add(
        Tool(
            "test_elicitation",
            "Asks the user (elicitation/create) for a username and an email address.",
            _obj({"message": {"type": "string", "description": "The message to show the user"}}, ["message"]),
            _elicitation,
            title="Elicitation",
            since="2025-06-18",
            uses_inputs=True,
            task_support="optional",  # 2025-11-25: as a task it waits in input_required for the answer
        )
    )
    add(Tool("test_elicitation_sep1034_defaults", "Elicitation whose schema has defaults for every primitive type (SEP-1034).", _NO_ARGS, _elicitation_defaults, title="Elicitation defaults", since="2025-11-25", uses_inputs=True))
    add(Tool("test_elicitation_sep1330_enums", "Elicitation with all five enum schema variants (SEP-1330).", _NO_ARGS, _elicitation_enums, title="Elicitation enums", since="2025-11-25", uses_inputs=True))
    add(
        Tool(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"},
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": False,
            },
            lambda ctx, args: result(text(f"Received: {json.dumps(args, sort_keys=True)}")),
            title="JSON Schema 2020-12",
            since="2025-11-25",
        )
    )
    add(Tool("test_url_elicitation", "Asks the user to visit a URL (URL mode elicitation); 2025-11-25 then sends notifications/elicitation/complete.", _NO_ARGS, _url_elicitation_tool, title="URL elicitation", since="2025-11-25", uses_inputs=True))
    add(Tool("test_url_elicitation_required", "Fails with URLElicitationRequiredError (-32042) when the client supports URL mode elicitation.", _NO_ARGS, _url_elicitation_required, title="URL elicitation required", since="2025-11-25", until="2025-11-25"))
    add(Tool("test_reconnection", "Closes its SSE connection before answering; the result arrives after the client reconnects with Last-Event-ID.", _NO_ARGS, _reconnection, title="Reconnection", since="2025-11-25", until="2025-11-25"))
    add(Tool("list_roots", "Asks the client for its roots (roots/list) and lists them.", _NO_ARGS, _roots, title="List roots", uses_inputs=True))

    async def _ping_client(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
        answer = await ctx.request("ping", None)
        return result(text(f"the client answered ping with {json.dumps(answer)}"))

    add(Tool("ping_client", "Sends ping to the client and reports its answer.", _NO_ARGS, _ping_client, title="Ping the client", until="2025-11-25"))

    # list changes and resource updates
    async def _toggle_tool(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
        present = registry.remove("dynamic_tool")
        if not present:
            add(Tool("dynamic_tool", "A tool that comes and goes (test_trigger_tool_change).", _NO_ARGS, lambda c, a: result(text("dynamic")), title="Dynamic tool"))
        await features.subscriptions.list_changed("notifications/tools/list_changed")
        return result(text(f"dynamic_tool {'removed' if present else 'added'}; notifications/tools/list_changed sent"))

    async def _toggle_prompt(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
        from reference_server.features.prompts import Prompt

        present = features.prompts.remove("dynamic_prompt")
        if not present:
            features.prompts.add(Prompt("dynamic_prompt", "A prompt that comes and goes (test_trigger_prompt_change).", lambda c, a: [{"role": "user", "content": {"type": "text", "text": "dynamic"}}]))
        await features.subscriptions.list_changed("notifications/prompts/list_changed")
        return result(text(f"dynamic_prompt {'removed' if present else 'added'}; notifications/prompts/list_changed sent"))

    async def _toggle_resource(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
        res = features.resources
        present = res.resources.pop("test://dynamic-resource", None) is not None
        if not present:
            res.add(Resource("test://dynamic-resource", "dynamic-resource", "A resource that comes and goes.", "text/plain", lambda: {"text": "dynamic"}))
        await features.subscriptions.list_changed("notifications/resources/list_changed")
        return result(text(f"test://dynamic-resource {'removed' if present else 'added'}; notifications/resources/list_changed sent"))

    async def _touch(ctx: "RequestContext", args: dict[str, Any]) -> dict[str, Any]:
        uri = args.get("uri", "test://watched-resource")
        if uri == "test://watched-resource":
            features.resources.watched_version += 1
        elif not features.resources.exists(uri):
            return result(text(f"unknown resource {uri}"), is_error=True)
        await resource_updated(server, uri)
        return result(text(f"{uri} updated; notifications/resources/updated sent to its subscribers"))

    add(Tool("test_trigger_tool_change", "Adds or removes dynamic_tool and sends notifications/tools/list_changed.", _NO_ARGS, _toggle_tool, title="Change the tool list"))
    add(Tool("test_trigger_prompt_change", "Adds or removes dynamic_prompt and sends notifications/prompts/list_changed.", _NO_ARGS, _toggle_prompt, title="Change the prompt list"))
    add(Tool("test_trigger_resource_list_change", "Adds or removes test://dynamic-resource and sends notifications/resources/list_changed.", _NO_ARGS, _toggle_resource, title="Change the resource list"))
    add(Tool("touch_resource", "Changes a resource (default test://watched-resource) and notifies its subscribers.", _obj({"uri": {"type": "string", "description": "the resource to change"}}), _touch, title="Touch a resource"))

    # 2026-07-28 tasks extension fixtures (the runner's tasks-* scenarios)
    add(Tool("greet", "Says hello to name; never a task.", _obj({"name": {"type": "string"}}), _greet, title="Greet", since=_MODERN))
    add(Tool("slow_compute", "Sleeps seconds, then answers; a task when the request declares the tasks extension.", _obj({"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}}), _slow_compute, title="Slow compute", since=_MODERN, ext_task="optional"))
    add(Tool("failing_job", "Runs only as a task (-32021 without the tasks extension); ends in a tool execution error.", _NO_ARGS, _failing_job, title="Failing job", since=_MODERN, ext_task="required"))
    add(Tool("protocol_error_job", "Ends in a JSON-RPC internal error; a task when the request declares the tasks extension.", _NO_ARGS, _protocol_error_job, title="Protocol error job", since=_MODERN, ext_task="optional"))
    add(Tool("confirm_delete", "Asks for confirmation (elicitation) before deleting filename; a task when the request declares the tasks extension.", _obj({"filename": {"type": "string"}}), _confirm_delete, title="Confirm delete", since=_MODERN, uses_inputs=True, ext_task="optional"))
    add(Tool("multi_input", "Asks two questions at once (two elicitations); a task when the request declares the tasks extension.", _NO_ARGS, _multi_input, title="Multiple inputs", since=_MODERN, uses_inputs=True, ext_task="optional"))
    add(Tool("test_tool_with_task", "Gathers user_name over MRTR, then runs as a task (-32021 without the tasks extension).", _NO_ARGS, _tool_with_task, title="MRTR then task", since=_MODERN, uses_inputs=True, ext_task="required", ext_gather_first=True))

    # 2026-07-28 fixtures
    add(Tool("test_logging_tool", "Logs at info level; only requests that set _meta logLevel receive it.", _NO_ARGS, _logging_tool, title="Logging (per request)", since=_MODERN))
    add(Tool("test_missing_capability", "Needs the client's sampling capability (-32021 when it is not declared).", _NO_ARGS, _missing_capability, title="Needs sampling", since=_MODERN, uses_inputs=True))
    add(Tool("test_streaming_elicitation", "Reports progress, then asks for input with an InputRequiredResult.", _NO_ARGS, _streaming_elicitation, title="Streaming elicitation", since=_MODERN, uses_inputs=True))
    for name, fn, desc in (
        ("test_input_required_result_elicitation", _ir_elicitation, "InputRequiredResult with one elicitation (user_name)."),
        ("test_input_required_result_sampling", _ir_sampling, "InputRequiredResult with one sampling request (capital_question)."),
        ("test_input_required_result_list_roots", _ir_roots, "InputRequiredResult with one roots/list request (client_roots)."),
        ("test_input_required_result_request_state", _ir_request_state, "InputRequiredResult with inputRequests and requestState; the result says state-ok."),
        ("test_input_required_result_multiple_inputs", _ir_multiple, "InputRequiredResult with elicitation, sampling and roots requests."),
        ("test_input_required_result_multi_round", _ir_multi_round, "Two rounds of InputRequiredResult with evolving requestState."),
        ("test_input_required_result_tampered_state", _ir_tampered, "Integrity-protected requestState; a tampered one is rejected with -32602."),
        ("test_input_required_result_capabilities", _ir_capabilities, "Only asks for input the client declared a capability for."),
    ):
        add(Tool(name, desc, _NO_ARGS, fn, since=_MODERN, uses_inputs=True))
    add(
        Tool(
            "test_custom_header",
            "Its region and priority parameters are mirrored into the Mcp-Param-Region / Mcp-Param-Priority headers (x-mcp-header).",
            {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Region; mirrored into Mcp-Param-Region", "x-mcp-header": "Region"},
                    "query": {"type": "string", "description": "Not mirrored"},
                    "priority": {"type": "integer", "description": "Optional; mirrored into Mcp-Param-Priority", "x-mcp-header": "Priority"},
                },
                "required": ["region"],
            },
            _custom_header,
            title="Custom header",
            since=_MODERN,
        )
    )
