"""The requirement model and the catalogue registry.  Pure data.

A :class:`Requirement` is one sentence of the specification (or of JSON-RPC 2.0, which MCP builds
on) that a check enforces: a stable dotted id mirroring the spec page, the level the sentence uses,
the versions and transports it applies to, the page URL with anchor, and the sentence itself.

Catalogue modules (``conformance/spec/catalogue/*.py``, one per spec page) call :func:`define`
at import time; :func:`catalogue` imports them all and returns the registry.
"""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Iterable

from conformance.spec.outcomes import Level
from conformance.spec.versions import VERSIONS, Transport

__all__ = [
    "Requirement",
    "define",
    "catalogue",
    "get",
    "select",
    "derived_url",
    "DuplicateRequirementError",
    "UnknownRequirementError",
]

ALL_TRANSPORTS = frozenset(Transport)


@dataclass(frozen=True)
class Requirement:
    id: str  # stable dotted slug, e.g. "lifecycle.initialize.version-echo"
    level: Level
    versions: frozenset[str]  # versions the sentence is part of
    url: str  # spec page URL with #anchor (for the newest version it applies to)
    quote: str  # the sentence, verbatim
    role: str = "server"  # whose duty it is: "server" | "client"
    area: str = ""  # report grouping: "jsonrpc", "lifecycle", "transport-stdio", "tools", ...
    transports: frozenset[Transport] = ALL_TRANSPORTS
    aliases: tuple[str, ...] = ()  # the official runner's check/scenario ids
    note: str | None = None  # how we grade ambiguity ("rests on practice, not a sentence")
    # "mcp" | "jsonrpc" (JSON-RPC 2.0 itself) | "extension" (an MCP extension's own page, outside
    # the spec pages: its quote is not counted by the coverage map, its URL is not per version)
    source: str = "mcp"

    def applies_to(self, version: str, transport: Transport | str | None = None) -> bool:
        if version not in self.versions:
            return False
        if transport is None:
            return True
        return Transport(transport) in self.transports

    def url_for(self, version: str | None) -> str:
        """The page (with anchor) carrying the sentence in ``version``: the cited page of that
        version, or where the sentence stands there when the page moved (``_cited.CITED``)."""
        if version is None or version not in self.versions or self.source == "extension":
            return self.url
        moved = _cited().get(self.id, {}).get(version)
        return moved or derived_url(self.url, version)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "level": self.level.value,
            "versions": [v for v in VERSIONS if v in self.versions],
            "transports": sorted(t.value for t in self.transports),
            "url": self.url,
            "quote": self.quote,
            "role": self.role,
            "area": self.area,
            "aliases": list(self.aliases),
            "note": self.note,
            "source": self.source,
        }


class DuplicateRequirementError(ValueError):
    pass


class UnknownRequirementError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its argument; we want a sentence
        return f"unknown requirement id {self.args[0]!r}"


_REGISTRY: dict[str, Requirement] = {}
_LOADED = False


def derived_url(url: str, version: str) -> str:
    """``url`` (a spec page of some version) with its version segment replaced by ``version``."""
    head, sep, rest = url.partition("/specification/")
    if not sep or "/" not in rest:
        return url
    _, _, tail = rest.partition("/")
    return f"{head}{sep}{version}/{tail}"


def _cited() -> dict[str, dict[str, str]]:
    from conformance.spec.catalogue._cited import CITED

    return CITED


def define(
    id: str,
    level: Level | str,
    *,
    versions: Iterable[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    url: str,
    quote: str,
    role: str = "server",
    area: str = "",
    transports: Iterable[Transport | str] | None = None,
    aliases: Iterable[str] = (),
    note: str | None = None,
    source: str = "mcp",
) -> Requirement:
    """Register a requirement.  ``versions`` or ``since``/``until`` (inclusive) select versions."""
    if versions is None:
        lo = VERSIONS.index(since) if since else 0
        hi = VERSIONS.index(until) if until else len(VERSIONS) - 1
        versions = VERSIONS[lo : hi + 1]
    versions = frozenset(versions)
    unknown = versions - set(VERSIONS)
    if unknown:
        raise ValueError(f"requirement {id}: unknown versions {sorted(unknown)}")
    req = Requirement(
        id=id,
        level=Level(level),
        versions=versions,
        url=url,
        quote=" ".join(quote.split()),
        role=role,
        area=area or id.split(".", 1)[0],
        transports=frozenset(Transport(t) for t in transports) if transports else ALL_TRANSPORTS,
        aliases=tuple(aliases),
        note=note,
        source=source,
    )
    if id in _REGISTRY and _REGISTRY[id] != req:
        raise DuplicateRequirementError(f"requirement {id!r} defined twice with different content")
    _REGISTRY[id] = req
    return req


def catalogue() -> dict[str, Requirement]:
    """All requirements, importing every module of ``conformance.spec.catalogue`` once."""
    global _LOADED
    if not _LOADED:
        try:
            pkg = importlib.import_module("conformance.spec.catalogue")
        except ModuleNotFoundError:
            pkg = None
        if pkg is not None:
            for info in pkgutil.iter_modules(pkg.__path__):
                importlib.import_module(f"{pkg.__name__}.{info.name}")
        _LOADED = True
    return dict(sorted(_REGISTRY.items()))


def get(id: str) -> Requirement:
    reqs = catalogue()
    try:
        return reqs[id]
    except KeyError:
        raise UnknownRequirementError(id) from None


def select(ids: Iterable[str], include: Iterable[str] = (), exclude: Iterable[str] = ()) -> list[str]:
    """Filter requirement ids by ``--mcp-select``/``--mcp-exclude`` globs (fnmatch, also on aliases)."""
    include = list(include)
    exclude = list(exclude)
    reqs = catalogue()

    def names(rid: str) -> list[str]:
        r = reqs.get(rid)
        return [rid, *(r.aliases if r else ())]

    out = []
    for rid in ids:
        if include and not any(fnmatch.fnmatchcase(n, g) for n in names(rid) for g in include):
            continue
        if any(fnmatch.fnmatchcase(n, g) for n in names(rid) for g in exclude):
            continue
        out.append(rid)
    return out
