"""The tests of Scherrer et al.'s statements on their single-sender traces (§4.2 on Figs. 4
and 5, appendix B.3 on Figs. 11 and 12), on traces made to hold or break each one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from coexist.measured import trace_statements as ts

T = np.arange(0.0, 25.0, 0.02)


def trace(cca: str, aqm: str, **q) -> pd.DataFrame:
    """A long trace of one sender: each quantity a function of time (or a constant)."""
    parts = []
    for quantity, f in q.items():
        v = f(T) if callable(f) else np.full_like(T, f)
        parts.append(pd.DataFrame({"cca": cca, "aqm": aqm, "t_s": T, "quantity": quantity,
                                   "percent": v}))
    return pd.concat(parts, ignore_index=True)


def sawtooth(t):
    """A loss-based window over 80-130 % of the BDP with a period of 2 s."""
    return 80 + 25 * (t % 2.0)


LOSS_BASED_DT = dict(rate_pct=lambda t: np.minimum(sawtooth(t), 100.0), loss_pct=0.05,
                     queue_pct=lambda t: np.maximum(sawtooth(t) - 100, 0) * 2,
                     window_pct=sawtooth)
LOSS_BASED_RED = dict(rate_pct=lambda t: 95 + 4 * np.sin(t), loss_pct=0.1, queue_pct=5.0,
                      window_pct=90.0)


def traces(over: dict | None = None) -> pd.DataFrame:
    """Model traces of every algorithm under both disciplines and measured BBRv1, made so
    that every statement holds; ``over`` replaces one (cca, aqm) trace's quantities."""
    base = {
        ("bbr1", "droptail"): dict(rate_pct=lambda t: 100 + 25 * np.sin(t), loss_pct=2.0,
                                   queue_pct=30.0, window_pct=200.0),
        ("bbr1", "red"): dict(rate_pct=lambda t: 100 + 25 * np.sin(t), loss_pct=2.0,
                              queue_pct=10.0, window_pct=200.0),
        ("bbr2", "droptail"): dict(rate_pct=100.0, loss_pct=0.1, queue_pct=5.0,
                                   window_pct=100.0),
        ("bbr2", "red"): dict(rate_pct=lambda t: 100 + 5 * np.sin(t), loss_pct=0.1,
                              queue_pct=2.0, window_pct=100.0),
        ("reno", "droptail"): LOSS_BASED_DT, ("cubic", "droptail"): LOSS_BASED_DT,
        ("reno", "red"): LOSS_BASED_RED, ("cubic", "red"): LOSS_BASED_RED,
        ("bbr1", "measured"): dict(rate_pct=100 / ts.FRAMES_PER_PAYLOAD),
    }
    base.update(over or {})
    return pd.concat([trace(c, a, **q) for (c, a), q in base.items()], ignore_index=True)


def probe_rtt(entries_s=(5.0, 15.2), run_s: float = ts.PROBE_RTT_RUN_S) -> pd.DataFrame:
    """BBRv2's ProbeRTT mode under both disciplines: on for 0.2 s from each entry."""
    t = np.arange(0.0, run_s, 0.02)
    mode = np.zeros_like(t)
    for e in entries_s:
        mode[(t >= e) & (t < e + 0.2)] = 1.0
    return pd.concat([pd.DataFrame({"aqm": a, "t_s": t, "mode": mode})
                      for a in ("droptail", "red")], ignore_index=True)


def made(over: dict | None = None, modes: pd.DataFrame | None = None) -> ts.TraceSet:
    return ts.TraceSet(traces(over), 5.0, probe_rtt() if modes is None else modes)


def verdict(short: str, t: ts.TraceSet):
    (s,) = [s for s in ts.STATEMENTS if s.short == short]
    return s.test(t)


def test_every_statement_holds_on_traces_made_to_bear_them_out():
    v = ts.verdicts(made())
    assert v["holds"].tolist() == [True] * len(ts.STATEMENTS), v["verdict"].tolist()


