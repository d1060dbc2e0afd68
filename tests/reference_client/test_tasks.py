"""The reference client as the receiver of 2025-11-25 tasks (``reference_client/tasks.py``, through
the core): what the strict client answers, and what each receiver fault changes.  Pure: the task
store runs on a clock the test moves."""

from __future__ import annotations

from typing import Any

import pytest

from reference_client.core import ClientCore
from reference_client.tasks import POLL_MS, WORK

RELATED = "io.modelcontextprotocol/related-task"
SAMPLING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 8}
FORM = {"message": "may I?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}}}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _core(fault: str | None = None) -> tuple[ClientCore, Clock]:
    core = ClientCore("2025-11-25", fault=fault)
    core.negotiated = "2025-11-25"
    clock = Clock()
    core.tasks.clock = clock
    return core, clock


_n = iter(range(1, 10_000))


def ask(core: ClientCore, method: str, params: Any = None) -> Any:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": f"s{next(_n)}", "method": method}
    if params is not None:
        msg["params"] = params
    return core.receive(msg)


def create(core: ClientCore, method: str = "sampling/createMessage") -> str:
    params = SAMPLING if method == "sampling/createMessage" else FORM
    reply = ask(core, method, {**params, "task": {"ttl": 30_000}}).reply
    return reply["result"]["task"]["taskId"]


def test_strict_client_declares_tasks_on_2025_11_25_only() -> None:
    assert ClientCore("2025-11-25").capabilities["tasks"] == {
        "list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}}
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2026-07-28"):
        assert "tasks" not in ClientCore(version).capabilities


def test_strict_receiver_lifecycle() -> None:
    core, clock = _core()
    plain = ask(core, "sampling/createMessage", SAMPLING).reply["result"]
    created = ask(core, "sampling/createMessage", {**SAMPLING, "task": {"ttl": 30_000}}).reply["result"]["task"]
    tid = created["taskId"]
    assert isinstance(tid, str) and len(tid) == 32 and created["status"] == "working"
    assert created["ttl"] == 30_000 and created["pollInterval"] == POLL_MS and created["createdAt"].endswith("Z")
    got = ask(core, "tasks/get", {"taskId": tid}).reply["result"]
    assert got["status"] == "working" and RELATED not in got.get("_meta", {})
    waiting = ask(core, "tasks/result", {"taskId": tid})
    assert waiting.reply is None and waiting.later == (pytest.approx(WORK), tid)  # held until the task ends
    clock.now += WORK
    assert ask(core, "tasks/get", {"taskId": tid}).reply["result"]["status"] == "completed"
    result = ask(core, "tasks/result", {"taskId": tid}).reply["result"]
    assert result.pop("_meta") == {RELATED: {"taskId": tid}} and result == plain  # exactly the plain answer
    listed = ask(core, "tasks/list", {}).reply["result"]
    assert [t["taskId"] for t in listed["tasks"]] == [tid] and "nextCursor" not in listed
    refused = ask(core, "tasks/cancel", {"taskId": tid}).reply
    assert refused["error"]["code"] == -32602  # already terminal
    other = create(core, "elicitation/create")
    assert other != tid
    cancelled = ask(core, "tasks/cancel", {"taskId": other}).reply["result"]
    assert cancelled["status"] == "cancelled"
    clock.now += 10 * WORK
    assert ask(core, "tasks/get", {"taskId": other}).reply["result"]["status"] == "cancelled"
    assert ask(core, "tasks/result", {"taskId": other}).reply["error"]["code"] == -32603
    for method, params in (("tasks/get", {"taskId": "nope"}), ("tasks/result", {"taskId": "nope"}),
                           ("tasks/cancel", {"taskId": "nope"}), ("tasks/list", {"cursor": "never-issued"})):
        assert ask(core, method, params).reply["error"]["code"] == -32602, method
    meta = {"taskId": tid, "_meta": {RELATED: {"taskId": other}}}
    assert ask(core, "tasks/get", meta).reply["result"]["taskId"] == tid  # the parameter wins
    assert core.violations == []


def test_tasks_expire_after_their_ttl() -> None:
    core, clock = _core()
    tid = create(core)
    clock.now += 31
    assert ask(core, "tasks/get", {"taskId": tid}).reply["error"]["code"] == -32602


def test_without_task_capability_task_metadata_is_ignored() -> None:
    core = ClientCore("2025-11-25", capabilities={"sampling": {}})
    core.negotiated = "2025-11-25"
    reply = ask(core, "sampling/createMessage", {**SAMPLING, "task": {}}).reply
    assert reply["result"]["role"] == "assistant" and "task" not in reply["result"]
    assert ask(core, "tasks/list", {}).reply["error"]["code"] == -32601


@pytest.mark.parametrize("fault,check", [
    ("task-undeclared", lambda core, clock: "tasks" not in core.capabilities and create(core)),
    ("task-undeclared-type", lambda core, clock: "sampling" not in core.capabilities["tasks"]["requests"] and create(core)),
    ("task-plain-result", lambda core, clock: "task" not in ask(core, "sampling/createMessage", {**SAMPLING, "task": {}}).reply["result"]),
    ("task-int-id", lambda core, clock: isinstance(create(core), int)),
    ("task-same-id", lambda core, clock: create(core) == create(core)),
    ("task-no-created-at", lambda core, clock: "createdAt" not in ask(core, "tasks/get", {"taskId": create(core)}).reply["result"]),
    ("task-no-last-updated-at", lambda core, clock: "lastUpdatedAt" not in ask(core, "tasks/get", {"taskId": create(core)}).reply["result"]),
    ("task-no-ttl", lambda core, clock: "ttl" not in ask(core, "tasks/get", {"taskId": create(core)}).reply["result"]),
    ("task-result-early", lambda core, clock: ask(core, "tasks/result", {"taskId": create(core)}).reply["error"]["code"] == -32602),
    ("task-unknown-id-internal-error", lambda core, clock: ask(core, "tasks/get", {"taskId": "x"}).reply["error"]["code"] == -32603),
    ("task-list-empty", lambda core, clock: create(core) and ask(core, "tasks/list", {}).reply["result"]["tasks"] == []),
    ("task-cancel-ignored", lambda core, clock: ask(core, "tasks/cancel", {"taskId": create(core)}).reply["result"]["status"] == "working"),
])
def test_receiver_faults_change_what_they_say(fault: str, check: Any) -> None:
    core, clock = _core(fault)
    assert check(core, clock)


def test_receiver_faults_after_the_task_ended() -> None:
    core, clock = _core("task-list-reopened")
    tid = create(core)
    clock.now += WORK
    assert ask(core, "tasks/get", {"taskId": tid}).reply["result"]["status"] == "completed"
    assert ask(core, "tasks/list", {}).reply["result"]["tasks"][0]["status"] == "working"

    core, clock = _core("task-result-task-data")
    tid = create(core)
    clock.now += WORK
    result = ask(core, "tasks/result", {"taskId": tid}).reply["result"]
    assert result["taskId"] == tid and result["status"] == "completed" and "role" not in result

    core, clock = _core("task-result-no-meta")
    tid = create(core)
    clock.now += WORK
    assert "_meta" not in ask(core, "tasks/result", {"taskId": tid}).reply["result"]

    core, clock = _core("task-cancel-terminal-accepted")
    tid = create(core)
    clock.now += WORK
    assert ask(core, "tasks/cancel", {"taskId": tid}).reply["result"]["status"] == "completed"

    core, clock = _core("task-cancel-reverts")
    tid = create(core)
    assert ask(core, "tasks/cancel", {"taskId": tid}).reply["result"]["status"] == "cancelled"
    assert ask(core, "tasks/get", {"taskId": tid}).reply["result"]["status"] == "cancelled"
    clock.now += WORK
    assert ask(core, "tasks/get", {"taskId": tid}).reply["result"]["status"] == "completed"

    core, clock = _core("task-meta-routes")
    first, second = create(core), create(core)
    got = ask(core, "tasks/get", {"taskId": first, "_meta": {RELATED: {"taskId": second}}}).reply["result"]
    assert got["taskId"] == second

    core, clock = _core("task-meta-on-results")
    tid = create(core)
    assert ask(core, "tasks/get", {"taskId": tid}).reply["result"]["_meta"] == {RELATED: {"taskId": tid}}
