"""The stdio relay: the process an MCP client under test starts as "the server".

    python -S conformance/client/relay.py SOCKET TOKEN

Run by the launcher that ``{server}`` names in ``mcp-conformance client --command ...`` (one token,
absolute paths: SDK clients pass almost no environment and may start the server in another
directory).  It connects to the running suite over a Unix socket, says which run it belongs to,
and then only forwards: the client's bytes (its writes to our stdin) to the suite, the suite's
bytes to our stdout, and the process facts no wire log has -- stdin closed, signals received.
The suite plays the server in its own event loop (raw peer, transcript, schema oracle) and decides
when this process exits: on SIGTERM it normally tells us to exit, a "stubborn" scenario does not
(the client then has to escalate to SIGKILL).  If the suite goes away, we exit at once.

Standard library only, and run by path (``-S``: no site-packages), so it starts in ~20 ms and
imports nothing of the suite.

Frames, both directions: one type byte, a 4-byte big-endian length, the payload.
relay -> suite: ``H`` hello (JSON: token, pid, argv, cwd, environment names), ``D`` bytes the
client wrote, ``E`` stdin closed, ``S`` a signal (its number, ASCII).
suite -> relay: ``D`` bytes for stdout, ``C`` close stdout, ``X`` exit (code, ASCII).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys

_HEAD = struct.Struct(">cI")


def _frame(kind: bytes, payload: bytes = b"") -> bytes:
    return _HEAD.pack(kind, len(payload)) + payload


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: relay.py SOCKET TOKEN (started by mcp-conformance client)\n")
        return 2
    path, token = argv[1], argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as exc:
        sys.stderr.write(f"mcp-conformance relay: cannot reach the suite at {path}: {exc}\n")
        return 1
    # signals become frames; the self-pipe wakes the loop
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)
    signal.set_wakeup_fd(wfd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    hello = {"token": token, "pid": os.getpid(), "ppid": os.getppid(), "argv": argv[1:], "cwd": os.getcwd(),
             "env": sorted(os.environ)}
    out = bytearray(_frame(b"H", json.dumps(hello).encode()))
    stdin = sys.stdin.buffer.fileno()
    stdout = sys.stdout.buffer.fileno()
    os.set_blocking(stdin, False)
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(stdin, selectors.EVENT_READ, "stdin")
    sel.register(rfd, selectors.EVENT_READ, "signal")
    sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, "sock")
    inbuf = bytearray()
    stdout_open = True
    while True:
        for key, events in sel.select():
            what = key.data
            if what == "stdin":
                try:
                    data = os.read(stdin, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    out += _frame(b"D", data)
                else:
                    out += _frame(b"E")
                    sel.unregister(stdin)
            elif what == "signal":
                for b in os.read(rfd, 64):
                    out += _frame(b"S", str(b).encode())
            else:  # the suite's socket
                if events & selectors.EVENT_READ:
                    try:
                        data = sock.recv(65536)
                    except BlockingIOError:
                        data = None
                    except OSError:
                        data = b""
                    if data == b"":
                        return 1  # the suite is gone: nothing more to relay
                    if data:
                        inbuf += data
                        while len(inbuf) >= _HEAD.size:
                            kind, size = _HEAD.unpack_from(inbuf)
                            if len(inbuf) < _HEAD.size + size:
                                break
                            payload = bytes(inbuf[_HEAD.size:_HEAD.size + size])
                            del inbuf[:_HEAD.size + size]
                            if kind == b"D" and stdout_open:
                                os.set_blocking(stdout, True)
                                try:
                                    _write_all(stdout, payload)
                                except OSError:
                                    stdout_open = False  # the client closed its end of our stdout
                            elif kind == b"C" and stdout_open:
                                stdout_open = False
                                os.close(stdout)
                            elif kind == b"R":  # the suite writes to "the server's" stderr
                                try:
                                    _write_all(2, payload)
                                except OSError:
                                    pass
                            elif kind == b"X":
                                _flush(sock, out)
                                return int(payload or b"0")
                if events & selectors.EVENT_WRITE and out:
                    try:
                        n = sock.send(out)
                        del out[:n]
                    except BlockingIOError:
                        pass
                    except OSError:
                        return 1
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if out else 0)
        sel.modify(sock, mask, "sock")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _flush(sock: socket.socket, out: bytearray) -> None:
    sock.setblocking(True)
    try:
        sock.sendall(bytes(out))
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv))
