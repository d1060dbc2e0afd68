"""Helpers for the HTTP transport scenarios (no scenarios here).

* :class:`Probe`: a side transport for deliberately odd requests (a foreign ``Origin``, a wrong
  ``Accept``, an unknown session...).  It shares the session of a connection but its answers never
  reach that connection's peer, so they cannot disturb other checks; every exchange is written as
  a ``probe:`` note into the connection's transcript, which is what the verdicts point at.
* :func:`streams_of`: the HTTP exchanges and SSE streams of a connection, read back from its
  transcript (status notes, SSE notes, messages with their ``stream``), for run-wide checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

import anyio

from conformance.runtime.peer import PeerError, RawPeer
from conformance.spec.versions import spec
from conformance.wire.transcript import Direction, Transcript, TranscriptEntry
from conformance.transports.base import Inbound, TransportClosed, TransportError
from conformance.transports.exchange import HttpExchange
from conformance.wire.envelope import MISSING, Envelope, Kind, dumps
from conformance.spec.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY

__all__ = [
    "FOREIGN_ORIGIN",
    "Probe",
    "StreamInfo",
    "streams_of",
    "request_message",
    "notification_message",
    "id_key",
    "is_loopback",
    "official_tools",
    "wait_until",
]

FOREIGN_ORIGIN = "http://mcp-conformance.invalid"  # RFC 2606 reserved: never a valid origin
_CLIENT_INFO = {"name": "mcp-conformance", "version": "0.1.0"}


def id_key(value: Any) -> str:
    """A hashable key for a JSON-RPC id that keeps its JSON type ("7" and 7 differ)."""
    if value is MISSING:
        return "<absent>"
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def is_loopback(url: str) -> bool:
    import httpx  # here, not at import: a stdio run imports every scenario module, and needs no httpx

    host = (httpx.URL(url).host or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def request_message(version: str, rid: Any, method: str | None = None, params: Any = MISSING) -> dict[str, Any]:
    """A request (default: ``ping``, or ``server/discover`` where ping does not exist), with the
    per-request ``_meta`` a stateless version requires."""
    vs = spec(version)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method or ("ping" if vs.ping else "server/discover")}
    if vs.stateless:
        base = params if isinstance(params, dict) else {}
        meta = dict(base.get("_meta") or {})
        meta.setdefault(PROTOCOL_VERSION_KEY, version)
        meta.setdefault(CLIENT_CAPABILITIES_KEY, {})
        meta.setdefault(CLIENT_INFO_KEY, _CLIENT_INFO)
        params = {**base, "_meta": meta}
    if params is not MISSING:
        msg["params"] = params
    return msg


def notification_message(version: str) -> dict[str, Any]:
    """A notification every server can take: a cancellation of a request that was never sent
    (receivers MAY ignore it; 2024-11-05 and later define it)."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "mcp-conformance-never-sent", "reason": "conformance probe: nothing to cancel"},
    }


