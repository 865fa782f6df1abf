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
import io
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import files, sidecars
from ..core.params import ParameterError
from ..core.paths import DATA, ROOT  # noqa: F401 (ROOT re-exported)
from ..core.sidecars import DataError  # noqa: F401 (re-exported: the loaders' error)
from .gates import disturbed, held_up, stored_reasons, timing_only
from .host import (  # noqa: F401 (re-exported: the run table's columns)
    sleeper_p999_ms_max,
    stall_pct_max,
    steal_burst_s,
    steal_pct,
    steal_peak_pct,
)

#: the bottleneck utilisation a run may report: the counters behind it are read apart from
#: their time stamps by up to tens of ms under steal, which over the shortest span a
#: utilisation is computed on (1 s, :data:`coexist.testbed.spec.MIN_UTILISATION_SPAN_S`)
#: moves the ratio by a few %; the stored runs reach 1.069 (T-F1 draws them)
UTILISATION_MAX = 1.10
#: the congestion controls a stored flow can have (:data:`coexist.testbed.spec.KNOWN_CCAS`)
CCAS = ("cubic", "bbr", "reno")
def _delay_line(record: dict) -> str | None:
    if not record:
        return None  # no delay line (netem)
    late = record.get("lateness_us")
    ok = (isinstance(late, dict) and all(isinstance(late.get(k), (int, float))
                                         and not isinstance(late.get(k), bool)
                                         for k in ("p50", "p999", "max"))
          and isinstance(record.get("cpu_fraction"), (int, float)))
    return None if ok else "a delay line record needs lateness_us p50, p999, max and cpu_fraction"


_POSITIVE = sidecars.positive()
_SHARE = sidecars.number(0.0, 1.0)
#: the schema of a run's ``summary.json`` (:func:`read_summary`): what the readers of a
#: summary use. Other fields are allowed (the record grew as the harness did).
SUMMARY = sidecars.obj({
    "run_id": sidecars.text(nonempty=True),
    "params": sidecars.obj({
        "capacity_bps": _POSITIVE, "rtt_s": _POSITIVE, "buffer_bdp": _POSITIVE,
        "buffer_bytes": sidecars.integer(low=1), "flows": sidecars.text(nonempty=True),
        "duration_s": _POSITIVE, "warmup_s": sidecars.number(low=0.0),
    }),
    "flows": sidecars.listing(sidecars.obj({
        "flow": sidecars.integer(low=0), "cca": sidecars.text(CCAS),
        "rtt_s": _POSITIVE, "goodput_bps": sidecars.number(low=0.0), "share": _SHARE,
        "retransmits": sidecars.integer(low=0),
    })),
    "gates": sidecars.listing(sidecars.obj({"name": sidecars.text(),
                                            "passed": sidecars.Key((bool,))})),
    "valid": sidecars.Key((bool,)),
    "invalid_reasons": sidecars.listing(sidecars.text()),
    "provenance": sidecars.obj({"time_utc": sidecars.text(), "kernel": sidecars.text()}),
    "wall_s": sidecars.number(low=0.0),
    "utilisation": sidecars.number(0.0, UTILISATION_MAX, nullable=True),
    "bbr_share": sidecars.number(0.0, 1.0, nullable=True),
    "jain_index": sidecars.number(0.0, 1.0, nullable=True),
    "mean_queue_delay_s": sidecars.number(low=0.0, nullable=True),
    "bottleneck_drops": sidecars.integer(low=0),
    "delay_line": sidecars.obj(nullable=True, test=_delay_line),
    "campaign": sidecars.obj(required=False, nullable=True),
})
#: the fields every stored run's summary.json has (:data:`SUMMARY`'s required ones)
SUMMARY_FIELDS: tuple[str, ...] = tuple(k for k, v in SUMMARY.fields.items() if v.required)


def read_summary(path: Path) -> dict:
    """A run's ``summary.json``, checked against :data:`SUMMARY`: a regular file of UTF-8
    JSON, every field its readers use present with its type and in its range
    (``"valid": "false"`` is not a boolean, a share above 1 or a ``buffer_bytes`` of 0 is
    refused), and valid only if every gate passed. Anything else raises
    :class:`DataError` naming the file and the field."""
    summary = sidecars.read_json(Path(path), SUMMARY, "run summary")
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
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    """the vocabulary of a text column (None: any text without control characters)"""


def _f(name, type_, unit="", description="", nullable=False, minimum=None, maximum=None,
       choices=None) -> Field:
    return Field(name, type_, unit, description, nullable, minimum, maximum, choices)


