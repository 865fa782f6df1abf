"""The periodic fluctuation in numbers, one row per run: measured runs
(:mod:`coexist.measured.fluctuation`) and fluid-model runs
(:mod:`coexist.fluid.studies.fluctuation`) are read the same way, here, so they can share
a capacity axis.

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
  **Jain's index** of every flow's mean goodput, (sum x)^2 / (n sum x^2);
- the **period test** (:func:`.periodicity.period_test`): the dominant period, its
  surrogate p-value, where it lies against ProbeRTT's band and the verdict;
- the **dips** (:func:`dip`): how far the total BBR goodput, and the link's total, fall in
  the ``DIP_WINDOW_S`` after a synchronised entry, as fractions of their means; and the
  same at the controls, the times halfway between consecutive synchronised entries, where
  no entry is, so that a dip can be told from noise. The fluctuation paper describes
  throughput as "severely low" during part of each period; these say how low it goes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.params import invalid
from . import fairness, periodicity

#: BBRv1's ProbeRTT interval in Linux and in the published model, s
PROBE_RTT_INTERVAL_S = 10.0
#: how long after a synchronised ProbeRTT entry a dip is looked for, s: ProbeRTT's 200 ms
#: at 4 packets, the round trips to refill the pipe and a bin on each side
DIP_WINDOW_S = 2.0
#: how long before an entry the level a dip falls from is read, s
DIP_BEFORE_S = 3.0


def dip(t_s: np.ndarray, x: np.ndarray, events_s: np.ndarray,
        window_s: float = DIP_WINDOW_S, before_s: float = DIP_BEFORE_S) -> float:
    """How far ``x`` (bins ending at ``t_s``) falls after the events, as a fraction of its
    mean: the event-triggered average of ``x`` (:func:`.periodicity.event_average`), its
    mean over the ``before_s`` before the event less its lowest value in the ``window_s``
    after. Averaging over the events first keeps one noisy bin from reading as a dip; the
    lowest of a few noisy values still sits a little below their mean, which the same
    measure at times with no event (a control) shows. NaN without an event whose window
    lies inside the series."""
    t, v = np.asarray(t_s, dtype=float), np.asarray(x, dtype=float)
    if not v.mean() > 0 or len(t) < 2:
        return np.nan
    ea = periodicity.event_average(t, v, np.asarray(events_s, dtype=float), before_s,
                                   window_s)
    if ea.empty:
        return np.nan
    lag, mean = ea.lag_s.to_numpy(), ea["mean"].to_numpy()
    after = mean[(lag > 0) & (lag <= window_s + 1e-9)]
    if not len(after):
        return np.nan
    return float((mean[lag < 0].mean() - after.min()) / v.mean())


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
    cubic = np.asarray(cubic_bps, dtype=float)
    total = bbr.mean() + cubic.mean()
    test = periodicity.period_test(bbr, bin_s, min_period_s, top)
    controls = (synced[:-1] + synced[1:]) / 2  # halfway between synchronised entries
    return {"period_s": spec.period_s, "strength": spec.strength, "p_white": spec.p_white,
            "acf_period_s": acf.period_s, "probe_rtt_entries": len(entries_s),
            "synchronised_entries": len(synced),
            "sync_gap_s": float(np.median(np.diff(synced))) if len(synced) > 1 else np.nan,
            "amplitude": float(bbr.std() / bbr.mean()) if bbr.mean() > 0 else np.nan,
            "bbr_share": float(bbr.mean() / total), "utilisation": float(total / capacity_bps),
            "jain": fairness.jain(flow_means_bps, strict=True), "bins": len(bbr),
            "test_period_s": test.period_s, "test_p": test.p_surrogate,
            "test_relation": test.relation, "verdict": test.verdict,
            "dip_bbr": dip(t_s, bbr, synced), "dip_total": dip(t_s, bbr + cubic, synced),
            "dip_bbr_control": dip(t_s, bbr, controls),
            "dip_total_control": dip(t_s, bbr + cubic, controls)}


def panels(t_s: np.ndarray, bbr_bps: np.ndarray, cubic_bps: np.ndarray,
           entries_s: np.ndarray, *, source: str, bin_s: float, min_period_s: float,
           max_period_s: float, sync_flows: int, goodput: bool) -> pd.DataFrame:
    """The drawn rows of one run in P-F1-2's figure (columns ``panel``, ``series``,
    ``t_s``, ``value``), from its binned BBR and CUBIC totals (bit/s) and the BBR flows'
    ProbeRTT entries after the warm-up; ``source`` names the run's kind ("measured",
    "fluid model"):

    - ``P-F1`` (when ``goodput``): each algorithm's total goodput over time, Mbit/s;
    - ``P-F1 ticks`` (when ``goodput``): the groups of ProbeRTT entries and their sizes;
    - ``P-F2``: the BBR periodogram in [min, max] period, power over the mean power there;
    - ``aligned``: the BBR goodput averaged from 3 s before to 12 s after each synchronised
      entry (:func:`.periodicity.event_average`), Mbit/s.
    """
    t = np.asarray(t_s, dtype=float)
    bbr = np.asarray(bbr_bps, dtype=float) / 1e6
    starts, size = periodicity.synchronised(entries_s)
    parts = []
    if goodput:
        for cca, x in (("bbr", bbr), ("cubic", np.asarray(cubic_bps, dtype=float) / 1e6)):
            parts.append(pd.DataFrame({"panel": "P-F1", "series": f"{source} {cca.upper()}",
                                       "t_s": t, "value": x}))
        parts.append(pd.DataFrame({"panel": "P-F1 ticks",
                                   "series": np.where(size >= sync_flows,
                                                      "ProbeRTT, synchronised", "ProbeRTT"),
                                   "t_s": starts, "value": size.astype(float)}))
    pg = periodicity.periodogram(bbr, bin_s)
    pg = pg[(pg.period_s >= min_period_s) & (pg.period_s <= max_period_s)]
    parts.append(pd.DataFrame({"panel": "P-F2", "series": source, "t_s": pg.period_s,
                               "value": pg.power / pg.power.mean()}))
    ea = periodicity.event_average(t, bbr, starts[size >= sync_flows], 3, 12)
    parts.append(pd.DataFrame({"panel": "aligned", "series": source, "t_s": ea.lag_s,
                               "value": ea["mean"]}))
    return pd.concat(parts, ignore_index=True)
