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


#: From this buffer on (in BDP), a measured point is a deep-buffer point: where BBR's share
#: was seen to keep growing for minutes (T-F5), so a run there counts only once the study
#: declares its length settled (:func:`settle`).
DEEP_FROM_BDP = 10.0
#: what a page calls a deep-buffer point the study does not declare settled
NOT_SETTLED = "not settled (run-length study)"


def verdict(campaign: str = "run_length", lengths_s: Sequence[float] = LENGTHS_S,
            scored: float = SCORED, tolerance: float = TOLERANCE,
            data_dir: Path = data.DATA) -> pd.DataFrame:
    """The study's verdict on every setting it plans: :func:`settled_length` of the runs
    stored, beside ``planned`` (the repeats the campaign asks for). A setting with no run
    stored yet has ``repeats`` 0 and no ``settled_s``, so nothing can lean on it."""
    from ..testbed import campaign as campaign_mod

    camp = campaign_mod.load(Path(data_dir) / "campaigns" / f"{campaign}.yaml")
    keys = ["capacity_mbps", "rtt_ms", "buffer_bdp"]
    planned = pd.DataFrame([{"capacity_mbps": p.exp.capacity_bps / 1e6,
                             "rtt_ms": p.exp.rtt_s * 1e3, "buffer_bdp": float(p.exp.buffer_bdp)}
                            for p in camp.points]).value_counts(keys).rename("planned")
    prefixes = campaign_prefixes(stored_runs(campaign, data_dir), lengths_s, scored)
    read = (settled_length(prefixes, tolerance) if len(prefixes)
            else pd.DataFrame({c: pd.Series(dtype=float) for c in [
                *keys, "repeats", "longest_share", "settled_s", "before_longest",
                "worst_gap"]}))
    out = planned.reset_index().merge(read, on=keys, how="left")
    out["repeats"] = out["repeats"].fillna(0).astype(int)
    return out.sort_values(keys, ignore_index=True)


def _needs(capacity_mbps: float, rtt_ms: float, buffer_bdp: float,
           study: pd.DataFrame) -> tuple[float, str]:
    """The run length (s) the study says a run at this setting needs, or NaN with the reason
    it cannot say: the longer of the settled lengths of the study's buffers on either side
    at the same capacity and RTT (the buffer itself where the study measured it)."""
    same = study[np.isclose(study["capacity_mbps"], capacity_mbps)
                 & np.isclose(study["rtt_ms"], rtt_ms)]
    where = f"{capacity_mbps:g} Mbit/s, {rtt_ms:g} ms"
    if same.empty:
        return np.nan, f"the run-length study did not measure {where}"
    buffers = same["buffer_bdp"].to_numpy(dtype=float)
    if buffer_bdp > buffers.max() + 1e-9:
        return np.nan, (f"deeper than the run-length study's deepest buffer at {where} "
                        f"({buffers.max():g} BDP)")
    lower = buffers[buffers <= buffer_bdp + 1e-9]
    upper = buffers[buffers >= buffer_bdp - 1e-9]
    sides = sorted({float(lower.max()) if len(lower) else float(upper.min()),
                    float(upper.min())})
    needs = 0.0
    for b in sides:
        row = same[np.isclose(same["buffer_bdp"], b)].iloc[0]
        if row["repeats"] == 0:
            return np.nan, f"the run-length study has no run at {where}, {b:g} BDP yet"
        if not bool(row["before_longest"]):
            return np.nan, (f"at {where}, {b:g} BDP the study's share still moves at its "
                            f"longest read ({row['settled_s']:g} s)")
        needs = max(needs, float(row["settled_s"]))
    return needs, ""


