"""The reference client tours the reference server on every transport and version, strictly:
anything invalid the server sends fails the tour; the server it started is gone afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.spec.versions import VERSIONS, spec
from fixtures.peers.launch import free_port, spawn, start_peer, wait_for_port
from reference_client.core import ClientCore
from reference_client.session import sample_arguments

ROOT = Path(__file__).resolve().parents[2]
CLIENT = [sys.executable, "-m", "reference_client"]
SERVER = f"{sys.executable} -m reference_server"
HTTP_VERSIONS = [v for v in VERSIONS if "streamable-http" in {t.value for t in spec(v).transports}]
SSE_VERSIONS = [v for v in VERSIONS if "sse" in {t.value for t in spec(v).transports}]


def _tour(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLIENT, *args, "--timeout", "5"], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def _assert_completed(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "tour completed: 0 failed step(s), 0 invalid message(s)" in proc.stderr
    for step in ("tools/list:", "prompts/list:", "resources/list:", "resources/read"):
        assert step in proc.stderr, f"{step} missing from the tour\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("version", VERSIONS)
def test_full_tour_over_stdio(version: str, tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    server = f"{sys.executable} -c \"import os,sys,runpy; open({str(pid_file)!r},'w').write(str(os.getpid())); sys.argv=['reference_server']; runpy.run_module('reference_server', run_name='__main__')\""
    proc = _tour("--stdio", server, "--version", version)
    _assert_completed(proc)
    assert ("ping: empty result" in proc.stderr) == spec(version).ping
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the server exited when its stdin closed (or was stopped): nothing left


@pytest.mark.parametrize("version", HTTP_VERSIONS)
def test_full_tour_over_streamable_http(version: str) -> None:
    with start_peer("reference", "streamable-http") as peer:
        proc = _tour("--url", peer.url, "--version", version)
        _assert_completed(proc)
        assert f"protocol version {version} " in proc.stderr


@pytest.mark.parametrize("version", SSE_VERSIONS)
def test_full_tour_over_legacy_sse(version: str) -> None:
    with start_peer("reference", "sse") as peer:
        _assert_completed(_tour("--sse-url", peer.url, "--version", version))


# -- the default: dual-era -------------------------------------------------------------------------


def test_default_is_dual_era_and_ends_on_2026_over_stdio() -> None:
    proc = _tour("--stdio", SERVER)
    _assert_completed(proc)
    assert "server/discover: 2026-07-28 supported" in proc.stderr
    assert "protocol version 2026-07-28 (stateless)" in proc.stderr and "initialize" not in proc.stderr.split("tools/list")[0]


def test_default_is_dual_era_and_ends_on_2026_over_streamable_http() -> None:
    with start_peer("reference", "streamable-http") as peer:
        proc = _tour("--url", peer.url)
    _assert_completed(proc)
    assert "protocol version 2026-07-28 (stateless)" in proc.stderr


def test_default_over_legacy_sse_initializes_directly() -> None:
    with start_peer("reference", "sse") as peer:
        proc = _tour("--sse-url", peer.url)
    _assert_completed(proc)
    assert "server/discover" not in proc.stderr and "(initialize)" in proc.stderr


@pytest.mark.parametrize("version", [v for v in VERSIONS if not spec(v).stateless])
def test_default_falls_back_to_a_legacy_server_over_stdio(version: str) -> None:
    """A server of one legacy version refuses the probe (-32600 before initialize): initialize
    asking for 2025-11-25, and the version the server answers is spoken."""
    proc = _tour("--stdio", f"{SERVER} --versions {version}", "--no-call")
    _assert_completed(proc)
    assert "(not a modern error): a legacy server" in proc.stderr
    assert f"protocol version {version} (initialize)" in proc.stderr


def test_default_falls_back_to_a_legacy_server_over_streamable_http() -> None:
    """The probe POST is refused with HTTP 400 and a -32600 body (not a modern error)."""
    port = free_port()
    argv = [sys.executable, "-m", "reference_server", "--transport", "streamable-http", "--port", str(port),
            "--versions", "2025-06-18"]
    with spawn(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL) as server:
        wait_for_port(port, pid=server.pid)
        proc = _tour("--url", f"http://127.0.0.1:{port}/mcp", "--no-call")
    _assert_completed(proc)
    assert "protocol version 2025-06-18 (initialize)" in proc.stderr


def test_default_falls_back_when_the_probe_is_not_answered() -> None:
    proc = _tour("--stdio", f"{SERVER} --fault no-response@server/discover", "--no-call")
    _assert_completed(proc)
    assert "server/discover: no answer within 3 s: a legacy server" in proc.stderr
    assert "protocol version 2025-11-25 (initialize)" in proc.stderr


def test_an_unsupported_version_ends_the_session_at_once() -> None:
    proc = _tour("--stdio", f"{SERVER} --fault unsupported-version", "--version", "2025-06-18")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "which this client does not support" in proc.stderr and "ping" not in proc.stderr


@pytest.mark.parametrize("fault,version", [("no-initialized", "2025-11-25"), ("float-id", "2025-03-26"),
                                           ("meta-without-client-info", "dual")])
def test_a_fault_keeps_the_tour_going(fault: str, version: str) -> None:
    """Faults break a rule the server side judges; the tour itself still completes."""
    proc = _tour("--stdio", SERVER, "--fault", fault, "--no-call", "--version", version)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"fault {fault}:" in proc.stderr


def test_an_unknown_fault_is_a_usage_error() -> None:
    proc = _tour("--stdio", SERVER, "--fault", "no-such-fault")
    assert proc.returncode == 2 and "unknown fault" in proc.stderr


def test_a_server_that_sends_something_invalid_fails_the_tour() -> None:
    broken = f"{sys.executable} {ROOT / 'fixtures' / 'broken_servers' / 'serve.py'} stdio-stdout-log-line"
    proc = _tour("--stdio", broken, "--version", "2025-11-25")
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "tour FAILED" in proc.stderr


def test_a_command_that_cannot_start_is_exit_3() -> None:
    proc = _tour("--stdio", "/nonexistent/mcp-server-binary")
    assert proc.returncode == 3 and "cannot start" in proc.stderr


def test_server_requests_are_answered_as_declared() -> None:
    core = ClientCore("2025-11-25")
    for method, expected in (("ping", {}), ("roots/list", {"roots": [{"uri": "file:///tmp/mcp-reference-client", "name": "scratch"}]})):
        inc = core.receive({"jsonrpc": "2.0", "id": "s1", "method": method})
        assert inc.reply == {"jsonrpc": "2.0", "id": "s1", "result": expected}
    inc = core.receive({"jsonrpc": "2.0", "id": 7, "method": "mcp-conformance/unknown"})
    assert inc.reply["error"]["code"] == -32601 and inc.reply["id"] == 7
    undeclared = ClientCore("2025-11-25", capabilities={"roots": {}})
    assert undeclared.receive({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {
        "messages": [], "maxTokens": 1}}).reply["error"]["code"] == -32601


def test_ids_are_unique_and_responses_are_matched_by_exact_id() -> None:
    core = ClientCore("2025-11-25")
    ids = [core.request("ping")["id"] for _ in range(100)]
    assert len(set(ids)) == 100 and all(isinstance(i, int) for i in ids)
    stray = core.receive({"jsonrpc": "2.0", "id": str(ids[0]), "result": {}})  # "1" is not 1
    assert stray.kind == "invalid" and core.violations


def test_stateless_requests_carry_the_per_request_meta() -> None:
    msg = ClientCore("2026-07-28").request("tools/list")
    meta = msg["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert "io.modelcontextprotocol/clientCapabilities" in meta


def test_sample_arguments_fill_what_is_required_and_keep_durations_short() -> None:
    schema = {"type": "object", "required": ["text", "n"], "properties": {
        "text": {"type": "string"}, "n": {"type": "integer", "minimum": 1}, "seconds": {"type": "number", "minimum": 0}}}
    assert sample_arguments(schema) == {"text": "mcp-reference-client", "n": 1, "seconds": 0}
    assert sample_arguments({"type": "object", "required": ["x"], "properties": {"x": {"type": "string", "pattern": "^a$"}}}) is None
    json.dumps(sample_arguments(schema))


def test_tools_with_invalid_x_mcp_header_are_rejected() -> None:
    from conformance.wire.headers import x_mcp_header_problems

    ok = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                                           "nested": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}}}}
    assert x_mcp_header_problems(ok) == []
    for bad in (
        {"properties": {"r": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"r": {"type": "string", "x-mcp-header": "Bad Name"}}},
        {"properties": {"r": {"type": "number", "x-mcp-header": "N"}}},
        {"properties": {"r": {"type": "object", "x-mcp-header": "O"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}},
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}},
        {"properties": {"a": {"anyOf": [{"type": "string", "x-mcp-header": "X"}]}}},
    ):
        assert x_mcp_header_problems(bad), bad
