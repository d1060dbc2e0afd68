"""The schema oracle: is this message what the official schema of a version allows?  No I/O.

:func:`validate` classifies a parsed JSON-RPC value (request, notification, result, error, batch)
and checks it against the *specific* definition for its method and direction (``CallToolRequest``,
``ListToolsResult``, ...) as well as the JSON-RPC envelope of the version, plus the rules the
schemas cannot express (``schema_path="rule:<name>"``):

``rule:id-not-null``          a request or result with ``"id": null`` (an *error* response may carry
                              a null id: JSON-RPC 2.0 requires it when the request was unreadable)
``rule:request-without-id``   a known request method sent without ``id`` (it would be a notification)
``rule:notification-with-id`` a known notification method sent with an ``id``
``rule:result-and-error``     a response with both ``result`` and ``error``
``rule:not-a-message``        a value that is no JSON-RPC object (no ``method``/``result``/``error``)
``rule:batch-not-allowed``    a JSON array outside 2025-03-26
``rule:empty-batch``          ``[]`` (JSON-RPC 2.0: an empty array is an Invalid Request)
``rule:batch-mixed``          a batch mixing requests/notifications with responses
``rule:initialize-in-batch``  ``initialize`` inside a batch (2025-03-26: MUST NOT)
``rule:input-required-empty`` an ``InputRequiredResult`` with neither ``inputRequests`` nor
                              ``requestState`` (its definition's MUST; 2026-07-28)

An unknown method (in that direction and version) is validated against the envelope only: whether
a peer may send it is for a scenario to judge.

Results are validated against the result definition of the method they answer (``answering``),
chosen as the specification describes: ``CreateTaskResult`` for a task-augmented request in
2025-11-25 (a result with a ``task`` member answering ``tools/call``, ``sampling/createMessage`` or
``elicitation/create``); ``InputRequiredResult`` for ``resultType: "input_required"`` in 2026-07-28
where the method's ``<Result>Response`` definition allows it; a 2026-07-28 result whose
``resultType`` is not one of the core's (``complete``, ``input_required``) belongs to an extension
(``task``: the tasks extension's ``CreateTaskResult``) and is validated against the envelope only.

Formats: a ``FormatChecker`` checks every ``format`` the official schemas use -- ``uri``
(RFC 3986 via ``rfc3986-validator`` or ``rfc3987``), ``uri-template`` (``uri-template``) and
``byte`` (strict RFC 4648 base64, checked here; jsonschema itself does not know it).
:func:`unchecked_formats` lists any format a schema uses that cannot be checked with the installed
packages, and the first validation against such a schema emits a :class:`FormatNotCheckedWarning`.

Validators are compiled once per (version, definition) and cached.  On the hot path a compiled
pre-check (:mod:`conformance.schema._fast`: plain Python generated from the definition, several
times faster) answers "valid?" first; jsonschema runs only when it says no, to produce the findings.
It implements exactly the keywords the schemas use with jsonschema's semantics, so verdicts are
the same either way (``tests/schema/test_fast_path.py`` checks that differentially).  jsonschema
itself is imported on first need (a finding to explain, a format to check), so a process that only
ever sees valid messages never loads it.
"""

from __future__ import annotations

import base64
import binascii
import copy
import importlib.util
import re
import sys
import threading
import types
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.schema._fast import FastChecks
from conformance.schema.findings import Finding
from conformance.schema.loader import SchemaError, load_schema, pin_for
from conformance.spec.methods import C2S, NOTIFICATION, REQUEST, S2C, lookup
from conformance.spec.versions import spec as _version_spec

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_import_lock = threading.RLock()

__all__ = [
    "validate",
    "validate_definition",
    "definition_names",
    "unchecked_formats",
    "import_jsonschema",
    "FORMAT_CHECKER",
    "FormatNotCheckedWarning",
]


class FormatNotCheckedWarning(UserWarning):
    """A schema uses a ``format`` that no installed checker implements (it would pass unchecked)."""


# -- jsonschema, imported when first needed ------------------------------------------------------
#
# A valid message is settled by the compiled checks of ``_fast`` alone: jsonschema (and
# ``referencing``) are needed only to explain an invalid one, or to check a ``format``.  Importing
# them costs ~0.1 s, paid by every process that validates -- and a run starts dozens of
# reference-server processes, most of which only ever see valid messages without a format.  So
# they are imported on first use, not with this module.

