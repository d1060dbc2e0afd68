"""server/prompts: prompts/list, prompts/get (message content: images, audio, embedded
resources), the errors for an unknown prompt and missing arguments, list_changed."""

from __future__ import annotations

import json
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.spec.versions import LATEST_STATEFUL
from conformance.wire.envelope import Envelope, Kind

from . import _features as F
from .tools import list_changed_check

LIST_REQS = ("prompts.list.respond", "prompts.list.answered")
MAX_GETS = 8
DUMMY = "mcp-conformance"

#: the official runner's fixture prompts: name -> arguments its scenario sends
FIXTURE_ARGS: dict[str, dict[str, str]] = {
    "test_simple_prompt": {},
    "test_prompt_with_arguments": {"arg1": "testValue1", "arg2": "testValue2"},
    "test_prompt_with_embedded_resource": {"resourceUri": "test://example-resource"},
    "test_prompt_with_image": {},
}


@scenario(requirements=["prompts.capability.declared"])
async def capability_declared(ctx: ScenarioContext) -> None:
    """A server that does not declare `prompts` must not list prompts."""
    await F.check_capability_declared(ctx, "prompts", "prompts/list", "prompts", "name", "prompt")


@scenario(requirements=[*LIST_REQS, "prompts.name.identifier"], capability="prompts")
async def list_prompts(ctx: ScenarioContext) -> None:
    """prompts/list followed to its last page: answered, every name once."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "prompts/list", timeout=ctx.timeout)
    if not F.check_list_answered(ctx, listing, LIST_REQS):
        ctx.not_reached("prompts.name.identifier", "prompts/list gave no list of prompts")
        return
    F.check_unique(ctx, ("prompts.name.identifier",), listing, "name")


GET_REQS = (
    "prompts.content.image",
    "prompts.content.audio",
    "prompts.content.embedded-resource",
    "prompts.fixtures.content",
    "resources.contents.binary-encoded",
)


@scenario(requirements=list(GET_REQS), capability="prompts")
async def get_prompts(ctx: ScenarioContext) -> None:
    """prompts/get for the listed prompts (the runner's fixtures with their scenario's arguments,
    others with a placeholder for each required argument): images and audio base64 with a MIME
    type, embedded resources with a URI, a MIME type and text or base64 blob, the fixtures'
    messages as their runner scenario describes."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "prompts/list", timeout=ctx.timeout)
    prompts = [p for p in listing.items if isinstance(p, dict) and isinstance(p.get("name"), str)]
    fixtures = [p for p in prompts if p["name"] in FIXTURE_ARGS]
    others = [p for p in prompts if p["name"] not in FIXTURE_ARGS][: max(0, MAX_GETS - len(fixtures))]
    if not prompts:
        ctx.skip("the server lists no prompt")
    for rid, what in (
        ("prompts.content.image", "image content"),
        ("prompts.content.audio", "audio content"),
        ("prompts.content.embedded-resource", "an embedded resource"),
        ("resources.contents.binary-encoded", "an embedded resource with a blob"),
        ("prompts.fixtures.content", "is an official runner fixture"),
    ):
        ctx.not_reached(rid, f"no prompt we got {'' if what.startswith('is ') else 'carries '}{what}")
    got = 0
    for prompt in [*fixtures, *others]:
        name = prompt["name"]
        fixture = name in FIXTURE_ARGS
        args = FIXTURE_ARGS[name] if fixture else _placeholder_args(prompt)
        params: dict[str, Any] = {"name": name}
        if args:
            params["arguments"] = args
        rid = await peer.request("prompts/get", params)
        try:
            env = await peer.expect_response(rid)
        except PeerError as exc:
            if fixture:
                raise
            ctx.note(f"prompts/get {name!r}: {exc}; not judged")
            continue
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            what = F.describe_error(env) if env.kind is Kind.ERROR else f"a {env.kind.value}"
            if fixture:
                ctx.check("prompts.fixtures.content", False, problem="FixtureGetFailed",
                          message=f"prompts/get {name!r} (an official runner fixture) with {json.dumps(args)} was answered with {what}",
                          expected="a result with messages", actual=env.error if env.kind is Kind.ERROR else env.value, entries=[env])
            else:
                ctx.note(f"prompts/get {name!r} with {json.dumps(args)} was answered with {what}; not judged")
            continue
        if env.result.get("resultType", "complete") != "complete":
            ctx.note(f"prompts/get {name!r}: resultType {env.result.get('resultType')!r} (needs client input); not judged")
            continue
        got += 1
        messages = env.result.get("messages")
        contents = [m.get("content") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
        for content in contents:
            if isinstance(content, dict):
                _check_content(ctx, name, content, env)
        if fixture:
            problems = _fixture_problems(name, messages)
            ctx.check(
                "prompts.fixtures.content",
                not problems,
                problem="FixtureContentMismatch",
                message=f"prompts/get {name!r}: " + ("; ".join(problems) if problems else "renders as its runner scenario describes"),
                expected=f"messages per the runner's scenario for {name}",
                actual=messages,
                entries=[env],
            )
    if got == 0:
        for rid in GET_REQS:
            ctx.not_reached(rid, "no prompt could be got")


def _placeholder_args(prompt: dict) -> dict[str, str]:
    args = prompt.get("arguments")
    if not isinstance(args, list):
        return {}
    return {a["name"]: DUMMY for a in args if isinstance(a, dict) and a.get("required") is True and isinstance(a.get("name"), str)}


def _check_content(ctx: ScenarioContext, name: str, content: dict, env: Envelope) -> None:
    kind = content.get("type")
    if kind in ("image", "audio"):
        req = f"prompts.content.{kind}"
        data, mime = content.get("data"), content.get("mimeType")
        problems = []
        if not F.is_base64(data):
            problems.append("data is not valid base64")
        if not F.is_mime_type(mime):
            problems.append(f"mimeType {mime!r} is not a valid MIME type")
        ctx.check(
            req,
            not problems,
            problem="MediaContentInvalid",
            message=f"prompts/get {name!r}: the {kind} content " + (", ".join(problems) if problems else "is base64 with a valid MIME type"),
            expected={"data": "<base64>", "mimeType": "<type>/<subtype>"},
            actual={"data": str(data)[:60], "mimeType": mime},
            entries=[env],
        )
    elif kind == "resource":
        res = content.get("resource")
        problems = []
        if not isinstance(res, dict):
            problems.append("no resource object")
            res = {}
        uri = res.get("uri")
        if not (isinstance(uri, str) and ":" in uri and uri.split(":", 1)[0]):
            problems.append(f"uri {uri!r} is not a URI with a scheme")
        if not F.is_mime_type(res.get("mimeType")):
            problems.append(f"mimeType {res.get('mimeType', '<absent>')!r} is missing or not a MIME type")
        if "blob" in res:
            ok = F.is_base64(res.get("blob"))
            ctx.check(
                "resources.contents.binary-encoded",
                ok,
                problem="BlobNotBase64",
                message=f"prompts/get {name!r}: the embedded blob of {uri!r} is " + ("valid base64" if ok else "not valid base64"),
                expected="base64 (RFC 4648, padded)",
                actual=str(res.get("blob"))[:80],
                entries=[env],
            )
            if not ok:
                problems.append("blob is not base64")
        elif not isinstance(res.get("text"), str):
            problems.append("neither text nor blob")
        ctx.check(
            "prompts.content.embedded-resource",
            not problems,
            problem="EmbeddedResourceIncomplete",
            message=f"prompts/get {name!r}: the embedded resource " + ("; ".join(problems) if problems else "has a URI, a MIME type and its content"),
            expected={"uri": "<uri>", "mimeType": "<type>/<subtype>", "text|blob": "<content>"},
            actual=res,
            entries=[env],
        )


def _fixture_problems(name: str, messages: Any) -> list[str]:
    if not isinstance(messages, list) or not messages:
        return ["messages is missing or empty"]
    items = [m for m in messages if isinstance(m, dict)]
    problems: list[str] = []
    if name == "test_simple_prompt":
        for i, m in enumerate(items):
            if not m.get("role") or not m.get("content"):
                problems.append(f"message {i} lacks a role or content")
    elif name == "test_prompt_with_arguments":
        text = json.dumps(messages)
        for value in FIXTURE_ARGS[name].values():
            if value not in text:
                problems.append(f"the argument value {value!r} is not substituted")
    elif name == "test_prompt_with_embedded_resource":
        if not any(isinstance(m.get("content"), dict) and m["content"].get("type") == "resource" for m in items):
            problems.append("no embedded resource")
    elif name == "test_prompt_with_image":
        if not any(
            isinstance(m.get("content"), dict) and m["content"].get("type") == "image" and m["content"].get("data") and m["content"].get("mimeType")
            for m in items
        ):
            problems.append("no image content with data and mimeType")
    return problems


# ---------------------------------------------------------------------------------------------
# errors


@scenario(requirements=["prompts.get.unknown-name"], capability="prompts")
async def unknown_prompt(ctx: ScenarioContext) -> None:
    """prompts/get for a prompt the server does not list: error -32602."""
    peer = await ctx.connect()
    name = f"mcp_conformance_no_such_prompt_{F.unique_token()}"
    rid = await peer.request("prompts/get", {"name": name})
    env = await peer.expect_response(rid)
    _expect_invalid_params(ctx, "prompts.get.unknown-name", env, f"prompts/get for the unknown prompt {name!r}")


@scenario(requirements=["prompts.get.missing-arguments"], capability="prompts")
async def missing_arguments(ctx: ScenarioContext) -> None:
    """prompts/get without an argument the prompt lists as required: error -32602."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "prompts/list", timeout=ctx.timeout)
    target = None
    for prompt in listing.items:
        if not isinstance(prompt, dict):
            continue
        required = _placeholder_args(prompt)
        if required:
            target = (prompt["name"], required)
            break
    if target is None:
        ctx.skip("the server lists no prompt with a required argument")
    name, required = target
    missing = next(iter(required))
    args = {k: v for k, v in required.items() if k != missing}
    params: dict[str, Any] = {"name": name, "arguments": args}
    rid = await peer.request("prompts/get", params)
    env = await peer.expect_response(rid)
    _expect_invalid_params(ctx, "prompts.get.missing-arguments", env, f"prompts/get {name!r} without its required argument {missing!r}")


@scenario(requirements=["prompts.get.validate-arguments"], capability="prompts")
async def argument_validation(ctx: ScenarioContext) -> None:
    """prompts/get with a required argument given as a number (prompt arguments are strings):
    any JSON-RPC error shows the arguments were validated; a rendered prompt, that they were not."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "prompts/list", timeout=ctx.timeout)
    target = next(((p["name"], args) for p in listing.items if isinstance(p, dict) and (args := _placeholder_args(p))), None)
    if target is None:
        ctx.skip("the server lists no prompt with a required argument")
    name, args = target
    wrong = next(iter(args))
    params: dict[str, Any] = {"name": name, "arguments": {**args, wrong: 42}}
    rid = await peer.request("prompts/get", params)
    env = await peer.expect_response(rid)
    req = "prompts.get.validate-arguments"
    what = f"prompts/get {name!r} with the argument {wrong!r} given as the number 42 (arguments are strings)"
    if env.kind is Kind.ERROR:
        ctx.check(req, True, message=f"{what} was refused with {F.describe_error(env)}", entries=[env])
        return
    result = env.result if isinstance(env.result, dict) else {}
    if result.get("resultType", "complete") != "complete":
        ctx.not_reached(req, f"{what} was answered with resultType {result.get('resultType')!r}")
        return
    ctx.check(
        req,
        False,
        problem="PromptArgumentsNotValidated",
        message=f"{what} was rendered: the argument was processed without being validated",
        expected="a JSON-RPC error (the arguments are invalid)",
        actual=env.result,
        entries=[env],
    )


def _expect_invalid_params(ctx: ScenarioContext, req: str, env: Envelope, what: str) -> None:
    if env.kind is Kind.ERROR:
        code = env.error_code
        ctx.check(
            req,
            code == errors.INVALID_PARAMS,
            problem="WrongErrorCode",
            message=f"{what} was answered with {F.describe_error(env)}" + ("" if code == errors.INVALID_PARAMS else ", not -32602 (Invalid params)"),
            expected={"error": {"code": errors.INVALID_PARAMS}},
            actual=env.error,
            json_path="$.error.code",
            entries=[env],
        )
        return
    result = env.result if isinstance(env.result, dict) else {}
    if result.get("resultType", "complete") != "complete":
        ctx.not_reached(req, f"{what} was answered with resultType {result.get('resultType')!r}")
        return
    ctx.check(
        req,
        False,
        problem="ErrorNotReported",
        message=f"{what} was answered with a result instead of error -32602 (Invalid params)",
        expected={"error": {"code": errors.INVALID_PARAMS}},
        actual=env.result,
        entries=[env],
    )


@scenario(
    requirements=["prompts.list-changed.notification"],
    capability="prompts.listChanged",
)
async def list_changed(ctx: ScenarioContext) -> None:
    """With the hook `test_trigger_prompt_change`: changing the prompt list brings
    notifications/prompts/list_changed (the hook is called again to restore the list)."""
    await list_changed_check(ctx, "prompts.list-changed.notification", "test_trigger_prompt_change", "notifications/prompts/list_changed", "prompt")
