"""Named faults the reference server can inject, for testing MCP *clients*.

Select them on the command line, each as ``NAME[:ARG][@METHOD[,METHOD...]]``::

    mcp-reference-server --transport stdio --fault delay:2.5@tools/call --fault wrong-id@ping

``@METHOD`` restricts a fault to requests of those methods (default: every request the fault
applies to).  A fault changes only what its name says; everything else stays strictly correct.

=====================  ======================================================================
name                   effect
=====================  ======================================================================
delay[:SECONDS]        answer after SECONDS (default 1.0); cancellation still works
no-response            never answer (the request stays in flight until cancelled)
wrong-id               answer with an id the client never used
wrong-id-type          answer with the id's JSON type changed (``7`` -> ``"7"``, ``"7"`` -> ``7``)
malformed-json         answer with bytes that are not JSON (a truncated response)
error[:CODE]           answer with a JSON-RPC error CODE (default -32603) instead of the result
close-mid-response     write the first half of the response, then close the stream
                       (stdio: stdout is closed and the server exits; HTTP: the connection drops)
stdout-log[:TEXT]      write a non-JSON log line to stdout before the response (stdio)
unsupported-version[:V]  answer ``initialize`` with protocolVersion V (default ``1999-01-01``)
early-notification     send a ``notifications/message`` before the ``initialize`` response
undeclared-request[:M] after ``notifications/initialized``, send request M (default
                       ``sampling/createMessage``) although the client did not declare the
                       capability it needs
=====================  ======================================================================
"""

from __future__ import annotations


from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conformance.wire.envelope import MISSING, dumps

from reference_server.messages import Outgoing, RequestContext

if TYPE_CHECKING:  # pragma: no cover
    from reference_server.core import Connection

__all__ = ["Fault", "FaultPlan", "FAULTS", "parse_fault", "FaultError"]

# name -> (takes an argument, default argument, one-line description)
FAULTS: dict[str, tuple[bool, Any, str]] = {
    "delay": (True, 1.0, "answer after SECONDS (default 1.0); cancellation still works"),
    "no-response": (False, None, "never answer the request"),
    "wrong-id": (False, None, "answer with an id the client never used"),
    "wrong-id-type": (False, None, 'answer with the id\'s JSON type changed (7 -> "7")'),
    "malformed-json": (False, None, "answer with bytes that are not JSON"),
    "error": (True, -32603, "answer with a JSON-RPC error CODE instead of the result"),
    "close-mid-response": (False, None, "write half the response, then close the stream"),
    "stdout-log": (True, "reference-server: this log line is not an MCP message", "write a non-JSON line to stdout before the response"),
    "unsupported-version": (True, "1999-01-01", "answer initialize with an unsupported protocolVersion"),
    "early-notification": (False, None, "send notifications/message before the initialize response"),
    "undeclared-request": (True, "sampling/createMessage", "send a request for a capability the client did not declare"),
}

_RESPONSE_FAULTS = ("no-response", "wrong-id", "wrong-id-type", "malformed-json", "error", "close-mid-response")
_INITIALIZE_ONLY = ("unsupported-version", "early-notification")


class FaultError(ValueError):
    """A ``--fault`` value that names no fault or carries a bad argument."""


@dataclass(frozen=True)
class Fault:
    name: str
    arg: Any = None
    methods: frozenset[str] | None = None  # None: every request

    def applies(self, method: str) -> bool:
        if self.name in _INITIALIZE_ONLY:
            return method == "initialize"
        return self.methods is None or method in self.methods

    def __str__(self) -> str:
        text = self.name
        if self.arg is not None and self.arg != FAULTS[self.name][1]:
            text += f":{self.arg}"
        if self.methods:
            text += "@" + ",".join(sorted(self.methods))
        return text


def parse_fault(text: str) -> Fault:
    """``NAME[:ARG][@METHOD[,METHOD...]]`` -> :class:`Fault`."""
    spec_, _, methods = text.partition("@")
    name, sep, arg = spec_.partition(":")
    name = name.strip()
    if name not in FAULTS:
        raise FaultError(f"unknown fault {name!r}; known faults: {', '.join(FAULTS)}")
    takes_arg, default, _ = FAULTS[name]
    value: Any = default
    if sep:
        if not takes_arg:
            raise FaultError(f"fault {name!r} takes no argument")
        try:
            if name == "delay":
                value = float(arg)
                if value < 0:
                    raise ValueError
            elif name == "error":
                value = int(arg)
            else:
                value = arg
        except ValueError:
            raise FaultError(f"bad argument {arg!r} for fault {name!r}") from None
    ms = frozenset(m.strip() for m in methods.split(",") if m.strip()) if methods else None
    return Fault(name, value, ms)


