"""The book build: Sphinx may read (execute) its pages in parallel, and `coexist book`
refuses what it cannot build."""

import inspect
import json
import os
import re
from pathlib import Path

import pytest

from coexist.book import build as book
from coexist.core.params import ParameterError

ROOT = Path(__file__).resolve().parents[2]


def test_every_extension_of_the_book_allows_parallel_reading(tmp_path):
    from jupyter_book.config import get_final_config
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    config, _ = get_final_config(user_yaml=ROOT / "_config.yml", sourcedir=ROOT,
                                 cli_config=book.overrides(ROOT / "_toc.yml"))
    with patch_docutils(None), docutils_namespace():
        app = Sphinx(str(ROOT), None, str(tmp_path / "html"), str(tmp_path / "doctrees"),
                     "html", confoverrides=config, status=None, warning=None, parallel=2)
        unsafe = [name for name, ext in app.extensions.items() if not ext.parallel_read_safe]
        assert unsafe == [] and app.is_parallel_allowed("read")


def _costs(order: list[str], seconds: dict[str, float], nproc: int) -> list[float]:
    from sphinx.util.parallel import make_chunks

    return [sum(seconds.get(d, 0.0) for d in batch) for batch in make_chunks(order, nproc)]


def test_sphinx_s_batches_of_the_reading_order_carry_about_equal_cost():
    names = [f"p{i:02d}" for i in range(51)]
    seconds = {f"p{i:02d}": float(v) for i, v in
               enumerate([52, 30, 26, 21, 18, 17, 15, 14, 13, 11, 10, 10, 9, 8, 7, 6, 5])}
    order = book.reading_order(names, 2, seconds)
    assert sorted(order) == names
    alphabetical, balanced = _costs(names, seconds, 2), _costs(order, seconds, 2)
    assert len(balanced) == len(alphabetical) > 2  # the same batch sizes, Sphinx's
    assert max(alphabetical) - min(alphabetical) > 200
    assert max(balanced) - min(balanced) <= max(seconds.values())
    assert max(balanced) < max(alphabetical) / 2


def test_pages_without_a_record_keep_their_order():
    names = ["a", "b", "c", "d", "e", "f", "g"]
    assert book.reading_order(names, 2, {}) == names


def test_the_extension_arranges_the_pages_through_sphinx_s_public_event(tmp_path):
    from types import SimpleNamespace

    from coexist.book import sphinxext

    (tmp_path / "benchmarks").mkdir()
    (tmp_path / book.SECONDS_COMMITTED).write_text(json.dumps(
        {f"p{i:02d}": 10.0 for i in range(8)}))
    names = [f"p{i:02d}" for i in range(16)]
    docnames = list(names)
    sphinxext._balance_reading(SimpleNamespace(parallel=2, srcdir=str(tmp_path)), None,
                               docnames)
    assert docnames != names and sorted(docnames) == names
    assert max(_costs(docnames, {n: 10.0 for n in names[:8]}, 2)) < 80
    serial = list(names)
    sphinxext._balance_reading(SimpleNamespace(parallel=1, srcdir=str(tmp_path)), None,
                               serial)
    assert serial == names
    handlers = [listener.handler for listener in _listeners("env-before-read-docs")]
    assert sphinxext._balance_reading in handlers


def _listeners(event: str) -> list:
    from sphinx.events import EventManager

    class App:
        def __init__(self):
            self.events = EventManager(self)

        def connect(self, name, handler, priority=500):
            return self.events.connect(name, handler, priority)

        def add_css_file(self, *a, **k):
            pass

    from coexist.book import sphinxext

    app = App()
    sphinxext.setup(app)
    return app.events.listeners[event]


def test_the_build_patches_nothing_of_sphinx():
    """Ordering goes through the public event, not a patched private method."""
    source = inspect.getsource(book) + inspect.getsource(__import__(
        "coexist.book.sphinxext", fromlist=["x"]))
    assert "unittest.mock" not in source and "_read_parallel" not in source
    from sphinx.builders import Builder

    assert Builder._read_parallel.__module__ == "sphinx.builders"  # Sphinx's own


def test_page_seconds_come_from_the_last_build_else_the_committed_record(tmp_path):
    assert book.page_seconds(tmp_path) == {}
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / book.SECONDS_COMMITTED).write_text('{"a": 2}')
    assert book.page_seconds(tmp_path) == {"a": 2.0}
    (tmp_path / "_build").mkdir()
    (tmp_path / book.SECONDS_FILE).write_text('{"b": 3.5}')
    assert book.page_seconds(tmp_path) == {"b": 3.5}


