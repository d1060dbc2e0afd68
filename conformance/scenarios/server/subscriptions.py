"""basic/patterns/subscriptions (2026-07-28): ``subscriptions/listen`` acknowledged first, every
notification tagged with the subscription id, the filter honoured, and nothing more for a cancelled
subscription (stdio: notifications/cancelled; streamable HTTP: its response stream closed)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import ExpectTimeout, RawPeer
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec.versions import Transport
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, same_id

from ._helpers import barrier
from ._stateless import SUBSCRIPTION_ID_KEY, ask, describe, list_tools, verdict

V = "2026-07-28"
LEGACY = "subscriptions/listen is new in 2026-07-28 (earlier revisions use resources/subscribe and the GET stream)"
TRIGGER = "test_trigger_tool_change"
LISTEN_CAPABILITIES = ("tools.listChanged", "prompts.listChanged", "resources.listChanged", "resources.subscribe")
# notifications that only a listen stream carries in 2026-07-28
LISTEN_NOTIFICATIONS = (
    "notifications/subscriptions/acknowledged",
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
)


def _declared(caps: Any, path: str) -> bool:
    cur = caps
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False
        cur = cur[part]
    return cur is not None and cur is not False


def _tag(env: Envelope) -> Any:
    params = env.params if isinstance(env.params, dict) else {}
    meta = params.get("_meta")
    return meta.get(SUBSCRIPTION_ID_KEY, MISSING) if isinstance(meta, dict) else MISSING


@dataclass
class _Listen:
    id: Any
    filter: dict[str, Any]
    stream: str | None  # HTTP: the response stream of the listen request
    ack: Envelope | None = None
    first: Envelope | None = None
    cancelled_at: int | None = None  # transcript position when we cancelled it
    messages: list[Any] = field(default_factory=list)


class _Subs:
    """The listen requests of one connection and the attribution of inbound messages to them."""

    def __init__(self, ctx: ScenarioContext, peer: RawPeer) -> None:
        self.ctx = ctx
        self.peer = peer
        self.http = ctx.transport is Transport.STREAMABLE_HTTP
        self.listens: list[_Listen] = []
        self.n = 0

    def _stream(self, env: Envelope) -> Any:
        entry = self.peer.entry_of(env)
        return entry.meta.get("stream") if entry is not None else None

    def belongs(self, env: Envelope, lst: _Listen) -> bool:
        """The message is part of subscription ``lst`` (HTTP: on its stream; stdio: tagged with its id, or its response)."""
        if self.http:
            return self._stream(env) == lst.stream
        if env.kind in (Kind.RESULT, Kind.ERROR):
            return same_id(env.id, lst.id)
        return env.kind is Kind.NOTIFICATION and same_id(_tag(env), lst.id)

    async def open(self, flt: dict[str, Any]) -> tuple[_Listen, Envelope | None]:
        self.n += 1
        rid = f"mcp-conformance-listen-{self.n}"
        await self.peer.request("subscriptions/listen", {"notifications": flt}, id=rid)
        ex = self.peer.last_exchange
        lst = _Listen(rid, flt, getattr(ex, "stream", None) if self.http else None)
        self.listens.append(lst)
        try:
            first = await self.peer.expect_message(lambda e: self.belongs(e, lst), what=f"the first message of subscription {rid!r}")
        except ExpectTimeout:
            return lst, None
        lst.first = first
        if first.kind is Kind.NOTIFICATION and first.method == "notifications/subscriptions/acknowledged":
            lst.ack = first
        return lst, first

    async def cancel(self, lst: _Listen) -> None:
        lst.cancelled_at = len(self.peer.transcript)
        if self.http:
            closer = getattr(self.peer.transport, "close_stream", None)
            if closer is not None and lst.stream is not None:
                await closer(lst.stream)
        else:
            await self.peer.notify("notifications/cancelled", {"requestId": lst.id, "reason": "mcp-conformance: done listening"})

    def inbound(self, start: int = 0) -> list[Any]:
        return [e for e in self.peer.transcript.entries[start:] if e.direction == Direction.IN and e.envelope is not None]


@scenario(
    requirements=[
        "subscriptions.listen.supported",
        "subscriptions.acknowledged-first",
        "subscriptions.subscription-id",
        "subscriptions.filter",
        "stateless.cancellation.stdio-no-further-messages",
        "stateless.cancellation.http-no-further-messages",
    ],
    since=V,
    skip_reason=LEGACY,
    # on stdio the last of its version's disposable items: its subscriptions end with the connection
    connection=ConnectionKind.DISPOSABLE,
)
async def listen_streams(ctx: ScenarioContext) -> None:
    """Two subscriptions (tools and prompts list changes): each acknowledged first and tagged with
    its id; a tool-list change reaches only the tools subscription; a cancelled subscription
    (stdio: notifications/cancelled; HTTP: its stream closed) gets nothing more.  Where items share the server (HTTP) and it has the tool that
    changes the tool list, the whole probe runs alone: no other session sees the changes, and no
    other item's change reaches these subscriptions."""
    peer = await ctx.connect(fresh=True)
    tools, _ = await list_tools(peer) if _declared(ctx.server_capabilities, "tools") else ([], None)
    trigger = any(t["name"] == TRIGGER for t in tools)
    async with ctx.alone() if trigger else contextlib.nullcontext():
        await _listen(ctx, peer, trigger)


