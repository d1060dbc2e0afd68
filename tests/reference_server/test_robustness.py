"""Property tests: random and malformed messages never crash the server; every request gets exactly
one answer and nothing else does; every answer conforms to the official schema.

The default run feeds a few hundred frames through the sans-I/O core.  The ``slow`` test feeds
10,000 frames to one ``python -m reference_server`` process over stdio and reports its memory
before and after (VmRSS): ``pytest -m slow tests/reference_server/test_robustness.py -s``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.spec.versions import VERSIONS, spec
from reference_server.core import id_key, valid_id

from tests.reference_server.helpers import PV, harness
from tests.reference_server.robustness import expected_answers, inputs, is_long_running

ROOT = Path(__file__).resolve().parents[2]
_START = st.sampled_from([None, *[v for v in VERSIONS if spec(v).handshake]])


def _record(h: Any, value: Any) -> None:
    """Tell the harness which method (and modern version) each request id belongs to."""
    for it in value if isinstance(value, list) else [value]:
        if isinstance(it, dict) and isinstance(it.get("method"), str) and valid_id(it.get("id")):
            params = it.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            pv = meta.get(PV) if isinstance(meta, dict) else None
            h.sent[id_key(it["id"])] = (it["method"], pv if pv == "2026-07-28" else None)


@settings(max_examples=int(os.environ.get("RS_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], database=None)
@given(start=_START, frames=st.lists(inputs(), min_size=1, max_size=12))
def test_random_frames_through_the_core(start: str | None, frames: list[Any]) -> None:
    async def main() -> None:
        async with harness() as h:
            if start is not None:
                await h.initialize(start)
            for value in frames:
                if is_long_running(value):
                    continue
                before = len(h.out)
                version = h.conn.version
                batching = version is not None and spec(version).batching
                want = expected_answers(value, batching=batching)
                if isinstance(value, bytes):
                    from reference_server.stdio import _handle_line

                    await _handle_line(h.conn, value)
                else:
                    _record(h, value)
                    await h.send(value)
                with anyio.fail_after(10):  # async handlers (MRTR tools) finish promptly
                    while h.conn.inflight:
                        await anyio.sleep(0.001)
                answers = [o for o in h.out[before:] if o.kind == "response"]
                assert len(answers) == want, (value, [o.data for o in h.out[before:]])
                assert not [o for o in h.out[before:] if o.kind == "request"], "unsolicited server request"

    anyio.run(main)


# -- 10,000 frames against a real process ----------------------------------------------------------


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class _Stdio:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "reference_server", "--transport", "stdio"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ})
        self.n = 0
        self.frames = 0
        self.rss: list[tuple[int, int]] = []
        try:
            self.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}).encode())
            assert self.until_barrier("init") == []
            self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        except BaseException:
            self.close()
            raise

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def until_barrier(self, barrier: str) -> list[Any]:
        assert self.proc.stdout is not None
        got = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server died (exit code {self.proc.poll()})"
            msg = json.loads(line)  # every line on stdout is JSON ("MUST NOT write anything ... not a valid MCP message")
            if isinstance(msg, dict) and msg.get("id") == barrier:
                return got
            got.append(msg)

    def close(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdout,):
            if f is not None:
                f.close()


@pytest.fixture(scope="module")
def stdio_server() -> Iterator[_Stdio]:
    srv = _Stdio()
    try:
        yield srv
    finally:
        srv.close()


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(value=inputs())
def test_ten_thousand_frames_over_stdio(stdio_server: _Stdio, value: Any) -> None:
    srv = stdio_server
    if is_long_running(value):
        return
    srv.n += 1
    srv.frames += 1
    if srv.frames in (1, 1000, 5000, 10_000):
        srv.rss.append((srv.frames, _rss_kib(srv.proc.pid)))
    line = value if isinstance(value, bytes) else json.dumps(value).encode()
    barrier = f"barrier-{srv.n}"
    srv.send(line)
    srv.send(json.dumps({"jsonrpc": "2.0", "id": barrier, "method": "ping"}).encode())
    got = srv.until_barrier(barrier)
    # async handlers may answer after the barrier; they are few and fast: collect them too
    want = expected_answers(line, batching=True)
    responses = [m for m in got if not (isinstance(m, dict) and "method" in m)]
    if len(responses) < want:
        srv.n += 1
        second = f"barrier-{srv.n}"
        srv.send(json.dumps({"jsonrpc": "2.0", "id": second, "method": "ping"}).encode())
        responses += [m for m in srv.until_barrier(second) if not (isinstance(m, dict) and "method" in m)]
    assert len(responses) == want, (line, got)


@pytest.mark.slow
def test_memory_stays_flat(stdio_server: _Stdio) -> None:
    """Runs after the 10,000 frames (same module-scoped process): report RSS; it must not grow
    by more than a few MiB between frame 1,000 and the end."""
    srv = stdio_server
    srv.rss.append((srv.frames, _rss_kib(srv.proc.pid)))
    print(f"\nfuzz: {srv.frames} frames; VmRSS (KiB) at frame: {srv.rss}")
    assert srv.frames >= 10_000
    after_warmup = [kib for n, kib in srv.rss if n >= 1000]
    assert max(after_warmup) - min(after_warmup) < 16 * 1024, srv.rss
