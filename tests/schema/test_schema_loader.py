"""The loader: search order, sha256 verification, the cache, the download, its error messages."""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from conformance.schema import SchemaError, configure, load_schema, schema_dir_from_env
from conformance.schema import loader
from conformance.spec.versions import VERSIONS

MANIFESTS = Path(__file__).resolve().parents[2] / "schemas"

SMALL = "2024-11-05"  # the smallest file: cheap to copy around


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _layout(root: Path, version: str, data: bytes) -> Path:
    path = root / version / "schema.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


class _Server:
    """A loopback HTTP server for a directory; counts the GET requests it answered."""

    def __init__(self, directory: Path) -> None:
        outer = self
        self.paths: list[str] = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                outer.paths.append(self.path)
                super().do_GET()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(directory)))
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def served(official_dir: Path, isolated_loader, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Server]:
    """A mirror of the official files on 127.0.0.1, used as the download base URL."""
    with _Server(official_dir) as server:
        monkeypatch.setenv(loader.ENV_BASE_URL, server.url + "/")
        yield server


# -- pins ---------------------------------------------------------------------------------------


def test_every_version_is_pinned_and_the_pins_match_the_official_files(official_dir: Path) -> None:
    assert list(loader.PINS) == list(VERSIONS)
    for version, pin in loader.PINS.items():
        data = (official_dir / version / "schema.json").read_bytes()
        schema = json.loads(data)
        assert (_sha(data), len(data)) == (pin.sha256, pin.size), version
        assert schema["$schema"] == pin.schema_uri
        assert pin.definitions_key in schema


def test_committed_manifests_match_the_loader_pins() -> None:
    manifests = sorted(MANIFESTS.glob("*.json"))
    assert [p.stem for p in manifests] == sorted(loader.PINS)
    for path in manifests:
        pin = loader.PINS[path.stem]
        assert json.loads(path.read_text()) == {
            "version": pin.version,
            "repository": pin.repository,
            "commit": pin.commit,
            "path": pin.path,
            "url": pin.url,
            "sha256": pin.sha256,
            "size": pin.size,
            "dialect": pin.dialect,
            "$schema": pin.schema_uri,
            "definitions_key": pin.definitions_key,
        }
        assert pin.url == f"https://raw.githubusercontent.com/{pin.repository}/{pin.commit}/{pin.path}"


# -- search order -------------------------------------------------------------------------------


