"""The book build: Sphinx may read (execute) its pages in parallel, and `coexist book`
refuses what it cannot build."""

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
