"""What the server sends the client: requests, notifications, batches (2024-11-05 .. 2025-11-25).

basic (responses, notifications, batching), basic/utilities/ping, basic/utilities/cancellation,
client/roots, client/sampling, client/elicitation, basic/lifecycle#operation.  The scenario server
declares only ``tools`` and holds the ``initialize`` result a moment; when the client makes its
first request after the handshake (whatever it is: ``tools/list`` for most clients), the server
holds that answer and first sends, one at a time: ``ping``, an unknown method, ``roots/list``,
``sampling/createMessage`` (on 2025-11-25 also with tools to a client without ``sampling.tools``, and
with tool loops the page forbids to a client with it), ``elicitation/create``, then notifications (a log message, a list
change, two invalid cancellations) followed by a barrier ``ping``, on 2025-03-26 a batch of two
pings, a ``ping`` cancelled right after it was sent, then a barrier ``ping``; a request the server
cancels, then a barrier; and last a ``ping`` that is not JSON (a trailing comma: -32700, or from a
lenient parser an answer), then a barrier ``ping``.  Over HTTP they travel on the SSE stream of the held request (legacy SSE: the SSE stream).
"""

from __future__ import annotations

from typing import Any

import anyio

from conformance.client.context import ClientContext
from conformance.runtime.peer import ConnectionLost
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import PROMPTS_RESPECT, W_REQUIREMENTS, judge_prompts_respected
from conformance.scenarios.client._run import play
from conformance.scenarios.client._server import ScenarioServer
from conformance.scenarios.client._urltrap import PREFETCH, UrlTrap
from conformance.spec.versions import LATEST_STATEFUL, spec
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr
from conformance.wire.rules import elicitation_accepted, non_file_roots, sampling_tool_use

ECHO = ("client.basic.response-id-echo", "client.basic.result-id-echo", "client.basic.error-id-echo")
SHAPE = ("client.basic.result-xor-error", "client.basic.error-code-integer")
P_REQUIREMENTS = (
    "client.ping.respond", *ECHO, *SHAPE, "client.jsonrpc.method-not-found",
    "client.roots.declare", "client.roots.unsupported-error", "client.roots.file-uri",
    "client.sampling.declare", "client.elicitation.declare",
    "client.basic.notification-no-response", "client.cancel.invalid-ignored", "client.basic.batch-receive",
    "client.lifecycle.respect-negotiation", "client.lifecycle.respect-negotiation-should", "client.cancel.race",
    "client.cancel.no-response", "client.elicitation.undeclared-mode-error", "client.elicitation.defaults",
    "client.jsonrpc.parse-error", "client.elicitation.content-valid", "client.elicitation.content-valid-2025-06",
    "client.elicitation.modeless-is-form", "client.elicitation.complete-unknown-ignored", "client.elicitation.declare-mode",
    "client.sampling.tools-declare", "client.sampling.error-cases", "client.basic.schema-dialect-2020-12",
    "client.basic.schema-dialect-unsupported", PREFETCH, PROMPTS_RESPECT,
)
LATE_ANSWER = 1.0  # seconds the server waits, after the barrier, for an answer to a request it cancelled
HOLD_INITIALIZE = 0.3  # seconds the initialize result is held (requests in that window are early)
DIGIT_ID_METHODS = ("ping", "mcp-conformance/unknown-method")  # asked with ids like "701"
UNDECLARED_METHODS = ("prompts/", "resources/", "logging/setLevel", "completion/complete")


@scenario(requirements=[*P_REQUIREMENTS, *W_REQUIREMENTS], role="client", until=LATEST_STATEFUL, order=2)
async def server_requests(ctx: ClientContext) -> None:
    """The server pings the client, sends it an unknown method, roots/list, sampling/createMessage
    and elicitation/create, notifications and (2025-03-26) a batch, while holding the client's
    first request; it declares only tools, so the client may use nothing else."""
    version = ctx.version
    state: dict[str, Any] = {"probed": False}

    def configure(server: ScenarioServer) -> None:
        server.capabilities = {"tools": {"listChanged": False}}

        async def hold_initialize(env: Envelope) -> None:
            await anyio.sleep(HOLD_INITIALIZE)  # provocation: a pipelining client shows itself
            return None

        server.hooks["initialize"] = hold_initialize

        async def probes(env: Envelope) -> None:
            state["probed"] = True
            if PREFETCH not in ctx.requirements:
                await _probe(ctx, server, state)
                return
            async with UrlTrap() as trap:  # the URL of every url mode elicitation: a loopback listener
                state["trap"] = trap
                await _probe(ctx, server, state)
            trap.judge(ctx)

        server.on_first_request = probes

    launch = {"answer_mode": "sse"} if ctx.transport.value == "streamable-http" else {}
    played = await play(ctx, configure=configure, launch=launch)
    w = played.wire
    if not played.engaged:
        for rid in P_REQUIREMENTS:
            ctx.not_reached(rid, f"the client did not speak {version} with the suite's server")
        return
    if not state["probed"]:
        for rid in P_REQUIREMENTS:
            if rid not in ("client.lifecycle.respect-negotiation", "client.lifecycle.respect-negotiation-should",
                           PROMPTS_RESPECT):
                ctx.not_reached(rid, "the client made no request after the handshake, so the server had no moment "
                                     "to send it anything")
    # only the negotiated capabilities: the server declared tools alone
    rid = "client.lifecycle.respect-negotiation" if "client.lifecycle.respect-negotiation" in ctx.requirements \
        else "client.lifecycle.respect-negotiation-should"
    used = [m for m in w.requests() if (m.env.method or "").startswith(UNDECLARED_METHODS)]
    if used:
        ctx.check(rid, False, problem="UndeclaredCapabilityUsed",
                  message=f"the client sent {used[0].env.method}, but the server declared only the tools capability",
                  expected="only methods of capabilities the server declared (tools)", actual=used[0].env.method,
                  entries=[used[0].entry])
    elif w.requests():
        ctx.check(rid, True)
    judge_prompts_respected(ctx, w, {"tools": {}})


