#!/usr/bin/env python3
"""Rendering time and size of the report formats for a large report (default 5,000 results).

The report is synthetic but made of real parts: result dicts, violations and transcript excerpts
are taken from the stored server-everything run (``tests/data/report-server-everything-stdio.json.gz``)
and replicated under new requirement ids over five versions, so shapes, sizes and the characters
that need escaping are those of a real run.  Two cases:

``realistic``  5,000 results: about 55% pass, 30% skip, 8% fail, 5% warning, 2% error; every
               failure and warning with its real violation and wire exchange, and a message made
               unique per result (no "same violation as" folding helps)
``worst``      5,000 failing results, each with the most the model keeps: 20 violations with 4 KB
               expected/actual values and 40 transcript entries of 4 KB raw bytes (shared objects:
               as report.json this would be over 1 GB, so it is not serialised and "all files",
               which includes report.json, is not measured)

For each case and format (html, junit, markdown, badge, and all five files as ``mcp-conformance
report`` writes them): the median, min and max time over ``--rounds`` renders and the output size.
The issue's targets are printed beside the HTML figures: under 2 s and under 5 MB.

    .venv/bin/python benchmarks/bench_report.py [--results 5000] [--rounds 5] [--cases realistic,worst]
        [--json reports/bench_report.json] [--quiet]

Not a test: nothing here asserts a speed (timed assertions flake on shared machines).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.report.badge import badge_endpoint, badge_svg  # noqa: E402
from conformance.report.html import render_html  # noqa: E402
from conformance.report.junit import render_junit  # noqa: E402
from conformance.report.markdown import render_markdown  # noqa: E402
from conformance.report.model import exit_code, summarize  # noqa: E402
from conformance.report.render import render  # noqa: E402

SOURCE = ROOT / "tests" / "data" / "report-server-everything-stdio.json.gz"
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
TARGET_SECONDS = 2.0
TARGET_BYTES = 5 * 1024 * 1024


def _source() -> dict[str, Any]:
    return json.loads(gzip.decompress(SOURCE.read_bytes()))


def _finish(rep: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    rep["results"] = results
    rep["versions"] = VERSIONS
    rep.pop("baseline", None)
    rep["summary"] = summarize(results)
    rep["exit_code"] = exit_code(rep)
    return rep


def realistic(n: int) -> dict[str, Any]:
    src = _source()
    by_outcome: dict[str, list[dict[str, Any]]] = {}
    for r in src["results"]:
        by_outcome.setdefault(r["outcome"], []).append(r)
    error = copy.deepcopy(by_outcome["skip"][0])
    error.update(outcome="error", reason="internal error in scenario x: RuntimeError('synthetic')\nTraceback ...")
    by_outcome["error"] = [error]
    plan = [("pass", 55), ("skip", 30), ("fail", 8), ("warning", 5), ("error", 2)]
    cycle = [o for o, w in plan for _ in range(w)]
    results = []
    per_version = max(1, n // len(VERSIONS))
    for i in range(n):
        outcome = cycle[(i // len(VERSIONS) * 7) % len(cycle)]
        pool = by_outcome[outcome]
        r = copy.deepcopy(pool[i % len(pool)])
        area = f"area{(i // len(VERSIONS)) % 24:02d}"
        r["requirement"] = f"{area}.requirement-{(i // len(VERSIONS)) % per_version:04d}"
        r["area"] = area
        r["version"] = VERSIONS[i % len(VERSIONS)]
        for v in r["violations"]:
            v["message"] = f"{v['message']} (#{i})"
            v["requirement"] = r["requirement"]
        results.append(r)
    return _finish(src, results)


def worst(n: int) -> dict[str, Any]:
    src = _source()
    template = next(r for r in src["results"] if r["outcome"] == "fail" and r["transcript"])
    big = "x" * 4000
    violation = dict(template["violations"][0], expected={"value": big}, actual={"value": big[::-1] + '"<&>'})
    entry = dict(template["transcript"][0], raw={"text": '{"jsonrpc":"2.0","result":"' + big + '"}'})
    transcript = [dict(entry, seq=k) for k in range(40)]
    results = []
    for i in range(n):
        r = dict(template)
        r["requirement"] = f"area{i % 24:02d}.requirement-{i // len(VERSIONS):04d}"
        r["area"] = f"area{i % 24:02d}"
        r["version"] = VERSIONS[i % len(VERSIONS)]
        r["violations"] = [dict(violation, message=f"{violation['message']} (#{i}.{k})") for k in range(20)]
        r["transcript"] = transcript  # shared: the renderers never modify a report
        results.append(r)
    return _finish(src, results)


CASES: dict[str, Callable[[int], dict[str, Any]]] = {"realistic": realistic, "worst": worst}
FORMATS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "html": render_html,
    "junit": render_junit,
    "markdown": render_markdown,
    "badge": lambda r: badge_svg(r) + json.dumps(badge_endpoint(r)),
    "all files": lambda r: render(r),
}


def _size(out: Any) -> int:
    if isinstance(out, dict):
        return sum(len(v.encode("utf-8")) for v in out.values())
    return len(out.encode("utf-8"))


def measure(report: dict[str, Any], rounds: int, formats: list[str]) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {}
    for name in formats:
        fn = FORMATS[name]
        fn(report)  # warm-up: templates compiled, caches filled
        times = []
        size = 0
        for _ in range(rounds):
            t0 = time.perf_counter()
            out = fn(report)
            times.append(time.perf_counter() - t0)
            size = _size(out)
        figures[name] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times), "bytes": size}
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--json", default=str(ROOT / "reports" / "bench_report.json"))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "results": args.results,
        "rounds": args.rounds,
        "cases": {},
    }
    for case in [c.strip() for c in args.cases.split(",") if c.strip()]:
        report = CASES[case](args.results)
        json_bytes = json_s = None
        formats = list(FORMATS)
        if case == "worst":
            formats.remove("all files")
        else:
            t0 = time.perf_counter()
            json_bytes = len(json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8"))
            json_s = time.perf_counter() - t0
        figures = measure(report, args.rounds, formats)
        out["cases"][case] = {
            "summary": report["summary"]["by_outcome"],
            "report_json_bytes": json_bytes,
            "report_json_dump_s": json_s,
            "formats": figures,
            "html_within_targets": figures["html"]["median_s"] < TARGET_SECONDS and figures["html"]["bytes"] < TARGET_BYTES,
        }
        if not args.quiet:
            size = f"report.json {json_bytes / 1e6:.1f} MB" if json_bytes else "report.json not serialised"
            print(f"{case}: {args.results} results {report['summary']['by_outcome']}, {size}")
            for name, f in figures.items():
                print(f"  {name:10} median {f['median_s'] * 1000:8.1f} ms  (min {f['min_s'] * 1000:.1f}, max {f['max_s'] * 1000:.1f})"
                      f"  {f['bytes'] / 1e6:7.2f} MB")
            h = figures["html"]
            print(f"  html targets: < {TARGET_SECONDS:g} s -> {h['median_s']:.2f} s; < 5 MB -> {h['bytes'] / 1024 / 1024:.2f} MiB")
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if not args.quiet:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
