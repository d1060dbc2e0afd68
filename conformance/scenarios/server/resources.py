"""server/resources: resources/list, resources/read (text vs blob, encoding), templates, the
not-found error per version, subscribe/unsubscribe and notifications/resources/updated,
list_changed."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import scenario
from conformance.spec import errors
from conformance.spec.versions import LATEST, LATEST_STATEFUL
from conformance.wire.envelope import MISSING, Envelope, Kind

from . import _features as F
from .tools import list_changed_check

LIST_REQS = ("resources.list.respond", "resources.list.answered")
MAX_READS = 4
STATIC_TEXT = "test://static-text"
STATIC_BINARY = "test://static-binary"
FIXTURE_TEMPLATE = "test://template/{id}/data"
WATCHED = "test://watched-resource"
TOUCH = "touch_resource"


@scenario(requirements=["resources.capability.declared"])
async def capability_declared(ctx: ScenarioContext) -> None:
    """A server that does not declare `resources` must not list resources."""
    await F.check_capability_declared(ctx, "resources", "resources/list", "resources", "uri", "resource")


@scenario(requirements=[*LIST_REQS, "resources.uri.identifier"], capability="resources")
async def list_resources(ctx: ScenarioContext) -> None:
    """resources/list followed to its last page: answered, every URI once."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "resources/list", timeout=ctx.timeout)
    if not F.check_list_answered(ctx, listing, LIST_REQS):
        ctx.not_reached("resources.uri.identifier", "resources/list gave no list of resources")
        return
    F.check_unique(ctx, ("resources.uri.identifier",), listing, "uri")


READ_REQS = ("resources.contents.text-or-blob", "resources.contents.binary-encoded", "resources.fixtures.content")