@pytest.mark.parametrize("short, over", [
    ("the rate level", {("bbr1", "measured"): dict(rate_pct=85.0)}),
    ("BBRv2's small loss", {("bbr2", "red"): dict(
        rate_pct=100.0, loss_pct=0.33, queue_pct=2.0, window_pct=100.0)}),
    ("BBRv2 barely above the link under RED", {("bbr2", "red"): dict(
        rate_pct=lambda t: 100 + 22.7 * np.sin(t), loss_pct=0.1, queue_pct=2.0,
        window_pct=100.0)}),
    ("RED leaving BBRv1's rate alone", {("bbr1", "red"): dict(
        rate_pct=lambda t: 90 + 25 * np.sin(t), loss_pct=2.0, queue_pct=10.0,
        window_pct=200.0)}),
    ("BBRv1 queueing less under RED", {("bbr1", "red"): dict(
        rate_pct=lambda t: 100 + 25 * np.sin(t), loss_pct=2.0, queue_pct=40.0,
        window_pct=200.0)}),
    # the rate follows the window while the buffer fills
    ("the loss-based rate decoupled from the window", {("cubic", "droptail"): dict(
        LOSS_BASED_DT, rate_pct=sawtooth)}),
    ("the loss-based CCAs' small loss", {("reno", "red"): dict(LOSS_BASED_RED, loss_pct=0.5)}),
    # the buffer holds a queue, but the window does not grow through it
    ("the loss-based rate decoupled from the window", {("reno", "droptail"): dict(
        LOSS_BASED_DT, queue_pct=20.0, window_pct=105.0, rate_pct=100.0)}),
    ("the loss-based CCAs never above the link under RED", {("cubic", "red"): dict(
        LOSS_BASED_RED, rate_pct=lambda t: 100 + 2 * np.sin(t))}),
    # never above the link under RED, but the window never above the BDP either
    ("the loss-based CCAs never above the link under RED", {("reno", "droptail"): dict(
        LOSS_BASED_DT, window_pct=lambda t: np.minimum(sawtooth(t), 99.0))}),
    ("the loss-based CCAs queueing less under RED", {("reno", "red"): dict(
        LOSS_BASED_RED, queue_pct=50.0)}),
])
def test_each_statement_fails_where_the_traces_contradict_it(short, over):
    v = verdict(short, made(over))
    assert v.holds is False, v.evidence


def test_probe_rtt_is_timed_from_the_solver_mode_not_from_window_dips():
    """Entries 6 s apart fail; a window dip under RED (a loss cut) is no entry, since the
    mode is read, not the window; a run with one entry fails in its verdict's words."""
    assert verdict("the model's BBRv2 ProbeRTT every 10 s",
                   made(modes=probe_rtt((5.0, 11.0, 17.0)))).holds is False
    dipped = {("bbr2", "red"): dict(rate_pct=100.0, loss_pct=0.1, queue_pct=2.0,
                                    window_pct=lambda t: np.where(t % 3 < 0.2, 40.0, 100.0))}
    v = verdict("the model's BBRv2 ProbeRTT every 10 s", made(dipped))
    assert v.holds and v.evidence == ("drop-tail: entries at 5.0, 15.2 s; "
                                      "RED: entries at 5.0, 15.2 s")
    v = verdict("the model's BBRv2 ProbeRTT every 10 s", made(modes=probe_rtt((5.0,), 12.0)))
    assert v.holds is None and "a run of 12 s holds too few entries" in v.evidence
    v = verdict("the model's BBRv2 ProbeRTT every 10 s", made(modes=probe_rtt((5.0,))))
    assert v.holds is False and "entries at 5.0 s of a 22-s run" in v.evidence
    # the slack grows with the RTT: 10.9 s apart fails at no RTT, passes at 50 ms
    late = probe_rtt((5.0, 15.9))
    t = made(modes=late)
    assert verdict("the model's BBRv2 ProbeRTT every 10 s", t).holds is False
    assert verdict("the model's BBRv2 ProbeRTT every 10 s",
                   ts.TraceSet(t.traces, 5.0, late, rtt_s=0.05)).holds is True
    assert ts.PROBE_RTT_RUN_S >= 2 * ts.PROBE_RTT_INTERVAL_S + ts.PROBE_RTT_SLACK_S


def test_goodput_is_compared_in_full_frames():
    """A sender whose goodput is 1448/1514 of the link fills it: the model's 100 % matches."""
    assert ts.FRAMES_PER_PAYLOAD == pytest.approx(1514 / 1448)
    v = verdict("the rate level", made({("bbr1", "droptail"): dict(
        rate_pct=100.0, loss_pct=2.0, queue_pct=30.0, window_pct=200.0)}))
    assert v.holds and v.evidence == "the level only: BBRv1 100.0 % against 100.0 %"


def test_what_the_traces_cannot_show_is_named():
    no_loss = {("bbr1", "droptail"): dict(rate_pct=100.0, loss_pct=0.0, queue_pct=30.0,
                                          window_pct=200.0),
               ("bbr1", "red"): dict(rate_pct=100.0, loss_pct=0.0, queue_pct=10.0,
                                     window_pct=200.0)}
    v = verdict("BBRv2's small loss", made(no_loss))
    assert v.holds is None and "too little to compare" in v.evidence
    t = made()
    unmeasured = ts.TraceSet(t.traces[t.traces["aqm"] != "measured"], 5.0, t.probe_rtt)
    assert verdict("the rate level", unmeasured).holds is None
    assert verdict("the model's BBRv2 ProbeRTT every 10 s",
                   ts.TraceSet(t.traces, 5.0)).holds is None
    never_filled = {("reno", "droptail"): dict(LOSS_BASED_DT, queue_pct=0.0)}
    assert verdict("the loss-based rate decoupled from the window",
                   made(never_filled)).holds is None
