"""The pytest plugin: options, collection of scenarios as items, grading, report.json.

Loaded through the ``pytest11`` entry point.  Inactive unless a target is given
(``--mcp-server-command`` / ``--mcp-server-url`` or their ini keys) or ``--mcp-list`` is used.

Items are scenario x version x transport, added in ``pytest_collection_modifyitems`` (before
``-k``/``-m`` deselection).  An item runs its scenario in the *setup* phase, so trouble of our own
or a target we cannot start or reach is reported by pytest as an ``error``; the *call* phase
reports the graded verdict: a failed requirement fails the item, an item whose requirements were
all skipped is skipped with the reason, warnings (SHOULD violations outside ``--mcp-strict``)
pass and are listed in the terminal summary and in ``report.json``.

Scenarios are async; they run in one event loop kept in a background thread for the whole session
(an anyio blocking portal), so the shared session of a version survives from item to item.
``report.json`` is written at session end, also when the run is interrupted.

Give option values that name an existing path as one token (``--mcp-report-dir=out``): pytest
finds its rootdir and ini file before plugin options are known, and would otherwise take the
separate value for a test path.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import urlsplit

import pytest

from conformance import __version__
from conformance.outcomes import Outcome
from conformance.registry import Scenario, scenarios
from conformance.runtime.signals import SIGNALLED  # (set by the CLI's handlers: runtime/signals.py)
from conformance.report.model import build_report
from conformance.spec.requirements import catalogue
from conformance.spec.requirements import select as select_requirements
from conformance.spec.versions import VERSIONS, Transport, UnknownVersionError, parse_versions

__all__ = [
    "Option",
    "OPTIONS",
    "McpItem",
    "RUN_KEY",
    "REPORT_KEY",
    "get_option",
    "build_target",
    "default_target_args",
]

GROUP = "mcp-conformance"
DEFAULT_TIMEOUT = 10.0
DEFAULT_REPORT_DIR = "reports"


# ------------------------------------------------------------------------------------------------
# the fuzzer's pytest side (--mcp-fuzz): its own options and items, conformance/fuzz/pytest_fuzz.py
pytest_plugins = ("conformance.fuzz.pytest_fuzz", "conformance.pytest_targets")


# the option table, shared with the CLI


@dataclass(frozen=True)
class Option:
    """One option: pytest flag, ini key and CLI flag share the same meaning and parsing."""

    name: str  # dest, and the ini key with "mcp_" prefix
    flag: str  # pytest flag
    cli: str | None  # mcp-conformance flag (None: pytest only)
    help: str
    kind: str = "str"  # "str" | "float" | "flag" | "append"
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    default: Any = None
    ini: bool = True
    commands: tuple[str, ...] = ("server",)  # CLI subcommands that take it

    @property
    def dest(self) -> str:
        return f"mcp_{self.name}"

    @property
    def ini_type(self) -> str:
        return {"flag": "bool", "append": "args"}.get(self.kind, "string")


OPTIONS: tuple[Option, ...] = (
    Option("server_command", "--mcp-server-command", "--command",
           "command that starts the server under test (one string, split like a shell; "
           "{port} is replaced by a free port for HTTP servers)", metavar="CMD"),
    Option("server_url", "--mcp-server-url", "--url",
           "URL of the MCP endpoint (streamable HTTP, e.g. http://127.0.0.1:8000/mcp) or of the "
           "legacy SSE endpoint (/sse)", metavar="URL"),
    Option("client_command", "--mcp-client-command", "--command",
           "command that starts the client under test (run with sh -c): {server} becomes the path of a launcher "
           "that starts the suite's scenario server (stdio), {url} its URL (streamable HTTP, legacy SSE), {config} an "
           "mcp.json naming either; without a placeholder the launcher or URL is appended as the last argument",
           metavar="CMD", commands=("client",)),
    Option("call_command", "--mcp-client-call-command", "--call-command",
           "command that makes the client call a tool ({tool}, {tool_args_json}, {tool_args_kv} and the placeholders "
           "of the client command); without it the requirements that need a tool call are 'not exercised' skips",
           metavar="CMD", commands=("client",)),
    Option("client_timeout", "--mcp-client-timeout", "--client-timeout",
           "seconds one run of the client may take before the suite ends it (default 30)", kind="float",
           metavar="SECONDS", commands=("client",)),
    Option("stall_timeout", "--mcp-stall-timeout", "--stall-timeout",
           "seconds a request the suite never answers is left waiting for the client to give up on it (the "
           "timeout scenarios; default 75: longer than the SDKs' default request timeouts)", kind="float",
           metavar="SECONDS", commands=("client",)),
    Option("transport", "--mcp-transport", "--transport",
           "transport: stdio (default with a command), streamable-http (default with a URL) or sse",
           choices=tuple(t.value for t in Transport), metavar="TRANSPORT", commands=("server", "client")),
    Option("version", "--mcp-version", "--version",
           f"protocol version to test, repeatable or comma-separated, or 'all' "
           f"({', '.join(VERSIONS)}; default 2025-11-25)", kind="append", metavar="VERSION",
           commands=("server", "client", "list")),
    Option("timeout", "--mcp-timeout", "--timeout",
           f"seconds to wait for each expected answer (default {DEFAULT_TIMEOUT:g})", kind="float",
           metavar="SECONDS", commands=("server", "client")),
    Option("run_timeout", "--mcp-run-timeout", "--run-timeout",
           "seconds the whole run may take; items still running then are stopped and the rest are not run "
           "(error, kind deadline) (default: 60 + timeout x (2 x versions + scenarios run / 4))",
           kind="float", metavar="SECONDS", commands=("server", "client")),
    Option("jobs", "--mcp-jobs", "--jobs",
           "how much runs at once (default: 8 on stdio, 16 over HTTP; on one core 3 and 4; client runs 4, 3 on one core): N-1 versions side by side, each running its "
           "scenarios in order on its own session, and up to N-1 scenarios on connections of their own -- a "
           "process on stdio, a session over HTTP -- beside them; --jobs 1 runs everything strictly one after "
           "the other, and every concurrent run gives the same verdicts",
           metavar="N", commands=("server", "client")),
    Option("strict", "--mcp-strict", "--strict",
           "grade SHOULD violations as failures", kind="flag", commands=("server", "client")),
    Option("report_dir", "--mcp-report-dir", "--report-dir",
           f"directory for report.json and its renderings (default {DEFAULT_REPORT_DIR}/)", metavar="DIR", commands=("server", "client")),
    Option("report_format", "--mcp-report-format", "--report-format",
           "what to write besides report.json: html (report.html), junit (junit.xml), badge (badge.svg, "
           "badge.json), markdown (summary.md), all (default) or none; repeatable or comma-separated",
           kind="append", metavar="FORMAT", commands=("server", "client")),
    Option("baseline", "--mcp-baseline", "--baseline",
           "file of expected failures: the official runner's YAML (server:/client: lists of scenario ids) or "
           "requirement ids (YAML list or one per line); listed and failing -> xfail, listed and passing -> "
           "stale, which fails the run", metavar="FILE", commands=("server", "client")),
    Option("select", "--mcp-select", "--select",
           "only requirements whose id (or official alias) matches this glob; repeatable",
           kind="append", metavar="GLOB", commands=("server", "client", "list")),
    Option("exclude", "--mcp-exclude", "--exclude",
           "skip requirements whose id (or official alias) matches this glob; repeatable",
           kind="append", metavar="GLOB", commands=("server", "client", "list")),
    Option("schema_dir", "--mcp-schema-dir", "--schema-dir",
           "directory with the official schemas (<dir>/<version>/schema.json); default "
           "$MCP_CONFORMANCE_SCHEMA_DIR, the user cache, or a verified download", metavar="DIR", commands=("server", "client")),
    Option("auth", "--mcp-auth", "--auth",
           "the server requires OAuth authorization and is told to trust the suite's authorization server (started "
           "for the run): {issuer}, {jwks_url} and {resource} in the command become its issuer URL, its JWKS URL "
           "and the MCP endpoint's URL; MCP_CONFORMANCE_AUTH_SERVER_URL is set to the issuer. For a client: run the "
           "authorization scenarios (the suite's server requires OAuth; $BROWSER is a headless one)", kind="flag",
           commands=("server", "client")),
    Option("auth_token", "--mcp-auth-token", "--auth-token",
           "the server requires OAuth authorization from an authorization server of its own: a valid access "
           "token for it (checks that need tokens of the suite's making skip)", metavar="TOKEN"),
    Option("auth_token_command", "--mcp-auth-token-command", "--auth-token-command",
           "like --auth-token, the token printed by this command (run once)", metavar="CMD"),
    Option("role", "--mcp-role", "--role",
           "whose requirements to list: server (default) or client", choices=("server", "client"),
           metavar="ROLE", commands=("list",)),
    Option("list", "--mcp-list", None,
           "print the requirement catalogue (filtered by --mcp-version/--mcp-select/--mcp-exclude) and exit",
           kind="flag", ini=False, commands=()),
    Option("list_format", "--mcp-list-format", None, "catalogue format for --mcp-list: text or json",
           choices=("text", "json"), ini=False, commands=()),
)
_BY_NAME = {o.name: o for o in OPTIONS}


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from conformance import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "MCP conformance suite (mcp-conformance)")
    for opt in OPTIONS:
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": opt.help, "default": None}
        if opt.kind == "flag":
            kwargs["action"] = "store_true"
        elif opt.kind == "append":
            kwargs["action"] = "append"
            kwargs["metavar"] = opt.metavar
        else:
            kwargs["metavar"] = opt.metavar
            if opt.choices:
                kwargs["choices"] = opt.choices
        group.addoption(opt.flag, **kwargs)
        if opt.ini:
            parser.addini(opt.dest, f"{opt.help} (ini mirror of {opt.flag})", type=opt.ini_type)  # type: ignore[arg-type]


def get_option(config: pytest.Config, name: str) -> Any:
    """The command-line value, else the ini value, else the default (None / [] / False)."""
    opt = _BY_NAME[name]
    value = config.getoption(opt.dest)
    if value not in (None, [], ""):
        return value
    if opt.ini:
        ini = config.getini(opt.dest)
        if opt.kind == "flag":
            return bool(ini)
        if opt.kind == "append":
            return list(ini) if ini else []
        if isinstance(ini, str) and ini.strip():
            return ini.strip()
    if opt.kind == "flag":
        return False
    if opt.kind == "append":
        return []
    return opt.default


# ------------------------------------------------------------------------------------------------
# configuration -> target


def default_target_args(transport: str = "stdio", python: str | None = None) -> tuple[list[str], str | None]:
    """The bundled reference server as (command argv, url) for ``transport``."""
    py = python or sys.executable
    if transport == Transport.STDIO.value:
        return [py, "-m", "reference_server", "--transport", "stdio"], None
    path = "/sse" if transport == Transport.SSE.value else "/mcp"
    return [py, "-m", "reference_server", "--transport", transport, "--port", "{port}"], f"http://127.0.0.1:{{port}}{path}"


def build_target(
    *,
    command: str | Sequence[str] | None,
    url: str | None,
    transport: str | None,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | None = None,
    default: bool = False,
) -> Any:
    """Validate the target options (a :class:`conformance.connect.Target`); raise
    pytest.UsageError naming what is wrong and the fix."""
    # I/O modules (anyio...) are imported lazily: the plugin is loaded into every pytest run
    from conformance.connect import Target, parse_command

    argv = parse_command(command)
    url = (url or "").strip() or None
    if transport:
        try:
            kind = Transport(transport)
        except ValueError:
            raise pytest.UsageError(
                f"unknown transport {transport!r}; use one of {', '.join(t.value for t in Transport)}"
            ) from None
    else:  # a URL, or a command taking {port}, means an HTTP server
        kind = Transport.STREAMABLE_HTTP if url or (argv and any("{port}" in a for a in argv)) else Transport.STDIO
    if kind is Transport.STDIO:
        if url:
            raise pytest.UsageError(
                "--mcp-server-url is for HTTP transports; for stdio give only --mcp-server-command "
                "(or add --mcp-transport streamable-http / sse)"
            )
        if not argv:
            raise pytest.UsageError("the stdio transport needs --mcp-server-command (the command that starts the server)")
    else:
        if not url:
            if argv and any("{port}" in a for a in argv):
                url = "http://127.0.0.1:{port}" + ("/sse" if kind is Transport.SSE else "/mcp")
            else:
                raise pytest.UsageError(
                    f"the {kind.value} transport needs --mcp-server-url (e.g. http://127.0.0.1:8000/mcp), "
                    "or a --mcp-server-command that uses {port}"
                )
        parts = urlsplit(url.replace("{port}", "1"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise pytest.UsageError(f"--mcp-server-url {url!r} is not an http:// or https:// URL")
        try:
            parts.port
        except ValueError:
            raise pytest.UsageError(f"--mcp-server-url {url!r} has an invalid port") from None
    return Target(
        transport=kind,
        command=argv,
        url=url,
        cwd=cwd,
        startup_timeout=max(5.0, timeout),
        default=default,
    )


def build_client_target(*, command: str, transport: str | None, timeout: float = DEFAULT_TIMEOUT,
                        call_command: str | None = None, run_budget: float | None = None,
                        stall_budget: float | None = None, auth: bool = False) -> Any:
    """Validate the client options (a :class:`conformance.client.target.ClientTarget`); a mistake is
    a usage error."""
    from conformance.client.target import ClientTargetError, client_target

    try:
        return client_target(command=command, transport=transport, timeout=timeout, call_command=call_command,
                             run_budget=run_budget, stall_budget=stall_budget, auth=auth)
    except ClientTargetError as exc:
        raise pytest.UsageError(str(exc)) from None


@dataclass
class _Settings:
    target: Any  # conformance.connect.Target | ClientTarget | None
    versions: tuple[str, ...]
    timeout: float
    run_timeout: float | None  # None: derived from the timeout and the plan
    jobs: int | None  # None: the role's default (conformance.server.role.default_jobs(transport))
    strict: bool
    report_dir: Path
    select: list[str]
    exclude: list[str]
    selected: list[str]  # requirement ids after select/exclude
    schema_dir: str | None
    formats: tuple[str, ...] = ()  # report formats besides report.json (conformance.report.render)
    baseline: Any = None  # conformance.report.baseline.Baseline | None
    role: str = "server"  # whose requirements: "server" (we are the client) or "client"


def _versions(values: Iterable[str]) -> tuple[str, ...]:
    try:
        return parse_versions(list(values))
    except UnknownVersionError as exc:
        raise pytest.UsageError(str(exc)) from None


def _selection(select: list[str], exclude: list[str], role: str = "server") -> list[str]:
    reqs = {rid: r for rid, r in catalogue().items() if r.role == role}
    names = {rid: [rid, *r.aliases] for rid, r in reqs.items()}
    import fnmatch

    for flag, globs in (("--mcp-select", select), ("--mcp-exclude", exclude)):
        for g in globs:
            if not any(fnmatch.fnmatchcase(n, g) for ns in names.values() for n in ns):
                raise pytest.UsageError(
                    f"{flag} {g!r} matches no {role} requirement id; list them with `mcp-conformance list"
                    f"{' --role client' if role == 'client' else ''}` (globs: * and ?, e.g. "
                    f"'{'client.lifecycle' if role == 'client' else 'lifecycle'}.*')"
                )
    return select_requirements(list(reqs), select, exclude)


def _from_cli(config: pytest.Config) -> bool:
    """Is this run the ``mcp-conformance`` command's (its plugin is registered)?"""
    return any(getattr(p, "mcp_conformance_cli", False) is True for p in config.pluginmanager.get_plugins())


