"""A stdio MCP server for the fuzz oracle's tests: conformant (initialize, ping; -32601 for every
other request; -32600 for an invalid Request, -32700 for what it cannot parse) except that it
stays silent -- breaking "the Server MUST reply with a Response" -- on a request it reads whose
handling RFC 8259 leaves to the implementation or that carries a member nobody defines:

* a member other than jsonrpc / id / method / params in the envelope;
* a JSON-RPC member given twice;
* an integer beyond +-(2^53 - 1) (the id, a progress token, anywhere) or a number no double holds;
* NaN / Infinity, which its parser (Python's json) reads although they are not JSON.

Which of those it drops can be narrowed with ``--only unknown,duplicate,number,nan``."""

import json
import sys

ONLY = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else {"unknown", "duplicate", "number", "nan"}
ENVELOPE = {"jsonrpc", "id", "method", "params"}


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


class Strict(ValueError):
    pass


def _reject(name: str) -> None:
    raise Strict(name)


def big(value, depth=0) -> bool:
    if depth > 100:
        return False
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > 2**53 - 1
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(big(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(big(v, depth + 1) for v in value)
    return False


def request(msg) -> bool:
    """A Request object: "jsonrpc" "2.0", a string method, a string or integer id, params an object
    (MCP's; an array is answered -32600, one of the errors a schema-invalid request may get)."""
    return (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0" and isinstance(msg.get("method"), str)
            and isinstance(msg.get("id"), (str, int)) and not isinstance(msg.get("id"), bool)
            and isinstance(msg.get("params", {}), dict))


for line in sys.stdin:
    dup = []

    def pairs(items):
        names = [k for k, _ in items]
        dup[:] = [k for k in set(names) if names.count(k) > 1 and k in ENVELOPE]  # the top level closes last
        return dict(items)

    try:
        msg = json.loads(line, object_pairs_hook=pairs, parse_constant=_reject)
    except Strict:
        msg = json.loads(line)  # NaN, Infinity: Python reads them
        if "nan" in ONLY and isinstance(msg, dict) and "id" in msg and "method" in msg:
            continue  # the defect: silent
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        continue
    except (ValueError, RecursionError):
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        continue
    if isinstance(msg, list):
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}})
        continue
    if not isinstance(msg, dict) or "method" not in msg or ("id" not in msg and request(dict(msg, id=0))):
        continue  # a response, or a notification
    if not request(msg):
        rid = msg.get("id")
        send({"jsonrpc": "2.0", "id": rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) and not big(rid) else None,
              "error": {"code": -32600, "message": "Invalid Request"}})
        continue
    if ("unknown" in ONLY and set(msg) - ENVELOPE) or ("duplicate" in ONLY and dup) or ("number" in ONLY and big(msg)):
        continue  # the defect: silent
    if msg["method"] == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": "silent", "version": "0"}}})
    elif msg["method"] == "ping":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
