"""Regenerate the real peers' expected verdicts (``tests/integration/expected/``).

Run through ``scripts/update-peer-verdicts`` (which sets up .venv and the schema directory)::

    scripts/update-peer-verdicts [--only PEER[-TRANSPORT] ...] [--jobs N] [--keep DIR | --reports DIR]
    scripts/update-peer-verdicts --readme      # only README.md, from the expected files (after a quote changed)

One CLI run per peer x transport (``--version all``), at most ``--jobs`` at a time; for each, the
expected file ``<peer>-<transport>.json`` (every (requirement, version) that is not pass/skip with
its outcome, level, problem names and a one-line summary; the pass/skip counts; ``unstable``
markers of the previous file kept) and, from all of them, ``README.md`` (one line per fail and
warning with the sentence it rests on).  A peer that cannot be provided (npm unreachable) keeps
its previous file.  ``--reports DIR`` regenerates from the reports of an earlier ``--keep DIR`` run without running
anything.  Exit status: 0 written, 1 a run failed to produce a report, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT))

import peer_verdicts as pv  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/update-peer-verdicts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="PEER[-TRANSPORT]",
                        help="only these runs (e.g. sdk, everything-sse); the README keeps listing the others' "
                             "previous files")
    parser.add_argument("--jobs", type=int, default=None, help="runs at a time (default $MCP_CONFORMANCE_PEER_JOBS or 4)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the reports in this directory")
    parser.add_argument("--readme", action="store_true",
                        help="run nothing: rewrite README.md from the expected files and the catalogue")
    parser.add_argument("--reports", type=Path, default=None,
                        help="run nothing: regenerate from the reports a --keep run left in this directory")
    args = parser.parse_args(argv)
    if args.readme:
        _write_readme({})
        return 0
    pairs = [p for p in pv.RUNS if not args.only or any(f"{p[0]}-{p[1]}" == o or p[0] == o for o in args.only)]
    if not pairs:
        parser.error(f"--only matches nothing; runs are {', '.join(f'{p}-{t}' for p, t in pv.RUNS)}")
    root = args.reports or args.keep or Path(tempfile.mkdtemp(prefix="mcp-peer-verdicts-"))
    runs = pv.Runs(root, jobs=args.jobs)
    started = time.monotonic()
    if args.reports is None:
        runs.start(pairs)
    done: dict[tuple[str, str], pv.PeerRun] = {}
    status = 0
    try:
        for pair in pairs:
            run = runs.get(*pair) if args.reports is None else _saved(args.reports, *pair)
            done[pair] = run
            if run.report is None:
                print(f"{run.key}: {'skipped: ' + run.unavailable if run.unavailable else 'FAILED: ' + str(run.problem)}",
                      file=sys.stderr)
                status = status or (0 if run.unavailable else 1)
                continue
            doc = pv.expected_from_report(run, pv.load_expected(*pair))
            pv.EXPECTED_DIR.mkdir(parents=True, exist_ok=True)
            (pv.EXPECTED_DIR / f"{run.key}.json").write_text(json.dumps(doc, indent=1) + "\n")
            flagged = {}
            for e in doc["verdicts"]:
                flagged[e["outcome"]] = flagged.get(e["outcome"], 0) + 1
            print(f"{run.key}: {run.wall:.0f} s, {doc['counts']['pass']} pass, {doc['counts']['skip']} skip, "
                  + ", ".join(f"{n} {o}" for o, n in sorted(flagged.items())), file=sys.stderr)
    finally:
        runs.close()
    _write_readme(done)
    if args.keep or args.reports:
        print(f"total {time.monotonic() - started:.0f} s; reports in {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)
        print(f"total {time.monotonic() - started:.0f} s (--keep DIR keeps the reports)", file=sys.stderr)
    return status


def _write_readme(done: dict[tuple[str, str], pv.PeerRun]) -> None:
    docs: list = []
    for peer, transport in pv.RUNS:
        doc = pv.load_expected(peer, transport)
        run = done.get((peer, transport))
        docs.append(doc if doc is not None else
                    (peer, transport, (run.unavailable or run.problem) if run else "never generated"))
    (pv.EXPECTED_DIR / "README.md").write_text(pv.readme(docs))


def _saved(root: Path, peer: str, transport: str) -> pv.PeerRun:
    path = root / f"{peer}-{transport}" / "report.json"
    if not path.exists():
        return pv.PeerRun(peer, transport, unavailable=f"no {path}")
    return pv.PeerRun(peer, transport, report=json.loads(path.read_text()))


if __name__ == "__main__":
    sys.exit(main())