_JS: Any = None
_FORMAT_CHECKER: Any = None

# jsonschema's format module imports, when installed, a checker package for every format it knows:
# rfc3987_syntax (iri) builds a grammar at import time (~1 s on this machine), isoduration pulls in
# arrow, and so on -- packages no MCP schema needs (the schemas use "uri", "uri-template" and
# "byte" only).  When jsonschema is not loaded yet we keep exactly those imports from happening
# (jsonschema suppresses the ImportError and leaves the format unchecked); afterwards the modules
# are importable again as usual.  unchecked_formats() / FormatNotCheckedWarning still guard the
# formats the schemas do use, so a package needed for one of them is never skipped here.
_UNUSED_FORMAT_PACKAGES = ("rfc3987_syntax", "isoduration", "webcolors", "jsonpointer", "fqdn", "idna")

# the keywords jsonschema's validator classes know, per dialect (tests/schema checks them against
# the installed jsonschema): anything else in a schema is an annotation, to it and to ``_fast``
DRAFT7_KEYWORDS = frozenset({
    "$ref", "additionalItems", "additionalProperties", "allOf", "anyOf", "const", "contains", "dependencies",
    "enum", "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxItems", "maxLength",
    "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not",
    "oneOf", "pattern", "patternProperties", "properties", "propertyNames", "required", "type", "uniqueItems"})
DRAFT202012_KEYWORDS = frozenset({
    "$dynamicRef", "$ref", "additionalProperties", "allOf", "anyOf", "const", "contains", "dependentRequired",
    "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxItems",
    "maxLength", "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf",
    "not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "required",
    "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems"})


def _jsonschema() -> Any:
    """jsonschema and referencing, imported once (see above)."""
    global _JS
    if _JS is not None:
        return _JS
    with _import_lock:
        if _JS is None:
            skipped = [] if "jsonschema" in sys.modules else \
                [name for name in _UNUSED_FORMAT_PACKAGES if name not in sys.modules]
            for name in skipped:
                sys.modules[name] = None  # type: ignore[assignment]  # import -> ImportError, suppressed
            try:
                import jsonschema
                import referencing
                import referencing.jsonschema
            finally:
                for name in skipped:
                    if sys.modules.get(name, 0) is None:
                        del sys.modules[name]
            _JS = types.SimpleNamespace(jsonschema=jsonschema, Registry=referencing.Registry, Resource=referencing.Resource,
                                        DRAFT7=referencing.jsonschema.DRAFT7,
                                        DRAFT202012=referencing.jsonschema.DRAFT202012)
    return _JS


def import_jsonschema() -> Any:
    """The ``jsonschema`` module, imported as the oracle imports it (without the checker packages
    of formats no MCP schema uses): anything that needs jsonschema imports it through this."""
    return _jsonschema().jsonschema


# -- formats ------------------------------------------------------------------------------------


def _format_checker() -> Any:
    """The ``FormatChecker`` of every validation: jsonschema's checkers plus ``byte``."""
    global _FORMAT_CHECKER
    if _FORMAT_CHECKER is None:
        js = _jsonschema()
        with _import_lock:
            if _FORMAT_CHECKER is None:
                checker = js.jsonschema.FormatChecker()
                checker.checks("byte", raises=_BYTE_ERRORS)(_is_base64)
                _FORMAT_CHECKER = checker
    return _FORMAT_CHECKER


def __getattr__(name: str) -> Any:  # FORMAT_CHECKER, created on first use
    if name == "FORMAT_CHECKER":
        return _format_checker()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _conforms(instance: Any, fmt: str) -> bool:
    """``FormatChecker.conforms``: the formats the MCP schemas use are checked here with the
    very function jsonschema would call, without importing jsonschema (~0.1 s a process: the
    compiled pre-check asks this of every ``uri`` in a valid message); any other, by jsonschema."""
    native = _native(fmt)
    if native is None:
        return bool(_format_checker().conforms(instance, fmt))
    return native(instance)


_NATIVE_FORMATS: dict[str, Any] = {}


def _native(fmt: str) -> Any:
    native = _NATIVE_FORMATS.get(fmt, _UNSET)
    if native is _UNSET:
        native = _NATIVE_FORMATS[fmt] = _native_format(fmt)
    return native


def _accept_all(instance: Any) -> bool:
    """What jsonschema makes of a format whose package is not installed: no check at all."""
    return True


