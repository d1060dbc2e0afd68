"""``mcp-conformance``: a thin wrapper that runs the pytest plugin.

    mcp-conformance server [--command CMD | --url URL] [--transport T] [--version V ...|all]
                           [--timeout S] [--strict] [--report-dir DIR] [--select GLOB] [--exclude GLOB]
                           [--schema-dir DIR] [-v | -q]
    mcp-conformance list [--version V] [--select GLOB] [--exclude GLOB] [--json]
    mcp-conformance report REPORT.json [--out DIR] [--html] [--junit] [--badge] [--markdown] [--baseline FILE]

``report`` re-renders a report.json offline (no target, no pytest).  ``server`` and ``list`` go
through ``pytest.main`` with the plugin's option table (``conformance.options.OPTIONS``)
and collect no user test files, so the CLI and ``pytest --mcp-...`` always agree.  Without
``--command``/``--url`` the bundled reference server is the target.

Exit codes: 0 every MUST passed (and every SHOULD under ``--strict``); 1 a requirement failed (or
an error of our own); 2 usage or configuration error; 3 the target could not be started or
reached; 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
from dataclasses import replace
from typing import Any, Sequence

import pytest

from conformance import __version__
from conformance.options import OPTIONS, Option, default_target_args
from conformance.plugin.session import REPORT_KEY
from conformance.report.model import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from conformance.runtime.signals import SIGNALLED, terminate_like_interrupt

__all__ = ["main", "build_parser", "pytest_args", "terminate_like_interrupt"]

PLUGIN_NAME = "mcp_conformance"  # the pytest11 entry point name
_AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # exit code 2 with a hint, like argparse, but ours
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")
        raise SystemExit(EXIT_USAGE)


def _add(parser: argparse.ArgumentParser, opt: Option) -> None:
    assert opt.cli is not None
    kwargs: dict[str, Any] = {"dest": opt.name, "help": opt.help.replace("%", "%%")}
    if opt.kind == "flag":
        kwargs["action"] = "store_true"
    elif opt.kind == "append":
        kwargs["action"] = "append"
        kwargs["metavar"] = opt.metavar
    else:
        kwargs["metavar"] = opt.metavar
        if opt.choices:
            kwargs["choices"] = opt.choices
    parser.add_argument(opt.cli, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcp-conformance",
        description="Conformance test suite for the Model Context Protocol: graded, cited verdicts.",
        epilog="exit codes: 0 every MUST passed (every SHOULD too under --strict); 1 a requirement failed or a "
               "baseline entry is stale; 2 usage or configuration error; 3 the target could not be started or "
               "reached; 130 interrupted. report.json (and its renderings) is written on 0, 1, 3 and 130.",
    )
    parser.add_argument("-V", "--suite-version", action="version", version=f"mcp-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{server,client,list,report,fuzz,coverage}", parser_class=_Parser)
    server = sub.add_parser(
        "server",
        help="test an MCP server (default: the bundled reference server)",
        description="Run the conformance scenarios against an MCP server.",
    )
    client = sub.add_parser(
        "client",
        help="test an MCP client: the suite plays the server it talks to",
        description="Run the client scenarios: the client command is started once per scenario and version, and "
                    "the suite plays the server it connects to. stdio: {server} in the command becomes the path "
                    "of a launcher of the suite's server (e.g. --command \"fastmcp list --command {server}\"); "
                    "streamable HTTP and legacy SSE: {url} becomes the suite's URL for the run; {config} the path "
                    "of an mcp.json naming either. Without a placeholder the launcher or URL is appended as the "
                    "last argument and MCP_CONFORMANCE_SCENARIO is set, as the official runner does.",
    )
    listing = sub.add_parser("list", help="print the requirement catalogue", description="Print the requirement catalogue.")
    for opt in OPTIONS:
        if opt.cli is None:
            continue
        if "server" in opt.commands:
            _add(server, opt)
        if "client" in opt.commands:
            _add(client, opt)
        if "list" in opt.commands:
            _add(listing, opt)
    server.add_argument("--targets", metavar="FILE",
                        help="a YAML list of servers (name, command or url, transport, versions, env, cwd): each is "
                             "run as by this command, its report in <report-dir>/<name>/, and an index "
                             "(<report-dir>/index.html, index.json) shows them side by side")
    server.add_argument("--target-jobs", metavar="N", type=int, default=2,
                        help="with --targets: servers tested at once (default 2)")
    for p in (server, client):
        verbosity = p.add_mutually_exclusive_group()
        verbosity.add_argument("-v", "--verbose", action="count", default=0, help="one line per scenario (-vv: more)")
        verbosity.add_argument("-q", "--quiet", action="store_true", help="less output")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    _add_report_command(sub)
    _add_coverage_command(sub)
    sub.add_parser("fuzz", help="property-based message fuzzing with the spec as oracle (mcp-conformance fuzz --help)",
                   add_help=False)
    return parser


def _add_coverage_command(sub: Any) -> None:
    cov = sub.add_parser(
        "coverage",
        help="the coverage map: every normative sentence of the spec, per version and page, and where it stands",
        description="Show the coverage map (package data, no spec pages needed): for every version, its pages' "
                    "normative sentences (MUST, SHOULD, REQUIRED, SHALL and their NOTs) and where each stands: "
                    "checked by which requirements, not testable from outside (and why), a restatement of "
                    "another sentence, authorization (not yet in the suite), or not yet checked.",
    )
    cov.add_argument("--version", action="append", dest="versions", metavar="V",
                     help="a protocol version (repeatable; default: every version)")
    cov.add_argument("--role", metavar="R", help="server or client: only the sentences that constrain that party "
                                                 "(a sentence naming both, or neither, is shown for both)")
    cov.add_argument("--format", dest="fmt", metavar="F", default="text", help="text (default), markdown, html or json")
    cov.add_argument("--sentences", action="store_true",
                     help="text and markdown: list every sentence under its page (html and json always do)")


def _coverage_command(ns: argparse.Namespace) -> int:
    from conformance.report.coverage import FORMATS, render
    from conformance.spec import coverage

    known = coverage.versions()
    for v in ns.versions or ():
        if v not in known:
            sys.stderr.write(f"mcp-conformance coverage: error: --version {v!r} is not a version of the map "
                             f"(one of {', '.join(known)})\n")
            return EXIT_USAGE
    if ns.role is not None and ns.role not in ("server", "client"):
        sys.stderr.write(f"mcp-conformance coverage: error: --role {ns.role!r}: server or client\n")
        return EXIT_USAGE
    if ns.fmt not in FORMATS:
        sys.stderr.write(f"mcp-conformance coverage: error: --format {ns.fmt!r}: one of {', '.join(FORMATS)}\n")
        return EXIT_USAGE
    rows = coverage.select(ns.versions or None, ns.role)
    heading = "MCP spec coverage" + (f" ({ns.role} sentences)" if ns.role else "")
    sys.stdout.write(render(rows, ns.fmt, listing=ns.sentences, heading=heading))
    return 0


def _add_report_command(sub: Any) -> None:
    rep = sub.add_parser(
        "report",
        help="re-render a report.json offline (HTML, JUnit, badge, Markdown), optionally with a baseline",
        description="Render report.json into report.html, junit.xml, badge.svg + badge.json and summary.md, "
                    "offline: every rendering reads only report.json, which is checked against its schema first. "
                    "With --baseline, the baseline is applied "
                    "(replacing one applied before) and report.json is rewritten. Exits with the report's "
                    "exit code (0 pass, 1 a requirement failed or a baseline entry is stale, 3 target "
                    "unreachable), or 2 when the report cannot be read.",
    )
    rep.add_argument("report", metavar="REPORT.json", help="a report.json written by `mcp-conformance server`")
    rep.add_argument("--out", metavar="DIR", help="where to write the renderings (default: beside REPORT.json)")
    for fmt, what in (("html", "report.html: the self-contained HTML report"),
                      ("junit", "junit.xml: JUnit XML for CI test reporters"),
                      ("badge", "badge.svg and badge.json (shields.io endpoint)"),
                      ("markdown", "summary.md: a Markdown summary for a CI step summary")):
        rep.add_argument(f"--{fmt}", action="append_const", const=fmt, dest="formats",
                         help=f"write {what} (without any of these flags: all of them)")
    rep.add_argument("--baseline", metavar="FILE",
                     help="apply a baseline of expected failures (the official runner's YAML or requirement ids)")
    rep.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")


# pytest's own plugins that a run of the suite's items has no use for (no Python test modules,
# fixtures, debugger or JUnit of pytest's).  Blocked, they are neither imported nor called around
# every item; unraisableexception alone spends ~0.15 s in gc.collect() when the session ends.
_PLUGINS_NOT_NEEDED = (
    "debugging", "unittest", "legacypath", "tmpdir", "monkeypatch", "recwarn", "pastebin", "junitxml",
    "doctest", "setuponly", "setupplan", "stepwise", "unraisableexception", "threadexception", "logging",
    "faulthandler", "subtests",
)


def pytest_args(ns: argparse.Namespace, workdir: str) -> list[str]:
    """The pytest command line for a parsed ``server``/``list`` invocation."""
    args = [
        "-c", os.path.join(workdir, "pytest.ini"),  # none of the user's pytest configuration
        "--rootdir", os.getcwd(),  # node ids print as "mcp-conformance::..."
        "--noconftest",
        "-p", "no:cacheprovider",
        *(arg for name in _PLUGINS_NOT_NEEDED for arg in ("-p", f"no:{name}")),
        "-p", PLUGIN_NAME,
    ]
    if ns.command == "list":
        args += ["--mcp-list"] + (["--mcp-list-format", "json"] if ns.json else [])
    else:
        if ns.command == "client":
            pass  # --command was checked in main()
        elif not getattr(ns, "server_command", None) and not getattr(ns, "server_url", None):
            command, url = default_target_args(ns.transport or "stdio")
            ns.server_command = shlex.join(command)
            ns.server_url = url
            if ns.transport is None:
                ns.transport = "stdio"
        if ns.verbose:
            args.append("-" + "v" * ns.verbose)
        elif ns.quiet:
            args.append("-q")
        args += ["-o", "console_output_style=classic"]
    for opt in OPTIONS:
        if opt.cli is None or ns.command not in opt.commands:
            continue
        value = getattr(ns, opt.name, None)
        if value in (None, False, []):
            continue
        # "--flag=value", one token: pytest looks for its rootdir and ini file before it knows
        # plugin options, and would take a separate value that names a path for a test path
        if opt.kind == "flag":
            args.append(opt.flag)
        elif opt.kind == "append":
            args += [f"{opt.flag}={v}" for v in value]
        else:
            args.append(f"{opt.flag}={value}")
    args.append(workdir)  # an empty directory: no user test files are collected
    return args


class _Progress:
    """The run's progress: one line redrawn in place on a terminal (stderr), nothing otherwise.

    pytest's per-item letters (``..sF``) are left out at the default verbosity either way: on a
    terminal the line replaces them, and in CI logs (not a TTY, or ``CI`` set) they are noise.
    ``-v`` keeps pytest's one line per scenario."""

    _MARKS = (("passed", "✓"), ("warned", "!"), ("failed", "✗"), ("xfailed", "x"), ("skipped", "–"), ("error", "⚠"))

    def __init__(self, *, live: bool, stream: Any = None) -> None:
        self.live = live
        self.stream = stream if stream is not None else sys.stderr
        self.total = 0
        self.done = 0
        self.counts: dict[str, int] = {}
        self.shown = False

    @staticmethod
    def wanted(ns: argparse.Namespace) -> bool:
        """A live line: stdout and stderr are a terminal, not CI, default verbosity."""
        if ns.verbose or ns.quiet or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
            return False
        try:
            return sys.stdout.isatty() and sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None and session.config.get_verbosity() == 0:
            tr.showfspath = False  # no "mcp-conformance " line waiting for letters

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        res = yield
        if res is None or config.get_verbosity() != 0:
            return res
        category, letter, word = res
        if letter and category:
            self.counts[category] = self.counts.get(category, 0) + 1
        return category, "", ""

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._draw(location[2] if location and len(location) > 2 else nodeid)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.done += 1
        self._draw(location[2] if location and len(location) > 2 else nodeid)

    def _draw(self, name: str) -> None:
        if not self.live:
            return
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
        counts = " ".join(f"{m}{self.counts[c]}" for c, m in self._MARKS if self.counts.get(c))
        pct = 100 * self.done // max(self.total, 1)
        line = f"[{self.done:>{len(str(self.total))}}/{self.total}] {pct:3d}%  {counts}  {name}"
        if len(line) > width - 1:
            line = line[: max(width - 2, 10)] + "…"
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
        self.shown = True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        try:
            return (yield)
        finally:
            if self.shown:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