def _number(config: pytest.Config, name: str, what: str, kind: Any, ok: Any, rule: str) -> Any:
    """Option ``name`` parsed with ``kind`` (None when not given); a usage error naming the flag
    when it is not ``what`` or breaks ``rule``."""
    raw = get_option(config, name)
    if raw in (None, ""):
        return None
    opt = _BY_NAME[name]
    # named as typed: from pytest its flag, from mcp-conformance (which passes it on) both
    flag = opt.flag if not opt.cli or not _from_cli(config) else f"{opt.cli} ({opt.flag})"
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{flag} {raw!r} is not {what}") from None
    if not ok(value):
        raise pytest.UsageError(f"{flag} must be {rule}, not {raw!r}")
    return value


def _settings(config: pytest.Config) -> _Settings:
    timeout = _number(config, "timeout", "a number of seconds", float, lambda v: v > 0, "positive")
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    jobs = _number(config, "jobs", "a whole number", int, lambda v: v >= 1, "at least 1")
    run_timeout = _number(config, "run_timeout", "a number of seconds", float, lambda v: v > 0, "positive")
    versions = _versions(get_option(config, "version"))
    select = list(get_option(config, "select"))
    exclude = list(get_option(config, "exclude"))
    command = get_option(config, "server_command")
    url = get_option(config, "server_url")
    client_command = (get_option(config, "client_command") or "").strip() or None
    transport = get_option(config, "transport")
    if client_command and (command or url):
        raise pytest.UsageError(
            "--mcp-client-command tests a client, --mcp-server-command/--mcp-server-url a server: give one of them"
        )
    role = "client" if client_command else (get_option(config, "role") or "server")
    selected = _selection(select, exclude, role)
    target = None
    if client_command:
        target = build_client_target(
            command=client_command, transport=transport, timeout=timeout,
            call_command=get_option(config, "call_command"),
            run_budget=_number(config, "client_timeout", "a number of seconds", float, lambda v: v > 0, "positive"),
            stall_budget=_number(config, "stall_timeout", "a number of seconds", float, lambda v: v > 0, "positive"),
            auth=bool(get_option(config, "auth")),
        )
    elif command or url:
        target = build_target(command=command, url=url, transport=transport, timeout=timeout, cwd=None)
        target = _with_auth(config, target)
    elif transport and not get_option(config, "list"):
        raise pytest.UsageError("--mcp-transport needs a target: --mcp-server-command, --mcp-server-url or "
                                "--mcp-client-command")
    return _Settings(
        target=target,
        versions=versions,
        timeout=timeout,
        run_timeout=run_timeout,
        jobs=jobs,
        strict=bool(get_option(config, "strict")),
        report_dir=report_dir(config),
        select=select,
        exclude=exclude,
        selected=selected,
        schema_dir=get_option(config, "schema_dir"),
        formats=_formats(get_option(config, "report_format")),
        baseline=_baseline(get_option(config, "baseline"), Path(config.invocation_params.dir)),
        role=role,
    )


