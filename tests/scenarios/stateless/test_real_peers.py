"""The 2026-07-28 area on real peers, on the transports that revision defines (stdio and streamable
HTTP): a view over the session's one run per peer x transport (``real_peer_runs``; every fail and
warning is asserted by tests/integration/test_real_peer_verdicts.py against the expected files).
What this adds:

* server-everything (npm) is legacy-only: server/discover is answered with -32601 (stdio) or an
  HTTP 400 "Server not initialized" (HTTP), so every requirement of the area is skipped as
  "target does not support 2026-07-28", never failed.
* the official Python SDK and the tiny server serve 2026-07-28: the area's core requirements
  (nothing optional gates them) pass.
"""

from __future__ import annotations

import pytest

from integration import peer_verdicts as pv

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(pv.RUN_DEADLINE + 120)]

V = "2026-07-28"
AREAS = ("discover", "versioning", "stateless", "mrtr", "subscriptions", "headers")
# requirements every 2026-07-28 peer is judged on (nothing optional gates them)
CORE = {
    "discover.implemented",
    "discover.server-info",
    "versioning.unsupported-version",
    "versioning.removed-methods",
    "stateless.meta.required-fields",
    "stateless.result-type",
    "stateless.error-codes.reserved-range",
    "stateless.error-codes.retired",
}


def _area(runs: pv.Runs, peer: str, transport: str) -> list[dict]:
    run = runs.get(peer, transport)
    if run.unavailable:
        pytest.skip(run.unavailable)
    assert run.report is not None, run.problem
    return [r for r in run.report["results"] if r["version"] == V and r["requirement"].split(".")[0] in AREAS]


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_server_everything_is_skipped_as_legacy(real_peer_runs: pv.Runs, transport: str) -> None:
    results = _area(real_peer_runs, "everything", transport)
    assert results and all(r["outcome"] == "skip" for r in results)
    judged = [r for r in results if not r["reason"].startswith(("not applicable", "scenario "))]
    assert judged and all(r["reason"].startswith(f"target does not support {V}: server/discover") for r in judged)


@pytest.mark.parametrize(("peer", "transport"), [("sdk", "stdio"), ("sdk", "streamable-http"), ("tiny", "stdio"), ("tiny", "streamable-http")])
def test_a_2026_peer_passes_the_core_of_the_area(real_peer_runs: pv.Runs, peer: str, transport: str) -> None:
    passed = {r["requirement"] for r in _area(real_peer_runs, peer, transport) if r["outcome"] == "pass"}
    assert passed >= CORE
