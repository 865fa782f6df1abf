"""Benchmark: the page's engine (kernel.wasm through its JavaScript, under Node) against the
native kernel (:func:`coexist.fluid.model.published.integrate`) on the book's equilibrium mixes.

Both compute the same doubles (tests/live holds them to it); this times them: 10 flows,
100 Mbit/s, 40 ms, 2 BDP, 50-us steps, as the equilibrium figures run them, twin flows
computed once in both, the traces sampled once a millisecond (rate, window, RTT: what a
page draws). Each engine's time is its loop's alone, best of ``REPEATS``; the last column
is the engine's wall time for the run, Node's start and the module's compilation included.
Usage::

    python benchmarks/live_engine.py [SECONDS]
"""

from __future__ import annotations

import sys
import time

from coexist.fluid.model import published, solve
from coexist.live import compare, engine

REPEATS = 3
MIXES = {"5 CUBIC + 5 BBRv1": ("bbr1", False), "5 CUBIC + 5 BBRv2, RTprop expiry": ("bbr2", True)}


def main() -> int:
    duration_s = float(sys.argv[1]) if len(sys.argv) > 1 else 40.0
    if not 1.0 <= duration_s <= 600.0:
        sys.exit(f"live_engine: SECONDS is {duration_s:g}; valid range 1-600")
    if engine.node() is None:
        sys.exit("live_engine: no 'node' on PATH (apt-get install nodejs)")
    print(f"{duration_s:g} s simulated per run, best of {REPEATS}")
    print(f"{'mix':36s} {'native s':>9s} {'engine s':>9s} {'engine / native':>16s} "
          f"{'engine wall s':>14s}")
    for label, (variant, expiry) in MIXES.items():
        cfg = compare.config(["cubic"] * 5 + [variant] * 5, 100e6, [0.04] * 10, 2.0,
                             duration_s, rtprop_expiry=expiry)
        a = solve.published_arguments(cfg, min(10.0, duration_s / 2))
        published.integrate(**dict(a, n_steps=2, start=0))  # compile or load the machine code
        native = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            published.integrate(**a)
            native.append(time.perf_counter() - t0)
        page, wall = [], []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            page.append(engine.run_arguments(a, engine.TRACE_FIELDS).seconds)
            wall.append(time.perf_counter() - t0)
        print(f"{label:36s} {min(native):9.3f} {min(page):9.3f} "
              f"{min(page) / min(native):16.2f} {min(wall):14.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
