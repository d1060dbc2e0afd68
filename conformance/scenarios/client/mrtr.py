"""2026-07-28: what the server asks of the client inline (basic/patterns/mrtr, client/roots,
client/sampling, client/elicitation).

There are no server-to-client requests on 2026-07-28: a server that needs roots, a sampled
message or an elicitation answers the request with an ``InputRequiredResult`` whose
``inputRequests`` ask for them, and the client retries the request with ``inputResponses``.  The
scenario server answers the client's first ``tools/call``, ``prompts/get`` or ``resources/read``
so, asking for all three kinds, and serves the retry normally.  A client that answers an input
request of a capability it did not declare in ``_meta`` breaks the declaration rule of that
capability; roots it lists must be ``file://`` URIs.  The retry must echo the ``requestState``
exactly, under a new JSON-RPC id, and no other request may carry the ``requestState`` or the
``inputResponses`` (basic/patterns/mrtr, Client Requirements).  (Asking a client for what it did not
declare is itself a server's fault -- "Servers MUST NOT send an inputRequests that the client
has not declared support for" -- and is done here only to provoke that rule.)
"""

from __future__ import annotations

from typing import Any, Callable

from conformance.client.context import ClientContext
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import (
    META_CAPS,
    PROMPTS_RESPECT,
    W_REQUIREMENTS,
    judge_prompts_respected,
    wire_of,
)
from conformance.scenarios.client._run import Played, play
from conformance.scenarios.client._server import Answer, ScenarioServer, request_meta
from conformance.scenarios.client._urltrap import PREFETCH, UrlTrap
from conformance.spec.versions import LATEST
from conformance.wire.envelope import Envelope
from conformance.wire.rules import elicitation_accepted, non_file_roots, sampling_tool_use

DECLARE = {"roots": "client.roots.declare-2026", "sampling": "client.sampling.declare-2026",
           "elicitation": "client.elicitation.declare-2026"}
ELIGIBLE = ("tools/call", "prompts/get", "resources/read")
STATE = "mcp-conformance-state:eyJvcGFxdWUiOnRydWV9"
INPUTS = {
    "roots": {"method": "roots/list"},
    "sampling": {"method": "sampling/createMessage",
                 "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: hi"}}],
                            "maxTokens": 16}},
    "elicitation": {"method": "elicitation/create",
                    "params": {"mode": "form", "message": "mcp-conformance: may I ask?",
                               "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                                   "required": ["ok"]}}},
}


#: asked as well when the request's _meta declares sampling without tools (client.sampling.tools-declare)
TOOLS_KEY = "sampling_tools"
TOOLS_INPUT = {"method": "sampling/createMessage",
               "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: what time is it?"}}],
                          "maxTokens": 16, "tools": [{"name": "get_time", "inputSchema": {"type": "object", "properties": {}}}]}}
TOOLS_RULE = "client.sampling.tools-declare"

MRTR = ("client.mrtr.echo-state", "client.mrtr.new-id", "client.mrtr.retry-only", "client.mrtr.construct-inputs")
ELICITATION = ("client.elicitation.declare-mode", "client.elicitation.content-valid")


async def _play_first_call(ctx: ClientContext, answer: Callable[[ScenarioServer, Envelope], Answer | None],
                           also: Callable[[ScenarioServer], None] | None = None) -> tuple[Played, Envelope | None]:
    """Play the run, letting ``answer`` answer the client's tools/call, prompts/get and
    resources/read until it answers one (None: the default answer); that request is returned.
    ``also`` configures the server further."""
    first: list[Envelope] = []

    def configure(server: ScenarioServer) -> None:
        if also is not None:
            also(server)

        async def hook(env: Envelope) -> Answer | None:
            if first:
                return None
            got = answer(server, env)
            if got is not None:
                first.append(env)
            return got

        for method in ELIGIBLE:
            server.hooks[method] = hook

    # a client that only calls tools when told to: --call-command makes it call add_numbers
    played = await play(ctx, configure=configure, launch={"call": True})
    return played, (first[0] if first else None)


def _call_hint(ctx: ClientContext) -> str:
    return "" if ctx.target.call_command else " (give --call-command to make it call a tool)"


