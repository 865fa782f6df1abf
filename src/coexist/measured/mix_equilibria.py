"""Nash equilibria found in the measured runs of CUBIC and BBR mixes: which mixes of a
setting no flow gains by leaving (the unilateral-deviation test of
:mod:`coexist.closed_form.nash` on the per-run table of :mod:`coexist.measured.runs`),
whether each campaign finds the same ones, and how firm each is when the test is run on
each run alone."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..closed_form import nash
from . import runs as measured


def equilibria_by_campaign(per_run: pd.DataFrame, n_flows: int,
                           tol: float = 0.0) -> pd.DataFrame:
    """Each campaign's own observed equilibria at every setting (capacity, RTT, buffer) that
    more than one campaign measured: the check that pooling them as repeats
    (:func:`mix_runs`) is sound, since campaigns that measure one experiment should agree.

    ``per_run`` is :func:`mix_runs` output. One row per setting and campaign, with its mix
    count and ``equilibria`` (a tuple of BBR-flow counts; empty while the campaign lacks
    some of the ``n_flows + 1`` mixes).
    """
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    cols = [*setting, "campaign", "mixes", "equilibria"]
    if per_run.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for key, g in per_run.groupby(setting):
        if g["campaign"].nunique() < 2:
            continue
        for name, c in g.groupby("campaign"):
            ne = observed_equilibria(c, n_flows, tol)["equilibrium_bbr_flows"].dropna()
            rows.append({**dict(zip(setting, key, strict=True)), "campaign": name,
                         "mixes": int(c["n_bbr"].nunique()),
                         "equilibria": tuple(float(v) for v in ne)})
    return pd.DataFrame(rows, columns=cols)


def per_flow_goodput(per_run: pd.DataFrame, n_flows: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean goodput of one CUBIC and of one BBR flow in each run of ``n_flows`` flows (the
    runs' algorithm totals over their flow counts), NaN where the mix has no such flow: the
    values the unilateral-deviation test compares."""
    k = per_run["n_bbr"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.where(k < n_flows, per_run["cubic_bps"] / (n_flows - k), np.nan),
                np.where(k > 0, per_run["bbr_bps"] / k, np.nan))


def run_order(per_run: pd.DataFrame) -> pd.DataFrame:
    """``per_run`` with a ``draw`` column numbering the runs of each mix of a setting 0, 1,
    ... in a fixed order: by campaign as in ``MIX_CAMPAIGNS``, then repeat. Draw 0 is each
    mix's first run, so ``observed_equilibria(t[t.draw == 0], n)`` is what the runs would
    have given had every mix been measured once."""
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    rank = {c: i for i, c in enumerate(measured.MIX_CAMPAIGNS)}
    campaign = per_run["campaign"] if "campaign" in per_run else pd.Series("", index=per_run.index)
    t = per_run.assign(_rank=campaign.map(rank).fillna(len(rank)), _campaign=campaign)
    t = t.sort_values([*setting, "n_flows", "n_bbr", "_rank", "_campaign", "repeat", "key"])
    t = t.assign(draw=t.groupby([*setting, "n_flows", "n_bbr"]).cumcount())
    return t.drop(columns=["_rank", "_campaign"])


