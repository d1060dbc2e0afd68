"""The catalogue against real peers: one CLI run per peer x transport (every version), their
reports, and the expected verdicts kept in ``tests/integration/expected/``.

Used by ``scripts/update-peer-verdicts`` (regenerates the expected files and their README) and by
the integration tests (``tests/integration/test_real_peer_verdicts.py`` and the per-area views),
which share one set of runs per pytest session (the ``real_peer_runs`` fixture, tests/conftest.py).

An expected file ``<peer>-<transport>.json`` holds, for every (requirement, version) whose outcome
is not pass/skip: the outcome, the level, the violations' problem names and a one-line summary;
plus the counts of pass and skip (apart from unstable verdicts).  An entry may carry ``"unstable": "<reason>"`` (kept by the
update script): it may or may not appear in a run.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # fixtures/ is not an installed package
    sys.path.insert(0, str(ROOT))

from fixtures.peers import launch  # noqa: E402

__all__ = [
    "EXPECTED_DIR",
    "RUNS",
    "TIMEOUT",
    "PeerRun",
    "Runs",
    "cli_argv",
    "run_peer",
    "expected_from_report",
    "compare",
    "readme",
    "load_expected",
]

EXPECTED_DIR = Path(__file__).resolve().parent / "expected"
# every peer on every transport it serves (fixtures/peers/launch.py); the reference server has its
# own zero-fail tests
# OAuth resource servers, run with --auth (the suite's authorization server) on the authorization
# area only (--select 'auth.*', and tasks bound to the authorization context, which only a run with
# --auth checks; the rest of their catalogue is the plain peer's)
AUTH_PEERS: dict[str, tuple[str, ...]] = {"sdk-auth": ("sse", "streamable-http"),
                                          "fastmcp-auth": ("sse", "streamable-http"),
                                          "ts-auth": ("sse", "streamable-http")}
RUNS: tuple[tuple[str, str], ...] = tuple(
    (name, transport) for name in ("everything", "sdk", "tiny") for transport in launch.PEERS[name]
) + tuple((name, transport) for name, transports in AUTH_PEERS.items() for transport in transports)
TIMEOUT = 10.0  # --timeout: seconds per expected answer (also the start-up deadline of HTTP peers)
RUN_DEADLINE = 900.0  # one CLI run, all versions
FLAGGED = ("fail", "warning", "error", "stale", "xfail")
COUNTED = ("pass", "skip")


@dataclass
class PeerRun:
    """One CLI run: the report, or why there is none (``unavailable``: skip; ``problem``: broken)."""

    peer: str
    transport: str
    report: dict[str, Any] | None = None
    unavailable: str | None = None
    problem: str | None = None
    wall: float = 0.0
    argv: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.peer}-{self.transport}"


def cli_argv(peer: str, transport: str, report_dir: Path | str, *, timeout: float = TIMEOUT) -> list[str]:
    """The public CLI's command line for the whole catalogue, every version, against ``peer``.

    Raises :class:`launch.PeerUnavailable` when the peer cannot be provided (npm unreachable).
    """
    if peer in AUTH_PEERS:
        return [sys.executable, "-m", "conformance.cli", "server", *_auth_target(peer, transport), "--version", "all",
                "--timeout", f"{timeout:g}", "--report-dir", str(report_dir), "--report-format", "none", "-q"]
    if transport == "stdio":
        argv, _env, _url = launch.peer_command(peer, transport)
        target = ["--command", shlex.join(argv), "--transport", "stdio"]
    else:
        placeholder = 65000  # replaced by {port}: the CLI picks a free port (and exports PORT)
        argv, _env, url = launch.peer_command(peer, transport, port=placeholder)
        assert url is not None
        command = shlex.join(argv).replace(str(placeholder), "{port}")
        target = ["--command", command, "--url", url.replace(str(placeholder), "{port}"), "--transport", transport]
    return [sys.executable, "-m", "conformance.cli", "server", *target, "--version", "all",
            "--timeout", f"{timeout:g}", "--report-dir", str(report_dir), "--report-format", "none", "-q"]


def _auth_target(peer: str, transport: str) -> list[str]:
    """An OAuth-protected peer told to trust the suite's authorization server ({issuer}, ...)."""
    from fixtures.clients import ClientMissing, locate

    sdk: list[str] = []
    try:
        if peer == "fastmcp-auth":  # fastmcp's own environment (scripts/install-clients fastmcp)
            python, script = str(Path(locate("fastmcp")).parent / "python"), "fastmcp_auth_server.py"
        elif peer == "ts-auth":  # the TypeScript SDK (scripts/install-clients ts-sdk)
            python, script, sdk = "node", "ts_auth_server.mjs", ["--sdk", locate("ts-sdk")]
        else:
            python, script = sys.executable, "sdk_auth_server.py"
    except ClientMissing as exc:
        raise launch.PeerUnavailable(exc.reason) from None
    argv = [python, str(ROOT / "fixtures" / "peers" / script), *sdk, "--transport", transport,
            "--port", "{port}", "--issuer", "{issuer}", "--jwks-url", "{jwks_url}", "--resource", "{resource}"]
    path = "/sse" if transport == "sse" else "/mcp"
    return ["--command", shlex.join(argv), "--url", f"http://127.0.0.1:{{port}}{path}", "--transport", transport,
            "--auth", "--select", "auth.*", "--select", "tasks.auth-context-bound"]


