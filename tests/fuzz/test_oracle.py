"""The oracle: what may answer a frame, and judgments that cite the catalogue and accept every
answer the spec allows."""

from __future__ import annotations

import pytest

from conformance.fuzz.oracle import ANSWER, ANY, REJECTED, SILENCE, UNREADABLE, OracleContext, expect, judge
from conformance.spec.outcomes import Outcome
from conformance.spec.requirements import catalogue
from conformance.wire.envelope import MISSING, parse_envelope

CTX = OracleContext("2025-11-25", "stdio", {"tools": {}, "prompts": {}, "resources": {}})


def env(text: str):
    return parse_envelope(text.encode())


def one(raw: bytes, ctx=CTX):
    exps = expect(raw, ctx)
    assert len(exps) == 1
    return exps[0]


def probs(exp, answers, **kw):
    return sorted((f.requirement, f.problem) for f in judge(exp, answers, CTX, **kw))


def test_parse_error_accepts_null_or_absent_id_and_nothing_else() -> None:
    x = one(b'{"jsonrpc":"2.0","id":1,"method":"ping"')
    assert x.kind == UNREADABLE and x.requirement == "jsonrpc.error.parse-error"
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","error":{"code":-32700,"message":"p"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"p"}}')]) == [("jsonrpc.error.parse-error", "WrongErrorCode")]
    assert probs(x, []) == [("jsonrpc.error.parse-error", "NoParseErrorResponse")]


