"""Sans-I/O wire layer: JSON-RPC envelopes, NDJSON framing (stdio) and SSE decoding (HTTP), the
shared readings (:mod:`.rules`) and the record of a connection (:mod:`.transcript`)."""

from __future__ import annotations

from .envelope import MISSING, Envelope, Kind, dumps, id_repr, parse_envelope, parse_value, same_id
from .ndjson import Frame, NDJSONDecoder, encode_line, looks_like_split_message
from .sse import SSEDecoder, SSEEvent, encode_event

__all__ = [
    # envelope
    "MISSING",
    "Envelope",
    "Kind",
    "dumps",
    "id_repr",
    "parse_envelope",
    "parse_value",
    "same_id",
    # ndjson
    "Frame",
    "NDJSONDecoder",
    "encode_line",
    "looks_like_split_message",
    # sse
    "SSEDecoder",
    "SSEEvent",
    "encode_event",
]