def settle(per_run: pd.DataFrame, study: pd.DataFrame,
           deep_from_bdp: float = DEEP_FROM_BDP) -> pd.DataFrame:
    """``per_run`` (capacity_bps, rtt_s, buffer_bdp and each run's length ``run_s``) with
    whether each run counts: ``deep`` (from ``deep_from_bdp`` on), ``needs_s`` (the length
    the study's :func:`verdict` asks for there, NaN where it cannot say), ``settled`` and a
    ``status``, :data:`NOT_SETTLED` with its ``reason`` for a deep run that is too short or
    that the study cannot vouch for. Shallower runs are outside the study's question and
    count as measured."""
    out = per_run.copy()
    cap = out["capacity_bps"].astype(float).to_numpy() / 1e6
    rtt = out["rtt_s"].astype(float).to_numpy() * 1e3
    buf = out["buffer_bdp"].astype(float).to_numpy()
    run_s = out["run_s"].astype(float).to_numpy()
    needs, reasons = [], []
    for c, r, b, s in zip(cap, rtt, buf, run_s, strict=True):
        if b < deep_from_bdp:
            needs.append(np.nan)
            reasons.append("")
            continue
        n, why = _needs(c, r, b, study)
        if not np.isfinite(s):
            why = "the runs' length is not known"
        elif np.isfinite(n) and s < n:
            why = f"runs of {s:g} s where the run-length study needs {n:g} s"
        needs.append(n)
        reasons.append(why)
    out["deep"] = buf >= deep_from_bdp
    out["needs_s"] = needs
    out["settled"] = [not why for why in reasons]
    out["status"] = ["measured" if not why else NOT_SETTLED for why in reasons]
    out["reason"] = reasons
    return out


def campaign_runs(name: str, data_dir: Path = data.DATA) -> pd.DataFrame:
    """:func:`coexist.measured.runs.runs` of a campaign, with each run's length ``run_s``
    and the ``campaign``: what :func:`settle` reads."""
    from . import runs as runs_mod

    table = runs_mod.campaign_table(name, data_dir)
    per_run = runs_mod.runs(table)
    length = table.drop_duplicates("key").set_index("key")["duration_s"] if len(table) else {}
    return per_run.assign(run_s=per_run["key"].map(length).astype(float), campaign=name)


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
        return pd.DataFrame(columns=columns)
    here = settle(here.reset_index(drop=True), study)
    by = ["campaign", "run_s", "buffer_bdp"]
    g = here.groupby(by)
    points = pd.DataFrame({"mean": g[value].mean(), "min": g[value].min(),
                           "max": g[value].max(), "n_runs": g.size(),
                           "settled": g["settled"].all(), "status": g["status"].first(),
                           "reason": g["reason"].first(),
                           "needs_s": g["needs_s"].first()}).reset_index()
    longest = points[points["settled"]].groupby("buffer_bdp")["run_s"].max()
    points["counted"] = points["settled"] & np.isclose(
        points["run_s"], points["buffer_bdp"].map(longest).astype(float))
    return points.sort_values(["buffer_bdp", "run_s"], ignore_index=True)[columns]


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


def _buffer_list(buffers: Sequence[float]) -> str:
    values = [f"{b:g}" for b in sorted(set(float(b) for b in buffers))]
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
    lengths = _buffer_list(runs).replace(" and ", " or ")
    return (f"The {lengths}-s points at " + "; at ".join(parts)
            + f" are {NOT_SETTLED}.")


def settle_settings(frame: pd.DataFrame, mix: pd.DataFrame, study: pd.DataFrame,
                    data_dir: Path = data.DATA) -> pd.DataFrame:
    """``frame`` (rows of settings: capacity_bps, rtt_s, buffer_bdp, e.g. the equilibria
    found there) with :func:`settle`'s columns, each setting's run length being the shortest
    of its runs in ``mix`` (:func:`coexist.measured.runs.mix_runs`' rows, whose keys carry
    their campaign's name): an equilibrium is only as settled as its shortest run."""
    setting = ["capacity_bps", "rtt_s", "buffer_bdp"]
    lengths: dict[str, float] = {}
    for name in mix["campaign"].unique():
        r = campaign_runs(name, data_dir)
        lengths.update(zip(name + "/" + r["key"], r["run_s"], strict=True))
    m = mix[setting].astype(float).assign(run_s=mix["key"].map(lengths).astype(float))
    shortest = m.groupby(setting, as_index=False)["run_s"].min()
    out = frame.reset_index(drop=True)
    keys = out[setting].astype(float)
    run_s = keys.merge(shortest, on=setting, how="left")["run_s"]
    return settle(out.assign(run_s=run_s.to_numpy()), study)
