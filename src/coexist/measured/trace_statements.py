"""What Scherrer et al. say about their single-sender traces (§4.2 on Figs. 4 and 5,
appendix B.3 on Figs. 11 and 12), as tests on the model's traces and ours.

The paper reads its trace validations in a few sentences: the models predict the rate
patterns, BBRv2 (and Reno and CUBIC) lose far less than BBRv1, BBRv2 barely exceeds the
link under RED and the loss-based CCAs never do, RED leaves BBRv1's rate alone but lowers
the queue, the loss-based CCAs' rate stops growing with their window once the buffer
fills, and the model's BBRv2 enters ProbeRTT every 10 s. Each is a
:class:`~coexist.measured.aggregate_statements.Statement` here, with the reading that is
tested, run on a :class:`TraceSet`: a long table of traces, ``cca`` (``bbr1``, ``bbr2``,
``reno``, ``cubic``), ``aqm`` (``droptail`` and ``red`` for the model, ``measured`` for
our drop-tail runs), ``t_s``, ``quantity`` (a key of
:data:`coexist.measured.fluid_vs_measured.TRACE_QUANTITIES`) and ``percent``. Every
reading uses the traces after ``after_s``, past the start, which differs between the
model (no start-up phase) and Linux (slow start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..testbed.spec import WIRE_PACKET_BYTES
from .aggregate_statements import Statement, Verdict
from .validity import FRAME_OVERHEAD_BYTES

NAMES = {"bbr1": "BBRv1", "bbr2": "BBRv2", "reno": "Reno", "cubic": "CUBIC"}
MODEL_AQMS = {"droptail": "drop-tail", "red": "RED"}
LOSS_BASED = ("reno", "cubic")

#: "barely exceeds the link rate", read as a peak of at most this share of it (%)
BARELY_PCT = 110.0
#: "never exceeds the bottleneck rate": a peak of at most this (%). A fluid sender whose
#: queue grows sends a fraction of a percent above the link, since its rate is its window
#: over an RTT that lags the queue; the reading allows that, not more
NEVER_ABOVE_PCT = 100.5
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
#: "the buffer fills up": a queue above this share of the buffer (%)
FILLED_PCT = 10.0
#: "rate growth decouples from window growth": while the buffer is filled, the window
#: grows by more than this (points of the BDP) and the rate stays within RATE_LEVEL_PCT of
#: the link (5th to 95th percentile)
WINDOW_GROWTH_PCT = 10.0
#: "every 10 seconds": successive ProbeRTT entries this far apart, within the slack (s)
#: plus PROBE_RTT_SLACK_RTTS round trips (the 200 ms spent in ProbeRTT and the expiry,
#: which the model reads a round trip late, add to the interval)
PROBE_RTT_INTERVAL_S = 10.0
PROBE_RTT_SLACK_S = 0.5
PROBE_RTT_SLACK_RTTS = 10
#: a run long enough to hold two ProbeRTT entries wherever the first falls in the first
#: interval (s)
PROBE_RTT_RUN_S = 2 * PROBE_RTT_INTERVAL_S + 2 * PROBE_RTT_SLACK_S + 1.0


@dataclass(frozen=True)
class TraceSet:
    traces: pd.DataFrame  # long: cca, aqm, t_s, quantity, percent
    after_s: float        # readings use the traces after this
    #: BBRv2's ProbeRTT mode in the model (aqm, t_s, mode 0 or 1) over a run of at least
    #: PROBE_RTT_RUN_S; None where it was not run
    probe_rtt: pd.DataFrame | None = None
    rtt_s: float = 0.0  # the path's base RTT


def _values(ts: TraceSet, cca: str, aqm: str, quantity: str) -> pd.Series:
    t = ts.traces
    rows = t[(t["cca"] == cca) & (t["aqm"] == aqm) & (t["quantity"] == quantity)
             & (t["t_s"] > ts.after_s)]
    rows = rows[["t_s", "percent"]].dropna().sort_values("t_s")
    return pd.Series(rows["percent"].to_numpy(), index=rows["t_s"].to_numpy())


def _missing(what: str) -> Verdict:
    return Verdict(None, what)


def _loss_text(pct: float) -> str:
    return f"under {NO_LOSS_PCT:g} %" if pct < NO_LOSS_PCT else f"{pct:.2g} %"


def _loses_less_than_bbr1(ccas: tuple[str, ...]):
    def test(ts: TraceSet) -> Verdict:
        parts, ok, tested = [], True, 0
        for aqm, name in MODEL_AQMS.items():
            v1 = _values(ts, "bbr1", aqm, "loss_pct")
            others = {c: _values(ts, c, aqm, "loss_pct") for c in ccas}
            if v1.empty or any(v.empty for v in others.values()):
                return _missing(f"needs BBRv1 and {', '.join(NAMES[c] for c in ccas)} "
                                f"under {name}")
            if v1.mean() < NO_LOSS_PCT:  # nothing to lose considerably less than
                parts.append(f"{name}: BBRv1 loses less than {NO_LOSS_PCT:g} %, too "
                             "little to compare")
                continue
            tested += 1
            ok &= all(v.mean() <= MUCH_SMALLER * v1.mean() for v in others.values())
            parts.append(f"{name}: " + ", ".join(f"{NAMES[c]} {_loss_text(v.mean())}"
                                                 for c, v in others.items())
                         + f" against BBRv1's {_loss_text(v1.mean())}")
        return Verdict(ok if tested else None, "; ".join(parts))
    return test


def _bbr2_barely_above_under_red(ts: TraceSet) -> Verdict:
    rate = _values(ts, "bbr2", "red", "rate_pct")
    if rate.empty:
        return _missing("needs BBRv2 under RED")
    return Verdict(bool(rate.max() <= BARELY_PCT), f"peak {rate.max():.1f} % of the link")


def _red_leaves_bbr1_rate(ts: TraceSet) -> Verdict:
    dt = _values(ts, "bbr1", "droptail", "rate_pct")
    red = _values(ts, "bbr1", "red", "rate_pct")
    if dt.empty or red.empty:
        return _missing("needs BBRv1 under drop-tail and RED")
    d_mean, d_peak = red.mean() - dt.mean(), red.max() - dt.max()
    ok = bool(abs(d_mean) <= NO_IMPACT_PCT and abs(d_peak) <= NO_IMPACT_PCT)
    return Verdict(ok, f"mean {dt.mean():.1f} % under drop-tail, {red.mean():.1f} % under "
                       f"RED; peak {dt.max():.1f} % and {red.max():.1f} %")


def _per_cca(ccas: tuple[str, ...], quantities: tuple[tuple[str, str], ...],
             judge: Callable[..., tuple[bool, str]], head: str = "") -> Callable[
                 [TraceSet], Verdict]:
    """A test over each of ``ccas``: its traces of the (discipline, quantity) pairs
    ``quantities`` go to ``judge``, which returns (holds, evidence) for that CCA; the test
    holds where it holds for every one."""
    def test(ts: TraceSet) -> Verdict:
        parts, ok = [], True
        for c in ccas:
            series = [_values(ts, c, aqm, q) for aqm, q in quantities]
            if any(s.empty for s in series):
                return _missing(f"needs {NAMES[c]} under drop-tail and RED")
            holds, text = judge(NAMES[c], *series)
            ok &= bool(holds)
            parts.append(text)
        return Verdict(ok, head + "; ".join(parts))
    return test


def _red_lowers_queue(ccas: tuple[str, ...]):
    return _per_cca(ccas, (("droptail", "queue_pct"), ("red", "queue_pct")),
                    lambda name, dt, red: (
                        red.mean() < dt.mean(),
                        f"{name} {red.mean():.1f} % of the buffer under RED, "
                        f"{dt.mean():.1f} % under drop-tail"), head="mean queue: ")


_loss_based_never_above_under_red = _per_cca(
    LOSS_BASED, (("red", "rate_pct"), ("droptail", "window_pct")),
    lambda name, red, dt: (
        red.max() <= NEVER_ABOVE_PCT and dt.max() > 100.0,
        f"{name} peak rate {red.max():.2f} % under RED, peak window {dt.max():.0f} % of the "
        "BDP under drop-tail"))


def _rate_decouples_from_window(ts: TraceSet) -> Verdict:
    parts, ok = [], True
    for c in LOSS_BASED:
        queue = _values(ts, c, "droptail", "queue_pct")
        rate = _values(ts, c, "droptail", "rate_pct")
        window = _values(ts, c, "droptail", "window_pct")
        if queue.empty or rate.empty or window.empty:
            return _missing(f"needs {NAMES[c]} under drop-tail")
        filled = queue.index[queue.to_numpy() > FILLED_PCT]
        if len(filled) < 2:
            return _missing(f"{NAMES[c]}'s buffer never fills")
        r = rate[rate.index.isin(filled)]
        w = window[window.index.isin(filled)]
        lo, hi = r.quantile(0.05), r.quantile(0.95)
        grows = w.max() - w.min()
        ok &= bool(grows > WINDOW_GROWTH_PCT and 100 - RATE_LEVEL_PCT <= lo
                   and hi <= 100 + RATE_LEVEL_PCT)
        parts.append(f"{NAMES[c]}: window over {w.min():.0f}-{w.max():.0f} % of the BDP, "
                     f"rate {lo:.1f}-{hi:.1f} % of the link")
    return Verdict(ok, "while the buffer is filled: " + "; ".join(parts))


def _bbr2_probe_rtt_every_10s(ts: TraceSet) -> Verdict:
    if ts.probe_rtt is None or ts.probe_rtt.empty:
        return _missing("no run of BBRv2's ProbeRTT mode")
    slack = PROBE_RTT_SLACK_S + PROBE_RTT_SLACK_RTTS * ts.rtt_s
    parts, ok = [], True
    for aqm, name in MODEL_AQMS.items():
        rows = ts.probe_rtt[ts.probe_rtt["aqm"] == aqm].sort_values("t_s")
        if rows.empty:
            return _missing(f"needs BBRv2 under {name}")
        span = rows["t_s"].max() - rows["t_s"].min()
        on = rows["mode"].to_numpy() > 0.5
        entries = rows["t_s"].to_numpy()[on & ~np.r_[False, on[:-1]]]
        at = ", ".join(f"{x:.1f}" for x in entries) or "none"
        if len(entries) < 2:
            if span < PROBE_RTT_RUN_S - PROBE_RTT_SLACK_S:  # a sample short of it is as long
                return _missing(f"a run of {span:.0f} s holds too few entries to time "
                                f"(at least {PROBE_RTT_RUN_S:g} s needed)")
            ok = False
            parts.append(f"{name}: entries at {at} s of a {span:.0f}-s run")
            continue
        gaps = np.diff(entries)
        ok &= bool(np.all(np.abs(gaps - PROBE_RTT_INTERVAL_S) <= slack))
        parts.append(f"{name}: entries at {at} s")
    return Verdict(ok, "; ".join(parts))


def _rate_level(ts: TraceSet) -> Verdict:
    measured = [c for c in NAMES if not _values(ts, c, "measured", "rate_pct").empty]
    if not measured:
        return _missing("no measured sender at this setting")
    parts, ok = [], True
    for cca in measured:
        m = _values(ts, cca, "droptail", "rate_pct")
        x = _values(ts, cca, "measured", "rate_pct") * FRAMES_PER_PAYLOAD
        if m.empty:
            return _missing(f"no model trace of {NAMES[cca]}")
        ok &= bool(abs(m.mean() - x.mean()) <= RATE_LEVEL_PCT)
        parts.append(f"{NAMES[cca]} {m.mean():.1f} % against {x.mean():.1f} %")
    return Verdict(ok, "the level only: " + "; ".join(parts))


#: each test takes a TraceSet
STATEMENTS: tuple[Statement, ...] = (
    Statement("Figs. 4, 5", "the rate level",
              "The fluid models are highly predictive of the rate patterns over time.",
              f"Drop-tail, each algorithm measured: the model's mean sending rate within "
              f"{RATE_LEVEL_PCT:g} points of the link of our sender's mean goodput, counted "
              "in full frames. Only the level is compared: the testbed records what arrives, "
              "and a busy bottleneck delivers at its rate whatever the sender's pattern.",
              _rate_level),
    Statement("Figs. 4, 5", "BBRv2's small loss",
              "BBRv2 loses considerably less than BBRv1 (its loss barely visible).",
              f"Model, each discipline where BBRv1 loses: BBRv2's mean loss at most "
              f"{MUCH_SMALLER:g} of BBRv1's.", _loses_less_than_bbr1(("bbr2",))),
    Statement("Fig. 5", "BBRv2 barely above the link under RED",
              "Under RED, BBRv2's sending rate barely exceeds the link rate.",
              f"Model, RED: BBRv2's peak rate at most {BARELY_PCT:g} % of the link.",
              _bbr2_barely_above_under_red),
    Statement("Fig. 4", "RED leaving BBRv1's rate alone",
              "RED has no impact on the loss-insensitive BBRv1.",
              f"Model: BBRv1's mean and peak rate under RED within {NO_IMPACT_PCT:g} points "
              "of the link of drop-tail's.", _red_leaves_bbr1_rate),
    Statement("Fig. 4", "BBRv1 queueing less under RED",
              "BBRv1 uses less of the buffer under RED, more markedly in the model than "
              "in experiments.",
              "Model: BBRv1's mean queue lower under RED than under drop-tail (the "
              "comparison with experiment needs RED, which this kernel lacks).",
              _red_lowers_queue(("bbr1",))),
    Statement("Fig. 5", "the model's BBRv2 ProbeRTT every 10 s",
              "In the model, BBRv2 enters ProbeRTT every 10 seconds.",
              f"Model, each discipline, a run of at least {PROBE_RTT_RUN_S:g} s: successive "
              f"entries into the solver's ProbeRTT mode {PROBE_RTT_INTERVAL_S:g} s apart, "
              f"within {PROBE_RTT_SLACK_S:g} s and {PROBE_RTT_SLACK_RTTS:d} round trips "
              "(the 200 ms in ProbeRTT and the round trip the model reads expiry late "
              "add to the interval).", _bbr2_probe_rtt_every_10s),
    Statement("Figs. 11, 12", "the loss-based rate decoupled from the window",
              "The rate growth of Reno and CUBIC decouples from their window growth as soon "
              "as the buffer fills up.",
              f"Model, drop-tail, Reno and CUBIC, while the queue holds more than "
              f"{FILLED_PCT:g} % of the buffer: the window ranges over more than "
              f"{WINDOW_GROWTH_PCT:g} points of the BDP while the rate stays within "
              f"{RATE_LEVEL_PCT:g} points of the link (5th to 95th percentile).",
              _rate_decouples_from_window),
    Statement("Figs. 11, 12", "the loss-based CCAs' small loss",
              "Reno and CUBIC lose considerably less than BBRv1 (their loss barely "
              "visible).",
              f"Model, each discipline where BBRv1 loses: Reno's and CUBIC's mean loss each "
              f"at most {MUCH_SMALLER:g} of BBRv1's.",
              _loses_less_than_bbr1(LOSS_BASED)),
    Statement("Figs. 11, 12", "the loss-based CCAs never above the link under RED",
              "Loss-based CCAs never send faster than the link under RED, while their "
              "windows can exceed the BDP under drop-tail.",
              f"Model: Reno's and CUBIC's peak rate under RED at most {NEVER_ABOVE_PCT:g} % "
              "of the link (a fluid sender overshoots by a fraction of a percent while its "
              "queue grows), and their peak window under drop-tail above the BDP.",
              _loss_based_never_above_under_red),
    Statement("Figs. 11, 12", "the loss-based CCAs queueing less under RED",
              "Reno and CUBIC use less of the buffer under RED, more markedly in the model "
              "than in experiments.",
              "Model: Reno's and CUBIC's mean queue lower under RED than under drop-tail "
              "(the comparison with experiment needs RED, which this kernel lacks).",
              _red_lowers_queue(LOSS_BASED)),
)


def verdicts(ts: TraceSet) -> pd.DataFrame:
    """Every statement with its reading and its verdict on the traces (the model's and,
    where the statement is about a comparison with experiment, ours)."""
    rows = []
    for s in STATEMENTS:
        v = s.test(ts)
        rows.append({"figure": s.figure, "short": s.short,
                     "the paper says": f"{s.figure}: {s.says}", "our reading": s.reading,
                     "verdict": v.text(), "holds": v.holds})
    return pd.DataFrame(rows)
