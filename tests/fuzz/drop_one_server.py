"""A stdio MCP server for the fuzz engine's tests: answers initialize and ping, every line it cannot
parse with -32700 (id null), an invalid Request (``"jsonrpc": "1.0"``) with -32600 and its id --
except lines holding ``DROP``, which it leaves unanswered (a violation of
jsonrpc.error.parse-error / jsonrpc.error.invalid-request) -- and every other request with -32601.
An id it has seen before is answered with -32099 (no answer the oracle accepts): the engine must
never send an id twice."""

import json
import sys

seen = set()


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
    key = json.dumps(msg["id"])
    if key in seen:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32099, "message": "this id was used before"}})
        continue
    seen.add(key)
    if msg.get("jsonrpc") != "2.0":
        if "DROP" not in line:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32600, "message": "Invalid Request"}})
        continue
    if msg["method"] == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": "drop-one", "version": "0"}}})
    elif msg["method"] == "ping":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