_BYTE_ERRORS = (binascii.Error, ValueError)  # what _is_base64 raises for a string that is not base64


def _is_base64(instance: object) -> bool:
    """OpenAPI's ``byte``: RFC 4648 base64, standard alphabet, padded, no line breaks."""
    if not isinstance(instance, str):
        return True
    base64.b64decode(instance.encode("ascii"), validate=True)
    return True


def _native_byte() -> Any:
    def is_byte(instance: Any) -> bool:
        try:
            return _is_base64(instance)
        except _BYTE_ERRORS:
            return False
    return is_byte


def _native_uri() -> Any:
    if importlib.util.find_spec("rfc3987") is not None:
        return None  # jsonschema prefers rfc3987.parse(rule="URI"): ask it
    try:
        from rfc3986_validator import validate_rfc3986
    except ImportError:
        return _accept_all
    return lambda instance: not isinstance(instance, str) or bool(validate_rfc3986(instance, rule="URI"))


def _native_uri_template() -> Any:
    try:
        import uri_template
    except ImportError:
        return _accept_all
    return lambda instance: not isinstance(instance, str) or bool(uri_template.validate(instance))


# The formats the MCP schemas use, and the check jsonschema's FormatChecker (as _format_checker
# builds it) makes of each (jsonschema 4's _format.py), as a plain function: None where only
# jsonschema can tell (ask it), _accept_all where the package is missing (it leaves the format
# unchecked); non-strings conform.  The one place that knows which package checks which format:
# both the check (_conforms) and the announcement of what goes unchecked (_checkable) read it.
# tests/schema compares each with jsonschema's own answer.
_NATIVE_BUILDERS = {"byte": _native_byte, "uri": _native_uri, "uri-template": _native_uri_template}


def _native_format(fmt: str) -> Any:
    builder = _NATIVE_BUILDERS.get(fmt)
    return builder() if builder is not None else None


def _checkable(fmt: str) -> bool | None:
    """Whether jsonschema would check ``fmt`` (None: not one of the formats above -- ask it)."""
    if fmt not in _NATIVE_BUILDERS:
        return None
    return _native(fmt) is not _accept_all


