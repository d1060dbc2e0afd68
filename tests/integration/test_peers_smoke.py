"""Smoke tests of the integration peers: each starts, answers initialize + ping, and leaves nothing behind.

Deliberately independent of the suite's own transports and RawPeer: plain subprocess pipes and
httpx, so a bug there cannot hide a broken peer (and vice versa).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from fixtures.peers import launch
from fixtures.peers.launch import PEERS, PeerInfo

pytestmark = pytest.mark.integration

DEADLINE = 20.0  # seconds for any one answer; generous for a loaded 2-core CI machine
CLIENT_INFO = {"name": "mcp-conformance-smoke", "version": "0.1.0"}
# The newest handshake version for stdio / streamable HTTP; HTTP+SSE is the 2024-11-05 transport.
VERSION_FOR = {"stdio": "2025-11-25", "streamable-http": "2025-11-25", "sse": "2024-11-05"}
ACCEPT = "application/json, text/event-stream"

CASES = [pytest.param(name, transport, id=f"{name}-{transport}")
         for name, transports in PEERS.items() for transport in transports]


def _initialize(id_: Any, version: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _ping(id_: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "ping"}


def _check_initialize(answer: dict[str, Any], id_: Any, version: str) -> None:
    assert answer.get("jsonrpc") == "2.0", answer
    assert answer.get("id") == id_ and type(answer.get("id")) is type(id_), answer
    result = answer.get("result")
    assert isinstance(result, dict), answer
    # Every peer here supports the version we ask for, so it must echo it (lifecycle: version negotiation).
    assert result.get("protocolVersion") == version, answer
    assert isinstance(result.get("capabilities"), dict), answer
    assert isinstance(result.get("serverInfo"), dict) and isinstance(result["serverInfo"].get("name"), str), answer


def _check_ping(answer: dict[str, Any], id_: Any) -> None:
    assert answer.get("jsonrpc") == "2.0", answer
    assert answer.get("id") == id_ and type(answer.get("id")) is type(id_), answer
    assert "error" not in answer, answer
    result = answer.get("result")
    assert isinstance(result, dict) and set(result) <= {"_meta"}, answer  # EmptyResult


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets LISTENing on ``port`` (Linux /proc/net/tcp{,6})."""
    found: set[str] = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, _, hexport = fields[1].partition(":")
            if int(hexport, 16) == port and fields[3] == "0A":  # 0A = TCP_LISTEN
                if width == 8:
                    found.add(".".join(str(b) for b in reversed(bytes.fromhex(addr))))
                else:
                    raw = b"".join(bytes.fromhex(addr[i:i + 8])[::-1] for i in range(0, 32, 8))
                    found.add(raw.hex())
    return found


# -- stdio -----------------------------------------------------------------------------------------
class LineReader:
    """Reads newline-delimited JSON from a pipe with a deadline per message."""

    def __init__(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buf = b""
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)

    def message(self, predicate: Callable[[Any], bool], *, timeout: float = DEADLINE) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen: list[bytes] = []
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if not line.strip():
                    continue
                msg = json.loads(line)  # the server MUST NOT write anything else to stdout
                if predicate(msg):
                    return msg
                seen.append(line)  # a notification or log message in between
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message within {timeout} s; seen {seen!r}; "
                                     f"stderr: {_stderr_tail(self.proc)}")
            if self.sel.select(left):
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise AssertionError(f"stdout closed (exit {self.proc.poll()}); seen {seen!r}; "
                                         f"stderr: {_stderr_tail(self.proc)}")
                self.buf += chunk


def _stderr_tail(proc: subprocess.Popen) -> str:
    path = getattr(proc, "stderr_path", None)
    return Path(path).read_text(errors="replace")[-2000:] if path else ""


def _send_line(proc: subprocess.Popen, msg: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(msg).encode() + b"\n")
    proc.stdin.flush()


def _stdio_smoke(peer: PeerInfo) -> int:
    version = VERSION_FOR["stdio"]
    with launch.spawn(peer.argv, env=peer.env) as proc:
        reader = LineReader(proc)
        _send_line(proc, _initialize(1, version))
        _check_initialize(reader.message(lambda m: m.get("id") == 1), 1, version)
        _send_line(proc, INITIALIZED)
        _send_line(proc, _ping("ping-1"))
        _check_ping(reader.message(lambda m: m.get("id") == "ping-1"), "ping-1")
        pid = proc.pid
    return pid