def _with_auth(config: pytest.Config, target: Any) -> Any:
    """The target with the run's authorization (conformance.auth.context), ended with the session."""
    auth, token, command = get_option(config, "auth"), get_option(config, "auth_token"), get_option(config, "auth_token_command")
    if not (auth or token or command):
        return target
    from conformance.auth.context import AuthSetupError, attach

    try:
        target, close = attach(target, auth=bool(auth), token=token, token_command=command)
    except AuthSetupError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.add_cleanup(close)
    return target


def report_dir(config: pytest.Config) -> Path:
    """``--mcp-report-dir`` (default reports/), relative to where pytest was invoked."""
    path = Path(get_option(config, "report_dir") or DEFAULT_REPORT_DIR)
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path


def _refuse_xdist(config: pytest.Config) -> None:
    """A run against one target is one event loop with shared sessions and one report: spread
    over pytest-xdist workers it would be split, each worker holding part of the plan (it used to
    stop at 83 % and never finish).  Refused, with what to do instead.  Judged by this session's
    own configuration only: a run started from inside an xdist worker (a test that runs
    ``mcp-conformance``, or pytester) inherits PYTEST_XDIST_WORKER but is a session of its own."""
    workers = getattr(config.option, "numprocesses", None)
    dist = getattr(config.option, "dist", "no")
    if hasattr(config, "workerinput") or (workers not in (None, 0, "0")) or dist not in (None, "no"):
        raise pytest.UsageError(
            "mcp-conformance runs one target's scenarios in one process (shared sessions, one report) and "
            "does not run under pytest-xdist: drop -n/--numprocesses (or pass -n 0). The suite already "
            "overlaps its waits; to test several servers at once, list them in a file and run "
            "`pytest -n N --mcp-targets FILE` (one item per server, spread over the workers)."
        )


