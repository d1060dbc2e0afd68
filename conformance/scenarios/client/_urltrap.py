"""A URL nobody should open unasked: the ``url`` of the url mode elicitations the suite's server
sends a client points at a loopback listener of the suite, which records every connection to it
(an HTTP request or just a TCP connect: a pre-fetch of "the URL or any of its metadata").

    async with UrlTrap() as trap:
        url = trap.url("undeclared")           # http://127.0.0.1:PORT/mcp-conformance/elicitation/undeclared
        ...                                     # send it, remember the answer with trap.answered(...)
    trap.judge(ctx)                             # client.elicitation.url-no-prefetch

The listener answers ``204 No Content`` and closes; it lives only as long as the ``async with``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

__all__ = ["UrlTrap", "PREFETCH"]

PREFETCH = "client.elicitation.url-no-prefetch"
_READ_LIMIT = 4096
_READ_TIME = 1.0


@dataclass
class UrlTrap:
    host: str = "127.0.0.1"
    port: int = 0
    secret: str = field(default_factory=lambda: secrets.token_hex(6))
    hits: list[str] = field(default_factory=list)  # the first line of each connection (or "a TCP connection")
    answers: dict[str, str] = field(default_factory=dict)  # tag -> what the client answered
    _listener: Any = None
    _tg: Any = None

    async def __aenter__(self) -> "UrlTrap":
        self._listener = await anyio.create_tcp_listener(local_host=self.host, local_port=0)
        self.port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._listener.serve, self._handle)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._tg.cancel_scope.cancel()
        try:
            await self._tg.__aexit__(None, None, None)
        finally:
            await self._listener.aclose()

    def url(self, tag: str) -> str:
        return f"http://{self.host}:{self.port}/mcp-conformance/elicitation/{self.secret}/{tag}"

    def answered(self, tag: str, answer: str) -> None:
        """What the client answered the elicitation whose url carries ``tag``: 'accept',
        'decline', 'cancel', 'error -32602', 'no answer'."""
        self.answers[tag] = answer

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        line = "a TCP connection"
        try:
            data = b""
            with anyio.move_on_after(_READ_TIME):
                while b"\r\n" not in data and len(data) < _READ_LIMIT:
                    chunk = await stream.receive(_READ_LIMIT)
                    if not chunk:
                        break
                    data += chunk
            if data:
                line = data.split(b"\r\n", 1)[0][:200].decode("latin-1")
            await stream.send(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except Exception:  # noqa: BLE001 - whatever the client did, the connection is the evidence
            pass
        finally:
            self.hits.append(line)
            await stream.aclose()

    def fetched(self, tag: str) -> list[str]:
        """The connections that named ``tag``'s URL (a bare TCP connect names none)."""
        path = f"/mcp-conformance/elicitation/{self.secret}/{tag}"
        return [h for h in self.hits if path in h]

    def judge(self, ctx: Any) -> None:
        """A URL fetched although the client did not accept its elicitation was pre-fetched: the
        user never consented to opening it.  A fetch after an accept may be the consented opening:
        not judged."""
        if PREFETCH not in ctx.requirements:
            return
        if not self.answers:
            ctx.not_reached(PREFETCH, "no url mode elicitation was sent to the client")
            return
        judged = False
        for tag, answer in self.answers.items():
            hits = self.fetched(tag)
            if answer == "accept":
                if hits:
                    ctx.note(f"the client accepted the url mode elicitation and then opened its URL ({hits[0]!r}): "
                             "read as the consented opening", requirement=PREFETCH)
                continue
            judged = True
            ctx.check(PREFETCH, not hits, problem="UrlPrefetched",
                      message=(f"the URL of a url mode elicitation the client answered with {answer} was fetched "
                               f"({len(hits)} connection(s), {hits[0]!r}): the user never consented to opening it"
                               if hits else f"the URL of the url mode elicitation answered with {answer} was not fetched"),
                      expected="no connection to the elicitation's URL", actual=hits[:3] or None)
        bare = [h for h in self.hits if "/mcp-conformance/elicitation/" not in h]
        if bare and judged and "accept" not in self.answers.values():  # (an opened page may ask for a favicon)
            ctx.check(PREFETCH, False, problem="UrlPrefetched",
                      message=f"{len(bare)} connection(s) reached the host of the elicitation URL without asking for it "
                              f"({bare[0]!r}): metadata of the URL fetched", expected="no connection", actual=bare[:3])
        if not judged:
            ctx.not_reached(PREFETCH, "the client accepted every url mode elicitation (opening the URL then may be "
                                      "the one the user consented to)")
