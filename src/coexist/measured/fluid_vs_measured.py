"""The fluid model's aggregate metrics beside our measurements (Scherrer et al. §4.3,
Figs. 6-10 and 13-17).

Ten senders, half of each algorithm of a pair, RTTs spread over a range, buffers of 1-7 BDP.
The model side runs every pair of Reno, CUBIC, BBRv1 and BBRv2 under drop-tail and RED; the
measured side is the fluid-validation campaign (BBRv1, CUBIC and Reno, drop-tail only, as
this machine's kernel has no RED module and no BBRv2).

The measured metrics follow the paper's definitions as far as the testbed records them:
Jain fairness of the flows' goodput, the bottleneck's drop rate, its mean backlog over the
buffer and its utilisation, all after the warm-up. Jitter (delay variation between
consecutive packets) needs per-packet delays, which the testbed does not capture, so it
has no measured side.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from ..core.params import invalid
from ..fluid.studies.beside_measured import (
    STARTS,
    model_metrics,
    pair_label,
    window_metrics,
)
from . import comparison
from . import runs as measured

KERNEL_NAMES = {"reno": "reno", "cubic": "cubic", "bbr": "bbr1"}  # testbed -> model CCA
METRICS = ("jain", "loss_rate", "queue_share", "utilisation")
CAMPAIGN = "fluid_validation"


def measured_queue_by_window(pair: str, windows: Sequence[tuple[float, float]], *,
                             rtt_min_ms: float, n_flows: int = 10,
                             data_dir: Path = data.DATA, capacity_mbps: float | None = None,
                             rtt_max_ms: float | None = None) -> pd.DataFrame:
    """The measured counterpart of :func:`model_queue_transient`: per stored valid run of
    the pair (fluid-validation campaign), its bottleneck's mean backlog over the buffer in
    each (start, end) window; one row per run and window."""
    rows = []
    runs = _measured_runs(rtt_min_ms, n_flows, data_dir, capacity_mbps, rtt_max_ms)
    for r in [r for r in runs if r["pair"] == pair]:
        run_dir = Path(data_dir) / "runs" / CAMPAIGN / r["key"]
        buffer_bytes = data.read_summary(run_dir / "summary.json")["params"]["buffer_bytes"]
        q = data.load_table(run_dir / data.RUN_FILES["queue"], "queue")
        for a, b in windows:
            w = q[(q["t_s"] >= a) & (q["t_s"] < b)]
            if w.empty:
                raise invalid("windows", (a, b), f"a window holding queue samples of {run_dir}")
            rows.append({"buffer_bdp": r["buffer_bdp"], "repeat": r["repeat"],
                         "start_s": float(a), "end_s": float(b),
                         "queue_share": _queue_share(w, buffer_bytes)})
    return pd.DataFrame(rows, columns=["buffer_bdp", "repeat", "start_s", "end_s",
                                       "queue_share"])


def queue_by_window(shares: pd.DataFrame, source: str) -> pd.DataFrame:
    """A per-window queue table (:func:`model_queue_transient`'s or
    :func:`measured_queue_by_window`'s) set out for reading: one row per buffer, one column
    per window, labelled ``"<source> <start>-<end> s"`` and in the order the windows first
    appear; several rows of a buffer and window (repeats) give their mean."""
    if shares.empty:
        return pd.DataFrame(index=pd.Index([], name="buffer_bdp", dtype=float))
    labels = [f"{source} {a:g}-{b:g} s" for a, b in zip(shares["start_s"], shares["end_s"],
                                                           strict=True)]
    view = (shares.assign(window=labels)
            .groupby(["buffer_bdp", "window"], sort=False)["queue_share"].mean().unstack())
    view.columns.name = "window"
    return view.sort_index()[list(dict.fromkeys(labels))]


def measured_window(rtt_min_ms: float, n_flows: int = 10,
                    data_dir: Path = data.DATA) -> tuple[float, float]:
    """(start, end) in seconds of the window the fluid-validation runs with ``n_flows``
    senders from ``rtt_min_ms`` are measured over (:func:`run_metrics`): from the warm-up to
    0.5 s before the end, as the campaign file sets them. Running the model over the same
    window compares like with like; the paper's figures use 5-s traces instead."""
    from ..testbed import campaign

    c = campaign.load(Path(data_dir) / "campaigns" / f"{CAMPAIGN}.yaml")
    windows = {(p.exp.warmup_s, p.exp.duration_s - 0.5) for p in c.points
               if len(p.exp.flows) == n_flows
               and np.isclose(min(f.rtt_s for f in p.exp.flows), rtt_min_ms / 1e3)}
    if len(windows) != 1:
        raise invalid("rtt_min_ms", rtt_min_ms,
                      f"a shortest RTT of {n_flows}-sender runs in {CAMPAIGN}.yaml with one "
                      f"measurement window (found {sorted(windows) or 'none'})")
    return windows.pop()


def _queue_share(queue: pd.DataFrame, buffer_bytes: float) -> float:
    """Mean bottleneck backlog of these queue samples over the buffer (§4.3.3)."""
    return float(queue["backlog_bytes"].mean() / buffer_bytes)


def run_metrics(run_dir: Path) -> dict:
    """The paper's aggregate metrics of one stored run, over its measurement window.

    Loss is the bottleneck's drops over the packets that reached it (sent + dropped), and
    the queue its mean backlog over the buffer, both between the warm-up and 0.5 s before
    the end (the window the run's utilisation uses). Jain and utilisation come from the
    run's summary.
    """
    run_dir = Path(run_dir)
    summary = data.read_summary(run_dir / "summary.json")
    p = summary["params"]
    q = data.load_table(run_dir / data.RUN_FILES["queue"], "queue")
    w = q[(q["t_s"] >= p["warmup_s"]) & (q["t_s"] <= p["duration_s"] - 0.5)]
    if len(w) < 2:
        raise invalid("queue samples", len(w), f">= 2 between warm-up and end in {run_dir}")
    first, last = w.iloc[0], w.iloc[-1]
    drops = last["drops"] - first["drops"]
    arrived = last["sent_packets"] - first["sent_packets"] + drops
    return {"jain": summary["jain_index"], "loss_rate": drops / arrived if arrived else np.nan,
            "queue_share": _queue_share(w, p["buffer_bytes"]),
            "utilisation": summary["utilisation"]}


def _measured_runs(rtt_min_ms: float, n_flows: int, data_dir: Path,
                   capacity_mbps: float | None = None,
                   rtt_max_ms: float | None = None) -> list[dict]:
    """Pair, buffer, repeat and key of every stored valid run of the fluid-validation
    campaign with ``n_flows`` senders whose shortest RTT is ``rtt_min_ms`` (and, where
    given, whose capacity is ``capacity_mbps`` and longest RTT ``rtt_max_ms``: a page
    re-run at another setting draws no run of this one)."""
    table = measured.campaign_table(CAMPAIGN, data_dir)
    runs = []
    for key, g in table.groupby("key", sort=True) if not table.empty else ():
        rtts = g["flow_rtt_s"].astype(float)
        if len(g) != n_flows or not np.isclose(rtts.min(), rtt_min_ms / 1e3):
            continue
        if rtt_max_ms is not None and not np.isclose(rtts.max(), rtt_max_ms / 1e3):
            continue
        if capacity_mbps is not None and not np.isclose(float(g["capacity_bps"].iloc[0]),
                                                        capacity_mbps * 1e6):
            continue
        ccas = [KERNEL_NAMES[c] for c in g["cca"]]
        runs.append({"pair": pair_label(ccas), "buffer_bdp": float(g["buffer_bdp"].iloc[0]),
                     "repeat": int(g["repeat"].iloc[0]), "key": key})
    return runs


def measured_metrics(rtt_min_ms: float, n_flows: int = 10,
                     data_dir: Path = data.DATA, *, capacity_mbps: float | None = None,
                     rtt_max_ms: float | None = None) -> pd.DataFrame:
    """One row per stored valid run of the fluid-validation campaign with ``n_flows``
    senders whose shortest RTT is ``rtt_min_ms`` (and the capacity and longest RTT, where
    given): pair, buffer, repeat and the metrics."""
    rows = [{**r, **run_metrics(Path(data_dir) / "runs" / CAMPAIGN / r["key"])}
            for r in _measured_runs(rtt_min_ms, n_flows, data_dir, capacity_mbps,
                                    rtt_max_ms)]
    return pd.DataFrame(rows, columns=["pair", "buffer_bdp", "repeat", "key", *METRICS])


def spread(per_run: pd.DataFrame) -> pd.DataFrame:
    """Mean, min and max of every metric over the repeats of each (pair, buffer), long."""
    long = per_run.melt(id_vars=["pair", "buffer_bdp"], value_vars=list(METRICS),
                        var_name="metric", value_name="value")
    return comparison.spread(long, ["pair", "buffer_bdp", "metric"], "value")


def accuracy(model: pd.DataFrame, measured_spread: pd.DataFrame) -> pd.DataFrame:
    """Model minus measured mean, per pair and metric, over the buffers measured (drop-tail):
    mean absolute and mean signed error, and how many buffers."""
    cols = ["pair", "metric", "buffers", "mean_abs_error", "mean_error"]
    if measured_spread.empty:
        return pd.DataFrame(columns=cols)
    j = _paired(model, measured_spread)
    j["err"] = j["model"] - j["measured"]
    g = j.groupby(["pair", "metric"])["err"]
    return pd.DataFrame({"buffers": g.size(), "mean_abs_error": g.apply(lambda e: e.abs().mean()),
                         "mean_error": g.mean()}).reset_index()[cols]


def _paired(model: pd.DataFrame, measured_spread: pd.DataFrame) -> pd.DataFrame:
    """Model (drop-tail) and measured mean side by side: pair, buffer_bdp, metric, model,
    measured (empty where either side is: a setting nothing was measured at)."""
    if model.empty or measured_spread.empty:
        return pd.DataFrame(columns=["pair", "buffer_bdp", "metric", "measured", "model"])
    m = model[model["aqm"] == "droptail"].melt(
        id_vars=["pair", "buffer_bdp"], value_vars=list(METRICS), var_name="metric",
        value_name="model")
    j = measured_spread.rename(columns={"mean": "measured"})[
        ["pair", "buffer_bdp", "metric", "measured"]]
    return j.merge(m, on=["pair", "buffer_bdp", "metric"], how="inner")


def _spearman(x: pd.Series, y: pd.Series) -> float:
    """Spearman's rank correlation, NaN when either side is constant."""
    if x.nunique() < 2 or y.nunique() < 2:
        return float("nan")
    return float(x.rank().corr(y.rank()))


def _wide(values: pd.Series, relative: float, floor: float) -> bool:
    """Whether the values span at least ``relative`` of their largest magnitude and at
    least ``floor``."""
    span = float(values.max() - values.min())
    return span >= max(relative * float(values.abs().max()), floor)


def trend_agreement(model: pd.DataFrame, measured_spread: pd.DataFrame, *,
                    min_buffers: int = 3, clear_rho: float = 0.5,
                    min_change: float = 0.1, floor: float = 0.002) -> pd.DataFrame:
    """Does the model get the direction of each metric's change with the buffer right
    (Scherrer et al., Insight 7, first half)?

    Per pair and metric, over the buffers measured: Spearman's rho of the metric against
    the buffer size, for the model and for the measured means. ``agree`` is whether the
    signs match (a flat model disagrees), judged only where the measured trend is clear:
    at least ``min_buffers`` buffers, |rho| >= ``clear_rho``, and a measured range of at
    least ``min_change`` of the largest measured value and at least ``floor`` (a
    utilisation moving from 0.98 to 0.99 has a rank order but no trend worth judging,
    while loss rates live on a scale of hundredths). Elsewhere it is missing.
    """
    cols = ["pair", "metric", "buffers", "rho_model", "rho_measured", "agree"]
    j = _paired(model, measured_spread)
    rows = []
    for (pair, metric), g in j.groupby(["pair", "metric"], sort=True):
        rho_mod = _spearman(g["buffer_bdp"], g["model"])
        rho_mea = _spearman(g["buffer_bdp"], g["measured"])
        clear = (len(g) >= min_buffers and abs(rho_mea) >= clear_rho  # False for NaN
                 and _wide(g["measured"], min_change, floor))
        agree = (bool(np.sign(rho_mod) == np.sign(rho_mea)) if not np.isnan(rho_mod)
                 else False) if clear else None
        rows.append({"pair": pair, "metric": metric, "buffers": len(g),
                     "rho_model": rho_mod, "rho_measured": rho_mea, "agree": agree})
    return pd.DataFrame(rows, columns=cols)


def ranking_agreement(model: pd.DataFrame, measured_spread: pd.DataFrame, *,
                      min_pairs: int = 3, min_spread: float = 0.1,
                      floor: float = 0.002) -> pd.DataFrame:
    """Does the model rank the CCA pairs right on each metric (Insight 7, second half)?

    Per metric and buffer with at least ``min_pairs`` pairs measured, where both the model
    and the measurements spread the pairs over at least ``min_spread`` of their largest
    value and at least ``floor`` (otherwise the order is noise): Spearman's rho between
    the model's and the measured values across the pairs (1: same order, -1: reversed)."""
    cols = ["metric", "buffer_bdp", "pairs", "rho"]
    j = _paired(model, measured_spread)
    rows = [{"metric": metric, "buffer_bdp": buf, "pairs": len(g),
             "rho": _spearman(g["model"], g["measured"])}
            for (metric, buf), g in j.groupby(["metric", "buffer_bdp"], sort=True)
            if len(g) >= min_pairs
            and _wide(g["model"], min_spread, floor)
            and _wide(g["measured"], min_spread, floor)]
    return pd.DataFrame(rows, columns=cols)


def error_by_metric(model: pd.DataFrame, measured_spread: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute error of the model per metric over every measured pair and buffer
    (Insight 8). All four metrics are fractions in [0, 1], so the errors compare."""
    j = _paired(model, measured_spread)
    j["abs_error"] = (j["model"] - j["measured"]).abs()
    g = j.groupby("metric")["abs_error"]
    return pd.DataFrame({"settings": g.size(), "mean_abs_error": g.mean()}).reset_index()


def start_comparison(measured_spread: pd.DataFrame, *, capacity_mbps: float,
                     rtt_min_ms: float, rtt_max_ms: float, n_flows: int,
                     windows: Sequence[tuple[float, float]]
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The model from each of :data:`STARTS`, averaged over each (start_s, end_s) window,
    against the measured drop-tail pairs and buffers: (mean absolute error per metric, as
    :func:`error_by_metric`; mean queue-share error per pair, as :func:`accuracy`), both
    with columns (start, window). Shows how much of the model's error is its start."""
    if measured_spread.empty:
        raise invalid("measured_spread", "an empty table", "at least one measured setting")
    if not windows:
        raise invalid("windows", windows, "at least one (start_s, end_s)")
    runs = {}
    for name in STARTS:  # one run per setting and start, as long as the latest window
        by_window = window_metrics(
            capacity_mbps=capacity_mbps, rtt_min_ms=rtt_min_ms, rtt_max_ms=rtt_max_ms,
            n_flows=n_flows, buffers_bdp=sorted(set(measured_spread["buffer_bdp"])),
            windows=windows, aqms=("droptail",), pairs=set(measured_spread["pair"]),
            start=name)
        for a, b in windows:
            runs[(name, f"{a:g}-{b:g} s")] = by_window[(float(a), float(b))]
    err = pd.concat([error_by_metric(m, measured_spread).assign(start=s, window=w)
                     for (s, w), m in runs.items()])
    queue = pd.concat([accuracy(m, measured_spread).assign(start=s, window=w)
                       for (s, w), m in runs.items()])
    queue = queue[queue["metric"] == "queue_share"]
    order = list(runs)
    by_metric = err.pivot(index="metric", columns=["start", "window"],
                          values="mean_abs_error")[order]
    by_pair = queue.pivot(index="pair", columns=["start", "window"], values="mean_error")[order]
    return by_metric, by_pair


def at_buffers(measured_spread: pd.DataFrame, buffers_bdp: Sequence[float]) -> pd.DataFrame:
    """The measured spread at the buffers a page draws only (a re-run with other buffers
    compares its model with the measurements at those, not at every buffer measured)."""
    keep = [any(np.isclose(b, x) for x in buffers_bdp) for b in measured_spread["buffer_bdp"]]
    return measured_spread[np.array(keep, dtype=bool)] if len(measured_spread) else measured_spread


def like_for_like(measured_spread: pd.DataFrame, *, capacity_mbps: float,
                  rtt_min_ms: float, rtt_max_ms: float, n_flows: int) -> pd.DataFrame:
    """The model (the paper's start) over our measurements' window
    (:func:`measured_window`) at just the pairs and buffers measured, each pair only at the
    buffers it was measured at, under drop-tail: the model as our testbed sees the same
    settings. Empty where nothing is measured."""
    if measured_spread.empty:
        return pd.DataFrame()
    window = measured_window(rtt_min_ms, n_flows)
    model = window_metrics(
        capacity_mbps=capacity_mbps, rtt_min_ms=rtt_min_ms, rtt_max_ms=rtt_max_ms,
        n_flows=n_flows, buffers_bdp=sorted(set(measured_spread["buffer_bdp"])),
        windows=[window], aqms=("droptail",), pairs=set(measured_spread["pair"]))[
        (float(window[0]), float(window[1]))]
    measured_at = set(zip(measured_spread["pair"], measured_spread["buffer_bdp"].round(9),
                          strict=True))
    keep = [(p, round(b, 9)) in measured_at for p, b in zip(model["pair"], model["buffer_bdp"],
                                                           strict=True)]
    return model[np.array(keep, dtype=bool)].reset_index(drop=True)


#: the aggregate figures' metrics (S-F6-10, S-F13-17), as their panels title them
METRIC_TITLES = {"jain": "Jain fairness", "loss_rate": "Loss rate",
                 "queue_share": "Queue / buffer", "utilisation": "Utilisation",
                 "jitter_ms": "Jitter (ms)"}
#: their queueing disciplines, as their panels title them
AQM_TITLES = {"droptail": "drop-tail", "red": "RED"}


def flat_columns(frame: pd.DataFrame, index: str) -> pd.DataFrame:
    """A table with (start, window)-like column pairs as a page shows it: the pairs joined
    by commas, the index a column named ``index``."""
    out = frame.copy()
    out.columns = [", ".join(map(str, c)) if isinstance(c, tuple) else str(c)
                   for c in out.columns]
    return out.rename_axis(index).reset_index()


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """A :func:`flat_columns` table of :func:`start_comparison` with its start and metric
    names as the pages write them ("post-loss start", "Jain fairness")."""
    table = table.copy()
    table.columns = [c.replace("post_loss,", "post-loss start,").replace(
        "paper,", "paper's start,") for c in table.columns]
    if "metric" in table:
        table["metric"] = table["metric"].map(lambda m: METRIC_TITLES.get(m, m))
    return table


TRACE_QUANTITIES = {"rate_pct": "rate (% of C)", "queue_pct": "queue (% of B)",
                    "loss_pct": "loss (%)", "rtt_excess_pct": "RTT excess (% of d)",
                    "window_pct": "window (% of BDP)"}


def run_trace(run_dir: Path, flow: int = 0) -> pd.DataFrame:
    """One stored run's trace normalised as in the paper's trace figures (Figs. 4, 5, 11,
    12), long: t_s, quantity (a key of :data:`TRACE_QUANTITIES`) and percent.

    Rate is the flow's receiver goodput per reporting interval, in % of the capacity (the
    paper plots sending rates; the testbed records what arrived). Queue is the bottleneck
    backlog in % of the buffer and loss its drops in % of the packets that reached it,
    per queue sample. RTT excess is the sender's smoothed RTT above the configured base
    RTT, in % of it, and window the sender's cwnd in % of the path BDP in 1500-byte
    packets (the fluid model's packet), both from the socket samples.
    """
    run_dir = Path(run_dir)
    summary = data.read_summary(run_dir / "summary.json")
    p = summary["params"]
    flows = summary["flows"]
    if not 0 <= flow < len(flows):
        raise invalid("flow", flow, f"0..{len(flows) - 1} (the run's flows)")
    rtt = float(flows[flow]["rtt_s"])
    cap = float(p["capacity_bps"])
    series = data.load_table(run_dir / data.RUN_FILES["series"], "series")
    series = series[series["flow"] == flow]
    q = data.load_table(run_dir / data.RUN_FILES["queue"], "queue")
    sock = data.load_table(run_dir / data.RUN_FILES["sockets"], "sockets")
    sock = sock[sock["flow"] == flow]
    d_drop = q["drops"].diff()
    arrived = q["sent_packets"].diff() + d_drop
    bdp_pkts = cap * rtt / (8 * 1500)
    parts = {
        "rate_pct": (series["t_end_s"], series["goodput_bps"] / cap * 100),
        "queue_pct": (q["t_s"], q["backlog_bytes"] / p["buffer_bytes"] * 100),
        "loss_pct": (q["t_s"][1:], (d_drop / arrived.where(arrived > 0))[1:] * 100),
        "rtt_excess_pct": (sock["t_s"], (sock["srtt_s"] - rtt) / rtt * 100),
        "window_pct": (sock["t_s"], sock["cwnd"] / bdp_pkts * 100),
    }
    return pd.concat([pd.DataFrame({"t_s": t.to_numpy(dtype=float), "quantity": k,
                                    "percent": v.to_numpy(dtype=float)})
                      for k, (t, v) in parts.items()], ignore_index=True)


def insights_7_8(rtt_min_ms: float, rtt_max_ms: float, duration_s: float, warmup_s: float,
                 n_flows: int = 10) -> tuple[list[dict], list[tuple[int, str, str]],
                                             pd.DataFrame, pd.DataFrame]:
    """Scherrer et al.'s Insights 7 and 8, the model against our fluid-validation runs
    (drop-tail; BBRv1, CUBIC and Reno, the algorithms this kernel has), at the given RTT
    spread, run length and warm-up: the evidence rows and verdicts (as
    :mod:`coexist.fluid.studies.insights` gives Insights 1-6), the trend agreement and the pair
    rankings behind them. A verdict is "open" where too few settings are measured."""
    meas = spread(measured_metrics(rtt_min_ms, n_flows))
    model = model_metrics(capacity_mbps=100.0, rtt_min_ms=rtt_min_ms, rtt_max_ms=rtt_max_ms,
                          n_flows=n_flows, buffers_bdp=sorted(meas["buffer_bdp"].unique()),
                          duration_s=duration_s, warmup_s=warmup_s, aqms=("droptail",))
    trend = trend_agreement(model, meas)
    rank = ranking_agreement(model, meas)
    err = error_by_metric(model, meas).set_index("metric")["mean_abs_error"]
    judged = trend["agree"].dropna().astype(bool)
    n_meas = meas[["pair", "buffer_bdp"]].drop_duplicates().shape[0]
    rows: list[dict] = []
    verdicts = []
    if len(judged) >= 5 and len(rank) >= 5:
        rows += [{"insight": 7, "setting": f"{len(judged)} clear measured trends vs buffer",
                  "metric": "share agreeing", "value": judged.mean()},
                 {"insight": 7, "setting": f"pair ranking at {len(rank)} (metric, buffer)",
                  "metric": "median rho", "value": rank["rho"].median()}]
        ok = judged.mean() >= 0.75 and rank["rho"].median() >= 0.5
        verdicts.append((7, "reproduced" if ok else "not reproduced",
                         f"on {n_meas} measured (pair, buffer) settings: the model's trend "
                         "with the buffer has the measured sign in >= 75 % of clear measured "
                         "trends (|rho| >= 0.5, a change of >= 10 % of the metric's scale), "
                         "and its ranking of the pairs has median Spearman rho >= 0.5 where "
                         "both sides spread them by >= 10 % "
                         "(fluid_vs_measured.trend_agreement, ranking_agreement)"))
    else:
        verdicts.append((7, "open", f"too few measured settings ({n_meas}) in data/"))
    if len(err) == 4:
        rows += [{"insight": 8, "setting": f"{m} ({n_meas} settings)",
                  "metric": "mean abs. error", "value": v} for m, v in err.items()]
        ok = err.idxmin() == "loss_rate" and err["queue_share"] < min(err["jain"],
                                                                      err["utilisation"])
        verdicts.append((8, "reproduced" if ok else "not reproduced",
                         "loss has the model's smallest mean absolute error, and buffer use "
                         "a smaller one than fairness and utilisation (all four are "
                         "fractions)"))
    else:
        verdicts.append((8, "open", f"too few measured settings ({n_meas}) in data/"))
    return rows, verdicts, trend, rank
