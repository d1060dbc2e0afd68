"""The client's authorization scenarios' harness: the suite's MCP endpoint as a protected resource.

:class:`AuthSite` is one client run's pair of servers: an HTTP hub of its own (so the root
well-known URIs of its origin are the run's alone) whose MCP endpoint answers 401 with a Bearer
challenge until it is given a valid token of the run's authorization server, and serves the
protected resource metadata (RFC 9728) at the URLs the scenario chooses; and the suite's
authorization server (:mod:`conformance.auth`, on a loopback port of its own).  Every HTTP request
to either is kept in :attr:`AuthSite.log`, in arrival order, for the judgement and the transcript.

The client under test is started with ``BROWSER`` set to the suite's headless browser
(:mod:`conformance.auth.browser`: it fetches the authorization URL and follows the redirect to a
loopback callback); a client built for the official runner fetches the URL itself, which needs
nothing more.  Pre-registered credentials, when a scenario wants them, go in
``MCP_CONFORMANCE_CONTEXT`` as the official runner passes them.
"""

from __future__ import annotations

import json
import shlex
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio

from conformance.auth.core import AuthConfig, AuthorizationServer, LoggedRequest, Request
from conformance.auth.server import AuthServerHost
from conformance.client.context import ClientContext
from conformance.transports.http_server import HttpHub, HttpRequestRecord, read_body
from conformance.wire.oauth import PRM_WELL_KNOWN, bearer_challenge, bearer_token_of, canonical_resource, \
    protected_resource_metadata

__all__ = ["AuthSite", "Fetched", "Hit", "Protected", "SKIP_REASON", "browser_command", "fetch_document"]

SKIP_REASON = ("authorization scenarios run only when asked for (mcp-conformance client --auth): the suite's "
               "server then requires OAuth of the client")
CUSTOM_PRM = "/custom/metadata/location.json"


def browser_command() -> str:
    """The ``BROWSER`` value that makes the suite's headless browser the client's."""
    path = Path(__file__).resolve().parents[2] / "auth" / "browser.py"
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))} %s"


@dataclass(frozen=True)
class Protected:
    """How the MCP endpoint protects itself (what the scenario varies)."""

    header: bool = True  # resource_metadata in the 401 challenge
    prm_at: tuple[str, ...] = ("custom",)  # where the metadata is served: "custom", "path", "root"
    challenge_scope: str | None = None
    scopes_supported: tuple[str, ...] | None = ("mcp:read", "mcp:write")
    as_path: str = ""  # the authorization server's issuer path ("/tenant1")
    auth: AuthConfig = field(default_factory=AuthConfig)
    context: dict[str, Any] | None = None  # MCP_CONFORMANCE_CONTEXT extras (pre-registered credentials)
    #: 2025-03-26: no protected resource metadata; the MCP server's origin is its own authorization
    #: server (metadata at its root, or -- with ``auth.metadata_forms=()`` -- the default endpoints)
    legacy: bool = False
    #: a scope every JSON-RPC request but the first (``initialize``, ``server/discover``) needs: a
    #: valid token without it is answered 403 ``insufficient_scope`` naming it (the step-up scenario)
    required_scope: str | None = None
    #: a second authorization server (its configuration): once the client's first token has been
    #: served, the metadata names it instead of the first, and only its tokens are valid (the first's get 401)
    migrate: AuthConfig | None = None
    #: the first token is taken for expired once it has been served one request (401 invalid_token after)
    expire_first: bool = False
    #: the authorization server fetches a client ID metadata document URL given as ``client_id``
    #: before it answers the authorization request (as such a server does), into ``AuthSite.documents``
    fetch_documents: bool = False


@dataclass
class Fetched:
    """What fetching a client ID metadata document got."""

    url: str
    status: int | None = None
    content_type: str = ""
    document: Any = None  # the JSON body (None: not JSON)
    error: str | None = None  # the request failed (no answer)
    verified: bool = True  # TLS verified (a loopback host's certificate is not)


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


