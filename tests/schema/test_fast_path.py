"""The compiled pre-check (``conformance.schema._fast``) against jsonschema, differentially.

``validate()`` trusts a compiled check that says "valid" and skips jsonschema, so the check must
never accept what jsonschema rejects.  These tests assert that both call exactly the same values
valid -- in both directions -- for every version, on:

* the official examples (2026-07-28) and every single-step mutation of them, against their own
  definition and the same-named definition of every other version;
* values hypothesis-jsonschema generates from the official schemas, and every single-step
  mutation of each (type swaps, deleted and extra members, other const/enum values, emptied and
  grown arrays, strings that fail the ``uri`` / ``uri-template`` / ``byte`` formats, numbers at
  and beyond ``minimum`` / ``maximum``);
* random JSON built from each schema's own vocabulary (property names, const and enum values);
* whole messages through ``validate()`` with the fast path on and off (same findings).

The pool is deliberately near the boundary: mutants of valid values are where a lenient check
would show.  ``MCP_FAST_PATH_EXAMPLES=<n>`` scales the hypothesis budget for a deeper run.
"""

from __future__ import annotations

import base64
import copy
import functools
import importlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.schema import load_schema, validate
from conformance.schema._fast import SUPPORTED
from conformance.schema.loader import PINS
from conformance.spec.methods import C2S, METHODS, REQUEST, S2C, lookup
from conformance.spec.versions import VERSIONS

vmod = importlib.import_module("conformance.schema.validate")

V26 = "2026-07-28"
SCALE = int(os.environ.get("MCP_FAST_PATH_EXAMPLES", "0") or 0)


def _examples_root() -> Path:
    env = os.environ.get("MCP_CONFORMANCE_SCHEMA_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "mcp-spec" / "schemas"
    return base / V26 / "examples"


EXAMPLES = sorted(_examples_root().glob("*/*.json"))


def _defs(version: str) -> dict[str, Any]:
    return load_schema(version)[PINS[version].definitions_key]


# -- the two oracles --------------------------------------------------------------------------


class Tally:
    """How many values each answer covered (for reporting a deep run)."""

    valid = 0
    invalid = 0


def agree(version: str, definition: str, value: Any) -> bool:
    """Both paths give the same answer for ``value``; returns it."""
    info = vmod._version(version)
    check = vmod._fast_check(info, definition)
    assert check is not None, f"{version} {definition}: not compiled ({info.fast.why_not(definition)})"
    slow = vmod._validator(info, definition).is_valid(value)
    fast = check(value)
    assert fast is slow, (
        f"{version} {definition}: compiled check says {'valid' if fast else 'invalid'}, "
        f"jsonschema says {'valid' if slow else 'invalid'}, for {json.dumps(value, default=repr)[:800]}"
    )
    if slow:
        Tally.valid += 1
    else:
        Tally.invalid += 1
    return slow


# -- mutations --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _vocabulary(version: str) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """(property names, const and enum values) used anywhere in the schema of ``version``."""
    names: set[str] = set()
    values: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                names.update(node["properties"])
            if "const" in node and not isinstance(node["const"], dict):
                values.append(node["const"])
            if isinstance(node.get("enum"), list):
                values.extend(node["enum"])
            for key, child in node.items():
                if key not in ("const", "enum", "default", "examples"):
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(load_schema(version))
    unique: list[Any] = []
    for v in values:
        if not any(type(v) is type(u) and v == u for u in unique):
            unique.append(v)
    return tuple(sorted(names)), tuple(unique)


# Values near the boundaries the schemas draw: bool vs int, integral floats, formats, limits.
POOL: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    0.5,
    1.5,
    -0.0,
    101,
    -32602,
    -32602.0,
    "",
    "2.0",
    "text",
    "file:///a.txt",
    "https://example.com/a?b#c",
    "not a uri",
    "file:///{path}",
    "file:///{path",
    "aGk=",
    "aGk",
    [],
    [1],
    {},
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, path + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, path + (i,))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = _replace(value[path[0]], path[1:], new)
    return out


