"""Keep the default run fast: ``slow`` tests here run only when asked for
(``-m slow``, or ``MCP_CONFORMANCE_SLOW=1``)."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = "slow" in (config.getoption("-m") or "") or os.environ.get("MCP_CONFORMANCE_SLOW") == "1"
    if wanted:
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or MCP_CONFORMANCE_SLOW=1")
    for item in items:
        if "slow" in item.keywords and "tests/reference_server" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)
