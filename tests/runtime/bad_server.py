#!/usr/bin/env python3
"""A stdio MCP server with one defect at a time, for the runtime and CLI tests.

    python bad_server.py MODE [--pid-file PATH]

It answers like ``fixtures/peers/tiny_server.py`` (a correct dual-era server) except for MODE:

  ok                    no defect
  silent                reads stdin, never writes a byte
  stubborn              like silent, but ignores SIGTERM and stays after stdin closes
  garbage               writes a line of text before every answer
  huge-line             answers ping with a 10 MB line (then normally)
  invalid-utf8          answers ping with a result containing invalid UTF-8
  die-after-init        answers initialize, then exits (code 7) on the next request
  crash-at-start        writes to stderr and exits with code 3 at once
  answer-notifications  answers every notification with an error whose id is null
  no-parse-error        says nothing when a line is not JSON
  exit-on-parse-error   exits (code 1) when a line is not JSON
  wrong-ping            answers ping with {"pong": true}
  wrong-method-code     answers unknown methods with -32603
  no-serverinfo         server/discover result without _meta serverInfo (a SHOULD), initialize result
                        without serverInfo (a MUST)
  bad-schema            initialize result whose serverInfo.name is a number
  only-2025-06-18       supports only 2025-06-18: offers it whatever version is asked for
  misnegotiate          supports 2025-06-18 (offers it for unknown versions) but answers 2025-03-26 when asked for it
  late                  answers every message 0.3 s late (a server too slow for a short --run-timeout)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures" / "peers"))

from tiny_server import Server  # noqa: E402

MODES = {
    "ok", "silent", "stubborn", "garbage", "huge-line", "invalid-utf8", "die-after-init", "crash-at-start",
    "answer-notifications", "no-parse-error", "exit-on-parse-error", "wrong-ping",
    "wrong-method-code", "no-serverinfo", "bad-schema", "only-2025-06-18", "misnegotiate", "late",
}


def main() -> int:
    args = sys.argv[1:]
    mode = args[0] if args else "ok"
    if mode not in MODES:
        print(f"unknown mode {mode!r}", file=sys.stderr)
        return 2
    if "--pid-file" in args:
        path = args[args.index("--pid-file") + 1]
        tmp = f"{path}.{os.getpid()}.tmp"  # several server processes may start at once
        Path(tmp).write_text(str(os.getpid()))
        os.replace(tmp, path)
    if mode == "crash-at-start":
        print("bad_server: configuration file missing, giving up", file=sys.stderr, flush=True)
        return 3
    if mode == "stubborn":
        import signal
        import time

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for _ in sys.stdin.buffer:
            pass
        while True:
            time.sleep(3600)
    out = sys.stdout.buffer
    server = Server()
    initialized = False
    for line in sys.stdin.buffer:
        if mode == "silent" or not line.strip():
            continue
        if mode == "late":
            import time

            time.sleep(0.3)
        try:
            msg = json.loads(line)
        except ValueError:
            if mode == "no-parse-error":
                continue
            if mode == "exit-on-parse-error":
                print("bad_server: cannot parse input", file=sys.stderr, flush=True)
                return 1
            msg = None
        if mode == "die-after-init" and initialized:
            print("bad_server: dying on purpose", file=sys.stderr, flush=True)
            return 7
        answer = server.handle_text(line)
        method = msg.get("method") if isinstance(msg, dict) else None
        if isinstance(msg, dict) and "id" not in msg and method is not None and mode == "answer-notifications":
            answer = {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": f"no {method}"}}
        if method == "initialize":
            initialized = True
            result = answer.get("result") if isinstance(answer, dict) else None
            if mode == "bad-schema" and result:
                result["serverInfo"]["name"] = 42
            if mode == "no-serverinfo" and result:
                result.pop("serverInfo", None)
            requested = (msg.get("params") or {}).get("protocolVersion")
            if mode == "only-2025-06-18" and result:
                result["protocolVersion"] = "2025-06-18"
            if mode == "misnegotiate" and result:
                result["protocolVersion"] = "2025-03-26" if requested == "2025-06-18" else "2025-06-18"
        if method == "ping" and isinstance(answer, dict):
            if mode == "wrong-ping":
                answer["result"] = {"pong": True}
            elif mode == "huge-line":
                out.write(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"' + b"x" * (10 * 1024 * 1024) + b'"}}\n')
            elif mode == "invalid-utf8":
                out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(msg.get("id")).encode() + b',"result":{"_meta":{"x":"\xff\xfe"}}}\n')
                out.flush()
                continue
        if method == "server/discover" and mode == "no-serverinfo" and isinstance(answer, dict) and "result" in answer:
            answer["result"].pop("_meta", None)
        if mode == "wrong-method-code" and isinstance(answer, dict) and answer.get("error", {}).get("code") == -32601:
            answer["error"]["code"] = -32603
        if answer is None:
            continue
        if mode == "garbage":
            out.write(b"Server starting... (this line is not JSON-RPC)\n")
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
