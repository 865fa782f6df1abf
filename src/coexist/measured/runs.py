"""The bundled campaigns' measured runs, read through :func:`coexist.data.load_table`: each
campaign's table, one row per run with its setting and BBR's share (:func:`runs`), the
mix runs of the equilibrium figures, campaign coverage, and a reader of per-run files
(:func:`per_run_table`). What is computed from them lives beside what it is compared with:
:mod:`coexist.measured.equilibria` (Nash equilibria), :mod:`coexist.measured.comparison` (spread
and model errors), :mod:`coexist.measured.socket_states` (how BBR and CUBIC ran inside a run)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from ..core.params import ParameterError

#: The campaigns that drive the machine past its limit on purpose (T-F4), by where the
#: ACKs the delay line writes back are processed: their failures measure the harness's
#: ceiling, not how often a run within it fails, so T-F1's validity census leaves them out.
CEILING_CAMPAIGNS = {"ceiling": "on the delay line's CPU",
                     "ceiling-steered": "steered to the other CPU"}


def campaign_table(name: str, data_dir: Path = data.DATA) -> pd.DataFrame:
    """The campaign table (one row per flow per valid run); empty if nothing is stored. A
    name without a campaign file is refused, naming the campaigns there are."""
    path = Path(data_dir) / f"{name}.csv"
    campaigns = Path(data_dir) / "campaigns"
    if not (re.fullmatch(r"[\w-]+", name)
            and ((campaigns / f"{name}.yaml").is_file() or path.is_file())):
        known = sorted(p.stem for p in campaigns.glob("*.yaml"))  # listed only to refuse
        raise ParameterError(f"parameter 'name' = {name!r} is invalid (no campaign of that "
                             f"name); valid: one of {', '.join(known)}")
    if not path.exists():
        return pd.DataFrame(columns=[f.name for f in data.SCHEMAS["campaign"]])
    return data.load_table(path, "campaign")


def coverage(name: str, data_dir: Path = data.DATA) -> tuple[int, int]:
    """(valid runs stored, runs planned) for a campaign."""
    from ..testbed import campaign

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


def at(per_run: pd.DataFrame, capacity_bps: float, rtt_s: float,
       buffer_bdp: float | None = None) -> pd.DataFrame:
    """The runs of one network setting (capacity, RTT and optionally buffer), with the
    float columns compared to within rounding."""
    sel = (np.isclose(per_run["capacity_bps"].astype(float), capacity_bps)
           & np.isclose(per_run["rtt_s"].astype(float), rtt_s))
    if buffer_bdp is not None:
        sel &= np.isclose(per_run["buffer_bdp"].astype(float), buffer_bdp)
    return per_run[sel]


def per_run_table(name: str, data_dir: Path, keep, read, columns: list[str]) -> pd.DataFrame:
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


def mixed_single_rtt_runs(data_dir: Path = data.DATA) -> pd.DataFrame:
    """Every stored run of every campaign in which CUBIC and BBR flows, and no other, share
    one RTT with no deliberate background load: one row per run with its campaign, key, capacity
    (Mbit/s), RTT (ms), flows, BBR flows, buffer (BDP), the BBR flows' total share and the
    fraction of flows running BBR. The measured points of WhatIf."""
    columns = ["source", "campaign", "key", "capacity_mbps", "rtt_ms", "n_flows", "n_bbr",
               "buffer_bdp", "share"]
    parts = []
    for path in sorted((Path(data_dir) / "campaigns").glob("*.yaml")):
        tab = campaign_table(path.stem, data_dir)
        if tab.empty:
            continue
        tab = tab[(tab["load"] == "none")]
        one_rtt = tab.groupby("key").flow_rtt_s.nunique() == 1
        # only CUBIC and BBR: a Reno flow beside BBR is another experiment
        only_pair = tab.groupby("key").cca.agg(lambda c: set(c) <= {"cubic", "bbr"})
        tab = tab[tab.key.isin(one_rtt[one_rtt & only_pair].index)]
        r = runs(tab)
        r = r[(r.n_bbr > 0) & (r.n_bbr < r.n_flows)]
        parts.append(pd.DataFrame({
            "source": "measured", "campaign": path.stem, "key": r.key,
            "capacity_mbps": r.capacity_bps.astype(float) / 1e6,
            "rtt_ms": (r.rtt_s.astype(float) * 1e3).round(3), "n_flows": r.n_flows.astype(int),
            "n_bbr": r.n_bbr.astype(int), "buffer_bdp": r.buffer_bdp.astype(float),
            "share": r.bbr_share.astype(float)}))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return out.assign(bbr_fraction=out.n_bbr / out.n_flows)
