"""basic/transports#http-with-sse: the HTTP+SSE transport of 2024-11-05.

Later revisions deprecate it and only refer to it ("Servers wanting to support older clients
should: Continue to host both the SSE and POST endpoints of the old transport"); its sentences are
on the 2024-11-05 page only, so these requirements apply to 2024-11-05.
"""

from __future__ import annotations

from conformance.spec.requirements import define
from conformance.spec.versions import Transport, spec_url

V = "2024-11-05"
PAGE = "basic/transports"
SSE = [Transport.SSE]
AREA = "transport-sse"

define(
    "transport.sse.endpoint-event",
    "MUST",
    versions=(V,),
    url=spec_url(V, PAGE, "http-with-sse"),
    quote=(
        "When a client connects, the server MUST send an `endpoint` event containing a URI for "
        "the client to use for sending messages."
    ),
    area=AREA,
    transports=SSE,
    note=(
        "Checked on a connection of our own: the first event of the stream is `endpoint` (sent "
        "'when a client connects'; the sequence diagram shows it first, and the client cannot "
        "send anything before it) and its data is a URI reference that resolves to an http(s) URL."
    ),
)

define(
    "transport.sse.post-endpoint",
    "MUST",
    versions=(V,),
    url=spec_url(V, PAGE, "http-with-sse"),
    quote="All subsequent client messages MUST be sent as HTTP POST requests to this endpoint.",
    area=AREA,
    transports=SSE,
    note=(
        "The client's duty, which binds the server to take the messages there: a POST of a valid "
        "message to the endpoint is answered with a 2xx status (202 Accepted is usual; the status "
        "is not worded)."
    ),
)

define(
    "transport.sse.message-events",
    "MUST",
    versions=(V,),
    url=spec_url(V, PAGE, "http-with-sse"),
    quote=(
        "Server messages are sent as SSE `message` events, with the message content encoded as "
        "JSON in the event data."
    ),
    area=AREA,
    transports=SSE,
    note=(
        "The sentence has no RFC 2119 keyword; it defines the transport (there is no other way "
        "for server messages to reach the client), so it is graded as a MUST: a response must "
        "arrive on the SSE stream, and every event carrying a message must be a `message` event "
        "(an event without an `event:` field is one).  Whether the data is a JSON-RPC message is "
        "basic.messages.jsonrpc."
    ),
)

define(
    "transport.sse.origin.validate",
    "MUST",
    versions=(V,),
    url=spec_url(V, PAGE, "security-warning"),
    quote=(
        "Servers MUST validate the `Origin` header on all incoming connections to prevent DNS "
        "rebinding attacks"
    ),
    area=AREA,
    transports=SSE,
    note=(
        "Which origins are valid is the server's policy; for a server on a loopback address an "
        "Origin naming another host (the reserved http://mcp-conformance.invalid) is the DNS "
        "rebinding case the sentence names.  The status is not worded: any 4xx refusal of the SSE "
        "connection and of a POST to the endpoint passes; serving them fails."
    ),
)
