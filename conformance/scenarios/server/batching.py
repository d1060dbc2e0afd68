"""JSON-RPC batches per version: accepted in 2025-03-26 (basic/index#batching; initialize never in a
batch), refused from 2025-06-18 on, unchecked in 2024-11-05 (which says nothing)."""

from __future__ import annotations

from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.peer import ConnectionLost, RawPeer
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.wire.envelope import MISSING, Envelope, Kind, id_repr, same_id

from ._helpers import GRACE, Synced, barrier_method, inbound_entries, is_response, observe, probe_message, sync

V2503 = "2025-03-26"
NOT_2503 = "batches are part of 2025-03-26 only"


def _batch(peer: RawPeer, version: str, ids: tuple[Any, Any]) -> list[dict[str, Any]]:
    return [
        probe_message(peer, version, id=ids[0]),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "mcp-conformance-never-sent", "reason": "batch member"}},
        probe_message(peer, version, id=ids[1]),
    ]


def _responses(peer: RawPeer, mark: int, barriers: list[Synced]) -> list[tuple[Envelope, int]]:
    """Every response (also inside arrays) received since transcript position ``mark``, but the
    answers to our ``barriers``."""
    out: list[tuple[Envelope, int]] = []
    for entry in inbound_entries(peer, mark):
        env = entry.envelope
        if env is None:
            continue
        for member in env.items if env.kind is Kind.BATCH else [env]:
            if is_response(member) and not any(b.owns(peer, member) for b in barriers):
                out.append((member, entry.seq))
    return out


async def _settle(peer: RawPeer, version: str, mark: int, ids: tuple[Any, ...], timeout: float) -> list[tuple[Envelope, int]]:
    """The responses to the batch sent at ``mark``: waits until one arrived for each of ``ids``
    (or an error that answers the whole batch: id null / absent), at most until shortly after
    the answer to a ping sent after the batch."""
    barriers: list[Synced] = []

    def complete(_env: Envelope | None) -> bool:
        got = _responses(peer, mark, barriers)
        if any(e.kind is Kind.ERROR and (e.id is None or e.id is MISSING) for e, _ in got):
            return True
        return all(any(same_id(e.id, i) for e, _ in got) for i in ids)

    if not complete(None):
        barriers.append(await sync(peer, version, timeout=timeout))
        if not complete(None):
            await observe(peer, complete, GRACE if barriers[0] else 0.0)
    return _responses(peer, mark, barriers)


@scenario(requirements=["batching.receive"], versions=[V2503], skip_reason=NOT_2503)
async def batch_accepted(ctx: ScenarioContext) -> None:
    """A batch of two requests and a notification on an initialized session: both requests
    answered (as one array, or one by one over HTTP), nothing for the notification."""
    peer = await ctx.connect()
    ids = ("mcp-conformance-batch-1", "mcp-conformance-batch-2")
    mark = len(peer.transcript)
    exchange = await peer.send_json(_batch(peer, ctx.version, ids))
    got = await _settle(peer, ctx.version, mark, ids, ctx.timeout)
    req = "batching.receive"
    refused = [e for e, _ in got if e.kind is Kind.ERROR and (e.id is None or e.id is MISSING)]
    status = getattr(exchange, "status", None)
    missing = [i for i in ids if not any(same_id(e.id, i) for e, _ in got)]
    if refused or missing:
        detail = (f"the batch was refused: error {id_repr(refused[0].error_code)} {refused[0].error.get('message') if isinstance(refused[0].error, dict) else ''!r}"
                  if refused else f"no response to {', '.join(id_repr(i) for i in missing)}")
        if isinstance(status, int) and status >= 400:
            detail += f" (HTTP {status})"
        ctx.check(req, False, problem="BatchNotAccepted",
                  message=f"a JSON-RPC batch of two {barrier_method(ctx.version)} requests and a notification: {detail}",
                  expected="a response to each request in the batch", actual=[e.summary() for e, _ in got[:4]] or "nothing",
                  entries=[s for _, s in got[:3]] or [mark])
        return
    errors = [e for e, _ in got if e.kind is Kind.ERROR and any(same_id(e.id, i) for i in ids)]
    ctx.check(req, not errors, problem="BatchMemberRefused",
              message=f"requests inside the batch were refused: {', '.join(f'{id_repr(e.id)} -> error {id_repr(e.error_code)}' for e in errors)}",
              expected="results for the batch's requests (they are valid alone)", actual=[e.summary() for e in errors],
              entries=[s for e, s in got if e in errors])
    if not errors:
        how = "one array" if any(entry.envelope is not None and entry.envelope.kind is Kind.BATCH for entry in inbound_entries(peer, mark)) else "separate messages"
        ctx.check(req, True, message=f"both requests of the batch were answered ({how})", entries=[s for _, s in got[:2]])


