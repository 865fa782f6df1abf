"""The bundled experiment data: table schemas, validated loading, and the datapackage.

Layout under ``data/``::

    campaigns/<name>.yaml            what to run (grid, durations, repeats)
    runs/<name>/<key>/               one valid run: summary.json, flows.csv and time series
    runs/<name>/_invalid/<key>.<id>/ runs that failed a validity gate (counted, never used;
                                     summary.json only where the run was stopped early
                                     and failed timing gates alone)
    <name>.csv                       campaign table: one row per flow per valid run
    datapackage.json                 schemas, units, sha256 of every file, provenance

Loaders check every row against the schema and fail with file and line; nothing is
dropped silently.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import os
import secrets
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .paths import DATA, ROOT  # noqa: F401 (ROOT re-exported)
from .testbed.gates import disturbed, timing_only
from .testbed.steal import steal_burst_s, steal_pct, steal_peak_pct  # noqa: F401 (re-exported)
from .testbed.wakeups import stall_pct_max


class DataError(ValueError):
    """A data file does not match its schema, or its hash does not match the datapackage."""


#: the fields every stored run's summary.json has, with their JSON types (the rest of the
#: record is optional: it grew as the harness did)
SUMMARY_FIELDS: dict[str, tuple[type, ...]] = {
    "run_id": (str,), "params": (dict,), "flows": (list,), "gates": (list,),
    "valid": (bool,), "invalid_reasons": (list,), "provenance": (dict,),
    "wall_s": (int, float),
}


def read_summary(path: Path) -> dict:
    """A run's ``summary.json``, checked: readable JSON, every field of
    :data:`SUMMARY_FIELDS` present with its type (``"valid": "false"`` is not a boolean),
    and every gate a mapping with a text ``name`` and a boolean ``passed``. Anything else
    raises :class:`DataError` naming the file and the field."""
    path = Path(path)
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON summary ({exc})") from None
    if not isinstance(summary, dict):
        raise DataError(f"{path}: a summary is a JSON object, not {type(summary).__name__}")
    for name, kinds in SUMMARY_FIELDS.items():
        value = summary.get(name)
        if name not in summary or not isinstance(value, kinds) or (
                isinstance(value, bool) and bool not in kinds):
            raise DataError(f"{path}: field {name!r} = {value!r} is not "
                            f"{' or '.join(k.__name__ for k in kinds)}")
    for i, gate in enumerate(summary["gates"]):
        if not (isinstance(gate, dict) and isinstance(gate.get("name"), str)
                and isinstance(gate.get("passed"), bool)):
            raise DataError(f"{path}: gates[{i}] = {gate!r} needs a text 'name' and a boolean "
                            "'passed'")
    if summary["valid"] and not all(g["passed"] for g in summary["gates"]):
        raise DataError(f"{path}: 'valid' is true but a gate failed")
    return summary


@dataclass(frozen=True)
class Field:
    name: str
    type: str          # "integer", "number", "string", "boolean"
    unit: str = ""
    description: str = ""
    nullable: bool = False
    minimum: float | None = None


def _f(name, type_, unit="", description="", nullable=False, minimum=None) -> Field:
    return Field(name, type_, unit, description, nullable, minimum)


RUN_COLUMNS = [
    _f("campaign", "string", description="campaign name"),
    _f("key", "string", description="run key: parameters and repeat"),
    _f("run_id", "string", description="random id of the run; with campaign it names one run "
       "(early runs have 6 hex digits, and two campaigns share one of those)"),
    _f("repeat", "integer", minimum=0),
    _f("capacity_bps", "number", "bit/s", "bottleneck rate", minimum=0),
    _f("rtt_s", "number", "s", "reference base RTT (BDP and default flow RTT)", minimum=0),
    _f("buffer_bdp", "number", "BDP", "bottleneck buffer in multiples of C x RTT", minimum=0),
    _f("buffer_bytes", "integer", "byte", minimum=0),
    _f("flows_spec", "string", description="flow mix, CCA:COUNT[@RTT],..."),
    _f("load", "string", description="deliberate background load during the run "
       "(none, cpu, book, experiment)"),
    _f("n_flows", "integer", minimum=1),
    _f("n_bbr", "integer", minimum=0),
    _f("duration_s", "number", "s", minimum=0),
    _f("warmup_s", "number", "s", minimum=0),
    _f("utilisation", "number", "1", "bottleneck link utilisation after warm-up", minimum=0),
    _f("jain_index", "number", "1", "Jain fairness of per-flow goodput", minimum=0),
    _f("bbr_share", "number", "1", "BBR flows' share of total goodput", nullable=True,
       minimum=0),
    _f("mean_queue_delay_s", "number", "s", "mean bottleneck queueing delay", minimum=0),
    _f("bottleneck_drops", "integer", "packet", minimum=0),
]
FLOW_COLUMNS = [
    _f("flow", "integer", description="flow index in the run", minimum=0),
    _f("cca", "string", description="congestion control (cubic, bbr, reno)"),
    _f("flow_rtt_s", "number", "s", "this flow's base RTT", minimum=0),
    _f("goodput_bps", "number", "bit/s", "receiver goodput after warm-up", minimum=0),
    _f("share", "number", "1", "share of the run's total goodput", minimum=0),
    _f("retransmits", "integer", "packet", minimum=0),
]
SCHEMAS: dict[str, list[Field]] = {
    "campaign": RUN_COLUMNS + FLOW_COLUMNS,
    "flows": [
        _f("flow", "integer", minimum=0), _f("cca", "string"),
        _f("rtt_s", "number", "s", minimum=0), _f("group", "integer", minimum=0),
        _f("start_offset_s", "number", "s", "client start after the first client", minimum=0),
        _f("goodput_bps", "number", "bit/s", minimum=0),
        _f("bytes_received", "integer", "byte", minimum=0),
        _f("retransmits", "integer", "packet", minimum=0),
        _f("iperf3_congestion", "string"), _f("share", "number", "1", minimum=0),
    ],
    "series": [
        _f("flow", "integer", minimum=0), _f("cca", "string"),
        _f("rtt_s", "number", "s", minimum=0),
        _f("t_start_s", "number", "s", "interval start on the run clock", minimum=0),
        _f("t_end_s", "number", "s", minimum=0), _f("bytes", "integer", "byte", minimum=0),
        _f("goodput_bps", "number", "bit/s", "receiver goodput in the interval", minimum=0),
    ],
    "sockets": [
        _f("t_s", "number", "s", "sample time on the run clock", minimum=0),
        _f("flow", "integer", minimum=0), _f("cca_requested", "string"),
        _f("local_port", "integer", minimum=0), _f("cca", "string", nullable=True),
        _f("cwnd", "integer", "packet", nullable=True, minimum=0),
        _f("srtt_s", "number", "s", nullable=True, minimum=0),
        _f("minrtt_s", "number", "s", nullable=True, minimum=0),
        _f("bytes_acked", "integer", "byte", nullable=True, minimum=0),
        _f("bytes_retrans", "integer", "byte", minimum=0),
        _f("delivery_rate_bps", "number", "bit/s", nullable=True, minimum=0),
        _f("pacing_rate_bps", "number", "bit/s", nullable=True, minimum=0),
        _f("bbr_bw_bps", "number", "bit/s", "BBR's max-filtered bandwidth", nullable=True),
        _f("bbr_mrtt_s", "number", "s", "BBR's min RTT estimate", nullable=True),
        _f("pacing_gain", "number", "1", nullable=True),
        _f("cwnd_gain", "number", "1", nullable=True),
        _f("acked_rate_bps", "number", "bit/s", "bytes_acked difference over the sample step",
           nullable=True),
    ],
    "queue": [
        _f("t_s", "number", "s", minimum=0), _f("kind", "string"),
        _f("sent_bytes", "integer", "byte", minimum=0),
        _f("sent_packets", "integer", "packet", minimum=0),
        _f("drops", "integer", "packet", minimum=0),
        _f("backlog_bytes", "integer", "byte", minimum=0),
        _f("backlog_packets", "integer", "packet", minimum=0),
    ],
    "probe": [
        _f("t_s", "number", "s", "reply time on the run clock"), _f("group", "integer", minimum=0),
        _f("rtt_configured_s", "number", "s", minimum=0), _f("seq", "integer", minimum=0),
        _f("rtt_s", "number", "s", "probe round trip through the delay path", minimum=0),
    ],
}
#: file name of each per-run table (time series compressed: they are most of the bytes)
RUN_FILES = {"flows": "flows.csv", "series": "series.csv.gz", "sockets": "sockets.csv.gz",
             "queue": "queue.csv.gz", "probe": "probe.csv.gz"}


def _open_text(path: Path):
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


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
            return text
    except ValueError:
        raise DataError(f"{where}: column {field.name!r} = {text!r} is not a finite "
                        f"{field.type}") from None
    if field.minimum is not None and value < field.minimum:
        raise DataError(f"{where}: column {field.name!r} = {text!r} is below its minimum "
                        f"{field.minimum:g}")
    return value


#: the campaigns whose data this process has read (``*``: every stored run); a figure
#: checks them against the campaigns its ledger entry declares (:func:`coexist.figures.save`)
CAMPAIGNS_READ: set[str] = set()


def note_read(campaign: str) -> None:
    """Record that this process read data of ``campaign`` (``*``: of every campaign)."""
    CAMPAIGNS_READ.add(campaign)


def _note_path(path: Path, schema: str) -> None:
    try:
        parts = Path(path).resolve().relative_to(DATA.resolve()).parts
    except ValueError:
        return  # outside the bundled data
    if len(parts) > 2 and parts[0] == "runs":
        note_read(parts[1])
    elif len(parts) == 1 and schema == "campaign":
        note_read(Path(parts[0]).name.split(".")[0])


def load_table(path: Path, schema: str) -> pd.DataFrame:
    """Read a CSV (optionally .gz) and check every row against ``SCHEMAS[schema]``; a row
    repeated exactly (which every sum would count twice) is refused.

    The checks run a column at a time (:func:`_columns`), in about a third of the time of
    a cell at a time; a table they do not pass, or one they do not cover, is read again
    line by line (:func:`_rows`), which gives the same table or the first offending line.
    """
    _note_path(path, schema)
    fields = SCHEMAS[schema]
    try:
        raw = Path(path).read_bytes()
        text = (gzip.decompress(raw) if Path(path).suffix == ".gz" else raw).decode("utf-8")
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except (OSError, EOFError, UnicodeDecodeError, csv.Error):
        rows = None  # the line-by-line reading says what is wrong, and where
    table = _columns(rows, fields) if rows else None
    return _rows(path, schema) if table is None else table


#: integers from this magnitude on do not fit int64 (``_rows`` keeps them another way)
_INT_LIMIT = 2.0 ** 63


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
    """Write ``df`` with exactly the schema's columns, atomically (tmp file + rename)."""
    names = [f.name for f in SCHEMAS[schema]]
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise DataError(f"table for {path} lacks columns {missing}")
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(3)}")
    if path.suffix == ".gz":
        text = df[names].to_csv(index=False, float_format="%.9g", lineterminator="\n")
        # no file name and mtime 0 in the gzip header: same table, same bytes, same hash
        with open(tmp, "wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as fh:
            fh.write(text.encode())
    else:
        df[names].to_csv(tmp, index=False, float_format="%.9g", lineterminator="\n")
    os.replace(tmp, path)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _schema_json(schema: str) -> dict:
    return {"fields": [{k: v for k, v in (("name", f.name), ("type", f.type),
                                          ("unit", f.unit or None),
                                          ("description", f.description or None))
                        if v is not None} for f in SCHEMAS[schema]]}


def build_datapackage(data_dir: Path = DATA) -> dict:
    """Describe every data file: schema and units per table kind, sha256 per file,
    and per campaign the provenance of its runs (commits, kernel, CPU, tools, dates)."""
    data_dir = Path(data_dir)
    resources = []
    for spec_file in sorted((data_dir / "campaigns").glob("*.yaml")):
        name = spec_file.stem
        run_root = data_dir / "runs" / name
        runs = sorted(p for p in run_root.iterdir() if p.is_dir() and not
                      p.name.startswith((".", "_"))) if run_root.exists() else []
        invalid = sorted((run_root / "_invalid").iterdir()) \
            if (run_root / "_invalid").exists() else []
        summaries = [read_summary(r / "summary.json") for r in runs]
        provs = [s["provenance"] for s in summaries]
        provenance = {
            "produced_by": f"coexist campaign run data/campaigns/{spec_file.name}",
            "runs_valid": len(runs), "runs_invalid": len(invalid),
            "commits": sorted({p["commit"] for p in provs if p.get("commit")}),
            "kernels": sorted({p["kernel"] for p in provs}),
            "cpus": sorted({p["cpu"] for p in provs if p.get("cpu")}),
            "tools": sorted({json.dumps(p.get("tools"), sort_keys=True) for p in provs}),
            "first_run_utc": min((p["time_utc"] for p in provs), default=None),
            "last_run_utc": max((p["time_utc"] for p in provs), default=None),
        }
        files = [spec_file]
        table = data_dir / f"{name}.csv"
        resources.append({"name": f"{name}-spec", "path": _rel(spec_file, data_dir),
                          "format": "yaml", "sha256": sha256(spec_file),
                          "provenance": provenance})
        if table.exists():
            resources.append({"name": name, "path": _rel(table, data_dir), "format": "csv",
                              "schema": _schema_json("campaign"), "sha256": sha256(table)})
            files.append(table)
        summaries_paths = [r / "summary.json" for r in runs]
        if summaries_paths:
            resources.append({"name": f"{name}-summaries", "format": "json",
                              "path": [_rel(p, data_dir) for p in summaries_paths],
                              "sha256": {_rel(p, data_dir): sha256(p) for p in summaries_paths}})
        for kind, fname in RUN_FILES.items():
            paths = [r / fname for r in runs]
            if paths:
                resources.append({
                    "name": f"{name}-{kind}", "format": "csv",
                    "compression": "gz" if fname.endswith(".gz") else None,
                    "path": [_rel(p, data_dir) for p in paths], "schema": _schema_json(kind),
                    "sha256": {_rel(p, data_dir): sha256(p) for p in paths}})
    resources += (_reference_resources(data_dir) + _model_run_resources(data_dir)
                  + _external_resources(data_dir))
    return {"name": "coexist-measurements", "profile": "data-package",
            "description": "Real Linux CUBIC/BBR/Reno flows through an emulated drop-tail "
                           "dumbbell, measured by the coexist harness.",
            "licenses": [{"name": "CC-BY-4.0"}], "resources": resources}


def _reference_resources(data_dir: Path) -> list[dict]:
    """The outputs of the source papers' own code under ``reference/`` (made by
    ``benchmarks/authors_reference.py``), with the provenance that script recorded."""
    ref = data_dir / "reference"
    meta_path = ref / "authors_fluid.json"
    if not meta_path.exists():
        return _model_resources(ref, data_dir)
    meta = json.loads(meta_path.read_text())
    provenance = {"produced_by": meta["command"], "source": meta["source"],
                  "commit": meta["commit"], "paper": meta["paper"],
                  "entry_points": meta["entry_points"], "host": meta["host"],
                  "interpreters": sorted({r["python"] for r in meta["runs"]}),
                  "runs": len(meta["runs"]),
                  "first_run_utc": min(r["time_utc"] for r in meta["runs"]),
                  "last_run_utc": max(r["time_utc"] for r in meta["runs"])}
    traces = sorted((ref / "authors_fluid_traces").glob("*.csv.gz"))
    return [
        {"name": "authors-fluid-provenance", "path": _rel(meta_path, data_dir),
         "format": "json", "sha256": sha256(meta_path), "provenance": provenance},
        {"name": "authors-fluid-runs", "path": "reference/authors_fluid_runs.csv",
         "format": "csv", "description": "the authors' fluid model: one row per configuration",
         "sha256": sha256(ref / "authors_fluid_runs.csv")},
        {"name": "authors-fluid-flows", "path": "reference/authors_fluid_flows.csv",
         "format": "csv", "description": "the authors' fluid model: one row per flow",
         "sha256": sha256(ref / "authors_fluid_flows.csv")},
        {"name": "authors-fluid-traces", "format": "csv", "compression": "gz",
         "description": "queue (packets) and per-flow rates (Mbit/s), 10-ms means",
         "path": [_rel(p, data_dir) for p in traces],
         "sha256": {_rel(p, data_dir): sha256(p) for p in traces}},
    ] + _model_resources(ref, data_dir)


#: tables under ``reference/`` that this project made itself, each ``<name>.csv`` with how it
#: was made in ``<name>.json``: the model's outputs too costly to recompute at every build
#: (made by a script in ``benchmarks/``; a test re-runs some rows of each), and the first
#: edition's conclusions (quoted from that edition's files)
OWN_TABLES = {
    "fluid_run_length": "the fluid model's equilibrium-search runs read over 120 s and "
                        "240 s: per-flow goodput and its standard error per mix (csv), and "
                        "how they were made (json)",
    "fluid_step_equilibria": "the fluid model's equilibrium-search runs at half the "
                             "figures' step: per-flow goodput and its standard error per mix "
                             "(csv), and how they were made (json)",
    "first_edition": "the first edition's fluid-model conclusions, quoted from that "
                     "edition's files (csv), and how (json)",
}


def _model_resources(ref: Path, data_dir: Path) -> list[dict]:
    """:data:`OWN_TABLES` under ``reference/``, each with the provenance recorded beside it."""
    out = []
    for name, what in OWN_TABLES.items():
        meta_path = ref / f"{name}.json"
        if not meta_path.exists():
            continue
        files = [ref / f"{name}.csv", meta_path]
        out.append({"name": name.replace("_", "-"), "path": [_rel(f, data_dir) for f in files],
                    "format": "csv", "description": what,
                    "sha256": {_rel(f, data_dir): sha256(f) for f in files},
                    "provenance": json.loads(meta_path.read_text())})
    return out


def _model_run_resources(data_dir: Path) -> list[dict]:
    """The committed fluid-model runs under ``model-runs/`` (:mod:`coexist.fluid.store`):
    the index and every result object, with the provenance the index records."""
    root = data_dir / "model-runs"
    index = root / "index.jsonl"
    if not index.exists():
        return []
    entries = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    provs = [e["provenance"] for e in entries]
    files = ([index] + [p for p in [root / "README.md"] if p.exists()]
             + sorted((root / "objects").glob("*/*.json.gz")))
    kinds = Counter(e["kind"] for e in entries)
    return [{"name": "model-runs", "format": "json", "compression": "gz",
             "description": "the fluid model's runs the book reads: index.jsonl (one line per "
                            "run: key, kind, inputs, result object, pages, provenance) and "
                            "objects/ (each result as canonical JSON, named by its sha256); "
                            "see model-runs/README.md",
             "path": [_rel(p, data_dir) for p in files],
             "sha256": {_rel(p, data_dir): sha256(p) for p in files},
             "provenance": {
                 "produced_by": "make store (coexist store refresh)",
                 "runs": len(entries), "kinds": dict(sorted(kinds.items())),
                 "commits": sorted({p["commit"] for p in provs if p.get("commit")}),
                 "kernels": sorted({p["kernel"] for p in provs}),
                 "cpus": sorted({p["cpu"] for p in provs if p.get("cpu")}),
                 "compute_s": round(sum(p.get("wall_s") or 0.0 for p in provs), 1),
                 "first_run_utc": min((p["time_utc"] for p in provs), default=None),
                 "last_run_utc": max((p["time_utc"] for p in provs), default=None)}}]


def _external_resources(data_dir: Path) -> list[dict]:
    """Third-party data under ``external/<source>/``, unchanged, each with its licence file
    and the README that names where it comes from."""
    out = []
    root = data_dir / "external"
    for src in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        files = sorted(p for p in src.rglob("*") if p.is_file())
        licence = (src / "LICENSE").read_text().splitlines()[0].strip() \
            if (src / "LICENSE").exists() else None
        out.append({"name": f"external-{src.name}", "format": "mixed",
                    "licenses": [{"name": licence, "path": _rel(src / "LICENSE", data_dir)}]
                    if licence else [],
                    "description": f"third-party data, unchanged: see {_rel(src, data_dir)}"
                                   "/README.md for its source",
                    "path": [_rel(p, data_dir) for p in files],
                    "sha256": {_rel(p, data_dir): sha256(p) for p in files}})
    return out


def _rel(path: Path, base: Path) -> str:
    return Path(path).relative_to(base).as_posix()


def write_datapackage(data_dir: Path = DATA) -> Path:
    path = Path(data_dir) / "datapackage.json"
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(3)}")
    tmp.write_text(json.dumps(build_datapackage(data_dir), indent=1) + "\n")
    os.replace(tmp, path)
    return path


