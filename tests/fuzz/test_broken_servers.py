"""Fuzzing alone (no scenarios) finds the envelope and error-code defects of
fixtures/broken_servers/: each defect's requirement, and nothing else."""

from __future__ import annotations

import pytest

from .broken_matrix import ENVELOPE_DEFECTS, run

# a server that stays silent on what it cannot parse is also silent on a request nested deeper than
# its parser goes (4096 levels): that request is still owed an answer (RFC 8259 lets it refuse, not ignore)
ALSO = {"parse-error-silent": {("jsonrpc.request.response-required", "deep-nesting")}}


@pytest.mark.parametrize("defect, requirement, version", ENVELOPE_DEFECTS, ids=[d[0] for d in ENVELOPE_DEFECTS])
def test_fuzzing_finds_the_defect(defect, requirement, version) -> None:
    got = run(defect, version, messages=2000)
    assert requirement in got["found"], got["findings"]
    extra = {(f["requirement"], op) for f in got["findings"] if f["requirement"] != requirement for op in f["operators"]}
    assert extra <= ALSO.get(defect, set()), got["findings"]
