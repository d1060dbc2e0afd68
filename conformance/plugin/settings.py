"""The plugin's options validated into a run's :class:`Settings`: the target (a server's
:func:`conformance.server.target.server_target`, a client's
:func:`conformance.client.target.client_target`), versions, requirement selection, timeouts, report
directory and formats, baseline, and the authorization of the run; every mistake a
``pytest.UsageError`` naming the flag and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pytest

from conformance.options import DEFAULT_REPORT_DIR, DEFAULT_TIMEOUT, get_option, option_named
from conformance.spec.requirements import catalogue
from conformance.spec.requirements import select as select_requirements
from conformance.spec.versions import UnknownVersionError, parse_versions

__all__ = ["Settings", "read_settings", "build_target", "build_client_target", "report_dir", "refuse_xdist",
           "check_schemas"]


def build_target(
    *,
    command: str | Sequence[str] | None,
    url: str | None,
    transport: str | None,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | None = None,
    default: bool = False,
) -> Any:
    """Validate the target options (a :class:`conformance.runtime.connect.Target`,
    :func:`conformance.server.target.server_target`); raise pytest.UsageError naming what is wrong
    and the fix."""
    # I/O modules (anyio...) are imported lazily: the plugin is loaded into every pytest run
    from conformance.server.target import ServerTargetError, server_target

    try:
        return server_target(command=command, url=url, transport=transport, timeout=timeout, cwd=cwd, default=default)
    except ServerTargetError as exc:
        raise pytest.UsageError(str(exc)) from None


def build_client_target(*, command: str, transport: str | None, timeout: float = DEFAULT_TIMEOUT,
                        call_command: str | None = None, run_budget: float | None = None,
                        stall_budget: float | None = None, auth: bool = False) -> Any:
    """Validate the client options (a :class:`conformance.client.target.ClientTarget`); a mistake is
    a usage error."""
    from conformance.client.target import ClientTargetError, client_target

    try:
        return client_target(command=command, transport=transport, timeout=timeout, call_command=call_command,
                             run_budget=run_budget, stall_budget=stall_budget, auth=auth)
    except ClientTargetError as exc:
        raise pytest.UsageError(str(exc)) from None




@dataclass
class Settings:
    """A run's options, validated: what :class:`~conformance.plugin.session.SessionRun` runs."""

    target: Any  # conformance.runtime.connect.Target | ClientTarget | None
    versions: tuple[str, ...]
    timeout: float
    run_timeout: float | None  # None: derived from the timeout and the plan
    jobs: int | None  # None: the role's default (conformance.server.role.default_jobs(transport))
    strict: bool
    report_dir: Path
    select: list[str]
    exclude: list[str]
    selected: list[str]  # requirement ids after select/exclude
    schema_dir: str | None
    formats: tuple[str, ...] = ()  # report formats besides report.json (conformance.report.render)
    baseline: Any = None  # conformance.report.baseline.Baseline | None
    role: str = "server"  # whose requirements: "server" (we are the client) or "client"


def _versions(values: Iterable[str]) -> tuple[str, ...]:
    try:
        return parse_versions(list(values))
    except UnknownVersionError as exc:
        raise pytest.UsageError(str(exc)) from None


def _selection(select: list[str], exclude: list[str], role: str = "server") -> list[str]:
    reqs = {rid: r for rid, r in catalogue().items() if r.role == role}
    names = {rid: [rid, *r.aliases] for rid, r in reqs.items()}
    import fnmatch

    for flag, globs in (("--mcp-select", select), ("--mcp-exclude", exclude)):
        for g in globs:
            if not any(fnmatch.fnmatchcase(n, g) for ns in names.values() for n in ns):
                raise pytest.UsageError(
                    f"{flag} {g!r} matches no {role} requirement id; list them with `mcp-conformance list"
                    f"{' --role client' if role == 'client' else ''}` (globs: * and ?, e.g. "
                    f"'{'client.lifecycle' if role == 'client' else 'lifecycle'}.*')"
                )
    return select_requirements(list(reqs), select, exclude)


def _from_cli(config: pytest.Config) -> bool:
    """Is this run the ``mcp-conformance`` command's (its plugin is registered)?"""
    return any(getattr(p, "mcp_conformance_cli", False) is True for p in config.pluginmanager.get_plugins())


def _number(config: pytest.Config, name: str, what: str, kind: Any, ok: Any, rule: str) -> Any:
    """Option ``name`` parsed with ``kind`` (None when not given); a usage error naming the flag
    when it is not ``what`` or breaks ``rule``."""
    raw = get_option(config, name)
    if raw in (None, ""):
        return None
    opt = option_named(name)
    # named as typed: from pytest its flag, from mcp-conformance (which passes it on) both
    flag = opt.flag if not opt.cli or not _from_cli(config) else f"{opt.cli} ({opt.flag})"
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{flag} {raw!r} is not {what}") from None
    if not ok(value):
        raise pytest.UsageError(f"{flag} must be {rule}, not {raw!r}")
    return value


