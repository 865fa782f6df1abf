"""Benchmark: the fluid model's two readings on one scenario, per flow-step.

The published reading (:mod:`coexist.fluid.model.published`) integrates the model as the authors'
code does: ms units, several smooth steps per flow-step, histories of more variables. This
measures what that costs against the printed reading (:mod:`coexist.fluid.model.solve`) on the
solver benchmark's scenario (5 CUBIC + 5 BBRv1, 100 Mbit/s, 2 BDP, 10 s at 10 us) and on
10 BBRv2 and 10 CUBIC flows. Both readings run in this process, one after the other, so
the ratio holds on any machine; the authors' own code, timed when data/reference was made,
is given for scale (their wall time per flow-step, from that table, on its machine).
"""

from __future__ import annotations

import sys
import time

from coexist.fluid.model import solve
from coexist.fluid.studies import authors

SCENARIOS = {"5 CUBIC + 5 BBRv1": ["cubic"] * 5 + ["bbr1"] * 5, "10 BBRv2": ["bbr2"] * 10,
             "10 CUBIC": ["cubic"] * 10}
RTTS = [0.030 + 0.001 * i for i in range(10)]
SIM_S = 10.0
STEP_S = 1e-5


def config(ccas: list[str], reading: str, duration: float) -> solve.Config:
    kw = {"initial_window": 10.0} if reading == "printed" else {}
    return solve.dumbbell(ccas, capacity_bps=100e6, rtt_s=RTTS, buffer_bdp=2.0,
                          duration_s=duration, step_s=STEP_S, reading=reading, **kw)


def per_flow_step_ns(ccas: list[str], reading: str) -> float:
    solve.run(config(ccas, reading, 0.01))  # compile (or load the cached machine code)
    t0 = time.perf_counter()
    solve.run(config(ccas, reading, SIM_S))
    return (time.perf_counter() - t0) / (SIM_S / STEP_S * len(ccas)) * 1e9


def main() -> int:
    for name, ccas in SCENARIOS.items():
        printed = per_flow_step_ns(ccas, "printed")
        published = per_flow_step_ns(ccas, "published")
        print(f"{name:>18}: printed {printed:6.1f} ns, published {published:6.1f} ns per "
              f"flow-step; published / printed {published / printed:.2f}")
    ref = authors.runs()
    ten = ref[ref.group == "ten_senders"]
    steps = ten.duration_s * 1e3 / ten.step_ms * ten.senders
    print(f"the authors' code (data/reference, their interpreter): median "
          f"{(ten.wall_s / steps).median() * 1e9:.0f} ns per flow-step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