@scenario(requirements=list(READ_REQS), capability="resources")
async def read_resources(ctx: ScenarioContext) -> None:
    """resources/read of the listed resources (the runner's fixtures first, then a few more) and
    of the runner's template fixture: each item text or blob, blobs valid base64, the fixtures'
    content as their runner scenario describes."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "resources/list", timeout=ctx.timeout)
    uris = [r.get("uri") for r in listing.items if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    templates = await F.list_all(peer, "resources/templates/list", timeout=ctx.timeout)
    has_template = any(isinstance(t, dict) and t.get("uriTemplate") == FIXTURE_TEMPLATE for t in templates.items)
    chosen = [u for u in (STATIC_TEXT, STATIC_BINARY) if u in uris]
    chosen += [u for u in uris if u not in chosen][: max(0, MAX_READS - len(chosen))]
    if has_template:
        chosen.append("test://template/123/data")
    if not chosen:
        ctx.skip("the server lists no resource to read")
    ctx.not_reached("resources.fixtures.content", "the server offers none of the runner's fixture resources (test://static-text, ...)")
    ctx.not_reached("resources.contents.binary-encoded", "no resource we read has a blob")
    read = 0
    for uri in chosen:
        rid = await peer.request("resources/read", {"uri": uri})
        try:
            env = await peer.expect_response(rid)
        except PeerError as exc:
            ctx.note(f"resources/read {uri!r}: {exc}")
            continue
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            what = F.describe_error(env) if env.kind is Kind.ERROR else env.kind.value
            if _is_fixture(uri):
                ctx.check("resources.fixtures.content", False, problem="FixtureReadFailed",
                          message=f"resources/read {uri!r} (an official runner fixture the server offers) was answered with {what}",
                          expected=_FIXTURE_EXPECTED[_fixture_key(uri)], actual=env.error if env.kind is Kind.ERROR else env.value, entries=[env])
            else:
                ctx.note(f"resources/read {uri!r} (a listed resource) was answered with {what}; not judged")
            continue
        if env.result.get("resultType", "complete") != "complete":
            ctx.note(f"resources/read {uri!r}: resultType {env.result.get('resultType')!r} (needs client input); not judged")
            continue
        read += 1
        contents = env.result.get("contents")
        items = [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
        for item in items:
            both = "text" in item and "blob" in item
            ctx.check(
                "resources.contents.text-or-blob",
                not both,
                problem="TextAndBlob",
                message=(
                    f"resources/read {uri!r}: the item {item.get('uri')!r} carries both text and blob"
                    if both
                    else f"resources/read {uri!r}: each item carries text or blob"
                ),
                expected="either `text` or `blob`",
                actual=sorted(item),
                entries=[env],
            )
            if "blob" in item:
                ok = F.is_base64(item.get("blob"))
                ctx.check(
                    "resources.contents.binary-encoded",
                    ok,
                    problem="BlobNotBase64",
                    message=(
                        f"resources/read {uri!r}: the blob is valid base64"
                        if ok
                        else f"resources/read {uri!r}: the blob of {item.get('uri')!r} is not valid base64"
                    ),
                    expected="base64 (RFC 4648, padded)",
                    actual=str(item.get("blob"))[:80],
                    json_path="$.result.contents",
                    entries=[env],
                )
        if _is_fixture(uri):
            problems = _fixture_problems(uri, items)
            ctx.check(
                "resources.fixtures.content",
                not problems,
                problem="FixtureContentMismatch",
                message=f"resources/read {uri!r}: " + ("; ".join(problems) if problems else "reads as its runner scenario describes"),
                expected=_FIXTURE_EXPECTED[_fixture_key(uri)],
                actual=contents,
                entries=[env],
            )
    if read == 0:
        for rid in READ_REQS:
            ctx.not_reached(rid, "no resource could be read")


def _is_fixture(uri: str) -> bool:
    return uri in (STATIC_TEXT, STATIC_BINARY) or uri.startswith("test://template/")


def _fixture_key(uri: str) -> str:
    return uri if uri in (STATIC_TEXT, STATIC_BINARY) else FIXTURE_TEMPLATE


_FIXTURE_EXPECTED: dict[str, Any] = {
    STATIC_TEXT: {"contents": [{"uri": STATIC_TEXT, "mimeType": "text/plain", "text": "<non-empty>"}]},
    STATIC_BINARY: {"contents": [{"uri": STATIC_BINARY, "mimeType": "image/png", "blob": "<base64>"}]},
    FIXTURE_TEMPLATE: {"contents": [{"uri": "test://template/123/data", "text": "<mentions 123>"}]},
}


def _fixture_problems(uri: str, items: list[dict]) -> list[str]:
    if not items:
        return ["contents is missing or empty"]
    first = items[0]
    problems = []
    if not first.get("uri"):
        problems.append("the content has no uri")
    if uri == STATIC_TEXT:
        if not first.get("mimeType"):
            problems.append("the content has no mimeType")
        if not first.get("text"):
            problems.append("the content has no text")
    elif uri == STATIC_BINARY:
        if not first.get("mimeType"):
            problems.append("the content has no mimeType")
        if not first.get("blob"):
            problems.append("the content has no blob")
    else:
        if "text" not in first and "blob" not in first:
            problems.append("the content has neither text nor blob")
        elif isinstance(first.get("text"), str) and "123" not in first["text"]:
            problems.append("the template parameter 123 is not substituted into the content")
    return problems


# ---------------------------------------------------------------------------------------------
# not found


@scenario(
    requirements=[
        "resources.read.not-found-code",
        "resources.read.not-found-invalid-params",
        "resources.read.not-found-no-empty-contents",
    ],
    capability="resources",
)
async def read_not_found(ctx: ScenarioContext) -> None:
    """resources/read for a URI the server neither lists nor matches with a template: -32002 up
    to 2025-11-25 (SHOULD), -32602 and never an empty `contents` in 2026-07-28 (MUST)."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "resources/list", timeout=ctx.timeout)
    templates = await F.list_all(peer, "resources/templates/list", timeout=ctx.timeout)
    known = {r.get("uri") for r in listing.items if isinstance(r, dict)}
    patterns = [_template_regex(t.get("uriTemplate")) for t in templates.items if isinstance(t, dict) and isinstance(t.get("uriTemplate"), str)]
    uri = ""
    for _ in range(5):
        uri = f"mcp-conformance://no-such-resource/{F.unique_token()}"
        if uri not in known and not any(p.fullmatch(uri) for p in patterns if p is not None):
            break
    else:
        ctx.skip("every URI we tried matches one of the server's resource templates")
    rid = await peer.request("resources/read", {"uri": uri})
    env = await peer.expect_response(rid)
    legacy_code = errors.RESOURCE_NOT_FOUND_LEGACY
    if env.kind is Kind.ERROR:
        code = env.error_code
        ctx.check(
            "resources.read.not-found-code",
            code == legacy_code,
            problem="WrongErrorCode",
            message=f"resources/read for the unknown {uri!r} was answered with {F.describe_error(env)}"
            + ("" if code == legacy_code else "; the page names -32002 for 'Resource not found'"),
            expected={"error": {"code": legacy_code}},
            actual=env.error,
            json_path="$.error.code",
            entries=[env],
        )
        ctx.check(
            "resources.read.not-found-invalid-params",
            code == errors.INVALID_PARAMS,
            problem="WrongErrorCode",
            message=f"resources/read for the unknown {uri!r} was answered with {F.describe_error(env)}"
            + ("" if code == errors.INVALID_PARAMS else " instead of -32602 (Invalid Params)" + (" (-32002 is the code of earlier revisions)" if code == legacy_code else "")),
            expected={"error": {"code": errors.INVALID_PARAMS}},
            actual=env.error,
            json_path="$.error.code",
            entries=[env],
        )
        ctx.check("resources.read.not-found-no-empty-contents", True, message="an error, not an empty contents array", entries=[env])
        return
    result = env.result if isinstance(env.result, dict) else {}
    contents = result.get("contents", MISSING)
    empty = isinstance(contents, list) and not contents
    for req, code in (("resources.read.not-found-code", legacy_code), ("resources.read.not-found-invalid-params", errors.INVALID_PARAMS)):
        ctx.check(
            req,
            False,
            problem="NotFoundNotAnError",
            message=f"resources/read for the unknown {uri!r} was answered with a result" + (" with an empty contents array" if empty else ""),
            expected={"error": {"code": code}},
            actual=env.result,
            entries=[env],
        )
    ctx.check(
        "resources.read.not-found-no-empty-contents",
        not empty,
        problem="EmptyContentsForMissingResource",
        message=(
            f"resources/read for the unknown {uri!r} returned an empty contents array"
            if empty
            else f"resources/read for the unknown {uri!r} returned contents (not empty)"
        ),
        expected="a JSON-RPC error -32602",
        actual=env.result,
        entries=[env],
    )


