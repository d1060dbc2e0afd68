"""JUnit XML from the report dict.  Pure, no I/O.

One ``<testsuite>`` per version x transport, one ``<testcase>`` per requirement on it (name: the
requirement id; classname: ``mcp-conformance.<version>.<transport>``, unique across suites for
tools that flatten them).  Outcomes map as CI systems expect:

===========  ==========================================================================
pass         a plain testcase
fail         ``<failure type="<Problem>">`` with the spec sentence, expected/actual, JSON path and the
             wire exchange
warning      passes; the violation is in ``<system-out>`` and in the suite's ``warning`` properties
skip         ``<skipped message="<reason>">``
error        ``<error type="target|harness">`` (our own trouble, or an unreachable target)
xfail        ``<skipped type="xfail">`` (listed in the baseline, failing as expected)
stale        ``<failure type="StaleBaseline">`` (listed in the baseline but passing: the run fails)
===========  ==========================================================================

The output is valid against the widely used Jenkins/Ant JUnit schema (``tests/data/junit-10.xsd``).
Characters XML 1.0 cannot carry (control characters a peer may send) are written as ``\\xNN``.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping

from conformance.report import summary as S

__all__ = ["render_junit"]

_INVALID_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MAX_TEXT = 10_000  # characters per failure body / system-out
MAX_ATTR = 1_000


def _clean(text: Any, limit: int | None = None) -> str:
    s = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False) if text is not None else ""
    more = ""
    if limit is not None and len(s) > limit:
        s, more = s[:limit], f"… ({len(s) - limit} more characters in report.json)"
    return _INVALID_XML.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100 else "\\u%04x" % ord(m.group()), s) + more


def _time(seconds: Any) -> str:
    try:
        return format(max(0.0, float(seconds)), ".6f")
    except (TypeError, ValueError):
        return "0.000000"


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _violation_lines(v: Mapping[str, Any]) -> list[str]:
    lines = [f"{str(v.get('outcome', '')).upper()} {v.get('level', '')} {v.get('requirement', '')}: {v.get('problem', '')}",
             f"  {v.get('message', '')}"]
    if v.get("expected") is not None:
        lines.append(f"  expected: {_compact(v['expected'])}")
    if v.get("actual") is not None:
        lines.append(f"  actual:   {_compact(v['actual'])}")
    if v.get("json_path"):
        lines.append(f"  at:       {v['json_path']}")
    if v.get("transcript"):
        lines.append(f"  shown by transcript entries {v['transcript']} on {v.get('connection')}")
    return lines


def _wire_lines(entries: list[Mapping[str, Any]]) -> list[str]:
    out = []
    arrows = {"out": "->", "in": "<-", "note": "  "}
    conn = None
    for e in entries:
        if e.get("connection") != conn:
            conn = e.get("connection")
            out.append(f"  connection {conn}")
        raw = e.get("raw") or {}
        body = raw.get("text") if "text" in raw else (f"base64:{raw['base64']}" if "base64" in raw else e.get("text", ""))
        try:
            t = f"{float(e.get('t', 0.0)):.4f}s"
        except (TypeError, ValueError):
            t = "?"
        out.append(f"  #{e.get('seq')} {t} {arrows.get(str(e.get('direction')), '??')} {body}")
        for f in e.get("findings") or []:
            out.append(f"      schema: {f.get('json_path', '')}: {f.get('message', '')}")
    return out


def _header(r: Mapping[str, Any]) -> list[str]:
    lines = [f"{r.get('level')} {r['requirement']} ({r['version']}, {r['transport']})", f"  \"{r.get('quote')}\"", f"  {r.get('url')}"]
    if r.get("note"):
        lines.append(f"  reading: {r['note']}")
    return lines


def _testcase(parent: ET.Element, r: Mapping[str, Any], warnings: list[str], kinds: Mapping[tuple, str]) -> None:
    case = ET.SubElement(parent, "testcase", {
        "name": _clean(r["requirement"]),
        "classname": _clean(f"mcp-conformance.{r['version']}.{r['transport']}"),
        "time": _time(r.get("duration")),
    })
    outcome = r["outcome"]
    violations = list(r.get("violations") or [])
    base = r.get("baseline") or {}
    first = violations[0] if violations else {}
    if outcome == "fail":
        body = _header(r)
        for v in violations:
            body += _violation_lines(v)
        if r.get("violations_dropped"):
            body.append(f"  ... {r['violations_dropped']} more violation(s) in report.json")
        if r.get("transcript"):
            body += ["", "wire exchange:"] + _wire_lines(r["transcript"])
        el = ET.SubElement(case, "failure", {
            "type": _clean(first.get("problem") or "RequirementViolated", MAX_ATTR),
            "message": _clean(f"{r.get('level')} {r['requirement']}: {first.get('message') or 'violated'}", MAX_ATTR),
        })
        el.text = _clean("\n".join(body), MAX_TEXT)
    elif outcome == "stale":
        el = ET.SubElement(case, "failure", {
            "type": "StaleBaseline",
            "message": _clean(f"{r['requirement']} passes now but the baseline lists it ({base.get('entry')}): "
                              "remove the entry from the baseline", MAX_ATTR),
        })
        el.text = _clean("\n".join(_header(r)), MAX_TEXT)
    elif outcome == "error":
        reason = r.get("reason") or "the suite could not check this requirement"
        el = ET.SubElement(case, "error", {"type": kinds.get((r["version"], *r.get("scenarios", [])[:1]), "error"),
                                           "message": _clean(reason, MAX_ATTR)})
        el.text = _clean("\n".join(_header(r) + [f"  {reason}"]), MAX_TEXT)
    elif outcome == "skip":
        ET.SubElement(case, "skipped", {"message": _clean(r.get("reason") or "not applicable", MAX_ATTR)})
    elif outcome == "xfail":
        ET.SubElement(case, "skipped", {
            "type": "xfail",
            "message": _clean(f"expected failure (baseline entry {base.get('entry')}): {first.get('message') or base.get('original')}", MAX_ATTR),
        })
        out = _header(r) + [l for v in violations for l in _violation_lines(v)]
        ET.SubElement(case, "system-out").text = _clean("\n".join(out), MAX_TEXT)
    elif outcome == "warning":
        out = _header(r) + [l for v in violations for l in _violation_lines(v)]
        if r.get("transcript"):
            out += ["", "wire exchange:"] + _wire_lines(r["transcript"])
        ET.SubElement(case, "system-out").text = _clean("\n".join(out), MAX_TEXT)
        warnings.append(f"{r['requirement']}: {first.get('problem', '')}: {first.get('message', '')}")
    elif r.get("messages"):  # pass: notes on how an ambiguous rule was read
        ET.SubElement(case, "system-out").text = _clean("\n".join(r["messages"]), MAX_TEXT)


def render_junit(report: Mapping[str, Any]) -> str:
    """JUnit XML (a string, UTF-8 declaration included) for ``report``."""
    results = list(report.get("results") or [])
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["version"], r["transport"]), []).append(r)
    versions = list(report.get("versions") or [])
    order = sorted(groups, key=lambda k: (versions.index(k[0]) if k[0] in versions else len(versions), k[0], k[1]))
    impl = report.get("implementation") or {}
    server = impl.get("server_info") or {}
    target = report.get("target") or {}
    kinds = {(e.get("version"), e.get("scenario")): str(e.get("kind") or "error") for e in report.get("errors") or []}
    root = ET.Element("testsuites", {"name": "mcp-conformance"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for version, transport in order:
        rows = groups[(version, transport)]
        c = S.counts(rows)
        failures = c.get("fail", 0) + c.get("stale", 0)
        errors = c.get("error", 0)
        skipped = c.get("skip", 0) + c.get("xfail", 0)
        duration = sum(float(r.get("duration") or 0.0) for r in rows)
        suite = ET.SubElement(root, "testsuite", {
            "name": _clean(f"mcp-conformance {version} {transport}"),
            "tests": str(len(rows)),
            "failures": str(failures),
            "errors": str(errors),
            "skipped": str(skipped),
            "time": _time(duration),
            "timestamp": _clean(str(report.get("started") or "")),
            "package": "mcp-conformance",
        })
        props = ET.SubElement(suite, "properties")
        negotiated = ((impl.get("by_version") or {}).get(version) or {}).get("protocol_version")
        pairs: list[tuple[str, Any]] = [
            ("mcp.version", version),
            ("mcp.transport", transport),
            ("mcp.negotiated_version", negotiated),
            ("mcp.target", target.get("description")),
            ("mcp.role", report.get("role") or "server"),
            ("mcp.server", " ".join(str(x) for x in (server.get("name"), server.get("version")) if x) or None),
            ("mcp.client", " ".join(str(x) for x in ((impl.get("client_info") or {}).get("name"),
                                                     (impl.get("client_info") or {}).get("version")) if x) or None),
            ("mcp.suite_version", (report.get("suite") or {}).get("version")),
            ("mcp.strict", str(bool(report.get("strict"))).lower()),
        ]
        for k, val in pairs:
            if val not in (None, ""):
                ET.SubElement(props, "property", {"name": k, "value": _clean(val, MAX_ATTR)})
        warnings: list[str] = []
        for r in rows:
            _testcase(suite, r, warnings, kinds)
        na = sum(1 for n in report.get("not_applicable") or [] if n.get("version") == version and n.get("transport") == transport)
        ET.SubElement(props, "property", {"name": "mcp.not_applicable", "value": str(na)})
        ET.SubElement(props, "property", {"name": "mcp.warnings", "value": str(len(warnings))})
        for w in warnings:
            ET.SubElement(props, "property", {"name": "mcp.warning", "value": _clean(w, MAX_ATTR)})
        totals["tests"] += len(rows)
        totals["failures"] += failures
        totals["errors"] += errors
        totals["time"] += duration
    problems = [f"{e.get('kind')}: {e.get('message')}" + (f" (how to fix: {e['hint']})" if e.get("hint") else "")
                for e in report.get("errors") or []]
    problems += [f"note: {w}" for w in report.get("warnings") or []]
    if problems:
        suite = ET.SubElement(root, "testsuite", {
            "name": "mcp-conformance run", "tests": "0", "failures": "0", "errors": "0", "skipped": "0",
            "time": "0.000000", "timestamp": _clean(str(report.get("started") or "")), "package": "mcp-conformance",
        })
        ET.SubElement(suite, "system-err").text = _clean("\n".join(dict.fromkeys(problems)), MAX_TEXT)
    from conformance.report.fuzz import junit_properties

    fuzz_props = junit_properties(report)  # mcp-conformance fuzz: rates and reproducers
    if fuzz_props:
        suite = ET.SubElement(root, "testsuite", {
            "name": "mcp-conformance fuzz", "tests": "0", "failures": "0", "errors": "0", "skipped": "0",
            "time": "0.000000", "timestamp": _clean(str(report.get("started") or "")), "package": "mcp-conformance",
        })
        props = ET.SubElement(suite, "properties")
        for name, value in fuzz_props:
            ET.SubElement(props, "property", {"name": _clean(name), "value": _clean(value)})
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", str(totals["errors"]))
    root.set("time", _time(report.get("duration") if report.get("duration") is not None else totals["time"]))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
