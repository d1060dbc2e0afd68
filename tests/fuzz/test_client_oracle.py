"""The client direction's pure half: what we send a client, what may come back, whose requirement a
wrong answer breaks, and how a run that stops is judged (no I/O: every test runs in milliseconds)."""

from __future__ import annotations

import json
import random

import pytest

from conformance.fuzz import client_oracle as co
from conformance.fuzz.corpus import build_client_corpus
from conformance.fuzz.generate import answer_at, run_index
from conformance.fuzz.operators import OPERATORS, OpContext, select_operators
from conformance.fuzz.oracle import ANSWER, ANY, SILENCE, UNREADABLE
from conformance.schema.validate import validate
from conformance.spec.methods import S2C
from conformance.spec.requirements import catalogue
from conformance.spec.versions import VERSIONS
from conformance.wire.envelope import parse_envelope

V = "2025-11-25"
CAPS = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}


def env(value) -> object:
    return parse_envelope(value if isinstance(value, bytes) else json.dumps(value).encode())


def one(raw, version=V, caps=CAPS):
    exps = co.expect(raw if isinstance(raw, bytes) else json.dumps(raw).encode(), co.context(version, "stdio", caps))
    assert len(exps) == 1, exps
    return exps[0]


def found(raw, answers, version=V, caps=CAPS) -> list[tuple[str, str]]:
    ctx = co.context(version, "stdio", caps)
    out = []
    for x in co.expect(raw if isinstance(raw, bytes) else json.dumps(raw).encode(), ctx):
        out += [(f.requirement, f.problem) for f in co.judge(x, [env(a) for a in answers], ctx)]
    return sorted(out)


PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
ROOTS = {"jsonrpc": "2.0", "id": "r-1", "method": "roots/list"}
SAMPLING = {"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 4}}
NOTE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}


def err(rid, code=-32601, **extra):
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "m"}, **extra}


def test_every_cited_requirement_is_a_client_requirement_of_the_catalogue() -> None:
    cat = catalogue()
    for rid in (co.RESPONSE_REQUIRED, co.PING, co.NO_RESPONSE, co.INVALID_CANCEL, co.BATCH, co.METHOD_NOT_FOUND, co.PARSE_ERROR):
        assert cat[rid].role == "client", rid
    assert cat["client.jsonrpc.response-required"].source == "jsonrpc"


def test_a_ping_must_get_one_empty_result_with_its_id() -> None:
    x = one(PING)
    assert (x.kind, x.requirement, x.silence_requirement, x.quit_ok) == (ANSWER, co.PING, co.PING, False)
    assert found(PING, [{"jsonrpc": "2.0", "id": 7, "result": {}}]) == []
    assert found(PING, [{"jsonrpc": "2.0", "id": 7, "result": {"_meta": {}}}]) == []
    assert found(PING, []) == [(co.PING, "PingNotAnswered")]
    assert found(PING, [{"jsonrpc": "2.0", "id": 7, "result": {"x": 1}}]) == [(co.PING, "NonEmptyPingResult")]
    assert found(PING, [err(7, -32603)]) == [(co.PING, "PingRejected")]
    assert found(PING, [{"jsonrpc": "2.0", "id": 7, "result": {}}] * 2) == [(co.RESPONSE_REQUIRED, "DuplicateResponse")]


