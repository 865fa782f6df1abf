"""Measured equilibria against the models': where each lies relative to the closed form's
predicted region (Mishra et al. eq. 25), how far it is from the nearest equilibrium of a
fluid model's set, and whether a set is determined enough to be compared at all
(:data:`DETERMINED_SPAN`), with two models' sets compared setting by setting."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..closed_form import nash


def against_region(observed: pd.DataFrame, n_flows: int) -> pd.DataFrame:
    """Where each observed equilibrium lies relative to the closed-form prediction.

    ``observed`` is :func:`~coexist.measured.mix_equilibria.observed_equilibria`
    output; settings still missing mixes are left out. The region is the span between the
    synchronised and de-synchronised crossings of eq. (25) (Mishra et al. Fig. 9),
    unrounded (``region_lo``/``region_hi``) and widened to whole flows
    (``whole_lo``/``whole_hi``), since an equilibrium is a whole number of flows.
    ``verdict`` is ``inside`` (within the whole-flow region), ``above`` or ``below`` it, or
    ``no prediction`` for buffers of at most 1 BDP, where the model is not defined.
    ``flows_outside`` counts how far outside the whole-flow region the equilibrium lies (0
    inside).
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