def _formats(values: list[str]) -> tuple[str, ...]:
    from conformance.report.render import parse_formats

    try:
        return parse_formats(values)
    except ValueError as exc:
        raise pytest.UsageError(f"--mcp-report-format: {exc}") from None


def _baseline(value: str | None, base: Path) -> Any:
    if not value:
        return None
    from conformance.report.baseline import BaselineError, parse_baseline

    path = Path(value)
    if not path.is_absolute():
        path = base / path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--mcp-baseline {value!r} cannot be read: {exc.strerror or exc}") from None
    try:
        return parse_baseline(text, source=str(value))
    except BaselineError as exc:
        raise pytest.UsageError(f"--mcp-baseline: {exc}") from None


# ------------------------------------------------------------------------------------------------
# state


RUN_KEY = pytest.StashKey["_Run"]()
REPORT_KEY = pytest.StashKey[dict]()
SETTINGS_KEY = pytest.StashKey[_Settings]()


class _Run:
    """The session's run: settings, the event loop thread (portal), the runner, item results."""

    def __init__(self, config: pytest.Config, settings: _Settings) -> None:
        self.config = config
        self.settings = settings
        assert settings.target is not None
        self.target = settings.target.resolve()
        self.started = time.time()
        self.finished: float | None = None
        self.scenarios: list[Scenario] = []
        self.items: list[tuple[Scenario, str]] = []  # what will run, in order (after deselection)
        self._portal_cm: Any = None
        self.portal: Any = None
        self.runner: Any = None
        self.planned = False
        self.item_results: list[Any] = []
        self.renderers_prepared = False
        self._ready: dict[tuple[str, str], tuple[str, Any]] = {}  # item -> its result, collected ahead
        self._position: dict[tuple[str, str], int] = {}  # item -> its index in self.items
        self.closed = False
        self.interrupted = False
        self.setup_error: str | None = None

    # The event loop starts when pytest_configure is done (prewarm: the target's first session
    # comes up while pytest collects) or with the first item; collect-only starts nothing.
    def _start_loop(self) -> None:
        from anyio.from_thread import start_blocking_portal

        self.started_monotonic = time.monotonic()
        self._portal_cm = start_blocking_portal("asyncio")
        self.portal = self._portal_cm.__enter__()
        runner = _new_run(
            self.settings.role,
            self.target,
            versions=self.settings.versions,
            timeout=self.settings.timeout,
            strict=self.settings.strict,
            selected=self.settings.selected,
            # --jobs 1 (or MCP_CONFORMANCE_SEQUENTIAL=1): no item starts before the previous one finished
            jobs=1 if os.environ.get("MCP_CONFORMANCE_SEQUENTIAL", "") not in ("", "0") else self.settings.jobs,
        )
        self.portal.start_task(runner.start)
        self.runner = runner

    def prewarm(self) -> None:
        """Start the run now and open the versions' shared sessions in the background, side by
        side: a target that does not answer a handshake costs one timeout, not one per version.
        Called while pytest collects (every version), or once the items are known (planned: only
        the versions whose items use the shared session)."""
        if self.runner is None and not self.closed:
            self._start_loop()
            if self.items:
                self.ensure_started()
            self.portal.call(self._prewarm_all)

    def _prewarm_all(self) -> None:  # in the event loop's thread
        if self.settings.role == "client":
            return  # a client run starts with its first item: nothing to open ahead
        for version in self.settings.versions:
            if not self.planned or self.runner.role.needs_shared(version):
                self.runner.role.prewarm(version)

    def ensure_started(self) -> None:
        if self.runner is None:
            self._start_loop()
        if not self.planned:
            self.planned = True
            self.portal.call(self._plan)

    def _plan(self) -> None:  # in the event loop's thread
        self._position = {(sc.id, v): i for i, (sc, v) in enumerate(self.items)}
        self.runner.plan(self.scenarios)
        self.runner.schedule(self.items)
        bound = self.settings.run_timeout or self.runner.default_run_timeout(
            self.settings.timeout, len(self.settings.versions), len(self.items))
        self.runner.set_run_timeout(bound, started=self.started_monotonic)

    def run(self, sc: Scenario, version: str) -> Any:
        self.ensure_started()
        key = (sc.id, version)
        ready = self._ready.pop(key, None)
        if ready is not None:  # collected with an earlier item's (see _run_in_order)
            outcome, value = ready
            if outcome == "raised":
                raise value
            self.item_results.append(value)
            return value
        fut = self.portal.start_task_soon(self._run_in_order, sc, version)
        try:
            while not fut.done():
                if not concurrent.futures.wait([fut], timeout=0.25).done:
                    self._prepare_renderers()
                if SIGNALLED:
                    # an interrupt whose KeyboardInterrupt never reached us: the signal handler
                    # raised it inside something that swallows exceptions (a weakref callback of
                    # an import lock, a __del__) -- the run ends as interrupted all the same
                    raise KeyboardInterrupt(f"signal {SIGNALLED[-1]}")
            result = fut.result()
        except BaseException:
            fut.cancel()
            raise
        self.item_results.append(result)
        return result

    async def _run_in_order(self, sc: Scenario, version: str) -> Any:  # in the event loop's thread
        """``sc`` on ``version``, then -- one handoff between pytest's thread and the event loop
        instead of one per item -- the items that follow it in run order and already finished
        ahead (lanes and detached items), applied in that order as :meth:`Run.run_item` would
        when pytest reaches each of them (:attr:`_ready`)."""
        result = await self.runner.run_item(sc, version)
        pos = self._position.get((sc.id, version))
        if pos is not None:
            for nsc, nversion in self.items[pos + 1:]:
                if not self.runner.finished_ahead(nsc, nversion):
                    break
                try:
                    self._ready[(nsc.id, nversion)] = ("result", await self.runner.run_item(nsc, nversion))
                except Exception as exc:  # raised when pytest reaches that item
                    self._ready[(nsc.id, nversion)] = ("raised", exc)
                    break
        return result

    def _prepare_renderers(self) -> None:
        """The first time an item is still running after a quarter of a second (the run waits on
        the target): the renderers' imports and the HTML templates' compilation (~60 ms of CPU)
        in the background, so that writing the reports at the end does not wait for them.  Not
        at start-up, where it would compete with pytest's collection and the sessions' start."""
        if self.renderers_prepared or not any(f != "json" for f in self.settings.formats):
            return
        self.renderers_prepared = True
        threading.Thread(target=_prepare_renderers_quietly, args=(self.settings.formats,), daemon=True,
                         name="mcp-conformance-renderers").start()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.portal is not None:
                try:
                    self.portal.call(self.runner.aclose)
                finally:
                    self._portal_cm.__exit__(None, None, None)
        finally:
            from conformance.connect import kill_children

            self.portal = None
            kill_children()
            self.finished = time.time()

    def report(self, *, status: str) -> dict[str, Any]:
        from conformance.report.model import RequirementResult

        reqs = catalogue()
        results: list[RequirementResult]
        if self.runner is not None and self.planned:
            results = list(self.runner.results.values())
            errors = list(self.runner.errors)
            implementation = self.runner.implementation()
        elif self.runner is not None:  # started early, but no item ran
            results, errors, implementation = self._planned(), list(self.runner.errors), self.runner.implementation()
        else:
            results, errors, implementation = self._planned(), [], {}
        if self.setup_error:
            errors.append({"scenario": None, "version": None, "transport": self.target.transport.value,
                           "kind": "harness", "message": self.setup_error, "hint": None})
        warnings = []
        if results and all(r.outcome is Outcome.SKIP for r in results) and status == "complete":
            warnings.append("no requirement was checked: every selected requirement was skipped (see the reasons)")
        rep = build_report(
            role=self.settings.role,
            suite_version=__version__,
            started=self.started,
            finished=self.finished or time.time(),
            status=status,
            target=self.target.to_json(),
            transport=self.target.transport.value,
            versions=self.settings.versions,
            strict=self.settings.strict,
            selection={"select": self.settings.select, "exclude": self.settings.exclude},
            results=results,
            requirements=reqs,
            implementation=implementation,
            errors=errors,
            warnings=warnings,
        )
        return rep

    def _planned(self) -> list[Any]:
        runner = _new_run(self.settings.role, self.target, versions=self.settings.versions, selected=self.settings.selected)
        runner.plan(self.scenarios)
        return list(runner.results.values())


