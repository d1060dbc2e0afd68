"""Small helpers shared by server scenarios (no scenarios here)."""

from __future__ import annotations

from typing import Any

from conformance.peer import RawPeer
from conformance.spec.versions import spec
from conformance.wire.envelope import MISSING, Envelope, Kind

__all__ = ["barrier", "is_response", "error_field"]


async def barrier(peer: RawPeer, version: str) -> Envelope:
    """A request whose answer proves everything sent before it was read: ``ping``, or
    ``server/discover`` where ping does not exist (2026-07-28)."""
    method = "ping" if spec(version).ping else "server/discover"
    rid = await peer.request(method)
    return await peer.expect_response(rid)


def is_response(env: Envelope | None) -> bool:
    """A result or error response, or something shaped like one (an id without a method)."""
    if env is None:
        return False
    if env.kind in (Kind.RESULT, Kind.ERROR):
        return True
    value = env.value
    return env.kind is Kind.INVALID and isinstance(value, dict) and "method" not in value and (
        "result" in value or "error" in value
    )


def error_field(env: Envelope, name: str) -> Any:
    err = env.error
    if isinstance(err, dict):
        return err.get(name, MISSING)
    return MISSING