async def fetch_document(url: str, *, timeout: float) -> Fetched:
    """GET a client ID metadata document, no redirects followed, within ``timeout``; TLS is verified
    except on a loopback host (a test document on the client's own machine, self-signed)."""
    import httpx

    host = (urlsplit(url).hostname or "").lower()
    verify = host not in LOOPBACK_HOSTS
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=verify, follow_redirects=False) as client:
            with anyio.fail_after(timeout + 1):
                response = await client.get(url, headers={"Accept": "application/json"})
    except (httpx.HTTPError, TimeoutError, OSError, ValueError) as exc:
        return Fetched(url, error=f"{type(exc).__name__}: {exc}"[:300], verified=verify)
    try:
        doc = response.json()
    except (ValueError, RecursionError):
        doc = None
    return Fetched(url, response.status_code, response.headers.get("content-type", ""), doc, verified=verify)


@dataclass
class Hit:
    """One HTTP request to either server, in arrival order."""

    seq: int
    side: str  # "rs" (the MCP server's origin) | "as" (the authorization server) | "as2" (the second one)
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: str
    status: int | None = None
    rec: HttpRequestRecord | None = None  # the MCP endpoint's record (its status comes later)
    kind: str = ""  # rs: "mcp" | "prm" | "other"

    @property
    def params(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.query, keep_blank_values=True).items()}

    @property
    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body, keep_blank_values=True).items()}

    @property
    def token(self) -> str | None:
        return bearer_token_of(self.headers.get("authorization"))

    def final_status(self) -> int | None:
        return self.rec.status if self.rec is not None else self.status

    def line(self) -> str:
        q = f"?{self.query}" if self.query else ""
        return f"#{self.seq} {self.side.upper()} {self.method} {self.path}{q[:160]} -> {self.final_status()}"

    def to_json(self) -> dict[str, Any]:
        headers = {k: ("<redacted>" if k == "authorization" else v) for k, v in self.headers.items()
                   if k in ("authorization", "content-type", "accept", "mcp-protocol-version")}
        return {"seq": self.seq, "server": self.side, "method": self.method, "path": self.path, "query": self.query,
                "headers": headers, "status": self.final_status()}


