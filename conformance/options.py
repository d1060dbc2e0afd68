"""The one option table of the suite: ``mcp-conformance`` flags, pytest flags and ini keys.

Each :class:`Option` is one setting with one meaning and one parsing whichever way it is given:
the pytest plugin adds its ``--mcp-*`` flag and ini key (:mod:`conformance.plugin.hooks`), the
CLI adds its flag to the subcommands in ``commands`` and passes the value on to pytest
(:mod:`conformance.cli`), and both read it back with :func:`get_option` (command line, else ini,
else the default).  What the values are validated into (a server or client target, the
settings of a run) is :mod:`conformance.plugin.settings`.

The fuzz command (``mcp-conformance fuzz``, :mod:`conformance.fuzz.command`) keeps argparse
flags of its own: they share names with these (``--command``, ``--url``, ``--transport``) but not
defaults or meaning (one ``--version`` string, ``reports/fuzz``, a start-up deadline), and it goes
through no pytest; the server it fuzzes is validated by the same
:func:`conformance.server.target.server_target` as this table's target options.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformance.spec.versions import VERSIONS, Transport

if TYPE_CHECKING:
    import pytest

__all__ = ["GROUP", "DEFAULT_TIMEOUT", "DEFAULT_REPORT_DIR", "Option", "OPTIONS", "option_named", "get_option",
           "default_target_args"]

GROUP = "mcp-conformance"
DEFAULT_TIMEOUT = 10.0
DEFAULT_REPORT_DIR = "reports"



# the option table, shared with the CLI


@dataclass(frozen=True)
class Option:
    """One option: pytest flag, ini key and CLI flag share the same meaning and parsing."""

    name: str  # dest, and the ini key with "mcp_" prefix
    flag: str  # pytest flag
    cli: str | None  # mcp-conformance flag (None: pytest only)
    help: str
    kind: str = "str"  # "str" | "float" | "flag" | "append"
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    default: Any = None
    ini: bool = True
    commands: tuple[str, ...] = ("server",)  # CLI subcommands that take it

    @property
    def dest(self) -> str:
        return f"mcp_{self.name}"

    @property
    def ini_type(self) -> str:
        return {"flag": "bool", "append": "args"}.get(self.kind, "string")


OPTIONS: tuple[Option, ...] = (
    Option("server_command", "--mcp-server-command", "--command",
           "command that starts the server under test (one string, split like a shell; "
           "{port} is replaced by a free port for HTTP servers)", metavar="CMD"),
    Option("server_url", "--mcp-server-url", "--url",
           "URL of the MCP endpoint (streamable HTTP, e.g. http://127.0.0.1:8000/mcp) or of the "
           "legacy SSE endpoint (/sse)", metavar="URL"),
    Option("client_command", "--mcp-client-command", "--command",
           "command that starts the client under test (run with sh -c): {server} becomes the path of a launcher "
           "that starts the suite's scenario server (stdio), {url} its URL (streamable HTTP, legacy SSE), {config} an "
           "mcp.json naming either; without a placeholder the launcher or URL is appended as the last argument",
           metavar="CMD", commands=("client",)),
    Option("call_command", "--mcp-client-call-command", "--call-command",
           "command that makes the client call a tool ({tool}, {tool_args_json}, {tool_args_kv} and the placeholders "
           "of the client command); without it the requirements that need a tool call are 'not exercised' skips",
           metavar="CMD", commands=("client",)),
    Option("client_timeout", "--mcp-client-timeout", "--client-timeout",
           "seconds one run of the client may take before the suite ends it (default 30)", kind="float",
           metavar="SECONDS", commands=("client",)),
    Option("stall_timeout", "--mcp-stall-timeout", "--stall-timeout",
           "seconds a request the suite never answers is left waiting for the client to give up on it (the "
           "timeout scenarios; default 75: longer than the SDKs' default request timeouts)", kind="float",
           metavar="SECONDS", commands=("client",)),
    Option("transport", "--mcp-transport", "--transport",
           "transport: stdio (default with a command), streamable-http (default with a URL) or sse",
           choices=tuple(t.value for t in Transport), metavar="TRANSPORT", commands=("server", "client")),
    Option("version", "--mcp-version", "--version",
           f"protocol version to test, repeatable or comma-separated, or 'all' "
           f"({', '.join(VERSIONS)}; default 2025-11-25)", kind="append", metavar="VERSION",
           commands=("server", "client", "list")),
    Option("timeout", "--mcp-timeout", "--timeout",
           f"seconds to wait for each expected answer (default {DEFAULT_TIMEOUT:g})", kind="float",
           metavar="SECONDS", commands=("server", "client")),
    Option("run_timeout", "--mcp-run-timeout", "--run-timeout",
           "seconds the whole run may take; items still running then are stopped and the rest are not run "
           "(error, kind deadline) (default: 60 + timeout x (2 x versions + scenarios run / 4))",
           kind="float", metavar="SECONDS", commands=("server", "client")),
    Option("jobs", "--mcp-jobs", "--jobs",
           "how much runs at once (default: 8 on stdio, 16 over HTTP; on one core 3 and 4; client runs 4, 3 on one core): N-1 versions side by side, each running its "
           "scenarios in order on its own session, and up to N-1 scenarios on connections of their own -- a "
           "process on stdio, a session over HTTP -- beside them; --jobs 1 runs everything strictly one after "
           "the other, and every concurrent run gives the same verdicts",
           metavar="N", commands=("server", "client")),
    Option("strict", "--mcp-strict", "--strict",
           "grade SHOULD violations as failures", kind="flag", commands=("server", "client")),
    Option("report_dir", "--mcp-report-dir", "--report-dir",
           f"directory for report.json and its renderings (default {DEFAULT_REPORT_DIR}/)", metavar="DIR", commands=("server", "client")),
    Option("report_format", "--mcp-report-format", "--report-format",
           "what to write besides report.json: html (report.html), junit (junit.xml), badge (badge.svg, "
           "badge.json), markdown (summary.md), all (default) or none; repeatable or comma-separated",
           kind="append", metavar="FORMAT", commands=("server", "client")),
    Option("baseline", "--mcp-baseline", "--baseline",
           "file of expected failures: the official runner's YAML (server:/client: lists of scenario ids) or "
           "requirement ids (YAML list or one per line); listed and failing -> xfail, listed and passing -> "
           "stale, which fails the run", metavar="FILE", commands=("server", "client")),
    Option("select", "--mcp-select", "--select",
           "only requirements whose id (or official alias) matches this glob; repeatable",
           kind="append", metavar="GLOB", commands=("server", "client", "list")),
    Option("exclude", "--mcp-exclude", "--exclude",
           "skip requirements whose id (or official alias) matches this glob; repeatable",
           kind="append", metavar="GLOB", commands=("server", "client", "list")),
    Option("schema_dir", "--mcp-schema-dir", "--schema-dir",
           "directory with the official schemas (<dir>/<version>/schema.json); default "
           "$MCP_CONFORMANCE_SCHEMA_DIR, the user cache, or a verified download", metavar="DIR", commands=("server", "client")),
    Option("auth", "--mcp-auth", "--auth",
           "the server requires OAuth authorization and is told to trust the suite's authorization server (started "
           "for the run): {issuer}, {jwks_url}, {resource} and {upstream} in the command become its issuer URL, its "
           "JWKS URL, the MCP endpoint's URL and an upstream API the suite serves (see --upstream-tool); "
           "MCP_CONFORMANCE_AUTH_SERVER_URL is set to the issuer. For a client: run the "
           "authorization scenarios (the suite's server requires OAuth; $BROWSER is a headless one)", kind="flag",
           commands=("server", "client")),
    Option("auth_token", "--mcp-auth-token", "--auth-token",
           "the server requires OAuth authorization from an authorization server of its own: a valid access "
           "token for it (checks that need tokens of the suite's making skip)", metavar="TOKEN"),
    Option("auth_token_command", "--mcp-auth-token-command", "--auth-token-command",
           "like --auth-token, the token printed by this command (run once)", metavar="CMD"),
    Option("scope_hierarchy", "--mcp-scope-hierarchy", "--scope-hierarchy",
           "with --auth: a scope of the server that implies narrower ones, as 'BROAD>NARROW [NARROW ...]' "
           "(repeatable); the run checks that a token with only the broader scope is served where the narrower "
           "ones are (2026-07-28; without this option that check skips)", kind="append", metavar="BROAD>NARROW"),
    Option("proxy_static_client", "--mcp-proxy-static-client", "--proxy-static-client",
           "with --auth: the server is an MCP proxy in front of the suite's authorization server (the third-party "
           "one), where it holds this static client id, as ID or ID:SECRET (pre-registered there for the run); the "
           "run checks that a client registered at the proxy is asked for consent before its request goes on "
           "(without this option that check skips)", metavar="ID[:SECRET]"),
    Option("upstream_tool", "--mcp-upstream-tool", "--upstream-tool",
           "with --auth: the server's tool that calls an upstream API, as NAME or 'NAME {JSON arguments}'; the "
           "server is told the upstream the suite serves through {upstream} in the command (also in the "
           "arguments) or $MCP_CONFORMANCE_UPSTREAM_URL, and the run checks that the client's token is not "
           "passed through to it (without this option that check skips)", metavar="TOOL"),
    Option("role", "--mcp-role", "--role",
           "whose requirements to list: server (default) or client", choices=("server", "client"),
           metavar="ROLE", commands=("list",)),
    Option("list", "--mcp-list", None,
           "print the requirement catalogue (filtered by --mcp-version/--mcp-select/--mcp-exclude) and exit",
           kind="flag", ini=False, commands=()),
    Option("list_format", "--mcp-list-format", None, "catalogue format for --mcp-list: text or json",
           choices=("text", "json"), ini=False, commands=()),
)
_BY_NAME = {o.name: o for o in OPTIONS}


def option_named(name: str) -> Option:
    """The option whose ``name`` (its dest without ``mcp_``) is ``name``."""
    return _BY_NAME[name]


def get_option(config: "pytest.Config", name: str) -> Any:
    """The command-line value, else the ini value, else the default (None / [] / False)."""
    opt = _BY_NAME[name]
    value = config.getoption(opt.dest)
    if value not in (None, [], ""):
        return value
    if opt.ini:
        ini = config.getini(opt.dest)
        if opt.kind == "flag":
            return bool(ini)
        if opt.kind == "append":
            return list(ini) if ini else []
        if isinstance(ini, str) and ini.strip():
            return ini.strip()
    if opt.kind == "flag":
        return False
    if opt.kind == "append":
        return []
    return opt.default



def default_target_args(transport: str = "stdio", python: str | None = None) -> tuple[list[str], str | None]:
    """The bundled reference server as (command argv, url) for ``transport``."""
    py = python or sys.executable
    if transport == Transport.STDIO.value:
        return [py, "-m", "reference_server", "--transport", "stdio"], None
    path = "/sse" if transport == Transport.SSE.value else "/mcp"
    return [py, "-m", "reference_server", "--transport", transport, "--port", "{port}"], f"http://127.0.0.1:{{port}}{path}"
