"""``mcp-reference-server`` / ``python -m reference_server``: the command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["main", "build_parser"]

TRANSPORTS = ("stdio", "streamable-http", "sse")


def build_parser() -> argparse.ArgumentParser:
    from reference_server.faults import FAULTS

    fault_lines = "\n".join(f"  {name:<22}{desc}" for name, (_, _, desc) in FAULTS.items())
    p = argparse.ArgumentParser(
        prog="mcp-reference-server",
        description="Strict, complete MCP server for every protocol version and transport, with fault injection.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"faults (--fault NAME[:ARG][@METHOD[,METHOD...]], repeatable):\n{fault_lines}",
    )
    p.add_argument("--transport", choices=TRANSPORTS, default="stdio", help="default: stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1, loopback only)")
    p.add_argument("--port", type=int, default=0, help="HTTP port (default 0: a free port, printed on stderr)")
    p.add_argument("--path", default="/mcp", help="streamable HTTP endpoint path (default /mcp)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG][@METHODS]", help="inject a named fault (see below)")
    p.add_argument("--versions", default="all", help="protocol versions to serve: comma list or 'all' (default)")
    p.add_argument("--page-size", type=int, default=None, help="items per page of list methods")
    p.add_argument("--max-message-bytes", type=int, default=None, help="largest accepted message (default 4 MiB)")
    p.add_argument("--no-validate", action="store_true", help="do not validate inbound messages against the official schema")
    p.add_argument("--allowed-origin", action="append", default=[], help="extra Origin accepted by the HTTP transports")
    p.add_argument("--verbose", "-v", action="store_true", help="diagnostics on stderr")
    a = p.add_argument_group("authorization (HTTP transports): an OAuth 2.1 resource server")
    a.add_argument("--auth", action="store_true", help="require a bearer token (a JWT) on every MCP request")
    a.add_argument("--issuer", help="the authorization server's issuer URL (default: $MCP_CONFORMANCE_AUTH_SERVER_URL)")
    a.add_argument("--jwks-url", help="where its signing keys are (default: jwks_uri of its RFC 8414 metadata)")
    a.add_argument("--resource", help="this server's resource identifier, the tokens' audience (default: its URL)")
    a.add_argument("--auth-scope", action="append", default=[], metavar="SCOPE",
                   help="a scope every request needs (repeatable; default mcp:read)")
    a.add_argument("--scope-hierarchy", action="append", default=[], metavar="BROAD>NARROW",
                   help="a scope that implies narrower ones, e.g. 'mcp:admin>mcp:read mcp:write' (repeatable): a token "
                        "with the broader scope is sufficient where the narrower ones are required")
    a.add_argument("--proxy-client-id", metavar="ID[:SECRET]",
                   help="be an MCP proxy in front of the issuer, where it holds this static client id (and secret): "
                        "its origin becomes the authorization server clients register with, and each client is asked "
                        "for consent before its request goes on to the issuer")
    a.add_argument("--upstream", metavar="URL",
                   help="an upstream API for the call_upstream tool, called with the server's own credentials, never the "
                        "client's token (default: $MCP_CONFORMANCE_UPSTREAM_URL; no tool without either)")
    return p


def _default_schema_dir() -> None:
    if os.environ.get("MCP_CONFORMANCE_SCHEMA_DIR"):
        return
    here = Path(__file__).resolve().parent.parent
    shared = here.parent / "shared" / "mcp-spec" / "schemas"
    if shared.is_dir():
        os.environ["MCP_CONFORMANCE_SCHEMA_DIR"] = str(shared)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from conformance.spec.versions import parse_versions, VERSIONS

    from reference_server.core import ServerConfig
    from reference_server.upstream import ENV_UPSTREAM_URL
    from reference_server.faults import FaultError, FaultPlan
    from reference_server.features import build_server

    try:
        faults = FaultPlan.parse(args.fault)
    except FaultError as exc:
        print(f"mcp-reference-server: {exc}", file=sys.stderr)
        return 2
    versions = parse_versions([args.versions], default=VERSIONS)
    config = ServerConfig(versions=versions, faults=faults, validate=not args.no_validate,
                          upstream=args.upstream or os.environ.get(ENV_UPSTREAM_URL) or None)
    if args.page_size is not None:
        config.page_size = max(1, args.page_size)
    if args.max_message_bytes is not None:
        config.max_message_bytes = max(1024, args.max_message_bytes)
    if args.verbose:
        config.log = lambda text: print(f"mcp-reference-server: {text}", file=sys.stderr, flush=True)
    _default_schema_dir()
    server = build_server(config)
    if args.transport == "stdio":
        from reference_server.stdio import run

        run(server)
        return 0
    from reference_server.http import run_http

    auth = None
    if args.auth:
        from reference_server.auth import AuthGuard, AuthSettings

        issuer = args.issuer or os.environ.get("MCP_CONFORMANCE_AUTH_SERVER_URL")
        if not issuer:
            print("mcp-reference-server: --auth needs --issuer (or MCP_CONFORMANCE_AUTH_SERVER_URL)", file=sys.stderr)
            return 2
        scopes = tuple(s for arg in args.auth_scope for s in arg.split()) or ("mcp:read",)
        from conformance.wire.oauth import parse_scope_hierarchy

        try:
            implies = parse_scope_hierarchy(args.scope_hierarchy)
        except ValueError as exc:
            print(f"mcp-reference-server: --scope-hierarchy {exc}", file=sys.stderr)
            return 2
        proxy_id, _, proxy_secret = (args.proxy_client_id or "").partition(":")
        auth = AuthGuard(AuthSettings(issuer=issuer, resource=args.resource, jwks_url=args.jwks_url, scopes=scopes,
                                      implies=implies, proxy_client_id=proxy_id or None,
                                      proxy_client_secret=proxy_secret or None))
        import threading

        threading.Thread(target=auth.warm, name="jwks-warm", daemon=True).start()  # keys fetched while we start
    return run_http(server, transport=args.transport, host=args.host, port=args.port, path=args.path, allowed_origins=args.allowed_origin, auth=auth)


if __name__ == "__main__":
    sys.exit(main())