def test_result_and_error_both_is_the_versions_rule() -> None:
    both = {"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "m"}}
    assert ("client.basic.result-xor-error", "ResultXorError") in found(PING, [both], "2025-06-18")
    # 2025-11-25 words it as result/error responses: the schema judges a response with both
    assert ("client.basic.schema-valid", "ResultXorError") in found(PING, [both], "2025-11-25")


def test_unknown_methods_need_minus_32601_and_known_ones_any_answer() -> None:
    unknown = {"jsonrpc": "2.0", "id": "u", "method": "mcp-conformance/nope"}
    assert found(unknown, [err("u")]) == []
    assert found(unknown, [err("u", -32600)]) == [(co.METHOD_NOT_FOUND, "WrongErrorCode")]
    assert found(unknown, [{"jsonrpc": "2.0", "id": "u", "result": {}}]) == [(co.METHOD_NOT_FOUND, "UnknownMethodAccepted")]
    assert found(unknown, []) == [(co.METHOD_NOT_FOUND, "UnknownMethodNotAnswered")]
    not_for_clients = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    assert found(not_for_clients, [err(3, -32603)]) == []
    assert found(not_for_clients, []) == [(co.RESPONSE_REQUIRED, "MissingResponse")]


def test_error_codes_must_be_integers_and_results_schema_valid() -> None:
    assert found(SAMPLING, [err(9, "-32601")]) == [("client.basic.error-code-integer", "NonIntegerErrorCode")]
    assert found(ROOTS, [{"jsonrpc": "2.0", "id": "r-1", "result": {"roots": "x"}}]) == [("client.basic.schema-valid", "SchemaMismatch")]
    assert found(ROOTS, [{"jsonrpc": "2.0", "id": "r-1", "result": {"roots": [{"uri": "file:///tmp"}]}}]) == []


def test_undeclared_capabilities_must_not_be_served() -> None:
    none: dict = {}
    assert found(ROOTS, [{"jsonrpc": "2.0", "id": "r-1", "result": {"roots": []}}], caps=none) == [("client.roots.declare", "UndeclaredRoots")]
    assert found(ROOTS, [err("r-1", -32603)], caps=none) == [("client.roots.unsupported-error", "WrongErrorCode")]
    assert found(ROOTS, [err("r-1")], caps=none) == []
    result = {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}
    assert found(SAMPLING, [{"jsonrpc": "2.0", "id": 9, "result": result}], caps=none) == [("client.sampling.declare", "UndeclaredSampling")]
    assert found(SAMPLING, [{"jsonrpc": "2.0", "id": 9, "result": result}]) == []
    elicit = {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create",
              "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}
    assert found(elicit, [{"jsonrpc": "2.0", "id": 4, "result": {"action": "accept", "content": {}}}], caps=none) == \
        [("client.elicitation.declare", "UndeclaredElicitation")]
    assert found(elicit, [{"jsonrpc": "2.0", "id": 4, "result": {"action": "decline"}}], caps=none) == []  # a refusal
    https = {"jsonrpc": "2.0", "id": "r-1", "result": {"roots": [{"uri": "https://example.com"}]}}
    assert found(ROOTS, [https]) == [("client.roots.file-uri", "RootNotFileUri")]
    # what the client declared is unknown (no initialize seen): the capability rules say nothing
    assert found(ROOTS, [{"jsonrpc": "2.0", "id": "r-1", "result": {"roots": []}}], caps=None) == []


def test_notifications_must_not_be_answered_from_2025_03_26() -> None:
    x = one(NOTE)
    assert (x.kind, x.requirement, x.quit_ok, x.cancel) == (SILENCE, co.NO_RESPONSE, False, False)
    assert found(NOTE, [err(None, -32600)]) == [(co.NO_RESPONSE, "NotificationAnswered")]
    assert found(NOTE, []) == []
    old = one(NOTE, "2024-11-05")  # "do not expect a response": no keyword
    assert old.kind == ANY and not old.quit_ok
    cancel = one({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never"}})
    assert cancel.cancel and cancel.kind == SILENCE


@pytest.mark.parametrize("raw", [b'{"jsonrpc":"2.0","id":1,"method":"ping"', b"\xff\xfe", b"NaN", b"// c"])
def test_text_that_is_not_json_needs_a_parse_error_but_a_quit_is_allowed(raw) -> None:
    """JSON-RPC 2.0's -32700, as on the server side (oracle.unparseable): silence, a result or
    another code is client.jsonrpc.parse-error; the client may also give up on such a server."""
    x = one(raw)
    assert (x.kind, x.requirement, x.silence_requirement, x.quit_ok) == (UNREADABLE, co.PARSE_ERROR, co.PARSE_ERROR, True)
    assert found(raw, [err(None, -32700)]) == [] and found(raw, [{"jsonrpc": "2.0", "error": {"code": -32700, "message": "m"}}]) == []
    assert found(raw, []) == [(co.PARSE_ERROR, "NoParseErrorResponse")]
    assert found(raw, [err(None, -32600)]) == [(co.PARSE_ERROR, "WrongErrorCode")]
    assert found(raw, [{"jsonrpc": "2.0", "id": None, "result": {}}]) == [(co.PARSE_ERROR, "InvalidJsonAccepted")]


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"n":NaN}}',
    b'{"jsonrpc":"2.0","id":"a","method":"ping",}',
    b"{'jsonrpc':'2.0','id':'a','method':'ping'}",
    b'{"jsonrpc":"2.0","id":"a","method":"ping"/* c */}',
])
def test_a_request_a_lenient_parser_reads_takes_its_answer_or_a_parse_error_but_not_silence(raw) -> None:
    assert found(raw, []) == [(co.PARSE_ERROR, "LenientJsonRequestUnanswered")]
    assert found(raw, [err(None, -32700)]) == []
    assert found(raw, [{"jsonrpc": "2.0", "id": "a", "result": {}}]) == []  # the ping it read, answered


