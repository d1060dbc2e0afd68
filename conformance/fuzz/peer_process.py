"""What the fuzz engines read of the peer's process, whichever direction: its resident memory
(sampled during a campaign, reported) and its stderr (kept with an exit finding, secrets redacted).
Used by :mod:`conformance.fuzz.engine` (the server's process) and
:mod:`conformance.fuzz.client_engine` (the client's process and what it started).
"""

from __future__ import annotations

__all__ = ["rss_kib", "tree_rss_kib", "redact"]


def rss_kib(pid: int | None) -> int | None:
    """Resident memory of process ``pid`` in KiB (``/proc/<pid>/status``); None when /proc cannot tell."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def tree_rss_kib(pid: int | None) -> int | None:
    """Resident memory of ``pid`` and every process under it (the client the shell started, and what
    the client started: its server launcher), in KiB; None when /proc cannot tell."""
    if not pid:
        return None
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen or len(seen) > 64:
            continue
        seen.add(p)
        kib = rss_kib(p)
        if kib is None:
            continue
        total += kib
        try:
            with open(f"/proc/{p}/task/{p}/children", "rb") as f:
                todo.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            pass
    return total or None


def redact(text: str) -> str:
    """``text`` (a peer's stderr) with what looks like a secret's value replaced by ``<redacted>``."""
    import re

    return re.sub(r"(?i)((?:token|secret|password|key|authorization)\S*\s*[=:]\s*)\S+", r"\1<redacted>", text)
