"""Expectations: id strictness, interleaving, deadlines, closed connections."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from conformance.runtime.peer import ConnectionLost, ErrorResponse, ExpectTimeout, RawPeer, UnexpectedMessage
from conformance.transports.base import Inbound, ProcessExited, Transport, TransportClosed
from conformance.wire.envelope import Envelope, Kind, dumps, parse_envelope

from .conftest import silent, standard

pytestmark = pytest.mark.anyio


async def test_expect_response_and_result(connect) -> None:
    async with connect(standard) as (peer, _):
        rid = await peer.request("echo", {"a": 1})
        env = await peer.expect_response(rid)
        assert env.kind is Kind.RESULT and env.result == {"params": {"a": 1}}
        assert await peer.call("ping") == {}


async def test_string_id_never_matches_integer_id(connect) -> None:
    async def wrong_type(server, env) -> None:
        await server.result(str(env.id), {})  # echoes 7 as "7"

    async with connect(wrong_type) as (peer, _):
        await peer.request("ping", id=7)
        with pytest.raises(ExpectTimeout) as info:
            await peer.expect_response(7, timeout=0.2)
        text = str(info.value)
        assert '"7"' in text and "not the id 7" in text
        env = await peer.expect_response("7")  # still there for whoever asks for "7"
        assert env.id == "7"


async def test_float_and_bool_ids_do_not_match_integers(connect) -> None:
    async def floaty(server, env) -> None:
        await server.send_raw(b'{"jsonrpc":"2.0","id":1.0,"result":{}}')
        await server.send_raw(b'{"jsonrpc":"2.0","id":true,"result":{}}')

    async with connect(floaty) as (peer, _):
        await peer.request("ping", id=1)
        with pytest.raises(ExpectTimeout):
            await peer.expect_response(1, timeout=0.2)
        assert (await peer.expect_response(1.0)).id == 1.0
        assert (await peer.expect_response(True)).id is True


async def test_notification_interleaved_before_the_response(connect) -> None:
    async def chatty(server, env) -> None:
        await server.notify("notifications/message", {"level": "info", "data": "one"})
        await server.notify("notifications/progress", {"progressToken": 1, "progress": 1})
        await server.result(env.id, {})

    async with connect(chatty) as (peer, _):
        rid = await peer.request("ping")
        assert (await peer.expect_response(rid)).kind is Kind.RESULT
        # the notifications stayed in the buffer, in any order of asking
        progress = await peer.expect_notification("notifications/progress")
        message = await peer.expect_notification("notifications/message")
        assert progress.params["progress"] == 1 and message.params["data"] == "one"
        with pytest.raises(ExpectTimeout):
            await peer.expect_notification("notifications/message", timeout=0.05)


async def test_server_request_before_the_response_is_auto_answered(connect) -> None:
    state: dict[str, Any] = {"replies": []}

    async def asks_first(server, env) -> None:
        if env.kind is Kind.REQUEST and env.method == "tools/call":
            state["call"] = env.id
            await server.send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
            await server.send({"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {}})
        elif env.is_response:
            state["replies"].append(env.value)
            if len(state["replies"]) == 2:
                await server.result(state["call"], {"content": []})

    async with connect(asks_first) as (peer, _):
        result = await peer.call("tools/call", {"name": "t"})
    assert result == {"content": []}
    assert state["replies"] == [
        {"jsonrpc": "2.0", "id": "s1", "result": {}},
        {"jsonrpc": "2.0", "id": "s2", "error": {"code": -32601, "message": "Method not found: sampling/createMessage"}},
    ]
    auto = [e for e in peer.transcript if e.direction == "out" and e.meta.get("auto_reply")]
    assert [e.envelope.id for e in auto] == ["s1", "s2"]


async def test_duplicate_response_is_returned_once_per_wait_and_stays_visible(connect) -> None:
    async def twice(server, env) -> None:
        await server.result(env.id, {"n": 1})
        await server.result(env.id, {"n": 2})

    async with connect(twice) as (peer, _):
        rid = await peer.request("ping")
        first = await peer.expect_response(rid)
        second = await peer.expect_response(rid)
        assert (first.result, second.result) == ({"n": 1}, {"n": 2})
        with pytest.raises(ExpectTimeout):
            await peer.expect_response(rid, timeout=0.05)
        assert [i.envelope.result for i in peer.inbound] == [{"n": 1}, {"n": 2}]


async def test_concurrent_expectations_get_their_own_responses(connect) -> None:
    async def reversed_order(server, env) -> None:
        if env.id == 2:
            await server.result(2, {"n": 2})
            await server.result(1, {"n": 1})

    async with connect(reversed_order) as (peer, _):
        got: dict[int, Any] = {}

        async def wait(rid: int) -> None:
            got[rid] = (await peer.expect_response(rid)).result

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait, 1)
            tg.start_soon(wait, 2)
            await anyio.wait_all_tasks_blocked()
            await peer.request("ping", id=1)
            await peer.request("ping", id=2)
    assert got == {1: {"n": 1}, 2: {"n": 2}}


async def test_two_waits_for_the_same_id_never_share_a_response(connect) -> None:
    async def twice(server, env) -> None:
        await server.result(env.id, {"n": 1})
        await server.result(env.id, {"n": 2})

    async with connect(twice) as (peer, _):
        got: list[Any] = []

        async def wait() -> None:
            got.append((await peer.expect_response(1)).result)

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            await peer.request("ping", id=1)
    assert sorted(r["n"] for r in got) == [1, 2]


async def test_expect_result_raises_error_response(connect) -> None:
    async with connect(standard) as (peer, _):
        with pytest.raises(ErrorResponse) as info:
            await peer.call("no/such-method")
        assert info.value.code == -32601
        assert info.value.message == "Method not found"
        assert "no/such-method" in str(info.value)
        assert info.value.envelope.kind is Kind.ERROR


async def test_expect_error_checks_kind_and_codes(connect) -> None:
    async with connect(standard) as (peer, _):
        rid = await peer.request("no/such-method")
        env = await peer.expect_error(rid, [-32601, -32600])
        assert env.error_code == -32601
        rid = await peer.request("no/such-method")
        with pytest.raises(UnexpectedMessage) as info:
            await peer.expect_error(rid, -32602)
        assert info.value.envelope.error_code == -32601 and "-32602" in info.value.why
        rid = await peer.request("ping")
        with pytest.raises(UnexpectedMessage):
            await peer.expect_error(rid)


async def test_expect_result_rejects_an_invalid_response(connect) -> None:
    async def both(server, env) -> None:
        await server.send({"jsonrpc": "2.0", "id": env.id, "result": {}, "error": {"code": 1, "message": "x"}})

    async with connect(both) as (peer, _):
        rid = await peer.request("ping")
        with pytest.raises(UnexpectedMessage) as info:
            await peer.expect_result(rid)
        assert info.value.envelope.kind is Kind.INVALID


async def test_expect_notification_predicate_leaves_others(connect) -> None:
    async def progress(server, env) -> None:
        for n in (1, 2, 3):
            await server.notify("notifications/progress", {"progressToken": "t", "progress": n})

    async with connect(progress) as (peer, _):
        await peer.notify("go")
        third = await peer.expect_notification("notifications/progress", predicate=lambda e: e.params["progress"] == 3)
        assert third.params["progress"] == 3
        first = await peer.expect_notification("notifications/progress")
        second = await peer.expect_notification("notifications/progress")
        assert [first.params["progress"], second.params["progress"]] == [1, 2]
        assert [e.params["progress"] for e in []] == []
        assert peer.unconsumed() == []


async def test_expect_message_sees_batches_and_their_members(connect) -> None:
    async def batcher(server, env) -> None:
        await server.send([{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "method": "notifications/x"}])
        await server.send_raw(b"garbage")

    async with connect(batcher) as (peer, _):
        await peer.notify("go")
        batch = await peer.expect_message(lambda e: e.kind is Kind.BATCH, what="a batch")
        assert len(batch.items) == 2
        assert (await peer.expect_response(1)).kind is Kind.RESULT  # members are matched one by one
        assert (await peer.expect_notification("notifications/x")).method == "notifications/x"
        bad = await peer.expect_message(lambda e: e.kind is Kind.PARSE_ERROR, what="garbage")
        assert bad.raw == b"garbage"


async def test_expect_timeout_says_what_how_long_and_what_arrived(connect) -> None:
    async def noisy_but_mute(server, env) -> None:
        await server.notify("notifications/message", {"level": "info", "data": "x"})
        await server.send({"jsonrpc": "2.0", "id": 99, "result": {}})

    async with connect(noisy_but_mute) as (peer, _):
        rid = await peer.request("tools/list")
        with pytest.raises(ExpectTimeout) as info:
            await peer.expect_response(rid, timeout=0.1)
    exc = info.value
    assert "tools/list" in exc.what and str(rid) in exc.what
    assert exc.waited >= 0.05
    assert [e.method for e in exc.seen] == ["notifications/message", None]
    text = str(exc)
    assert "notification notifications/message" in text and "result id=99" in text and "0.1" in text


async def test_expect_timeout_when_nothing_arrives(connect) -> None:
    async with connect(silent, timeout=0.1) as (peer, _):
        rid = await peer.request("ping")
        with pytest.raises(ExpectTimeout) as info:
            await peer.expect_response(rid)  # the peer default applies
        assert info.value.seen == [] and "nothing arrived" in str(info.value)
        with pytest.raises(ExpectTimeout):
            await peer.expect_request("sampling/createMessage", timeout=0.01)
        with pytest.raises(ExpectTimeout):
            await peer.expect_message(lambda e: True, what="anything", timeout=0.01)


async def test_closing_mid_request_is_connection_lost(connect) -> None:
    async def hang_up(server, env) -> None:
        await server.transport.aclose()

    async with connect(hang_up, timeout=5) as (peer, _):
        rid = await peer.request("tools/list")
        with pytest.raises(ConnectionLost) as info:
            await peer.expect_response(rid)
        assert isinstance(info.value.cause, TransportClosed)
        assert "tools/list" in str(info.value)
        # once closed, every expectation fails at once
        with pytest.raises(ConnectionLost):
            await peer.expect_notification("x")
        closed = await peer.expect_close(timeout=0.01)
        assert closed is info.value.cause is peer.closed


async def test_buffered_messages_survive_the_close(connect) -> None:
    async def answer_and_leave(server, env) -> None:
        await server.result(env.id, {})
        await server.transport.aclose()

    async with connect(answer_and_leave) as (peer, _):
        rid = await peer.request("ping")
        await peer.expect_close()
        assert (await peer.expect_response(rid)).kind is Kind.RESULT


class _Exiting(Transport):
    """A transport whose process exits after delivering a few lines."""

    name = "exiting"

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = list(lines)
        self.closed = False
        self.sent: list[bytes] = []

    async def send(self, data: bytes, **opts: Any) -> None:
        self.sent.append(data)

    async def receive(self) -> Inbound:
        await anyio.sleep(0)
        if self.lines:
            raw = self.lines.pop(0)
            return Inbound(raw=raw, envelope=parse_envelope(raw), meta={"stream": "stdout"})
        raise ProcessExited("server exited", returncode=3, stderr_tail="Traceback...\nValueError: boom\n")

    async def aclose(self) -> None:
        self.closed = True


async def test_process_exit_carries_exit_code_and_stderr() -> None:
    transport = _Exiting([dumps({"jsonrpc": "2.0", "method": "notifications/message"})])
    async with RawPeer(transport, version="2025-11-25", timeout=2) as peer:
        rid = await peer.request("ping")
        with pytest.raises(ConnectionLost) as info:
            await peer.expect_response(rid)
        closed = await peer.expect_close()
    assert transport.closed
    cause = info.value.cause
    assert isinstance(cause, ProcessExited) and cause is closed
    text = str(info.value)
    assert "exit code 3" in text and "ValueError: boom" in text
    notes = [e for e in peer.transcript if e.direction == "note"]
    assert any(e.meta.get("returncode") == 3 for e in notes)


async def test_expect_close_times_out_while_connected(connect) -> None:
    async with connect(silent) as (peer, _):
        with pytest.raises(ExpectTimeout) as info:
            await peer.expect_close(timeout=0.05)
        assert "close" in info.value.what


async def test_expect_silence(connect) -> None:
    async def respond_to_requests_only(server, env) -> None:
        if env.kind is Kind.REQUEST:
            await server.result(env.id, {})
        elif env.method == "notifications/log-please":
            await server.notify("notifications/message", {"level": "info", "data": "x"})
        elif env.method == "notifications/bad":
            await server.send({"jsonrpc": "2.0", "id": 1, "result": {}})  # answers a notification

    async with connect(respond_to_requests_only) as (peer, server):
        await peer.notify("notifications/initialized")
        await peer.expect_silence(0.05)  # nothing at all
        await peer.notify("notifications/log-please")
        await server.recv()
        await server.recv()
        # a notification is not a response: the default predicate ignores it
        await peer.expect_silence(0.05)
        with pytest.raises(UnexpectedMessage):
            await peer.expect_silence(0.5, predicate=lambda e: e.kind is Kind.NOTIFICATION)
        await peer.notify("notifications/bad")
        with pytest.raises(UnexpectedMessage) as info:
            await peer.expect_silence(1.0)
        assert info.value.envelope.kind is Kind.RESULT


async def test_expect_silence_sees_a_response_that_arrived_before_the_call(connect) -> None:
    async def answers_notification(server, env) -> None:
        await server.send({"jsonrpc": "2.0", "id": 5, "result": {}})

    async with connect(answers_notification) as (peer, _):
        await peer.notify("notifications/initialized")
        # a barrier-free way to be sure the response is in: wait for it without consuming
        await peer.expect_message(lambda e: e.kind is Kind.RESULT, what="the stray result")
        await peer.notify("notifications/initialized")
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(UnexpectedMessage):
            await peer.expect_silence(0.5)


async def test_a_raising_predicate_fails_its_own_wait_only(connect) -> None:
    async def notifier(server, env) -> None:
        if env.kind is Kind.REQUEST:
            await server.notify("notifications/message", {"level": "info"})
            await server.result(env.id, {})

    def bad(env: Any) -> bool:
        raise KeyError("data")

    async with connect(notifier) as (peer, _):
        async with anyio.create_task_group() as tg:
            errors: list[BaseException] = []

            async def wait_bad() -> None:
                try:
                    await peer.expect_notification("notifications/message", predicate=bad)
                except KeyError as exc:
                    errors.append(exc)

            tg.start_soon(wait_bad)
            await anyio.wait_all_tasks_blocked()
            assert await peer.call("ping") == {}  # the reader survived
        assert len(errors) == 1
        with pytest.raises(KeyError):
            await peer.expect_silence(1.0, predicate=bad)
        # the notification was not consumed by the failed wait
        assert (await peer.expect_notification("notifications/message")).params == {"level": "info"}


class _Probe:
    """A stand-in for a started process's CPU counter: ``busy`` adds CPU per look; ``answer_after``
    lets the fake server answer once the probe was looked at that many times."""

    def __init__(self, busy: bool, answer_after: int | None = None) -> None:
        self.busy = busy
        self.looks = 0
        self.answer_after = answer_after
        self.go = anyio.Event()

    def __call__(self) -> float:
        self.looks += 1
        if self.answer_after is not None and self.looks >= self.answer_after:
            self.go.set()
        return 0.5 * self.looks if self.busy else 1.0


@pytest.fixture
def fast_busy_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.runtime.peer as peer_module

    monkeypatch.setattr(peer_module, "_BUSY_SLICE", 0.02)


async def test_a_silent_process_still_busy_starting_gets_more_time_than_the_deadline(connect, fast_busy_slice) -> None:
    probe = _Probe(busy=True, answer_after=4)  # the answer comes only after two looks past the deadline

    async def slow_start(server, env) -> None:
        await probe.go.wait()
        await standard(server, env)

    async with connect(slow_start) as (peer, _):
        peer.startup_cpu, peer.first_cap = probe, 30.0
        assert await peer.call("ping", timeout=0.1) == {}
        assert probe.looks >= 4


async def test_an_idle_silent_process_ends_the_wait_at_the_deadline(connect, fast_busy_slice) -> None:
    probe = _Probe(busy=False)
    async with connect(silent) as (peer, _):
        peer.startup_cpu, peer.first_cap = probe, 30.0
        with pytest.raises(ExpectTimeout):
            await peer.call("ping", timeout=0.1)
        assert probe.looks == 2  # one before the deadline, one at it: no busy second, no more


async def test_a_busy_process_that_never_answers_is_cut_off_at_the_cap(connect, fast_busy_slice) -> None:
    probe = _Probe(busy=True)
    async with connect(silent) as (peer, _):
        peer.startup_cpu, peer.first_cap = probe, 0.3
        with pytest.raises(ExpectTimeout) as info:
            await peer.call("ping", timeout=0.1)
        assert 0.3 <= info.value.waited < 30
        assert probe.looks <= 0.3 / 0.02 + 2


async def test_once_the_peer_has_spoken_its_cpu_is_not_looked_at(connect, fast_busy_slice) -> None:
    probe = _Probe(busy=True)

    async def answers_ping_only(server, env) -> None:
        if env.method == "ping":
            await standard(server, env)

    async with connect(answers_ping_only) as (peer, _):
        peer.startup_cpu, peer.first_cap = probe, 30.0
        assert await peer.call("ping") == {}
        with pytest.raises(ExpectTimeout):
            await peer.call("tools/list", timeout=0.1)
        assert probe.looks == 0


async def test_a_response_in_invalid_utf8_ends_the_wait_for_it_at_once(connect) -> None:
    """An answer whose bytes are not UTF-8 but which says which request it answers: the wait for
    that request ends when it arrives (UnexpectedMessage naming the bytes), not at the timeout;
    other waits are not disturbed."""
    async def garbled(server, env: Envelope) -> None:
        if env.method == "ping":
            await server.send_raw(b'{"jsonrpc":"2.0","id":' + json.dumps(env.id).encode() + b',"result":{"x":"\xff"}}')
        elif env.kind is Kind.REQUEST:
            await server.result(env.id, {})

    async with connect(garbled, timeout=20) as (peer, _):  # a wait to the timeout would end in ExpectTimeout
        rid = await peer.request("ping")
        other = await peer.request("tools/list")
        with pytest.raises(UnexpectedMessage, match="arrived unreadable .invalid UTF-8 at byte"):
            await peer.expect_response(rid)
        assert (await peer.expect_response(other)).kind is Kind.RESULT
        with pytest.raises(UnexpectedMessage):
            await peer.expect_result(await peer.request("ping"))
