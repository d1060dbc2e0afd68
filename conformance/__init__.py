"""mcp-conformance: a conformance test suite for the Model Context Protocol."""

__version__ = "0.1.0"
