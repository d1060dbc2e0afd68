"""Small helpers shared by server scenarios (no scenarios here)."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any

from conformance.runtime.peer import PeerError, RawPeer, UnexpectedMessage
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from conformance.spec.versions import spec
from conformance.wire.transcript import Direction
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, same_id
from conformance.wire.rules import (
    barrier_method,
    empty_ping_result,
    is_response,
    loose_id,
    repaired_for_schema,
    response_shape_problems,
)

__all__ = [
    "barrier",
    "barrier_method",
    "is_response",
    "error_field",
    "judge_pong",
    "loose_id",
    "probe_message",
    "inbound_entries",
    "response_shape_problems",
    "repaired_for_schema",
    "LongTool",
    "list_tools",
    "long_running_tools",
    "start_slow_call",
    "CallProbe",
    "answers",
    "observe",
    "expect_answer",
    "refusal_status",
    "sent_status",
    "sync",
    "Synced",
    "GRACE",
]


async def barrier(peer: RawPeer, version: str, *, timeout: float | None = None) -> Envelope:
    """A request whose answer proves everything sent before it was read: ``ping``, or
    ``server/discover`` where ping does not exist (2026-07-28)."""
    rid = await peer.request(barrier_method(version))
    return await peer.expect_response(rid, timeout=timeout)


async def closing_round_trip(ctx: Any, peer: RawPeer) -> None:
    """For the transcript-wide checks: one more round trip on ``peer`` (its answer proves what
    was sent before it arrived), so that what they judge includes everything up to now; a
    failure is noted and the messages received so far are judged."""
    try:
        await barrier(peer, ctx.version)
    except PeerError as exc:
        ctx.note(f"the closing round trip failed ({exc}); the messages received so far are checked")


def error_field(env: Envelope, name: str) -> Any:
    err = env.error
    if isinstance(err, dict):
        return err.get(name, MISSING)
    return MISSING


def judge_pong(ctx: Any, env: Envelope, *, what: str = "ping") -> None:
    """``ping.response`` for ``env``, the answer to a ping (``what`` names it in the message): an
    error is PingRejected, a result must be empty (only ``_meta`` may appear)."""
    if env.kind is Kind.ERROR:
        ctx.check("ping.response", False, problem="PingRejected",
                  message=f"{what} was answered with error {env.error_code} {error_field(env, 'message')!r}",
                  expected={}, actual=env.error, entries=[env])
        return
    result = env.result
    ctx.check("ping.response", empty_ping_result(result), problem="NonEmptyPingResult",
              message="the ping result must be an empty object (only _meta may appear)",
              expected={}, actual=result, json_path="$.result", entries=[env])


def probe_message(peer: RawPeer, version: str, **fields: Any) -> dict[str, Any]:
    """A request for the barrier method (``ping`` / ``server/discover``) as a plain dict, with the
    per-request ``_meta`` a stateless version requires; ``fields`` override or add members
    (``MISSING`` removes one)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": barrier_method(version)}
    if spec(version).stateless:
        msg["params"] = {
            "_meta": {
                PROTOCOL_VERSION_KEY: version,
                CLIENT_CAPABILITIES_KEY: peer.capabilities,
                CLIENT_INFO_KEY: peer.client_info,
            }
        }
    for key, value in fields.items():
        if value is MISSING:
            msg.pop(key, None)
        else:
            msg[key] = value
    return msg


def inbound_entries(peer: RawPeer, start: int = 0) -> list[Any]:
    """Inbound transcript entries of ``peer`` from transcript position ``start`` on."""
    return [e for e in peer.transcript.entries[start:] if e.direction == Direction.IN]


def _post_stream(peer: RawPeer, rid: Any) -> str | None:
    """The HTTP POST stream (``post:N``) that carried our request ``rid``, if any."""
    for entry in reversed(peer.transcript.entries):
        env = entry.envelope
        if entry.direction == Direction.OUT and env is not None and env.kind is Kind.REQUEST and same_id(env.id, rid):
            stream = entry.meta.get("stream")
            return stream if isinstance(stream, str) and stream.startswith("post:") else None
    return None


GRACE = 0.5  # how long after a barrier's answer an earlier message may still be answered