async def _probe(ctx: ClientContext, server: ScenarioServer, state: dict[str, Any]) -> None:
    peer = server.peer
    version = ctx.version
    vspec = spec(version)
    timeout = ctx.timeout
    init = next((e for e in server.requests if e.method == "initialize"), None)
    caps = {}
    if init is not None and isinstance(init.params, dict) and isinstance(init.params.get("capabilities"), dict):
        caps = init.params["capabilities"]
    n = 0
    if "client.elicitation.declare-mode" in ctx.requirements:
        el = caps.get("elicitation")
        if not isinstance(el, dict):
            ctx.not_reached("client.elicitation.declare-mode", "the client did not declare elicitation")
        else:
            ok = not el or "form" in el or "url" in el
            ctx.check("client.elicitation.declare-mode", ok, problem="NoElicitationMode",
                      message="" if ok else f"the client declared elicitation as {el!r}: not empty (form mode) and "
                                            "naming neither form nor url",
                      expected='{} (form), {"form": {}}, {"url": {}} or both', actual=el)

    async def ask(method: str, params: Any = MISSING, wait: float | None = None) -> tuple[Any, Envelope | None]:
        nonlocal n
        n += 1
        # pings and the unknown method get ids that are strings of digits ("701"): the answer must
        # carry the id exactly, "701" and not 701; the others, strings that are not numbers
        rid = f"{700 + n}" if method in DIGIT_ID_METHODS else f"mcpc-{method.replace('/', '-')}-{n}"
        await peer.request(method, params, id=rid, meta=None)
        return rid, await server.response(timeout if wait is None else wait)

    async def barrier() -> tuple[Envelope | None, list[Envelope]]:
        """A ping, and the client's answer to it (None: none within the timeout) with whatever
        other responses came before it.  Its answer counts also with its id's type changed: the
        echo rule takes that, not the barrier.  A barrier judges whether the client is still alive,
        so its wait is twice the timeout: a slow answer on a loaded machine is no verdict (only a
        client that stopped answering pays the longer wait)."""
        rid, resp = await ask("ping", wait=2 * timeout)
        before = []
        while resp is not None and not (resp.id is not MISSING and str(resp.id) in (rid, f"{rid}-wrong")):  # "701" or 701
            before.append(resp)
            resp = await server.response(2 * timeout)
        return resp, before

    def judge_answer(rid: Any, resp: Envelope | None, method: str) -> bool:
        """The id echo and the response shape; True when ``resp`` answers ``rid``."""
        if resp is None:
            return False
        value = resp.value if isinstance(resp.value, dict) else {}
        both = "result" in value and "error" in value
        if "client.basic.result-xor-error" in ctx.requirements:
            ctx.check("client.basic.result-xor-error", not both, problem="ResultAndError",
                      message="" if not both else f"the client's response to {method} carries both result and error",
                      expected="result or error, not both", actual=value, entries=[resp])
        if resp.kind is Kind.ERROR or "error" in value:
            err = value.get("error")
            code = err.get("code") if isinstance(err, dict) else None
            good = isinstance(code, int) and not isinstance(code, bool)
            ctx.check("client.basic.error-code-integer", good, problem="ErrorCodeNotInteger",
                      message="" if good else f"the client's error for {method} has the code {code!r}",
                      expected="an integer code", actual=code, entries=[resp])
        echo = ("client.basic.error-id-echo" if (resp.kind is Kind.ERROR or "error" in value) else "client.basic.result-id-echo") \
            if version == "2025-11-25" else "client.basic.response-id-echo"
        same = type(resp.id) is type(rid) and resp.id == rid
        ctx.check(echo, same, problem="ResponseIdMismatch",
                  message="" if same else f"the client answered {method} (id {id_repr(rid)}) with the id {id_repr(resp.id)}",
                  expected=rid, actual=None if resp.id is MISSING else resp.id, entries=[resp])
        return same

    try:
        # 1. ping
        rid, resp = await ask("ping")
        state["pings"] = resp is not None
        if resp is None:
            ctx.check("client.ping.respond", False, problem="PingNotAnswered",
                      message=f"the client did not answer the server's ping within {timeout:g} s",
                      expected="an empty result, promptly", actual=None)
        elif judge_answer(rid, resp, "ping") and not (isinstance(resp.value, dict) and "error" in resp.value
                                                          and "result" in resp.value):  # the shape rule takes that
            result = resp.result if resp.kind is Kind.RESULT else MISSING
            empty = isinstance(result, dict) and set(result) <= {"_meta"}
            ctx.check("client.ping.respond", empty, problem="PingNotEmpty",
                      message="" if empty else "the client answered ping with something other than an empty result",
                      expected={}, actual=result if result is not MISSING else resp.value, entries=[resp])
        # 2. an unknown method
        rid, resp = await ask("mcp-conformance/unknown-method", {})
        if resp is None:
            ctx.check("client.jsonrpc.method-not-found", False, problem="UnknownMethodNotAnswered",
                      message=f"the client did not answer the unknown method within {timeout:g} s",
                      expected="error -32601", actual=None)
        elif judge_answer(rid, resp, "an unknown method"):
            code = resp.error_code if resp.kind is Kind.ERROR else None
            ctx.check("client.jsonrpc.method-not-found", code == -32601, problem="WrongErrorCode",
                      message="" if code == -32601 else f"the unknown method was answered with {_answer(resp)}",
                      expected="error -32601 (Method not found)", actual=_answer(resp), entries=[resp])
        # 3. roots/list
        rid, resp = await ask("roots/list")
        declared = "roots" in caps
        if resp is not None and judge_answer(rid, resp, "roots/list"):
            if resp.kind is Kind.RESULT:
                ctx.check("client.roots.declare", declared, problem="UndeclaredRoots",
                          message="" if declared else "the client answered roots/list with roots but did not declare "
                                                      "the roots capability", expected="-32601 (roots not declared)",
                          actual=_answer(resp), entries=[resp])
                roots = resp.result.get("roots") if isinstance(resp.result, dict) else None
                if isinstance(roots, list) and roots:
                    bad = non_file_roots(resp.result)
                    ctx.check("client.roots.file-uri", not bad, problem="RootNotFileUri",
                              message="" if not bad else f"root URI {bad[0]!r} is not a file:// URI",
                              expected="file:// URIs", actual=bad[0] if bad else None, entries=[resp])
                else:
                    ctx.not_reached("client.roots.file-uri", "the client listed no roots")
            else:
                ctx.check("client.roots.declare", True, entries=[resp])
                if not declared:
                    code = resp.error_code
                    ctx.check("client.roots.unsupported-error", code == -32601, problem="WrongErrorCode",
                              message="" if code == -32601 else f"roots/list to a client without roots was answered with {_answer(resp)}",
                              expected="-32601 (Method not found)", actual=code, entries=[resp])
        if declared:
            ctx.not_reached("client.roots.unsupported-error", "the client declared roots")
        # 4. sampling/createMessage
        params = {"messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: say hello"}}],
                  "maxTokens": 16}
        rid, resp = await ask("sampling/createMessage", params)
        if resp is not None and judge_answer(rid, resp, "sampling/createMessage"):
            declared = "sampling" in caps
            ok = declared or resp.kind is not Kind.RESULT
            ctx.check("client.sampling.declare", ok, problem="UndeclaredSampling",
                      message="" if ok else "the client answered sampling/createMessage with a result but did not "
                                            "declare the sampling capability", expected="an error (sampling not declared)",
                      actual=_answer(resp), entries=[resp])
        # 4b. tool-enabled sampling to a client that declared sampling without tools (2025-11-25)
        if "client.sampling.tools-declare" in ctx.requirements:
            await _undeclared_tools(ctx, caps, ask, judge_answer)
        # 4c. tool loops the page forbids, to a client that declared sampling.tools (2025-11-25)
        if "client.sampling.error-cases" in ctx.requirements:
            await _bad_tool_loops(ctx, caps, ask, judge_answer)
        # 5. elicitation/create
        plain: Envelope | None = None
        if vspec.elicitation:
            # every field has a default: a client that fills the form pre-populates them
            params = {"message": "mcp-conformance: may I ask?",
                      "requestedSchema": {"type": "object", "properties": FORM_DEFAULTS}}
            rid, resp = await ask("elicitation/create", params)
            plain = resp
            if resp is not None and judge_answer(rid, resp, "elicitation/create"):
                declared = "elicitation" in caps
                _judge_defaults(ctx, resp, declared)
                _judge_content(ctx, resp, params["requestedSchema"], declared)
                _judge_modeless(ctx, resp, caps)
                # a decline or cancel without content is a refusal, not support (the Inspector's
                # fallback for unhandled requests answers "cancel"): only an accept counts
                ok = declared or resp.kind is not Kind.RESULT or not elicitation_accepted(resp.result)
                if ok and not declared and resp.kind is Kind.RESULT:
                    ctx.note("elicitation/create to a client without the capability was refused with a "
                             f"{(resp.result or {}).get('action')!r} result, not an error; read as a refusal",
                             requirement="client.elicitation.declare")
                ctx.check("client.elicitation.declare", ok, problem="UndeclaredElicitation",
                          message="" if ok else "the client answered elicitation/create with a result but did not "
                                                "declare the elicitation capability", expected="an error",
                          actual=_answer(resp), entries=[resp])
        # 5b. elicitation in a mode the client did not declare (2025-11-25: form and url modes)
        if "client.elicitation.undeclared-mode-error" in ctx.requirements:
            await _undeclared_mode(ctx, caps, ask, judge_answer, state.get("trap"))
        # 5c. the form with its dialect named: 2020-12, and one no implementation supports
        if "client.basic.schema-dialect-unsupported" in ctx.requirements:
            await _dialects(ctx, caps, ask, judge_answer, plain)
        # 5d. a url mode elicitation to a client that declared url mode (its URL must not be pre-fetched)
        if state.get("trap") is not None:
            await _url_elicitation(ctx, caps, ask, judge_answer, state["trap"])
        # 6. notifications, then a barrier ping: nothing may answer them
        await peer.notify("notifications/message", {"level": "info", "logger": "mcp-conformance", "data": "hello"})
        await peer.notify("notifications/tools/list_changed")
        await peer.notify("notifications/cancelled", {"requestId": "mcpc-never-sent", "reason": "mcp-conformance probe"})
        await peer.notify("notifications/cancelled", {})
        resp, extra = await barrier()
        if extra:
            ctx.check("client.basic.notification-no-response", False, problem="NotificationAnswered",
                      message="the client answered a notification", expected="no response to notifications",
                      actual=_answer(extra[0]), entries=[extra[0]])
        elif resp is not None:
            ctx.check("client.basic.notification-no-response", True, entries=[resp])
        if not state["pings"]:
            ctx.not_reached("client.cancel.invalid-ignored", "the client answers no ping, so the barrier cannot tell")
            ctx.not_reached("client.basic.notification-no-response", "the client answers no ping, so the barrier cannot tell")
        else:
            ctx.check("client.cancel.invalid-ignored", resp is not None, problem="InvalidCancelNotIgnored",
                      message="" if resp is not None else "after two invalid cancellations the client no longer answered a ping",
                      expected="invalid cancellations ignored (the next ping answered)", actual=None)
        # a client that stopped answering at the barrier is not charged again for what follows
        alive = resp is not None
        stopped = "the client stopped answering pings after the invalid cancellations (client.cancel.invalid-ignored)"
        # 6b. an elicitation completion naming no elicitation of ours (2025-11-25), then a barrier ping
        if "client.elicitation.complete-unknown-ignored" in ctx.requirements:
            if "elicitation" not in caps:
                ctx.not_reached("client.elicitation.complete-unknown-ignored", "the client did not declare elicitation")
            elif not alive:
                ctx.not_reached("client.elicitation.complete-unknown-ignored", stopped)
            else:
                await peer.notify("notifications/elicitation/complete", {"elicitationId": "mcpc-never-elicited"})
                resp, _ = await barrier()  # an answer to the notification: client.basic.notification-no-response
                alive = resp is not None
                ctx.check("client.elicitation.complete-unknown-ignored", alive, problem="UnknownCompletionNotIgnored",
                          message="" if alive else "after notifications/elicitation/complete naming an elicitationId the "
                                                   f"server never used, the client no longer answered a ping within {2 * timeout:g} s",
                          expected="the notification ignored (the next ping answered)", actual=None)
                if not alive:
                    stopped = "the client stopped answering pings after an unknown elicitation completion"
        # 7. a batch (2025-03-26)
        if vspec.batching and not alive:
            ctx.not_reached("client.basic.batch-receive", stopped)
        elif vspec.batching:
            ids = ["mcpc-batch-1", "mcpc-batch-2"]
            await peer.send_json([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in ids])
            got: set[str] = set()
            for _ in ids:
                resp = await server.response(timeout)
                if resp is None:
                    break
                if isinstance(resp.id, str):
                    got.add(resp.id)
            ok = got >= set(ids)
            ctx.check("client.basic.batch-receive", ok, problem="BatchNotAnswered",
                      message="" if ok else f"of a batch of two pings the client answered {sorted(got) or 'none'}",
                      expected=ids, actual=sorted(got))
        # 8. the server cancels its own request: a ping, and right behind it its cancellation
        #    (answered or not, both are allowed), then a barrier ping the client must answer
        if state["pings"] and not alive:
            ctx.not_reached("client.cancel.race", stopped)
        elif state["pings"]:
            state["race"] = True
            n += 1
            victim = f"mcpc-cancelled-ping-{n}"
            await peer.request("ping", MISSING, id=victim, meta=None)
            await peer.notify("notifications/cancelled", {"requestId": victim, "reason": "mcp-conformance: cancelled by the server"})
            resp, _ = await barrier()  # before it, the answer to the cancelled ping, if it came
            ctx.check("client.cancel.race", resp is not None, problem="CancelRaceNotHandled",
                      message="" if resp is not None else "after the server cancelled a ping of its own right after "
                                                          f"sending it, the client no longer answered a ping within {2 * timeout:g} s",
                      expected="the cancelled ping answered or not, the next ping answered", actual=None)
        else:
            ctx.not_reached("client.cancel.race", "the client answers no ping, so the barrier cannot tell")
        # 9. the server cancels a request the client may still be working on (sampling: a model
        #    call), then a barrier ping: an answer to the cancelled request after the barrier's
        #    answer was sent after the client had read the cancellation (which came first)
        if not state["pings"] or not alive:
            ctx.not_reached("client.cancel.no-response", stopped if state["pings"] else
                            "the client answers no ping, so the barrier cannot tell")
        else:
            await _cancelled_request(ctx, server, caps, n + 1, barrier)
        # 10. last (a client may end its session after it): a ping that is not JSON, but that
        #     lenient parsers read (a trailing comma), then a barrier ping
        if not state["pings"] or not alive:
            ctx.not_reached("client.jsonrpc.parse-error", stopped if state["pings"] else
                            "the client answers no ping, so the barrier cannot tell")
        else:
            state["unparseable"] = True
            await _parse_error(ctx, server, n + 2, barrier)
    except ConnectionLost:
        if state.get("unparseable"):
            # "A JSON parser MAY accept non-JSON forms" (RFC 8259): a client may also give up on a
            # server that sends them (the fuzz oracle's reading: only its survival is judged then)
            ctx.not_reached("client.jsonrpc.parse-error", "the client ended the session after a message that is not "
                                                          "JSON (allowed: it may give up on such a server)")
        if state.get("race"):
            ctx.check("client.cancel.race", False, problem="CancelRaceNotHandled",
                      message="the client went away after the server cancelled a ping of its own",
                      expected="the next ping answered", actual="the connection ended")
        for rid in P_REQUIREMENTS:
            ctx.not_reached(rid, "the client went away during the probes")


