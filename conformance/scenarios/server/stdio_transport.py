"""basic/transports#stdio (2026-07-28: basic/transports/stdio): one message per line, nothing but
messages on stdout, exit when stdin closes; and the transports' UTF-8 rule (every transport)."""

from __future__ import annotations

import time
from typing import Any

from conformance.server.context import ScenarioContext
from conformance.runtime.records import Connection
from conformance.runtime.peer import PeerError
from conformance.runtime.registry import ConnectionKind, scenario
from conformance.spec.versions import Transport, spec
from conformance.wire.transcript import Direction, TranscriptEntry
from conformance.wire.envelope import Kind, same_id

from ._framing import invalid_utf8, split_lines, split_runs, stdout_noise, utf8_rule_applies
from ._helpers import barrier

NEWLINES = "transport.stdio.no-embedded-newlines"
STDOUT = "transport.stdio.stdout-only-messages"
LF = "transport.stdio.lf-delimiter"
EXIT_2026 = "transport.stdio.exit-on-eof"
GRACEFUL_END = "subscriptions.graceful-end"
UTF8 = "transport.utf8"

STDIO = [Transport.STDIO]
MAX_REPORTED = 10
# a request id long enough to take a server's less common code paths (long ids are legal)
LONG_ID = "mcp-conformance-stdio-framing-probe-" + "0123456789abcdef" * 3
# a request id with non-ASCII characters (2 to 4 UTF-8 bytes each); the response must echo it
UTF8_ID = "mcp-conformance-utf8-probe-\u00e9\u00fc-\u2713-\U0001d11e"
_LF_PROBLEMS = ("CR before LF", "no newline at end of stream")


def _probe_method(version: str) -> str:
    return "ping" if spec(version).ping else "server/discover"


def _text(raw: bytes | None, limit: int = 200) -> str:
    if raw is None:
        return ""
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return text + (f"... ({len(raw)} bytes)" if len(raw) > limit else "")


class _Tally:
    """At most MAX_REPORTED violations per requirement; the count of the rest is a note."""

    def __init__(self, ctx: ScenarioContext) -> None:
        self.ctx = ctx
        self.counts: dict[str, int] = {}

    def fail(self, requirement: str, conn: Connection, entries: list[TranscriptEntry], **kw: object) -> None:
        n = self.counts[requirement] = self.counts.get(requirement, 0) + 1
        if n <= MAX_REPORTED:
            self.ctx.check(requirement, False, entries=[e.seq for e in entries], peer=conn.peer, **kw)  # type: ignore[arg-type]

    def finish(self, requirement: str, passed: str) -> None:
        n = self.counts.get(requirement, 0)
        if n == 0:
            self.ctx.check(requirement, True, message=passed)
        elif n > MAX_REPORTED:
            self.ctx.note(f"{n} violations in all; the first {MAX_REPORTED} are reported", requirement=requirement)


@scenario(requirements=[NEWLINES, STDOUT, LF], transports=STDIO, order=900)
async def stdout_framing(ctx: ScenarioContext) -> None:
    """A request with a long string id, then every line the server wrote to stdout on every
    connection of this version during the run: one JSON-RPC message per line, delimited by a
    newline, and nothing else."""
    peer = await ctx.connect()
    method = _probe_method(ctx.version)
    try:
        rid = await peer.request(method, id=LONG_ID)
        await peer.expect_response(rid)
    except PeerError as exc:
        ctx.note(f"the {method} sent with a long string id got no usable answer ({exc}); the lines received are judged")
    tally = _Tally(ctx)
    lines = 0
    conns = ctx.connections()
    for conn in conns:
        entries = [e for e in conn.transcript.entries if e.direction == Direction.IN]
        lines += len(entries)
        for kind, run in split_runs(entries):
            if kind == "split":
                n = split_lines(run[0]) if len(run) == 1 else len(run)
                shown = run[0].raw.split(b"\n")[:6] if len(run) == 1 else [e.raw for e in run[:6]]
                tally.fail(
                    NEWLINES,
                    conn,
                    run,
                    problem="EmbeddedNewlines",
                    message=(
                        f"{n} consecutive stdout lines on {conn.label} are one JSON message split by "
                        f"embedded newlines (starting {_text(shown[0], 60)!r}); a line-reading client sees "
                        f"{n} lines that are not JSON"
                    ),
                    expected="one message per line, without embedded newlines",
                    actual=[_text(line, 120) for line in shown],
                )
            else:
                entry = run[0]
                what = "a blank line" if not (entry.raw or b"").strip() else f"{_text(entry.raw)!r}"
                tally.fail(
                    STDOUT,
                    conn,
                    run,
                    problem="NotAnMcpMessage",
                    message=f"the server wrote {what} to stdout on {conn.label}: not an MCP message",
                    expected="only JSON-RPC messages on stdout (logs belong on stderr)",
                    actual=_text(entry.raw),
                )
        for entry in entries:
            problem = entry.meta.get("problem") or ""
            if invalid_utf8(entry):
                if not utf8_rule_applies(ctx.version):
                    tally.fail(
                        STDOUT,
                        conn,
                        [entry],
                        problem="NotAnMcpMessage",
                        message=f"the server wrote a line that is not UTF-8 to stdout on {conn.label}: not an MCP message",
                        expected="only JSON-RPC messages (UTF-8 JSON text) on stdout",
                        actual=_text(entry.raw),
                    )
                continue
            found = [p for p in _LF_PROBLEMS if p in problem]
            if found and entry.envelope is not None and not stdout_noise(entry):
                tally.fail(
                    LF,
                    conn,
                    [entry],
                    problem="NotNewlineDelimited",
                    message=(
                        f"a message on {conn.label} is not delimited by a plain newline: {', '.join(found)} "
                        "(practice: NDJSON ends each line with LF alone; graded as a warning)"
                    ),
                    expected="<message>\\n",
                    actual=found,
                )
    passed = f"{lines} stdout line(s) on {len(conns)} connection(s) checked"
    for req in (NEWLINES, STDOUT, LF):
        tally.finish(req, passed)


