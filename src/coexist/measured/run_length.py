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

import functools
import json
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


#: From this buffer on (in BDP), a measured point is a deep-buffer point: where BBR's share
#: was seen to keep growing for minutes (T-F5), so a run there counts only once the study
#: declares its length settled (:func:`settle`).
DEEP_FROM_BDP = 10.0
#: what a page calls a deep-buffer point the study does not declare settled
NOT_SETTLED = "not settled (run-length study)"
#: bytes of a bottleneck packet that are not TCP payload: Ethernet 14, IPv4 20, TCP 20 and
#: its timestamp option 12 (``ss`` counts BBR's bandwidth in payload segments)
WIRE_HEADER_BYTES = 66


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
    and a share that settles before the longest read, the rule :func:`settle` applies to
    the campaigns' points."""
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


def _needs(capacity_mbps: float, rtt_ms: float, buffer_bdp: float, start_s: float,
           end_s: float, study: pd.DataFrame, read: WindowShare,
           tolerance: float) -> tuple[float, str]:
    """Whether the study vouches for a run at this setting scored over ``[start_s, end_s)``:
    the study's buffers on either side at the same capacity and RTT (the buffer itself
    where the study measured it) must each have all their planned runs, a share that has
    settled before the study's longest read, and, read over the same window, a share
    within ``tolerance`` of that longest read's. Returns the longer of their settled
    lengths (NaN where the study cannot say) and the reason it does not vouch ("" where
    it does)."""
    same = study[np.isclose(study["capacity_mbps"], capacity_mbps)
                 & np.isclose(study["rtt_ms"], rtt_ms)]
    where = f"{capacity_mbps:g} Mbit/s, {rtt_ms:g} ms"
    if same.empty:
        return np.nan, f"the run-length study did not measure {where}"
    if not np.isfinite(buffer_bdp):
        return np.nan, "the buffer is not known"
    buffers = same["buffer_bdp"].to_numpy(dtype=float)
    if buffer_bdp > buffers.max() + 1e-9:
        return np.nan, (f"deeper than the run-length study's deepest buffer at {where} "
                        f"({buffers.max():g} BDP)")
    needs, longest_s = 0.0, LENGTHS_S[-1]
    for b in sides(buffers, buffer_bdp):
        row = same[np.isclose(same["buffer_bdp"], b)].iloc[0]
        if row["repeats"] < row["planned"]:
            return np.nan, (f"the run-length study has {int(row['repeats'])} of its "
                            f"{int(row['planned'])} runs at {where}, {b:g} BDP")
        if not bool(row["before_longest"]):
            return np.nan, (f"at {where}, {b:g} BDP the study's share still moves at its "
                            f"longest read ({row['settled_s']:g} s)")
        needs = max(needs, float(row["settled_s"]))
        if start_s >= longest_s:  # scored wholly after the study's runs end: their longest read
            start, end = (1.0 - SCORED) * longest_s, longest_s
        else:
            start, end = start_s, min(end_s, longest_s)
        share = read(capacity_mbps, rtt_ms, b, start, end)
        if not np.isfinite(share):
            return np.nan, (f"the study's runs at {where}, {b:g} BDP have no goodput over "
                            f"{start:g}-{end:g} s")
        if not abs(share - float(row["longest_share"])) <= tolerance:
            return np.nan, (f"scored over {start:g}-{end:g} s as these runs are, the study's "
                            f"runs at {b:g} BDP give BBR {share:.2f}, against "
                            f"{float(row['longest_share']):.2f} over {longest_s:,.0f} s")
    return needs, ""


def sides(buffers: Sequence[float], buffer_bdp: float) -> list[float]:
    """The study's buffers (BDP) a point at ``buffer_bdp`` leans on: the nearest at or below
    it and the nearest at or above it (one, where the study measured the buffer itself;
    the shallowest, below the study's range). ``buffer_bdp`` must not be deeper than the
    deepest of ``buffers``."""
    b = np.asarray(buffers, dtype=float)
    lower = b[b <= buffer_bdp + 1e-9]
    upper = b[b >= buffer_bdp - 1e-9]
    if not len(upper):
        raise ValueError(f"buffer_bdp = {buffer_bdp:g} is deeper than the study's deepest "
                         f"buffer ({b.max():g} BDP)")
    return sorted({float(lower.max()) if len(lower) else float(upper.min()),
                   float(upper.min())})


