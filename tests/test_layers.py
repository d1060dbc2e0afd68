"""The layer rules of ARCHITECTURE.md, enforced.

Pure modules (spec with its outcomes, schema, wire with its transcript, report, the pure half of
the fuzzer) must not import I/O modules, neither directly (source scan) nor transitively (a fresh
interpreter imports the module and we look at what got loaded).  The reference peers must not
import the runtime, scenarios or the ``mcp`` SDK.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "conformance"

PURE_PACKAGES = ["spec", "schema", "wire", "report"]
PURE_MODULES = [  # (spec/outcomes and wire/transcript are in their packages)
                # the sans-I/O half of the fuzzer (its engine and command are the I/O and entry layers)
                "fuzz/__init__", "fuzz/corpus", "fuzz/operators", "fuzz/generate", "fuzz/oracle", "fuzz/client_oracle",
                "fuzz/shrink", "fuzz/replay", "fuzz/window"]
FORBIDDEN_IN_PURE = {"anyio", "httpx", "httpx_sse", "subprocess", "asyncio", "socket", "conformance.transports", "conformance.runtime", "starlette", "uvicorn", "pytest"}
FORBIDDEN_IN_REFERENCE = {"conformance.runtime", "conformance.scenarios", "conformance.server", "conformance.client",
                          "conformance.plugin", "conformance.options", "conformance.fleet", "conformance.cli", "mcp"}
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
    code = ("import json, sys\nfrom conformance.runtime.registry import scenarios\nscenarios('server'); scenarios('client')\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    hits = _hits(set(json.loads(out.stdout)), {"httpx", "httpcore", "starlette", "uvicorn", "conformance.transports.http"})
    assert not hits, f"importing the scenario modules loaded {sorted(hits)}"


# -- import circles and private names across modules -------------------------------------------------
# The runtime rebuild (issue "One runtime, two roles") cut every circle and every private name
# imported across modules; no exception is kept: the tests below fail on any.
GRAPHED = ("conformance", "reference_server", "reference_client")


def _project_modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in GRAPHED:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _module_imports(name: str, path: Path, modules: dict[str, Path]) -> dict[str, set[str]]:
    """The project modules ``name`` imports when it runs (module level or inside functions; not
    ``if TYPE_CHECKING:`` blocks, which never run), each with the names it takes from it,
    attributes read off an imported module included (``engine._rss_kib``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_block(child):
                for other in child.orelse:  # type: ignore[attr-defined]
                    walk_one(other)
                continue
            walk_one(child)

    def walk_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.setdefault(alias.name, set())
                    if alias.asname:
                        aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    found.setdefault(sub, set())
                    aliases[alias.asname or alias.name] = sub
                elif base in modules:
                    found.setdefault(base, set()).add(alias.name)
        walk(node)

    walk(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            found.setdefault(aliases[node.value.id], set()).add(node.attr)
    found.pop(name, None)
    return found


@functools.lru_cache(maxsize=1)  # one drawing per session: the graph tests share it
def _import_graph() -> dict[str, dict[str, set[str]]]:
    modules = _project_modules()
    return {name: _module_imports(name, path, modules) for name, path in modules.items()}


def _circles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def test_the_circle_finder_finds_a_circle_and_only_circles() -> None:
    graph = {"a": {"b": set()}, "b": {"c": set()}, "c": {"a": set()}, "d": {"a": set()}, "e": {}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b": set()}, "b": {}}) == []


def test_no_import_circle() -> None:
    circles = _circles(_import_graph())
    assert not circles, f"import circles (cut them; ARCHITECTURE.md): {circles}"


def test_no_private_name_imported_across_modules() -> None:
    found = sorted((name, target, taken) for name, targets in _import_graph().items() for target, names in targets.items()
                   for taken in names if taken.startswith("_") and not taken.startswith("__"))
    assert not found, f"private names used across modules (make them public, or move them): {found}"


def test_the_private_name_finder_sees_a_from_import_and_an_attribute_read(tmp_path: Path) -> None:
    """The graph the two tests above read: ``from m import _x`` and ``mm._y`` (``import m as mm``) are both seen (so an
    empty finding means none, not a blind finder)."""
    (tmp_path / "m.py").write_text("_x = 1\n_y = 2\n", encoding="utf-8")
    (tmp_path / "n.py").write_text("from m import _x\nimport m as mm\nprint(mm._y)\n", encoding="utf-8")
    modules = {"m": tmp_path / "m.py", "n": tmp_path / "n.py"}
    assert _module_imports("n", modules["n"], modules) == {"m": {"_x", "_y"}}


ENTRY = {"conformance.cli", "conformance.options", "conformance.fleet", "conformance.plugin",
         "conformance.fuzz.pytest_fuzz", "pytest"}
#: ARCHITECTURE.md's table, the I/O rooms: what each must not import (nothing above it; the roles
#: not each other; the runtime no role)
NOT_UPWARD: dict[str, set[str]] = {
    "conformance.runtime": ENTRY | {"conformance.server", "conformance.client", "conformance.scenarios", "conformance.fuzz"},
    "conformance.server": ENTRY | {"conformance.client", "conformance.scenarios", "conformance.fuzz"},
    "conformance.client": ENTRY | {"conformance.server", "conformance.scenarios", "conformance.fuzz"},
    "conformance.scenarios": ENTRY | {"conformance.fuzz"},
    # the fuzzer's engines and campaigns sit under the entry points (its pytest plugin is one)
    "conformance.fuzz": ENTRY,
    # the suite's authorization server: beside the runtime, used by the roles and the plugin
    "conformance.auth": ENTRY | {"conformance.runtime", "conformance.server", "conformance.client",
                                 "conformance.scenarios", "conformance.fuzz"},
}


@pytest.mark.parametrize("room", sorted(NOT_UPWARD))
def test_no_upward_import(room: str) -> None:
    graph = _import_graph()
    modules = _project_modules()
    bad = {}
    for name, targets in graph.items():
        if name != room and not name.startswith(room + ".") or name in ENTRY:
            continue
        reached = set(targets) | _imports(modules[name])  # project modules, and third-party ones (pytest)
        hits = sorted(_hits(reached, NOT_UPWARD[room]))
        if hits:
            bad[name] = hits
    assert not bad, f"upward imports (ARCHITECTURE.md, layers and imports): {bad}"


#: the entry layer's own order: the option table under the plugin and the fleet, the plugin under the
#: CLI (which imports the plugin's report key and the fleet)
ENTRY_BELOW: dict[str, set[str]] = {
    "conformance.options": {"conformance.plugin", "conformance.fleet", "conformance.cli", "conformance.fuzz"},
    "conformance.fleet": {"conformance.plugin", "conformance.cli", "pytest"},
    "conformance.plugin": {"conformance.cli"},
}


@pytest.mark.parametrize("room", sorted(ENTRY_BELOW))
def test_the_entry_rooms_import_nothing_above_them(room: str) -> None:
    graph = _import_graph()
    modules = _project_modules()
    bad = {name: sorted(_hits(set(targets) | _imports(modules[name]), ENTRY_BELOW[room]))
           for name, targets in graph.items() if name == room or name.startswith(room + ".")}
    bad = {name: hits for name, hits in bad.items() if hits}
    assert not bad, f"upward imports in the entry layer (ARCHITECTURE.md): {bad}"


#: run by path in another process's environment (``python -S``: the client's stdio server; the
#: client's ``BROWSER``): no import of the project, nor of anything outside the standard library
BY_PATH = ("client/relay.py", "auth/browser.py")


@pytest.mark.parametrize("rel", BY_PATH)
def test_the_scripts_run_by_path_use_the_standard_library_only(rel: str) -> None:
    tops = {name.split(".")[0] for name in _imports(PKG / rel)}
    outside = sorted(t for t in tops if t not in sys.stdlib_module_names)
    assert not outside, f"conformance/{rel} imports {outside}: it runs by path with the standard library only"


def test_the_reference_server_core_knows_no_feature() -> None:
    """The core is composed with its features (``features.build_server``), never the reverse."""
    graph = _import_graph()
    core_side = {"reference_server.core", "reference_server.messages", "reference_server.faults", "reference_server.errors"}
    for name in core_side:
        reached = {t for t in graph[name] if t.startswith("reference_server.features")}
        assert not reached, f"{name} imports {sorted(reached)}"
