"""The fuzz engine: a pipelined driver over ``conformance.transports`` (the I/O layer).

One campaign = one target, one version, one seed.  Frames come from :func:`generate.frame_at`
(deterministic from ``(seed, index)``); the oracle (:mod:`conformance.fuzz.oracle`) says what may
answer each one and judges it once it is settled.

* **Pipelined with a window.**  Up to ``window`` frames are in flight (sent, not yet proven read).
* **Silence by barrier, never by a per-message timeout.**  Every ``chunk`` frames -- and right
  after every frame whose answer cannot carry a usable id -- a barrier request follows (``ping``;
  ``server/discover`` on 2026-07-28, which has no ping).  Its answer proves the frames before it
  were read; they are then given ``grace`` seconds (async servers answer out of order), after which
  an unanswered one is *suspected* and leaves the window; it is *reported* only if nothing came by
  ``final`` seconds.  Over HTTP the end of a POST's response plays the barrier's part.
* **Runs, checked alone when in doubt.**  Frames that must be answered exactly once by an error
  given as the server reads them (unreadable, or an invalid Request: id null, or the readable id
  echoed), and notifications (never answered), need no barrier of their own: a server answers
  what it reads in order, so the answers without a usable id between two barriers belong to such
  frames one for one.  When any frame of a run is judged wrong, the run is not trusted: none of
  its findings is recorded, each of its frames is sent again alone, a barrier behind it, and
  judged on its own (with ids never used before: :data:`generate.AGAIN`); for a while afterwards
  frames go alone again, and a kind of frame the server got wrong alone goes alone for good.  A
  conformant server never pays for the recheck; a reproducer always comes from a frame judged
  alone.  Barriers prove what was *sent* before them (a send number, not the frame index: a
  frame sent again keeps its index).
* **Out of order.**  A server seen answering out of order gets no runs.  Its frames that may be
  answered without a usable id still go without waiting for each other until it gives such an
  answer; if more than one frame could own that first one, none of them is judged (they go again
  alone), and from then on one such frame at a time.
* **Liveness.**  A barrier unanswered for ``deadline`` seconds is a stall; a closed transport is an
  exit (exit code and stderr tail kept).  Both are findings (``jsonrpc.request.response-required``);
  the server is restarted (``max_restarts``) and the campaign goes on.  A stdio server's resident
  memory is sampled (``/proc/<pid>/status``) and reported.
* **Ids are never reused** within a session: frames get run-unique ids, barriers their own.
* Server-to-client requests are answered (``ping`` with ``{}``, anything else with -32601); we
  declare no client capabilities.

The same engine replays a reproducer and drives the shrinker (:func:`replay_frame`).
"""

from __future__ import annotations

import collections
import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio

from conformance.runtime.connect import Target, TargetError, build_transport, target_error
from conformance.fuzz import oracle as _oracle
from conformance.fuzz.corpus import Corpus, build_corpus, stateless_meta
from conformance.fuzz.generate import AGAIN, Frame, Plan, frame_at
from conformance.fuzz.operators import Operator, select_operators
from conformance.fuzz.oracle import Expect, Finding, OracleContext, id_key
from conformance.fuzz.peer_process import redact, rss_kib
from conformance.fuzz.window import Due, Keyed, Pend
from conformance.spec.versions import Transport, spec
from conformance.transports.base import TransportClosed, TransportError
from conformance.wire.envelope import MISSING, Envelope, Kind, dumps, parse_envelope
from conformance.wire.rules import barrier_method, empty_ping_result, is_response

__all__ = ["FuzzConfig", "Campaign", "SignatureRecord", "run_campaign", "replay_frame", "Session"]

RING = 16  # frames kept for a crash reproducer
OUTBOX = 64  # stdio: at most this many lines wait to be written in one go
_UNKEYED = frozenset({_oracle.UNREADABLE, _oracle.REJECTED, _oracle.SILENCE, _oracle.ANY})  # answers may carry no usable id


@dataclass
class FuzzConfig:
    target: Target
    version: str
    seed: int = 0
    budget: float | None = 60.0  # seconds of sending (None: until max_messages)
    max_messages: int | None = None
    window: int = 256
    chunk: int = 32
    grace: float = 0.25
    final: float = 3.0
    deadline: float = 10.0  # a barrier unanswered this long: a stall
    timeout: float = 10.0  # handshake, start-up
    fuzz_tools: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()
    exclude_ops: tuple[str, ...] = ()
    extra_corpus: tuple[dict, ...] = ()  # hypothesis examples (cached by the caller)
    max_restarts: int = 3
    shrink_budget: float = 10.0  # seconds of shrinking per finding signature
    memory_interval: float = 1.0
    progress: Callable[["Campaign"], None] | None = None
    progress_interval: float = 0.5


@dataclass
class SignatureRecord:
    """One violation signature: the first example and how often it was seen."""

    finding: Finding
    frame: Frame | None
    expect_what: str
    accepted: tuple[str, ...]
    count: int = 1
    first_seen: float = 0.0
    operators: collections.Counter = field(default_factory=collections.Counter)
    methods: collections.Counter = field(default_factory=collections.Counter)
    prefix: list[Frame] = field(default_factory=list)  # for exits/stalls: the frames before
    detail: dict[str, Any] = field(default_factory=dict)


ISOLATE = 1024  # after a run in doubt, this many frames go alone (with a barrier each) again


def _exact_one(frame: Frame, exps: list[Expect]) -> bool:
    """A frame that may go in a run: one message that must be answered exactly once, by an error
    the server gives as it reads it (unreadable, or an invalid Request), with id null or with the
    readable id echoed.  Not a batch, nor a frame whose id only a lenient decoder reads."""
    if len(exps) != 1 or frame.data[:1] == b"[":
        return False
    x = exps[0]
    return (x.kind in (_oracle.UNREADABLE, _oracle.REJECTED) and x.lenient_echo is MISSING and not x.member_keys
            and x.max_answers == 1 and x.silence_requirement is not None)


