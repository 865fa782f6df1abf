"""Build the book with Jupyter Book 1.x, executing its notebooks in parallel, and keep the
figure tables the build computed.

``jupyter-book build`` reads (and so executes) one page after another. Its own Sphinx entry
point takes a number of parallel reader processes, which the command line does not expose;
on a machine with several cores the long fluid-model pages then run side by side. Every
figure notebook also writes its tidy table and SVG into ``_build/figures`` during the build,
so the committed tables can be checked against what the book shows without executing the
notebooks a second time (:func:`coexist.runner.check_built`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from unittest.mock import patch

from .params import ParameterError
from .paths import BUNDLED_ONLY, MANIFEST, TABLES_ENV, tables_dir  # noqa: F401 (re-exported)


def build(
    root: Path = Path("."),
    jobs: int | None = None,
    bundled_only: bool = False,
    strict: bool = True,
) -> int:
    """Build ``root``'s book into ``root/_build/html``; return Sphinx's status (0 is success).

    ``jobs`` reader processes execute pages in parallel (default: one per CPU).
    ``bundled_only`` keeps external data (the FABRIC results a reader may have fetched) out
    of every page, as ``coexist figures --check`` does, so the tables written into
    ``_build/figures`` are comparable with the committed ones. ``strict`` turns warnings
    into errors after the whole book is built (``-W -n --keep-going``).
    """
    from jupyter_book.sphinx import build_sphinx

    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ParameterError(f"parameter 'jobs' is {jobs}; valid range: an integer >= 1")
    root = root.resolve()
    config, toc = root / "_config.yml", root / "_toc.yml"
    for path in (config, toc):
        if not path.exists():
            raise ParameterError(f"no {path.name} in {root}: not a book directory")
    html = root / "_build" / "html"
    tables = root / "_build" / "figures"
    shutil.rmtree(html, ignore_errors=True)
    shutil.rmtree(tables, ignore_errors=True)
    tables.mkdir(parents=True)
    (tables / MANIFEST).write_text(json.dumps(
        {"bundled_only": bundled_only, "jobs": jobs, "started": time.time()}) + "\n")
    env = {TABLES_ENV: str(tables)}
    if bundled_only:
        env[BUNDLED_ONLY] = "1"
    with patch.dict(os.environ, env):  # the kernels inherit it
        result = build_sphinx(
            str(root),
            str(html),
            use_external_toc=True,
            noconfig=True,
            path_config=str(config),
            confoverrides=overrides(toc, strict),
            builder="html",
            warningiserror=strict,
            keep_going=strict,
            freshenv=True,
            jobs=jobs,
        )
    if isinstance(result, BaseException):
        raise RuntimeError(f"the book build failed: {result!r} (see the output above)") from result
    return int(result or 0)


def overrides(toc: Path, strict: bool = True) -> dict:
    """The Sphinx settings ``coexist book`` adds to ``_config.yml``, as ``jupyter-book build
    [-n]`` does for a book: the external table of contents, no per-page LaTeX, nit-picky
    references when ``strict``."""
    return {"external_toc_path": toc.as_posix(), "latex_individualpages": False,
            "nitpicky": strict}

