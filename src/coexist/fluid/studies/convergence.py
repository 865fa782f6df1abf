"""Step-size convergence of the fluid model: the same runs integrated at several steps.

Explicit Euler with delays read at whole steps converges only as the step shrinks; the
paper integrates at 10 us. A result is converged at step h when integrating at a finer step
changes it by less than what the book resolves (a flow's share by 0.01). Each setting here
runs CUBIC against BBRv1 on the paper's 100-Mbit/s link in 1514-B packets, in either
reading of the model (:mod:`.published` or :mod:`.solve`'s printed reading).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.params import invalid
from ...runstore import fanout, lookup
from ..model import metrics, published, solve

CAPACITY_PPS = 100e6 / (published.MSS_BYTES * 8)


@dataclass(frozen=True)
class Setting:
    """``pairs`` CUBIC and as many BBRv1 flows, alternating over RTTs spread evenly across
    ``rtt_ms`` (so neither algorithm gets the short ones; each flow has 1 ms of source
    latency), with a buffer of ``buffer_bdp`` BDPs of the shortest RTT."""

    label: str
    pairs: int
    rtt_ms: tuple[float, float]
    buffer_bdp: float

    def config(self, reading: str, step_s: float, duration_s: float) -> solve.Config:
        n = 2 * self.pairs
        lo, hi = self.rtt_ms
        rtts = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
        ccas = ["cubic", "bbr1"] * self.pairs
        flows = tuple(solve.Flow(c, 1e-3, r / 1e3 - 1e-3) for c, r in zip(ccas, rtts, strict=True))
        buffer = round(self.buffer_bdp * CAPACITY_PPS * lo / 1e3)
        kw = {}
        if reading == "printed":
            kw["initial_window"] = CAPACITY_PPS * lo / 1e3 / n
        return solve.Config(CAPACITY_PPS, float(buffer), flows, duration_s=duration_s,
                            step_s=step_s, sample_s=1e-3, reading=reading, **kw)


SETTINGS = (
    Setting("2 flows, 5 ms, 2 BDP", 1, (5.0, 5.0), 2.0),
    Setting("2 flows, 40 ms, 2 BDP", 1, (40.0, 40.0), 2.0),
    Setting("2 flows, 80 ms, 2 BDP", 1, (80.0, 80.0), 2.0),
    Setting("2 flows, 40 ms, 10 BDP", 1, (40.0, 40.0), 10.0),
    Setting("10 flows, 30-40 ms, 1 BDP", 5, (30.0, 40.0), 1.0),
)


def run_one(setting: Setting, reading: str, step_us: float, duration_s: float,
            warmup_s: float) -> dict:
    """One setting at one step: BBR's share of the rate, queue share, loss, utilisation."""
    cfg = setting.config(reading, step_us * 1e-6, duration_s)

    out = lookup.memo("step-study", {"config": repr(cfg), "warmup_s": float(warmup_s)})
    return {"setting": setting.label, "reading": reading, "step_us": float(step_us), **out}


@lookup.computes("step-study")
def _step_run(inputs: dict) -> dict:
    """The run behind :func:`run_one` (its memo ``inputs``)."""
    cfg, warmup_s = solve.config_from_repr(inputs["config"]), inputs["warmup_s"]
    tr = solve.run(cfg)
    late = tr.t >= warmup_s
    rates = tr.rate_pps[late].mean(axis=0)
    bbr = [f.cca == "bbr1" for f in cfg.flows]
    on_link = metrics.link(tr, warmup_s)
    return {"bbr_share": float(rates[bbr].sum() / rates.sum()),
            "queue_share": on_link["queue_share"], "loss": on_link["loss_rate"],
            "utilisation": on_link["utilisation"]}


def study(steps_us: Sequence[float], *, duration_s: float, warmup_s: float,
          readings: Sequence[str] = ("published", "printed"),
          settings: Sequence[Setting] = SETTINGS) -> pd.DataFrame:
    """Every setting x reading x step, run on both cores (the kernels release the GIL)."""
    for s in steps_us:
        if not 1 <= s <= 1000:
            raise invalid("steps_us", s, "1 <= step <= 1000 us")
    if not 0 <= warmup_s < duration_s:
        raise invalid("warmup_s", warmup_s, f"0 <= warmup_s < duration_s = {duration_s:g}")
    jobs = list(itertools.product(settings, readings, steps_us))
    rows = fanout.map_list(lambda j: run_one(*j, duration_s, warmup_s), jobs)
    return pd.DataFrame(rows)


def changes(table: pd.DataFrame, metric: str = "bbr_share") -> pd.DataFrame:
    """For each setting, reading and step: how much ``metric`` moves when the step is
    refined to the next finer one in the table (NaN at the finest)."""
    rows = []
    for (setting, reading), g in table.groupby(["setting", "reading"], sort=False):
        g = g.sort_values("step_us", ascending=False)
        vals = g[metric].to_numpy()
        for k, step in enumerate(g["step_us"]):
            nxt = abs(vals[k + 1] - vals[k]) if k + 1 < len(vals) else float("nan")
            rows.append({"setting": setting, "reading": reading, "step_us": step,
                         f"{metric}_change": nxt})
    return pd.DataFrame(rows)


def converged_step(table: pd.DataFrame, reading: str, tolerance: float = 0.01,
                   metric: str = "bbr_share") -> float:
    """The largest step at which refining further, to every finer step in the table, moves
    ``metric`` by at most ``tolerance`` in every setting. The finest step has nothing finer
    to be checked against, so when no coarser step passes it is returned as a bound, not as
    a converged step: a reader of the answer treats the finest step as "not converged at any
    step tried" (S-Step does)."""
    t = table[table.reading == reading]
    if t.empty:
        raise invalid("reading", reading, f"one of {', '.join(sorted(set(table.reading)))}")
    for step in sorted(t.step_us.unique(), reverse=True):
        if all(np.abs(g.loc[g.step_us < step, metric].to_numpy()
                      - g.loc[g.step_us == step, metric].iloc[0]).max(initial=0.0) <= tolerance
               for _, g in t.groupby("setting")):
            return float(step)
    return float(t.step_us.min())  # not reached: the finest step has nothing finer to move
