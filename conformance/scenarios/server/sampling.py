"""client/sampling, as duties of the server (2025-11-25 and later, where sampling has tools): what
the sampling/createMessage requests a server sends may carry.

On connections of its own the suite's client declares sampling, first without tools, then with
``sampling.tools``, and calls a tool that asks for sampling.  Up to 2025-11-25 the server sends
sampling/createMessage requests (answered by a handler); in 2026-07-28 it answers with an
InputRequiredResult whose input requests are answered in the retry.  The suite answers with text,
and, where tools were declared and offered, with two tool uses of the first tool offered
(stopReason toolUse), so that a server running a tool loop sends its tool results back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from conformance.runtime.peer import PeerError, RawPeer
from conformance.runtime.registry import scenario
from conformance.server.context import ScenarioContext
from conformance.spec.versions import spec
from conformance.wire.transcript import Direction
from conformance.wire.envelope import Envelope, Kind

from ._features import synth_args
from ._helpers import expect_answer, list_tools
from ._stateless import input_requests_of, input_responses

METHOD = "sampling/createMessage"
UNDECLARED = "sampling.tools.undeclared"
CONTEXT = "sampling.include-context"
RESULT_ONLY = "sampling.tool-result.only"
BALANCED = "sampling.tool-use.balanced"
REQS = (UNDECLARED, CONTEXT, RESULT_ONLY, BALANCED)
ROLE_CONTENT = "sampling.message.role-content"
ROLES = ("user", "assistant")
DEPRECATED_CONTEXT = ("thisServer", "allServers")

#: tools known to ask for sampling, tried first: the reference server's tool loop, the official
#: runner's fixture, server-everything's (older and newer names)
KNOWN = ("sampling_with_tools", "test_sampling", "sampleLLM", "trigger-sampling-request")
_WORDS = re.compile(r"sampl|\bllm\b|createMessage", re.I)
MAX_CANDIDATES = 3
MAX_ROUNDS = 4  # input rounds of one call (2026-07-28)


@dataclass
class Seen:
    """The sampling requests of one call, and whether the client had declared sampling.tools."""

    tools_declared: bool
    peer: RawPeer | None = None
    requests: list[tuple[Any, Envelope]] = field(default_factory=list)  # (params, the message that carried them)
    tool_uses_sent: int = 0

    def found(self) -> list[tuple[Any, Envelope, RawPeer | None]]:
        return [(p, env, self.peer) for p, env in self.requests]


def _candidates(tools: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(tool, arguments) of the tools that may ask for sampling: known names first, then names or
    descriptions that speak of sampling or an LLM; never one marked destructive, only with
    arguments built from the inputSchema."""
    by_name = {t["name"]: t for t in tools if isinstance(t.get("name"), str)}
    ordered = [by_name[n] for n in KNOWN if n in by_name]
    ordered += [t for n, t in by_name.items() if n not in KNOWN
                and _WORDS.search(f"{n} {t.get('title', '')} {t.get('description', '')}")]
    out = []
    for tool in ordered:
        ann = tool.get("annotations")
        if isinstance(ann, dict) and ann.get("destructiveHint") is True and ann.get("readOnlyHint") is not True:
            continue
        args = synth_args(tool.get("inputSchema"))
        if args is not None:
            out.append((tool, args))
    return out[:MAX_CANDIDATES]


def _blocks(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def _types(message: Any) -> list[Any]:
    return [b.get("type") if isinstance(b, dict) else None for b in _blocks(message.get("content"))] \
        if isinstance(message, dict) else []


def _answer(params: Any, seen: Seen) -> dict[str, Any]:
    """The suite's CreateMessageResult: two tool uses of the first tool offered, once per call,
    where the client declared sampling.tools; text otherwise."""
    tools = params.get("tools") if isinstance(params, dict) else None
    first = tools[0] if isinstance(tools, list) and tools and isinstance(tools[0], dict) else None
    if seen.tools_declared and first is not None and isinstance(first.get("name"), str) and not seen.tool_uses_sent:
        seen.tool_uses_sent = 2
        uses = [{"type": "tool_use", "id": f"mcpc-tool-use-{n}", "name": first["name"], "input": {}} for n in (1, 2)]
        return {"role": "assistant", "content": uses, "model": "mcp-conformance", "stopReason": "toolUse"}
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "mcp-conformance",
            "stopReason": "endTurn"}


