"""client/elicitation, the server's half: the elicitation requests a server sends, the
URLElicitationRequiredError (-32042), the completion notification, and what the server does with
invalid, declined and cancelled answers.

Tools that elicit are called with the elicitation capability declared in form mode only, then (from
2025-11-25) in both modes: up to 2025-11-25 on new connections that declared it in initialize, the
server's ``elicitation/create`` requests answered as a client would; in 2026-07-28 with it in the
request's ``_meta``, the ``elicitation/create`` input requests of each InputRequiredResult answered
in the retry.  Every elicitation request is judged (:func:`judge_requests`); then one form is
answered with content that does not match its schema, and (2026-07-28) declined and cancelled.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

from conformance.runtime.peer import PeerError, RawPeer
from conformance.runtime.registry import scenario
from conformance.server.context import ScenarioContext
from conformance.spec import errors
from conformance.wire.transcript import Direction
from conformance.wire.envelope import Envelope, Kind, dumps, id_repr

from ._features import open_notification_stream
from ._helpers import barrier
from ._stateless import CLIENT_CAPABILITIES_KEY, FULL_CAPS, ask, input_requests_of, input_responses, is_input_required, list_tools

V2511, LATEST = "2025-11-25", "2026-07-28"
FORM_ONLY: dict[str, Any] = {"elicitation": {}}  # "an empty capabilities object is equivalent to ... form mode only"
BOTH_MODES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
MAX_ROUNDS = 4
MAX_CANDIDATES = 6
MAX_REPORTED = 5
MARK = 7301946  # the unique value of the invalid content (a number where a string belongs)
MARK_TEXT = f"mcp-conformance-invalid-{MARK}"

#: the official runner's fixtures that elicit, with the arguments they need
FIXTURES: dict[str, dict[str, Any]] = {
    "test_elicitation": {"message": "mcp-conformance: please answer this form"},
    "test_elicitation_sep1034_defaults": {},
    "test_elicitation_sep1330_enums": {},
    "test_url_elicitation": {},
    "test_url_elicitation_required": {},
    "test_input_required_result_elicitation": {},
}
_ELICIT_WORDS = re.compile(r"elicit", re.I)

REQS = [
    "elicitation.request.declared-mode",
    "elicitation.request.message",
    "elicitation.request.form-params",
    "elicitation.request.url-params",
    "elicitation.request.url-valid",
    "elicitation.request.no-sensitive",
    "elicitation.request.form-no-urls",
    "elicitation.request.url-https",
    "elicitation.request.url-no-user-data",
    "elicitation.url-required.elicitations",
    "elicitation.url-required.code",
    "elicitation.complete.elicitation-id",
    "elicitation.complete.initiator-only",
    "elicitation.content.validated",
    "elicitation.declined.handled",
]


# -- what is read off a request (pure) -------------------------------------------------------------


def _words(text: str) -> str:
    """``apiKey``/``api_key``/``API-Key`` -> ``api key``: lower-case words separated by spaces."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


_SECRET = re.compile(
    r"\b(password|passwd|passphrase|pass phrase|api key|apikey|access token|refresh token|bearer token|auth token"
    r"|client secret|secret key|private key|credit card|card number|card no|cvv|cvc|cvv2|card security code)\b"
)


