"""basic/index#_meta (2025-06-18 and later) and basic/versioning#extension-negotiation
(2026-07-28): the `_meta` keys, trace context values and extension identifiers of every message
the server sent during the run, on every connection (runs late in each version)."""

from __future__ import annotations

from conformance.runtime.registry import scenario
from conformance.server.context import ScenarioContext
from conformance.wire import meta_keys as mk
from conformance.wire.envelope import MISSING

from ._helpers import inbound_entries

MAX_REPORTED = 10

RULES = {  # requirement -> (rule of meta_keys, problem, what was judged, the skip reason when nothing was)
    "basic.meta.key-prefix": (mk.PREFIX, "InvalidMetaKeyPrefix", "_meta key(s)", "the server sent no _meta key"),
    "basic.meta.key-name": (mk.NAME, "InvalidMetaKeyName", "_meta key(s)", "the server sent no _meta key"),
    "basic.meta.reverse-dns": (mk.REVERSE_DNS, "PrefixNotReverseDns", "_meta key(s) with a prefix of several labels",
                               "the server sent no _meta key with a prefix of two labels or more"),
    "basic.meta.trace-context": (mk.TRACE, "InvalidTraceContext", "trace context value(s)",
                                 "the server sent no traceparent, tracestate or baggage in _meta"),
    "versioning.extension-identifiers": (mk.EXTENSION, "InvalidExtensionIdentifier", "extension identifier(s)",
                                         "the server advertised no extension"),
}


@scenario(requirements=list(RULES), since="2025-06-18", order=990)
async def meta_keys(ctx: ScenarioContext) -> None:
    """Every `_meta` object of every message the server sent in this version (params._meta,
    result._meta and those of the protocol objects inside): key prefixes and names, reverse DNS
    prefixes, the W3C formats of traceparent, tracestate and baggage; the keys of every
    capabilities.extensions it advertised."""
    await ctx.connect()
    seen = {r: 0 for r in RULES}
    bad = {r: 0 for r in RULES}
    by_rule = {rule: rid for rid, (rule, *_) in RULES.items() if ctx.applies(rid)}
    for conn in ctx.connections():
        if conn.info is not None and conn.info.unsupported:
            continue
        for entry in inbound_entries(conn.peer):
            env = entry.envelope
            if env is None or env.value is MISSING:
                continue
            for value in env.value if isinstance(env.value, list) else [env.value]:
                found, counted = mk.findings(value)
                for rule, rid in by_rule.items():
                    seen[rid] += counted[rule]
                for rule, path, why in found:
                    rid = by_rule.get(rule)
                    if rid is None:
                        continue
                    bad[rid] += 1
                    if bad[rid] <= MAX_REPORTED:
                        ctx.check(rid, False, problem=RULES[rid][1], message=f"{why} (on {conn.label})",
                                  expected="a key name as basic/index#_meta defines it" if rule != mk.TRACE
                                  else "the W3C Trace Context / W3C Baggage format",
                                  actual=path.rsplit("[", 1)[-1].strip("[]'"), json_path=path,
                                  entries=[entry.seq], peer=conn.peer)
    for rid in by_rule.values():
        _, _, what, skip = RULES[rid]
        if bad[rid] > MAX_REPORTED:
            ctx.note(f"{bad[rid]} violations in all; the first {MAX_REPORTED} are reported", requirement=rid)
        elif bad[rid] == 0:
            if seen[rid]:
                ctx.check(rid, True, message=f"{seen[rid]} {what} checked")
            else:
                ctx.not_reached(rid, skip)