@scenario(
    requirements=[EXIT_2026, GRACEFUL_END],
    transports=STDIO,
    connection=ConnectionKind.DISPOSABLE,  # closing stdin ends it: a later disposable item would need a new one,
    order=1,  # so it comes after every other disposable item of its version, whatever their module
)
async def exit_on_stdin_eof(ctx: ScenarioContext) -> None:
    """After a round trip (2026-07-28: a subscriptions/listen, acknowledged), close the server's
    stdin: the server exits within the timeout, and ends the subscription with a result first."""
    peer = await ctx.connect(fresh=True)
    try:
        await barrier(peer, ctx.version)
    except PeerError as exc:
        ctx.note(f"the round trip before closing stdin failed ({exc}); stdin is closed anyway")
    listen = await _open_listen(ctx, peer) if ctx.applies(GRACEFUL_END) else None
    transport = peer.transport
    mark = len(peer.transcript)
    await transport.close_stdin()  # type: ignore[attr-defined]
    started = time.monotonic()
    code = await transport.wait_exit(ctx.timeout)  # type: ignore[attr-defined]
    waited = time.monotonic() - started
    if listen is not None:
        await _judge_graceful_end(ctx, peer, listen, mark)
    ctx.check(
        EXIT_2026,
        code is not None,
        problem="NoExitOnStdinEof",
        message=(
            f"the server exited {waited:.2f} s after its stdin was closed (code {code})"
            if code is not None
            else f"the server was still running {waited:.3g} s after its stdin was closed; the client has to signal it"
        ),
        expected=f"the process exits within {ctx.timeout:g} s of stdin reaching end-of-file",
        actual="still running" if code is None else f"exited with code {code} after {waited:.2f} s",
        entries=[mark],
    )


async def _open_listen(ctx: ScenarioContext, peer: Any) -> str | None:
    """subscriptions/listen (tool-list changes): its id once acknowledged, else None (said why)."""
    rid = "mcp-conformance-listen-shutdown"
    try:
        await peer.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=rid)
        first = await peer.expect_message(
            lambda e: (e.kind is Kind.NOTIFICATION and e.method == "notifications/subscriptions/acknowledged")
            or (e.kind in (Kind.RESULT, Kind.ERROR) and same_id(e.id, rid)),
            what="the acknowledgment of the subscription", timeout=ctx.timeout)
    except PeerError as exc:
        ctx.not_reached(GRACEFUL_END, f"subscriptions/listen was not acknowledged ({exc})")
        return None
    if first.kind is not Kind.NOTIFICATION:
        ctx.not_reached(GRACEFUL_END, "subscriptions/listen was answered at once, not acknowledged (subscriptions.listen.supported "
                                      "judges that)")
        return None
    return rid


async def _judge_graceful_end(ctx: ScenarioContext, peer: Any, rid: str, mark: int) -> None:
    answer = None
    try:
        answer = await peer.expect_response(rid, timeout=0.5)
    except PeerError:
        pass
    ok = answer is not None and answer.kind is Kind.RESULT
    ctx.check(
        GRACEFUL_END,
        ok,
        problem="SubscriptionNotEndedGracefully",
        message=(
            "stdin closed: the server answered the open subscriptions/listen with a result before closing stdout"
            if ok else
            "stdin closed: the open subscriptions/listen "
            + ("was answered with an error" if answer is not None else "got no response before the server closed stdout")
            + ", not the successful response that signals a graceful end (reading: the end of stdin is the server's "
              "shutdown, 'the primary graceful-shutdown signal' of transports/stdio#shutdown, during which it tears "
              "its subscriptions down)"
        ),
        expected=f"a result response to {rid!r}",
        actual=answer.error if answer is not None and answer.kind is Kind.ERROR else None,
        entries=[answer] if answer is not None else [mark],
    )


@scenario(requirements=[UTF8], since="2025-03-26", order=900)
async def messages_utf8(ctx: ScenarioContext) -> None:
    """A request whose id holds non-ASCII characters (echoed in the response), then every frame
    the server sent on every connection of this version during the run: UTF-8 encoded."""
    peer = await ctx.connect()
    method = _probe_method(ctx.version)
    try:
        rid = await peer.request(method, id=UTF8_ID)
        await peer.expect_response(rid)
    except PeerError as exc:
        ctx.note(f"the {method} sent with a non-ASCII string id got no usable answer ({exc}); the frames received are judged", requirement=UTF8)
    tally = _Tally(ctx)
    frames = 0
    conns = ctx.connections()
    for conn in conns:
        for entry in conn.transcript.entries:
            if entry.direction != Direction.IN:
                continue
            frames += 1
            if invalid_utf8(entry):
                why = entry.meta.get("problem") or "; ".join(p for p in entry.envelope.problems if "UTF-8" in p)  # type: ignore[union-attr]
                stream = entry.meta.get("stream")
                tally.fail(
                    UTF8,
                    conn,
                    [entry],
                    problem="InvalidEncoding",
                    message=f"a message on {conn.label}{f' ({stream})' if stream else ''} is not valid UTF-8: {why}",
                    expected="UTF-8 encoded JSON text",
                    actual=_text(entry.raw),
                )
    tally.finish(UTF8, f"{frames} frame(s) on {len(conns)} connection(s) checked")
