"""Build the book with Jupyter Book 1.x, executing its notebooks in parallel, and keep the
figure tables the build computed.

``jupyter-book build`` reads (and so executes) one page after another. Its own Sphinx entry
point takes a number of parallel reader processes, which the command line does not expose;
on a machine with several cores the long fluid-model pages then run side by side. Every
figure notebook also writes its tidy table and SVG into ``_build/figures`` during the build,
so the committed tables can be checked against what the book shows without executing the
notebooks a second time (:func:`coexist.book.runner.check_built`).

A rebuild executes only what changed. The build keeps Sphinx's environment, and Sphinx
re-reads (so re-executes) only the pages whose source changed; a page that quotes a
notebook's claims (``{glue}`` roles) is re-read with that notebook (:mod:`coexist.book.sphinxext`
records the dependency). What a page's source does not show is keyed here
(:func:`inputs_key`): the package's source, ``data/``, the committed figure tables and
claims, the pins and the build's options. When that key changes, or with ``fresh``
(what CI's full tier asks for), every page executes again from an empty environment.

Pages are read in batches of about equal cost. Sphinx splits the pages it reads into a few
contiguous batches of about fifteen (``sphinx.util.parallel.make_chunks``), each read by one
process, so in alphabetical order two long pages in one batch run one after the other while
the other core finishes its batch and waits. Through Sphinx's public event for this,
``env-before-read-docs`` (which may reorder the pages in place), the book's extension
arranges the pages so that each batch carries about the same seconds (:func:`reading_order`),
as the pages took to execute in the last build (:data:`SECONDS_FILE`, written by
:mod:`coexist.book.sphinxext`), or in a clean clone in the committed record of a clean build
(:data:`SECONDS_COMMITTED`). ``benchmarks/reading_order.py`` measures what it buys. The
order changes when a page is computed, never what it computes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from ..core import settings, sidecars
from ..core.params import ParameterError
from ..core.paths import (  # noqa: F401 (re-exported)
    BUNDLED_ONLY,
    MANIFEST,
    PAGE_SECONDS,
    PAGE_SECONDS_SCHEMA,
    TABLES_ENV,
    tables_dir,
)
from ..runstore import fanout

#: what a page's execution reads besides its own source: hashed by :func:`inputs_key`
INPUTS = ("src", "data", "notebooks/expected", "requirements.txt", "environment.yml",
          "pyproject.toml")
#: where a build stores the key of the inputs it executed its pages with
KEY_FILE = Path("_build") / "inputs.sha256"
#: seconds each page took to execute in the last build: ``{docname: seconds}``
SECONDS_FILE = Path("_build") / PAGE_SECONDS
#: the same record from a clean build, committed, for a clone without a build
SECONDS_COMMITTED = Path("benchmarks") / "page_seconds.json"


def inputs_key(root: Path, **options: object) -> str:
    """sha256 over every file under :data:`INPUTS` (path and content) and ``options``."""
    h = hashlib.sha256(json.dumps(options, sort_keys=True).encode())
    for name in INPUTS:
        top = root / name
        files = sorted(top.rglob("*")) if top.is_dir() else [top] if top.exists() else []
        for path in files:
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(path.relative_to(root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def page_seconds(root: Path) -> dict[str, float]:
    """The seconds each page took to execute, from the last build here or else from the
    committed record (empty when neither exists: Sphinx's own order is then kept)."""
    for path in (root / SECONDS_FILE, root / SECONDS_COMMITTED):
        if path.exists():
            record = sidecars.read_json(path, PAGE_SECONDS_SCHEMA, "page-seconds record")
            return {str(k): float(v) for k, v in record.items()}
    return {}


def reading_order(docnames: list[str], nproc: int,
                  seconds: Mapping[str, float]) -> list[str]:
    """``docnames`` arranged so that Sphinx's contiguous reading batches
    (``make_chunks(docnames, nproc)``, whose sizes depend only on the number of pages)
    carry about equal seconds: the costliest page first into the batch with the least so
    far among those with room (longest processing time first). Pages without a record count
    as free. The same pages, in another order."""
    from sphinx.util.parallel import make_chunks

    sizes = [len(c) for c in make_chunks(list(docnames), nproc)]
    batches: list[list[str]] = [[] for _ in sizes]
    totals = [0.0] * len(sizes)
    for d in sorted(docnames, key=lambda d: -seconds.get(d, 0.0)):  # stable: ties keep order
        i = min((i for i in range(len(sizes)) if len(batches[i]) < sizes[i]),
                key=lambda i: totals[i])
        batches[i].append(d)
        totals[i] += seconds.get(d, 0.0)
    return [d for batch in batches for d in batch]


def build(
    root: Path = Path("."),
    jobs: int | None = None,
    bundled_only: bool = False,
    strict: bool = True,
    fresh: bool = False,
    scheduler: str | None = None,
) -> int:
    """Build ``root``'s book into ``root/_build/html``; return Sphinx's status (0 is success).

    ``jobs`` reader processes execute pages in parallel (default: one per CPU).
    ``bundled_only`` keeps external data (the FABRIC results a reader may have fetched) out
    of every page, as ``coexist figures --check`` does, so the tables written into
    ``_build/figures`` are comparable with the committed ones. ``strict`` turns warnings
    into errors after the whole book is built (``-W -n --keep-going``). ``fresh`` executes
    every page even if nothing it reads changed since the last build. ``scheduler`` (a Dask
    scheduler's address) sends the pages' fluid-model runs to its cluster
    (:mod:`coexist.runstore.fanout`); the stored pages and runs are the same either way.
    """
    from jupyter_book.sphinx import build_sphinx

    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ParameterError(f"parameter 'jobs' is {jobs}; valid range: an integer >= 1")
    if scheduler is not None:
        fanout.reach(scheduler)  # before anything is removed or executed
    root = root.resolve()
    config, toc = root / "_config.yml", root / "_toc.yml"
    for path in (config, toc):
        if not path.exists():
            raise ParameterError(f"no {path.name} in {root}: not a book directory")
    built = root / "_build"
    html, tables, key_file = built / "html", built / "figures", root / KEY_FILE
    key = inputs_key(root, bundled_only=bundled_only, strict=strict)
    fresh = fresh or not key_file.exists() or key_file.read_text().strip() != key
    if fresh:  # everything a page's execution left behind goes with the environment
        for old in (html, tables, built / ".doctrees", built / "jupyter_execute"):
            shutil.rmtree(old, ignore_errors=True)
        key_file.unlink(missing_ok=True)
    tables.mkdir(parents=True, exist_ok=True)
    (tables / MANIFEST).write_text(json.dumps(
        {"bundled_only": bundled_only, "jobs": jobs, "fresh": fresh,
         "started": time.time()}) + "\n")
    env = {TABLES_ENV: str(tables)}
    if bundled_only:
        env[BUNDLED_ONLY] = "1"
    if scheduler is not None:
        env[fanout.SCHEDULER_ENV] = scheduler
    with settings.environment(env):
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
            freshenv=fresh,
            jobs=jobs,
        )
    if isinstance(result, BaseException):
        raise RuntimeError(f"the book build failed: {result!r} (see the output above)") from result
    if not result:  # only a build that succeeded may be reused
        key_file.write_text(key + "\n")
    return int(result or 0)


def overrides(toc: Path, strict: bool = True) -> dict:
    """The Sphinx settings ``coexist book`` adds to ``_config.yml``, as ``jupyter-book build
    [-n]`` does for a book: the external table of contents, no per-page LaTeX, nit-picky
    references when ``strict``."""
    return {"external_toc_path": toc.as_posix(), "latex_individualpages": False,
            "nitpicky": strict}

