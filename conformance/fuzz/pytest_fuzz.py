"""The pytest side of the fuzzer: ``--mcp-fuzz`` adds one item per fuzz target (target x version),
marked ``mcp_fuzz``; a finding graded fail fails the item with its sentence and reproducer.

    pytest --mcp-server-command "python my_server.py" --mcp-fuzz -m mcp_fuzz \\
        [--mcp-fuzz-budget 30s | --mcp-fuzz-max-messages N] [--mcp-fuzz-seed N] [--mcp-fuzz-tools GLOB]
        [--mcp-fuzz-shrink-budget 10s | --mcp-fuzz-no-shrink]

The target options (``--mcp-server-command``, ``--mcp-server-url``, ``--mcp-transport``,
``--mcp-version``, ``--mcp-report-dir``, ``--mcp-strict``) are the conformance plugin's.  The
campaign, reproducers and ``report.json`` (with its ``fuzz`` section) go to
``<report dir>/fuzz/``, exactly as ``mcp-conformance fuzz`` writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

GROUP = "mcp-conformance fuzz"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mcp-fuzz", "MCP conformance fuzzing (mcp-conformance fuzz)")
    g.addoption("--mcp-fuzz", action="store_true", default=False, dest="mcp_fuzz",
                help="add one fuzz item per target and version (select them alone with -m mcp_fuzz)")
    g.addoption("--mcp-fuzz-budget", dest="mcp_fuzz_budget", default=None, metavar="DURATION",
                help="how long each campaign sends (default 30s)")
    g.addoption("--mcp-fuzz-max-messages", dest="mcp_fuzz_max_messages", type=int, default=None, metavar="N",
                help="frames per campaign instead of a time budget")
    g.addoption("--mcp-fuzz-seed", dest="mcp_fuzz_seed", type=int, default=0, metavar="N", help="campaign seed (default 0)")
    g.addoption("--mcp-fuzz-tools", dest="mcp_fuzz_tools", action="append", default=[], metavar="GLOB",
                help="tools the campaign may call (default none; destructive ones only by exact name)")
    g.addoption("--mcp-fuzz-shrink-budget", dest="mcp_fuzz_shrink_budget", default="10s", metavar="DURATION",
                help="time spent minimising each finding (default 10s)")
    g.addoption("--mcp-fuzz-no-shrink", action="store_true", default=False, dest="mcp_fuzz_no_shrink",
                help="save findings as found, without minimising them")


def _durations(config: pytest.Config) -> tuple[float | None, float]:
    """(campaign budget or None for --mcp-fuzz-max-messages, shrink budget), a malformed duration
    a usage error naming its option."""
    from conformance.fuzz.campaign import UsageError, parse_duration

    budget_text = config.getoption("mcp_fuzz_budget")
    max_messages = config.getoption("mcp_fuzz_max_messages")
    try:
        budget = parse_duration(budget_text, "--mcp-fuzz-budget") if budget_text else (None if max_messages else 30.0)
        shrink = parse_duration(config.getoption("mcp_fuzz_shrink_budget"), "--mcp-fuzz-shrink-budget")
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    return budget, shrink


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mcp_fuzz: a fuzz campaign against the MCP target (mcp-conformance --mcp-fuzz)")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("mcp_fuzz", default=False):
        return
    from conformance.options import get_option
    from conformance.plugin.settings import build_target
    from conformance.spec.versions import VERSIONS

    command = get_option(config, "server_command")
    url = get_option(config, "server_url")
    if not command and not url:
        raise pytest.UsageError("--mcp-fuzz needs a target: --mcp-server-command or --mcp-server-url")
    _durations(config)  # a malformed duration stops the run here, before anything starts
    target = build_target(command=command, url=url, transport=get_option(config, "transport"))
    versions: list[str] = []
    given = get_option(config, "version") or ["2025-11-25"]
    for v in given:
        versions += list(VERSIONS) if v == "all" else [x.strip() for x in str(v).split(",") if x.strip()]
    from conformance.fuzz.campaign import UsageError, versions_on_transport

    try:  # legacy SSE is not a transport of 2026-07-28: left out of "all", an error when named
        versions = versions_on_transport(versions, target.transport, every="all" in given)
    except UsageError as exc:
        raise pytest.UsageError(f"--mcp-fuzz: {exc}") from None
    parent = FuzzSuite.from_parent(session, name="mcp-fuzz", nodeid="mcp-fuzz")
    new = [FuzzItem.from_parent(parent, name=f"mcp_fuzz[{v}-{target.transport.value}]", target=target, version=v)
           for v in versions]
    for item in new:
        item.add_marker("mcp_fuzz")
    items.extend(new)
    config.hook.pytest_collectreport(report=pytest.CollectReport(parent.nodeid, "passed", None, list(new)))


class FuzzSuite(pytest.Collector):
    def collect(self) -> list[Any]:
        return []


class FuzzFailure(Exception):
    pass


class FuzzItem(pytest.Item):
    def __init__(self, *, target: Any, version: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.target = target
        self.version = version

    def runtest(self) -> None:
        import time

        import anyio

        from conformance.fuzz.campaign import write_report
        from conformance.fuzz.engine import FuzzConfig
        from conformance.fuzz.server_campaign import campaign_and_shrink
        from conformance.options import get_option

        cfg = self.config
        budget, shrink_budget = _durations(cfg)
        strict = bool(get_option(cfg, "strict"))
        report_dir = Path(get_option(cfg, "report_dir") or "reports") / "fuzz" / self.version
        target = self.target.resolve()
        fc = FuzzConfig(target=target, version=self.version, seed=cfg.getoption("mcp_fuzz_seed"), budget=budget,
                        max_messages=cfg.getoption("mcp_fuzz_max_messages"), shrink_budget=shrink_budget,
                        fuzz_tools=tuple(cfg.getoption("mcp_fuzz_tools") or ()))
        started = time.time()
        section, rows = anyio.run(campaign_and_shrink, fc, report_dir, not cfg.getoption("mcp_fuzz_no_shrink"), strict)
        write_report(report_dir, target, [self.version], seed=fc.seed, strict=strict, started=started, status="complete",
                     sections=[section], findings=rows, errors=[])
        self.user_properties.append(("mcp_fuzz", {k: section[k] for k in ("messages", "judged", "judged_per_second")}))
        failed = [f for f in section["findings"] if f["outcome"] == "fail"]
        if failed:
            raise FuzzFailure("\n".join(
                f"{f['requirement']} [{f['level']}] {f['problem']} x{f['count']}: {f['message']}\n"
                f"    \"{f['quote']}\" ({f['url']})\n"
                f"    reproducer: {report_dir / f['reproducer'] if f['reproducer'] else '-'}"
                for f in failed))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, FuzzFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[str, int, str]:
        return ("mcp-fuzz", 0, self.name)
