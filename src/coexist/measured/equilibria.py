"""Nash equilibria in the measured runs: which mixes of CUBIC and BBR flows no flow gains by
leaving, how firmly, and where they lie against the closed form's predicted region. The
measured counterpart of :mod:`coexist.closed_form.nash`, on the per-run table of
:mod:`coexist.measured.runs`."""

from __future__ import annotations

from collections.abc import Sequence

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


def against_region(observed: pd.DataFrame, n_flows: int) -> pd.DataFrame:
    """Where each observed equilibrium lies relative to the closed-form prediction.

    ``observed`` is :func:`observed_equilibria` output; settings still missing mixes are
    left out. The region is the span between the synchronised and de-synchronised
    crossings of eq. (25) (Mishra et al. Fig. 9), unrounded (``region_lo``/``region_hi``)
    and widened to whole flows (``whole_lo``/``whole_hi``), since an equilibrium is a
    whole number of flows. ``verdict`` is ``inside`` (within the whole-flow region),
    ``above`` or ``below`` it, or ``no prediction`` for buffers of at most 1 BDP, where
    the model is not defined. ``flows_outside`` counts how far outside the whole-flow
    region the equilibrium lies (0 inside).
    """
    cols = ["capacity_bps", "rtt_s", "buffer_bdp", "equilibrium_bbr_flows", "region_lo",
            "region_hi", "whole_lo", "whole_hi", "verdict", "flows_outside"]
    obs = observed.dropna(subset=["equilibrium_bbr_flows"])
    rows = []
    for r in obs.itertuples():
        row = {c: getattr(r, c) for c in cols[:4]}
        row.update(region_lo=np.nan, region_hi=np.nan, whole_lo=np.nan, whole_hi=np.nan,
                   verdict="no prediction", flows_outside=np.nan)
        if r.buffer_bdp > 1:
            reg = nash.predicted_region(np.array([float(r.buffer_bdp)]), n_flows)
            lo, hi = sorted((float(reg["bbr_flows_sync"][0]),
                             float(reg["bbr_flows_desync"][0])))
            w_lo, w_hi = (float(w[0]) for w in nash.whole_flows(reg))
            k = float(r.equilibrium_bbr_flows)
            verdict = "inside" if w_lo <= k <= w_hi else ("above" if k > w_hi else "below")
            row.update(region_lo=lo, region_hi=hi, whole_lo=w_lo, whole_hi=w_hi,
                       verdict=verdict, flows_outside=max(k - w_hi, w_lo - k, 0.0))
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def observed_grouped_equilibria(table: pd.DataFrame, group_rtts_s: list[float],
                                group_size: int, tol: float = 0.0) -> pd.DataFrame:
    """Empirical Nash equilibria per (capacity, buffer) for flows in RTT groups (§4.5).

    ``table`` is a campaign table; its runs with ``group_size`` flows at each RTT of
    ``group_rtts_s`` are read (:func:`group_layout_keys`), others left out. A run's mix is
    its number of BBR flows per group; per-flow goodput per (group, algorithm) is averaged
    over repeats and goes through
    :func:`coexist.closed_form.nash.grouped_equilibria`. A setting missing some mix gets one
    row with
    ``mix`` None and its mix count.
    """
    cols = ["capacity_bps", "buffer_bdp", "mixes", "mix", "mix_label", "bbr_flows"]
    rows = []
    n_mixes = (group_size + 1) ** len(group_rtts_s)
    for (cap, buf), rates in _grouped_rates(table, group_rtts_s, group_size).items():
        base = {"capacity_bps": cap, "buffer_bdp": buf, "mixes": len(rates)}
        if len(rates) < n_mixes:
            rows.append({**base, "mix": None, "mix_label": None, "bbr_flows": np.nan})
            continue
        for m in nash.grouped_equilibria(rates, [group_size] * len(group_rtts_s), tol):
            rows.append({**base, "mix": m, "mix_label": nash.mix_label(m),
                         "bbr_flows": sum(m)})
    return pd.DataFrame(rows, columns=cols)


