"""How much CPU a process group has used: the sign that a server which has not answered yet is
still starting (an interpreter loading its imports on a loaded machine) rather than silent.

Linux only (``/proc``); elsewhere :func:`group_cpu_seconds` returns ``None`` and callers fall back
to their plain deadline."""

from __future__ import annotations

import os

__all__ = ["group_cpu_seconds"]

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
