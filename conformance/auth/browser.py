"""A headless "browser" for clients under test that open the authorization URL in one.

The suite sets ``BROWSER`` for the client process to ``<python> <this file> %s`` (Python's
``webbrowser``, ``xdg-open`` and most "open a URL" helpers honour it).  Given the authorization
URL, it returns at once (the visit goes on in a child process) (so a client that waits for its browser command to return is not held),
then, as a person approving at once would: GETs the URL without following redirects, and follows
the authorization server's redirect to the client's callback only when it is a loopback URL
(``localhost``, ``127.0.0.1``, ``[::1]``), never anywhere else.  Every request has a deadline;
what it did goes to ``$MCP_CONFORMANCE_BROWSER_LOG`` when set (one line each).

Standard library only: it runs in the client's environment, not the suite's.
"""

from __future__ import annotations

import http.client
import os
import sys
import time
from urllib.parse import urljoin, urlsplit

TIMEOUT = 10.0
LOOPBACK = ("localhost", "127.0.0.1", "::1")


def _log(line: str) -> None:
    path = os.environ.get("MCP_CONFORMANCE_BROWSER_LOG")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{time.time():.3f} {line}\n")
        except OSError:
            pass


def _get(url: str) -> tuple[int, str | None]:
    parts = urlsplit(url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname or "", parts.port, timeout=TIMEOUT)
    try:
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("GET", target, headers={"User-Agent": "mcp-conformance-browser", "Accept": "text/html,*/*"})
        response = conn.getresponse()
        response.read(65536)
        return response.status, response.getheader("Location")
    finally:
        conn.close()


def visit(url: str) -> int:
    """Visit the authorization URL and follow its redirect to a loopback callback; 0 if done."""
    if urlsplit(url).scheme not in ("http", "https"):
        _log(f"refused: not an http(s) URL: {url[:200]}")
        return 2
    try:
        status, location = _get(url)
        _log(f"GET {url[:300]} -> {status} {location or ''}")
        hops = 0
        while status in (301, 302, 303, 307, 308) and location and hops < 5:
            target = urljoin(url, location)
            host = (urlsplit(target).hostname or "").lower()
            if host not in LOOPBACK:
                _log(f"not followed (not a loopback URL): {target[:300]}")
                return 3
            url = target
            status, location = _get(url)
            _log(f"GET {url[:300]} -> {status} {location or ''}")
            hops += 1
        return 0
    except (OSError, http.client.HTTPException, ValueError) as exc:
        _log(f"failed: {type(exc).__name__}: {exc}")
        return 1


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: browser.py URL\n")
        return 2
    if hasattr(os, "fork") and not os.environ.get("MCP_CONFORMANCE_BROWSER_FOREGROUND"):
        if os.fork():  # the caller's command returns at once; the visit goes on in the child (in
            return 0   # the client's process group: the suite's end of the client run ends it too)
        code = visit(argv[0])
        os._exit(code)
    return visit(argv[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