FORM_DEFAULTS = {"ok": {"type": "boolean", "default": True},
                 "nickname": {"type": "string", "default": "mcp-conformance"}}


def _accepted_content(resp: Envelope, declared: bool) -> dict[str, Any] | None:
    """The content of a form the client (which declared elicitation) accepted; None otherwise."""
    result = resp.result if resp.kind is Kind.RESULT and isinstance(resp.result, dict) else None
    content = result.get("content") if result is not None else None
    if not declared or result is None or result.get("action") != "accept" or not isinstance(content, dict):
        return None
    return content


def _judge_defaults(ctx: ClientContext, resp: Envelope, declared: bool) -> None:
    rid = "client.elicitation.defaults"
    if rid not in ctx.requirements:
        return
    content = _accepted_content(resp, declared)
    if content is None:
        ctx.not_reached(rid, "the client did not accept the form it was asked to fill")
        return
    left_out = [k for k in FORM_DEFAULTS if k not in content]
    ctx.check(rid, not left_out, problem="DefaultsNotPrePopulated",
              message="" if not left_out else f"the client accepted the form but left out {', '.join(left_out)}, whose "
                                              "schema gives a default",
              expected={k: v["default"] for k, v in FORM_DEFAULTS.items()}, actual=content, entries=[resp])


