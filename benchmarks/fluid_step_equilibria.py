"""Is the figures' 50-us step fine enough for the fluid model's equilibria? The runs behind it.

S-Step shows BBR's share converged at 50 us (halving the step moves it by at most 0.01).
An equilibrium search turns on smaller differences than one share, so this script runs
every mix of M-F11's searches (the grid of ``fluid_run_length.py``) at half the step,
25 us, over the book's span (120 s, averaged after 30 s), with the standard errors of the
batch means (:mod:`coexist.fluid.run_length`). Writes

- ``data/reference/fluid_step_equilibria.csv``: one row per case, mix and algorithm;
- ``data/reference/fluid_step_equilibria.json``: provenance (command, git commit, the
  fluid package's source hash, host, interpreter, wall time, date).

The 50-us side is the ``short`` span of ``data/reference/fluid_run_length.csv``, the same
runs the figures make. S-Step compares the two; a test re-runs some rows of this table.
Each run is memoised (``_build/fluid-cache``), so an interrupted run resumes.

    python benchmarks/fluid_step_equilibria.py
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time

from fluid_run_length import GRID, OUT

from coexist import data, paths
from coexist.fluid import cache, run_length, solve

STEP_S = 2.5e-5
SPANS = {"short": run_length.SPANS["short"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=None, help="threads (default: one per CPU)")
    args = ap.parse_args(argv)
    started = time.time()
    table = run_length.study(GRID["variants"], GRID["expiries"], GRID["rtts_ms"],
                             GRID["buffers_bdp"], step_s=STEP_S, spans=SPANS,
                             workers=args.workers)
    wall = time.time() - started
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / "fluid_step_equilibria.csv", index=False, float_format="%.10g")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=paths.ROOT, capture_output=True,
                            text=True).stdout.strip()
    meta = {"command": "python benchmarks/fluid_step_equilibria.py",
            "model": "coexist.fluid, reading " + solve.DEFAULT_READING,
            "fluid_source_sha256": cache.code_hash(), "git_commit": commit,
            "grid": GRID, "n_flows": 10, "capacity_bps": 100e6, "step_s": STEP_S,
            "spans": {k: {"warmup_s": a, "duration_s": b} for k, (a, b) in SPANS.items()},
            "host": {"machine": platform.machine(), "python": sys.version.split()[0]},
            "wall_s": round(wall, 1),
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (OUT / "fluid_step_equilibria.json").write_text(json.dumps(meta, indent=1) + "\n")
    data.write_datapackage()
    print(f"{len(table)} rows, {wall:.0f} s: {OUT / 'fluid_step_equilibria.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