def _formats_used(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        fmt = node.get("format")
        if isinstance(fmt, str):
            out.add(fmt)
        for value in node.values():
            _formats_used(value, out)
    elif isinstance(node, list):
        for value in node:
            _formats_used(value, out)
    return out


def unchecked_formats(version: str) -> frozenset[str]:
    """Formats the schema of ``version`` uses that the installed checkers cannot check."""
    used = _formats_used(load_schema(version), set())
    if _FORMAT_CHECKER is None and all(_checkable(fmt) is not None for fmt in used):
        return frozenset(fmt for fmt in used if not _checkable(fmt))  # told without importing jsonschema
    return frozenset(used - set(_format_checker().checkers))


# -- compiled validators ------------------------------------------------------------------------

_lock = threading.Lock()


@dataclass(frozen=True)
class _Version:
    version: str
    schema: dict[str, Any]
    defs: dict[str, Any]
    defs_key: str
    uri: str
    draft7: bool  # the dialect: draft-07 (else 2020-12)
    request: str  # envelope definitions of this version
    notification: str
    result: str
    error: str
    batching: bool
    input_required: frozenset[str]  # result definitions that may be replaced by InputRequiredResult
    task_result: bool  # has CreateTaskResult (2025-11-25)
    result_types: bool  # has ResultType (2026-07-28): a result of another resultType is an extension's
    fast: FastChecks  # compiled "is it valid?" checks (see _fast.py)
    fast_checks: dict[str, Any]  # definition -> compiled check, or None (jsonschema only)
    methods: dict[tuple[str, str], Any]  # (name, direction) -> lookup(name, direction, version)


_VERSIONS: dict[str, _Version] = {}
_VALIDATORS: dict[tuple[str, str], Any] = {}  # (version, definition) -> jsonschema validator
_REGISTRIES: dict[str, Any] = {}  # version -> referencing.Registry of its schema


# -- where the generated JSON schema is narrower than its source of truth -----------------------
#
# "The full specification of the protocol is defined as a TypeScript schema ... This is the source
# of truth for all protocol messages and structures.  There is also a JSON Schema, which is
# automatically generated from the TypeScript source of truth" (basic/index#schema).  Where the
# generated schema.json allows less than schema.ts, the oracle follows schema.ts: a message the
# specification allows is never a finding.
#
# ElicitResult.content values: schema.ts ``string | number | boolean`` (2025-06-18; ``| string[]``
# from 2025-11-25), schema.json ``"type": ["string", "integer", "boolean"]`` -- a fractional value
# of a number field (a SEP-1034 default such as 95.5, which the official runner's
# elicitation-sep1034-client-defaults expects) would be refused.
NARROWED_INTEGERS = {"ElicitResult": ("properties", "content", "additionalProperties")}


def _widen_integers(node: Any) -> Any:
    """``node`` with every ``"integer"`` of a ``type`` widened to ``"number"``."""
    if isinstance(node, dict):
        out = {k: _widen_integers(v) for k, v in node.items()}
        kind = node.get("type")
        if kind == "integer":
            out["type"] = "number"
        elif isinstance(kind, list) and "integer" in kind:
            out["type"] = list(dict.fromkeys("number" if k == "integer" else k for k in kind))
        return out
    if isinstance(node, list):
        return [_widen_integers(v) for v in node]
    return node


def _as_in_source(schema: dict[str, Any], defs_key: str) -> dict[str, Any]:
    """``schema`` (not modified) with the definitions of :data:`NARROWED_INTEGERS` as schema.ts has them."""
    defs = schema.get(defs_key) or {}
    if not any(name in defs for name in NARROWED_INTEGERS):
        return schema
    defs = dict(defs)
    for name, path in NARROWED_INTEGERS.items():
        if name not in defs:
            continue
        body = copy.deepcopy(defs[name])
        parent = body
        for key in path[:-1]:
            parent = parent.get(key, {}) if isinstance(parent, dict) else {}
        if isinstance(parent, dict) and path[-1] in parent:
            parent[path[-1]] = _widen_integers(parent[path[-1]])
        defs[name] = body
    return {**schema, defs_key: defs}


def _version(version: str) -> _Version:
    info = _VERSIONS.get(version)
    if info is not None:
        return info
    pin = pin_for(version)  # SchemaError for an unknown version
    schema = _as_in_source(load_schema(version), pin.definitions_key)
    with _lock:
        info = _VERSIONS.get(version)
        if info is not None:
            return info
        missing = unchecked_formats(version)
        if missing:
            warnings.warn(
                f"MCP schema {version} uses format(s) {sorted(missing)} that the installed packages "
                f"cannot check; install jsonschema[format-nongpl]",
                FormatNotCheckedWarning,
                stacklevel=3,
            )
        defs = schema[pin.definitions_key]
        uri = f"urn:mcp-conformance:schema:{version}"
        input_required = frozenset(
            name[: -len("Response")]
            for name, body in defs.items()
            if name.endswith("ResultResponse")
            and "InputRequiredResult" in _refs_in(body.get("properties", {}).get("result", {}))
        )
        draft7 = pin.dialect == "draft-07"
        info = _Version(
            version=version,
            schema=schema,
            defs=defs,
            defs_key=pin.definitions_key,
            uri=uri,
            draft7=draft7,
            request="JSONRPCRequest",
            notification="JSONRPCNotification",
            result="JSONRPCResultResponse" if "JSONRPCResultResponse" in defs else "JSONRPCResponse",
            error="JSONRPCErrorResponse" if "JSONRPCErrorResponse" in defs else "JSONRPCError",
            batching=_version_spec(version).batching,
            input_required=input_required,
            task_result="CreateTaskResult" in defs,
            result_types="ResultType" in defs,
            fast=FastChecks(
                defs,
                pin.definitions_key,
                draft7=draft7,
                keywords=DRAFT7_KEYWORDS if draft7 else DRAFT202012_KEYWORDS,
                conforms=_conforms,
            ),
            fast_checks={},
            methods={},
        )
        _VERSIONS[version] = info
        return info


def _refs_in(node: Any) -> set[str]:
    """Definition names referenced directly by ``node`` or its ``anyOf``/``oneOf`` branches."""
    out: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.add(ref.rsplit("/", 1)[-1])
        for key in ("anyOf", "oneOf"):
            for branch in node.get(key, ()):
                out |= _refs_in(branch)
    return out


_DEF_MARK = "x-mcp-definition"  # on inlined copies: the definition they came from (ignored by jsonschema)
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_INLINED: dict[str, dict[str, Any]] = {}  # version -> definition -> inlined schema


def _inline_all(info: _Version) -> dict[str, Any]:
    """Every definition with its local ``$ref``s replaced by (shared) inlined copies.

    Following a ``$ref`` through ``referencing`` on every validation costs about a third of the
    time; inlining removes that.  References that close a cycle (``JSONValue`` in 2026-07-28) stay
    ``$ref``s into the registry.  Each inlined copy carries :data:`_DEF_MARK` so a finding's
    schema path can still name the definition.
    """
    done = _INLINED.get(info.version)
    if done is not None:
        return done
    defs = info.defs
    prefix = f"#/{info.defs_key}/"
    memo: dict[str, Any] = {}

    def inline(node: Any, active: frozenset[str]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                name = ref[len(prefix):]
                if name in active or name not in defs:
                    return {"$ref": info.uri + ref}
                if name not in memo:
                    body = inline(defs[name], active | {name})
                    body = dict(body) if isinstance(body, dict) else {"allOf": [body]}
                    body[_DEF_MARK] = name
                    memo[name] = body
                return memo[name]
            return {k: (v if k in _DATA_KEYWORDS else inline(v, active)) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v, active) for v in node]
        return node

    for name in defs:
        inline({"$ref": prefix + name}, frozenset())
    _INLINED[info.version] = memo
    return memo


def _validator(info: _Version, definition: str) -> Any:
    key = (info.version, definition)
    validator = _VALIDATORS.get(key)
    if validator is None:
        if definition not in info.defs:
            raise SchemaError(
                f"MCP schema {info.version} has no definition {definition!r} "
                f"(it has {len(info.defs)}; see definition_names({info.version!r}))"
            )
        with _lock:
            inlined = _inline_all(info)
        root = dict(inlined[definition])
        root["$schema"] = info.schema["$schema"]
        js = _jsonschema()
        registry = _REGISTRIES.get(info.version)
        if registry is None:
            dialect = js.DRAFT7 if info.draft7 else js.DRAFT202012
            registry = js.Registry().with_resource(info.uri, js.Resource(contents=info.schema, specification=dialect)).crawl()
            _REGISTRIES[info.version] = registry
        cls = js.jsonschema.Draft7Validator if info.draft7 else js.jsonschema.Draft202012Validator
        validator = cls(root, registry=registry, format_checker=_format_checker())
        _VALIDATORS[key] = validator
    return validator


def definition_names(version: str) -> list[str]:
    """Every definition name of the official schema of ``version``, sorted."""
    return sorted(_version(version).defs)


# -- reporting ----------------------------------------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_MESSAGE = 300


def _json_path(parts: Iterable[Any]) -> str:
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}")
        else:
            out.append("['" + part.replace("\\", "\\\\").replace("'", "\\'") + "']")
    return "".join(out)