def _target(env: Any) -> tuple[Any, Any]:
    """What a request is about: its method and the tool, prompt or resource it names."""
    params = env.params if isinstance(env.params, dict) else {}
    return env.method, params.get("name", params.get("uri"))


@scenario(requirements=[*DECLARE.values(), "client.roots.file-uri", *MRTR, *ELICITATION, TOOLS_RULE, *W_REQUIREMENTS],
          role="client", versions=[LATEST], order=4)
async def input_requests(ctx: ClientContext) -> None:
    """The first tools/call, prompts/get or resources/read is answered with an InputRequiredResult
    asking for roots, a sampled message and an elicitation (and, from a client that declared
    sampling without tools, a sampled message with tools); the retry is served normally."""
    def ask(server: ScenarioServer, env: Envelope) -> Answer | None:
        if isinstance(env.params, dict) and "inputResponses" in env.params:
            return None
        declared = request_meta(env).get(META_CAPS)
        sampling = declared.get("sampling") if isinstance(declared, dict) else None
        inputs = dict(INPUTS)
        if isinstance(sampling, dict) and "tools" not in sampling:
            inputs[TOOLS_KEY] = TOOLS_INPUT  # a server must not ask this (the rule provoked is the client's)
        return Answer(result={"resultType": "input_required", "inputRequests": inputs, "requestState": STATE})

    played, asked = await _play_first_call(ctx, ask)
    if asked is None:
        for rid in [*DECLARE.values(), "client.roots.file-uri", *MRTR, *ELICITATION, TOOLS_RULE]:
            ctx.not_reached(rid, "the client made no tools/call, prompts/get or resources/read, so the server had no "
                                 f"request to ask for input on{_call_hint(ctx)}")
        return
    wire = wire_of(played.run)
    retries = [m for m in wire.requests() if _target(m.env) == _target(asked)
               and isinstance(m.env.params, dict) and isinstance(m.env.params.get("inputResponses"), dict)]
    # retries that carry the requestState but no answers to the inputRequests
    bare = [m for m in wire.requests() if m.env is not asked and _target(m.env) == _target(asked)
            and isinstance(m.env.params, dict) and m.env.params.get("requestState") == STATE
            and not isinstance(m.env.params.get("inputResponses"), dict)]
    if bare:
        m = bare[0]
        ctx.check("client.mrtr.construct-inputs", False, problem="RetryWithoutInputs",
                  message=f"the client retried {asked.method} (its requestState echoed) without inputResponses, although "
                          f"the InputRequiredResult asked for {', '.join(INPUTS)}",
                  expected={"inputResponses": {k: "..." for k in INPUTS}}, actual=m.env.params.get("inputResponses"),
                  entries=[m.entry], peer=played.run.peer)
    elif retries:
        ctx.check("client.mrtr.construct-inputs", True)
    else:
        ctx.not_reached("client.mrtr.construct-inputs", f"the client did not retry {asked.method}")
    _judge_state(ctx, wire, asked, retries, played.run.peer, also=bare)
    caps = request_meta(asked).get(META_CAPS)
    caps = caps if isinstance(caps, dict) else {}
    _judge_modes(ctx, caps, asked, played.run.peer)
    if not retries:
        for rid in [*DECLARE.values(), "client.roots.file-uri", *MRTR[:2], "client.elicitation.content-valid", TOOLS_RULE]:
            ctx.not_reached(rid, f"the client did not retry {asked.method} with inputResponses")
        return
    retry = retries[0]
    responses = retry.env.params["inputResponses"]
    for kind, rid in DECLARE.items():
        answered = kind in responses
        if kind == "elicitation" and answered:  # a decline or cancel is a refusal, not support
            answered = elicitation_accepted(responses[kind])
        ok = not answered or kind in caps
        ctx.check(rid, ok, problem=f"Undeclared{kind.capitalize()}",
                  message="" if ok else f"the client answered the {INPUTS[kind]['method']} input request without "
                                        f"declaring the {kind} capability in _meta",
                  expected=f"no {kind} answer unless {kind} is declared", actual=responses.get(kind),
                  entries=[retry.entry], peer=played.run.peer)
    _judge_content(ctx, caps, responses.get("elicitation"), retry, played.run.peer)
    _judge_tools(ctx, caps, responses, retry, played.run.peer)
    roots = responses.get("roots")
    listed = roots.get("roots") if isinstance(roots, dict) else None
    if isinstance(listed, list) and listed:
        bad = non_file_roots(roots)
        ctx.check("client.roots.file-uri", not bad, problem="RootNotFileUri",
                  message="" if not bad else f"root URI {bad[0]!r} is not a file:// URI",
                  expected="file:// URIs", actual=bad[0] if bad else None, entries=[retry.entry], peer=played.run.peer)
    else:
        ctx.not_reached("client.roots.file-uri", "the client listed no roots")


