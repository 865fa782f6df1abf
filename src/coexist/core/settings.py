"""The environment variables the project reads, each declared and parsed strictly here.

Every variable the package reads, its own and outside tools' alike, is declared in
:data:`VARIABLES` with its kind, its default and its meaning, and read only through
:func:`text`, :func:`flag`, :func:`directory` or :func:`file`, which refuse a name not
declared as that kind. A value with surrounding spaces, a control character, a flag other
than 0 or 1, or a directory variable naming a regular file (or a place where no directory
can be made) is refused in one line naming the variable, its value and what it may be,
instead of being taken as a relative directory called ``"  off "`` or a cache inside a
file. An empty value counts as unset, as in the shell.

Variables set for child processes (the kernels a book build starts, a store refresh's
census) are set here too: :func:`export` and :func:`environment`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .params import ParameterError
from .sidecars import CONTROL


class SettingError(ParameterError):
    """An environment variable holds a value the project cannot use."""


@dataclass(frozen=True)
class Variable:
    """One environment variable the project reads: its name, how it is parsed (``text``,
    ``flag``, ``directory`` or ``file``), what holds when it is unset, and what it means."""

    name: str
    kind: str
    default: str
    meaning: str


#: every environment variable the package reads (tests and CI read a few of their own:
#: ``CI``, ``COEXIST_RERUN_DRAWS``, ``COEXIST_RERUN_SEED``, ``COEXIST_FUZZ_EXAMPLES``,
#: ``KILL_SEED``, ``COEXIST_BOOK_HTML``, ``COEXIST_BOOK_TABLES_BUILT``)
VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable("COEXIST_FLUID_CACHE", "directory", "_build/fluid-cache in a book checkout",
             "the fluid-model memo's local layer; 'off' disables the memo"),
    Variable("COEXIST_FLUID_LOG", "file", "unset: no census",
             "a file to which every fluid-model memo lookup appends a JSON line (the store's "
             "census)"),
    Variable("COEXIST_STORE_STRICT", "flag", "0",
             "1: a fluid-model run the committed store lacks is an error (CI's book build)"),
    Variable("COEXIST_PAGE", "text", "unset",
             "the book page being executed, set by the book's Sphinx extension for its "
             "kernels"),
    Variable("COEXIST_SCHEDULER", "text", "unset: this machine's threads",
             "a Dask scheduler address that fluid-model sweeps run on"),
    Variable("COEXIST_MODEL_RUNS", "directory", "data/model-runs",
             "the committed store of fluid-model runs"),
    Variable("COEXIST_BUNDLED_ONLY", "flag", "0",
             "1: read the bundled data only, never fetch external data"),
    Variable("COEXIST_BOOK_TABLES", "directory", "unset: outside a book build",
             "where a running book build keeps the figure tables its notebooks write"),
    Variable("COEXIST_CACHE", "directory", "~/.cache/coexist",
             "where fetched external data (FABRIC's) is cached"),
    Variable("COEXIST_RUN_DIR", "directory", "/run/coexist",
             "where live testbed runs register their namespaces"),
    Variable("XDG_CACHE_HOME", "directory", "~/.cache",
             "the user's cache directory: the compiled delay line, Numba's user-wide cache"),
    Variable("NUMBA_CACHE_DIR", "directory", "unset: beside the source",
             "Numba's cache directory (read to find the fluid kernels' cache files)"),
    Variable("CC", "text", "the first of cc, gcc and clang on the PATH",
             "the C compiler of the delay line"),
)}


def _declared(name: str, kind: str | None = None) -> Variable:
    """The declaration of ``name`` (as a variable of ``kind``, if given); an undeclared
    name or another kind is a programming error, not a user's."""
    var = VARIABLES.get(name)
    if var is None or kind not in (None, var.kind):
        raise KeyError(f"environment variable {name} is not declared"
                       + (f" as a {kind}" if kind else "") + " in coexist.core.settings.VARIABLES")
    return var


def _fail(name: str, value: str, valid: str, why: str = "") -> SettingError:
    extra = f" ({why})" if why else ""
    return SettingError(f"environment variable {name} = {value!r} is invalid{extra}; "
                        f"valid: {valid}")


def text(name: str, valid: str = "a value without surrounding spaces") -> str | None:
    """The variable's value, or None if it is unset or empty; surrounding whitespace and
    control characters are refused."""
    _declared(name, "text")
    return _raw(name, valid)


def is_set(name: str) -> bool:
    """Whether the declared variable ``name`` is set to anything but the empty string
    (before its value is parsed as its kind)."""
    _declared(name)
    return bool(os.environ.get(name, ""))


def _raw(name: str, valid: str) -> str | None:
    value = os.environ.get(name, "")
    if not value:
        return None
    if value != value.strip():
        raise _fail(name, value, valid, "surrounding spaces")
    if CONTROL.search(value):
        raise _fail(name, value, valid, "a control character")
    return value


def flag(name: str) -> bool:
    """True for ``1``, False for ``0`` or unset; anything else is refused."""
    _declared(name, "flag")
    value = _raw(name, "1 or 0")
    if value not in (None, "0", "1"):
        raise _fail(name, value, "1 or 0")
    return value == "1"


def directory(name: str, *, off: bool = False) -> Path | None:
    """The directory the variable names (it need not exist yet), None if unset; with
    ``off``, the word ``off`` also gives None (the feature disabled). A path that exists and
    is not a directory is refused."""
    _declared(name, "directory")
    valid = "a directory (or a path to create)" + (", or 'off'" if off else "")
    value = _raw(name, valid)
    if value is None or (off and value.lower() == "off"):
        return None
    where = Path(value)
    if where.exists() and not where.is_dir():
        raise _fail(name, value, valid, "not a directory")
    if not where.exists():
        _creatable(name, value, valid, where)
    return where


def _creatable(name: str, value: str, valid: str, where: Path) -> None:
    """Refuse a directory variable naming a path that cannot be made: its nearest existing
    parent is not a directory, or a directory cannot be created in it (``/proc``, a
    read-only file system). Tried by creating and removing a scratch directory there,
    since permission bits do not tell (root may write anywhere the file system allows)."""
    parent = where.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise _fail(name, value, valid, f"{parent} is not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".coexist-probe-", dir=parent))
    except OSError as exc:
        raise _fail(name, value, valid,
                    f"no directory can be created in {parent}: {exc.strerror}") from None


def file(name: str) -> Path | None:
    """The file the variable names (it need not exist yet), None if unset; a directory is
    refused, and so is a path whose parent is not a directory."""
    _declared(name, "file")
    valid = "a file path (the file may not exist yet) in an existing directory"
    value = _raw(name, valid)
    if value is None:
        return None
    where = Path(value)
    if where.is_dir() or (where.exists() and not where.is_file()):
        raise _fail(name, value, valid, "not a regular file")
    if not where.parent.is_dir():
        raise _fail(name, value, valid, "its directory does not exist")
    return where


def user_cache_dir() -> Path:
    """The user's cache directory: ``$XDG_CACHE_HOME``, else ``~/.cache``."""
    return directory("XDG_CACHE_HOME") or Path.home() / ".cache"


def export(name: str, value: str | None) -> None:
    """Set the declared variable ``name`` for this process and the children it starts
    (None removes it)."""
    _declared(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` (declared variables) set in ``os.environ`` within the block (the kernels
    inherit them), the previous values restored after it."""
    for name in values:
        _declared(name)
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
