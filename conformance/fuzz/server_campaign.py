"""The fuzz campaign against a server (we are its client): the server direction of
:mod:`conformance.fuzz.campaign`.

:func:`campaign_and_shrink` runs :func:`conformance.fuzz.engine.run_campaign`, then shrinks the
first example of every signature on fresh sessions and saves it as a reproducer;
:func:`replay_one` re-sends a reproducer three times.  Called by the fuzz command and by
``--mcp-fuzz`` (:mod:`conformance.fuzz.pytest_fuzz`).
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.runtime.connect import Target
from conformance.fuzz.campaign import UsageError, report_section, save_finding
from conformance.server.target import ServerTargetError
from conformance.server.target import server_target as validated

if TYPE_CHECKING:
    from conformance.fuzz.engine import Campaign, FuzzConfig, SignatureRecord
    from conformance.fuzz.replay import Reproducer

__all__ = ["LIVENESS", "FLAGS", "server_target", "corpus_extra", "campaign_and_shrink", "replay_one"]

#: the fuzz command's flags, which a mistake in the target is named by
FLAGS = {"command": "--command", "url": "--url", "transport": "--transport"}
LIVENESS = {"ServerExited", "ServerStalled", "NoHttpResponse", "NonJsonOnStdout"}


def server_target(command: str | None, url: str | None, transport: str | None,
                  fallback: dict[str, Any] | None = None) -> Target:
    """The server to fuzz (``--command``/``--url``/``--transport``, or the one a reproducer names,
    ``fallback``), validated as ``mcp-conformance server`` validates it
    (:func:`conformance.server.target.server_target`) and resolved; a :class:`UsageError` saying
    what is missing."""
    if not command and not url and fallback:
        transport = transport or fallback.get("transport")
        command = shlex.join(fallback["command"]) if fallback.get("command") else None
        url = fallback.get("url")
    if not command and not url:
        raise UsageError("give the target: --command \"...\" (stdio) or --url http://127.0.0.1:PORT/mcp")
    try:
        target = validated(command=command, url=url, transport=transport, flags=FLAGS)
    except ServerTargetError as exc:
        raise UsageError(str(exc)) from None
    return target.resolve()


def corpus_extra(version: str, enabled: bool) -> tuple[dict, ...]:
    """The fuzz command's default corpus beyond the built-in seeds: hypothesis examples of every
    message of ``version``'s schema, generated once and cached beside the schema cache (keyed by the
    schema's sha256).  ``()`` when disabled (``--no-hypothesis``)."""
    if not enabled:
        return ()
    from conformance.fuzz.corpus import hypothesis_examples
    from conformance.schema.loader import cache_dir, load_schema, store_cached

    import hashlib

    digest = hashlib.sha256(json.dumps(load_schema(version), sort_keys=True).encode()).hexdigest()[:16]
    path = Path(cache_dir()).parent / "fuzz-corpus" / f"{version}-{digest}.json"
    try:
        return tuple(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass
    examples = hypothesis_examples(version)
    store_cached(path, json.dumps(examples).encode("utf-8"))
    return tuple(examples)


async def campaign_and_shrink(cfg: FuzzConfig, report_dir: Path, do_shrink: bool, strict: bool) -> tuple[dict[str, Any], list[Any]]:
    """One campaign against a server (:func:`conformance.fuzz.engine.run_campaign`), the first example
    of every signature shrunk and saved as a reproducer; the report's section and its findings."""
    from conformance.fuzz.engine import run_campaign

    camp = await run_campaign(cfg)
    section = report_section(camp)
    rows = []
    for n, (sig, rec) in enumerate(sorted(camp.signatures.items()), 1):
        repro = await _reproducer(cfg, camp, rec, do_shrink)
        rows.append(save_finding(section, rec, repro, report_dir, f"{cfg.version}-{n:02d}-{sig[0]}-{sig[1]}",
                                 strict=strict, version=cfg.version))
    return section, rows


async def _reproducer(cfg: FuzzConfig, camp: Campaign, rec: SignatureRecord, do_shrink: bool) -> Reproducer | None:
    from conformance.fuzz.engine import Session, replay_frame
    from conformance.fuzz.replay import Reproducer
    from conformance.fuzz.shrink import shrink_within

    frame = rec.frame
    if frame is None:
        return None
    sig = rec.finding.signature
    prefix = [f.data for f in rec.prefix] if sig[1] in LIVENESS else []
    stats: dict[str, Any] = {"replays": 0, "seconds": 0.0, "shrunk": False}
    best = frame.data
    t0 = time.monotonic()
    session: Any = None

    async def fresh() -> Any:
        nonlocal session
        if session is not None:
            await session.close()
        session = Session(cfg)
        await session.start(discover=False)
        return session

    async def reproduces(data: bytes, pre: list[bytes], *, new_session: bool = False, grace: float | None = None) -> bool:
        s = await fresh() if (new_session or session is None or session.transport is None or sig[1] in LIVENESS) else session
        stats["replays"] += 1
        found = await replay_frame(s, data, headers=frame.headers, prefix=pre, grace=cfg.grace if grace is None else grace,
                                   deadline=min(cfg.deadline, 5.0))
        if any(f.problem in ("ServerExited", "ServerStalled") for f in found):
            await s.close()
            session_reset()
        return sig in {f.signature for f in found}

    def session_reset() -> None:
        nonlocal session
        session = None

    stability = {"reproduced": 0, "of": 0}
    try:
        if sig[1] == "NonJsonOnStdout":
            return Reproducer(cfg.version, cfg.target.transport.value, cfg.seed, frame.index, frame.data, frame.data,
                              [frame.operator], [m.to_json() for m in frame.mutations], sig, rec.finding.to_json(cfg.version),
                              method=frame.method, headers=frame.headers, shrink={"skipped": "stdout noise is not tied to one frame"},
                              target=cfg.target.to_json())
        if do_shrink:
            if sig[1] in LIVENESS and prefix and await reproduces(best, []):
                prefix = []  # the last frame alone kills it
            alone = await reproduces(best, prefix)
            if alone:
                def keep(smaller: bytes) -> None:  # the best so far, should a replay raise
                    nonlocal best
                    best = smaller

                best = await shrink_within(best, lambda cand: reproduces(cand, prefix, grace=min(cfg.grace, 0.1)),
                                           started=t0, keep=keep, budget=cfg.shrink_budget, max_steps=100)  # the budget per signature
                stats["shrunk"] = best != frame.data
            else:
                stats["note"] = "did not reproduce alone on a fresh connection after the handshake"
        for _ in range(3):
            stability["of"] += 1
            if await reproduces(best, prefix, new_session=True):
                stability["reproduced"] += 1
    except Exception as exc:  # noqa: BLE001 - shrinking is best effort; the finding stands
        stats["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        if session is not None:
            await session.close()
    stats["seconds"] = round(time.monotonic() - t0, 3)
    return Reproducer(cfg.version, cfg.target.transport.value, cfg.seed, frame.index, best, frame.data,
                      [frame.operator], [m.to_json() for m in frame.mutations], sig, rec.finding.to_json(cfg.version),
                      method=frame.method, headers=frame.headers, prefix=prefix, shrink=stats,
                      target=cfg.target.to_json(), stability=stability)


async def replay_one(target: Target, repro: Reproducer, *, timeout: float, grace: float) -> dict[str, Any]:
    """Replay one server reproducer three times, each on a fresh session."""
    from conformance.fuzz.engine import FuzzConfig, Session, replay_frame

    cfg = FuzzConfig(target=target, version=repro.version, seed=repro.seed, timeout=timeout, deadline=timeout)
    reproduced = 0
    lines: list[str] = []
    for _ in range(3):
        session = Session(cfg)
        await session.start(discover=False)
        try:
            found = await replay_frame(session, repro.frame, headers=repro.headers, prefix=repro.prefix,
                                       grace=grace, deadline=min(timeout, 5.0))
        finally:
            await session.close()
        if repro.signature in {f.signature for f in found}:
            reproduced += 1
            lines = [f"{f.requirement} {f.problem}: {f.message[:200]}" for f in found if f.signature == repro.signature]
    return {"reproduced": reproduced, "of": 3, "findings": lines}