@dataclass
class FaultPlan:
    """The faults selected for this server process."""

    faults: tuple[Fault, ...] = ()

    @classmethod
    def parse(cls, values: list[str] | tuple[str, ...] | None) -> "FaultPlan":
        return cls(tuple(parse_fault(v) for v in values or ()))

    def __bool__(self) -> bool:
        return bool(self.faults)

    def named(self, name: str) -> Fault | None:
        for f in self.faults:
            if f.name == name:
                return f
        return None

    def for_request(self, ctx: "RequestContext") -> "_RequestFault | None":
        if not self.faults:
            return None
        matching = [f for f in self.faults if f.applies(ctx.method) and f.name != "undeclared-request"]
        if not matching:
            return None
        return _RequestFault(matching)

    async def after_initialized(self, conn: "Connection") -> None:
        f = self.named("undeclared-request")
        if f is None:
            return
        method = str(f.arg)
        params: dict[str, Any] = {
            "sampling/createMessage": {"messages": [{"role": "user", "content": {"type": "text", "text": "fault: undeclared sampling"}}], "maxTokens": 16},
            "elicitation/create": {"message": "fault: undeclared elicitation", "requestedSchema": {"type": "object", "properties": {}}},
            "roots/list": {},
        }.get(method, {})

        async def send() -> None:
            try:
                await conn.request(method, params, timeout=conn.config.request_timeout)
            except Exception:
                pass

        conn.task_group.start_soon(send)


@dataclass
class _RequestFault:
    faults: list[Fault] = field(default_factory=list)

    async def run(self, ctx: "RequestContext", handler: Any) -> None:
        import anyio

        from reference_server.errors import RPCError

        conn = ctx.conn
        names = {f.name: f for f in self.faults}
        if "early-notification" in names:
            await ctx.notify("notifications/message", {"level": "info", "logger": "fault", "data": "early-notification: sent before the initialize response"})
        if "delay" in names:
            await anyio.sleep(float(names["delay"].arg))
        if "no-response" in names:
            await anyio.sleep_forever()
        try:
            result = handler(ctx, ctx.params)
            if hasattr(result, "__await__"):
                result = await result
            error = None
        except RPCError as err:
            result, error = MISSING, err
        if "unsupported-version" in names and isinstance(result, dict):
            result["protocolVersion"] = str(names["unsupported-version"].arg)
        if "error" in names:
            code = int(names["error"].arg)
            result, error = MISSING, RPCError(code, f"fault: error {code} injected", {"fault": "error"})
        if "stdout-log" in names:
            await ctx.sink(Outgoing(str(names["stdout-log"].arg).encode(), "raw"))
        response_fault = next((f for f in self.faults if f.name in _RESPONSE_FAULTS), None)
        if response_fault is None:
            await conn._finish(ctx, result=result, error=error)
            return
        if error is not None:
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": ctx.id, "error": error.to_json()}
        else:
            res = result if isinstance(result, dict) else {}
            if ctx.modern:
                res = conn._modern_result(ctx.method, res)
            body = {"jsonrpc": "2.0", "id": ctx.id, "result": res}
        name = response_fault.name
        if name == "wrong-id":
            body["id"] = _foreign_id(ctx.id)
            out = Outgoing(dumps(body), "response", answers=ctx.id, message=body)
        elif name == "wrong-id-type":
            body["id"] = _retyped_id(ctx.id)
            out = Outgoing(dumps(body), "response", answers=ctx.id, message=body)
        elif name == "malformed-json":
            data = dumps(body)
            out = Outgoing(data[: max(1, len(data) // 2)] + b"}}}]", "response", answers=ctx.id)
        elif name == "close-mid-response":
            data = dumps(body)
            out = Outgoing(data[: max(1, len(data) // 2)], "close", answers=ctx.id)
        else:  # "error" was applied above; nothing else reaches here
            out = Outgoing(dumps(body), "response", answers=ctx.id, message=body)
        await conn._finish(ctx, raw=out)


def _foreign_id(rid: Any) -> Any:
    if isinstance(rid, int):
        return rid + 1_000_003
    return f"{rid}-not-yours"


def _retyped_id(rid: Any) -> Any:
    if isinstance(rid, int):
        return str(rid)
    try:
        return int(rid)
    except (TypeError, ValueError):
        return len(str(rid)) + 1_000_003
