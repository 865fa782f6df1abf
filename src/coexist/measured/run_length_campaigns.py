"""The run-length study's rule applied to the campaigns' measured runs: each campaign's runs
with their window (run length and warm-up), settled run by run or setting by setting, and
the measured points a page draws at one capacity and RTT, with how a figure labels, orders
and explains the points the study does not vouch for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from .run_length_rule import DEEP_FROM_BDP, NOT_SETTLED, settle
from .run_length_study import WindowShare, study_reader, verdict


def campaign_runs(name: str, data_dir: Path = data.DATA) -> pd.DataFrame:
    """:func:`coexist.measured.runs.runs` of a campaign, with each run's length ``run_s``,
    its warm-up ``warmup_s`` and the ``campaign``: what :func:`settle` reads."""
    from . import runs as runs_mod

    table = runs_mod.campaign_table(name, data_dir)
    timing = _timing(table)
    per_run = runs_mod.runs(table)
    return per_run.assign(run_s=per_run["key"].map(timing["duration_s"]).astype(float),
                          warmup_s=per_run["key"].map(timing["warmup_s"]).astype(float),
                          campaign=name)


def settle_runs(per_run: pd.DataFrame, study: pd.DataFrame | None = None,
                data_dir: Path = data.DATA, read: WindowShare | None = None) -> pd.DataFrame:
    """Rows of :func:`coexist.measured.runs.runs` or :func:`~coexist.measured.runs.mix_runs`,
    each with its ``campaign`` (a ``mix_runs`` key carries it as a prefix), with
    :func:`settle`'s columns: each run is scored over its own campaign's window, from its
    warm-up to its end. ``study`` defaults to the study's :func:`verdict`. This is how a page
    of many flows asks whether its deep-buffer points may be used: the study measures one
    CUBIC against one BBR, so it vouches for a setting (capacity, RTT, buffer), and a
    setting it did not measure is not vouched for. ``read`` gives the study's share over a
    window (default :func:`study_reader`)."""
    if "campaign" not in per_run:
        raise ValueError("settle_runs needs each run's campaign (a 'campaign' column)")
    out = per_run.reset_index(drop=True)
    run_s, warmup_s = _windows(out, data_dir)
    study = verdict(data_dir=data_dir) if study is None else study
    return settle(out.assign(run_s=run_s, warmup_s=warmup_s), study,
                  read=read or study_reader(data_dir=data_dir))


def _timing(table: pd.DataFrame) -> pd.DataFrame:
    """Each run's ``duration_s`` and ``warmup_s`` of a campaign table, by key."""
    return table.drop_duplicates("key").set_index("key")[["duration_s", "warmup_s"]]