def _judge_content(ctx: ClientContext, resp: Envelope, schema: dict[str, Any], declared: bool) -> None:
    """An accepted form's content must be valid for its requestedSchema (SHOULD: 'Clients SHOULD
    validate all responses against the provided schema'; 2025-06-18: 'Both parties ...')."""
    rid = next((r for r in ("client.elicitation.content-valid", "client.elicitation.content-valid-2025-06")
                if r in ctx.requirements), None)
    if rid is None:
        return
    content = _accepted_content(resp, declared)
    if content is None:
        ctx.not_reached(rid, "the client did not accept the form it was asked to fill (only accepted content is judged)")
        return
    from conformance.schema.validate import import_jsonschema

    errors = sorted(import_jsonschema().Draft202012Validator(schema).iter_errors(content), key=lambda e: list(e.path))
    ctx.check(rid, not errors, problem="ContentNotValidForSchema",
              message="" if not errors else f"the accepted content is not valid for the requestedSchema: {errors[0].message}"
                                             + (f" (at {'/'.join(map(str, errors[0].path))})" if errors[0].path else ""),
              expected=schema, actual=content, entries=[resp])


def _judge_modeless(ctx: ClientContext, resp: Envelope, caps: dict[str, Any]) -> None:
    """A form elicitation without a mode field, refused with -32602 (the refusal of an undeclared
    mode) by a client that declared form mode: not treated as form mode."""
    rid = "client.elicitation.modeless-is-form"
    if rid not in ctx.requirements:
        return
    modes = _modes(caps)
    if modes is None or "form" not in modes:
        ctx.not_reached(rid, "the client did not declare form-mode elicitation" if modes is None or not modes
                        else "the client declared url-mode elicitation only: -32602 is its right answer to a form")
        return
    refused = resp.kind is Kind.ERROR and resp.error_code == -32602
    ctx.check(rid, not refused, problem="ModelessRequestNotForm",
              message="" if not refused else "elicitation/create without a mode field was refused with -32602 (the "
                                             "refusal of an undeclared mode) by a client that declared form mode",
              expected="an answer to a form (accept, decline, cancel)", actual=_answer(resp), entries=[resp])