def mutants(version: str, value: Any, *, limit_paths: int = 40) -> Iterator[Any]:
    """Every single-step mutation of ``value`` at up to ``limit_paths`` places."""
    names, consts = _vocabulary(version)
    const_set = {c for c in consts if isinstance(c, str)}
    for path, node in list(_paths(value))[:limit_paths]:
        for new in POOL:
            if not (type(new) is type(node) and new == node):
                yield _replace(value, path, new)
        if isinstance(node, str) and node in const_set:
            for other in consts if SCALE else consts[:: max(1, len(consts) // 16)]:  # another discriminator / enum value
                if other != node:
                    yield _replace(value, path, other)
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            for delta in (-1, 1, 0.5):
                yield _replace(value, path, node + delta)
        if isinstance(node, dict):
            for key in node:
                yield _replace(value, path, {k: v for k, v in node.items() if k != key})
            yield _replace(value, path, {**node, "x-extra": 1})
            for key in names[:: max(1, len(names) // 12)]:  # a known member where it may not belong
                if key not in node:
                    yield _replace(value, path, {**node, key: "x"})
        if isinstance(node, list):
            if node:
                yield _replace(value, path, node[1:])
                yield _replace(value, path, node + node[:1])
                yield _replace(value, path, [*node, None])
            yield _replace(value, path, [*node, {}])


# -- every definition compiles ----------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_of_the_pinned_schemas_compiles(version: str) -> None:
    info = vmod._version(version)
    missing = {d: info.fast.why_not(d) for d in info.defs if vmod._fast_check(info, d) is None}
    assert missing == {}


def test_unsupported_keywords_are_not_compiled() -> None:
    """Anything jsonschema knows but the compiler does not leaves the definition to jsonschema."""
    from jsonschema import Draft202012Validator

    from conformance.schema._fast import FastChecks

    defs = {
        "Pattern": {"type": "string", "pattern": "^a"},
        "OneOf": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "UsesPattern": {"type": "object", "properties": {"p": {"$ref": "#/$defs/Pattern"}}},
        "ObjectConst": {"const": {"a": 1}},
        "Remote": {"$ref": "https://example.com/schema.json"},
        "WithId": {"$id": "https://example.com/x", "type": "object"},
        "Prefix": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
        "Fine": {"type": "object", "properties": {"s": {"type": "string"}}, "x-note": "ignored, as by jsonschema"},
    }
    fc = FastChecks(defs, "$defs", draft7=False, keywords=Draft202012Validator.VALIDATORS, conforms=lambda v, f: True)
    for name in defs:
        if name == "Fine":
            assert fc.get(name) is not None
        else:
            assert fc.get(name) is None, name
            assert fc.why_not(name)
    assert "pattern" not in SUPPORTED and "oneOf" not in SUPPORTED


def test_draft7_ref_siblings_are_ignored_like_jsonschema() -> None:
    from jsonschema import Draft7Validator

    from conformance.schema._fast import FastChecks

    defs = {"S": {"type": "string"}, "R": {"$ref": "#/definitions/S", "maxItems": 0, "type": "integer"}}
    fc = FastChecks(defs, "definitions", draft7=True, keywords=Draft7Validator.VALIDATORS, conforms=lambda v, f: True)
    check = fc.get("R")
    assert check is not None
    root = {"definitions": defs, "$ref": "#/definitions/R"}
    for value in ("a", 1, [1], None):
        assert check(value) is Draft7Validator(root).is_valid(value), value


# -- official examples and their mutants --------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_official_examples_and_their_mutants_agree(path: Path) -> None:
    value = json.loads(path.read_text())
    definition = path.parent.name
    for version in VERSIONS:
        if definition not in _defs(version):
            continue
        valid = agree(version, definition, value)
        assert valid or version != V26
        answers = {agree(version, definition, m) for m in mutants(version, value, limit_paths=(SCALE and 60) or (14 if version == V26 else 3))}
        if version == V26:
            assert False in answers  # the mutants reach the boundary


def test_examples_were_found() -> None:
    assert len(EXAMPLES) > 80


# -- generated values and their mutants ---------------------------------------------------------

# Definitions whose generation stays cheap (hypothesis-jsonschema needs ~0.1-1 s to prepare each)
# and which together use every supported keyword and format: the hot results and envelopes,
# uri / uri-template / byte, numbers with limits, maxItems, allOf with integer consts (2025-11-25
# on), enum-heavy requests.  A deep run (MCP_FAST_PATH_EXAMPLES) draws from every definition.
GENERATED = {
    "CallToolResult",
    "ListToolsResult",
    "ReadResourceResult",
    "ListResourceTemplatesResult",
    "CompleteResult",
    "URLElicitationRequiredError",
    "UnsupportedProtocolVersionError",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONRPCResultResponse",
    "JSONRPCError",
    "JSONRPCErrorResponse",
    "InitializeResult",
    "ElicitRequest",
}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rsplit("/", 1)[-1]
        for key, child in node.items():
            if key not in ("const", "enum", "default", "examples"):
                yield from _refs(child)
    elif isinstance(node, list):
        for child in node:
            yield from _refs(child)


def _closure(defs: dict[str, Any], name: str) -> set[str]:
    seen, todo = {name}, [name]
    while todo:
        for ref in _refs(defs[todo.pop()]):
            if ref not in seen:
                seen.add(ref)
                todo.append(ref)
    return seen


def _unrolled(defs: dict[str, Any], needed: set[str]) -> dict[str, Any]:
    """``defs`` restricted to ``needed``, with recursion cut for hypothesis-jsonschema (which
    cannot generate recursive references): inside a definition that can reach itself (2026-07-28's
    JSONValue / JSONObject), a reference to such a definition becomes the ``false`` schema -- what
    remains allows a subset of the original (scalars, ``{}``, ``[]``), so generated values stay valid."""
    cyclic = {d for d in needed if any(d in _closure(defs, r) for r in _refs(defs[d]))}

    def cut(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.rsplit("/", 1)[-1] in cyclic:
                return False
            return {k: (v if k in ("const", "enum", "default", "examples") else cut(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [cut(v) for v in node]
        return node

    return {d: cut(defs[d]) if d in cyclic else defs[d] for d in needed}


@functools.lru_cache(maxsize=None)
def _strategy(version: str, definition: str) -> st.SearchStrategy[Any]:
    from hypothesis_jsonschema import from_schema

    # hypothesis-jsonschema speaks draft-07: 2020-12's $defs become definitions (GUIDE.md); the
    # schemas use no keyword whose meaning differs between the two (every definition compiles
    # from the supported set, which means the same in both).
    defs = _defs(version)
    text = json.dumps(_unrolled(defs, _closure(defs, definition)))
    text = text.replace('"#/$defs/', '"#/definitions/')
    byte = st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode("ascii"))
    return from_schema({"definitions": json.loads(text), "$ref": f"#/definitions/{definition}"}, custom_formats={"byte": byte})


def _generated(version: str) -> list[str]:
    return sorted(d for d in _defs(version) if SCALE or d in GENERATED)


SLOW_GENERATION = settings(
    max_examples=SCALE or 3,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example],
)


@pytest.mark.parametrize("version", VERSIONS)
@SLOW_GENERATION
@given(data=st.data())
def test_generated_values_and_their_mutants_agree(version: str, data: st.DataObject) -> None:
    definition = data.draw(st.sampled_from(_generated(version)), label="definition")
    value = data.draw(_strategy(version, definition), label="value")
    # generated to be valid (formats included): both paths must accept it
    assert agree(version, definition, value), f"{version} {definition}: generated value rejected by both"
    for mutant in mutants(version, value):
        agree(version, definition, mutant)


# -- random JSON in the schemas' own vocabulary --------------------------------------------------


def _vocabulary_json(version: str) -> st.SearchStrategy[Any]:
    names, consts = _vocabulary(version)
    scalars = st.one_of(
        st.sampled_from(POOL[:-3]),
        st.sampled_from(consts),
        st.integers(-(2**64), 2**64),
        st.floats(allow_nan=False),
        st.text(max_size=8),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.one_of(st.sampled_from(names), st.text(max_size=4)), children, max_size=6),
        ),
        max_leaves=24,
    )


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=(SCALE * 10) or 30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_vocabulary_json_agrees(version: str, data: st.DataObject) -> None:
    definition = data.draw(st.sampled_from(sorted(_defs(version))), label="definition")
    value = data.draw(_vocabulary_json(version), label="value")
    agree(version, definition, value)


# -- whole messages: validate() with and without the fast path ----------------------------------


def _findings(message: Any, version: str, direction: str, answering: Any, fast: bool) -> list[Any]:
    old = vmod._FAST_PATH
    vmod._FAST_PATH = fast
    try:
        return validate(message, version, direction, answering=answering)
    finally:
        vmod._FAST_PATH = old


def _message_cases(version: str) -> Iterator[tuple[Any, str, str | None]]:
    """Official example messages plus requests/results from the method table, with mutants."""
    for path in EXAMPLES:
        value = json.loads(path.read_text())
        if not (isinstance(value, dict) and "jsonrpc" in value):
            continue
        if "method" in value:
            for direction in (C2S, S2C):
                yield value, direction, None
        else:
            for m in METHODS:
                if m.exists_in(version) and m.kind == REQUEST and f"{m.result_def}Response" == path.parent.name:
                    yield value, S2C if m.direction == C2S else C2S, m.name
            yield value, S2C, None


@pytest.mark.parametrize("version", VERSIONS)
def test_validate_gives_the_same_findings_with_and_without_the_fast_path(version: str) -> None:
    seen = 0
    for message, direction, answering in _message_cases(version):
        every = list(mutants(version, message, limit_paths=(SCALE and 40) or 3))
        for candidate in [message, *every[:: 1 if SCALE else 8]]:
            slow = _findings(candidate, version, direction, answering, fast=False)
            fast = _findings(candidate, version, direction, answering, fast=True)
            assert fast == slow, (version, direction, answering, candidate)
            seen += 1
        batch = [message, {"jsonrpc": "2.0", "id": None, "method": "ping"}]
        assert _findings(batch, version, direction, None, fast=True) == _findings(batch, version, direction, None, fast=False)
    assert seen > 500
    assert lookup("tools/call", C2S, version) is not None