def test_invalid_request_accepts_null_or_the_readable_id_and_silence_only_without_id() -> None:
    x = one(b'{"jsonrpc":"1.0","id":"a","method":"ping"}')
    assert x.kind == UNREADABLE and x.requirement == "jsonrpc.error.invalid-request"
    for answer in ('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}',
                   '{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"x"}}'):
        assert probs(x, [env(answer)]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":"a","result":{}}')]) == [("jsonrpc.error.invalid-request", "InvalidRequestAccepted")]
    assert probs(x, []) == [("jsonrpc.error.invalid-request", "NoInvalidRequestResponse")]
    no_id = one(b'{"jsonrpc":"1.0","method":"notifications/x"}')
    assert probs(no_id, []) == []  # may have been read as a (broken) notification
    params = one(b'{"jsonrpc":"2.0","id":3,"method":"ping","params":"bar"}')
    assert probs(params, [env('{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"x"}}')]) == []


def test_unknown_method_needs_32601_with_the_id() -> None:
    x = one(b'{"jsonrpc":"2.0","id":9,"method":"no/such"}')
    assert x.kind == ANSWER and x.requirement == "jsonrpc.error.method-not-found"
    assert probs(x, [env('{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"x"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"x"}}')]) == [("jsonrpc.error.method-not-found", "WrongErrorCode")]
    assert probs(x, [env('{"jsonrpc":"2.0","id":9,"result":{}}')]) == [("jsonrpc.error.method-not-found", "UnknownMethodAccepted")]
    # a method of another version or direction is no unknown method: anything goes
    assert one(b'{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}').codes is None


def test_valid_request_any_error_or_a_schema_valid_result() -> None:
    x = one(b'{"jsonrpc":"2.0","id":4,"method":"tools/list"}')
    assert probs(x, [env('{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":4,"result":{"tools":3}}')]) == [("basic.schema.messages-valid", "SchemaMismatch")]
    assert probs(x, []) == [("jsonrpc.request.response-required", "MissingResponse")]
    two = [env('{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}')] * 2
    assert probs(x, two) == [("jsonrpc.request.response-required", "DuplicateResponse")]
    bad = env('{"jsonrpc":"2.0","id":4,"result":{"tools":[]},"error":{"code":1,"message":"x"}}')
    assert ("jsonrpc.response.result-xor-error", "ResultXorError") in probs(x, [bad])


def test_schema_invalid_params_of_a_known_method_is_no_must_failure() -> None:
    x = one(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}')
    assert probs(x, [env('{"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":true}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"x"}}')]) == []


def test_missing_required_member_is_the_invalid_params_scenarios_reading() -> None:
    x = one(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}')
    assert x.requirement == "jsonrpc.error.invalid-params"
    assert probs(x, [env('{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"x"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"x"}}')]) == [("jsonrpc.error.invalid-params", "WrongErrorCode")]
    undeclared = OracleContext("2025-11-25", "stdio", {})
    assert expect(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}', undeclared)[0].codes is None


def test_notifications_and_responses_must_not_be_answered() -> None:
    x = one(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    assert x.kind == SILENCE
    assert probs(x, []) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}')]) == [("jsonrpc.notification.no-reply", "NotificationAnswered")]
    assert one(b'{"jsonrpc":"2.0","id":"r","result":{}}').kind == ANY


def test_ping_needs_an_empty_result() -> None:
    x = one(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert probs(x, [env('{"jsonrpc":"2.0","id":1,"result":{"_meta":{}}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":1,"result":{"a":1}}')]) == [("ping.response", "NonEmptyPingResult")]
    assert probs(x, [env('{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}')]) == [("ping.response", "PingRejected")]


def test_batches_per_version() -> None:
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]'
    assert one(batch, OracleContext("2024-11-05")).kind == ANY
    x = one(batch)
    assert x.kind == REJECTED and x.requirement == "batching.rejected"
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":1,"result":{}}')]) == [("batching.rejected", "BatchServed")]
    assert one(batch, OracleContext("2026-07-28")).requirement == "batching.rejected-stateless"
    members = expect(batch, OracleContext("2025-03-26"))
    assert [e.kind for e in members] == [ANSWER, SILENCE, ANY]
    assert members[0].silence_requirement == "batching.receive"


def test_one_frame_of_several_lines_and_a_reused_id() -> None:
    exps = expect(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"method":"ping"}', CTX)
    assert len(exps) == 1 and exps[0].max_answers == 2
    split = expect(b'{"jsonrpc":"2.0",\n"id":1,"method":"ping"}', CTX)
    assert [e.kind for e in split] == [UNREADABLE, UNREADABLE]
    http = expect(b'{"jsonrpc":"2.0",\n"id":1,"method":"ping"}', OracleContext("2025-11-25", "streamable-http"))
    assert [e.kind for e in http] == [ANSWER]


def test_a_reused_id_may_be_refused_before_the_first_request_is_answered() -> None:
    """Two pings with one id in flight: the server may refuse the second (any error) before it
    answers the first, so an error first and the pong after is accepted; a pong that never comes
    is still judged (both refused: the first ping got no result)."""
    x = one(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"method":"ping"}')
    refusal = env('{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"id 1 is already in use"}}')
    pong = env('{"jsonrpc":"2.0","id":1,"result":{}}')
    assert probs(x, [refusal, pong]) == []
    assert probs(x, [pong, refusal]) == []
    assert probs(x, [pong, pong]) == []
    assert probs(x, [refusal, env('{"jsonrpc":"2.0","id":1,"result":{"x":1}}')]) == [("ping.response", "NonEmptyPingResult")]
    assert probs(x, [refusal, refusal]) == [("ping.response", "PingRejected")]


def test_every_finding_cites_the_catalogue_and_is_graded_by_level() -> None:
    x = one(b'{"jsonrpc":"2.0","id":9,"method":"no/such"}')
    [f] = judge(x, [env('{"jsonrpc":"2.0","id":9,"result":{}}')], CTX)
    assert f.requirement in catalogue()
    assert f.outcome() is Outcome.FAIL  # a MUST
    b = one(b'[]')
    [g] = judge(b, [], CTX)
    assert g.outcome() is Outcome.WARNING and g.outcome(strict=True) is Outcome.FAIL  # a SHOULD
    assert f.to_json()["quote"] == catalogue()[f.requirement].quote


def test_duplicate_jsonrpc_members_accept_any_answer_but_not_silence() -> None:
    x = one(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}')
    assert x.kind == ANY and x.member_keys == (("int", 1), ("int", 2))  # either id may be read
    for rid in (1, 2, "null"):
        assert probs(x, [env(f'{{"jsonrpc":"2.0","id":{rid},"result":{{}}}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"dup"}}')]) == []
    assert probs(x, []) == [("jsonrpc.request.response-required", "DuplicateMemberUnanswered")]


@pytest.mark.parametrize("raw, key, members", [
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}', ("int", 7), ()),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"n":1e400}}', ("str", "a"), ()),
    (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', None, (("int", 1), ("int", 2))),  # the reader's choice
    # cut or rounded by some: the id as sent and as a double reads it (integer or not)
    (b'{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":{"n":1e400}}', None,
     (("int", 9007199254740993), ("float", 9007199254740992.0), ("int", 9007199254740992))),
])
def test_anything_goes_but_an_id_every_reader_reads_the_same_owns_its_answers(raw: bytes, key, members) -> None:
    x = one(raw)
    assert x.kind == ANY and x.key == key and x.member_keys == members
    assert x.silence_requirement == "jsonrpc.request.response-required"  # a request: silence is a finding


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":true,"method":"ping","params":{"n":1e400}}',
    b'{"id":46744073708994559,"method":"ping"}',  # no "jsonrpc"
    b'{"jsonrpc":"2.0","id":"","method":{},"id":5.5}',
])
def test_an_invalid_request_beyond_what_rfc_8259_leaves_open_owes_its_invalid_request_answer(raw: bytes) -> None:
    x = one(raw)
    assert x.kind == ANY and probs(x, []) == [("jsonrpc.error.invalid-request", "NoInvalidRequestResponse")]
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}')]) == []


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1e400}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":1,"result":{"n":1e400}}',
])
def test_implementation_defined_notifications_and_responses_may_go_unanswered(raw: bytes) -> None:
    x = one(raw)
    assert x.kind == ANY and probs(x, []) == []


