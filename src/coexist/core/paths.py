"""Where the repository's parts live, defined once for every module.

The package is installed in place (``pip install -e .``), so the repository is two levels
above this file. A running book build names the directory it wants figure tables and
claims in through :data:`TABLES_ENV` (:func:`tables_dir`).
"""

from __future__ import annotations

from pathlib import Path

from . import sidecars

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data"
REFERENCE = DATA / "reference"  # outputs of the authors' fluid-model code
FABRIC = DATA / "external" / "fabric"  # the FABRIC reproduction's data, bundled
NOTEBOOKS = ROOT / "notebooks"
EXPECTED = NOTEBOOKS / "expected"  # committed figure tables, SVGs and claims
BUILD = ROOT / "_build"

#: the environment variable that makes :func:`coexist.book.figures.save` keep the book's tables
TABLES_ENV = "COEXIST_BOOK_TABLES"
#: written into the tables directory when a book build starts (:data:`MANIFEST_SCHEMA`)
MANIFEST = "build.json"
MANIFEST_SCHEMA = sidecars.obj({"bundled_only": sidecars.Key((bool,)),
                                "fresh": sidecars.Key((bool,), required=False),
                                "jobs": sidecars.integer(low=1, required=False),
                                "started": sidecars.number(low=0.0, required=False)})
#: the file under ``_build`` where a book build records the seconds each page took to execute
PAGE_SECONDS = "page-seconds.json"
PAGE_SECONDS_SCHEMA = sidecars.obj(each=sidecars.number(low=0.0))
#: set while checking or accepting figures: notebooks then use bundled data only
BUNDLED_ONLY = "COEXIST_BUNDLED_ONLY"


def tables_dir() -> Path | None:
    """Where a running book build wants figure tables, or None outside a build."""
    from .settings import directory

    return directory(TABLES_ENV)
