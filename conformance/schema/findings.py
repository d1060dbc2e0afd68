"""Typed schema findings.  Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Finding"]


@dataclass(frozen=True)
class Finding:
    """One reason a message does not conform to the official schema (or a rule it cannot express).

    ``json_path`` points into the message (``$.result.tools[0].inputSchema``); ``schema_path`` into
    the schema (``#/$defs/Tool/properties/inputSchema/type``) or, for rules the schema cannot
    express, names the rule (``rule:id-not-null``, ``rule:batch-not-allowed``).
    """

    json_path: str
    schema_path: str
    message: str
    definition: str | None = None  # the schema definition the message was validated against

    def to_json(self) -> dict[str, Any]:
        return {
            "json_path": self.json_path,
            "schema_path": self.schema_path,
            "message": self.message,
            "definition": self.definition,
        }

    def __str__(self) -> str:
        return f"{self.json_path}: {self.message} ({self.schema_path})"
