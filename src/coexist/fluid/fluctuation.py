"""The periodic fluctuation of fluid-model runs (published reading, BBRv1), one row per
run, read as :func:`coexist.analysis.fluctuation.summarise` reads every run (P-F1-2, P-F3):
the memoised kind ``fluctuation``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..analysis import periodicity
from ..analysis.fluctuation import PROBE_RTT_INTERVAL_S, summarise
from ..core.params import invalid
from . import cache, metrics, solve


def fluid_run(*, capacity_bps: float, rtt_s: float, duration_s: float, warmup_s: float,
              step_s: float, bin_s: float, min_period_s: float, max_period_s: float,
              sync_flows: int, n_cubic: int = 10, n_bbr: int = 10, buffer_bdp: float = 2.0,
              probe_rtt_interval_s: float | Sequence[float] = PROBE_RTT_INTERVAL_S) -> dict:
    """The row of one fluid-model run (published reading, BBRv1) of ``n_cubic`` CUBIC and
    ``n_bbr`` BBR flows, each BBR flow with its ProbeRTT interval (one value for all, or
    one per BBR flow); every flow starts at an equal share of the BDP, as P-F1-2's run.
    Goodput is each flow's sending rate thinned by the loss it meets at the queue
    (:func:`.metrics.goodput_pps`), sampled 50 times per bin. Memoised on disk."""
    intervals = (tuple(float(v) for v in probe_rtt_interval_s)
                 if isinstance(probe_rtt_interval_s, Sequence)
                 else (float(probe_rtt_interval_s),) * n_bbr)
    if len(intervals) != n_bbr:
        raise invalid("probe_rtt_interval_s", probe_rtt_interval_s,
                      f"one value, or one per BBR flow ({n_bbr})")
    if not 0 <= warmup_s < duration_s:
        raise invalid("warmup_s", warmup_s, f"0 <= warm-up < duration ({duration_s:g} s)")
    pps = capacity_bps / (8 * solve.PACKET_BYTES)
    n = n_cubic + n_bbr
    cfg = solve.dumbbell(["cubic"] * n_cubic + ["bbr1"] * n_bbr, capacity_bps=capacity_bps,
                         rtt_s=rtt_s, buffer_bdp=buffer_bdp, duration_s=duration_s,
                         step_s=step_s, sample_s=bin_s / 50,
                         initial_window=max(1.0, pps * rtt_s / n),
                         probe_rtt_interval_s=(PROBE_RTT_INTERVAL_S,) * n_cubic + intervals)

    inputs = {"config": repr(cfg), "warmup_s": float(warmup_s), "bin_s": float(bin_s),
              "periods": [float(min_period_s), float(max_period_s)],
              "sync_flows": int(sync_flows), "capacity_bps": float(capacity_bps),
              "n_cubic": int(n_cubic)}
    return dict(cache.memo("fluctuation", inputs))


@cache.computes("fluctuation")
def _model_row(inputs: dict) -> dict:
    """The run behind :func:`fluid_run` (its memo ``inputs``)."""
    cfg = solve.config_from_repr(inputs["config"])
    warmup_s, bin_s, n_cubic = inputs["warmup_s"], inputs["bin_s"], inputs["n_cubic"]
    min_period_s, max_period_s = inputs["periods"]
    n = len(cfg.flows)
    tr = solve.run(cfg)
    late = tr.t >= warmup_s
    k = int(late.sum() // 50 * 50)
    good = np.column_stack([metrics.goodput_pps(tr, i) for i in range(n)])
    bits = good[late][:k] * metrics.BITS
    bbr = bits[:, n_cubic:].sum(axis=1).reshape(-1, 50).mean(axis=1)
    cub = bits[:, :n_cubic].sum(axis=1).reshape(-1, 50).mean(axis=1)
    tb = tr.t[late][:k].reshape(-1, 50)[:, -1]
    ent = periodicity.model_probe_rtt_entries(tr.t, tr.bbr["m_prt"][:, n_cubic:])
    return summarise(tb, bbr, cub, bits.mean(axis=0), ent[ent >= warmup_s], bin_s=bin_s,
                     capacity_bps=inputs["capacity_bps"], min_period_s=min_period_s,
                     max_period_s=max_period_s, sync_flows=inputs["sync_flows"])
