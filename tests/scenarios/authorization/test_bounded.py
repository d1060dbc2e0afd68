"""Bounded authorization runs (issue 25, "Bounded"): a peer that stops in the middle of OAuth costs
one bounded wait, ends with its own verdicts (never an ``error`` of ours, never a hang), and leaves
no process behind.

* client mode (``mcp-conformance client --auth``): ``fixtures/broken_clients/stalling_oauth_client.py``
  stops after the 401, after the metadata and registration, or with the code in hand before
  /token; the suite ends the run max(5, 2 x --timeout) s after the client's last request, and
  every requirement it did not reach says where it stopped.  A client that exits at once is one
  ``error`` (exit 3: the command never reached the suite's server), at once.
* server mode (``mcp-conformance server --auth``): a resource server whose protected resource
  metadata is never answered (``auth-prm-never-answers``), or answered with headers and then
  nothing (``auth-prm-headers-then-nothing``): ``auth.server.prm.discoverable`` fails with the URL
  and the wait, the other metadata requirements are not reached with that reason.
* ``--auth-token-command`` that never prints: stopped at its deadline with every process it
  started, a usage error that says so.

Each run is marked with an environment variable its processes inherit; once it has ended no live
process may carry the mark.  The runs go side by side (module-scoped), ``--timeout 1``, one version.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

import conformance.auth.context as auth_context
from conformance.auth.context import AuthSetupError, attach
from conformance.runtime.connect import Target
from conformance.spec.versions import Transport

ROOT = Path(__file__).resolve().parents[3]
STALLING = ROOT / "fixtures" / "broken_clients" / "stalling_oauth_client.py"
SERVE = ROOT / "fixtures" / "broken_servers" / "serve.py"
MARK = "MCP_CONFORMANCE_BOUNDED_TEST_MARK"
VERSION = "2025-11-25"
FLOW = ("parse-challenge", "prm-from-header", "pkce", "pkce-s256", "resource-both", "resource-canonical",
        "bearer-every-request", "no-token-in-query", "own-as-tokens", "redirect-uri-form", "redirect-uri-registered",
        "dcr-application-type")  # authorization.auth_flow's requirements


def marked(value: str) -> list[int]:
    """Live processes (not zombies) whose environment carries ``MARK=value``."""
    needle = f"{MARK}={value}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "status").read_text()
        except OSError:
            continue
        if needle in environ.split(b"\0") and "State:\tZ" not in state:
            pids.append(int(entry.name))
    return pids


def _leftovers(mark: str) -> list[str]:
    """What is still alive a few seconds after the run ended (a SIGKILL takes a moment to land)."""
    end = time.monotonic() + 5
    while marked(mark) and time.monotonic() < end:
        time.sleep(0.1)
    out = []
    for pid in marked(mark):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{pid}: {cmdline}")
        except OSError:
            pass
    return out


def _client(command: str) -> list[str]:
    argv = ["client", "--command", command, "--transport", "streamable-http", "--auth"]
    for rid in FLOW:
        argv += ["--select", f"client.auth.{rid}"]
    return argv


def _server(defect: str) -> list[str]:
    serve = [sys.executable, str(SERVE), defect, "--transport", "streamable-http", "--port", "{port}"]
    return ["server", "--command", subprocess.list2cmdline(serve), "--url", "http://127.0.0.1:{port}/mcp",
            "--transport", "streamable-http", "--auth", "--select", "auth.server.prm.*"]


def _stalling(stage: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(STALLING))} {stage} {{url}}"


RUNS = {
    "after-challenge": _client(_stalling("after-challenge")),
    "after-metadata": _client(_stalling("after-metadata")),
    "before-token": _client(_stalling("before-token")),
    "exits-at-once": _client("false {url}"),
    "prm-never-answers": _server("auth-prm-never-answers"),
    "prm-headers-then-nothing": _server("auth-prm-headers-then-nothing"),
}


def _run(name: str, argv: list[str], out: Path) -> dict[str, Any]:
    mark = f"{name}-{uuid.uuid4().hex}"
    cmd = [sys.executable, "-m", "conformance.cli", *argv, "--version", VERSION, "--timeout", "1",
           "--report-dir", str(out), "--report-format", "none", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env={**os.environ, MARK: mark}, start_new_session=True)
    try:
        text, _ = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        text, _ = proc.communicate()
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else None
    return {"rc": proc.returncode, "out": text, "report": report, "left": _leftovers(mark)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(_run, name, argv, tmp_path_factory.mktemp(name)) for name, argv in RUNS.items()}
        yield {name: f.result() for name, f in futures.items()}


def _outcomes(run: dict[str, Any]) -> dict[str, tuple[str, str]]:
    assert run["report"] is not None, run["out"][-3000:]
    return {r["requirement"]: (r["outcome"], r.get("reason") or r.get("message") or "") for r in run["report"]["results"]}


def _flagged(run: dict[str, Any]) -> set[tuple[str, str]]:
    return {(rid, o) for rid, (o, _) in _outcomes(run).items() if o in ("fail", "warning", "error")}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_no_process_is_left_behind(name: str, runs: dict[str, Any]) -> None:
    assert runs[name]["left"] == [], runs[name]["out"][-2000:]


@pytest.mark.parametrize("stage, says", [
    ("after-challenge", "the client did nothing toward authorization for 5 s after the 401, and the suite ended its run"),
    ("after-metadata", "the client made no request to either server for 5 s after #4 AS POST /register -> 201"),
    ("before-token", "the client made no request to either server for 5 s after #5 AS GET /authorize?"),
])
def test_a_client_that_stops_in_the_flow_is_ended_with_where_it_stopped(stage: str, says: str,
                                                                       runs: dict[str, Any]) -> None:
    run = runs[stage]
    outcomes = _outcomes(run)
    assert run["rc"] == 0 and not _flagged(run) and not run["report"]["errors"], (outcomes, run["out"][-2000:])
    # what it did right before it stopped passes; what it never reached is a skip naming where it stopped
    passed = {"after-challenge": set(), "after-metadata": {"client.auth.prm-from-header"},
              "before-token": {"client.auth.prm-from-header", "client.auth.pkce-s256", "client.auth.resource-both",
                               "client.auth.resource-canonical", "client.auth.redirect-uri-form",
                               "client.auth.redirect-uri-registered"}}[stage]
    assert {rid for rid, (o, _) in outcomes.items() if o == "pass"} == passed
    skipped = {rid: why for rid, (o, why) in outcomes.items() if o == "skip"}
    assert "client.auth.no-token-in-query" in skipped
    assert all(says in why for why in skipped.values()), skipped


def test_a_client_that_exits_at_once_is_one_error_naming_it(runs: dict[str, Any]) -> None:
    run = runs["exits-at-once"]
    assert run["rc"] == 3, run["out"][-2000:]
    errors = " | ".join(e["message"] for e in run["report"]["errors"])
    assert "exited (code 1) without connecting" in errors, errors


@pytest.mark.parametrize("defect, silence", [("prm-never-answers", "no response headers within 1 s"),
                                             ("prm-headers-then-nothing", "then the body did not end within 1 s")])
def test_metadata_never_answered_is_the_servers_discovery_fail(defect: str, silence: str, runs: dict[str, Any]) -> None:
    run = runs[defect]
    outcomes = _outcomes(run)
    assert run["rc"] == 1 and not run["report"]["errors"], run["out"][-2000:]
    assert _flagged(run) == {("auth.server.prm.discoverable", "fail")}, outcomes
    fail = next(r for r in run["report"]["results"] if r["requirement"] == "auth.server.prm.discoverable")
    message = fail["violations"][0]["message"]
    assert "/.well-known/oauth-protected-resource/mcp" in message and silence in message, message
    for rid in ("auth.server.prm.served", "auth.server.prm.authorization-servers", "auth.server.prm.resource-form"):
        outcome, why = outcomes[rid]
        assert outcome == "skip" and silence in why, (rid, outcome, why)


def test_a_token_command_that_never_prints_is_stopped_with_its_children(monkeypatch: pytest.MonkeyPatch) -> None:
    mark = f"token-command-{uuid.uuid4().hex}"
    monkeypatch.setenv(MARK, mark)
    monkeypatch.setattr(auth_context, "TOKEN_COMMAND_TIMEOUT", 1.0)
    target = Target(transport=Transport.STREAMABLE_HTTP, command=("server",), url="http://127.0.0.1:1/mcp")
    # a child that holds the command's output open, and the command itself waiting on it
    with pytest.raises(AuthSetupError, match="printed no token within 1 s"):
        attach(target, auth=False, token=None, token_command="sh -c 'sleep 600 & wait'")
    assert _leftovers(mark) == []
