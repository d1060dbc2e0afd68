"""The CLI writes every rendering, applies baselines, and re-renders offline; exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from conformance.report.render import FILES, render

from .conftest import LIVE_SELECTION, broken_target, run_cli, small, stored, validate_report

ALL_FILES = {name for names in FILES.values() for name in names}


def test_server_writes_every_rendering_and_a_stale_entry_fails_the_run(live_run: tuple[subprocess.CompletedProcess, Path]) -> None:
    proc, out = live_run
    assert {p.name for p in out.iterdir()} == ALL_FILES
    report = json.loads((out / "report.json").read_text())
    validate_report(report)
    assert report["baseline"]["expected"] == ["ping"] and report["baseline"]["stale"] == ["server-initialize"]
    assert report["baseline"]["unmatched"] == ["initialize"]
    assert proc.returncode == 1 == report["exit_code"]  # only because of the stale entry
    assert "stale: server-initialize passes now; remove it from the baseline" in proc.stdout
    assert "xfailed" in proc.stdout and " failed" not in proc.stdout.split("====")[-1]


def test_every_file_is_a_function_of_report_json(live_run: tuple[subprocess.CompletedProcess, Path]) -> None:
    _, out = live_run
    report = json.loads((out / "report.json").read_text())
    for name, text in render(report, [f for f in FILES if f != "json"]).items():
        assert (out / name).read_text(encoding="utf-8") == text, name


def test_report_rerenders_offline(live_run: tuple[subprocess.CompletedProcess, Path], tmp_path: Path) -> None:
    _, out = live_run
    shutil.copy(out / "report.json", tmp_path / "report.json")
    proc = run_cli("report", "report.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # the report's own exit code (a stale entry)
    for name in ALL_FILES - {"report.json"}:
        assert (tmp_path / name).read_text(encoding="utf-8") == (out / name).read_text(encoding="utf-8"), name
    assert (tmp_path / "report.json").read_bytes() == (out / "report.json").read_bytes()  # untouched without --baseline


def _main(*args: str) -> int:
    from conformance.cli import main

    return main(list(args))


def test_report_applies_a_new_baseline(live_run: tuple[subprocess.CompletedProcess, Path], tmp_path: Path, capsys) -> None:
    _, out = live_run
    (tmp_path / "baseline.yml").write_text("server:\n  - ping\n")
    rc = _main("report", str(out / "report.json"), "--out", str(tmp_path / "re"), "--baseline", str(tmp_path / "baseline.yml"))
    assert rc == 0, capsys.readouterr()
    report = json.loads((tmp_path / "re" / "report.json").read_text())
    validate_report(report)
    assert report["baseline"]["stale"] == [] and report["exit_code"] == 0
    assert {p.name for p in (tmp_path / "re").iterdir()} == ALL_FILES
    assert "0 stale" in capsys.readouterr().out


def test_report_writes_only_the_formats_asked_for(live_run: tuple[subprocess.CompletedProcess, Path], tmp_path: Path, capsys) -> None:
    _, out = live_run
    rc = _main("report", str(out / "report.json"), "--out", str(tmp_path / "x"), "--html", "--badge", "-q")
    assert rc == 1 and capsys.readouterr().out == ""
    assert {p.name for p in (tmp_path / "x").iterdir()} == {"report.json", "report.html", "badge.svg", "badge.json"}


def test_report_usage_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert _main("report", str(tmp_path / "missing.json")) == 2 and "cannot read" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{not json")
    assert _main("report", str(tmp_path / "bad.json")) == 2 and "is not JSON" in capsys.readouterr().err
    (tmp_path / "other.json").write_text(json.dumps({"format": "something-else"}))
    assert _main("report", str(tmp_path / "other.json")) == 2 and "not a valid report.json" in capsys.readouterr().err
    (tmp_path / "r.json").write_text(json.dumps(small(stored("report-reference-stdio.json.gz"))))
    (tmp_path / "typo.yml").write_text("server:\n  - tools-call: check\n")
    assert _main("report", str(tmp_path / "r.json"), "--baseline", str(tmp_path / "typo.yml")) == 2
    assert "Remove the space after the colon" in capsys.readouterr().err
    assert _main("report", str(tmp_path / "r.json"), "--baseline", str(tmp_path / "nope.yml")) == 2
    assert "nope.yml" in capsys.readouterr().err
    rep = small(stored("report-reference-stdio.json.gz"), per_outcome=60)
    del rep["results"][55]["outcome"]  # outside the schema-checked sample: the per-result check finds it
    (tmp_path / "late.json").write_text(json.dumps(rep))
    assert _main("report", str(tmp_path / "late.json")) == 2 and "results/55: missing outcome" in capsys.readouterr().err
    assert not (tmp_path / "report.html").exists()


def test_server_report_format_and_baseline_options(tmp_path: Path) -> None:
    (tmp_path / "ping.txt").write_text("# known: ping answers an error\nping.response\n")
    proc = run_cli("server", *broken_target(), *LIVE_SELECTION, "--report-format", "none", "--baseline", "ping.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]  # the one failure is expected
    assert [p.name for p in (tmp_path / "reports").iterdir()] == ["report.json"]
    report = json.loads((tmp_path / "reports" / "report.json").read_text())
    assert report["summary"]["by_outcome"]["xfail"] >= 1 and report["exit_code"] == 0
    proc = run_cli("server", *broken_target(), "--report-format", "pdf", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown report format 'pdf'" in proc.stderr
    proc = run_cli("server", *broken_target(), "--baseline", "missing.yml", cwd=tmp_path)
    assert proc.returncode == 2 and "missing.yml" in proc.stderr


def test_help_explains_every_option(tmp_path: Path) -> None:
    proc = run_cli("server", "--help", cwd=tmp_path)
    assert proc.returncode == 0
    for flag in ("--command", "--url", "--transport", "--version", "--timeout", "--strict", "--report-dir", "--report-format",
                 "--baseline", "--select", "--exclude", "--schema-dir"):
        assert flag in proc.stdout, flag
    help_lines = [l for l in proc.stdout.splitlines() if l.strip().startswith("--")]
    assert all(len(l.split(None, 2)) >= 2 for l in help_lines)
    proc = run_cli("--help", cwd=tmp_path)
    assert "report" in proc.stdout and "exit codes" in proc.stdout and "stale" in proc.stdout
    proc = run_cli("report", "--help", cwd=tmp_path)
    for flag in ("--out", "--html", "--junit", "--badge", "--markdown", "--baseline"):
        assert flag in proc.stdout, flag
