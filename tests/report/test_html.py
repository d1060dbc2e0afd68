"""The HTML report: self-contained, counts equal report.json's, every finding shown, escaped."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest

from conformance.report import summary as S
from conformance.report.html import render_html

from .conftest import hostile_report, stored


class _Page(HTMLParser):
    """Elements with ids and data attributes, every tag, script and style text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.by_id: dict[str, dict[str, str | None]] = {}
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None
        self.text: dict[str, str] = {}
        self._text_id: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.by_id[a["id"]] = a
            self._text_id = a["id"]
            self.text[a["id"]] = ""
        if tag in ("script", "style"):
            self._in = tag

    def handle_endtag(self, tag):
        self._in = None
        self._text_id = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)
        if self._text_id:
            self.text[self._text_id] += data


def _parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


def test_the_counts_shown_equal_report_json(real_report: dict) -> None:
    page = _parse(render_html(real_report))
    for outcome, n in real_report["summary"]["by_outcome"].items():
        assert page.by_id[f"count-{outcome}"]["data-count"] == str(n), outcome
    for lvl in ("MUST", "SHOULD", "MAY"):
        sc = real_report["summary"]["scores"][lvl]
        el = page.by_id[f"score-{lvl}"]
        assert (el["data-passed"], el["data-checked"]) == (str(sc["passed"]), str(sc["checked"]))
    cells = [a["data-outcome"] for tag, a in page.tags if tag == "td" and "data-outcome" in a]
    assert {o: cells.count(o) for o in S.OUTCOMES} == real_report["summary"]["by_outcome"]
    assert page.by_id["exit-code"] and page.text["exit-code"] == str(real_report["exit_code"])
    assert page.by_id["verdict"]["data-verdict"] == S.verdict(real_report)


def test_every_failure_warning_error_and_baseline_result_has_a_finding(real_report: dict) -> None:
    page = _parse(render_html(real_report))
    findings = {a["id"]: a for tag, a in page.tags if tag == "article"}
    expected = {f"f-{r['requirement']}-{r['version']}-{r['transport']}": r for r in real_report["results"]
                if r["outcome"] in ("fail", "warning", "error", "xfail", "stale")}
    assert set(findings) == set(expected)
    for fid, r in expected.items():
        assert findings[fid]["data-outcome"] == r["outcome"] and findings[fid]["data-area"] == r["area"]
    assert page.by_id["findings-total"]["data-count"] == str(len(expected))


def test_a_finding_shows_the_sentence_link_expected_actual_and_the_wire_exchange() -> None:
    rep = stored("report-server-everything-stdio.json.gz")
    html = render_html(rep)
    r = next(r for r in rep["results"] if r["outcome"] == "fail" and r["transcript"])
    start = html.index(f'id="f-{r["requirement"]}-{r["version"]}-{r["transport"]}"')
    article = html[start:html.index("</article>", start)]
    page = _parse(article)
    assert r["url"] in [a.get("href") for _, a in page.tags]
    v = r["violations"][0]
    assert v["problem"] in article
    assert 'class="expected"' in article and 'class="actual"' in article
    rows = [a for tag, a in page.tags if tag == "tr" and (a.get("class") or "").startswith("d-")]
    directions = {(a.get("class") or "").split()[0] for a in rows}
    assert {"d-out", "d-in"} <= directions  # both directions of the exchange
    assert any("cited" in (a.get("class") or "") for a in rows)
    assert re.search(r'class="t">\d+\.\d{4} s', article)  # timed


def test_the_page_needs_no_network() -> None:
    html = render_html(stored("report-server-everything-stdio.json.gz"))
    page = _parse(html)
    for tag, a in page.tags:
        assert "src" not in a or a["src"].startswith("data:"), (tag, a)
        if tag == "link":
            pytest.fail(f"external resource {a}")
        if tag == "a" and a.get("href"):
            assert a["href"].startswith(("#", "https://", "http://")), a
    assert "@import" not in "".join(page.styles) and "url(" not in "".join(page.styles)
    assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|import\()", "".join(page.scripts))


