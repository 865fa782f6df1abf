"""The periodic fluctuation of stored testbed runs, one row per run, read as
:func:`coexist.analysis.fluctuation.summarise` reads every run (P-F1-2, P-F3)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from ..analysis import periodicity
from ..analysis.fluctuation import summarise
from ..testbed import campaign as campaign_mod


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


def measured_table(campaigns: Sequence[str], rtts_ms: Sequence[float], **kw) -> pd.DataFrame:
    """One row per stored run of the named fluctuation campaigns at the given RTTs, with its
    campaign, capacity, RTT, the BBR flows' start stagger and the repeat (``kw`` as
    :func:`measured_run`)."""
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