@pytest.mark.parametrize("rid", [2**53, 2**53 + 1, -(2**53 + 1), 2**63 - 1, 2**63, -(2**63), 2**64 - 1, 2**64, 2**64 + 1])
def test_an_id_beyond_the_interoperable_range_takes_any_answer_with_the_id_as_sent_or_read_as_a_double(rid: int) -> None:
    import json

    x = one(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % rid)
    assert x.kind == ANY and x.silence_requirement == "jsonrpc.request.response-required"
    assert ("int", rid) in x.member_keys and ("float", float(rid)) in x.member_keys
    # JavaScript writes the double back as its shortest decimal: 2**64 -> 18446744073709552000
    assert ("int", int(json.loads(json.dumps(float(rid))))) in x.member_keys or ("int", int(float(rid))) in x.member_keys
    assert ("int", int(float(repr(float(rid))))) in x.member_keys
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"too big"}}')]) == []
    assert probs(x, []) == [("jsonrpc.request.response-required", "LargeIdUnanswered")]


@pytest.mark.parametrize("rid", [2**53 - 1, -(2**53 - 1)])
def test_an_id_at_the_interoperable_bound_must_be_echoed_exactly(rid: int) -> None:
    x = one(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % rid)
    assert x.kind == ANSWER and x.key == ("int", rid) and not x.member_keys


@pytest.mark.parametrize("raw, rid", [
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":NaN}}', 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":Infinity}}', 4),
    (b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"a":-Infinity}}', "s"),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping"/* c */}', 4),
    (b'{/* c */"jsonrpc":"2.0","id":4,"method":"ping"}', 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping",}', 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"a,}",}}', 4),
    (b"{'jsonrpc':'2.0','id':'it\\'s','method':'ping'}", "it's"),
    (b"""{'jsonrpc':"2.0",'id':"fz\\"1",'method':"ping"}""", 'fz"1'),
])
def test_non_json_that_common_parsers_accept_takes_a_parse_error_or_the_lenient_answer_never_silence(raw: bytes, rid) -> None:
    import json

    x = one(raw)
    assert x.kind == UNREADABLE and x.requirement == "jsonrpc.error.parse-error" and x.lenient_echo == rid
    assert x.member_keys[0] == (type(rid).__name__, rid)
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}')]) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":%s,"result":{}}' % json.dumps(rid))]) == []  # a lenient parser read it
    assert probs(x, [env('{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"x"}}' % json.dumps(rid))]) == []
    assert probs(x, []) == [("jsonrpc.error.parse-error", "LenientJsonRequestUnanswered")]


