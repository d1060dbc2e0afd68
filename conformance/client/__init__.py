"""The client role: the suite plays the server a client under test connects to (see ARCHITECTURE.md).

:mod:`.relay` is not imported: it runs by path (``python -S``) as the stdio server a client starts."""