@scenario(requirements=["resources.file.no-traversal"], since=LATEST, capability="resources")
async def file_traversal(ctx: ScenarioContext) -> None:
    """A canary file outside every directory the server serves, read through a served file://
    directory with '..' segments (plain and percent-encoded): never its contents."""
    import os
    import tempfile
    from urllib.parse import quote, unquote, urlsplit

    peer = await ctx.connect()
    listing = await F.list_all(peer, "resources/list", timeout=ctx.timeout)
    templates = await F.list_all(peer, "resources/templates/list", timeout=ctx.timeout)
    areas = []  # directories the server serves files from
    for r in listing.items:
        uri = r.get("uri") if isinstance(r, dict) else None
        if isinstance(uri, str) and uri.startswith("file:///"):
            areas.append(os.path.dirname(unquote(urlsplit(uri).path)) or "/")
    for t in templates.items:
        tpl = t.get("uriTemplate") if isinstance(t, dict) else None
        if isinstance(tpl, str) and tpl.startswith("file:///"):
            prefix = unquote(urlsplit(tpl.split("{", 1)[0]).path)
            areas.append(prefix if prefix.endswith("/") else os.path.dirname(prefix) or "/")
    if not areas:
        ctx.skip("the server lists no file:// resource or template")
    if os.name != "posix":
        ctx.skip("the canary's path is built for POSIX hosts")
    req = "resources.file.no-traversal"
    token = f"mcp-conformance-canary-{F.unique_token()}"
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-canary-") as tmp:
        canary = os.path.realpath(os.path.join(tmp, "canary.txt"))
        with open(canary, "w", encoding="utf-8") as fh:
            fh.write(token + "\n")
        served = [a.rstrip("/") + "/" for a in areas]
        if any(canary.startswith(a) for a in served):
            ctx.skip(f"the temporary directory ({tmp}) lies inside what the server serves ({served[0]})")
        base = served[0].rstrip("/")
        climb = "../" * (base.count("/") + 2)
        plain = "file://" + quote(f"{base}/{climb}{canary.lstrip('/')}", safe="/.")
        encoded = plain.replace("../", "%2e%2e/")
        for uri in (plain, encoded):
            rid = await peer.request("resources/read", {"uri": uri})
            env = await peer.expect_response(rid)
            if env.kind is Kind.ERROR:
                ctx.check(req, True, message=f"resources/read {uri!r} (out of {base}/) was refused with {F.describe_error(env)}",
                          entries=[env])
                continue
            leaked = token in json.dumps(env.result)
            ctx.check(
                req,
                not leaked,
                problem="DirectoryTraversal",
                message=(
                    f"resources/read {uri!r} climbed out of the served directory {base}/ and returned the canary file "
                    f"{canary} (outside everything the server serves)"
                    if leaked else f"resources/read {uri!r} (out of {base}/) did not return the canary file"
                ),
                expected="an error, or nothing outside the served directories",
                actual=f"the contents of {canary}" if leaked else None,
                entries=[env],
            )