@scenario(requirements=["batching.initialize-not-batched"], versions=[V2503], connection=ConnectionKind.FRESH, skip_reason=NOT_2503)
async def initialize_in_batch(ctx: ScenarioContext) -> None:
    """initialize inside a batch, on a new connection: not a session initialized from inside a
    batch (initialize must not be part of a batch).  Refused with an error or an HTTP 4xx, or not
    answered at all: all accepted."""
    info = await ctx.session_info()
    if info.unsupported:
        ctx.skip(info.unsupported)
    peer = await ctx.connect(initialize=False, fresh=True)
    rid = "mcp-conformance-batched-initialize"
    msg = {"jsonrpc": "2.0", "id": rid, "method": "initialize",
           "params": {"protocolVersion": ctx.version, "capabilities": {}, "clientInfo": peer.client_info}}
    mark = len(peer.transcript)
    exchange = await peer.send_json([msg])
    req = "batching.initialize-not-batched"
    got = await _settle(peer, ctx.version, mark, (rid,), ctx.timeout)
    status = getattr(exchange, "status", None)
    if not got:
        if isinstance(status, int) and 400 <= status < 500:
            ctx.check(req, True, message=f"accepted: the batched initialize was refused with HTTP {status}")
            return
        # not served, which is all the sentence's reading asks; that every request of a batch is
        # answered is batching.receive's rule (judged on a batch of pings)
        ctx.check(req, True, entries=[mark],
                  message=(f"accepted: a batch holding only initialize was not served (no answer by the time a "
                           f"{barrier_method(ctx.version)} sent after it was answered); an error would be clearer, but no "
                           "revision words the server's side"))
        return
    env, seq = got[0]
    ctx.check(
        req, env.kind is Kind.ERROR, problem="BatchedInitializeAccepted",
        message=(f"initialize inside a batch was answered with error {id_repr(env.error_code)}" if env.kind is Kind.ERROR else
                 "initialize inside a batch was served (a session initialized from a batch); it should be refused with an error"),
        expected="an error response", actual=env.summary(), entries=[seq],
    )


@scenario(requirements=["batching.rejected", "batching.rejected-stateless"], since="2025-06-18",
          skip_reason="2025-03-26 requires batches; 2024-11-05 says nothing about them")
async def batch_refused(ctx: ScenarioContext) -> None:
    """A batch of two requests and a notification, in a version without batching: refused with
    an error (one for the batch or one per member, any code) or an HTTP 4xx, not served."""
    peer = await ctx.connect()
    ids = ("mcp-conformance-batch-1", "mcp-conformance-batch-2")
    mark = len(peer.transcript)
    try:
        exchange = await peer.send_json(_batch(peer, ctx.version, ids))
    except ConnectionLost as exc:
        for req in ("batching.rejected", "batching.rejected-stateless"):
            ctx.check(req, False, problem="ConnectionLostOnBatch", message=f"the connection ended on a batch: {exc}",
                      expected="an error response", actual=str(exc.cause))
        return
    got = await _settle(peer, ctx.version, mark, ids, ctx.timeout)
    status = getattr(exchange, "status", None)
    served = [e for e, _ in got if e.kind is Kind.RESULT and any(same_id(e.id, i) for i in ids)]
    refused = [e for e, _ in got if e.kind is Kind.ERROR]
    http_refused = isinstance(status, int) and 400 <= status < 500
    for req in ("batching.rejected", "batching.rejected-stateless"):
        if served:
            ctx.check(req, False, problem="BatchServed",
                      message=(f"a JSON-RPC batch was served ({len(served)} result(s)) although {ctx.version} has no batching; "
                               "an error response is expected"),
                      expected="an error response (any code) or an HTTP 4xx", actual=[e.summary() for e in served],
                      entries=[s for e, s in got if e in served])
        elif refused or http_refused:
            how = f"error {id_repr(refused[0].error_code)}" if refused else f"HTTP {status}"
            ctx.check(req, True, message=f"the batch was refused ({how})", entries=[s for _, s in got[:1]] or [mark])
        else:
            ctx.check(req, False, problem="BatchUnanswered",
                      message=(f"a JSON-RPC batch got no answer (nor by the time a {barrier_method(ctx.version)} sent after it "
                               "was answered); an error response is expected"),
                      expected="an error response (any code) or an HTTP 4xx", actual="no response", entries=[mark])
