"""`mcp-conformance fuzz` end to end: the reference server gives no finding, a broken server's
finding is shrunk, saved and replayed, the same seed sends the same frames, bad input is a clear
usage error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "fixtures" / "broken_servers" / "serve.py"
SCHEMA = json.loads((ROOT / "conformance" / "report" / "report.schema.json").read_text())


def fuzz(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", "fuzz", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def report(d: Path) -> dict:
    data = json.loads((d / "report.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    return data


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_reference_server_has_no_finding_and_the_report_has_a_fuzz_section(tmp_path, version) -> None:
    out = fuzz("--command", "mcp-reference-server", "--version", version, "--max-messages", "3000", "--seed", "3",
               "--report-dir", str(tmp_path), "--no-hypothesis")
    assert out.returncode == 0, out.stdout + out.stderr
    rep = report(tmp_path)
    [camp] = rep["fuzz"]["campaigns"]
    assert camp["messages"] == 3000 and camp["findings"] == [] and camp["judged"] >= 3000
    assert sum(o["messages"] for o in camp["operators"].values()) == 3000
    assert camp["memory"]["sampled"] is True
    assert rep["results"] == [] and rep["exit_code"] == 0
    for name in ("report.html", "junit.xml", "summary.md"):
        assert (tmp_path / name).is_file()


def test_reference_server_over_streamable_http_has_no_finding(tmp_path) -> None:
    out = fuzz("--command", "mcp-reference-server --transport streamable-http --port {port}", "--url", "http://127.0.0.1:{port}/mcp",
               "--max-messages", "600", "--report-dir", str(tmp_path), "--no-hypothesis")
    assert out.returncode == 0, out.stdout + out.stderr
    [camp] = report(tmp_path)["fuzz"]["campaigns"]
    assert camp["transport"] == "streamable-http" and camp["messages"] == 600 and camp["findings"] == []
    assert camp["operators"]["http-content-type"]["messages"] > 0  # HTTP-level mutations are in the mix


def test_reference_server_over_legacy_sse_has_no_finding_and_a_broken_one_is_caught(tmp_path) -> None:
    """Legacy HTTP+SSE: one POST per message, answers on the SSE stream, frames proven read by
    barriers as on stdio.  The reference server gives nothing; the same server answering unknown
    methods with -32600 gives exactly that finding, replayed over SSE."""
    out = fuzz("--command", "mcp-reference-server --transport sse --port {port}", "--url", "http://127.0.0.1:{port}/sse",
               "--transport", "sse", "--max-messages", "400", "--report-dir", str(tmp_path / "ok"), "--no-hypothesis")
    assert out.returncode == 0, out.stdout + out.stderr
    [camp] = report(tmp_path / "ok")["fuzz"]["campaigns"]
    assert camp["transport"] == "sse" and camp["messages"] == 400 and camp["judged"] >= 400 and camp["findings"] == []
    assert camp["barriers"] > 0 and camp["in_runs"] > 0  # pipelined behind barriers, not one POST at a time
    broken = f"{sys.executable} {SERVE} unknown-method-invalid-request --transport sse --port {{port}}"
    out = fuzz("--command", broken, "--url", "http://127.0.0.1:{port}/sse", "--transport", "sse", "--max-messages", "400",
               "--report-dir", str(tmp_path / "broken"), "--no-hypothesis", "--shrink-budget", "3s")
    assert out.returncode == 1, out.stdout + out.stderr
    [f] = report(tmp_path / "broken")["fuzz"]["campaigns"][0]["findings"]
    assert (f["requirement"], f["problem"]) == ("jsonrpc.error.method-not-found", "WrongErrorCode")
    repro = json.loads((tmp_path / "broken" / f["reproducer"]).read_text())
    assert repro["transport"] == "sse" and repro["stability"] == {"reproduced": 3, "of": 3}


def test_same_seed_same_run(tmp_path) -> None:
    runs = []
    for n in (1, 2):
        d = tmp_path / str(n)
        assert fuzz("--command", "mcp-reference-server", "--max-messages", "1500", "--seed", "11", "--report-dir", str(d),
                    "--no-hypothesis").returncode == 0
        runs.append(report(d)["fuzz"]["campaigns"][0])
    assert runs[0]["operators"] == runs[1]["operators"] and runs[0]["methods"] == runs[1]["methods"]


def test_a_finding_is_graded_shrunk_saved_and_replayed(tmp_path) -> None:
    broken = f"{sys.executable} {SERVE} unknown-method-invalid-request"
    out = fuzz("--command", broken, "--max-messages", "1500", "--report-dir", str(tmp_path), "--no-hypothesis")
    assert out.returncode == 1, out.stdout + out.stderr
    rep = report(tmp_path)
    [f] = rep["fuzz"]["campaigns"][0]["findings"]
    assert (f["requirement"], f["problem"], f["outcome"], f["level"]) == ("jsonrpc.error.method-not-found", "WrongErrorCode", "fail", "MUST")
    assert f["quote"].startswith("-32601 Method not found")
    assert [r["requirement"] for r in rep["results"]] == ["jsonrpc.error.method-not-found"]
    assert rep["results"][0]["outcome"] == "fail" and rep["results"][0]["violations"][0]["reproducer"] == f["reproducer"]
    repro = json.loads((tmp_path / f["reproducer"]).read_text())
    assert repro["stability"] == {"reproduced": 3, "of": 3}
    shrunk = repro["frame"]["text"].encode()
    assert len(shrunk) <= len(json.dumps(repro["original"]))  # minimised (or already minimal)
    assert json.loads(shrunk)["method"] != "ping"
    again = fuzz("--replay", str(tmp_path / "reproducers"))
    assert again.returncode == 1 and again.stdout.startswith("FAILED"), again.stdout + again.stderr
    fixed = fuzz("--replay", str(tmp_path / f["reproducer"]), "--command", "mcp-reference-server")
    assert fixed.returncode == 0 and fixed.stdout.startswith("FIXED"), fixed.stdout + fixed.stderr


@pytest.mark.parametrize("args, message", [
    ((), "give the target"),
    (("--command", "x", "--version", "1999-01-01"), "unknown version"),
    (("--command", "x", "--budget", "soon"), "expected a duration"),
    (("--command", "x", "--ops", "nope"), "unknown fuzz operator 'nope'"),
    (("--replay", "/nonexistent/repro.json"), "no such file"),
    (("--transport", "streamable-http", "--command", "x"), "needs --url"),
    (("--transport", "sse", "--url", "http://127.0.0.1:9/sse", "--version", "2026-07-28"),
     "--transport sse: 2026-07-28 does not define it; it exists in 2024-11-05"),
    (("--command", "x", "--grace", "-1"), "argument --grace: '-1': give a number of seconds (0 or more)"),
    (("--command", "x", "--window", "0"), "argument --window: '0': give a whole number of at least 1"),
    (("--command", "x", "--chunk", "many"), "argument --chunk: 'many' is not a whole number"),
    (("--command", "x", "--timeout", "0"), "argument --timeout: '0': give a number of seconds above 0"),
])
def test_bad_input_is_a_usage_error_naming_the_problem(args, message) -> None:
    out = fuzz(*args, timeout=60)
    assert out.returncode == 2 and message in out.stderr, out.stderr


def test_an_unreachable_target_is_exit_3() -> None:
    out = fuzz("--command", "/nonexistent/server", "--max-messages", "10", "--report-dir", "/tmp/mcp-conformance-fuzz-unreach", timeout=60)
    assert out.returncode == 3, out.stdout + out.stderr


def test_list_ops() -> None:
    out = fuzz("--list-ops", timeout=60)
    assert out.returncode == 0 and "truncate" in out.stdout and "http-content-type" in out.stdout
