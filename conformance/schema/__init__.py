"""The schema oracle: find and verify the official MCP schemas, validate messages against them.

``validate(message, version, direction, answering=...)`` returns a list of :class:`Finding`
(empty: the message conforms).  Pure: no network, process or socket I/O on the validation path;
:func:`load_schema` reads files and, only when no schema directory is configured and the user cache
lacks the file, downloads the pinned official file once.
"""

from __future__ import annotations

from conformance.schema.findings import Finding
from conformance.schema.loader import SchemaError, configure, load_schema, schema_dir_from_env
from conformance.schema.validate import validate, validate_definition

__all__ = [
    "validate",
    "validate_definition",
    "load_schema",
    "configure",
    "schema_dir_from_env",
    "SchemaError",
    "Finding",
]
