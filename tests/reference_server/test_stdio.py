"""The stdio front-end, as a subprocess: framing, parse errors, size limit, EOF."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def run(lines: list[bytes], *args: str, timeout: float = 30) -> tuple[list[bytes], bytes, int]:
    """Write ``lines`` to a fresh server, close stdin, return (stdout lines, stderr, exit code)."""
    proc = subprocess.run(
        [sys.executable, "-m", "reference_server", "--transport", "stdio", *args],
        input=b"".join(lines),
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ},
    )
    return proc.stdout.splitlines(), proc.stderr, proc.returncode


def line(value) -> bytes:
    return json.dumps(value).encode() + b"\n"


def test_handshake_tools_and_errors_over_stdio() -> None:
    out, err, rc = run(
        [
            line(INIT),
            line(INITIALIZED),
            line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "a\nb"}}}),
            b"this is not json\n",
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n',
            b"\n",
            line({"jsonrpc": "2.0", "id": 3, "method": "nope"}),
        ]
    )
    assert rc == 0, err
    msgs = [json.loads(x) for x in out]
    assert [m.get("id") for m in msgs] == [0, 1, None, 2, 3]
    assert msgs[1]["result"]["content"][0]["text"] == "a\nb"
    assert all(b"\n" not in x for x in out)
    assert msgs[2]["error"]["code"] == -32700
    assert msgs[3]["result"] == {}
    assert msgs[4]["error"]["code"] == -32601


def test_oversized_line_is_refused_and_the_stream_continues() -> None:
    big = line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x" * 5000}}})
    out, err, rc = run([line(INIT), big, line({"jsonrpc": "2.0", "id": 10, "method": "ping"})], "--max-message-bytes", "2048")
    msgs = [json.loads(x) for x in out]
    assert [m.get("id") for m in msgs] == [0, None, 10]
    assert msgs[1]["error"]["code"] == -32600 and "2048" in msgs[1]["error"]["message"]


def test_modern_request_without_handshake() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    out, err, rc = run([line({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": meta}})])
    (msg,) = [json.loads(x) for x in out]
    assert msg["result"]["supportedVersions"] == ["2026-07-28"]


def test_exits_on_stdin_eof_with_no_output_for_notifications() -> None:
    out, err, rc = run([line(INITIALIZED), line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})])
    assert out == [] and rc == 0
