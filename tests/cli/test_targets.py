"""``mcp-conformance server --targets FILE``: many servers in one invocation, one report each and
an index that puts them side by side; each target's verdicts are those of its single run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.fleet import FleetError, load_fleet

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
BROKEN = f"{PY} {ROOT / 'fixtures' / 'broken_servers' / 'serve.py'} result-and-error --transport stdio"
REFERENCE = f"{PY} -m reference_server --transport stdio"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _verdicts(report: dict) -> dict[tuple[str, str], str]:
    return {(r["requirement"], r["version"]): r["outcome"] for r in report["results"]}


@pytest.mark.parametrize("text,fragment", [
    ("", "non-empty YAML list"),
    ("- name: a\n", "give 'command'"),
    ("- name: a\n  command: x\n  colour: red\n", "unknown key(s) colour"),
    ("- name: a\n  command: x\n- name: a\n  url: http://127.0.0.1:1/mcp\n", "listed twice"),
    ("- name: a\n  command: x\n  versions: [2025-13-01]\n", "not valid YAML"),
    ("- name: a\n  command: x\n  versions: ['2025-12-01']\n", "unknown version '2025-12-01'"),
    ("- name: a\n  command: x\n  transport: carrier-pigeon\n", "transport 'carrier-pigeon'"),
    ("- name: 'a b'\n  command: x\n", "'name' must be a short identifier"),
    ("- [1, 2]\n", "not a mapping"),
    ("- name: a\n  command: x\n  env: [A]\n", "'env' must be a mapping"),
    ("{", "not valid YAML"),
])
def test_a_bad_targets_file_is_named(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "targets.yml"
    path.write_text(text)
    with pytest.raises(FleetError, match=None) as info:
        load_fleet(path)
    assert fragment in str(info.value)


def test_targets_file_forms(tmp_path: Path) -> None:
    path = tmp_path / "targets.yml"
    path.write_text("targets:\n  - name: a\n    command: x\n    versions: 2025-06-18, 2025-11-25\n    env: {K: 1}\n")
    (t,) = load_fleet(path)
    assert t.versions == ("2025-06-18", "2025-11-25") and t.env == {"K": "1"}
    assert t.argv() == ["--command", "x", "--version", "2025-06-18", "--version", "2025-11-25"]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "targets.yml"
    path.write_text(f"- name: ref\n  command: {REFERENCE}\n")
    run = _cli("server", "--targets", str(path), "--command", REFERENCE, cwd=tmp_path)
    assert run.returncode == 2 and "drop --command" in run.stderr
    run = _cli("server", "--targets", str(tmp_path / "missing.yml"), cwd=tmp_path)
    assert run.returncode == 2 and "cannot read the targets file" in run.stderr


def test_each_target_gets_its_single_run_verdicts_and_the_index_puts_them_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "targets.yml"
    path.write_text(f"- name: reference\n  command: {REFERENCE}\n- name: broken\n  command: {BROKEN}\n")
    run = _cli("server", "--targets", str(path), "--version", "2025-11-25", "--timeout", "5",
               "--report-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 1, run.stderr[-2000:]  # the broken server fails one MUST
    index = json.loads((tmp_path / "out" / "index.json").read_text())
    assert [t["name"] for t in index["targets"]] == ["reference", "broken"]
    assert [t["exit_code"] for t in index["targets"]] == [0, 1]
    html = (tmp_path / "out" / "index.html").read_text()
    assert 'href="reference/report.html"' in html and 'href="broken/report.html"' in html
    single = _cli("server", "--command", BROKEN, "--version", "2025-11-25", "--timeout", "5",
                  "--report-dir", str(tmp_path / "single"), cwd=tmp_path)
    assert single.returncode == 1
    together = json.loads((tmp_path / "out" / "broken" / "report.json").read_text())
    alone = json.loads((tmp_path / "single" / "report.json").read_text())
    assert _verdicts(together) == _verdicts(alone)
    counts = {}
    for r in together["results"]:
        cell = counts.setdefault(r["area"], {}).setdefault(r["version"], {})
        cell[r["outcome"]] = cell.get(r["outcome"], 0) + 1
    assert index["targets"][1]["matrix"] == counts
    assert any(cell.get("fail") for area in counts.values() for cell in area.values())


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_pytest_xdist_spreads_the_targets_and_gives_the_single_run_verdicts(tmp_path: Path) -> None:
    """``pytest -n 2 --mcp-targets FILE``: one item per target (kept on one worker), each target's
    report that of its single run, and the index written once, by the controller."""
    path = tmp_path / "targets.yml"
    path.write_text(f"- name: reference\n  command: {REFERENCE}\n- name: broken\n  command: {BROKEN}\n")
    run = _pytest("-n", "2", "--dist", "loadgroup", f"--mcp-targets={path}", "--mcp-version", "2025-11-25",
                  "--mcp-timeout", "5", f"--mcp-report-dir={tmp_path / 'out'}", "-rA", cwd=tmp_path)
    assert run.returncode == 1, run.stdout[-3000:]  # the broken server fails one MUST
    assert "PASSED mcp-targets::reference" in run.stdout and "FAILED mcp-targets::broken" in run.stdout
    assert "result-and-error" in run.stdout or "FAIL MUST" in run.stdout  # the failing requirement is named
    index = json.loads((tmp_path / "out" / "index.json").read_text())
    assert [(t["name"], t["exit_code"]) for t in index["targets"]] == [("reference", 0), ("broken", 1)]
    for name, command in (("reference", REFERENCE), ("broken", BROKEN)):
        single = _cli("server", "--command", command, "--version", "2025-11-25", "--timeout", "5",
                      "--report-dir", str(tmp_path / f"single-{name}"), cwd=tmp_path)
        assert single.returncode == (0 if name == "reference" else 1)
        spread = json.loads((tmp_path / "out" / name / "report.json").read_text())
        alone = json.loads((tmp_path / f"single-{name}" / "report.json").read_text())
        assert _verdicts(spread) == _verdicts(alone), name


def test_pytest_fleet_usage_errors(tmp_path: Path) -> None:
    path = tmp_path / "targets.yml"
    path.write_text("- name: a\n")
    run = _pytest(f"--mcp-targets={path}", cwd=tmp_path)
    assert run.returncode == 4 and "give 'command'" in run.stderr
    path.write_text(f"- name: ref\n  command: {REFERENCE}\n")
    run = _pytest(f"--mcp-targets={path}", "--mcp-server-command", REFERENCE, cwd=tmp_path)
    assert run.returncode == 4 and "--mcp-targets names the servers" in run.stderr
    # one target without --mcp-targets is still refused under xdist, with the way to do it
    run = _pytest("-n", "2", "--mcp-server-command", REFERENCE, cwd=tmp_path)
    assert run.returncode == 4 and "--mcp-targets FILE" in run.stderr


def test_a_run_started_from_inside_an_xdist_worker_is_a_session_of_its_own(tmp_path: Path) -> None:
    """A test suite under ``pytest -n`` that runs ``mcp-conformance`` (the CLI or the plugin in a
    pytest of its own) passes PYTEST_XDIST_WORKER on: that run is not an xdist worker and is not
    refused."""
    import os

    env = {**os.environ, "PYTEST_XDIST_WORKER": "gw1", "PYTEST_XDIST_WORKER_COUNT": "2"}
    cli = subprocess.run([PY, "-m", "conformance.cli", "server", "--command", REFERENCE, "--version", "2025-11-25",
                          "--report-dir", str(tmp_path / "cli"), "-q"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert cli.returncode == 0, cli.stdout[-2000:] + cli.stderr[-2000:]
    plugin = subprocess.run([PY, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--mcp-server-command", REFERENCE,
                             "--mcp-version", "2025-11-25", f"--mcp-report-dir={tmp_path / 'plugin'}"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert plugin.returncode == 0, plugin.stdout[-2000:] + plugin.stderr[-2000:]
    assert (tmp_path / "plugin" / "report.json").is_file()
