"""The reference MCP server: strict, complete, every version and transport, fault injection.

``python -m reference_server --transport stdio|streamable-http|sse`` (or ``mcp-reference-server``).
The protocol core (:mod:`reference_server.core`) does no I/O; :mod:`reference_server.stdio` and
:mod:`reference_server.http` are thin front-ends.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
