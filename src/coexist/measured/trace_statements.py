"""What Scherrer et al. say about their single-sender traces (§4.2, Figs. 4 and 5), as
tests on the model's traces and ours.

The paper reads its trace validations in a few sentences: the models predict the rate
patterns, BBRv2 loses far less than BBRv1, BBRv2 barely exceeds the link under RED, RED
leaves BBRv1's rate alone but lowers its queue, and the model's BBRv2 enters ProbeRTT every
10 s. Each is a :class:`~coexist.measured.aggregate_statements.Statement` here, with the
reading that is tested, run on a long table of traces: ``cca`` (``bbr1``, ``bbr2``,
``reno``, ``cubic``), ``aqm`` (``droptail`` and ``red`` for the model, ``measured`` for
our drop-tail runs), ``t_s``, ``quantity`` (a key of
:data:`coexist.measured.fluid_vs_measured.TRACE_QUANTITIES`) and ``percent``. Every
reading uses the traces after ``after_s``, past the start, which differs between the
model (no start-up phase) and Linux (slow start).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..testbed.spec import WIRE_PACKET_BYTES
from .aggregate_statements import Statement, Verdict
from .validity import FRAME_OVERHEAD_BYTES

NAMES = {"bbr1": "BBRv1", "bbr2": "BBRv2", "reno": "Reno", "cubic": "CUBIC"}
MODEL_AQMS = {"droptail": "drop-tail", "red": "RED"}

#: "barely exceeds the link rate", read as a peak of at most this share of it (%)
BARELY_PCT = 110.0
#: "considerably smaller loss": at most this share of the other's
MUCH_SMALLER = 0.1
#: a mean loss below this (%) leaves nothing to be considerably smaller than
NO_LOSS_PCT = 0.01
#: "no impact" on a rate: mean and peak within this many points of the link (%)
NO_IMPACT_PCT = 2.0
#: "predictive of the rate pattern": mean rate within this many points of the link (%)
RATE_LEVEL_PCT = 5.0
#: a measured goodput counted in full frames on the wire, the link's own unit, as the
#: model counts its 1500-byte packets: 1514 / 1448 (a frame over its TCP payload)
FRAMES_PER_PAYLOAD = WIRE_PACKET_BYTES / (WIRE_PACKET_BYTES - FRAME_OVERHEAD_BYTES)
#: ProbeRTT holds half the BDP in flight: a window at or below this share of it marks one
PROBE_RTT_WINDOW_PCT = 60.0
#: "every 10 seconds": successive ProbeRTT entries this far apart, within the slack (s)
PROBE_RTT_INTERVAL_S = 10.0
PROBE_RTT_SLACK_S = 0.5


def _values(traces: pd.DataFrame, cca: str, aqm: str, quantity: str,
            after_s: float) -> pd.DataFrame:
    rows = traces[(traces["cca"] == cca) & (traces["aqm"] == aqm)
                  & (traces["quantity"] == quantity) & (traces["t_s"] > after_s)]
    return rows[["t_s", "percent"]].dropna().sort_values("t_s")


def _missing(what: str) -> Verdict:
    return Verdict(None, what)


def _bbr2_loses_less(traces: pd.DataFrame, after_s: float) -> Verdict:
    parts, ok, tested = [], True, 0
    for aqm, name in MODEL_AQMS.items():
        v1 = _values(traces, "bbr1", aqm, "loss_pct", after_s)["percent"]
        v2 = _values(traces, "bbr2", aqm, "loss_pct", after_s)["percent"]
        if v1.empty or v2.empty:
            return _missing(f"needs BBRv1 and BBRv2 under {name}")
        if v1.mean() < NO_LOSS_PCT:  # nothing for BBRv2 to lose less than
            parts.append(f"{name}: BBRv1 loses less than {NO_LOSS_PCT:g} %, too little "
                         "to compare")
            continue
        tested += 1
        ok &= bool(v2.mean() <= MUCH_SMALLER * v1.mean())
        parts.append(f"{name}: {v2.mean():.2g} % against {v1.mean():.2g} %")
    return Verdict(ok if tested else None, "; ".join(parts))


def _bbr2_barely_above_under_red(traces: pd.DataFrame, after_s: float) -> Verdict:
    rate = _values(traces, "bbr2", "red", "rate_pct", after_s)["percent"]
    if rate.empty:
        return _missing("needs BBRv2 under RED")
    return Verdict(bool(rate.max() <= BARELY_PCT), f"peak {rate.max():.1f} % of the link")


def _red_leaves_bbr1_rate(traces: pd.DataFrame, after_s: float) -> Verdict:
    dt = _values(traces, "bbr1", "droptail", "rate_pct", after_s)["percent"]
    red = _values(traces, "bbr1", "red", "rate_pct", after_s)["percent"]
    if dt.empty or red.empty:
        return _missing("needs BBRv1 under drop-tail and RED")
    d_mean, d_peak = red.mean() - dt.mean(), red.max() - dt.max()
    ok = bool(abs(d_mean) <= NO_IMPACT_PCT and abs(d_peak) <= NO_IMPACT_PCT)
    return Verdict(ok, f"mean {dt.mean():.1f} % under drop-tail, {red.mean():.1f} % under "
                       f"RED; peak {dt.max():.1f} % and {red.max():.1f} %")


def _red_lowers_bbr1_queue(traces: pd.DataFrame, after_s: float) -> Verdict:
    dt = _values(traces, "bbr1", "droptail", "queue_pct", after_s)["percent"]
    red = _values(traces, "bbr1", "red", "queue_pct", after_s)["percent"]
    if dt.empty or red.empty:
        return _missing("needs BBRv1 under drop-tail and RED")
    return Verdict(bool(red.mean() < dt.mean()),
                   f"mean queue {red.mean():.1f} % of the buffer under RED, {dt.mean():.1f} % "
                   "under drop-tail")


def _probe_rtt_entries(rows: pd.DataFrame) -> np.ndarray:
    """When the window first falls to :data:`PROBE_RTT_WINDOW_PCT` or below, each time."""
    low = rows["percent"].to_numpy() <= PROBE_RTT_WINDOW_PCT
    return rows["t_s"].to_numpy()[low & ~np.r_[False, low[:-1]]]


def _bbr2_probe_rtt_every_10s(traces: pd.DataFrame, after_s: float) -> Verdict:
    parts, ok, timed = [], True, 0
    for aqm, name in MODEL_AQMS.items():
        rows = _values(traces, "bbr2", aqm, "window_pct", -np.inf)
        if rows.empty:
            return _missing(f"needs BBRv2 under {name}")
        entries = _probe_rtt_entries(rows)
        at = ", ".join(f"{x:.1f}" for x in entries) or "none"
        span = rows["t_s"].max() - rows["t_s"].min()
        if len(entries) < 2:
            parts.append(f"{name}: entries at {at} s of a {span:.0f}-s run, too few to time")
            continue
        timed += 1
        gaps = np.diff(entries)
        ok &= bool(np.all(np.abs(gaps - PROBE_RTT_INTERVAL_S) <= PROBE_RTT_SLACK_S))
        parts.append(f"{name}: entries at {at} s")
    return Verdict(ok if timed else None, "; ".join(parts))


def _rate_patterns(traces: pd.DataFrame, after_s: float) -> Verdict:
    measured = [c for c in NAMES if not _values(traces, c, "measured", "rate_pct",
                                                after_s).empty]
    if not measured:
        return _missing("no measured sender at this setting")
    parts, ok = [], True
    for cca in measured:
        m = _values(traces, cca, "droptail", "rate_pct", after_s)["percent"]
        x = _values(traces, cca, "measured", "rate_pct", after_s)["percent"] * FRAMES_PER_PAYLOAD
        if m.empty:
            return _missing(f"no model trace of {NAMES[cca]}")
        ok &= bool(abs(m.mean() - x.mean()) <= RATE_LEVEL_PCT)
        parts.append(f"{NAMES[cca]} {m.mean():.1f} % against {x.mean():.1f} %")
    return Verdict(ok, "; ".join(parts))


#: each test takes the traces and after_s
STATEMENTS: tuple[Statement, ...] = (
    Statement("Figs. 4, 11, 12", "the rate level",
              "The fluid models are highly predictive of the rate patterns over time.",
              f"Drop-tail, each algorithm measured: the model's mean sending rate within "
              f"{RATE_LEVEL_PCT:g} points of the link of our sender's mean goodput, counted "
              "in full frames. Only the level is compared: the testbed records what arrives, "
              "and a busy bottleneck delivers at its rate whatever the sender's pattern.",
              _rate_patterns),
    Statement("Figs. 4, 5", "BBRv2's small loss",
              "BBRv2 loses considerably less than BBRv1 (its loss barely visible).",
              f"Model, each discipline: BBRv2's mean loss at most {MUCH_SMALLER:g} of "
              "BBRv1's.", _bbr2_loses_less),
    Statement("Fig. 5", "BBRv2 barely above the link under RED",
              "Under RED, BBRv2's sending rate barely exceeds the link rate.",
              f"Model, RED: BBRv2's peak rate at most {BARELY_PCT:g} % of the link.",
              _bbr2_barely_above_under_red),
    Statement("Fig. 4", "RED leaving BBRv1's rate alone",
              "RED has no impact on the loss-insensitive BBRv1.",
              f"Model: BBRv1's mean and peak rate under RED within {NO_IMPACT_PCT:g} points "
              "of the link of drop-tail's.", _red_leaves_bbr1_rate),
    Statement("Fig. 4", "BBRv1 queueing less under RED",
              "BBRv1 uses less of the buffer under RED.",
              "Model: BBRv1's mean queue lower under RED than under drop-tail.",
              _red_lowers_bbr1_queue),
    Statement("Fig. 5", "the model's BBRv2 ProbeRTT every 10 s",
              "In the model, BBRv2 enters ProbeRTT every 10 seconds.",
              f"Model, each discipline: successive entries into ProbeRTT (BBRv2's window "
              f"falling to {PROBE_RTT_WINDOW_PCT:g} % of the BDP or below; ProbeRTT holds "
              f"half of it) {PROBE_RTT_INTERVAL_S:g} s apart, within {PROBE_RTT_SLACK_S:g} s; "
              "a run must hold two to time them.",
              _bbr2_probe_rtt_every_10s),
)


def verdicts(traces: pd.DataFrame, after_s: float) -> pd.DataFrame:
    """Every statement with its reading and its verdict on ``traces`` (the model's and,
    where the statement is about a comparison with experiment, ours)."""
    rows = []
    for s in STATEMENTS:
        v = s.test(traces, after_s)
        rows.append({"figure": s.figure, "short": s.short, "the paper says": s.says,
                     "our reading": s.reading, "verdict": v.text(), "holds": v.holds})
    return pd.DataFrame(rows)
