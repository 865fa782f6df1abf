"""The tests of Scherrer et al.'s statements on their single-sender traces (§4.2, Figs. 4
and 5), on traces made to hold or break each one."""

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


def probe_rtt_every(period_s: float, first_s: float = 5.0):
    """A window at 100 % of the BDP that falls to 50 % for 0.3 s every period."""
    return lambda t: np.where(((t - first_s) % period_s < 0.3) & (t >= first_s), 50.0, 100.0)


def traces(over: dict | None = None) -> pd.DataFrame:
    """Model traces of BBRv1 and BBRv2 under both disciplines and measured BBRv1, made so
    that every statement holds; ``over`` replaces one (cca, aqm) trace's quantities."""
    base = {
        ("bbr1", "droptail"): dict(rate_pct=lambda t: 100 + 25 * np.sin(t), loss_pct=2.0,
                                   queue_pct=30.0, window_pct=200.0),
        ("bbr1", "red"): dict(rate_pct=lambda t: 100 + 25 * np.sin(t), loss_pct=2.0,
                              queue_pct=10.0, window_pct=200.0),
        ("bbr2", "droptail"): dict(rate_pct=100.0, loss_pct=0.1, queue_pct=5.0,
                                   window_pct=probe_rtt_every(10.0)),
        ("bbr2", "red"): dict(rate_pct=lambda t: 100 + 5 * np.sin(t), loss_pct=0.1,
                              queue_pct=2.0, window_pct=probe_rtt_every(10.0)),
        ("bbr1", "measured"): dict(rate_pct=100 / ts.FRAMES_PER_PAYLOAD),
    }
    base.update(over or {})
    return pd.concat([trace(c, a, **q) for (c, a), q in base.items()], ignore_index=True)


def verdict(short: str, t: pd.DataFrame, after_s: float = 5.0):
    (s,) = [s for s in ts.STATEMENTS if s.short == short]
    return s.test(t, after_s)


def test_every_statement_holds_on_traces_made_to_bear_them_out():
    v = ts.verdicts(traces(), 5.0)
    assert v["holds"].tolist() == [True] * len(ts.STATEMENTS), v["verdict"].tolist()


@pytest.mark.parametrize("short, over", [
    ("the rate level", {("bbr1", "measured"): dict(rate_pct=85.0)}),
    ("BBRv2's small loss", {("bbr2", "red"): dict(
        rate_pct=100.0, loss_pct=0.33, queue_pct=2.0, window_pct=probe_rtt_every(10.0))}),
    ("BBRv2 barely above the link under RED", {("bbr2", "red"): dict(
        rate_pct=lambda t: 100 + 22.7 * np.sin(t), loss_pct=0.1, queue_pct=2.0,
        window_pct=probe_rtt_every(10.0))}),
    ("RED leaving BBRv1's rate alone", {("bbr1", "red"): dict(
        rate_pct=lambda t: 90 + 25 * np.sin(t), loss_pct=2.0, queue_pct=10.0,
        window_pct=200.0)}),
    ("BBRv1 queueing less under RED", {("bbr1", "red"): dict(
        rate_pct=lambda t: 100 + 25 * np.sin(t), loss_pct=2.0, queue_pct=40.0,
        window_pct=200.0)}),
    ("the model's BBRv2 ProbeRTT every 10 s", {("bbr2", "droptail"): dict(
        rate_pct=100.0, loss_pct=0.1, queue_pct=5.0, window_pct=probe_rtt_every(6.0))}),
])
def test_each_statement_fails_where_the_traces_contradict_it(short, over):
    v = verdict(short, traces(over))
    assert v.holds is False, v.evidence


def test_goodput_is_compared_in_full_frames():
    """A sender whose goodput is 1448/1514 of the link fills it: the model's 100 % matches."""
    assert ts.FRAMES_PER_PAYLOAD == pytest.approx(1514 / 1448)
    v = verdict("the rate level", traces({("bbr1", "droptail"): dict(
        rate_pct=100.0, loss_pct=2.0, queue_pct=30.0, window_pct=200.0)}))
    assert v.holds and v.evidence == "BBRv1 100.0 % against 100.0 %"


def test_what_the_traces_cannot_show_is_named():
    short_run = traces()
    short_run = short_run[short_run["t_s"] < 12.0]
    v = verdict("the model's BBRv2 ProbeRTT every 10 s", short_run)
    assert v.holds is None and "entries at 5.0 s of a 12-s run, too few to time" in v.evidence
    no_loss = traces({("bbr1", "droptail"): dict(rate_pct=100.0, loss_pct=0.0,
                                                   queue_pct=30.0, window_pct=200.0),
                        ("bbr1", "red"): dict(rate_pct=100.0, loss_pct=0.0, queue_pct=10.0,
                                              window_pct=200.0)})
    v = verdict("BBRv2's small loss", no_loss)
    assert v.holds is None and "too little to compare" in v.evidence
    unmeasured = traces()
    unmeasured = unmeasured[unmeasured["aqm"] != "measured"]
    assert verdict("the rate level", unmeasured).holds is None
