"""The fleet file (``mcp-conformance server --targets FILE``, ``pytest --mcp-targets FILE``): many
servers in one invocation.

A YAML list (or ``targets:`` mapping to one) of servers, each ``name`` plus ``command`` or
``url``, optional ``transport``, ``versions`` (a list, a comma-separated string or ``all``),
``env`` (a mapping) and ``cwd``::

    - name: reference
      command: mcp-reference-server --transport stdio
    - name: everything-http
      command: npx @modelcontextprotocol/server-everything streamableHttp
      url: http://127.0.0.1:{port}/mcp
      versions: [2025-06-18, 2025-11-25]
      env: {PORT: "{port}"}

Each target is one ordinary ``mcp-conformance server`` run (a child process, the other options of
the command line passed on), so its verdicts are those of a single run; ``--target-jobs`` of them at
a time.  Every run writes its own report into ``<report-dir>/<name>/``; the index
(``<report-dir>/index.json`` and ``index.html``) puts them side by side: targets x areas x
versions.  The exit code is the worst of the runs' (1 over 3 over 0; 130 when interrupted).
"""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["FleetServer", "FleetServerRun", "FleetError", "load_fleet", "run_fleet", "run_fleet_server", "build_index",
           "write_index", "render_index_html"]

KEYS = {"name", "command", "url", "transport", "versions", "version", "env", "cwd"}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
OUTCOMES = ("fail", "error", "warning", "stale", "xfail", "pass", "skip")


class FleetError(Exception):
    """The targets file is unusable (the message names the entry and the fix)."""


@dataclass(frozen=True)
class FleetServer:
    name: str
    command: str | None = None
    url: str | None = None
    transport: str | None = None
    versions: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    def argv(self) -> list[str]:
        out: list[str] = []
        if self.command:
            out += ["--command", self.command]
        if self.url:
            out += ["--url", self.url]
        if self.transport:
            out += ["--transport", self.transport]
        for v in self.versions:
            out += ["--version", v]
        return out


def load_fleet(path: str | Path) -> list[FleetServer]:
    """The servers of the fleet file ``path``; :class:`FleetError` naming what is wrong."""
    import yaml

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FleetError(f"cannot read the targets file {str(p)!r}: {exc.strerror or exc}") from None
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: a date-like scalar that is no date (2025-13-01)
        raise FleetError(f"the targets file {str(p)!r} is not valid YAML: {exc}") from None
    if isinstance(doc, dict) and set(doc) == {"targets"}:
        doc = doc["targets"]
    if not isinstance(doc, list) or not doc:
        raise FleetError(f"the targets file {str(p)!r} must be a non-empty YAML list of targets (or 'targets:' "
                           "with one), each with a name and a command or url")
    from conformance.spec.versions import VERSIONS, Transport

    out: list[FleetServer] = []
    seen: set[str] = set()
    for i, entry in enumerate(doc, 1):
        where = f"target #{i}"
        if not isinstance(entry, dict):
            raise FleetError(f"{where} is {type(entry).__name__}, not a mapping (name: ..., command: ... or url: ...)")
        unknown = sorted(set(map(str, entry)) - KEYS)
        if unknown:
            raise FleetError(f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(KEYS))}")
        name = entry.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise FleetError(f"{where}: 'name' must be a short identifier (letters, digits, . _ -), got {name!r}")
        where = f"target {name!r}"
        if name in seen:
            raise FleetError(f"{where} is listed twice: names must be unique (each gets its own report directory)")
        seen.add(name)
        command, url = entry.get("command"), entry.get("url")
        if not (isinstance(command, str) and command.strip()) and not (isinstance(url, str) and url.strip()):
            raise FleetError(f"{where}: give 'command' (a server to start) or 'url' (a running server), or both "
                               "(a server we start on {port})")
        transport = entry.get("transport")
        if transport is not None and transport not in {t.value for t in Transport}:
            raise FleetError(f"{where}: transport {transport!r} is not one of {', '.join(t.value for t in Transport)}")
        raw = entry.get("versions", entry.get("version"))
        versions: list[str] = []
        if raw is not None:
            items = raw if isinstance(raw, list) else str(raw).split(",")
            for v in (str(x).strip() for x in items):
                if v != "all" and v not in VERSIONS:
                    raise FleetError(f"{where}: unknown version {v!r}; the versions are {', '.join(VERSIONS)} or 'all'")
                versions.append(v)
        env = entry.get("env") or {}
        if not isinstance(env, dict):
            raise FleetError(f"{where}: 'env' must be a mapping of variable names to values")
        cwd = entry.get("cwd")
        out.append(FleetServer(name, command if isinstance(command, str) else None, url if isinstance(url, str) else None,
                              transport, tuple(versions), {str(k): str(v) for k, v in env.items()},
                              str(cwd) if cwd is not None else None))
    return out