def test_the_committed_record_times_every_notebook_of_the_book():
    from coexist.core import paths

    assert book.SECONDS_FILE.name == paths.PAGE_SECONDS  # the file coexist.book.sphinxext writes
    recorded = json.loads((ROOT / book.SECONDS_COMMITTED).read_text())
    toc = (ROOT / "_toc.yml").read_text()
    notebooks = {f"notebooks/{p.stem}" for p in (ROOT / "notebooks").glob("*.ipynb")
                 if f"notebooks/{p.stem}" in toc}
    assert notebooks and notebooks <= set(recorded)
    assert all(v >= 0 for v in recorded.values())


def test_build_refuses_a_directory_without_a_book_and_a_jobs_count_below_one(tmp_path):
    with pytest.raises(ParameterError, match="no _config.yml"):
        book.build(tmp_path)
    with pytest.raises(ParameterError, match="'jobs' is 0"):
        book.build(ROOT, jobs=0)
    assert not (tmp_path / "_build").exists()


def _tiny_book(root: Path, value: str) -> None:
    """A book of one chapter quoting one notebook's glued value; the notebook counts its
    executions in ``runs.txt``."""
    import nbformat

    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "model.py").write_text("A = 1\n")
    (root / "_config.yml").write_text(
        "title: t\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: force\n"
        "sphinx:\n  extra_extensions:\n    - coexist.book.sphinxext\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: nb\n")
    (root / "intro.md").write_text(
        "# Intro\n\nThe value is {glue:text}`nb.ipynb::v:s`.\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Notebook"), nbformat.v4.new_code_cell(
        "from pathlib import Path\nfrom myst_nb import glue\n"
        "with open('runs.txt', 'a') as f:\n    f.write('run\\n')\n"
        f"glue('v', {value!r}, display=False)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, root / "nb.ipynb")


@pytest.mark.slow
def test_a_rebuild_executes_only_what_changed(tmp_path):
    def runs() -> int:
        return (tmp_path / "runs.txt").read_text().count("run")

    def intro() -> str:
        return re.sub(r"<[^>]+>", "", (tmp_path / "_build" / "html" / "intro.html").read_text())

    _tiny_book(tmp_path, "first")
    assert book.build(tmp_path, jobs=1, strict=False) == 0
    assert runs() == 1 and "The value is first" in intro()
    # the build recorded how long the notebook took, for the next build's order
    assert set(json.loads((tmp_path / book.SECONDS_FILE).read_text())) == {"nb"}
    assert book.build(tmp_path, jobs=1, strict=False) == 0 and runs() == 1
    # prose edited: the chapter changes, the notebook is not executed again
    text = (tmp_path / "intro.md").read_text().replace("The value is", "Its value is")
    (tmp_path / "intro.md").write_text(text)
    assert book.build(tmp_path, jobs=1, strict=False) == 0
    assert runs() == 1 and "Its value is first" in intro()
    # the notebook edited: it executes again, and the page quoting it follows
    _tiny_book(tmp_path, "second")
    (tmp_path / "intro.md").write_text(text)
    os.utime(tmp_path / "intro.md", (1, 1))  # older than its last read: unchanged to Sphinx
    assert book.build(tmp_path, jobs=1, strict=False) == 0
    assert runs() == 2 and "Its value is second" in intro()
    # the package's source changed: every page executes again
    (tmp_path / "src" / "model.py").write_text("A = 2\n")
    assert book.build(tmp_path, jobs=1, strict=False) == 0 and runs() == 3
    assert book.build(tmp_path, jobs=1, strict=False, fresh=True) == 0 and runs() == 4


def test_the_landing_page_reads_the_repository_url_from_its_one_field():
    """The landing page names the repository through a substitution the book's extension
    fills from ``_config.yml``'s ``repository.url``: ``git clone <url>`` once it is set, the
    clone step alone while it is empty, never the build's plumbing (where the URL is set is
    for the book's maintainers, in _config.yml and CONTRIBUTING.md). No page types the URL
    itself."""
    from coexist.book import sphinxext

    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(r"^repository:\n  url: ", config, re.M)
    assert "repository.url" in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    intro = (ROOT / "chapters" / "intro.md").read_text(encoding="utf-8")
    assert f"{{{{ {sphinxext.REPOSITORY_KEY} }}}}" in intro
    empty = sphinxext.repository_text(" ")
    assert "clone" in empty.lower()
    assert not re.search(r"_config|repository\.url|git clone", empty)
    url = "https://example.org/coexist"
    assert f"`git clone {url}`" in sphinxext.repository_text(f" {url} ")
