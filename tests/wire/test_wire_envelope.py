"""JSON-RPC envelope parsing: exact ids, problems, batches, never raising."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.wire import MISSING, Kind, dumps, id_repr, parse_envelope, parse_value, same_id


def env(value: object) -> bytes:
    return json.dumps(value).encode()


# -- exact ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected_type", "valid"),
    [
        ('"7"', str, True),
        ("7", int, True),
        ("7.0", float, False),
        ("true", bool, False),
        ("-3", int, True),
        ('""', str, True),
    ],
)
def test_request_id_type_is_kept(text: str, expected_type: type, valid: bool) -> None:
    e = parse_envelope(f'{{"jsonrpc":"2.0","id":{text},"method":"ping"}}'.encode())
    assert e.kind is Kind.REQUEST
    assert type(e.id) is expected_type
    assert e.id == json.loads(text)
    id_problems = [p for p in e.problems if '"id"' in p]
    assert (not id_problems) is valid


def test_string_and_number_ids_differ() -> None:
    a = parse_envelope(b'{"jsonrpc":"2.0","id":"7","result":{}}')
    b = parse_envelope(b'{"jsonrpc":"2.0","id":7,"result":{}}')
    assert a.id == "7" and b.id == 7
    assert not same_id(a.id, b.id)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (7, 7, True),
        ("7", "7", True),
        ("7", 7, False),
        (1, 1.0, False),
        (1, True, False),
        (0, False, False),
        (None, None, True),
        (None, MISSING, False),
        (MISSING, MISSING, True),
        (MISSING, "MISSING", False),
    ],
)
def test_same_id(a: object, b: object, equal: bool) -> None:
    assert same_id(a, b) is equal
    assert same_id(b, a) is equal


def test_id_repr() -> None:
    assert id_repr(7) == "7"
    assert id_repr("7") == '"7"'
    assert id_repr(None) == "null"
    assert id_repr(MISSING) == "<absent>"


def test_null_id_request_is_a_request_with_a_problem() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":null,"method":"ping"}')
    assert e.kind is Kind.REQUEST
    assert e.id is None and e.has_id
    assert any("not null" in p for p in e.problems)


def test_null_id_error_response_is_allowed() -> None:
    # JSON-RPC 2.0: a Parse error / Invalid Request response carries id null
    e = parse_envelope(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
    assert e.kind is Kind.ERROR
    assert e.id is None
    assert e.error_code == -32700
    assert e.problems == []


def test_null_id_result_is_a_problem() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":null,"result":{}}')
    assert e.kind is Kind.RESULT
    assert any("not null" in p for p in e.problems)


def test_notification_has_no_id() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert e.kind is Kind.NOTIFICATION
    assert e.id is MISSING and not e.has_id
    assert e.params is MISSING
    assert e.problems == []


# -- problems ---------------------------------------------------------------------------------------


def test_duplicate_keys_are_flagged_last_wins() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}')
    assert e.id == 2
    assert "duplicate key 'id'" in e.problems


def test_nested_duplicate_keys_are_flagged() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}')
    assert e.params == {"name": "b"}
    assert "duplicate key 'name'" in e.problems


def test_missing_jsonrpc() -> None:
    e = parse_envelope(b'{"id":1,"method":"ping"}')
    assert e.kind is Kind.REQUEST
    assert '"jsonrpc" must be exactly "2.0"' in e.problems


@pytest.mark.parametrize("version", ['"1.0"', "2.0", "null", '"2.0 "'])
def test_wrong_jsonrpc_version(version: str) -> None:
    e = parse_envelope(f'{{"jsonrpc":{version},"id":1,"method":"ping"}}'.encode())
    assert '"jsonrpc" must be exactly "2.0"' in e.problems


def test_result_and_error_together_is_invalid() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}')
    assert e.kind is Kind.INVALID
    assert any("both" in p for p in e.problems)


def test_request_with_result_is_flagged() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}')
    assert e.kind is Kind.REQUEST
    assert any('must not carry "result"' in p for p in e.problems)


def test_result_without_id() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","result":{}}')
    assert e.kind is Kind.RESULT
    assert any('must carry an "id"' in p for p in e.problems)


@pytest.mark.parametrize(
    ("error", "fragment"),
    [
        ('"oops"', '"error" must be an object'),
        ('{"message":"x"}', 'must carry a "code"'),
        ('{"code":"1","message":"x"}', '"error.code" must be an integer'),
        ('{"code":1.5,"message":"x"}', '"error.code" must be an integer'),
        ('{"code":true,"message":"x"}', '"error.code" must be an integer'),
        ('{"code":-32600}', 'string "message"'),
        ('{"code":-32600,"message":7}', 'string "message"'),
    ],
)
def test_error_shape_problems(error: str, fragment: str) -> None:
    e = parse_envelope(f'{{"jsonrpc":"2.0","id":1,"error":{error}}}'.encode())
    assert e.kind is Kind.ERROR
    assert any(fragment in p for p in e.problems), e.problems


def test_good_error_has_no_problems() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no","data":{"x":1}}}')
    assert (e.kind, e.error_code, e.problems) == (Kind.ERROR, -32601, [])


@pytest.mark.parametrize("params", ["1", '"x"', "null", "true"])
def test_params_must_be_structured(params: str) -> None:
    e = parse_envelope(f'{{"jsonrpc":"2.0","id":1,"method":"ping","params":{params}}}'.encode())
    assert '"params" must be an object or an array' in e.problems


def test_method_must_be_a_string() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":1,"method":5}')
    assert e.kind is Kind.INVALID
    assert '"method" must be a string' in e.problems


def test_no_method_result_or_error() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":1}')
    assert e.kind is Kind.INVALID


@pytest.mark.parametrize("text", [b"1", b'"x"', b"null", b"true"])
def test_non_object_is_invalid(text: bytes) -> None:
    e = parse_envelope(text)
    assert e.kind is Kind.INVALID
    assert any("must be an object" in p for p in e.problems)


# -- parse errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [b"", b"{", b"{'a':1}", b'{"a":1}{"b":2}', b"\xff\xfe{}", b'{"a":1,}'])
def test_parse_errors(text: bytes) -> None:
    e = parse_envelope(text)
    assert e.kind is Kind.PARSE_ERROR
    assert e.raw == text
    assert e.value is MISSING
    assert e.problems


def test_invalid_utf8_reports_the_offset() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","method":"\xc3("}')
    assert e.kind is Kind.PARSE_ERROR
    assert e.problems == ["invalid UTF-8 at byte 27"]


@pytest.mark.parametrize(("text", "lenient"), [
    (b'{"jsonrpc":"2.0","id":7,"result":{"x":"\xff"}}', 7),
    (b'{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"\xc3("}}', "a"),
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"\xff"}}', MISSING),  # a request, not an answer
    (b'{"jsonrpc":"2.0","id":7.5,"result":"\xff"}', MISSING),  # not an id a request of ours has
    (b'{"jsonrpc":"2.0","id":7,"result":"\xff"', MISSING),  # not JSON even so
    (b'{"jsonrpc":"2.0","id":7,"result":{}}', MISSING),  # valid: an ordinary response
])
def test_a_response_that_is_not_utf8_keeps_the_id_it_answers_apart(text: bytes, lenient: object) -> None:
    e = parse_envelope(text)
    assert e.lenient_id == lenient and type(e.lenient_id) is type(lenient)
    if lenient is not MISSING:
        assert e.kind is Kind.PARSE_ERROR and e.id is MISSING  # never judged as its id


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_rejected(constant: str) -> None:
    e = parse_envelope(f'{{"jsonrpc":"2.0","id":{constant},"method":"ping"}}'.encode())
    assert e.kind is Kind.PARSE_ERROR
    assert any(constant in p for p in e.problems)


def test_bom_is_a_problem_but_parses() -> None:
    e = parse_envelope(b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"x"}')
    assert e.kind is Kind.NOTIFICATION
    assert e.raw.startswith(b"\xef\xbb\xbf")
    assert any("byte order mark" in p for p in e.problems)


def test_deep_nesting_does_not_raise() -> None:
    e = parse_envelope(b"[" * 100_000 + b"]" * 100_000)
    assert e.kind is Kind.PARSE_ERROR


def test_str_input_is_accepted() -> None:
    e = parse_envelope('{"jsonrpc":"2.0","id":"é","method":"ping"}')
    assert e.id == "é"
    assert e.raw == '{"jsonrpc":"2.0","id":"é","method":"ping"}'.encode()


def test_parse_value_reports_duplicates() -> None:
    value, problems = parse_value(b'{"a":1,"a":2}')
    assert value == {"a": 2}
    assert problems == ["duplicate key 'a'"]


# -- batches ----------------------------------------------------------------------------------------


def test_empty_batch() -> None:
    e = parse_envelope(b"[]")
    assert e.kind is Kind.BATCH
    assert e.items == []
    assert "empty batch" in e.problems


def test_batch_items_are_classified() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress"},
        {"jsonrpc": "2.0", "id": "1", "result": {}},
        5,
        [],
    ]
    e = parse_envelope(env(batch))
    assert e.kind is Kind.BATCH
    assert [i.kind for i in e.items] == [Kind.REQUEST, Kind.NOTIFICATION, Kind.RESULT, Kind.INVALID, Kind.INVALID]
    assert type(e.items[2].id) is str
    assert any("nested array" in p for p in e.items[4].problems)
    assert [json.loads(i.raw) for i in e.items] == batch


def test_nested_batch_is_invalid_item() -> None:
    e = parse_envelope(b'[[{"jsonrpc":"2.0","method":"x"}]]')
    assert e.kind is Kind.BATCH
    assert e.items[0].kind is Kind.INVALID
    assert e.items[0].items == []


@pytest.mark.parametrize(
    "member",
    [b'{"jsonrpc":"2.0","id":1e400,"result":{}}', b'{"jsonrpc":"2.0","id":"\\ud800","result":{}}'],
    ids=["out-of-range-number", "lone-surrogate"],
)
def test_batch_member_that_dumps_cannot_encode(member: bytes) -> None:
    # regression: parse_envelope raised ValueError / UnicodeEncodeError for these
    e = parse_envelope(b"[" + member + b"]")
    assert e.kind is Kind.BATCH
    assert e.items[0].kind is Kind.RESULT


def test_summary() -> None:
    e = parse_envelope(b'{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"m"}}')
    assert e.summary() == {"kind": "error", "id": 3, "code": -32601}
    json.dumps(parse_envelope(b"[1]").summary())


# -- dumps ------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_dumps_never_emits_a_newline_and_round_trips(value: object) -> None:
    out = dumps(value)
    assert b"\n" not in out and b"\r" not in out
    assert json.loads(out) == value


def test_dumps_is_compact_utf8() -> None:
    assert dumps({"a": ["é", "\n", "\u2028"]}) == '{"a":["é","\\n","\u2028"]}'.encode()


def test_dumps_rejects_nan() -> None:
    with pytest.raises(ValueError):
        dumps(float("nan"))


@given(json_values)
def test_parse_envelope_never_raises(value: object) -> None:
    e = parse_envelope(dumps(value))
    assert e.kind is not Kind.PARSE_ERROR
    assert e.value == value


@given(st.binary(max_size=64))
def test_parse_envelope_never_raises_on_bytes(raw: bytes) -> None:
    e = parse_envelope(raw)
    assert e.raw == raw
