"""Nash equilibria found in the measured runs of RTT-group campaigns (§4.5): flows in groups
of different base RTT, a run's mix being its number of BBR flows per group. Which runs have
the layout asked for, their per-flow goodput per group and algorithm, the equilibria and
every stored mix's verdict, and the tables that set these beside the fluid model's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..closed_form import nash


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


def mix_status_table(table: pd.DataFrame, group_rtts_s: list[float], group_size: int,
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
    :func:`coexist.fluid.studies.equilibria.mix_table`, so both can be set side by side.

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
    :func:`mix_status_table`): per buffer, the mixes stored and how many are an
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