async def _call(ctx: ScenarioContext, peer: RawPeer, tool: dict[str, Any], args: dict[str, Any], seen: Seen) -> bool:
    """Call ``tool``, answering every sampling request it leads to; True when the call came to an
    answer (a result or an error) in time."""
    params: dict[str, Any] = {"name": tool["name"], "arguments": args}
    if not spec(ctx.version).stateless:
        def handler(env: Envelope) -> dict[str, Any]:
            seen.requests.append((env.params, env))
            return _answer(env.params, seen)

        peer.on_request(METHOD, handler)
        try:
            rid = await peer.request("tools/call", params)
            await expect_answer(peer, rid, timeout=ctx.timeout)
        except PeerError:
            return False
        return True
    for _ in range(MAX_ROUNDS):
        try:
            rid = await peer.request("tools/call", params)
            env = await expect_answer(peer, rid, timeout=ctx.timeout)
        except PeerError:
            return False
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict) \
                or env.result.get("resultType") != "input_required":
            return True
        requests = input_requests_of(env.result)
        responses = input_responses(requests)
        for key, req in requests.items():
            if isinstance(req, dict) and req.get("method") == METHOD:
                seen.requests.append((req.get("params"), env))
                responses[key] = _answer(req.get("params"), seen)
        params = {"name": tool["name"], "arguments": args, "inputResponses": responses}
        if "requestState" in env.result:
            params["requestState"] = env.result["requestState"]
    return True


async def _round(ctx: ScenarioContext, candidates: list[Any], capabilities: dict[str, Any], tools_declared: bool) -> Seen:
    """Calls on a connection of its own with these client capabilities, trying the candidates
    until one asks for sampling (with tools declared: until one offers tools)."""
    peer = await ctx.connect(fresh=True, capabilities=capabilities)
    seen = Seen(tools_declared, peer)
    for tool, args in candidates:
        before = len(seen.requests)
        if not await _call(ctx, peer, tool, args, seen):
            ctx.note(f"{tool['name']} was not answered within {ctx.timeout:g} s (capabilities {capabilities})")
        offered = any(isinstance(p, dict) and "tools" in p for p, _ in seen.requests[before:])
        if len(seen.requests) > before and (not tools_declared or offered):
            break
    return seen


@scenario(requirements=list(REQS), since="2025-11-25", capability="tools",
          skip_reason="tools in sampling exist from 2025-11-25")
async def sampling_requests(ctx: ScenarioContext) -> None:
    """The sampling requests a server sends a client that declared sampling without tools, then
    with tools (never sampling.context): no tools offered to the first, no deprecated
    includeContext, and in a tool loop every tool use answered by a user message of tool results
    only."""
    peer = await ctx.connect()
    candidates = _candidates(await list_tools(peer))
    if not candidates:
        ctx.skip("no tool asks for sampling (known names: " + ", ".join(KNOWN) + "; or a name or description that "
                 "speaks of sampling or an LLM, with arguments the suite can build)")
    plain = await _round(ctx, candidates, {"sampling": {}}, False)
    with_tools = await _round(ctx, candidates, {"sampling": {"tools": {}}}, True)
    if not plain.requests and not with_tools.requests:
        ctx.skip(f"no sampling request came from {', '.join(t['name'] for t, _ in candidates)}")
    _judge_undeclared(ctx, plain)
    _judge_context(ctx, [*plain.found(), *with_tools.found()])
    _judge_messages(ctx, [*plain.found(), *with_tools.found()], with_tools)


def _judge_undeclared(ctx: ScenarioContext, seen: Seen) -> None:
    if not seen.requests:
        ctx.not_reached(UNDECLARED, "no sampling request came while the client declared sampling without tools")
        return
    bad = [(p, e) for p, e in seen.requests if isinstance(p, dict) and ("tools" in p or "toolChoice" in p)]
    ctx.check(UNDECLARED, not bad, problem="UndeclaredToolUseRequested",
              message=(f"{len(seen.requests)} sampling request(s) to a client without sampling.tools, none with tools"
                       if not bad else "the server sent a sampling request with "
                       + " and ".join(k for k in ("tools", "toolChoice") if k in bad[0][0])
                       + " to a client that declared sampling without tools"),
              expected="no tools and no toolChoice (sampling.tools not declared)",
              actual={k: bad[0][0][k] for k in ("tools", "toolChoice") if k in bad[0][0]} if bad else None,
              entries=[bad[0][1]] if bad else [], peer=seen.peer)


def _judge_context(ctx: ScenarioContext, requests: list[tuple[Any, Envelope, RawPeer | None]]) -> None:
    bad = [(p, e, c) for p, e, c in requests if isinstance(p, dict) and p.get("includeContext") in DEPRECATED_CONTEXT]
    ctx.check(CONTEXT, not bad, problem="DeprecatedIncludeContext",
              message=(f"{len(requests)} sampling request(s), none with includeContext thisServer or allServers"
                       if not bad else f"the server sent includeContext {bad[0][0]['includeContext']!r} to a client that "
                       "did not declare sampling.context"),
              expected='no includeContext, or "none" (sampling.context not declared)',
              actual=bad[0][0]["includeContext"] if bad else None, entries=[bad[0][1]] if bad else [],
              peer=bad[0][2] if bad else None)