def verify(data_dir: Path = DATA) -> list[str]:
    """Check every hash in datapackage.json against the files, and that every data file
    under ``runs/`` is described. Returns the problems found (empty when consistent)."""
    data_dir = Path(data_dir)
    pkg = json.loads((data_dir / "datapackage.json").read_text())
    problems, described = [], set()
    for res in pkg["resources"]:
        hashes = res["sha256"] if isinstance(res["sha256"], dict) else {res["path"]: res["sha256"]}
        for rel, digest in hashes.items():
            described.add(rel)
            p = data_dir / rel
            inside = p.resolve().is_relative_to(data_dir.resolve())
            if Path(rel).is_absolute() or ".." in Path(rel).parts or not inside:
                problems.append(f"{rel}: a resource path must be relative and inside "
                                f"{data_dir}")
            elif not p.exists():
                problems.append(f"{rel}: listed in datapackage.json but missing")
            elif sha256(p) != digest:
                problems.append(f"{rel}: sha256 differs from datapackage.json")
    on_disk = {_rel(p, data_dir) for top in ("runs", "reference", "model-runs", "external")
               if (data_dir / top).exists() for p in (data_dir / top).rglob("*")
               if p.is_file() and "_invalid" not in p.parts
               and not any(part.startswith(".") for part in p.relative_to(data_dir).parts)}
    problems += [f"{rel}: not described in datapackage.json" for rel in sorted(on_disk - described)]
    return problems


