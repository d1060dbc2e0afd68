"""2026-07-28 streamable HTTP, Custom Headers from Tool Parameters: the client's side.

The scenario server lists tools whose input schemas mark parameters with ``x-mcp-header``:
``add_numbers`` (the tool ``--call-command`` makes a client call: its integers ``a`` and ``b``
mirrored, an optional ``note`` that the command does not pass), ``header_values`` (single-item
enums with values that need the Base64 sentinel: non-ASCII, padded, a newline, a plain value that
looks like the sentinel; an integer, a boolean) and one tool per broken ``x-mcp-header``
constraint, which a client must exclude from its tool list.  Every ``tools/call`` POST of a valid
tool is judged: each designated parameter with a value mirrored into ``Mcp-Param-{Name}``,
encoded as Value Encoding says; none for a parameter absent or null.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from conformance.client.context import ClientContext
from conformance.runtime.registry import scenario
from conformance.scenarios.client._judge import W_REQUIREMENTS
from conformance.scenarios.client._run import Played, play
from conformance.scenarios.client._server import Answer, ScenarioServer
from conformance.spec.versions import LATEST, Transport
from conformance.wire.envelope import Envelope, Kind
from conformance.wire.headers import header_value, mirrored_params, x_mcp_header_problems

MIRRORED = "client.http2026.param-mirrored"
OMITTED = "client.http2026.param-omitted"
ENCODED = "client.http2026.param-encoded"
BASE64 = "client.http2026.param-base64"
LITERAL = "client.http2026.param-sentinel-literal"
LOWERCASE = "client.http2026.sentinel-lowercase"
EXCLUDED = "client.http2026.invalid-tool-excluded"
HEADER_RULES = (MIRRORED, OMITTED, ENCODED, BASE64, LITERAL, LOWERCASE)

_RO = {"readOnlyHint": True}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description, "annotations": dict(_RO),
            "inputSchema": {"type": "object", "properties": properties, "required": required}}


ADD_NUMBERS = _tool("add_numbers", "Add two integers; a and b are mirrored into Mcp-Param-A / Mcp-Param-B.", {
    "a": {"type": "integer", "x-mcp-header": "A"},
    "b": {"type": "integer", "x-mcp-header": "B"},
    "note": {"type": "string", "description": "optional; mirrored into Mcp-Param-Note when given", "x-mcp-header": "Note"},
}, ["a", "b"])
HEADER_VALUES = _tool("header_values", "Values for the Mcp-Param-* encoding rules (each has one allowed value).", {
    "region": {"type": "string", "enum": ["us-west1"], "x-mcp-header": "Region"},
    "greeting": {"type": "string", "enum": ["Hello, 世界"], "x-mcp-header": "Greeting"},
    "padded": {"type": "string", "enum": [" padded "], "x-mcp-header": "Padded"},
    "lines": {"type": "string", "enum": ["line1\nline2"], "x-mcp-header": "Lines"},
    "literal": {"type": "string", "enum": ["=?base64?literal?="], "x-mcp-header": "Literal"},
    "count": {"type": "integer", "enum": [42], "x-mcp-header": "Count"},
    "flag": {"type": "boolean", "enum": [True], "x-mcp-header": "Flag"},
}, ["region", "greeting", "padded", "lines", "literal", "count", "flag"])
#: a tool whose name is not a plain ASCII header value: Mcp-Name carries it as =?base64?...?=
NAME_TOOL = _tool("header_name_\u00e9t\u00e9", "Its name is not plain ASCII: the Mcp-Name header carries it Base64-encoded.",
                  {"text": {"type": "string"}}, [])
_TEXT = {"type": "string"}
#: one tool per broken x-mcp-header constraint (2026-07-28 streamable-http#schema-extension)
INVALID = [
    _tool("bad_header_empty", "x-mcp-header is empty.", {"text": {**_TEXT, "x-mcp-header": ""}}, ["text"]),
    _tool("bad_header_token", "x-mcp-header is not an HTTP token.", {"text": {**_TEXT, "x-mcp-header": "Bad Name"}}, ["text"]),
    _tool("bad_header_control", "x-mcp-header has a control character.", {"text": {**_TEXT, "x-mcp-header": "Bad\x01Name"}}, ["text"]),
    _tool("bad_header_duplicate", "Two x-mcp-header values differ only in case.",
          {"text": {**_TEXT, "x-mcp-header": "Dup"}, "other": {**_TEXT, "x-mcp-header": "dup"}}, ["text"]),
    _tool("bad_header_number", "x-mcp-header on a number parameter.",
          {"text": _TEXT, "value": {"type": "number", "x-mcp-header": "Value"}}, ["text"]),
    _tool("bad_header_items", "x-mcp-header under items.",
          {"text": _TEXT, "list": {"type": "array", "items": {**_TEXT, "x-mcp-header": "Item"}}}, ["text"]),
    _tool("bad_header_anyof", "x-mcp-header under anyOf.",
          {"text": _TEXT, "choice": {"anyOf": [{**_TEXT, "x-mcp-header": "Choice"}]}}, ["text"]),
]
#: the second run's add_numbers (only with --call-command): a and b annotated "A" and "a"
ADD_NUMBERS_INVALID = _tool("add_numbers", "Add two integers (its x-mcp-header values repeat case-insensitively).", {
    "a": {"type": "integer", "x-mcp-header": "A"},
    "b": {"type": "integer", "x-mcp-header": "a"},
}, ["a", "b"])

_SENTINEL = re.compile(r"=\?base64\?(.*)\?=\Z", re.S)
_SENTINEL_ANY_CASE = re.compile(r"=\?base64\?(.*)\?=\Z", re.S | re.I)


def _configure(tools: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    names = {t["name"] for t in tools}

    def configure(server: ScenarioServer) -> None:
        async def tools_list(env: Envelope) -> Answer:
            return Answer(result=server._result("tools/list", {"tools": tools}))

        async def tools_call(env: Envelope) -> Answer | None:
            params = env.params if isinstance(env.params, dict) else {}
            name = params.get("name")
            if name == "add_numbers":
                return None  # the default answer: the sum
            if name in names:
                return Answer(result=server._result("tools/call", {"content": [{"type": "text", "text": "ok"}]}))
            return None

        server.hooks["tools/list"] = tools_list
        server.hooks["tools/call"] = tools_call

    return configure


def _calls(played: Played) -> list[tuple[Any, Envelope]]:
    """(HTTP request record, tools/call envelope) of every tools/call POST the client made."""
    ep = played.run.endpoint
    out = []
    for r in ep.requests if ep is not None else []:
        if r.method != "POST":
            continue
        for env in r.envelopes[:1]:
            if env.kind is Kind.REQUEST and env.method == "tools/call" and isinstance(env.params, dict):
                out.append((r, env))
    return out


def _text(value: Any) -> str:
    """A value's string form (Value Encoding, Type conversion)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return str(value)


