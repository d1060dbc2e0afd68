"""Inbound validation against the negotiated version's official schema.

A request that does not conform to its ``*Request`` definition is answered ``-32602 Invalid
params`` whose ``data.findings`` lists every finding (JSON path, schema path, message), so the
client sees exactly what was wrong.  The schema oracle (``conformance.schema``) is imported on
first use, keeping start-up fast; if the official schema cannot be loaded the server says so once
on stderr and serves without schema validation rather than failing every request.
"""

from __future__ import annotations

import sys
from typing import Any

from conformance.spec import errors as codes

from reference_server.errors import RPCError

__all__ = ["check_message", "check_value", "schema_available"]

_validate_definition: Any = None
_broken: dict[str, str] = {}
_MAX_FINDINGS = 20


def _oracle() -> Any:
    global _validate_definition
    if _validate_definition is None:
        # conformance.schema.validate keeps jsonschema from importing checker packages for formats
        # no MCP schema uses (start-up time matters: the suite spawns this server often).
        try:
            from conformance.schema import validate_definition
        except ImportError as exc:  # the oracle is part of this distribution; be defensive anyway
            _validate_definition = False
            print(f"mcp-reference-server: schema validation unavailable ({exc})", file=sys.stderr)
        else:
            _validate_definition = validate_definition
    return _validate_definition


def schema_available(version: str) -> bool:
    return bool(_oracle()) and version not in _broken


def check_value(value: Any, version: str, definition: str) -> list[Any] | None:
    """Findings for ``value`` against ``definition``; ``None`` when the schema is unavailable."""
    fn = _oracle()
    if not fn or version in _broken:
        return None
    try:
        return fn(value, version, definition)
    except Exception as exc:  # SchemaError (no schema for the version) or an oracle bug
        _broken[version] = str(exc)
        print(f"mcp-reference-server: schema validation for {version} disabled: {exc}", file=sys.stderr)
        return None


def check_message(msg: dict[str, Any], version: str, definition: str) -> RPCError | None:
    """``None`` if ``msg`` conforms to ``definition`` of ``version``; else the error to answer."""
    findings = check_value(msg, version, definition)
    if not findings:
        return None
    items = [{"path": f.json_path, "schemaPath": f.schema_path, "message": f.message} for f in findings[:_MAX_FINDINGS]]
    envelope_only = all(not f.json_path.startswith("$.params") for f in findings)
    first = findings[0]
    if envelope_only:
        return RPCError(codes.INVALID_REQUEST, f"Invalid Request: {first.json_path}: {first.message}", {"findings": items, "definition": definition, "protocolVersion": version}, http_status=400)
    return RPCError(codes.INVALID_PARAMS, f"Invalid params: {first.json_path}: {first.message}", {"findings": items, "definition": definition, "protocolVersion": version}, http_status=400)