def sensitive_fields(schema: Any) -> list[str]:
    """The properties of a form's requestedSchema that ask for a secret or a credential (by their
    name, title or description): passwords, API keys, access tokens, payment card data."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    out = []
    for name, sub in (props.items() if isinstance(props, dict) else ()):
        texts = [str(name)] + [sub.get(k) for k in ("title", "description") if isinstance(sub, dict) and isinstance(sub.get(k), str)]
        if any(_SECRET.search(_words(t)) for t in texts):
            out.append(str(name))
    return out


_URL_IN_TEXT = re.compile(r"\b(?:https?://|www\.)[^\s<>\"')\]]+", re.I)


def urls_in_form(params: dict[str, Any]) -> list[str]:
    """URLs written in the fields of a form mode request: its message and its requestedSchema's
    titles, descriptions, defaults, enum values and option titles."""
    texts: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, str):
            if key in ("message", "title", "description", "default", "enum", "const", "enumNames", "examples"):
                texts.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    walk(params.get("message"), "message")
    walk(params.get("requestedSchema"))
    return [m.group(0) for t in texts for m in _URL_IN_TEXT.finditer(t)]


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def url_problem(url: Any) -> str | None:
    """Why ``url`` is not a valid (absolute) URL, or None."""
    if not isinstance(url, str) or not url:
        return "not a non-empty string"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "contains whitespace or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as exc:
        return f"cannot be parsed ({exc})"
    if not parts.scheme or not _SCHEME.fullmatch(parts.scheme):
        return "has no scheme (a relative reference, not a URL)"
    if parts.scheme.lower() in ("http", "https") and not parts.hostname:
        return f"is an {parts.scheme} URL without a host"
    return None


_DEV_SUFFIXES = (".localhost", ".test", ".local", ".internal", ".example", ".invalid")


def development_host(host: str | None) -> bool:
    """localhost and names or addresses that only a development setup reaches."""
    if not host:
        return True
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(_DEV_SUFFIXES):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


_CREDENTIAL_PARAMS = frozenset({
    "password", "passwd", "pwd", "pass", "passphrase", "access_token", "accesstoken", "id_token", "idtoken",
    "refresh_token", "refreshtoken", "api_key", "apikey", "x-api-key", "client_secret", "clientsecret", "secret",
    "private_key", "auth_token", "authtoken", "bearer", "session_token", "ssn", "credit_card", "card_number", "cvv",
})
_EMAIL = re.compile(r"^[^@\s/]+@[^@\s/]+\.[A-Za-z]{2,}$")


def user_data_in_url(url: str) -> list[str]:
    """What in ``url`` carries credentials or personal data: a password in its user information,
    a query or fragment parameter named for a credential, a value that is an email address."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    out = []
    if password:
        out.append("a password in the user information")
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        for name, value in parse_qsl(text, keep_blank_values=True):
            if name.lower().replace("-", "_") in _CREDENTIAL_PARAMS or name.lower() in _CREDENTIAL_PARAMS:
                out.append(f"the {where} parameter {name!r}")
            elif _EMAIL.match(value):
                out.append(f"the email address in the {where} parameter {name!r}")
    return out


