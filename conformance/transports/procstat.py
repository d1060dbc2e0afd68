"""How much CPU a process group has used: the sign that a server which has not answered yet is
still starting (an interpreter loading its imports on a loaded machine) rather than silent.

Linux only (``/proc``); elsewhere :func:`group_cpu_seconds` returns ``None`` and callers fall back
to their plain deadline."""

from __future__ import annotations

import os

__all__ = ["group_cpu_seconds", "busy", "BUSY_CPU"]

# CPU seconds a process group uses in a second of waiting, at or above which it is busy (starting),
# not idle: an idle process blocked on a read uses none (ticks are 10 ms)
BUSY_CPU = 0.03

_TICK = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100)


def group_cpu_seconds(pgid: int) -> float | None:
    """User + system CPU seconds of every live process in process group ``pgid``, with what its
    reaped children used; ``None`` when ``/proc`` cannot be read (not Linux)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    total = 0
    found = False
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
        fields = stat[stat.rfind(b")") + 2:].split()
        try:
            if int(fields[2]) != pgid:
                continue
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        except (IndexError, ValueError):
            continue
        found = True
    return total * _TICK if found else None


def busy(before: float | None, after: float | None) -> bool:
    """Whether two :func:`group_cpu_seconds` readings a second apart show a busy process group."""
    return before is not None and after is not None and after - before >= BUSY_CPU