def _judge_modes(ctx: ClientContext, caps: dict[str, Any], asked: Envelope, peer: Any) -> None:
    """The elicitation object of the request's clientCapabilities names a mode, or is empty (form)."""
    rid = "client.elicitation.declare-mode"
    el = caps.get("elicitation")
    if not isinstance(el, dict):
        ctx.not_reached(rid, f"the client did not declare elicitation in the _meta of its {asked.method}")
        return
    ok = not el or "form" in el or "url" in el
    ctx.check(rid, ok, problem="NoElicitationMode",
              message="" if ok else f"the client's {asked.method} declares elicitation as {el!r} in its _meta: not empty "
                                    "(form mode) and naming neither form nor url",
              expected={"form": {}, "url": {}}, actual=el, entries=[asked], peer=peer)


def _judge_content(ctx: ClientContext, caps: dict[str, Any], answer: Any, retry: Any, peer: Any) -> None:
    """An accepted form's content is valid for its requestedSchema ('Clients SHOULD validate all
    responses against the provided schema')."""
    rid = "client.elicitation.content-valid"
    content = answer.get("content") if isinstance(answer, dict) and answer.get("action") == "accept" else None
    if not isinstance(caps.get("elicitation"), dict) or not isinstance(content, dict):
        ctx.not_reached(rid, "the client did not accept the form it was asked to fill (only accepted content is judged)")
        return
    from conformance.schema.validate import import_jsonschema

    schema = INPUTS["elicitation"]["params"]["requestedSchema"]
    errors = sorted(import_jsonschema().Draft202012Validator(schema).iter_errors(content), key=lambda e: list(e.path))
    ctx.check(rid, not errors, problem="ContentNotValidForSchema",
              message="" if not errors else f"the accepted content is not valid for the requestedSchema: {errors[0].message}"
                                             + (f" (at {'/'.join(map(str, errors[0].path))})" if errors[0].path else ""),
              expected=schema, actual=content, entries=[retry.entry], peer=peer)


def _judge_tools(ctx: ClientContext, caps: dict[str, Any], responses: dict[str, Any], retry: Any, peer: Any) -> None:
    """The answer to the sampling input request with tools, from a client that declared sampling
    without tools: no tool use."""
    sampling = caps.get("sampling")
    if not isinstance(sampling, dict) or "tools" in sampling:
        ctx.not_reached(TOOLS_RULE, "the client declared sampling.tools" if isinstance(sampling, dict)
                        else "the client did not declare sampling")
        return
    result = responses.get(TOOLS_KEY)
    result = result if isinstance(result, dict) else {}
    used = sampling_tool_use(result)
    ctx.check(TOOLS_RULE, not used, problem="UndeclaredToolUse",
              message="" if not used else "the client answered a sampling input request that offers tools with tool use, "
                                          "but did not declare sampling.tools in _meta",
              expected="a text answer, or no answer (tools not declared)", actual=result if used else None,
              entries=[retry.entry], peer=peer)


