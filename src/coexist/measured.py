"""Measured results from the bundled campaigns, shaped for the figures that set them beside
the models: per-run BBR shares, their spread over repeats, campaign coverage, and how BBR
ran inside each run (its RTprop estimate and whether its cwnd limited it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import data


def campaign_table(name: str, data_dir: Path = data.DATA) -> pd.DataFrame:
    """The campaign table (one row per flow per valid run); empty if nothing is stored."""
    path = Path(data_dir) / f"{name}.csv"
    if not path.exists():
        return pd.DataFrame(columns=[f.name for f in data.SCHEMAS["campaign"]])
    return data.load_table(path, "campaign")


def coverage(name: str, data_dir: Path = data.DATA) -> tuple[int, int]:
    """(valid runs stored, runs planned) for a campaign."""
    from .testbed import campaign

    data.note_read(name)
    c = campaign.load(Path(data_dir) / "campaigns" / f"{name}.yaml")
    st = campaign.status(c, data_dir)
    return len(st.done), st.planned


def coverage_text(names: tuple[str, ...], data_dir: Path = data.DATA) -> str:
    """'equilibrium 33/385, mix sweep 33/86': valid runs stored of those planned, per
    campaign, for a figure's subtitle."""
    return ", ".join(f"{n.replace('_', ' ')} {'/'.join(map(str, coverage(n, data_dir)))}"
                     for n in names)


def runs(table: pd.DataFrame) -> pd.DataFrame:
    """One row per run: setting, repeat, BBR share and BBR/CUBIC goodput (bit/s), plus a
    ``<cca>_bps`` column for every other algorithm the runs have (so no goodput is left
    out)."""
    if table.empty:
        return pd.DataFrame(columns=["key", "capacity_bps", "rtt_s", "buffer_bdp", "n_flows",
                                     "n_bbr", "repeat", "bbr_share", "utilisation",
                                     "mean_queue_delay_s", "bbr_bps", "cubic_bps"])
    others = sorted(set(table["cca"]) - {"bbr", "cubic"})
    per_cca = table.pivot_table(index="key", columns="cca", values="goodput_bps",
                                aggfunc="sum").reindex(columns=["bbr", "cubic", *others])
    per_cca = per_cca.fillna(0.0)
    first = table.drop_duplicates("key").set_index("key")
    out = first[["capacity_bps", "rtt_s", "buffer_bdp", "n_flows", "n_bbr", "repeat",
                 "bbr_share", "utilisation", "mean_queue_delay_s"]].copy()
    for cca in ("bbr", "cubic", *others):
        out[f"{cca}_bps"] = per_cca[cca]
    return out.reset_index()


#: Campaigns that measured every CUBIC/BBR split of a number of flows sharing one RTT, with
#: no deliberate load: the equilibrium grid, and the mix sweep, whose 10-flow lines at
#: 100 Mbit/s and 40 ms (2, 3, 10 BDP) and 5 ms (2 BDP) are the same 120-s runs.
MIX_CAMPAIGNS = ("equilibrium", "mix_sweep")


