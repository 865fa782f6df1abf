"""The book build: Sphinx may read (execute) its pages in parallel, and `coexist book`
refuses what it cannot build."""

import inspect
import json
import multiprocessing.process
import os
import re
import time
from pathlib import Path

import pytest

from coexist.book import build as book
from coexist.core.params import ParameterError

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


#: a batch's process waits for this file, so that no batch ends while batches are still
#: being added (as in a build, where the first pages run for minutes); a batch that ended
#: early would let the next start in the order added, whatever the machine's load
_GATE: list[Path] = []


def _wait_for_gate(batch: list[str]) -> None:
    deadline = time.monotonic() + 60.0
    while not _GATE[0].exists() and time.monotonic() < deadline:
        time.sleep(0.005)


def test_pages_start_costliest_first_under_sphinx_s_own_scheduler(monkeypatch, tmp_path):
    from sphinx.util.parallel import ParallelTasks

    _GATE[:] = [tmp_path / "go"]  # the forked batches inherit it

    started: list[str] = []
    start = multiprocessing.process.BaseProcess.start

    def noted(proc):  # the parent starts each batch's process: (pipe, function, batch)
        started.append(proc._args[2][0])
        start(proc)

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", noted)
    names = [f"p{i}" for i in range(8)]
    seconds = {"p3": 50.0, "p6": 40.0, "p1": 30.0, "p0": 20.0, "p7": 10.0}
    tasks = ParallelTasks(2)
    for batch in book.reading_batches(names, 2, seconds):
        tasks.add_task(_wait_for_gate, batch)
    _GATE[0].touch()
    tasks.join()
    # the recorded pages by cost, then those without a record alphabetically
    assert started == ["p3", "p6", "p1", "p0", "p7", "p2", "p4", "p5"]


def test_sphinx_s_parallel_reader_takes_the_costliest_first_batches():
    import sphinx.builders
    from sphinx.builders import Builder

    # the patched name is the one Sphinx's reader calls
    assert "make_chunks(docnames, nproc)" in inspect.getsource(Builder._read_parallel)
    names = [f"p{i:02d}" for i in range(40)]

    def reader(builder, docnames, nproc):
        return sphinx.builders.make_chunks(docnames, nproc)

    batches = book._costliest_first(reader, {"p20": 9.0, "p05": 3.0})(None, names, 2)
    assert batches[:2] == [["p20"], ["p05"]] and batches[-1] == ["p00"]
    assert sorted(b for (b,) in batches) == names
    own = reader(None, names, 2)  # outside the reader, Sphinx's batches are its own
    assert len(own) < len(names) and sum(own, []) == names


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