def read_settings(config: pytest.Config) -> Settings:
    """The ``--mcp-*`` options (and ini keys) validated; a mistake is a pytest.UsageError."""
    timeout = _number(config, "timeout", "a number of seconds", float, lambda v: v > 0, "positive")
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    jobs = _number(config, "jobs", "a whole number", int, lambda v: v >= 1, "at least 1")
    run_timeout = _number(config, "run_timeout", "a number of seconds", float, lambda v: v > 0, "positive")
    versions = _versions(get_option(config, "version"))
    select = list(get_option(config, "select"))
    exclude = list(get_option(config, "exclude"))
    command = get_option(config, "server_command")
    url = get_option(config, "server_url")
    client_command = (get_option(config, "client_command") or "").strip() or None
    transport = get_option(config, "transport")
    if client_command and (command or url):
        raise pytest.UsageError(
            "--mcp-client-command tests a client, --mcp-server-command/--mcp-server-url a server: give one of them"
        )
    role = "client" if client_command else (get_option(config, "role") or "server")
    selected = _selection(select, exclude, role)
    target = None
    if client_command:
        target = build_client_target(
            command=client_command, transport=transport, timeout=timeout,
            call_command=get_option(config, "call_command"),
            run_budget=_number(config, "client_timeout", "a number of seconds", float, lambda v: v > 0, "positive"),
            stall_budget=_number(config, "stall_timeout", "a number of seconds", float, lambda v: v > 0, "positive"),
            auth=bool(get_option(config, "auth")),
        )
    elif command or url:
        target = build_target(command=command, url=url, transport=transport, timeout=timeout, cwd=None)
        target = _with_auth(config, target)
    elif transport and not get_option(config, "list"):
        raise pytest.UsageError("--mcp-transport needs a target: --mcp-server-command, --mcp-server-url or "
                                "--mcp-client-command")
    return Settings(
        target=target,
        versions=versions,
        timeout=timeout,
        run_timeout=run_timeout,
        jobs=jobs,
        strict=bool(get_option(config, "strict")),
        report_dir=report_dir(config),
        select=select,
        exclude=exclude,
        selected=selected,
        schema_dir=get_option(config, "schema_dir"),
        formats=_formats(get_option(config, "report_format")),
        baseline=_baseline(get_option(config, "baseline"), Path(config.invocation_params.dir)),
        role=role,
    )


def _with_auth(config: pytest.Config, target: Any) -> Any:
    """The target with the run's authorization (conformance.auth.context), ended with the session."""
    auth, token, command = get_option(config, "auth"), get_option(config, "auth_token"), get_option(config, "auth_token_command")
    upstream, hierarchy = get_option(config, "upstream_tool"), get_option(config, "scope_hierarchy")
    proxy = get_option(config, "proxy_static_client")
    if not (auth or token or command or upstream or hierarchy or proxy):
        return target
    from conformance.auth.context import AuthSetupError, attach

    try:
        target, close = attach(target, auth=bool(auth), token=token, token_command=command, upstream_tool=upstream,
                               scope_hierarchy=hierarchy, proxy_static_client=proxy)
    except AuthSetupError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.add_cleanup(close)
    return target


def report_dir(config: pytest.Config) -> Path:
    """``--mcp-report-dir`` (default reports/), relative to where pytest was invoked."""
    path = Path(get_option(config, "report_dir") or DEFAULT_REPORT_DIR)
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path


def refuse_xdist(config: pytest.Config) -> None:
    """A run against one target is one event loop with shared sessions and one report: spread
    over pytest-xdist workers it would be split, each worker holding part of the plan (it used to
    stop at 83 % and never finish).  Refused, with what to do instead.  Judged by this session's
    own configuration only: a run started from inside an xdist worker (a test that runs
    ``mcp-conformance``, or pytester) inherits PYTEST_XDIST_WORKER but is a session of its own."""
    workers = getattr(config.option, "numprocesses", None)
    dist = getattr(config.option, "dist", "no")
    if hasattr(config, "workerinput") or (workers not in (None, 0, "0")) or dist not in (None, "no"):
        raise pytest.UsageError(
            "mcp-conformance runs one target's scenarios in one process (shared sessions, one report) and "
            "does not run under pytest-xdist: drop -n/--numprocesses (or pass -n 0). The suite already "
            "overlaps its waits; to test several servers at once, list them in a file and run "
            "`pytest -n N --mcp-targets FILE` (one item per server, spread over the workers)."
        )


def _formats(values: list[str]) -> tuple[str, ...]:
    from conformance.report.render import parse_formats

    try:
        return parse_formats(values)
    except ValueError as exc:
        raise pytest.UsageError(f"--mcp-report-format: {exc}") from None


def _baseline(value: str | None, base: Path) -> Any:
    if not value:
        return None
    from conformance.report.baseline import BaselineError, parse_baseline

    path = Path(value)
    if not path.is_absolute():
        path = base / path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise pytest.UsageError(f"--mcp-baseline {value!r} cannot be read: {exc.strerror or exc}") from None
    try:
        return parse_baseline(text, source=str(value))
    except BaselineError as exc:
        raise pytest.UsageError(f"--mcp-baseline: {exc}") from None



def check_schemas(settings: Settings) -> None:
    """Every version's schema is there (or downloaded and verified); else a usage error."""
    from conformance.schema.loader import SchemaError, load_schema

    for v in settings.versions:
        try:
            load_schema(v)
        except SchemaError as exc:
            raise pytest.UsageError(str(exc)) from None