async def wait_until(predicate: Any, timeout: float, *, step: float = 0.01) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout`` seconds passed (a bounded wait)."""
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(step)
        return True
    return bool(predicate())


# -- the probe transport -------------------------------------------------------------------------------


class Probe:
    """A second :class:`StreamableHttpTransport` on the target for one scenario's odd requests.

    ``session``: send the connection's session id (default) or none.  ``url``: another URL (the
    legacy SSE endpoint).  Use ``async with``; answers are collected in :attr:`inbound`."""

    def __init__(self, peer: RawPeer, *, timeout: float, session: bool = True, url: str | None = None, version: str | None = None) -> None:
        from conformance.transports.http import StreamableHttpTransport  # httpx: only where a probe is made (HTTP)

        base = peer.transport
        self.peer = peer
        self.transcript: Transcript = peer.transcript
        self.url = url or getattr(base, "url")
        version = version or peer.version
        vs = spec(version)
        protocol_version = getattr(base, "protocol_version", None)
        if vs.protocol_version_header and protocol_version is None:
            protocol_version = peer.negotiated_version or version
        # the connection's credentials (a run with authorization): a probe shares its session
        credentials = {k: v for k, v in (getattr(base, "headers", None) or {}).items() if k.lower() == "authorization"}
        self.transport = StreamableHttpTransport(
            self.url,
            headers=credentials or None,
            timeout=timeout,
            protocol_version=protocol_version if url is None else None,
            request_headers=vs.request_headers and url is None,
        )
        if session and url is None:
            self.transport.session_id = getattr(base, "session_id", None)
        self.transport.events = self._on_event
        self.inbound: list[Inbound] = []
        self._status_notes: dict[str, int] = {}
        self._tg: Any = None

    def _on_event(self, text: str, meta: dict[str, Any]) -> None:
        meta = {**meta, "probe": True}
        entry = self.transcript.note(f"probe: {text}", meta)
        stream = meta.get("stream")
        if stream is not None and "status" in meta:
            self._status_notes[stream] = entry.seq

    async def __aenter__(self) -> "Probe":
        await self.transport.start()
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._drain)
        return self

    async def __aexit__(self, *exc: object) -> None:
        # LIFO: our reader's task group was entered after the transport's own
        tg, self._tg = self._tg, None
        try:
            if tg is not None:
                tg.cancel_scope.cancel()
                await tg.__aexit__(None, None, None)
        finally:
            await self.transport.aclose()  # shielded and bounded by the transport itself

    async def _drain(self) -> None:
        try:
            while True:
                item = await self.transport.receive()
                self.inbound.append(item)
                self.transcript.note(f"probe: received on {item.meta.get('stream')}", {**item.meta, "probe": True}, raw=item.raw)
        except (TransportClosed, TransportError):
            return

    def _sending(self, what: str, body: bytes | None, headers: Mapping[str, Any] | None) -> None:
        shown = {k: v for k, v in (headers or {}).items()}
        self.transcript.note(f"probe: {what}", {"probe": True, "headers": shown}, raw=body)

    async def post(self, message: Any, *, headers: Mapping[str, Any] | None = None, raw: bytes | None = None) -> HttpExchange:
        body = raw if raw is not None else dumps(message)
        self._sending("POST", body, headers)
        return await self.transport.send(body, headers=headers)

    async def get(self, *, headers: Mapping[str, Any] | None = None, last_event_id: str | None = None) -> HttpExchange:
        self._sending("GET", None, headers)
        return await self.transport.open_get_stream(headers=headers, last_event_id=last_event_id)

    async def delete(self, *, headers: Mapping[str, Any] | None = None) -> HttpExchange:
        self._sending("DELETE", None, headers)
        return await self.transport.delete_session(headers=headers)

    async def request(self, method: str, *, body: bytes | None = None, headers: Mapping[str, Any] | None = None, url: str | None = None) -> HttpExchange:
        self._sending(f"{method} {url or self.url}", body, headers)
        return await self.transport.raw_request(method, body=body, headers=headers, url=url)

    async def close_stream(self, ex: HttpExchange) -> None:
        await self.transport.close_stream(ex.stream)

    def entries(self, *exchanges: HttpExchange) -> list[int]:
        return [self._status_notes[ex.stream] for ex in exchanges if ex.stream in self._status_notes]


def describe(ex: HttpExchange, limit: int = 200) -> str:
    """``"406 (application/json) {...}"`` for a message."""
    body = ex.body or b""
    text = body[:limit].decode("utf-8", "replace")
    if len(body) > limit:
        text += "..."
    ctype = ex.headers.get("content-type")
    return f"{ex.status}{f' ({ctype})' if ctype else ''}{f' {text}' if text else ''}"


# -- streams read back from a transcript --------------------------------------------------------------


@dataclass
class StreamInfo:
    """One HTTP exchange of a connection (and its SSE stream), as the transcript shows it."""

    name: str
    method: str | None = None
    status: int | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    response_headers: dict[str, str] = field(default_factory=dict)
    note: int | None = None  # seq of the status note
    sent: list[TranscriptEntry] = field(default_factory=list)
    inbound: list[TranscriptEntry] = field(default_factory=list)
    sse_ids: list[tuple[str, str, int]] = field(default_factory=list)  # (id, data, seq)
    primed: bool = False  # an event with an id and empty data was seen
    retry: bool = False
    ended_by_server: bool = False
    ended: str | None = None  # how the SSE stream ended: "server", "client" (us) or "error"
    ended_at: float | None = None  # transcript time of that
    opened: bool = False  # an SSE stream was read

    @property
    def content_type(self) -> str | None:
        value = self.response_headers.get("content-type")
        return value.split(";", 1)[0].strip().lower() if value else None

    @property
    def is_sse(self) -> bool:
        return self.opened or self.content_type == "text/event-stream"

    @property
    def resumes(self) -> str | None:
        """The Last-Event-ID this GET sent (a resumption), else None."""
        return self.request_headers.get("last-event-id")

    def sent_envelopes(self) -> list[Envelope]:
        out: list[Envelope] = []
        for e in self.sent:
            env = e.envelope
            if env is None:
                continue
            out.extend(env.items if env.kind is Kind.BATCH else [env])
        return out

    def request_ids(self) -> set[str]:
        return {id_key(env.id) for env in self.sent_envelopes() if env.kind is Kind.REQUEST}

    def messages(self) -> list[Envelope]:
        out: list[Envelope] = []
        for e in self.inbound:
            env = e.envelope
            if env is None:
                continue
            out.extend(env.items if env.kind is Kind.BATCH else [env])
        return out


def streams_of(transcript: Transcript) -> dict[str, StreamInfo]:
    """The exchanges of one connection by stream name (``post:3``, ``get:7``...), in order.
    Probe notes (another transport) are left out."""
    out: dict[str, StreamInfo] = {}

    def info(name: str) -> StreamInfo:
        st = out.get(name)
        if st is None:
            st = out[name] = StreamInfo(name)
        return st

    for e in transcript.entries:
        meta = e.meta
        name = meta.get("stream")
        if not isinstance(name, str) or meta.get("probe") or name in ("stdout", "stderr"):
            continue
        if e.direction == Direction.OUT:
            info(name).sent.append(e)
        elif e.direction == Direction.IN:
            st = info(name)
            st.inbound.append(e)
            sid = meta.get("sse_id")
            if sid is not None:
                st.sse_ids.append((str(sid), (e.raw or b"").decode("utf-8", "replace"), e.seq))
        else:
            st = info(name)
            text = e.text or ""  # (notes carry the transport's event text and meta)
            if "status" in meta and "method" in meta:
                st.method = meta.get("method")
                st.status = meta.get("status")
                st.request_headers = {str(k).lower(): str(v) for k, v in (meta.get("request_headers") or {}).items()}
                st.response_headers = {str(k).lower(): str(v) for k, v in (meta.get("response_headers") or {}).items()}
                st.note = e.seq
            elif text.startswith("SSE stream opened"):
                st.opened = True
            elif text.startswith("SSE stream ended by the server"):
                st.ended_by_server = True
                st.ended, st.ended_at = "server", e.t
            elif text.startswith("SSE stream closed by us"):
                st.ended, st.ended_at = "client", e.t
            elif text.startswith("SSE stream broken"):
                st.ended, st.ended_at = "error", e.t
            if meta.get("retry") is not None:
                st.retry = True  # the transport's "SSE retry" note
            elif meta.get("sse_id") is not None and "dispatched" in meta:
                # the transport's note for an event with an id and no data: a priming event
                st.primed = True
                st.sse_ids.append((str(meta["sse_id"]), "", e.seq))
    return out


async def official_tools(peer: RawPeer, capabilities: Mapping[str, Any], *, timeout: float) -> set[str]:
    """Names of the server's tools (first pages of tools/list), or an empty set."""
    if not isinstance(capabilities.get("tools"), dict):
        return set()
    names: set[str] = set()
    cursor: Any = MISSING
    try:
        for _ in range(5):
            rid = await peer.request("tools/list", {} if cursor is MISSING else {"cursor": cursor})
            env = await peer.expect_response(rid, timeout=timeout)
            if env.kind is not Kind.RESULT or not isinstance(env.result, dict):
                break
            for tool in env.result.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    names.add(tool["name"])
            cursor = env.result.get("nextCursor", MISSING)
            if not isinstance(cursor, str):
                break
    except PeerError:  # discovery is best effort; the scenario says what it could not do
        return names
    return names
