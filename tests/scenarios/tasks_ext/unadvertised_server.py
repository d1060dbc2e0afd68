"""The reference server without the tasks extension: server/discover advertises no
``io.modelcontextprotocol/tasks`` and no tool creates a task (an optional extension left out).

    python tests/scenarios/tasks_ext/unadvertised_server.py [reference-server arguments ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    from reference_server.features import tasks_ext

    tasks_ext.capabilities = lambda features, version: {}
    tasks_ext.declared = lambda ctx: False  # tools with ext_task run synchronously (or -32021)
    from reference_server.__main__ import main as server_main

    return server_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