def _same_value(shown: str, value: Any) -> bool:
    """The header names the value, maybe in another form (True, 42.0): the encoding's fault."""
    if isinstance(value, bool):
        return shown.strip().lower() == _text(value)
    if isinstance(value, (int, float)):
        try:
            return float(shown) == float(value)
        except ValueError:
            return False
    return False


class _Verdicts:
    def __init__(self, ctx: ClientContext, played: Played) -> None:
        self.ctx, self.peer = ctx, played.run.peer
        self.failed: set[str] = set()
        self.seen: set[str] = set()  # rules a call exercised

    def fail(self, rid: str, env: Envelope, problem: str, message: str, expected: Any, actual: Any) -> None:
        self.seen.add(rid)
        if rid in self.failed:
            return
        self.failed.add(rid)
        self.ctx.check(rid, False, problem=problem, message=message, expected=expected, actual=actual,
                       entries=[env], peer=self.peer)


def _judge_param(v: _Verdicts, r: Any, env: Envelope, tool: str, path: tuple[str, ...], header: str) -> None:
    args = env.params.get("arguments") if isinstance(env.params.get("arguments"), dict) else {}
    value: Any = args
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    hname = f"Mcp-Param-{header}"
    got = r.header(hname)
    where = f"POST #{r.n} (tools/call {tool}, {'.'.join(path)}={value!r})"
    if value is None:
        v.seen.add(OMITTED)
        if got is not None:
            v.fail(OMITTED, env, "ParamHeaderNotOmitted", f"{where} carries {hname}: {got!r}; the parameter is "
                   f"{'null' if path[-1] in args else 'not in the arguments'}, so the header must be omitted",
                   "no header", got)
        return
    v.seen.add(MIRRORED)
    if got is None:
        v.fail(MIRRORED, env, "ParamHeaderMissing", f"{where} has no {hname} header", header_value(_text(value)), None)
        return
    text = _text(value)
    if isinstance(value, (bool, int, float)):
        v.seen.add(ENCODED)
    unsafe = header_value(text) != text  # needs the sentinel (or looks like it)
    looks_like_sentinel = bool(_SENTINEL.match(text))
    if looks_like_sentinel:
        v.seen.add(LITERAL)
    elif unsafe:
        v.seen.add(BASE64)
    decoded: str | None = None
    m = _SENTINEL.match(got)
    if m is not None:
        try:
            decoded = base64.b64decode(m.group(1), validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            decoded = None
    if decoded == text:
        v.seen.add(LOWERCASE)
        return  # the sentinel form of the value
    if looks_like_sentinel and got == text:
        v.fail(LITERAL, env, "SentinelLikeValueNotEncoded", f"{where}: {hname} carries {got!r} as it is; a plain value "
               "that matches the sentinel pattern must be Base64-encoded", header_value(text), got)
        return
    upper = _SENTINEL_ANY_CASE.match(got) if m is None else None
    if upper is not None:
        try:
            other = base64.b64decode(upper.group(1), validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            other = None
        if other == text:
            v.fail(LOWERCASE, env, "SentinelMarkersNotLowercase", f"{where}: {hname} is {got!r}; the markers must be "
                   "=?base64? and ?= exactly (lowercase), else the value is a literal string", header_value(text), got)
            return
    if got == text:
        return  # plain, as it is
    if unsafe and m is None and upper is None:
        v.fail(BASE64, env, "ParamValueNotBase64", f"{where}: {hname} is {got!r}; a value that is not plain visible "
               "ASCII (or has leading or trailing whitespace) must travel as =?base64?...?=", header_value(text), got)
        return
    if m is None and _same_value(got, value):
        v.fail(ENCODED, env, "ParamValueMisencoded", f"{where}: {hname} is {got!r}; an integer is sent as its decimal "
               "string, a boolean as lowercase true or false", text, got)
        return
    v.fail(MIRRORED, env, "ParamHeaderMismatch", f"{where}: {hname} is {got!r}, which does not carry the argument's "
           "value", header_value(text), got)


def _judge_headers(ctx: ClientContext, played: Played, valid: dict[str, dict[str, Any]]) -> set[str]:
    """Judge the Mcp-Param-* headers of every tools/call of a valid tool; returns the rules exercised."""
    v = _Verdicts(ctx, played)
    for r, env in _calls(played):
        tool = env.params.get("name")
        if tool not in valid:
            continue
        for path, header, _ in mirrored_params(valid[tool]["inputSchema"]):
            _judge_param(v, r, env, tool, path, header)
    for rid in v.seen - v.failed:
        ctx.check(rid, True, peer=played.run.peer)
    return v.seen


def _called(played: Played) -> list[tuple[Any, Envelope]]:
    return [(r, env) for r, env in _calls(played) if isinstance(env.params.get("name"), str)]


@scenario(requirements=[*HEADER_RULES, EXCLUDED, *W_REQUIREMENTS], role="client", versions=[LATEST],
          transports=[Transport.STREAMABLE_HTTP], order=4)
async def param_headers(ctx: ClientContext) -> None:
    """Tools with x-mcp-header annotations, valid and invalid: the client mirrors the designated
    parameters of its tools/call into Mcp-Param-{Name} headers, Base64-encoding what needs it, and
    never calls a tool whose annotations break the constraints."""
    valid = [ADD_NUMBERS, HEADER_VALUES, NAME_TOOL]
    tools = [*valid, *INVALID]
    assert all(not x_mcp_header_problems(t["inputSchema"]) for t in valid)
    assert all(x_mcp_header_problems(t["inputSchema"]) for t in INVALID)
    played = await play(ctx, configure=_configure(tools), launch={"call": True})
    hint = "" if ctx.target.call_command else " (give --call-command to make it call a tool)"
    called = _called(played)
    if not called:
        for rid in (*HEADER_RULES, EXCLUDED):
            ctx.not_reached(rid, f"the client made no tools/call{hint}")
        return
    seen = _judge_headers(ctx, played, {t["name"]: t for t in valid})
    why_not = {
        OMITTED: "no tools/call left a designated parameter out (add_numbers' note)",
        ENCODED: "no tools/call passed an integer or boolean designated parameter",
        BASE64: "the client did not call header_values with a value that needs Base64",
        LITERAL: "the client did not call header_values with its sentinel-like value",
        LOWERCASE: "the client sent no header in the Base64 sentinel form",
        MIRRORED: "the client called no tool with a designated parameter",
    }
    for rid, why in why_not.items():
        if rid not in seen:
            ctx.not_reached(rid, why)

    invalid = {t["name"]: x_mcp_header_problems(t["inputSchema"])[0] for t in INVALID}
    bad = [(r, env) for r, env in called if env.params["name"] in invalid]
    if bad:
        r, env = bad[0]
        name = env.params["name"]
        ctx.check(EXCLUDED, False, problem="InvalidToolCalled",
                  message=f"POST #{r.n} calls {name!r}, a tool the client must have excluded from its tools/list result "
                          f"({invalid[name]})", expected="no call of a tool with invalid x-mcp-header annotations",
                  actual=name, entries=[env], peer=played.run.peer)
        return
    others = sorted({env.params["name"] for _, env in called} - {"add_numbers"})
    if others:
        ctx.check(EXCLUDED, True, message=f"the client called {', '.join(others)} and none of the {len(INVALID)} tools "
                                          "with invalid x-mcp-header annotations", peer=played.run.peer)
        return
    if not ctx.target.call_command:
        ctx.not_reached(EXCLUDED, "the client called only add_numbers: what it does with an invalid tool is not shown")
        return
    # --call-command: the client calls add_numbers when told; now add_numbers is invalid
    again = await play(ctx, configure=_configure([ADD_NUMBERS_INVALID, HEADER_VALUES]), launch={"call": True})
    calls = [(r, env) for r, env in _called(again) if env.params["name"] == "add_numbers"]
    problem = x_mcp_header_problems(ADD_NUMBERS_INVALID["inputSchema"])[0]
    if calls:
        r, env = calls[0]
        ctx.check(EXCLUDED, False, problem="InvalidToolCalled",
                  message=f"with add_numbers listed with invalid x-mcp-header annotations ({problem}), the client "
                          f"still called it (POST #{r.n})", expected="add_numbers excluded, not called",
                  actual="add_numbers", entries=[env], peer=again.run.peer)
    else:
        ctx.check(EXCLUDED, True, message=f"told to call add_numbers, the client called it while its annotations were "
                                          f"valid and not once they broke a constraint ({problem})", peer=again.run.peer)


# -- HeaderMismatch: list the tools again, retry with the headers ------------------------------------

RETRY = "client.http2026.header-mismatch-retry"
#: add_numbers as first listed: no x-mcp-header annotations (the server adds them before the call)
ADD_NUMBERS_PLAIN = _tool("add_numbers", "Add two integers.",
                          {"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"])


@scenario(requirements=[RETRY, *W_REQUIREMENTS], role="client", versions=[LATEST],
          transports=[Transport.STREAMABLE_HTTP], order=5)
async def header_mismatch_retry(ctx: ClientContext) -> None:
    """add_numbers is listed without x-mcp-header annotations; the client's first call of it is
    refused with HTTP 400 and HeaderMismatch, the tool now listed with a and b mirrored: the client
    lists the tools again and retries the call with Mcp-Param-A and Mcp-Param-B."""
    state: dict[str, Any] = {"refused": None}

    def configure(server: ScenarioServer) -> None:
        async def tools_list(env: Envelope) -> Answer:
            tools = [ADD_NUMBERS if state["refused"] is not None else ADD_NUMBERS_PLAIN]
            return Answer(result=server._result("tools/list", {"tools": tools}))

        async def tools_call(env: Envelope) -> Answer | None:
            params = env.params if isinstance(env.params, dict) else {}
            if params.get("name") == "add_numbers" and state["refused"] is None:
                state["refused"] = env
                return Answer(error={"code": -32020, "message": "Header mismatch: the Mcp-Param-A header is required "
                                                                "(add_numbers mirrors a and b into headers now)"})
            return None

        server.hooks["tools/list"] = tools_list
        server.hooks["tools/call"] = tools_call

    played = await play(ctx, configure=configure, launch={"call": True})
    hint = "" if ctx.target.call_command else " (give --call-command to make it call a tool)"
    if state["refused"] is None:
        ctx.not_reached(RETRY, f"the client made no tools/call of add_numbers{hint}")
        return
    ep = played.run.endpoint
    posts = [r for r in (ep.requests if ep is not None else []) if r.method == "POST" and r.envelopes]
    refused = next((r for r in posts if any(e is state["refused"] or (e.kind is Kind.REQUEST and e.method == "tools/call"
                                                                      and e.id == state["refused"].id) for e in r.envelopes)), None)
    later = [r for r in posts if refused is not None and r.n > refused.n]
    listed = next((r for r in later if any(e.kind is Kind.REQUEST and e.method == "tools/list" for e in r.envelopes)), None)
    retried = [r for r, env in _calls(played) if refused is not None and r.n > refused.n and env.params.get("name") == "add_numbers"]
    with_headers = [r for r in retried if r.header("mcp-param-a") is not None and r.header("mcp-param-b") is not None]
    if listed is not None and with_headers and with_headers[0].n > listed.n:
        ctx.check(RETRY, True, message=f"after the HeaderMismatch the client listed the tools (POST #{listed.n}) and called "
                                       f"add_numbers again with Mcp-Param-A and Mcp-Param-B (POST #{with_headers[0].n})",
                  peer=played.run.peer)
        return
    after_list = [r for r in retried if listed is not None and r.n > listed.n]
    if after_list:  # listed again and retried; the retry's headers are client.http2026.param-mirrored's to judge
        ctx.check(RETRY, True, message=f"after the HeaderMismatch the client listed the tools (POST #{listed.n}) and called "
                                       f"add_numbers again (POST #{after_list[0].n}); whether that call mirrors a and b "
                                       "into headers is client.http2026.param-mirrored's", peer=played.run.peer)
        return
    if listed is None:
        what = "it did not call tools/list" + (f" (it called add_numbers again, POST #{retried[0].n})" if retried else " nor retry")
    else:
        what = f"it called tools/list (POST #{listed.n}) but did not retry the call"
    ctx.check(RETRY, False, problem="NoRetryAfterHeaderMismatch",
              message=f"add_numbers was refused with HeaderMismatch (HTTP 400, -32020); {what}",
              expected="tools/list, then tools/call add_numbers with Mcp-Param-A and Mcp-Param-B",
              actual=what, entries=[state["refused"]], peer=played.run.peer)
