"""Benchmark: what computing twin flows once saves on the heaviest figure's re-run.

Re-running M-F11 with one new RTT runs every mix of 10 flows for each of its four BBR
versions (BBRv1 and BBRv2, with and without the RTprop expiry) at six buffers: 246 runs of
120 s at the 50-us step. The kernel computes flows whose every value repeats an earlier
flow's only once (:func:`coexist.fluid.model.published.copies`: the CUBIC flows of a mix, and its
BBRv1 flows six apart). This script runs that search twice in one process, with an empty
memo each time: once as the book runs it, once computing every flow. It requires the two
to give the same tables (equal, not close: the twins keep every bit) and reports each wall
time and their ratio. Both use the machine's cores as the book does (one run per thread).

    python benchmarks/fluid_twins.py [SECONDS] [RTT_MS]

SECONDS is each run's length (120 s, M-F11's; shorter for a quick look, with the warm-up
a quarter of it), RTT_MS the new RTT (20 ms).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from unittest.mock import patch

import numpy as np
import pandas as pd

from coexist.fluid.model import published
from coexist.fluid.studies import equilibria
from coexist.runstore import lookup

VARIANTS = (("bbr1", False), ("bbr2", False), ("bbr1", True), ("bbr2", True))
BUFFERS_BDP = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]


def search(duration_s: float, rtt_ms: float) -> tuple[pd.DataFrame, float]:
    """Every mix of M-F11's search at one RTT, in a fresh memo; its table and wall time."""
    with tempfile.TemporaryDirectory() as memo, patch.dict(os.environ, {lookup.ENV: memo}):
        started = time.perf_counter()
        tables = [equilibria.mix_table([rtt_ms / 1e3], 10, BUFFERS_BDP, capacity_bps=100e6,
                                       variant=cca, duration_s=duration_s,
                                       warmup_s=duration_s / 4, step_s=5e-5, progress=False,
                                       rtprop_expiry=expiry).assign(variant=cca, expiry=expiry)
                  for cca, expiry in VARIANTS]
        return pd.concat(tables, ignore_index=True), time.perf_counter() - started


def main() -> int:
    duration_s = float(sys.argv[1]) if len(sys.argv) > 1 else 120.0
    rtt_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    if not 2.0 <= duration_s <= 600.0:
        sys.exit(f"fluid_twins: SECONDS is {duration_s:g}; valid range 2-600")
    if not 1.0 <= rtt_ms <= 500.0:
        sys.exit(f"fluid_twins: RTT_MS is {rtt_ms:g}; valid range 1-500")
    equilibria.simulate_mix((1,), group_size=2, group_rtts_s=[0.01], buffer_bdp=1.0,
                            capacity_bps=10e6, duration_s=0.2, warmup_s=0.1)  # compile
    shared, t_shared = search(duration_s, rtt_ms)
    with patch.object(published, "copies", lambda cca, *_: np.arange(len(cca))):
        every, t_every = search(duration_s, rtt_ms)
    pd.testing.assert_frame_equal(shared, every, check_exact=True)
    mixes = len(shared.drop_duplicates(["variant", "expiry", "buffer_bdp", "mix_label"]))
    print(f"M-F11's search at {rtt_ms:g} ms: {mixes} mixes of {duration_s:g} s, same tables")
    print(f"every flow computed: {t_every:7.1f} s")
    print(f"twin flows once:     {t_shared:7.1f} s ({t_shared / t_every:.2f} of it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
