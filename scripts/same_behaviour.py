"""Show that a change meant to keep behaviour keeps it: the same verdicts, frames and findings
before and after, on the reference peers, the real peers and the broken ones.

Run through ``scripts/same-behaviour`` (which sets up .venv and the schema directory)::

    scripts/same-behaviour [--base REV] [--group G ...] [--keep DIR] [--list]

The *before* tree is a git worktree of ``REV`` (default ``HEAD``: what is committed), the *after*
tree is this checkout as it is (uncommitted changes included).  Each case runs in both trees, one
right after the other (``cwd`` and ``PYTHONPATH`` name the tree, so its code runs, also in the
console scripts and the processes it starts), and its fingerprint is compared:

``servers``   ``mcp-conformance server`` against the reference server, server-everything and the
              Python SDK server on stdio, streamable HTTP and legacy SSE, every version: the
              verdicts in report order (requirement, version, transport, level, outcome, the
              violations' problem names).  Messages that differ only in wording are listed apart
              (``notes``), since counts of checked messages may follow timing.
``clients``   ``mcp-conformance client`` against the reference client and every installed real
              client of ``python -m fixtures.clients`` on every transport it serves: the same.
``fuzz``      ``mcp-conformance fuzz`` with a fixed seed and message count, the server direction
              (reference server on stdio) and the client direction (reference client on stdio):
              the frames sent (captured on the peer's stdin with ``tee``; barrier pings, whose
              place follows timing, left out) and the findings (requirement, operator, problem).
``broken``    the broken-peer tests (each defect caught on its requirement and nothing else):
              their outcomes, test by test, in both trees.
``expected``  the real-peer expectations (``tests/integration/expected*``) untouched since REV.

Exit status: 0 the same everywhere, 1 a difference (printed; the whole comparison is written to
``reports/same_behaviour.json``), 2 usage.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.peer_verdicts import _stable  # noqa: E402  (the run-to-run placeholders)

RUN_TIMEOUT = 900.0
GROUPS = ("servers", "clients", "fuzz", "broken", "expected")
SERVER_PEERS = (("reference", ("stdio", "streamable-http", "sse")),
                ("everything", ("stdio", "streamable-http", "sse")),
                ("sdk", ("stdio", "streamable-http", "sse")))
REAL_CLIENTS = ("sdk", "ts-sdk", "fastmcp", "inspector")
BROKEN_TESTS = ("tests/broken_servers", "tests/broken_clients", "tests/fuzz/test_broken_servers.py")
FUZZ_MESSAGES = 4000
FUZZ_SEED = 11


@dataclass
class Case:
    group: str
    name: str
    run: Callable[[Path, Path], dict[str, Any]]  # (tree, scratch) -> fingerprint


# -- running in a tree -----------------------------------------------------------------------------
def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _cli(tree: Path, argv: list[str], out: Path) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    full = [sys.executable, "-m", "conformance.cli", *argv, "--report-dir", str(out)]
    started = time.monotonic()
    try:
        proc = subprocess.run(full, cwd=tree, env=_env(tree), capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"problem": f"did not finish within {RUN_TIMEOUT:g} s: {shlex.join(full)}"}
    path = out / "report.json"
    if not path.exists():
        return {"problem": f"no report (exit {proc.returncode}): {shlex.join(full)}\n{proc.stderr[-2000:]}"}
    report = json.loads(path.read_text(encoding="utf-8"))
    return {"exit": proc.returncode, "report": report, "wall": round(time.monotonic() - started, 2)}


def _verdicts(report: dict[str, Any]) -> dict[str, Any]:
    """report.json minus timings: the verdicts in order, and their wording apart."""
    verdicts, words = [], []
    for r in report.get("results") or []:
        problems = sorted(str(v.get("problem")) for v in r.get("violations") or [])
        verdicts.append([r["requirement"], r["version"], r["transport"], r["level"], r["outcome"], problems])
        words.append(_stable(" | ".join([str(r.get("reason") or ""), *map(str, r.get("messages") or []),
                                         *(str(v.get("message", "")) for v in r.get("violations") or [])])))
    errors = sorted(_stable(str(e.get("message", e)) if isinstance(e, dict) else str(e)) for e in report.get("errors") or [])
    return {"verdicts": verdicts, "words": words, "errors": errors, "exit_code": report.get("exit_code"),
            "summary": {k: v for k, v in (report.get("summary") or {}).items() if "time" not in k and "duration" not in k}}


def _server_case(peer: str, transport: str) -> Case:
    def run(tree: Path, scratch: Path) -> dict[str, Any]:
        from tests.integration.peer_verdicts import cli_argv

        argv = cli_argv(peer, transport, scratch)[3:]  # after "python -m conformance.cli"
        argv = argv[: argv.index("--report-dir")] + ["--report-format", "none", "-q"]
        got = _cli(tree, argv, scratch)
        return _verdicts(got["report"]) if "report" in got else got

    return Case("servers", f"{peer}-{transport}", run)


def _client_command(name: str, transport: str) -> str | None:
    if name == "reference":
        flag = {"stdio": "--stdio {server}", "streamable-http": "--url {url}", "sse": "--sse-url {url}"}[transport]
        return f"mcp-reference-client {flag}"
    from fixtures.clients import ClientMissing, command

    try:
        return command(name, transport)
    except ClientMissing:
        return None


def _client_case(name: str, transport: str) -> Case:
    def run(tree: Path, scratch: Path) -> dict[str, Any]:
        cmd = _client_command(name, transport)
        if cmd is None:
            return {"unavailable": f"{name} is not installed (scripts/install-clients)"}
        versions = ["2024-11-05"] if transport == "sse" else ["all"]
        argv = ["client", "--command", cmd, "--transport", transport, "--report-format", "none", "-q"]
        for v in versions:
            argv += ["--version", v]
        if name != "reference":
            from fixtures.clients import CLIENTS

            argv += ["--timeout", f"{CLIENTS[name].timeout:g}"]
        got = _cli(tree, argv, scratch)
        return _verdicts(got["report"]) if "report" in got else got

    return Case("clients", f"{name}-{transport}", run)


# -- fuzz: frames on the peer's stdin --------------------------------------------------------------
_TEE = """#!/bin/sh
# capture what the suite writes to the server's stdin, one file per process
out="$1"; shift
exec sh -c 'tee "$0.$$" | "$@"' "$out" "$@"
"""
_TEE_OUT = """#!/bin/sh
# capture what the suite's server (the launcher) writes to the client, one file per process
out="$1"; shift
exec sh -c '"$@" | tee "$0.$$"' "$out" "$@"
"""


def _frames(prefix: Path) -> dict[str, Any]:
    """The frames captured under ``prefix.*``, barriers left out: their digest and count (client
    runs are several processes, which take the campaign's frames in an order that follows
    scheduling: the frames of all of them are compared as one sorted list)."""
    kept: list[bytes] = []
    processes = 0
    for path in sorted(prefix.parent.glob(prefix.name + ".*")):
        processes += 1
        for line in path.read_bytes().split(b"\n"):
            if not line:
                continue
            if b'"ping"' not in line or len(line) > 200:  # a barrier is a short ping
                kept.append(line)
                continue
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):
                kept.append(line)
                continue
            if isinstance(msg, dict) and msg.get("method") == "ping" and (
                    (isinstance(msg.get("id"), str) and msg["id"].startswith(("fz-b-", "fz-rb")))
                    or (isinstance(msg.get("id"), int) and msg["id"] >= 10**12)):
                continue  # a barrier: where it falls follows timing, not the seed
            kept.append(line)
    if processes > 1:
        kept.sort()
    return {"processes": processes, "frames": len(kept), "digest": hashlib.sha256(b"\n".join(kept)).hexdigest()[:16]}


def _findings(report: dict[str, Any]) -> list[Any]:
    out = []
    for camp in (report.get("fuzz") or {}).get("campaigns") or []:
        for f in camp.get("findings") or []:
            out.append([camp.get("version"), f.get("requirement"), f.get("problem"), f.get("outcome"),
                        sorted(f.get("operators") or {}), f.get("index")])
    return sorted(out, key=json.dumps)


def _fuzz_case(direction: str) -> Case:
    def run(tree: Path, scratch: Path) -> dict[str, Any]:
        tee = scratch / "tee.sh"
        tee.write_text(_TEE if direction == "server" else _TEE_OUT)
        tee.chmod(tee.stat().st_mode | stat.S_IEXEC)
        prefix = scratch / "stdin"
        common = ["--seed", str(FUZZ_SEED), "--max-messages", str(FUZZ_MESSAGES), "--no-shrink", "-q"]
        if direction == "server":
            argv = ["fuzz", "--command", f"{tee} {prefix} mcp-reference-server", *common]
        else:
            # one client run at a time: which run takes which frames follows scheduling otherwise
            argv = ["fuzz", "--client-command", f"mcp-reference-client --stdio '{tee} {prefix} {{server}}'",
                    "--jobs", "1", *common]
        got = _cli(tree, argv, scratch / "report")
        if "report" not in got:
            return got
        return {"frames": _frames(prefix), "findings": _findings(got["report"]), "exit_code": got["report"].get("exit_code")}

    return Case("fuzz", f"{direction}-stdio", run)


# -- the broken peers' tests ---------------------------------------------------------------------
def _broken_case() -> Case:
    def run(tree: Path, scratch: Path) -> dict[str, Any]:
        xml = scratch / "junit.xml"
        argv = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", "-p", "no:randomly",
                f"--junitxml={xml}", *BROKEN_TESTS]
        subprocess.run(argv, cwd=tree, env=_env(tree), capture_output=True, text=True, timeout=3 * RUN_TIMEOUT,
                       stdin=subprocess.DEVNULL)
        if not xml.exists():
            return {"problem": "pytest wrote no junit.xml"}
        outcomes = {}
        for case in ET.parse(xml).getroot().iter("testcase"):
            kind = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            outcomes[f"{case.get('classname')}::{case.get('name')}"] = kind
        return {"tests": outcomes, "counts": dict(Counter(outcomes.values()))}

    return Case("broken", "broken-peer-tests", run)


def _expected_case(base: str) -> Case:
    def run(tree: Path, scratch: Path) -> dict[str, Any]:
        paths = ["tests/integration/expected", "tests/integration/expected_clients"]
        diff = subprocess.run(["git", "diff", "--stat", base, "--", *paths], cwd=ROOT, capture_output=True, text=True)
        return {"changed_since_base": diff.stdout.strip()}

    return Case("expected", "real-peer-expectations", run)


def cases(groups: list[str], base: str) -> list[Case]:
    out: list[Case] = []
    if "servers" in groups:
        out += [_server_case(peer, t) for peer, transports in SERVER_PEERS for t in transports]
    if "clients" in groups:
        out += [_client_case("reference", t) for t in ("stdio", "streamable-http", "sse")]
        from fixtures.clients import CLIENTS

        out += [_client_case(name, t) for name in REAL_CLIENTS for t in CLIENTS[name].transports]
    if "fuzz" in groups:
        out += [_fuzz_case("server"), _fuzz_case("client")]
    if "broken" in groups:
        out.append(_broken_case())
    if "expected" in groups:
        out.append(_expected_case(base))
    return out


# -- comparing -----------------------------------------------------------------------------------
def compare(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(differences, notes): what makes the behaviour differ, and wording that differs only."""
    diffs: list[str] = []
    notes: list[str] = []
    for key in sorted(set(before) | set(after)):
        if key == "words":
            continue
        b, a = before.get(key), after.get(key)
        if key == "changed_since_base":
            if a:
                diffs.append(f"real-peer expectations changed: {a}")
            continue
        if key == "tests":
            for test in sorted(set(b or {}) & set(a or {})):
                if b[test] != a[test]:
                    diffs.append(f"{test}: {b[test]} -> {a[test]}")
            for test in sorted(set(a or {}) - set(b or {})):
                notes.append(f"new test {test}: {a[test]}")
            continue
        if key == "verdicts" and b != a:
            for i, (vb, va) in enumerate(zip(b or [], a or [])):
                if vb != va:
                    diffs.append(f"verdict #{i}: {vb} -> {va}")
            if len(b or []) != len(a or []):
                diffs.append(f"{len(b or [])} verdicts -> {len(a or [])}")
            continue
        if b != a:
            diffs.append(f"{key}: {json.dumps(b)[:400]} -> {json.dumps(a)[:400]}")
    wb, wa = before.get("words") or [], after.get("words") or []
    for i, (x, y) in enumerate(zip(wb, wa)):
        if x != y:
            notes.append(f"wording of verdict #{i}: {x[:200]!r} -> {y[:200]!r}")
    return diffs, notes