def test_a_content_security_policy_allows_only_the_inline_style_and_script() -> None:
    html = render_html(stored("report-reference-stdio.json.gz"))
    page = _parse(html)
    csp = next(a["content"] for tag, a in page.tags if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    for kind, text in (("style-src", page.styles[0]), ("script-src", page.scripts[0])):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"{kind} 'sha256-{digest}'" in csp
    assert not any("style" in a for _, a in page.tags), "inline style attributes would be blocked by the CSP"
    assert len(page.scripts) == 1 and len(page.styles) == 1


def test_hostile_strings_are_escaped() -> None:
    rep = hostile_report()
    html = render_html(rep)
    page = _parse(html)
    assert len(page.scripts) == 1  # no injected <script>
    assert not any(tag == "img" for tag, _ in page.tags)
    assert not any(any(k.startswith("on") for k in a) for _, a in page.tags)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    hrefs = [a.get("href") for tag, a in page.tags if tag == "a"]
    assert not any(h and h.startswith("javascript:") for h in hrefs)
    assert "javascript:alert(3)" in html  # shown as text, not linked


def test_a_huge_report_stays_within_the_page_budget() -> None:
    rep = stored("report-server-everything-stdio.json.gz")
    template = next(r for r in rep["results"] if r["outcome"] == "fail" and r["transcript"])
    entry = dict(template["transcript"][0], raw={"text": '{"x": "' + "y" * 4000 + '"}'})
    violation = dict(template["violations"][0], expected={"v": "e" * 4000}, actual={"v": "a" * 4000})
    rep["results"] = [dict(template, requirement=f"big.r{i:04d}", transcript=[dict(entry, seq=k) for k in range(40)],
                           violations=[dict(violation, message=f"m{i}.{k}") for k in range(20)]) for i in range(3000)]
    html = render_html(rep)
    assert len(html.encode()) < 5_000_000
    page = _parse(html)
    articles = [a for tag, a in page.tags if tag == "article"]
    total = page.by_id["findings-total"]
    assert total["data-count"] == "3000" and int(total["data-shown"]) == len(articles) < 3000
    assert int(page.by_id["unlisted"]["data-count"]) == 3000 - len(articles)
    assert "Shown compact" in html
    # a cell links to its finding only when the finding is on the page
    links = [a["href"][1:] for tag, a in page.tags if tag == "a" and (a.get("href") or "").startswith("#f-")]
    assert links and set(links) <= set(page.by_id)


def test_every_internal_link_has_a_target(real_report: dict) -> None:
    page = _parse(render_html(real_report))
    links = {a["href"][1:] for tag, a in page.tags if tag == "a" and (a.get("href") or "").startswith("#") and "=" not in a["href"]}
    assert links <= set(page.by_id)


def test_prepared_renderers_render_without_loading_a_template(monkeypatch: pytest.MonkeyPatch) -> None:
    """render.prepare (which the plugin runs in the background while the items wait) leaves
    nothing for the final rendering to load or compile; the page is the same."""
    from conformance.report import html as H
    from conformance.report.render import prepare, render

    report = stored("report-reference-stdio.json.gz")
    H._env.cache_clear()
    H._assets.cache_clear()
    prepare(["json", "html"])
    loads: list[str] = []
    env = H._env()
    get_source = env.loader.get_source
    monkeypatch.setattr(env.loader, "get_source", lambda e, name: loads.append(name) or get_source(e, name))
    page = render(report, ["html"])["report.html"]
    assert loads == []
    H._env.cache_clear()
    H._assets.cache_clear()
    assert render_html(report) == page


def test_the_spec_coverage_line_counts_the_sentences_whose_requirements_ran(real_report: dict) -> None:
    from conformance.spec import coverage

    ran = {(r["requirement"], r["version"]) for r in real_report["results"] if r["outcome"] in S.CHECKED}
    rows = coverage.select(real_report["versions"])
    expected = sum(1 for s in rows if any((rid, s.version) in ran for rid in s.checked_by))
    page = _parse(render_html(real_report))
    el = page.by_id["spec-coverage"]
    assert (el["data-checked"], el["data-sentences"]) == (str(expected), str(len(rows)))
    assert expected > 0
    skipped = {**real_report, "results": [{**r, "outcome": "skip"} for r in real_report["results"]]}
    assert _parse(render_html(skipped)).by_id["spec-coverage"]["data-checked"] == "0"