@dataclass
class FleetServerRun:
    spec: FleetServer
    report_dir: Path
    exit_code: int | None = None
    wall: float = 0.0
    log: str = ""


def run_fleet(targets: Sequence[FleetServer], passthrough: Sequence[str], report_dir: str | Path, jobs: int,
                *, echo: Any = None) -> tuple[int, list[FleetServerRun]]:
    """Run every target (``jobs`` at a time) as ``mcp-conformance server <passthrough> <target>``;
    write the index; the worst exit code and the runs."""
    root = Path(report_dir)
    root.mkdir(parents=True, exist_ok=True)
    echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    runs = [FleetServerRun(t, root / t.name) for t in targets]
    live: set[subprocess.Popen[str]] = set()
    lock = threading.Lock()
    stopping = threading.Event()

    def one(run: FleetServerRun) -> None:
        def register(proc: subprocess.Popen[str]) -> bool:
            with lock:
                if stopping.is_set():
                    return False
                live.add(proc)
                return True

        def release(proc: subprocess.Popen[str]) -> None:
            with lock:
                live.discard(proc)

        if not stopping.is_set() and run_fleet_server(run, passthrough, register=register, release=release):
            echo(f"{run.spec.name}: exit {run.exit_code} in {run.wall:.1f} s -- {_last_line(run.log)}")

    interrupted = False
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="target")
    try:
        futures = [pool.submit(one, r) for r in runs]
        for f in futures:
            while not f.done():
                time.sleep(0.05)
            f.result()
    except KeyboardInterrupt:
        interrupted = True
        stopping.set()
        with lock:
            for proc in live:  # each run stops its server and writes its partial report, as on Ctrl-C
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 20
        for proc in list(live):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    echo(f"index: {write_index(root, runs)} ({len(runs)} targets)")
    if interrupted:
        return 130, runs
    return _worst_exit([r.exit_code for r in runs]), runs


def run_fleet_server(run: FleetServerRun, passthrough: Sequence[str], *, register: Any = None, release: Any = None) -> bool:
    """One target as ``mcp-conformance server <passthrough> <target> --report-dir <its dir>``: sets
    ``run.exit_code``, ``run.log`` (also written to ``run.log`` in its directory) and ``run.wall``.
    ``register(proc)`` right after the start may refuse it (False: the runs are being stopped; the
    child is killed); ``release(proc)`` follows its end.  On Ctrl-C the child gets SIGINT (it stops
    its server and writes its partial report), then SIGKILL after 20 s.  False when the run was
    refused."""
    argv = [sys.executable, "-m", "conformance.cli", "server", *passthrough, *run.spec.argv(),
            "--report-dir", str(run.report_dir), "-q"]
    # a run of its own: not part of the pytest(-xdist) session that may have started it
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST") and k != "PYTEST_CURRENT_TEST"}
    env.update(run.spec.env)
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True, env=env, cwd=run.spec.cwd)
    if register is not None and not register(proc):
        proc.kill()
        proc.wait()
        return False
    try:
        out, _ = proc.communicate()
    except KeyboardInterrupt:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        raise
    finally:
        if release is not None:
            release(proc)
    run.exit_code, run.log, run.wall = proc.returncode, out, time.monotonic() - started
    run.report_dir.mkdir(parents=True, exist_ok=True)
    (run.report_dir / "run.log").write_text(out, encoding="utf-8")
    return True


def write_index(root: Path, runs: Sequence[FleetServerRun]) -> Path:
    """``index.json`` and ``index.html`` of ``runs`` under ``root``; the HTML path."""
    index = build_index(runs)
    (root / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    (root / "index.html").write_text(render_index_html(index), encoding="utf-8")
    return root / "index.html"


def _worst_exit(codes: Sequence[int | None]) -> int:
    order = {1: 4, 3: 3, 2: 2, 130: 5}
    worst = 0
    for c in codes:
        c = 3 if c is None else c
        if order.get(c, 1 if c else 0) > order.get(worst, 0):
            worst = c
    return worst


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and "requirements x versions" in ln]
    if lines:
        return lines[-1]
    rest = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return rest[-1][:200] if rest else "(no output)"


