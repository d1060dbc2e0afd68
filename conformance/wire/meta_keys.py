"""The `_meta` rules of basic/index (2025-06-18 and later), read off a JSON value: key names (an
optional prefix of dot-separated labels and a slash, then a name), reverse DNS prefixes, the W3C
trace context keys (2026-07-28) and extension identifiers (2026-07-28, basic/versioning).

Pure functions: the scenarios of both roles walk what the peer sent with :func:`meta_objects`
and judge each key with :func:`key_problems`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from conformance.spec.meta import CLIENT_CAPABILITIES_KEY

__all__ = [
    "PREFIX",
    "NAME",
    "TRACE_KEYS",
    "key_problems",
    "not_reverse_dns",
    "trace_problem",
    "meta_objects",
    "extension_maps",
]

PREFIX = "prefix"  # "If specified, MUST be a series of labels separated by dots (.), followed by a slash (/)." + labels
NAME = "name"  # "Unless empty, MUST begin and end with an alphanumeric character"
TRACE_KEYS = ("traceparent", "tracestate", "baggage")

_LABEL = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\Z")
_ALNUM = re.compile(r"[A-Za-z0-9]")

# Members whose value is the peer's own data, not protocol structure: a `_meta` found inside one
# of them is a tool's output, an argument, a schema keyword or an extension's settings.
_OPAQUE = frozenset({
    "structuredContent", "arguments", "inputSchema", "outputSchema", "requestedSchema", "data",
    "experimental", "extensions", "_meta", "requestState",
})


def key_problems(key: str) -> list[tuple[str, str]]:
    """``(rule, why)`` for a `_meta` key that breaks the key name format: rule PREFIX (the part up
    to the last slash is not dot-separated labels, or a label breaks the label rule) or NAME (a
    non-empty name that does not begin and end with an ASCII letter or digit).  Interior
    characters of a name are not judged: the page only says what a name MAY contain."""
    out: list[tuple[str, str]] = []
    prefix, slash, name = key.rpartition("/")
    if slash:
        labels = prefix.split(".")
        if prefix == "" or "/" in prefix or any(label == "" for label in labels):
            out.append((PREFIX, f"the prefix {prefix + '/'!r} is not a series of labels separated by dots"))
        else:
            bad = [label for label in labels if not _LABEL.match(label)]
            if bad:
                out.append((PREFIX, f"the label {bad[0]!r} of the prefix {prefix + '/'!r} does not start with a letter, end "
                                    "with a letter or digit, and hold only letters, digits and hyphens"))
    if name and not (_ALNUM.match(name[0]) and _ALNUM.match(name[-1])):
        out.append((NAME, f"the name {name!r} does not begin and end with an alphanumeric character"))
    return out


# Top-level domains a prefix's first label may be, in reverse DNS notation.  Two-letter labels are
# country codes; the rest are the generic domains met in practice.
_TLDS = frozenset({
    "com", "org", "net", "edu", "gov", "mil", "int", "io", "dev", "app", "ai", "co", "me", "info", "biz", "xyz",
    "cloud", "tech", "sh", "so", "tv", "page", "site", "online", "run", "tools", "software", "systems", "global",
    "inc", "ltd", "llc", "company", "network", "digital", "studio", "codes", "build", "services", "solutions",
})


def _tld(label: str) -> bool:
    low = label.lower()
    return low in _TLDS or (len(low) == 2 and low.isalpha())


def not_reverse_dns(key: str) -> str | None:
    """Why a key's prefix reads as a domain name in forward order (``example.com/``: its last label
    is a top-level domain and its first is not), or None.  A single-label prefix, or one whose
    order cannot be told, is not judged."""
    prefix, slash, _ = key.rpartition("/")
    if not slash or any(rule == PREFIX for rule, _ in key_problems(key)):
        return None  # a malformed prefix is the prefix rule's
    labels = prefix.split(".")
    if len(labels) < 2:
        return None
    if _tld(labels[-1]) and not _tld(labels[0]):
        return (f"the prefix {prefix + '/'!r} is in forward DNS order (it ends with the top-level domain "
                f"{labels[-1]!r}); reverse DNS notation is {'.'.join(reversed(labels)) + '/'!r}")
    return None


# -- W3C Trace Context (https://www.w3.org/TR/trace-context/) and Baggage (https://www.w3.org/TR/baggage/)

_HEX2 = re.compile(r"[0-9a-f]{2}\Z")
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_TS_KEY = re.compile(
    r"(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})\Z")
_TS_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]\Z")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_BAGGAGE_VALUE = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*\Z")
_OWS = " \t"


def _traceparent(value: str) -> str | None:
    m = _TRACEPARENT.match(value)
    if m is None:
        return "not version-traceid-parentid-flags in lower-case hex (2-32-16-2 digits)"
    version, trace_id, parent_id, _ = m.groups()
    if version == "ff":
        return "version ff is forbidden"
    if version == "00" and len(value) != 55:
        return "version 00 has exactly four fields (55 characters)"
    if version != "00" and len(value) > 55 and value[55] != "-":
        return "fields of a later version must follow after a dash"
    if trace_id == "0" * 32:
        return "the trace-id is all zeros"
    if parent_id == "0" * 16:
        return "the parent-id is all zeros"
    return None


def _tracestate(value: str) -> str | None:
    members = [m.strip(_OWS) for m in value.split(",")]
    members = [m for m in members if m]  # empty and whitespace-only list members are allowed
    if len(members) > 32:
        return f"{len(members)} list members (at most 32)"
    for member in members:
        key, eq, val = member.partition("=")
        if not eq or not _TS_KEY.match(key) or not _TS_VALUE.match(val):
            return f"the list member {member!r} is not key=value in the tracestate grammar"
    return None


def _baggage(value: str) -> str | None:
    members = [m.strip(_OWS) for m in value.split(",")]
    if len(members) > 180:
        return f"{len(members)} list members (at most 180)"
    for member in members:
        parts = [p.strip(_OWS) for p in member.split(";")]
        key, eq, val = parts[0].partition("=")
        if not eq or not _TOKEN.match(key.strip(_OWS)) or not _BAGGAGE_VALUE.match(val.strip(_OWS)):
            return f"the list member {member!r} is not key=value in the baggage grammar"
        for prop in parts[1:]:
            pkey, peq, pval = prop.partition("=")
            if not _TOKEN.match(pkey.strip(_OWS)) or (peq and not _BAGGAGE_VALUE.match(pval.strip(_OWS))):
                return f"the property {prop!r} of {member!r} is not key or key=value in the baggage grammar"
    return None


_TRACE_CHECKS = {"traceparent": _traceparent, "tracestate": _tracestate, "baggage": _baggage}


def trace_problem(key: str, value: Any) -> str | None:
    """Why the value at a trace context key (traceparent, tracestate: W3C Trace Context; baggage:
    W3C Baggage) breaks its format, or None (also for any other key)."""
    check = _TRACE_CHECKS.get(key)
    if check is None:
        return None
    if not isinstance(value, str):
        return f"a {type(value).__name__}, not a string"
    return check(value)


# -- where `_meta` objects and extension maps are ------------------------------------------------


def meta_objects(value: Any, path: str = "$") -> Iterator[tuple[str, dict]]:
    """``(json_path, object)`` for every `_meta` object of a JSON-RPC message: params._meta,
    result._meta and those of the protocol objects inside (tools, resources, content blocks, ...),
    not those inside a member that holds the peer's own data (arguments, structured content,
    schemas, error data, experimental and extension settings)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                continue
            if k == "_meta":
                if isinstance(v, dict):
                    yield f"{path}._meta", v
                continue
            if k in _OPAQUE:
                continue
            yield from meta_objects(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from meta_objects(v, f"{path}[{i}]")


CLIENT_CAPABILITIES = CLIENT_CAPABILITIES_KEY


def extension_maps(value: Any, path: str = "$") -> Iterator[tuple[str, dict]]:
    """``(json_path, extensions)`` for every capabilities object of a message that advertises
    extensions: ``capabilities.extensions`` (a server's DiscoverResult, an initialize) and
    ``_meta["io.modelcontextprotocol/clientCapabilities"].extensions`` (a client's request)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str) or k in ("structuredContent", "arguments", "inputSchema", "outputSchema",
                                               "requestedSchema", "data", "experimental", "extensions", "requestState"):
                continue
            if k in ("capabilities", CLIENT_CAPABILITIES) and isinstance(v, dict) and isinstance(v.get("extensions"), dict):
                where = f"{path}.{k}" if k == "capabilities" else f"{path}['{k}']"
                yield f"{where}.extensions", v["extensions"]
            if k == "_meta" and isinstance(v, dict):
                caps = v.get(CLIENT_CAPABILITIES)
                if isinstance(caps, dict) and isinstance(caps.get("extensions"), dict):
                    yield f"{path}._meta['{CLIENT_CAPABILITIES}'].extensions", caps["extensions"]
                continue
            yield from extension_maps(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from extension_maps(v, f"{path}[{i}]")


# -- one message, every rule ------------------------------------------------------------------------

REVERSE_DNS = "reverse-dns"
TRACE = "trace"
EXTENSION = "extension"


def findings(value: Any) -> tuple[list[tuple[str, str, str]], dict[str, int]]:
    """What one JSON-RPC message (a dict; a batch's members one by one) breaks of the `_meta`
    rules: ``[(rule, json_path, why), ...]`` with rule PREFIX, NAME, REVERSE_DNS, TRACE or
    EXTENSION, and how much each rule had to judge (``{rule: count}``: keys for PREFIX and NAME,
    keys with a prefix of two labels or more for REVERSE_DNS, trace keys, extension ids)."""
    out: list[tuple[str, str, str]] = []
    seen = {PREFIX: 0, NAME: 0, REVERSE_DNS: 0, TRACE: 0, EXTENSION: 0}
    for path, meta in meta_objects(value):
        for key, val in meta.items():
            if not isinstance(key, str):
                continue
            seen[PREFIX] += 1
            seen[NAME] += 1
            where = f"{path}['{key}']"
            for rule, why in key_problems(key):
                out.append((rule, where, f"the _meta key {key!r}: {why}"))
            prefix, slash, _ = key.rpartition("/")
            if slash and "." in prefix:
                seen[REVERSE_DNS] += 1
            why = not_reverse_dns(key)
            if why:
                out.append((REVERSE_DNS, where, f"the _meta key {key!r}: {why}"))
            if key in TRACE_KEYS:
                seen[TRACE] += 1
                why = trace_problem(key, val)
                if why:
                    out.append((TRACE, where, f"the _meta key {key!r} has the value {val!r}: {why}"))
    for path, extensions in extension_maps(value):
        for key in extensions:
            if not isinstance(key, str):
                continue
            seen[EXTENSION] += 1
            where = f"{path}['{key}']"
            if "/" not in key:
                out.append((EXTENSION, where, f"the extension identifier {key!r} has no prefix (a prefix is mandatory)"))
            else:
                for _, why in key_problems(key):
                    out.append((EXTENSION, where, f"the extension identifier {key!r}: {why}"))
    return out, seen
