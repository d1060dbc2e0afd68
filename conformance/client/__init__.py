"""The client role: the suite plays the server a client under test connects to (see ARCHITECTURE.md)."""