# -- streamable HTTP -------------------------------------------------------------------------------
def _sse_messages(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """JSON messages from the ``data`` of SSE events (enough of WHATWG SSE for a smoke test)."""
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                text = "\n".join(data)
                data = []
                if text.strip():
                    yield json.loads(text)
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)


def _post(client: httpx.Client, url: str, msg: dict[str, Any], headers: dict[str, str]) -> tuple[httpx.Response, dict[str, Any] | None]:
    """POST one message; the answer with the same id from a JSON or an SSE body (None for 202)."""
    with client.stream("POST", url, json=msg, headers={"Accept": ACCEPT, **headers}) as resp:
        if resp.status_code == 202:
            return resp, None
        ctype = resp.headers.get("content-type", "")
        if ctype.startswith("text/event-stream"):
            for answer in _sse_messages(resp.iter_lines()):
                if answer.get("id") == msg.get("id"):
                    return resp, answer
            raise AssertionError(f"SSE stream ended without an answer to {msg!r}")
        resp.read()
        assert ctype.startswith("application/json"), (resp.status_code, ctype, resp.text)
        return resp, resp.json()


def _streamable_http_smoke(peer: PeerInfo) -> None:
    assert peer.url is not None
    version = VERSION_FOR["streamable-http"]
    with httpx.Client(timeout=DEADLINE) as client:
        resp, answer = _post(client, peer.url, _initialize(1, version), {})
        assert resp.status_code == 200, resp
        assert answer is not None
        _check_initialize(answer, 1, version)
        headers = {"MCP-Protocol-Version": version}
        if "mcp-session-id" in resp.headers:
            headers["Mcp-Session-Id"] = resp.headers["mcp-session-id"]
        resp, answer = _post(client, peer.url, INITIALIZED, headers)
        assert resp.status_code == 202 and answer is None, resp
        resp, answer = _post(client, peer.url, _ping("ping-1"), headers)
        assert resp.status_code == 200 and answer is not None, resp
        _check_ping(answer, "ping-1")


# -- HTTP+SSE (2024-11-05) -------------------------------------------------------------------------
def _sse_smoke(peer: PeerInfo) -> None:
    assert peer.url is not None
    version = VERSION_FOR["sse"]
    with httpx.Client(timeout=DEADLINE) as client, \
            client.stream("GET", peer.url, headers={"Accept": "text/event-stream"}) as stream:
        assert stream.status_code == 200, stream
        assert stream.headers.get("content-type", "").startswith("text/event-stream"), stream.headers
        lines = stream.iter_lines()
        event, endpoint = None, None
        for line in lines:  # the first event MUST be `endpoint` (2024-11-05 transports#http-with-sse)
            if line.startswith("event:"):
                event = line.partition(":")[2].strip()
            elif line.startswith("data:"):
                endpoint = line.partition(":")[2].strip()
            elif line == "" and endpoint is not None:
                break
        assert event == "endpoint" and endpoint, (event, endpoint)
        post_url = urljoin(peer.url, endpoint)
        assert post_url.startswith(f"http://{launch.HOST}:{peer.port}/"), post_url
        messages = _sse_messages(lines)

        def answer_to(msg: dict[str, Any]) -> dict[str, Any]:
            resp = client.post(post_url, json=msg)
            assert resp.status_code in (200, 202), (resp.status_code, resp.text)
            for answer in messages:
                if answer.get("id") == msg["id"]:
                    return answer
            raise AssertionError(f"SSE stream ended without an answer to {msg!r}")

        _check_initialize(answer_to(_initialize(1, version)), 1, version)
        resp = client.post(post_url, json=INITIALIZED)
        assert resp.status_code in (200, 202), (resp.status_code, resp.text)
        _check_ping(answer_to(_ping("ping-1")), "ping-1")


@contextlib.contextmanager
def _started(name: str, transport: str) -> Iterator[PeerInfo]:
    """launch.start_peer, with an unavailable peer turned into a skip (the fixture would stop the
    peer only at teardown; here the test checks that the process is gone right after the block)."""
    cm = launch.start_peer(name, transport)
    try:
        peer = cm.__enter__()
    except launch.PeerUnavailable as exc:
        pytest.skip(f"peer {name!r}: {exc.reason}")
    with contextlib.ExitStack() as stack:
        stack.push(cm)
        yield peer