def mix_runs(n_flows: int, campaigns: tuple[str, ...] = MIX_CAMPAIGNS,
             data_dir: Path = data.DATA) -> pd.DataFrame:
    """:func:`runs` of every mix of ``n_flows`` one-RTT flows in ``campaigns``, with a
    ``campaign`` column and keys prefixed by it.

    Where two campaigns measured the same setting (capacity, RTT, buffer), their runs of a
    mix are repeats of one experiment, so the equilibrium tests average them. That holds
    only if both ran it for the same duration and warm-up; otherwise this raises rather than
    mix unlike runs. Runs whose flows do not all have the reference RTT are left out (they
    belong to the grouped-RTT analysis), as are runs under deliberate load.
    """
    parts, meta = [], []
    for name in campaigns:
        t = campaign_table(name, data_dir)
        if t.empty:
            continue
        by_run = t.groupby("key")["flow_rtt_s"]
        one_rtt = (np.isclose(by_run.transform("max"), t["rtt_s"])
                   & np.isclose(by_run.transform("min"), t["rtt_s"]))
        t = t[(t["n_flows"] == n_flows) & (t["load"] == "none") & one_rtt]
        if t.empty:
            continue
        r = runs(t)
        r.insert(0, "campaign", name)
        r["key"] = name + "/" + r["key"]
        parts.append(r)
        meta.append(t.drop_duplicates("key")[["capacity_bps", "rtt_s", "buffer_bdp",
                                               "duration_s", "warmup_s"]].assign(campaign=name))
    if not parts:
        empty = runs(pd.DataFrame())
        empty.insert(0, "campaign", pd.Series(dtype=str))
        return empty
    m = pd.concat(meta, ignore_index=True)
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    for (cap, rtt, buf), g in m.groupby(setting):
        timing = g.drop_duplicates(["duration_s", "warmup_s"])
        if len(timing) > 1:
            desc = "; ".join(f"{r.campaign}: {r.duration_s:g} s, warm-up {r.warmup_s:g} s"
                             for r in timing.itertuples())
            raise ValueError(
                f"{n_flows} flows at {cap / 1e6:g} Mbit/s, {rtt * 1e3:g} ms, {buf:g} BDP were "
                f"measured for different durations or warm-ups ({desc}); their runs are not "
                "repeats of one experiment")
    return pd.concat(parts, ignore_index=True)


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
    rank = {c: i for i, c in enumerate(MIX_CAMPAIGNS)}
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
    (:func:`coexist.nash.equilibrium_mask`).

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


def equilibrium_firmness(per_run: pd.DataFrame, n_flows: int, tol: float = 0.0) -> pd.DataFrame:
    """:func:`observed_equilibria` (averaged over the runs) with how firm each one is.

    ``runs_per_mix`` is the fewest runs among the mixes the deviation test reads for it
    (the equilibrium and its neighbours one switch away, :func:`switch_gains`);
    ``each_run`` is whether every run alone passes the test too where that is at least two
    (True/False), and None where one of those mixes was measured once, so an equilibrium
    resting on single runs is never reported as firm. Settings still missing mixes keep
    their NaN row with both columns None.
    """
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    observed = observed_equilibria(per_run, n_flows, tol)
    gains = switch_gains(per_run, n_flows, tol)
    tested = gains[gains["draw"] != "mean"].groupby([*setting, "n_bbr"]).agg(
        runs=("runs", "first"), held=("equilibrium", "all"))
    fewest, each = [], []
    for r in observed.itertuples():
        if np.isnan(r.equilibrium_bbr_flows):
            fewest.append(None)
            each.append(None)
            continue
        key = (r.capacity_bps, r.rtt_s, r.buffer_bdp, int(r.equilibrium_bbr_flows))
        if key in tested.index:
            fewest.append(int(tested.at[key, "runs"]))
            each.append(bool(tested.at[key, "held"]))
        else:
            # an equilibrium needs every mix stored, so switch_gains left it untested
            # because a mix it reads has a single run
            fewest.append(1)
            each.append(None)
    return observed.assign(runs_per_mix=pd.Series(fewest, index=observed.index, dtype=object),
                           each_run=pd.Series(each, index=observed.index, dtype=object))


