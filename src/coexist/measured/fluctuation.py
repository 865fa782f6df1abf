"""The periodic fluctuation of stored testbed runs, one row per run, read as
:func:`coexist.analysis.fluctuation.summarise` reads every run (P-F1-2, P-F3), with the
drawn rows of P-F1-2 (:func:`coexist.analysis.fluctuation.panels`) and CUBIC's epoch from
the runs' socket samples."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from ..analysis import periodicity
from ..analysis.fluctuation import panels, summarise
from ..fluid.model import cubic
from ..testbed import campaign as campaign_mod


def _read(run_dir: Path, bin_s: float, warmup_s: float
          ) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, pd.DataFrame]:
    """A stored run's goodput series, its per-algorithm totals in ``bin_s`` bins after the
    warm-up, the BBR flows' ProbeRTT entry times after it (s) and its socket samples."""
    run_dir = Path(run_dir)
    series = data.load_table(run_dir / data.RUN_FILES["series"], "series")
    sockets = data.load_table(run_dir / data.RUN_FILES["sockets"], "sockets")
    b = periodicity.binned(series, bin_s, warmup_s)
    entries = periodicity.probe_rtt_entries(sockets)
    return series, b, entries.t_s[entries.t_s >= warmup_s].to_numpy(), sockets


def measured_run(run_dir: Path, *, capacity_bps: float, bin_s: float, warmup_s: float,
                 min_period_s: float, max_period_s: float, sync_flows: int) -> dict:
    """The row of one stored testbed run (its per-flow goodput series and socket samples)
    at a bottleneck of ``capacity_bps``."""
    series, b, entries, _ = _read(run_dir, bin_s, warmup_s)
    late = series[series.t_start_s >= warmup_s]
    per_flow = late.groupby("flow").bytes.sum() * 8 / (
        late.groupby("flow").t_end_s.max() - late.groupby("flow").t_start_s.min())
    return summarise(b.t_s.to_numpy(), b.bbr.to_numpy(), b.cubic.to_numpy(),
                     per_flow.to_numpy(), entries, bin_s=bin_s, capacity_bps=capacity_bps,
                     min_period_s=min_period_s, max_period_s=max_period_s,
                     sync_flows=sync_flows)


def _runs(campaigns: Sequence[str], rtts_ms: Sequence[float]
          ) -> Iterator[tuple[str, campaign_mod.Point, Path]]:
    """The stored runs of the named campaigns at the given RTTs, in campaign order."""
    for name in campaigns:
        camp = campaign_mod.load(data.DATA / "campaigns" / f"{name}.yaml")
        for point, d in campaign_mod.iter_runs(camp):
            if any(np.isclose(point.exp.rtt_s * 1e3, r) for r in rtts_ms):
                yield name, point, d


def measured_table(campaigns: Sequence[str], rtts_ms: Sequence[float], **kw) -> pd.DataFrame:
    """One row per stored run of the named fluctuation campaigns at the given RTTs, with its
    campaign, capacity, RTT, the BBR flows' start stagger and the repeat (``kw`` as
    :func:`measured_run`)."""
    rows = [{"source": "measured", "campaign": name,
             "capacity_mbps": point.exp.capacity_bps / 1e6, "rtt_ms": point.exp.rtt_s * 1e3,
             "stagger_s": point.exp.stagger_s, "run": f"{name} r{point.repeat}",
             "repeat": point.repeat,
             **measured_run(d, capacity_bps=point.exp.capacity_bps, **kw)}
            for name, point, d in _runs(campaigns, rtts_ms)]
    # no run stored at these RTTs: the same columns, no row (the page says so)
    return pd.DataFrame(rows, columns=None if rows else [
        "source", "campaign", "capacity_mbps", "rtt_ms", "stagger_s", "run", "repeat"])


def measured_panels(campaign: str, rtts_ms: Sequence[float], *, bin_s: float,
                    warmup_s: float, min_period_s: float, max_period_s: float,
                    sync_flows: int) -> pd.DataFrame:
    """P-F1-2's drawn rows of every stored run of ``campaign`` at the given RTTs, labelled
    by RTT and run; the goodput over time of each RTT's first repeat only."""
    out = []
    for _, point, d in _runs([campaign], rtts_ms):
        _, b, entries, _ = _read(d, bin_s, warmup_s)
        rtt_ms = point.exp.rtt_s * 1e3
        p = panels(b.t_s.to_numpy(), b.bbr.to_numpy(), b.cubic.to_numpy(), entries,
                   source="measured", bin_s=bin_s, min_period_s=min_period_s,
                   max_period_s=max_period_s, sync_flows=sync_flows,
                   goodput=point.repeat == 0)
        p.insert(1, "rtt_ms", rtt_ms)
        p.insert(2, "run", f"{rtt_ms:g} ms, repeat {point.repeat}")
        out.append(p)
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(
        columns=["panel", "rtt_ms", "run", "series", "t_s", "value"])


def cubic_epochs(campaign: str, rtts_ms: Sequence[float], warmup_s: float) -> pd.DataFrame:
    """CUBIC's epoch ``K`` (:func:`coexist.fluid.model.cubic.k_time`) in every stored run of
    ``campaign`` at the given RTTs, from the 90th percentile of the CUBIC flows' sampled
    window after the warm-up (an upper estimate of ``W_max``)."""
    rows = []
    for _, point, d in _runs([campaign], rtts_ms):
        sockets = data.load_table(Path(d) / data.RUN_FILES["sockets"], "sockets")
        late = sockets[(sockets.cca == "cubic") & (sockets.t_s >= warmup_s)]
        w = float(late.cwnd.astype(float).quantile(0.9))
        rtt_ms = point.exp.rtt_s * 1e3
        rows.append({"rtt_ms": rtt_ms, "run": f"{rtt_ms:g} ms, repeat {point.repeat}",
                     "cubic_cwnd_p90_pkts": w, "cubic_epoch_K_s": float(cubic.k_time(w))})
    return pd.DataFrame(rows, columns=["rtt_ms", "run", "cubic_cwnd_p90_pkts",
                                       "cubic_epoch_K_s"])