def delay_cpu_us_per_packet(summary: dict) -> float | None:
    """CPU time the delay line spent per packet it released, in microseconds: a fixed
    amount of work per packet, so it tells how fast the machine ran during the run.
    Runs that stored the delay line's own CPU time use it; older ones store only its CPU
    share, which is multiplied by the run's wall time (that starts before the delay line
    does, so the value is a little high). None without a delay line or a released packet."""
    dl = summary.get("delay_line") or {}
    if not dl.get("released"):
        return None
    cpu_s = dl.get("cpu_s")
    if cpu_s is None:
        if not summary.get("wall_s"):
            return None
        cpu_s = dl["cpu_fraction"] * summary["wall_s"]
    return 1e6 * cpu_s / dl["released"]


def busy_pct(summary: dict) -> float | None:
    """How busy the machine's CPUs were during a run, in % of their time (busy over busy,
    idle and stolen CPU seconds), or None where the run did not record it. Near 100 % the
    senders, router, delay line and receivers compete for the cores."""
    cpu = summary["provenance"].get("cpu_seconds_during_run") or {}
    total = sum(cpu.get(k) or 0.0 for k in ("busy_s", "idle_s", "steal_s"))
    return 100 * cpu["busy_s"] / total if cpu.get("busy_s") is not None and total else None


