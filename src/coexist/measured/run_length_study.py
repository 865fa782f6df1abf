"""The testbed's run-length study: how long a measured run must be, read from one long run
as its own shorter prefixes.

The run-length campaign (``data/campaigns/run_length.yaml``) runs one CUBIC against one
BBR flow for 1,200 s. Read as its first ``L`` seconds and scored on the last 40 % of them
(as the whole run is, and as Sarpkaya et al. scored their 1,000-s FABRIC runs on their last
400 s), one run gives the share BBR would have had in a run of every length ``L``: the
prefixes of 120, 300 and 600 s are what a shorter campaign would have measured, up to the
run's own randomness. :func:`settled_length` then picks, per setting, the shortest length
whose share is within a tolerance of the longest's: the run length a campaign needs there.
:func:`verdict` is the study's word on every setting it plans, and :func:`study_reader`
reads its runs over another campaign's window, for the rule that settles the campaigns'
runs (:mod:`coexist.measured.run_length_rule`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
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
        share, intervals = window_share(series, start, length)
        rows.append({"length_s": float(length), "scored_from_s": start, "bbr_share": share,
                     "intervals": intervals})
    return pd.DataFrame(rows)


def window_share(series: pd.DataFrame, start_s: float, end_s: float) -> tuple[float, int]:
    """BBR's share of the goodput of one run's series over ``[start_s, end_s)`` (an interval
    counts when it starts inside), and the number of BBR intervals counted."""
    part = series[(series["t_start_s"] >= start_s) & (series["t_start_s"] < end_s)]
    by = part.groupby("cca")["bytes"].sum()
    total = float(by.sum())
    return (float(by.get("bbr", 0.0)) / total if total > 0 else np.nan,
            int((part["cca"] == "bbr").sum()))


def stored_runs(campaign: str = "run_length",
                data_dir: Path = data.DATA) -> list[tuple[dict, Path]]:
    """Every valid stored run of ``campaign`` with its setting (capacity_mbps, rtt_ms,
    buffer_bdp, repeat), in the campaign's grid order."""
    from ..testbed import campaign as campaign_mod

    camp = campaign_mod.load(Path(data_dir) / "campaigns" / f"{campaign}.yaml")
    return [({"capacity_mbps": point.exp.capacity_bps / 1e6, "rtt_ms": point.exp.rtt_s * 1e3,
              "buffer_bdp": float(point.exp.buffer_bdp), "repeat": point.repeat}, d)
            for point, d in campaign_mod.iter_runs(camp, data_dir)]


def campaign_prefixes(run_dirs: Sequence[tuple[dict, Path]],
                      lengths_s: Sequence[float] = LENGTHS_S,
                      scored: float = SCORED) -> pd.DataFrame:
    """:func:`prefix_shares` of every stored run, sorted by setting, repeat and length:
    ``run_dirs`` pairs each run's setting (capacity_mbps, rtt_ms, buffer_bdp, repeat) with
    its directory (:func:`stored_runs`)."""
    frames = []
    for setting, d in run_dirs:
        frames.append(prefix_shares(_series(str(d)), lengths_s, scored).assign(**setting))
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


def planned_repeats(campaign: str = "run_length", data_dir: Path = data.DATA) -> pd.DataFrame:
    """The repeats the campaign plans per setting: ``capacity_mbps``, ``rtt_ms``,
    ``buffer_bdp`` and ``planned``."""
    from ..testbed import campaign as campaign_mod

    camp = campaign_mod.load(Path(data_dir) / "campaigns" / f"{campaign}.yaml")
    keys = ["capacity_mbps", "rtt_ms", "buffer_bdp"]
    return pd.DataFrame([{"capacity_mbps": p.exp.capacity_bps / 1e6,
                          "rtt_ms": p.exp.rtt_s * 1e3, "buffer_bdp": float(p.exp.buffer_bdp)}
                         for p in camp.points]).value_counts(keys).rename("planned").reset_index()


