"""The ``fuzz`` section of report.json rendered for Markdown, HTML and JUnit.  Pure.

Fuzz findings are also ordinary results (scenario ``fuzz``), so every renderer shows them with
their sentence and grade anyway; this adds what only a campaign has: messages and rate, the
operators, the target's memory and, per finding, the shrunk reproducer and how to replay it.  A
campaign says whom it fuzzed (``role``: a server, or a client -- we played its server -- with its
client runs, the sessions it ended after malformed input, the quits its replays did not confirm).
"""

from __future__ import annotations

import html as _html
import json
from typing import Any, Mapping

__all__ = ["markdown_lines", "html_fragment", "junit_properties", "frame_text"]


def frame_text(frame: Any, limit: int = 300) -> str:
    if not isinstance(frame, Mapping):
        return ""
    if "text" in frame:
        s = str(frame["text"])
    else:
        s = "base64:" + str(frame.get("base64", ""))
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


def _campaigns(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    fuzz = report.get("fuzz")
    return list(fuzz.get("campaigns") or []) if isinstance(fuzz, Mapping) else []


def _mem(c: Mapping[str, Any]) -> str:
    m = c.get("memory") or {}
    if not m.get("sampled"):
        return "not sampled"
    return f"{m.get('start_kib')} KiB at start, peak {m.get('peak_kib')} KiB, {m.get('end_kib')} KiB at the end"


def _role(c: Mapping[str, Any]) -> str:
    """Whose duties the campaign judged: a server (we were its client), or a client (we played its server)."""
    return "client" if c.get("role") == "client" else "server"


def _runs(c: Mapping[str, Any]) -> str:
    """A client campaign's runs: how many, how they ended, the quits after malformed input, the dropped quits."""
    if _role(c) != "client":
        return ""
    ended = ", ".join(f"{k} ×{v}" for k, v in (c.get("runs_ended") or {}).items())
    out = (f"{c.get('client_runs', 0)} client runs ({ended}); {c.get('answers', 0)} answers to its requests, "
           f"{c.get('mutated_answers', 0)} mutated")
    tolerated = c.get("tolerated_exits") or {}
    if tolerated:
        out += "; sessions it ended after malformed input (no finding): " + ", ".join(f"{k} ×{v}" for k, v in tolerated.items())
    dropped = c.get("unconfirmed") or []
    if dropped:
        out += "; quits not confirmed by replay (dropped): " + ", ".join(f"{d['problem']} ×{d['count']}" for d in dropped)
    return out


def markdown_lines(report: Mapping[str, Any], code: Any, text: Any) -> list[str]:
    """Lines of a Markdown ``Fuzzing`` section (``code``/``text`` are the renderer's escapers)."""
    camps = _campaigns(report)
    if not camps:
        return []
    out = ["## Fuzzing", "", f"Seed {code(report['fuzz'].get('seed'))}.", "",
           "| version | transport | fuzzed | messages | judged/s | findings | memory of the target |", "|---|---|---|---|---|---|---|"]
    for c in camps:
        out.append(f"| {c['version']} | {c['transport']} | {_role(c)} | {c['messages']:,} | {c['judged_per_second']:,.0f} | "
                   f"{len(c['findings'])} | {text(_mem(c))} |")
    out.append("")
    for c in camps:
        if _runs(c):
            out += [f"{c['version']} {c['transport']}: {text(_runs(c))}.", ""]
    for c in camps:
        for f in c["findings"]:
            out.append(f"- **{f['outcome']}** {code(f['requirement'])} ({f['level']}) {f['problem']} ×{f['count']}: {text(f['message'])}")
            if f.get("frame"):
                out.append(f"  - reproducer {code(f.get('reproducer') or '-')}: {code(frame_text(f['frame']))}")
    if any(c["findings"] for c in camps):
        out.append("")
        out.append(f"Replay: {code('mcp-conformance fuzz --replay <report dir>/reproducers')}")
        out.append("")
    return out


def html_fragment(report: Mapping[str, Any]) -> str:
    camps = _campaigns(report)
    if not camps:
        return ""
    e = _html.escape
    parts = ['<section class="wrap" id="fuzz"><h2>Fuzzing</h2>',
             f"<p>Seed <code>{e(str(report['fuzz'].get('seed')))}</code>.</p>",
             "<table><thead><tr><th>version</th><th>transport</th><th>fuzzed</th><th>messages</th><th>judged/s</th><th>findings</th>"
             "<th>memory of the target</th></tr></thead><tbody>"]
    for c in camps:
        parts.append(f"<tr><td>{e(c['version'])}</td><td>{e(c['transport'])}</td><td>{e(_role(c))}</td><td>{c['messages']:,}</td>"
                     f"<td>{c['judged_per_second']:,.0f}</td><td>{len(c['findings'])}</td><td>{e(_mem(c))}</td></tr>")
    parts.append("</tbody></table>")
    for c in camps:
        if _runs(c):
            parts.append(f"<p>{e(c['version'])} {e(c['transport'])}: {e(_runs(c))}.</p>")
    for c in camps:
        for f in c["findings"]:
            ops = ", ".join(f"{k} ×{v}" for k, v in (f.get("operators") or {}).items())
            parts.append(
                f"<details><summary><b>{e(f['outcome'].upper())}</b> {e(f['level'])} <code>{e(f['requirement'])}</code> "
                f"{e(f['problem'])} ×{f['count']} ({e(c['version'])})</summary>"
                f"<p>{e(f['message'])}</p><blockquote>{e(f['quote'])}</blockquote>"
                f"<p>frame: {e(str(f.get('frame_was') or ''))}; operators: {e(ops)}</p>"
                f"<p>accepted: {e('; '.join(f.get('accepted') or []))}</p>"
                f"<p>reproducer <code>{e(str(f.get('reproducer') or '-'))}</code>: <code>{e(frame_text(f.get('frame')))}</code></p>"
                f"<p>expected <code>{e(json.dumps(f.get('expected'), ensure_ascii=False)[:300])}</code>, actual "
                f"<code>{e(json.dumps(f.get('actual'), ensure_ascii=False)[:300])}</code></p></details>")
    parts.append("</section>")
    return "".join(parts)


def junit_properties(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for c in _campaigns(report):
        key = f"mcp.fuzz.{c['version']}.{c['transport']}" + (".client" if _role(c) == "client" else "")
        out += [(f"{key}.messages", str(c["messages"])), (f"{key}.judged_per_second", f"{c['judged_per_second']:.0f}"),
                (f"{key}.findings", str(len(c["findings"])))]
        if _role(c) == "client":
            out.append((f"{key}.client_runs", str(c.get("client_runs", 0))))
        for f in c["findings"]:
            if f.get("reproducer"):
                out.append((f"{key}.reproducer.{f['requirement']}.{f['problem']}", str(f["reproducer"])))
    return out
