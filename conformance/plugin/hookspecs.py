"""Hooks the mcp-conformance pytest plugin calls (for renderers and other plugins)."""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["pytest_mcp_report"]


def pytest_mcp_report(config: pytest.Config, report: dict[str, Any], path: Any) -> None:
    """Called once ``report.json`` (``report``, written at ``path``) is complete, at session end.

    Renderers (HTML, JUnit, badge, Markdown) read only this dict."""
