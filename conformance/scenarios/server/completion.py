"""server/utilities/completion: completion/complete on an argument of a prompt or a variable of a
resource template the server lists."""

from __future__ import annotations

import re
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.wire.envelope import Envelope, Kind

from . import _features as F

FIXTURE_PROMPT = "test_prompt_with_arguments"
UNGATED = frozenset({"2024-11-05"})  # revisions without a `completions` capability (completion is not gated)
MAX_VALUES = 100


async def _references(ctx: ScenarioContext, peer) -> list[tuple[dict[str, Any], str, str]]:
    """(ref, argument name, what) for completion requests, from the server's own lists: the
    runner's fixture prompt first, then prompt arguments, then resource-template variables."""
    refs: list[tuple[dict[str, Any], str, str]] = []
    caps = ctx.server_capabilities
    if F.declared(caps, "prompts"):
        listing = await F.list_all(peer, "prompts/list", timeout=ctx.timeout)
        prompts = [p for p in listing.items if isinstance(p, dict) and isinstance(p.get("name"), str)]
        prompts.sort(key=lambda p: 0 if p["name"] == FIXTURE_PROMPT else 1)
        for p in prompts:
            for a in p.get("arguments") or []:
                if isinstance(a, dict) and isinstance(a.get("name"), str):
                    refs.append(({"type": "ref/prompt", "name": p["name"]}, a["name"], f"argument {a['name']!r} of prompt {p['name']!r}"))
                    break
    if F.declared(caps, "resources"):
        listing = await F.list_all(peer, "resources/templates/list", timeout=ctx.timeout)
        for t in listing.items:
            template = t.get("uriTemplate") if isinstance(t, dict) else None
            if not isinstance(template, str):
                continue
            names = re.findall(r"\{[+#./;?&]?([A-Za-z0-9_]+)", template)
            if names:
                refs.append(({"type": "ref/resource", "uri": template}, names[0], f"variable {names[0]!r} of template {template!r}"))
    return refs


def _completion_supported(ctx: ScenarioContext) -> bool | None:
    """True/False from the `completions` capability; None in 2024-11-05 (no such capability)."""
    if ctx.version in UNGATED:
        return None
    return F.declared(ctx.server_capabilities, "completions")


@scenario(requirements=["completion.complete.result", "completion.values.max-100"])
async def complete(ctx: ScenarioContext) -> None:
    """completion/complete for an argument of a listed prompt (the runner's fixture
    `test_prompt_with_arguments` first) and a variable of a listed resource template: a result
    with at most 100 values."""
    peer = await ctx.connect()
    supported = _completion_supported(ctx)
    if supported is False:
        ctx.skip("server did not declare capability 'completions'")
    refs = await _references(ctx, peer)
    if not refs:
        ctx.skip("the server lists no prompt argument or resource-template variable to complete")
    picked = [refs[0]]
    template = next((r for r in refs if r[0]["type"] == "ref/resource"), None)
    if template is not None and template is not refs[0]:
        picked.append(template)
    for ref, arg, what in picked:
        value = "test" if ref.get("name") == FIXTURE_PROMPT else ""
        rid = await peer.request("completion/complete", {"ref": ref, "argument": {"name": arg, "value": value}})
        env = await peer.expect_response(rid)
        if env.kind is Kind.ERROR and supported is None and env.error_code == errors.METHOD_NOT_FOUND:
            ctx.skip("2024-11-05 has no completions capability and the server answers completion/complete with -32601 (it does not implement completion)")
        result = env.result if env.kind is Kind.RESULT and isinstance(env.result, dict) else None
        completion = result.get("completion") if result else None
        values = completion.get("values") if isinstance(completion, dict) else None
        ok = isinstance(values, list)
        ctx.check(
            "completion.complete.result",
            ok,
            problem="CompletionFailed" if env.kind is Kind.ERROR else "CompletionResultMalformed",
            message=(
                f"completion/complete for the {what} returned {len(values)} value(s)"
                if ok
                else f"completion/complete for the {what} was answered with "
                + (F.describe_error(env) if env.kind is Kind.ERROR else "a result without completion.values")
            ),
            expected={"completion": {"values": ["..."]}},
            actual=env.error if env.kind is Kind.ERROR else env.result,
            entries=[env],
        )
        if ok:
            ctx.check(
                "completion.values.max-100",
                len(values) <= MAX_VALUES,
                problem="TooManyCompletionValues",
                message=f"completion/complete for the {what} returned {len(values)} values" + (" (more than 100)" if len(values) > MAX_VALUES else ""),
                expected=f"at most {MAX_VALUES} values",
                actual=len(values),
                json_path="$.result.completion.values",
                entries=[env],
            )


@scenario(requirements=["completion.capability.declared"], since="2025-03-26")
async def capability_declared(ctx: ScenarioContext) -> None:
    """A server that does not declare `completions` must not answer completion/complete with
    suggestions."""
    peer = await ctx.connect()
    req = "completion.capability.declared"
    if _completion_supported(ctx):
        ctx.check(req, True, message="the server declares the completions capability")
        return
    refs = await _references(ctx, peer)
    if not refs:
        ctx.skip("the server does not declare `completions` and lists no prompt argument or template variable to probe with")
    ref, arg, what = refs[0]
    rid = await peer.request("completion/complete", {"ref": ref, "argument": {"name": arg, "value": ""}})
    env = await peer.expect_response(rid)
    result = env.result if env.kind is Kind.RESULT and isinstance(env.result, dict) else None
    completion = result.get("completion") if result else None
    values = completion.get("values") if isinstance(completion, dict) else None
    suggests = isinstance(values, list) and len(values) > 0
    ctx.check(
        req,
        not suggests,
        problem="UndeclaredCapabilityUsed",
        message=(
            f"the server does not declare `completions`, yet completes the {what} with {len(values)} value(s)"
            if suggests
            else f"the server does not declare `completions` and offers no suggestions for the {what}"
        ),
        expected="an error (such as -32601) or no suggestions",
        actual=values[:10] if suggests else env.summary(),
        entries=[env],
    )


@scenario(requirements=["completion.complete.unknown-prompt"], since="2025-03-26", capability="completions")
async def unknown_prompt(ctx: ScenarioContext) -> None:
    """completion/complete for a prompt the server does not list: error -32602."""
    peer = await ctx.connect()
    name = f"mcp_conformance_no_such_prompt_{F.unique_token()}"
    rid = await peer.request("completion/complete", {"ref": {"type": "ref/prompt", "name": name}, "argument": {"name": "x", "value": ""}})
    env = await peer.expect_response(rid)
    _graded(ctx, env, name)


def _graded(ctx: ScenarioContext, env: Envelope, name: str) -> None:
    req = "completion.complete.unknown-prompt"
    ok = env.kind is Kind.ERROR and env.error_code == errors.INVALID_PARAMS
    ctx.check(
        req,
        ok,
        problem="WrongErrorCode" if env.kind is Kind.ERROR else "ErrorNotReported",
        message=(
            f"completion/complete for the unknown prompt {name!r} was answered with "
            + (F.describe_error(env) if env.kind is Kind.ERROR else "a result")
            + ("" if ok else "; the page names -32602 (Invalid params) for an invalid prompt name")
        ),
        expected={"error": {"code": errors.INVALID_PARAMS}},
        actual=env.error if env.kind is Kind.ERROR else env.result,
        entries=[env],
    )
