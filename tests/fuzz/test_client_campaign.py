"""`mcp-conformance fuzz --client-command` end to end: the reference client gives no finding, a
broken client's defect is found by fuzzing alone, cited, saved and replayed (FAILED on it, FIXED on
the strict client), the same seed sends the same messages, and bad input is a clear usage error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "conformance" / "report" / "report.schema.json").read_text())
CLIENT = "mcp-reference-client --stdio {server}"


def fuzz(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", "fuzz", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def report(d: Path) -> dict:
    data = json.loads((d / "report.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    return data


def test_reference_client_has_no_finding_and_the_report_says_a_client_was_fuzzed(tmp_path) -> None:
    out = fuzz("--client-command", CLIENT, "--max-messages", "1500", "--seed", "3", "--report-dir", str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    rep = report(tmp_path)
    assert rep["role"] == "client" and rep["target"]["role"] == "client" and rep["exit_code"] == 0
    [camp] = rep["fuzz"]["campaigns"]
    assert camp["role"] == "client" and camp["findings"] == [] and camp["unconfirmed"] == []
    assert camp["messages"] == 1500 and camp["judged"] >= 1400
    assert sum(o["messages"] for o in camp["operators"].values()) == 1500
    assert camp["client_runs"] >= 1 and camp["answers"] >= 5 and camp["mutated_answers"] >= 1
    ops = {k for k, v in camp["operators"].items() if v["messages"]}
    assert {"truncate", "unknown-method", "cancel-random"} & ops and any(k.startswith("answer-") for k in ops)
    assert camp["memory"]["sampled"] is True
    for name in ("report.html", "junit.xml", "summary.md"):
        assert (tmp_path / name).is_file()
    assert "| client |" in (tmp_path / "summary.md").read_text()


def test_a_broken_client_is_found_by_fuzzing_alone_and_its_reproducer_replays(tmp_path) -> None:
    broken = f"{CLIENT} --fault unknown-method-wrong-code"  # answers an unknown method -32600, not -32601
    out = fuzz("--client-command", broken, "--max-messages", "1000", "--seed", "3", "--report-dir", str(tmp_path), "--no-shrink")
    assert out.returncode == 1, out.stdout + out.stderr
    [camp] = report(tmp_path)["fuzz"]["campaigns"]
    [f] = camp["findings"]
    assert (f["requirement"], f["problem"], f["outcome"]) == ("client.jsonrpc.method-not-found", "WrongErrorCode", "fail")
    assert f["stability"] == {"reproduced": 3, "of": 3} and "-32601" in f["quote"]
    repro = tmp_path / f["reproducer"]
    data = json.loads(repro.read_text())
    assert data["role"] == "client" and data["target"]["command"] == [broken]
    got = fuzz("--replay", str(repro))  # the client command comes from the file
    assert got.returncode == 1 and got.stdout.startswith("FAILED") and "reproduced 3 of 3" in got.stdout, got.stdout + got.stderr
    fixed = fuzz("--replay", str(repro), "--client-command", CLIENT)  # the strict client
    assert fixed.returncode == 0 and fixed.stdout.startswith("FIXED"), fixed.stdout + fixed.stderr


def test_a_client_silent_on_text_that_is_not_json_is_found_on_the_parse_error_rule(tmp_path) -> None:
    """Issue 23 part 3: a request lenient parsers read (NaN, a comment, a trailing comma...) but that
    is not JSON, left unanswered, is client.jsonrpc.parse-error; the strict client answers -32700
    (or, reading NaN as Python does, the request) and gives none on the same messages."""
    broken = f"{CLIENT} --fault ignore-parse-error"
    out = fuzz("--client-command", broken, "--ops", "lenient-syntax", "--max-messages", "60", "--seed", "3",
               "--report-dir", str(tmp_path / "broken"), "--no-shrink")
    assert out.returncode == 1, out.stdout + out.stderr
    [camp] = report(tmp_path / "broken")["fuzz"]["campaigns"]
    assert {(f["requirement"], f["problem"], f["outcome"]) for f in camp["findings"]} == {
        ("client.jsonrpc.parse-error", "LenientJsonRequestUnanswered", "fail")}
    assert "-32700" in camp["findings"][0]["quote"]
    strict = fuzz("--client-command", CLIENT, "--ops", "lenient-syntax,truncate", "--max-messages", "60", "--seed", "3",
                  "--report-dir", str(tmp_path / "strict"), "--no-shrink")
    assert strict.returncode == 0, strict.stdout + strict.stderr
    [camp] = report(tmp_path / "strict")["fuzz"]["campaigns"]
    assert camp["findings"] == [] and camp["operators"]["lenient-syntax"]["messages"] > 0


def test_a_crash_on_a_malformed_initialize_answer_is_found_shrunk_and_replayed(tmp_path) -> None:
    crashing = f"{sys.executable} {ROOT / 'fixtures' / 'broken_clients' / 'crashing_client.py'} {{server}}"
    out = fuzz("--client-command", crashing, "--ops", "answer-error-shape", "--max-messages", "50", "--shrink-budget", "30s",
               "--report-dir", str(tmp_path))
    assert out.returncode == 1, out.stdout + out.stderr
    [camp] = report(tmp_path)["fuzz"]["campaigns"]
    assert camp["stopped_by"].startswith("ClientCrashed 3 times")  # a client that crashes every time is not started forever
    [f] = camp["findings"]
    assert (f["requirement"], f["problem"]) == ("client.ping.respond", "ClientCrashed") and f["actual"]["signal"] == "SIGSEGV"
    assert f["detail"]["answer_to"] == "initialize" and f["stability"] == {"reproduced": 3, "of": 3}
    repro = json.loads((tmp_path / f["reproducer"]).read_text())
    assert repro["answer"] == {"method": "initialize", "id": 1} and len(repro["frame"]["text"]) < len(repro["original"]["text"])
    got = fuzz("--replay", str(tmp_path / f["reproducer"]))
    assert got.returncode == 1 and got.stdout.startswith("FAILED"), got.stdout + got.stderr


def test_same_seed_same_messages(tmp_path) -> None:
    """Frame j of client run r is a function of (seed, r, j) (tests/fuzz/test_client_oracle.py checks
    the generators); here: two whole campaigns with one seed send the same operators on the same methods."""
    runs = []
    for n in (1, 2):
        d = tmp_path / str(n)
        out = fuzz("--client-command", CLIENT, "--max-messages", "600", "--seed", "11", "--jobs", "1", "--report-dir", str(d),
                   "--no-shrink")
        assert out.returncode == 0, out.stdout + out.stderr
        [camp] = report(d)["fuzz"]["campaigns"]
        runs.append((camp["operators"], camp["methods"], camp["answers"]))
    assert runs[0] == runs[1]


def test_usage_errors_are_clear(tmp_path) -> None:
    out = fuzz("--client-command", CLIENT, "--version", "2026-07-28", "--report-dir", str(tmp_path))
    assert out.returncode == 2 and "2026-07-28 has no server-to-client requests" in out.stderr
    out = fuzz("--client-command", "my-client --url {url}", "--report-dir", str(tmp_path))
    assert out.returncode == 2 and "{url} is for the HTTP transports" in out.stderr
    out = fuzz("--command", "mcp-reference-server", "--transport", "sse", "--report-dir", str(tmp_path))
    assert out.returncode == 2 and "the sse transport needs --url" in out.stderr  # a server over legacy SSE has a URL
    out = fuzz("--client-command", CLIENT, "--command", "x")
    assert out.returncode == 2
