"""Are the fluid model's 120-s equilibrium searches long enough? The runs behind it.

Runs every mix of M-F11's equilibrium searches (10 flows, 100 Mbit/s, BBRv1 and BBRv2, with
and without the RTprop expiry, 5 and 40 ms, buffers of 0.5-20 BDP; the model as published,
at the book's 50-us step) for 240 s, and reads from each run both the book's span (120 s,
averaged after 30 s) and the doubled one (240 s, after 60 s), each with the standard errors
of its batch means (:mod:`coexist.fluid.studies.run_length`). Writes

- ``data/reference/fluid_run_length.csv``: one row per case, mix, span and algorithm;
- ``data/reference/fluid_run_length.json``: provenance (command, git commit, the fluid
  package's source hash, host, interpreter, wall time, date).

The S-Step page reads the table; a test re-runs some of its rows and requires the same
numbers, so a change to the model that moves them fails until this script is run again.
Each run is memoised (``_build/fluid-cache``), so an interrupted run resumes.

    python pipelines/fluid_run_length.py
"""

from __future__ import annotations

import argparse
import json
import time

from coexist.core import paths, provenance
from coexist.data import datapackage
from coexist.fluid.model import solve
from coexist.fluid.studies import run_length
from coexist.runstore import lookup

OUT = paths.DATA / "reference"
GRID = {"variants": ["bbr1", "bbr2"], "expiries": [False, True], "rtts_ms": [5.0, 40.0],
        "buffers_bdp": [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]}
STEP_S = 5e-5


def save(name: str, table, *, step_s: float, spans: dict, wall_s: float) -> None:
    """Write ``data/reference/<name>.csv`` and its provenance ``<name>.json`` (the project's
    record, :func:`coexist.core.provenance.collect`: command, commit and local changes, kernel,
    CPU, interpreter, packages, time; plus the model and grid), and refresh the datapackage
    (shared by this script and ``fluid_step_equilibria.py``)."""
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / f"{name}.csv", index=False, float_format="%.10g")
    meta = {**provenance.collect(tools=False),
            "model": "coexist.fluid, reading " + solve.DEFAULT_READING,
            "fluid_source_sha256": lookup.code_hash(),
            "grid": GRID, "n_flows": 10, "capacity_bps": 100e6, "step_s": step_s,
            "spans": {k: {"warmup_s": a, "duration_s": b} for k, (a, b) in spans.items()},
            "wall_s": round(wall_s, 1)}
    (OUT / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
    datapackage.write_datapackage()
    print(f"{len(table)} rows, {wall_s:.0f} s: {OUT / f'{name}.csv'}")


def run(name: str, step_s: float, spans: dict, argv: list[str] | None, doc: str) -> int:
    """Run every mix of :data:`GRID` at ``step_s`` over ``spans`` and :func:`save` it."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--workers", type=int, default=None, help="threads (default: one per CPU)")
    args = ap.parse_args(argv)
    started = time.time()
    table = run_length.study(GRID["variants"], GRID["expiries"], GRID["rtts_ms"],
                             GRID["buffers_bdp"], step_s=step_s, spans=spans,
                             workers=args.workers)
    save(name, table, step_s=step_s, spans=spans, wall_s=time.time() - started)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run("fluid_run_length", STEP_S, run_length.SPANS, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