def test_a_notification_a_lenient_parser_reads_may_go_unanswered() -> None:
    raw = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":NaN}}'
    assert found(raw, []) == [] and found(raw, [err(None, -32700)]) == []


@pytest.mark.parametrize("raw", [b"[]", b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
                                 b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', b'{"jsonrpc":"2.0","id":"x","result":{}}', b"",
                                 b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"p"}'])
def test_malformed_messages_allow_anything_and_a_quit(raw) -> None:
    x = one(raw)
    assert (x.kind, x.silence_requirement, x.quit_ok) == (ANY, None, True)
    assert found(raw, []) == [] and found(raw, [err(None, -32700)]) == []


def test_batches_are_answered_on_2025_03_26_only() -> None:
    batch = [PING, dict(PING, id=8), NOTE]
    exps = co.expect(json.dumps(batch).encode(), co.context("2025-03-26", "stdio", CAPS))
    answers = [e for e in exps if e.kind == ANSWER]
    assert len(answers) == 2 and {e.silence_requirement for e in answers} == {co.BATCH}
    assert [e.kind for e in co.expect(json.dumps(batch).encode(), co.context(V, "stdio", CAPS))] == [ANY]


def test_two_lines_on_stdio_are_two_messages_and_one_reused_id_one_expectation() -> None:
    line = json.dumps(PING).encode()
    exps = co.expect(line + b"\n" + json.dumps(NOTE).encode(), co.context(V, "stdio", CAPS))
    assert [e.kind for e in exps] == [ANSWER, SILENCE]
    [twice] = co.expect(line + b"\n" + line, co.context(V, "stdio", CAPS))
    assert twice.max_answers == 2


def test_unclaimed_answers_pair_by_resemblance_then_in_order() -> None:
    ctx = co.context(V)
    a, b = one({"jsonrpc": "2.0", "id": "fz-1", "method": "ping"}), one({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    got = co.pair_unclaimed([a, b], [env({"jsonrpc": "2.0", "id": "5", "result": {}}),
                                     env({"jsonrpc": "2.0", "id": "fz-1-wrong", "result": {}})], ctx)
    assert sorted((i, f.requirement, f.problem) for i, _, f in got) == [
        (0, "client.basic.result-id-echo", "IdNotEchoed"), (1, "client.basic.result-id-echo", "IdNotEchoed")]
    # nothing alike: paired in order only when the numbers agree
    assert len(co.pair_unclaimed([a], [env({"jsonrpc": "2.0", "id": "zz", "result": {}})], ctx)) == 1
    assert co.pair_unclaimed([a], [env({"jsonrpc": "2.0", "id": "zz", "result": {}})] * 2, ctx) == []
    early = co.pair_unclaimed([one(PING, "2025-06-18")], [env({"jsonrpc": "2.0", "id": "7", "result": {}})], co.context("2025-06-18"))
    assert early[0][2].requirement == "client.basic.response-id-echo"


def test_survival_stall_crash_and_quit() -> None:
    valid, garbage = one(PING), one(b"{")
    cancel = one({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    f, order = co.liveness([valid], stalled=10.0)
    assert (f.requirement, f.problem) == (co.PING, "ClientStalled")
    f, _ = co.liveness([garbage], crash="SIGSEGV", exited=True, returncode=-11)
    assert (f.requirement, f.problem) == (co.PING, "ClientCrashed")  # a crash is never fine
    assert co.liveness([garbage], exited=True, held=True) is None  # it may give up on malformed input
    assert co.liveness([valid], exited=True, held=False) is None  # it was not waiting for us: it may be done
    f, order = co.liveness([valid], exited=True, held=True, returncode=1)
    assert (f.requirement, f.problem, order) == (co.PING, "ClientQuit", [0])
    f, order = co.liveness([garbage, valid, cancel], exited=True, held=True, returncode=1)
    assert (f.requirement, f.problem, order) == (co.INVALID_CANCEL, "QuitOnInvalidCancel", [2, 1])
    answer = co.expect_answer(b"{}", co.context(V), "tools/list", 3)
    assert answer.quit_ok and co.liveness([answer], exited=True, held=True) is None  # done after our answer


def test_crash_signals_from_the_return_code() -> None:
    assert co.crash_signal(-11) == "SIGSEGV" and co.crash_signal(134) == "SIGABRT" and co.crash_signal(-9) == "SIGKILL"
    assert co.crash_signal(0) is None and co.crash_signal(1) is None and co.crash_signal(-15) is None and co.crash_signal(None) is None


def test_versions_without_server_requests_are_not_fuzzed() -> None:
    assert co.unsupported("2026-07-28") and co.unsupported("2025-11-25") is None


@pytest.mark.parametrize("version", [v for v in VERSIONS if co.unsupported(v) is None])
def test_the_client_corpus_is_schema_valid_server_to_client_traffic(version) -> None:
    c = build_client_corpus(version)
    assert {"ping", "roots/list", "sampling/createMessage", "notifications/cancelled"} <= set(c.methods())
    for s in c.seeds:
        assert validate(dict(s.message), version, S2C) == [], (version, s)
        if s.method == "notifications/cancelled":
            assert s.message["params"].get("requestId", "never") not in ("", 0)  # never one of our ids


def test_answers_are_drawn_deterministically_and_record_what_changed() -> None:
    ops = select_operators("stdio", use="answer")
    assert {"answer-wrong-id", "answer-result-and-error", "answer-wrong-shape", "truncate", "invalid-utf8"} <= {o.name for o in ops}
    assert not {"http-content-type", "unknown-method", "batch"} & {o.name for o in ops}
    assert "answer-wrong-id" not in {o.name for o in select_operators("stdio")}  # the server direction is unchanged
    resp = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}
    a = [answer_at(5, ops, run_index(2, k), resp, "tools/list", version=V, transport="stdio").data for k in range(50)]
    assert a == [answer_at(5, ops, run_index(2, k), resp, "tools/list", version=V, transport="stdio").data for k in range(50)]
    assert len(set(a)) > 20
    valid = answer_at(5, ops, 1, resp, "tools/list", version=V, transport="stdio", p_valid=1.0)
    assert valid.operator == "valid" and json.loads(valid.data) == resp and valid.answer


@pytest.mark.parametrize("name", sorted(n for n, op in OPERATORS.items() if op.uses == {"answer"}))
def test_answer_operators_break_what_they_say(name) -> None:
    resp = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "t"}], "nextCursor": "c"}}
    for i in range(20):
        out = OPERATORS[name].fn(random.Random(i), json.loads(json.dumps(resp)), OpContext(V, "stdio", i, method="tools/list"))
        assert out.mutations and all(m.operator == name for m in out.mutations)
        e = parse_envelope(out.to_bytes())
        value = e.value if isinstance(e.value, dict) else {}
        if name == "answer-wrong-id":
            assert value.get("id") != 3
        elif name == "answer-no-id":
            assert "id" not in value
        elif name == "answer-result-and-error":
            assert "result" in value and "error" in value
        elif name == "answer-neither":
            assert "result" not in value and "error" not in value
        elif name == "answer-wrong-shape":
            assert value.get("result") != resp["result"]
        elif name == "answer-error-shape":
            assert "error" in value and "result" not in value


