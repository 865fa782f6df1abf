"""The book as one PDF, printed from the built site as a reader sees it.

Every page of the built book (``_build/html``, in the order of ``_toc.yml``) is opened in
headless Chromium, given the time MathJax needs to typeset it, and printed to PDF through
the DevTools protocol; the pages are then joined in reading order with one bookmark per
page. Printing the site rather than building LaTeX keeps what the site shows: figures
stay the vector SVGs the notebooks drew (their text stays text), math is MathJax's own
typesetting, tables and glued claims are the same HTML, and code stays collapsed. The
navigation of the site (sidebars, toggles, previous/next links) is left out of print, and
a collapsed cell's code is not printed: the online book and the notebooks carry it.

Why not Jupyter Book's LaTeX route: it would execute every notebook again into LaTeX,
needs every SVG converted to PDF first, cannot collapse code, and renders glued HTML
tables poorly; the site is already built, checked and looked at.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import tempfile
from pathlib import Path

from ..core.params import invalid
from .reader_view import find_chromium, pages, require_built

#: A4 in inches, with 18-mm margins: the column of the site (740 px at 96 px per inch)
#: fits the text width at a scale of about 0.8
PAPER_IN = (8.27, 11.69)
MARGIN_IN = 0.7
SCALE = 0.8

#: hidden in print: the site's navigation and the code toggles
PRINT_CSS = """
@media print {
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article,
  .header-article, .prev-next-area, .bd-footer, .bd-footer-article, .bd-footer-content,
  .primary-toggle, .secondary-toggle, .search-button, .theme-switch-button,
  .headerlink, details.hide.above-input, details.above-input, .cell_input.hide,
  #pst-back-to-top, .tag_hide-input > .cell_input { display: none !important; }
  .bd-main, .bd-content, .bd-article-container, .bd-page-width
    { max-width: 100% !important; width: 100% !important; margin: 0 !important;
      padding: 0 !important; }
  figure, img, table, .cell_output { break-inside: avoid; }
  h1, h2, h3 { break-after: avoid; }
}
"""

#: measured in the page before it is printed: whether MathJax typeset every formula, and
#: what the page holds (formulas, figures) for the PDF's manifest
_READY = r"""
(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await MathJax.startup.promise;
  const style = document.createElement('style');
  style.textContent = %s;
  document.head.appendChild(style);
  const art = document.querySelector('article.bd-article') || document.body;
  const math = art.querySelectorAll('.math, span.math, div.math').length;
  const typeset = art.querySelectorAll('mjx-container').length;
  const figures = Array.from(art.querySelectorAll('img')).filter(
      i => i.src.endsWith('.svg')).length;
  const errors = art.querySelectorAll('[data-mml-node="merror"]').length;
  return {title: (art.querySelector('h1') || {}).innerText || document.title,
          math: math, typeset: typeset, figures: figures, errors: errors};
})()
"""


#: the PDF's name inside the built site, so that publishing the site publishes it too
SITE_NAME = "book.pdf"


#: a printed page's content stream no longer than this holds nothing but its white
#: background (118 bytes in Chromium's PDFs; a page with one word holds thousands)
BLANK_STREAM_BYTES = 256


def _blank(page) -> bool:
    """Whether a printed page holds nothing: no text, no image, only its background.
    Chromium leaves such a page before a figure taller than the rest of the page, which
    it moves on whole; the edition leaves it out."""
    contents = page.get_contents()
    resources = page.get("/Resources") or {}
    # the cheap tests first: nearly every page fails the first, before its text is read
    return (len(contents.get_data() if contents is not None else b"") <= BLANK_STREAM_BYTES
            and "/XObject" not in resources and not (page.extract_text() or "").strip())


def build(html_dir: Path, out: Path, chromium: str | None = None,
          progress: bool = True, into_site: bool = True) -> dict:
    """Print every page of the built book in ``html_dir`` and join them into ``out``; write
    ``out`` with the suffix ``.json`` beside it, a manifest of what each page holds (its
    title, first PDF page, page count, formulas found and typeset, SVG figures), and, with
    ``into_site``, a copy as :data:`SITE_NAME` in ``html_dir``. Returns the manifest."""
    from pypdf import PdfReader, PdfWriter
    from tqdm import tqdm

    from .browser import Page

    html_dir = html_dir.resolve()
    if not (html_dir / "index.html").exists():
        raise invalid("html", str(html_dir), "a built book's HTML directory (run `make book`)")
    todo = require_built(pages(html_dir))
    chromium = find_chromium(chromium)
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = PdfWriter()
    entries = []
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        browser = Page(chromium, todo[0][1].as_uri(), Path(profile), timeout=180)
        try:
            for name, path in tqdm(todo, desc="pdf: pages", unit="page", disable=not progress):
                browser.show(path)
                held = browser.evaluate(_READY % json.dumps(PRINT_CSS))
                printed = browser.call(
                    "Page.printToPDF", printBackground=True, scale=SCALE,
                    paperWidth=PAPER_IN[0], paperHeight=PAPER_IN[1], marginTop=MARGIN_IN,
                    marginBottom=MARGIN_IN, marginLeft=MARGIN_IN, marginRight=MARGIN_IN,
                    displayHeaderFooter=False)
                reader = PdfReader(io.BytesIO(base64.b64decode(printed["data"])))
                first = len(writer.pages)
                for page in reader.pages:
                    if not _blank(page):
                        writer.add_page(page)
                writer.add_outline_item(title=held["title"].strip() or name, page_number=first)
                entries.append({"page": name, "first_pdf_page": first + 1,
                                "pdf_pages": len(writer.pages) - first, **held})
        finally:
            browser.close()
    writer.add_metadata({"/Title": entries[0]["title"] if entries else "book"})
    with out.open("wb") as f:
        writer.write(f)
    manifest = {"pdf": out.name, "pages": entries,
                "pdf_pages": sum(e["pdf_pages"] for e in entries)}
    out.with_suffix(".json").write_text(json.dumps(manifest, indent=1) + "\n")
    if into_site:
        shutil.copyfile(out, html_dir / SITE_NAME)
    return manifest
