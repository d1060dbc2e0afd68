"""The resource-server scenarios end to end, through the public CLI: the reference server with
--auth is clean on both HTTP transports and every version with authorization; a run without
authorization options skips them with the reason and sends nothing; --auth-token checks what it
can and skips the rest with the reason; --auth needs HTTP.  (The broken resource servers are in
fixtures/broken_servers/defects_auth.py, run by tests/broken_servers.)

The runs are independent processes, started together in a module-scoped fixture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.auth.context import NO_MINT
from conformance.scenarios.server.authorization import NO_PROXY, NO_UPSTREAM_TOOL
from conformance.auth.server import AuthServerHost
from conformance.scenarios.server.authorization import NOT_REQUIRED
from conformance.spec.requirements import catalogue
from tests.prefetch import Prefetch

ROOT = Path(__file__).resolve().parents[3]
AUTH_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
REF = f"{sys.executable} -m reference_server --port {{port}}"
AUTH_REQS = {rid for rid, r in catalogue().items() if rid.startswith("auth.server.")}
TASKS_BOUND = "tasks.auth-context-bound"
NO_PASSTHROUGH = "auth.server.no-token-passthrough"
PROXY_CONSENT = "auth.server.proxy-consent"
PROXY_ID = "mcp-conformance-proxy"  # on the tasks page, checked only with --auth


def _run(args: list[str], report_dir: Path) -> tuple[int, dict, str]:
    argv = [sys.executable, "-m", "conformance.cli", "server", *args, "--report-dir", str(report_dir),
            "--report-format", "none", "--timeout", "5", "-q"]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300, env=dict(os.environ))
    path = report_dir / "report.json"
    report = json.loads(path.read_text()) if path.exists() else {}
    return proc.returncode, report, proc.stdout[-2000:] + proc.stderr[-2000:]


def _versions(*vs: str) -> list[str]:
    return [a for v in vs for a in ("--version", v)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prefetch[str]]:
    host = AuthServerHost().start()  # the authorization server of a server we cannot configure (--auth-token)
    plans = {
        # the upstream API: {upstream} on streamable HTTP, $MCP_CONFORMANCE_UPSTREAM_URL on SSE
        "http": ["--command", f"{REF} --transport streamable-http --auth --issuer {{issuer}} --jwks-url {{jwks_url}} "
                 "--resource {resource} --upstream {upstream} --scope-hierarchy mcp:admin>mcp:read",
                 "--transport", "streamable-http", "--auth", "--scope-hierarchy", "mcp:admin>mcp:read",
                 "--upstream-tool", "call_upstream", "--select", "auth.*", "--select", TASKS_BOUND,
                 *_versions(*AUTH_VERSIONS)],
        "sse": ["--command", f"{REF} --transport sse --auth", "--transport", "sse", "--auth", "--upstream-tool",
                "call_upstream", "--select", "auth.*", *_versions(*AUTH_VERSIONS[:3])],
        # a tool that makes no upstream request: the passthrough check cannot see anything
        "quiet-tool": ["--command", f"{REF} --transport streamable-http --auth", "--transport", "streamable-http",
                       "--auth", "--upstream-tool", 'echo {"text": "{upstream}"}', "--select", NO_PASSTHROUGH,
                       *_versions("2025-11-25")],
        # an MCP proxy with a static client id at the suite's authorization server: consent first
        "proxy": ["--command", f"{REF} --transport streamable-http --auth --proxy-client-id {PROXY_ID}", "--transport",
                  "streamable-http", "--auth", "--proxy-static-client", PROXY_ID, "--select", PROXY_CONSENT,
                  *_versions(*AUTH_VERSIONS[1:])],
        "no-tool": ["--command", f"{REF} --transport streamable-http --auth", "--transport", "streamable-http",
                    "--auth", "--select", NO_PASSTHROUGH, *_versions("2025-11-25")],
        "none": ["--command", f"{REF} --transport streamable-http", "--transport", "streamable-http",
                 "--select", "auth.*", *_versions("2025-11-25")],
    }
    # --auth-token: the server trusts `host`; its resource is fixed so that the token can name it
    port = _free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    token = host.server.mint(audience=resource, scope="mcp:read")
    plans["token"] = ["--command", f"{sys.executable} -m reference_server --port {port} --transport streamable-http "
                      f"--auth --issuer {host.issuer}", "--url", resource, "--transport", "streamable-http",
                      "--auth-token", token, "--select", "auth.*", *_versions("2025-11-25")]
    # each run started when a test asks for it (tests/prefetch.py: under xdist a worker runs only its share)
    runs = Prefetch(list(plans), lambda name: _run(plans[name], tmp_path_factory.mktemp(name)), 2, name="auth-run")
    try:
        yield runs
    finally:
        runs.close()
        host.stop()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _by_outcome(report: dict) -> dict[str, set[tuple[str, str]]]:
    out: dict[str, set[tuple[str, str]]] = {}
    for r in report.get("results", []):
        out.setdefault(r["outcome"], set()).add((r["requirement"], r["version"]))
    return out


@pytest.mark.parametrize("name, versions", [("http", AUTH_VERSIONS), ("sse", AUTH_VERSIONS[:3])])
def test_the_reference_server_is_a_clean_resource_server(runs: Prefetch[str], name: str, versions: tuple) -> None:
    code, report, log = runs[name].result()
    outcomes = _by_outcome(report)
    assert code == 0, log
    # the default endpoints are the rule of a server without authorization server metadata, and this
    # one serves it (2025-03-26): that requirement is skipped, with the reason; and its endpoints
    # are plain http on 127.0.0.1 (a local test deployment), where https is not judged
    conditional = {(r["requirement"], r["version"]) for r in report["results"] if r["outcome"] == "skip"
                   and ((r["requirement"] == "auth.server.default-endpoints-2025-03-26"
                         and "serves authorization server metadata" in (r.get("reason") or ""))
                        or (r["requirement"] == "auth.server.https-endpoints-2025-03-26"
                            and "plain http on a loopback host" in (r.get("reason") or ""))
                        or (r["requirement"] == PROXY_CONSENT and r.get("reason") == NO_PROXY))}
    # and it is no proxy here (the "proxy" run below is one)
    assert {rid for rid, _ in conditional} == {"auth.server.default-endpoints-2025-03-26",
                                               "auth.server.https-endpoints-2025-03-26", PROXY_CONSENT}
    outcomes["skip"] = outcomes.get("skip", set()) - conditional
    if not outcomes["skip"]:
        del outcomes["skip"]
    assert set(outcomes) == {"pass"}, {k: sorted(v)[:5] for k, v in outcomes.items() if k != "pass"}
    reqs = catalogue()
    transport = "sse" if name == "sse" else "streamable-http"
    checked = AUTH_REQS | ({TASKS_BOUND} if name == "http" else set())
    applicable = {(rid, v) for rid in checked for v in versions if reqs[rid].applies_to(v, transport)}
    assert outcomes["pass"] | conditional == applicable  # every requirement of every version judged, none left over


def test_without_authorization_options_every_scenario_skips_with_the_reason(runs: Prefetch[str]) -> None:
    code, report, log = runs["none"].result()
    assert code == 0, log
    results = report["results"]
    assert results and {r["outcome"] for r in results} == {"skip"}
    assert {r["reason"] for r in results} == {NOT_REQUIRED}
    assert {r["requirement"] for r in results} == {rid for rid in AUTH_REQS if catalogue()[rid].applies_to("2025-11-25", "streamable-http")}


def test_a_token_of_the_servers_own_authorization_server_checks_what_it_can(runs: Prefetch[str]) -> None:
    code, report, log = runs["token"].result()
    assert code == 0, log
    outcomes = _by_outcome(report)
    assert set(outcomes) == {"pass", "skip"}, outcomes
    skipped = {rid for rid, _ in outcomes["skip"]}
    # what needs a token of our making: another audience, issuer, no scope
    assert skipped == {"auth.server.audience", "auth.server.audience-case", "auth.server.foreign-issuer",
                       "auth.server.insufficient-scope-403", "auth.server.insufficient-scope-scopes",
                       NO_PASSTHROUGH, PROXY_CONSENT}
    assert all(NO_MINT in r["reason"] for r in report["results"] if r["outcome"] == "skip")
    passed = {rid for rid, _ in outcomes["pass"]}
    assert {"auth.server.status-401", "auth.server.prm.served", "auth.server.invalid-token-401",
            "auth.server.every-request", "auth.server.no-query-token"} <= passed


def test_a_tool_that_makes_no_upstream_request_skips_the_passthrough_check_with_the_reason(
        runs: Prefetch[str]) -> None:
    code, report, log = runs["quiet-tool"].result()
    assert code == 0, log
    [result] = report["results"]
    assert result["requirement"] == NO_PASSTHROUGH and result["outcome"] == "skip"
    assert "echo (--upstream-tool) made no request to the upstream API" in result["reason"]


def test_without_an_upstream_tool_the_passthrough_check_skips_with_what_to_give(runs: Prefetch[str]) -> None:
    code, report, log = runs["no-tool"].result()
    assert code == 0, log
    assert [(r["outcome"], r["reason"]) for r in report["results"]] == [("skip", NO_UPSTREAM_TOOL)]
    assert "--upstream-tool NAME" in NO_UPSTREAM_TOOL


def test_the_reference_proxy_asks_for_consent_on_every_version(runs: Prefetch[str]) -> None:
    code, report, log = runs["proxy"].result()
    assert code == 0, log
    assert [(r["requirement"], r["version"], r["outcome"]) for r in report["results"]] == [
        (PROXY_CONSENT, v, "pass") for v in AUTH_VERSIONS[1:]]
    assert all("sent nothing on to the third-party authorization server" in r["messages"][0] for r in report["results"])


def test_auth_needs_an_http_transport(tmp_path: Path) -> None:
    code, _, log = _run(["--command", f"{sys.executable} -m reference_server", "--auth"], tmp_path)
    assert code == 2 and "authorization is checked over HTTP only" in log
