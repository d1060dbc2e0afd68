"""The reference server with a defect that two requirements rightly flag together.

    python tests/scenarios/features/compound_server.py NAME [reference-server arguments ...]

``fixtures/broken_servers`` holds one-requirement defects only; these break a sentence whose
violation is also a schema mismatch (the official schema encodes base64 and the 2026-07-28
caching fields too), or two sentences at once.  ``test_verdicts.py`` asserts the exact set.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[3]
for p in (str(ROOT / "fixtures" / "broken_servers"), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

import defects_features as D  # noqa: E402  (its helpers; importing it only registers its defects)

# name -> (patch, versions, the requirements the suite must flag)
COMPOUND: dict[str, tuple[Callable[[], None], tuple[str, ...], frozenset[str]]] = {}


def compound(name: str, versions: tuple[str, ...], flagged: set[str]) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def wrap(fn: Callable[[], None]) -> Callable[[], None]:
        COMPOUND[name] = (fn, versions, frozenset(flagged))
        return fn

    return wrap


@compound("blob-not-base64", ("2025-11-25",), {"resources.contents.binary-encoded", "basic.schema.messages-valid"})
def _blob() -> None:
    D._rewrite_read("test://static-binary", lambda item: item.__setitem__("blob", "this is not base64!"))


@compound("prompt-image-not-base64", ("2025-06-18",), {"prompts.content.image", "basic.schema.messages-valid"})
def _image() -> None:
    def change(messages: list) -> None:
        for m in messages:
            if m["content"].get("type") == "image":
                m["content"]["data"] = "not base64 at all!"

    D._rewrite_prompt("test_prompt_with_image", change)


def _patch_modern_result(change: Callable[[str, dict], None]) -> None:
    from reference_server import core

    original = core.Connection._modern_result

    def modern(self: Any, method: str, result: dict) -> dict:
        out = original(self, method, result)
        change(method, out)
        return out

    core.Connection._modern_result = modern


@compound("caching-no-ttl", ("2026-07-28",), {"caching.hints.required", "basic.schema.messages-valid"})
def _no_ttl() -> None:
    _patch_modern_result(lambda method, out: out.pop("ttlMs", None) if method == "tools/list" else None)


@compound("caching-negative-ttl", ("2026-07-28",), {"caching.ttl.non-negative", "basic.schema.messages-valid"})
def _negative_ttl() -> None:
    _patch_modern_result(lambda method, out: out.__setitem__("ttlMs", -1) if method == "prompts/list" else None)


@compound(
    "not-found-empty-contents",
    ("2026-07-28",),
    {"resources.read.not-found-invalid-params", "resources.read.not-found-no-empty-contents"},
)
def _empty_contents() -> None:
    def make(original: Callable, server: Any) -> Callable:
        def handler(ctx: Any, params: dict) -> Any:
            if not server.features.resources.exists(params.get("uri")):
                return {"contents": []}
            return original(ctx, params)

        return handler

    D._wrap_handler("resources/read", make)


def main(argv: list[str]) -> int:
    patch, _, _ = COMPOUND[argv[0]]
    patch()
    from reference_server.__main__ import main as server_main

    return server_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
