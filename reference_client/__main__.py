"""``mcp-reference-client``: a strict MCP client that tours a server.

    mcp-reference-client --stdio "python -m reference_server"      # dual-era: server/discover, else initialize
    mcp-reference-client --url http://127.0.0.1:8000/mcp --version 2025-06-18
    mcp-reference-client --sse-url http://127.0.0.1:8000/sse
    mcp-reference-client --stdio CMD --fault ignore-ping             # break one client requirement

Exit codes: 0 the tour completed and the server sent nothing invalid; 1 a step failed, the server
sent something invalid (listed on stderr) or answered a protocol version this client does not
support; 2 usage error; 3 the server could not be started or reached.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any, Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from conformance.spec.versions import VERSIONS

    from reference_client.faults import describe

    p = argparse.ArgumentParser(prog="mcp-reference-client", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="faults (--fault NAME: break exactly one client requirement; "
                                       "fixtures/broken_clients/README.md says which):\n" + describe())
    p.add_argument("server_url", nargs="?", metavar="URL",
                   help="a streamable HTTP endpoint, as the official runner passes it (same as --url); with "
                        "MCP_CONFORMANCE_SCENARIO set, MCP_CONFORMANCE_PROTOCOL_VERSION is the default version")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--stdio", metavar="CMD", help="start the server with this command and speak MCP on its stdin/stdout")
    target.add_argument("--url", help="a streamable HTTP endpoint (http://127.0.0.1:PORT/mcp)")
    target.add_argument("--sse-url", help="a legacy HTTP+SSE endpoint (http://127.0.0.1:PORT/sse)")
    p.add_argument("--version", default=None, choices=[*VERSIONS, "dual"],
                   help="protocol version to ask for; default (or 'dual'): dual-era -- probe with server/discover "
                        "(2026-07-28), fall back to initialize asking for 2025-11-25 (legacy HTTP+SSE: initialize "
                        "directly); under the official runner $MCP_CONFORMANCE_PROTOCOL_VERSION")
    p.add_argument("--fault", default=None, metavar="NAME", help="inject one named fault (listed below)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer (default 10)")
    p.add_argument("--no-call", action="store_true", help="list tools but do not call them")
    p.add_argument("--no-validate", action="store_true", help="do not validate what the server sends against the official schema")
    p.add_argument("--quiet", "-q", action="store_true", help="print only failures")
    auth = p.add_argument_group("authorization (streamable HTTP and HTTP+SSE: a 401 starts the OAuth flow; reference_client/authorize.py)")
    auth.add_argument("--client-id", help="a pre-registered client ID (under the official runner: MCP_CONFORMANCE_CONTEXT's client_id)")
    auth.add_argument("--client-secret", help="its secret, if it has one")
    auth.add_argument("--client-issuer", help="the authorization server (issuer) the pre-registered client belongs to; "
                                              "default: the first one the server names")
    auth.add_argument("--client-metadata-url", help="an https URL of a client ID metadata document this client is known by, "
                                                    "used where the authorization server supports them (under the official "
                                                    "runner: its fixed test URL)")
    auth.add_argument("--serve-client-metadata", action="store_true",
                      help="serve this client's own client ID metadata document on 127.0.0.1 over TLS (a self-signed "
                           "certificate) and be known by its URL where the authorization server supports them (tests)")
    auth.add_argument("--authorize", choices=["auto", "fetch", "browser"], default="auto",
                      help="how the authorization URL is visited: browser = run $BROWSER with it and take the answer on a "
                           "loopback listener (127.0.0.1); fetch = headless, GET it without following the redirect and "
                           "read the answer from Location (the official runner's convention); auto (default) = browser "
                           "when $BROWSER is set")
    auth.add_argument("--auth-timeout", type=float, default=60.0, help="seconds one whole authorization may take (default 60)")
    ext = p.add_argument_group("authorization extensions (reference_client/grants.py; under the official runner each comes "
                               "from MCP_CONFORMANCE_CONTEXT)")
    ext.add_argument("--client-key", metavar="PEM_FILE", help="the pre-registered client's private key: it authenticates "
                                                             "with a signed JWT (private_key_jwt, RFC 7523 2.2)")
    ext.add_argument("--client-key-alg", default=None, help="its JWS algorithm (default ES256)")
    ext.add_argument("--assertion", metavar="JWT_FILE", help="a workload identity JWT: the JWT bearer grant (RFC 7523 2.1, "
                                                             "SEP-1933), no other grant")
    ext.add_argument("--id-token", metavar="JWT_FILE", help="the user's identity assertion (an ID token): exchanged at "
                                                            "--idp-token-endpoint for an ID-JAG (RFC 8693), then the JWT bearer grant")
    ext.add_argument("--idp-token-endpoint", help="the enterprise identity provider's token endpoint")
    ext.add_argument("--idp-client-id", help="this client at the identity provider")
    ext.add_argument("--idp-client-secret", help="its secret there, if it has one")
    ext.add_argument("--no-dpop", action="store_true", help="never ask for DPoP-bound tokens (default: where the "
                                                            "authorization server supports DPoP, RFC 9449)")
    return p


MAX_RESTARTS = 2  # a server that keeps dying is not started a third time


async def _run(ns: argparse.Namespace) -> int:
    from conformance.spec.versions import spec

    from reference_client.core import ClientCore
    from reference_client.links import LinkClosed, StdioLink
    from reference_client.session import DUAL, ClientQuit, MODERN_VERSIONS, Session, StepFailed, tour

    def log(line: str) -> None:
        if not ns.quiet or line.startswith("FAILED"):
            print(f"mcp-reference-client: {line}", file=sys.stderr, flush=True)

    mode = ns.version
    start = MODERN_VERSIONS[-1] if mode == DUAL else mode
    link: Any
    if ns.stdio:
        argv = shlex.split(ns.stdio)
        if not argv:
            print("mcp-reference-client: --stdio needs a command", file=sys.stderr)
            return 2
        transport = "stdio"
    elif ns.url:
        transport = "streamable-http"
    else:
        transport = "sse"
    def new_core() -> Any:
        return ClientCore(start, validate=not ns.no_validate, fault=ns.fault, transport=transport)

    def stdio_link(core: Any) -> StdioLink:
        link = StdioLink(argv)
        link.stderr_is_error = core.faulty("stderr-is-error")
        return link

    core = new_core()
    if ns.stdio:
        link = stdio_link(core)
    elif ns.url:
        from reference_client.http_links import HttpLink

        link = HttpLink(ns.url, stateless=spec(start).stateless, timeout=ns.timeout)
        link.faulty = core.faulty
        if spec(start).stateless:
            link.protocol_version = start  # every request names its version (no negotiation)
    else:
        from reference_client.http_links import SseLink

        link = SseLink(ns.sse_url, timeout=ns.timeout)
    if ns.fault:
        log(f"fault {ns.fault}: {_fault_summary(ns.fault)}")
    quit_why: str | None = None
    auth = _authorizer(ns, core, log) if ns.url or ns.sse_url else None
    if auth is not None:
        link.auth = auth
    restarts = 0
    while True:
        try:
            async with _maybe(auth), link:
                session = Session(core, link, timeout=ns.timeout, log=log)
                try:
                    failed = await tour(session, log, call_tools=not ns.no_call, mode=mode)
                except ClientQuit as exc:
                    quit_why = str(exc)
                    failed = [f"quit: {exc}"]
                    log(f"quitting: {exc}")
                except StepFailed as exc:
                    failed = [str(exc)]
                    log(f"FAILED {exc}")
                finally:  # the shutdown faults act on the version the session settled on
                    link.close_stdin_first = not core.faulty("kill-without-closing-stdin")
                    link.escalate = not core.faulty("no-escalation")
                    link.delete_session = not core.faulty("no-delete")
        except LinkClosed as exc:
            # 2026-07-28 transports/stdio: "If the server process exits unexpectedly, the client SHOULD
            # restart it" (the protocol is stateless: the tour starts again on a fresh process)
            died = getattr(link, "died", None)
            if (ns.stdio and died is not None and restarts < MAX_RESTARTS and core.negotiated
                    and spec(core.negotiated).stateless and not core.faulty("no-restart")):
                restarts += 1
                log(f"the server exited unexpectedly (exit code {died}): restarting it ({restarts} of {MAX_RESTARTS})")
                core = new_core()
                link = stdio_link(core)
                continue
            print(f"mcp-reference-client: {exc}", file=sys.stderr)
            return 3 if not core.negotiated else 1
        break
    for v in core.violations:
        print(f"mcp-reference-client: INVALID {v}", file=sys.stderr)
    if auth is not None and auth.refused is not None:
        print(f"mcp-reference-client: FAILED authorization: {auth.refused}", file=sys.stderr)
    ok = not failed and not core.violations and quit_why is None
    if core.negotiated:
        log(f"protocol version {core.negotiated} ({'stateless' if spec(core.negotiated).stateless else 'initialize'})")
    log(f"tour {'completed' if ok else 'FAILED'}: {len(failed)} failed step(s), {len(core.violations)} invalid message(s)")
    return 0 if ok else 1


def _authorizer(ns: argparse.Namespace, core: Any, log: Any) -> Any:
    import os

    from reference_client.authorize import RUNNER_CIMD_URL, AuthConfig, Authorizer, runner_context

    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO") or ""
    runner = bool(scenario)
    context = runner_context() if runner else {}
    browser = os.environ.get("BROWSER") or None
    if ns.authorize == "fetch":
        browser = None
    elif ns.authorize == "browser" and browser is None:
        raise SystemExit("mcp-reference-client: --authorize browser needs $BROWSER")
    def given(option: str | None, key: str, *, file: bool = False) -> str | None:
        """The option's value (a file's contents, stripped, for ``file``), else the runner's context value."""
        if option and file:
            try:
                with open(option, encoding="utf-8") as fh:
                    return fh.read().strip()
            except OSError as exc:
                raise SystemExit(f"mcp-reference-client: cannot read {option}: {exc.strerror or exc}") from exc
        if option:
            return option
        value = context.get(key)
        return value if isinstance(value, str) and value else None

    config = AuthConfig(
        client_id=given(ns.client_id, "client_id"),
        client_secret=given(ns.client_secret, "client_secret"),
        client_issuer=ns.client_issuer,
        # the official runner's auth/* scenarios know this client by their fixed test URL
        client_metadata_url=ns.client_metadata_url or (RUNNER_CIMD_URL if scenario.startswith("auth/") else None),
        serve_client_metadata=ns.serve_client_metadata and not ns.client_metadata_url,
        browser=browser, timeout=ns.timeout, flow_timeout=ns.auth_timeout,
        client_key_pem=given(ns.client_key, "private_key_pem", file=True),
        client_key_alg=given(ns.client_key_alg, "signing_algorithm") or "ES256",
        assertion=given(ns.assertion, "valid_jwt", file=True),  # (the runner's other JWTs are for broken clients)
        id_token=given(ns.id_token, "idp_id_token", file=True),
        idp_token_endpoint=given(ns.idp_token_endpoint, "idp_token_endpoint"),
        idp_client_id=given(ns.idp_client_id, "idp_client_id"),
        idp_client_secret=given(ns.idp_client_secret, "idp_client_secret"),
        dpop=not ns.no_dpop)
    return Authorizer(ns.url or ns.sse_url, lambda: core.judged_version, config, log=log, fault=core.faulty)