# -- the tests -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "transport"), CASES)
def test_peer_answers_initialize_and_ping(name: str, transport: str, request: pytest.FixtureRequest) -> None:
    if name == "everything":
        request.getfixturevalue("peers_installed")
    if transport == "stdio":
        peer = request.getfixturevalue("start_peer")(name, transport)
        assert peer.url is None and peer.pid is None
        pid = _stdio_smoke(peer)
    else:
        with _started(name, transport) as peer:
            assert peer.pid is not None and peer.port is not None
            assert peer.url == f"http://127.0.0.1:{peer.port}{'/sse' if transport == 'sse' else '/mcp'}"
            addresses = _listening_addresses(peer.port)
            if Path("/proc/net/tcp").exists():
                assert addresses == {"127.0.0.1"}, f"{name} listens on {addresses}, not only on loopback"
            (_sse_smoke if transport == "sse" else _streamable_http_smoke)(peer)
            pid = peer.pid
    # stop_process reaped the leader and SIGKILLed its process group: nothing of it may remain
    assert not launch.group_alive(pid), f"process group {pid} of {name}/{transport} still has members"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_http_peer_is_stopped_when_the_test_body_raises() -> None:
    with pytest.raises(RuntimeError, match="boom"), launch.start_peer("tiny", "streamable-http") as peer:
        assert peer.pid is not None and launch.group_alive(peer.pid)
        pid = peer.pid
        raise RuntimeError("boom")
    assert not launch.group_alive(pid)


def test_spawn_stops_a_peer_that_ignores_stdin_eof_and_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    time.sleep(0.05)\n"
    )
    started = time.monotonic()
    with launch.spawn([sys.executable, str(script)], eof_grace=0.2, term_grace=0.2) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"  # SIGTERM is ignored now
        pid = proc.pid
    assert not launch.group_alive(pid)
    assert proc.returncode == -9  # only SIGKILL could end it
    assert time.monotonic() - started < 30  # bounded by the graces, not by the peer


def test_start_peer_reports_a_peer_that_exits_before_listening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str, transport: str, *, port: int | None = None) -> tuple[tuple[str, ...], dict[str, str], str]:
        return (sys.executable, "-c", "import sys; print('cannot start', file=sys.stderr); sys.exit(3)"), {}, "http://x"

    monkeypatch.setattr(launch, "peer_command", broken)
    with pytest.raises(launch.PeerStartError, match="cannot start"):
        with launch.start_peer("tiny", "streamable-http", timeout=DEADLINE):
            pass  # pragma: no cover - never reached


def test_install_script_skips_when_the_registry_is_unreachable(tmp_path: Path) -> None:
    env = {**os.environ, "MCP_CONFORMANCE_PEERS_DIR": str(tmp_path / "peers"),
           "npm_config_registry": "http://127.0.0.1:9/"}  # the discard port: nothing listens there
    proc = subprocess.run(["bash", str(launch.INSTALL_SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    if "skipped: npm is not installed" in proc.stderr or "skipped: node is not installed" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == launch.EX_SKIPPED, (proc.returncode, proc.stdout, proc.stderr)
    assert "skipped: npm registry unreachable (http://127.0.0.1:9/)" in proc.stderr
    assert proc.stdout == ""
    assert not list((tmp_path / "peers").rglob("index.js"))


def test_ensure_installed_turns_the_skip_exit_into_peer_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "_installed", {})  # forget this session's real install
    monkeypatch.setenv("MCP_CONFORMANCE_PEERS_DIR", str(tmp_path / "peers"))
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    with pytest.raises(launch.PeerUnavailable) as info:
        launch.ensure_installed()
    assert info.value.reason.startswith("skipped: "), info.value.reason
    with pytest.raises(launch.PeerUnavailable):  # remembered: the script runs once per process
        launch.ensure_installed()


def test_install_script_is_idempotent_and_offline_once_installed(peers_installed: str) -> None:
    env = {**os.environ, "npm_config_registry": "http://127.0.0.1:9/"}  # any network use would fail
    proc = subprocess.run(["bash", str(launch.INSTALL_SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == peers_installed
    assert Path(peers_installed).is_file()