async def _undeclared_tools(ctx: ClientContext, caps: dict[str, Any], ask: Any, judge_answer: Any) -> None:
    rid = "client.sampling.tools-declare"
    sampling = caps.get("sampling")
    if not isinstance(sampling, dict):
        ctx.not_reached(rid, "the client did not declare sampling")
        return
    if "tools" in sampling:
        ctx.not_reached(rid, "the client declared sampling.tools")
        return
    params = {"messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: what time is it?"}}],
              "maxTokens": 16, "tools": [{"name": "get_time", "inputSchema": {"type": "object", "properties": {}}}]}
    req_id, resp = await ask("sampling/createMessage", params)
    if resp is None or not judge_answer(req_id, resp, "sampling/createMessage (with tools)"):
        ctx.not_reached(rid, "the client did not answer the tool-enabled sampling request")
        return
    result = resp.result if resp.kind is Kind.RESULT and isinstance(resp.result, dict) else {}
    used = sampling_tool_use(result)
    ctx.check(rid, not used, problem="UndeclaredToolUse",
              message="" if not used else "the client answered a tool-enabled sampling request with tool use, but did not "
                                          "declare sampling.tools", expected="a text answer or an error (tools not declared)",
              actual=result if used else None, entries=[resp])


_WEATHER = {"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
_ASK = {"role": "user", "content": {"type": "text", "text": "mcp-conformance: the weather in Paris and London?"}}


def _use(n: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"mcpc-call-{n}", "name": "get_weather", "input": {"city": "Paris"}}


def _result(n: int) -> dict[str, Any]:
    return {"type": "tool_result", "toolUseId": f"mcpc-call-{n}", "content": [{"type": "text", "text": "18 degrees"}]}


#: (the failure case as the page names it, the messages): each breaks one of the page's message rules
BAD_TOOL_LOOPS = (
    ("Tool result missing in request",
     [_ASK, {"role": "assistant", "content": [_use(1), _use(2)]}, {"role": "user", "content": [_result(1)]}]),
    ("Tool results mixed with other content",
     [_ASK, {"role": "assistant", "content": [_use(1)]},
      {"role": "user", "content": [_result(1), {"type": "text", "text": "and what about London?"}]}]),
)


async def _bad_tool_loops(ctx: ClientContext, caps: dict[str, Any], ask: Any, judge_answer: Any) -> None:
    rid = "client.sampling.error-cases"
    sampling = caps.get("sampling")
    if not isinstance(sampling, dict) or "tools" not in sampling:
        ctx.not_reached(rid, "the client did not declare sampling.tools" if isinstance(sampling, dict)
                        else "the client did not declare sampling")
        return
    answered = 0
    for case, messages in BAD_TOOL_LOOPS:
        params = {"messages": messages, "maxTokens": 16, "tools": [_WEATHER]}
        req_id, resp = await ask("sampling/createMessage", params)
        if resp is None or not judge_answer(req_id, resp, f"sampling/createMessage ({case.lower()})"):
            continue
        answered += 1
        code = resp.error_code if resp.kind is Kind.ERROR else None
        ctx.check(rid, code == -32602, problem="InvalidToolLoopNotRefused",
                  message="" if code == -32602 else f"a sampling request with a case of '{case}' was answered with "
                                                     f"{_answer(resp)}",
                  expected=f"error -32602 (Invalid params): {case}", actual=_answer(resp), entries=[resp])
    if not answered:
        ctx.not_reached(rid, "the client answered neither sampling request with a forbidden tool loop")


def _modes(caps: dict[str, Any]) -> set[str] | None:
    """The elicitation modes the client declared (None: no elicitation); {} means form only."""
    el = caps.get("elicitation")
    if not isinstance(el, dict):
        return None
    modes = {m for m in ("form", "url") if m in el}
    return modes or {"form"}


async def _undeclared_mode(ctx: ClientContext, caps: dict[str, Any], ask: Any, judge_answer: Any,
                           trap: UrlTrap | None = None) -> None:
    rid = "client.elicitation.undeclared-mode-error"
    modes = _modes(caps)
    if modes is None:
        ctx.not_reached(rid, "the client did not declare elicitation (client.elicitation.declare judges that)")
        return
    if modes >= {"form", "url"}:
        ctx.not_reached(rid, "the client declared both elicitation modes")
        return
    if "url" not in modes:
        url = trap.url("undeclared") if trap is not None else "https://example.com/mcp-conformance/elicit"
        mode, params = "url", {"mode": "url", "message": "mcp-conformance: please open this page",
                               "url": url, "elicitationId": "mcpc-elicitation-1"}
    else:
        mode, params = "form", {"mode": "form", "message": "mcp-conformance: may I ask?",
                                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}
    req_id, resp = await ask("elicitation/create", params)
    if trap is not None and mode == "url":
        trap.answered("undeclared", _action(resp))
    if resp is None:
        ctx.check(rid, False, problem="UndeclaredModeNotAnswered",
                  message=f"the client did not answer elicitation/create in {mode} mode (it declared only "
                          f"{', '.join(sorted(modes))}) within {ctx.timeout:g} s", expected="error -32602", actual=None)
        return
    if not judge_answer(req_id, resp, f"elicitation/create ({mode} mode)"):
        return
    code = resp.error_code if resp.kind is Kind.ERROR else None
    ctx.check(rid, code == -32602, problem="UndeclaredModeNotRefused",
              message="" if code == -32602 else f"elicitation/create in {mode} mode, which the client did not declare "
                                                 f"(it declared {', '.join(sorted(modes))}), was answered with {_answer(resp)}",
              expected="error -32602 (Invalid params)", actual=_answer(resp), entries=[resp])


DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
#: a dialect no implementation supports: the URI names no JSON Schema dialect
DIALECT_UNKNOWN = "https://mcp-conformance.invalid/json-schema/no-such-dialect"


async def _dialects(ctx: ClientContext, caps: dict[str, Any], ask: Any, judge_answer: Any, plain: Envelope | None) -> None:
    """basic/index#json-schema-usage on the form of elicitation/create (whose requestedSchema may
    carry $schema): the same form naming 2020-12 must be served as the form without $schema was;
    naming a dialect that does not exist, it must be refused with an error."""
    supported, unsupported = "client.basic.schema-dialect-2020-12", "client.basic.schema-dialect-unsupported"
    modes = _modes(caps)
    if modes is None or "form" not in modes:
        for rid in (supported, unsupported):
            ctx.not_reached(rid, "the client did not declare elicitation in form mode (the one request of a server "
                                 "whose schema a client validates)")
        return
    form = {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}}
    # the form naming 2020-12: refused only where the same form without $schema was not
    req_id, resp = await ask("elicitation/create", {"mode": "form", "message": "mcp-conformance: may I ask?",
                                                    "requestedSchema": {"$schema": DIALECT_2020_12, **form}})
    if plain is None or plain.kind is not Kind.RESULT:
        ctx.not_reached(supported, "the client did not answer the form without $schema with a result, so a refusal "
                                   "of the same form naming 2020-12 would say nothing of the dialect")
    elif resp is None:  # (a request left unanswered is the response rules' to judge, not the dialect's)
        ctx.not_reached(supported, f"the client did not answer elicitation/create whose requestedSchema names "
                                   f"{DIALECT_2020_12} within {ctx.timeout:g} s")
    elif judge_answer(req_id, resp, "elicitation/create (2020-12 named)"):
        ok = resp.kind is Kind.RESULT
        ctx.check(supported, ok, problem="Dialect2020_12Refused",
                  message="" if ok else f"the form whose requestedSchema names {DIALECT_2020_12} was answered with "
                                        f"{_answer(resp)}, though the same form without $schema got a result",
                  expected="a result: 2020-12 is the dialect every implementation supports", actual=_answer(resp),
                  entries=[resp])
    # the form naming a dialect that does not exist: an error, not a form served under another dialect
    req_id, resp = await ask("elicitation/create", {"mode": "form", "message": "mcp-conformance: may I ask?",
                                                    "requestedSchema": {"$schema": DIALECT_UNKNOWN, **form}})
    if resp is None:
        ctx.not_reached(unsupported, f"the client did not answer elicitation/create whose requestedSchema names the "
                                     f"dialect {DIALECT_UNKNOWN} within {ctx.timeout:g} s")
    elif judge_answer(req_id, resp, "elicitation/create (an unknown dialect named)"):
        ok = resp.kind is Kind.ERROR
        action = (resp.result or {}).get("action") if resp.kind is Kind.RESULT and isinstance(resp.result, dict) else None
        ctx.check(unsupported, ok, problem="UnsupportedDialectServed",
                  message="" if ok else f"the form whose requestedSchema names {DIALECT_UNKNOWN}, a dialect that does not "
                                        f"exist, was answered with {_answer(resp)}"
                                        + (f" (action {action!r})" if action else "")
                                        + " instead of an error saying the dialect is not supported",
                  expected="an error response (the dialect is not supported)", actual=_answer(resp), entries=[resp])


