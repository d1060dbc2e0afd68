"""Fault injection: each named fault does what its documentation says, and only that."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reference_server.core import ServerConfig
from reference_server.faults import FAULTS, FaultError, FaultPlan, parse_fault

from tests.reference_server.helpers import harness

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.anyio


def _config(*faults: str) -> ServerConfig:
    return ServerConfig(faults=FaultPlan.parse(list(faults)))


def test_parse_fault_syntax() -> None:
    f = parse_fault("delay:2.5@tools/call,ping")
    assert (f.name, f.arg, f.methods) == ("delay", 2.5, frozenset({"tools/call", "ping"}))
    assert parse_fault("error").arg == -32603
    assert parse_fault("error:-32000").arg == -32000
    for bad in ("nope", "delay:soon", "wrong-id:3", "delay:-1"):
        with pytest.raises(FaultError):
            parse_fault(bad)
    assert set(FAULTS) >= {"delay", "no-response", "wrong-id", "wrong-id-type", "malformed-json", "error", "close-mid-response", "stdout-log", "unsupported-version", "early-notification", "undeclared-request"}


async def test_delay_answers_later_while_others_are_answered() -> None:
    async with harness(_config("delay:0.2@tools/call")) as h:
        await h.initialize()
        await h.send({"jsonrpc": "2.0", "id": "late", "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
        await h.request("ping", rid="first")
        ids = [m.get("id") for m in h.messages()]
        assert "first" in ids and "late" not in ids
        assert (await h.response("late"))["result"]["content"][0]["text"] == "x"


async def test_no_response_until_cancelled() -> None:
    async with harness(_config("no-response@tools/call")) as h:
        await h.initialize()
        await h.send({"jsonrpc": "2.0", "id": "never", "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
        await h.request("ping", rid="barrier")
        assert h.conn.inflight
        assert h.conn.cancel("never")
        await h.request("ping", rid="barrier2")
        assert not [m for m in h.messages() if m.get("id") == "never"]


@pytest.mark.parametrize("fault,rid,check", [("wrong-id", 7, lambda i: i != 7), ("wrong-id-type", 7, lambda i: i == "7"), ("wrong-id-type", "12", lambda i: i == 12)])
async def test_wrong_ids(fault: str, rid: Any, check: Any) -> None:
    async with harness(_config(f"{fault}@ping")) as h:
        h.check_schema = False
        await h.initialize()
        await h.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        answer = await h.wait_for(lambda m: "result" in m and m.get("id") != 0)
        assert check(answer["id"])
        assert not h.conn.inflight


async def test_error_code_fault() -> None:
    async with harness(_config("error:-32000@tools/call")) as h:
        await h.initialize()
        resp = await h.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert resp["error"]["code"] == -32000
        assert "result" in await h.request("ping")  # other methods unaffected


async def test_unsupported_version_and_early_notification() -> None:
    async with harness(_config("unsupported-version", "early-notification")) as h:
        h.check_schema = False
        resp = await h.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}, rid=0)
        assert resp["result"]["protocolVersion"] == "1999-01-01"
        msgs = h.messages()
        assert msgs[0]["method"] == "notifications/message" and msgs[1]["id"] == 0


async def test_undeclared_request_after_initialized() -> None:
    async with harness(_config("undeclared-request")) as h:
        await h.initialize("2025-11-25", {})
        req = await h.wait_for(lambda m: m.get("method") == "sampling/createMessage" and "id" in m)
        assert req["params"]["maxTokens"] > 0


def _run(faults: list[str], lines: list[bytes]) -> tuple[list[bytes], int]:
    args = [a for f in faults for a in ("--fault", f)]
    proc = subprocess.run([sys.executable, "-m", "reference_server", *args], input=b"".join(lines), capture_output=True, timeout=30, cwd=ROOT)
    return proc.stdout.split(b"\n"), proc.returncode


INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode() + b"\n"
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def test_malformed_json_and_stdout_log_over_stdio() -> None:
    out, rc = _run(["malformed-json@ping", "stdout-log:hello from the server@ping"], [INIT, PING])
    assert json.loads(out[0])["id"] == 0
    assert out[1] == b"hello from the server"
    with pytest.raises(ValueError):
        json.loads(out[2])


def test_close_mid_response_over_stdio() -> None:
    out, rc = _run(["close-mid-response@ping"], [INIT, PING, b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'])
    assert json.loads(out[0])["id"] == 0
    assert out[1] and not out[1].endswith(b"}") and len(out) == 2  # half a line, no newline, nothing after
    assert rc == 0


def test_unknown_fault_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "reference_server", "--fault", "explode"], capture_output=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 2 and b"unknown fault" in proc.stderr