# -- what RFC 8259 leaves to the implementation: any answer, never silence to a request ---------------

R = "client.jsonrpc.response-required"


@pytest.mark.parametrize("raw, problem", [
    (b'{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', "LargeIdUnanswered"),
    (b'{"jsonrpc":"2.0","id":-18446744073709551616,"method":"roots/list"}', "LargeIdUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"_meta":{"progressToken":9223372036854775808}}}', "OutOfRangeNumberUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"_meta":{"x":1e400}}}', "OutOfRangeNumberUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","method":"roots/list"}', "DuplicateMemberUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","id":"b"}', "DuplicateMemberUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","zzz":1}', "UnknownMemberUnanswered"),
])
def test_a_request_the_client_can_read_takes_any_answer_but_not_silence(raw: bytes, problem: str) -> None:
    x = one(raw)
    assert found(raw, []) == [(x.silence_requirement, problem)]
    assert x.silence_requirement in (R, co.PING)
    rid = json.loads(raw)["id"]
    assert found(raw, [{"jsonrpc": "2.0", "id": rid, "result": {}}]) == []


@pytest.mark.parametrize("raw", [
    b'{"id":9007199254740993,"method":"ping"}',  # no "jsonrpc": not a request, nothing is owed
    b'{"jsonrpc":2,"id":"a","method":"ping","params":{"n":1e400}}',
    b'{"jsonrpc":"2.0","id":"a","method":{},"method":"ping","id":[1]}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1e400,"progress":1}}',
])
def test_what_is_not_a_request_as_read_may_go_unanswered(raw: bytes) -> None:
    assert found(raw, []) == []
