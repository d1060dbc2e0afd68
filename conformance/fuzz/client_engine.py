"""The fuzz engine of the client direction: we play the server, the client under test is started
again and again (the I/O side of :mod:`conformance.fuzz.client_oracle`).

A campaign is many *client runs*: one client process may make a dozen requests and exit, so the
client command is started as often as needed, ``jobs`` at a time, each on an endpoint of its own
(the client-testing harness: :class:`conformance.client.role.ClientRole` -- the ``{server}``
launcher over the stdio relay, ``{url}`` on the loopback HTTP hub), and each run's process group
is killed at its end.  Within a run:

* The handshake is answered as the suite's scenario server answers it
  (:meth:`conformance.scenarios.client._server.ScenarioServer.default`), the answer mutated now
  and then (``answer`` operators, ``p_valid`` 0.9 so that most runs get past it).
* Each request the client makes after the handshake is **held** for a *round*: while the client
  waits for it, up to ``round_frames`` mutated server-to-client messages are sent (frame ``j`` of
  run ``r`` is :func:`conformance.fuzz.generate.frame_at` of index ``r * RUN_STRIDE + j``: the
  same seed sends the same frames), in chunks with a ``ping`` behind each (a barrier: its answer
  proves the chunk was read; answers may lag it by ``grace``).  Then the held request is answered
  -- by :func:`conformance.fuzz.generate.answer_at`: mutated or not -- and, when the mutation left
  the client without a usable answer (a wrong id, no JSON...), the real answer follows it.
* Silence is judged by barrier, never by a per-message timeout; answers are attributed by exact id,
  then by a near miss (``7`` for ``"7"``), then -- an id that matches nothing -- to the requests of
  the same chunk left without an answer (in order, when the numbers agree: not echoed).
* Survival: a barrier unanswered for ``deadline`` seconds while the client lives is a stall; its
  process dying of a signal a crash; a clean exit while it waits for our answer, right after
  well-formed messages only, a quit (:func:`conformance.fuzz.client_oracle.liveness`).

The same run driver replays reproducers and serves the shrinker (:class:`ClientSession`).  This
engine plays a server as the client scenarios do, so it sits at their level (it uses the scenario
server's answers); the judging is the pure oracle's.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Any, Callable

import anyio

from conformance.client.role import ClientRole, ClientRun, client_run
from conformance.client.target import ClientTarget
from conformance.runtime.connect import TargetError
from conformance.fuzz import client_oracle as co
from conformance.fuzz import oracle as _o
from conformance.fuzz.corpus import build_client_corpus
from conformance.fuzz.engine import Campaign
from conformance.fuzz.generate import Frame, Plan, answer_at, frame_at, run_index
from conformance.fuzz.operators import Operator, select_operators
from conformance.fuzz.oracle import ANSWER, ANY, SILENCE, UNREADABLE, Expect, Finding
from conformance.fuzz.peer_process import redact, tree_rss_kib
from conformance.fuzz.window import Due, Keyed, Pend
from conformance.spec.versions import Transport
from conformance.transports.base import TransportError
from conformance.wire.envelope import MISSING, Envelope, Kind, dumps, parse_envelope, same_id
from conformance.wire.rules import is_response

__all__ = ["ClientFuzzConfig", "ClientCampaign", "run_client_campaign", "ClientSession", "BARRIER_BASE"]

BARRIER_BASE = 10**12  # barrier ping ids: integers of their own range (a flipped type still reads as a near miss)
HANDSHAKE = frozenset({"initialize", "server/discover"})
MAX_LIVENESS = 3  # the campaign stops once the same stall, crash or quit was seen this often
QUIT_PROBLEMS = ("ClientQuit", "QuitOnInvalidCancel")  # confirmed against a plain ping before they are reported
MAX_NO_SESSION = 3  # ... or once this many runs in a row did not get past the handshake


@dataclass
class ClientFuzzConfig:
    target: ClientTarget
    version: str
    seed: int = 0
    budget: float | None = 60.0  # seconds of fuzzing (None: until max_messages)
    max_messages: int | None = None
    per_run: int = 4000  # messages sent to one client run at most
    round_frames: int = 256  # messages sent while one request of the client is held ...
    hold: float = 2.0  # ... and at most this many seconds (clients time their requests out)
    window: int = 128  # messages in flight (sent, no barrier behind them answered yet)
    chunk: int = 32  # a barrier after at most this many messages
    grace: float = 0.25  # an answer may lag its barrier's by this much
    final: float = 2.0  # an answer missing after the grace is reported only after this
    deadline: float = 10.0  # a barrier unanswered this long: a stall
    timeout: float = 15.0  # the client's start-up allowance (connect, handshake)
    jobs: int = 2  # client runs at once
    ops: tuple[str, ...] = ()
    exclude_ops: tuple[str, ...] = ()
    max_runs: int | None = None
    shrink_budget: float = 10.0  # seconds of shrinking per finding signature
    memory_interval: float = 0.5
    progress: Callable[["ClientCampaign"], None] | None = None
    progress_interval: float = 0.5


class ClientCampaign(Campaign):
    """The results of one client campaign (the server campaign's bookkeeping, plus the runs)."""

    role = "client"

    def __init__(self, cfg: ClientFuzzConfig, operators: list[Operator], answer_ops: list[Operator]) -> None:
        names = {op.name for op in operators}
        super().__init__(cfg, operators + [op for op in answer_ops if op.name not in names])  # type: ignore[arg-type]
        self.s2c_ops = operators
        self.answer_ops = answer_ops
        self.octx = co.context(cfg.version, cfg.target.transport.value)
        self.runs = 0
        self.runs_operating = 0  # runs that got past the handshake
        self.ended: collections.Counter = collections.Counter()  # how runs ended
        self.answers = 0
        self.mutated_answers = 0
        self.client_requests = 0
        self.tolerated_exits: collections.Counter = collections.Counter()  # quits after malformed input / our answers
        self.liveness_stop = False
        self.sure_liveness: collections.Counter = collections.Counter()
        self.no_session_streak = 0  # runs in a row that did not get past the handshake

    def record(self, f: Finding, frame: Any, exp: Any, *, prefix: Any = None, detail: dict | None = None) -> None:
        rec = self.signatures.get(f.signature)
        if rec is not None and rec.frame is not None and rec.frame.operator == "barrier" and frame is not None \
                and frame.operator != "barrier":
            # the example is a message of ours, not a barrier ping, when there is one
            rec.finding, rec.frame, rec.expect_what, rec.accepted = f, frame, exp.what if exp else "", exp.accepted if exp else ()
            rec.detail = dict(detail or {})
        super().record(f, frame, exp, prefix=prefix, detail=detail)
        d = detail or {}
        if d.get("liveness") and (f.problem not in QUIT_PROBLEMS or not d.get("ambiguous")):
            self.sure_liveness[f.signature] += 1
        if self.sure_liveness[f.signature] >= MAX_LIVENESS and not self.liveness_stop:
            # like boofuzz's crash threshold: the client stalls, crashes or quits on this every time;
            # more runs would only repeat it (a stall costs the whole deadline)
            self.liveness_stop = True
            self.stopped_by = self.stopped_by or (f"{f.problem} {self.sure_liveness[f.signature]} times (its reproducer "
                                                  "names the message; --exclude-ops its operator fuzzes past it)")

    def should_stop(self) -> bool:
        cfg = self.cfg
        if self.liveness_stop:
            return True
        if cfg.max_messages is not None and self.sent >= cfg.max_messages:
            self.stopped_by = self.stopped_by or f"{cfg.max_messages} messages"
            return True
        if cfg.budget is not None and self.started and self.elapsed >= cfg.budget:
            self.stopped_by = self.stopped_by or f"budget {cfg.budget:g} s"
            return True
        if cfg.max_runs is not None and self.runs >= cfg.max_runs:
            self.stopped_by = self.stopped_by or f"{cfg.max_runs} client runs"
            return True
        return False

    def section_extra(self) -> dict[str, Any]:
        return {"role": "client", "client_runs": self.runs, "client_runs_operating": self.runs_operating,
                "runs_ended": dict(self.ended), "answers": self.answers, "mutated_answers": self.mutated_answers,
                "client_requests": self.client_requests, "tolerated_exits": dict(self.tolerated_exits),
                "jobs": self.cfg.jobs, "round_frames": self.cfg.round_frames}


Sink = Callable[[Finding, "Frame | None", "Expect | None", "list[Frame]", dict], None]


def _parse_error_answer(p: Pend, e: Envelope) -> bool:
    """``e`` (no usable id) is the -32700 that ``p``, a message that is not JSON, asks for."""
    return p.exp.kind == UNREADABLE and not p.loose and not p.answers and e.kind is Kind.ERROR and p.exp.codes is not None \
        and e.error_code in p.exp.codes and _o.accepts_unattributed(p.exp, e)


def _parse_error_allowed(p: Pend, e: Envelope) -> bool:
    """``e`` (no usable id) is a -32700 that ``p`` may be answered with although the message read is
    JSON (its bytes as sent are not: ``Expect.parse_error_ok``)."""
    return p.exp.parse_error_ok and not p.loose and not p.answers and _o.parse_error_reply(e)


class _Seg:
    """A chunk: the messages sent since the last barrier, and the barrier behind them."""

    __slots__ = ("pends", "barrier", "sent_at", "proven_at", "unclaimed", "has_any", "has_silence", "frames")

    def __init__(self) -> None:
        self.pends: list[Pend] = []
        self.barrier: Pend | None = None
        self.sent_at = 0.0
        self.proven_at: float | None = None
        self.unclaimed: list[Envelope] = []
        self.has_any = False
        self.has_silence = False
        self.frames = 0


class _Ended(Exception):
    """The client run is over (it exited, closed the connection, or stalled)."""


class _ClientRun:
    """One start of the client: its connection read, our messages sent in chunks, judged."""

    def __init__(self, cfg: ClientFuzzConfig, client: ClientRole, n: int, sink: Sink, camp: ClientCampaign | None,
                 script: tuple[str, bytes, Any] | None = None) -> None:
        self.cfg = cfg
        self.script = script  # a replayed answer to a handshake request: (method, bytes, the id it was recorded with)
        self.script_sent = anyio.Event()
        self.client = client
        self.n = n
        self.sink = sink
        self.camp = camp
        self.version = cfg.version
        self.http = cfg.target.transport is not Transport.STDIO
        self.legacy_sse = cfg.target.transport is Transport.SSE
        self.octx = co.context(cfg.version, cfg.target.transport.value)
        self.run: ClientRun | None = None
        self.transport: Any = None
        self.server: Any = None
        self.held: collections.deque[Envelope] = collections.deque()
        self.held_changed = anyio.Event()
        self.operating = anyio.Event()
        self.initialized = False
        self.init_answered = False
        self.ended = anyio.Event()
        self.end_reason = ""
        self.finishing = False
        self.segs: collections.deque[_Seg] = collections.deque()  # barrier sent, not yet settled
        self.cur = _Seg()
        self.keyed = Keyed()
        self.suspects = Due()  # unanswered after the grace: until the final deadline
        self.room = anyio.Event()
        self.proven = anyio.Event()
        self.j = 0  # frames sent in this run
        self.k = 0  # answers given in this run
        self.b = 0  # barriers sent
        self.last_answer: Pend | None = None
        self.liveness_done = False
        self.seq = 0  # messages sent, in order
        self.pos = 0  # the latest message (send order) whose answer arrived: the client read that far
        self.floating: list[tuple[int, Envelope]] = []  # answers without a usable id, and how far the client had read
        self.outbuf = bytearray()  # stdio: the current chunk, written with its barrier
        self._tg: Any = None

    # -- start, end ------------------------------------------------------------------------

    async def open(self, tg: Any) -> None:
        """Start the client and wait for its connection; the reader and ticker run in ``tg``."""
        self._tg = tg
        from conformance.scenarios.client._server import ScenarioServer

        self.server = ScenarioServer(None, self.version)  # type: ignore[arg-type]  # default() answers only
        run = await self.client.launch(self.version, "fuzz", attach=False,
                                       answer_mode="sse" if self.http and not self.legacy_sse else "json")
        self.run = run
        self.transport = await self.client.connected(run, self.cfg.timeout, attach=False)
        if self.transport is None:
            why = f"it exited with code {run.exit_code}" if run.exit_code is not None else \
                f"it did not connect within {self.cfg.timeout:g} s"
            tail = run.tail().strip().splitlines()[-3:]
            raise TargetError(f"the client did not connect to the suite's server: {why}"
                              + (f"; its stderr ends: {' | '.join(tail)[:300]}" if tail else ""),
                              hint="pass {server} (stdio) or {url} (HTTP) where the client expects the server")
        tg.start_soon(self._reader)
        tg.start_soon(self._ticker)
        tg.start_soon(self._watch_exit)

    async def close(self) -> None:
        """End the run: every request still held answered as it should be, the client given a moment
        to exit by itself, then its process group ended."""
        self.finishing = True
        if not self.ended.is_set():
            self.liveness_done = True  # we end it: nothing to judge about how it goes
        while self.held and not self.ended.is_set():
            env = self.held.popleft()
            try:
                await self._answer(env, p_valid=1.0, judge=False)
            except (TransportError, OSError):
                break
        if self.run is not None:
            await self.client.end_client(self.run, 0.0 if self.ended.is_set() else 1.0)
            try:
                self.client.client_runs.remove(self.run)
            except ValueError:
                pass

    # -- reading ---------------------------------------------------------------------------

    async def _reader(self) -> None:
        try:
            while True:
                item = await self.transport.receive()
                env = item.envelope
                if env is None:
                    continue
                now = time.monotonic()
                for e in env.items if env.kind is Kind.BATCH else (env,):
                    if is_response(e):
                        self._on_response(e, now)
                    elif e.kind is Kind.REQUEST:
                        self._on_request(e)
                    elif e.kind is Kind.NOTIFICATION:
                        self._on_notification(e)
        except (TransportError, OSError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._end("the client closed the connection")

    async def _watch_exit(self) -> None:
        assert self.run is not None
        await self.run._exit_event.wait()
        await anyio.sleep(0.05)  # what it wrote last is still being read
        await self._end(f"the client exited (code {self.run.exit_code})")

    def _on_request(self, e: Envelope) -> None:
        if self.camp is not None:
            self.camp.client_requests += 1
        method = e.method or ""
        if method == "initialize" and isinstance(e.params, dict):
            caps = e.params.get("capabilities")
            self.octx = co.context(self.version, self.cfg.target.transport.value, caps if isinstance(caps, dict) else {})
        handshake = method in HANDSHAKE or not self.init_answered
        if handshake or method == "ping" or self.finishing:
            # the handshake's answers may be mutated (and are judged); a ping of the client's, or
            # anything once the run is finishing, is answered as it should be
            self._tg.start_soon(self._answer_now, e, 0.9 if handshake else 1.0, handshake)
            return
        if not self.operating.is_set():
            self.operating.set()  # a real request after initialize (notifications/initialized or not)
        self.held.append(e)
        self._changed()

    def _on_notification(self, e: Envelope) -> None:
        if e.method == "notifications/initialized":
            self.initialized = True
            if self.init_answered:
                self.operating.set()
        elif e.method == "notifications/cancelled" and isinstance(e.params, dict):
            rid = e.params.get("requestId", MISSING)
            for h in list(self.held):
                if same_id(h.id, rid):
                    self.held.remove(h)  # the client gave up on it: no answer ("SHOULD ignore")
                    self._changed()

    def _changed(self) -> None:
        self.held_changed.set()
        self.held_changed = anyio.Event()

    def _on_response(self, e: Envelope, now: float) -> None:
        k = co.usable_key(e.id)
        if k is not None:
            p = self.keyed.get(k)
            if p is None:
                near = self.keyed.near_miss(e)  # an id not echoed verbatim
                if near is not None:
                    p, miss = near
                    self._finding(_o.not_echoed(self.version, p.exp, e, miss, role="client"), p)
            if p is not None:
                p.answers.append(e)
                self._resolve(p.seq)
                self.pos = max(self.pos, p.seq)
                seg = p.seg
                if seg is not None and p is seg.barrier and seg.proven_at is None:
                    seg.proven_at = now
                    self._wake()
                return
            seg = next((s for s in self.segs if s.proven_at is None), None) or (self.cur if self.cur.pends else None)
            if seg is not None:
                seg.unclaimed.append(e)
            elif self.camp is not None:
                self.camp.unattributed += 1
            return
        # no usable id: attributed once the next answer with an id shows how far the client read
        self.floating.append((self.pos, e))

    def _resolve(self, upto: float) -> None:
        """Attribute the answers without a usable id that came while the client read between the
        message it had answered last and ``upto``: to a message there that may be answered so (one
        answer each: a malformed message is one message), else to a notification there (answered:
        a violation).  A client reads its input in order; where several messages could have caused
        an answer, the one that may be answered so is preferred (no finding on a guess)."""
        if not self.floating:
            return
        left = []
        pends = [p for seg in (*self.segs, self.cur) for p in seg.pends if not p.settled]
        for lo, e in self.floating:
            if upto <= lo:  # an answer to a message read before this one came: it bounds nothing here
                left.append((lo, e))
                continue
            window = [p for p in pends if lo < p.seq < upto] if upto != float("inf") else [p for p in pends if p.seq > lo]
            p = next((p for p in window if _parse_error_answer(p, e)), None) \
                or next((p for p in window if _parse_error_allowed(p, e)), None) \
                or next((p for p in window if p.exp.kind == ANY and not p.loose), None) \
                or next((p for p in window if p.exp.kind == UNREADABLE and not p.loose and not p.answers
                         and _o.accepts_unattributed(p.exp, e)), None) \
                or next((p for p in window if p.exp.kind == SILENCE), None) \
                or next((p for p in pends if _parse_error_answer(p, e)), None) \
                or next((p for p in pends if _parse_error_allowed(p, e)), None) \
                or next((p for p in pends if p.exp.kind == ANY and not p.loose), None)
            if p is None:
                if upto == float("inf") and self.camp is not None:
                    self.camp.unattributed += 1
                elif upto != float("inf"):
                    left.append((lo, e))
                continue
            if p.exp.kind in (ANY, UNREADABLE) or p.exp.parse_error_ok:
                p.loose = 1
            p.answers.append(e)
        self.floating = left if upto != float("inf") else []

    def _claim_floating(self, p: Pend) -> None:
        """An unanswered message that is not JSON (or that may be answered as such) takes an answer
        without a usable id that came after the client had answered something later (its answers
        may be POSTed out of order over HTTP): the first such answer it may be answered with that no
        message sent after what the client had answered asks for (read in order, it is that message's
        answer: taking it would leave that one unanswered).  A notification expects no answer: it
        never claims one."""
        if (p.exp.kind != UNREADABLE and not (p.exp.parse_error_ok and p.exp.kind == ANSWER)) or p.answers:
            return
        pends = [q for seg in (*self.segs, self.cur) for q in seg.pends if not q.settled and q is not p]
        for i, (lo, e) in enumerate(self.floating):
            if any(q.seq > lo and (_parse_error_answer(q, e) or (q.exp.kind == ANSWER and _parse_error_allowed(q, e))) for q in pends):
                continue
            if _o.accepts_unattributed(p.exp, e):
                del self.floating[i]
                p.loose = 1
                p.answers.append(e)
                return

    def _wake(self) -> None:
        self.room.set()
        self.room = anyio.Event()

    # -- answers ---------------------------------------------------------------------------

    def _default(self, e: Envelope) -> dict[str, Any]:
        ans = self.server.default(e)
        if e.method == "initialize" and ans.error is None:
            self.init_answered = True
            if self.initialized:
                self.operating.set()
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": e.id}
        if ans.error is not None:
            msg["error"] = ans.error
        else:
            msg["result"] = ans.result
        return msg

    async def _answer_now(self, e: Envelope, p_valid: float, handshake: bool = False) -> None:
        """A request answered at once: the handshake (a mutated answer judged: a barrier behind it,
        on stdio -- a server may ping before initialization), the client's pings, everything once
        the run is finishing."""
        data = None
        if self.script is not None and e.method == self.script[0] and not self.script_sent.is_set():
            data = substitute_id(self.script[1], self.script[2], e.id)
        try:
            pend = await self._answer(e, p_valid=p_valid, data=data,
                                      judge="mutated" if handshake and not self.http and not self.operating.is_set() else False)
            if pend is not None:
                self.last_answer = pend
                await self.close_chunk()
        except (TransportError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            if data is not None:
                self.script_sent.set()

    async def _answer(self, e: Envelope, *, p_valid: float = 0.0, judge: bool | str = True, data: bytes | None = None,
                      frame: Frame | None = None) -> Pend | None:
        """Answer the client's request ``e``: the answer drawn by :func:`answer_at` (or ``data``, a
        replayed answer); the real one behind it when the client cannot take it as its answer."""
        method = e.method or ""
        valid = self._default(e)
        valid_bytes = dumps(valid)
        drawn = frame is None and data is None and p_valid < 1.0 and not (self.camp is not None and self.camp.should_stop())
        if frame is None:
            if data is not None:
                frame = Frame(run_index(self.n, self.k), data, method, "replay", (), None, answer=True)
            elif drawn:
                frame = answer_at(self.cfg.seed, self._answer_ops(), run_index(self.n, self.k), valid, method,
                                  version=self.version, transport=self.cfg.target.transport.value, p_valid=p_valid)
            else:
                frame = Frame(run_index(self.n, self.k), valid_bytes, method, "valid", (), None, answer=True)
        self.k += 1
        mutated = frame.data != valid_bytes
        camp = self.camp
        if camp is not None and drawn:
            camp.answers += 1
            camp.sent += 1
            camp.mutated_answers += mutated
            if frame.operator in camp.by_operator:
                camp.by_operator[frame.operator]["messages"] += 1
            camp.by_method[f"answer:{method}"] += 1
        pend = None
        if judge is True or (judge == "mutated" and mutated):
            pend = Pend(frame, co.expect_answer(frame.data, self.octx, method, e.id, mutated=mutated))
            self._place(pend, frame)
        takes = _takes_as_answer(frame.data, e.id)
        t = self.transport
        if self.http and not self.legacy_sse:
            if takes:
                await t.send(frame.data)
            else:
                await t.send_within(e.id, frame.data)
                await t.send(valid_bytes)
        else:
            await t.send(frame.data)
            if not takes:
                await t.send(valid_bytes)
        return pend

    def _answer_ops(self) -> list[Operator]:
        if self.camp is not None and self.camp.answer_ops:
            return self.camp.answer_ops
        return select_operators(self.cfg.target.transport.value, ["valid"], None, use="answer")

    # -- sending frames in chunks ----------------------------------------------------------

    def _place(self, pend: Pend, frame: Frame) -> None:
        """Put ``pend`` in the current chunk and register its ids."""
        self.seq += 1
        pend.seq = self.seq
        seg = self.cur
        seg.pends.append(pend)
        pend.seg = seg
        exp = pend.exp
        seg.has_any |= exp.kind == ANY
        seg.has_silence |= exp.kind == SILENCE
        self.keyed.add(pend, replace=False)

    async def send_frame(self, frame: Frame, exps: list[Expect]) -> None:
        """Send one of our messages (a barrier closes the chunk every ``chunk`` messages)."""
        camp = self.camp
        if camp is not None:  # counted before any wait: --max-messages is exact with runs side by side
            camp.sent += 1
            if frame.operator in camp.by_operator:
                camp.by_operator[frame.operator]["messages"] += 1
            camp.by_method[frame.method] += 1
        self.j += 1
        await self._window()
        for exp in exps:
            self._place(Pend(frame, exp), frame)
        self.cur.frames += 1
        if self.http:
            await self.transport.send(frame.data)  # one SSE event each
        else:
            # stdio: the chunk goes out in one write with its barrier (one relay frame, not 33)
            self.outbuf += frame.data + b"\n"
            if len(self.outbuf) > 65536:
                await self._flush()
        if self.cur.frames >= self.cfg.chunk:
            await self.close_chunk()

    async def _flush(self, tail: bytes = b"") -> None:
        data, self.outbuf = bytes(self.outbuf) + tail, bytearray()
        if data:
            await self.transport.send_bytes(data)

    def in_flight(self) -> int:
        return sum(s.frames for s in self.segs if s.proven_at is None) + self.cur.frames

    async def _window(self) -> None:
        while not self.ended.is_set() and self.in_flight() >= self.cfg.window:
            room = self.room
            with anyio.move_on_after(0.1):
                await room.wait()
        if self.ended.is_set():
            raise _Ended(self.end_reason)

    async def close_chunk(self) -> None:
        """The barrier behind the current chunk."""
        seg = self.cur
        if not seg.pends:
            return
        self.b += 1
        bid = BARRIER_BASE + run_index(self.n, self.b)
        bframe = Frame(run_index(self.n, 900_000 + self.b), dumps({"jsonrpc": "2.0", "id": bid, "method": "ping"}), "ping", "barrier")
        self.seq += 1
        bpend = Pend(bframe, co.barrier_expect(bid), self.seq)
        bpend.seg = seg
        seg.barrier = bpend
        self.keyed.add(bpend)
        seg.sent_at = time.monotonic()
        self.segs.append(seg)
        self.cur = _Seg()
        if self.camp is not None:
            self.camp.barriers += 1
        if self.http:
            await self.transport.send(bframe.data)
        else:
            await self._flush(bframe.data + b"\n")

    async def wait_proven(self, timeout: float | None = None) -> None:
        """Until every chunk sent is proven read (the stall detector ends a run that stops)."""
        end = time.monotonic() + (timeout if timeout is not None else self.cfg.deadline + 1)
        while any(s.proven_at is None for s in self.segs) and not self.ended.is_set() and time.monotonic() < end:
            room = self.room
            with anyio.move_on_after(0.1):
                await room.wait()

    async def settle_all(self) -> None:
        """Wait out the grace of every proven chunk and judge it (and what was sent after the last
        barrier: over HTTP our last answer, which no barrier follows)."""
        end = time.monotonic() + self.cfg.grace + 0.05
        while self.segs and time.monotonic() < end:
            await anyio.sleep(0.02)
            self._settle_due(time.monotonic())
        self._settle_due(time.monotonic(), everything=True)
        if not self.ended.is_set():
            for p in self.cur.pends:
                if not p.settled and p.exp.kind == ANY:
                    self._judge(p)

    # -- judging ---------------------------------------------------------------------------

    def _finding(self, f: Finding, pend: Pend | None, *, prefix: list[Frame] | None = None, detail: dict | None = None) -> None:
        d = {"run": self.n, **(detail or {})}
        if pend is not None and pend.frame.answer:
            d.setdefault("answer_to", pend.exp.asked)
            if pend.exp.echo is not MISSING:
                d.setdefault("answer_id", dumps(pend.exp.echo).decode("utf-8"))
        self.sink(f, pend.frame if pend is not None else None, pend.exp if pend is not None else None, prefix or [], d)

    def _judge(self, p: Pend) -> None:
        p.settled = True
        if self.camp is not None and p.exp.what != "the ping sent as a barrier":
            self.camp.judged += 1
        for f in co.judge(p.exp, p.answers, self.octx, barrier="ping", grace=self.cfg.grace):
            self._finding(f, p)
        self.keyed.forget(p)

    def _settle_due(self, now: float, *, everything: bool = False) -> None:
        if everything:
            self._resolve(float("inf"))
        while self.segs and self.segs[0].proven_at is not None and (everything or self.segs[0].proven_at + self.cfg.grace <= now):
            seg = self.segs.popleft()
            self._settle(seg, now, everything=everything)
        self.suspects.settle(now, self._judge, everything=everything, early=self._answered_late)

    def _answered_late(self, p: Pend) -> bool:
        """A suspect answered after all (by an answer without a usable id it may claim now)."""
        self._claim_floating(p)
        return bool(p.answers)

    def _settle(self, seg: _Seg, now: float, *, everything: bool) -> None:
        unanswered = [p for p in seg.pends if p.exp.kind == ANSWER and not p.answers]
        # answers without a usable id taken by notifications, while requests of the chunk went
        # unanswered: more likely those requests' answers, their id not echoed
        moved = [(p, a) for p in seg.pends if p.exp.kind == SILENCE for a in p.answers
                 if not (p.exp.parse_error_ok and _o.parse_error_reply(a))]
        if moved and len(moved) <= len(unanswered):
            for (p, a), q in zip(moved, unanswered):
                p.answers.remove(a)
                q.answers.append(a)
                self._finding(_o.not_echoed(self.version, q.exp, a, q.exp.echo, role="client"), q)
            unanswered = [p for p in unanswered if not p.answers]
        paired = co.pair_unclaimed([p.exp for p in unanswered], seg.unclaimed, self.octx)
        for i, env, f in paired:
            unanswered[i].answers.append(env)
            self._finding(f, unanswered[i])
        if not paired and seg.unclaimed and self.camp is not None:
            self.camp.unattributed += len(seg.unclaimed)
        for p in seg.pends:
            self._claim_floating(p)
            if p.exp.kind in (ANSWER, UNREADABLE) and not p.answers and not everything:
                self.suspects.add(p, now + self.cfg.final)  # a late answer is still welcome
                continue
            self._judge(p)
        if seg.barrier is not None:
            self._judge(seg.barrier)

    # -- survival --------------------------------------------------------------------------

    async def _ticker(self) -> None:
        last_mem = 0.0
        while not self.ended.is_set():
            await anyio.sleep(0.05)
            now = time.monotonic()
            self._settle_due(now)
            open_segs = [s for s in self.segs if s.proven_at is None]
            if open_segs and now - open_segs[0].sent_at > self.cfg.deadline and self.run is not None \
                    and self.run.exit_code is None:
                self._liveness(stalled=now - open_segs[0].sent_at)
                await self._end(f"the client stopped answering for {now - open_segs[0].sent_at:.1f} s", kill=True)
                return
            if self.camp is not None and self.run is not None and now - last_mem >= self.cfg.memory_interval:
                last_mem = now
                kib = tree_rss_kib(self.run.pid)
                if kib is not None:
                    self.camp.memory.append((self.camp.elapsed, kib))

    async def _end(self, reason: str, *, kill: bool = False) -> None:
        if self.ended.is_set():
            return
        self.end_reason = reason
        run = self.run
        if run is not None and not kill:
            await self.client.wait_exit(run, 1.0)  # its exit code (a crash signal?)
        if not kill:
            self._liveness()
        self.ended.set()
        self._wake()

    def _unproven(self) -> list[Pend]:
        out = [p for s in self.segs if s.proven_at is None for p in s.pends]
        return out + list(self.cur.pends)

    def _liveness(self, *, stalled: float | None = None) -> None:
        if self.liveness_done:
            return
        self.liveness_done = True
        run = self.run
        unproven = self._unproven()
        # a client reads its input in order: what stopped it came after the last message it
        # answered, and no later than the next request it should have answered
        suspects = []
        for p in unproven:
            if p.seq <= self.pos:
                continue
            suspects.append(p)
            if p.exp.kind == ANSWER:
                break
        exits = run is not None and run.exit_code is not None
        crash = co.crash_signal(run.exit_code) if exits and run is not None and not run.killed_by_us else None
        if crash is not None and not suspects and self.last_answer is not None:
            suspects = [self.last_answer]
        got = co.liveness([p.exp for p in suspects], crash=crash, stalled=stalled, exited=True,
                          held=bool(self.held), returncode=run.exit_code if run is not None else None)
        for p in unproven:  # their answers are now moot (covered by the liveness judgment, or it was fine)
            p.settled = True
            self.keyed.forget(p)
        for s in self.segs:
            if s.proven_at is None and s.barrier is not None:
                s.barrier.settled = True
                self.keyed.forget(s.barrier)
        self.segs = collections.deque(s for s in self.segs if s.proven_at is not None)
        self.cur = _Seg()
        if got is None:
            if suspects and self.camp is not None and self.held:
                culprit = next((p for p in suspects if p.exp.quit_ok), suspects[-1])
                self.camp.tolerated_exits[culprit.frame.operator] += 1
            return
        f, order = got
        # a quit is charged to its likeliest message; a stall or crash to the last one, the rest
        # before it (the replays then try each alone)
        i = (order[0] if f.problem in QUIT_PROBLEMS else len(suspects) - 1) if suspects else 0
        culprit = suspects[i] if suspects else None
        prefix = [p.frame for p in suspects[:i] if not p.frame.answer] if suspects else []
        detail: dict[str, Any] = {"liveness": True, "held": bool(self.held),
                                  # the replays try these one by one, alone on a fresh client run
                                  "candidates": [suspects[j].frame for j in order if not suspects[j].frame.answer][:4],
                                  "ambiguous": len(suspects) > 1}
        if run is not None:
            detail["returncode"] = run.exit_code
            detail["stderr_tail"] = redact(run.tail()[-1500:])
        self._finding(f, culprit, prefix=prefix, detail=detail)


def _takes_as_answer(data: bytes, rid: Any) -> bool:
    """Can the client take ``data`` as the answer to its request ``rid`` (a response with exactly
    that id, result xor error)?  If not, the real answer is sent behind it (over HTTP by its id,
    which ends the request's stream; a client that did read ``data`` as its answer, its invalid
    UTF-8 replaced, gets a second answer to ignore)."""
    env = parse_envelope(data)
    return env.kind in (Kind.RESULT, Kind.ERROR) and not env.problems and same_id(env.id, rid)


# -- the campaign -------------------------------------------------------------------------------


async def _rounds(r: _ClientRun, camp: ClientCampaign) -> None:
    """The campaign's use of one run: a round of frames per request the client makes."""
    cfg = camp.cfg
    plan = camp.plan
    with anyio.move_on_after(cfg.timeout):
        async with anyio.create_task_group() as tg:
            async def until(event: Any) -> None:
                await event.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(until, r.operating)
            tg.start_soon(until, r.ended)
    if not r.operating.is_set():
        camp.ended["no session (the handshake did not finish)" if not r.ended.is_set() else "exited during the handshake"] += 1
        camp.no_session_streak += 1
        return
    camp.runs_operating += 1
    camp.no_session_streak = 0
    while not r.ended.is_set():
        if camp.should_stop() or r.j >= cfg.per_run:
            camp.ended["quota" if r.j >= cfg.per_run else "campaign over"] += 1
            return
        if not r.held:
            # wait for the client's next request; on stdio fuzz an idle client anyway
            changed = r.held_changed
            with anyio.move_on_after(0.3 if not r.http else cfg.hold):
                async with anyio.create_task_group() as tg:
                    async def until(event: Any) -> None:
                        await event.wait()
                        tg.cancel_scope.cancel()

                    tg.start_soon(until, changed)
                    tg.start_soon(until, r.ended)
            if r.ended.is_set():
                break
            if not r.held and (r.http or plan is None):  # nothing to hold, nothing to send meanwhile
                camp.ended["idle (no request to hold)"] += 1
                return
        t0 = time.monotonic()
        sent = 0
        if plan is not None:
            while sent < cfg.round_frames and r.j < cfg.per_run and time.monotonic() - t0 < cfg.hold and not camp.should_stop():
                frame = frame_at(plan, run_index(r.n, r.j))
                await r.send_frame(frame, co.expect(frame.data, r.octx))
                sent += 1
            await r.close_chunk()
            await r.wait_proven()
        if r.ended.is_set():
            break
        if r.held:
            env = r.held.popleft()
            r.last_answer = await r._answer(env)
            if not r.http:
                await r.close_chunk()
                await r.wait_proven()
    camp.ended[r.end_reason.split(" (")[0] if r.end_reason else "ended"] += 1


async def run_client_campaign(cfg: ClientFuzzConfig) -> ClientCampaign:
    """Run one client campaign: client runs until the budget ends; returns its results (findings
    not yet shrunk).  Raises TargetError when the client cannot be started at all."""
    transport = cfg.target.transport.value
    why = co.unsupported(cfg.version)
    if why is not None:
        raise ValueError(why)
    s2c_ops = select_operators(transport, list(cfg.ops) or None, list(cfg.exclude_ops) or None, use="s2c")
    answer_ops = select_operators(transport, list(cfg.ops) or None, list(cfg.exclude_ops) or None, use="answer")
    if not s2c_ops and not answer_ops:
        raise ValueError("no fuzz operator selected")
    camp = ClientCampaign(cfg, s2c_ops, answer_ops)
    camp.corpus = build_client_corpus(cfg.version)
    camp.plan = Plan(cfg.seed, camp.corpus, s2c_ops, transport) if s2c_ops else None
    if not answer_ops:  # --ops without any answer operator: the answers stay valid
        camp.answer_ops = select_operators(transport, ["valid"], None, use="answer")

    def sink(f: Finding, frame: Frame | None, exp: Expect | None, prefix: list[Frame], detail: dict) -> None:
        camp.record(f, frame, exp, prefix=prefix, detail=detail)

    run = client_run(cfg.target, versions=[cfg.version], timeout=cfg.deadline, jobs=cfg.jobs)
    first_error: list[BaseException] = []
    connected = [0]
    async with anyio.create_task_group() as host:
        await host.start(run.start)
        try:
            camp.started = time.monotonic()
            slots = anyio.Semaphore(max(1, cfg.jobs))
            failures = [0]

            async def one(n: int) -> None:
                try:
                    async with anyio.create_task_group() as tg:
                        r = _ClientRun(cfg, run.role, n, sink, camp)
                        try:
                            await r.open(tg)
                            connected[0] += 1
                            await _rounds(r, camp)
                        except (_Ended, TransportError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                            camp.ended[r.end_reason.split(" (")[0] or "connection lost"] += 1
                        except TargetError as exc:
                            failures[0] += 1
                            if not first_error:
                                first_error.append(exc)
                            camp.errors.append(str(exc))
                        finally:
                            with anyio.CancelScope(shield=True):
                                await r.settle_all()
                                await r.close()
                            tg.cancel_scope.cancel()
                finally:
                    slots.release()

            async def progress() -> None:
                while True:
                    await anyio.sleep(cfg.progress_interval)
                    if cfg.progress is not None:
                        cfg.progress(camp)

            async with anyio.create_task_group() as runs:
                runs.start_soon(progress)
                while True:
                    await slots.acquire()
                    if camp.should_stop() or (failures[0] >= 3 and not connected[0]) or failures[0] >= 20 \
                            or camp.no_session_streak >= MAX_NO_SESSION:
                        slots.release()
                        break
                    camp.runs += 1
                    runs.start_soon(one, camp.runs - 1)
                # the runs under way finish (bounded by their own deadlines)
                for _ in range(max(1, cfg.jobs)):
                    await slots.acquire()
                runs.cancel_scope.cancel()
        finally:
            camp.finished = time.monotonic()
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.6)  # the last client's pipes drained and its process reaped by the run
                await run.aclose()
            host.cancel_scope.cancel()
    if not connected[0] and first_error:
        raise first_error[0]
    if connected[0] and not camp.runs_operating and not camp.liveness_stop:
        # (a client that crashed on our handshake answers every time is a finding, not unfuzzable)
        raise TargetError(f"the client never finished the handshake with the suite's server for {cfg.version} "
                          f"({camp.runs} runs: {', '.join(f'{k} x{v}' for k, v in camp.ended.items())})",
                          hint="pick a --version the client supports; run `mcp-conformance client` to see where it stops")
    if camp.no_session_streak >= MAX_NO_SESSION:
        camp.stopped_by = camp.stopped_by or f"{MAX_NO_SESSION} client runs in a row did not get past the handshake"
    return camp


# -- one run driven by hand (replays, shrinking) ----------------------------------------------------


class ClientSession:
    """A client run for replays: the handshake answered as it should be, the client's first request
    after it held; :meth:`replay` sends frames (or an answer) with a barrier behind and returns the
    findings.  Use ``async with ClientSession(cfg, client) as s``."""

    def __init__(self, cfg: ClientFuzzConfig, client: ClientRole, n: int = 0, *,
                 script: tuple[str, bytes, Any] | None = None) -> None:
        self.cfg = cfg
        self.client = client
        self.n = n
        self.script = script  # (method, bytes, recorded id): the answer to the client's handshake request
        self.found: list[tuple[Finding, Frame | None]] = []
        self.r: _ClientRun | None = None
        self._tg: Any = None
        self._cm: Any = None

    def _sink(self, f: Finding, frame: Frame | None, exp: Expect | None, prefix: list[Frame], detail: dict) -> None:
        if frame is not None and frame.operator == "barrier" and not detail.get("liveness"):
            return  # about this session's own barrier ping, not the message replayed
        self.found.append((f, frame))

    async def __aenter__(self) -> "ClientSession":
        self._cm = anyio.create_task_group()
        self._tg = await self._cm.__aenter__()
        self.r = _ClientRun(self.cfg, self.client, self.n, self._sink, None, script=self.script)
        try:
            await self.r.open(self._tg)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        r = self.r
        with anyio.CancelScope(shield=True):
            if r is not None:
                await r.close()
        self._tg.cancel_scope.cancel()
        await self._cm.__aexit__(None, None, None)

    @property
    def alive(self) -> bool:
        return self.r is not None and not self.r.ended.is_set()

    async def _wait_held(self, method: str | None, timeout: float) -> Envelope | None:
        r = self.r
        assert r is not None
        end = time.monotonic() + timeout
        while not r.ended.is_set() and time.monotonic() < end:
            for env in list(r.held):
                if method is None or env.method == method:
                    return env
            if method is not None and r.held:  # not the one we want: answered as it should be
                env = r.held.popleft()
                await r._answer(env, p_valid=1.0, judge=False)
                continue
            changed = r.held_changed
            with anyio.move_on_after(min(0.3, max(0.0, end - time.monotonic()))):
                await changed.wait()
            if method is None and not r.http and r.operating.is_set() and not r.held:
                return None  # stdio: an idle client is fuzzed as it is
        return None

    async def replay_handshake(self) -> list[Finding]:
        """The session was started with ``script``: its answer went to the client's handshake request
        with a barrier behind; what followed (the client goes on, leaves, stalls or crashes)."""
        r = self.r
        assert r is not None
        with anyio.move_on_after(self.cfg.timeout):
            async with anyio.create_task_group() as tg:
                async def until(event: Any) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(until, r.script_sent)
                tg.start_soon(until, r.ended)
        await r.wait_proven()
        if not r.ended.is_set():
            await r.settle_all()
        else:
            r._settle_due(time.monotonic(), everything=True)
        return [f for f, _ in self.found]

    async def replay(self, data: bytes, prefix: list[bytes] = (), *, answer_to: str | None = None,
                     answer_id: Any = MISSING, grace: float | None = None) -> list[Finding]:
        """Send ``prefix`` then ``data`` (or, with ``answer_to``, answer the client's next request of
        that method with ``data``), a barrier behind, and return what the oracle found."""
        r = self.r
        assert r is not None
        self.found = []
        if grace is not None:
            r.cfg = _with(r.cfg, grace=grace)
        held = await self._wait_held(answer_to, self.cfg.timeout)
        if r.ended.is_set():
            return [f for f, _ in self.found]
        try:
            if answer_to is not None:
                if held is None:
                    return []
                r.held.remove(held)
                # the client's id in the recorded answer is replaced by this run's id (same method)
                text = substitute_id(data, answer_id, held.id) if answer_id is not MISSING else data
                r.last_answer = await r._answer(held, data=text, judge=True)
            else:
                for i, p in enumerate(prefix):
                    fr = Frame(run_index(self.n, 800_000 + i), p, "", "prefix")
                    await r.send_frame(fr, co.expect(p, r.octx))
                fr = Frame(run_index(self.n, 700_000 + r.j), data, "", "replay")
                await r.send_frame(fr, co.expect(data, r.octx))
            await r.close_chunk()
            await r.wait_proven()
        except (_Ended, TransportError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        if not r.ended.is_set():
            await r.settle_all()
        else:
            r._settle_due(time.monotonic(), everything=True)
        return [f for f, _ in self.found]


def _with(cfg: ClientFuzzConfig, **kw: Any) -> ClientFuzzConfig:
    from dataclasses import replace

    return replace(cfg, **kw)


def substitute_id(data: bytes, recorded: Any, current: Any) -> bytes:
    """A recorded answer's bytes with the client's request id of the recording replaced by the id
    of the request it answers now (byte-exact when a deterministic client uses the same id)."""
    if same_id(recorded, current):
        return data
    old, new = dumps(recorded), dumps(current)
    return data.replace(b'"id":' + old, b'"id":' + new, 1)