def sent_status(peer: RawPeer, mark: int) -> int | None:
    """The HTTP error status (4xx/5xx) the first message we sent at or after transcript position
    ``mark`` was answered with, if any (a refusal at the HTTP level)."""
    for entry in peer.transcript.entries[mark:]:
        if entry.direction == Direction.OUT:
            status = entry.meta.get("http_status")
            return status if isinstance(status, int) and status >= 400 else None
    return None


@dataclass(frozen=True)
class Synced:
    """The outcome of :func:`sync`: whether the barrier was answered, and what identifies its
    answer (so it is not mistaken for the answer to what came before it)."""

    answered: bool
    id: Any
    stream: str | None

    def __bool__(self) -> bool:
        return self.answered

    def owns(self, peer: RawPeer, env: Envelope) -> bool:
        """``env`` answers the barrier request."""
        if env.id is not MISSING and env.id is not None:
            return same_id(env.id, self.id)
        if self.stream is None:
            return False
        entry = peer.entry_of(env)
        return entry is not None and entry.meta.get("stream") == self.stream


async def sync(peer: RawPeer, version: str, *, timeout: float | None = None) -> Synced:
    """A barrier request (ping / server/discover) and its answer -- a result, an error, or an
    HTTP refusal of its POST: answered once the server has read everything sent before it, not
    answered if nothing came within ``timeout``."""
    from conformance.runtime.peer import ExpectTimeout

    rid = await peer.request(barrier_method(version))
    status = refusal_status(peer, rid)
    stream = _post_stream(peer, rid)
    try:
        await expect_answer(peer, rid, timeout=min(GRACE, timeout or GRACE) if status else timeout)
    except ExpectTimeout:
        return Synced(status is not None, rid, stream)
    except UnexpectedMessage:
        pass  # answered unreadably: the server has read what came before (transport.utf8 judges the bytes)
    return Synced(True, rid, stream)


def refusal_status(peer: RawPeer, rid: Any) -> int | None:
    """The HTTP error status (4xx/5xx) the POST of our request ``rid`` was answered with, if any."""
    for entry in reversed(peer.transcript.entries):
        env = entry.envelope
        if entry.direction == Direction.OUT and env is not None and env.kind is Kind.REQUEST and same_id(env.id, rid):
            status = entry.meta.get("http_status")
            return status if isinstance(status, int) and status >= 400 else None
    return None


async def expect_answer(peer: RawPeer, rid: Any, *, timeout: float | None = None) -> Envelope:
    """The response to our request ``rid``: one with exactly its id or, over streamable HTTP, an
    error without a usable id (absent or null) that came back as the body of that request's POST
    (an HTTP-level refusal: 'a JSON-RPC error response that has no id').  One that answers
    ``rid`` in bytes that are not UTF-8 raises UnexpectedMessage when it arrives."""
    stream = _post_stream(peer, rid)

    def match(env: Envelope) -> bool:
        if not is_response(env):
            return env.kind is Kind.PARSE_ERROR and env.lenient_id is not MISSING and same_id(env.lenient_id, rid)
        if env.id is not MISSING and env.id is not None:
            return same_id(env.id, rid)
        if stream is None or env.kind is not Kind.ERROR:
            return False
        entry = peer.entry_of(env)
        return entry is not None and entry.meta.get("stream") == stream

    what = f"the response to request {id_repr(rid)}"
    env = await peer.expect_message(match, what=what, timeout=timeout)
    if env.kind is Kind.PARSE_ERROR:
        raise UnexpectedMessage(env, f"{what} arrived unreadable ({'; '.join(env.problems)})")
    return env


# -- tools that take a while (cancellation, progress, timeouts) -----------------------------------------

_LONG_NAME = re.compile(r"slow|long|sleep|delay|wait|progress", re.I)
_PROGRESS_HINT = re.compile(r"progress", re.I)
_DURATION = re.compile(r"second|duration|delay|sleep|wait|time", re.I)
_MILLIS = re.compile(r"ms$|_ms|millis", re.I)
_STEPS = re.compile(r"step|count|iteration|tick", re.I)


@dataclass(frozen=True)
class LongTool:
    """A tool that (by its name or description) takes a while or reports progress, with the
    arguments we call it with and how long we asked it to take (None: not adjustable)."""

    name: str
    arguments: dict[str, Any]
    seconds: float | None
    progress_hint: bool


