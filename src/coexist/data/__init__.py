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

The package's face: its names are those of its modules, each one concern: ``schemas`` (the
tables' columns), ``tables`` (reading and writing a table), ``summary_file`` (a run's
``summary.json``), ``summaries`` (the table of stored runs), ``host`` (a run's host
statistics), ``gates`` (what makes a run valid), ``reads`` (the campaigns this process has
read) and ``datapackage`` (the files' description and hashes).
"""

from __future__ import annotations

from ..core.paths import DATA, ROOT
from ..core.sidecars import DataError
from .gates import disturbed, held_up, stored_reasons, timing_only
from .host import (
    busy_pct,
    delay_cpu_us_per_packet,
    sleeper_p999_ms_max,
    stall_pct_max,
    steal_burst_s,
    steal_pct,
    steal_peak_pct,
)
from .reads import campaigns_read, forget_reads, note_read
from .schemas import (
    CCAS,
    FLOW_COLUMNS,
    LOADS,
    QDISCS,
    RUN_COLUMNS,
    RUN_FILES,
    SCHEMAS,
    UTILISATION_MAX,
    Field,
    schema_fields,
)
from .summaries import RUN_SUMMARY_COLUMNS, run_summaries
from .summary_file import SUMMARY, SUMMARY_FIELDS, read_summary
from .tables import load_table, write_table

__all__ = [
    "CCAS", "DATA", "FLOW_COLUMNS", "LOADS", "QDISCS", "ROOT", "RUN_COLUMNS", "RUN_FILES",
    "RUN_SUMMARY_COLUMNS", "SCHEMAS", "SUMMARY", "SUMMARY_FIELDS", "UTILISATION_MAX",
    "DataError", "Field", "busy_pct", "campaigns_read", "delay_cpu_us_per_packet",
    "disturbed", "forget_reads", "held_up", "load_table", "note_read", "read_summary",
    "run_summaries", "schema_fields", "sleeper_p999_ms_max", "stall_pct_max",
    "steal_burst_s", "steal_pct", "steal_peak_pct", "stored_reasons", "timing_only",
    "write_table",
]
