"""Asking the client for input, in both eras, with one handler.

A handler that needs sampling, elicitation or roots returns :class:`InputRequired` (the requests it
needs, keyed, and optional state).  What happens next depends on the era of the request:

* 2026-07-28 (basic/patterns/mrtr): the server answers with an ``InputRequiredResult``
  (``resultType: "input_required"``, ``inputRequests``, an integrity-protected ``requestState``);
  the client retries with ``inputResponses`` and the echoed ``requestState``; the handler runs
  again and finds them in ``ctx.inputs`` / ``ctx.state``.
* 2024-11-05 .. 2025-11-25: the server sends each request to the client (server-to-client
  requests on the request's stream), collects the results and runs the handler again with them.

Either way a request is only sent if the client declared the capability it needs ("Servers MUST
NOT send an inputRequests that the client has not declared support for"); otherwise 2026-07-28
answers ``-32021 MissingRequiredClientCapability`` and earlier versions a tool execution error.

``requestState`` is ``base64url(json).base64url(hmac-sha256)`` under a per-process key, bound to
the method, the tool/prompt/resource name and an expiry: "servers MUST protect its integrity ...
and MUST reject state that fails verification".
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from conformance.spec import errors as codes

from reference_server.errors import RPCError

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.messages import RequestContext

__all__ = ["InputRequired", "run_with_inputs", "required_capability", "MissingCapability", "missing_capabilities", "InputState", "elicit", "sample", "list_roots", "accepted", "form_schemas", "content_errors"]

_KEY = secrets.token_bytes(32)
_STATE_TTL = 600.0
_MAX_ROUNDS = 8

# method of an input request -> the client capability it needs
_CAPABILITY = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}


@dataclass
class InputRequired:
    """Returned by a handler that needs input from the client before it can complete."""

    requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> {"method", "params"}
    state: Any = None  # JSON value carried in requestState (integrity protected)


@dataclass
class InputState:
    """What a handler sees of the client's previous answers."""

    responses: dict[str, Any] = field(default_factory=dict)
    state: Any = None
    round: int = 0


class MissingCapability(Exception):
    def __init__(self, capabilities: dict[str, Any]) -> None:
        super().__init__(", ".join(capabilities))
        self.capabilities = capabilities


def required_capability(method: str) -> str | None:
    return _CAPABILITY.get(method)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_state(ctx: "RequestContext", state: Any, round_: int) -> str:
    payload = {"m": ctx.method, "n": _target(ctx), "r": round_, "s": state, "e": int(time.time() + _STATE_TTL)}
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    mac = hmac.new(_KEY, body, hashlib.sha256).digest()
    return f"{_b64(body)}.{_b64(mac)}"


def verify_state(ctx: "RequestContext", token: Any) -> tuple[Any, int]:
    bad = RPCError(codes.INVALID_PARAMS, "Invalid params: requestState failed integrity verification", {"requestState": "rejected"})
    if not isinstance(token, str) or token.count(".") != 1 or len(token) > 65536:
        raise bad
    body_b64, mac_b64 = token.split(".")
    try:
        body = _unb64(body_b64)
        mac = _unb64(mac_b64)
    except (ValueError, TypeError):
        raise bad from None
    if not hmac.compare_digest(hmac.new(_KEY, body, hashlib.sha256).digest(), mac):
        raise bad
    payload = json.loads(body)
    if payload.get("m") != ctx.method or payload.get("n") != _target(ctx):
        raise RPCError(codes.INVALID_PARAMS, "Invalid params: requestState belongs to a different request", {"requestState": "mismatch"})
    if payload.get("e", 0) < time.time():
        raise RPCError(codes.INVALID_PARAMS, "Invalid params: requestState expired", {"requestState": "expired"})
    return payload.get("s"), int(payload.get("r", 0))


def _target(ctx: "RequestContext") -> str:
    p = ctx.params
    return str(p.get("name") or p.get("uri") or "")


