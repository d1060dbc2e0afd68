"""The mutation operators and frame generation: named, recorded, deterministic, safe by default."""

from __future__ import annotations

import json

import pytest

from conformance.fuzz.corpus import NO_SUCH_TOOL, build_corpus, tool_selected
from conformance.fuzz.generate import Plan, frame_at, frame_id
from conformance.fuzz.operators import OPERATORS, OpContext, select_operators, sites
from conformance.spec.versions import VERSIONS
from conformance.wire.envelope import parse_envelope

V = "2025-11-25"


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(V)


def _ctx(corpus, transport="stdio", index=7):
    return OpContext(V, transport, index, corpus.seeds, lambda k: f"x-{k}")


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_every_operator_records_what_it_changed(name, corpus) -> None:
    import random

    op = OPERATORS[name]
    transport = "stdio" if op.applies("stdio") else "streamable-http"
    for i, seed in enumerate(corpus.seeds):
        msg = json.loads(json.dumps(dict(seed.message)))
        if "id" in msg:
            msg["id"] = 1000 + i
        out = op.fn(random.Random(i), msg, _ctx(corpus, transport, i))
        data = out.to_bytes()
        assert isinstance(data, bytes) and data
        if name == "valid":
            assert out.mutations == []
            assert data == json.dumps(dict(seed.message, **({"id": 1000 + i} if "id" in seed.message else {})), separators=(",", ":"), ensure_ascii=False).encode() or parse_envelope(data).value == msg
        else:
            assert out.mutations, f"{name} changed {seed.method} without a record"
            for m in out.mutations:
                assert m.operator == name and m.path
                json.dumps(m.to_json())  # JSON-able


def test_syntax_operators_break_the_syntax(corpus) -> None:
    import random

    for name in ("truncate", "invalid-utf8", "garbage"):
        broken = 0
        for i, seed in enumerate(corpus.seeds):
            msg = json.loads(json.dumps(dict(seed.message)))
            env = parse_envelope(OPERATORS[name].fn(random.Random(i), msg, _ctx(corpus)).to_bytes())
            broken += env.kind.value in ("parse-error", "invalid")
        assert broken >= len(corpus.seeds) - 1, name


def test_same_seed_same_frames_other_seed_other_frames(corpus) -> None:
    ops = select_operators("stdio")
    a, b, c = (Plan(s, corpus, ops, "stdio") for s in (5, 5, 6))
    fa = [frame_at(a, i).data for i in range(300)]
    assert fa == [frame_at(b, i).data for i in range(300)]
    assert fa != [frame_at(c, i).data for i in range(300)]
    # frame i is regenerated alone, without the frames before it
    assert frame_at(a, 299).data == fa[299]


def test_frame_ids_are_unique_and_of_every_shape() -> None:
    ids = [frame_id(i) for i in range(10_000)]
    keys = {(type(x).__name__, x) for x in ids}
    assert len(keys) == len(ids)
    assert {type(x) for x in ids} == {int, str}
    assert any(isinstance(x, int) and x > 2**32 for x in ids) and any(isinstance(x, int) and x < 0 for x in ids)
    assert any(isinstance(x, str) and x.isdigit() for x in ids) and any(isinstance(x, str) and "\\" in x for x in ids)


def test_operator_selection_names_unknown_operators() -> None:
    with pytest.raises(ValueError, match="unknown fuzz operator 'nope'.*truncate"):
        select_operators("stdio", ["nope"])
    assert [o.name for o in select_operators("stdio", ["truncate", "id-null"])] == ["id-null", "truncate"]
    assert "truncate" not in [o.name for o in select_operators("stdio", None, ["truncate"])]
    # transport-bound operators
    assert "embedded-newline" in [o.name for o in select_operators("stdio")]
    assert "embedded-newline" not in [o.name for o in select_operators("streamable-http")]
    assert "http-content-type" in [o.name for o in select_operators("streamable-http")]


def test_sites_cover_every_member_and_element() -> None:
    got = {p for p, _, _ in sites({"a": [1, {"b": 2}], "c": 3})}
    assert got == {"$.a", "$.a[0]", "$.a[1]", "$.a[1].b", "$.c"}


@pytest.mark.parametrize("version", VERSIONS)
def test_corpus_is_schema_valid_and_calls_no_real_tool(version) -> None:
    from conformance.schema.validate import validate
    from conformance.spec.methods import C2S

    c = build_corpus(version, tools=[{"name": "delete_everything"}], prompts=[{"name": "p", "arguments": [{"name": "uri", "required": True}]}])
    assert c.seeds
    for s in c.seeds:
        assert validate(dict(s.message), version, C2S) == [], (version, s)
        if s.method == "tools/call":
            assert s.message["params"]["name"] == NO_SUCH_TOOL
    assert any(s.source == "prompts/list" and s.message["params"]["arguments"] == {"uri": "mcp-conformance://fuzz"} for s in c.seeds)


def test_tools_are_opted_in_by_name_and_destructive_ones_only_by_exact_name() -> None:
    read_only = {"name": "get_weather", "annotations": {"readOnlyHint": True}}
    safe = {"name": "echo", "annotations": {"destructiveHint": False}}
    unannotated = {"name": "send_mail"}  # destructiveHint defaults to true
    destructive = {"name": "rm", "annotations": {"destructiveHint": True}}
    assert not tool_selected(read_only, [])
    assert tool_selected(read_only, ["get_*"]) and tool_selected(safe, ["*"])
    assert not tool_selected(unannotated, ["*"]) and not tool_selected(destructive, ["r*"])
    assert tool_selected(unannotated, ["send_mail"]) and tool_selected(destructive, ["rm"])
    c = build_corpus(V, tools=[read_only, destructive], fuzz_tools=["*"])
    called = {s.message["params"]["name"] for s in c.seeds if s.source == "tools/list"}
    assert called == {"get_weather"}