def test_a_non_json_notification_a_lenient_parser_reads_may_go_unanswered_or_get_a_parse_error() -> None:
    x = one(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{"a":NaN}}')
    assert x.kind == ANY and probs(x, []) == []
    assert probs(x, [env('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}')]) == []


@pytest.mark.parametrize("raw", [b"NaN", b"[1,]", b'{"a":1,}', b"{'jsonrpc': '2.0'}", b'{"jsonrpc":"2.0","id":1,"method":"ping"'])
def test_non_json_without_a_request_a_lenient_parser_reads_still_needs_a_parse_error(raw: bytes) -> None:
    x = one(raw)
    assert x.kind == UNREADABLE and x.lenient_echo is MISSING and not x.member_keys


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":9007199254740993}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":1e400}}}',
    b'[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":-1E999}}]',  # a batch member: re-serialised
])
def test_a_number_beyond_the_interoperable_range_is_seen_through_the_quick_text_check(raw: bytes) -> None:
    exps = expect(raw, OracleContext("2025-03-26", "stdio", {"tools": {}}) if raw[:1] == b"[" else CTX)
    assert any(e.kind == ANY and "interoperable" in e.what for e in exps), exps


def test_the_quick_text_checks_never_change_an_expectation(monkeypatch: pytest.MonkeyPatch) -> None:
    # the byte-level shortcuts (no exponent/16 digits: no huge number; few brackets: not too deep)
    # give the expectations the full walks give, over every operator's frames
    from conformance.fuzz import oracle
    from conformance.fuzz.corpus import build_corpus
    from conformance.fuzz.generate import Plan, frame_at
    from conformance.fuzz.operators import select_operators

    plan = Plan(11, build_corpus("2025-11-25"), select_operators("stdio"), "stdio")
    frames = [frame_at(plan, i).data for i in range(1500)]
    quick = [repr(expect(f, CTX)) for f in frames]
    walk_deep = oracle.too_deep
    monkeypatch.setattr(oracle, "_numberish", lambda raw: True)
    monkeypatch.setattr(oracle, "too_deep", lambda env, raw=b"": walk_deep(env))
    assert [repr(expect(f, CTX)) for f in frames] == quick


def test_the_quick_number_scan_finds_what_the_regular_expression_finds() -> None:
    import random

    from conformance.fuzz import oracle

    rng = random.Random(7)
    alphabet = b'0123456789eE.+-Infity x"{}:,'
    samples = [b"Infinity", b"-Infinity", b"1e5", b"9E-3", b"1234567890123456", b"123456789012345", b"e1", b"x9e"]
    samples += [bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(3000)]
    samples += [b"7" * n for n in (15, 16, 17)]
    for raw in samples:
        assert oracle._numberish(raw) is (oracle._NUMBERISH.search(raw) is not None), raw


@pytest.mark.parametrize("raw, problem", [
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","id":"b"}', "DuplicateMemberUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","id":"b","zzz":1}', "UnknownMemberUnanswered"),  # the likelier cause
    (b'{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"taskId":""},"params":[]}', "MissingResponse"),  # schema-invalid as read
])
def test_a_silence_after_a_duplicate_is_named_by_its_likeliest_cause(raw: bytes, problem: str) -> None:
    assert probs(one(raw), []) == [("jsonrpc.request.response-required", problem)]


@pytest.mark.parametrize("raw, problem", [
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"_meta":{"progressToken":1e400}}}', "OutOfRangeNumberUnanswered"),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","zzz":{"n":1e400}}', "UnknownMemberUnanswered"),  # the likelier cause
    (b'{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}', "LargeIdUnanswered"),
    (b'{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","zzz":1}', "UnknownMemberUnanswered"),
])
def test_a_silence_after_a_number_beyond_the_range_is_named_by_its_likeliest_cause(raw: bytes, problem: str) -> None:
    assert probs(one(raw), []) == [("jsonrpc.request.response-required", problem)]