def switch_gains(per_run: pd.DataFrame, n_flows: int, tol: float = 0.0) -> pd.DataFrame:
    """The unilateral-deviation test run by run, where mixes were measured more than once:
    is an equilibrium of the averaged runs one in each run on its own?

    ``per_run`` is :func:`mix_runs` (or :func:`runs`) output. Draw *i* takes the *i*-th
    run of every mix (:func:`run_order`). Mix ``k`` is tested wherever it and its
    neighbours ``k - 1`` and ``k + 1`` (those that exist) have at least two runs each: the
    three mixes the test reads, since a CUBIC flow that switches gets a BBR flow's goodput
    in ``k + 1`` and a BBR flow that switches a CUBIC flow's in ``k - 1``
    (:func:`coexist.closed_form.nash.equilibrium_mask`).

    One row per setting, tested mix and draw (``run 1``, ``run 2``, ... and ``mean``, the
    average over all runs that :func:`observed_equilibria` uses). ``gain`` is the larger
    relative gain of the two switches (negative: neither pays, by that margin), ``switch``
    names it, and ``equilibrium`` is ``gain <= tol``, the test's own criterion.
    """
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    cols = [*setting, "n_bbr", "draw", "runs", "gain", "switch", "equilibrium"]
    sel = per_run[per_run["n_flows"] == n_flows]
    if sel.empty:
        return pd.DataFrame(columns=cols)
    cubic, bbr = per_flow_goodput(sel, n_flows)
    sel = run_order(sel.assign(cubic=cubic, bbr=bbr))

    def gain(new: float, old: float) -> float:
        if old > 0:
            return new / old - 1.0
        return np.inf if new > 0 else 0.0

    rows = []
    for key, g in sel.groupby(setting):
        count = g.groupby("n_bbr").size()
        mean = g.groupby("n_bbr")[["cubic", "bbr"]].mean()
        for m in range(n_flows + 1):
            need = [j for j in (m - 1, m, m + 1) if 0 <= j <= n_flows]
            n_runs = min(int(count.get(j, 0)) for j in need)
            if n_runs < 2:
                continue
            draws = [(f"run {i + 1}", g[g["draw"] == i].set_index("n_bbr")[["cubic", "bbr"]])
                     for i in range(n_runs)] + [("mean", mean)]
            for name, v in draws:
                options = []
                if m < n_flows:
                    options.append((gain(v.at[m + 1, "bbr"], v.at[m, "cubic"]), "CUBIC→BBR"))
                if m > 0:
                    options.append((gain(v.at[m - 1, "cubic"], v.at[m, "bbr"]), "BBR→CUBIC"))
                best, switch = max(options)
                rows.append({**dict(zip(setting, key, strict=True)), "n_bbr": m,
                             "draw": name, "runs": n_runs, "gain": float(best),
                             "switch": switch, "equilibrium": bool(best <= tol)})
    return pd.DataFrame(rows, columns=cols)


#: the columns that make a measured setting
SETTING = ["capacity_bps", "rtt_s", "buffer_bdp"]


def run_margins(gains: pd.DataFrame) -> pd.DataFrame:
    """Each tested mix of :func:`switch_gains` over its runs alone (the ``mean`` draw left
    out), indexed by setting and ``n_bbr``: ``runs``, ``held`` (every run passes the
    test), ``margin`` (the mean over the runs of minus each run's larger switch gain) and
    ``margin_se`` (the runs' standard deviation of it over the square root of their number)."""
    return gains[gains["draw"] != "mean"].groupby([*SETTING, "n_bbr"]).agg(
        runs=("runs", "first"), held=("equilibrium", "all"),
        margin=("gain", lambda g: float(-g.mean())),
        margin_se=("gain", lambda g: float(g.std(ddof=1) / np.sqrt(len(g)))))


def equilibrium_firmness(per_run: pd.DataFrame, n_flows: int, tol: float = 0.0,
                         z: float = nash.SPREAD_Z) -> pd.DataFrame:
    """:func:`observed_equilibria` (averaged over the runs) with how firm each one is.

    ``runs_per_mix`` is the fewest runs among the mixes the deviation test reads for it
    (the equilibrium and its neighbours one switch away, :func:`switch_gains`);
    ``each_run`` is whether every run alone passes the test too where that is at least two
    (True/False), and None where one of those mixes was measured once, so an equilibrium
    resting on single runs is never reported as firm. Settings still missing mixes keep
    their NaN row with both columns None.

    ``margin`` is the mean over the runs of each run's margin (minus its larger switch gain)
    and ``margin_se`` its standard error (the runs' standard deviation over the square root
    of their number). ``clear`` is whether the margin exceeds ``z`` of them, the precision the
    fluid model's equilibrium sets are searched at (:data:`coexist.closed_form.nash.SPREAD_Z`
    standard errors): an equilibrium that each run passes, but by less than the runs differ
    among themselves, is one a further run could overturn. None where ``each_run`` is.
    """
    observed = observed_equilibria(per_run, n_flows, tol)
    tested = run_margins(switch_gains(per_run, n_flows, tol))
    fewest, each, margin, se, clear = [], [], [], [], []
    for r in observed.itertuples():
        key = None if np.isnan(r.equilibrium_bbr_flows) else (
            r.capacity_bps, r.rtt_s, r.buffer_bdp, int(r.equilibrium_bbr_flows))
        if key is not None and key in tested.index:
            t = tested.loc[key]
            fewest.append(int(t["runs"]))
            each.append(bool(t["held"]))
            margin.append(float(t["margin"]))
            se.append(float(t["margin_se"]))
            clear.append(bool(t["held"] and t["margin"] > z * t["margin_se"]))
            continue
        # no equilibrium (a mix missing), or untested: switch_gains leaves an equilibrium
        # untested because a mix it reads has a single run
        fewest.append(None if key is None else 1)
        each.append(None)
        margin.append(None)
        se.append(None)
        clear.append(None)

    def column(values: list) -> pd.Series:
        return pd.Series(values, index=observed.index, dtype=object)

    return observed.assign(runs_per_mix=column(fewest), each_run=column(each),
                           margin=column(margin), margin_se=column(se), clear=column(clear))


