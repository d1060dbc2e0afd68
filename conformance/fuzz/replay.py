"""The reproducer file format: concrete bytes, not a Hypothesis blob.  Pure (dicts in, dicts out;
the engine writes and reads the files).

A reproducer holds what ``mcp-conformance fuzz --replay FILE`` needs to send the same bytes again
and what it must see to call the finding reproduced: the version, transport, seed and frame index,
the operator chain (names, JSON paths, before -> after), the shrunk frame and the original frame
(UTF-8 text, or base64 when not UTF-8), and the finding (requirement, level, quoted sentence,
expected, actual).  ``role`` says whose duty it is about: ``client`` reproducers (we played the
server) are replayed by starting the client again; ``answer`` marks a frame that answers the
client's request of that method (the recorded id is replaced by the id the client uses then).  Its JSON schema is ``$defs/reproducer`` in ``conformance/report/report.schema.json``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FORMAT", "Reproducer", "ReproducerError", "encode_bytes", "decode_bytes"]

FORMAT = "mcp-conformance-fuzz-reproducer/1"


class ReproducerError(ValueError):
    """A reproducer file that cannot be used; the message names what is wrong."""


def encode_bytes(data: bytes) -> dict[str, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}
    return {"text": text}


def decode_bytes(obj: Any, where: str = "frame") -> bytes:
    if isinstance(obj, dict):
        if isinstance(obj.get("text"), str):
            return obj["text"].encode("utf-8", "surrogatepass")
        if isinstance(obj.get("base64"), str):
            try:
                return base64.b64decode(obj["base64"], validate=True)
            except ValueError as exc:
                raise ReproducerError(f"{where}: invalid base64 ({exc})") from None
    raise ReproducerError(f'{where}: expected {{"text": ...}} or {{"base64": ...}}, got {type(obj).__name__}')


@dataclass
class Reproducer:
    version: str
    transport: str
    seed: int
    index: int
    frame: bytes  # the (shrunk) frame that reproduces the finding
    original: bytes  # the frame as the campaign sent it
    operators: list[str]
    mutations: list[dict[str, Any]]
    signature: tuple[str, str]  # (requirement, problem)
    finding: dict[str, Any]
    method: str = ""
    headers: dict[str, str] | None = None
    prefix: list[bytes] = field(default_factory=list)  # frames to send first, after the handshake
    shrink: dict[str, Any] = field(default_factory=dict)  # candidates, replays, seconds
    target: dict[str, Any] = field(default_factory=dict)
    stability: dict[str, int] = field(default_factory=dict)  # reproduced r of k
    role: str = "server"  # whose duty the finding is about: a server's, or a client's (we played its server)
    answer: dict[str, Any] | None = None  # role client: the frame answers the client's request {"method", "id"}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "transport": self.transport,
            "seed": self.seed,
            "index": self.index,
            "method": self.method,
            "operators": list(self.operators),
            "mutations": list(self.mutations),
            "frame": encode_bytes(self.frame),
            "original": encode_bytes(self.original),
            "headers": self.headers,
            "prefix": [encode_bytes(p) for p in self.prefix],
            "signature": {"requirement": self.signature[0], "problem": self.signature[1]},
            "finding": self.finding,
            "shrink": self.shrink,
            "stability": self.stability,
            "target": self.target,
            "role": self.role,
            "answer": self.answer,
            "rerun": f"mcp-conformance fuzz --replay <this file>   (or: --seed {self.seed} --index {self.index})",
        }

    @classmethod
    def from_json(cls, data: Any) -> "Reproducer":
        if not isinstance(data, dict):
            raise ReproducerError(f"a reproducer is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ReproducerError(f"not a reproducer of this suite: format is {data.get('format')!r}, expected {FORMAT!r}")
        try:
            sig = data["signature"]
            return cls(
                version=str(data["version"]),
                transport=str(data["transport"]),
                seed=int(data["seed"]),
                index=int(data["index"]),
                frame=decode_bytes(data["frame"], "frame"),
                original=decode_bytes(data.get("original", data["frame"]), "original"),
                operators=list(data.get("operators", [])),
                mutations=list(data.get("mutations", [])),
                signature=(str(sig["requirement"]), str(sig["problem"])),
                finding=dict(data.get("finding", {})),
                method=str(data.get("method", "")),
                headers=data.get("headers"),
                prefix=[decode_bytes(p, "prefix") for p in data.get("prefix", [])],
                shrink=dict(data.get("shrink", {})),
                target=dict(data.get("target", {})),
                stability=dict(data.get("stability", {})),
                role=str(data.get("role", "server")),
                answer=dict(data["answer"]) if isinstance(data.get("answer"), dict) else None,
            )
        except KeyError as exc:
            raise ReproducerError(f"the reproducer lacks the member {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ReproducerError):
                raise
            raise ReproducerError(f"the reproducer is malformed: {exc}") from None
