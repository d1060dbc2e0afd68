"""Purpose-built stdio peers for the transport tests: ``python stdio_peer.py <mode> [args]``.

Each mode misbehaves in exactly one way.  Nothing here is imported by the test process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

out = sys.stdout.buffer
err = sys.stderr.buffer


def msg(method: str, **params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params}, separators=(",", ":")).encode()


def echo() -> None:
    """Echo every stdin line back verbatim; say goodbye on stderr at EOF."""
    for line in sys.stdin.buffer:
        out.write(line)
        out.flush()
    err.write(b"bye\n")
    err.flush()


def garbage(big: int) -> None:
    """Every framing problem in a row, then an unterminated last line, then exit 0."""
    sys.stdin.buffer.readline()  # wait for the go signal
    out.write(b"hello, not json\n")
    out.write(b'{"jsonrpc":"2.0","method":"bad\xff\xfeutf8"}\n')
    out.write(msg("crlf") + b"\r\n")
    out.write(b"\n")
    out.write(msg("before-big") + b"\n")
    chunk = b"x" * 65536
    out.write(b'{"big":"')
    for _ in range(big // len(chunk)):
        out.write(chunk)
    out.write(b'"}\n')
    out.write(msg("after-big") + b"\n")
    out.write(b"tail-without-newline")
    out.flush()


def silent() -> None:
    """Read stdin until EOF and never answer."""
    for _ in sys.stdin.buffer:
        pass


def crash() -> None:
    """Answer one line, complain on stderr, exit 3."""
    sys.stdin.buffer.readline()
    out.write(msg("last-words") + b"\n")
    out.flush()
    err.write(b"Traceback (most recent call last):\nRuntimeError: something broke\n")
    err.flush()
    os._exit(3)


def exit_now() -> None:
    err.write(b"fatal: configuration file missing\n")
    err.flush()
    os._exit(7)


def stubborn() -> None:
    """Ignore SIGTERM and stdin EOF: only SIGKILL ends it."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out.write(msg("ready", pid=os.getpid()) + b"\n")
    out.flush()
    for _ in sys.stdin.buffer:
        pass
    while True:
        time.sleep(3600)


def deaf() -> None:
    """Say it is ready, then never read stdin (a client's writes fill the pipe)."""
    out.write(msg("ready") + b"\n")
    out.flush()
    while True:
        time.sleep(3600)


def grandchild() -> None:
    """Spawn a grandchild that ignores SIGTERM, report its pid, then echo (exiting on EOF)."""
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\nwhile True: time.sleep(3600)"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.readline()  # the grandchild has installed its handler
    out.write(msg("pids", server=os.getpid(), grandchild=child.pid) + b"\n")
    out.flush()
    echo()


def busy_start() -> None:
    """Start up the slow way: a grandchild (as npx starts node) burns CPU until the first stdin
    line comes; then echo."""
    child = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: pass"], stdin=subprocess.DEVNULL)
    line = sys.stdin.buffer.readline()
    child.kill()
    child.wait()
    out.write(line)
    out.flush()
    echo()


def flood(size: int) -> None:
    """Write valid messages of about ``size`` bytes to stdout forever."""
    line = msg("flood", pad="p" * size) + b"\n"
    block = line * max(1, 65536 // len(line))
    while True:
        out.write(block)


def noisy(size: int) -> None:
    """Before echoing each line, write ``size`` bytes of log lines to stderr."""
    log = b"log line with some words in it\n"
    block = log * (size // len(log))
    for line in sys.stdin.buffer:
        err.write(block)
        err.flush()
        out.write(line)
        out.flush()


MODES = {
    "echo": echo,
    "garbage": lambda: garbage(int(sys.argv[2])),
    "silent": silent,
    "crash": crash,
    "exit-now": exit_now,
    "stubborn": stubborn,
    "deaf": deaf,
    "grandchild": grandchild,
    "busy-start": busy_start,
    "flood": lambda: flood(int(sys.argv[2])),
    "noisy": lambda: noisy(int(sys.argv[2])),
}

if __name__ == "__main__":
    try:
        MODES[sys.argv[1]]()
    except BrokenPipeError:
        os._exit(0)
