"""How long a testbed run must be: one long run read as its own shorter prefixes.

The run-length campaign (``data/campaigns/run_length.yaml``) runs one CUBIC against one
BBR flow for 1,200 s. Read as its first ``L`` seconds and scored on the last 40 % of them
(as the whole run is, and as Sarpkaya et al. scored their 1,000-s FABRIC runs on their last
400 s), one run gives the share BBR would have had in a run of every length ``L``: the
prefixes of 120, 300 and 600 s are what a shorter campaign would have measured, up to the
run's own randomness. :func:`settled_length` then picks, per setting, the shortest length
whose share is within a tolerance of the longest's: the run length a campaign needs there.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from ..core.params import invalid

#: the prefixes each run is read at, s (the last is the whole run)
LENGTHS_S = (120.0, 300.0, 600.0, 1200.0)
#: the scored part of each prefix: its last 40 %
SCORED = 0.4
#: a share within this of the longest prefix's counts as settled
TOLERANCE = 0.02


def prefix_shares(series: pd.DataFrame, lengths_s: Sequence[float] = LENGTHS_S,
                  scored: float = SCORED) -> pd.DataFrame:
    """BBR's share of the goodput in each prefix of one run, scored on its last ``scored``
    part: one row per length with ``length_s``, ``scored_from_s``, ``bbr_share`` and the
    ``intervals`` of the BBR flow counted. ``series`` is a run's per-flow goodput series
    (``data.RUN_FILES["series"]``: flow, cca, t_start_s, t_end_s, bytes); an interval
    counts when it starts inside the scored span. A length longer than the run is
    refused."""
    if not 0 < scored <= 1:
        raise invalid("scored", scored, "0 < scored <= 1")
    end = float(series["t_end_s"].max())
    rows = []
    for length in lengths_s:
        if not 0 < length <= end + 1.0:  # the last interval ends within a second of the run
            raise invalid("lengths_s", length, f"0 < length <= the run's {end:.0f} s")
        start = length * (1.0 - scored)
        part = series[(series["t_start_s"] >= start) & (series["t_start_s"] < length)]
        by = part.groupby("cca")["bytes"].sum()
        total = float(by.sum())
        rows.append({"length_s": float(length), "scored_from_s": start,
                     "bbr_share": float(by.get("bbr", 0.0)) / total if total > 0 else np.nan,
                     "intervals": int((part["cca"] == "bbr").sum())})
    return pd.DataFrame(rows)


def stored_runs(campaign: str = "run_length") -> list[tuple[dict, Path]]:
    """Every valid stored run of ``campaign`` with its setting (capacity_mbps, rtt_ms,
    buffer_bdp, repeat), in the campaign's grid order."""
    from ..testbed import campaign as campaign_mod

    camp = campaign_mod.load(data.DATA / "campaigns" / f"{campaign}.yaml")
    return [({"capacity_mbps": point.exp.capacity_bps / 1e6, "rtt_ms": point.exp.rtt_s * 1e3,
              "buffer_bdp": float(point.exp.buffer_bdp), "repeat": point.repeat}, d)
            for point, d in campaign_mod.iter_runs(camp)]


def campaign_prefixes(run_dirs: Sequence[tuple[dict, Path]],
                      lengths_s: Sequence[float] = LENGTHS_S,
                      scored: float = SCORED) -> pd.DataFrame:
    """:func:`prefix_shares` of every stored run, sorted by setting, repeat and length:
    ``run_dirs`` pairs each run's setting (capacity_mbps, rtt_ms, buffer_bdp, repeat) with
    its directory (:func:`stored_runs`)."""
    frames = []
    for setting, d in run_dirs:
        series = data.load_table(Path(d) / data.RUN_FILES["series"], "series")
        frames.append(prefix_shares(series, lengths_s, scored).assign(**setting))
    columns = ["capacity_mbps", "rtt_ms", "buffer_bdp", "repeat", "length_s", "scored_from_s",
               "bbr_share", "intervals"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns].sort_values(
        ["capacity_mbps", "rtt_ms", "buffer_bdp", "repeat", "length_s"], ignore_index=True)


def settled_length(prefixes: pd.DataFrame, tolerance: float = TOLERANCE) -> pd.DataFrame:
    """Per setting (capacity, RTT, buffer), the shortest run length from which the BBR
    share (the mean over the repeats stored) stays within ``tolerance`` of the longest
    length's: one row with the setting, ``repeats``, ``longest_share``, ``settled_s`` (the
    longest length itself when no shorter one agrees: the longest runs may be too short
    too), ``before_longest`` (whether a shorter length agrees) and the largest gap of a
    shorter length from the longest (``worst_gap``)."""
    if not 0 < tolerance < 1:
        raise invalid("tolerance", tolerance, "0 < tolerance < 1")
    rows = []
    keys = ["capacity_mbps", "rtt_ms", "buffer_bdp"]
    for setting, g in prefixes.groupby(keys, sort=True):
        mean = g.groupby("length_s")["bbr_share"].mean().sort_index()
        longest = float(mean.iloc[-1])
        gaps = (mean - longest).abs()
        shorter = gaps.iloc[:-1]
        # the shortest length from which every longer one stays within the tolerance
        settled = mean.index[-1]
        for length in reversed(shorter.index):
            if gaps[length] <= tolerance:
                settled = length
            else:
                break
        rows.append({**dict(zip(keys, setting, strict=True)),
                     "repeats": int(g["repeat"].nunique()), "longest_share": longest,
                     "settled_s": float(settled),
                     "before_longest": bool(settled != mean.index[-1]),
                     "worst_gap": float(shorter.max()) if len(shorter) else np.nan})
    return pd.DataFrame(rows)
