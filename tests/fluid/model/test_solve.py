"""The fluid-model solver: invariants, limit cases, determinism, agreement with the
plain-NumPy reference (coexist.fluid.model.oracle)."""

import dataclasses

import numpy as np
import pytest

from coexist.core.params import ParameterError
from coexist.fluid.model import cubic, metrics, oracle, solve


def dumbbell(*args, **kw):
    """The printed reading's dumbbell: this file tests that kernel (:func:`.solve.run`'s own)
    against the NumPy reference and the printed equations."""
    return solve.dumbbell(*args, **{"reading": "printed", **kw})


C_BPS = 100e6
PPS = C_BPS / 12000


def test_invariants_rates_queue_loss_in_range():
    cfg = dumbbell(["cubic", "reno", "cubic"], capacity_bps=C_BPS,
                         rtt_s=[0.02, 0.03, 0.04], buffer_bdp=0.5, duration_s=3.0,
                         initial_window=80.0)
    tr = solve.run(cfg)
    assert tr.loss.max() > 0  # the scenario does reach the buffer
    assert np.all(tr.rate_pps >= 0) and np.all(tr.window_pkts >= 1)
    assert np.all((tr.queue_pkts >= 0) & (tr.queue_pkts <= cfg.buffer_pkts))
    assert np.all((tr.loss >= 0) & (tr.loss <= 1))
    # RTT is propagation plus queueing delay (eq. 3): never below the base RTT
    assert np.all(tr.rtt_s >= np.array([0.02, 0.03, 0.04]) - 1e-12)
    assert np.all(tr.rtt_s <= np.array([0.02, 0.03, 0.04]) + cfg.buffer_pkts / PPS + 1e-12)


def test_no_loss_below_capacity_under_droptail():
    # two small windows never fill the link: no queue, no loss
    cfg = dumbbell(["reno", "reno"], capacity_bps=C_BPS, rtt_s=0.04, buffer_bdp=2,
                         duration_s=1.0, initial_window=10.0)
    tr = solve.run(cfg)
    assert tr.arrival_pps.max() < PPS
    assert tr.loss.max() < 1e-12 and tr.queue_pkts.max() == 0.0


def test_single_reno_flow_in_a_deep_buffer_fills_the_link():
    bdp = PPS * 0.02
    cfg = dumbbell(["reno"], capacity_bps=C_BPS, rtt_s=0.02, buffer_bdp=10,
                         duration_s=4.0, initial_window=bdp)
    tr = solve.run(cfg)
    late = tr.t > 1.0
    assert tr.rate_pps[late, 0].mean() / PPS == pytest.approx(1.0, abs=0.01)
    assert tr.queue_pkts[-1] > 0  # the surplus window waits in the queue
    assert tr.loss.max() < 1e-9   # a 10-BDP buffer is not filled in 4 s


@pytest.mark.parametrize("cca", ["reno", "cubic"])
def test_loss_based_flow_fills_a_shallow_buffer_link_with_little_loss(cca):
    """Scherrer et al. §4.3.2-4.3.4: loss-based CCAs keep drop-tail loss below 1 %, fill the
    buffer (bufferbloat) and, once it is full, back off and grow again."""
    cfg = dumbbell([cca], capacity_bps=C_BPS, rtt_s=0.02, buffer_bdp=0.5,
                         duration_s=20.0, initial_window=PPS * 0.02)
    tr = solve.run(cfg)
    late = tr.t > 5
    w = tr.window_pkts[late, 0]
    assert tr.rate_pps[late, 0].mean() / PPS > 0.99
    lost = (tr.arrival_pps * tr.loss)[late].mean() / tr.arrival_pps[late].mean()
    assert 0 < lost < 0.01
    assert tr.queue_pkts[late].mean() / cfg.buffer_pkts > 0.5
    assert w.min() < 0.9 * w.max()  # the window falls back after the buffer fills...
    assert w.min() > 0.5 * w.max()  # ...but the fluid loss is spread, not one halving


def test_deterministic_byte_identical():
    cfg = dumbbell(["cubic", "reno", "bbr1", "bbr2"], capacity_bps=C_BPS,
                         rtt_s=[0.02, 0.035, 0.02, 0.03],
                         buffer_bdp=1, duration_s=2.0, initial_window=60.0)
    a, b = solve.run(cfg), solve.run(cfg)
    for name in solve.Trace.OUTPUTS:
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
    for name in solve.BBR_FIELDS:
        assert a.bbr[name].tobytes() == b.bbr[name].tobytes()


