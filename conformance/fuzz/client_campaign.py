"""The fuzz campaign against a client (we play its server): the client direction of
:mod:`conformance.fuzz.campaign` (``mcp-conformance fuzz --client-command CMD``).

:func:`campaign_and_shrink` runs :func:`conformance.fuzz.client_engine.run_client_campaign`,
shrinks the first example of every signature by replaying it on the client (started again), drops
a quit that a plain ping provokes as well (the client would have quit anyway: not the frame's
doing) and saves reproducers (``role: client``); the report is ``role: client``.
:func:`client_replay_one` starts the client three times and re-sends a reproducer's frame (or
answer).
"""

from __future__ import annotations

import json
from dataclasses import replace
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.runtime.connect import TargetError
from conformance.fuzz.campaign import UsageError, parse_versions, report_section, save_finding
from conformance.fuzz.client_engine import QUIT_PROBLEMS

if TYPE_CHECKING:
    from conformance.client.role import ClientRole
    from conformance.client.target import ClientTarget
    from conformance.fuzz.client_engine import ClientFuzzConfig
    from conformance.fuzz.engine import SignatureRecord
    from conformance.fuzz.replay import Reproducer

__all__ = ["client_target", "client_versions", "campaign_and_shrink", "client_replay_one", "QUITS"]

QUITS = frozenset(QUIT_PROBLEMS)  # confirmed against a plain ping before they are reported
LIVENESS = QUITS | {"ClientStalled", "ClientCrashed"}
CONTROL = b'{"jsonrpc":"2.0","id":"mcp-conformance-control","method":"ping"}'


def client_target(command: str | None, transport: str | None, url: str | None, timeout: float,
                  fallback: dict[str, Any] | None = None) -> ClientTarget:
    """The client to start (``--client-command``, or the one a reproducer names, ``fallback``),
    validated as the ``client`` subcommand validates it (``url`` given is a usage error)."""
    from conformance.client.target import ClientTargetError, client_target as validated

    if not command and fallback:
        cmd = fallback.get("command")
        command = cmd[0] if isinstance(cmd, list) and len(cmd) == 1 else (shlex.join(cmd) if isinstance(cmd, list) else cmd)
        transport = transport or fallback.get("transport")
    if not command:
        raise UsageError('give the client: --client-command "my-client --server {server}"')
    if url:
        raise UsageError("--url names a server to fuzz; a client gets the suite's URL through {url} in --client-command")
    try:
        return validated(command=command, transport=transport, timeout=timeout)
    except ClientTargetError as exc:
        raise UsageError(str(exc)) from None


def client_versions(text: str) -> list[str]:
    """``--version`` for a client: ``all`` is the versions a client can be fuzzed on."""
    from conformance.fuzz.client_oracle import unsupported

    versions = parse_versions(text)
    if text == "all":
        return [v for v in versions if unsupported(v) is None]
    for v in versions:
        why = unsupported(v)
        if why is not None:
            raise UsageError(f"--version {v}: {why}")
    return versions


async def campaign_and_shrink(cfg: ClientFuzzConfig, report_dir: Path, do_shrink: bool, strict: bool) -> tuple[dict[str, Any], list[Any]]:
    """One campaign against a client (many client runs), each signature confirmed, shrunk and saved
    as a reproducer; the report's section (with the client's extras) and its findings."""
    import anyio

    from conformance.client.role import client_run
    from conformance.fuzz.client_engine import run_client_campaign

    camp = await run_client_campaign(cfg)
    section = report_section(camp)
    section.update(camp.section_extra())
    section["unconfirmed"] = []
    rows: list[Any] = []
    if not camp.signatures:
        return section, rows
    run = client_run(cfg.target, versions=[cfg.version], timeout=cfg.deadline, jobs=1)
    async with anyio.create_task_group() as host:
        await host.start(run.start)
        try:
            for n, (sig, rec) in enumerate(sorted(camp.signatures.items()), 1):
                repro, confirmed = await _reproducer(cfg, run.role, rec, do_shrink, n)
                if not confirmed:
                    section["unconfirmed"].append({"requirement": sig[0], "problem": sig[1], "count": rec.count,
                                                   "message": rec.finding.message,
                                                   "why": "a plain ping in its place made the client end its session too, "
                                                          "or the message alone did not make it quit"})
                    continue
                rows.append(save_finding(section, rec, repro, report_dir, f"client-{cfg.version}-{n:02d}-{sig[0]}-{sig[1]}",
                                         strict=strict, version=cfg.version))
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.6)  # the last client's pipes drained and its process reaped by the run
                await run.aclose()
            host.cancel_scope.cancel()
    return section, rows