def _sdk_missing() -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("mcp") is not None else "the official Python SDK (`mcp`) is not installed"


def run_peer(peer: str, transport: str, report_dir: Path | str, *, timeout: float = TIMEOUT,
             started: Callable[[subprocess.Popen[str]], None] | None = None) -> PeerRun:
    """Run the catalogue against one peer on one transport; never raises for a peer's trouble.

    ``started`` is told the CLI process (so that an interrupted session can stop it)."""
    run = PeerRun(peer, transport)
    if peer in ("sdk", "sdk-auth") and (why := _sdk_missing()):
        run.unavailable = why
        return run
    try:
        run.argv = cli_argv(peer, transport, report_dir, timeout=timeout)
    except launch.PeerUnavailable as exc:
        run.unavailable = f"{peer}: {exc.reason}"
        return run
    except launch.PeerStartError as exc:
        run.problem = f"{peer}: {exc}"
        return run
    path = Path(report_dir) / "report.json"
    begin = time.monotonic()
    with subprocess.Popen(run.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          text=True, cwd=ROOT) as proc:
        if started is not None:
            started(proc)
        try:
            out, err = proc.communicate(timeout=RUN_DEADLINE)
        except subprocess.TimeoutExpired:
            _interrupt(proc)
            run.problem = f"the CLI run did not finish within {RUN_DEADLINE:.0f} s: {shlex.join(run.argv)}"
            return run
        finally:
            run.wall = time.monotonic() - begin
    if not path.exists():
        run.problem = (f"no report (exit {proc.returncode}): {shlex.join(run.argv)}\n"
                       f"{out[-3000:]}\n{err[-3000:]}")
        return run
    run.report = json.loads(path.read_text())
    return run