def _pointer_token(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _resolve_pointer(document: Any, pointer: str) -> Any:
    node = document
    for token in pointer.split("/")[1:] if pointer else ():
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def _schema_path(info: _Version, root: Any, path: Iterable[Any]) -> str:
    """A JSON pointer into the official file (``#/$defs/Tool/properties/name/type``).

    Inlined definitions carry :data:`_DEF_MARK`; a ``$ref`` left in place (a cycle) is followed
    when the next key is not one of the node's own members (jsonschema's schema paths do not
    record ``$ref`` hops).
    """
    node = root
    pointer = f"/{info.defs_key}/{root[_DEF_MARK]}" if isinstance(root, dict) and _DEF_MARK in root else ""
    parts = list(path)
    for i, key in enumerate(parts):
        try:
            hops = 0
            while isinstance(node, dict) and key not in node and isinstance(node.get("$ref"), str) and hops < 32:
                pointer = node["$ref"].partition("#")[2]
                node = _resolve_pointer(info.schema, pointer)
                hops += 1
            node = node[key]
            pointer += "/" + _pointer_token(key)
            if isinstance(node, dict) and _DEF_MARK in node:
                pointer = f"/{info.defs_key}/{node[_DEF_MARK]}"
        except (KeyError, IndexError, TypeError, ValueError):
            pointer += "".join("/" + _pointer_token(k) for k in parts[i:])
            break
    return "#" + pointer


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + " ...}" if isinstance(value, dict) else text[: limit - 4] + " ..."


def _clip(message: str) -> str:
    if len(message) <= _MAX_MESSAGE:
        return message
    return message[: _MAX_MESSAGE - 60] + " ... " + message[-55:]


@dataclass
class _Leaf:
    path: tuple[Any, ...]  # absolute path inside the validated value
    schema_path: tuple[Any, ...]  # absolute schema path from the validator's root
    message: str


_UNIONS = ("anyOf", "oneOf")


def _leaves(error: ValidationError) -> list[_Leaf]:
    """The errors worth reporting for ``error``: a failed union is replaced by the errors of the
    branch the value was evidently meant to be (the one whose discriminators and type match)."""
    if error.validator in _UNIONS and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        ranked = sorted(branches.items(), key=lambda item: _branch_rank(error, item[0], item[1]))
        best_index, best_errors = ranked[0]
        if _branch_rank(error, best_index, best_errors)[0] == 0:
            out: list[_Leaf] = []
            for sub in best_errors:
                out.extend(_leaves(sub))
            return out
        return [_union_leaf(error, branches, best_index, best_errors)]
    return [_Leaf(tuple(error.absolute_path), tuple(error.absolute_schema_path), _clip(error.message))]


def _branch_rank(union: ValidationError, index: Any, errors: list[ValidationError]) -> tuple[int, int, int]:
    """Lower is likelier the intended branch: (2 wrong type / 1 a discriminator const or enum
    differs / 0 plausible; minus the number of the value's members the branch declares; errors)."""
    mismatch = 0
    for e in errors:
        depth = len(e.relative_path)
        if depth == 0 and e.validator == "type":
            mismatch = 2
        elif depth <= 1 and e.validator in ("const", "enum"):
            mismatch = max(mismatch, 1)
    known = 0
    if isinstance(union.instance, dict):
        try:
            declared = union.validator_value[index].get("properties", {})
        except (AttributeError, IndexError, KeyError, TypeError):
            declared = {}
        known = sum(1 for key in union.instance if key in declared)
    return mismatch, -known, len(errors)


def _branch_name(union_schema: Any, index: Any) -> str:
    try:
        branch = union_schema[index]
    except (KeyError, IndexError, TypeError):
        return f"branch {index}"
    if isinstance(branch, dict) and isinstance(branch.get(_DEF_MARK), str):
        return branch[_DEF_MARK]
    if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
        return branch["$ref"].rsplit("/", 1)[-1]
    if isinstance(branch, dict) and "type" in branch:
        return f"{branch['type']}"
    return f"branch {index}"


def _union_leaf(
    error: ValidationError,
    branches: dict[Any, list[ValidationError]],
    best_index: Any,
    best_errors: list[ValidationError],
) -> _Leaf:
    names = [_branch_name(error.validator_value, i) for i in branches]
    # every branch rejects the same discriminator member: say which values it may take
    discriminators: list[tuple[Any, ...]] = []
    for errs in branches.values():
        found = {tuple(e.relative_path) for e in errs if len(e.relative_path) == 1 and e.validator in ("const", "enum")}
        discriminators.append(tuple(sorted(found, key=repr)))
    common = set(discriminators[0]).intersection(*map(set, discriminators[1:])) if discriminators else set()
    if common:
        member = sorted(common, key=repr)[0]
        allowed: list[Any] = []
        for errs in branches.values():
            for e in errs:
                if tuple(e.relative_path) == member:
                    values = [e.validator_value] if e.validator == "const" else list(e.validator_value)
                    allowed.extend(v for v in values if v not in allowed)
        actual = error.instance.get(member[0]) if isinstance(error.instance, dict) else None
        return _Leaf(
            tuple(error.absolute_path) + member,
            tuple(error.absolute_schema_path),
            _clip(f"{actual!r} is not one of {allowed!r} (expected one of: {', '.join(names)})"),
        )
    closest = best_errors[0].message if best_errors else ""
    return _Leaf(
        tuple(error.absolute_path),
        tuple(error.absolute_schema_path),
        _clip(
            f"{_short(error.instance)} matches none of: {', '.join(names)}"
            + (f" (closest: {_branch_name(error.validator_value, best_index)}: {closest})" if closest else "")
        ),
    )


_FAST_PATH = True  # ask the compiled checks first (tests turn it off to compare)
_UNSET: Any = object()


def _fast_check(info: _Version, definition: str) -> Any:
    """The compiled check of ``definition`` (``None``: not compilable, jsonschema only)."""
    check = info.fast_checks.get(definition, _UNSET)
    if check is _UNSET:
        with _lock:
            check = info.fast.get(definition)
            info.fast_checks[definition] = check
    return check


def _check(
    out: list[Finding],
    info: _Version,
    value: Any,
    definition: str,
    prefix: tuple[Any, ...],
    *,
    skip_id: bool = False,
) -> None:
    """Validate ``value`` (found at ``prefix`` in the message) against ``definition``.

    A compiled check that says "valid" settles it (it is never more lenient than jsonschema);
    otherwise jsonschema finds out why."""
    if _FAST_PATH:
        check = info.fast_checks.get(definition, _UNSET)
        if check is _UNSET:
            check = _fast_check(info, definition)
        if check is not None and check(value):
            return
    validator = _validator(info, definition)
    for error in validator.iter_errors(value):
        for leaf in _leaves(error):
            if skip_id and leaf.path[:1] == ("id",):
                continue
            out.append(
                Finding(
                    json_path=_json_path(prefix + leaf.path),
                    schema_path=_schema_path(info, validator.schema, leaf.schema_path),
                    message=leaf.message,
                    definition=definition,
                )
            )


def _rule(out: list[Finding], prefix: tuple[Any, ...], rule: str, message: str, definition: str | None = None) -> None:
    out.append(Finding(json_path=_json_path(prefix), schema_path=f"rule:{rule}", message=message, definition=definition))


# -- classification -----------------------------------------------------------------------------

_TASK_AUGMENTABLE = frozenset({"tools/call", "sampling/createMessage", "elicitation/create"})  # tasks.mdx


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _lookup(info: _Version, name: str, direction: str) -> Any:
    """``lookup(name, direction, info.version)``, remembered per version (it sits on the hot path)."""
    key = (name, direction)
    method = info.methods.get(key)
    if method is None:
        method = lookup(name, direction, info.version)
        if method is not None:  # unknown names (any string a peer sends) are not remembered
            info.methods[key] = method
    return method


_CORE_RESULT_TYPES = frozenset({"complete", "input_required"})  # 2026-07-28 ResultType


def _result_definition(info: _Version, direction: str, answering: str, result: Any) -> str | None:
    method = _lookup(info, answering, C2S if direction == S2C else S2C)
    if method is None or method.kind != REQUEST or not method.result_def:
        return None
    definition = method.result_def
    if isinstance(result, dict):
        if info.task_result and "task" in result and method.name in _TASK_AUGMENTABLE:
            return "CreateTaskResult"
        if result.get("resultType") == "input_required" and definition in info.input_required:
            return "InputRequiredResult"
        rt = result.get("resultType")
        if info.result_types and isinstance(rt, str) and rt not in _CORE_RESULT_TYPES:
            # a result type an extension defines ("task": the tasks extension's CreateTaskResult);
            # the core schema has no definition for it: the envelope is checked, the rest is the
            # extension's (and stateless.result-type judges whether the value may be used)
            return None
    return definition


def _validate_one(
    out: list[Finding],
    info: _Version,
    message: Any,
    direction: str,
    answering: str | None,
    prefix: tuple[Any, ...],
) -> None:
    if not isinstance(message, dict):
        where = "a batch item" if prefix else "a JSON-RPC message"
        _rule(out, prefix, "not-a-message", f"{where} must be a JSON object, got {_json_type(message)}", "JSONRPCMessage")
        return

    if "method" in message:
        is_request = "id" in message
        null_id = is_request and message["id"] is None
        name = message["method"]
        method = _lookup(info, name, direction) if isinstance(name, str) else None
        if method is not None:
            if method.kind == REQUEST and not is_request:
                _rule(out, prefix, "request-without-id", f"{name!r} is a request but the message has no 'id' (a notification cannot be answered)", method.request_def)
            elif method.kind == NOTIFICATION and is_request:
                _rule(out, prefix, "notification-with-id", f"{name!r} is a notification but the message has an 'id' (notifications MUST NOT include one)", method.request_def)
            _check(out, info, message, method.request_def, prefix, skip_id=null_id)
        if null_id:
            out.append(Finding(_json_path(prefix + ("id",)), "rule:id-not-null", "request id must be a string or an integer, not null", info.request))
        _check(out, info, message, info.request if is_request else info.notification, prefix, skip_id=null_id)
        return

    has_result, has_error = "result" in message, "error" in message
    if has_result and has_error:
        _rule(out, prefix, "result-and-error", "a response must contain either 'result' or 'error', not both")
    if has_error:
        # JSON-RPC 2.0: the id is null when the request's id could not be read -- accepted
        _check(out, info, message, info.error, prefix, skip_id=message.get("id", 0) is None)
        return
    if has_result:
        null_id = "id" in message and message["id"] is None
        if null_id:
            out.append(Finding(_json_path(prefix + ("id",)), "rule:id-not-null", "a result response's id must echo the request id (a string or an integer), not null", info.result))
        if answering is not None:
            definition = _result_definition(info, direction, answering, message["result"])
            if definition is not None:
                _check(out, info, message["result"], definition, prefix + ("result",))
            result = message["result"]
            if definition == "InputRequiredResult" and isinstance(result, dict) and not ({"inputRequests", "requestState"} & result.keys()):
                _rule(out, prefix + ("result",), "input-required-empty", "an InputRequiredResult MUST carry at least one of 'inputRequests' or 'requestState'", definition)
        _check(out, info, message, info.result, prefix, skip_id=null_id)
        return

    _rule(out, prefix, "not-a-message", "a JSON-RPC message needs 'method' (request/notification) or 'result'/'error' (response)", "JSONRPCMessage")


def _answer_for(answering: str | Mapping[Any, str] | None, item: Any) -> str | None:
    if answering is None or isinstance(answering, str):
        return answering
    if not isinstance(item, dict):
        return None
    rid = item.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return None
    for key, method in answering.items():
        if type(key) is type(rid) and key == rid:
            return method
    return None


def _validate_batch(
    out: list[Finding],
    info: _Version,
    batch: list[Any],
    direction: str,
    answering: str | Mapping[Any, str] | None,
) -> None:
    if not info.batching:
        _rule(out, (), "batch-not-allowed", f"JSON-RPC batches are not part of MCP {info.version} (only 2025-03-26 has them)", "JSONRPCMessage")
    if not batch:
        _rule(out, (), "empty-batch", "an empty batch is an Invalid Request (JSON-RPC 2.0 section 6)", "JSONRPCMessage")
    calls = responses = 0
    for index, item in enumerate(batch):
        _validate_one(out, info, item, direction, _answer_for(answering, item), (index,))
        if isinstance(item, dict):
            if "method" in item:
                calls += 1
                if info.batching and item["method"] == "initialize" and "id" in item:
                    _rule(out, (index,), "initialize-in-batch", "the initialize request MUST NOT be part of a JSON-RPC batch", "InitializeRequest")
            elif "result" in item or "error" in item:
                responses += 1
    if info.batching and calls and responses:
        _rule(out, (), "batch-mixed", "a batch holds either requests/notifications (JSONRPCBatchRequest) or responses (JSONRPCBatchResponse), not both", "JSONRPCMessage")


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, str]] = set()
    out = []
    for f in findings:
        key = (f.json_path, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# -- public API ---------------------------------------------------------------------------------


def validate(
    message: Any,
    version: str,
    direction: str,
    *,
    answering: str | Mapping[Any, str] | None = None,
) -> list[Finding]:
    """Everything about ``message`` (a parsed JSON value) that the schema of ``version`` forbids.

    ``direction`` is the direction the message travels (``methods.C2S`` / ``methods.S2C``).
    ``answering`` names the method of the request a response answers (its result is then checked
    against that method's result definition); for a batch of responses it may be a mapping from
    request id (exact type) to method.  An empty list means the message conforms.
    Raises :class:`SchemaError` for an unknown version or an unavailable schema.
    """
    if direction not in (C2S, S2C):
        raise ValueError(f"direction must be {C2S!r} or {S2C!r}, not {direction!r}")
    info = _version(version)
    out: list[Finding] = []
    if isinstance(message, list):
        _validate_batch(out, info, message, direction, answering)
    else:
        _validate_one(out, info, message, direction, _answer_for(answering, message), ())
    return _dedupe(out) if len(out) > 1 else out


def validate_definition(value: Any, version: str, definition: str) -> list[Finding]:
    """Everything about ``value`` that ``definition`` (e.g. ``"Tool"``) of ``version`` forbids."""
    info = _version(version)
    out: list[Finding] = []
    _check(out, info, value, definition, ())
    return _dedupe(out) if len(out) > 1 else out