def _action(resp: Envelope | None) -> str:
    """What an answer to elicitation/create says: 'accept', 'decline', 'cancel', 'error -32602', ..."""
    if resp is None:
        return "no answer"
    if resp.kind is Kind.ERROR:
        return f"error {id_repr(resp.error_code)}"
    result = resp.result if isinstance(resp.result, dict) else {}
    action = result.get("action")
    return action if isinstance(action, str) else "a result without an action"


async def _url_elicitation(ctx: ClientContext, caps: dict[str, Any], ask: Any, judge_answer: Any, trap: UrlTrap) -> None:
    """A url mode elicitation whose URL is the trap's, to a client that declared url mode."""
    modes = _modes(caps)
    if modes is None or "url" not in modes:
        return  # (a client without url mode got one in the undeclared-mode probe)
    params = {"mode": "url", "message": "mcp-conformance: please open this page (you may decline)",
              "url": trap.url("declared"), "elicitationId": "mcpc-elicitation-2"}
    req_id, resp = await ask("elicitation/create", params)
    trap.answered("declared", _action(resp))
    if resp is not None:
        judge_answer(req_id, resp, "elicitation/create (url mode)")


async def _cancelled_request(ctx: ClientContext, server: ScenarioServer, caps: dict[str, Any], n: int, barrier: Any) -> None:
    peer = server.peer
    if "sampling" in caps:
        method, params = "sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": "mcp-conformance: think it over"}}],
            "maxTokens": 16}
    elif "elicitation" in caps and spec(ctx.version).elicitation:
        method, params = "elicitation/create", {"message": "mcp-conformance: may I ask?", "requestedSchema": {
            "type": "object", "properties": {"ok": {"type": "boolean"}}}}
    elif "roots" in caps:
        method, params = "roots/list", MISSING
    else:
        method, params = "ping", MISSING
    victim = f"mcpc-cancelled-{n}"
    await peer.request(method, params, id=victim, meta=None)
    await peer.notify("notifications/cancelled", {"requestId": victim, "reason": "mcp-conformance: no longer needed"})
    resp, before = await barrier()
    if resp is None:
        ctx.not_reached("client.cancel.no-response", "the client did not answer the barrier ping")
        return
    if any(r.id == victim for r in before):
        ctx.check("client.cancel.no-response", True, message=f"the cancelled {method} was answered before the "
                  "barrier: the race the timing section allows")
        return
    late = None
    with anyio.move_on_after(LATE_ANSWER):
        while late is None:
            got = await server.response(LATE_ANSWER)
            if got is None:
                break
            if got.id == victim:
                late = got
    ctx.check("client.cancel.no-response", late is None, problem="CancelledRequestAnswered",
              message="" if late is None else f"the client answered the {method} the server had cancelled after it had "
                                              "answered the ping sent behind the cancellation",
              expected="no response for the cancelled request", actual=_answer(late) if late is not None else None,
              entries=[late] if late is not None else [])