def _new_run(role: str, target: Any, **options: Any) -> Any:
    """The run of ``role`` ("server" or "client") against ``target``."""
    if role == "client":
        from conformance.client.role import client_run

        return client_run(target, **options)
    from conformance.server.role import server_run

    return server_run(target, **options)


# ------------------------------------------------------------------------------------------------
# hooks


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_scenario(id, version, transport, requirements): an mcp-conformance scenario item",
    )
    if getattr(config.option, "help", False):
        return
    command = get_option(config, "server_command")
    url = get_option(config, "server_url")
    listing = bool(get_option(config, "list"))
    if not (command or url or listing or get_option(config, "transport") or get_option(config, "client_command")):
        return
    settings = _settings(config)
    config.stash[SETTINGS_KEY] = settings
    if settings.schema_dir:
        from conformance.schema import loader

        previous = loader.configuration()
        config.add_cleanup(lambda: loader.configure(previous[0], allow_download=previous[1]))
        loader.configure(settings.schema_dir)
    if settings.target is None:
        return
    _refuse_xdist(config)
    _check_schemas(settings)
    run = config.stash[RUN_KEY] = _Run(config, settings)
    if not config.option.collectonly and not _narrowed(config):
        run.prewarm()  # else once pytest has chosen the items (pytest_collection_finish)
    if config.pluginmanager.hasplugin("html") and getattr(config.option, "htmlpath", None):
        config.pluginmanager.register(_PytestHtml(), "mcp-conformance-pytest-html")