def run_summaries(data_dir: Path = DATA) -> pd.DataFrame:
    """One row per stored run, valid or not, with its gate values: the testbed's record.

    Columns: campaign, key, point (the key without its repeat: runs of one configuration
    share it), repeat, run_id, valid, reasons, failed_gates (comma-separated),
    utilisation, probe_offset_ms (worst
    |p99 - RTT| over sender groups), lateness_p999_ms, delay_cpu_pct, other_drops,
    bbr_share, jain_index, mean_queue_delay_s, load (deliberate background load),
    loadavg_start (1-minute load average when the run started), steal_s (CPU time the
    hypervisor took from this machine during the run), capacity_bps and n_flows (the run's
    bottleneck rate and its number of flows), host_busy_pct (:func:`busy_pct`), steal_pct
    (that time as a percentage of the machine's CPU time over the run: cores x wall time),
    steal_peak_pct (the same
    share over the busiest second of the traffic, where recorded), steal_burst_s (the CPU
    seconds stolen in that second), timing_only (it failed only
    timing gates: :func:`coexist.testbed.gates.timing_only`), disturbed (invalid, and
    explained by that steal or by a stall the sleepers saw:
    :func:`coexist.testbed.gates.disturbed`), duration_s (planned),
    stopped_early_s (when the run was stopped because its lateness gate could no longer
    pass), steal_before_pct and
    waited_for_quiet_s (where the campaign waited for a quiet host before the run: the steal
    over the last 5 s before it, and the time waited), wake_p999_ms and wake_late_pct (the
    timer wake-up probe just before a campaign run, :mod:`coexist.testbed.wakeups`: p99.9
    lateness, and the % of wake-ups at least 1 ms late), stall_pct (the share of the
    run's time that the sleepers on every CPU spent more than 1 ms late, the highest over
    the CPUs: :func:`coexist.testbed.wakeups.probe`; empty for runs stored before they
    existed), delay_cpu_us_per_packet
    (:func:`delay_cpu_us_per_packet`), delay_sys_pct (the share of the delay line's CPU
    time spent in the kernel; empty for runs stored before the split), steer_acks (the
    delay line's ACKs processed on the other CPUs; false for runs stored before the
    option), wall_s, time_utc.
    """
    note_read("*")
    rows = []
    runs = Path(data_dir) / "runs"
    for summary in sorted(runs.glob("*/*/summary.json")) + \
            sorted(runs.glob("*/_invalid/*/summary.json")):
        s = read_summary(summary)
        camp = summary.relative_to(runs).parts[0]
        gates = {g["name"]: g for g in s["gates"]}
        dl = s.get("delay_line") or {}
        steal = (s["provenance"].get("cpu_seconds_during_run") or {}).get("steal_s")
        meta = s.get("campaign") or {}  # what the campaign recorded about the run
        key = meta.get("key", summary.parent.name)
        repeat = meta.get("repeat")
        suffix = f"-r{repeat}"
        rows.append({
            "campaign": camp, "key": key,
            "point": key[:-len(suffix)] if repeat is not None and key.endswith(suffix)
            else key,
            "repeat": repeat, "run_id": s["run_id"], "valid": bool(s["valid"]),
            "capacity_bps": s["params"]["capacity_bps"], "n_flows": len(s["flows"]),
            "host_busy_pct": busy_pct(s),
            "reasons": "; ".join(s["invalid_reasons"]),
            "failed_gates": ",".join(g["name"] for g in s["gates"] if not g["passed"]),
            "utilisation": s["utilisation"],
            "probe_offset_ms": gates["probe_rtt"]["value"],
            "lateness_p999_ms": dl["lateness_us"]["p999"] / 1e3 if dl else None,
            "delay_cpu_pct": 100 * dl["cpu_fraction"] if dl else None,
            "other_drops": gates["drops_only_at_bottleneck"]["value"],
            "bbr_share": s["bbr_share"], "jain_index": s["jain_index"],
            "mean_queue_delay_s": s["mean_queue_delay_s"], "load": s.get("load", "none"),
            "loadavg_start": (s["provenance"].get("loadavg_1_5_15") or {}).get("start",
                                                                               [None])[0],
            "steal_s": steal,
            "steal_pct": steal_pct(s), "steal_peak_pct": steal_peak_pct(s),
            "steal_burst_s": steal_burst_s(s),
            "timing_only": timing_only(s), "disturbed": disturbed(s),
            "duration_s": s["params"]["duration_s"],
            "stopped_early_s": (s.get("stopped_early") or {}).get("at_s"),
            "steal_before_pct": meta.get("steal_before_pct"),
            "waited_for_quiet_s": meta.get("waited_for_quiet_s"),
            "wake_p999_ms": (s.get("wake_probe") or {}).get("p999_ms"),
            "wake_late_pct": (s.get("wake_probe") or {}).get("late_pct"),
            "stall_pct": stall_pct_max(s.get("stall_probe")),
            "delay_cpu_us_per_packet": delay_cpu_us_per_packet(s),
            "delay_sys_pct": 100 * dl["sys_s"] / dl["cpu_s"]
            if dl.get("sys_s") is not None and dl["cpu_s"] else None,
            "steer_acks": bool(s["params"].get("steer_acks", False)),
            "wall_s": s.get("wall_s"), "time_utc": s["provenance"]["time_utc"],
        })
    return pd.DataFrame(rows)
