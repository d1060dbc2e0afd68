"""``mcp-conformance fuzz``: run a fuzz campaign (or replay reproducers) and write the report.

Entry layer, argparse only: parses the command line and hands the campaign library
(:mod:`conformance.fuzz.campaign`) a configured campaign of either direction
(:mod:`conformance.fuzz.server_campaign`, :mod:`conformance.fuzz.client_campaign`), which runs it,
shrinks the first example of every signature, saves reproducers and writes ``report.json`` (with
its ``fuzz`` section) and its renderings.  Exit codes as the main CLI: 0 nothing graded fail,
1 a finding graded fail (or a reproducer still failing), 2 usage error, 3 target unreachable,
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from conformance.runtime.connect import TargetError
from conformance.fuzz.campaign import UsageError, parse_duration, parse_versions, run_campaigns, versions_on_transport
from conformance.report.model import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TARGET, EXIT_USAGE
from conformance.spec.versions import VERSIONS, Transport

DEFAULT_VERSION = "2025-11-25"


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
    from conformance.runtime.signals import terminate_like_interrupt

    terminate_like_interrupt()  # SIGTERM stops a campaign as Ctrl-C does: server stopped, report written
    try:
        if ns.replay:
            return _replay_command(ns)
        if ns.client_command:
            return _client_fuzz_command(ns)
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


# -- the campaigns: the command line made a configuration ----------------------------------------------


def _fuzz_command(ns: argparse.Namespace) -> int:
    from conformance.fuzz.engine import FuzzConfig
    from conformance.fuzz.server_campaign import campaign_and_shrink, corpus_extra, server_target

    target = server_target(ns.command, ns.url, ns.transport)
    versions = versions_on_transport(parse_versions(ns.version), target.transport, every=ns.version == "all")
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
        target, versions, Path(ns.report_dir), campaign_and_shrink, cannot="cannot reach the target",
        seed=ns.seed, strict=ns.strict, shrink=not ns.no_shrink, quiet=ns.quiet,
        config=lambda version, progress: FuzzConfig(
            target=target, version=version, seed=ns.seed, budget=budget, max_messages=ns.max_messages,
            window=ns.window or (32 if target.transport is Transport.STREAMABLE_HTTP else 256), chunk=ns.chunk, grace=ns.grace,
            timeout=ns.timeout, deadline=ns.timeout, fuzz_tools=tuple(ns.fuzz_tools), ops=ops, exclude_ops=exclude,
            extra_corpus=corpus_extra(version, not ns.no_hypothesis), progress=progress,
            shrink_budget=parse_duration(ns.shrink_budget, "--shrink-budget")))


def _client_fuzz_command(ns: argparse.Namespace) -> int:
    from conformance.fuzz.client_campaign import campaign_and_shrink, client_target, client_versions
    from conformance.fuzz.client_engine import ClientFuzzConfig
    from conformance.fuzz.operators import select_operators

    target = client_target(ns.client_command, ns.transport, ns.url, ns.timeout)
    versions = client_versions(ns.version)
    budget = parse_duration(ns.budget) if ns.budget else (None if ns.max_messages else 30.0)
    if ns.max_messages is not None and ns.max_messages < 1:
        raise UsageError("--max-messages must be at least 1")
    if ns.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if ns.fuzz_tools:
        raise UsageError("--fuzz-tools is for servers (a client has no tools to call)")
    ops = tuple(o.strip() for o in (ns.ops or "").split(",") if o.strip())
    exclude = tuple(o.strip() for o in (ns.exclude_ops or "").split(",") if o.strip())
    try:
        chosen = [op for use in ("s2c", "answer")
                  for op in select_operators(target.transport.value, list(ops) or None, list(exclude) or None, use=use)]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not chosen:
        raise UsageError(f"no operator of --ops/--exclude-ops applies to a client over {target.transport.value} (see --list-ops)")
    return run_campaigns(
        target, versions, Path(ns.report_dir), campaign_and_shrink, cannot="the client could not be fuzzed",
        seed=ns.seed, strict=ns.strict, shrink=not ns.no_shrink, quiet=ns.quiet, role="client",
        config=lambda version, progress: ClientFuzzConfig(
            target=target, version=version, seed=ns.seed, budget=budget, max_messages=ns.max_messages,
            window=ns.window or 128, chunk=ns.chunk, grace=ns.grace, deadline=ns.timeout,
            timeout=max(15.0, ns.timeout), jobs=ns.jobs, ops=ops, exclude_ops=exclude, progress=progress,
            shrink_budget=parse_duration(ns.shrink_budget, "--shrink-budget")))



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
            from conformance.fuzz.client_campaign import client_replay_one as replay_one
            from conformance.fuzz.client_campaign import client_target

            target = client_target(ns.client_command, ns.transport, ns.url, ns.timeout, repro.target)
        else:
            from conformance.fuzz.server_campaign import replay_one, server_target

            target = server_target(ns.command, ns.url, ns.transport, repro.target)
        if target.transport.value != repro.transport:
            raise UsageError(f"{path}: recorded over {repro.transport}, the target given is {target.transport.value}")
        got = anyio.run(partial(replay_one, timeout=ns.timeout, grace=ns.grace), target, repro)
        verdict = "FAILED" if got["reproduced"] else "FIXED"
        failed += bool(got["reproduced"])
        sig = f"{repro.signature[0]} {repro.signature[1]}"
        print(f"{verdict:6} {path}: {sig} (reproduced {got['reproduced']} of {got['of']})")
        for line in got["findings"][:3]:
            print(f"         {line}")
    return EXIT_FAILED if failed else EXIT_OK