def _narrowed(config: pytest.Config) -> bool:
    """Whether pytest itself may leave some of our items out (``-k``, ``-m``, ``--deselect``, node
    ids, ``--lf``): then nothing is started before the items are known, so that a run of one item
    starts what that item needs, not every version's session."""
    opt = config.option
    if getattr(opt, "keyword", "") or getattr(opt, "markexpr", "") or getattr(opt, "deselect", None):
        return True
    if getattr(opt, "lf", False):
        return True
    return any("::" in str(arg) for arg in config.args)


def _check_schemas(settings: _Settings) -> None:
    from conformance.schema.loader import SchemaError, load_schema

    for v in settings.versions:
        try:
            load_schema(v)
        except SchemaError as exc:
            raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    if not config.getoption("mcp_list", default=None):
        return None
    try:
        settings = _settings(config)
    except pytest.UsageError as exc:
        sys.stderr.write(f"ERROR: {exc}\n")
        return int(pytest.ExitCode.USAGE_ERROR)
    rows = []
    for rid in settings.selected:  # the --mcp-role requirements only
        req = catalogue()[rid]
        if not any(v in req.versions for v in settings.versions):
            continue
        rows.append(req.to_json())
    fmt = config.getoption("mcp_list_format") or "text"
    out = sys.stdout
    if fmt == "json":
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    else:
        for r in rows:
            vs = r["versions"]
            span = vs[0] if len(vs) == 1 else f"{vs[0]}..{vs[-1]}"
            alias = f"  (alias: {', '.join(r['aliases'])})" if r["aliases"] else ""
            out.write(f"{r['id']}  {r['level']}  {span}{alias}\n    {r['url']}\n    \"{r['quote']}\"\n")
        out.write(f"{len(rows)} requirement(s) for {', '.join(settings.versions)}\n")
    out.flush()
    return 0


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        return
    selected = set(run.settings.selected)
    run.scenarios = [s for s in scenarios(run.settings.role) if any(r in selected for r in s.requirements)]
    if not run.scenarios:
        raise pytest.UsageError(
            "the selected requirements are not checked by any scenario; widen --mcp-select / --mcp-exclude"
        )
    suite = McpSuite.from_parent(session, name=GROUP, nodeid=GROUP)
    new: list[pytest.Item] = []
    reqs = catalogue()
    for version in run.settings.versions:
        for sc in run.scenarios:
            new.append(McpItem.from_parent(suite, name=f"{sc.id}[{version}-{run.target.transport.value}]",
                                           scenario=sc, version=version, run=run, reqs=reqs))
    items[:0] = new
    # let the terminal (and other reporters) count the items as collected
    config.hook.pytest_collectreport(report=pytest.CollectReport(suite.nodeid, "passed", None, list(new)))


def pytest_collection_finish(session: pytest.Session) -> None:
    run = session.config.stash.get(RUN_KEY, None)
    if run is not None:
        run.items = [(i.scenario, i.version) for i in session.items if isinstance(i, McpItem)]
        if run.runner is None and run.items and not session.config.option.collectonly:
            run.prewarm()  # narrowed by pytest (see _narrowed): the plan is known, only what it needs


class McpSuite(pytest.Collector):
    """The parent of the plugin's items (scenario items; target items of --mcp-targets)."""

    def collect(self) -> list[Any]:  # items are created in pytest_collection_modifyitems
        return []


class McpFailure(Exception):
    """The item's verdict: a requirement failed."""


class McpError(Exception):
    """Our own trouble or an unreachable target: pytest reports an error."""