def verdict(campaign: str = "run_length", lengths_s: Sequence[float] = LENGTHS_S,
            scored: float = SCORED, tolerance: float = TOLERANCE,
            data_dir: Path = data.DATA) -> pd.DataFrame:
    """The study's verdict on every setting it plans: :func:`settled_length` of the runs
    stored, beside ``planned`` (:func:`planned_repeats`). A setting with no run stored yet
    has ``repeats`` 0 and no ``settled_s``, so nothing can lean on it."""
    keys = ["capacity_mbps", "rtt_ms", "buffer_bdp"]
    planned = planned_repeats(campaign, data_dir)
    prefixes = campaign_prefixes(stored_runs(campaign, data_dir), lengths_s, scored)
    read = (settled_length(prefixes, tolerance) if len(prefixes)
            else pd.DataFrame({c: pd.Series(dtype=float) for c in [
                *keys, "repeats", "longest_share", "settled_s", "before_longest",
                "worst_gap"]}))
    out = planned.merge(read, on=keys, how="left")
    out["repeats"] = out["repeats"].fillna(0).astype(int)
    return out.sort_values(keys, ignore_index=True)


def status_text(repeats: int, planned: int, before_longest: bool, settled_s: float) -> str:
    """What the study's verdict on one setting (a row of :func:`verdict`) lets other pages
    do with it, in a few words: a setting is settled only with all its planned runs stored
    and a share that settles before the longest read, the rule
    :func:`~coexist.measured.run_length_rule.settle` applies to the campaigns' points."""
    if repeats < planned:
        return f"not settled: {repeats} of its {planned} runs stored"
    if not before_longest:
        return "not settled: still moves at its longest read"
    return f"settled from {settled_s:,g} s"


@functools.lru_cache(maxsize=64)
def _series(run_dir: str) -> pd.DataFrame:
    return data.load_table(Path(run_dir) / data.RUN_FILES["series"], "series")


#: how a setting's window is read against the study: (capacity_mbps, rtt_ms, buffer_bdp,
#: start_s, end_s) -> BBR's share there (:func:`study_reader` by default)
WindowShare = Callable[[float, float, float, float, float], float]


def study_reader(campaign: str = "run_length", data_dir: Path = data.DATA) -> WindowShare:
    """What the study's runs at a setting give BBR when scored over a campaign's own window
    ``[start_s, end_s)``: the mean over its stored repeats (NaN where none is). The runs
    are listed once, when the reader is made."""
    runs = stored_runs(campaign, data_dir)

    def read(capacity_mbps: float, rtt_ms: float, buffer_bdp: float, start_s: float,
             end_s: float) -> float:
        shares = [window_share(_series(str(d)), start_s, end_s)[0] for setting, d in runs
                  if np.isclose(setting["capacity_mbps"], capacity_mbps)
                  and np.isclose(setting["rtt_ms"], rtt_ms)
                  and np.isclose(setting["buffer_bdp"], buffer_bdp)]
        return float(np.mean(shares)) if shares else np.nan

    return read


def first_and_longest_text(prefixes: pd.DataFrame, scored: float = SCORED) -> str:
    """Per setting of :func:`campaign_prefixes` (read with ``scored``), BBR's mean share at
    its first and at its longest read, each over the part of the read it is scored on (its
    last ``scored``), as one clause each ("0.18 over 72-120 s and 0.37 over 720-1,200 s at
    50 Mbit/s, 30 BDP"; one value where the runs are read at one length only), joined by
    semicolons."""
    if not 0 < scored <= 1:
        raise invalid("scored", scored, "0 < scored <= 1")

    def span(length_s: float) -> str:
        return f"{(1 - scored) * length_s:,.0f}-{length_s:,.0f} s"

    parts = []
    for (c, b), g in prefixes.groupby(["capacity_mbps", "buffer_bdp"]):
        by_len = g.groupby("length_s")["bbr_share"].mean()
        first = f"{by_len.iloc[0]:.2f} over {span(by_len.index[0])}"
        last = ("" if len(by_len) == 1 else
                f" and {by_len.iloc[-1]:.2f} over {span(by_len.index[-1])}")
        parts.append(f"{first}{last} at {c:g} Mbit/s, {b:g} BDP")
    return "; ".join(parts)