async def _parse_error(ctx: ClientContext, server: ScenarioServer, n: int, barrier: Any) -> None:
    """A ping written with a trailing comma: not JSON (-32700, id null), though a lenient parser
    reads it (then an answer with its id is accepted, as the server side accepts it:
    conformance.fuzz.oracle.unparseable).  Silence, a result or another code is a finding."""
    rid = f"mcpc-lenient-{n}"
    await server.peer.send_raw(b'{"jsonrpc":"2.0","id":"' + rid.encode() + b'","method":"ping",}')
    resp, before = await barrier()
    if resp is None:
        ctx.not_reached("client.jsonrpc.parse-error", "the client did not answer the barrier ping behind the message "
                                                      "that is not JSON (client.ping.respond)")
        return
    if not before:  # over HTTP its answers are POSTs of their own: one may come after the barrier's
        late = await server.response(min(ctx.timeout, LATE_ANSWER))
        before = [late] if late is not None else []
    got = next((r for r in before if r.id == rid or r.id is None or r.id is MISSING), None)
    if got is None:
        ctx.check("client.jsonrpc.parse-error", False, problem="NoParseErrorResponse",
                  message="the client did not answer a message that is not JSON (a ping with a trailing comma), and "
                          "answered the ping sent after it",
                  expected="error -32700 with id null (or, from a lenient parser, the ping answered)", actual=None)
        return
    lenient = got.id == rid  # a lenient parser read the ping: any answer to it is accepted
    good = lenient or (got.kind is Kind.ERROR and got.error_code == -32700)
    ctx.check("client.jsonrpc.parse-error", good, problem="WrongErrorCode" if got.kind is Kind.ERROR else "InvalidJsonAccepted",
              message=f"a message that is not JSON was answered with {_answer(got)}" + ("" if good else " (id null)"),
              expected="error -32700 with id null (or, from a lenient parser, the ping answered)", actual=_answer(got),
              entries=[got])


def _answer(env: Envelope) -> str:
    if env.kind is Kind.ERROR:
        return f"error {env.error_code!r}"
    if env.kind is Kind.RESULT:
        return "a result"
    return env.kind.value