def _windows(rows: pd.DataFrame, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """Each row's run length and warm-up (s), read from its ``campaign``'s table by its
    ``key`` (which may carry the campaign as a prefix, as :func:`~coexist.measured.runs.
    mix_runs`' keys do); NaN where the table has no such run."""
    from . import runs as runs_mod

    run_s = np.full(len(rows), np.nan)
    warmup_s = np.full(len(rows), np.nan)
    for name in rows["campaign"].unique():
        timing = _timing(runs_mod.campaign_table(name, data_dir))
        sel = (rows["campaign"] == name).to_numpy()
        keys = rows.loc[sel, "key"].astype(str).str.removeprefix(f"{name}/")
        run_s[sel] = keys.map(timing["duration_s"]).to_numpy(dtype=float)
        warmup_s[sel] = keys.map(timing["warmup_s"]).to_numpy(dtype=float)
    return run_s, warmup_s


def settled_points(campaigns: Sequence[str], capacity_bps: float, rtt_s: float,
                   study: pd.DataFrame, value: str = "bbr_share",
                   with_study: bool = True, data_dir: Path = data.DATA) -> pd.DataFrame:
    """The measured points a page draws at one capacity and RTT: the mean, min and max of
    ``value`` over the repeats of each campaign's runs per buffer (``campaign``, ``run_s``,
    ``buffer_bdp``, ``mean``, ``min``, ``max``, ``n_runs``), each with its :func:`settle`
    status and reason. With ``with_study``, the run-length study's own deep-buffer runs at
    this setting are points too. ``counted`` marks the points a model is scored against:
    the settled ones, and at a buffer where several are, those of the longest runs."""
    from . import runs as runs_mod

    names = [*campaigns, *(["run_length"] if with_study else [])]
    per_run = pd.concat([campaign_runs(n, data_dir) for n in names], ignore_index=True)
    here = runs_mod.at(per_run, capacity_bps, rtt_s)
    if with_study:
        here = here[(here["campaign"] != "run_length") | (here["buffer_bdp"] >= DEEP_FROM_BDP)]
    columns = ["campaign", "run_s", "buffer_bdp", "mean", "min", "max", "n_runs", "settled",
               "status", "reason", "needs_s", "counted"]
    if here.empty:
        return pd.DataFrame({c: pd.Series(dtype=bool if c in ("settled", "counted") else
                                          str if c in ("campaign", "status", "reason")
                                          else float) for c in columns})
    here = settle(here.reset_index(drop=True), study, read=study_reader(data_dir=data_dir))
    by = ["campaign", "run_s", "warmup_s", "buffer_bdp"]
    g = here.groupby(by, dropna=False)
    points = pd.DataFrame({"mean": g[value].mean(), "min": g[value].min(),
                           "max": g[value].max(), "n_runs": g.size(),
                           "settled": g["settled"].all(), "status": g["status"].first(),
                           "reason": g["reason"].first(),
                           "needs_s": g["needs_s"].first()}).reset_index()
    points = points.sort_values(["buffer_bdp", "run_s"], ignore_index=True)
    # one point per buffer is scored: the settled one of the longest runs (the first of equals)
    settled = points[points["settled"].astype(bool)]
    best = settled.sort_values("run_s", na_position="first").groupby("buffer_bdp").tail(1).index
    points["counted"] = points.index.isin(best)
    return points[columns]


def study_label(run_s: float) -> str:
    """How a figure names the run-length study's own points."""
    return f"run-length study ({run_s:,.0f}-s runs)"


def point_labels(points: pd.DataFrame, measured: str) -> list[str]:
    """The series each of :func:`settled_points`' points is drawn as: ``measured`` for a
    campaign's settled point, :func:`study_label` for the study's, :data:`NOT_SETTLED`
    for a point the study does not vouch for."""
    return [NOT_SETTLED if not ok else study_label(s) if c == "run_length" else measured
            for ok, c, s in zip(points["settled"], points["campaign"], points["run_s"],
                                strict=True)]


def _buffer_list(buffers: Sequence[float], fmt: str = "{:g}") -> str:
    values = [fmt.format(b) for b in sorted(set(float(b) for b in buffers))]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def not_settled_text(points: pd.DataFrame) -> str:
    """Which drawn points the run-length study does not vouch for and why, in one
    sentence; the empty string where it vouches for every point drawn."""
    bad = points[~points["settled"].astype(bool)]
    if bad.empty:
        return ""
    parts = [f"{_buffer_list(g['buffer_bdp'])} BDP ({reason})"
             for reason, g in bad.groupby("reason", sort=False)]
    runs = sorted(set(float(s) for s in bad["run_s"]))
    lengths = _buffer_list(runs, "{:,.0f}").replace(" and ", " or ")
    return (f"The {lengths}-s points at " + "; at ".join(parts)
            + f" are {NOT_SETTLED}.")


def settle_settings(frame: pd.DataFrame, mix: pd.DataFrame, study: pd.DataFrame,
                    data_dir: Path = data.DATA) -> pd.DataFrame:
    """``frame`` (rows of settings: capacity_bps, rtt_s, buffer_bdp, e.g. the equilibria
    found there) with :func:`settle`'s columns, each setting's run length being the shortest
    of its runs in ``mix`` (:func:`coexist.measured.runs.mix_runs`' rows, whose keys carry
    their campaign's name): an equilibrium is only as settled as its shortest run, scored
    from its latest warm-up."""
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    # no run stored at the settings asked for: no window, so no deep setting is vouched for
    run_s, warmup_s = _windows(mix.reset_index(drop=True), data_dir)
    m = mix[setting].astype(float).reset_index(drop=True).assign(run_s=run_s,
                                                                 warmup_s=warmup_s)
    # a setting's window: from its latest warm-up to its shortest run's end
    window = m.groupby(setting, as_index=False).agg(run_s=("run_s", "min"),
                                                   warmup_s=("warmup_s", "max"))
    out = frame.reset_index(drop=True)
    keys = out[setting].astype(float).merge(window, on=setting, how="left")
    return settle(out.assign(run_s=keys["run_s"].to_numpy(),
                             warmup_s=keys["warmup_s"].to_numpy()), study,
                  read=study_reader(data_dir=data_dir))


def series_order(labels: Sequence[str], measured: str) -> list[str]:
    """The point series of :func:`point_labels` in a figure's legend order: the campaign's
    own first, the study's next, the points not settled last."""
    return sorted(dict.fromkeys(labels), key=lambda s: (s == NOT_SETTLED, s != measured))