def _interrupt(proc: subprocess.Popen[str], grace: float = 15.0) -> None:
    """Stop a CLI run the way Ctrl-C does (it stops its server), then for good."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Runs:
    """Runs of several peer x transport pairs, each at most once, up to ``jobs`` at a time
    (``$MCP_CONFORMANCE_PEER_JOBS``, default: the number of cores, at most 4, shared between
    pytest-xdist workers).  More runs than cores starve the start-up of the Python SDK server
    (about 1 s of CPU per process; each run starts the handshakes of all five versions side by
    side): measured on 2 cores, 4 at a time made its first answers miss the start-up deadline and
    the sdk-stdio run came out all skipped.

    ``start(pairs)`` queues runs in the background; ``get(peer, transport)`` starts that run if it
    was not queued and waits for it; ``close()`` stops what still runs.

    ``shared``: a directory every one of the session's ``workers`` (pytest-xdist) sees.  The first
    worker to lock a pair there runs it and leaves the outcome beside its report; the others wait
    on the lock and read it, so a pair is run once per session, not once per worker.
    """

    def __init__(self, root: Path | str, *, jobs: int | None = None, timeout: float = TIMEOUT,
                 shared: Path | str | None = None, workers: int = 1) -> None:
        self.root = Path(root)
        self.shared = Path(shared) if shared is not None else None
        self.timeout = timeout
        # under pytest-xdist each of the ``workers`` has a Runs of its own: they share the cores
        self.jobs = (jobs or int(os.environ.get("MCP_CONFORMANCE_PEER_JOBS", "0"))
                     or max(1, min(4, (os.cpu_count() or 2) // max(1, workers))))
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="peer-run")
        self._futures: dict[tuple[str, str], Future[PeerRun]] = {}
        self._procs: list[subprocess.Popen[str]] = []
        self._lock = threading.Lock()
        self._closed = False

    def start(self, pairs: Iterable[tuple[str, str]] = RUNS) -> None:
        with self._lock:
            for pair in pairs:
                if pair not in self._futures:
                    directory = (self.shared or self.root) / f"{pair[0]}-{pair[1]}"
                    directory.mkdir(parents=True, exist_ok=True)
                    self._futures[pair] = self._pool.submit(self._run, pair, directory)

    def _run(self, pair: tuple[str, str], directory: Path) -> PeerRun:
        if self._closed:
            return PeerRun(*pair, problem="not run: the session is closing")
        if self.shared is None:
            return run_peer(*pair, directory, timeout=self.timeout, started=self._started)
        outcome = directory / "peer-run.json"
        with open(directory / "claim.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # blocks while another worker runs this pair (released if it dies)
            if outcome.exists():
                return PeerRun(**json.loads(outcome.read_text()))
            run = PeerRun(*pair, problem="the run was interrupted")
            try:
                run = run_peer(*pair, directory, timeout=self.timeout, started=self._started)
            finally:
                outcome.write_text(json.dumps(run.__dict__))
            return run

    def _started(self, proc: subprocess.Popen[str]) -> None:
        with self._lock:
            self._procs.append(proc)
        if self._closed:
            _interrupt(proc)

    def get(self, peer: str, transport: str) -> PeerRun:
        self.start([(peer, transport)])
        return self._futures[(peer, transport)].result()

    def close(self) -> None:
        """Stop every run still going (as Ctrl-C would) and wait for the workers."""
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            _interrupt(proc)
        self._pool.shutdown(wait=True)


# -- expected verdicts -----------------------------------------------------------------------------
def _one_line(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# what differs from run to run in a verdict's message: our random names, the peers' session and
# event ids, ports, connection and stream numbers
_VOLATILE = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"((?:mcp[-_]conformance|no[-_]such)[\w/:.-]*?[-_/])[0-9a-f]{8}\b"), r"\1<random>"),
    (re.compile(r"\b[0-9a-f]{24,}\b"), "<hex>"),
    (re.compile(r"\b127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b(fresh|shared)#\d+"), r"\1#N"),
    (re.compile(r"\b(post|get|sse):\d+"), r"\1:N"),
    (re.compile(r"\b\d+\.\d+ s\b"), "<t> s"),
)


def _stable(text: str) -> str:
    """``text`` with what changes between runs replaced by placeholders (stable expected files)."""
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


def _summary(result: Mapping[str, Any]) -> str:
    violations = [v for v in result.get("violations") or [] if v.get("outcome") in FLAGGED] or list(result.get("violations") or [])
    if violations:
        texts: list[str] = []
        for v in violations:
            text = _one_line(_stable(v.get("message") or v.get("problem") or ""))
            if text and text not in texts:
                texts.append(text)
        more = len(texts) - 1 + int(result.get("violations_dropped") or 0)
        return texts[0] + (f" (+{more} more)" if more > 0 else "") if texts else ""
    return _stable(_one_line(result.get("reason") or "; ".join(result.get("messages") or [])))


def _problems(result: Mapping[str, Any]) -> list[str]:
    return sorted({str(v.get("problem")) for v in result.get("violations") or [] if v.get("problem")})


def expected_from_report(run: PeerRun, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The expected-verdict document of one run; ``unstable`` markers of ``previous`` are kept."""
    assert run.report is not None
    unstable = {(e["requirement"], e["version"]): e["unstable"] for e in (previous or {}).get("verdicts", ())
                if e.get("unstable")}
    kept = {(e["requirement"], e["version"]): e for e in (previous or {}).get("verdicts", ()) if e.get("unstable")}
    verdicts: list[dict[str, Any]] = []
    counts = {o: 0 for o in COUNTED}
    seen: set[tuple[str, str]] = set()
    for r in run.report["results"]:
        key = (r["requirement"], r["version"])
        if r["outcome"] in COUNTED:
            if key not in unstable:  # counted apart from the unstable verdicts, whichever way they went
                counts[r["outcome"]] += 1
            continue
        seen.add(key)
        entry: dict[str, Any] = {
            "requirement": r["requirement"],
            "version": r["version"],
            "outcome": r["outcome"],
            "level": r["level"],
            "problems": _problems(r),
            "summary": _summary(r),
        }
        if key in unstable:
            entry["unstable"] = unstable[key]
        verdicts.append(entry)
    for key, entry in kept.items():  # an unstable verdict that did not show this time stays listed
        if key not in seen:
            verdicts.append(dict(entry))
    verdicts.sort(key=lambda e: (e["version"], e["requirement"]))
    return {
        "peer": run.peer,
        "transport": run.transport,
        "regenerate": "scripts/update-peer-verdicts",
        "counts": counts,
        "run_errors": [_stable(_one_line(e.get("message") or json.dumps(e))) for e in run.report.get("errors") or []],
        "verdicts": verdicts,
    }


