"""Is the figures' 50-us step fine enough for the fluid model's equilibria? The runs behind it.

S-Step shows BBR's share converged at 50 us (halving the step moves it by at most 0.01).
An equilibrium search turns on smaller differences than one share, so this script runs
every mix of M-F11's searches (the grid of ``fluid_run_length.py``) at half the step,
25 us, over the book's span (120 s, averaged after 30 s), with the standard errors of the
batch means (:mod:`coexist.fluid.studies.run_length`). Writes

- ``data/reference/fluid_step_equilibria.csv``: one row per case, mix and algorithm;
- ``data/reference/fluid_step_equilibria.json``: provenance (command, git commit, the
  fluid package's source hash, host, interpreter, wall time, date).

The 50-us side is the ``short`` span of ``data/reference/fluid_run_length.csv``, the same
runs the figures make. S-Step compares the two; a test re-runs some rows of this table.
Each run is memoised (``_build/fluid-cache``), so an interrupted run resumes.

    python pipelines/fluid_step_equilibria.py
"""

from __future__ import annotations

from fluid_run_length import run

from coexist.fluid.studies import run_length

STEP_S = 2.5e-5
SPANS = {"short": run_length.SPANS["short"]}


def main(argv: list[str] | None = None) -> int:
    return run("fluid_step_equilibria", STEP_S, SPANS, argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
