"""The error a handler raises to answer a request with a JSON-RPC error."""

from __future__ import annotations

from typing import Any

from conformance.wire.envelope import MISSING

__all__ = ["RPCError"]


class RPCError(Exception):
    """Answer the current request with ``{"code", "message", "data"?}``.

    ``http_status`` is a hint for the HTTP front-end (2026-07-28 ties some errors to a status:
    -32020/-32021/-32022 and a malformed ``_meta`` to 400, an unknown method to 404).
    """

    def __init__(self, code: int, message: str, data: Any = MISSING, *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def to_json(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not MISSING:
            err["data"] = self.data
        return err
