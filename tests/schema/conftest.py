"""Fixtures for the schema oracle's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.schema import loader

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MANIFESTS = ROOT / "schemas"


@pytest.fixture(scope="session")
def official_dir() -> Path:
    """The directory of official schema files (``<dir>/<version>/schema.json``)."""
    value = os.environ.get(loader.ENV_DIR)
    if not value or not Path(value).is_dir():
        pytest.fail(f"set {loader.ENV_DIR} to a directory of the official schemas (see schemas/README.md)")
    return Path(value)


@pytest.fixture
def isolated_loader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The loader with no configuration, no environment, an empty user cache and nothing loaded."""
    for name in (loader.ENV_DIR, loader.ENV_DOWNLOAD, loader.ENV_BASE_URL):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    # fresh loader state for the test; the session's own (e.g. --mcp-schema-dir) comes back after
    monkeypatch.setattr(loader, "_configured_dir", None)
    monkeypatch.setattr(loader, "_allow_download", None)
    monkeypatch.setattr(loader, "_loaded", {})
    return loader
