"""Fixtures for integration tests against real peers (see fixtures/peers/launch.py).

``peers_installed``  session: runs scripts/install-peers once; skips with its reason when npm or the
                     registry is unavailable.  Returns the path of server-everything's dist/index.js.
``start_peer``       function: ``start_peer(name, transport, **kw) -> PeerInfo``; every peer started
                     through it is stopped at teardown (also when the test fails).  An unavailable
                     peer (npm unreachable, reference_server not written yet) skips the test.
``spawn_peer``       function: ``spawn_peer(argv, env=...) -> Popen`` for stdio peers; stopped at
                     teardown (close stdin, TERM, KILL of the process group).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # fixtures/ is not an installed package
    sys.path.insert(0, str(ROOT))

from fixtures.peers import launch  # noqa: E402
from fixtures.peers.launch import PeerInfo, PeerUnavailable  # noqa: E402


@pytest.fixture(scope="session")
def peers_installed() -> str:
    try:
        return launch.ensure_installed()
    except PeerUnavailable as exc:
        pytest.skip(exc.reason)


@pytest.fixture
def start_peer() -> Iterator[Callable[..., PeerInfo]]:
    with contextlib.ExitStack() as stack:

        def start(name: str, transport: str, **kwargs: object) -> PeerInfo:
            try:
                return stack.enter_context(launch.start_peer(name, transport, **kwargs))  # type: ignore[arg-type]
            except PeerUnavailable as exc:
                pytest.skip(f"peer {name!r}: {exc.reason}")

        yield start


@pytest.fixture
def spawn_peer() -> Iterator[Callable[..., object]]:
    with contextlib.ExitStack() as stack:

        def spawn(argv: tuple[str, ...], **kwargs: object) -> object:
            return stack.enter_context(launch.spawn(argv, **kwargs))  # type: ignore[arg-type]

        yield spawn
