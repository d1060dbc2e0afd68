"""Fixtures for the report tests: real reports (stored and produced by a live run) and helpers."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SCHEMA_FILE = ROOT / "conformance" / "report" / "report.schema.json"
XSD_FILE = DATA / "junit-10.xsd"
BROKEN = ROOT / "fixtures" / "broken_servers" / "serve.py"
CLI = [sys.executable, "-m", "conformance.cli"]

# real runs, stored gzipped: the reference server (stdio and streamable HTTP, every version),
# npm server-everything (stdio, every version), and a broken server with an official-format baseline
STORED = sorted(p.name for p in DATA.glob("report-*.json.gz"))


@lru_cache(maxsize=None)
def _stored(name: str) -> str:
    return gzip.decompress((DATA / name).read_bytes()).decode("utf-8")


def stored(name: str) -> dict[str, Any]:
    """A fresh copy of a stored real report."""
    return json.loads(_stored(name))


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def schema_errors(report: Any) -> list[str]:
    errors = sorted(_validator().iter_errors(report), key=lambda e: list(e.absolute_path))
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors]


def validate_report(report: Any) -> None:
    errors = schema_errors(report)
    assert not errors, "\n".join(errors[:5])


@pytest.fixture(params=STORED)
def real_report(request: pytest.FixtureRequest) -> dict[str, Any]:
    return stored(request.param)


def small(report: dict[str, Any], per_outcome: int = 3) -> dict[str, Any]:
    """``report`` cut down to a few results of each outcome (summary and exit code recomputed)."""
    from conformance.report.model import exit_code, summarize

    rep = copy.deepcopy(report)
    seen: dict[str, int] = {}
    kept = []
    for r in rep["results"]:
        if seen.get(r["outcome"], 0) < per_outcome:
            seen[r["outcome"]] = seen.get(r["outcome"], 0) + 1
            kept.append(r)
    rep["results"] = kept
    rep["summary"] = summarize(kept)
    rep["exit_code"] = exit_code(rep)
    return rep


def hostile_report() -> dict[str, Any]:
    """A real report whose peer-controlled strings are hostile (markup, quotes, control
    characters, a javascript: URL, backticks, pipes)."""
    rep = stored("report-server-everything-stdio.json.gz")
    evil = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>|`x`\x00\x07\x1b[31m]]>&amp;'
    rep["implementation"]["server_info"] = {"name": evil, "version": evil}
    rep["target"]["description"] = evil
    failing = [r for r in rep["results"] if r["outcome"] in ("fail", "warning")]
    assert failing
    for r in failing:
        r["reason"] = evil
        for v in r["violations"]:
            v["message"] = evil
            v["problem"] = "HostileProblem"
            v["expected"] = {"k": evil}
            v["actual"] = evil
            v["json_path"] = evil
        for e in r["transcript"]:
            e["raw"] = {"text": evil + "</script></pre></td>"}
            e["connection"] = evil
    first = failing[0]
    first["url"] = "javascript:alert(3)"
    return rep


def without_baseline(report: dict[str, Any]) -> dict[str, Any]:
    from conformance.report.baseline import strip_baseline

    return strip_baseline(copy.deepcopy(report))


def run_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def broken_target(defect: str = "ping-answers-error") -> list[str]:
    return ["--command", subprocess.list2cmdline([sys.executable, str(BROKEN), defect])]


# a narrow selection: fast, and it holds a pass, a known failure and an entry that is stale
LIVE_SELECTION = ["--version", "2025-11-25", "--select", "ping.*", "--select", "lifecycle.initialize.*", "--timeout", "5"]


@pytest.fixture(scope="session")
def live_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """``mcp-conformance server`` against a broken server (ping answered with an error) with an
    official-format baseline listing ``ping`` (failing: xfail), ``server-initialize`` (passing:
    stale) and a client scenario (unmatched)."""
    cwd = tmp_path_factory.mktemp("live")
    proc = run_cli("server", *broken_target(), *LIVE_SELECTION, "--report-dir", "out",
                   "--baseline", str(DATA / "baseline-official.yml"), cwd=cwd)
    assert (cwd / "out" / "report.json").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, cwd / "out"


@pytest.fixture
def live_report(live_run: tuple[subprocess.CompletedProcess, Path]) -> dict[str, Any]:
    return json.loads((live_run[1] / "report.json").read_text(encoding="utf-8"))
