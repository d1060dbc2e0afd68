"""The coverage map holds every normative sentence of the spec pages, its checked entries cite
requirements that exist and quote the sentence, and its hand review names sentences that exist.

The tests that read the pages skip when ../shared/mcp-spec/docs is absent (CI has it beside the
clone); the others check the map against the catalogue alone.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.spec import coverage
from conformance.spec.requirements import catalogue

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT.parent / "shared" / "mcp-spec" / "docs"
needs_docs = pytest.mark.skipif(not DOCS.is_dir(), reason=f"spec pages not found at {DOCS}")


def _script():
    spec = importlib.util.spec_from_file_location("coverage_map", ROOT / "scripts" / "coverage_map.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("coverage_map", mod)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def script():
    return _script()


@pytest.fixture(scope="module")
def pages(script) -> dict:
    return script.build(DOCS)


def _rows(data: dict) -> dict[tuple[str, str, str], dict]:
    return {(v, p, r["key"]): r for v, pp in data.items() for p, rows in pp.items() for r in rows}


# --- against the pages ----------------------------------------------------------------------


@needs_docs
def test_every_normative_sentence_of_the_pages_is_in_the_map(pages) -> None:
    stored = _rows(coverage.raw())
    missing = [f"{v} {p}: {r['text']}" for (v, p, k), r in _rows(pages).items() if (v, p, k) not in stored]
    assert not missing, "sentences on the pages the map does not hold (run scripts/coverage_map.py):\n" + "\n".join(missing[:20])


@needs_docs
def test_every_sentence_of_the_map_is_on_the_pages(pages) -> None:
    found = _rows(pages)
    gone = [f"{v} {p}: {r['text']}" for (v, p, k), r in _rows(coverage.raw()).items() if (v, p, k) not in found]
    assert not gone, "sentences of the map no longer on the pages (run scripts/coverage_map.py):\n" + "\n".join(gone[:20])


@needs_docs
def test_the_checking_requirements_are_those_the_catalogue_quotes_now(pages) -> None:
    stored = _rows(coverage.raw())
    stale = [f"{v} {p} {k}: map {stored[(v, p, k)]['checked_by']}, catalogue {r['checked_by']}"
             for (v, p, k), r in _rows(pages).items()
             if (v, p, k) in stored and stored[(v, p, k)]["checked_by"] != r["checked_by"]]
    assert not stale, "checked_by is stale (run scripts/coverage_map.py):\n" + "\n".join(stale[:20])


@needs_docs
def test_the_generated_file_is_what_the_script_writes(script, pages) -> None:
    text = (ROOT / "conformance" / "spec" / "coverage" / "sentences.json").read_text(encoding="utf-8")
    assert text == script.dump(pages), "sentences.json differs from scripts/coverage_map.py's output"


def test_extraction_skips_code_and_tags_and_splits_sentences_items_and_cells(script) -> None:
    mdx = "\n".join([
        "---", "title: MUST not count", "---", "",
        "Servers **MUST** answer. Clients MAY ask. The host [SHOULD](x) log.",
        "", "```json", '{"a": "MUST"}', "```", "", "<Note>", "Clients **SHOULD NOT** wait.", "</Note>", "",
        "- An item that is REQUIRED", "  and continues.", "- An item without a keyword", "",
        "| a | b |", "| --- | --- |", "| cell SHALL hold | plain |", "",
        "Servers must answer in lower case.",
    ])
    got = [u for u in script.units(mdx) if script.normative(u)]
    assert got == ["Servers MUST answer.", "The host SHOULD log.", "Clients SHOULD NOT wait.",
                   "An item that is REQUIRED and continues.", "cell SHALL hold"]


def test_a_quote_checks_a_sentence_when_one_contains_the_other(script) -> None:
    assert script.quote_matches("Servers MUST answer.", "Servers MUST answer.")
    assert script.quote_matches("MUST answer", "Servers MUST answer.")
    assert script.quote_matches("Servers MUST answer. And more.", "Servers MUST answer.")
    assert not script.quote_matches("Servers MUST reply.", "Servers MUST answer.")


# --- against the catalogue (no pages needed) --------------------------------------------------


def test_every_checking_requirement_exists_applies_to_the_version_and_quotes_the_sentence(script) -> None:
    reqs = catalogue()
    bad = []
    for s in coverage.load():
        for rid in s.checked_by:
            r = reqs.get(rid)
            if r is None:
                bad.append(f"{s.version} {s.key}: no requirement {rid!r}")
            elif s.version not in r.versions:
                bad.append(f"{s.version} {s.key}: {rid} does not apply to {s.version}")
            elif not script.quote_matches(r.quote, s.text):
                bad.append(f"{s.version} {s.key}: the quote of {rid} no longer matches")
    assert not bad, "\n".join(bad[:20])


def test_keys_are_the_hash_of_the_text_and_unique_per_version(script) -> None:
    seen: set[tuple[str, str]] = set()
    for s in coverage.load():
        assert s.key == script.sentence_key(s.text), s
        assert (s.version, s.key) not in seen, s
        seen.add((s.version, s.key))


def test_the_review_names_sentences_of_the_map_with_a_valid_status() -> None:
    rv = coverage.review()
    texts = {s.key: s.text for s in coverage.load()}
    for key, entry in rv["sentences"].items():
        assert key in texts, f"review entry {key} names no sentence of the map"
        assert entry.get("text") == texts[key], f"review entry {key}: its text is not the sentence's"
        status = entry.get("status")
        assert status is not None or "role" in entry, f"review entry {key} says nothing (no status, no role)"
        assert status is None or (status in coverage.STATUSES and status != "checked"), \
            f"{key}: status {status!r} (checked is computed)"
        if status == "not-testable":
            assert entry.get("reason") in coverage.REASONS, f"{key}: not-testable needs a reason of {list(coverage.REASONS)}"
        if status == "restatement":
            assert entry.get("restates") in texts and entry["restates"] != key, f"{key}: restates no other sentence"
        if "role" in entry:
            assert entry["role"] in coverage.ROLES, key
    for glob, entry in rv["pages"].items():
        assert entry.get("status") in coverage.STATUSES and entry["status"] != "checked", glob


def test_a_restated_sentence_stands_in_every_version_the_restatement_does() -> None:
    where = {(s.version, s.key) for s in coverage.load()}
    for s in coverage.load():
        if s.status == "restatement":
            assert (s.version, s.restates) in where, f"{s.version} {s.key} restates {s.restates}, not in {s.version}"


def test_status_follows_checked_then_review_then_page() -> None:
    rv = coverage.review()
    for s in coverage.load():
        page_rule = next((e["status"] for g, e in rv["pages"].items() if fnmatch.fnmatchcase(s.page, g)), None)
        if s.checked_by:
            assert s.status == "checked"
        elif rv["sentences"].get(s.key, {}).get("status"):
            assert s.status == rv["sentences"][s.key]["status"]
        elif page_rule:
            assert s.status == page_rule
        else:
            assert s.status == "not-yet-checked"


def test_no_sentence_is_left_with_the_authorization_placeholder() -> None:
    """The authorization pages are reviewed sentence by sentence (issue 25): each is checked,
    not testable with its reason, a restatement, or not yet checked with the check it needs."""
    left = [f"{s.version} {s.page} {s.key}: {s.text}" for s in coverage.load() if s.status == "authorization"]
    assert not left, "sentences still carrying the placeholder status:\n" + "\n".join(left[:20])


def test_a_checked_sentence_takes_the_role_of_its_requirements() -> None:
    reqs = catalogue()
    for s in coverage.load():
        roles = {reqs[r].role for r in s.checked_by if r in reqs}
        if len(roles) == 1:
            assert s.role == roles.pop(), s
        elif roles:
            assert s.role == "both", s


def test_run_coverage_counts_the_sentences_of_requirements_that_ran() -> None:
    one = next(s for s in coverage.load() if s.checked_by)
    got = coverage.run_coverage({(one.checked_by[0], one.version)}, [one.version])
    expected_checked = sum(1 for s in coverage.select([one.version]) if one.checked_by[0] in s.checked_by)
    assert got["checked"] == expected_checked >= 1
    assert got["sentences"] == len(coverage.select([one.version]))
    assert coverage.run_coverage({(one.checked_by[0], "1999-01-01")}, [one.version])["checked"] == 0


# --- the command ----------------------------------------------------------------------------


def test_coverage_json_counts_every_status_per_version(capsys) -> None:
    assert main(["coverage", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for version in coverage.versions():
        rows = coverage.select([version])
        v = out["versions"][version]
        assert v["sentences"] == len(rows)
        for status in coverage.STATUSES:
            assert v[status] == sum(1 for s in rows if s.status == status), (version, status)
        assert sum(v[st] for st in coverage.STATUSES) == v["sentences"]
    assert len(out["sentences"]) == len(coverage.load())


def test_coverage_selects_versions_and_role(capsys) -> None:
    v = coverage.versions()[0]
    assert main(["coverage", "--version", v, "--role", "client", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["versions"]) == [v]
    assert out["sentences"] and all(s["role"] in ("client", "both") for s in out["sentences"])
    assert len(out["sentences"]) == len(coverage.select([v], "client"))


@pytest.mark.parametrize("fmt,marker", [("text", "checked share"), ("markdown", "| version |"), ("html", "<table")])
def test_coverage_renders_each_format_with_every_version(capsys, fmt: str, marker: str) -> None:
    assert main(["coverage", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert marker in out
    assert all(v in out for v in coverage.versions())


@pytest.mark.parametrize("argv,option", [
    (["coverage", "--version", "1999-01-01"], "--version"),
    (["coverage", "--role", "host"], "--role"),
    (["coverage", "--format", "pdf"], "--format"),
])
def test_coverage_bad_input_exits_2_naming_the_option(capsys, argv: list[str], option: str) -> None:
    assert main(argv) == 2
    assert option in capsys.readouterr().err
