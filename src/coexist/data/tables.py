"""Reading and writing the bundled tables: a CSV file (optionally gzip-compressed) checked
against its schema (:mod:`.schemas`) on the way in, failing with the file, line, column and
value, and written with exactly the schema's columns, atomically, on the way out."""

from __future__ import annotations

import csv
import gzip
import io
import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import files, sidecars
from ..core.sidecars import DataError
from .reads import _note_path
from .schemas import SCHEMAS, Field, schema_fields


def _open_text(path: Path):
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


#: integers from this magnitude on do not fit a table's int64 columns: refused
_INT_LIMIT = 2.0 ** 63


def _convert(field: Field, text: str, where: str):
    if text == "":
        if field.nullable:
            return None
        raise DataError(f"{where}: column {field.name!r} is empty but required")
    try:
        if field.type == "integer":
            value = float(text)
            if not value.is_integer():
                raise ValueError
            if abs(value) >= _INT_LIMIT:
                raise DataError(f"{where}: column {field.name!r} = {text!r} is beyond the "
                                f"integers a table holds (|value| < 2**63)")
            value = int(value)
        elif field.type == "number":
            value = float(text)
            if not math.isfinite(value):
                raise ValueError
        elif field.type == "boolean":
            if text not in ("True", "False", "true", "false"):
                raise ValueError
            return text.lower() == "true"
        else:
            if sidecars.CONTROL.search(text):
                raise DataError(f"{where}: column {field.name!r} = {text!r} holds a control "
                                "character")
            if field.choices is not None and text not in field.choices:
                raise DataError(f"{where}: column {field.name!r} = {text!r} is not one of "
                                f"{', '.join(field.choices)}")
            return text
    except ValueError:
        raise DataError(f"{where}: column {field.name!r} = {text!r} is not a finite "
                        f"{field.type}") from None
    if field.minimum is not None and value < field.minimum:
        raise DataError(f"{where}: column {field.name!r} = {text!r} is below its minimum "
                        f"{field.minimum:g}")
    if field.maximum is not None and value > field.maximum:
        raise DataError(f"{where}: column {field.name!r} = {text!r} is above its maximum "
                        f"{field.maximum:g}")
    return value


def load_table(path: Path, schema: str) -> pd.DataFrame:
    """Read a CSV (optionally .gz) and check every row against ``SCHEMAS[schema]``; a row
    repeated exactly (which every sum would count twice) is refused.

    The checks run a column at a time (:func:`_columns`), in about a third of the time of
    a cell at a time; a table they do not pass, or one they do not cover, is read again
    line by line (:func:`_rows`), which gives the same table or the first offending line.
    """
    fields = schema_fields(schema)
    _note_path(path, schema)
    raw = sidecars.read_bytes(path, "table")  # a regular file: a FIFO would block the reader
    try:
        text = (gzip.decompress(raw) if Path(path).suffix == ".gz" else raw).decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except (OSError, EOFError, UnicodeDecodeError, csv.Error, zlib.error):
        rows = None  # the line-by-line reading says what is wrong, and where
    else:
        if text and not text.endswith("\n"):  # every table is written line by line
            raise DataError(f"{path}: the last line has no line end: the file was cut short")
    table = _columns(rows, fields) if rows else None
    return _rows(path, schema) if table is None else table


def _columns(rows: list[list[str]], fields: list[Field]) -> pd.DataFrame | None:
    """The table :func:`_rows` reads from ``rows`` (a header, then the data), checked a column
    at a time; None if any check fails or the table is not of a kind handled here (no rows,
    an empty boolean), so that :func:`_rows` answers instead."""
    names = [f.name for f in fields]
    header, body = rows[0], rows[1:]
    if header != names or not body or set(map(len, body)) != {len(names)}:
        return None
    if len(set(map(tuple, body))) != len(body):  # a repeated row
        return None
    columns: dict[str, object] = {}
    for f, cells in zip(fields, zip(*body, strict=True), strict=True):
        empty = [i for i, v in enumerate(cells) if v == ""] if "" in cells else []
        if empty and (not f.nullable or f.type == "boolean"):
            return None
        if len(empty) == len(cells):  # as the rows give it: a column of None
            columns[f.name] = [None] * len(cells)
            continue
        if f.type == "string":
            present_text = {v for v in cells if v}
            if f.choices is not None and not present_text <= set(f.choices):
                return None
            if f.choices is None and sidecars.CONTROL.search("".join(present_text)):
                return None
            columns[f.name] = [None if v == "" else v for v in cells] if empty else list(cells)
            continue
        if f.type == "boolean":
            if not set(cells) <= {"True", "False", "true", "false"}:
                return None
            columns[f.name] = np.array([v.lower() == "true" for v in cells], dtype=bool)
            continue
        present_cells = [v for v in cells if v] if empty else cells
        try:
            present = np.fromiter(map(float, present_cells), dtype=np.float64,
                                  count=len(present_cells))
        except ValueError:
            return None
        if empty:
            values = np.full(len(cells), np.nan)
            filled = np.ones(len(cells), dtype=bool)
            filled[empty] = False
            values[filled] = present
        else:
            values = present
        if not np.isfinite(present).all():
            return None
        if f.minimum is not None and (present < f.minimum).any():
            return None
        if f.maximum is not None and (present > f.maximum).any():
            return None
        if f.type == "integer":
            if (np.floor(present) != present).any() or (np.abs(present) >= _INT_LIMIT).any():
                return None
            if not empty:
                values = values.astype(np.int64)
        columns[f.name] = values
    return pd.DataFrame(columns, columns=names)


def _rows(path: Path, schema: str) -> pd.DataFrame:
    """:func:`load_table` a line at a time: the first line that breaks the schema raises
    :class:`DataError` naming the file, the line, the column and the value."""
    fields = SCHEMAS[schema]
    names = [f.name for f in fields]
    rows = []
    seen: dict[tuple[str, ...], int] = {}
    try:
        with _open_text(Path(path)) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header != names:
                raise DataError(f"{path}:1: header {header} does not match the {schema!r} schema "
                                f"{names}")
            for line, row in enumerate(reader, start=2):
                where = f"{path}:{line}"
                if len(row) != len(fields):
                    raise DataError(f"{where}: {len(row)} fields, expected {len(fields)} "
                                    f"({', '.join(names)})")
                if tuple(row) in seen:  # a repeated line would count twice in every sum
                    raise DataError(f"{where}: the same row as line {seen[tuple(row)]}")
                seen[tuple(row)] = line
                rows.append([_convert(f, v, where) for f, v in zip(fields, row, strict=True)])
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:  # gzip's errors too
        raise DataError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    df = pd.DataFrame(rows, columns=names)
    for f in fields:
        if f.type == "integer" and not f.nullable:
            df[f.name] = df[f.name].astype("int64")
    return df


def write_table(df: pd.DataFrame, path: Path, schema: str) -> None:
    """Write ``df`` with exactly the schema's columns, atomically (:mod:`coexist.core.files`)."""
    names = [f.name for f in schema_fields(schema)]
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise DataError(f"table for {path} lacks columns {missing}")
    path = Path(path)
    text = df[names].to_csv(index=False, float_format="%.9g", lineterminator="\n")
    if path.suffix == ".gz":
        # no file name and mtime 0 in the gzip header: same table, same bytes, same hash
        buf = io.BytesIO()
        with gzip.GzipFile("", "wb", fileobj=buf, mtime=0) as fh:
            fh.write(text.encode())
        files.atomic_write(path, buf.getvalue())
    else:
        files.atomic_write(path, text)