def grouped_mix_status(table: pd.DataFrame, group_rtts_s: list[float], group_size: int,
                       tol: float = 0.0) -> pd.DataFrame:
    """Verdict on every stored mix of an RTT-group campaign, complete or not (§4.5).

    One row per (capacity, buffer, stored mix) with
    :func:`coexist.closed_form.nash.grouped_mix_status`'s
    verdict (equilibrium, not an equilibrium, undecided) and its reason, so a campaign under
    way already rules mixes out, and confirms those whose every deviation is stored.
    """
    cols = ["capacity_bps", "buffer_bdp", "mix", "mix_label", "status", "reason"]
    rows = []
    for (cap, buf), rates in _grouped_rates(table, group_rtts_s, group_size).items():
        verdicts = nash.grouped_mix_status(rates, [group_size] * len(group_rtts_s), tol,
                                           [f"the {r * 1e3:g} ms group" for r in group_rtts_s])
        for m, (status, reason) in verdicts.items():
            rows.append({"capacity_bps": cap, "buffer_bdp": buf, "mix": m,
                         "mix_label": nash.mix_label(m), "status": status,
                         "reason": reason})
    return pd.DataFrame(rows, columns=cols)


def group_layout_keys(table: pd.DataFrame, group_rtts_s: list[float],
                      group_size: int) -> set[str]:
    """The runs (keys) of an RTT-group campaign table laid out as asked: exactly
    ``group_size`` flows at each RTT of ``group_rtts_s`` and none at another RTT. A run of
    another layout says nothing about these mixes (its mix (0, 0, 1) of three flows per
    group is not the mix (0, 0, 1) of one flow per group), so the equilibrium tests read
    only these."""
    if table.empty:
        return set()
    rtts = np.asarray(group_rtts_s, dtype=float)
    keys = set()
    for key, run in table.groupby("key"):
        r = run["flow_rtt_s"].astype(float).to_numpy()
        counts = [int(np.isclose(r, g).sum()) for g in rtts]
        if counts == [group_size] * len(rtts) and sum(counts) == len(r):
            keys.add(key)
    return keys