class _maybe:
    """``async with`` an optional context manager."""

    def __init__(self, cm: Any) -> None:
        self.cm = cm

    async def __aenter__(self) -> Any:
        return await self.cm.__aenter__() if self.cm is not None else None

    async def __aexit__(self, *exc: Any) -> None:
        if self.cm is not None:
            await self.cm.__aexit__(*exc)


def _fault_summary(name: str) -> str:
    from reference_client.faults import KNOWN

    return KNOWN[name].summary


def main(argv: Sequence[str] | None = None) -> int:
    import os

    from conformance.spec.versions import VERSIONS

    parser = _parser()
    ns = parser.parse_args(argv)
    targets = [t for t in (ns.stdio, ns.url, ns.sse_url, ns.server_url) if t]
    if len(targets) != 1:
        parser.error("give exactly one server: --stdio CMD, --url URL, --sse-url URL or a URL argument")
    if ns.server_url:
        ns.url = ns.server_url
    if ns.version is None:
        env_version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") if os.environ.get("MCP_CONFORMANCE_SCENARIO") else None
        if env_version and env_version not in VERSIONS:
            parser.error(f"MCP_CONFORMANCE_PROTOCOL_VERSION {env_version!r} is not a version this client knows ({', '.join(VERSIONS)})")
        ns.version = env_version or "dual"
    from conformance.spec.versions import spec

    from reference_client.faults import KNOWN

    if ns.sse_url and ns.version in VERSIONS and spec(ns.version).stateless:
        parser.error(f"protocol version {ns.version} has no HTTP+SSE transport (--sse-url)")
    if ns.client_metadata_url:
        from urllib.parse import urlsplit

        parts = urlsplit(ns.client_metadata_url)
        # "The client_id URL MUST use the "https" scheme and contain a path component"
        if parts.scheme != "https" or parts.path in ("", "/"):
            parser.error("--client-metadata-url must be an https URL with a path (https://example.com/client.json)")
    if ns.fault is not None and ns.fault not in KNOWN:
        parser.error(f"unknown fault {ns.fault!r} (known: {', '.join(KNOWN)})")
    import anyio

    try:
        return anyio.run(_run, ns)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