def invalid_content(schema: Any) -> dict[str, Any]:
    """Content for ``schema`` where every property has a value of another type, each carrying
    MARK (a string property gets the number, any other the text); within what ElicitResult allows."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    out: dict[str, Any] = {}
    for name, sub in (props.items() if isinstance(props, dict) else ()):
        kind = sub.get("type") if isinstance(sub, dict) else None
        out[name] = MARK if kind == "string" else MARK_TEXT
    return out


def _mode(params: dict[str, Any]) -> Any:
    return params.get("mode", "form")


def _declared_modes(caps: dict[str, Any]) -> set[str]:
    el = caps.get("elicitation")
    if not isinstance(el, dict):
        return set()
    return {m for m in ("form", "url") if m in el} or {"form"}


# -- what was seen ---------------------------------------------------------------------------------


@dataclass
class Seen:
    """One elicitation request of the server and where it came."""

    tool: str
    params: dict[str, Any]
    declared: set[str]
    peer: RawPeer
    entries: list[Any]
    where: str  # "elicitation/create (id 3)" or "input request 'user' of the answer to tools/call"


@dataclass
class Probe:
    requests: list[Seen] = field(default_factory=list)
    errors: list[tuple[str, Envelope, RawPeer, set[str]]] = field(default_factory=list)  # tool, error, connection, modes declared
    form_tools: list[str] = field(default_factory=list)  # tools that asked for a form (declared both modes)
    stateful_peers: list[RawPeer] = field(default_factory=list)


def _candidates(tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    by_name = {t["name"]: t for t in tools}
    out = [(n, args) for n, args in FIXTURES.items() if n in by_name]
    for tool in by_name.values():
        if tool["name"] in FIXTURES:
            continue
        schema = tool.get("inputSchema")
        required = schema.get("required") if isinstance(schema, dict) else None
        ann = tool.get("annotations")
        destructive = isinstance(ann, dict) and ann.get("destructiveHint") is True and ann.get("readOnlyHint") is not True
        text = f"{tool.get('name', '')} {tool.get('title', '')} {tool.get('description', '')}"
        if not required and not destructive and _ELICIT_WORDS.search(text):
            out.append((tool["name"], {}))
    return out[:MAX_CANDIDATES]


# -- calling the tools -----------------------------------------------------------------------------

Answerer = Callable[[dict[str, Any]], dict[str, Any]]


def _normal(params: dict[str, Any]) -> dict[str, Any]:
    return input_responses({"k": {"method": "elicitation/create", "params": params}})["k"]


async def _call_stateful(ctx: ScenarioContext, peer: RawPeer, probe: Probe, tool: str, args: dict[str, Any],
                         declared: set[str], answer: Answerer = _normal) -> Envelope | None:
    def handler(env: Envelope) -> dict[str, Any]:
        params = env.params if isinstance(env.params, dict) else {}
        probe.requests.append(Seen(tool, params, declared, peer, [env], f"elicitation/create (id {id_repr(env.id)}) during tools/call {tool!r}"))
        return answer(params)

    peer.on_request("elicitation/create", handler)
    rid = await peer.request("tools/call", {"name": tool, "arguments": args})
    try:
        env = await peer.expect_response(rid, timeout=ctx.timeout)
    except PeerError as exc:
        ctx.note(f"tools/call {tool!r}: no answer within {ctx.timeout:g} s ({exc}); not judged")
        try:
            await peer.notify("notifications/cancelled", {"requestId": rid, "reason": "mcp-conformance: no answer in time"})
        except PeerError:
            pass
        return None
    if env.kind is Kind.ERROR:
        probe.errors.append((tool, env, peer, declared))
    return env


async def _call_modern(ctx: ScenarioContext, peer: RawPeer, probe: Probe | None, tool: str, args: dict[str, Any],
                       caps: dict[str, Any], answer: Answerer = _normal, *, rounds: int = MAX_ROUNDS) -> Envelope | None:
    """tools/call with ``caps`` in _meta, every InputRequiredResult answered (``answer`` for the
    elicitations), up to ``rounds`` retries; the last answer."""
    declared = _declared_modes(caps)
    params: dict[str, Any] = {"name": tool, "arguments": args}
    for n in range(rounds + 1):
        ans = await ask(peer, "tools/call", params, meta={CLIENT_CAPABILITIES_KEY: caps})
        if ans.env is None:
            ctx.note(f"tools/call {tool!r}: no answer within {ctx.timeout:g} s; not judged")
            return None
        if ans.is_error and probe is not None:
            probe.errors.append((tool, ans.env, peer, declared))
        if not is_input_required(ans) or n == rounds:
            return ans.env
        requests = input_requests_of(ans.result)
        responses = input_responses(requests)
        for key, req in requests.items():
            if isinstance(req, dict) and req.get("method") == "elicitation/create":
                p = req.get("params") if isinstance(req.get("params"), dict) else {}
                if probe is not None:
                    probe.requests.append(Seen(tool, p, declared, peer, [ans.env], f"input request {key!r} of the answer to tools/call {tool!r}"))
                responses[key] = answer(p)
        params = {"name": tool, "arguments": args, "inputResponses": responses}
        state = ans.result.get("requestState")
        if isinstance(state, str):
            params["requestState"] = state
    return None


# -- the scenario ----------------------------------------------------------------------------------


@scenario(requirements=REQS, since="2025-06-18", capability="tools",
          skip_reason="elicitation is new in 2025-06-18")
async def elicitation_requests(ctx: ScenarioContext) -> None:
    """Tools that elicit, called with elicitation declared (form only, then both modes): every
    elicitation request judged, the -32042 errors and completion notifications (2025-11-25), one
    form answered with invalid content, and (2026-07-28) declined and cancelled."""
    peer = await ctx.connect()
    modern = ctx.version == LATEST
    two_modes = ctx.version in (V2511, LATEST)
    probe = Probe()
    passes = [FORM_ONLY, BOTH_MODES] if two_modes else [FORM_ONLY]
    tried: dict[str, dict[str, Any]] = {}
    failed: Any = None
    for caps in passes:
        # a server may list the tools that elicit only to a client that declared elicitation
        conn = peer if modern else await ctx.connect(fresh=True, capabilities=caps)
        tools, failed = await list_tools(conn)
        candidates = _candidates(tools)
        tried.update(candidates)
        if not modern:
            probe.stateful_peers.append(conn)
        for name, args in candidates:
            if modern:
                await _call_modern(ctx, peer, probe, name, args, caps)
            else:
                await _call_stateful(ctx, conn, probe, name, args, _declared_modes(caps))
        if modern:
            continue
        if caps is FORM_ONLY and ctx.applies("elicitation.complete.initiator-only"):
            # this client stays connected, listening, while the other one completes url elicitations
            said = await open_notification_stream(ctx, conn)
            if said:
                ctx.note(f"the connection that declared form mode only: {said}", requirement="elicitation.complete.initiator-only")
        try:
            await barrier(conn, ctx.version)  # a completion notification sent late is in by now
        except PeerError as exc:
            ctx.note(f"the closing ping on the connection that declared {caps} failed ({exc})")
    if not tried:
        why = "tools/list failed" if failed is not None else "no tool of the server elicits"
        ctx.skip(f"{why} (official fixtures such as test_elicitation, or tools whose name or description speaks of "
                 "elicitation and that need no argument)")
    candidates = list(tried.items())
    form_tools = list(dict.fromkeys(s.tool for s in probe.requests if _mode(s.params) == "form"))
    if ctx.version == V2511:
        judge_url_required(ctx, probe)  # its elicitations are elicitation requests too
    judge_requests(ctx, probe)
    if ctx.version == V2511:
        judge_completions(ctx, probe)
    if two_modes:
        await probe_invalid_content(ctx, peer, probe, form_tools, dict(candidates))
    if modern:
        await probe_declined(ctx, peer, form_tools, dict(candidates))


def _report(ctx: ScenarioContext, rid: str, seen: int, bad: list[tuple[Seen, str, Any]], problem: str, what: str, expected: Any) -> None:
    for s, why, actual in bad[:MAX_REPORTED]:
        ctx.check(rid, False, problem=problem, message=f"{s.where}: {why}", expected=expected, actual=actual,
                  entries=s.entries, peer=s.peer)
    if len(bad) > MAX_REPORTED:
        ctx.note(f"{len(bad)} violations in all; the first {MAX_REPORTED} are reported", requirement=rid)
    if not bad:
        if seen:
            ctx.check(rid, True, message=f"{seen} {what} checked")
        else:
            ctx.not_reached(rid, f"the server sent no {what}")


def judge_requests(ctx: ScenarioContext, probe: Probe) -> None:
    reqs = probe.requests
    forms = [s for s in reqs if _mode(s.params) == "form"]
    urls = [s for s in reqs if _mode(s.params) == "url"]
    needs_id = ctx.version == V2511

    bad: list[tuple[Seen, str, Any]] = []
    for s in reqs:
        mode = _mode(s.params)
        if mode in ("form", "url") and mode not in s.declared:
            bad.append((s, f"an elicitation in {mode} mode, but the client declared {' and '.join(sorted(s.declared))} mode only", s.params))
    _report(ctx, "elicitation.request.declared-mode", len(reqs), bad, "UndeclaredElicitationMode", "elicitation request(s)",
            "only the modes the client declared")

    bad = []
    for s in reqs:
        if not isinstance(s.params.get("message"), str):
            bad.append((s, "no string `message`", s.params))
        elif _mode(s.params) not in ("form", "url"):
            bad.append((s, f"mode {_mode(s.params)!r} is neither 'form' nor 'url'", s.params.get("mode")))
    _report(ctx, "elicitation.request.message", len(reqs), bad, "ElicitationParamsMissing", "elicitation request(s)",
            {"message": "<string>", "mode": "form | url (optional for form)"})

    bad = []
    for s in forms:
        schema = s.params.get("requestedSchema")
        if not (isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict)):
            bad.append((s, "a form mode request without a requestedSchema object (type 'object' with properties)", schema))
    _report(ctx, "elicitation.request.form-params", len(forms), bad, "FormWithoutSchema", "form mode elicitation request(s)",
            {"requestedSchema": {"type": "object", "properties": {}}})

    bad = []
    for s in urls:
        missing = [k for k in ("message", "url", *(("elicitationId",) if needs_id else ())) if not isinstance(s.params.get(k), str)]
        if missing:
            bad.append((s, f"a url mode request without a string {', '.join(missing)}", s.params))
    _report(ctx, "elicitation.request.url-params", len(urls), bad, "UrlElicitationParamsMissing", "url mode elicitation request(s)",
            {"mode": "url", "message": "<string>", "url": "<string>", **({"elicitationId": "<string>"} if needs_id else {})})

    bad = []
    url_items = [(s, s.params.get("url")) for s in urls if "url" in s.params]
    for s, url in url_items:
        why = url_problem(url)
        if why:
            bad.append((s, f"the url {url!r} {why}", url))
    _report(ctx, "elicitation.request.url-valid", len(url_items), bad, "InvalidElicitationUrl", "url(s) of url mode elicitation requests",
            "an absolute URL")

    bad = []
    for s in forms:
        found = sensitive_fields(s.params.get("requestedSchema"))
        if found:
            bad.append((s, f"a form asks for sensitive information (the field(s) {', '.join(map(repr, found))}); "
                           "secrets and credentials belong in url mode", s.params.get("requestedSchema")))
    _report(ctx, "elicitation.request.no-sensitive", len(forms), bad, "SensitiveFormField", "form mode elicitation request(s)",
            "no field for a password, API key, access token or payment credential")

    bad = []
    for s in forms:
        found = urls_in_form(s.params)
        if found:
            bad.append((s, f"a form mode request carries the URL(s) {', '.join(map(repr, found[:3]))} in its fields", s.params))
    _report(ctx, "elicitation.request.form-no-urls", len(forms), bad, "UrlInForm", "form mode elicitation request(s)",
            "no URL in the message or the schema's texts")

    bad = []
    checked = 0
    for s, url in url_items:
        if url_problem(url):
            continue
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            continue
        checked += 1
        if parts.scheme.lower() == "http" and not development_host(parts.hostname):
            bad.append((s, f"the url {url!r} is plain http on the host {parts.hostname!r}, not a development one", url))
    _report(ctx, "elicitation.request.url-https", checked, bad, "HttpElicitationUrl", "http(s) url(s) of url mode elicitation requests",
            "https://")

    bad = []
    checked = 0
    for s, url in url_items:
        if not isinstance(url, str):
            continue
        checked += 1
        found = user_data_in_url(url)
        if found:
            bad.append((s, f"the url {url!r} carries data about the user: {', '.join(found)}", url))
    _report(ctx, "elicitation.request.url-no-user-data", checked, bad, "UserDataInElicitationUrl",
            "url(s) of url mode elicitation requests", "no credential or personal data in the URL")


def _elicitations(env: Envelope) -> Any:
    err = env.error if isinstance(env.error, dict) else {}
    data = err.get("data")
    return data.get("elicitations") if isinstance(data, dict) else None


def judge_url_required(ctx: ScenarioContext, probe: Probe) -> None:
    rid, code_rid = "elicitation.url-required.elicitations", "elicitation.url-required.code"
    n = 0
    for tool, env, peer, declared in probe.errors:
        items = _elicitations(env)
        listed = isinstance(items, list) and any(isinstance(i, dict) and i.get("mode") == "url" for i in items)
        if env.error_code == errors.URL_ELICITATION_REQUIRED:
            n += 1
            if not isinstance(items, list) or not items:
                why = "error.data.elicitations is missing or empty"
            else:
                wrong = [i for i in items if not (isinstance(i, dict) and i.get("mode") == "url" and isinstance(i.get("elicitationId"), str))]
                why = f"{len(wrong)} of its elicitation(s) are not url mode with a string elicitationId" if wrong else ""
            ctx.check(rid, not why, problem="UrlElicitationRequiredMalformed",
                      message=(f"tools/call {tool!r} was answered with -32042: " + (why or f"{len(items)} url mode elicitation(s) listed")),
                      expected={"data": {"elicitations": [{"mode": "url", "elicitationId": "<string>", "url": "...", "message": "..."}]}},
                      actual=env.error, json_path="$.error.data.elicitations", entries=[env], peer=peer)
            for i, item in enumerate(items if isinstance(items, list) else ()):
                if isinstance(item, dict) and item.get("mode") == "url":  # (another mode is this rule's violation)
                    probe.requests.append(Seen(tool, item, declared, peer, [env], f"elicitation {i} of the -32042 answer to tools/call {tool!r}"))
        elif listed:
            ctx.check(code_rid, False, problem="WrongErrorCode",
                      message=(f"tools/call {tool!r} was answered with error {id_repr(env.error_code)} listing url mode "
                               "elicitations to complete first; that failure has the code -32042 (URLElicitationRequiredError)"),
                      expected={"code": errors.URL_ELICITATION_REQUIRED}, actual=env.error, json_path="$.error.code",
                      entries=[env], peer=peer)
    if n:
        ctx.check(code_rid, True, message=f"{n} URLElicitationRequiredError(s) with code -32042")
    else:
        ctx.not_reached(rid, "no tool answered with -32042 (URLElicitationRequiredError)")
        ctx.not_reached(code_rid, "no tool answered that a URL mode elicitation must be completed first")


def judge_completions(ctx: ScenarioContext, probe: Probe) -> None:
    rid, only = "elicitation.complete.elicitation-id", "elicitation.complete.initiator-only"
    known = {id(peer): {s.params["elicitationId"] for s in probe.requests
                        if s.peer is peer and isinstance(s.params.get("elicitationId"), str)}
             for peer in probe.stateful_peers}
    n = 0
    for peer in probe.stateful_peers:
        mine = known[id(peer)]
        elsewhere = set().union(*(ids for key, ids in known.items() if key != id(peer))) - mine
        for entry in peer.transcript.entries:
            env = entry.envelope
            if entry.direction != Direction.IN or env is None or env.kind is not Kind.NOTIFICATION:
                continue
            if env.method != "notifications/elicitation/complete":
                continue
            n += 1
            params = env.params if isinstance(env.params, dict) else {}
            eid = params.get("elicitationId")
            if isinstance(eid, str) and eid in elsewhere:
                ctx.check(only, False, problem="CompletionToOtherClient",
                          message=(f"notifications/elicitation/complete for the elicitationId {eid!r} reached a client "
                                   "that did not initiate that elicitation (another connection did)"),
                          expected="the notification only on the connection that got the elicitation",
                          actual=params, entries=[entry.seq], peer=peer)
                continue
            ok = isinstance(eid, str) and eid in mine
            ctx.check(rid, ok, problem="UnknownElicitationId",
                      message=(f"notifications/elicitation/complete names the elicitationId {eid!r}, established in an "
                               "elicitation of this connection" if ok else
                               f"notifications/elicitation/complete names the elicitationId {eid!r}, which no url mode "
                               f"elicitation of this connection established (known: {sorted(mine) or 'none'})"),
                      expected=sorted(mine), actual=params, json_path="$.params.elicitationId", entries=[entry.seq], peer=peer)
            if ok:
                ctx.check(only, True, message=f"notifications/elicitation/complete for {eid!r} on the connection that initiated it")
    if not n:
        ctx.not_reached(rid, "the server sent no notifications/elicitation/complete (servers MAY send it)")
        ctx.not_reached(only, "the server sent no notifications/elicitation/complete (servers MAY send it)")


def _echoes(env: Envelope) -> bool:
    result = env.result if isinstance(env.result, dict) else {}
    body = {k: v for k, v in result.items() if k != "_meta"}
    return str(MARK) in dumps(body).decode()


async def probe_invalid_content(ctx: ScenarioContext, peer: RawPeer, probe: Probe, form_tools: list[str], args: dict[str, dict[str, Any]]) -> None:
    rid = "elicitation.content.validated"
    if not form_tools:
        ctx.not_reached(rid, "no tool asked for a form")
        return
    tool = form_tools[0]
    first = [True]

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        if first[0] and _mode(params) == "form":
            first[0] = False
            return {"action": "accept", "content": invalid_content(params.get("requestedSchema"))}
        return _normal(params)

    if ctx.version == LATEST:
        env = await _call_modern(ctx, peer, None, tool, args[tool], BOTH_MODES, answer, rounds=1)
    else:
        conn = probe.stateful_peers[-1]
        env = await _call_stateful(ctx, conn, Probe(), tool, args[tool], {"form", "url"}, answer)
        peer = conn
    what = f"tools/call {tool!r}, its form accepted with content that does not match the requestedSchema"
    if env is None:
        ctx.not_reached(rid, f"{what}: no answer")
        return
    result = env.result if env.kind is Kind.RESULT and isinstance(env.result, dict) else None
    refused = result is None or result.get("isError") is True or result.get("resultType") == "input_required"
    if refused or not _echoes(env):
        outcome = "an error" if result is None else ("an isError result" if result.get("isError") is True else
                                                     "the form asked again" if result.get("resultType") == "input_required" else None)
        if outcome is None:
            ctx.not_reached(rid, f"{what}: a result that shows nothing of the invalid content (it may have been ignored)")
        else:
            ctx.check(rid, True, message=f"{what}: {outcome}", entries=[env], peer=peer)
        return
    ctx.check(rid, False, problem="InvalidElicitationContentUsed",
              message=(f"{what} (every property of another type, marked {MARK}): the answer is a result that is not an "
                       "error and shows the invalid values back; the server used data it did not validate"),
              expected="an error, an isError result, or the form asked again", actual=result, entries=[env], peer=peer)


async def probe_declined(ctx: ScenarioContext, peer: RawPeer, form_tools: list[str], args: dict[str, dict[str, Any]]) -> None:
    rid = "elicitation.declined.handled"
    if not form_tools:
        ctx.not_reached(rid, "no tool asked for a form")
        return
    tool = form_tools[0]
    for action in ("decline", "cancel"):
        env = await _call_modern(ctx, peer, None, tool, args[tool], BOTH_MODES, lambda p, a=action: {"action": a}, rounds=1)
        what = f"tools/call {tool!r} retried with its elicitation answered {action!r}"
        ok = env is not None and not (env.kind is Kind.ERROR and env.error_code == errors.INTERNAL_ERROR) and env.kind in (Kind.RESULT, Kind.ERROR)
        got = "no answer" if env is None else (f"error {id_repr(env.error_code)}" if env.kind is Kind.ERROR else "a result")
        ctx.check(rid, ok, problem="DeclineNotHandled",
                  message=f"{what}: {got}" + ("" if ok else "; a server must handle a declined or cancelled elicitation"),
                  expected="a result (final, isError, or another InputRequiredResult) or an error other than -32603",
                  actual=None if env is None else (env.error if env.kind is Kind.ERROR else "a result"),
                  entries=[env] if env is not None else [], peer=peer)
