"""Storing a run: its summary as JSON and its tables (in the schemas of :mod:`coexist.data`)
written into a run directory, atomically."""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from .results import RunResult


def _json_default(o: object) -> object:
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if math.isnan(o) else float(o)
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def summary_json(result: RunResult) -> str:
    return json.dumps(result.summary, indent=2, default=_json_default, allow_nan=False)


def write(result: RunResult, out_dir: Path, name: str | None = None,
          tables: bool = True) -> Path:
    """Store the run as ``out_dir/name/`` (summary.json + one table file each), atomically.

    Files are written into a hidden sibling directory that is renamed into place, so a
    crash leaves either the complete run or nothing under ``name``. Tables follow the
    schemas of :mod:`coexist.data`; time series are gzip-compressed. Without ``tables`` only
    ``summary.json`` is stored (its gate values, steal and provenance are the whole record).
    """
    from .. import data

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / (name or result.summary["run_id"])
    if dest.exists():
        raise FileExistsError(f"run directory {dest} exists; refusing to overwrite")
    tmp = out_dir / f".{dest.name}.partial-{secrets.token_hex(3)}"
    tmp.mkdir()
    try:
        for table, fname in data.RUN_FILES.items() if tables else ():
            df = getattr(result, table)
            if df.empty and not len(df.columns):
                df = pd.DataFrame(columns=[f.name for f in data.SCHEMAS[table]])
            data.write_table(df, tmp / fname, table)
        (tmp / "summary.json").write_text(summary_json(result) + "\n")
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    result.path = dest
    return dest
