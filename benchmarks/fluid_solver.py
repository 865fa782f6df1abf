"""Benchmark: the compiled fluid-model solver against the plain NumPy reference.

Scenario of the performance target: 10 flows (5 CUBIC + 5 BBRv1), 100 Mbit/s, 2 BDP
drop-tail, 10 s simulated at a 10 us step. The reference needs minutes for 10 s, so it
runs the first ``REFERENCE_S`` seconds. The ratio is taken per simulated second, and both
solvers are checked to agree on every output over that span. Both run in this process,
one after the other, so the ratio holds on any machine. The targets: at least 50x, and
10 s in at most 3 s on one core of this machine.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from coexist.fluid.model import oracle, solve

CCAS = ["cubic"] * 5 + ["bbr1"] * 5
RTTS = [0.030 + 0.001 * i for i in range(10)]
SIM_S = 10.0
REFERENCE_S = 1.0
RTOL = 1e-9


def config(duration: float) -> solve.Config:
    return solve.dumbbell(CCAS, capacity_bps=100e6, rtt_s=RTTS, buffer_bdp=2.0,
                          duration_s=duration, initial_window=10.0)


def main() -> int:
    solve.run(config(0.01))  # compile (or load the cached machine code) first
    t0 = time.perf_counter()
    fast = solve.run(config(SIM_S))
    fast_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = oracle.run(config(REFERENCE_S))
    ref_s = time.perf_counter() - t0
    short = solve.run(config(REFERENCE_S))
    worst = 0.0
    pairs = [(name, getattr(short, name), getattr(ref, name)) for name in solve.Trace.OUTPUTS]
    pairs += [(name, short.bbr[name], ref.bbr[name]) for name in solve.BBR_FIELDS]
    for name, a, b in pairs:
        if a.shape != b.shape:
            print(f"FAIL: {name} shapes differ {a.shape} vs {b.shape}")
            return 1
        scale = np.maximum(np.abs(b), 1e-9 * np.abs(b).max() + 1e-300)
        worst = max(worst, float(np.max(np.abs(a - b) / scale)))
    ratio = (ref_s / REFERENCE_S) / (fast_s / SIM_S)
    util = fast.arrival_pps[fast.t > 2].mean() / fast.config.capacity_pps
    print(f"compiled: {SIM_S:g} s simulated in {fast_s:.2f} s wall (target <= 3 s); "
          f"offered load after 2 s {util:.3f} of capacity")
    print(f"reference: {REFERENCE_S:g} s simulated in {ref_s:.2f} s wall")
    print(f"speed-up per simulated second: {ratio:.0f}x (target >= 50x)")
    print(f"largest relative difference on any output over {REFERENCE_S:g} s: {worst:.2e} "
          f"(tolerance {RTOL:g})")
    ok = fast_s <= 3.0 and ratio >= 50 and worst <= RTOL
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