#: the schemes the page names (Common URI Schemes); any other is a custom one
NAMED_SCHEMES = ("https", "file", "git")


@scenario(requirements=["resources.uri.custom-scheme"], capability="resources")
async def custom_schemes(ctx: ScenarioContext) -> None:
    """Every resource template of a custom scheme expands (each expression as 'x') to an RFC 3986
    URI: a valid scheme, only URI characters."""
    from conformance.schema.validate import FORMAT_CHECKER

    peer = await ctx.connect()
    templates = await F.list_all(peer, "resources/templates/list", timeout=ctx.timeout)
    custom = []
    for t in templates.items:
        tpl = t.get("uriTemplate") if isinstance(t, dict) else None
        if not isinstance(tpl, str):
            continue
        scheme = tpl.split(":", 1)[0] if ":" in tpl else ""
        if scheme.lower() not in NAMED_SCHEMES:
            custom.append((tpl, re.sub(r"\{[^}]*\}", "x", tpl)))
    if not custom:
        ctx.skip("the server lists no resource template of a custom scheme (listed resource URIs are judged by the "
                 "schema's uri format, basic.schema.messages-valid)")
    req = "resources.uri.custom-scheme"
    bad = [(tpl, uri) for tpl, uri in custom if not FORMAT_CHECKER.conforms(uri, "uri")]
    ctx.check(
        req,
        not bad,
        problem="CustomSchemeNotRfc3986",
        message=(
            f"the resource template {bad[0][0]!r} expands to {bad[0][1]!r}, which is not an RFC 3986 URI"
            + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")
            if bad else f"{len(custom)} resource template(s) of custom schemes expand to RFC 3986 URIs"
        ),
        expected="scheme = ALPHA *( ALPHA / DIGIT / '+' / '-' / '.' ), then only characters RFC 3986 allows",
        actual=[tpl for tpl, _ in bad[:5]] or None,
        entries=templates.envelopes()[-1:],
    )


#: what makes a string not an RFC 3986 URI: a raw space and angle brackets (a URI percent-encodes them)
NOT_A_URI_PART = "mcp conformance <not a uri>"