@pytest.mark.parametrize("aqm", ["droptail", "red"])
def test_compiled_solver_agrees_with_reference(aqm):
    cfg = dumbbell(["cubic", "bbr1", "bbr2", "reno", "bbr1"], capacity_bps=C_BPS,
                         rtt_s=[0.02, 0.025, 0.03, 0.022, 0.028], buffer_bdp=0.5,
                         duration_s=0.5, aqm=aqm, initial_window=80.0)
    fast, ref = solve.run(cfg), oracle.run(cfg)
    assert fast.loss.max() > 0
    for name in solve.Trace.OUTPUTS:
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-9,
                                   atol=1e-9, err_msg=name)
    for name in solve.BBR_FIELDS:
        np.testing.assert_allclose(fast.bbr[name], ref.bbr[name], rtol=1e-9, atol=1e-9,
                                   err_msg=name)


def test_red_keeps_the_queue_lower_than_droptail():
    kw = dict(capacity_bps=C_BPS, rtt_s=0.02, buffer_bdp=2, duration_s=10.0,
              initial_window=PPS * 0.02)
    red = solve.run(dumbbell(["reno"] * 4, aqm="red", **kw))
    tail = solve.run(dumbbell(["reno"] * 4, aqm="droptail", **kw))
    late = red.t > 5
    assert red.queue_pkts[late].mean() < tail.queue_pkts[late].mean()


@pytest.mark.parametrize(("kw", "name"), [
    ({"capacity_pps": 0}, "capacity_pps"), ({"buffer_pkts": -1}, "buffer_pkts"),
    ({"aqm": "codel"}, "aqm"), ({"step_s": 1.0}, "step_s"), ({"flows": ()}, "flows"),
    ({"flows": (solve.Flow("vegas", 0.01, 0.01),)}, r"flows\[0\].cca"),
    ({"duration_s": 0}, "duration_s"), ({"initial_window": 0.5}, "initial_window"),
    ({"initial_window": (10.0, 10.0)}, "one value per flow"),
    ({"initial_window": (0.5,)}, r"initial_window\[0\]"),
    ({"initial_window": [10.0]}, "or a tuple with one per flow"),
    ({"cubic_recovery": 1}, "cubic_recovery"), ({"rtprop_expiry": "yes"}, "rtprop_expiry"),
])
def test_config_errors_name_the_parameter(kw, name):
    args = dict(capacity_pps=PPS, buffer_pkts=100.0, flows=(solve.Flow("reno", 0.01, 0.01),))
    args.update(kw)
    with pytest.raises(ParameterError, match=name):
        solve.Config(**args).check()


def test_tables_are_tidy():
    cfg = dumbbell(["cubic", "reno"], capacity_bps=C_BPS, rtt_s=0.02, buffer_bdp=1,
                         duration_s=0.1)
    tr = solve.run(cfg)
    flows = tr.flows_table()
    assert list(flows.columns)[:6] == ["t_s", "flow", "cca", "rate_bps", "window_pkts",
                                       "rtt_s"]
    assert {"x_btl_bps", "rtprop_s", "inflight_pkts", "inflight_hi_pkts"} <= set(flows)
    assert len(flows) == 2 * len(tr.t) and set(flows.cca) == {"cubic", "reno"}
    assert list(tr.link_table().columns) == ["t_s", "queue_pkts", "loss", "arrival_bps"]


@pytest.fixture(scope="module")
def single_bbr():
    out = {}
    for cca in ("bbr1", "bbr2"):
        cfg = dumbbell([cca], capacity_bps=C_BPS, rtt_s=0.03, buffer_bdp=1,
                             duration_s=21.0, initial_window=PPS * 0.03)
        out[cca] = solve.run(cfg)
    return out


def test_bbr1_pacing_pulses_eq22(single_bbr):
    tr = single_bbr["bbr1"]
    gain = tr.bbr["pacing"][:, 0] / tr.bbr["x_btl"][:, 0]
    probe_bw = tr.bbr["m_prt"][:, 0] < 0.5
    assert set(np.round(gain[probe_bw], 6)) == {0.75, 1.0, 1.25}
    # one 5/4 phase and one 3/4 phase per period of 8 RTprop
    period = tr.t < 8 * 0.03
    frac_up = np.mean(np.isclose(gain[period], 1.25))
    frac_down = np.mean(np.isclose(gain[period], 0.75))
    assert frac_up == pytest.approx(1 / 8, abs=0.02) and frac_down == pytest.approx(1 / 8,
                                                                                    abs=0.02)


