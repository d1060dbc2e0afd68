"""The raw peer: send anything, expect with deadlines, record a transcript.

The send side is raw.  ``send_bytes``/``send_raw`` put bytes on the wire verbatim,
``send_json`` any JSON value, ``request`` takes explicit ids of any JSON type (``null``,
duplicates, ``"7"`` next to ``7``).  Requests we send are remembered by id (keyed by exact JSON
type) so a response can be validated against the result definition of the method it answers.

The receive side never assumes the next message answers the last request.  A background reader
parses, validates and records every inbound message and keeps it in a buffer; ``expect_*``
take the first unconsumed message that matches and wait (with a deadline) for one otherwise.
Notifications and server requests that arrive meanwhile stay in the buffer for later
expectations.  Every message stays in :attr:`RawPeer.inbound` and the transcript, consumed or
not, so checks can still see a duplicate response.

Requests from the other side are answered automatically unless a scenario waits for them
(``expect_request``) or registered a handler (``on_request``): ``ping`` -> ``{}``,
``roots/list`` -> ``{"roots": []}`` when we declared ``roots``, anything else -> -32601.  As a
server (``role="server"``), only ``ping`` is answered; other requests are held for the scenario.

Expectation failures are :class:`PeerError` subclasses; scenarios turn them into verdicts.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from typing import Any, Callable

import anyio

from conformance import __version__
from conformance.schema.findings import Finding
from conformance.spec import methods as _methods
from conformance.spec.versions import spec
from conformance.wire.transcript import Direction, Transcript, TranscriptEntry
from conformance.transports.base import Inbound, PeerSilent, Transport, TransportClosed, TransportError
from conformance.transports.procstat import busy
from conformance.wire.envelope import MISSING, Envelope, Kind, dumps, id_repr, parse_envelope, same_id
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY

__all__ = [
    "AUTO",
    "HOLD",
    "PeerError",
    "ExpectTimeout",
    "UnexpectedMessage",
    "ConnectionLost",
    "ErrorResponse",
    "RawPeer",
    "describe",
]


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        return self._name


AUTO: Any = _Sentinel("AUTO")
"""Default for ``id`` (a fresh unique integer) and ``meta`` (the automatic ``_meta`` fields)."""

HOLD: Any = None
"""``on_request(method, HOLD)``: never answer ``method`` automatically; keep it for ``expect_request``."""


_DEFAULT_CLIENT_INFO = {"name": "mcp-conformance", "version": __version__}
_SEEN_LIMIT = 8
_BUSY_SLICE = 1.0  # s: how often a silent, starting process's CPU use is looked at
_STDERR_TAIL_CHARS = 600


# --------------------------------------------------------------------------------------------
# errors


class PeerError(Exception):
    """An expectation about the other side failed.  Scenarios turn these into verdicts."""


class ExpectTimeout(PeerError):
    """Nothing matching arrived before the deadline.

    ``what`` describes what we waited for, ``waited`` the seconds we waited, ``seen`` the
    envelopes that arrived meanwhile (consumed or not)."""

    def __init__(self, what: str, waited: float, seen: list[Envelope], *, detail: str = "") -> None:
        self.what = what
        self.waited = waited
        self.seen = seen
        self.detail = detail
        super().__init__(f"timed out after {waited:.3g} s waiting for {what}{detail}")


class UnexpectedMessage(PeerError):
    """A message arrived that the scenario did not allow (``expect_silence``, ``expect_error``...)."""

    def __init__(self, envelope: Envelope, why: str) -> None:
        self.envelope = envelope
        self.why = why
        super().__init__(f"{why}: {describe(envelope)}")


class ConnectionLost(PeerError):
    """The connection ended while we waited (or sent).  ``cause`` is the TransportClosed /
    ProcessExited with its exit code and stderr tail."""

    def __init__(self, cause: BaseException, *, what: str | None = None) -> None:
        self.cause = cause
        self.what = what
        text = "connection lost"
        if what:
            text += f" while waiting for {what}"
        text += f": {cause}"
        returncode = getattr(cause, "returncode", None)
        if returncode is not None:
            text += f" (exit code {returncode})"
        tail = getattr(cause, "stderr_tail", "") or ""
        if tail:
            tail = tail[-_STDERR_TAIL_CHARS:]
            text += f"; stderr tail:\n{tail}"
        super().__init__(text)


class ErrorResponse(PeerError):
    """``call``/``expect_result`` got an error response."""

    def __init__(self, envelope: Envelope, *, method: str | None = None) -> None:
        self.envelope = envelope
        err = envelope.error if isinstance(envelope.error, dict) else {}
        self.code = err.get("code", MISSING)
        self.message = err.get("message", MISSING)
        self.method = method
        what = f"{method} (id {id_repr(envelope.id)})" if method else f"request {id_repr(envelope.id)}"
        code = "<none>" if self.code is MISSING else self.code
        message = "" if self.message is MISSING else f" {self.message}"
        super().__init__(f"{what} failed: error {code}{message}")


# --------------------------------------------------------------------------------------------
# helpers


def describe(env: Envelope | None) -> str:
    """A one-line description of a message for error texts: ``result id=3``, ``notification x``."""
    if env is None:
        return "an unreadable frame"
    kind = env.kind
    if kind is Kind.REQUEST:
        return f"request {env.method} id={id_repr(env.id)}"
    if kind is Kind.NOTIFICATION:
        return f"notification {env.method}"
    if kind is Kind.RESULT:
        return f"result id={id_repr(env.id)}"
    if kind is Kind.ERROR:
        code = env.error_code
        return f"error id={id_repr(env.id)} code={'<none>' if code is MISSING else code}"
    if kind is Kind.BATCH:
        return f"batch of {len(env.items)} [" + ", ".join(describe(i) for i in env.items[:4]) + (", ..." if len(env.items) > 4 else "") + "]"
    if kind is Kind.PARSE_ERROR:
        return f"unparseable message ({env.problems[0] if env.problems else 'not JSON'})"
    problem = env.problems[-1] if env.problems else "not a JSON-RPC message"
    if env.id is not MISSING:
        return f"invalid message id={id_repr(env.id)} ({problem})"
    return f"invalid message ({problem})"


def _key(value: Any) -> Any:
    """A dict key for an id that keeps its JSON type: ``"7"``, ``7``, ``7.0`` and ``true`` differ.
    (Hot paths inline the common case: ``(type(v), v)`` for an int or a str.)"""
    t = type(value)
    if t is dict or t is list:
        return (t, dumps(value) if t is list else dumps(dict(sorted(value.items()))))
    return (t, value)


def _is_response(env: Envelope) -> bool:
    kind = env.kind
    if kind is Kind.RESULT or kind is Kind.ERROR:
        return True
    if kind is Kind.INVALID and env.method is None and isinstance(env.value, dict):
        value = env.value
        return "method" not in value and ("id" in value or "result" in value or "error" in value)
    return False


class _Rec:
    """One buffered message (a top-level envelope or a member of a batch)."""

    __slots__ = ("n", "env", "entry", "consumed", "response", "top", "key")

    def __init__(self, n: int, env: Envelope, entry: TranscriptEntry, response: bool, top: bool, key: Any) -> None:
        self.n = n
        self.env = env
        self.entry = entry
        self.consumed: str | None = None
        self.response = response
        self.top = top
        self.key = key  # _key(env.id) for a response, else None


class _Waiter:
    """One pending expectation: woken by the reader (a match, or the close) or by its deadline."""

    __slots__ = ("match", "rec", "error", "_woken", "_event", "_future")

    def __init__(self, match: Callable[[_Rec], bool]) -> None:
        self.match = match
        self.rec: _Rec | None = None
        self.error: BaseException | None = None
        self._woken = False
        self._event: anyio.Event | None = None
        self._future: asyncio.Future[None] | None = None

    def matches(self, rec: _Rec) -> bool:
        """``match(rec)``; a predicate that raises is the scenario's bug: kept in ``error``."""
        try:
            return self.match(rec)
        except Exception as exc:
            self.error = exc
            return False

    def wake(self) -> None:
        self._woken = True
        future = self._future
        if future is not None:
            if not future.done():
                future.set_result(None)
        elif self._event is not None:
            self._event.set()

    async def wait(self, timeout: float, deadlines: "_Deadlines | None" = None) -> None:
        """Until woken or ``timeout`` seconds passed (cancellable like any anyio wait).

        On asyncio, with ``deadlines`` (the peer's shared timer), the deadline costs no timer of
        its own."""
        if self._woken:
            return
        if deadlines is not None:  # asyncio, the loop the peer runs in
            future = self._future = deadlines.loop.create_future()
            if timeout != math.inf:
                deadlines.add(self, deadlines.loop.time() + timeout)
            try:
                await future
            finally:
                deadlines.discard(self)
            return
        loop = _asyncio_loop()
        if loop is None:
            self._event = anyio.Event()
            with anyio.move_on_after(timeout):
                await self._event.wait()
            return
        # On asyncio a future and a timer cost a fraction of an Event plus a cancel scope.
        future = self._future = loop.create_future()
        handle = loop.call_later(timeout, _resolve, future) if timeout != math.inf else None
        try:
            await future
        finally:
            if handle is not None:
                handle.cancel()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Deadlines:
    """The deadlines of one peer's pending waits, on one asyncio timer.

    The timer is re-armed only for a deadline earlier than the one it is armed for, so
    back-to-back waits with the same timeout (a round trip after a round trip) schedule no timer
    each; when it fires it ends the waits that are due and re-arms for the next deadline."""

    __slots__ = ("loop", "_due", "_handle", "_at")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._due: dict[_Waiter, float] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._at = math.inf

    def add(self, waiter: _Waiter, deadline: float) -> None:
        self._due[waiter] = deadline
        if deadline < self._at:
            if self._handle is not None:
                self._handle.cancel()
            self._handle = self.loop.call_at(deadline, self._fire)
            self._at = deadline

    def discard(self, waiter: _Waiter) -> None:
        self._due.pop(waiter, None)

    def _fire(self) -> None:
        self._handle = None
        self._at = math.inf
        now = self.loop.time()
        due = self._due
        expired = [w for w, d in due.items() if d <= now]
        for w in expired:
            del due[w]
            future = w._future
            if future is not None:
                _resolve(future)
        if due:
            at = min(due.values())
            self._handle = self.loop.call_at(at, self._fire)
            self._at = at

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
            self._at = math.inf


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop when anyio runs on asyncio, else ``None`` (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_validate_fn: Callable[..., list[Finding]] | None = None


def _load_validator() -> tuple[Callable[..., list[Finding]] | None, str | None]:
    """``conformance.schema.validate.validate`` (imported lazily, and retried until it imports)."""
    global _validate_fn
    if _validate_fn is None:
        try:
            from conformance.schema.validate import validate
        except Exception as exc:
            return None, f"schema validation unavailable: cannot import conformance.schema.validate ({exc})"
        _validate_fn = validate
    return _validate_fn, None


# --------------------------------------------------------------------------------------------
# the peer


class RawPeer:
    """A JSON-RPC peer that sends anything and expects with deadlines.  Use ``async with``."""

    def __init__(
        self,
        transport: Transport,
        *,
        version: str,
        timeout: float = 10.0,
        role: str = "client",
        validate: bool = True,
        auto_meta: bool = True,
        capabilities: dict | None = None,
        client_info: dict | None = None,
    ) -> None:
        if role not in ("client", "server"):
            raise ValueError(f"role must be 'client' or 'server', not {role!r}")
        self.transport = transport
        self.version = version
        self.vspec = spec(version)
        self.timeout = timeout
        self.role = role
        self.validate = validate
        self.auto_meta = auto_meta
        self.capabilities: dict = {} if capabilities is None else capabilities
        self.client_info: dict = dict(_DEFAULT_CLIENT_INFO) if client_info is None else client_info
        self.transcript = Transcript()
        self.inbound: list[Inbound] = []
        #: set by :meth:`initialize` on success
        self.negotiated_version: str | None = None
        self.server_capabilities: dict | None = None
        self.server_info: dict | None = None
        self.initialize_result: Any = MISSING
        #: what the transport returned for the last send (an HttpExchange on HTTP)
        self.last_exchange: Any = None
        #: why schema validation stopped (e.g. the schema could not be loaded), if it did
        self.validation_problem: str | None = None
        #: the wait for the first message from a peer that has said nothing yet (a stdio server
        #: still starting); None: the per-answer ``timeout`` from the start
        self.first_timeout: float | None = None
        #: the CPU seconds the peer's process has used so far (None: unknown), set for a process
        #: we started: while nothing has arrived, a wait that ends with that process still busy
        #: (starting on a loaded machine, not silent) goes on, a second at a time, up to
        #: ``first_cap`` seconds in all
        self.startup_cpu: Callable[[], float | None] | None = None
        self.first_cap: float = 0.0

        self._direction = _methods.S2C if role == "client" else _methods.C2S  # what we receive
        self._validator: Callable[..., list[Finding]] | None = None
        if validate:
            self._validator, self.validation_problem = _load_validator()
        self._stateless = self.vspec.stateless and role == "client"

        self._sent: dict[Any, str] = {}  # _key(id) -> method of requests we sent
        self._next_id = 1
        self._handlers: dict[str, Any] = {}

        self._recs: list[_Rec] = []  # every buffered message, in arrival order (top-level and batch members)
        self._tops: list[_Rec] = []  # top-level messages only, in arrival order
        self._pending: dict[int, _Rec] = {}  # unconsumed, by arrival number
        self._responses: dict[Any, list[_Rec]] = {}  # unconsumed responses by _key(id)
        self._by_method: dict[str, list[_Rec]] = {}  # unconsumed requests/notifications by method
        self._by_env: dict[int, _Rec] = {}  # id(envelope) -> rec
        self._waiters: list[_Waiter] = []
        self._timer: _Deadlines | None = None  # the deadlines of pending waits (asyncio)
        self._observers: list[_Waiter] = []
        self._last_send_n = 0  # arrival counter when we last sent something

        self._closed: BaseException | None = None
        self._closed_event: anyio.Event | None = None  # created on entering (needs a running loop)
        self._reader_error: BaseException | None = None
        self._tg: Any = None
        self._entered = False
        self._exited = False

        prior = transport.events
        self._prior_events = prior
        transport.events = self._on_transport_event

    #: the options of :meth:`configure`: what the client sends and checks, not how it connects
    CLIENT_SIDE_OPTIONS = frozenset({"validate", "auto_meta", "capabilities", "client_info"})

    def configure(self, **opts: Any) -> None:
        """Set options of :data:`CLIENT_SIDE_OPTIONS` after construction, as the constructor would
        have -- on a peer that has neither sent nor received anything yet (a process started
        ahead of time, before the scenario that takes it said what it needs)."""
        unknown = set(opts) - self.CLIENT_SIDE_OPTIONS
        if unknown:
            raise TypeError(f"configure(): not a client-side option: {', '.join(sorted(unknown))}")
        if self.inbound or any(e.direction == Direction.OUT for e in self.transcript.entries):
            raise RuntimeError("configure() is for a peer that has not exchanged anything yet")
        if "validate" in opts:
            self.validate = bool(opts["validate"])
            self._validator, self.validation_problem = _load_validator() if self.validate else (None, None)
        if "auto_meta" in opts:
            self.auto_meta = bool(opts["auto_meta"])
        if "capabilities" in opts:
            self.capabilities = {} if opts["capabilities"] is None else opts["capabilities"]
        if "client_info" in opts:
            self.client_info = dict(_DEFAULT_CLIENT_INFO) if opts["client_info"] is None else opts["client_info"]

    # ---------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> "RawPeer":
        if self._entered:
            raise RuntimeError("a RawPeer can be entered only once")
        self._entered = True
        self._closed_event = anyio.Event()
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        try:
            await self.transport.start()
            tg.start_soon(self._reader)
        except BaseException as exc:
            self._exited = True
            await self._close_transport()
            await self._leave_task_group(exc)
            raise
        return self

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        await self._exit(exc)

    async def aclose(self) -> None:
        """Close the transport and stop the reader (what leaving ``async with`` does).  Call it
        from the task that entered the peer, outside any cancel scope opened since."""
        await self._exit(None)

    def _deadlines(self) -> _Deadlines | None:
        """The shared deadline timer of this peer on the running asyncio loop (None on trio)."""
        timer = self._timer
        if timer is None:
            loop = _asyncio_loop()
            if loop is None:
                return None
            timer = self._timer = _Deadlines(loop)
        return timer

    async def _exit(self, exc: BaseException | None) -> None:
        if self._exited or self._tg is None:
            return
        self._exited = True
        if self._timer is not None:
            self._timer.close()
        if self._closed is None:
            self.transcript.note("closing the connection")
        await self._close_transport()
        await self._leave_task_group(exc)

    async def _leave_task_group(self, exc: BaseException | None) -> None:
        """Stop the reader and leave our task group without wrapping the caller's exception in an
        ExceptionGroup (the reader itself never raises).  A cancellation is handed to the group so
        its scope can tell its own cancellation from an outer one."""
        tg = self._tg
        tg.cancel_scope.cancel()
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            await tg.__aexit__(type(exc), exc, exc.__traceback__)
        else:
            await tg.__aexit__(None, None, None)

    async def _close_transport(self) -> None:
        # No cancel scope of our own around aclose(): a transport may exit a task group it
        # entered in start() (stdio does), which anyio allows only when that group's scope is the
        # current one.  Transports shield and bound their own cleanup (Transport.aclose contract).
        try:
            await self.transport.aclose()
        except Exception as exc:  # aclose never raises by contract; don't let a bug hang us
            self.transcript.note(f"transport close failed: {exc!r}")

    @property
    def closed(self) -> BaseException | None:
        """The TransportClosed (or ProcessExited) once the connection ended, else ``None``."""
        return self._closed

    # ---------------------------------------------------------------- send side

    async def send_bytes(self, data: bytes) -> None:
        """Write exactly ``data`` (stdio: no newline added; may hold several or partial lines)."""
        data = bytes(data)
        sender = getattr(self.transport, "send_bytes", None)
        if sender is None:
            raise TypeError(f"the {self.transport.name} transport cannot send unframed bytes; use send_raw")
        env: Envelope | None = None
        lines = data.split(b"\n")
        complete = lines[:-1] if len(lines) > 1 else lines
        for line in complete:
            if line.strip():
                line_env = parse_envelope(line.rstrip(b"\r"))
                self._track(line_env)
                if len(complete) == 1:
                    env = line_env
        self.transcript.outbound(data, env, {"unframed": True})
        self._last_send_n = len(self._recs)
        try:
            await sender(data)
        except TransportClosed as exc:
            raise self._lost_on_send(exc) from exc

    async def send_raw(self, body: bytes, **opts: Any) -> Any:
        """Send one framed message whose body is exactly ``body``; returns what the transport
        returned (an HttpExchange on HTTP)."""
        body = bytes(body)
        env = parse_envelope(body)
        self._track(env)
        return await self._send(body, env, opts)

    async def send_json(self, value: Any, **opts: Any) -> Any:
        """Send any JSON value (an object, a batch array, a bare string...) as one message."""
        return await self.send_raw(dumps(value), **opts)

    async def request(self, method: str, params: Any = MISSING, *, id: Any = AUTO, meta: Any = AUTO, **opts: Any) -> Any:
        """Send a request and return its id.

        ``id``: AUTO (a fresh unique integer) or any JSON value, sent verbatim.  ``meta``: with a
        stateless version, AUTO adds the required per-request ``_meta`` fields, ``None`` adds
        nothing (to test a missing ``_meta``), a dict adds its keys on top (for any version).
        Keys already in ``params["_meta"]`` always win."""
        if id is AUTO:
            n = self._next_id
            if (int, n) in self._sent:
                n = self._fresh_id()
            else:
                self._next_id = n + 1
            id = n
        if meta is not None and (meta is not AUTO or (self._stateless and self.auto_meta)):
            params = self._with_meta(params, meta)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not MISSING:
            msg["params"] = params
        body = dumps(msg)
        env = Envelope(body, Kind.REQUEST, msg, id, method, params)
        t = type(id)
        self._sent[(t, id) if t is int or t is str else _key(id)] = method
        await self._send(body, env, opts)
        return id

    async def notify(self, method: str, params: Any = MISSING, **opts: Any) -> None:
        """Send a notification (no ``_meta`` is added)."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not MISSING:
            msg["params"] = params
        body = dumps(msg)
        env = Envelope(raw=body, kind=Kind.NOTIFICATION, value=msg, method=method, params=params)
        await self._send(body, env, opts)

    async def respond(self, id: Any, result: Any, **opts: Any) -> None:
        """Send a result response with exactly this id."""
        msg = {"jsonrpc": "2.0", "id": id, "result": result}
        body = dumps(msg)
        await self._send(body, Envelope(raw=body, kind=Kind.RESULT, value=msg, id=id, result=result), opts)

    async def respond_error(self, id: Any, code: Any, message: Any, data: Any = MISSING, **opts: Any) -> None:
        """Send an error response with exactly this id, code and message."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not MISSING:
            error["data"] = data
        msg = {"jsonrpc": "2.0", "id": id, "error": error}
        body = dumps(msg)
        await self._send(body, Envelope(raw=body, kind=Kind.ERROR, value=msg, id=id, error=error), opts)

    def on_request(self, method: str, handler: Callable[[Envelope], Any] | None = HOLD) -> None:
        """Decide how requests for ``method`` from the other side are handled.

        ``HOLD`` (``None``): never answer automatically; the request waits for ``expect_request``.
        A callable: called with the request envelope (it may be async and must not wait for
        messages); its return value is sent as the result, unless it returns ``HOLD``.
        Register before triggering the request: one that arrives earlier is answered already."""
        self._handlers[method] = handler

    def _fresh_id(self) -> int:
        n = self._next_id
        sent = self._sent
        while (int, n) in sent:
            n += 1
        self._next_id = n + 1
        return n

    def _with_meta(self, params: Any, meta: Any) -> Any:
        if meta is None:
            return params
        fields: dict[str, Any] | None = None
        if meta is AUTO:
            if not (self._stateless and self.auto_meta):
                return params
            fields = self._auto_meta()
        elif isinstance(meta, dict):
            fields = {**self._auto_meta(), **meta} if (self._stateless and self.auto_meta) else dict(meta)
        else:
            raise TypeError(f"meta must be AUTO, None or a dict, not {type(meta).__name__}")
        if params is MISSING:
            return {"_meta": fields}
        if not isinstance(params, dict):
            return params  # raw params (an array, a string...) are sent as given
        given = params.get("_meta", MISSING)
        if given is MISSING:
            return {**params, "_meta": fields}
        if isinstance(given, dict):
            return {**params, "_meta": {**fields, **given}}
        return params  # a non-object _meta is a deliberate test: leave it alone

    def _auto_meta(self) -> dict[str, Any]:
        return {
            PROTOCOL_VERSION_KEY: self.version,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
            CLIENT_INFO_KEY: self.client_info,
        }

    def _track(self, env: Envelope) -> None:
        """Remember the method of every request in an outbound message (batches included)."""
        if env.kind is Kind.REQUEST:
            self._sent[_key(env.id)] = env.method  # type: ignore[assignment]
        elif env.kind is Kind.BATCH:
            for item in env.items:
                if item.kind is Kind.REQUEST:
                    self._sent[_key(item.id)] = item.method  # type: ignore[assignment]

    async def _send(self, body: bytes, env: Envelope | None, opts: dict[str, Any], *, auto: str | None = None) -> Any:
        meta: dict[str, Any] = {}
        if opts:
            meta["opts"] = opts
        if auto:
            meta["auto_reply"] = auto
        entry = self.transcript.outbound(body, env, meta)
        if auto is None:
            self._last_send_n = len(self._recs)
        started = time.monotonic()
        try:
            result = await self.transport.send(body, **opts)
        except TransportClosed as exc:
            raise self._lost_on_send(exc) from exc
        except PeerSilent as exc:
            raise self._silent_on_send(env, exc, time.monotonic() - started) from exc
        if result is not None:
            self.last_exchange = result
            stream = getattr(result, "stream", None)
            if stream is not None:
                entry.meta["stream"] = stream
                status = getattr(result, "status", None)
                if status is not None:
                    entry.meta["http_status"] = status
            if getattr(result, "stalled", False) and env is not None and env.kind is Kind.REQUEST:
                partial = parse_envelope(result.body) if result.body else None
                if partial is None or partial.kind not in (Kind.RESULT, Kind.ERROR, Kind.BATCH):
                    # the body that was to carry the answer never ended: that answer is not coming
                    raise self._silent_on_send(env, PeerSilent("; ".join(result.problems[-1:])), time.monotonic() - started)
        return result

    def _silent_on_send(self, env: Envelope | None, exc: BaseException, waited: float) -> ExpectTimeout:
        """The peer left the message we sent unanswered at the transport level (HTTP: no response
        headers, or a body that never ended, within the timeout): the same silence as a response
        that never comes, so the same ExpectTimeout, never a failure of ours."""
        self.transcript.note(f"no answer: {exc}")
        if env is not None and env.kind is Kind.REQUEST:
            what = self._request_label(env.id)
        elif env is not None and env.kind is Kind.NOTIFICATION:
            what = f"the HTTP response to notification {env.method}"
        else:
            what = "the HTTP response to the message sent"
        return ExpectTimeout(what, waited, [], detail=f"; {exc}")

    def _lost_on_send(self, exc: TransportClosed) -> ConnectionLost:
        self.transcript.note(f"send failed, connection closed: {exc}")
        return ConnectionLost(self._closed or exc, what=None)

    # ---------------------------------------------------------------- receive side

    def _on_transport_event(self, text: str, meta: dict[str, Any]) -> None:
        self.transcript.note(text, meta)
        if self._prior_events is not None:
            self._prior_events(text, meta)

    async def _reader(self) -> None:
        receive = self.transport.receive
        try:
            while True:
                item = await receive()
                todo = self._handle(item)
                if todo is None:
                    continue
                if type(todo) is list:  # a batch: each member offered, then answered, in order
                    for rec in todo:
                        if self._offer(rec):
                            await self._answer(rec)
                else:  # a request from the other side that nobody took
                    await self._answer(todo)
        except TransportClosed as exc:
            self._mark_closed(exc)
        except TransportError as exc:
            closed = TransportClosed(f"transport failed: {exc}", **getattr(exc, "detail", {}))
            closed.__cause__ = exc
            self._mark_closed(closed)
        except Exception as exc:  # our own bug: surface it to every waiter, never as the peer's fault
            self._reader_error = exc
            self.transcript.note(f"raw peer reader crashed: {exc!r}")
            self._mark_closed(TransportClosed(f"raw peer reader crashed: {exc!r}"))

    def _mark_closed(self, exc: BaseException) -> None:
        if self._closed is not None:
            return
        self._closed = exc
        meta: dict[str, Any] = {}
        returncode = getattr(exc, "returncode", None)
        if returncode is not None:
            meta["returncode"] = returncode
        self.transcript.note(f"connection closed: {exc}", meta)
        if self._closed_event is not None:
            self._closed_event.set()
        for w in self._waiters:
            w.wake()
        for w in self._observers:
            w.wake()

    def _handle(self, item: Inbound) -> _Rec | list[_Rec] | None:
        """Record, validate and offer one inbound item, synchronously (no await per message).
        Returns what needs the reader's async work: a request nobody took (to answer), or the
        records of a batch (to offer and answer one by one); else None."""
        self.inbound.append(item)
        env = item.envelope
        meta = item.meta
        if item.problem:
            meta["problem"] = item.problem
        if env is None:
            self.transcript.inbound(item.raw, None, meta)
            return None
        kind = env.kind
        response = kind is Kind.RESULT or kind is Kind.ERROR or (kind is Kind.INVALID and _is_response(env))
        answering: str | None = None
        key = None
        # a response is filed under its id; so is one that is not UTF-8 yet readable enough to
        # say which request it answers (not as a response: the wait for it ends now, unreadable)
        rid = env.id if response else env.lenient_id if kind is Kind.PARSE_ERROR else MISSING
        if response or rid is not MISSING:
            t = type(rid)
            key = (t, rid) if t is int or t is str else _key(rid)
            answering = self._sent.get(key) if response else None
            if answering is not None:
                meta["answering"] = answering
        validator = self._validator
        if validator is None:
            findings: list[Finding] = []
        elif kind is not Kind.BATCH and env.value is not MISSING:
            try:
                findings = validator(env.value, self.version, self._direction, answering=answering)
            except Exception as exc:
                findings = self._validation_failed(exc)
        else:
            findings = self._validate(env, answering)
        entry = self.transcript.inbound(item.raw, env, meta, findings)
        rec = self._add(env, entry, response, top=True, key=key)
        if env.kind is Kind.BATCH:
            members = [self._add(member, entry, _is_response(member), top=False) for member in env.items]
            return [rec, *members]
        return rec if self._offer(rec) else None

    def _validate(self, env: Envelope, answering: str | None) -> list[Finding]:
        validator = self._validator
        if validator is None or env.value is MISSING:
            return []
        value = env.value
        try:
            if env.kind is Kind.BATCH:
                # members answer different requests: give the oracle id -> method (exact id types)
                methods: dict[Any, str] = {}
                for member in env.items:
                    mid = member.id
                    if _is_response(member) and (type(mid) is str or type(mid) is int):
                        method = self._sent.get(_key(mid))
                        if method is not None:
                            methods[mid] = method
                return validator(value, self.version, self._direction, answering=methods or None)
            return validator(value, self.version, self._direction, answering=answering)
        except Exception as exc:
            return self._validation_failed(exc)

    def _validation_failed(self, exc: Exception) -> list[Finding]:
        """The oracle is unavailable (no schema...): say so once, go on without it."""
        self._validator = None
        self.validation_problem = f"schema validation unavailable: {exc}"
        self.transcript.note(self.validation_problem)
        return []

    def _add(self, env: Envelope, entry: TranscriptEntry, response: bool, *, top: bool, key: Any = None) -> _Rec:
        if response and key is None:
            key = _key(env.id)
        rec = _Rec(len(self._recs), env, entry, response, top, key)
        self._recs.append(rec)
        if top:
            self._tops.append(rec)
        self._by_env[id(env)] = rec
        self._pending[rec.n] = rec
        if key is not None:  # a response, or an unreadable one filed under the id it answers
            bucket = self._responses.get(key)
            if bucket is None:
                self._responses[key] = [rec]
            else:
                bucket.append(rec)
        elif env.method is not None and (env.kind is Kind.REQUEST or env.kind is Kind.NOTIFICATION):
            self._by_method.setdefault(env.method, []).append(rec)
        return rec

    def _consume(self, rec: _Rec, how: str) -> None:
        rec.consumed = how
        self._pending.pop(rec.n, None)
        if rec.key is not None:
            bucket = self._responses.get(rec.key)
            if bucket is not None:
                try:
                    bucket.remove(rec)
                except ValueError:
                    pass
                if not bucket:  # one id, one (usually short-lived) bucket: do not keep it
                    del self._responses[rec.key]
            return
        method = rec.env.method
        if method is not None:
            bucket = self._by_method.get(method)
            if bucket is not None:
                try:
                    bucket.remove(rec)
                except ValueError:
                    pass

    def _offer(self, rec: _Rec) -> bool:
        """Hand ``rec`` to the observers and the first waiter it matches; True if it is a request
        that still needs an answer from us (automatic or a handler)."""
        if self._observers:
            for w in self._observers:
                if w.rec is None and w.error is None:
                    if w.matches(rec):
                        w.rec = rec
                        w.wake()
                    elif w.error is not None:
                        w.wake()
        for w in self._waiters:
            try:
                matched = w.match(rec)
            except Exception as exc:  # the scenario's bug: kept for its wait (as _Waiter.matches does)
                w.error = exc
                matched = False
            if matched:
                self._consume(rec, "expect")
                w.rec = rec
                w.wake()
                self._waiters.remove(w)
                return False
            if w.error is not None:  # its predicate raised: hand the error to the waiting scenario
                self._waiters.remove(w)
                w.wake()
                break
        return rec.env.kind is Kind.REQUEST

    async def _answer(self, rec: _Rec) -> None:
        env = rec.env
        method = env.method or ""
        handler = self._handlers.get(method, AUTO)
        if handler is HOLD:
            return
        if handler is not AUTO:
            result = handler(env)
            if inspect.isawaitable(result):
                result = await result
            if result is HOLD:
                return
            self._consume(rec, "handler")
            await self._reply(env.id, result=result, how=f"handler for {method}")
            return
        # automatic answers
        if method == "ping" and _methods.lookup("ping", self._direction, self.version) is not None:
            self._consume(rec, "auto")
            await self._reply(env.id, result={}, how="ping")
            return
        if self.role == "server":
            return  # a scenario playing the server answers the client's requests itself
        if method == "roots/list" and "roots" in self.capabilities and _methods.lookup(method, self._direction, self.version) is not None:
            self._consume(rec, "auto")
            await self._reply(env.id, result={"roots": []}, how="roots/list")
            return
        self._consume(rec, "auto")
        await self._reply(env.id, error={"code": -32601, "message": f"Method not found: {method}"}, how="method not found")

    async def _reply(self, id: Any, *, result: Any = MISSING, error: Any = MISSING, how: str) -> None:
        if error is MISSING:
            msg = {"jsonrpc": "2.0", "id": id, "result": result}
            body = dumps(msg)
            env = Envelope(raw=body, kind=Kind.RESULT, value=msg, id=id, result=result)
        else:
            msg = {"jsonrpc": "2.0", "id": id, "error": error}
            body = dumps(msg)
            env = Envelope(raw=body, kind=Kind.ERROR, value=msg, id=id, error=error)
        try:
            await self._send(body, env, {}, auto=how)
        except Exception as exc:  # connection gone (the reader will see the close), HTTP trouble...
            self.transcript.note(f"automatic reply ({how}) not sent: {exc}")

    # ---------------------------------------------------------------- expectations

    async def _expect(
        self,
        what: str | Callable[[], str],
        match: Callable[[_Rec], bool],
        candidates: Any,
        timeout: float | None,
        *,
        hint: Callable[[], str] | None = None,
    ) -> Envelope:
        for rec in candidates:
            if match(rec):
                self._consume(rec, "expect")
                return rec.env
        if self._reader_error is not None:
            self._check_reader()
        if self._closed is not None:
            raise ConnectionLost(self._closed, what=what if isinstance(what, str) else what())
        if timeout is None:
            timeout = self.timeout
            if self.first_timeout and not self.inbound:
                # nothing has arrived yet: the peer may still be starting (a process's interpreter
                # and imports take seconds on a loaded machine), so its start-up allowance applies
                timeout = max(timeout, self.first_timeout)
        start_n = len(self._tops)
        started = time.monotonic()
        waiter = _Waiter(match)
        self._waiters.append(waiter)
        try:
            if self.startup_cpu is not None and not self.inbound and timeout > 2 * _BUSY_SLICE and timeout != math.inf:
                await self._wait_starting(waiter, timeout, started)
            else:
                await waiter.wait(timeout, self._deadlines())
        finally:
            if waiter.rec is None:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
        if waiter.rec is not None:
            return waiter.rec.env
        if waiter.error is not None:
            raise waiter.error
        self._check_reader()
        if self._closed is not None:
            raise ConnectionLost(self._closed, what=what if isinstance(what, str) else what())
        waited = time.monotonic() - started
        raise self._timeout(what if isinstance(what, str) else what(), waited, start_n, hint)

    async def _wait_starting(self, waiter: _Waiter, timeout: float, started: float) -> None:
        """``waiter.wait(timeout)``, and beyond while the peer's process, silent so far, is still
        busy: its CPU use over the last second is compared at the deadline and after each
        further second, up to ``first_cap`` seconds since ``started``.  An idle process (a server
        that stays silent on purpose) ends the wait at the deadline, as without the probe."""
        probe = self.startup_cpu
        assert probe is not None
        deadlines = self._deadlines()
        await waiter.wait(timeout - _BUSY_SLICE, deadlines)
        if waiter._woken:
            return
        used = probe()
        await waiter.wait(_BUSY_SLICE, deadlines)  # the plain deadline
        until = started + max(timeout, self.first_cap)
        while not waiter._woken and not self.inbound and used is not None and time.monotonic() < until:
            before, used = used, probe()
            if not busy(before, used):
                return
            await waiter.wait(_BUSY_SLICE, deadlines)

    def _timeout(self, what: str, waited: float, start_n: int, hint: Callable[[], str] | None) -> ExpectTimeout:
        seen = self._tops[start_n:]
        if seen:
            parts = []
            for rec in seen[:_SEEN_LIMIT]:
                text = describe(rec.env)
                if rec.consumed == "auto":
                    text += " (answered automatically)"
                elif rec.consumed == "handler":
                    text += " (answered by a handler)"
                elif rec.consumed == "expect":
                    text += " (taken by another expectation)"
                parts.append(text)
            if len(seen) > _SEEN_LIMIT:
                parts.append(f"... and {len(seen) - _SEEN_LIMIT} more")
            detail = "; received meanwhile: " + ", ".join(parts)
        else:
            detail = "; nothing arrived meanwhile"
        if hint is not None:
            extra = hint()
            if extra:
                detail += f"; {extra}"
        return ExpectTimeout(what, waited, [rec.env for rec in seen], detail=detail)

    def _check_reader(self) -> None:
        if self._reader_error is not None:
            raise RuntimeError(f"the raw peer's reader crashed: {self._reader_error!r}") from self._reader_error

    def _request_label(self, id: Any) -> str:
        method = self._sent.get(_key(id))
        return f"the response to request {id_repr(id)}" + (f" ({method})" if method else "")

    async def expect_response(self, id: Any, *, timeout: float | None = None) -> Envelope:
        """The next unconsumed response (result or error) whose id is exactly ``id`` (same JSON type).
        A response to ``id`` whose bytes are not UTF-8 raises UnexpectedMessage when it arrives
        (rather than a timeout later)."""
        env = await self._response(id, timeout)
        if env.kind is Kind.PARSE_ERROR:
            raise UnexpectedMessage(env, f"{self._request_label(id)} arrived unreadable ({'; '.join(env.problems)})")
        return env

    def _response(self, id: Any, timeout: float | None) -> Any:
        """The coroutine behind expect_response (expect_result and call await it directly)."""
        missing = id is MISSING
        t = type(id)
        key = (t, id) if t is int or t is str else _key(id)

        def match(rec: _Rec) -> bool:  # rec.response and same_id(rec.env.id, id), inlined
            if not rec.response:
                return rec.key is not None and rec.key == key  # unreadable, filed under this id
            other = rec.env.id
            if missing or other is MISSING:
                return other is id
            return type(other) is t and other == id

        def hint() -> str:
            # the classic trap: an id echoed with another JSON type ("7" for 7)
            near = [
                rec.env
                for rec in self._recs
                if rec.response and rec.env.id is not MISSING and not same_id(rec.env.id, id) and _loose(rec.env.id) == _loose(id)
            ]
            if near:
                return "a response with id " + ", ".join(id_repr(e.id) for e in near[:3]) + f" arrived, which is not the id {id_repr(id)} we sent"
            return ""

        return self._expect(lambda: self._request_label(id), match, self._responses.get(key, ()), timeout, hint=hint)

    async def expect_result(self, id: Any, *, timeout: float | None = None) -> Any:
        """The ``result`` of the response to ``id``; raises ErrorResponse for an error response."""
        return self._result_of(await self._response(id, timeout), id)

    def _result_of(self, env: Envelope, id: Any) -> Any:
        if env.kind is Kind.RESULT:
            return env.result
        if env.kind is Kind.ERROR:
            raise ErrorResponse(env, method=self._sent.get(_key(id)))
        raise UnexpectedMessage(env, f"{self._request_label(id)} is not a valid JSON-RPC response")

    async def expect_error(self, id: Any, codes: Any = None, *, timeout: float | None = None) -> Envelope:
        """The error response to ``id``; raises UnexpectedMessage for a result or a code outside ``codes``."""
        env = await self.expect_response(id, timeout=timeout)
        if env.kind is not Kind.ERROR:
            raise UnexpectedMessage(env, f"expected an error as {self._request_label(id)}")
        if codes is not None:
            allowed = (codes,) if isinstance(codes, int) else tuple(codes)
            code = env.error_code
            if not any(same_id(code, c) for c in allowed):
                raise UnexpectedMessage(env, f"expected error code {' or '.join(map(str, allowed))} as {self._request_label(id)}")
        return env

    async def expect_notification(
        self, method: str, *, predicate: Callable[[Envelope], bool] | None = None, timeout: float | None = None
    ) -> Envelope:
        """The next unconsumed notification ``method`` (that satisfies ``predicate``)."""

        def match(rec: _Rec) -> bool:
            env = rec.env
            return env.kind is Kind.NOTIFICATION and env.method == method and (predicate is None or bool(predicate(env)))

        what = f"a {method} notification" + (" matching the predicate" if predicate is not None else "")
        return await self._expect(what, match, self._by_method.get(method, ()), timeout)

    async def expect_request(self, method: str, *, timeout: float | None = None) -> Envelope:
        """The next unanswered request ``method`` from the other side; the scenario answers it
        (``respond``/``respond_error``).  Requests answered automatically are not returned."""

        def match(rec: _Rec) -> bool:
            env = rec.env
            return env.kind is Kind.REQUEST and env.method == method

        def hint() -> str:
            answered = [rec for rec in self._recs if rec.consumed in ("auto", "handler") and match(rec)]
            if answered:
                return (
                    f"{len(answered)} {method} request(s) arrived and were answered automatically; "
                    f"call on_request({method!r}, HOLD) before triggering the request"
                )
            return ""

        return await self._expect(f"a {method} request", match, self._by_method.get(method, ()), timeout, hint=hint)

    async def expect_message(self, predicate: Callable[[Envelope], bool], *, what: str, timeout: float | None = None) -> Envelope:
        """The next unconsumed message (a batch, or a member of one, included) satisfying ``predicate``."""

        def match(rec: _Rec) -> bool:
            return bool(predicate(rec.env))

        return await self._expect(what, match, self._pending.values(), timeout)

    async def expect_silence(self, duration: float, *, predicate: Callable[[Envelope], bool] | None = None) -> None:
        """Wait ``duration`` seconds; raise UnexpectedMessage if a matching message (default: any
        response) arrived since our last send or during the wait.  Nothing is consumed.  The only
        legitimate fixed wait: prefer a barrier (a ping after a notification) where one exists."""
        pred = predicate or _is_response
        for rec in self._recs[self._last_send_n :]:
            if rec.consumed is None and pred(rec.env):
                raise UnexpectedMessage(rec.env, f"expected no such message for {duration:.3g} s")
        observer = _Waiter(lambda rec: bool(pred(rec.env)))
        if self._closed is None:
            self._observers.append(observer)
            try:
                await observer.wait(duration, self._deadlines())
            finally:
                self._observers.remove(observer)
        if observer.error is not None:
            raise observer.error
        self._check_reader()
        if observer.rec is not None:
            raise UnexpectedMessage(observer.rec.env, f"expected no such message for {duration:.3g} s")

    async def expect_close(self, *, timeout: float | None = None) -> BaseException:
        """Wait until the connection ends; returns the TransportClosed / ProcessExited."""
        if self._closed is None:
            if self._closed_event is None:
                raise RuntimeError("enter the RawPeer (async with) before expecting anything")
            if timeout is None:
                timeout = self.timeout
            start_n = len(self._tops)
            started = time.monotonic()
            with anyio.move_on_after(timeout):
                await self._closed_event.wait()
            if self._closed is None:
                raise self._timeout("the connection to close", time.monotonic() - started, start_n, None)
        return self._closed

    async def call(self, method: str, params: Any = MISSING, *, timeout: float | None = None, **opts: Any) -> Any:
        """``request`` + ``expect_result``: the result, or ErrorResponse."""
        rid = await self.request(method, params, **opts)
        return self._result_of(await self._response(rid, timeout), rid)

    async def initialize(
        self,
        *,
        protocol_version: str | None = None,
        capabilities: dict | None = None,
        client_info: dict | None = None,
        send_initialized: bool = True,
        timeout: float | None = None,
    ) -> Envelope:
        """Send ``initialize`` and wait for its response, which is returned as is (result or error;
        scenarios judge).  On a result, records ``negotiated_version``, ``server_capabilities``
        and ``server_info``, tells an HTTP transport the protocol version and, when
        ``send_initialized``, sends ``notifications/initialized``."""
        params = {
            "protocolVersion": protocol_version or self.version,
            "capabilities": self.capabilities if capabilities is None else capabilities,
            "clientInfo": self.client_info if client_info is None else client_info,
        }
        rid = await self.request("initialize", params)
        env = await self.expect_response(rid, timeout=timeout)
        if env.kind is Kind.RESULT:
            result = env.result
            self.initialize_result = result
            if isinstance(result, dict):
                version = result.get("protocolVersion")
                self.negotiated_version = version if isinstance(version, str) else None
                caps = result.get("capabilities")
                self.server_capabilities = caps if isinstance(caps, dict) else None
                info = result.get("serverInfo")
                self.server_info = info if isinstance(info, dict) else None
                if self.negotiated_version is not None and hasattr(self.transport, "protocol_version"):
                    self.transport.protocol_version = self.negotiated_version  # type: ignore[attr-defined]
            if send_initialized:
                await self.notify("notifications/initialized")
        return env

    # ---------------------------------------------------------------- inspection

    def entry_of(self, envelope: Envelope) -> TranscriptEntry | None:
        """The transcript entry in which ``envelope`` (returned by an ``expect_*``) arrived."""
        rec = self._by_env.get(id(envelope))
        return rec.entry if rec is not None and rec.env is envelope else None

    def findings_of(self, envelope: Envelope) -> list[Finding]:
        """Schema findings recorded for the message that carried ``envelope``."""
        entry = self.entry_of(envelope)
        return list(entry.findings) if entry is not None else []

    def consume_all(self, how: str) -> int:
        """Mark every message not taken yet as taken (``how`` says why): a connection handed on to
        another scenario starts with nothing left over from the previous one."""
        recs = list(self._pending.values())
        for rec in recs:
            self._consume(rec, how)
        return len(recs)

    def unconsumed(self) -> list[Envelope]:
        """Messages no expectation (or automatic reply) has taken yet, in arrival order."""
        return [rec.env for rec in self._pending.values()]

    def sent_method(self, id: Any) -> str | None:
        """The method of the request we sent with exactly this id (the last one, for duplicates)."""
        return self._sent.get(_key(id))


def _loose(value: Any) -> str:
    """An id compared loosely (``"7"`` ~ ``7`` ~ ``7.0``), only to explain a mismatch."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and not math.isinf(value):
        return str(int(value))
    return str(value)