#: the qdiscs the harness reads counters of (the bottleneck's is a bfifo)
QDISCS = ("bfifo", "pfifo", "tbf", "htb")
#: what may load the machine during a run (:data:`coexist.testbed.load.KINDS`)
LOADS = ("none", "cpu", "book", "experiment")


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
       "(none, cpu, book, experiment)", choices=LOADS),
    _f("n_flows", "integer", minimum=1),
    _f("n_bbr", "integer", minimum=0),
    _f("duration_s", "number", "s", minimum=0),
    _f("warmup_s", "number", "s", minimum=0),
    _f("utilisation", "number", "1", "bottleneck link utilisation after warm-up", minimum=0,
       maximum=UTILISATION_MAX),
    _f("jain_index", "number", "1", "Jain fairness of per-flow goodput", minimum=0,
       maximum=1),
    _f("bbr_share", "number", "1", "BBR flows' share of total goodput", nullable=True,
       minimum=0, maximum=1),
    _f("mean_queue_delay_s", "number", "s", "mean bottleneck queueing delay", minimum=0),
    _f("bottleneck_drops", "integer", "packet", minimum=0),
]
FLOW_COLUMNS = [
    _f("flow", "integer", description="flow index in the run", minimum=0),
    _f("cca", "string", description="congestion control (cubic, bbr, reno)", choices=CCAS),
    _f("flow_rtt_s", "number", "s", "this flow's base RTT", minimum=0),
    _f("goodput_bps", "number", "bit/s", "receiver goodput after warm-up", minimum=0),
    _f("share", "number", "1", "share of the run's total goodput", minimum=0, maximum=1),
    _f("retransmits", "integer", "packet", minimum=0),
]
SCHEMAS: dict[str, list[Field]] = {
    "campaign": RUN_COLUMNS + FLOW_COLUMNS,
    "flows": [
        _f("flow", "integer", minimum=0), _f("cca", "string", choices=CCAS),
        _f("rtt_s", "number", "s", minimum=0), _f("group", "integer", minimum=0),
        _f("start_offset_s", "number", "s", "client start after the first client", minimum=0),
        _f("goodput_bps", "number", "bit/s", minimum=0),
        _f("bytes_received", "integer", "byte", minimum=0),
        _f("retransmits", "integer", "packet", minimum=0),
        _f("iperf3_congestion", "string", choices=CCAS),
        _f("share", "number", "1", minimum=0, maximum=1),
    ],
    "series": [
        _f("flow", "integer", minimum=0), _f("cca", "string", choices=CCAS),
        _f("rtt_s", "number", "s", minimum=0),
        _f("t_start_s", "number", "s", "interval start on the run clock", minimum=0),
        _f("t_end_s", "number", "s", minimum=0), _f("bytes", "integer", "byte", minimum=0),
        _f("goodput_bps", "number", "bit/s", "receiver goodput in the interval", minimum=0),
    ],
    "sockets": [
        _f("t_s", "number", "s", "sample time on the run clock", minimum=0),
        _f("flow", "integer", minimum=0), _f("cca_requested", "string", choices=CCAS),
        _f("local_port", "integer", minimum=0, maximum=65_535),
        _f("cca", "string", nullable=True, choices=CCAS),
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
        _f("t_s", "number", "s", minimum=0), _f("kind", "string", choices=QDISCS),
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


#: the campaigns whose data this process has read (``*``: every stored run); a figure
#: checks them against the campaigns its ledger entry declares (:func:`coexist.book.figures.save`)
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


def schema_fields(schema: str) -> list[Field]:
    """The columns of the table kind ``schema``; an unknown kind is refused naming the
    kinds there are."""
    if schema not in SCHEMAS:
        raise ParameterError(f"parameter 'schema' = {schema!r} is invalid; valid: one of "
                             f"{', '.join(repr(s) for s in SCHEMAS)}")
    return SCHEMAS[schema]


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


#: the columns of :func:`run_summaries`, in order (also those of an empty table)
RUN_SUMMARY_COLUMNS = [
    "campaign", "key", "point", "repeat", "run_id", "valid", "capacity_bps", "n_flows",
    "buffer_bdp", "warmup_s", "goodput_over_capacity", "mean_packet_bytes", "host_busy_pct",
    "reasons", "failed_gates", "utilisation", "probe_offset_ms",
    "lateness_p999_ms", "delay_cpu_pct", "other_drops", "bbr_share", "jain_index",
    "mean_queue_delay_s", "load", "loadavg_start", "steal_s", "steal_pct",
    "steal_peak_pct", "steal_burst_s", "timing_only", "disturbed", "duration_s",
    "stopped_early_s", "steal_before_pct", "waited_for_quiet_s", "wake_p999_ms",
    "wake_late_pct", "stall_pct", "sleeper_p999_ms", "held_up", "delay_cpu_us_per_packet",
    "delay_sys_pct", "steer_acks",
    "wall_s", "time_utc", "kernel", "iperf3",
]


def run_summaries(data_dir: Path = DATA,
                  campaigns: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per stored run, valid or not, with its gate values: the testbed's record.

    Columns: campaign, key, point (the key without its repeat: runs of one configuration
    share it), repeat, run_id, valid, capacity_bps, n_flows, buffer_bdp, warmup_s,
    goodput_over_capacity (the flows' goodputs summed, over the capacity),
    mean_packet_bytes (on the bottleneck's wire), reasons, failed_gates (comma-separated),
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
    timing gates: :func:`coexist.data.gates.timing_only`), disturbed (invalid, and
    explained by that steal or by a stall the sleepers saw:
    :func:`coexist.data.gates.disturbed`), duration_s (planned),
    stopped_early_s (when the run was stopped because its lateness gate could no longer
    pass), steal_before_pct and
    waited_for_quiet_s (where the campaign waited for a quiet host before the run: the steal
    over the last 5 s before it, and the time waited), wake_p999_ms and wake_late_pct (the
    timer wake-up probe just before a campaign run, :mod:`coexist.testbed.wakeups`: p99.9
    lateness, and the % of wake-ups at least 1 ms late), stall_pct (the share of the
    run's time that the sleepers on every CPU spent more than 1 ms late, the highest over
    the CPUs: :func:`coexist.testbed.wakeups.probe`; empty for runs stored before they
    existed), sleeper_p999_ms (those sleepers' latest 99.9th-percentile wake-up, ms),
    held_up (the host held the machine up during the run, valid or not:
    :func:`coexist.data.gates.held_up`), delay_cpu_us_per_packet
    (:func:`delay_cpu_us_per_packet`), delay_sys_pct (the share of the delay line's CPU
    time spent in the kernel; empty for runs stored before the split), steer_acks (the
    delay line's ACKs processed on the other CPUs; false for runs stored before the
    option), wall_s, time_utc, kernel and iperf3 (the versions the run's provenance names).

    ``campaigns`` reads those campaigns' runs only (and records only them as read, so a
    figure declares just what it reads); None reads every stored run.
    """
    if isinstance(campaigns, str):  # one campaign's name, not its letters
        campaigns = [campaigns]
    dirs = ["*"] if campaigns is None else list(campaigns)  # "*": every campaign
    for name in dirs:
        note_read(name)
    rows = []
    runs = Path(data_dir) / "runs"
    for summary in sorted(p for d in dirs for p in runs.glob(f"{d}/*/summary.json")) + \
            sorted(p for d in dirs for p in runs.glob(f"{d}/_invalid/*/summary.json")):
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
            "buffer_bdp": s["params"]["buffer_bdp"], "warmup_s": s["params"]["warmup_s"],
            "goodput_over_capacity": s.get("goodput_over_capacity"),
            "mean_packet_bytes": s.get("bottleneck_mean_packet_bytes"),
            "host_busy_pct": busy_pct(s),
            "reasons": "; ".join(stored_reasons(s)),
            "failed_gates": ",".join(g["name"] for g in s["gates"] if not g["passed"]),
            "utilisation": s["utilisation"],
            "probe_offset_ms": gates.get("probe_rtt", {}).get("value"),
            "lateness_p999_ms": dl["lateness_us"]["p999"] / 1e3 if dl else None,
            "delay_cpu_pct": 100 * dl["cpu_fraction"] if dl else None,
            "other_drops": gates.get("drops_only_at_bottleneck", {}).get("value"),
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
            "sleeper_p999_ms": sleeper_p999_ms_max(s.get("stall_probe")),
            "held_up": held_up(s),
            "delay_cpu_us_per_packet": delay_cpu_us_per_packet(s),
            "delay_sys_pct": 100 * dl["sys_s"] / dl["cpu_s"]
            if dl.get("sys_s") is not None and dl["cpu_s"] else None,
            "steer_acks": bool(s["params"].get("steer_acks", False)),
            "wall_s": s.get("wall_s"), "time_utc": s["provenance"]["time_utc"],
            "kernel": s["provenance"].get("kernel"),
            "iperf3": (s["provenance"].get("tools") or {}).get("iperf3"),
        })
    return pd.DataFrame(rows, columns=RUN_SUMMARY_COLUMNS)
