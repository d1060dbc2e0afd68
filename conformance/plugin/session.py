"""The session's run: :class:`SessionRun` holds the settings, the event loop kept in a background
thread for the whole pytest session (an anyio blocking portal, so a version's shared session
survives from item to item), the role's run (:func:`new_run`), the items in run order and their
results; at the end it assembles ``report.json`` (:meth:`SessionRun.report`), which
:func:`write_report` and :func:`write_renderings` put on disk."""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import pytest

from conformance import __version__
from conformance.plugin.settings import Settings
from conformance.report.model import build_report
from conformance.runtime.registry import Scenario
from conformance.runtime.signals import SIGNALLED  # (set by the CLI's handlers: runtime/signals.py)
from conformance.spec.outcomes import Outcome
from conformance.spec.requirements import catalogue

__all__ = ["RUN_KEY", "REPORT_KEY", "SETTINGS_KEY", "SessionRun", "new_run", "write_report", "write_renderings"]


RUN_KEY = pytest.StashKey["SessionRun"]()
REPORT_KEY = pytest.StashKey[dict]()
SETTINGS_KEY = pytest.StashKey[Settings]()


class SessionRun:
    """The session's run: settings, the event loop thread (portal), the runner, item results."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
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
        self.report_path: Any = None  # report.json, once written (pytest_sessionfinish)
        self.rendered: list[Any] = []  # the renderings written beside it

    # The event loop starts when pytest_configure is done (prewarm: the target's first session
    # comes up while pytest collects) or with the first item; collect-only starts nothing.
    def _start_loop(self) -> None:
        from anyio.from_thread import start_blocking_portal

        self.started_monotonic = time.monotonic()
        self._portal_cm = start_blocking_portal("asyncio")
        self.portal = self._portal_cm.__enter__()
        runner = new_run(
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
            from conformance.runtime.connect import kill_children

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
        runner = new_run(self.settings.role, self.target, versions=self.settings.versions, selected=self.settings.selected)
        runner.plan(self.scenarios)
        return list(runner.results.values())


def new_run(role: str, target: Any, **options: Any) -> Any:
    """The run of ``role`` ("server" or "client") against ``target``."""
    if role == "client":
        from conformance.client.role import client_run

        return client_run(target, **options)
    from conformance.server.role import server_run

    return server_run(target, **options)



def write_report(directory: Path, report: dict[str, Any]) -> Path:
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


def write_renderings(directory: Path, report: dict[str, Any], formats: Sequence[str]) -> list[Path]:
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
