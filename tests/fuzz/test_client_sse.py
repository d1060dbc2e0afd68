"""The client direction over SSE (streamable HTTP, legacy SSE): a frame is judged as the client
reads it after the event stream's decoding (``conformance.wire.sse.delivered``: invalid UTF-8
replaced, line breaks end data lines), stdio as the raw bytes; id-less answers are attributed
in reading order (a message left unanswered does not take the answer of a later one)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.fuzz import client_engine as ce
from conformance.fuzz import client_oracle as co
from conformance.fuzz.generate import Frame
from conformance.fuzz.oracle import ANSWER, SILENCE, UNREADABLE
from conformance.fuzz.window import Pend
from conformance.spec.versions import Transport
from conformance.wire.envelope import parse_envelope
from conformance.wire.sse import SSEDecoder, delivered, message_event

ROOT = Path(__file__).resolve().parents[2]
V = "2025-11-25"
CANCEL_FF = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\xffx"}}'
ROOTS_FF = b'{"jsonrpc":"2.0","id":"r-1","method":"roots/list","params":{"_meta":{"k":"\xc3\x28"}}}'
PE = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}


def found(raw: bytes, answers: list, transport: str) -> list[tuple[str, str]]:
    ctx = co.context(V, transport, {})
    out = []
    for x in co.expect(raw, ctx):
        out += [(f.requirement, f.problem) for f in co.judge(x, [parse_envelope(json.dumps(a).encode()) for a in answers], ctx)]
    return sorted(out)


def test_delivered_is_what_a_whatwg_reader_gets_from_the_event() -> None:
    assert delivered(b'{"a":1}') == [b'{"a":1}']
    assert delivered(b'{"a":"\xff"}') == ['{"a":"\ufffd"}'.encode()]  # "UTF-8 decode": U+FFFD
    assert delivered(b'{"a":"\x00"}') == [b'{"a":"\x00"}']  # NUL passes
    assert delivered(b'{"a":\n1}') == [b'{"a":']  # the rest is a field named '1}', ignored
    assert delivered(b'{"a":\rdata: 1}') == [b'{"a":\n1}']  # CR ends the line; a data line follows
    assert delivered(b'{"a":1}\n\n{"b":2}') == [b'{"a":1}']  # a blank line dispatches early; the rest has no data line
    for raw in (b'{"a":"\xff"}', b'{"a":\n1}', b"x\r\ny"):  # the same as the stream decoder, fed byte by byte
        dec = SSEDecoder()
        events = [e for b in message_event(raw) for e in dec.feed(bytes([b]))]
        assert [e.data.encode() for e in events if e.dispatched] == delivered(raw)


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_an_invalid_utf8_notification_over_sse_is_a_notification_as_read(transport: str) -> None:
    """The client reads a notification (U+FFFD in a string): no answer is right; -32700 (the bytes
    read strictly, not UTF-8) is accepted too; any other answer is a notification answered."""
    [x] = co.expect(CANCEL_FF, co.context(V, transport))
    assert x.kind == SILENCE and x.parse_error_ok and x.cancel
    assert found(CANCEL_FF, [], transport) == []
    assert found(CANCEL_FF, [PE], transport) == []
    assert found(CANCEL_FF, [{"jsonrpc": "2.0", "id": None, "result": {}}], transport) == [(co.NO_RESPONSE, "NotificationAnswered")]


def test_an_invalid_utf8_notification_on_stdio_is_not_json() -> None:
    [x] = co.expect(CANCEL_FF, co.context(V, "stdio"))
    assert x.kind == UNREADABLE and not x.parse_error_ok
    assert found(CANCEL_FF, [], "stdio") == [(co.PARSE_ERROR, "NoParseErrorResponse")]
    assert found(CANCEL_FF, [PE], "stdio") == []


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_an_invalid_utf8_request_over_sse_must_be_answered_as_read(transport: str) -> None:
    [x] = co.expect(ROOTS_FF, co.context(V, transport))
    assert x.kind == ANSWER and x.parse_error_ok and x.echo == "r-1"
    assert found(ROOTS_FF, [], transport) == [(co.RESPONSE_REQUIRED, "MissingResponse")]
    assert found(ROOTS_FF, [PE], transport) == []
    assert found(ROOTS_FF, [{"jsonrpc": "2.0", "id": "r-1", "error": {"code": -32601, "message": "m"}}], transport) == []
    # still judged as what it is: a roots/list answered with a result by a client without roots
    assert found(ROOTS_FF, [{"jsonrpc": "2.0", "id": "r-1", "result": {"roots": []}}], transport) == [
        ("client.roots.declare", "UndeclaredRoots")]


def test_text_that_stays_not_json_after_decoding_still_needs_minus_32700() -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"ping"\xff}'  # U+FFFD outside a string
    [x] = co.expect(raw, co.context(V, "streamable-http"))
    assert x.kind == UNREADABLE and found(raw, [], "streamable-http") == [(co.PARSE_ERROR, "NoParseErrorResponse")]


# -- attribution (the engine's reading order), without a client process --------------------------


class _Wire:
    async def send(self, data: bytes, **_: object) -> None:
        pass


async def _run(transport: Transport = Transport.STREAMABLE_HTTP):
    cfg = ce.ClientFuzzConfig(target=SimpleNamespace(transport=transport), version=V, grace=0.0, final=5.0)
    got: list = []
    r = ce._ClientRun(cfg, None, 0, lambda f, frame, exp, prefix, d: got.append((f.problem, frame.data)), None)
    r.transport = _Wire()
    return r, got


def _send(r, data: bytes) -> None:
    fr = Frame(r.seq, data, "", "test")
    for x in co.expect(data, r.octx):
        r._place(Pend(fr, x), fr)


def _answer(r, value: dict) -> None:
    r._on_response(parse_envelope(json.dumps(value).encode()), time.monotonic())


async def _barrier(r) -> None:
    await r.close_chunk()
    _answer(r, {"jsonrpc": "2.0", "id": r.segs[-1].barrier.exp.echo, "result": {}})
    r._settle_due(time.monotonic() + 1)  # the chunk settled; its unanswered messages are suspects


TRUNC1 = b'{"jsonrpc":"2.0","method":"notifications/progress"'
TRUNC2 = b'{"jsonrpc":"2.0","id":5,"method":"pi'
PING = {"jsonrpc": "2.0", "id": "a", "method": "ping"}


@pytest.mark.anyio
async def test_an_unanswered_message_does_not_take_the_parse_error_of_a_later_one() -> None:
    """The cause of findings that did not replay: a message left without an answer (an invalid-UTF-8
    notification the client read as a notification, or a broken client's miss) claimed, as a
    suspect, the -32700 of the next message that is not JSON before the client's next answer
    showed where it belongs; that message was then reported unanswered."""
    r, got = await _run()
    _send(r, TRUNC1)  # the client leaves it unanswered (a miss: a finding, charged to it)
    _send(r, json.dumps(PING).encode())
    _answer(r, {"jsonrpc": "2.0", "id": "a", "result": {}})
    await _barrier(r)
    _send(r, TRUNC2)
    _send(r, json.dumps({**PING, "id": "b"}).encode())
    _answer(r, PE)  # TRUNC2's answer: floating until the next answer with an id
    r._settle_due(time.monotonic() + 1)  # TRUNC1, a suspect, must not take it
    _answer(r, {"jsonrpc": "2.0", "id": "b", "result": {}})
    await _barrier(r)
    r._settle_due(time.monotonic() + 10, everything=True)
    assert got == [("NoParseErrorResponse", TRUNC1)]


@pytest.mark.anyio
async def test_an_invalid_utf8_notification_over_sse_never_takes_an_answer() -> None:
    r, got = await _run()
    _send(r, CANCEL_FF)  # read as a notification: silence
    _send(r, json.dumps(PING).encode())
    _answer(r, {"jsonrpc": "2.0", "id": "a", "result": {}})
    await _barrier(r)
    _send(r, TRUNC2)
    _send(r, json.dumps({**PING, "id": "b"}).encode())
    _answer(r, PE)
    r._settle_due(time.monotonic() + 1)
    _answer(r, {"jsonrpc": "2.0", "id": "b", "result": {}})
    await _barrier(r)
    r._settle_due(time.monotonic() + 10, everything=True)
    assert got == []


@pytest.mark.anyio
async def test_a_parse_error_posted_out_of_order_is_still_its_messages() -> None:
    """Over HTTP answers are POSTs of their own: the -32700 may come after a later message's
    answer; no later message asks for it, so the unanswered message takes it."""
    r, got = await _run()
    _send(r, TRUNC1)
    _send(r, json.dumps(PING).encode())
    _answer(r, {"jsonrpc": "2.0", "id": "a", "result": {}})
    _answer(r, PE)  # late
    await _barrier(r)
    r._settle_due(time.monotonic() + 10, everything=True)
    assert got == []


# -- end to end: the reference client over each HTTP transport -----------------------------------

COMMANDS = {"streamable-http": "mcp-reference-client --url {url}", "sse": "mcp-reference-client --sse-url {url}"}


def fuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli", "fuzz", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


@pytest.mark.parametrize("transport", sorted(COMMANDS))
def test_over_sse_the_strict_client_gives_none_and_ignore_parse_error_is_found(transport: str, tmp_path: Path) -> None:
    strict = fuzz("--client-command", COMMANDS[transport], "--transport", transport, "--ops", "invalid-utf8,truncate",
                  "--max-messages", "160",
                  "--seed", "3", "--report-dir", str(tmp_path / "strict"), "--no-shrink", "-q")
    assert strict.returncode == 0, strict.stdout + strict.stderr
    [camp] = json.loads((tmp_path / "strict" / "report.json").read_text())["fuzz"]["campaigns"]
    assert camp["findings"] == [] and camp["operators"]["invalid-utf8"]["messages"] > 30
    broken = fuzz("--client-command", COMMANDS[transport] + " --fault ignore-parse-error", "--transport", transport,
                  "--ops", "truncate", "--max-messages", "40", "--seed", "3",
                  "--report-dir", str(tmp_path / "broken"), "--no-shrink", "-q")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    [camp] = json.loads((tmp_path / "broken" / "report.json").read_text())["fuzz"]["campaigns"]
    assert {(f["requirement"], f["problem"]) for f in camp["findings"]} == {("client.jsonrpc.parse-error", "NoParseErrorResponse")}
    assert camp["findings"][0]["stability"] == {"reproduced": 3, "of": 3}