@scenario(requirements=["resources.uri.validate"], capability="resources")
async def invalid_uri(ctx: ScenarioContext) -> None:
    """resources/read of strings that are not URIs, built from the server's own first template
    (an expression filled with a raw space and angle brackets) and first listed resource (its URI
    with such a tail): each refused with an error, never read."""
    peer = await ctx.connect()
    listing = await F.list_all(peer, "resources/list", timeout=ctx.timeout)
    templates = await F.list_all(peer, "resources/templates/list", timeout=ctx.timeout)
    probes: list[tuple[str, str]] = []
    for t in templates.items:
        tpl = t.get("uriTemplate") if isinstance(t, dict) else None
        if isinstance(tpl, str) and re.search(r"\{[^}]*\}", tpl):
            filled = re.sub(r"\{[^}]*\}", "x", re.sub(r"\{[^}]*\}", NOT_A_URI_PART, tpl, count=1))
            probes.append((filled, f"the template {tpl!r} with an expression filled with {NOT_A_URI_PART!r}, unencoded"))
            break
    uri = next((r["uri"] for r in listing.items if isinstance(r, dict) and isinstance(r.get("uri"), str)), None)
    if uri is not None:
        probes.append((uri + " <mcp-conformance>", f"the listed {uri!r} with ' <mcp-conformance>' appended"))
    if not probes:
        ctx.skip("the server lists no resource and no resource template to build a URI from")
    req = "resources.uri.validate"
    for bad, how in probes:
        rid = await peer.request("resources/read", {"uri": bad})
        env = await peer.expect_response(rid)
        what = f"resources/read {bad!r} ({how}: not a URI)"
        if env.kind is Kind.ERROR:
            ctx.check(req, True, message=f"{what} was refused with {F.describe_error(env)}", entries=[env])
            continue
        result = env.result if isinstance(env.result, dict) else {}
        if result.get("resultType", "complete") != "complete":
            ctx.note(f"{what} was answered with resultType {result.get('resultType')!r}; not judged", requirement=req)
            continue
        ctx.check(
            req,
            False,
            problem="InvalidUriAccepted",
            message=f"{what} was answered with a result: the URI was not validated",
            expected="a JSON-RPC error (the string is not an RFC 3986 URI)",
            actual=env.result,
            entries=[env],
        )


def _template_regex(template: Any) -> re.Pattern[str] | None:
    """A loose matcher for an RFC 6570 template: every expression matches any text."""
    if not isinstance(template, str):
        return None
    out, pos = "", 0
    for m in re.finditer(r"\{[^}]*\}", template):
        out += re.escape(template[pos : m.start()]) + ".*"
        pos = m.end()
    try:
        return re.compile(out + re.escape(template[pos:]), re.S)
    except re.error:
        return None


# ---------------------------------------------------------------------------------------------
# subscriptions (2024-11-05 .. 2025-11-25)


@scenario(
    requirements=["resources.subscribe.answered", "resources.subscribe.updated"],
    until=LATEST_STATEFUL,
    capability="resources.subscribe",
    skip_reason="2026-07-28 has no resources/subscribe (subscriptions/listen with resourceSubscriptions replaces it)",
)
async def subscribe(ctx: ScenarioContext) -> None:
    """resources/subscribe and resources/unsubscribe for a listed resource are answered with a
    result; with the reference server's `touch_resource` tool, a change of the subscribed
    `test://watched-resource` brings notifications/resources/updated, and none after unsubscribing."""
    peer = await F.cheap_isolated(ctx)
    listing = await F.list_all(peer, "resources/list", timeout=ctx.timeout)
    uris = [r.get("uri") for r in listing.items if isinstance(r, dict) and isinstance(r.get("uri"), str)]
    tools = await F.list_all(peer, "tools/list", timeout=ctx.timeout) if F.declared(ctx.server_capabilities, "tools") else None
    can_touch = tools is not None and any(isinstance(t, dict) and t.get("name") == TOUCH for t in tools.items)
    uri = WATCHED if WATCHED in uris else (uris[0] if uris else None)
    if uri is None:
        ctx.skip("the server lists no resource to subscribe to")
    if not (can_touch and uri == WATCHED):
        ctx.not_reached(
            "resources.subscribe.updated",
            f"the server offers no way to change a resource (the reference server's {TOUCH!r} tool on {WATCHED!r})",
        )
        can_touch = False
    else:
        how = await F.open_notification_stream(ctx, peer)
        if how:
            ctx.note(how)
    # a change every session of the server sees (the watched resource touched): alone where
    # other items share the server, from the subscription to the check after unsubscribing
    async with ctx.alone() if can_touch else contextlib.nullcontext():
        await _subscribed(ctx, peer, uri, can_touch)


