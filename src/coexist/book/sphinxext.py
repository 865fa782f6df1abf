"""Sphinx extension for the book: serve MathJax and Vega from the build itself, never from
a CDN, and re-read a page that quotes a notebook's claims whenever that notebook changes.

MathJax 3 comes from the pinned ``django-static-mathjax`` wheel (it ships the ``es5``
bundle); the SVG-output component needs no web fonts, so the book renders equations with
no network at all. The page's engine (:mod:`coexist.live`) is copied into the site the
same way. Vega, Vega-Lite and vega-embed, which the interactive chapter needs,
come bundled from the pinned ``vl-convert-python`` wheel (the same versions that render
every static SVG).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from ..core import settings, sidecars
from ..core.paths import PAGE_SECONDS, PAGE_SECONDS_SCHEMA
from ..runstore.lookup import PAGE_ENV
from .claims import QUOTE

_KEEP = ("tex-svg.js", "input", "output/svg", "output/svg.js", "ui", "a11y", "adaptors",
         "sre", "core.js", "loader.js", "startup.js")


def mathjax_source() -> Path:
    """The ``es5`` directory of the installed MathJax package."""
    try:
        import mathjax  # provided by django-static-mathjax
    except ImportError as exc:
        raise ExtensionError(
            "MathJax is not installed; `pip install -r requirements.txt` provides it"
        ) from exc
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (es5 / "tex-svg.js").exists():
        raise ExtensionError(f"no tex-svg.js under {es5}")
    return es5


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    src = mathjax_source()
    dst = Path(app.outdir) / "_static" / "mathjax"
    for rel in _KEEP:
        s, d = src / rel, dst / rel
        if s.is_dir():
            shutil.copytree(s, d, dirs_exist_ok=True)
        elif s.exists():
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s, d)


def _write_vega(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import vl_convert as vlc

    from .figures import VEGA_JS

    dst = Path(app.outdir) / VEGA_JS
    dst.parent.mkdir(parents=True, exist_ok=True)
    # the bundle's top-level const/let would clash with the theme's globals in a classic
    # script; a function scope isolates them (it exports through window.vegaEmbed etc.)
    dst.write_text("(function () {\n" + vlc.javascript_bundle() + "\n})();\n",
                   encoding="utf-8")


#: where the book serves the page's engine (coexist.live's JavaScript and WebAssembly)
LIVE_DIR = "_static/live"
#: the flow counts the page runs BBRv2 with, whose period phases the book writes
LIVE_PHASE_FLOWS = range(2, 11)


def _copy_live(app: Sphinx, exception: Exception | None) -> None:
    """The page's engine as static files of the site (``_static/live``): its modules, the
    committed kernel.wasm, the page's modules as one classic script (:mod:`coexist.live.bundle`:
    it runs from a file too), and BBRv2's period phases for 2 to 10 flows (Python's seeded
    draws, :func:`coexist.fluid.model.paper_setup.paper_phases`), so "Your network" runs offline
    from any static server."""
    if exception is not None or app.builder.format != "html":
        return
    from ..fluid.model.paper_setup import paper_phases
    from ..live import bundle
    from ..live.wasm import WASM

    dst = Path(app.outdir) / LIVE_DIR
    dst.mkdir(parents=True, exist_ok=True)
    for src in [*sorted(WASM.parent.glob("*.mjs")), WASM]:
        shutil.copy2(src, dst / src.name)
    (dst / bundle.SCRIPT).write_text(bundle.classic_script(), encoding="utf-8")
    phases = {str(n): list(paper_phases(n)) for n in LIVE_PHASE_FLOWS}
    (dst / "bbr2_phases.json").write_text(json.dumps(phases) + "\n", encoding="utf-8")


#: the book's own style: tables in the type size of a paper's tables, so a comparison of a
#: few models fits the text column; a figure's caption in the text's colour and weight
CSS = """\
.bd-article table.table { font-size: 0.85rem; }
.bd-article table.table th { white-space: normal; }
.bd-article figure figcaption { color: var(--pst-color-text-base); font-weight: 400; }
/* a glued figure gets the whole text column, the width figures.COLUMN checks against */
.bd-article figure { padding-left: 0; padding-right: 0; }
.bd-article .cell_output div.highlight pre { white-space: pre-wrap; }
/* a claim glued as a whole sentence reads in the weight of the text around it */
.bd-article .coexist-plain span.pasted-text { font-weight: inherit; }
/* the landing page's figure, pasted as inline SVG: the wide chart, or on a phone's narrow
   column the narrower one in larger type that F-Exp2 draws beside it */
