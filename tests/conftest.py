"""Shared test configuration."""

from __future__ import annotations

import compileall
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# First, before any test module or conftest imports jsonschema: through the oracle, jsonschema is
# imported without building rfc3987_syntax's IRI grammar (1-3 s here; no MCP schema uses iri formats).
from conformance.schema.validate import import_jsonschema  # noqa: E402

import_jsonschema()  # the oracle imports it on first need; here, now
from conformance.runtime.signals import terminate_like_interrupt  # noqa: E402
from tests.processes import live_processes  # noqa: E402

# pytester drives the mcp-conformance pytest plugin in tests/runtime (it must be requested from
# the top-level test conftest).
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
SHARED_SCHEMAS = ROOT.parent / "shared" / "mcp-spec" / "schemas"

# The schema oracle reads MCP_CONFORMANCE_SCHEMA_DIR; in this repository's checkout the official
# files sit in ../shared (CI sets the variable too).  Without either, the loader downloads them.
if "MCP_CONFORMANCE_SCHEMA_DIR" not in os.environ and SHARED_SCHEMAS.is_dir():
    os.environ["MCP_CONFORMANCE_SCHEMA_DIR"] = str(SHARED_SCHEMAS)


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI job's timeout, ``kill``) ends the session as Ctrl-C does: fixtures are torn
    down, so the servers and CLI runs the tests started are stopped instead of orphaned."""
    terminate_like_interrupt()
    # A session started in the background of a shell without job control (``cmd &`` in a script,
    # nohup) inherits SIGINT ignored, and so would every process it starts: the CLI's Ctrl-C tests
    # would send a signal nobody hears.  The tests' processes get Python's own handling back.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_sessionstart(session: pytest.Session) -> None:
    """With PYTHONDONTWRITEBYTECODE set, compile the project's bytecode once: the CLI runs and the
    servers the tests start (a dozen per run, hundreds per session) would otherwise compile every
    module from source (~0.1 s of CPU per CLI process, ~0.05 s per server).  Python still reads
    bytecode when told not to write it, and ignores it once the source changes."""
    if sys.dont_write_bytecode:
        for package in ("conformance", "reference_server", "reference_client", "fixtures"):
            compileall.compile_dir(ROOT / package, quiet=1, workers=0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def real_peer_runs(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    """One CLI run of the whole catalogue per real peer x transport for the whole session
    (tests/integration/peer_verdicts.py): ``real_peer_runs.get(peer, transport) -> PeerRun``.
    tests/integration/test_real_peer_verdicts.py asserts their verdicts; other tests read them.
    Each pair runs once per session, also under pytest-xdist (``Runs(shared=...)``)."""
    from integration.peer_verdicts import Runs

    # an xdist worker's base directory sits in the session's: the runs are shared there (a worker
    # is told by its configuration, not by PYTEST_XDIST_WORKER, which child processes inherit)
    workerinput = getattr(pytestconfig, "workerinput", None)
    shared = tmp_path_factory.getbasetemp().parent / "real-peers" if workerinput is not None else None
    workers = int(workerinput.get("workercount", 1)) if workerinput is not None else 1
    runs = Runs(tmp_path_factory.mktemp("real-peers"), shared=shared, workers=workers)
    try:
        yield runs
    finally:
        runs.close()


@pytest.fixture
def process_token() -> Iterator[str]:
    """A token for the command lines of the processes a test starts, unique to this test run:
    ``live_processes(token)`` finds them, and whatever still carries it at teardown is killed,
    so that a test that failed leaves nothing behind for a later one to trip over."""
    token = f"t{uuid.uuid4().hex[:12]}"
    yield token
    for pid in live_processes(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

