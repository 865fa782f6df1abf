"""How the flows ran inside each measured run, from their ``ss`` samples: BBR's operating
point (its RTprop estimate, cwnd, ProbeRTT share, whether its cwnd limited it) and the
CUBIC/BBR regime the fluid model reads (queue under one BDP, CUBIC's window swing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import data
from ..closed_form import mishra
from . import runs as measured

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
    out = measured.per_run_table(name, data_dir, lambda t: t["n_bbr"] > 0,
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
    """What the fluid model's :func:`coexist.fluid.model.metrics.cubic_bbr_regime` reads, from a
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

    return measured.per_run_table(name, data_dir, lambda t: t["n_flows"] > t["n_bbr"],
                    read, ["queue_samples", "queue_below_bdp", "cwnd_samples",
                           "cubic_low_over_high"])
