"""Find, verify and cache the official MCP JSON schemas.

The schema files are not part of this repository; they are pinned by sha256 (``schemas/<version>.json``
beside the repository root holds the same pins as :data:`PINS`, a test keeps them in step).
:func:`load_schema` looks, in this order, for ``<version>/schema.json`` in

1. the directory set with :func:`configure` (the ``--mcp-schema-dir`` option),
2. else the directory in ``$MCP_CONFORMANCE_SCHEMA_DIR``,
3. else the user cache ``$XDG_CACHE_HOME/mcp-conformance/schemas`` (default ``~/.cache/...``),
4. else it downloads the pinned raw URL (with a timeout and a size cap) into that cache.

A configured directory (1 or 2) is authoritative: if the file there is missing or its sha256 differs,
:class:`SchemaError` says so, rather than falling back to something else.  The sha256 is verified for
every source.  Loaded schemas are kept in memory for the life of the process.

Environment: ``MCP_CONFORMANCE_SCHEMA_DIR`` (directory), ``MCP_CONFORMANCE_SCHEMA_DOWNLOAD=0``
(never download), ``MCP_CONFORMANCE_SCHEMA_BASE_URL`` (download from a mirror laid out as
``<base>/<version>/schema.json`` instead of GitHub).  The only I/O is file reads, the cache write
and the download (``urllib.request``, imported lazily inside :func:`_download`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SchemaError",
    "Pin",
    "PINS",
    "configure",
    "configuration",
    "pin_for",
    "schema_dir_from_env",
    "cache_dir",
    "store_cached",
    "load_schema",
    "ENV_DIR",
    "ENV_DOWNLOAD",
    "ENV_BASE_URL",
]

ENV_DIR = "MCP_CONFORMANCE_SCHEMA_DIR"
ENV_DOWNLOAD = "MCP_CONFORMANCE_SCHEMA_DOWNLOAD"
ENV_BASE_URL = "MCP_CONFORMANCE_SCHEMA_BASE_URL"

REPOSITORY = "modelcontextprotocol/modelcontextprotocol"
COMMIT = "b0f60ba5409db7a6582440a7b473cc0398890f15"
_DRAFT7 = "http://json-schema.org/draft-07/schema#"
_DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"

DOWNLOAD_TIMEOUT = 30.0  # seconds, per connection attempt and read
MAX_DOWNLOAD_BYTES = 8 * 1024 * 1024  # the largest schema is ~180 kB


class SchemaError(Exception):
    """An official schema could not be found, verified or used.  The message names the fix."""


@dataclass(frozen=True)
class Pin:
    """Where one version's official schema comes from and what it must hash to."""

    version: str
    sha256: str
    size: int
    dialect: str  # "draft-07" | "2020-12"
    schema_uri: str  # the file's "$schema"
    definitions_key: str  # "definitions" | "$defs"
    repository: str = REPOSITORY
    commit: str = COMMIT

    @property
    def path(self) -> str:
        return f"schema/{self.version}/schema.json"

    @property
    def url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/{self.path}"


def _pin(version: str, sha256: str, size: int, dialect: str) -> Pin:
    draft7 = dialect == "draft-07"
    return Pin(
        version,
        sha256,
        size,
        dialect,
        _DRAFT7 if draft7 else _DRAFT2020,
        "definitions" if draft7 else "$defs",
    )


PINS: dict[str, Pin] = {
    p.version: p
    for p in (
        _pin("2024-11-05", "61cea2392d4f284092d09bc84b9ac488c0d5618ac2b38a56942fc5b99fd960ce", 87877, "draft-07"),
        _pin("2025-03-26", "e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131", 89428, "draft-07"),
        _pin("2025-06-18", "af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01", 108234, "draft-07"),
        _pin("2025-11-25", "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7", 174323, "2020-12"),
        _pin("2026-07-28", "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203", 181474, "2020-12"),
    )
}

_lock = threading.RLock()
_configured_dir: Path | None = None
_allow_download: bool | None = None  # None: follow the environment
_loaded: dict[str, dict[str, Any]] = {}

_FIX = (
    "Fix: point MCP_CONFORMANCE_SCHEMA_DIR (or --mcp-schema-dir) at a directory laid out as "
    "<dir>/<version>/schema.json holding the official files of commit {commit} "
    "(https://github.com/{repo}/tree/{commit}/schema), or unset both and allow the download "
    "({env_dl} not 0) so the file is fetched from {url} into {cache}."
)


def configure(schema_dir: str | Path | None, *, allow_download: bool | None = None) -> None:
    """Use ``schema_dir`` (``<dir>/<version>/schema.json``) before anything else; ``None`` clears it.

    ``allow_download`` (keyword-only) forbids or allows the download; ``None`` follows
    ``$MCP_CONFORMANCE_SCHEMA_DOWNLOAD``.
    """
    global _configured_dir, _allow_download
    with _lock:
        _configured_dir = Path(schema_dir).expanduser() if schema_dir is not None else None
        _allow_download = allow_download


def configuration() -> tuple[Path | None, bool | None]:
    """What :func:`configure` was last told: ``(schema_dir, allow_download)`` (to restore it later)."""
    with _lock:
        return _configured_dir, _allow_download