.bd-article .coexist-headline svg { max-width: 100%; height: auto; }
.bd-article .coexist-headline .coexist-phone { display: none; }
@media (max-width: 600px) {
  .bd-article .coexist-headline .coexist-wide { display: none; }
  .bd-article .coexist-headline .coexist-phone { display: block; }
}
/* "Your network": controls that wrap on a phone, one-line messages in red */
.yn-controls { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; }
.yn-controls input { width: 6rem; }
.yn-message { color: #b00020; white-space: pre-line; }
.yn-fluid { margin-bottom: 0.8rem; font-weight: 600; }
"""
CSS_FILE = "coexist.css"


def _phone_figures(app: Sphinx, exception: Exception | None) -> None:
    """Serve each figure's phone drawing to narrow screens (:func:`.figures.phone.publish`)."""
    if exception is not None or app.builder.format != "html":
        return
    from .figures import phone

    phone.publish(Path(app.outdir))


def _write_css(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    dst = Path(app.outdir) / "_static" / CSS_FILE
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(CSS, encoding="utf-8")


def _write_sources(app: Sphinx, exception: Exception | None) -> None:
    """The package's and the tests' code as pages of the site (the index links to them)."""
    if exception is not None or app.builder.format != "html":
        return
    from . import source_pages

    source_pages.write(Path(app.outdir), Path(app.srcdir))


#: extensions Jupyter Book loads that declare nothing about parallel reading, which makes
#: Sphinx read (and so execute) every page in one process. sphinx_multitoc_numbering (loaded
#: by sphinx_external_toc whatever the config says) only replaces the toctree collector's
#: section numbering, which Sphinx runs in the main process after all pages are read.
PARALLEL_SAFE_UNDECLARED = ("sphinx_multitoc_numbering",)


def _declare_parallel_safe(app: Sphinx) -> None:
    for name in PARALLEL_SAFE_UNDECLARED:
        ext = app.extensions.get(name)
        if ext is not None and ext.parallel_read_safe is None:
            ext.parallel_read_safe = True


def _name_page(app: Sphinx, docname: str, source: list[str]) -> None:
    """Name the page being read in the environment its notebook's kernel inherits, so the
    fluid-model memo's census says which page read which stored run
    (:mod:`coexist.runstore.lookup`). Each reading process reads one page at a time."""
    settings.export(PAGE_ENV, docname)


def _note_glue_sources(app: Sphinx, docname: str, source: list[str]) -> None:
    """A page quoting ``other.ipynb::key`` depends on that notebook: a rebuild that
    re-executes the notebook re-reads the page too, so its quoted values follow."""
    here = Path(app.env.doc2path(docname)).parent
    for rel in {nb for nb, _ in QUOTE.findall(source[0])}:
        app.env.note_dependency(str((here / rel).resolve()))


def _forget_glue_read_before(app: Sphinx) -> None:
    """myst-nb keeps the last glue files it read in memory (an ``lru_cache``); a second
    build in the same process must read them again, or pages keep the values of the first."""
    from myst_nb.ext.glue.crossref import read_glue_cache

    read_glue_cache.cache_clear()


def _record_page_seconds(app: Sphinx, env) -> None:
    """Write ``_build/page-seconds.json``: per page, the seconds its last execution took
    (myst-nb's execution data), so the next build can start the costliest pages first.
    Pages this build did not execute keep their earlier record."""
    from myst_nb.sphinx_ import NbMetadataCollector

    path = Path(app.outdir).parent / PAGE_SECONDS
    seconds = sidecars.read_json(path, PAGE_SECONDS_SCHEMA, "page-seconds record") \
        if path.exists() else {}
    for docname, data in NbMetadataCollector.get_doc_data(env).items():
        runtime = (data.get("exec_data") or {}).get("runtime")
        if runtime is not None:
            seconds[docname] = round(float(runtime), 1)
    path.write_text(json.dumps(dict(sorted(seconds.items())), indent=1) + "\n")


def _balance_reading(app: Sphinx, env, docnames: list[str]) -> None:
    """Arrange the pages to be read into batches of about equal cost
    (:func:`coexist.book.build.reading_order`), in place, as this public event allows; a
    serial build reads them as they are."""
    from . import build

    if app.parallel > 1 and len(docnames) > 1:
        docnames[:] = build.reading_order(docnames, app.parallel,
                                          build.page_seconds(Path(app.srcdir)))


#: the substitution a page shows where the book's repository is (``{{ repository }}``)
REPOSITORY_KEY = "repository"


def repository_text(url: str) -> str:
    """The clone step, as a page says it: ``git clone <url>``, or, while ``url`` is empty,
    the step without it (a reader has no use for where the URL is set: ``_config.yml``'s
    comment and CONTRIBUTING.md say that)."""
    url = url.strip()
    if not url:
        return "Clone the book's repository, then, in its folder:"
    return f"Clone the book's repository with `git clone {url}`, then, in its folder:"


def _repository_substitution(app: Sphinx, config) -> None:
    """Offer the repository's URL, read from the one field that holds it (``_config.yml``'s
    ``repository.url``, which Jupyter Book passes on as the theme's ``repository_url``), to
    every page as the substitution :data:`REPOSITORY_KEY`."""
    url = (config.html_theme_options or {}).get("repository_url", "") or ""
    config.myst_substitutions = {**(config.myst_substitutions or {}),
                                 REPOSITORY_KEY: repository_text(url)}


def setup(app: Sphinx) -> dict:
    mathjax_source()  # fail at start-up, not after a long build, if MathJax is missing
    app.connect("config-inited", _repository_substitution)
    app.connect("builder-inited", _declare_parallel_safe)
    app.connect("source-read", _name_page)
    app.connect("source-read", _note_glue_sources)
    app.connect("env-before-read-docs", _balance_reading)
    app.connect("env-updated", _record_page_seconds)
    app.connect("builder-inited", _forget_glue_read_before)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _write_vega)
    app.connect("build-finished", _copy_live)
    app.connect("build-finished", _write_css)
    app.connect("build-finished", _phone_figures)
    app.connect("build-finished", _write_sources)
    app.add_css_file(CSS_FILE)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
