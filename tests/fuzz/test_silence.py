"""Silence after a request whose id can be read is always a finding -- also where RFC 8259 leaves
the reading to the implementation: each way tests/fuzz/silent_server.py stays silent is found by
its own operator, with its own signature and a reproducer that replays, and nothing else is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).with_name("silent_server.py")
OPS = "unknown-member,lenient-syntax,big-id,huge-number,duplicate-field"

# the silence of each defect, as the oracle names it
SIGNATURES = {
    "unknown": ("jsonrpc.request.response-required", "UnknownMemberUnanswered"),
    "duplicate": ("jsonrpc.request.response-required", "DuplicateMemberUnanswered"),
    "number": ("jsonrpc.request.response-required", "OutOfRangeNumberUnanswered"),
    "nan": ("jsonrpc.error.parse-error", "LenientJsonRequestUnanswered"),
}


def _fuzz(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    cmd = [sys.executable, "-m", "conformance.cli", "fuzz", *args, "--report-dir", str(tmp), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    report = json.loads((tmp / "report.json").read_text())
    return proc, report


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("silent")
    proc, report = _fuzz(tmp, "--command", f"{sys.executable} {SERVER}", "--ops", OPS, "--max-messages", "1500",
                         "--no-hypothesis", "--shrink-budget", "2")
    return tmp, proc, [f for c in report["fuzz"]["campaigns"] for f in c["findings"]]


def test_each_silence_is_its_own_finding_and_nothing_else_is_found(campaign) -> None:
    _, proc, findings = campaign
    got = {(f["requirement"], f["problem"]) for f in findings}
    # an id beyond 2^53 is a number beyond the interoperable range: LargeIdUnanswered
    assert got == set(SIGNATURES.values()) | {("jsonrpc.request.response-required", "LargeIdUnanswered")}, findings
    assert proc.returncode == 1
    for f in findings:
        assert f["level"] == "MUST" and f["quote"]


def test_every_reproducer_replays_the_silence(campaign) -> None:
    tmp, _, findings = campaign
    files = sorted((tmp / "reproducers").glob("*.json"))
    assert len(files) == len(findings)
    for path in files:
        repro = json.loads(path.read_text())
        proc = subprocess.run([sys.executable, "-m", "conformance.cli", "fuzz", "--replay", str(path), "--report-dir",
                               str(tmp / "replay"), "-q"], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert proc.returncode == 1, (path.name, proc.stdout, proc.stderr)  # it still fails
        sig = f'{repro["signature"]["requirement"]} {repro["signature"]["problem"]} (reproduced 3 of 3)'
        assert proc.stdout.startswith("FAILED") and sig in proc.stdout, proc.stdout


@pytest.mark.parametrize("only", sorted(SIGNATURES))
def test_a_server_silent_on_one_case_only_is_found_on_that_one_only(only: str, tmp_path: Path) -> None:
    _, report = _fuzz(tmp_path, "--command", f"{sys.executable} {SERVER} --only {only}", "--ops", OPS,
                      "--max-messages", "800", "--no-hypothesis", "--no-shrink")
    got = {(f["requirement"], f["problem"]) for c in report["fuzz"]["campaigns"] for f in c["findings"]}
    assert SIGNATURES[only] in got
    extra = got - {SIGNATURES[only]} - ({("jsonrpc.request.response-required", "LargeIdUnanswered")} if only == "number" else set())
    assert not extra, got
