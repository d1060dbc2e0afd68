"""The requirement catalogue cites the spec faithfully; the scenario registry cites the catalogue."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.spec.outcomes import Level
from conformance.runtime.registry import ConnectionKind, ScenarioDefinitionError, scenario, scenarios
from conformance.spec.requirements import catalogue
from conformance.spec.versions import SPEC_BASE_URL, VERSIONS, spec

DOCS = Path(__file__).resolve().parents[3] / "shared" / "mcp-spec" / "docs"
needs_docs = pytest.mark.skipif(not DOCS.is_dir(), reason=f"spec pages not found at {DOCS}")

MCP = [r for r in catalogue().values() if r.source == "mcp"]


def _plain(markdown: str) -> str:
    """Rendered text of MDX as far as quotes need it: no emphasis, links as their text."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)  # reference-style links: [text][label]
    text = text.replace("**", "").replace("_latest_", "latest")
    return " ".join(text.split())


def _plain_html(markdown: str) -> str:
    """The generated schema page (schema.mdx) is HTML: its text without tags and entities."""
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", markdown)).split())


def _page(url: str) -> tuple[str, Path, str | None]:
    assert url.startswith(SPEC_BASE_URL + "/"), url
    rest, _, anchor = url[len(SPEC_BASE_URL) + 1 :].partition("#")
    version, _, page = rest.partition("/")
    for candidate in (DOCS / version / f"{page}.mdx", DOCS / version / page / "index.mdx"):
        if candidate.exists():
            return version, candidate, anchor or None
    raise AssertionError(f"no spec page for {url}")


def _anchors(mdx: str) -> set[str]:
    """Mintlify heading anchors: lower case, spaces to hyphens, punctuation dropped."""
    out = set()
    for line in mdx.splitlines():
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            title = re.sub(r"[`*]", "", m.group(1)).strip().lower()
            out.add(re.sub(r"[^a-z0-9 _-]", "", title).replace(" ", "-"))
    return out


@needs_docs
@pytest.mark.parametrize("req", MCP, ids=lambda r: r.id)
def test_quote_is_verbatim_on_the_cited_page_and_the_anchor_exists(req) -> None:
    version, path, anchor = _page(req.url)
    mdx = path.read_text(encoding="utf-8")
    assert req.quote in _plain(mdx) or req.quote in _plain_html(mdx), f"{req.id}: quote not found in {path}"
    if anchor:
        assert anchor in _anchors(mdx), f"{req.id}: no heading for #{anchor} in {path}"
    assert version in req.versions


@needs_docs
@pytest.mark.parametrize("req", MCP, ids=lambda r: r.id)
def test_quote_is_in_every_version_it_is_assigned_to(req) -> None:
    for version in req.versions:
        texts = [p.read_text(encoding="utf-8") for p in (DOCS / version).rglob("*.mdx")]
        pages = " ".join(_plain(t) for t in texts)
        assert req.quote in pages or req.quote in " ".join(_plain_html(t) for t in texts), \
            f"{req.id}: quote not in the {version} pages"


@pytest.mark.parametrize("req", list(catalogue().values()), ids=lambda r: r.id)
def test_level_matches_the_keyword_in_the_quote(req) -> None:
    words = set(re.findall(r"\b(MUST|SHOULD|MAY)\b", req.quote))
    if not words:
        assert req.note, f"{req.id}: no RFC 2119 keyword in the quote, so a note must say how it is graded"
    else:
        assert req.level.value in words
    assert re.fullmatch(r"[a-z0-9]+(\.[a-z0-9-]+)+", req.id)


def test_every_scenario_cites_known_requirements_and_says_what_it_does() -> None:
    reqs = catalogue()
    found = scenarios("server")
    assert found
    for sc in found:
        assert sc.doc, f"{sc.id} has no docstring"
        for rid in sc.requirements:
            assert reqs[rid].role == "server"
        # a scenario only runs where at least one of its requirements applies
        for v in sc.versions:
            assert any(v in reqs[rid].versions for rid in sc.requirements)


@pytest.fixture
def scratch_registry():
    """Scenarios registered by a test are removed afterwards (other tests count the real ones)."""
    from conformance.runtime import registry

    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def test_a_scenario_citing_an_unknown_requirement_fails_at_import(scratch_registry) -> None:
    with pytest.raises(ScenarioDefinitionError, match="unknown requirement id 'no.such-thing'"):

        @scenario(requirements=["no.such-thing"], id="test.unknown")
        async def _s(ctx) -> None:  # pragma: no cover - never registered
            pass


def test_a_scenario_connects_on_one_kind_of_connection(scratch_registry) -> None:
    @scenario(requirements=["ping.response"], id="test.default")
    async def _s(ctx) -> None:  # pragma: no cover - not run
        pass

    assert _s.__mcp_scenario__.connection is ConnectionKind.SHARED
    with pytest.raises(ScenarioDefinitionError, match="connection must be a ConnectionKind, not 'fresh'"):
        scenario(requirements=["ping.response"], connection="fresh")  # type: ignore[arg-type]
    with pytest.raises(ScenarioDefinitionError, match="for server scenarios"):
        scenario(requirements=["ping.response"], role="client", connection=ConnectionKind.FRESH)
    with pytest.raises(TypeError):  # the old flags are gone
        scenario(requirements=["ping.response"], fresh=True)  # type: ignore[call-arg]
    assert {k for k in ConnectionKind if k.fresh} == {ConnectionKind.FRESH, ConnectionKind.DISPOSABLE, ConnectionKind.ONCE}


def test_scenario_versions_are_narrowed_to_its_requirements(scratch_registry) -> None:
    @scenario(requirements=["discover.implemented"], id="test.narrowed", since=VERSIONS[0])
    async def _s(ctx) -> None:  # pragma: no cover - not run
        pass

    sc = _s.__mcp_scenario__
    assert sc.versions == frozenset(v for v in VERSIONS if spec(v).stateless)
    assert sc.inapplicable("2025-11-25", "stdio") == "scenario test.narrowed applies to 2026-07-28, not 2025-11-25"
    assert sc.inapplicable("2026-07-28", "sse") == "2026-07-28 does not define the sse transport"
    assert sc.applies_to("2026-07-28", "stdio")


def test_levels_are_the_three_keywords() -> None:
    assert {r.level for r in catalogue().values()} <= set(Level)


@needs_docs
@pytest.mark.parametrize("req", MCP, ids=lambda r: r.id)
def test_every_version_cites_its_own_page_with_the_sentence_and_anchor(req) -> None:
    """A verdict on version V links V's page (scripts/update_cited_urls.py regenerates the moves)."""
    for version in req.versions:
        url = req.url_for(version)
        cited_version, path, anchor = _page(url)
        assert cited_version == version, f"{req.id}: {url} is not a {version} page"
        mdx = path.read_text(encoding="utf-8")
        assert req.quote in _plain(mdx) or req.quote in _plain_html(mdx), f"{req.id}: quote not on {url}"
        if anchor:
            assert anchor in _anchors(mdx), f"{req.id}: no heading for #{anchor} in {path} ({version})"
