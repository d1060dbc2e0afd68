"""``mcp-conformance fuzz``: run a fuzz campaign (or replay reproducers) and write the report.

Entry layer: parses the command line, runs :mod:`conformance.fuzz.engine` in an event loop,
shrinks the first example of every signature, saves reproducers and writes ``report.json`` (with
its ``fuzz`` section) and its renderings.  Exit codes as the main CLI: 0 nothing graded fail,
1 a finding graded fail (or a reproducer still failing), 2 usage error, 3 target unreachable,
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from conformance import __version__
from conformance.connect import Target, TargetError
from conformance.outcomes import Outcome, grade
from conformance.spec.requirements import catalogue
from conformance.spec.requirements import get as get_requirement
from conformance.spec.versions import VERSIONS, Transport, spec

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_TARGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
DEFAULT_VERSION = "2025-11-25"
LIVENESS = {"ServerExited", "ServerStalled", "NoHttpResponse", "NonJsonOnStdout"}


class UsageError(Exception):
    pass


def _number(kind: type, *, least: float, what: str) -> Any:
    """An argparse type: a ``kind`` number of at least ``least``; otherwise argparse's usage error
    (exit 2) says which option and what it takes."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{text!r}: give {what}")
        return value

    return parse


_COUNT = _number(int, least=1, what="a whole number of at least 1")
_SECONDS = _number(float, least=0.0, what="a number of seconds (0 or more)")
_DEADLINE = _number(float, least=0.001, what="a number of seconds above 0")


def parse_duration(text: str, option: str = "--budget") -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text or "")
    if not m:
        raise UsageError(f"{option} {text!r}: expected a duration such as 60s, 2m, 500ms or 30")
    value = float(m.group(1))
    return value * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mcp-conformance fuzz",
        description="Property-based message fuzzing of an MCP server (--command/--url; we are its client) or of an MCP client "
                    "(--client-command; we are its server, and start it as often as needed) with the specification as "
                    "oracle: every finding is a graded verdict citing a requirement, shrunk, and saved as a reproducer "
                    "that --replay re-sends byte for byte.",
        epilog="exit codes: 0 nothing graded fail; 1 a finding graded fail (or a replayed reproducer still fails); 2 usage "
               "error; 3 the target could not be started or reached; 130 interrupted. Safety: no tool is called unless "
               "--fuzz-tools names it; a tool that may be destructive (destructiveHint not false) needs its exact name.",
    )
    tgt = p.add_mutually_exclusive_group()
    tgt.add_argument("--command", help="the server to start (stdio; or an HTTP server with --url and {port})")
    tgt.add_argument("--client-command", metavar="CMD",
                     help="fuzz a client instead: the client to start (run with sh -c, as many times as needed), as "
                          "`mcp-conformance client --command` takes it: {server} becomes the launcher of the suite's "
                          "server (stdio), {url} its URL (streamable HTTP, legacy SSE), {config} an mcp.json naming "
                          "either; without a placeholder the launcher or URL is appended")
    p.add_argument("--url", help="the MCP endpoint of an HTTP server (streamable HTTP)")
    p.add_argument("--transport", choices=[t.value for t in Transport],
                   help="default: stdio, or streamable-http with --url (sse: the legacy HTTP+SSE transport, --url naming its SSE endpoint)")
    p.add_argument("--jobs", type=_COUNT, default=2, help="--client-command: client runs at once (default 2)")
    p.add_argument("--version", default=DEFAULT_VERSION, help=f"protocol version (one of {', '.join(VERSIONS)}, or 'all'; default {DEFAULT_VERSION})")
    p.add_argument("--seed", type=int, default=0, help="campaign seed: the same seed sends the same frames (default 0)")
    lim = p.add_mutually_exclusive_group()
    lim.add_argument("--budget", default=None, help="how long to send, per version (default 30s)")
    lim.add_argument("--max-messages", type=_COUNT, help="how many frames to send, per version")
    p.add_argument("--fuzz-tools", action="append", default=[], metavar="GLOB",
                   help="call these tools with fuzzed arguments (repeatable; default: no tool is called)")
    p.add_argument("--ops", help="comma list of operators to use (default: all); see --list-ops")
    p.add_argument("--exclude-ops", help="comma list of operators to leave out")
    p.add_argument("--list-ops", action="store_true", help="print the mutation operators and exit")
    p.add_argument("--replay", action="append", metavar="FILE", help="replay reproducer file(s) or a directory of them")
    p.add_argument("--report-dir", default="reports/fuzz", help="where report.json, renderings and reproducers go (default reports/fuzz)")
    p.add_argument("--window", type=_COUNT, default=None, help="frames in flight (default 256 on stdio and legacy SSE, 32 concurrent POSTs over streamable HTTP)")
    p.add_argument("--chunk", type=_COUNT, default=32, help="a barrier at least every N frames (default 32)")
    p.add_argument("--grace", type=_SECONDS, default=0.25, help="seconds an answer may lag its barrier's (default 0.25)")
    p.add_argument("--timeout", type=_DEADLINE, default=10.0, help="start-up, handshake and stall deadline in seconds (default 10)")
    p.add_argument("--no-shrink", action="store_true", help="save findings as found, without minimising them")
    p.add_argument("--shrink-budget", default="10s", help="time spent minimising each finding (default 10s)")
    p.add_argument("--no-hypothesis", action="store_true", help="corpus from the schema walk only (no hypothesis-jsonschema examples)")
    p.add_argument("--strict", action="store_true", help="grade SHOULD findings as failures")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    return p


