"""The reference client writes only JSON: a value the server sent that JSON cannot carry (1e400
reads as infinity) never goes back into its answers (found by the fuzzer's huge-number operator:
it answered an elicitation whose field default was 1e400 with "Infinity", which is not JSON, so the
request went without a response)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# run from the checkout (tests/reference_client would shadow the package inside pytest)
SCRIPT = """
import json, sys
from reference_client.core import elicitation_answer, fit_elicitation
params, required = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
print(json.dumps(fit_elicitation(elicitation_answer(params), "2025-11-25", required)))
"""


@pytest.mark.parametrize("required", [False, True])
def test_an_elicitation_default_json_cannot_carry_is_not_echoed(required: bool) -> None:
    params = ('{"message":"may I ask?","requestedSchema":{"type":"object","properties":'
              '{"ok":{"type":"boolean","default":1e400},"n":{"type":"number","default":2}}'
              + (',"required":["ok"]' if required else "") + "}}")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, params, json.dumps(["ok"] if required else [])],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert answer == ({"action": "decline"} if required else {"action": "accept", "content": {"n": 2}})