class _CliPlugin:
    """Keeps pytest away from user tests and hands the report back to the CLI."""

    #: how the plugin tells a run of this command (``conformance.plugin.settings``): options are then
    #: named as the command spells them
    mcp_conformance_cli = True

    def __init__(self) -> None:
        self.report: dict[str, Any] | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Any, config: pytest.Config) -> bool:
        return True

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.report = config.stash.get(REPORT_KEY, None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "fuzz":  # its own parser: conformance/fuzz/command.py
        from conformance.fuzz.command import main as fuzz_main

        return fuzz_main(args[1:])
    if not args:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    if ns.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if ns.command == "report":
        return _report_command(ns)
    if ns.command == "coverage":
        return _coverage_command(ns)
    if ns.command == "server" and getattr(ns, "targets", None):
        return _targets_command(ns, args)
    if ns.command == "client" and not (ns.client_command or "").strip():
        sys.stderr.write("mcp-conformance client: error: --command is required: the command that starts your client, "
                         "with {server} (stdio) or {url} (HTTP) where the suite's server goes, e.g.\n"
                         "  mcp-conformance client --command \"fastmcp list --command {server}\"\n")
        return EXIT_USAGE
    terminate_like_interrupt()
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-") as workdir:
        with open(os.path.join(workdir, "pytest.ini"), "w", encoding="utf-8") as f:
            f.write("[pytest]\n")
        plugin = _CliPlugin()
        plugins: list[Any] = [plugin]
        if ns.command in ("server", "client"):
            plugins.append(_Progress(live=_Progress.wanted(ns)))
        # Only our plugin: other installed pytest plugins have nothing to do with a conformance
        # run and cost start-up time (hypothesis alone ~1 s).
        saved = os.environ.get(_AUTOLOAD)
        os.environ[_AUTOLOAD] = "1"
        try:
            rc = pytest.main(pytest_args(ns, workdir), plugins=plugins)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except Exception:
            # pytest itself can fail while reporting an interrupt (Python 3.11: a KeyboardInterrupt
            # raised inside a frozen importlib frame has a traceback entry without a line number,
            # and pytest's report of it raises TypeError); the session's finish -- the partial
            # report -- has run by then, and the run ends as interrupted
            if SIGNALLED:
                return EXIT_INTERRUPTED
            raise
        finally:
            if saved is None:
                os.environ.pop(_AUTOLOAD, None)
            else:
                os.environ[_AUTOLOAD] = saved
    if SIGNALLED:  # interrupted, however pytest unwound it
        return EXIT_INTERRUPTED
    return _exit_code(int(rc), plugin.report)


def _strip(args: Sequence[str], flags: set[str]) -> list[str]:
    """``args`` without the options in ``flags`` (``--flag value`` and ``--flag=value``)."""
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in flags:
            skip = "=" not in a
            continue
        out.append(a)
    return out


def _targets_command(ns: argparse.Namespace, args: Sequence[str]) -> int:
    """``mcp-conformance server --targets FILE``: one ordinary run per target, and the index."""
    from conformance.fleet import FleetError, load_fleet, run_fleet

    if ns.server_command or ns.server_url:
        sys.stderr.write("mcp-conformance server: error: --targets names the servers; drop --command / --url (or put "
                         "that server in the targets file)\n")
        return EXIT_USAGE
    if ns.target_jobs < 1:
        sys.stderr.write(f"mcp-conformance server: error: --target-jobs must be at least 1, not {ns.target_jobs}\n")
        return EXIT_USAGE
    try:
        targets = load_fleet(ns.targets)
    except FleetError as exc:
        sys.stderr.write(f"mcp-conformance server: error: {exc}\n")
        return EXIT_USAGE
    rest = _strip(args[1:], {"--targets", "--target-jobs", "--report-dir", "--version", "--transport"})
    rest = [a for a in rest if a not in ("-q", "--quiet") and not re.fullmatch(r"-v+|--verbose", a)]
    versions = tuple(ns.version or ())
    transport = ns.transport
    targets = [replace(t, versions=t.versions or versions, transport=t.transport or transport) for t in targets]
    terminate_like_interrupt()
    rc, _ = run_fleet(targets, rest, ns.report_dir or "reports", ns.target_jobs)
    return rc


def _report_command(ns: argparse.Namespace) -> int:
    """``mcp-conformance report``: validate report.json, apply a baseline, write the renderings."""
    import json
    from pathlib import Path

    from conformance.report.render import DEFAULT_FORMATS, render, report_json

    src = Path(ns.report)
    try:
        report = json.loads(src.read_text(encoding="utf-8"))
    except OSError as exc:
        sys.stderr.write(f"mcp-conformance report: cannot read {src}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    except ValueError as exc:
        sys.stderr.write(f"mcp-conformance report: {src} is not JSON: {exc}\n")
        return EXIT_USAGE
    problems = _report_problems(report)
    if problems:
        sys.stderr.write(f"mcp-conformance report: {src} is not a valid report.json:\n" + "".join(f"  {p}\n" for p in problems))
        return EXIT_USAGE
    formats = list(dict.fromkeys(ns.formats or [f for f in DEFAULT_FORMATS if f != "json"]))
    if ns.baseline:
        from conformance.report.baseline import BaselineError, apply_baseline, parse_baseline

        try:
            baseline = parse_baseline(Path(ns.baseline).read_text(encoding="utf-8"), source=ns.baseline)
        except OSError as exc:
            sys.stderr.write(f"mcp-conformance report: --baseline {ns.baseline!r} cannot be read: {exc.strerror or exc}\n")
            return EXIT_USAGE
        except BaselineError as exc:
            sys.stderr.write(f"mcp-conformance report: --baseline: {exc}\n")
            return EXIT_USAGE
        report = apply_baseline(report, baseline, role=report.get("role") or "server")
    out = Path(ns.out) if ns.out else src.parent
    out.mkdir(parents=True, exist_ok=True)
    files = render(report, formats)
    if ns.baseline or out.resolve() != src.parent.resolve():
        files = {"report.json": report_json(report), **files}
    for name, text in files.items():
        tmp = out / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / name)
    if not ns.quiet:
        base = report.get("baseline")
        if base:
            print(f"baseline {base['source']}: {len(base['expected'])} failing as expected, {len(base['stale'])} stale, "
                  f"{len(base['unmatched'])} unmatched")
            for entry in base["stale"]:
                print(f"  stale: {entry} passes now; remove it from the baseline")
        print(f"wrote {', '.join(str(out / n) for n in files)}")
    return int(report.get("exit_code", EXIT_OK))


def _report_problems(report: Any) -> list[str]:
    """Why ``report`` does not match report.schema.json (the first few reasons).

    The schema check covers every top-level field and a sample of the results (the first 50 and
    every 50th), and every result is checked for the fields and outcome values renderers rely on:
    a full schema validation of 5,000 results takes seconds, a re-render should not."""
    import json
    from importlib import resources

    from conformance.schema.validate import import_jsonschema

    jsonschema = import_jsonschema()  # without the IRI grammar (~1 s)

    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        return ["(top): not a report.json object with a results list"]
    schema = json.loads(resources.files("conformance.report").joinpath("report.schema.json").read_text(encoding="utf-8"))
    results = report["results"]
    sample = dict(report, results=[r for i, r in enumerate(results) if i < 50 or i % 50 == 0])
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(sample), key=lambda e: list(e.absolute_path))
    problems = [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}" for e in errors[:5]]
    outcomes = set(schema["$defs"]["outcome"]["enum"])
    required = schema["$defs"]["result"]["required"]
    for i, r in enumerate(results):
        if len(problems) >= 5:
            break
        if not isinstance(r, dict):
            problems.append(f"results/{i}: not an object")
            continue
        missing = [k for k in required if k not in r]
        if missing:
            problems.append(f"results/{i}: missing {', '.join(missing)}")
        elif r["outcome"] not in outcomes:
            problems.append(f"results/{i}/outcome: {r['outcome']!r} is not one of {sorted(outcomes)}")
        elif not isinstance(r["violations"], list) or not isinstance(r["transcript"], list):
            problems.append(f"results/{i}: violations and transcript must be lists")
    return problems


def _exit_code(rc: int, report: dict[str, Any] | None) -> int:
    if rc == pytest.ExitCode.USAGE_ERROR:
        return EXIT_USAGE
    if rc == pytest.ExitCode.INTERRUPTED:
        return EXIT_INTERRUPTED
    if report is not None:
        return int(report["exit_code"])
    if rc == pytest.ExitCode.OK:
        return EXIT_OK
    return EXIT_FAILED


def entry() -> None:
    """The console script (and ``python -m conformance.cli``): :func:`main`, then the process ends
    without interpreter finalisation, which takes 0.15-0.3 s after a run (every object of the run
    torn down one by one) for nothing: by then the reports are written and closed, the processes
    we started stopped and the sockets closed.  atexit handlers still run, the output is flushed.
    An exception out of :func:`main` ends the process the usual way (traceback, exit 1) -- but a
    reader that went away (``mcp-conformance list | head``) ends it quietly with 141, as SIGPIPE
    would end a command that does not catch it."""
    try:
        rc = main()
    except BrokenPipeError:
        try:  # nothing more reaches the reader: later writes and the final flush go nowhere
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        rc = 128 + 13
    try:
        import atexit

        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(rc)


if __name__ == "__main__":  # pragma: no cover
    entry()
