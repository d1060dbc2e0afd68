"""``pytest --mcp-targets FILE``: many servers in one pytest run, spread over pytest-xdist workers.

The targets file is the one of ``mcp-conformance server --targets`` (:mod:`conformance.fleet`).
Each target is one pytest item, ``mcp-targets::<name>``, marked ``xdist_group(<name>)``: under
``pytest -n N --dist loadgroup`` (or any other xdist distribution: one item cannot be split) a
target's whole run stays on one worker, and N targets run at once, over cores and -- as xdist
does -- over machines.  The item runs the target exactly as a single ``mcp-conformance server``
run does (a child process, :func:`conformance.fleet.run_fleet_server`), so its verdicts are those of a
single run; its report goes to ``<report-dir>/<name>/``.  The item fails when the run has failed
requirements (listed, with their sentence), errors when the target could not be tested, is
skipped when nothing was checked.  At the end the process that ran the session (the xdist
controller, or pytest itself without xdist) writes the index, ``<report-dir>/index.json`` and
``index.html``: targets x areas x versions, side by side.

The other ``--mcp-*`` options of a run (``--mcp-version``, ``--mcp-transport``, ``--mcp-timeout``,
``--mcp-strict``, ...) apply to every target, as the CLI's options do with ``--targets``; a target's
own ``versions`` and ``transport`` take precedence.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.options import get_option
from conformance.plugin.items import McpError, McpFailure, McpSuite, VerdictItem
from conformance.plugin.settings import report_dir

FLEET_KEY = pytest.StashKey[list]()

# plugin option -> the CLI flag it passes on to every target's run (kind: value, flag, list)
_PASSED = (
    ("mcp_timeout", "--timeout", "value"),
    ("mcp_run_timeout", "--run-timeout", "value"),
    ("mcp_jobs", "--jobs", "value"),
    ("mcp_strict", "--strict", "flag"),
    ("mcp_select", "--select", "list"),
    ("mcp_exclude", "--exclude", "list"),
    ("mcp_schema_dir", "--schema-dir", "value"),
    ("mcp_report_format", "--report-format", "list"),
    ("mcp_baseline", "--baseline", "value"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-conformance")
    group.addoption("--mcp-targets", dest="mcp_targets", metavar="FILE", default=None,
                    help="a YAML list of servers (as `mcp-conformance server --targets`): one item per server, each "
                         "run as a single `mcp-conformance server` run, its report in <report-dir>/<name>/, and an "
                         "index comparing them; with pytest-xdist (-n N) N servers at once")
    parser.addini("mcp_targets", "ini mirror of --mcp-targets")


def _targets_file(config: pytest.Config) -> str | None:
    value = config.getoption("mcp_targets", default=None) or config.getini("mcp_targets")
    return str(value).strip() or None if value else None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    path = _targets_file(config)
    if path is None or getattr(config.option, "help", False):
        return
    from conformance.fleet import FleetError, load_fleet

    if get_option(config, "server_command") or get_option(config, "server_url") or get_option(config, "client_command"):
        raise pytest.UsageError("--mcp-targets names the servers; drop --mcp-server-command / --mcp-server-url / "
                                "--mcp-client-command (or put that server in the targets file)")
    full = Path(path) if Path(path).is_absolute() else Path(config.invocation_params.dir) / path
    try:
        targets = load_fleet(full)
    except FleetError as exc:
        raise pytest.UsageError(f"--mcp-targets: {exc}") from None
    versions = tuple(str(v) for v in get_option(config, "version"))  # as given: each run parses its --version
    transport = get_option(config, "transport")
    config.stash[FLEET_KEY] = [replace(t, versions=t.versions or versions, transport=t.transport or transport)
                                 for t in targets]


def _passthrough(config: pytest.Config) -> list[str]:
    out: list[str] = []
    for dest, flag, kind in _PASSED:
        value = config.getoption(dest, default=None)
        if value in (None, [], "", False):
            continue
        if kind == "flag":
            out.append(flag)
        elif kind == "list":
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    targets = config.stash.get(FLEET_KEY, None)
    if targets is None:
        return
    from conformance.fleet import FleetServerRun

    root = report_dir(config)
    suite = McpSuite.from_parent(session, name="mcp-targets", nodeid="mcp-targets")
    passthrough = _passthrough(config)
    new = [FleetItem.from_parent(suite, name=t.name, run=FleetServerRun(t, root / t.name), passthrough=passthrough)
           for t in targets]
    items[:0] = new
    config.hook.pytest_collectreport(report=pytest.CollectReport(suite.nodeid, "passed", None, list(new)))


class FleetItem(VerdictItem):
    """One server of the targets file: one whole ``mcp-conformance server`` run.  Its verdicts:
    :class:`McpFailure` (failed requirements), :class:`McpError` (the server could not be tested)."""

    def __init__(self, *, run: Any, passthrough: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.passthrough = passthrough
        self.report: dict[str, Any] | None = None
        self.add_marker(pytest.mark.xdist_group(name=run.spec.name))
        self.user_properties.append(("mcp_target", run.spec.name))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"mcp-targets::{self.run.spec.name}"

    def setup(self) -> None:
        from conformance.fleet import run_fleet_server

        run = self.run
        run_fleet_server(run, self.passthrough)
        path = run.report_dir / "report.json"
        self.report = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        self.user_properties.append(("mcp_report", str(path)))
        if self.report is None or run.exit_code not in (0, 1):
            tail = "\n".join(run.log.strip().splitlines()[-15:])
            raise McpError(f"{run.spec.name}: `mcp-conformance server` exited {run.exit_code}"
                              f"{'' if self.report is not None else ' without a report'}\n{tail}")
        outcomes = {r["outcome"] for r in self.report.get("results", [])}
        if outcomes and outcomes <= {"skip"}:
            pytest.skip(f"{run.spec.name}: nothing was checked (every requirement was skipped)")

    def runtest(self) -> None:
        report = self.report
        if report is None or self.run.exit_code == 0:
            return
        failed = [r for r in report.get("results", []) if r["outcome"] in ("fail", "stale")]
        lines = [f"{self.run.spec.name}: {len(failed)} requirement verdict(s) failed "
                 f"(report: {self.run.report_dir / 'report.json'})"]
        for r in failed[:30]:
            first = (r.get("violations") or [{}])[0]
            lines.append(f"  FAIL {r.get('level', '')} {r['requirement']} [{r['version']}]: "
                         f"{first.get('message') or r.get('reason') or ''}".rstrip())
            if r.get("quote"):
                lines.append(f"    \"{r['quote']}\"")
        if len(failed) > 30:
            lines.append(f"  ... {len(failed) - 30} more in report.json")
        raise McpFailure("\n".join(lines))


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # not the inherited PYTEST_XDIST_WORKER: see conformance.plugin.settings.refuse_xdist


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The index of every target that has a report, written once (not by xdist workers)."""
    config = session.config
    targets = config.stash.get(FLEET_KEY, None)
    if targets is None or _is_worker(config) or config.option.collectonly:
        return
    from conformance.fleet import FleetServerRun, write_index

    root = report_dir(config)
    root.mkdir(parents=True, exist_ok=True)
    path = write_index(root, [FleetServerRun(t, root / t.name) for t in targets])
    config.stash[INDEX_KEY] = path


INDEX_KEY = pytest.StashKey[Path]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    path = config.stash.get(INDEX_KEY, None)
    if path is not None:
        terminalreporter.write_line(f"mcp-conformance targets index: {path}")


__all__ = ["FleetItem"]