@pytest.mark.parametrize("cca", ["bbr1", "bbr2"])
def test_probe_rtt_every_10_s_for_200_ms_eqs11_13(single_bbr, cca):
    tr = single_bbr[cca]
    m = tr.bbr["m_prt"][:, 0]
    enter = tr.t[1:][np.diff(m) > 0.5]
    leave = tr.t[1:][np.diff(m) < -0.5]
    assert enter == pytest.approx([10.0, 20.2], abs=0.005)
    assert leave - enter == pytest.approx([0.2, 0.2], abs=0.005)
    # in ProbeRTT the inflight limit is 4 packets (BBRv1, eq. 23) or half the BDP (eq. 32)
    limit = tr.window_pkts[m > 0.5, 0]
    expected = 4.0 if cca == "bbr1" else PPS * 0.03 / 2
    assert np.median(limit) == pytest.approx(expected, rel=0.05)


def test_single_bbr_flow_fills_the_link_and_bbr2_queues_less(single_bbr):
    """Insights 3 and 4: BBRv1 fills the link and the buffer; BBRv2 fills the link with
    far less queue."""
    late = single_bbr["bbr1"].t > 2
    for tr in single_bbr.values():
        assert tr.rate_pps[late, 0].mean() / PPS == pytest.approx(1.0, abs=0.03)
        assert np.all(tr.bbr["tau_min"][:, 0] == pytest.approx(0.03))  # RTprop = d_p
    q1 = single_bbr["bbr1"].queue_pkts[late].mean()
    q2 = single_bbr["bbr2"].queue_pkts[late].mean()
    assert q2 < 0.5 * q1


def test_bbr2_probing_cycle_and_inflight_bounds_eqs24_31(single_bbr):
    tr = single_bbr["bbr2"]
    # probing periods: min(63 RTprop, 2 + i/N) = min(1.89, 3) s for one flow at 30 ms
    down = tr.bbr["m_dwn"][:, 0]
    starts = tr.t[1:][np.diff(down) > 0.5]
    gaps = np.diff(starts[starts < 9.5])
    assert len(gaps) >= 3 and np.allclose(gaps, 63 * 0.03, atol=0.02)
    cruising = tr.bbr["m_crs"][:, 0] > 0.5
    assert cruising.mean() > 0.5  # most of the time is spent cruising
    # in cruise the window is inflight_lo, never above 2 BDP estimates (eq. 31)
    w_bar = tr.bbr["x_btl"][:, 0] * tr.bbr["tau_min"][:, 0]
    probe_bw = tr.bbr["m_prt"][:, 0] < 0.5
    assert np.all(tr.window_pkts[probe_bw, 0] <= 2 * w_bar[probe_bw] + 1e-9)


def test_rtprop_expiry_agrees_with_reference():
    """The RTprop-expiry extension, compiled and plain NumPy, across a ProbeRTT entry."""
    cfg = dumbbell(["cubic", "bbr1", "bbr2"], capacity_bps=20e6,
                         rtt_s=[0.02, 0.025, 0.03], buffer_bdp=3, duration_s=10.4,
                         step_s=4e-4, sample_s=4e-3, initial_window=20.0, rtprop_expiry=True)
    fast, ref = solve.run(cfg), oracle.run(cfg)
    assert fast.bbr["m_prt"][:, 1:].max() == 1.0  # both BBR flows entered ProbeRTT
    for name in solve.BBR_FIELDS:
        np.testing.assert_allclose(fast.bbr[name], ref.bbr[name], rtol=1e-9, atol=1e-9,
                                   err_msg=name)


@pytest.fixture(scope="module")
def cubic_vs_bbr_deep():
    """1 CUBIC vs 1 BBRv1, 40 ms, 5 BDP: the paper's RTprop filter and the expiring one."""
    out = {}
    for expiry in (False, True):
        cfg = dumbbell(["cubic", "bbr1"], capacity_bps=C_BPS, rtt_s=0.04, buffer_bdp=5,
                             duration_s=40.0, step_s=5e-5, sample_s=1e-3,
                             initial_window=PPS * 0.04 / 2, rtprop_expiry=expiry)
        out[expiry] = solve.run(cfg)
    return out