def _worktree(base: str, where: Path) -> Path:
    tree = where / "tree-before"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), base], cwd=ROOT, check=True)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="HEAD", help="the revision to compare with (default HEAD)")
    parser.add_argument("--group", action="append", choices=GROUPS, help="only these groups (repeatable; default all)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="only the cases of this name (repeatable)")
    parser.add_argument("--keep", metavar="DIR", help="keep the runs' reports in DIR")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    ns = parser.parse_args(argv)
    groups = ns.group or list(GROUPS)
    chosen = [c for c in cases(groups, ns.base) if not ns.only or c.name in ns.only]
    if ns.list:
        for c in chosen:
            print(f"{c.group:9} {c.name}")
        return 0
    if not chosen:
        parser.error("no case selected (see --list)")
    rev = subprocess.run(["git", "rev-parse", "--verify", ns.base + "^{commit}"], cwd=ROOT, capture_output=True, text=True)
    if rev.returncode != 0:
        parser.error(f"--base {ns.base!r} is not a revision of this repository")
    scratch = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix="same-behaviour-"))
    scratch.mkdir(parents=True, exist_ok=True)
    before_tree = _worktree(ns.base, scratch)
    trees = {"before": before_tree, "after": ROOT}
    results: list[dict[str, Any]] = []
    different = 0
    try:
        for c in chosen:
            got = {}
            for side, tree in trees.items():
                where = scratch / side / c.group / c.name
                where.mkdir(parents=True, exist_ok=True)
                began = time.monotonic()
                got[side] = c.run(tree, where)
                got[side + "_wall"] = round(time.monotonic() - began, 1)
            diffs, notes = compare(got["before"], got["after"])
            same = not diffs
            different += not same
            size = len(got["after"].get("verdicts") or got["after"].get("tests") or got["after"].get("findings") or [])
            print(f"{'same' if same else 'DIFFERENT':9} {c.group:8} {c.name:28} ({size} items; "
                  f"{got['before_wall']} s / {got['after_wall']} s)", flush=True)
            for line in diffs[:40]:
                print(f"    {line}")
            results.append({"group": c.group, "case": c.name, "same": same, "differences": diffs, "notes": notes,
                            "before": {k: v for k, v in got["before"].items() if k != "words"},
                            "after": {k: v for k, v in got["after"].items() if k != "words"},
                            "walls": [got["before_wall"], got["after_wall"]]})
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(before_tree)], cwd=ROOT, capture_output=True)
        if not ns.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    out = ROOT / "reports" / "same_behaviour.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"base": rev.stdout.strip(), "cases": results}, indent=1))
    print(f"{len(results) - different} of {len(results)} cases the same; details in {out.relative_to(ROOT)}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
