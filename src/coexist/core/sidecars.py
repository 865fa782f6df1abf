"""Reading the project's small files safely: text, and JSON checked against a schema.

Every sidecar the project reads (a run's ``summary.json``, a FABRIC slice's
``setting.json``, the ``datapackage.json``, a book build's ``build.json``, a campaign's
YAML) is opened by :func:`read_text`, which refuses what is not a regular file (a FIFO
would block the reader forever, a directory or device is no file of ours), what is too
large to be one, and bytes that are not UTF-8 text, each in one line naming the file. A
JSON sidecar is then checked by :func:`read_json` against a :class:`Key` tree, so a
missing or mistyped field is refused in one line naming the file and the field's path
(``params.capacity_bps``) instead of surfacing later as a ``KeyError`` or a ``TypeError``.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class DataError(ValueError):
    """A data file is unreadable, does not match its schema, or its hash does not match the
    datapackage."""


#: the largest sidecar read (the datapackage, the largest, is a few MB)
MAX_BYTES = 64 * 2**20
#: a control character: no text a reader of ours means holds one (table cells, paths,
#: environment variables)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def read_bytes(path: Path, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``; anything else (missing, a directory, a FIFO,
    a socket, a device, larger than :data:`MAX_BYTES`) raises :class:`DataError` naming
    the file and what was expected. The file is opened without blocking, so a FIFO put in
    its place cannot hang the reader."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise DataError(f"{path}: no such file (expected a {what})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot open the {what} ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else \
                "a FIFO" if stat.S_ISFIFO(info.st_mode) else "not a regular file"
            raise DataError(f"{path}: {kind}, not a {what} (a regular file)")
        if info.st_size > MAX_BYTES:
            raise DataError(f"{path}: {info.st_size} bytes, more than a {what} can be "
                            f"({MAX_BYTES} bytes at most)")
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            return fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise DataError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    finally:
        if fd >= 0:
            os.close(fd)


def decode(raw: bytes, path: Path, what: str = "file") -> str:
    """``raw`` as UTF-8 text without NUL bytes, or :class:`DataError` naming the file and
    the offset of the first byte that is not text."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text at byte {exc.start} "
                        f"({raw[exc.start:exc.start + 1]!r}); a {what} is text") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise DataError(f"{path}: a NUL byte at character {nul}; a {what} is text")
    return text


def read_text(path: Path, what: str = "file") -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_bytes`, :func:`decode`)."""
    return decode(read_bytes(path, what), Path(path), what)


@dataclass(frozen=True)
class Key:
    """What one JSON value must be: its types, and for numbers a closed range, for texts a
    vocabulary, for objects their fields (others are allowed: the records grew), for lists
    and for objects used as maps the rule of every element."""

    kinds: tuple[type, ...]
    required: bool = True
    nullable: bool = False
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    fields: dict[str, Key] | None = None
    each: Key | None = None
    """every element of a list, or every value of an object used as a map"""
    nonempty: bool = False
    test: Callable[[Any], str | None] | None = None
    """a last check: None if the value is good, else what it must be"""

    def describe(self) -> str:
        names = {str: "a text", int: "an integer", float: "a number", bool: "true or false",
                 dict: "an object", list: "a list"}
        kinds = self.kinds
        if float in kinds and int in kinds:
            kinds = tuple(k for k in kinds if k is not int)
        text = " or ".join(names[k] for k in kinds)
        if self.low is not None or self.high is not None:
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            text += f" in [{lo}, {hi}]"
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        if self.nonempty:
            text = "a non-empty " + text.split(" ", 1)[1]
        return text + (" or null" if self.nullable else "")


def number(low: float | None = None, high: float | None = None, **kw: Any) -> Key:
    """A finite JSON number (not a boolean) in [low, high]."""
    return Key((int, float), low=low, high=high, **kw)


def positive(**kw: Any) -> Key:
    """A finite JSON number above 0."""
    return number(low=0.0, test=lambda v: None if v > 0 else "must be above 0", **kw)


def integer(low: float | None = None, high: float | None = None, **kw: Any) -> Key:
    """A JSON integer (not a boolean, not 1.5) in [low, high]."""
    return Key((int,), low=low, high=high, **kw)


def text(choices: tuple[str, ...] | None = None, **kw: Any) -> Key:
    """A JSON string, optionally one of ``choices``."""
    return Key((str,), choices=choices, **kw)


def obj(fields: dict[str, Key] | None = None, **kw: Any) -> Key:
    """A JSON object with (at least) ``fields``."""
    return Key((dict,), fields=fields, **kw)


def listing(each: Key | None = None, **kw: Any) -> Key:
    """A JSON list, each element matching ``each``."""
    return Key((list,), each=each, **kw)


def _shown(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def check(value: Any, key: Key, path: Path, where: str) -> Any:
    """``value`` if it matches ``key``, else :class:`DataError` naming the file and the
    field's path ``where``."""
    def fail(why: str = "") -> DataError:
        return DataError(f"{path}: field {where!r} = {_shown(value)} is not "
                         f"{key.describe()}{f' ({why})' if why else ''}")

    if value is None:
        if key.nullable:
            return value
        raise fail()
    if isinstance(value, bool) and bool not in key.kinds:
        raise fail()
    if not isinstance(value, key.kinds):
        raise fail()
    if isinstance(value, float) and not math.isfinite(value):
        raise fail("not finite")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if (key.low is not None and value < key.low) or (key.high is not None
                                                         and value > key.high):
            raise fail()
    if key.choices is not None and value not in key.choices:
        raise fail()
    if key.nonempty and not value:
        raise fail()
    if isinstance(value, dict):
        for name, sub in (key.fields or {}).items():
            if name not in value:
                if sub.required:
                    raise DataError(f"{path}: field {_join(where, name)!r} is missing; it is "
                                    f"{sub.describe()}")
                continue
            check(value[name], sub, path, _join(where, name))
        if key.each is not None:
            for name, sub_value in value.items():
                check(sub_value, key.each, path, _join(where, str(name)))
    if isinstance(value, list) and key.each is not None:
        for i, item in enumerate(value):
            check(item, key.each, path, f"{where}[{i}]")
    if key.test is not None:
        why = key.test(value)
        if why:
            raise fail(why)
    return value


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: Python's json reads them


def parse_json(text_: str, path: Path, what: str) -> Any:
    """The JSON document ``text_`` (from ``path``), without NaN or Infinity (which are not
    JSON), or a one-line :class:`DataError` naming the file, line and column."""
    try:
        return json.loads(text_, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}:{exc.colno}: not a JSON {what} "
                        f"({exc.msg})") from None
    except ValueError as exc:  # from _constant
        raise DataError(f"{path}: not a JSON {what} ({exc})") from None
    except RecursionError:
        raise DataError(f"{path}: not a JSON {what} (nested too deeply)") from None


def read_json(path: Path, schema: Key, what: str) -> Any:
    """The JSON sidecar ``path`` checked against ``schema`` (its top level); every failure is
    one line naming the file and, for a field, its path."""
    doc = parse_json(read_text(path, what), Path(path), what)
    if not isinstance(doc, schema.kinds):
        raise DataError(f"{path}: a {what} is {schema.describe()}, not "
                        f"{type(doc).__name__ if doc is not None else 'null'}")
    return check(doc, schema, Path(path), "")