class VerdictItem(pytest.Item):
    """An item whose failure or error is a verdict (:class:`McpFailure`, :class:`McpError`),
    reported as its text, not as a traceback into the plugin."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, (McpFailure, McpError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        # pytest formats an error raised in setup (where our items run) through this, parsing the
        # source of every traceback entry: ~50 ms an item, minutes for a run of target errors
        if isinstance(excinfo.value, (McpFailure, McpError)):
            return str(excinfo.value)
        return super()._repr_failure_py(excinfo, style=style)


class McpItem(VerdictItem):
    """One scenario on one version and the target's transport."""

    def __init__(self, *, scenario: Scenario, version: str, run: _Run, reqs: dict, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.version = version
        self.run = run
        self.mcp_result: Any = None
        transport = run.target.transport.value
        cited = [r for r in scenario.requirements if r in set(run.settings.selected)]
        self.add_marker(pytest.mark.mcp_scenario(id=scenario.id, version=version, transport=transport,
                                                 requirements=tuple(cited)))
        self.extra_keyword_matches.update(cited)
        self.user_properties.append(("mcp_scenario", scenario.id))
        self.user_properties.append(("mcp_version", version))
        self.user_properties.append(("mcp_transport", transport))
        for rid in cited:
            r = reqs[rid]
            self.user_properties.append(("mcp_requirement", f"{rid} {r.level.value} {r.url_for(version)}"))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        mod = sys.modules.get(self.scenario.module)
        path = getattr(mod, "__file__", None) or self.path
        return path, max(self.scenario.line - 1, 0), f"{self.scenario.id} [{self.version}]"

    def setup(self) -> None:
        result = self.run.run(self.scenario, self.version)
        self.mcp_result = result
        if result.outcome is Outcome.ERROR:
            raise McpError(_error_text(result))
        if result.outcome is Outcome.SKIP:
            reason = result.skip_reason or "nothing was checked"
            try:  # report the scenario's location, not this line
                exc = pytest.skip.Exception(reason, _use_item_location=True)
            except TypeError:  # pragma: no cover - older pytest
                exc = pytest.skip.Exception(reason)
            raise exc

    def runtest(self) -> None:
        result = self.mcp_result
        if result is None:
            return
        if result.outcome is Outcome.FAIL:
            listed = self._baseline_entries(result)
            if listed:  # every failing requirement is a known failure: report.json says xfail
                pytest.xfail(f"listed in the baseline ({', '.join(listed)}): " + _failure_text(result).splitlines()[0])
            raise McpFailure(_failure_text(result))

    def _baseline_entries(self, result: Any) -> list[str]:
        baseline = self.run.settings.baseline
        failing = {v["requirement"] for v in result.failures()}
        if baseline is None or not failing:
            return []
        reqs = catalogue()
        entries = []
        for rid in sorted(failing):
            entry = baseline.entry_for({"requirement": rid, "aliases": list(reqs[rid].aliases) if rid in reqs else [],
                                        "version": self.version, "transport": result.transport},
                                       role=self.run.settings.role)
            if entry is None:
                return []
            entries.append(entry.text)
        return list(dict.fromkeys(entries))


def _req_header(rid: str, version: str, transport: str) -> str:
    r = catalogue()[rid]
    return f"{r.level.value} {rid} ({version}, {transport})\n    {r.url_for(version)}\n    \"{r.quote}\""


def _violation_text(v: dict[str, Any]) -> str:
    lines = [f"  {v['outcome'].upper()} {v['level']} {v['requirement']}: {v['problem']}", f"    {v['message']}"]
    if v.get("expected") is not None:
        lines.append(f"    expected: {_compact(v['expected'])}")
    if v.get("actual") is not None:
        lines.append(f"    actual:   {_compact(v['actual'])}")
    if v.get("json_path"):
        lines.append(f"    at:       {v['json_path']}")
    if v.get("transcript"):
        lines.append(f"    transcript: {v.get('connection')} entries {v['transcript']}")
    return "\n".join(lines)


def _compact(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."


_SHOWN_PER_REQUIREMENT = 3


def _failure_text(result: Any) -> str:
    out = []
    count: dict[str, int] = {}
    for v in result.violations:
        if v["outcome"] != Outcome.FAIL.value:
            continue
        rid = v["requirement"]
        n = count.get(rid, 0)
        if n == 0:
            out.append(_req_header(rid, result.version, result.transport))
        count[rid] = n + 1
        if n < _SHOWN_PER_REQUIREMENT:
            out.append(_violation_text(v))
    for rid, n in count.items():
        if n > _SHOWN_PER_REQUIREMENT:
            out.append(f"  ... {n - _SHOWN_PER_REQUIREMENT} more violation(s) of {rid} in report.json")
    return "\n".join(out) or "a requirement failed"


def _error_text(result: Any) -> str:
    kind = {"target": "target error", "deadline": "run deadline reached"}.get(result.error_kind or "", "harness error (not the server's fault)")
    text = f"{kind}: {result.error}"
    if result.hint:
        text += f"\n  how to fix: {result.hint}"
    return text


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    if report.when == "call" and report.passed and any(k == "mcp_warnings" for k, _ in report.user_properties):
        return "warned", "W", ("WARNING", {"yellow": True})
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if isinstance(item, McpItem) and call.excinfo is not None and isinstance(call.excinfo.value, (McpError, McpFailure)):
        report.longrepr = str(call.excinfo.value)  # the verdict, not a traceback into the plugin
    if isinstance(item, McpItem) and call.when == "call" and item.mcp_result is not None:
        warnings = item.mcp_result.warnings()
        if warnings:
            report.user_properties.append(("mcp_warnings", "; ".join(f"{w['requirement']}: {w['message']}" for w in warnings)))
    if isinstance(item, McpItem) and (call.when == "call" or not report.passed) and call.when != "teardown" \
            and item.config.pluginmanager.has_plugin("mcp-conformance-pytest-html"):
        _add_html_extras(item, report)
    return report


# ------------------------------------------------------------------------------------------------
# pytest-html: extra columns and the transcript as an extra (only when pytest-html is active)


def _requirements_of(report: pytest.TestReport) -> list[tuple[str, str, str]]:
    out = []
    for key, value in report.user_properties:
        if key == "mcp_requirement":
            rid, level, url = (str(value).split(" ", 2) + ["", ""])[:3]
            out.append((rid, level, url))
    return out


class _PytestHtml:
    """pytest-html hooks: Requirement, Level and Spec columns (registered only when it is active)."""

    @staticmethod
    def pytest_html_results_table_header(cells: list[str]) -> None:
        cells.insert(2, '<th class="sortable" data-column-type="mcpRequirement">Requirement</th>')
        cells.insert(3, '<th class="sortable" data-column-type="mcpLevel">Level</th>')
        cells.insert(4, "<th>Spec</th>")

    @staticmethod
    def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
        from html import escape

        reqs = _requirements_of(report)
        levels = [lvl for lvl in ("MUST", "SHOULD", "MAY") if any(r[1] == lvl for r in reqs)]
        links = "<br>".join(
            f'<a href="{escape(url)}" target="_blank" rel="noreferrer noopener">{escape(url.rsplit("/", 1)[-1])}</a>'
            for _, _, url in reqs if url.startswith(("https://", "http://"))
        )
        cells.insert(2, f'<td class="col-mcpRequirement">{"<br>".join(escape(r[0]) for r in reqs)}</td>')
        cells.insert(3, f'<td class="col-mcpLevel">{escape(levels[0]) if levels else ""}</td>')
        cells.insert(4, f'<td class="col-mcpSpec">{links}</td>')


def _add_html_extras(item: McpItem, report: pytest.TestReport) -> None:
    """The item's requirements (sentence, violations, wire exchange) as a pytest-html extra."""
    from pytest_html import extras

    from conformance.report.html import render_extra

    runner = item.run.runner
    if runner is None:
        return
    reqs = catalogue()
    transport = item.run.target.transport.value
    rows = []
    for rid, _, _ in _requirements_of(report):
        res = runner.results.get((rid, item.version, transport))
        if res is not None:
            row = res.to_json(reqs.get(rid))
            row["violations"] = [v for v in row["violations"] if v.get("scenario") in (None, item.scenario.id)]
            rows.append(row)
    if rows:
        report.extras = [*getattr(report, "extras", []), extras.html(render_extra(rows))]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    run = config.stash.get(RUN_KEY, None)
    if run is None or config.option.collectonly:
        if run is not None:
            run.close()
        return
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or bool(SIGNALLED)
    try:
        run.close()
    except BaseException as exc:  # never lose the report
        run.setup_error = f"closing the run failed: {exc!r}"
    status = "interrupted" if interrupted else "complete"
    if run.runner is not None and run.runner.role.target_error() is not None:
        status = "target-error" if not interrupted else status
    report = run.report(status=status)
    if run.settings.baseline is not None:
        from conformance.report.baseline import apply_baseline

        report = apply_baseline(report, run.settings.baseline, role=run.settings.role)
    path = _write_report(run.settings.report_dir, report)
    run.rendered = _write_renderings(run.settings.report_dir, report, run.settings.formats)  # type: ignore[attr-defined]
    config.stash[REPORT_KEY] = report
    run.report_path = path  # type: ignore[attr-defined]
    config.hook.pytest_mcp_report(config=config, report=report, path=path)


def _write_report(directory: Path, report: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "report.json"
    tmp = directory / f".report.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _prepare_renderers_quietly(formats: Sequence[str]) -> None:
    try:
        from conformance.report.render import prepare

        prepare(formats)
    except Exception:  # noqa: BLE001 - rendering at the end reports its own trouble
        pass


def _write_renderings(directory: Path, report: dict[str, Any], formats: Sequence[str]) -> list[Path]:
    """Write report.html, junit.xml, badge.svg/json, summary.md (as chosen) beside report.json; a
    renderer that fails is reported, never lets the run lose report.json."""
    from conformance.report.render import render

    written: list[Path] = []
    for fmt in formats:
        if fmt == "json":
            continue
        try:
            files = render(report, [fmt])
        except Exception as exc:  # a renderer bug must not hide the verdicts
            sys.stderr.write(f"mcp-conformance: rendering {fmt} failed: {exc!r} (report.json is complete)\n")
            continue
        for name, text in files.items():
            path = directory / name
            tmp = directory / f".{name}.{os.getpid()}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
            written.append(path)
    return written


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None and not run.closed:
        run.close()
    if run is not None and run.runner is not None and REPORT_KEY not in config.stash:
        # interrupted before the session started (Ctrl-C while the first sessions came up):
        # the partial report is written all the same
        try:
            report = run.report(status="interrupted")
            run.report_path = _write_report(run.settings.report_dir, report)  # type: ignore[attr-defined]
            _write_renderings(run.settings.report_dir, report, run.settings.formats)
            config.stash[REPORT_KEY] = report
        except Exception as exc:  # never mask the interrupt
            sys.stderr.write(f"mcp-conformance: writing the partial report failed: {exc!r}\n")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    report = config.stash.get(REPORT_KEY, None)
    run = config.stash.get(RUN_KEY, None)
    if report is None or run is None:
        return
    tr = terminalreporter
    tr.section("mcp-conformance", sep="=")
    tr.write_line(f"target: {report['target']['description']}")
    impl = (report.get("implementation") or {}).get("server_info")
    if impl:
        tr.write_line(f"server: {impl.get('name')} {impl.get('version', '')}".rstrip())
    counts = report["summary"]["by_outcome"]
    shown = ", ".join(f"{n} {o}" for o, n in counts.items() if n)
    na = report["summary"].get("not_applicable") or 0
    tr.write_line(f"requirements x versions: {report['summary']['total']} ({shown or 'none'})"
                  f"{' [strict]' if report['strict'] else ''}"
                  + (f"; {na} not applicable to these versions or this transport (not counted)" if na else ""))
    warned = [r for r in report["results"] if r["outcome"] == Outcome.WARNING.value]
    if warned:
        tr.write_line("warnings (SHOULD violated; --mcp-strict makes them failures):", yellow=True)
        for r in warned:
            first = r["violations"][0]["message"] if r["violations"] else ""
            tr.write_line(f"  {r['requirement']} [{r['version']}]: {first}", yellow=True)
    grouped: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for e in report["errors"]:
        grouped.setdefault((e["message"], e.get("hint")), []).append(e)
    for (message, hint), errs in grouped.items():
        versions = sorted({e["version"] for e in errs if e.get("version")})
        where = f" [{', '.join(versions)}]" if versions else ""
        count = f" ({len(errs)} scenarios)" if len(errs) > 1 else f" ({errs[0].get('scenario')})" if errs[0].get("scenario") else ""
        tr.write_line(f"error{where}{count}: {message}", red=True)
        if hint:
            tr.write_line(f"  how to fix: {hint}", red=True)
    for w in report.get("warnings", []):
        tr.write_line(f"note: {w}", yellow=True)
    base = report.get("baseline")
    if base:
        tr.write_line(f"baseline {base['source']}: {len(base['expected'])} failing as expected, "
                      f"{len(base['stale'])} stale, {len(base['unmatched'])} unmatched")
        for entry in base["stale"]:
            tr.write_line(f"  stale: {entry} passes now; remove it from the baseline", red=True)
    path = getattr(run, "report_path", None)
    if path is not None:
        tr.write_line(f"report: {path}")
        others = [p.name for p in getattr(run, "rendered", [])]
        if others:
            tr.write_line(f"        {', '.join(others)}")
