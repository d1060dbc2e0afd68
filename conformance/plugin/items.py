"""The plugin's pytest items: :class:`McpItem`, one scenario on one version and the target's
transport (run in the *setup* phase, graded in the *call* phase), under one :class:`McpSuite`;
:class:`VerdictItem` reports a verdict (:class:`McpFailure`, :class:`McpError`) as its text, not
as a traceback into the plugin (the fleet's items, :mod:`conformance.plugin.fleet`, are ones)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest

from conformance.runtime.registry import Scenario
from conformance.spec.outcomes import Outcome
from conformance.spec.requirements import catalogue

if TYPE_CHECKING:
    from conformance.plugin.session import SessionRun

__all__ = ["McpSuite", "McpFailure", "McpError", "VerdictItem", "McpItem"]


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

    def __init__(self, *, scenario: Scenario, version: str, run: SessionRun, reqs: dict, **kwargs: Any) -> None:
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
