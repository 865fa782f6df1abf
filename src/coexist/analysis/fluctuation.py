"""The periodic fluctuation in numbers, one row per run: measured runs
(:mod:`coexist.measured.fluctuation`) and fluid-model runs (:mod:`coexist.fluid.fluctuation`)
are read the same way, here, so they can share a capacity axis.

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

import numpy as np

from ..core.params import invalid
from . import fairness, periodicity

#: BBRv1's ProbeRTT interval in Linux and in the published model, s
PROBE_RTT_INTERVAL_S = 10.0


def jain(x) -> float:
    """Jain's fairness index of a run's flow rates (:func:`.fairness.jain`), refusing what
    is not a set of rates: a run row must not carry a NaN index silently."""
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
