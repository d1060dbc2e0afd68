"""The pytest plugin, the module registered through the ``pytest11`` entry point: its hooks.

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

The plugin is the package :mod:`conformance.plugin`, one room per idea: this module (the hooks),
:mod:`~conformance.plugin.settings` (the options of :mod:`conformance.options` validated),
:mod:`~conformance.plugin.session` (the event-loop run and report writing),
:mod:`~conformance.plugin.items` (the items), :mod:`~conformance.plugin.html` (pytest-html),
:mod:`~conformance.plugin.fleet` (``--mcp-targets``: the fleet file's items) and
:mod:`~conformance.plugin.hookspecs` (``pytest_mcp_report``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from conformance.options import GROUP, OPTIONS, get_option
from conformance.plugin.html import PytestHtml, add_html_extras
from conformance.plugin.items import McpError, McpFailure, McpItem, McpSuite
from conformance.plugin.session import REPORT_KEY, RUN_KEY, SETTINGS_KEY, SessionRun, write_renderings, write_report
from conformance.plugin.settings import check_schemas, read_settings, refuse_xdist
from conformance.runtime.registry import scenarios
from conformance.runtime.signals import SIGNALLED  # (set by the CLI's handlers: runtime/signals.py)
from conformance.spec.outcomes import Outcome
from conformance.spec.requirements import catalogue

# the fuzzer's pytest side (--mcp-fuzz: its own options and items, conformance/fuzz/pytest_fuzz.py)
# and the fleet's (--mcp-targets FILE: one item per server, conformance/plugin/fleet.py)
pytest_plugins = ("conformance.fuzz.pytest_fuzz", "conformance.plugin.fleet")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from conformance.plugin import hookspecs

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
    settings = read_settings(config)
    config.stash[SETTINGS_KEY] = settings
    if settings.schema_dir:
        from conformance.schema import loader

        previous = loader.configuration()
        config.add_cleanup(lambda: loader.configure(previous[0], allow_download=previous[1]))
        loader.configure(settings.schema_dir)
    if settings.target is None:
        return
    refuse_xdist(config)
    check_schemas(settings)
    run = config.stash[RUN_KEY] = SessionRun(config, settings)
    if not config.option.collectonly and not _narrowed(config):
        run.prewarm()  # else once pytest has chosen the items (pytest_collection_finish)
    if config.pluginmanager.hasplugin("html") and getattr(config.option, "htmlpath", None):
        config.pluginmanager.register(PytestHtml(), "mcp-conformance-pytest-html")


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


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    if not config.getoption("mcp_list", default=None):
        return None
    try:
        settings = read_settings(config)
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
        add_html_extras(item, report)
    return report


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
    path = write_report(run.settings.report_dir, report)
    run.rendered = write_renderings(run.settings.report_dir, report, run.settings.formats)
    config.stash[REPORT_KEY] = report
    run.report_path = path
    config.hook.pytest_mcp_report(config=config, report=report, path=path)


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None and not run.closed:
        run.close()
    if run is not None and run.runner is not None and REPORT_KEY not in config.stash:
        # interrupted before the session started (Ctrl-C while the first sessions came up):
        # the partial report is written all the same
        try:
            report = run.report(status="interrupted")
            run.report_path = write_report(run.settings.report_dir, report)
            write_renderings(run.settings.report_dir, report, run.settings.formats)
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
    path = run.report_path
    if path is not None:
        tr.write_line(f"report: {path}")
        others = [p.name for p in run.rendered or []]
        if others:
            tr.write_line(f"        {', '.join(others)}")