def test_paper_rtprop_filter_never_rises_eq9(cubic_vs_bbr_deep):
    tau_min = cubic_vs_bbr_deep[False].bbr["tau_min"][:, 1]
    assert tau_min.max() == pytest.approx(0.04) and np.all(np.diff(tau_min) <= 0)


def test_expired_rtprop_takes_the_rtt_at_probe_rtt_entry(cubic_vs_bbr_deep):
    """Linux BBR replaces an expired min-RTT with the next sample; CUBIC's standing queue
    is in that sample, so RTprop (and BBR's window, 2 x x_btl x RTprop) grows."""
    tr = cubic_vs_bbr_deep[True]
    m = tr.bbr["m_prt"][:, 1]
    tau_min = tr.bbr["tau_min"][:, 1]
    enter = np.flatnonzero(np.diff(m) > 0.5) + 1
    assert len(enter) >= 2
    for k in enter:
        assert tau_min[k] == pytest.approx(tr.rtt_s[k, 1], rel=0.02)  # the sample at entry
        assert tau_min[k] > tau_min[k - 1]
    assert tau_min.min() >= 0.04 - 1e-12 and tau_min.max() > 1.5 * 0.04
    late = tr.t > 15
    share = {e: t.rate_pps[t.t > 15, 1].mean() / t.rate_pps[t.t > 15].sum(axis=1).mean()
             for e, t in cubic_vs_bbr_deep.items()}
    assert share[True] > 2 * share[False]
    assert tr.queue_pkts[late].mean() > 0


def test_expired_probe_rtt_holds_200ms_and_a_round_once_drained():
    """Linux BBR leaves ProbeRTT after max(200 ms, 1 round), counted once what was in
    flight at entry is acknowledged (tcp_bbr.c); in a deep buffer the round is longer."""
    cfg = dumbbell(["cubic", "bbr1"], capacity_bps=C_BPS, rtt_s=0.04, buffer_bdp=20,
                         duration_s=32.0, step_s=1e-4, sample_s=1e-3,
                         initial_window=PPS * 0.04 / 2, rtprop_expiry=True)
    tr = solve.run(cfg)
    m = (tr.bbr["m_prt"][:, 1] > 0.5).astype(int)
    starts, ends = np.flatnonzero(np.diff(m) > 0) + 1, np.flatnonzero(np.diff(m) < 0) + 1
    checked = long_rounds = 0
    for k0 in starts:
        later = ends[ends > k0]
        if not len(later):
            continue
        rtt_entry = tr.rtt_s[k0, 1]  # drained one RTT after entry ...
        rtt_drained = tr.rtt_s[np.searchsorted(tr.t, tr.t[k0] + rtt_entry), 1]
        # ... then held for max(200 ms, the RTT seen once drained)
        assert tr.t[later[0]] - tr.t[k0] == pytest.approx(
            rtt_entry + max(0.2, rtt_drained), abs=5e-3)
        checked += 1
        long_rounds += rtt_drained > 0.25
    assert checked >= 2 and long_rounds >= 1


def test_expiry_changes_nothing_for_a_lone_bbr_flow():
    """Alone, BBRv1 drains its own queue in ProbeRTT, so RTprop returns to d_p."""
    kw = dict(capacity_bps=C_BPS, rtt_s=0.03, buffer_bdp=1, duration_s=21.0,
              initial_window=PPS * 0.03, step_s=5e-5)
    a = solve.run(dumbbell(["bbr1"], **kw))
    b = solve.run(dumbbell(["bbr1"], rtprop_expiry=True, **kw))
    assert b.bbr["tau_min"][-1, 0] == pytest.approx(0.03, rel=1e-3)
    assert b.rate_pps[b.t > 2, 0].mean() == pytest.approx(a.rate_pps[a.t > 2, 0].mean(),
                                                           rel=0.02)


