"""The periodic fluctuation in numbers, one row per run: measured runs and fluid-model runs
read the same way, so they can share a capacity axis.

P-F1-2 looks at one setting closely; P-F3 asks how the fluctuation changes with the
bottleneck's capacity (the paper ran 1 GbE, this machine emulates up to 200 Mbit/s, the
fluid model any rate) and whether de-synchronising BBR's ProbeRTT relieves it (the
remedy the fluctuation paper leaves open). Every row carries:

- the period of the total BBR goodput, from the periodogram and the autocorrelation
  (:mod:`.periodicity`), the periodogram line's strength and white-noise chance;
- ProbeRTT entries after the warm-up, the synchronised ones (``sync_flows`` or more BBR
  flows within 1 s) and the median gap between those;
- the fluctuation's **amplitude**: the coefficient of variation of the total BBR goodput
  in ``bin_s`` bins (standard deviation over mean; 0 for a flat line);
- BBR's share of the goodput, the link's utilisation (goodput over capacity) and
  **Jain's index** of every flow's mean goodput, (sum x)^2 / (n sum x^2).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from . import data, fairness, periodicity
from .fluid import cache as fluid_cache
from .params import invalid

#: BBRv1's ProbeRTT interval in Linux and in the published model, s
PROBE_RTT_INTERVAL_S = 10.0


def jain(x) -> float:
    """Jain's fairness index of a run's flow rates (:func:`coexist.fairness.jain`), refusing
    what is not a set of rates: a run row must not carry a NaN index silently."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or len(x) == 0 or (x < 0).any() or not x.sum() > 0:
        raise invalid("x", x, "a 1-D array of non-negative rates, not all zero")
    return fairness.jain(x)


def spread_intervals(n: int, spread_s: float,
                     base_s: float = PROBE_RTT_INTERVAL_S) -> tuple[float, ...]:
    """``n`` ProbeRTT intervals evenly spaced over [base, base + spread] s (deterministic,
    so a run is reproducible; spread 0 gives every flow the published interval)."""
    if not 0 <= spread_s <= 50:
        raise invalid("spread_s", spread_s, "0 <= spread <= 50 s")
    if n < 1:
        raise invalid("n", n, ">= 1 flow")
    return tuple(float(base_s + spread_s * i / (n - 1)) if n > 1 else float(base_s)
                 for i in range(n))


def summarise(t_s: np.ndarray, bbr_bps: np.ndarray, cubic_bps: np.ndarray,
              flow_means_bps: np.ndarray, entries_s: np.ndarray, *, bin_s: float,
              capacity_bps: float, min_period_s: float, max_period_s: float,
              sync_flows: int) -> dict:
    """The row of one run from its binned BBR and CUBIC totals (bit/s, bins ending at
    ``t_s``), every flow's mean goodput and the BBR flows' ProbeRTT entry times (s), all
    after the warm-up (see the module's docstring for the columns)."""
    bbr = np.asarray(bbr_bps, dtype=float)
    top = min(max_period_s, len(bbr) * bin_s / 2)  # a period fits twice in the run
    spec = periodicity.spectral_period(bbr, bin_s, min_period_s, top)
    acf = periodicity.acf_period(bbr, bin_s, min_period_s, top)
    starts, size = periodicity.synchronised(entries_s)
    synced = starts[size >= sync_flows]
    total = bbr.mean() + np.asarray(cubic_bps, dtype=float).mean()
    return {"period_s": spec.period_s, "strength": spec.strength, "p_white": spec.p_white,
            "acf_period_s": acf.period_s, "probe_rtt_entries": len(entries_s),
            "synchronised_entries": len(synced),
            "sync_gap_s": float(np.median(np.diff(synced))) if len(synced) > 1 else np.nan,
            "amplitude": float(bbr.std() / bbr.mean()) if bbr.mean() > 0 else np.nan,
            "bbr_share": float(bbr.mean() / total), "utilisation": float(total / capacity_bps),
            "jain": jain(flow_means_bps), "bins": len(bbr)}


def measured_run(run_dir: Path, *, capacity_bps: float, bin_s: float, warmup_s: float,
                 min_period_s: float, max_period_s: float, sync_flows: int) -> dict:
    """The row of one stored testbed run (its per-flow goodput series and socket samples)
    at a bottleneck of ``capacity_bps``."""
    run_dir = Path(run_dir)
    series = data.load_table(run_dir / data.RUN_FILES["series"], "series")
    sockets = data.load_table(run_dir / data.RUN_FILES["sockets"], "sockets")
    b = periodicity.binned(series, bin_s, warmup_s)
    entries = periodicity.probe_rtt_entries(sockets)
    late = series[series.t_start_s >= warmup_s]
    per_flow = late.groupby("flow").bytes.sum() * 8 / (
        late.groupby("flow").t_end_s.max() - late.groupby("flow").t_start_s.min())
    return summarise(b.t_s.to_numpy(), b.bbr.to_numpy(), b.cubic.to_numpy(),
                     per_flow.to_numpy(), entries.t_s[entries.t_s >= warmup_s].to_numpy(),
                     bin_s=bin_s, capacity_bps=capacity_bps, min_period_s=min_period_s,
                     max_period_s=max_period_s, sync_flows=sync_flows)


def fluid_run(*, capacity_bps: float, rtt_s: float, duration_s: float, warmup_s: float,
              step_s: float, bin_s: float, min_period_s: float, max_period_s: float,
              sync_flows: int, n_cubic: int = 10, n_bbr: int = 10, buffer_bdp: float = 2.0,
              probe_rtt_interval_s: float | Sequence[float] = PROBE_RTT_INTERVAL_S) -> dict:
    """The row of one fluid-model run (published reading, BBRv1) of ``n_cubic`` CUBIC and
    ``n_bbr`` BBR flows, each BBR flow with its ProbeRTT interval (one value for all, or
    one per BBR flow); every flow starts at an equal share of the BDP, as P-F1-2's run.
    Goodput is each flow's sending rate thinned by the loss it meets at the queue
    (:func:`.fluid.metrics.goodput_pps`), sampled 50 times per bin. Memoised on disk."""
    from .fluid import solve

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
    return dict(fluid_cache.memo("fluctuation", inputs))


# the row is computed here and in the modules it reads, not only in the fluid model
@fluid_cache.computes("fluctuation", shaped_by=(sys.modules[__name__], periodicity, fairness))
def _model_row(inputs: dict) -> dict:
    """The run behind :func:`fluid_run` (its memo ``inputs``)."""
    from .fluid import metrics, solve

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


def measured_table(campaigns: Sequence[str], rtts_ms: Sequence[float], **kw) -> pd.DataFrame:
    """One row per stored run of the named fluctuation campaigns at the given RTTs, with its
    campaign, capacity, RTT, the BBR flows' start stagger and the repeat (``kw`` as
    :func:`measured_run`)."""
    from .testbed import campaign as campaign_mod

    rows = []
    for name in campaigns:
        camp = campaign_mod.load(data.DATA / "campaigns" / f"{name}.yaml")
        for point, d in campaign_mod.iter_runs(camp):
            rtt_ms = point.exp.rtt_s * 1e3
            if not any(np.isclose(rtt_ms, r) for r in rtts_ms):
                continue
            rows.append({"source": "measured", "campaign": name,
                         "capacity_mbps": point.exp.capacity_bps / 1e6, "rtt_ms": rtt_ms,
                         "stagger_s": point.exp.stagger_s, "run": f"{name} r{point.repeat}",
                         **measured_run(d, capacity_bps=point.exp.capacity_bps, **kw)})
    return pd.DataFrame(rows)