def settle(per_run: pd.DataFrame, study: pd.DataFrame,
           deep_from_bdp: float = DEEP_FROM_BDP, tolerance: float = TOLERANCE,
           read: WindowShare | None = None) -> pd.DataFrame:
    """``per_run`` (capacity_bps, rtt_s, buffer_bdp and each run's ``run_s`` and
    ``warmup_s``: it is scored over ``[warmup_s, run_s)``) with whether each run counts:
    ``deep`` (from ``deep_from_bdp`` on), ``needs_s`` (the settled length of the study's
    :func:`verdict` there, NaN where it cannot say), ``settled``, and a ``status``,
    :data:`NOT_SETTLED` with its ``reason`` for a deep run the study does not vouch for
    (:func:`_needs`). Shallower runs are outside the study's question and count as
    measured. ``read`` gives the study's share over a window (default
    :func:`study_reader`)."""
    read = read or study_reader()
    out = per_run.copy()
    cap = out["capacity_bps"].astype(float).to_numpy() / 1e6
    rtt = out["rtt_s"].astype(float).to_numpy() * 1e3
    buf = out["buffer_bdp"].astype(float).to_numpy()
    run_s = out["run_s"].astype(float).to_numpy()
    warm = out["warmup_s"].astype(float).to_numpy()
    needs, reasons = [], []
    for c, r, b, s, w in zip(cap, rtt, buf, run_s, warm, strict=True):
        if b < deep_from_bdp:
            needs.append(np.nan)
            reasons.append("")
            continue
        if not (np.isfinite(s) and np.isfinite(w)):
            needs.append(np.nan)
            reasons.append("the runs' scored window is not known")
            continue
        n, why = _needs(c, r, b, w, s, study, read, tolerance)
        needs.append(n)
        reasons.append(why)
    out["deep"] = np.asarray(buf >= deep_from_bdp, dtype=bool)
    out["needs_s"] = np.asarray(needs, dtype=float)
    out["settled"] = np.array([not why for why in reasons], dtype=bool)
    out["status"] = ["measured" if not why else NOT_SETTLED for why in reasons]
    out["reason"] = reasons
    return out


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


def harness_checks(run_dirs: Sequence[tuple[dict, Path]]) -> pd.DataFrame:
    """What limits the long runs, one row per run: whether the socket buffers hold the
    windows a deep buffer needs, whether the delay line is what limits BBR, and how the
    ACK-path delay shows in BBR's RTprop estimate and window.

    - ``window_need_mb``: the most one flow can have in flight, one BDP plus the whole
      buffer (MB); ``cubic_cwnd_max_mb`` / ``bbr_cwnd_max_mb``: the largest window sampled
      of each flow, in bottleneck-sized packets (MB; CUBIC's slow start overshoots the
      path before its first loss); ``socket_headroom``: the socket buffers' limit
      (:data:`coexist.testbed.topology.SOCKET_BUFFER_MAX`) over the larger of those.
    - ``lateness_p999_ms`` / ``lateness_max_ms``: how late the delay line released packets
      (its gate: p99.9 under 1 ms); ``probe_p99_ms``: the path's RTT by ping.
    - ``rtprop_min_ms`` / ``rtprop_median_ms``: BBR's own min-RTT estimate (``ss``) over the
      scored part, beside the base RTT ``rtt_ms``: the ACK-path delay is in it in full.
    - ``cwnd_over_2bdp_est``: BBR's window over twice the BDP its own estimates give
      (bandwidth times RTprop, in payload segments of the bottleneck packets less
      :data:`WIRE_HEADER_BYTES`), median over the scored samples: 1 where the window is
      what eq. (7)'s cwnd gain of 2 makes it.
    """
    from ..testbed.topology import SOCKET_BUFFER_MAX

    rows = []
    for setting, d in run_dirs:
        d = Path(d)
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        params = summary["params"]
        packet = float(summary["bottleneck_mean_packet_bytes"])
        mss = packet - WIRE_HEADER_BYTES  # what ss counts BBR's bandwidth in
        bdp_bytes = params["capacity_bps"] * params["rtt_s"] / 8
        need = bdp_bytes + float(params["buffer_bytes"])
        sockets = data.load_table(d / data.RUN_FILES["sockets"], "sockets")
        cwnd_max = sockets.groupby("cca")["cwnd"].max()
        scored = sockets[sockets["t_s"] >= params["warmup_s"]]
        bbr = scored[scored["cca"] == "bbr"].dropna(subset=["bbr_bw_bps", "bbr_mrtt_s",
                                                            "cwnd"])
        est = bbr["bbr_bw_bps"] / 8 * bbr["bbr_mrtt_s"] / mss  # segments
        lateness = (summary.get("delay_line") or {}).get("lateness_us") or {}
        probes = [p["p99_s"] for p in summary.get("probe") or []]
        rows.append({
            **setting, "rtt_ms": params["rtt_s"] * 1e3,
            "window_need_mb": need / 1e6,
            "cubic_cwnd_max_mb": float(cwnd_max.get("cubic", np.nan)) * packet / 1e6,
            "bbr_cwnd_max_mb": float(cwnd_max.get("bbr", np.nan)) * packet / 1e6,
            "socket_headroom": SOCKET_BUFFER_MAX / (float(cwnd_max.max()) * packet),
            "lateness_p999_ms": lateness.get("p999", np.nan) / 1e3,
            "lateness_max_ms": lateness.get("max", np.nan) / 1e3,
            "probe_p99_ms": max(probes) * 1e3 if probes else np.nan,
            "rtprop_min_ms": float(bbr["bbr_mrtt_s"].min()) * 1e3 if len(bbr) else np.nan,
            "rtprop_median_ms": float(bbr["bbr_mrtt_s"].median()) * 1e3 if len(bbr) else np.nan,
            "cwnd_over_2bdp_est": float((bbr["cwnd"] / (2 * est)).median()) if len(bbr)
            else np.nan})
    return pd.DataFrame(rows)


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


def series_order(labels: Sequence[str], measured: str) -> list[str]:
    """The point series of :func:`point_labels` in a figure's legend order: the campaign's
    own first, the study's next, the points not settled last."""
    return sorted(dict.fromkeys(labels), key=lambda s: (s == NOT_SETTLED, s != measured))
