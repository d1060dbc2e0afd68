"""Regenerate conformance/spec/coverage/sentences.json: every normative sentence of the spec pages,
per version and page, and the requirements of the catalogue whose quote matches it.

    .venv/bin/python scripts/coverage_map.py [--docs ../shared/mcp-spec/docs] [--check]

Extraction is mechanical and deterministic:

- pages: every ``<version>/**/*.mdx`` except ``changelog.mdx`` and ``schema.mdx`` (generated
  from the schema, no prose of its own);
- text: front matter, fenced code blocks and HTML/JSX tag lines dropped; links become their text,
  emphasis markers go (the rendering the catalogue's quotes are checked against);
- units: a table cell, a list item, or a sentence of a paragraph (split after ``.``, ``!``, ``?``
  followed by a space and an upper-case letter, a back-tick, an emphasis or a link);
- normative: a unit containing MUST, MUST NOT, SHOULD, SHOULD NOT, REQUIRED, SHALL or SHALL NOT
  as an upper-case word (MAY and OPTIONAL are not counted);
- a sentence is counted once per version: the same text twice in a version's pages is one
  sentence (kept on the first page, in path order, that carries it).

A sentence is *checked* when a requirement of the catalogue that applies to that version quotes
it: the requirement's quote contains the sentence, or the sentence contains the quote.

The hand-reviewed status of the sentences that no requirement checks (not testable from outside,
a restatement, ...) is kept apart, in conformance/spec/coverage/review.json, which this script
never writes; ``--check`` lists the review entries that no longer name a sentence of the pages.
tests/coverage/test_coverage_map.py checks sentences.json against the pages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "conformance" / "spec" / "coverage" / "sentences.json"
REVIEW = ROOT / "conformance" / "spec" / "coverage" / "review.json"
DEFAULT_DOCS = ROOT.parent / "shared" / "mcp-spec" / "docs"

SKIPPED_PAGES = {"changelog", "schema"}
KEYWORD = re.compile(r"\b(MUST|SHOULD|REQUIRED|SHALL)\b")
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z][^>]*>?\s*$")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')]?\s+(?=[A-Z`*\[_\"(])")


def plain(markdown: str) -> str:
    """The rendered text as far as quotes need it: links as their text, no emphasis markers,
    whitespace collapsed (the same rendering tests/runtime/test_catalogue.py checks quotes on)."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)
    text = text.replace("**", "").replace("_latest_", "latest")
    return " ".join(text.split())


def sentence_key(text: str) -> str:
    """A stable key of a sentence: the first 12 hex digits of the SHA-1 of its normalised text."""
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]


def pages(docs: Path, version: str) -> list[tuple[str, Path]]:
    """(page, file) of a version's pages, in path order; page is the path without ``.mdx``."""
    out = []
    for path in sorted((docs / version).rglob("*.mdx")):
        page = path.relative_to(docs / version).with_suffix("").as_posix()
        if page in SKIPPED_PAGES:
            continue
        out.append((page, path))
    return out


def _lines(mdx: str) -> list[str]:
    """The page's prose lines: front matter, fenced code and lone tag lines blanked."""
    lines = mdx.splitlines()
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                lines = [""] * (i + 1) + lines[i + 1 :]
                break
    out = []
    fence: str | None = None
    for line in lines:
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            out.append("")
            continue
        m = re.match(r"^(`{3,}|~{3,})", stripped)
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append("" if _TAG_LINE.match(line) else line)
    return out