def schema_dir_from_env() -> Path | None:
    """The directory named by ``$MCP_CONFORMANCE_SCHEMA_DIR``, or ``None`` if unset or empty."""
    value = os.environ.get(ENV_DIR, "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """The user cache: ``$XDG_CACHE_HOME/mcp-conformance/schemas`` (default ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base).expanduser() if base else Path.home() / ".cache"
    return root / "mcp-conformance" / "schemas"


def load_schema(version: str) -> dict[str, Any]:
    """The verified official schema of ``version`` (parsed JSON; treat it as read-only).

    Raises :class:`SchemaError` for an unknown version or when no verified file can be had.
    """
    schema = _loaded.get(version)
    if schema is not None:
        return schema
    pin = pin_for(version)
    with _lock:
        schema = _loaded.get(version)
        if schema is None:
            schema = _parse(pin, *_find(pin))
            _loaded[version] = schema
        return schema


# -- internals ---------------------------------------------------------------------------------


def pin_for(version: str) -> Pin:
    """The pinned official schema of ``version``; :class:`SchemaError` naming the valid versions otherwise."""
    pin = PINS.get(version) if isinstance(version, str) else None
    if pin is None:
        raise SchemaError(
            f"unknown MCP protocol version {version!r}: no official schema is pinned for it. "
            f"Valid versions: {', '.join(PINS)}."
        )
    return pin


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download_allowed() -> bool:
    if _allow_download is not None:
        return _allow_download
    return os.environ.get(ENV_DOWNLOAD, "1").strip().lower() not in ("0", "false", "no", "off")


def _fix(pin: Pin) -> str:
    return _FIX.format(
        commit=pin.commit,
        repo=pin.repository,
        env_dl=ENV_DOWNLOAD,
        url=_download_url(pin),
        cache=cache_dir() / pin.version / "schema.json",
    )


def _find(pin: Pin) -> tuple[bytes, str]:
    """The verified bytes of ``pin``'s file and a description of where they came from."""
    explicit = _configured_dir
    origin = "--mcp-schema-dir / configure()"
    if explicit is None:
        explicit = schema_dir_from_env()
        origin = f"${ENV_DIR}"
    if explicit is not None:
        path = explicit / pin.version / "schema.json"
        return _read_verified(pin, path, origin), str(path)

    cached = cache_dir() / pin.version / "schema.json"
    if cached.is_file():
        data = cached.read_bytes()
        if _sha256(data) == pin.sha256:
            return data, str(cached)
        # a stale or corrupt cache entry is ours to repair: fetch it again (below)
    if not _download_allowed():
        raise SchemaError(
            f"MCP schema {pin.version}: no schema directory is configured, the user cache has no "
            f"verified copy ({cached}: {'sha256 mismatch' if cached.is_file() else 'missing'}) "
            f"and downloads are disabled ({ENV_DOWNLOAD}=0). Expected sha256 {pin.sha256}. "
            + _fix(pin)
        )
    data = _download(pin)
    store_cached(cached, data)
    return data, _download_url(pin)


def _read_verified(pin: Pin, path: Path, origin: str) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SchemaError(
            f"MCP schema {pin.version}: {path} does not exist (schema directory from {origin}). "
            f"Expected sha256 {pin.sha256}, actual: no file. " + _fix(pin)
        ) from None
    except OSError as exc:
        raise SchemaError(
            f"MCP schema {pin.version}: cannot read {path} (schema directory from {origin}): {exc}. "
            f"Expected sha256 {pin.sha256}. " + _fix(pin)
        ) from exc
    actual = _sha256(data)
    if actual != pin.sha256:
        raise SchemaError(
            f"MCP schema {pin.version}: sha256 mismatch for {path} (schema directory from {origin}): "
            f"expected {pin.sha256}, actual {actual}. The file is not the pinned official schema "
            f"(wrong version, edited, or a different commit). " + _fix(pin)
        )
    return data


def _download_url(pin: Pin) -> str:
    base = os.environ.get(ENV_BASE_URL, "").strip()
    if base:
        return f"{base.rstrip('/')}/{pin.version}/schema.json"
    return pin.url


def _download(pin: Pin) -> bytes:
    import urllib.error
    import urllib.request

    url = _download_url(pin)
    request = urllib.request.Request(url, headers={"User-Agent": "mcp-conformance schema loader"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:  # noqa: S310 (pinned https URL or an explicit mirror)
            data = response.read(MAX_DOWNLOAD_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()  # an HTTPError holds the open response
        raise SchemaError(
            f"MCP schema {pin.version}: download from {url} failed: HTTP {exc.code} {exc.reason}. "
            f"Expected sha256 {pin.sha256}. " + _fix(pin)
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SchemaError(
            f"MCP schema {pin.version}: download from {url} failed: {exc}. "
            f"Expected sha256 {pin.sha256}. " + _fix(pin)
        ) from exc
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise SchemaError(
            f"MCP schema {pin.version}: download from {url} exceeds {MAX_DOWNLOAD_BYTES} bytes; "
            f"refusing it. Expected sha256 {pin.sha256}. " + _fix(pin)
        )
    actual = _sha256(data)
    if actual != pin.sha256:
        raise SchemaError(
            f"MCP schema {pin.version}: sha256 mismatch for the download from {url}: "
            f"expected {pin.sha256}, actual {actual}. Nothing was cached. " + _fix(pin)
        )
    return data


def store_cached(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file of this process and thread, then a
    rename: concurrent runs never see a partial file); a cache that cannot be written is not an error."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def _parse(pin: Pin, data: bytes, where: str) -> dict[str, Any]:
    try:
        schema = json.loads(data)
    except ValueError as exc:  # cannot happen for a verified file, but say so if it does
        raise SchemaError(f"MCP schema {pin.version}: {where} is not JSON: {exc}") from exc
    if not isinstance(schema, dict) or pin.definitions_key not in schema:
        raise SchemaError(f"MCP schema {pin.version}: {where} has no {pin.definitions_key!r} member")
    return schema


def _reset() -> None:
    """Forget configuration and loaded schemas (for tests)."""
    global _configured_dir, _allow_download
    with _lock:
        _configured_dir = None
        _allow_download = None
        _loaded.clear()
