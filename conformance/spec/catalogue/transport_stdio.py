"""basic/transports (stdio; 2026-07-28: basic/transports/stdio) and the transports' general
message rule (UTF-8)."""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import LATEST, Transport, spec_url

STDIO_PAGE = "basic/transports/stdio"  # 2026-07-28; earlier: basic/transports#stdio
STDIO = [Transport.STDIO]
AREA = "transport-stdio"

define(
    "transport.stdio.no-embedded-newlines",
    "MUST",
    url=spec_url(LATEST, STDIO_PAGE),
    quote="Messages are delimited by newlines, and MUST NOT contain embedded newlines.",
    area=AREA,
    transports=STDIO,
    note=(
        "Seen as consecutive stdout lines that are not JSON on their own but form one JSON "
        "message when joined with newlines (a pretty-printed message, or a raw newline inside a "
        "string): the client cannot read such a message."
    ),
)

define(
    "transport.stdio.stdout-only-messages",
    "MUST",
    url=spec_url(LATEST, STDIO_PAGE),
    quote="The server MUST NOT write anything to its `stdout` that is not a valid MCP message.",
    area=AREA,
    transports=STDIO,
    note=(
        "Flags stdout lines that are not JSON-RPC messages at all: text that is not JSON (log "
        "lines, banners), blank lines, JSON values without any JSON-RPC member, and (2024-11-05, "
        "which has no UTF-8 rule of its own) lines that are not UTF-8.  A line that is JSON-RPC "
        "but malformed or schema-invalid is judged by basic.messages.jsonrpc and "
        "basic.schema.messages-valid; a line longer than the suite's limit is not judged here."
    ),
)

define(
    "transport.stdio.lf-delimiter",
    "SHOULD",
    url=spec_url(LATEST, STDIO_PAGE),
    quote="Messages are delimited by newlines",
    area=AREA,
    transports=STDIO,
    note=(
        "Graded as a warning at most: the sentence names the newline as the delimiter but does "
        "not say how the line ends.  A CR before the LF is JSON whitespace, so the message still "
        "parses (the official SDKs tolerate it), and a last message without its newline before "
        "stdout ends is one a line-reading client may never deliver.  Both are reported here."
    ),
)

define(
    "transport.stdio.exit-on-eof",
    "SHOULD",
    since="2026-07-28",
    url=spec_url("2026-07-28", STDIO_PAGE, "shutdown"),
    quote="Servers SHOULD exit promptly when their standard input is closed or reads return end-of-file.",
    area=AREA,
    transports=STDIO,
    note=(
        "'Promptly' is read as 'within the configured timeout' (--timeout).  Earlier revisions word "
        "only the client's shutdown procedure; that reading is lifecycle.shutdown.stdio."
    ),
)

define(
    "transport.utf8",
    "MUST",
    since="2025-03-26",
    url=spec_url(LATEST, "basic/transports", "messages"),
    quote="JSON-RPC messages MUST be UTF-8 encoded.",
    area="transport",
    note=(
        "Checked on every transport: a stdout line, an HTTP body or an SSE event that is not valid "
        "UTF-8.  2024-11-05 has no such sentence (there, stdout that is not UTF-8 falls under "
        "transport.stdio.stdout-only-messages)."
    ),
)
