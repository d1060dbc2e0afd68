"""The reference client's own client ID metadata document host (``--serve-client-metadata``).

A client using a client ID metadata document is known by the https URL its document is served at
(draft-ietf-oauth-client-id-metadata-document; MCP: "Clients MUST host their metadata document at
an HTTPS URL"; the document has ``client_id`` -- that URL exactly --, ``client_name`` and
``redirect_uris``).  A deployed client hosts it on its web site; for tests this one serves it
itself, on 127.0.0.1 over TLS with a self-signed certificate made at start (the authorization
servers of a test run fetch it from the same machine).  :class:`DocumentHost` is started in the
authorizer's task group and closed with it; every request is answered, or dropped after the
timeout.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import ssl
import tempfile
from typing import Any, Callable

import anyio
from anyio.streams.tls import TLSListener

__all__ = ["DocumentHost", "self_signed_context"]

PATH = "/client-metadata.json"


def self_signed_context() -> ssl.SSLContext:
    """A server TLS context with a fresh P-256 key and a certificate for 127.0.0.1, valid one day."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory(prefix="mcp-reference-client-tls-") as tmp:
        cert_path, key_path = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        with open(cert_path, "wb") as fh:
            fh.write(cert.public_bytes(serialization.Encoding.PEM))
        with open(key_path, "wb") as fh:
            fh.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
        context.load_cert_chain(cert_path, key_path)
    return context


class DocumentHost:
    """``url = await host.start(tg)``; the document is made by ``document(url)`` at each request
    (None: 404)."""

    def __init__(self, document: Callable[[str], Any], *, timeout: float = 10.0) -> None:
        self._document = document
        self._timeout = timeout
        self._listener: Any = None
        self.url: str | None = None

    async def start(self, tg: Any) -> str:
        tcp = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = tcp.extra(anyio.abc.SocketAttribute.local_port)
        self._listener = TLSListener(tcp, self_signed_context(), standard_compatible=False)
        self.url = f"https://127.0.0.1:{port}{PATH}"
        tg.start_soon(self._serve)
        return self.url

    async def _serve(self) -> None:
        try:
            await self._listener.serve(self._handle)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def _handle(self, stream: Any) -> None:
        async with stream:
            data = b""
            with anyio.move_on_after(self._timeout):
                while b"\r\n\r\n" not in data and len(data) < 16384:
                    try:
                        data += await stream.receive(4096)
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ssl.SSLError):
                        break
            parts = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            target = parts[1].split("?", 1)[0] if len(parts) >= 2 and parts[0] == "GET" else ""
            doc = self._document(self.url or "") if target == PATH else None
            body = json.dumps(doc).encode() if doc is not None else b'{"error": "not_found"}'
            status = "200 OK" if doc is not None else "404 Not Found"
            head = (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                    "Cache-Control: no-store\r\nConnection: close\r\n\r\n").encode("ascii")
            try:
                await stream.send(head + body)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ssl.SSLError):
                pass

    async def aclose(self) -> None:
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None