def _missing_capabilities(ctx: "RequestContext", requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    caps = ctx.client_capabilities if isinstance(ctx.client_capabilities, dict) else {}
    missing: dict[str, Any] = {}
    for req in requests.values():
        method = req.get("method", "")
        cap = _CAPABILITY.get(method)
        if cap is None:
            continue
        declared = caps.get(cap)
        if not isinstance(declared, dict):
            missing[cap] = {}
        elif method == "elicitation/create":
            # "an empty capabilities object is equivalent to declaring support for form mode only";
            # "Servers MUST NOT send elicitation requests with modes that are not supported"
            mode = (req.get("params") or {}).get("mode", "form")
            modes = {m for m in ("form", "url") if m in declared} or {"form"}
            if mode not in modes:
                missing[cap] = {mode: {}}
    return missing


def missing_capabilities(ctx: "RequestContext", requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The client capabilities ``requests`` need that the request ``ctx`` did not declare."""
    return _missing_capabilities(ctx, requests)


def initial_state(ctx: "RequestContext") -> InputState:
    """Read ``inputResponses``/``requestState`` of a (modern) retry."""
    if not ctx.modern:
        return InputState()
    params = ctx.params
    responses = params.get("inputResponses")
    token = params.get("requestState")
    state: Any = None
    round_ = 0
    schemas: dict[str, Any] = {}
    if token is not None:
        state, round_ = verify_state(ctx, token)
        if isinstance(state, dict) and _SCHEMAS in state:  # the forms asked for, kept beside the handler's state
            schemas, state = state.get(_SCHEMAS) or {}, state.get("state")
    if responses is not None and not isinstance(responses, dict):
        raise RPCError(codes.INVALID_PARAMS, "Invalid params: inputResponses must be an object", {"inputResponses": "not an object"}, http_status=400)
    kept = {k: v for k, v in (responses or {}).items() if not content_errors(v, schemas.get(k))}
    # an answer whose content does not match its form is left out: the handler asks for it again
    # ("Servers SHOULD validate received data matches the requested schema"; basic/patterns/mrtr: a
    # server SHOULD ask for missing information again with a new InputRequiredResult)
    return InputState(responses=kept, state=state, round=round_)


async def run_with_inputs(ctx: "RequestContext", call: Callable[[InputState], Any], *, on_missing: Callable[[dict[str, Any]], Any] | None = None) -> Any:
    """Run ``call(inputs)`` until it returns something other than :class:`InputRequired`."""
    inputs = initial_state(ctx)
    for _ in range(_MAX_ROUNDS):
        result = call(inputs)
        if hasattr(result, "__await__"):
            result = await result
        if not isinstance(result, InputRequired):
            return result
        if not result.requests and result.state is None:
            raise RPCError(codes.INTERNAL_ERROR, "handler asked for input without requests or state")
        missing = _missing_capabilities(ctx, result.requests)
        if missing:
            if ctx.modern:
                raise RPCError(
                    codes.MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"Missing required client capability: {', '.join(missing)}",
                    {"requiredCapabilities": missing},
                    http_status=400,
                )
            if on_missing is not None:
                return on_missing(missing)
            raise RPCError(codes.INVALID_REQUEST, f"the client did not declare the capability this request needs: {', '.join(missing)}", {"requiredCapabilities": missing})
        if ctx.modern:
            out: dict[str, Any] = {"resultType": "input_required"}
            if result.requests:
                out["inputRequests"] = result.requests
            forms = form_schemas(result.requests)
            state = {_SCHEMAS: forms, "state": result.state} if forms else result.state
            out["requestState"] = sign_state(ctx, state, inputs.round + 1)
            return out
        # legacy: ask the client now, on this request's stream, and run again
        responses: dict[str, Any] = {}
        forms = form_schemas(result.requests)
        for key, req in result.requests.items():
            responses[key] = await ctx.request(req["method"], req.get("params"))
            problems = content_errors(responses[key], forms.get(key))
            if problems:
                # "Servers SHOULD validate received data matches the requested schema" (client/elicitation)
                raise RPCError(codes.INVALID_PARAMS, "Invalid params: the elicitation content does not match the requested schema", {"elicitation": key, "problems": problems[:5]})
        inputs = InputState(responses=responses, state=result.state, round=inputs.round + 1)
    raise RPCError(codes.INTERNAL_ERROR, "too many input rounds")


_SCHEMAS = "mcp-reference-server/requestedSchemas"


def form_schemas(requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """key -> requestedSchema of every form mode elicitation among ``requests``."""
    out: dict[str, Any] = {}
    for key, req in requests.items():
        params = req.get("params") if isinstance(req, dict) else None
        if req.get("method") == "elicitation/create" and isinstance(params, dict) and params.get("mode", "form") == "form":
            if isinstance(params.get("requestedSchema"), dict):
                out[key] = params["requestedSchema"]
    return out


def content_errors(response: Any, schema: Any) -> list[str]:
    """What is wrong with the content of an accepted ElicitResult for the form ``schema`` (None: no form)."""
    if not isinstance(schema, dict) or not isinstance(response, dict) or response.get("action") != "accept":
        return []
    content = response.get("content", {})
    from conformance.schema.validate import import_jsonschema

    validator = import_jsonschema().Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(content)'}: {e.message}" for e in validator.iter_errors(content)]


def elicit(version: str, message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An ``elicitation/create`` input request in the shape ``version`` defines."""
    params: dict[str, Any] = {"message": message, "requestedSchema": schema}
    if version not in ("2025-06-18",):  # "mode" exists from 2025-11-25
        params = {"mode": "form", **params}
    return {"method": "elicitation/create", "params": params}


def sample(prompt: str, max_tokens: int = 100) -> dict[str, Any]:
    return {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": max_tokens}}


def list_roots() -> dict[str, Any]:
    return {"method": "roots/list", "params": {}}


def accepted(response: Any) -> dict[str, Any] | None:
    """The ``content`` of an accepted ElicitResult, else None."""
    if isinstance(response, dict) and response.get("action") == "accept":
        content = response.get("content")
        return content if isinstance(content, dict) else {}
    return None
