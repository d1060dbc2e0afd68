"""Clients that misbehave in ordinary ways, for the client-mode tests (not MCP clients at all).

    python fake_client.py MODE TOKEN [SERVER]

``TOKEN`` only marks the process (tests look for leftovers by it); ``SERVER`` is the launcher the
suite substituted for ``{server}``.  Modes:

* ``exit``: exits at once (never starts the server);
* ``hang``: never starts the server, never exits;
* ``garbage``: starts the server, writes a line that is not JSON, then initialize, waits for the
  answer, closes the server's stdin and exits;
* ``stall``: starts the server, sends initialize, then waits forever (the server stays up);
* ``stubborn``: as ``stall``, and ignores SIGTERM.
* ``slow-start``: busy (CPU) for ``$FAKE_CLIENT_BUSY`` seconds (default 3), then as ``stall``: a
  client whose imports take long on a loaded machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time


def main() -> int:
    mode, _token = sys.argv[1], sys.argv[2]
    server = sys.argv[3] if len(sys.argv) > 3 else None
    if mode == "exit":
        return 0
    if mode == "hang":
        while True:
            time.sleep(3600)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "slow-start":
        end = time.monotonic() + float(os.environ.get("FAKE_CLIENT_BUSY", "3"))
        while time.monotonic() < end:
            pass
    assert server, "this mode needs the server launcher"
    proc = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "fake-client", "version": "0"}}}
    if mode == "garbage":
        proc.stdin.write(b"hello, this is not JSON\n")
    proc.stdin.write(json.dumps(init).encode() + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if mode == "garbage":
        assert b'"result"' in line, line
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.close()
        proc.wait(10)
        return 0
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main())
