"""The book build: Sphinx may read (execute) its pages in parallel, and `coexist book`
refuses what it cannot build."""

import os
import re
from pathlib import Path

import pytest

from coexist import book
from coexist.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]


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
        "sphinx:\n  extra_extensions:\n    - coexist.sphinxext\n")
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
