"""Cursor pagination, shared by every list method (server/utilities/pagination).

"The cursor is an opaque string token" and "Invalid cursors SHOULD result in an error with code
-32602 (Invalid params)".  Our cursors encode the list method and an offset, so a cursor of one
list cannot be replayed on another.
"""

from __future__ import annotations

import base64
from typing import Any, Sequence

from conformance.spec import errors as codes

from reference_server.errors import RPCError

__all__ = ["paginate", "encode_cursor", "decode_cursor"]


def encode_cursor(method: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{method}|{offset}".encode()).decode().rstrip("=")


def decode_cursor(method: str, cursor: Any, total: int) -> int:
    bad = RPCError(codes.INVALID_PARAMS, f"Invalid params: invalid cursor {cursor!r:.80}", {"cursor": cursor if isinstance(cursor, str) else None})
    if not isinstance(cursor, str) or not cursor or len(cursor) > 200:
        raise bad
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        m, _, off = text.rpartition("|")
        offset = int(off)
    except (ValueError, UnicodeDecodeError):
        raise bad from None
    if m != method or not 0 < offset <= total or encode_cursor(method, offset) != cursor:
        raise bad
    return offset


def paginate(method: str, params: dict[str, Any], items: Sequence[Any], page_size: int) -> tuple[list[Any], str | None]:
    """The page selected by ``params["cursor"]`` and the next cursor (None on the last page)."""
    cursor = params.get("cursor")
    start = 0 if cursor is None else decode_cursor(method, cursor, len(items))
    end = start + max(1, page_size)
    page = list(items[start:end])
    return page, (encode_cursor(method, end) if end < len(items) else None)
