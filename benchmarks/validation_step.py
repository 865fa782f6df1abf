"""Benchmark: would a coarser step serve the validation pages (S-F6-10, S-F13-17)?

Those pages run the paper's settings at the paper's 10-us step: every pair of Reno, CUBIC,
BBRv1 and BBRv2, drop-tail and RED, buffers of 1-7 BDP, ten senders, 7 s averaged after
2 s. They cost a quarter of a clean build's notebook time, and a step twice or five times
as long would cost a half or a fifth. This script runs every setting of one page at each
step and reports how far each metric moves from its value at the finest step: the largest
absolute change, and the largest change relative to the metric's value (for the loss
rate, over settings losing at least 0.1 % of the traffic), with the setting where it
happens. A step is only worth taking if the pages' lines would not move visibly.

    python benchmarks/validation_step.py [RTT_MIN_MS RTT_MAX_MS] [STEPS_US]

RTTs 30-40 ms (S-F6-10) by default, 10-20 ms for S-F13-17; STEPS_US a comma-separated
list, finest first (10,20,50). Both cores are used, one setting per thread.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pandas as pd

from coexist.fluid.model import metrics, solve
from coexist.fluid.studies import beside_measured

METRICS = ("jain", "loss_rate", "queue_share", "utilisation", "jitter_s")
KEY = ["pair", "aqm", "buffer_bdp"]


def table(rtt_min_ms: float, rtt_max_ms: float, steps_s: list[float]) -> pd.DataFrame:
    """Every setting of the page at every step: one row per (setting, step)."""
    jobs = list(itertools.product(beside_measured._named_pairs(None), ("droptail", "red"),
                                  [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]))

    def one(job: tuple) -> list[dict]:
        pair, aqm, buf = job
        cfg = beside_measured._config(pair, capacity_mbps=100.0, rtt_min_ms=rtt_min_ms,
                          rtt_max_ms=rtt_max_ms, n_flows=10, buffer_bdp=buf,
                          duration_s=7.0, aqm=aqm)
        rows = []
        for h in steps_s:
            m = metrics.aggregate(solve.run(dataclasses.replace(cfg, step_s=h)), 2.0)
            rows.append({"pair": beside_measured.pair_label(pair), "aqm": aqm, "buffer_bdp": buf,
                         "step_us": h * 1e6, **{k: m[k] for k in METRICS}})
        return rows

    with ThreadPoolExecutor(2) as pool:
        return pd.DataFrame([r for rows in pool.map(one, jobs) for r in rows])


def changes(t: pd.DataFrame) -> pd.DataFrame:
    """Per coarser step and metric: the largest absolute and relative change from the
    finest step, and the setting of the largest relative change."""
    finest = t[t.step_us == t.step_us.min()].set_index(KEY)
    out = []
    for step, part in t[t.step_us > t.step_us.min()].groupby("step_us"):
        here = part.set_index(KEY)
        for m in METRICS:
            diff = (here[m] - finest[m]).abs()
            ref = finest[m].abs()
            counted = ref >= 1e-3 if m == "loss_rate" else ref > 0
            rel = (diff[counted] / ref[counted])
            at = rel.idxmax()
            out.append({"step_us": step, "metric": m, "max_abs": diff.max(),
                        "max_rel": rel.max(), "where": " ".join(f"{v}" for v in at),
                        "value_there": finest.loc[at, m], "coarse_there": here.loc[at, m]})
    return pd.DataFrame(out)


def main() -> None:
    rtts = (float(sys.argv[1]), float(sys.argv[2])) if len(sys.argv) > 2 else (30.0, 40.0)
    steps = [float(s) * 1e-6 for s in (sys.argv[3] if len(sys.argv) > 3 else "10,20,50")
             .split(",")]
    started = time.perf_counter()
    t = table(*rtts, steps)
    print(f"RTTs {rtts[0]:g}-{rtts[1]:g} ms, {len(t)} runs in "
          f"{time.perf_counter() - started:.0f} s; change from {min(steps) * 1e6:g} us:")
    print(changes(t).to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
