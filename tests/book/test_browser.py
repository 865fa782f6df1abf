"""Open the built book in headless Chromium: math typeset, figures present, nothing remote.

Needs ``make book`` first. Locally the test is skipped when the book or Chromium is missing;
in CI (``CI=true``) that is a failure, because the check must run there.
"""

import fcntl
import html
import json
import os
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from ..conftest import IN_CI, ROOT

HTML = Path(os.environ.get("COEXIST_BOOK_HTML", ROOT / "_build" / "html"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.browser


def _need(condition: bool, why: str) -> None:
    if not condition:
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)


def pages() -> list[Path]:
    toc = (ROOT / "_toc.yml").read_text()
    files = re.findall(r"(?:root|file): (\S+)", toc)
    return [HTML / f"{f}.html" for f in files]


def test_beyond_chapter_shows_the_equilibria_of_the_bundled_data():
    """The equilibrium table pasted into the beyond chapter holds one row per observed
    10-flow equilibrium in the bundled data, with the same verdict against eq. (25), or
    "not settled" where the run-length study does not vouch for its runs."""
    from coexist.measured import equilibria as measured_equilibria
    from coexist.measured import run_length
    from coexist.measured import runs as measured

    page = HTML / "chapters" / "beyond.html"
    _need(page.exists(), "book not built: run `make book` first")
    text = page.read_text()
    tables = [t for t in re.findall(r"<table.*?</table>", text, re.S)
              if "Measured vs region" in t]
    assert tables, "no pasted equilibrium table on the beyond page"
    rows = [r for r in re.findall(r"<tr[^>]*>(.*?)</tr>", tables[0], re.S) if "<td" in r]
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
              for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows]
    mix = measured.mix_runs(10)
    observed = run_length.settle_settings(measured_equilibria.observed_equilibria(mix, 10),
                                          mix, run_length.verdict())
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    expected = measured_equilibria.against_region(observed, 10).merge(
        observed[[*setting, "settled"]].drop_duplicates(setting), on=setting, how="left")
    assert len(cells) == len(expected) > 0
    assert [c[1] for c in cells] == [f"{b:g}" for b in expected["buffer_bdp"]]
    assert [c[2] for c in cells] == [f"{k:g}" for k in expected["equilibrium_bbr_flows"]]
    # a setting the run-length study does not vouch for says so instead of a verdict
    verdicts = [v if ok else "not settled" for v, ok in zip(expected["verdict"],
                                                             expected["settled"], strict=True)]
    assert [c[-1].split(",")[0].split(" (")[0] for c in cells] == verdicts
    assert "pasted-text" in text  # the list of incomplete settings was pasted as well


def test_every_page_offers_its_source_for_download():
    """Each page links its own source (the notebook or the MyST file) for download, and the
    linked file is in the built book."""
    _need(HTML.exists(), "book not built: run `make book` first")
    for page in pages():
        links = re.findall(r'href="([^"]*_sources/[^"]+)"', page.read_text())
        assert links, f"{page.name}: no download link to its source"
        assert all((page.parent / html.unescape(link)).resolve().exists() for link in links), \
            (page.name, links)


def test_every_figure_has_its_provenance_line_under_it():
    from coexist.book import ledger

    _need(HTML.exists(), "book not built: run `make book` first")
    for e in ledger.FIGURES:
        text = (HTML / "notebooks" / f"{e.path.stem}.html").read_text()
        line = re.search(r"Provenance:</em>(.*?)</p>", text, re.S)
        assert line and e.notebook in line.group(1) and f"{e.id}.csv" in line.group(1), e.id


def test_claims_are_shown_where_the_text_quotes_them():
    """A glued claim renders as its committed text, not as a role left unresolved."""
    from coexist.book import claims, ledger

    _need(HTML.exists(), "book not built: run `make book` first")
    page = (HTML / "chapters" / "closed_form.html").read_text()
    share = claims.read(ledger.EXPECTED / "M-F1.claims.csv")["mf1_share_2bdp"].text
    assert share in page and "glue:text" not in page


#: a page's DOM once MathJax has typeset it (its startup promise resolves after the first
#: typesetting pass)
_TYPESET_DOM = """(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await MathJax.startup.promise;
  return document.documentElement.outerHTML;
})()"""


def _render_every_page(profile: Path) -> dict:
    """Every page's DOM as Chromium shows it, typeset, with the requests the pages made and
    their uncaught exceptions. One browser opens the pages one after another (a browser
    per page spent most of its time starting up)."""
    from coexist.book.browser import Page

    todo = pages()
    browser = Page(CHROMIUM, todo[0].as_uri(), profile, timeout=120)
    try:
        doms = {}
        for page in todo:
            browser.show(page)
            doms[str(page)] = browser.evaluate(_TYPESET_DOM)
        remote = [u for u in browser.requests if u.startswith(("http:", "https:"))]
        return {"doms": doms, "remote": remote, "errors": list(browser.console)}
    finally:
        browser.close()