def grouped_rates(table: pd.DataFrame, group_rtts_s: list[float],
                  group_size: int | None = None) -> pd.DataFrame:
    """Per-flow goodput of every stored mix of an RTT-group campaign (§4.5), by group and
    algorithm, averaged over repeats: the measured counterpart of
    :func:`coexist.fluid.equilibria.mix_table`, so both can be set side by side.

    A run's mix is its number of BBR flows per RTT group; a flow belongs to the group of
    the nearest RTT and is left out unless its RTT matches that group's. With
    ``group_size``, only the runs of that layout are read (:func:`group_layout_keys`).
    Columns: capacity, buffer, mix (tuple) and ``mix_label``, group, its RTT, algorithm,
    per-flow goodput (bit/s) and the number of runs averaged.
    """
    cols = ["capacity_bps", "buffer_bdp", "mix", "mix_label", "group", "rtt_s", "cca",
            "goodput_bps", "runs"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    rtts = np.asarray(group_rtts_s, dtype=float)
    t = table.copy()
    if group_size is not None:
        t = t[t["key"].isin(group_layout_keys(t, group_rtts_s, group_size))]
        if t.empty:
            return pd.DataFrame(columns=cols)
    t["group"] = [int(np.argmin(np.abs(rtts - r))) for r in t["flow_rtt_s"].astype(float)]
    t = t[np.isclose(t["flow_rtt_s"].astype(float), rtts[t["group"]])]
    t["is_bbr"] = t["cca"] == "bbr"
    mix_of = t.groupby("key").apply(
        lambda g: tuple(int(g.loc[g.group == i, "is_bbr"].sum()) for i in range(len(rtts))),
        include_groups=False)
    t["mix"] = t["key"].map(mix_of)
    out = (t.groupby(["capacity_bps", "buffer_bdp", "mix", "group", "cca"])
           .agg(goodput_bps=("goodput_bps", "mean"), runs=("key", "nunique")).reset_index())
    out["mix_label"] = out["mix"].map(nash.mix_label)
    out["rtt_s"] = rtts[out["group"]]
    return out[cols]


def _grouped_rates(table: pd.DataFrame, group_rtts_s: list[float], group_size: int) -> dict:
    """:func:`grouped_rates` of the runs with ``group_size`` flows per group, as the
    equilibrium test takes it: per (capacity, buffer), mix -> {(group, algorithm): per-flow
    goodput}."""
    return {setting: nash.rates_by_mix(part) for setting, part in
            grouped_rates(table, group_rtts_s, group_size)
            .groupby(["capacity_bps", "buffer_bdp"])}


def distance_to_nearest(observed: pd.DataFrame, found: pd.DataFrame, *, on: Sequence[str],
                        group: str, groups: Sequence[str],
                        observed_value: str = "equilibrium_bbr_flows",
                        found_value: str = "equilibrium_bbr_flows",
                        determined_only: bool = False) -> pd.DataFrame:
    """For each observed equilibrium, its distance in flows to the nearest equilibrium of each
    group of ``found`` (e.g. each fluid-model variant) at the same setting (the ``on``
    columns, matched within floating-point closeness): one column per group, the rows
    ``observed``'s, NaN where a group has no equilibrium at that setting. A search that
    lists several equilibria counts its nearest, so a wide set is near more points; with
    ``determined_only``, a group whose set at the setting spans more than
    :data:`DETERMINED_SPAN` flow counts gets NaN too."""
    out = pd.DataFrame(np.nan, index=observed.index, columns=list(groups))
    for idx, row in observed.iterrows():
        here = np.ones(len(found), dtype=bool)
        for col in on:
            here &= np.isclose(found[col].to_numpy(dtype=float), float(row[col]))
        for g in groups:
            f = found.loc[here & (found[group] == g).to_numpy(), found_value].to_numpy(dtype=float)
            if len(f) and not (determined_only and set_span(f) > DETERMINED_SPAN):
                out.loc[idx, g] = float(np.min(np.abs(f - float(row[observed_value]))))
    return out


#: an equilibrium set spanning more flow counts than this (from its fewest BBR flows to its
#: most) is "undetermined at this precision": the deviation test did not separate its
#: mixes, so it says little about where the mix settles and is not compared. Two adjacent
#: mixes pass together where the gain of a switch changes sign between them, within the
#: runs' precision: a set of two still places the mix
DETERMINED_SPAN = 2


def set_span(bbr_flows: Sequence[float]) -> int:
    """How many flow counts an equilibrium set spans, from its fewest BBR flows to its
    most ({1, 5, 6} spans 6; {5, 6} spans 2; an empty set 0)."""
    values = [float(v) for v in bbr_flows]
    return int(round(max(values) - min(values))) + 1 if values else 0


def region_in_whole_flows(buffer_bdp: float, n_flows: int) -> tuple[float, float] | None:
    """The closed form's predicted equilibrium region (Mishra et al. eq. 25) at one buffer,
    in whole BBR flows of ``n_flows``: (fewest, most). None at or below 1 BDP, where the
    closed form makes no prediction."""
    if not buffer_bdp > 1:
        return None
    region = nash.predicted_region(np.array([buffer_bdp]), n_flows)
    lo, hi = (w[0] for w in nash.whole_flows(region))
    return lo, hi


def distance_to_region(bbr_flows: float, region: tuple[float, float] | None) -> float:
    """How many flows an equilibrium lies outside a region (0 inside it); NaN without a
    region."""
    if region is None:
        return np.nan
    lo, hi = region
    return float(max(lo - bbr_flows, bbr_flows - hi, 0))


def nearest_equilibrium_distances(observed: pd.DataFrame, found: pd.DataFrame, n_flows: int,
                                  variants: Sequence[str], determined_only: bool = True
                                  ) -> pd.DataFrame:
    """Each observed equilibrium (``observed``: ``rtt_ms``, ``buffer_bdp``,
    ``equilibrium_bbr_flows``) beside its distance in flows to the nearest equilibrium of each
    model variant at the same setting (``found``: ``variant``, ``rtt_ms``, ``buffer_bdp``,
    ``bbr_flows``; NaN where the variant has none, or, with ``determined_only``, where its
    set spans more than :data:`DETERMINED_SPAN` flow counts: a wide set is near more points
    without saying where the mix settles) and to the closed form's region (NaN at or below
    1 BDP). A model that lists several equilibria counts its nearest."""
    near = distance_to_nearest(observed, found, on=["rtt_ms", "buffer_bdp"], group="variant",
                               groups=variants, found_value="bbr_flows",
                               determined_only=determined_only)
    out = pd.DataFrame({"rtt_ms": observed["rtt_ms"], "buffer_bdp": observed["buffer_bdp"],
                        "measured": observed["equilibrium_bbr_flows"]}).join(near)
    out["to closed form"] = [distance_to_region(m, region_in_whole_flows(b, n_flows))
                             for b, m in zip(out["buffer_bdp"], out["measured"], strict=True)]
    return out.reset_index(drop=True)


def set_widths(found: pd.DataFrame, by: Sequence[str], value: str = "bbr_flows"
               ) -> pd.DataFrame:
    """Each equilibrium set of ``found`` (grouped by ``by``): its size, its span in flow
    counts (:func:`set_span`) and whether it is determined (a span of at most
    :data:`DETERMINED_SPAN`)."""
    rows = [{**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
             "equilibria": len(g), "span": set_span(g[value])}
            for key, g in found.groupby(list(by))]
    out = pd.DataFrame(rows, columns=[*by, "equilibria", "span"])
    out["determined"] = out["span"] <= DETERMINED_SPAN
    return out


def compare_sets(found: pd.DataFrame, first: str, second: str, *, by: Sequence[str],
                 group: str = "variant", value: str = "bbr_flows") -> dict[str, int]:
    """Compare two models' equilibrium sets setting by setting (the ``by`` columns), where
    both have a determined set (:data:`DETERMINED_SPAN`): in how many settings all of
    ``second``'s equilibria lie below all of ``first``'s ("fewer"), all above them
    ("more"), or the two sets overlap ("overlap"), out of those settings ("both");
    "undetermined" counts the settings where both have a set but one spans more. Of the
    overlapping settings, "identical" counts those where the two sets are the same and
    "all_cubic" those where both are {0} (every flow on CUBIC): there neither model can
    leave more flows on CUBIC than the other, so the comparison cannot tell them apart."""
    out = {"fewer": 0, "more": 0, "overlap": 0, "both": 0, "undetermined": 0,
           "identical": 0, "all_cubic": 0}
    for _, g in found.groupby(list(by)):
        a, b = g[g[group] == first][value], g[g[group] == second][value]
        if a.empty or b.empty:
            continue
        if max(set_span(a), set_span(b)) > DETERMINED_SPAN:
            out["undetermined"] += 1
            continue
        out["both"] += 1
        out["fewer" if b.max() < a.min() else "more" if b.min() > a.max() else "overlap"] += 1
        if set(a) == set(b):
            out["identical"] += 1
            out["all_cubic"] += int(set(a) == {0})
    return out


def grouped_long(found: pd.DataFrame, series: str,
                 group_rtts_ms: Sequence[float]) -> pd.DataFrame:
    """Equilibria of RTT groups (rows with ``buffer_bdp``, ``mix`` and ``mix_label``, e.g.
    :func:`observed_grouped_equilibria`'s or the fluid model's) as M-F10 draws them: one row
    per equilibrium and group, with the group's RTT and its number of BBR flows."""
    rows = [{"series": series, "buffer_bdp": float(r.buffer_bdp),
             "equilibrium": f"{series}: {r.mix_label}", "mix_label": r.mix_label,
             "group_rtt_ms": rtt, "bbr_flows_in_group": int(r.mix[g])}
            for r in found.itertuples() for g, rtt in enumerate(group_rtts_ms)]
    return pd.DataFrame(rows, columns=["series", "buffer_bdp", "equilibrium", "mix_label",
                                       "group_rtt_ms", "bbr_flows_in_group"])


def grouped_found(sets: dict[str, pd.DataFrame], buffers_bdp: Sequence[float],
                  missing: dict[str, str], precision_sets: Sequence[str] = ()
                  ) -> pd.DataFrame:
    """The equilibria each series finds at each buffer (``sets``: series -> equilibrium
    rows), as text; where a series finds none, ``missing[series]`` says why. With whether
    every equilibrium leaves the shortest-RTT group all on CUBIC.

    A series of ``precision_sets`` (the fluid model's searches) lists every mix that is an
    equilibrium within its runs' precision, mixes the runs cannot tell apart: it answers
    "yes" when every mix leaves the shortest group on CUBIC, "no" when none does, and
    "undetermined" when its mixes differ there. Another series' equilibria are exact (of
    the measured means): one with BBR in the shortest group answers "no"."""
    rows = []
    for name, found in sets.items():
        for b in buffers_bdp:
            at = found[np.isclose(found.buffer_bdp.astype(float), b)]
            cubic = [m[0] == 0 for m in at.mix]
            answer = ("" if at.empty else "yes" if all(cubic)
                      else "no" if name not in precision_sets or not any(cubic)
                      else "undetermined (its mixes differ in the shortest group)")
            rows.append({"series": name, "buffer (BDP)": f"{b:g}",
                         "equilibria (BBR flows per group)":
                             ", ".join(at.mix_label) or missing[name],
                         "shortest-RTT group all CUBIC": answer})
    return pd.DataFrame(rows)


def grouped_checked(status: pd.DataFrame, fluid_sets: dict[str, pd.DataFrame],
                    buffers_bdp: Sequence[float], n_mixes: int
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How far the measurements decide the grouped mixes (``status``:
    :func:`grouped_mix_status`): per buffer, the mixes stored and how many are an
    equilibrium, not one, or undecided; and the measured verdict on every mix a fluid
    model finds an equilibrium."""
    stored, checked = [], []
    for b in buffers_bdp:
        at = status[np.isclose(status.buffer_bdp.astype(float), b)]
        counts = at.status.value_counts()
        stored.append({"buffer (BDP)": f"{b:g}", "mixes stored": f"{len(at)} of {n_mixes}",
                       **{s: int(counts.get(s, 0))
                          for s in ("equilibrium", "not an equilibrium", "undecided")}})
        verdict = dict(zip(at.mix_label, zip(at.status, at.reason, strict=True), strict=True))
        for name, found in fluid_sets.items():
            for label in found[np.isclose(found.buffer_bdp.astype(float), b)].mix_label:
                s, why = verdict.get(label, ("not stored yet", ""))
                checked.append({"buffer (BDP)": f"{b:g}", "fluid model": name, "mix": label,
                                "measured verdict": s + (f" ({why})" if why else "")})
    return pd.DataFrame(stored), pd.DataFrame(checked, columns=[
        "buffer (BDP)", "fluid model", "mix", "measured verdict"])


def rates_at_equilibria(tables: dict[str, pd.DataFrame],
                        sets: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Per-flow goodput (Mbit/s) of each group and algorithm, side by side for every
    series (``tables``: series -> per-flow rows with ``buffer_bdp``, ``mix_label``,
    ``rtt_s``, ``cca``, ``goodput_bps``), at every mix any of ``sets`` finds an
    equilibrium. One row per buffer, mix and series; columns "<RTT> ms <cca>"."""
    ne_mixes = {(float(b), m) for found in sets
                for b, m in zip(found.buffer_bdp, found.mix_label, strict=True)}
    side = []
    for name, t in tables.items():
        at_ne = t[np.array([(float(b), m) in ne_mixes  # rows (an empty list picks columns)
                            for b, m in zip(t.buffer_bdp, t.mix_label, strict=True)],
                           dtype=bool)]
        side.append(at_ne.assign(series=name, buffer_bdp=at_ne.buffer_bdp.astype(float),
                                 goodput_mbps=at_ne.goodput_bps.astype(float) / 1e6))
    wide = pd.concat(side, ignore_index=True).pivot_table(
        index=["buffer_bdp", "mix_label", "series"], columns=["rtt_s", "cca"],
        values="goodput_mbps")
    wide.columns = [f"{rtt * 1e3:g} ms {cca}" for rtt, cca in wide.columns]
    return wide.reset_index()
