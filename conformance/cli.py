"""``mcp-conformance``: a thin wrapper that runs the pytest plugin.

    mcp-conformance server [--command CMD | --url URL] [--transport T] [--version V ...|all]
                           [--timeout S] [--strict] [--report-dir DIR] [--select GLOB] [--exclude GLOB]
                           [--schema-dir DIR] [-v | -q]
    mcp-conformance list [--version V] [--select GLOB] [--exclude GLOB] [--json]

Both go through ``pytest.main`` with the plugin's option table (``conformance.pytest_plugin.OPTIONS``)
and collect no user test files, so the CLI and ``pytest --mcp-...`` always agree.  Without
``--command``/``--url`` the bundled reference server is the target.

Exit codes: 0 every MUST passed (and every SHOULD under ``--strict``); 1 a requirement failed (or
an error of our own); 2 usage or configuration error; 3 the target could not be started or
reached; 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from typing import Any, Sequence

import pytest

from conformance import __version__
from conformance.pytest_plugin import OPTIONS, REPORT_KEY, Option, default_target_args
from conformance.report.model import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

__all__ = ["main", "build_parser", "pytest_args"]

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
        epilog="exit codes: 0 pass, 1 a requirement failed, 2 usage error, 3 target unreachable, 130 interrupted",
    )
    parser.add_argument("-V", "--suite-version", action="version", version=f"mcp-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{server,list}", parser_class=_Parser)
    server = sub.add_parser(
        "server",
        help="test an MCP server (default: the bundled reference server)",
        description="Run the conformance scenarios against an MCP server.",
    )
    listing = sub.add_parser("list", help="print the requirement catalogue", description="Print the requirement catalogue.")
    for opt in OPTIONS:
        if opt.cli is None:
            continue
        if "server" in opt.commands:
            _add(server, opt)
        if "list" in opt.commands:
            _add(listing, opt)
    verbosity = server.add_mutually_exclusive_group()
    verbosity.add_argument("-v", "--verbose", action="count", default=0, help="one line per scenario (-vv: more)")
    verbosity.add_argument("-q", "--quiet", action="store_true", help="less output")
    listing.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def pytest_args(ns: argparse.Namespace, workdir: str) -> list[str]:
    """The pytest command line for a parsed ``server``/``list`` invocation."""
    args = [
        "-c", os.path.join(workdir, "pytest.ini"),  # none of the user's pytest configuration
        "--rootdir", os.getcwd(),  # node ids print as "mcp-conformance::..."
        "--noconftest",
        "-p", "no:cacheprovider",
        "-p", PLUGIN_NAME,
    ]
    if ns.command == "list":
        args += ["--mcp-list"] + (["--mcp-list-format", "json"] if ns.json else [])
    else:
        if not getattr(ns, "server_command", None) and not getattr(ns, "server_url", None):
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


class _CliPlugin:
    """Keeps pytest away from user tests and hands the report back to the CLI."""

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
    _terminate_like_interrupt()
    with tempfile.TemporaryDirectory(prefix="mcp-conformance-") as workdir:
        with open(os.path.join(workdir, "pytest.ini"), "w", encoding="utf-8") as f:
            f.write("[pytest]\n")
        plugin = _CliPlugin()
        # Only our plugin: other installed pytest plugins have nothing to do with a conformance
        # run and cost start-up time (hypothesis alone ~1 s).
        saved = os.environ.get(_AUTOLOAD)
        os.environ[_AUTOLOAD] = "1"
        try:
            rc = pytest.main(pytest_args(ns, workdir), plugins=[plugin])
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        finally:
            if saved is None:
                os.environ.pop(_AUTOLOAD, None)
            else:
                os.environ[_AUTOLOAD] = saved
    return _exit_code(int(rc), plugin.report)


def _terminate_like_interrupt() -> None:
    """SIGTERM ends a run the way Ctrl-C does: connections closed, processes stopped, partial
    report written (only from the main thread, and not when SIGTERM is ignored)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