class AuthSite:
    """``async with AuthSite(ctx, protected) as site: run = await ctx.launch(**site.launch_options())``."""

    def __init__(self, ctx: ClientContext, protected: Protected) -> None:
        self.ctx = ctx
        self.protected = protected
        self.log: list[Hit] = []
        self._lock = threading.Lock()
        self.hub: HttpHub | None = None
        self.host: AuthServerHost | None = None
        self.server: AuthorizationServer | None = None  # the authorization server's logic (either way)
        self.endpoint: Any = None
        self.resource: str = ""
        self.browser_log: Path | None = None  # what the headless browser did (one line per request)
        self.browser_text = ""  # its contents, kept when the run's files are gone
        #: why the suite ended the client's run before the client did (it stopped on the way), or None
        self.stalled: str | None = None
        self.host2: AuthServerHost | None = None  # Protected.migrate: the authorization server moved to
        self.switched: int | None = None  # the log sequence number from which the second one is in force
        self.expired: set[str] = set()  # Protected.expire_first: tokens taken for expired
        self.documents: list[Fetched] = []  # Protected.fetch_documents: what each fetch got

    # -- life ------------------------------------------------------------------------------------

    async def __aenter__(self) -> "AuthSite":
        self.hub = HttpHub()
        self.hub.fallback = self._fallback
        self.hub.on_new_run = self._attach
        await self.ctx.client.run.tg.start(self.hub.serve)
        if self.protected.legacy:
            self.server = AuthorizationServer(f"http://127.0.0.1:{self.hub.port}", self.protected.auth)
        else:
            self.host = AuthServerHost(self.protected.auth, path=self.protected.as_path)
            await anyio.to_thread.run_sync(self.host.start)
            self.server = self.host.server
            if self.protected.fetch_documents:
                self.host.before = self._fetch_document
        self.server.listener = self._as_request
        if self.protected.migrate is not None:
            self.host2 = AuthServerHost(self.protected.migrate)
            await anyio.to_thread.run_sync(self.host2.start)
            self.host2.server.listener = lambda entry: self._as_request(entry, side="as2")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.hub is not None:
            self.hub.stop()
            with anyio.move_on_after(3):
                await self.hub.stopped.wait()
        if self.host is not None:
            await anyio.to_thread.run_sync(self.host.stop)
        if self.host2 is not None:
            await anyio.to_thread.run_sync(self.host2.stop)

    def launch_options(self, tmp: Path) -> dict[str, Any]:
        context = {"name": self.ctx.scenario.id.split(".")[-1], **(self.protected.context or {})}
        self.browser_log = tmp / "browser.log"
        return {"hub": self.hub, "env": {"BROWSER": browser_command(), "MCP_CONFORMANCE_CONTEXT": json.dumps(context),
                                         "MCP_CONFORMANCE_BROWSER_LOG": str(self.browser_log)}}

    def delivered(self, authorize: Hit) -> bool:
        """Did the authorization response of ``authorize`` reach the client?  It fetched the URL
        itself (the official runner's convention: it read the redirect), or the headless browser
        followed the redirect to the client's callback and was answered."""
        if "mcp-conformance-browser" not in authorize.headers.get("user-agent", ""):
            return True
        try:
            text = self.browser_log.read_text(encoding="utf-8") if self.browser_log else ""
        except OSError:
            text = self.browser_text
        lines = text.splitlines()
        return any(" GET " in line and "/authorize" not in line.split(" -> ")[0] and " -> " in line
                   and not line.split(" -> ")[1].startswith(("4", "5")) for line in lines)

    async def _fetch_document(self, request: Request) -> None:
        """(In the authorization server's thread, before it answers.)  The client ID metadata document
        of an authorization request whose ``client_id`` is an http(s) URL, fetched once."""
        if request.method != "GET" or not request.path.rstrip("/").endswith("/authorize"):
            return
        url = (parse_qs(request.query).get("client_id") or [""])[0]
        if urlsplit(url).scheme not in ("http", "https") or any(d.url == url for d in self.documents):
            return
        self.documents.append(await fetch_document(url, timeout=max(1.0, self.ctx.timeout)))

    def _attach(self, endpoint: Any) -> None:
        """Guard the run's endpoint (before the client is started)."""
        self.endpoint = endpoint
        self.resource = canonical_resource(endpoint.url)
        endpoint.guard = self._guard

    # -- the log ---------------------------------------------------------------------------------

    def _add(self, **fields: Any) -> Hit:
        with self._lock:
            hit = Hit(seq=len(self.log) + 1, **fields)
            self.log.append(hit)
            return hit

    def _as_request(self, entry: LoggedRequest, side: str = "as") -> None:  # (the authorization server's thread)
        self._add(side=side, method=entry.method, path=entry.path, query=entry.query, headers=dict(entry.headers),
                  body=entry.body, status=entry.status)

    def hits(self, side: str | None = None, kind: str | None = None) -> list[Hit]:
        with self._lock:
            return [h for h in self.log if (side is None or h.side == side) and (kind is None or h.kind == kind)]

    def as_hits(self, endpoint: str, side: str = "as") -> list[Hit]:
        """Requests to one of the authorization server's endpoints (``authorize``, ``token``, ``register``)."""
        return [h for h in self.hits(side) if h.path.rstrip("/").endswith("/" + endpoint)]

    def current_server(self) -> AuthorizationServer | None:
        """The authorization server the metadata names now (the second one once switched)."""
        if self.switched is not None and self.host2 is not None:
            return self.host2.server
        return self.server

    @property
    def issuer(self) -> str:
        assert self.server is not None
        return self.server.issuer

    # -- the protected resource ------------------------------------------------------------------

    def prm_urls(self) -> dict[str, str]:
        assert self.hub is not None and self.endpoint is not None
        origin = f"http://127.0.0.1:{self.hub.port}"
        path = urlsplit(self.endpoint.url).path
        return {"custom": origin + CUSTOM_PRM, "path": origin + PRM_WELL_KNOWN + path, "root": origin + PRM_WELL_KNOWN}

    def prm_document(self) -> dict[str, Any]:
        current = self.current_server()
        return protected_resource_metadata(self.resource, [current.issuer if current is not None else self.issuer],
                                           scopes_supported=self.protected.scopes_supported)

    def _challenge(self, error: str | None = None, *, scope: str | None = None) -> str:
        p = self.protected
        if p.legacy:
            return bearer_challenge(error=error)
        return bearer_challenge(error=error, resource_metadata=self.prm_urls()["custom"] if p.header else None,
                                scope=scope or p.challenge_scope)

    def _lacks_scope(self, rec: HttpRequestRecord, token: str | None) -> bool:
        """A JSON-RPC request (not the first of a client) whose valid token lacks the scenario's
        required scope."""
        needed = self.protected.required_scope
        if not needed or self.server is None or rec.method != "POST":
            return False
        try:
            message = json.loads(rec.body or b"")
        except ValueError:
            return False
        if not (isinstance(message, dict) and "id" in message and isinstance(message.get("method"), str)) \
                or message["method"] in ("initialize", "server/discover"):
            return False
        claims = self.server.verify(token or "") or {}
        granted = claims.get("scope") if isinstance(claims.get("scope"), str) else ""
        return needed not in granted.split()

    def valid(self, token: str | None) -> bool:
        """A token of this run's authorization server, unexpired, for this resource."""
        server = self.current_server()
        if not token or server is None or token in self.expired:
            return False
        claims = server.verify(token)
        if claims is None:
            return False
        aud = claims.get("aud")
        auds = aud if isinstance(aud, list) else [aud]
        return self.resource in auds

    def _guard(self, rec: HttpRequestRecord) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        token = bearer_token_of(rec.header("authorization"))
        ok = self.valid(token)
        short = ok and self._lacks_scope(rec, token)
        hit = self._add(side="rs", method=rec.method, path=rec.path, query=rec.query, headers=dict(rec.headers),
                        body="", rec=rec, kind="mcp", status=403 if short else None if ok else 401)
        if ok and self.protected.expire_first and not self.expired and token:
            self.expired.add(token)  # served this once; from the next request on, expired
        if ok and self.protected.migrate is not None and self.switched is None:
            self.switched = hit.seq + 1  # this request is served; from the next on, the second server
        if short:
            challenge = self._challenge("insufficient_scope", scope=self.protected.required_scope)
            return 403, [(b"www-authenticate", challenge.encode()), (b"content-type", b"application/json")], \
                b'{"error": "insufficient_scope"}'
        if ok:
            return None
        challenge = self._challenge("invalid_token" if token else None)
        return 401, [(b"www-authenticate", challenge.encode()), (b"content-type", b"application/json")], \
            b'{"error": "unauthorized"}'

    async def _fallback(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Everything on the MCP server's origin that is not the endpoint: the metadata documents
        (2025-03-26: the authorization server itself)."""
        path = scope.get("path", "")
        query = scope.get("query_string", b"").decode("latin-1")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.protected.legacy and self.server is not None:
            body_in = await read_body(receive) if scope.get("method") in ("POST", "PUT", "PATCH") else b""
            answer = self.server.handle(Request(scope.get("method", ""), path, query, headers, body_in))  # logged as "as"
            await send({"type": "http.response.start", "status": answer.status,
                        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()]})
            await send({"type": "http.response.body", "body": answer.body})
            return
        status, body = 404, b'{"error": "not_found"}'
        kind = "other"
        if self.endpoint is not None:
            served = {name: urlsplit(url).path for name, url in self.prm_urls().items()}
            if path in served.values() or path.startswith(PRM_WELL_KNOWN):
                kind = "prm"
            if scope.get("method") == "GET" and any(served[name] == path for name in self.protected.prm_at):
                status, body = 200, json.dumps(self.prm_document()).encode()
        self._add(side="rs", method=scope.get("method", ""), path=path, query=query, headers=headers, body="",
                  status=status, kind=kind)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

    # -- what the judgement reads ----------------------------------------------------------------

    def transcript(self) -> list[str]:
        return [h.line() for h in self.hits()]

    def started(self) -> bool:
        """Did the client do anything toward authorization (metadata or the authorization server)?"""
        return any(h.kind == "prm" for h in self.hits("rs")) or bool(self.hits("as"))

    def authorized(self) -> bool:
        """Has the client used a valid token on the MCP endpoint (the flow is done)?"""
        return any(h.token and h.status is None for h in self.hits("rs", "mcp"))

    def scope_of(self, token: str | None) -> list[str]:
        """The scopes of a token this run's authorization server issued ([] for any other)."""
        claims = self.server.verify(token) if token and self.server is not None else None
        scope = claims.get("scope") if claims else None
        return scope.split() if isinstance(scope, str) else []

    def tokens_sent(self) -> list[Hit]:
        return [h for h in self.hits("rs", "mcp") if h.token]