def _judge_state(ctx: ClientContext, wire: Any, asked: Envelope, retries: list[Any], peer: Any, also: list[Any] = ()) -> None:
    """The retry echoes the requestState exactly, under a new id; no other request carries the
    requestState or inputResponses (``also``: retries without inputResponses, judged elsewhere)."""
    from conformance.wire.envelope import id_repr, same_id

    if retries:
        retry = retries[0]
        echoed = retry.env.params.get("requestState")
        ok = isinstance(echoed, str) and echoed == STATE
        ctx.check("client.mrtr.echo-state", ok, problem="RequestStateNotEchoed",
                  message="" if ok else (f"the retry of {asked.method} carries requestState {echoed!r}" if echoed is not None
                                         else f"the retry of {asked.method} carries no requestState"),
                  expected=STATE, actual=echoed, entries=[retry.entry], peer=peer)
        same = same_id(retry.env.id, asked.id)
        ctx.check("client.mrtr.new-id", not same, problem="RetrySameId",
                  message="" if not same else f"the retry of {asked.method} reuses the id {id_repr(asked.id)} of the "
                                              "request it retries",
                  expected="a new JSON-RPC id", actual=retry.env.id, entries=[retry.entry], peer=peer)
    retried = {id(m.env) for m in [*retries, *also]}
    leaks = [m for m in wire.requests() if m.env is not asked and id(m.env) not in retried
             and isinstance(m.env.params, dict)
             and (m.env.params.get("requestState") == STATE or "inputResponses" in m.env.params)]
    if leaks:
        m = leaks[0]
        what = "requestState" if m.env.params.get("requestState") == STATE else "inputResponses"
        ctx.check("client.mrtr.retry-only", False, problem="InputStateOnOtherRequest",
                  message=f"the client's {m.env.method} {id_repr(m.env.id)}, which is not the retry of {asked.method}, "
                          f"carries the {what} of the InputRequiredResult",
                  expected="requestState and inputResponses only on the retry of the original request",
                  actual=m.env.params.get(what), entries=[m.entry], peer=peer)
    elif retries:
        ctx.check("client.mrtr.retry-only", True)
    else:
        ctx.not_reached("client.mrtr.retry-only", f"the client did not retry {asked.method} with inputResponses")


URL_INPUT_STATE = "mcp-conformance-state:url-input"


@scenario(requirements=[PREFETCH, PROMPTS_RESPECT, *W_REQUIREMENTS], role="client", versions=[LATEST], order=4)
async def url_input_request(ctx: ClientContext) -> None:
    """The server declares tools alone (no prompts/* request may come: client.prompts.respect-
    capabilities); the first tools/call (or resources/read) is answered with an InputRequiredResult
    asking for one url mode elicitation, whose url is a loopback trap of the suite: a client that
    did not accept it (declined, cancelled, or did not retry with it) must not have fetched it."""
    declared = {"tools": {"listChanged": False}}

    def tools_only(server: ScenarioServer) -> None:
        server.capabilities = dict(declared)

    async with UrlTrap() as trap:
        def ask(server: ScenarioServer, env: Envelope) -> Answer | None:
            if isinstance(env.params, dict) and "inputResponses" in env.params:
                return None
            request = {"method": "elicitation/create",
                       "params": {"mode": "url", "message": "mcp-conformance: please open this page to continue",
                                  "url": trap.url("input"), "elicitationId": "mcpc-url-input-1"}}
            return Answer(result={"resultType": "input_required", "inputRequests": {"elicitation": request},
                                  "requestState": URL_INPUT_STATE})

        played, asked = await _play_first_call(ctx, ask, also=tools_only)
        wire = wire_of(played.run)
        judge_prompts_respected(ctx, wire, declared, played.run.peer)
        if asked is None:
            ctx.not_reached(PREFETCH, "the client made no tools/call, prompts/get or resources/read, so no url mode "
                                      f"elicitation could be asked of it{_call_hint(ctx)}")
            return
        retries = [m for m in wire.requests() if _target(m.env) == _target(asked)
                   and isinstance(m.env.params, dict) and isinstance(m.env.params.get("inputResponses"), dict)]
        answer = retries[0].env.params["inputResponses"].get("elicitation") if retries else None
        action = answer.get("action") if isinstance(answer, dict) else None
        trap.answered("input", action if isinstance(action, str) else
                      "a retry without an answer to it" if retries else "no retry (the input request was not answered)")
    trap.judge(ctx)


#: resources/templates/list's nextCursor, refused the first time it comes back (it "becomes invalid")
STALE_CURSOR = "mcpc:templates 2"
INVALID_CURSOR = "client.pagination.invalid-cursor-refetch"