def test_configured_dir_comes_before_the_environment(isolated_loader, official_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "good"
    _layout(good, SMALL, (official_dir / SMALL / "schema.json").read_bytes())
    monkeypatch.setenv(loader.ENV_DIR, str(tmp_path / "does-not-exist"))
    configure(good, allow_download=False)
    assert load_schema(SMALL)["$schema"] == loader.PINS[SMALL].schema_uri


def test_environment_dir_is_used_when_nothing_is_configured(isolated_loader, official_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(loader.ENV_DIR, str(official_dir))
    monkeypatch.setenv(loader.ENV_DOWNLOAD, "0")
    assert schema_dir_from_env() == official_dir
    assert "$defs" in load_schema("2026-07-28")


def test_a_configured_dir_is_authoritative_missing_file(isolated_loader, official_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the env and the cache both could serve the file: a configured dir must not silently fall back
    monkeypatch.setenv(loader.ENV_DIR, str(official_dir))
    _layout(loader.cache_dir(), SMALL, (official_dir / SMALL / "schema.json").read_bytes())
    configure(tmp_path / "empty")
    with pytest.raises(SchemaError) as info:
        load_schema(SMALL)
    text = str(info.value)
    assert SMALL in text
    assert str(tmp_path / "empty" / SMALL / "schema.json") in text
    assert loader.PINS[SMALL].sha256 in text
    assert "no file" in text
    assert loader.ENV_DIR in text and "--mcp-schema-dir" in text and "<dir>/<version>/schema.json" in text


def test_sha_mismatch_names_version_path_both_hashes_and_the_fix(isolated_loader, official_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = (official_dir / SMALL / "schema.json").read_bytes().replace(b"A request", b"A requesT", 1)
    path = _layout(tmp_path / "dir", SMALL, tampered)
    monkeypatch.setenv(loader.ENV_DIR, str(tmp_path / "dir"))
    with pytest.raises(SchemaError) as info:
        load_schema(SMALL)
    text = str(info.value)
    assert SMALL in text and str(path) in text
    assert f"expected {loader.PINS[SMALL].sha256}, actual {_sha(tampered)}" in text
    assert loader.ENV_DIR in text and "download" in text


def test_the_user_cache_is_used_without_any_directory(isolated_loader, official_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert loader.cache_dir() == tmp_path / "xdg-cache" / "mcp-conformance" / "schemas"
    _layout(loader.cache_dir(), SMALL, (official_dir / SMALL / "schema.json").read_bytes())
    monkeypatch.setenv(loader.ENV_DOWNLOAD, "0")  # proves the cache served it
    assert "definitions" in load_schema(SMALL)


def test_default_cache_is_under_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert loader.cache_dir() == tmp_path / ".cache" / "mcp-conformance" / "schemas"


def test_download_fills_the_cache_and_is_verified(served: _Server, official_dir: Path) -> None:
    schema = load_schema(SMALL)
    assert served.paths == [f"/{SMALL}/schema.json"]
    cached = loader.cache_dir() / SMALL / "schema.json"
    assert cached.read_bytes() == (official_dir / SMALL / "schema.json").read_bytes()
    assert schema == json.loads(cached.read_bytes())
    # a new process (simulated) finds it in the cache: no second download
    loader._reset()
    load_schema(SMALL)
    assert served.paths == [f"/{SMALL}/schema.json"]


def test_a_corrupt_cache_entry_is_downloaded_again(served: _Server, official_dir: Path) -> None:
    cached = _layout(loader.cache_dir(), SMALL, b"{}")
    load_schema(SMALL)
    assert len(served.paths) == 1
    assert cached.read_bytes() == (official_dir / SMALL / "schema.json").read_bytes()


def test_a_tampered_download_is_refused_and_not_cached(isolated_loader, official_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tampered = (official_dir / SMALL / "schema.json").read_bytes() + b"\n"
    _layout(tmp_path / "mirror", SMALL, tampered)
    with _Server(tmp_path / "mirror") as server:
        monkeypatch.setenv(loader.ENV_BASE_URL, server.url)
        with pytest.raises(SchemaError) as info:
            load_schema(SMALL)
    text = str(info.value)
    assert f"{server.url}/{SMALL}/schema.json" in text
    assert f"expected {loader.PINS[SMALL].sha256}, actual {_sha(tampered)}" in text
    assert not (loader.cache_dir() / SMALL / "schema.json").exists()


def test_a_failed_download_is_a_schema_error(served: _Server) -> None:
    version = "2025-03-26"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(loader.ENV_BASE_URL, served.url + "/nowhere")  # a base without the files
        with pytest.raises(SchemaError) as info:
            load_schema(version)
    assert "download" in str(info.value) and version in str(info.value) and "404" in str(info.value)


def test_download_size_cap(served: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "MAX_DOWNLOAD_BYTES", 1000)
    with pytest.raises(SchemaError, match="exceeds 1000 bytes"):
        load_schema(SMALL)
    assert not (loader.cache_dir() / SMALL / "schema.json").exists()


@pytest.mark.parametrize("how", ["env", "configure"])
def test_downloads_can_be_forbidden(isolated_loader, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "env":
        monkeypatch.setenv(loader.ENV_DOWNLOAD, "0")
    else:
        configure(None, allow_download=False)
    with pytest.raises(SchemaError) as info:
        load_schema(SMALL)
    text = str(info.value)
    assert SMALL in text and "downloads are disabled" in text and loader.PINS[SMALL].sha256 in text
    assert str(loader.cache_dir() / SMALL / "schema.json") in text


def test_unknown_version_lists_the_valid_ones(isolated_loader) -> None:
    with pytest.raises(SchemaError) as info:
        load_schema("2099-01-01")
    assert "2099-01-01" in str(info.value)
    for version in VERSIONS:
        assert version in str(info.value)


def test_loaded_schemas_are_cached_in_memory(isolated_loader, official_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(official_dir / SMALL, copy / SMALL)
    configure(copy)
    first = load_schema(SMALL)
    (copy / SMALL / "schema.json").unlink()
    assert load_schema(SMALL) is first