def _target(ns: argparse.Namespace, fallback: dict[str, Any] | None = None) -> Target:
    transport = ns.transport or ("streamable-http" if ns.url else None)
    command = ns.command
    url = ns.url
    if not command and not url and fallback:
        transport = transport or fallback.get("transport")
        command = shlex.join(fallback["command"]) if fallback.get("command") else None
        url = fallback.get("url")
    if not command and not url:
        raise UsageError("give the target: --command \"...\" (stdio) or --url http://127.0.0.1:PORT/mcp")
    transport = transport or "stdio"
    if transport == "stdio" and not command:
        raise UsageError("--transport stdio needs --command")
    if transport != "stdio" and not url:
        raise UsageError(f"--transport {transport} needs --url (and --command with {{port}} to start the server)")
    argv = tuple(shlex.split(command)) if command else None
    return Target(transport=Transport(transport), command=argv, url=url).resolve()


def _versions(text: str) -> list[str]:
    if text == "all":
        return list(VERSIONS)
    out = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in out if v not in VERSIONS]
    if bad or not out:
        raise UsageError(f"--version {text!r}: unknown version {bad[0] if bad else text!r}; use one of {', '.join(VERSIONS)} or all")
    return out


def versions_on_transport(versions: list[str], transport: Transport, *, every: bool) -> list[str]:
    """The versions that define ``transport``: with ``--version all`` the others are left out
    (said on stderr); named ones that do not define it are a usage error."""
    undefined = [v for v in versions if transport not in spec(v).transports]
    if not undefined:
        return versions
    defined = [v for v in VERSIONS if transport in spec(v).transports]
    if not every or len(undefined) == len(versions):
        raise UsageError(f"--transport {transport.value}: {', '.join(undefined)} {'does' if len(undefined) == 1 else 'do'} not "
                         f"define it; it exists in {', '.join(defined)}")
    print(f"mcp-conformance fuzz: --transport {transport.value} is not defined by {', '.join(undefined)}: "
          "left out", file=sys.stderr)
    return [v for v in versions if v not in undefined]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from conformance.fuzz.operators import OPERATORS

    if ns.list_ops:
        for op in OPERATORS.values():
            where = "" if op.transports is None else f"  [{', '.join(sorted(op.transports))}]"
            uses = ",".join(u for u in ("c2s", "s2c", "answer") if u in op.uses)
            print(f"{op.name:24} weight {op.weight:<4g} {uses:15} {op.description}{where}")
        print("\nuses: c2s = what we send a server; s2c = what we send a client; answer = our answers to a client's requests")
        return EXIT_OK
    from conformance.cli import terminate_like_interrupt

    terminate_like_interrupt()  # SIGTERM stops a campaign as Ctrl-C does: server stopped, report written
    try:
        if ns.replay:
            return _replay_command(ns)
        if ns.client_command:
            from conformance.fuzz.client_command import client_fuzz_command

            return client_fuzz_command(ns)
        return _fuzz_command(ns)
    except UsageError as exc:
        print(f"mcp-conformance fuzz: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except TargetError as exc:
        print(f"mcp-conformance fuzz: cannot reach the target: {exc}", file=sys.stderr)
        return EXIT_TARGET
    except KeyboardInterrupt:
        print("mcp-conformance fuzz: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


# -- the campaign ----------------------------------------------------------------------------------


class _Progress:
    def __init__(self, live: bool) -> None:
        self.live = live
        self.width = 0

    def __call__(self, camp: Any) -> None:
        if not self.live:
            return
        cfg = camp.cfg
        left = ""
        if cfg.budget is not None:
            left = f"  {max(0.0, cfg.budget - camp.elapsed):.0f}s left"
        elif cfg.max_messages:
            left = f"  {max(0, cfg.max_messages - camp.sent):,} to go"
        line = (f"fuzz {cfg.version} {cfg.target.transport.value}: {camp.sent:,} msgs  {camp.rate:,.0f}/s  "
                f"findings {camp.findings_total} ({len(camp.signatures)} kinds){left}")
        sys.stderr.write("\r" + line.ljust(self.width))
        sys.stderr.flush()
        self.width = len(line)

    def done(self) -> None:
        if self.live and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


def _interrupted(exc: BaseException) -> bool:
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(_interrupted(e) for e in exc.exceptions)


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


def _fuzz_command(ns: argparse.Namespace) -> int:
    from conformance.fuzz.engine import FuzzConfig

    target = _target(ns)
    versions = versions_on_transport(_versions(ns.version), target.transport, every=ns.version == "all")
    budget = parse_duration(ns.budget) if ns.budget else (None if ns.max_messages else 30.0)
    if ns.max_messages is not None and ns.max_messages < 1:
        raise UsageError("--max-messages must be at least 1")
    ops = tuple(o.strip() for o in (ns.ops or "").split(",") if o.strip())
    exclude = tuple(o.strip() for o in (ns.exclude_ops or "").split(",") if o.strip())
    from conformance.fuzz.operators import select_operators

    try:
        select_operators(target.transport.value, list(ops) or None, list(exclude) or None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return run_campaigns(
        ns, target, versions, Path(ns.report_dir), _campaign_and_shrink, cannot="cannot reach the target",
        config=lambda version, progress: FuzzConfig(
            target=target, version=version, seed=ns.seed, budget=budget, max_messages=ns.max_messages,
            window=ns.window or (32 if target.transport is Transport.STREAMABLE_HTTP else 256), chunk=ns.chunk, grace=ns.grace,
            timeout=ns.timeout, deadline=ns.timeout, fuzz_tools=tuple(ns.fuzz_tools), ops=ops, exclude_ops=exclude,
            extra_corpus=corpus_extra(version, not ns.no_hypothesis), progress=progress,
            shrink_budget=parse_duration(ns.shrink_budget, "--shrink-budget")))


def run_campaigns(ns: argparse.Namespace, target: Any, versions: Sequence[str], report_dir: Path,
                  campaign_and_shrink: Any, *, config: Any, cannot: str, role: str = "server") -> int:
    """One campaign per version (``config(version, progress)`` its configuration), shrunk, then
    the report; the exit code.  Shared by both directions (the client's: client_command.py)."""
    import anyio

    progress = _Progress(live=sys.stderr.isatty() and not ns.quiet)
    started = time.time()
    sections: list[dict[str, Any]] = []
    results: list[Any] = []
    errors: list[dict[str, Any]] = []
    status = "complete"
    for version in versions:
        cfg = config(version, progress)
        try:
            section, rows = anyio.run(campaign_and_shrink, cfg, report_dir, not ns.no_shrink, ns.strict)
        except TargetError as exc:
            progress.done()
            errors.append({"kind": "target", "message": f"{version}: {exc}"})
            status = "target-error"
            print(f"mcp-conformance fuzz: {version}: {cannot}: {exc}", file=sys.stderr)
            continue
        except BaseException as exc:  # noqa: BLE001 - anyio wraps Ctrl-C / SIGTERM in an exception group
            if not _interrupted(exc):
                raise
            progress.done()
            status = "interrupted"
            print("mcp-conformance fuzz: interrupted; the report holds the campaigns that finished", file=sys.stderr)
            break
        progress.done()
        sections.append(section)
        results.extend(rows)
        if not ns.quiet:
            _print_section(section)
    report = _write_report(report_dir, target, versions, ns, started, status, sections, results, errors, role=role)
    print(f"report: {report_dir / 'report.json'}", file=sys.stderr)
    return EXIT_INTERRUPTED if status == "interrupted" else int(report["exit_code"])


async def _campaign_and_shrink(cfg: Any, report_dir: Path, do_shrink: bool, strict: bool) -> tuple[dict[str, Any], list[Any]]:
    from conformance.fuzz.engine import run_campaign

    camp = await run_campaign(cfg)
    repro_dir = report_dir / "reproducers"
    section = _section(camp)
    rows = []
    for n, (sig, rec) in enumerate(sorted(camp.signatures.items()), 1):
        repro = await _reproducer(cfg, camp, rec, do_shrink)
        path = None
        if repro is not None:
            repro_dir.mkdir(parents=True, exist_ok=True)
            path = repro_dir / f"{cfg.version}-{n:02d}-{sig[0]}-{sig[1]}.json"
            path.write_text(json.dumps(repro.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        entry = _finding_entry(rec, repro, path, report_dir, strict, cfg.version)
        section["findings"].append(entry)
        rows.append(entry)
    return section, rows


def _section(camp: Any) -> dict[str, Any]:
    cfg = camp.cfg
    return {
        "version": cfg.version,
        "transport": cfg.target.transport.value,
        "seed": cfg.seed,
        "budget_seconds": cfg.budget,
        "max_messages": cfg.max_messages,
        "stopped_by": camp.stopped_by,
        "messages": camp.sent,
        "judged": camp.judged,
        "barriers": camp.barriers,
        "in_runs": camp.in_runs,
        "sent_again_alone": camp.rechecks,
        "seconds": round(camp.elapsed, 3),
        "judged_per_second": round(camp.rate, 1),
        "window": cfg.window,
        "grace_seconds": cfg.grace,
        "restarts": camp.restarts,
        "unattributed_answers": camp.unattributed,
        "server_requests": camp.server_requests,
        "corpus": {"seeds": len(camp.corpus.seeds) if camp.corpus else 0, "digest": camp.corpus.digest() if camp.corpus else None,
                   "methods": camp.corpus.methods() if camp.corpus else []},
        "tools_called": sorted({s.message["params"]["name"] for s in camp.corpus.seeds if s.source == "tools/list"}) if camp.corpus else [],
        "operators": {name: dict(v) for name, v in camp.by_operator.items()},
        "methods": dict(camp.by_method),
        "memory": camp.memory_summary(),
        "findings": [],
    }


async def _reproducer(cfg: Any, camp: Any, rec: Any, do_shrink: bool) -> Any:
    from conformance.fuzz.engine import Session, replay_frame
    from conformance.fuzz.replay import Reproducer
    from conformance.fuzz.shrink import shrink_steps

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
                gen = shrink_steps(best, max_steps=100)
                try:
                    cand = next(gen)
                    while time.monotonic() - t0 < cfg.shrink_budget:  # the shrink budget per signature
                        ok = await reproduces(cand, prefix, grace=min(cfg.grace, 0.1))
                        if ok:
                            best = cand
                        cand = gen.send(ok)
                except StopIteration as stop:
                    best = stop.value
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


def _finding_entry(rec: Any, repro: Any, path: Path | None, report_dir: Path, strict: bool, version: str | None = None) -> dict[str, Any]:
    f = rec.finding
    req = get_requirement(f.requirement)
    outcome = grade(req.level, True, strict=strict)
    return {
        "requirement": f.requirement,
        "level": req.level.value,
        "outcome": outcome.value,
        "url": req.url_for(version) if hasattr(req, "url_for") else req.url,
        "quote": req.quote,
        "problem": f.problem,
        "message": f.message,
        "expected": f.expected,
        "actual": f.actual,
        "frame_was": rec.expect_what,
        "accepted": list(rec.accepted),
        "count": rec.count,
        "first_seen_seconds": round(rec.first_seen, 3),
        "operators": dict(rec.operators),
        "methods": dict(rec.methods),
        "reproducer": str(path.relative_to(report_dir)) if path is not None else None,
        "frame": repro.to_json()["frame"] if repro is not None else None,
        "original": repro.to_json()["original"] if repro is not None else None,
        "mutations": repro.mutations if repro is not None else [],
        "index": repro.index if repro is not None else None,
        "shrink": repro.shrink if repro is not None else {},
        "stability": repro.stability if repro is not None else {},
        "detail": {k: v for k, v in rec.detail.items() if isinstance(v, (str, int, float, type(None)))},
    }


def _print_section(section: dict[str, Any]) -> None:
    print(f"fuzz {section['version']} over {section['transport']}: {section['messages']:,} messages, "
          f"{section['judged']:,} judged in {section['seconds']:.1f} s ({section['judged_per_second']:,.0f}/s), "
          f"{len(section['findings'])} finding(s)")
    for f in section["findings"]:
        print(f"  {f['outcome'].upper():7} {f['requirement']} [{f['level']}] {f['problem']} x{f['count']}: {f['message'][:160]}")
        if f.get("reproducer"):
            print(f"          reproducer: {f['reproducer']}  (mcp-conformance fuzz --replay ...)")
    mem = section["memory"]
    if mem.get("sampled"):
        who = "client" if section.get("role") == "client" else "server"
        print(f"  {who} memory: {mem['start_kib']} KiB at start, peak {mem['peak_kib']} KiB, {mem['end_kib']} KiB at the end")
    if section.get("role") == "client":
        if "times (" in (section.get("stopped_by") or ""):
            print(f"  stopped early: {section['stopped_by']}")
        print(f"  {section['client_runs']} client run(s), {section['answers']} answers to its requests "
              f"({section['mutated_answers']} mutated); runs ended: "
              + ", ".join(f"{k} x{v}" for k, v in section["runs_ended"].items()))
        if section.get("tolerated_exits"):
            print("  the client ended its session after malformed input (not a finding): "
                  + ", ".join(f"{k} x{v}" for k, v in section["tolerated_exits"].items()))
        for u in section.get("unconfirmed") or []:
            print(f"  dropped {u['requirement']} {u['problem']} x{u['count']}: {u['why']}")


def _write_report(report_dir: Path, target: Any, versions: list[str], ns: argparse.Namespace, started: float, status: str,
                  sections: list[dict[str, Any]], findings: list[dict[str, Any]], errors: list[dict[str, Any]],
                  role: str = "server") -> dict[str, Any]:
    from conformance.report.model import RequirementResult, build_report
    from conformance.report.render import render

    results: dict[tuple[str, str], RequirementResult] = {}
    for section in sections:
        for f in section["findings"]:
            key = (f["requirement"], section["version"])
            r = results.get(key)
            if r is None:
                r = results[key] = RequirementResult(f["requirement"], section["version"], section["transport"])
                r.add_scenario("fuzz")
            r.record(Outcome(f["outcome"]), violation={
                "requirement": f["requirement"], "problem": f["problem"], "message": f["message"],
                "expected": f["expected"], "actual": f["actual"], "json_path": None, "transcript": [],
                "outcome": f["outcome"], "level": f["level"], "scenario": "fuzz", "reproducer": f["reproducer"],
            })
    report = build_report(
        suite_version=__version__, started=started, finished=time.time(), status=status, target=target.to_json(),
        transport=target.transport.value, versions=versions, strict=ns.strict, selection={"select": ["fuzz"], "exclude": []},
        results=list(results.values()), requirements=catalogue(), errors=errors, role=role,
    )
    report["fuzz"] = {"seed": ns.seed, "campaigns": sections}
    report_dir.mkdir(parents=True, exist_ok=True)
    for name, text in render(report).items():
        (report_dir / name).write_text(text, encoding="utf-8")
    return report


# -- replay --------------------------------------------------------------------------------------------


def _replay_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(sorted(path.rglob("*.json")))
        elif path.is_file():
            out.append(path)
        else:
            raise UsageError(f"--replay {p}: no such file or directory")
    if not out:
        raise UsageError(f"--replay {' '.join(paths)}: no reproducer files (*.json) found")
    return out


def _replay_command(ns: argparse.Namespace) -> int:
    import anyio

    from conformance.fuzz.replay import Reproducer, ReproducerError

    failed = 0
    for path in _replay_files(ns.replay):
        try:
            repro = Reproducer.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, OSError) as exc:
            if isinstance(exc, ReproducerError) or isinstance(exc, ValueError):
                raise UsageError(f"{path}: {exc}") from None
            raise
        if repro.role == "client":
            from conformance.fuzz.client_command import client_replay_one, client_target

            target = client_target(ns, repro.target)
        else:
            target = _target(ns, repro.target)
        if target.transport.value != repro.transport:
            raise UsageError(f"{path}: recorded over {repro.transport}, the target given is {target.transport.value}")
        got = anyio.run(client_replay_one if repro.role == "client" else _replay_one, target, repro, ns)
        verdict = "FAILED" if got["reproduced"] else "FIXED"
        failed += bool(got["reproduced"])
        sig = f"{repro.signature[0]} {repro.signature[1]}"
        print(f"{verdict:6} {path}: {sig} (reproduced {got['reproduced']} of {got['of']})")
        for line in got["findings"][:3]:
            print(f"         {line}")
    return EXIT_FAILED if failed else EXIT_OK


async def _replay_one(target: Target, repro: Any, ns: argparse.Namespace) -> dict[str, Any]:
    from conformance.fuzz.engine import FuzzConfig, Session, replay_frame

    cfg = FuzzConfig(target=target, version=repro.version, seed=repro.seed, timeout=ns.timeout, deadline=ns.timeout)
    reproduced = 0
    lines: list[str] = []
    for _ in range(3):
        session = Session(cfg)
        await session.start(discover=False)
        try:
            found = await replay_frame(session, repro.frame, headers=repro.headers, prefix=repro.prefix,
                                       grace=ns.grace, deadline=min(ns.timeout, 5.0))
        finally:
            await session.close()
        if repro.signature in {f.signature for f in found}:
            reproduced += 1
            lines = [f"{f.requirement} {f.problem}: {f.message[:200]}" for f in found if f.signature == repro.signature]
    return {"reproduced": reproduced, "of": 3, "findings": lines}
