"""The layer rules of ARCHITECTURE.md, enforced.

Pure modules (spec, schema, wire, checks, outcomes, transcript, report) must not import I/O
modules, neither directly (source scan) nor transitively (a fresh interpreter imports the module
and we look at what got loaded).  The reference peers must not import the raw peer, scenarios or
the ``mcp`` SDK.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "conformance"

PURE_PACKAGES = ["spec", "schema", "wire", "report"]
PURE_MODULES = ["outcomes", "transcript",
                # the sans-I/O half of the fuzzer (its engine and command are the I/O and entry layers)
                "fuzz/__init__", "fuzz/corpus", "fuzz/operators", "fuzz/generate", "fuzz/oracle", "fuzz/client_oracle",
                "fuzz/shrink", "fuzz/replay"]
FORBIDDEN_IN_PURE = {"anyio", "httpx", "httpx_sse", "subprocess", "asyncio", "socket", "conformance.transports", "conformance.peer", "starlette", "uvicorn", "pytest"}
FORBIDDEN_IN_REFERENCE = {"conformance.peer", "conformance.scenarios", "conformance.context", "conformance.runner", "conformance.pytest_plugin", "mcp"}
# Imports allowed lazily inside a function (not at module level): the schema downloader.
LAZY_ALLOWED = {("schema/loader.py", "urllib.request")}


def _pure_files() -> list[Path]:
    files = [PKG / f"{m}.py" for m in PURE_MODULES]
    for pkg in PURE_PACKAGES:
        files.extend(sorted((PKG / pkg).rglob("*.py")))
    return [f for f in files if f.exists()]


def _imports(path: Path, *, module_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _hits(names: set[str], forbidden: set[str]) -> set[str]:
    return {n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden)}


@pytest.mark.parametrize("path", _pure_files(), ids=lambda p: str(p.relative_to(PKG)))
def test_pure_module_source_imports_no_io(path: Path) -> None:
    rel = str(path.relative_to(PKG))
    hits = _hits(_imports(path), FORBIDDEN_IN_PURE)
    hits -= {name for (f, name) in LAZY_ALLOWED if f == rel and name not in _imports(path, module_level_only=True)}
    assert not hits, f"{rel} imports {sorted(hits)}: pure layers do no I/O (ARCHITECTURE.md)"


def test_pure_modules_do_not_load_io_transitively() -> None:
    modules = [f"conformance.{m.replace('/', '.').removesuffix('.__init__')}" for m in PURE_MODULES] + [f"conformance.{p}" for p in PURE_PACKAGES]
    for path in _pure_files():
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        modules.append(name)
    code = (
        "import importlib, json, sys\n"
        f"for m in {sorted(set(modules))!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout))
    hits = _hits(loaded, FORBIDDEN_IN_PURE - {"socket"})  # the stdlib may pull socket in via email/urllib helpers
    assert not hits, f"importing the pure layers loaded {sorted(hits)}"


@pytest.mark.parametrize("path", sorted((ROOT / "reference_server").rglob("*.py")) + sorted((ROOT / "reference_client").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_reference_peers_stay_off_the_suite_and_the_sdk(path: Path) -> None:
    hits = _hits(_imports(path), FORBIDDEN_IN_REFERENCE)
    assert not hits, f"{path.relative_to(ROOT)} imports {sorted(hits)} (ARCHITECTURE.md: reference peers use spec/schema/wire only)"


def test_the_scenario_modules_import_no_http_stack() -> None:
    """Every run imports every scenario module (to register them); a stdio run must not pay for
    httpx (about 70 ms of start-up) or the HTTP server stack: those are imported where an HTTP
    connection is made."""
    code = ("import json, sys\nfrom conformance.registry import scenarios\nscenarios('server'); scenarios('client')\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    hits = _hits(set(json.loads(out.stdout)), {"httpx", "httpcore", "starlette", "uvicorn", "conformance.transports.http"})
    assert not hits, f"importing the scenario modules loaded {sorted(hits)}"
