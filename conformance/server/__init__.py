"""The server role: the suite is the client of a server under test (see ARCHITECTURE.md)."""