def load_expected(peer: str, transport: str) -> dict[str, Any] | None:
    path = EXPECTED_DIR / f"{peer}-{transport}.json"
    return json.loads(path.read_text()) if path.exists() else None


def compare(expected: Mapping[str, Any], run: PeerRun) -> list[str]:
    """What differs between a run and its expected file (empty: as expected)."""
    assert run.report is not None
    results = run.report["results"]
    got = {(r["requirement"], r["version"]): r for r in results if r["outcome"] not in COUNTED}
    want = {(e["requirement"], e["version"]): e for e in expected["verdicts"]}
    unstable = {k for k, e in want.items() if e.get("unstable")}
    problems: list[str] = []
    for key in sorted(set(got) | set(want)):
        g, w = got.get(key), want.get(key)
        if g is not None and w is not None and g["outcome"] == w["outcome"]:
            continue
        if g is None and key in unstable:
            continue
        if g is None:
            problems.append(f"expected {w['outcome']} of {key[0]} ({key[1]}), got it "  # type: ignore[index]
                            f"{_outcome_of(results, key)}: {w['summary']}")  # type: ignore[index]
        elif w is None:
            problems.append(f"unexpected {g['outcome']} of {key[0]} ({key[1]}): {_summary(g)}")
        else:
            problems.append(f"{key[0]} ({key[1]}): expected {w['outcome']}, got {g['outcome']}: {_summary(g)}")
    # pass/skip counts, apart from the unstable verdicts
    for outcome in COUNTED:
        n = sum(1 for r in results if r["outcome"] == outcome and (r["requirement"], r["version"]) not in unstable)
        if n != expected["counts"][outcome]:
            problems.append(f"{n} results {outcome}, expected {expected['counts'][outcome]}")
    errors = [_stable(_one_line(e.get("message") or json.dumps(e))) for e in run.report.get("errors") or []]
    if errors != list(expected.get("run_errors") or []):
        problems.append(f"run errors {errors!r}, expected {expected.get('run_errors')!r}")
    return problems


def _outcome_of(results: Sequence[Mapping[str, Any]], key: tuple[str, str]) -> str:
    for r in results:
        if (r["requirement"], r["version"]) == key:
            return str(r["outcome"])
    return "not reported"


# -- README ----------------------------------------------------------------------------------------
def readme(docs: Sequence[Mapping[str, Any] | tuple[str, str, str]]) -> str:
    """``expected/README.md`` from the expected files and the catalogue's quotes: one line per fail
    and warning (and error), with the sentence it rests on.  ``docs``: expected documents in order,
    or ``(peer, transport, why)`` for a run that has no expected file."""
    from conformance.spec.requirements import catalogue

    reqs = catalogue()
    lines = [
        "# Real peers: every fail and warning, with the sentence it rests on",
        "",
        "Generated by `scripts/update-peer-verdicts` (one CLI run per peer x transport, `--version all`,",
        f"`--timeout {TIMEOUT:g}`) from the expected files beside this one and the catalogue's quotes;",
        "`tests/integration/test_real_peer_verdicts.py` asserts the same verdicts.  Format:",
        "`peer/transport/version: requirement (level, outcome) -- what was seen -- the sentence`.",
        "Entries marked *unstable* may or may not show in a run.",
        "",
    ]
    for doc in docs:
        if isinstance(doc, tuple):
            peer, transport, why = doc
            lines += [f"## {peer}/{transport}", "", f"No expected verdicts: {why}", ""]
            continue
        peer, transport = doc["peer"], doc["transport"]
        tally: dict[str, int] = dict(doc["counts"])
        for e in doc["verdicts"]:
            if not e.get("unstable"):
                tally[e["outcome"]] = tally.get(e["outcome"], 0) + 1
        unstable = sum(1 for e in doc["verdicts"] if e.get("unstable"))
        text = ", ".join(f"{n} {o}" for o, n in tally.items() if n) + (f", {unstable} unstable" if unstable else "")
        lines += [f"## {peer}/{transport}", "", f"{text}.", ""]
        for e in doc.get("run_errors") or []:
            lines.append(f"- {peer}/{transport}: run error -- {e}")
        for e in doc["verdicts"]:
            req = reqs.get(e["requirement"])
            sentence = f'"{_one_line(req.quote, 10_000)}" ({req.url_for(e["version"])})' if req else "(not in the catalogue)"
            mark = f" *unstable: {e['unstable']}*" if e.get("unstable") else ""
            lines.append(f"- {peer}/{transport}/{e['version']}: {e['requirement']} ({e['level']}, {e['outcome']}) "
                         f"-- {e['summary']} -- {sentence}{mark}")
        lines.append("")
    return "\n".join(lines)