async def _listen(ctx: ScenarioContext, peer: RawPeer, trigger: bool) -> None:
    caps = ctx.server_capabilities
    relevant = [p for p in LISTEN_CAPABILITIES if _declared(caps, p)]
    subs = _Subs(ctx, peer)
    tools_sub, first = await subs.open({"toolsListChanged": True})
    if first is None or first.kind is Kind.ERROR:
        what = "no answer" if first is None else f"error {id_repr(first.error_code)}"
        if not relevant:
            ctx.skip(f"the server declares none of {', '.join(LISTEN_CAPABILITIES)} and answered subscriptions/listen with {what}")
        ctx.check(
            "subscriptions.listen.supported",
            False,
            problem="ListenNotSupported",
            message=(
                f"the server declares {', '.join(relevant)}, whose notifications are delivered on subscriptions/listen streams, "
                f"yet answered subscriptions/listen with {what}"
            ),
            expected="notifications/subscriptions/acknowledged",
            actual=first.error if first is not None else f"nothing within {ctx.timeout:g} s",
            entries=[first] if first is not None else [],
        )
        return
    ctx.check("subscriptions.listen.supported", True, message="subscriptions/listen was answered with a subscription stream", entries=[first])
    prompts_sub, _ = await subs.open({"promptsListChanged": True})
    for lst in (tools_sub, prompts_sub):
        _check_first(ctx, lst)

    triggered = 0
    mark = len(peer.transcript)
    if trigger:
        ans = await ask(peer, "tools/call", {"name": TRIGGER, "arguments": {}})
        triggered += 1
        try:
            await peer.expect_message(
                lambda e: e.kind is Kind.NOTIFICATION and e.method == "notifications/tools/list_changed" and not subs.belongs(e, prompts_sub),
                what="notifications/tools/list_changed for the tools subscription",
            )
        except ExpectTimeout:
            ctx.note(f"{TRIGGER} was answered with {describe(ans)} but no notifications/tools/list_changed reached the tools subscription within {ctx.timeout:g} s")
    await barrier(peer, ctx.version)
    leaked = [e for e in subs.inbound(mark) if e.envelope.kind is Kind.NOTIFICATION and e.envelope.method != "notifications/prompts/list_changed"
              and e.envelope.method != "notifications/subscriptions/acknowledged" and subs.belongs(e.envelope, prompts_sub)]
    _filter_check(ctx, prompts_sub, leaked, trigger)

    cancel_rule = next((r for r in CANCEL_RULES if ctx.applies(r)), None)
    if cancel_rule is not None:
        control, _ = await subs.open({"toolsListChanged": True})
        await subs.cancel(tools_sub)
        cut = len(peer.transcript)
        if trigger:
            await ask(peer, "tools/call", {"name": TRIGGER, "arguments": {}})
            triggered += 1
            try:
                await peer.expect_message(lambda e: e.kind is Kind.NOTIFICATION and e.method == "notifications/tools/list_changed" and subs.belongs(e, control),
                                          what="notifications/tools/list_changed for the control subscription")
            except ExpectTimeout:
                ctx.note("no notifications/tools/list_changed reached the control subscription after the second change")
        await barrier(peer, ctx.version)
        # HTTP: the closed stream carries nothing more; a message for it can only come on another stream
        late = [e for e in subs.inbound(cut) if (_for(e.envelope, tools_sub) if subs.http else subs.belongs(e.envelope, tools_sub))]
        how = "closing its response stream" if subs.http else "notifications/cancelled"
        verdict(
            ctx,
            cancel_rule,
            not late,
            problem="MessageAfterCancel",
            passed=(
                f"nothing more for the subscription {tools_sub.id!r} after {how}"
                + (" (a second tool-list change reached only the open subscription)" if trigger else " (up to a barrier request)")
            ),
            failed=(
                f"after {how} for the subscription {tools_sub.id!r}, the server still sent "
                + ", ".join(_what(e.envelope) for e in late[:3]) + " for it"
                + (" (on another stream)" if subs.http else "")
            ),
            expected="nothing more for the cancelled request",
            actual=[e.envelope.summary() for e in late[:3]],
            entries=[e.seq for e in late],
        )
    elif trigger and triggered % 2:
        await ask(peer, "tools/call", {"name": TRIGGER, "arguments": {}})  # put the tool list back
        triggered += 1
    _check_tags(ctx, subs)
    for lst in subs.listens:
        if lst.cancelled_at is None:
            await subs.cancel(lst)