async def list_tools(peer: RawPeer, *, max_pages: int = 5, timeout: float | None = None) -> list[dict[str, Any]]:
    """The server's tools (following ``nextCursor`` for up to ``max_pages`` pages)."""
    tools: list[dict[str, Any]] = []
    cursor: Any = MISSING
    for _ in range(max_pages):
        params = {} if cursor is MISSING else {"cursor": cursor}
        rid = await peer.request("tools/list", params)
        env = await peer.expect_response(rid, timeout=timeout)
        if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
            break
        page = env.result.get("tools")
        if isinstance(page, list):
            tools.extend(t for t in page if isinstance(t, dict) and isinstance(t.get("name"), str))
        cursor = env.result.get("nextCursor", MISSING)
        if not isinstance(cursor, str):
            break
    return tools


def long_running_tools(tools: list[dict[str, Any]], *, seconds: float, steps: int = 4, prefer_progress: bool = False) -> list[LongTool]:
    """Tools whose name or description suggests they take a while or report progress and whose
    required arguments we can fill (a duration, a number of steps), asked to take ``seconds``."""
    out: list[LongTool] = []
    for tool in tools:
        name = tool["name"]
        desc = tool.get("description") if isinstance(tool.get("description"), str) else ""
        if not (_LONG_NAME.search(name) or _LONG_NAME.search(desc or "")):
            continue
        execution = tool.get("execution")
        if isinstance(execution, dict) and execution.get("taskSupport") == "required":
            continue  # needs task augmentation (2025-11-25): not a plain call
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        args: dict[str, Any] = {}
        asked: float | None = None
        fillable = True
        for pname, pschema in props.items():
            ptype = pschema.get("type") if isinstance(pschema, dict) else None
            numeric = ptype in ("number", "integer")
            if numeric and _DURATION.search(pname):
                value: float = seconds * 1000 if _MILLIS.search(pname) else seconds
                args[pname] = int(math.ceil(value)) if ptype == "integer" else value
                asked = float(args[pname]) / (1000 if _MILLIS.search(pname) else 1)
            elif numeric and _STEPS.search(pname):
                args[pname] = steps
            elif pname in required:
                fillable = False
        if not fillable:
            continue
        hint = bool(_PROGRESS_HINT.search(name) or _PROGRESS_HINT.search(desc or ""))
        out.append(LongTool(name, args, asked, hint))
    if prefer_progress:
        out.sort(key=lambda t: (not t.progress_hint, t.seconds is None))
    else:
        out.sort(key=lambda t: (t.seconds is None, not t.progress_hint))
    return out


@dataclass
class CallProbe:
    """One ``tools/call`` of a long-running tool, in flight."""

    tool: LongTool
    id: Any
    token: Any
    started: float  # time.monotonic() when it was sent


def answers(rid: Any) -> Any:
    """A predicate: a response (or something shaped like one) with exactly the id ``rid``."""

    def match(env: Envelope) -> bool:
        return is_response(env) and env.id is not MISSING and type(env.id) is type(rid) and env.id == rid

    return match


async def start_slow_call(peer: RawPeer, tools: list[LongTool], *, token_prefix: str, settle: float, timeout: float) -> CallProbe | None:
    """Call the candidates (with a progressToken) until one is under way: it reported progress
    before answering, or is still unanswered after ``settle`` seconds.  That call, in flight, or
    None when every candidate answered at once."""
    for n, tool in enumerate(tools):
        token = f"{token_prefix}-{n}"
        started = time.monotonic()
        rid = await peer.request("tools/call", {"name": tool.name, "arguments": tool.arguments, "_meta": {"progressToken": token}})
        done = answers(rid)

        def moved(env: Envelope, done: Any = done, token: str = token) -> bool:
            return done(env) or (
                env.kind is Kind.NOTIFICATION and env.method == "notifications/progress"
                and isinstance(env.params, dict) and env.params.get("progressToken") == token
            )

        first = await observe(peer, moved, settle)
        if first is None or not done(first):
            return CallProbe(tool, rid, token, started)
        await peer.expect_response(rid, timeout=timeout)  # answered at once: take it, try the next
    return None


async def observe(peer: RawPeer, predicate: Any, timeout: float) -> Envelope | None:
    """The first message matching ``predicate`` (already buffered, or arriving within
    ``timeout``), without consuming it; None if none did."""
    from conformance.runtime.peer import UnexpectedMessage

    for env in peer.unconsumed():
        if predicate(env):
            return env
    try:
        await peer.expect_silence(timeout, predicate=predicate)
    except UnexpectedMessage as exc:
        return exc.envelope
    return None
