"""The suite's authorization server on a loopback port: :class:`AuthServerHost`.

An embedded Starlette app on uvicorn, bound to 127.0.0.1 on a free port, in a thread of its own
(so that it serves while the run's event loop is busy, and outlives no run): ``start()`` returns
once it accepts connections (with a deadline), ``stop()`` always ends it (bounded).  Every request
is handed to :class:`~conformance.auth.core.AuthorizationServer` (sans I/O), which answers and logs
it.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from conformance.auth.core import AuthConfig, AuthorizationServer, Request, Response

__all__ = ["AuthServerHost", "StartupError"]


class StartupError(RuntimeError):
    """The authorization server did not start within its deadline (our own trouble)."""


class AuthServerHost:
    """``with AuthServerHost() as host: host.server.mint(...)``; ``host.issuer`` is its URL.
    ``path``: an issuer path (``/tenant1``) for scenarios that need one."""

    def __init__(self, config: AuthConfig | None = None, *, path: str = "", startup_timeout: float = 10.0,
                 stop_timeout: float = 5.0) -> None:
        self.server = AuthorizationServer(config=config)
        self._path = "/" + path.strip("/") if path.strip("/") else ""
        self._startup_timeout = startup_timeout
        self._stop_timeout = stop_timeout
        self._uvicorn: Any = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.port: int | None = None
        #: awaited with each request before the server answers it (in the server's thread): what a
        #: real authorization server does first, such as fetching a client ID metadata document
        self.before: Any = None

    @property
    def issuer(self) -> str:
        return self.server.issuer

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request as StarletteRequest
        from starlette.responses import Response as StarletteResponse
        from starlette.routing import Route

        core = self.server

        async def endpoint(request: StarletteRequest) -> StarletteResponse:
            body = await request.body()
            headers = {k.lower(): v for k, v in request.headers.items()}
            req = Request(request.method, request.url.path, request.url.query, headers, body)
            if self.before is not None:
                await self.before(req)
            answer: Response = core.handle(req)
            return StarletteResponse(answer.body, status_code=answer.status, headers=answer.headers)

        methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]
        return Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])

    def start(self) -> "AuthServerHost":
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.server.issuer = f"http://127.0.0.1:{self.port}{self._path}"
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=1)
        self._uvicorn = uvicorn.Server(config)
        self._uvicorn.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # not ours to take
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [sock]},
                                        name="mcp-conformance-auth-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise StartupError(f"the suite's authorization server did not start within {self._startup_timeout:g} s")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(self._stop_timeout)
            if self._thread.is_alive() and self._uvicorn is not None:
                self._uvicorn.force_exit = True
                self._thread.join(self._stop_timeout)
        if self._sock is not None:
            self._sock.close()
        self._thread = self._uvicorn = self._sock = None

    def __enter__(self) -> "AuthServerHost":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
