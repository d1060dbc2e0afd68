"""Prompts: ``prompts/list`` (paginated), ``prompts/get``, ``notifications/prompts/list_changed``.

Unknown prompt or missing required argument: ``-32602`` ("Invalid prompt name: -32602",
"Missing required arguments: -32602", server/prompts#error-handling).
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from conformance.spec import errors as codes
from conformance.spec.versions import VERSIONS

from reference_server.errors import RPCError
from reference_server.features.inputs import InputRequired, InputState, run_with_inputs
from reference_server.features.pagination import paginate
from reference_server.features.resources import PNG_1X1

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Server
    from reference_server.messages import RequestContext
    from reference_server.features import Features

__all__ = ["install", "capabilities", "Prompt", "PromptRegistry"]


def _vi(v: str) -> int:
    return VERSIONS.index(v)


@dataclass
class Prompt:
    name: str
    description: str
    render: Callable[..., Any]  # (ctx, args) or (ctx, args, inputs) -> list of messages | InputRequired
    arguments: list[dict[str, Any]] = field(default_factory=list)
    title: str | None = None
    since: str = VERSIONS[0]
    until: str | None = None
    uses_inputs: bool = False
    completions: dict[str, list[str]] = field(default_factory=dict)

    def exists_in(self, version: str) -> bool:
        v = _vi(version)
        return _vi(self.since) <= v and (self.until is None or v <= _vi(self.until))

    def describe(self, version: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        new = _vi(version) >= _vi("2025-06-18")
        if self.title and new:
            out["title"] = self.title
        out["description"] = self.description
        args = []
        for a in self.arguments:
            a = dict(a)
            if not new:
                a.pop("title", None)
            args.append(a)
        out["arguments"] = args
        return out


class PromptRegistry:
    def __init__(self) -> None:
        self._prompts: dict[str, Prompt] = {}

    def add(self, p: Prompt) -> None:
        self._prompts[p.name] = p

    def remove(self, name: str) -> bool:
        return self._prompts.pop(name, None) is not None

    def get(self, name: str, version: str) -> Prompt | None:
        p = self._prompts.get(name)
        return p if p is not None and p.exists_in(version) else None

    def visible(self, version: str) -> list[Prompt]:
        return [p for p in self._prompts.values() if p.exists_in(version)]


def capabilities(features: "Features", version: str) -> dict[str, Any]:
    return {"prompts": {"listChanged": True}}


def _user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def _prompt_with_input(ctx: "RequestContext", args: dict[str, str], inputs: InputState) -> Any:
    resp = inputs.responses.get("user_context")
    if not isinstance(resp, dict) or resp.get("action") != "accept" or not isinstance(resp.get("content"), dict):
        return InputRequired(
            {
                "user_context": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "What context should the prompt use?",
                        "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
                    },
                }
            }
        )
    context = resp["content"].get("context", "")
    return [_user(_text(f"Use this context: {context}"))]


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")


def _embedded_resource_prompt(ctx: Any, a: dict[str, Any]) -> list[dict[str, Any]]:
    # the argument becomes a resource's "uri" (format uri in the schema): refuse what is not a URI
    # rather than answer with a message the schema rejects (found by `mcp-conformance fuzz`)
    uri = a["resourceUri"]
    if not isinstance(uri, str) or not _URI.match(uri):
        raise RPCError(codes.INVALID_PARAMS, "resourceUri must be a URI (scheme:...)", {"argument": "resourceUri"})
    return [
        _user({"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}),
        _user(_text("Please process the embedded resource above.")),
    ]


def _register_fixtures(reg: PromptRegistry) -> None:
    reg.add(Prompt("test_simple_prompt", "A simple prompt without arguments.", lambda ctx, a: [_user(_text("This is a simple prompt for testing."))], title="Simple prompt"))
    reg.add(
        Prompt(
            "test_prompt_with_arguments",
            "A prompt with two required arguments.",
            lambda ctx, a: [_user(_text(f"Prompt with arguments: arg1='{a['arg1']}', arg2='{a['arg2']}'"))],
            arguments=[
                {"name": "arg1", "title": "First argument", "description": "First test argument", "required": True},
                {"name": "arg2", "title": "Second argument", "description": "Second test argument", "required": True},
            ],
            title="Prompt with arguments",
            completions={"arg1": ["paris", "park", "party", "test", "testing", "tested"], "arg2": ["alpha", "beta", "gamma"]},
        )
    )
    reg.add(
        Prompt(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds the resource named by resourceUri.",
            _embedded_resource_prompt,
            arguments=[{"name": "resourceUri", "title": "Resource URI", "description": "URI of the resource to embed", "required": True}],
            title="Prompt with embedded resource",
        )
    )
    reg.add(
        Prompt(
            "test_prompt_with_image",
            "A prompt with image content.",
            lambda ctx, a: [_user({"type": "image", "data": PNG_1X1, "mimeType": "image/png"}), _user(_text("Please analyze the image above."))],
            title="Prompt with image",
        )
    )
    reg.add(
        Prompt(
            "test_input_required_result_prompt",
            "A prompt that asks the client for context (InputRequiredResult) before it renders.",
            _prompt_with_input,
            title="Prompt needing input",
            since="2026-07-28",
            uses_inputs=True,
        )
    )


def install(server: "Server", features: "Features") -> None:
    reg: PromptRegistry = features.prompts
    _register_fixtures(reg)

    def prompts_list(ctx: "RequestContext", params: dict[str, Any]) -> dict[str, Any]:
        page, nxt = paginate("prompts/list", params, reg.visible(ctx.version), server.config.page_size_for("prompts/list"))
        out: dict[str, Any] = {"prompts": [p.describe(ctx.version) for p in page]}
        if nxt is not None:
            out["nextCursor"] = nxt
        return out

    def prompts_get(ctx: "RequestContext", params: dict[str, Any]) -> Any:
        name = params.get("name")
        prompt = reg.get(name, ctx.version) if isinstance(name, str) else None
        if prompt is None:
            raise RPCError(codes.INVALID_PARAMS, f"Invalid prompt name: {name}", {"name": name})
        args = params.get("arguments") or {}
        missing = [a["name"] for a in prompt.arguments if a.get("required") and not isinstance(args.get(a["name"]), str)]
        if missing:
            raise RPCError(codes.INVALID_PARAMS, f"Missing required arguments: {', '.join(missing)}", {"name": name, "missing": missing})

        def finish(messages: Any) -> Any:
            if isinstance(messages, dict):  # an InputRequiredResult (2026-07-28)
                return messages
            return {"description": prompt.description, "messages": messages}

        if prompt.uses_inputs:

            async def run() -> Any:
                return finish(await run_with_inputs(ctx, lambda inputs: prompt.render(ctx, args, inputs)))

            return run()
        return finish(prompt.render(ctx, args))

    server.handlers["prompts/list"] = prompts_list
    server.handlers["prompts/get"] = prompts_get