def spread(per_run: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Mean, min, max and count of ``value`` over repeats of each setting in ``by``."""
    if per_run.empty:
        return pd.DataFrame(columns=[*by, "mean", "min", "max", "n_runs"])
    g = per_run.groupby(by)[value]
    return pd.DataFrame({"mean": g.mean(), "min": g.min(), "max": g.max(),
                         "n_runs": g.size()}).reset_index()


def error_by_range(measured: pd.DataFrame, predicted: dict[str, np.ndarray],
                   edges: tuple[float, ...] = (1.0, 2.0, 5.0, 30.0)) -> pd.DataFrame:
    """Mean absolute and mean signed error of each model against measured means, per buffer
    range ``(edges[i], edges[i+1]]`` (the first range includes its lower edge).

    ``measured`` has columns buffer_bdp and mean; ``predicted`` maps a model name to its
    prediction at those buffers (NaN outside the model's domain, which is then not counted).
    """
    rows = []
    b = measured["buffer_bdp"].to_numpy(dtype=float)
    m = measured["mean"].to_numpy(dtype=float)
    for lo, hi in zip(edges, edges[1:], strict=False):
        sel = ((b > lo) | (b == edges[0]) & (lo == edges[0])) & (b <= hi)
        for model, pred in predicted.items():
            err = np.asarray(pred, dtype=float)[sel] - m[sel]
            ok = np.isfinite(err)
            rows.append({"buffer_range_bdp": f"{lo:g}-{hi:g}", "model": model,
                         "points": int(ok.sum()), "not_in_domain": int((~ok).sum()),
                         "mean_abs_error": float(np.abs(err[ok]).mean()) if ok.any() else np.nan,
                         "mean_error": float(err[ok].mean()) if ok.any() else np.nan})
    return pd.DataFrame(rows)


def model_at(model: pd.DataFrame, points: pd.DataFrame, on: list[str],
             value: str) -> np.ndarray:
    """A model's ``value`` at each row of ``points`` (the settings are matched exactly on
    the columns ``on``), NaN where the model was not run: the prediction array
    :func:`error_by_range` takes, for models computed at a grid rather than as a curve."""
    dup = model.duplicated(on)
    if dup.any():
        raise ValueError(f"model has {int(dup.sum())} duplicate row(s) for the settings {on}; "
                         "one value per setting is needed")
    return points[on].merge(model[[*on, value]], on=on, how="left")[value].to_numpy(dtype=float)


def observed_equilibria(per_run: pd.DataFrame, n_flows: int, tol: float = 0.0) -> pd.DataFrame:
    """Empirical Nash equilibria per (capacity, RTT, buffer) from measured mixes.

    ``per_run`` is :func:`runs` output. For each setting with every mix of ``n_flows``
    flows (0..n BBR) stored, per-flow CUBIC and BBR goodput (averaged over repeats) go
    through the unilateral-deviation test (:func:`coexist.nash.equilibria`). One row per
    equilibrium; a setting with missing mixes gets one row with NaN and its mix count.
    """
    from . import nash

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
    from . import nash

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


def at(per_run: pd.DataFrame, capacity_bps: float, rtt_s: float,
       buffer_bdp: float | None = None) -> pd.DataFrame:
    """The runs of one network setting (capacity, RTT and optionally buffer), with the
    float columns compared to within rounding."""
    sel = (np.isclose(per_run["capacity_bps"].astype(float), capacity_bps)
           & np.isclose(per_run["rtt_s"].astype(float), rtt_s))
    if buffer_bdp is not None:
        sel &= np.isclose(per_run["buffer_bdp"].astype(float), buffer_bdp)
    return per_run[sel]


def observed_grouped_equilibria(table: pd.DataFrame, group_rtts_s: list[float],
                                group_size: int, tol: float = 0.0) -> pd.DataFrame:
    """Empirical Nash equilibria per (capacity, buffer) for flows in RTT groups (§4.5).

    ``table`` is a campaign table whose runs put ``group_size`` flows at each RTT of
    ``group_rtts_s``. A run's mix is its number of BBR flows per group; per-flow goodput per
    (group, algorithm) is averaged over repeats and goes through
    :func:`coexist.nash.grouped_equilibria`. A setting missing some mix gets one row with
    ``mix`` None and its mix count.
    """
    from . import nash

    cols = ["capacity_bps", "buffer_bdp", "mixes", "mix", "mix_label", "bbr_flows"]
    rows = []
    n_mixes = (group_size + 1) ** len(group_rtts_s)
    for (cap, buf), rates in _grouped_rates(table, group_rtts_s).items():
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

    One row per (capacity, buffer, stored mix) with :func:`coexist.nash.grouped_mix_status`'s
    verdict (equilibrium, not an equilibrium, undecided) and its reason, so a campaign under
    way already rules mixes out, and confirms those whose every deviation is stored.
    """
    from . import nash

    cols = ["capacity_bps", "buffer_bdp", "mix", "mix_label", "status", "reason"]
    rows = []
    for (cap, buf), rates in _grouped_rates(table, group_rtts_s).items():
        verdicts = nash.grouped_mix_status(rates, [group_size] * len(group_rtts_s), tol,
                                           [f"the {r * 1e3:g} ms group" for r in group_rtts_s])
        for m, (status, reason) in verdicts.items():
            rows.append({"capacity_bps": cap, "buffer_bdp": buf, "mix": m,
                         "mix_label": nash.mix_label(m), "status": status,
                         "reason": reason})
    return pd.DataFrame(rows, columns=cols)


def grouped_rates(table: pd.DataFrame, group_rtts_s: list[float]) -> pd.DataFrame:
    """Per-flow goodput of every stored mix of an RTT-group campaign (§4.5), by group and
    algorithm, averaged over repeats: the measured counterpart of
    :func:`coexist.fluid.equilibria.mix_table`, so both can be set side by side.

    A run's mix is its number of BBR flows per RTT group; a flow belongs to the group of
    the nearest RTT and is left out unless its RTT matches that group's. Columns: capacity,
    buffer, mix (tuple) and ``mix_label``, group, its RTT, algorithm, per-flow goodput
    (bit/s) and the number of runs averaged.
    """
    from . import nash

    cols = ["capacity_bps", "buffer_bdp", "mix", "mix_label", "group", "rtt_s", "cca",
            "goodput_bps", "runs"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    rtts = np.asarray(group_rtts_s, dtype=float)
    t = table.copy()
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


def _grouped_rates(table: pd.DataFrame, group_rtts_s: list[float]) -> dict:
    """:func:`grouped_rates` as the equilibrium test takes it: per (capacity, buffer),
    mix -> {(group, algorithm): per-flow goodput}."""
    from . import nash

    return {setting: nash.rates_by_mix(part) for setting, part in
            grouped_rates(table, group_rtts_s).groupby(["capacity_bps", "buffer_bdp"])}


#: TCP payload per segment on the testbed's 1500-byte MTU links (IP, TCP and timestamp
#: headers take 52 bytes); ``ss`` gives cwnd in such segments
MSS_BYTES = 1448
#: Linux BBR's smallest cwnd (``bbr_cwnd_min_target``), which it holds during ProbeRTT
BBR_MIN_CWND = 4


def bbr_operating_point(sockets: pd.DataFrame, warmup_s: float) -> dict[str, float]:
    """How the BBR flows of one run ran after warm-up, from its ``ss`` samples
    (``sockets.csv``): BBR's RTprop estimate (its min-RTT filter, median, s), its cwnd
    (median, segments), the share of samples in ProbeRTT (cwnd at BBR's floor of
    ``BBR_MIN_CWND`` segments), and its in-flight data over its cwnd.

    In-flight data comes from Little's law: mean acknowledged rate times mean smoothed RTT.
    Mishra et al.'s eq. (7) assumes BBR is cwnd-limited, in-flight = cwnd; a ratio well
    below 1 means BBR's pacing rate (or ProbeRTT) limited it instead. Eq. (9) gives the
    RTprop the model assumes, ``RTT + b_cmin / C``.
    """
    b = sockets[(sockets["cca"] == "bbr") & (sockets["t_s"] > warmup_s)]
    b = b.dropna(subset=["bbr_mrtt_s", "cwnd", "srtt_s", "acked_rate_bps"])
    if b.empty:
        raise data.DataError(f"no BBR sample after the warm-up ({warmup_s:g} s)")
    inflight = b["acked_rate_bps"].mean() * b["srtt_s"].mean() / (8 * MSS_BYTES)
    return {"samples": len(b), "rtprop_s": float(b["bbr_mrtt_s"].median()),
            "cwnd_segments": float(b["cwnd"].median()),
            "probe_rtt_share": float((b["cwnd"] <= BBR_MIN_CWND).mean()),
            "inflight_over_cwnd": float(inflight / b["cwnd"].mean())}


def bbr_operating_points(name: str, data_dir: Path = data.DATA) -> pd.DataFrame:
    """:func:`bbr_operating_point` for every valid run of a campaign with a BBR flow: one
    row per run with its setting (as :func:`runs`) and the eq. (9) RTprop of the
    closed form for its buffer (NaN at or below 1 BDP, outside the model)."""
    from . import mishra

    out = _per_run(name, data_dir, lambda t: t["n_bbr"] > 0,
                   lambda run, _, w: bbr_operating_point(
                       data.load_table(run / data.RUN_FILES["sockets"], "sockets"), w),
                   ["samples", "rtprop_s", "cwnd_segments", "probe_rtt_share",
                    "inflight_over_cwnd"])
    x = out["buffer_bdp"].to_numpy(dtype=float)
    model = np.full(len(x), np.nan)
    model[x > 1] = out["rtt_s"].to_numpy(dtype=float)[x > 1] * (
        1 + mishra.cubic_min_occupancy_bdp(x[x > 1]))
    out["eq9_rtprop_s"] = model
    return out


def cubic_bbr_regime(sockets: pd.DataFrame, queue: pd.DataFrame, bdp_bytes: float,
                     warmup_s: float) -> dict[str, float]:
    """What the fluid model's :func:`coexist.fluid.metrics.cubic_bbr_regime` reads, from a
    run's samples after warm-up: the share of bottleneck-queue samples (``queue.csv``)
    under one BDP, and the CUBIC flows' smallest cwnd over their largest (``ss`` samples,
    ``sockets.csv``). Samples are 0.5 s apart, so the smallest cwnd is an upper bound on
    the true trough."""
    w = sockets[(sockets["cca"] == "cubic") & (sockets["t_s"] > warmup_s)]["cwnd"].dropna()
    q = queue[queue["t_s"] > warmup_s]["backlog_bytes"].dropna()
    if w.empty or q.empty:
        raise data.DataError(f"no CUBIC cwnd or queue sample after the warm-up ({warmup_s:g} s)")
    return {"queue_samples": len(q), "queue_below_bdp": float((q < bdp_bytes).mean()),
            "cwnd_samples": len(w), "cubic_low_over_high": float(w.min() / w.max())}


def cubic_bbr_regimes(name: str, data_dir: Path = data.DATA) -> pd.DataFrame:
    """:func:`cubic_bbr_regime` for every valid run of a campaign with a CUBIC flow, with
    or without BBR flows: one row per run with its setting (as :func:`runs`). The BDP is
    the capacity times the run's (shortest) base RTT."""
    def read(run: Path, r, warmup_s: float) -> dict[str, float]:
        return cubic_bbr_regime(data.load_table(run / data.RUN_FILES["sockets"], "sockets"),
                                data.load_table(run / data.RUN_FILES["queue"], "queue"),
                                r.capacity_bps / 8 * r.rtt_s, warmup_s)

    return _per_run(name, data_dir, lambda t: t["n_flows"] > t["n_bbr"],
                    read, ["queue_samples", "queue_below_bdp", "cwnd_samples",
                           "cubic_low_over_high"])


def _per_run(name, data_dir, keep, read, columns) -> pd.DataFrame:
    """``read(run_directory, run, warmup_s)`` for each valid run of a campaign that
    ``keep(per_run_table)`` selects, beside the run's setting."""
    table = campaign_table(name, data_dir)
    per_run = runs(table)
    per_run = per_run[keep(per_run)]
    warmup = table.drop_duplicates("key").set_index("key")["warmup_s"]
    rows = []
    for r in per_run.itertuples():
        found = read(Path(data_dir) / "runs" / name / r.key, r, float(warmup[r.key]))
        rows.append({**r._asdict(), **found})
    return pd.DataFrame(rows, columns=[*per_run.columns, *columns]).drop(
        columns="Index", errors="ignore")