@pytest.mark.parametrize("version", VERSIONS)
def test_a_frame_of_our_strict_encoding_is_expected_alike_without_parsing_it_back(version) -> None:
    """Frames whose bytes are our strict encoding of a value carry it (Frame.value) and the oracle
    skips parsing them back: for every such frame the expectations are exactly those of the
    parse.  Frames of exact bytes (truncated, invalid UTF-8, duplicate names...) carry none."""
    from conformance.fuzz.oracle import OracleContext, expect

    plan = Plan(3, build_corpus(version), select_operators("stdio"), "stdio")
    ctx = OracleContext(version, "stdio", {"tools": {}, "prompts": {}, "resources": {}})
    carried = 0
    for i in range(3000):
        frame = frame_at(plan, i)
        if frame.value is None:
            continue
        carried += 1
        assert json.loads(frame.data) == frame.value
        assert expect(frame.data, ctx, value=frame.value) == expect(frame.data, ctx), (frame.operator, frame.data[:200])
    assert carried > 1500
    corpus = plan.corpus
    for op in ("truncate", "invalid-utf8", "duplicate-field"):
        assert frame_at(Plan(3, corpus, [OPERATORS[op]], "stdio"), 0).value is None, op


def _mutants(corpus, name, n=400):
    import random

    seeds = corpus.seeds
    for i in range(n):
        seed = seeds[i % len(seeds)]
        msg = json.loads(json.dumps(dict(seed.message)))
        if "id" in msg:
            msg["id"] = frame_id(i)
        original = json.loads(json.dumps(msg))
        yield original, OPERATORS[name].fn(random.Random(i), msg, _ctx(corpus, "stdio", i))


def _objects_of(value, path="$"):
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            yield from _objects_of(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _objects_of(v, f"{path}[{i}]")


def test_unknown_member_adds_one_member_nobody_defines_at_every_level(corpus) -> None:
    levels = set()
    for original, out in _mutants(corpus, "unknown-member"):
        env = parse_envelope(out.to_bytes())
        assert env.kind.value in ("request", "notification") and not env.problems  # still a message, strict JSON
        [m] = out.mutations
        parent = m.path.rsplit(".", 1)[0] if not m.path.endswith("]") else m.path[: m.path.rindex("[")]
        levels.add("nested" if parent not in ("$", "$.params", "$.params._meta") else parent)
        before = dict(_objects_of(original))
        added = [(p, k) for p, o in _objects_of(env.value) for k in o
                 if (p in before or p in ("$.params", "$.params._meta")) and k not in before.get(p, {})]
        # one member nobody defines (and the params / _meta made to hold it)
        assert len([k for _, k in added if k not in ("params", "_meta")]) == 1, (original, env.value)
    assert levels == {"$", "$.params", "$.params._meta", "nested"}


def test_lenient_syntax_is_not_json_but_a_lenient_parser_reads_the_message(corpus) -> None:
    from conformance.fuzz.oracle import lenient_reading

    forms = set()
    for original, out in _mutants(corpus, "lenient-syntax"):
        data = out.to_bytes()
        assert parse_envelope(data).kind.value == "parse-error", data
        [m] = out.mutations
        forms.add(m.after)
        read = lenient_reading(data)
        assert isinstance(read, dict) and read.get("id") == original.get("id") and read["method"] == original["method"]
        if m.after in ("NaN", "Infinity", "-Infinity"):
            assert json.loads(data)  # Python's own json reads them: the form common parsers accept
    assert forms == {"NaN", "Infinity", "-Infinity", "comment", "trailing-comma", "single-quotes"}


def test_big_id_puts_ids_and_progress_tokens_at_and_beyond_the_interoperable_range_unique_even_as_doubles(corpus) -> None:
    from conformance.fuzz.operators import BIG_ANCHORS

    seen_paths, doubles, magnitudes = set(), set(), set()
    for original, out in _mutants(corpus, "big-id", 600):
        if not out.mutations:
            continue
        [m] = out.mutations
        seen_paths.add(m.path)
        value = m.after
        assert isinstance(value, int) and abs(value) >= 2**53 - 1 - 600
        magnitudes.add(min(BIG_ANCHORS, key=lambda a: abs(abs(value) - a[0]))[0] * (1 if value > 0 else -1))
        env = parse_envelope(out.to_bytes())
        assert not env.problems
        if m.path == "$.id":
            assert env.id == value
            assert float(value) not in doubles  # two frames never read alike, even rounded to a double
            doubles.add(float(value))
        else:
            assert env.value["params"]["_meta"]["progressToken"] == value
    assert seen_paths == {"$.id", "$.params._meta.progressToken"}
    assert magnitudes == {s * a for a, _ in BIG_ANCHORS for s in (1, -1)}


@pytest.mark.parametrize("name", ["unknown-member", "lenient-syntax", "big-id"])
def test_the_new_operators_serve_both_directions(name) -> None:
    assert OPERATORS[name].uses == frozenset({"c2s", "s2c"})