def _silent_one(frame: Frame, exps: list[Expect]) -> bool:
    """A notification (no id) that must not be answered: it may go in a run."""
    if len(exps) != 1 or frame.data[:1] == b"[":
        return False
    x = exps[0]
    return x.kind == _oracle.SILENCE and x.key is None and x.echo is MISSING and not x.member_keys


def _may_take(x: Expect, env: Envelope) -> bool:
    """May ``env`` (an answer without a usable id) be the answer to a message expecting ``x``?"""
    if x.kind in (_oracle.UNREADABLE, _oracle.REJECTED, _oracle.ANY):
        return _oracle.accepts_unattributed(x, env)
    if x.kind == _oracle.ANSWER:
        return env.kind is Kind.ERROR and bool(x.codes) and env.error_code in x.codes
    return x.kind == _oracle.SILENCE


def _kind(x: Expect) -> tuple[str, str]:
    """The kind of a frame that may go in a run: what is due, and the requirement it answers to.  A
    server that gets one frame of a kind wrong (a Parse error never answered, say) gets them all
    wrong: once a frame sent again alone shows it, that kind goes alone for the rest of the
    campaign, and the runs of the other kinds are no longer put in doubt by it."""
    return (x.kind, x.requirement)


def _carries_ids(exps: list[Expect]) -> bool:
    return any(x.key is not None or x.echo is not MISSING or x.member_keys for x in exps)


class _Dead(Exception):
    def __init__(self, finding: Finding, detail: dict[str, Any]) -> None:
        super().__init__(finding.message)
        self.finding = finding
        self.detail = detail


