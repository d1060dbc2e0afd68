"""``conformance/spec/methods.py`` agrees with the official schemas.

The method table is re-derived from each version's ``ClientRequest`` / ``ServerRequest`` /
``ClientNotification`` / ``ServerNotification`` unions (2026-07-28: ``ClientNotification`` is one
inline definition, not a union, and there is no ``ServerRequest``), and result definitions from the
``ServerResult`` / ``ClientResult`` unions (and 2026-07-28's ``<Result>Response`` definitions).
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.schema import load_schema
from conformance.schema.loader import PINS
from conformance.spec.methods import C2S, METHODS, NOTIFICATION, REQUEST, S2C, lookup, methods_for
from conformance.spec.versions import VERSIONS

UNIONS = {
    "ClientRequest": (C2S, REQUEST),
    "ServerRequest": (S2C, REQUEST),
    "ClientNotification": (C2S, NOTIFICATION),
    "ServerNotification": (S2C, NOTIFICATION),
}
GENERIC_PARAMS = {"RequestParams", "NotificationParams"}


def _defs(version: str) -> dict[str, Any]:
    return load_schema(version)[PINS[version].definitions_key]


def _ref_name(node: dict[str, Any]) -> str:
    return node["$ref"].rsplit("/", 1)[-1]


def _members(body: dict[str, Any]) -> list[dict[str, Any]]:
    return body["anyOf"] if "anyOf" in body else [body]


def _derived(version: str) -> dict[tuple[str, str], tuple[str, str | None, dict[str, Any]]]:
    """(method, direction) -> (kind, definition name or None if inline, definition body)."""
    defs = _defs(version)
    out: dict[tuple[str, str], tuple[str, str | None, dict[str, Any]]] = {}
    for union, (direction, kind) in UNIONS.items():
        if union not in defs:
            continue
        for member in _members(defs[union]):
            name = _ref_name(member) if "$ref" in member else None
            body = defs[name] if name else member
            method = body["properties"]["method"]["const"]
            assert (method, direction) not in out, (version, method, direction)
            out[(method, direction)] = (kind, name, body)
    return out


def test_schema_quirks_the_derivation_relies_on() -> None:
    defs = _defs("2026-07-28")
    assert "ServerRequest" not in defs
    assert "anyOf" not in defs["ClientNotification"] and "$ref" not in defs["ClientNotification"]
    for version in VERSIONS[:-1]:
        assert "anyOf" in _defs(version)["ClientNotification"]
        assert "ServerRequest" in _defs(version)


@pytest.mark.parametrize("version", VERSIONS)
def test_method_names_directions_and_kinds(version: str) -> None:
    derived = _derived(version)
    table = {(m.name, m.direction): m for m in methods_for(version)}
    assert sorted(table) == sorted(derived)  # names, directions and since/until
    for key, (kind, name, body) in derived.items():
        method = table[key]
        assert method.kind == kind, key
        assert lookup(*key, version) is method
        if name is not None:
            assert method.request_def == name, key
        else:  # inline union member: the table names the standalone definition of the same message
            assert _defs(version)[method.request_def]["properties"]["method"] == body["properties"]["method"]


@pytest.mark.parametrize("version", VERSIONS)
def test_params_definitions(version: str) -> None:
    defs = _defs(version)
    for method in methods_for(version):
        body = defs[method.request_def]
        params = body.get("properties", {}).get("params", {})
        if "$ref" not in params:
            continue  # inline params (up to 2025-06-18): nothing to compare
        name = _ref_name(params)
        if method.params_def is None:
            # the table leaves out the generic base, where params may be omitted
            assert name in GENERIC_PARAMS, (version, method.name, name)
            assert "params" not in body.get("required", []), (version, method.name)
        else:
            assert method.params_def == name, (version, method.name)


def test_every_params_definition_exists_somewhere() -> None:
    for method in METHODS:
        if method.params_def is not None:
            assert any(method.params_def in _defs(v) for v in method.versions), method


@pytest.mark.parametrize("version", VERSIONS)
def test_result_definitions(version: str) -> None:
    defs = _defs(version)
    for method in methods_for(version, kind=REQUEST):
        union = defs["ServerResult" if method.direction == C2S else "ClientResult"]
        members = {_ref_name(m) for m in _members(union)}
        stem = method.request_def.removesuffix("Request")
        expected = f"{stem}Result" if f"{stem}Result" in members else "EmptyResult"
        if expected == "EmptyResult":
            assert "Result" in members and _ref_name(defs["EmptyResult"]) == "Result"
        assert method.result_def == expected, (version, method.name)
    for method in methods_for(version, kind=NOTIFICATION):
        assert method.result_def is None


def test_2026_result_response_definitions_agree() -> None:
    defs = _defs("2026-07-28")
    responses = {n.removesuffix("Response"): b for n, b in defs.items() if n.endswith("ResultResponse") and n != "JSONRPCResultResponse"}
    by_result = {m.result_def: m for m in methods_for("2026-07-28", direction=C2S, kind=REQUEST)}
    assert set(responses) <= set(by_result)
    for result_def, body in responses.items():
        result = body["properties"]["result"]
        refs = {_ref_name(m) for m in _members(result)}
        assert result_def in refs
        assert refs <= {result_def, "InputRequiredResult"}