async def _reproducer(cfg: ClientFuzzConfig, client: ClientRole, rec: SignatureRecord, do_shrink: bool,
                      n: int) -> tuple[Reproducer | None, bool]:
    """The reproducer of one signature (shrunk, replayed three times on fresh client runs), and
    whether the finding stands (a quit that a plain ping provokes as well does not)."""
    from conformance.fuzz.client_engine import HANDSHAKE, ClientSession
    from conformance.fuzz.replay import Reproducer
    from conformance.fuzz.shrink import shrink_within
    from conformance.wire.envelope import MISSING

    frame = rec.frame
    if frame is None:
        return None, True
    sig = rec.finding.signature
    live = sig[1] in LIVENESS
    answer_to = rec.detail.get("answer_to") if frame.answer else None
    answer_id = json.loads(rec.detail["answer_id"]) if frame.answer and "answer_id" in rec.detail else MISSING
    prefix = [f.data for f in rec.prefix] if live else []
    stats: dict[str, Any] = {"replays": 0, "seconds": 0.0, "shrunk": False}
    t0 = time.monotonic()
    count = [0]
    holder: list[Any] = [None]

    async def close() -> None:
        if holder[0] is not None:
            s = holder[0]
            holder[0] = None
            await s.__aexit__(None, None, None)

    # a stall is replayed with a shorter wait: each replay waits it out
    scfg = replace(cfg, deadline=min(cfg.deadline, 5.0)) if sig[1] == "ClientStalled" else cfg

    async def session(fresh: bool, script: Any = None) -> Any:
        if fresh or holder[0] is None or not holder[0].alive:
            await close()
            count[0] += 1
            s = ClientSession(scfg, client, n=10_000 + 100 * n + count[0], script=script)
            await s.__aenter__()
            holder[0] = s
        return holder[0]

    async def reproduces(data: bytes, pre: list[bytes], *, fresh: bool = False, grace: float | None = None) -> bool:
        stats["replays"] += 1
        if answer_to in HANDSHAKE:  # the answer goes to the handshake: a new client run for each
            s = await session(True, (answer_to, data, answer_id))
            found = await s.replay_handshake()
        else:
            s = await session(fresh or live)
            found = await s.replay(data, pre, answer_to=answer_to, answer_id=answer_id,
                                   grace=cfg.grace if grace is None else grace)
        return sig in {f.signature for f in found}

    stability = {"reproduced": 0, "of": 0}
    best = frame.data
    confirmed = True
    try:
        if live and not frame.answer and rec.detail.get("candidates"):
            # which of the messages the client may have been reading stopped it: each alone, on a
            # fresh client run (the likeliest first); none: a quit is not confirmed, a stall or
            # crash keeps all of them (the last one, the others as its prefix)
            chosen = None
            for cand in rec.detail["candidates"][:4]:
                if await reproduces(cand.data, [], fresh=True):
                    chosen = cand
                    break
            if chosen is None and sig[1] in QUITS:
                stats["seconds"] = round(time.monotonic() - t0, 3)
                return None, False
            if chosen is not None:
                frame, best, prefix = chosen, chosen.data, []
        if do_shrink and sig[1] != "ClientStalled":  # (a stall costs its whole wait per try)
            if live and prefix and await reproduces(best, []):
                prefix = []  # the frame alone does it
            if await reproduces(best, prefix, fresh=True):
                def keep(smaller: bytes) -> None:  # the best so far, should a replay raise
                    nonlocal best
                    best = smaller

                best = await shrink_within(best, lambda cand: reproduces(cand, prefix, grace=min(cfg.grace, 0.1)),
                                           started=t0, keep=keep, budget=cfg.shrink_budget, max_steps=60 if live else 100)
                stats["shrunk"] = best != frame.data
            else:
                stats["note"] = "did not reproduce alone on a fresh client run"
        for i in range(3):  # (a fresh client run each time for survival; else one run, three sends)
            stability["of"] += 1
            if await reproduces(best, prefix, fresh=live or i == 0):
                stability["reproduced"] += 1
        if sig[1] in QUITS and not frame.answer:
            # the control: a plain ping where the frame was; a client that quits on it as well
            # quits on its own (its request's timeout, its work done): not this frame's doing
            control = await reproduces(CONTROL, [], fresh=True)
            stats["control"] = "the client also quit after a plain ping" if control else "a plain ping: no quit"
            confirmed = not control and stability["reproduced"] > 0
    except TargetError as exc:
        stats["error"] = f"the client could not be restarted: {exc}"
    except Exception as exc:  # noqa: BLE001 - shrinking is best effort; the finding stands
        stats["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await close()
    stats["seconds"] = round(time.monotonic() - t0, 3)
    answer = {"method": answer_to, "id": None if answer_id is MISSING else answer_id} if frame.answer else None
    return Reproducer(cfg.version, cfg.target.transport.value, cfg.seed, frame.index, best, frame.data,
                      [frame.operator], [m.to_json() for m in frame.mutations], sig, rec.finding.to_json(cfg.version),
                      method=frame.method, headers=frame.headers, prefix=prefix, shrink=stats,
                      target=cfg.target.to_json(), stability=stability, role="client", answer=answer), confirmed


async def client_replay_one(target: ClientTarget, repro: Reproducer, *, timeout: float, grace: float) -> dict[str, Any]:
    """Replay one client reproducer three times, each on a fresh start of the client."""
    import anyio

    from conformance.client.role import client_run
    from conformance.fuzz.client_engine import HANDSHAKE, ClientFuzzConfig, ClientSession
    from conformance.wire.envelope import MISSING

    cfg = ClientFuzzConfig(target=target, version=repro.version, seed=repro.seed, deadline=timeout,
                           timeout=max(15.0, timeout), grace=grace)
    answer = repro.answer or {}
    reproduced = 0
    lines: list[str] = []
    live = repro.signature[1] in LIVENESS or bool(repro.answer)  # a fresh client run each time
    run = client_run(target, versions=[repro.version], timeout=timeout, jobs=1)
    async with anyio.create_task_group() as host:
        await host.start(run.start)
        session: Any = None
        try:
            answer_id = answer["id"] if "id" in answer and answer["id"] is not None else MISSING
            for i in range(3):
                handshake = answer.get("method") in HANDSHAKE
                if session is None or live or not session.alive:
                    if session is not None:
                        await session.__aexit__(None, None, None)
                    session = ClientSession(cfg, run.role, n=90_000 + i,
                                            script=(answer["method"], repro.frame, answer_id) if handshake else None)
                    await session.__aenter__()
                if handshake:
                    found = await session.replay_handshake()
                else:
                    found = await session.replay(repro.frame, repro.prefix, answer_to=answer.get("method"), answer_id=answer_id)
                if repro.signature in {f.signature for f in found}:
                    reproduced += 1
                    lines = [f"{f.requirement} {f.problem}: {f.message[:200]}" for f in found if f.signature == repro.signature]
        finally:
            if session is not None:
                await session.__aexit__(None, None, None)  # (shielded inside; entered at this level)
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.6)  # the last client's pipes drained and its process reaped by the run
                await run.aclose()
            host.cancel_scope.cancel()
    return {"reproduced": reproduced, "of": 3, "findings": lines}