def units(mdx: str) -> list[str]:
    """Table cells, list items and paragraph sentences of a page, in order, as plain text."""
    blocks: list[tuple[str, list[str]]] = []  # (kind, lines): "p" paragraph, "li" item, "tr" row
    for line in _lines(mdx):
        stripped = line.strip()
        if not stripped:
            blocks.append(("", []))
            continue
        if stripped.startswith("|"):
            blocks.append(("tr", [stripped]))
            continue
        if re.match(r"^#{1,6}\s", stripped):
            blocks.append(("h", [stripped]))
            continue
        m = _LIST_ITEM.match(line)
        if m:
            blocks.append(("li", [m.group(2)]))
            continue
        stripped = re.sub(r"^>\s?", "", stripped)
        if blocks and blocks[-1][0] in ("p", "li"):
            blocks[-1][1].append(stripped)
        else:
            blocks.append(("p", [stripped]))
    out: list[str] = []
    for kind, block in blocks:
        if kind in ("", "h"):
            continue
        if kind == "tr":
            cells = [c.strip() for c in block[0].strip().strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            out.extend(plain(c) for c in cells if c)
            continue
        text = plain(" ".join(block))
        if kind == "li":
            out.append(text)
        else:
            out.extend(s.strip() for s in _SENTENCE_END.split(text) if s.strip())
    return out


def normative(text: str) -> bool:
    return bool(KEYWORD.search(text))


def extract(docs: Path, versions: list[str]) -> dict[str, dict[str, list[str]]]:
    """{version: {page: [sentence, ...]}}: each version's normative sentences, each once."""
    out: dict[str, dict[str, list[str]]] = {}
    for version in versions:
        seen: set[str] = set()
        per_page: dict[str, list[str]] = {}
        for page, path in pages(docs, version):
            for text in units(path.read_text(encoding="utf-8")):
                if normative(text) and text not in seen:
                    seen.add(text)
                    per_page.setdefault(page, []).append(text)
        out[version] = per_page
    return out


def quote_matches(quote: str, sentence: str) -> bool:
    """A requirement's quote checks a sentence when one contains the other."""
    return quote in sentence or sentence in quote


_SERVER = re.compile(r"\b(servers?|server's)\b", re.I)
_CLIENT = re.compile(r"\b(clients?|client's|hosts?|applications?)\b", re.I)


def role_guess(text: str) -> str:
    """Which party a sentence constrains, guessed from the parties it names: "server" or
    "client" when it names one of them only, "both" otherwise (the review may say better)."""
    s, c = bool(_SERVER.search(text)), bool(_CLIENT.search(text))
    if s and not c:
        return "server"
    if c and not s:
        return "client"
    return "both"


def build(docs: Path) -> dict:
    from conformance.spec.requirements import catalogue
    from conformance.spec.versions import VERSIONS

    reqs = [r for r in catalogue().values() if r.source == "mcp"]
    found = extract(docs, [v for v in VERSIONS if (docs / v).is_dir()])
    data: dict = {}
    for version, per_page in found.items():
        data[version] = {}
        for page, texts in per_page.items():
            rows = []
            for text in texts:
                ids = sorted(r.id for r in reqs if version in r.versions and quote_matches(r.quote, text))
                rows.append({"key": sentence_key(text), "text": text, "role": role_guess(text), "checked_by": ids})
            data[version][page] = rows
    return data


def dump(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when sentences.json is stale")
    args = ap.parse_args()
    if not args.docs.is_dir():
        print(f"spec pages not found at {args.docs}", file=sys.stderr)
        return 2
    data = build(args.docs)
    text = dump(data)
    total = sum(len(rows) for pp in data.values() for rows in pp.values())
    checked = sum(1 for pp in data.values() for rows in pp.values() for r in rows if r["checked_by"])
    if args.check:
        stale = not OUT.exists() or OUT.read_text(encoding="utf-8") != text
        print(f"{OUT.relative_to(ROOT)} {'is stale' if stale else 'is up to date'}")
        return 1 if stale else 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {total} sentences, {checked} checked")
    for version, per_page in data.items():
        n = sum(len(r) for r in per_page.values())
        c = sum(1 for r in per_page.values() for x in r if x["checked_by"])
        print(f"  {version}: {n} sentences, {c} checked ({100 * c / n:.0f} %)")
    if REVIEW.exists():
        keys = {r["key"] for pp in data.values() for rows in pp.values() for r in rows}
        review = json.loads(REVIEW.read_text(encoding="utf-8"))
        for key in sorted(set(review.get("sentences", {})) - keys):
            print(f"review entry names no sentence of the pages: {key}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