#: how firm a measured equilibrium is (:func:`firmness_labels`), in the words a figure shows
FIRMNESS = ("holds in each run, clear of their spread",
            "holds in each run, within their spread",
            "holds on the mean of the runs only",
            "a mix the test reads was measured once")


def firmness_labels(observed: pd.DataFrame) -> list[str | None]:
    """Each row of :func:`equilibrium_firmness` in words (:data:`FIRMNESS`): every run alone
    passes the deviation test by a margin clear of the runs' spread (``clear``), every run
    passes it but within that spread, only the mean of the runs passes it, or a mix the
    test reads was measured once; None for a setting still missing mixes."""
    out: list[str | None] = []
    for n, e, c in zip(observed["runs_per_mix"], observed["each_run"], observed["clear"],
                       strict=True):
        out.append(None if n is None else FIRMNESS[3] if e is None else
                   FIRMNESS[2] if not e else FIRMNESS[0] if c else FIRMNESS[1])
    return out


def campaigns_by_setting(per_run: pd.DataFrame) -> pd.DataFrame:
    """The campaigns each setting's runs come from (``measured_in``, joined with " + ")."""
    return (per_run.groupby(SETTING)["campaign"].agg(lambda s: " + ".join(sorted(set(s))))
            .rename("measured_in").reset_index())


def moved_by_repeats(per_run: pd.DataFrame, observed: pd.DataFrame, settings: pd.DataFrame,
                     n_flows: int, tol: float = 0.0) -> list[str]:
    """The settings (of ``settings``, whose mixes were measured more than once) whose
    equilibria from each mix's first run alone differ from those of all its runs
    (``observed``), one line each: how far a single run per mix can be trusted."""
    first = observed_equilibria(run_order(per_run).query("draw == 0"), n_flows, tol)
    moved = []
    for key, g in settings.merge(observed, on=SETTING).groupby(SETTING):
        f = first.merge(g[SETTING].drop_duplicates(), on=SETTING)
        before = [int(v) for v in f["equilibrium_bbr_flows"].dropna()]
        after = [int(v) for v in g["equilibrium_bbr_flows"].dropna()]
        if before != after:
            moved.append(f"{key[0] / 1e6:g} Mbit/s, {key[1] * 1e3:g} ms, {key[2]:g} BDP: "
                         f"first runs {before}, all runs {after}")
    return moved


def observed_equilibria(per_run: pd.DataFrame, n_flows: int, tol: float = 0.0) -> pd.DataFrame:
    """Empirical Nash equilibria per (capacity, RTT, buffer) from measured mixes.

    ``per_run`` is :func:`runs` output. For each setting with every mix of ``n_flows``
    flows (0..n BBR) stored, per-flow CUBIC and BBR goodput (averaged over repeats) go
    through the unilateral-deviation test (:func:`coexist.closed_form.nash.equilibria`). One row per
    equilibrium; a setting with missing mixes gets one row with NaN and its mix count.
    """
    sel = per_run[per_run["n_flows"] == n_flows]
    cubic, bbr = per_flow_goodput(sel, n_flows)
    per_flow = sel.assign(cubic_bps=cubic, bbr_bps=bbr)
    found = nash.table_equilibria(per_flow, ["capacity_bps", "rtt_s", "buffer_bdp"],
                                  n_flows, tol)
    return found.rename(columns={"bbr_flows": "equilibrium_bbr_flows"})
