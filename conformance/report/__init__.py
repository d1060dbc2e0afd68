"""Report model (report.json) and renderers: pure functions of the report dict, no I/O."""

from __future__ import annotations

from conformance.report.model import RequirementResult, build_report, exit_code, summarize

__all__ = ["RequirementResult", "build_report", "exit_code", "summarize", "SCHEMA_FILE"]

SCHEMA_FILE = "report.schema.json"  # beside this package: importlib.resources.files(__package__)
