"""How a run is interrupted: SIGTERM ends it as Ctrl-C does, and both are remembered.

Role-free and entry-free: the CLI (``mcp-conformance server|client``), the fuzz command and the
project's own test session install the handlers; the pytest session reads :data:`SIGNALLED`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SIGNALLED", "terminate_like_interrupt"]

#: signals (SIGINT, SIGTERM) that interrupted this process's run, set by the handlers of
#: :func:`terminate_like_interrupt`: the run ends as interrupted however pytest unwound it
SIGNALLED: list[int] = []


def terminate_like_interrupt() -> None:
    """SIGTERM ends a run the way Ctrl-C does: connections closed, processes stopped, partial
    report written (only from the main thread, and not when SIGTERM is ignored).  Both signals are
    also remembered (:data:`SIGNALLED`): an interrupt that lands where the KeyboardInterrupt is
    caught or wrapped -- inside an import during collection, which pytest then reports as an
    internal error -- still ends the run as interrupted, exit 130.  The project's own test session
    uses it too (tests/conftest.py)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: Any) -> None:
        SIGNALLED.append(signum)
        raise KeyboardInterrupt(f"signal {signum}")

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, handler)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, handler)
