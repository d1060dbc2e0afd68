"""The reference server with a tasks defect that two requirements rightly flag together.

    python tests/scenarios/tasks/tasks_server.py NAME [reference-server arguments ...]

``fixtures/broken_servers/defects_tasks.py`` holds the one-requirement defects; these break a
sentence of basic/utilities/tasks whose violation is also a mismatch with the official schema
(Task.taskId is a string, Task.ttl is required), so basic.schema.messages-valid rightly flags it
too.  ``test_verdicts.py`` asserts the exact set.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[3]
for p in (str(ROOT / "fixtures" / "broken_servers"), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

import defects_features as D  # noqa: E402  (its helpers; importing it only registers its defects)

# name -> (patch, versions, the requirements the suite must flag)
COMPOUND: dict[str, tuple[Callable[[], None], tuple[str, ...], frozenset[str]]] = {}


def compound(name: str, versions: tuple[str, ...], flagged: set[str]) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        COMPOUND[name] = (fn, versions, frozenset(flagged))
        return fn

    return wrap


@compound("tasks-id-number", ("2025-11-25",), {"tasks.id.string", "basic.schema.messages-valid"})
def _id_number() -> None:
    def make(original: Callable, server: Any) -> Callable:
        async def handler(ctx: Any, params: dict) -> Any:
            out = original(ctx, params)
            out = await out if hasattr(out, "__await__") else out
            if isinstance(params.get("task"), dict) and isinstance(out, dict) and isinstance(out.get("task"), dict):
                out["task"]["taskId"] = 7  # the CreateTaskResult names the task by a number
            return out

        return handler

    D._wrap_handler("tools/call", make)


@compound("tasks-get-no-ttl", ("2025-11-25",), {"tasks.get.ttl", "basic.schema.messages-valid"})
def _get_no_ttl() -> None:
    def make(original: Callable, server: Any) -> Callable:
        def handler(ctx: Any, params: dict) -> Any:
            out = original(ctx, params)
            out.pop("ttl", None)
            return out

        return handler

    D._wrap_handler("tasks/get", make)


def main(argv: list[str]) -> int:
    patch, _, _ = COMPOUND[argv[0]]
    patch()
    from reference_server.__main__ import main as server_main

    return server_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
