"""A data-only encoding of the fluid model's stored results: canonical JSON, never pickle.

A stored run is read by the book on every build, so loading it must not be able to execute
anything. The results are summaries made of a few kinds of values (floats, integers,
booleans, text, lists, tuples, dicts with text keys, NumPy arrays and scalars, and pandas
tables with a plain index); each is written as JSON, with a tag where JSON alone would lose
the type; dicts keep their order. Floats are written by ``repr`` (which round-trips every
double exactly; NaN and infinities by their eight bytes, payload and sign included) and
arrays as their raw little-endian bytes, so :func:`decode` gives back the same bits and types, and
two results are bit-identical exactly when their :func:`dumps` texts are equal: that is how
a recomputed run is compared with its stored one (:mod:`.store`). A value of any other kind
is refused when it is written, naming the kind, never stored approximately.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from typing import Any

import numpy as np
import pandas as pd

#: the tag keys; a dict that is not a tagged value never has a key starting with "$"
_FLOAT, _TUPLE, _ARRAY, _SCALAR, _FRAME, _DICT = "$f", "$t", "$a", "$s", "$df", "$d"
_ARRAY_KINDS = "fiub"  # float, signed and unsigned integer, boolean dtypes


class CodecError(TypeError):
    """A value the stored-run format cannot hold exactly."""


def encode(value: Any) -> Any:
    """``value`` as plain JSON data (see the module docstring)."""
    # exact types: a subclass (np.str_, an OrderedDict) would come back as its base class
    kind = type(value)
    if value is None or kind in (bool, str, int):
        return value
    if isinstance(value, np.generic):
        return _scalar(value)
    if kind is float:
        return value if math.isfinite(value) else {_FLOAT: struct.pack(">d", value).hex()}
    if kind is tuple:
        return {_TUPLE: [encode(v) for v in value]}
    if kind is list:
        return [encode(v) for v in value]
    if kind is dict:
        if not all(isinstance(k, str) for k in value):
            raise CodecError(f"a dict with keys other than text ({sorted(map(repr, value))[:3]})")
        out = {k: encode(v) for k, v in value.items()}
        return {_DICT: out} if any(k.startswith("$") for k in value) else out
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, pd.DataFrame):
        return _frame(value)
    raise CodecError(f"a value of type {type(value).__module__}.{type(value).__qualname__}")


def decode(data: Any) -> Any:
    """The value :func:`encode` wrote as ``data``."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) == 1:
        (tag, body), = data.items()
        if tag == _FLOAT:
            return struct.unpack(">d", bytes.fromhex(body))[0]
        if tag == _TUPLE:
            return tuple(decode(v) for v in body)
        if tag == _DICT:
            return {k: decode(v) for k, v in body.items()}
        if tag == _ARRAY:
            return _unarray(body)
        if tag == _SCALAR:
            return np.dtype(body["dtype"]).type(_unarray(body["value"]).reshape(()))
        if tag == _FRAME:
            return _unframe(body)
    if any(k.startswith("$") for k in data):
        raise CodecError(f"an unknown tag among {sorted(data)[:3]}")
    return {k: decode(v) for k, v in data.items()}


def dumps(value: Any) -> str:
    """The canonical text of ``value``: equal texts mean bit-identical values. Dicts keep
    their order (a table built from them has its columns in that order), so two dicts with
    the same items in another order are different values here, as they are to a reader."""
    return json.dumps(encode(value), separators=(",", ":"), allow_nan=False)


def loads(text: str) -> Any:
    """The value of a :func:`dumps` text."""
    return decode(json.loads(text))


def _scalar(value: np.generic) -> dict:
    return {_SCALAR: {"dtype": value.dtype.str, "value": _array(np.asarray(value))[_ARRAY]}}


def _array(a: np.ndarray) -> dict:
    if a.dtype.kind not in _ARRAY_KINDS:
        raise CodecError(f"an array of dtype {a.dtype} (only numbers and booleans are stored)")
    le = a.astype(a.dtype.newbyteorder("<"), copy=False)
    return {_ARRAY: {"dtype": le.dtype.str, "shape": list(a.shape),
                     "bytes": base64.b64encode(np.ascontiguousarray(le).tobytes()).decode()}}


def _unarray(body: dict) -> np.ndarray:
    dtype = np.dtype(body["dtype"])
    if dtype.kind not in _ARRAY_KINDS:
        raise CodecError(f"an array of dtype {dtype}")
    raw = base64.b64decode(body["bytes"], validate=True)
    a = np.frombuffer(raw, dtype=dtype).reshape(body["shape"])
    return a.astype(dtype.newbyteorder("="), copy=True)


def _column(s: pd.Series) -> dict:
    if isinstance(s.dtype, pd.StringDtype):  # pandas' text columns (its default for text)
        na = s.dtype.na_value
        if not (na is pd.NA or (isinstance(na, float) and math.isnan(na))):
            raise CodecError(f"a text column {s.name!r} with missing value {na!r}")
        # the storage (Python objects or Arrow) is the installation's, not the result's: it
        # is left out, so a result's text is the same with pyarrow installed or not
        return {"dtype": "string", "na": "NA" if na is pd.NA else "nan",
                "values": [None if v is na or (isinstance(v, float) and math.isnan(v))
                           else str(v) for v in s.tolist()]}
    if s.dtype == object:
        return {"dtype": "object", "values": [encode(v) for v in s.tolist()]}
    if s.dtype.kind not in _ARRAY_KINDS or isinstance(s.dtype, pd.api.extensions.ExtensionDtype):
        raise CodecError(f"a table column {s.name!r} of dtype {s.dtype}")
    return {"dtype": "array", "values": _array(s.to_numpy())}


def _frame(df: pd.DataFrame) -> dict:
    names = list(df.columns)
    if not all(isinstance(c, str) for c in names) or len(set(names)) != len(names):
        raise CodecError(f"a table whose columns are not distinct text names ({names[:4]})")
    if df.columns.name is not None or df.attrs:
        raise CodecError("a table with a named column index or attrs")
    idx = df.index
    if not (isinstance(idx, pd.RangeIndex) and idx.name is None):
        raise CodecError(f"a table with an index other than a plain range ({type(idx).__name__})")
    return {_FRAME: {"columns": names, "index": [idx.start, idx.stop, idx.step],
                     "data": [_column(df[c]) for c in names]}}


def _unframe(body: dict) -> pd.DataFrame:
    index = pd.RangeIndex(*body["index"])
    cols = {}
    for name, col in zip(body["columns"], body["data"], strict=True):
        if col["dtype"] == "string":
            dtype = pd.StringDtype(na_value=pd.NA if col["na"] == "NA" else np.nan)
            cols[name] = pd.Series(pd.array(col["values"], dtype=dtype), index=index)
        elif col["dtype"] == "object":
            vals = np.empty(len(col["values"]), dtype=object)
            vals[:] = [decode(v) for v in col["values"]]
            cols[name] = pd.Series(vals, dtype=object, index=index)  # None stays None
        else:
            cols[name] = pd.Series(_unarray(col["values"][_ARRAY]), index=index)
    return pd.DataFrame(cols, index=index, columns=body["columns"])