async def _subscribed(ctx: ScenarioContext, peer, uri: str, can_touch: bool) -> None:
    sub = await _answered(ctx, peer, "resources/subscribe", uri)
    if sub is None:
        return
    if can_touch:
        mark = len(peer.transcript)
        answer = await _touch(peer, uri)
        if answer is None or answer.kind is not Kind.RESULT:
            ctx.not_reached("resources.subscribe.updated", f"{TOUCH} failed: {answer.summary() if answer else 'no answer'}")
            can_touch = False
        else:
            try:
                note = await peer.expect_notification("notifications/resources/updated", predicate=F.since(peer, mark))
                ok_uri = isinstance(note.params, dict) and note.params.get("uri") == uri
                ctx.check(
                    "resources.subscribe.updated",
                    ok_uri,
                    problem="UpdatedNotificationWrongUri",
                    message=(
                        f"{uri!r} changed and notifications/resources/updated arrived for it"
                        if ok_uri
                        else f"notifications/resources/updated arrived with uri {note.params.get('uri') if isinstance(note.params, dict) else None!r}, not {uri!r}"
                    ),
                    expected={"uri": uri},
                    actual=note.params,
                    entries=[note],
                )
            except PeerError as exc:
                ctx.check(
                    "resources.subscribe.updated",
                    False,
                    problem="UpdatedNotificationMissing",
                    message=f"the subscribed {uri!r} changed ({TOUCH}), but no notifications/resources/updated arrived ({exc})",
                    expected="notifications/resources/updated",
                    actual=[e.envelope.summary() for e in F.inbound_after(peer, mark)][:10],
                    entries=[answer],
                )
    unsub = await _answered(ctx, peer, "resources/unsubscribe", uri)
    if unsub is None or not can_touch:
        return
    mark = len(peer.transcript)
    answer = await _touch(peer, uri)
    ping = await F.request(peer, "ping", timeout=ctx.timeout)  # a barrier: anything sent before it is read
    late = F.inbound_after(peer, mark, method="notifications/resources/updated")
    ctx.check(
        "resources.subscribe.updated",
        not late,
        problem="UpdatedAfterUnsubscribe",
        message=(
            f"after resources/unsubscribe, {uri!r} changed and notifications/resources/updated still arrived"
            if late
            else f"after resources/unsubscribe, a change of {uri!r} brought no notification"
        ),
        expected="no notifications/resources/updated",
        actual=[e.envelope.summary() for e in late],
        entries=[e.seq for e in late] or [x for x in (answer, ping) if x is not None],
    )


async def _answered(ctx: ScenarioContext, peer, method: str, uri: str) -> Envelope | None:
    rid = await peer.request(method, {"uri": uri})
    env = await peer.expect_response(rid)
    ok = env.kind is Kind.RESULT
    ctx.check(
        "resources.subscribe.answered",
        ok,
        problem="SubscribeRejected",
        message=(
            f"{method} {uri!r} was answered with a result"
            if ok
            else f"the server declares `subscribe`, yet {method} for the listed {uri!r} was answered with "
            + (F.describe_error(env) if env.kind is Kind.ERROR else f"a {env.kind.value}")
        ),
        expected={"result": {}},
        actual=env.error if env.kind is Kind.ERROR else env.result,
        entries=[env],
    )
    if not ok:
        ctx.not_reached("resources.subscribe.updated", f"{method} was rejected")
        return None
    return env


async def _touch(peer, uri: str) -> Envelope | None:
    rid = await peer.request("tools/call", {"name": TOUCH, "arguments": {"uri": uri}})
    try:
        return await peer.expect_response(rid)
    except PeerError:
        return None


# ---------------------------------------------------------------------------------------------
# list_changed


@scenario(
    requirements=["resources.list-changed.notification"],
    capability="resources.listChanged",
)
async def list_changed(ctx: ScenarioContext) -> None:
    """With the hook `test_trigger_resource_list_change`: changing the resource list brings
    notifications/resources/list_changed (the hook is called again to restore the list)."""
    await list_changed_check(
        ctx, "resources.list-changed.notification", "test_trigger_resource_list_change", "notifications/resources/list_changed", "resource"
    )

