"""Helpers for the suite-runtime tests: target commands, plugin runs, report loading."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

# pytester's in-process runs drop every module first imported inside them; the scenario registry
# would then hold functions bound to dropped modules (another ``Kind`` enum...).  Import the whole
# stack here, outside any run.
import conformance.cli  # noqa: F401,E402
import conformance.runtime.run  # noqa: F401,E402
import conformance.server.role  # noqa: F401,E402
import conformance.schema.validate  # noqa: F401,E402
import conformance.transports.http  # noqa: F401,E402
import conformance.transports.sse  # noqa: F401,E402
import conformance.transports.stdio  # noqa: F401,E402
from conformance.runtime.registry import scenarios as _scenarios  # noqa: E402
from tests.processes import live_processes  # noqa: E402,F401

_scenarios("server")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PY = sys.executable
TINY = ROOT / "fixtures" / "peers" / "tiny_server.py"
BAD = HERE / "bad_server.py"
REPORT_SCHEMA = json.loads((ROOT / "conformance" / "report" / "report.schema.json").read_text())
# plugins irrelevant here that make every in-process run slow (hypothesis' terminal summary
# imports its statistics machinery afresh in each pytester run)
QUIET_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
TIMEOUT = "5"  # seconds per expectation where nothing is expected to time out (answers take ms)


def tiny_cmd(*extra: str) -> str:
    return shlex.join([PY, str(TINY), *extra])


def bad_cmd(mode: str, *extra: str) -> str:
    return shlex.join([PY, str(BAD), mode, *extra])


def validate_report(report: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(REPORT_SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def load_report(directory: Path) -> dict[str, Any]:
    report = json.loads((directory / "report.json").read_text(encoding="utf-8"))
    validate_report(report)
    return report


def results_by(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["requirement"], r["version"]): r for r in report["results"]}




@pytest.fixture
def run_plugin(pytester: pytest.Pytester):
    """Run pytest in-process in a temp dir with the given arguments; returns (result, report|None)."""

    def run(*args: str) -> tuple[pytest.RunResult, dict[str, Any] | None]:
        result = pytester.runpytest(*QUIET_PLUGINS, *args)
        path = pytester.path / "reports" / "report.json"
        report = load_report(path.parent) if path.exists() else None
        return result, report

    return run