def _stale_cursor(refused: list[Envelope]) -> Callable[[ScenarioServer], None]:
    """resources/templates/list in two pages; the cursor of the second is refused (-32602) the first
    time the client sends it, and served afterwards."""
    def configure(server: ScenarioServer) -> None:
        async def hook(env: Envelope) -> Answer | None:
            answer = server.default(env)
            if not isinstance(answer.result, dict):
                return None
            cursor = env.params.get("cursor") if isinstance(env.params, dict) else None
            if cursor is None:
                answer.result["nextCursor"] = STALE_CURSOR
            elif cursor == STALE_CURSOR and not refused:
                refused.append(env)
                return Answer(error={"code": -32602, "message": "Invalid cursor: it is no longer valid"})
            elif cursor == STALE_CURSOR:
                answer.result["resourceTemplates"] = [{"uriTemplate": "mcp-conformance://notes/{id}", "name": "note",
                                                       "mimeType": "text/plain"}]
            else:
                return Answer(error={"code": -32602, "message": "Invalid cursor"})
            return answer

        server.hooks["resources/templates/list"] = hook
    return configure


def _judge_invalid_cursor(ctx: ClientContext, wire: Any, refused: list[Envelope], peer: Any) -> None:
    if not refused:
        ctx.not_reached(INVALID_CURSOR, "the client did not follow resources/templates/list to its second page")
        return
    t0 = wire.answered_at(refused[0].id)
    later = [m for m in wire.requests() if t0 is not None and m.t > t0]
    again = [m for m in later if m.env.method == "resources/templates/list"
             and not (isinstance(m.env.params, dict) and m.env.params.get("cursor") is not None)]
    if again:
        ctx.check(INVALID_CURSOR, True, message="after the error for its cursor, the client listed resource templates "
                                                "again from the beginning", peer=peer)
    elif later:
        ctx.check(INVALID_CURSOR, False, problem="NoRefetchAfterInvalidCursor",
                  message=f"resources/templates/list answered the cursor {STALE_CURSOR!r} (valid when given) with an "
                          f"error; the client went on ({later[0].env.method}) without listing again from the beginning",
                  expected="resources/templates/list without a cursor", actual=later[0].env.method,
                  entries=[later[0].entry], peer=peer)
    else:
        ctx.not_reached(INVALID_CURSOR, "the client sent nothing after the error for its cursor")


@scenario(requirements=["client.result-type.absent-complete", INVALID_CURSOR, *W_REQUIREMENTS], role="client",
          versions=[LATEST], order=4)
async def result_type_absent(ctx: ClientContext) -> None:
    """The first tools/call, prompts/get or resources/read is answered with its result but without
    ``resultType``, as a server of an earlier version would send it: the client must take it as
    complete, not retry the request with inputResponses or a requestState.  Beside it,
    resources/templates/list refuses the cursor of its second page the first time it comes back:
    the client should list the templates again from the beginning."""
    rid = "client.result-type.absent-complete"

    def bare(server: ScenarioServer, env: Envelope) -> Answer | None:
        answer = server.default(env)
        if not isinstance(answer.result, dict):
            return None  # an error answer: the next call is the one
        answer.result.pop("resultType", None)
        return answer

    refused: list[Envelope] = []
    played, answered = await _play_first_call(ctx, bare, also=_stale_cursor(refused))
    _judge_invalid_cursor(ctx, wire_of(played.run), refused, played.run.peer)
    if answered is None:
        ctx.not_reached(rid, "the client made no tools/call, prompts/get or resources/read that the server could "
                             f"answer without resultType{_call_hint(ctx)}")
        return
    wire = wire_of(played.run)
    t0 = wire.answered_at(answered.id)
    if t0 is None:
        ctx.not_reached(rid, f"the answer to {answered.method} did not reach the client")
        return
    retries = [m for m in wire.requests() if m.t > t0 and _target(m.env) == _target(answered)
               and isinstance(m.env.params, dict)
               and ("inputResponses" in m.env.params or "requestState" in m.env.params)]
    if retries:
        m = retries[0]
        ctx.check(rid, False, problem="AbsentResultTypeNotComplete",
                  message=f"{answered.method} was answered with a result without resultType; the client retried it "
                          "with " + ("inputResponses" if "inputResponses" in m.env.params else "a requestState"),
                  expected="the result taken as complete (no retry)", actual=m.env.method, entries=[m.entry],
                  peer=played.run.peer)
    else:
        ctx.check(rid, True, message=f"the result of {answered.method} without resultType was taken as complete "
                                     "(no retry)")