class Session:
    """One connection to the target (a started stdio process, or an HTTP session), handshake done."""

    def __init__(self, cfg: FuzzConfig) -> None:
        self.cfg = cfg
        self.version = cfg.version
        self.transport: Any = None
        self.server_process: Any = None
        self.capabilities: dict = {}
        self.tools: list[dict] = []
        self.prompts: list[dict] = []
        self._n = 0
        self.stateless = spec(cfg.version).stateless

    @property
    def pid(self) -> int | None:
        t = self.transport
        if t is not None and getattr(t, "name", "") == "stdio":
            try:
                return t.pid
            except TransportError:
                return None
        if self.server_process is not None:
            return self.server_process.pid
        return None

    def next_id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}-{self._n}"

    def barrier_message(self, rid: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": barrier_method(self.version)}
        if self.stateless:
            msg["params"] = {"_meta": stateless_meta(self.version)}
        return msg

    async def start(self, *, discover: bool = True) -> None:
        target = self.cfg.target
        try:
            if target.transport is not Transport.STDIO and target.command:
                from conformance.runtime.connect import ServerProcess

                self.server_process = ServerProcess(target, kill_after=1.0)
                await self.server_process.__aenter__()
            self.transport = build_transport(target, self.version, timeout=self.cfg.timeout)
            await self.transport.start()
            if not self.stateless:
                init = {"jsonrpc": "2.0", "id": "fz-init", "method": "initialize",
                        "params": {"protocolVersion": self.version, "capabilities": {},
                                   "clientInfo": {"name": "mcp-conformance-fuzz", "version": "0.1.0"}}}
                env = await self.rpc(init)
                if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
                    raise TargetError(f"the target refused initialize for {self.version}: {env.summary()}",
                                      hint="pick a --version the server supports")
                caps = env.result.get("capabilities")
                self.capabilities = caps if isinstance(caps, dict) else {}
                negotiated = env.result.get("protocolVersion")
                if negotiated != self.version:
                    raise TargetError(f"the target negotiated {negotiated!r} instead of {self.version}",
                                      hint="pick a --version the server supports")
                if hasattr(self.transport, "protocol_version"):
                    self.transport.protocol_version = negotiated
                await self.transport.send(dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            else:
                env = await self.rpc(self.barrier_message("fz-discover"))
                if env.kind is Kind.RESULT and isinstance(env.result, dict):
                    caps = env.result.get("capabilities")
                    self.capabilities = caps if isinstance(caps, dict) else {}
            if discover:
                if isinstance(self.capabilities.get("tools"), dict):
                    self.tools = await self._list("tools/list", "tools")
                if isinstance(self.capabilities.get("prompts"), dict):
                    self.prompts = await self._list("prompts/list", "prompts")
        except TargetError:
            await self.close()
            raise
        except (TransportError, OSError, TimeoutError) as exc:
            await self.close()
            raise target_error(exc, target, doing="starting the fuzz session") from exc

    async def _list(self, method: str, member: str) -> list[dict]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": f"fz-{member}", "method": method}
        if self.stateless:
            msg["params"] = {"_meta": stateless_meta(self.version)}
        env = await self.rpc(msg)
        items = env.result.get(member) if env.kind is Kind.RESULT and isinstance(env.result, dict) else None
        return [t for t in items if isinstance(t, dict)] if isinstance(items, list) else []

    async def rpc(self, msg: dict[str, Any]) -> Envelope:
        """Send ``msg`` and read until its answer (answering server requests meanwhile)."""
        key = id_key(msg["id"])
        await self.transport.send(dumps(msg))
        with anyio.fail_after(self.cfg.timeout):
            while True:
                item = await self.transport.receive()
                env = item.envelope
                if env is None:
                    continue
                for e in env.items if env.kind is Kind.BATCH else [env]:
                    if is_response(e) and id_key(e.id) == key:
                        return e
                    if e.kind is Kind.REQUEST:
                        await self.answer_server_request(e)

    async def answer_server_request(self, env: Envelope) -> None:
        if env.method == "ping":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": env.id, "result": {}}
        else:
            reply = {"jsonrpc": "2.0", "id": env.id, "error": {"code": -32601, "message": "the fuzzer declares no client capabilities"}}
        try:
            await self.transport.send(dumps(reply))
        except TransportError:
            pass

    async def close(self) -> None:
        """Stop everything (the transport's own close is shielded from cancellation; it must run in
        the task that started it, so no cancel scope of ours is put around it)."""
        if self.transport is not None:
            t = self.transport
            self.transport = None
            if hasattr(t, "close_grace"):
                t.close_grace = 0.2
            await t.aclose()
        if self.server_process is not None:
            sp = self.server_process
            self.server_process = None
            await sp.__aexit__(None, None, None)


class Campaign:
    """The state and the results of one campaign (read by the progress line and the report)."""

    def __init__(self, cfg: FuzzConfig, operators: list[Operator]) -> None:
        self.cfg = cfg
        self.operators = operators
        self.octx = OracleContext(cfg.version, cfg.target.transport.value)
        self.sent = 0  # frames sent
        self.judged = 0  # frames settled and judged
        self.barriers = 0
        self.in_runs = 0  # frames sent in runs (without a barrier of their own)
        self.rechecks = 0  # frames of runs in doubt sent again alone
        self.started = 0.0
        self.finished = 0.0
        self.signatures: dict[tuple[str, str], SignatureRecord] = {}
        self.findings_total = 0
        self.by_operator: dict[str, dict[str, int]] = {op.name: {"messages": 0, "findings": 0} for op in operators}
        self.by_method: collections.Counter = collections.Counter()
        self.unattributed = 0
        self.id_waits = 0
        self.one_at_a_time = 0  # ambiguous frames that waited for the one before (see _drive)
        self.out_of_order = False  # the server was seen answering out of order (ambiguous frames then go one at a time)  # frames that waited for an earlier frame with the same id to settle
        self.dropped = 0  # frames in flight when the server died (covered by the exit finding)
        self.late = 0
        self.server_requests = 0
        self.notifications = 0
        self.restarts = 0
        self.memory: list[tuple[float, int]] = []
        self.corpus: Corpus | None = None
        self.plan: Plan | None = None
        self.stopped_by = ""
        self.errors: list[str] = []
        self.capabilities: dict = {}

    # -- bookkeeping -------------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started if self.started else 0.0

    @property
    def rate(self) -> float:
        e = self.elapsed
        return self.judged / e if e > 0 else 0.0

    def record(self, f: Finding, frame: Frame | None, exp: Expect | None, *, prefix: list[Frame] | None = None,
               detail: dict[str, Any] | None = None) -> None:
        self.findings_total += 1
        sig = f.signature
        rec = self.signatures.get(sig)
        if rec is None:
            rec = self.signatures[sig] = SignatureRecord(f, frame, exp.what if exp else "", exp.accepted if exp else (),
                                                         first_seen=self.elapsed, prefix=list(prefix or []), detail=dict(detail or {}))
        else:
            rec.count += 1
        if frame is not None:
            rec.operators[frame.operator] += 1
            rec.methods[frame.method] += 1
            if frame.operator in self.by_operator:
                self.by_operator[frame.operator]["findings"] += 1

    def settle(self, p: Pend, barrier: str) -> list[Finding]:
        if not p.recheck:  # a frame sent again is judged once (the first judgement was not trusted)
            self.judged += 1
        found = _oracle.judge(p.exp, p.answers, self.octx, refused=p.refused, barrier=barrier, grace=self.cfg.final)
        for f in found:
            self.record(f, p.frame, p.exp)
        return found

    def judge_in_run(self, p: Pend, barrier: str) -> list[Finding]:
        """Judge a frame of a run without recording what is wrong (see :func:`_drive`)."""
        self.judged += 1
        return _oracle.judge(p.exp, p.answers, self.octx, refused=p.refused, barrier=barrier, grace=self.cfg.final)

    def memory_summary(self) -> dict[str, Any]:
        if not self.memory:
            return {"sampled": False}
        values = [kib for _, kib in self.memory]
        n = len(values)
        q = max(1, n // 4)
        first = sorted(values[:q])[q // 2]
        last = sorted(values[-q:])[q // 2]
        return {"sampled": True, "samples": n, "start_kib": values[0], "peak_kib": max(values), "end_kib": values[-1],
                "first_quarter_median_kib": first, "last_quarter_median_kib": last,
                "growth_kib": last - first}


@contextlib.contextmanager
def garbage_collected_rarely() -> Any:
    """While a campaign runs: the cyclic garbage collector's thresholds raised (restored after).
    A campaign allocates a few dozen containers per message, nearly all freed at once by their
    reference counts; with the default thresholds the collector ran ~1,300 times per 50,000
    messages, and its full collections -- which walk every object of the process (schemas,
    hypothesis, the catalogue) -- took 18 ms each: 7% of the campaign's time.  Cycles among the
    young objects are still collected, every 50,000 allocations."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 50_000), max(old[1], 50), max(old[2], 100))
    try:
        yield
    finally:
        gc.set_threshold(*old)


async def run_campaign(cfg: FuzzConfig) -> Campaign:
    """Run one campaign; returns its results (findings not yet shrunk)."""
    with garbage_collected_rarely():
        return await _run_campaign(cfg)


async def _run_campaign(cfg: FuzzConfig) -> Campaign:
    operators = select_operators(cfg.target.transport.value, list(cfg.ops) or None, list(cfg.exclude_ops) or None)
    camp = Campaign(cfg, operators)
    session = Session(cfg)
    await session.start()
    camp.capabilities = session.capabilities
    camp.octx = OracleContext(cfg.version, cfg.target.transport.value, session.capabilities)
    camp.corpus = build_corpus(cfg.version, tools=session.tools, prompts=session.prompts, fuzz_tools=cfg.fuzz_tools,
                               extra=cfg.extra_corpus)
    camp.plan = Plan(cfg.seed, camp.corpus, operators, cfg.target.transport.value)
    camp.started = time.monotonic()
    index = 0
    try:
        while True:
            try:
                index = await _drive(camp, session, index)
                break
            except _Dead as dead:
                camp.record(dead.finding, dead.detail.get("frame"), None, prefix=dead.detail.get("prefix"), detail={
                    k: v for k, v in dead.detail.items() if k not in ("frame", "prefix")})
                await session.close()
                if camp.restarts >= cfg.max_restarts or _done(camp, index):
                    camp.stopped_by = camp.stopped_by or "the server died too often" if camp.restarts >= cfg.max_restarts else camp.stopped_by
                    break
                camp.restarts += 1
                session = Session(cfg)
                await session.start(discover=False)
    finally:
        camp.finished = time.monotonic()
        await session.close()
    return camp


def _done(camp: Campaign, index: int) -> bool:
    cfg = camp.cfg
    if cfg.max_messages is not None and index >= cfg.max_messages:
        camp.stopped_by = camp.stopped_by or f"{cfg.max_messages} messages"
        return True
    if cfg.budget is not None and camp.elapsed >= cfg.budget:
        camp.stopped_by = camp.stopped_by or f"budget {cfg.budget:g} s"
        return True
    return False


class _Drive:
    """One session's part of a campaign: frames sent from ``index`` on until the budget ends, their
    answers attributed and judged (see the module docstring).  The pends in flight pass from
    ``unproven`` (sent, no barrier behind them answered yet) to ``graced`` (proven read, within
    their grace) to ``suspects`` (unanswered after the grace: until the final deadline), and are
    judged by :meth:`finish`.  :meth:`run` returns the next index; raises _Dead."""

    def __init__(self, camp: Campaign, session: Session, index: int) -> None:
        cfg = self.cfg = camp.cfg
        self.camp = camp
        self.session = session
        assert camp.plan is not None
        self.plan: Plan = camp.plan
        self.transport = session.transport
        # streamable HTTP: one POST per frame, its answers in that POST's response (send_http).
        # stdio and legacy HTTP+SSE: one stream of answers, frames proven read by barriers; on stdio
        # several messages go in one write (lines), over legacy SSE each is a POST of its own (write)
        self.http = cfg.target.transport is Transport.STREAMABLE_HTTP
        self.stdio = cfg.target.transport is Transport.STDIO
        self.bmethod = barrier_method(cfg.version)
        self.index = index  # the next frame's index
        self.keyed = Keyed(loose_index=True)
        self.unkeyed: collections.deque[Pend] = collections.deque()  # awaiting an answer without a usable id
        self.unproven: collections.deque[Pend] = collections.deque()  # sent, no barrier behind them answered yet (send order)
        self.graced = Due()  # proven read, within their grace
        self.suspects = Due()  # unanswered after the grace: until the final deadline
        self.barriers: collections.OrderedDict[Any, tuple[int, float, int]] = collections.OrderedDict()  # key -> (next frame index, time, next send number)
        self.seq = 0  # frames registered so far: a frame's send number (a frame sent again gets a new one)
        self.ring: collections.deque[Frame] = collections.deque(maxlen=RING)
        self.outbox: list[bytes] = []  # stdio: lines not written yet (see write())
        self.queued: list[Frame] = []  # stdio: their frames, which join the ring when written
        self.proven = index  # every frame with a smaller index was proven read
        self.serial = camp.out_of_order  # one frame at a time that may be answered without a usable id
        self.last_ambiguous = -1
        self.room = anyio.Event()
        self.dead: list[_Dead] = []
        self.stop = False
        self.http_inflight = 0
        # runs: frames sent without a barrier of their own (see the module docstring)
        self.runs: dict[int, list[Frame]] = {}  # run number -> its frames, while any of them is unsettled
        self.run_left: dict[int, int] = {}  # run number -> its frames not settled yet
        self.doubted: set[int] = set()  # runs whose frames were queued to be sent again alone
        self.recheck: collections.deque[Frame] = collections.deque()
        self.run_no = 0
        self.run_open = False  # frames of the current run were sent and no barrier behind them yet
        self.alone_until = index  # frames before this index go alone again (after a run in doubt)
        self.alone_kinds: set[tuple[str, str]] = set()  # kinds of frame the server got wrong when sent again alone
        self.anonymous = False  # the server gave an answer without a usable id
        self.doubt_no = 0  # groups of frames put in doubt outside runs get run numbers -1, -2, ... (see doubt())

    # -- judging ---------------------------------------------------------------------------------

    def finish(self, p: Pend, *, final: bool = False) -> None:
        self.keyed.forget(p)
        if p.exp.kind in _UNKEYED:
            try:
                self.unkeyed.remove(p)
            except ValueError:
                pass
        camp = self.camp
        run = p.run
        if run is None:
            if camp.settle(p, self.bmethod) and p.recheck:
                self.alone_kinds.add(_kind(p.exp))  # the server got this kind wrong alone: no more runs for it
            return
        found = camp.judge_in_run(p, self.bmethod)
        if found and run not in self.doubted:
            if final:  # the campaign is over: no time to send them alone; what was seen stands
                for f in found:
                    camp.record(f, p.frame, p.exp)
            else:
                self.doubt_run(run)
        left = self.run_left.get(run, 0) - 1
        if left <= 0:
            self.run_left.pop(run, None)
            self.runs.pop(run, None)
            self.doubted.discard(run)
        else:
            self.run_left[run] = left

    def doubt_run(self, run: int) -> None:
        """None of ``run``'s judgements counts: its frames go again, each alone, and for a while
        afterwards frames go alone."""
        self.doubted.add(run)
        again = self.runs.get(run, [])
        self.recheck.extend(again)
        self.camp.rechecks += len(again)
        self.alone_until = max(self.alone_until, self.index + ISOLATE)

    def doubt(self, pends: list[Pend]) -> None:
        """Judge none of ``pends`` (frames whose answers cannot be told apart): those outside a run
        become a run of their own, and every run among them is in doubt."""
        self.doubt_no -= 1
        group = self.doubt_no
        for p in pends:
            if p.run is None:
                p.run = group
                self.run_left[group] = self.run_left.get(group, 0) + 1
                frames = self.runs.setdefault(group, [])
                if not any(f is p.frame for f in frames):
                    frames.append(p.frame)
        for run in dict.fromkeys(p.run for p in pends):  # in the order met
            if run not in self.doubted:
                self.doubt_run(run)

    def settle_due(self, now: float, *, everything: bool = False) -> None:
        if self.graced:
            self.graced.settle(now, lambda p: self.graced_over(p, now, everything), everything=everything)
        if self.suspects:
            self.suspects.settle(now, lambda p: self.finish(p, final=everything), everything=everything)
        if everything:
            unproven = self.unproven
            while unproven:
                self.finish(unproven.popleft(), final=True)

    def graced_over(self, p: Pend, now: float, everything: bool) -> None:
        """``p``'s grace is over: judged, or suspected missing (it leaves the window, reported
        only after the final deadline)."""
        if not everything and _wants_answer(p) and not p.answers and p.run is None:
            self.suspects.add(p, now + self.cfg.final)
            return
        self.finish(p, final=everything)  # a frame of a run unanswered after the grace: its run is in doubt now

    # -- reading ---------------------------------------------------------------------------------

    def on_barrier(self, next_index: int, upto_seq: int, now: float) -> None:
        if next_index > self.proven:
            self.proven = next_index
        deadline = now + self.cfg.grace
        unproven = self.unproven
        grace = self.graced.add
        while unproven and unproven[0].seq < upto_seq:  # sent before the barrier (a frame sent again keeps its index)
            grace(unproven.popleft(), deadline)
        self.room.set()

    def attribute(self, env: Envelope, now: float) -> None:
        camp = self.camp
        key = id_key(env.id)
        if key is not None:
            b = self.barriers.pop(key, None)
            if b is not None:
                self.on_barrier(b[0], b[2], now)
                if self.bmethod == "ping" and (env.kind is not Kind.RESULT or not empty_ping_result(env.result)):
                    camp.record(_oracle.finding(
                        "ping.response", "PingRejected" if env.kind is Kind.ERROR else "NonEmptyPingResult",
                        f"the ping sent as a barrier was answered with {env.summary()}", expected={"result": {}},
                        actual=env.error if env.kind is Kind.ERROR else env.result), self.ring[-1] if self.ring else None, None)
                return
            p = self.keyed.get(key)
            if p is not None:
                p.answers.append(env)
                if not self.serial and self.barriers and next(iter(self.barriers.values()))[0] <= p.frame.index:
                    # this answer overtook the barrier sent before its request: the server answers
                    # out of order, so answers without a usable id could not be told apart if
                    # several such frames were in flight; from now on one at a time
                    self.serial = True
                    camp.out_of_order = True
                return
            for p in self.unkeyed:  # an echoed id that is not unique in flight (a boolean)
                if p.exp.kind == _oracle.UNREADABLE and not p.answers and p.exp.echo is not MISSING and id_key(p.exp.echo) == key:
                    p.answers.append(env)
                    return
            near = self.keyed.near_miss(env)  # an id not echoed verbatim
            if near is not None:
                p, miss = near
                camp.record(_oracle.not_echoed(self.cfg.version, p.exp, env, miss), p.frame, p.exp)
                p.answers.append(env)  # it did answer (once): no second 'missing' finding
                return
            camp.unattributed += 1
            return
        # no usable id.  A barrier follows every frame that may be answered so and servers answer
        # such frames as they read them, in order: the owner is the oldest frame not yet proven
        # read and not yet answered that may take it -- an unreadable/refused/anything frame, or a
        # request that expects exactly this error code (then its id was not echoed).  Failing that
        # (an async server), the most recent proven one still within its grace; else a
        # notification was answered.
        if self.serial and not self.anonymous:
            # the first answer without a usable id from a server that answers out of order: until
            # now its ambiguous frames went without waiting for each other (it had given no such
            # answer to tell apart).  If more than one could own this one, none of their judgements
            # is trusted: they go again alone; from now on one such frame at a time.
            self.anonymous = True
            cands = [p for p in (*self.unproven, *self.graced, *self.suspects) if not p.answers and _may_take(p.exp, env)]
            if len({id(p.frame) for p in cands}) > 1:
                self.doubt(cands)
                return
        code = env.error_code
        owner = None
        for p in self.unproven:
            if p.answers:
                continue
            x = p.exp
            if x.kind in (_oracle.UNREADABLE, _oracle.REJECTED, _oracle.ANY):
                if _oracle.accepts_unattributed(x, env):
                    owner = p
                    break
            elif x.kind == _oracle.ANSWER and env.kind is Kind.ERROR and x.codes and code in x.codes:
                camp.record(_oracle.not_echoed(self.cfg.version, x, env, x.echo), p.frame, x)
                owner = p
                break
        if owner is None:
            for p in reversed(self.unkeyed):
                if p.settle_at is not None and not p.answers and p.exp.kind != _oracle.SILENCE and _oracle.accepts_unattributed(p.exp, env):
                    owner = p
                    break
        if owner is None:
            for p in self.unkeyed:
                if p.exp.kind == _oracle.SILENCE:
                    owner = p  # a notification answered
                    break
        if owner is None:
            camp.unattributed += 1
            return
        owner.answers.append(env)

    async def receiver(self) -> None:
        camp = self.camp
        stdio = self.stdio
        http = self.http
        transport = self.transport
        try:
            while True:
                item = await transport.receive()
                now = time.monotonic()
                env = item.envelope
                if stdio and (item.problem is not None or _oracle.stdout_finding(env, item.raw, truncated=bool(item.meta.get("truncated")))):
                    f = _oracle.stdout_finding(env, item.raw, truncated=bool(item.meta.get("truncated")))
                    if f is not None:
                        camp.record(f, self.ring[-1] if self.ring else None, None)
                    if env is None:
                        continue
                if env is None:
                    continue
                if http and str(item.meta.get("stream", "")).startswith("post:"):
                    continue  # judged by send_http from the POST's own response
                for e in env.items if env.kind is Kind.BATCH else (env,):
                    if is_response(e):
                        self.attribute(e, now)
                    elif e.kind is Kind.REQUEST:
                        camp.server_requests += 1
                        await self.session.answer_server_request(e)
                    elif e.kind is Kind.NOTIFICATION:
                        camp.notifications += 1
                    else:
                        camp.unattributed += 1
                if self.graced.due(now) or self.suspects.due(now):
                    self.settle_due(now)
        except TransportClosed as exc:
            if self.stop:
                return
            self.dead.append(_exited(camp, self.session, exc, list(self.ring)))
            self.room.set()
        except TransportError as exc:
            if not self.stop:
                self.dead.append(_exited(camp, self.session, exc, list(self.ring)))
                self.room.set()

    async def ticker(self) -> None:
        """Settles frames whose grace passed while nothing arrives, detects stalls, draws progress."""
        cfg = self.cfg
        camp = self.camp
        session = self.session
        last_progress = 0.0
        while True:
            await anyio.sleep(min(cfg.grace, 0.1))
            now = time.monotonic()
            self.settle_due(now)
            if self.barriers:
                _, (count, t0, _) = next(iter(self.barriers.items()))
                if now - t0 > cfg.deadline:
                    ring = self.ring
                    self.dead.append(_Dead(_oracle.finding(
                        _oracle.RESPONSE_REQUIRED, "ServerStalled",
                        f"the server stopped answering: the {self.bmethod} sent after frame {count - 1} "
                        f"was not answered within {cfg.deadline:g} s",
                        expected=f"an answer to {self.bmethod}", actual="no answer"),
                        {"frame": ring[-1] if ring else None, "prefix": list(ring)[:-1]}))
                    self.room.set()
                    return
            if cfg.progress and now - last_progress >= cfg.progress_interval:
                last_progress = now
                cfg.progress(camp)
            if session.pid and (not camp.memory or camp.elapsed - camp.memory[-1][0] >= cfg.memory_interval):
                kib = rss_kib(session.pid)
                if kib is not None:
                    camp.memory.append((camp.elapsed, kib))

    # -- writing ---------------------------------------------------------------------------------

    def barrier_bytes(self, upto: int | None = None, upto_seq: int | None = None) -> bytes:
        """A barrier; its answer proves the frames sent before it (before the frame of send number
        ``upto_seq``, default: all registered), and the window's frames before index ``upto``."""
        rid = self.session.next_id("fz-b")
        self.barriers[id_key(rid)] = (self.index if upto is None else upto, time.monotonic(), self.seq if upto_seq is None else upto_seq)
        self.camp.barriers += 1
        self.run_open = False
        self.run_no += 1
        return dumps(self.session.barrier_message(rid))

    async def send_barrier(self) -> None:
        if self.stdio:
            self.outbox.append(self.barrier_bytes())
            await self.flush()
            return
        await self.transport.send(self.barrier_bytes())

    async def flush(self) -> None:
        """stdio: the lines of the outbox in one write; a closed stdin marks the server dead."""
        outbox = self.outbox
        if not outbox:
            return
        data = b"\n".join(outbox)
        outbox.clear()
        self.ring.extend(self.queued)
        self.queued.clear()
        try:
            await self.transport.send(data)  # the transport ends the last line
        except TransportClosed as exc:
            if not self.dead:
                self.dead.append(_exited(self.camp, self.session, exc, list(self.ring)))
            self.room.set()

    async def write(self, *parts: bytes, pends: list[Pend] | None = None, frame: bytes | None = None) -> None:
        """``parts`` in order.  On stdio they join the outbox, written at the latest with the next
        barrier (a write that carries one ends with it), before anything waits
        (:meth:`wait_room`) or when :data:`OUTBOX` lines are waiting: frames of a run go in one
        write with their barrier, one system call instead of one per frame.  Over legacy SSE one
        POST each, and a 4xx/5xx refusal of ``frame``'s POST noted on its ``pends`` (an
        HTTP-level answer, accepted as over streamable HTTP)."""
        if self.stdio:
            outbox = self.outbox
            outbox.extend(parts)
            if len(parts) > 1 or len(outbox) >= OUTBOX:
                await self.flush()
            return
        for part in parts:
            ex = await self.transport.send(part)
            status = getattr(ex, "status", None)
            if part is frame and pends and isinstance(status, int) and status >= 400:
                for p in pends:
                    p.refused = status

    async def send_http(self, pends: list[Pend]) -> None:
        """One POST per frame; its answers are the messages of that POST's own response (a JSON
        body or an SSE stream), so they are attributed to this frame's expectations only."""
        camp = self.camp
        session = self.session
        frame = pends[0].frame
        try:
            ex = await self.transport.send(frame.data, headers=frame.headers)
            if ex.is_sse:
                await ex.wait_done(self.cfg.deadline)
        except TransportError as exc:
            sp = session.server_process
            if sp is not None and sp.returncode is None and not isinstance(exc, TransportClosed):
                # the process lives: this one POST got no HTTP response (reset, timeout)
                for p in pends:
                    try:
                        self.unproven.remove(p)
                    except ValueError:
                        pass
                    camp.judged += 1
                camp.record(_oracle.finding(_oracle.RESPONSE_REQUIRED, "NoHttpResponse",
                                            f"the POST of {pends[0].exp.what} got no HTTP response: {exc}",
                                            expected="an HTTP response", actual=str(exc)), frame, pends[0].exp)
                return
            self.dead.append(_exited(camp, session, exc, list(self.ring)))
            self.room.set()
            return
        finally:
            self.http_inflight -= 1
            self.room.set()
        status = ex.status
        for p in pends:
            if status >= 400:
                p.refused = status
        bodies = [e.data for e in ex.sse_events if e.data] if ex.is_sse else ([ex.body] if ex.body else [])
        for body in bodies:
            env = parse_envelope(body)
            for e in env.items if env.kind is Kind.BATCH else (env,):
                if not is_response(e):
                    if e.kind is Kind.REQUEST:
                        await session.answer_server_request(e)
                    continue
                i, extra = _oracle.owner_within([p.exp for p in pends], [bool(p.answers) for p in pends], e, self.cfg.version)
                if extra is not None:
                    camp.record(extra, pends[i].frame, pends[i].exp)
                if i is None:
                    camp.unattributed += 1
                    continue
                owner = pends[i]
                owner.answers.append(e)
        for p in pends:
            try:
                self.unproven.remove(p)
            except ValueError:
                pass
            self.finish(p)

    def register(self, frame: Frame, exps: list[Expect], *, again: bool) -> list[Pend]:
        pends = []
        keyed = self.keyed
        seq = self.seq
        for e in exps:
            p = Pend(frame, e, seq)
            p.recheck = again
            pends.append(p)
            keyed.add(p)
            if e.kind in _UNKEYED:
                self.unkeyed.append(p)
            self.unproven.append(p)
        self.seq = seq + 1
        (self.queued if self.stdio else self.ring).append(frame)
        return pends

    def join_run(self, frame: Frame, pends: list[Pend]) -> None:
        run = self.run_no
        for p in pends:
            p.run = run
        self.runs.setdefault(run, []).append(frame)
        self.run_left[run] = self.run_left.get(run, 0) + len(pends)
        self.run_open = True
        self.camp.in_runs += 1

    async def wait_room(self, ready: Callable[[], bool]) -> None:
        if self.outbox and not ready():
            await self.flush()  # nothing waits on frames we have not written
        while not self.dead and not ready():
            room = self.room = anyio.Event()
            with anyio.move_on_after(0.05):
                await room.wait()

    async def send_alone(self, frame: Frame) -> None:
        """A frame of a run in doubt, again: once everything sent before it was proven read, then
        the frame with a barrier behind it, so whatever answers it is its own."""
        if self.unproven:
            await self.send_barrier()  # what was sent before it may have no barrier behind it yet
        await self.wait_room(lambda: not self.unproven)
        if self.dead:
            return
        camp = self.camp
        exps = _oracle.expect(frame.data, camp.octx, headers=frame.headers, value=frame.value)
        if _carries_ids(exps):  # the same frame with ids never used (an id is not sent twice)
            frame = frame_at(self.plan, frame.index, ids_from=frame.index + AGAIN)
            exps = _oracle.expect(frame.data, camp.octx, headers=frame.headers, value=frame.value)
        pends = self.register(frame, exps, again=True)
        try:
            await self.write(frame.data, self.barrier_bytes(), pends=pends, frame=frame.data)
        except TransportClosed as exc:
            self.dead.append(_exited(camp, self.session, exc, list(self.ring)))

    # -- the campaign's part on this session --------------------------------------------------------

    async def run(self) -> int:
        cfg = self.cfg
        camp = self.camp
        plan = self.plan
        http = self.http
        dead = self.dead
        recheck = self.recheck
        write = self.write
        barrier_bytes = self.barrier_bytes
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.receiver)
            tg.start_soon(self.ticker)
            since_barrier = 0
            try:
                while not dead:
                    if recheck and not http:
                        await self.send_alone(recheck.popleft())
                        since_barrier = 0
                        continue
                    index = self.index
                    if _done(camp, index):
                        break
                    # the window: frames sent but not proven read (a full window with no barrier
                    # behind its last frames -- a run, or a chunk larger than the window -- gets one)
                    if not http and since_barrier and index - self.proven > cfg.window:
                        await self.send_barrier()
                        since_barrier = 0
                    await self.wait_room(lambda: (self.index - self.proven <= cfg.window) if not http
                                         else self.http_inflight < cfg.window)
                    if dead:
                        break
                    frame = frame_at(plan, index)
                    exps = _oracle.expect(frame.data, camp.octx, headers=frame.headers, value=frame.value)
                    # never two pending frames with the same id: wait until the first one is settled
                    keyed = self.keyed
                    conflict = [e.key for e in exps if e.key is not None and e.key in keyed]
                    if conflict:
                        camp.id_waits += 1
                        if not http:
                            await self.send_barrier()
                            since_barrier = 0
                        while not dead and any(k in keyed for k in conflict):
                            await anyio.sleep(0.005)
                            self.settle_due(time.monotonic())
                        if dead:
                            break
                    ambiguous = frame.data[:1] == b"[" or any(e.kind != _oracle.ANSWER for e in exps)
                    if not http and self.serial and self.anonymous and ambiguous:
                        camp.one_at_a_time += 1
                        if self.run_open:
                            await self.send_barrier()
                            since_barrier = 0
                        await self.wait_room(lambda: self.proven > self.last_ambiguous)
                        if dead:
                            break
                    pends = self.register(frame, exps, again=False)
                    camp.by_operator[frame.operator]["messages"] += 1
                    camp.by_method[frame.method] += 1
                    self.index = index + 1
                    camp.sent += 1
                    since_barrier += 1
                    if http:
                        self.http_inflight += 1
                        tg.start_soon(self.send_http, pends)
                        continue
                    try:
                        runs_ok = not self.serial and frame.index >= self.alone_until
                        if ambiguous:
                            self.last_ambiguous = frame.index
                        if runs_ok and (_exact_one(frame, exps) or _silent_one(frame, exps)) and _kind(exps[0]) not in self.alone_kinds:
                            self.join_run(frame, pends)  # no barrier of its own
                            if since_barrier >= cfg.chunk:
                                await write(frame.data, barrier_bytes(), pends=pends, frame=frame.data)
                                since_barrier = 0
                            else:
                                await write(frame.data, pends=pends, frame=frame.data)
                        elif ambiguous:
                            # the frame and its barrier in one write; an open run is closed by a
                            # barrier before it (made first: barriers are numbered as made)
                            head = (barrier_bytes(frame.index, self.seq - 1),) if self.run_open else ()
                            await write(*head, frame.data, barrier_bytes(), pends=pends, frame=frame.data)
                            since_barrier = 0
                        elif since_barrier >= cfg.chunk:
                            await write(frame.data, barrier_bytes(), pends=pends, frame=frame.data)
                            since_barrier = 0
                        else:
                            await write(frame.data, pends=pends, frame=frame.data)
                    except TransportClosed as exc:
                        dead.append(_exited(camp, self.session, exc, list(self.ring)))
                        break
                # the end: a last barrier, then wait until everything settled (bounded), the frames
                # of runs in doubt sent alone meanwhile
                if not dead and not http:
                    await self.send_barrier()
                end = time.monotonic() + cfg.deadline + cfg.final + 1
                while not dead and (self.unproven or self.graced or self.suspects or recheck) and time.monotonic() < end:
                    if recheck and not http and not self.unproven:
                        await self.send_alone(recheck.popleft())
                        end = max(end, time.monotonic() + cfg.deadline + cfg.final + 1)
                        continue
                    await anyio.sleep(0.02)
                    self.settle_due(time.monotonic())
            finally:
                self.stop = True
                tg.cancel_scope.cancel()
        if dead:
            camp.dropped += len(self.unproven) + len(self.graced) + len(self.suspects)
            # frames in flight when the server died are covered by the exit finding
            raise dead[0]
        self.settle_due(time.monotonic(), everything=True)
        return self.index


async def _drive(camp: Campaign, session: Session, index: int) -> int:
    """Send frames from ``index`` on until the budget ends; returns the next index.  Raises _Dead."""
    return await _Drive(camp, session, index).run()


def _wants_answer(p: Pend) -> bool:
    return p.exp.kind in (_oracle.ANSWER, _oracle.UNREADABLE, _oracle.REJECTED) and p.exp.silence_requirement is not None


def _exited(camp: Campaign, session: Session, exc: BaseException, ring: list[Frame]) -> _Dead:
    rc = getattr(exc, "returncode", None)
    if rc is None and session.transport is not None:
        rc = getattr(session.transport, "returncode", None)
    tail = getattr(exc, "stderr_tail", "") or getattr(session.transport, "stderr_tail", "") or ""
    last = ring[-1] if ring else None
    msg = f"the server went away ({exc})" + (f", exit code {rc}" if rc is not None else "")
    if last is not None:
        msg += f", after frame {last.index} ({last.operator} on {last.method})"
    return _Dead(_oracle.finding(_oracle.RESPONSE_REQUIRED, "ServerExited", msg, expected="the server keeps answering",
                                 actual={"returncode": rc}),
                 {"frame": last, "prefix": ring[:-1], "returncode": rc, "stderr_tail": redact(tail[-1500:])})


# -- replay (reproducers, shrinking) ----------------------------------------------------------------


async def replay_frame(session: Session, data: bytes, *, headers: dict[str, str] | None = None,
                       prefix: list[bytes] = (), grace: float = 0.25, deadline: float = 10.0) -> list[Finding]:
    """Send ``prefix`` then ``data`` on an open session, a barrier behind them, and judge ``data``
    with the oracle.  Liveness findings (exit, stall) are returned too."""
    octx = OracleContext(session.version, session.cfg.target.transport.value, session.capabilities)
    exps = _oracle.expect(data, octx, headers=headers)
    http = session.cfg.target.transport is not Transport.STDIO  # a POST per message (headers apply)
    answers: dict[int, list[Envelope]] = {i: [] for i in range(len(exps))}
    refused: int | None = None
    transport = session.transport
    bid = session.next_id("fz-rb")
    bkey = id_key(bid)
    extra: list[Finding] = []
    try:
        for p in prefix:
            await transport.send(p)
        ex = await transport.send(data, headers=headers) if http else await transport.send(data)
        status = getattr(ex, "status", None)
        if isinstance(status, int) and status >= 400:
            refused = status
        await transport.send(dumps(session.barrier_message(bid)))
        got_barrier = False
        end_grace: float | None = None
        t_end = time.monotonic() + deadline
        while True:
            now = time.monotonic()
            limit = (end_grace if end_grace is not None else t_end) - now
            if limit <= 0:
                break
            with anyio.move_on_after(limit):
                item = await transport.receive()
                env = item.envelope
                if env is None:
                    continue
                for e in env.items if env.kind is Kind.BATCH else (env,):
                    if not is_response(e):
                        if e.kind is Kind.REQUEST:
                            await session.answer_server_request(e)
                        continue
                    k = id_key(e.id)
                    if k == bkey:
                        got_barrier = True
                        end_grace = time.monotonic() + grace
                        continue
                    owner, f = _oracle.owner_within(exps, [bool(answers[i]) for i in range(len(exps))], e, session.version)
                    if f is not None:
                        extra.append(f)
                    if owner is not None:
                        answers[owner].append(e)
        if not got_barrier:
            return [_oracle.finding(_oracle.RESPONSE_REQUIRED, "ServerStalled", "the barrier after the replayed frame was not answered")]
    except TransportClosed as exc:
        return [_oracle.finding(_oracle.RESPONSE_REQUIRED, "ServerExited", f"the server went away ({exc})")]
    out: list[Finding] = list(extra)
    for i, x in enumerate(exps):
        out.extend(_oracle.judge(x, answers[i], octx, refused=refused, barrier=barrier_method(session.version), grace=grace))
    return out
