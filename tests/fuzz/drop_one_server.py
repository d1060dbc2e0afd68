"""A stdio MCP server for the fuzz engine's tests: answers initialize and ping, every line it cannot
parse with -32700 (id null) -- except lines holding ``DROP``, which it leaves unanswered (a
violation of jsonrpc.error.parse-error) -- and every other request with -32601."""

import json
import sys


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        if "DROP" not in line:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        continue
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": "drop-one", "version": "0"}}})
    elif msg["method"] == "ping":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