CANCEL_RULES = ("stateless.cancellation.stdio-no-further-messages", "stateless.cancellation.http-no-further-messages")


def _for(env: Envelope, lst: _Listen) -> bool:
    """The message is about subscription ``lst``: its response, or a notification tagged with its id."""
    if env.kind in (Kind.RESULT, Kind.ERROR):
        return same_id(env.id, lst.id)
    return env.kind is Kind.NOTIFICATION and same_id(_tag(env), lst.id)


def _what(env: Envelope) -> str:
    if env.kind is Kind.NOTIFICATION:
        return env.method or "a notification"
    return f"a {env.kind.value}"


def _filter_check(ctx: ScenarioContext, lst: _Listen, leaked: list[Any], trigger: bool) -> None:
    if leaked:
        ctx.check(
            "subscriptions.filter",
            False,
            problem="UnrequestedNotification",
            message=(
                f"the subscription {lst.id!r} asked for promptsListChanged only, yet received "
                + ", ".join(sorted({e.envelope.method for e in leaked}))
            ),
            expected="only notifications/prompts/list_changed on that subscription",
            actual=[e.envelope.summary() for e in leaked[:3]],
            entries=[e.seq for e in leaked],
        )
    else:
        ctx.check(
            "subscriptions.filter",
            True,
            message=(
                f"{TRIGGER} changed the tool list; the prompts-only subscription received no tools/list_changed"
                if trigger else f"nothing outside the filter arrived (the server has no {TRIGGER} tool to provoke a change)"
            ),
        )


def _check_first(ctx: ScenarioContext, lst: _Listen) -> None:
    first = lst.first
    if first is None:
        ctx.check("subscriptions.acknowledged-first", False, problem="NoAcknowledgment",
                  message=f"subscriptions/listen {lst.id!r}: nothing arrived for the subscription within {ctx.timeout:g} s",
                  expected="notifications/subscriptions/acknowledged", actual="nothing")
        return
    verdict(
        ctx,
        "subscriptions.acknowledged-first",
        lst.ack is not None,
        problem="AcknowledgmentNotFirst",
        passed=f"the first message of subscription {lst.id!r} was notifications/subscriptions/acknowledged",
        failed=f"the first message of subscription {lst.id!r} was {_what(first)}, not notifications/subscriptions/acknowledged",
        expected="notifications/subscriptions/acknowledged",
        actual=first.summary(),
        entries=[first],
    )


def _check_tags(ctx: ScenarioContext, subs: _Subs) -> None:
    """Every notification delivered on a listen stream carries the subscription id, equal (same
    JSON type) to the id of the listen request."""
    bad = 0
    seen = 0
    ids = [lst.id for lst in subs.listens]
    for entry in subs.inbound():
        env = entry.envelope
        if env.kind is not Kind.NOTIFICATION:
            continue
        if subs.http:
            owner = next((lst for lst in subs.listens if subs.belongs(env, lst)), None)
            if owner is None:
                continue
            if any(lst.cancelled_at is not None and entry.seq >= lst.cancelled_at and same_id(_tag(env), lst.id) for lst in subs.listens):
                continue  # a cancelled subscription's message on another stream: the cancellation rule's
            expected = owner.id
        else:
            if env.method not in LISTEN_NOTIFICATIONS:
                continue
            expected = None
        seen += 1
        tag = _tag(env)
        ok = (same_id(tag, expected)) if expected is not None else any(same_id(tag, i) for i in ids)
        if not ok:
            bad += 1
            if bad <= 5:
                ctx.check(
                    "subscriptions.subscription-id",
                    False,
                    problem="MissingSubscriptionId" if tag is MISSING else "WrongSubscriptionId",
                    message=(
                        f"{env.method} delivered on a subscriptions/listen stream carries "
                        + ("no " if tag is MISSING else f"{id_repr(tag)} as ") + f"_meta[{SUBSCRIPTION_ID_KEY!r}]"
                        + (f"; the listen request's id is {id_repr(expected)}" if expected is not None else f"; the open subscriptions are {', '.join(map(id_repr, ids))}")
                    ),
                    expected=expected if expected is not None else ids,
                    actual=tag,
                    json_path=f"$.params._meta['{SUBSCRIPTION_ID_KEY}']",
                    entries=[entry.seq],
                )
    if not bad:
        ctx.check("subscriptions.subscription-id", True, message=f"{seen} notification(s) on subscription streams, each tagged with its subscription's id")
