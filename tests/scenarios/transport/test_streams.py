"""HTTP exchanges read back from a transcript, event-id uniqueness and broadcast identity (pure)."""

from __future__ import annotations

from conformance.scenarios.server._http import id_key, streams_of
from conformance.scenarios.server.http_transport import _id_clash, _identity
from conformance.wire.transcript import Transcript
from conformance.wire.envelope import dumps, parse_envelope


def _status(t: Transcript, stream: str, method: str, status: int, *, ctype: str | None = None, **request_headers: str) -> None:
    # the meta the HTTP transport puts on its "METHOD url -> status" event
    t.note(f"{method} http://127.0.0.1:1/mcp -> {status}", {
        "stream": stream, "method": method, "url": "http://127.0.0.1:1/mcp", "status": status,
        "request_headers": {k.replace("_", "-"): v for k, v in request_headers.items()},
        "response_headers": {"content-type": ctype} if ctype else {},
    })


def _event(t: Transcript, stream: str, sid: str | None, message: dict | None) -> None:
    if message is None:  # the transport's note for an event with an id and no data
        t.note(f"SSE priming event (id {sid!r}, no data)", {"stream": stream, "sse_id": sid, "sse_event": "message", "dispatched": False})
        return
    raw = dumps(message)
    t.inbound(raw, parse_envelope(raw), {"stream": stream, "http_status": 200, "sse_id": sid, "sse_event": "message"})


def _transcript() -> Transcript:
    t = Transcript()
    request = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    t.outbound(dumps(request), parse_envelope(dumps(request)), {"stream": "post:1", "http_status": 200})
    _status(t, "post:1", "POST", 200, ctype="text/event-stream")
    t.note("SSE stream opened", {"stream": "post:1"})
    t.note("SSE retry: 1000 ms", {"stream": "post:1", "retry": 1000, "sse_id": "a-0"})
    _event(t, "post:1", "a-0", None)
    _event(t, "post:1", "a-1", {"jsonrpc": "2.0", "id": 5, "result": {}})
    t.note("SSE stream ended by the server", {"stream": "post:1", "events": 2})
    _status(t, "get:2", "GET", 200, ctype="text/event-stream", last_event_id="a-0")
    t.note("SSE stream opened", {"stream": "get:2"})
    _event(t, "get:2", "a-1", {"jsonrpc": "2.0", "id": 5, "result": {}})
    t.note("probe: POST http://127.0.0.1:1/mcp -> 406", {"stream": "post:1", "method": "POST", "status": 406, "probe": True})
    return t


def test_streams_are_read_back_from_the_transport_notes() -> None:
    streams = streams_of(_transcript())
    assert sorted(streams) == ["get:2", "post:1"]
    post, get = streams["post:1"], streams["get:2"]
    assert (post.method, post.status, post.content_type, post.is_sse) == ("POST", 200, "text/event-stream", True)
    assert post.primed and post.retry and post.ended_by_server  # the probe's 406 note is another transport's
    assert post.request_ids() == {id_key(5)}
    assert [sid for sid, _, _ in post.sse_ids] == ["a-0", "a-1"]
    assert get.resumes == "a-0" and not get.primed
    assert [m.id for m in get.messages()] == [5]


def test_a_replay_on_a_resumed_stream_is_not_a_second_use_of_the_id() -> None:
    streams = streams_of(_transcript())
    uses = [(st, data, seq) for st in streams.values() for sid, data, seq in st.sse_ids if sid == "a-1"]
    assert len(uses) == 2 and _id_clash(uses) is None


def test_the_same_id_on_two_streams_or_twice_on_one_is_a_clash() -> None:
    t = Transcript()
    for stream in ("post:1", "post:2"):
        _status(t, stream, "POST", 200, ctype="text/event-stream")
        _event(t, stream, "0", None)
    _event(t, "post:2", "1", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}})
    _event(t, "post:2", "1", {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 2}})
    streams = streams_of(t)
    by_id: dict[str, list] = {}
    for st in streams.values():
        for sid, data, seq in st.sse_ids:
            by_id.setdefault(sid, []).append((st, data, seq))
    assert _id_clash(by_id["0"]) == "on post:1 and post:2"
    assert _id_clash(by_id["1"]) == "twice on post:2"


def test_broadcast_identity_covers_responses_server_requests_and_our_progress_only() -> None:
    def env(value: dict):
        return parse_envelope(dumps(value))

    assert _identity(env({"jsonrpc": "2.0", "id": "7", "result": {}})) == ("response", f"id {id_key('7')}")
    assert _identity(env({"jsonrpc": "2.0", "id": 7, "method": "ping"})) == ("server request", f"id {id_key(7)}")
    ours = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "mcp-conformance-x", "progress": 1}}
    theirs = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "other", "progress": 1}}
    assert _identity(env(ours)) is not None
    assert _identity(env(theirs)) is None  # two identical notifications may be two messages
    assert _identity(env({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})) is None


def test_a_notification_on_a_request_stream_relates_to_it_by_its_progress_token_or_kind() -> None:
    from conformance.scenarios.server.http_transport import _unrelated

    def env(value: dict):
        return parse_envelope(dumps(value))

    with_token = env({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": {"progressToken": "a"}}})
    without = env({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}})

    def progress(token):  # type: ignore[no-untyped-def]
        return env({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}})

    log = env({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}})
    custom = env({"jsonrpc": "2.0", "method": "notifications/example/vendor", "params": {}})
    changed = env({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    others = {("str", "'b'"), ("int", "7")}  # tokens other requests of ours carried
    assert _unrelated(progress("a"), with_token, others) is None
    assert _unrelated(log, without, others) is None and _unrelated(custom, without, others) is None
    assert "not this request's" in (_unrelated(progress("b"), with_token, others) or "")
    assert "carried no progressToken" in (_unrelated(progress("b"), without, others) or "")
    assert "subscriptions/listen" in (_unrelated(changed, with_token, others) or "")
    # a token no request carried references no active request: progress.token's, not this rule's
    assert _unrelated(progress("z"), with_token, others) is None
    numeric = env({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "t", "_meta": {"progressToken": "7"}}})
    assert _unrelated(progress(7), numeric, others) is not None  # a token keeps its JSON type: 7 is another request's
