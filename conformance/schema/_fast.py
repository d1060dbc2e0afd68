"""A fast "is it valid?" pre-check: schema definitions compiled to plain Python functions.  No I/O.

:func:`conformance.schema.validate.validate` asks this first; only when it answers "invalid" does
jsonschema run, to produce the findings.  The answer must therefore never be more lenient than
jsonschema's.  It is built to be *identical*:

* it implements exactly the keywords the official MCP schemas use (:data:`SUPPORTED`), each with
  jsonschema's semantics for draft-07 and 2020-12 (``integer`` accepts ``1.0`` but not ``true``;
  ``const``/``enum`` never equate ``true`` with ``1``; object, array and number keywords ignore
  other types; a draft-07 ``$ref`` ignores its siblings; ``format`` asks the same
  :class:`~jsonschema.FormatChecker`, at call time);
* a definition that uses any other keyword jsonschema knows (``pattern``, ``oneOf``, a ``const``
  that is an object, a non-local ``$ref``...), directly or through a reference, is not compiled
  (:func:`FastChecks.get` returns ``None``) and is validated by jsonschema alone;
* words jsonschema ignores (``description``, ``title``, ``x-...``) are ignored here too.

``tests/schema/test_fast_path.py`` checks the agreement differentially (generated, mutated and
official example values, every version and definition).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Collection
from typing import Any

__all__ = ["SUPPORTED", "FastChecks", "Unsupported"]

SUPPORTED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "maxItems",
        "minimum",
        "maximum",
        "const",
        "enum",
        "anyOf",
        "allOf",
        "$ref",
        "format",
    }
)

_TYPE_TESTS = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    # draft-06 and later: an integral float is an integer; a bool never is
    "integer": "((isinstance({v}, int) and not isinstance({v}, bool)) or (isinstance({v}, float) and {v}.is_integer()))",
    "number": "(not isinstance({v}, bool) and isinstance({v}, _Number))",
}


_INLINE_LINES = 12  # definitions whose checks take at most this many lines are inlined


class Unsupported(Exception):
    """A schema construct this compiler does not implement (the definition goes to jsonschema)."""


class FastChecks:
    """Compiled checks for the definitions of one schema version, built on demand.

    ``defs``: the version's definitions; ``defs_key``: ``"definitions"`` or ``"$defs"``;
    ``draft7``: draft-07 semantics (a ``$ref`` ignores its siblings) instead of 2020-12;
    ``keywords``: every keyword the jsonschema validator class knows (anything else in a schema
    is an annotation to it, and to us); ``conforms``: ``FormatChecker.conforms``.
    """

    def __init__(
        self,
        defs: dict[str, Any],
        defs_key: str,
        *,
        draft7: bool,
        keywords: Collection[str],
        conforms: Callable[[Any, str], bool],
    ) -> None:
        self._defs = defs
        self._prefix = f"#/{defs_key}/"
        self._draft7 = draft7
        self._keywords = frozenset(keywords)
        self._ns: dict[str, Any] = {"_Number": numbers.Number, "_conforms": conforms, "__builtins__": __builtins__}
        self._names: dict[str, str] = {}  # definition -> function name (compiled, or being compiled)
        self._unsupported: dict[str, str] = {}  # definition -> why it (or something it references) is not compiled
        self._n = 0
        self._inlining: list[str] = []  # definitions whose bodies are being inlined (no cycles)

    # -- public -------------------------------------------------------------------------------

    def get(self, definition: str) -> Callable[[Any], bool] | None:
        """``check(value) -> bool`` for ``definition``; ``None`` if it cannot be compiled.  Not
        thread-safe: callers serialise the first request of each definition."""
        name = self._names.get(definition)
        if name is not None:
            return self._ns[name]
        if definition in self._unsupported:
            return None
        try:
            self._compile(self._closure(definition))
        except Unsupported as exc:
            self._unsupported[definition] = str(exc)
            return None
        return self._ns[self._names[definition]]

    def why_not(self, definition: str) -> str | None:
        """Why ``definition`` is not compiled (after :meth:`get` returned ``None``)."""
        return self._unsupported.get(definition)

    # -- compilation --------------------------------------------------------------------------

    def _ref_name(self, ref: Any) -> str:
        if not isinstance(ref, str) or not ref.startswith(self._prefix):
            raise Unsupported(f"$ref {ref!r} is not a local definition")
        name = ref[len(self._prefix) :]
        if "/" in name or "~" in name or name not in self._defs:
            raise Unsupported(f"$ref {ref!r} does not name a definition")
        return name

    def _closure(self, definition: str) -> list[str]:
        """``definition`` and every definition it references, transitively."""
        if definition not in self._defs:
            raise Unsupported(f"no definition {definition!r}")
        seen = [definition]
        todo = [definition]
        while todo:
            refs: list[str] = []
            self._collect_refs(self._defs[todo.pop()], refs)
            for name in refs:
                if name not in seen:
                    seen.append(name)
                    todo.append(name)
        return seen

    def _collect_refs(self, node: Any, out: list[str]) -> None:
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            out.append(self._ref_name(node["$ref"]))
            if self._draft7:
                return  # siblings of a draft-07 $ref are ignored
        for key, value in node.items():
            if key in ("properties",) and isinstance(value, dict):
                for sub in value.values():
                    self._collect_refs(sub, out)
            elif key in ("additionalProperties", "items"):
                self._collect_refs(value, out)
            elif key in ("anyOf", "allOf") and isinstance(value, list):
                for sub in value:
                    self._collect_refs(sub, out)

    def _fresh(self, stem: str) -> str:
        self._n += 1
        return f"{stem}{self._n}"

    def _const(self, value: Any) -> str:
        name = self._fresh("C")
        self._ns[name] = value
        return name

    def _compile(self, closure: list[str]) -> None:
        """Compile every definition of ``closure`` not compiled yet, or none of them."""
        for d in closure:
            if d in self._unsupported:
                raise Unsupported(f"{d}: {self._unsupported[d]}")
        todo = [d for d in closure if d not in self._names]
        names = dict(self._names)
        names.update((d, f"d_{d.replace('-', '_')}_{self._fresh('')}") for d in todo)
        helpers: list[str] = []
        lines: list[str] = []
        for d in todo:
            try:
                body = self._node(self._defs[d], "x", 1, helpers, names)
            except Unsupported as exc:
                self._unsupported[d] = str(exc)
                raise Unsupported(f"{d}: {exc}") from None
            lines.append(f"def {names[d]}(x):")
            lines.extend(body)
            lines.append("    return True")
        source = "\n".join(helpers + lines) + "\n"
        exec(compile(source, "<mcp-conformance fast schema checks>", "exec"), self._ns)
        self._names.update((d, names[d]) for d in todo)

    def _node(self, schema: Any, v: str, ind: int, helpers: list[str], names: dict[str, str]) -> list[str]:
        """Statements that ``return False`` unless the value in variable ``v`` is valid."""
        pad = "    " * ind
        if schema is True:
            return []
        if schema is False:
            return [f"{pad}return False"]
        if not isinstance(schema, dict):
            raise Unsupported(f"a schema must be an object or a boolean, not {type(schema).__name__}")
        for k in ("$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"):
            if isinstance(schema.get(k), str):
                raise Unsupported(f"{k} (changes how references resolve)")
        keys = [k for k in schema if k in self._keywords]
        if "$ref" in schema and self._draft7:
            keys = ["$ref"]
        for k in keys:
            if k not in SUPPORTED:
                raise Unsupported(f"keyword {k!r}")
        out: list[str] = []
        if "$ref" in keys:
            target = self._ref_name(schema["$ref"])
            inline = self._inline(target, v, ind, helpers, names)
            out.extend(inline if inline is not None else [f"{pad}if not {names[target]}({v}): return False"])

        # type (checked first: the keywords below rely on it, as their guards would)
        known = None  # the one type the value is known to have from here on
        if "type" in keys:
            types = schema["type"]
            types = [types] if isinstance(types, str) else types
            if not isinstance(types, list) or not types or any(t not in _TYPE_TESTS for t in types):
                raise Unsupported(f"type {schema['type']!r}")
            test = " or ".join(_TYPE_TESTS[t].format(v=v) for t in types)
            out.append(f"{pad}if not ({test}): return False")
            known = types[0] if len(types) == 1 else None
        object_known = known == "object"

        # object keywords
        obj: list[str] = []
        opad = pad if object_known else pad + "    "
        oind = ind if object_known else ind + 1
        if "required" in keys:
            required = schema["required"]
            if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
                raise Unsupported("required must be a list of strings")
            if required:
                obj.append(f"{opad}if " + " or ".join(f"{r!r} not in {v}" for r in required) + ": return False")
        else:
            required = []
        props = schema.get("properties", {}) if "properties" in keys else {}
        if not isinstance(props, dict):
            raise Unsupported("properties must be an object")
        for prop, sub in props.items():
            pv = self._fresh("v")
            if prop in required:  # known to be there
                body = self._node(sub, pv, oind, helpers, names)
                if body:
                    obj.append(f"{opad}{pv} = {v}[{prop!r}]")
                    obj.extend(body)
                continue
            body = self._node(sub, pv, oind + 1, helpers, names)
            if body:
                obj.append(f"{opad}if {prop!r} in {v}:")
                obj.append(f"{opad}    {pv} = {v}[{prop!r}]")
                obj.extend(body)
        if "additionalProperties" in keys:
            extra = schema["additionalProperties"]
            declared = self._const(frozenset(props))
            if extra is False:
                obj.append(f"{opad}if not {v}.keys() <= {declared}: return False")
            elif extra is not True:
                kv, ev = self._fresh("k"), self._fresh("v")
                body = self._node(extra, ev, oind + 2, helpers, names)
                if body:
                    obj.append(f"{opad}for {kv}, {ev} in {v}.items():")
                    obj.append(f"{opad}    if {kv} not in {declared}:")
                    obj.extend(body)
        if obj:
            if not object_known:
                out.append(f"{pad}if isinstance({v}, dict):")
            out.extend(obj)

        # array keywords
        if "items" in keys:
            items = schema["items"]
            if not isinstance(items, (dict, bool)):
                raise Unsupported("items must be a schema (not an array of schemas)")
            is_list = "" if known == "array" else f"isinstance({v}, list) and "
            if items is False:
                out.append(f"{pad}if {is_list}{v}: return False")
            else:
                iv = self._fresh("v")
                if known == "array":
                    body = self._node(items, iv, ind + 1, helpers, names)
                    if body:
                        out.append(f"{pad}for {iv} in {v}:")
                        out.extend(body)
                else:
                    body = self._node(items, iv, ind + 2, helpers, names)
                    if body:
                        out.append(f"{pad}if isinstance({v}, list):")
                        out.append(f"{pad}    for {iv} in {v}:")
                        out.extend(body)
        if "maxItems" in keys:
            limit = schema["maxItems"]
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise Unsupported("maxItems must be an integer")
            is_list = "" if known == "array" else f"isinstance({v}, list) and "
            out.append(f"{pad}if {is_list}len({v}) > {limit!r}: return False")

        # numbers
        for k, op in (("minimum", "<"), ("maximum", ">")):
            if k in keys:
                limit = schema[k]
                if isinstance(limit, bool) or not isinstance(limit, (int, float)):
                    raise Unsupported(f"{k} must be a number")
                is_number = "" if known in ("number", "integer") else _TYPE_TESTS["number"].format(v=v) + " and "
                out.append(f"{pad}if {is_number}{v} {op} {limit!r}: return False")

        # values
        if "const" in keys:
            out.append(f"{pad}if not ({self._equals(schema['const'], v)}): return False")
        if "enum" in keys:
            values = schema["enum"]
            if not isinstance(values, list) or not values or not all(type(e) is str for e in values):
                raise Unsupported("only enums of strings are compiled")
            is_str = "" if known == "string" else f"isinstance({v}, str) and "
            out.append(f"{pad}if not ({is_str}{v} in {self._const(frozenset(values))}): return False")
        if "format" in keys:
            fmt = schema["format"]
            if not isinstance(fmt, str):
                raise Unsupported("format must be a string")
            out.append(f"{pad}if not _conforms({v}, {fmt!r}): return False")

        # combinators
        if "allOf" in keys:
            branches = schema["allOf"]
            if not isinstance(branches, list) or not branches:
                raise Unsupported("allOf must be a non-empty list")
            for branch in branches:
                out.extend(self._node(branch, v, ind, helpers, names))
        if "anyOf" in keys:
            branches = schema["anyOf"]
            if not isinstance(branches, list) or not branches:
                raise Unsupported("anyOf must be a non-empty list")
            calls = [self._branch(b, helpers, names) for b in branches]
            if "True" not in calls:
                out.append(f"{pad}if not (" + " or ".join(f"{c}({v})" for c in calls) + "): return False")
        return out

    def _inline(self, name: str, v: str, ind: int, helpers: list[str], names: dict[str, str]) -> list[str] | None:
        """The body of a small definition in place of a call to it (a call costs more than the
        few checks of RequestId or Result); None for a large or recursive one."""
        if name in self._inlining:
            return None
        mark = len(helpers)
        self._inlining.append(name)
        try:
            body = self._node(self._defs[name], v, ind, helpers, names)
        finally:
            self._inlining.pop()
        if len(body) > _INLINE_LINES:
            del helpers[mark:]
            return None
        return body

    def _branch(self, schema: Any, helpers: list[str], names: dict[str, str]) -> str:
        """A function name that checks ``schema`` (``"True"`` for a schema that accepts anything)."""
        if isinstance(schema, dict) and set(schema) & self._keywords == {"$ref"}:
            return names[self._ref_name(schema["$ref"])]
        body = self._node(schema, "x", 1, helpers, names)
        if not body:
            return "True"
        fn = self._fresh("h_")
        helpers.append(f"def {fn}(x):")
        helpers.extend(body)
        helpers.append("    return True")
        return fn

    def _equals(self, const: Any, v: str) -> str:
        """A test for ``v`` equal to ``const`` as jsonschema's ``equal`` decides it."""
        if type(const) is str:
            return f"{v} == {const!r}"  # equal(): a string compares with ==, and only to a string
        if const is None or type(const) is bool:
            return f"{v} is {const!r}"  # equal() keeps true/false apart from 1/0
        if type(const) in (int, float):
            return f"(not isinstance({v}, bool) and isinstance({v}, (int, float)) and {v} == {const!r})"
        raise Unsupported(f"const {const!r}")
