"""The role-free runtime: one run against one target, whichever role the suite plays (see ARCHITECTURE.md)."""
