"""The environment variables the project reads, each parsed strictly in one place.

A value with surrounding spaces, a control character, a flag other than 0 or 1, or a
directory variable naming a regular file is refused in one line naming the variable, its
value and what it may be, instead of being taken as a relative directory called
``"  off "`` or a cache inside a file. An empty value counts as unset, as in the shell.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .params import ParameterError
from .sidecars import CONTROL


class SettingError(ParameterError):
    """An environment variable holds a value the project cannot use."""


def _fail(name: str, value: str, valid: str, why: str = "") -> SettingError:
    extra = f" ({why})" if why else ""
    return SettingError(f"environment variable {name} = {value!r} is invalid{extra}; "
                        f"valid: {valid}")


def text(name: str, valid: str = "a value without surrounding spaces") -> str | None:
    """The variable's value, or None if it is unset or empty; surrounding whitespace and
    control characters are refused."""
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
    value = text(name, "1 or 0")
    if value not in (None, "0", "1"):
        raise _fail(name, value, "1 or 0")
    return value == "1"


def directory(name: str, *, off: bool = False) -> Path | None:
    """The directory the variable names (it need not exist yet), None if unset; with
    ``off``, the word ``off`` also gives None (the feature disabled). A path that exists and
    is not a directory is refused."""
    valid = "a directory (or a path to create)" + (", or 'off'" if off else "")
    value = text(name, valid)
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
    valid = "a file path (the file may not exist yet) in an existing directory"
    value = text(name, valid)
    if value is None:
        return None
    where = Path(value)
    if where.is_dir() or (where.exists() and not where.is_file()):
        raise _fail(name, value, valid, "not a regular file")
    if not where.parent.is_dir():
        raise _fail(name, value, valid, "its directory does not exist")
    return where


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` set in ``os.environ`` within the block (the kernels inherit them), the
    previous values restored after it."""
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