@pytest.fixture(scope="session")
def rendered(tmp_path_factory, worker_id):
    """:func:`_render_every_page`, once per test run: under pytest-xdist the first worker
    to ask renders and the others read its result (the run's shared temporary directory,
    under a lock), since the tests that read it land on any worker."""
    _need(HTML.joinpath("index.html").exists(), "book not built: run `make book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    if worker_id == "master":
        out = _render_every_page(tmp_path_factory.mktemp("chromium"))
    else:
        shared = tmp_path_factory.getbasetemp().parent  # this run's, shared by its workers
        with open(shared / "rendered.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            cache = shared / "rendered.json"
            if cache.exists():
                out = json.loads(cache.read_text())
            else:
                out = _render_every_page(tmp_path_factory.mktemp("chromium"))
                cache.write_text(json.dumps(out))
    out["doms"] = {Path(k): v for k, v in out["doms"].items()}
    return out


def test_every_toc_page_was_built():
    _need(HTML.exists(), "book not built: run `make book` first")
    missing = [p for p in pages() if not p.exists()]
    assert not missing


def test_no_page_shows_warnings_or_other_stderr_output():
    """A notebook's stderr (library warnings, progress-bar notices) lands on the page as an
    output block; the book's pages must hold only what their cells mean to show."""
    _need(HTML.exists(), "book not built: run `make book` first")
    noisy = {}
    for page in pages():
        blocks = re.findall(r'class="output stderr.*?<pre>(.*?)</pre>', page.read_text(),
                            re.S)
        if blocks:
            noisy[page.name] = html.unescape(re.sub(r"<[^>]+>", "", blocks[0]))[:300]
    assert not noisy, noisy


def test_math_is_typeset(rendered):
    with_math = [p for p in rendered["doms"] if 'class="math notranslate' in p.read_text()]
    assert len(with_math) >= 4, "expected the derivation pages to contain math"
    for page in with_math:
        dom = rendered["doms"][page]
        assert "<mjx-container" in dom, f"MathJax did not typeset {page.name}"
        assert not re.search(r'<g[^>]*data-mml-node="merror"', dom), f"math error: {page.name}"


def test_figures_present_and_non_empty(rendered):
    figure_pages = [p for p in rendered["doms"] if p.stem.startswith("fig_")]
    assert len(figure_pages) >= 7
    for page in figure_pages:
        srcs = re.findall(r'<img[^>]+src="([^"]+\.svg)"', rendered["doms"][page])
        if re.search(r'class="coexist-interactive\b', rendered["doms"][page]):
            continue  # drawn by Vega here, as test_whatif_sliders_drive_the_chart_offline checks
        assert srcs, f"no figure image on {page.name}"
        for src in srcs:
            svg = (page.parent / src).resolve()
            text = svg.read_text()
            assert svg.stat().st_size > 2000 and "<svg" in text and "<path" in text, svg


def test_no_script_errors_and_nothing_remote(rendered):
    # uncaught exceptions on any page; the theme's own Thebe script declares a constant
    # twice on every page (its THEBE_JS_URL), as the WhatIf test notes
    errors = [e for e in rendered["errors"] if "THEBE_JS_URL" not in e]
    assert errors == [], errors
    assert rendered["remote"] == [], rendered["remote"]  # requests the pages made
    for page, dom in rendered["doms"].items():
        assert "Error loading script" not in dom, page.name
        remote = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?://[^"]+)"', dom)
        assert not remote, f"{page.name} loads {remote}"


def _move(page, selector: str, value: str) -> None:
    """Set a slider or drop-down the way a reader's input does (an input/change event)."""
    page.evaluate(f"""(() => {{
        const el = document.querySelector({selector!r});
        el.value = {value!r};
        el.dispatchEvent(new Event('input', {{bubbles: true}}));
        el.dispatchEvent(new Event('change', {{bubbles: true}}));
        return true; }})()""")


def test_whatif_sliders_drive_the_chart_offline(tmp_path):
    """The interactive chapter, as a reader sees it with no network: the chart embeds from
    the book's own Vega bundle, moving a slider redraws it, nothing is fetched remotely."""
    from coexist.book.browser import Page

    page_file = HTML / "notebooks" / "fig_whatif.html"
    _need(page_file.exists(), "book not built: run `make book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    assert "<svg" in page_file.read_text()  # the static fallback is in the page itself
    page = Page(CHROMIUM, page_file.as_uri(), tmp_path)
    try:
        chart = "#whatif-chart"
        page.wait_for(f"document.querySelector('{chart}')?.dataset.embedded === 'yes'")
        controls = page.evaluate(
            f"Array.from(document.querySelectorAll('{chart} .vega-bind input[name], "
            f"{chart} .vega-bind select')).map(e => e.name)")
        assert {"capacity", "rtt", "flows", "bbr_fraction", "buffer"} <= set(controls)

        def label() -> str:
            return page.evaluate(
                f"Array.from(document.querySelectorAll('{chart} svg text'))"
                ".map(t => t.textContent).find(t => t.startsWith('buffer ')) || ''")

        def svg() -> str:
            return page.evaluate(f"document.querySelector('{chart} svg').outerHTML")

        assert label() == "buffer 2.0 BDP, 1 of 2 flows BBR"
        first = svg()
        _move(page, f"{chart} input[name=buffer]", "10")
        page.wait_for(f"Array.from(document.querySelectorAll('{chart} svg text'))"
                      ".some(t => t.textContent.startsWith('buffer 10.0 BDP'))")
        second = svg()
        assert second != first
        _move(page, f"{chart} select[name=flows]", "10")
        page.wait_for(f"Array.from(document.querySelectorAll('{chart} svg text'))"
                      ".some(t => t.textContent.endsWith('5 of 10 flows BBR'))")
        assert svg() != second  # the closed-form band and the fluid line changed with it
        # the theme itself logs a duplicate-declaration error on every page; ours must not
        ours = [c for c in page.console
                if ("vega" in c.lower() or "whatif" in c.lower()) and "THEBE" not in c]
        assert not ours, ours
        remote = [u for u in page.requests if not u.startswith(("file:", "data:"))]
        assert page.requests and not remote, remote
    finally:
        page.close()


def test_every_figure_is_shown_at_its_own_size_in_a_laptop_window(tmp_path):
    """In a window 1280 pixels wide the text column is at least figures.COLUMN wide, so
    every figure (which figures.save keeps that narrow) is shown unscaled and its smallest
    label keeps its figures.MIN_FONT pixels."""
    from coexist.book import figures
    from coexist.book.browser import Page

    figure_pages = sorted((HTML / "notebooks").glob("fig_*.html"))
    _need(bool(figure_pages), "book not built: run `make book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    page = Page(CHROMIUM, figure_pages[0].as_uri(), tmp_path)
    shrunk, narrow = [], []
    try:
        page.call("Emulation.setDeviceMetricsOverride", width=1280, height=900,
                  deviceScaleFactor=1, mobile=False)
        for html_page in figure_pages:
            page.show(html_page)
            shown = page.evaluate(
                "Array.from(document.querySelectorAll('article img[src$=\".svg\"]')).map("
                "i => [i.clientWidth, i.naturalWidth,"
                " (i.closest('picture') || i).parentElement.clientWidth])")
            shrunk += [(html_page.stem, s, n) for s, n, _ in shown if s < n]
            narrow += [(html_page.stem, c) for _, _, c in shown if c < figures.COLUMN]
    finally:
        page.close()
    assert narrow == [], f"text column narrower than figures.COLUMN: {narrow}"
    assert shrunk == [], f"figures shown smaller than drawn (shown, drawn px): {shrunk}"


def test_every_page_reads_as_a_paper(tmp_path):
    """What a reader sees without clicking: on a figure page at most a small share of the
    visible text is code (the code is collapsed, one click away), on no page any raw
    printed output, no preformatted line or table wider than the column,
    and no link to a file the book does not have (coexist.book.reader_view.LIMITS)."""
    from coexist.book import reader_view

    _need(HTML.joinpath("index.html").exists(), "book not built: run `make book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    table = reader_view.measure(HTML, CHROMIUM)
    assert len(table) == len(pages())
    assert reader_view.failures(table) == []


def test_the_reader_view_sees_what_a_reader_sees(tmp_path):
    """The measurement itself: on a page made for it, visible code counts and collapsed code
    does not, a stdout block counts its lines, a line wider than its box and a link to a
    missing file are found."""
    from coexist.book import reader_view

    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    site = tmp_path / "site"
    (site / "chapters").mkdir(parents=True)
    long_line = "x = " + "1 + " * 200
    (site / "chapters" / "probe.html").write_text(
        '<html><body><article class="bd-article" style="width:600px">'
        "<p>" + "Prose a reader reads. " * 20 + "</p>"
        '<div class="cell_input"><pre>visible_code = 1</pre></div>'
        '<details><summary>Show code</summary><div class="cell_input">'
        "<pre>hidden_code_that_must_not_count = 2</pre></div></details>"
        '<div class="cell_output"><div class="output stream"><pre>one\ntwo\nthree\nfour'
        "</pre></div></div>"
        f'<div class="cell_input"><pre style="overflow:auto">{long_line}</pre></div>'
        '<a href="missing.html">gone</a><a href="probe.html">here</a>'
        '<a href="https://example.org/">away</a></article></body></html>')
    (site / "index.html").write_text("<html></html>")
    row = reader_view.measure_file(site / "chapters" / "probe.html", CHROMIUM)
    assert row["code_chars"] == len("visible_code=1") + len(long_line.replace(" ", ""))
    assert row["raw_output_lines"] == 4
    assert row["overflowing_lines"] == 1
    assert row["broken_links"] == ["missing.html"]


def test_the_references_page_links_every_work_by_its_doi_or_url():
    from .test_references import NO_LINK, entries

    page = HTML / "chapters" / "references.html"
    _need(page.exists(), "book not built: run `make book` first")
    text = html.unescape(page.read_text())
    for key, body in entries().items():
        if key in NO_LINK:
            continue
        link = re.search(r"^\s*doi\s*=\s*\{([^}]+)\}", body, re.M)
        target = (f"https://doi.org/{link.group(1)}" if link else
                  re.search(r"^\s*url\s*=\s*\{([^}]+)\}", body, re.M).group(1))
        assert f'href="{target}"' in text, f"{key}: no link to {target}"
    cited = (HTML / "notebooks" / "fig_m_f1.html").read_text()
    assert "references.html#id" in cited or 'href="../chapters/references.html' in cited


def test_the_pdf_holds_every_page_figure_and_formula(tmp_path):
    """`coexist pdf` prints every page of the built book into one PDF: a bookmark per page
    in reading order, every formula typeset by MathJax before printing, every figure page's
    figure in it (each figure's title, drawn as SVG text, is text in the PDF)."""
    from pypdf import PdfReader

    from coexist.book import ledger, pdf

    _need(HTML.joinpath("index.html").exists(), "book not built: run `make book` first")
    _need(CHROMIUM is not None, "chromium not installed: apt-get install chromium")
    out = tmp_path / "book.pdf"
    manifest = pdf.build(HTML, out, CHROMIUM, progress=False, into_site=False)
    assert [p["page"] for p in manifest["pages"]] == [
        str(p.relative_to(HTML).with_suffix("")) for p in pages()]
    reader = PdfReader(out)
    assert len(reader.pages) == manifest["pdf_pages"] > len(pages())
    texts: dict[int, str] = {}

    def text_of(i: int) -> str:  # pypdf's text extraction is slow: each page once
        if i not in texts:
            texts[i] = unicodedata.normalize("NFKC", reader.pages[i].extract_text() or "")
        return texts[i]

    marks = [reader.get_destination_page_number(m) + 1 for m in reader.outline]
    assert marks == [p["first_pdf_page"] for p in manifest["pages"]]
    with_math = [p for p in manifest["pages"] if p["math"]]
    assert len(with_math) >= 10
    assert all(p["typeset"] == p["math"] and p["errors"] == 0 for p in with_math), with_math
    for e in ledger.FIGURES:
        entry = next(p for p in manifest["pages"] if p["page"] == f"notebooks/{e.path.stem}")
        if e.id != "WhatIf":  # drawn by Vega in the page; its static SVG is inline
            assert entry["figures"] >= 1, e.id
        first = entry["first_pdf_page"] - 1
        text = " ".join(text_of(i) for i in range(first, first + entry["pdf_pages"]))
        text = re.sub(r"\s+", " ", text)
        # the figure's own words (title, axes, legend), drawn as SVG text, are text here
        drawn = {re.sub(r"\s+", " ", html.unescape(t)).strip() for t in re.findall(
            r"<text[^>]*>([^<]{12,})</text>", (ledger.EXPECTED / f"{e.id}.svg").read_text())}
        found = [t for t in drawn if t in text]
        assert len(found) >= min(3, len(drawn)), f"{e.id}: its figure is not in the PDF"
    # no page of the PDF is empty (a figure kept whole once pushed a blank page before it)
    # (a page with text or a figure has a content stream of thousands of bytes: only the
    # short ones are read for text, the slow part)
    def empty(i: int) -> bool:
        page = reader.pages[i]
        contents = page.get_contents()
        size = len(contents.get_data()) if contents is not None else 0
        return size < 2000 and "/XObject" not in (page.get("/Resources") or {}) \
            and not text_of(i).strip()

    blank = [i + 1 for i in range(len(reader.pages)) if empty(i)]
    assert blank == [], f"blank PDF pages: {blank}"
