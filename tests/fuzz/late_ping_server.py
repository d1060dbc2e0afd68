"""A stdio MCP server for the fuzz engine's tests that answers out of order: the answer to a ping
is held until the next line has been answered, so later answers overtake it.  Otherwise conformant
for what the tests send: a line it cannot parse gets -32700 with id null (except lines holding
``DROP``: no answer), an invalid Request (``"jsonrpc": "1.0"``) gets -32600 with its id, any other
request -32601 with its id, a notification nothing."""

import json
import os
import select
import sys

held: list = []


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")


def serve(line: bytes) -> None:
    global held
    late, held = held, []
    try:
        msg = json.loads(line)
    except ValueError:
        msg = None
        if b"DROP" not in line:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    if isinstance(msg, dict) and "id" in msg and "method" in msg:
        if msg.get("jsonrpc") != "2.0":
            if b"DROP" not in line:
                send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32600, "message": "Invalid Request"}})
        elif msg["method"] == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
                "serverInfo": {"name": "late-ping", "version": "0"}}})
        elif msg["method"] == "ping":
            held.append({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
    for m in late:
        send(m)


buf = b""
while True:
    if held and not select.select([0], [], [], 0.05)[0]:
        for m in held:  # nothing more came: a held answer is not held forever
            send(m)
        held = []
        sys.stdout.flush()
        continue
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    *lines, buf = buf.split(b"\n")
    for line in lines:
        serve(line)
    sys.stdout.flush()