def build_index(runs: Sequence[FleetServerRun]) -> dict[str, Any]:
    """The comparison: per target, its run and, per area and version, the count of each outcome."""
    targets = []
    areas: set[str] = set()
    versions: set[str] = set()
    for run in runs:
        path = run.report_dir / "report.json"
        report = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        matrix: dict[str, dict[str, dict[str, int]]] = {}
        if report is not None:
            for r in report.get("results", []):
                cell = matrix.setdefault(r.get("area") or "other", {}).setdefault(r["version"], {})
                cell[r["outcome"]] = cell.get(r["outcome"], 0) + 1
                areas.add(r.get("area") or "other")
                versions.add(r["version"])
        targets.append({
            "name": run.spec.name,
            "command": run.spec.command, "url": run.spec.url,
            "transport": report.get("transport") if report else run.spec.transport,
            "versions": report.get("versions") if report else list(run.spec.versions),
            # a run made elsewhere (a pytest-xdist worker) is known by its report
            "exit_code": run.exit_code if run.exit_code is not None else (report or {}).get("exit_code"),
            "wall_seconds": round(run.wall or (report or {}).get("duration") or 0.0, 2),
            "report": f"{run.spec.name}/report.json" if report is not None else None,
            "html": f"{run.spec.name}/report.html" if (run.report_dir / "report.html").exists() else None,
            "summary": report.get("summary", {}).get("by_outcome") if report else None,
            "scores": (report.get("summary") or {}).get("scores") if report else None,
            "errors": len(report.get("errors", [])) if report else None,
            "matrix": matrix,
        })
    from conformance import __version__
    from conformance.spec.versions import VERSIONS

    return {"format": "mcp-conformance-index/1", "suite": {"name": "mcp-conformance", "version": __version__},
            "areas": sorted(areas), "versions": [v for v in VERSIONS if v in versions], "targets": targets}


def _worst(cell: Mapping[str, int]) -> str:
    return next((o for o in OUTCOMES if cell.get(o)), "none")


def render_index_html(index: Mapping[str, Any]) -> str:
    """A self-contained page: one row per area and version, one column per target."""
    e = html.escape
    targets = index["targets"]
    head = "".join(
        f"<th><a href=\"{e(t['html'])}\">{e(t['name'])}</a>" if t.get("html") else f"<th>{e(t['name'])}"
        for t in targets)
    summary = "".join(
        f"<td>exit {t['exit_code']}<br>{e(_scores(t))}</td>" for t in targets)
    rows = []
    for area in index["areas"]:
        for i, version in enumerate(index["versions"]):
            cells = []
            for t in targets:
                cell = t["matrix"].get(area, {}).get(version)
                if not cell:
                    cells.append("<td class=none>&ndash;</td>")
                    continue
                worst = _worst(cell)
                text = " ".join(f"{n} {o}" for o in OUTCOMES if (n := cell.get(o)))
                cells.append(f"<td class={worst}>{e(text)}</td>")
            first = f"<th rowspan={len(index['versions'])}>{e(area)}</th>" if i == 0 else ""
            rows.append(f"<tr>{first}<td class=v>{e(version)}</td>{''.join(cells)}</tr>")
    return f"""<!doctype html><html lang=en><meta charset=utf-8><title>MCP conformance: {len(targets)} targets</title>
<style>body{{font:14px system-ui,sans-serif;margin:1.5em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}}
.pass{{background:#d9f2d9}}.fail,.error{{background:#f8d0d0}}.warning,.stale{{background:#fbecc0}}
.skip,.xfail{{background:#eee}}.none{{color:#aaa}}.v{{font-family:monospace}}</style>
<h1>MCP conformance: {len(targets)} targets side by side</h1>
<p>{e(index['suite']['name'])} {e(index['suite']['version'])}. Each cell: the requirement verdicts of that area and
version (worst first decides the colour); each target's own report is linked from its name.</p>
<table><tr><th>area</th><th>version</th>{head}</tr><tr><td></td><td>run</td>{summary}</tr>
{''.join(rows)}</table></html>
"""


def _scores(t: Mapping[str, Any]) -> str:
    scores = t.get("scores") or {}
    parts = []
    for level in ("MUST", "SHOULD"):
        s = scores.get(level) or {}
        if s.get("percent") is not None:
            parts.append(f"{level} {s['percent']:g}%")
    return ", ".join(parts) or "no verdicts"