def _judge_messages(ctx: ScenarioContext, requests: list[tuple[Any, Envelope, RawPeer | None]], with_tools: Seen) -> None:
    mixed: list[tuple[str, Envelope, RawPeer | None]] = []
    unbalanced: list[tuple[str, Envelope, RawPeer | None]] = []
    tool_content = 0
    for params, where, conn in requests:
        messages = params.get("messages") if isinstance(params, dict) else None
        if not isinstance(messages, list):
            continue
        for i, msg in enumerate(messages):
            types = _types(msg)
            role = msg.get("role") if isinstance(msg, dict) else None
            if "tool_result" in types or "tool_use" in types:
                tool_content += 1
            if role == "user" and "tool_result" in types and any(t != "tool_result" for t in types):
                others = sorted({str(t) for t in types if t != "tool_result"})
                mixed.append((f"message {i} (role user) mixes tool_result with {', '.join(others)}", where, conn))
            if role == "assistant" and "tool_use" in types:
                ids = [b.get("id") for b in _blocks(msg["content"]) if isinstance(b, dict) and b.get("type") == "tool_use"]
                nxt = messages[i + 1] if i + 1 < len(messages) else None
                if not isinstance(nxt, dict) or nxt.get("role") != "user":
                    what = "nothing" if nxt is None else f"a message with role {nxt.get('role')!r}"
                    unbalanced.append((f"message {i} (role assistant) has tool uses, followed by {what}", where, conn))
                    continue
                answered = {b.get("toolUseId") for b in _blocks(nxt.get("content"))
                            if isinstance(b, dict) and b.get("type") == "tool_result"}
                missing = [x for x in ids if x not in answered]
                if missing:
                    unbalanced.append((f"message {i} (role assistant) has tool uses {ids}; the user message after it "
                                       f"has no tool result for {missing}", where, conn))
    if not tool_content:
        why = ("the server did not offer tools to a client that declared sampling.tools" if not with_tools.tool_uses_sent
               else "the server did not send a sampling request with the tool results after the suite's tool uses")
        for rid in (RESULT_ONLY, BALANCED):
            ctx.not_reached(rid, f"no sampling request carried tool uses or tool results: {why}")
        return
    ctx.check(RESULT_ONLY, not mixed, problem="ToolResultsMixed",
              message=f"{tool_content} message(s) with tool content checked" if not mixed else mixed[0][0],
              expected="user messages with tool results contain only tool results",
              actual=mixed[0][0] if mixed else None, entries=[mixed[0][1]] if mixed else [],
              peer=mixed[0][2] if mixed else None)
    ctx.check(BALANCED, not unbalanced, problem="ToolUseUnanswered",
              message=f"{tool_content} message(s) with tool content checked" if not unbalanced else unbalanced[0][0],
              expected="every assistant message with tool uses followed by a user message with a tool result for each",
              actual=unbalanced[0][0] if unbalanced else None, entries=[unbalanced[0][1]] if unbalanced else [],
              peer=unbalanced[0][2] if unbalanced else None)


# -- 2026-07-28: the messages of every sampling input request of the run ----------------------------


def bad_sampling_messages(result: Any) -> list[tuple[str, int, str]]:
    """(input request key, message index, what is wrong) for the messages of the sampling input
    requests of an InputRequiredResult that lack a role of "user" or "assistant", or a content."""
    requests = result.get("inputRequests") if isinstance(result, dict) else None
    out = []
    for key, req in (requests.items() if isinstance(requests, dict) else ()):
        if not isinstance(req, dict) or req.get("method") != METHOD or not isinstance(req.get("params"), dict):
            continue
        messages = req["params"].get("messages")
        for i, msg in enumerate(messages if isinstance(messages, list) else []):
            if not isinstance(msg, dict):
                continue
            if msg.get("role") not in ROLES:
                out.append((str(key), i, f"role {msg.get('role')!r}" if "role" in msg else "no role"))
            if "content" not in msg:
                out.append((str(key), i, "no content"))
    return out


@scenario(requirements=[ROLE_CONTENT], versions=["2026-07-28"], order=990,
          skip_reason="the sentence is 2026-07-28's (sampling input requests)")
async def sampling_messages(ctx: ScenarioContext) -> None:
    """Every InputRequiredResult of the run, on every connection: the messages of its sampling
    input requests have a role of "user" or "assistant" and a content."""
    await ctx.connect()
    counted = 0
    flagged = False
    for conn in ctx.connections():
        for entry in conn.transcript.entries:
            env = entry.envelope
            if entry.direction != Direction.IN or env is None or env.kind is not Kind.RESULT or not isinstance(env.result, dict) \
                    or env.result.get("resultType") != "input_required":
                continue
            requests = env.result.get("inputRequests")
            counted += sum(1 for r in (requests.values() if isinstance(requests, dict) else ())
                           if isinstance(r, dict) and r.get("method") == METHOD)
            bad = bad_sampling_messages(env.result)
            if bad:
                flagged = True
                key, i, what = bad[0]
                ctx.check(ROLE_CONTENT, False, problem="SamplingMessageMalformed",
                          message=f"message {i} of the sampling input request {key!r} on {conn.label} has {what}",
                          expected='role "user" or "assistant", and a content', actual=what,
                          json_path=f"$.result.inputRequests.{key}.params.messages[{i}]", entries=[entry.seq], peer=conn.peer)
    if not counted:
        ctx.skip("the server sent no sampling input request during the run")
    if not flagged:
        ctx.check(ROLE_CONTENT, True, message=f"{counted} sampling input request(s) checked")