def test_per_flow_initial_windows():
    """One value per flow: equal values give the scalar's trace exactly; unequal ones start
    each flow at its own window, CUBIC on the plateau of its curve (w = w_max) and BBR with
    its bandwidth estimate at that window's rate. The plain-NumPy reference agrees."""
    kw = dict(capacity_bps=C_BPS, rtt_s=[0.02, 0.03, 0.04], buffer_bdp=1.0, duration_s=0.5)
    ccas = ["cubic", "bbr1", "reno"]
    same = solve.run(dumbbell(ccas, initial_window=(30.0, 30.0, 30.0), **kw))
    scalar = solve.run(dumbbell(ccas, initial_window=30.0, **kw))
    np.testing.assert_array_equal(same.rate_pps, scalar.rate_pps)
    np.testing.assert_array_equal(same.queue_pkts, scalar.queue_pkts)
    cfg = dumbbell(ccas, initial_window=(60.0, 20.0, 40.0), **kw)
    np.testing.assert_array_equal(solve.initial_windows(cfg), [60.0, 20.0, 40.0])
    tr = solve.run(cfg)
    np.testing.assert_allclose(tr.window_pkts[0, [0, 2]], [60.0, 40.0], rtol=1e-3)
    np.testing.assert_allclose(tr.bbr["x_btl"][0, 1], 20.0 / 0.03, rtol=1e-9)
    short = dataclasses.replace(cfg, duration_s=0.2)
    ours, ref = solve.run(short), oracle.run(short)
    for name in solve.Trace.OUTPUTS:
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=1e-9,
                                   atol=1e-9, err_msg=name)


def test_cubic_recovery_agrees_with_reference():
    """The one-cut-per-episode CUBIC, compiled and plain NumPy, across several cuts."""
    cfg = dumbbell(["cubic", "bbr1", "cubic"], capacity_bps=20e6,
                         rtt_s=[0.02, 0.025, 0.03], buffer_bdp=1, duration_s=4.0,
                         step_s=2e-4, sample_s=2e-3, initial_window=40.0,
                         cubic_recovery=True)
    fast, ref = solve.run(cfg), oracle.run(cfg)
    w = fast.window_pkts[:, 0]
    assert np.sum(w[1:] < 0.9 * w[:-1]) >= 2  # the scenario cuts more than once
    for name in solve.Trace.OUTPUTS:
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=1e-9,
                                   atol=1e-9, err_msg=name)


@pytest.fixture(scope="module")
def lone_cubic_80ms():
    """One CUBIC flow, 100 Mbit/s, 80 ms, 2 BDP: eqs. (40-41) as published and with one
    cut per recovery episode."""
    out = {}
    for recovery in (False, True):
        cfg = dumbbell(["cubic"], capacity_bps=C_BPS, rtt_s=0.08, buffer_bdp=2,
                             duration_s=90.0, step_s=5e-5, sample_s=1e-3,
                             cubic_recovery=recovery)
        out[recovery] = solve.run(cfg)
    return out


def test_cubic_recovery_cuts_to_beta_once_per_episode(lone_cubic_80ms):
    """Each cut restarts eq. (41) at β w_max, and cuts lie more than a round trip apart."""
    tr = lone_cubic_80ms[True]
    w = tr.window_pkts[:, 0]
    cuts = np.flatnonzero(w[1:] < 0.9 * w[:-1]) + 1
    assert len(cuts) >= 3
    np.testing.assert_allclose(w[cuts] / w[cuts - 1], cubic.BETA_CUBIC, rtol=0.01)
    gaps = np.diff(tr.t[cuts])
    assert gaps.min() > tr.rtt_s[cuts, 0].max()


def test_cubic_recovery_keeps_a_lone_flow_on_the_link(lone_cubic_80ms):
    """Published eqs. (40a-b) keep cutting through an overflow: the lone flow's window
    collapses and the link idles. Cutting once per episode, it swings between β and 1 of
    its peak, as Linux CUBIC does, and fills the link."""
    late = lone_cubic_80ms[False].t > 30
    pub, rec = (lone_cubic_80ms[r] for r in (False, True))
    w_pub, w_rec = pub.window_pkts[late, 0], rec.window_pkts[late, 0]
    assert w_pub.min() / w_pub.max() < 0.1
    assert w_rec.min() / w_rec.max() == pytest.approx(cubic.BETA_CUBIC, abs=0.02)
    util = {r: metrics.per_flow(t, 30.0)["goodput_bps"].iloc[0] / C_BPS
            for r, t in lone_cubic_80ms.items()}
    assert util[False] < 0.8 and util[True] > 0.97
