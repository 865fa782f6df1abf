"""BBR's equations one by one (Scherrer et al. §3.2-3.4, eqs. 9-32), in both readings:
each function against what its equation says. That the kernels built from them compute
what the authors' code computes is the reference tests' part (tests/fluid/test_published.py)."""

import inspect
import math
import re

import pytest

from coexist.fluid.model import bbr, bbr1, bbr2, smooth

H = 0.01  # the published reading's step, ms
MODULES = (bbr, bbr1, bbr2)


def _equations(module) -> dict[str, object]:
    return {n: f for n, f in vars(module).items()
            if not n.startswith("_") and getattr(f, "__module__", None) == module.__name__
            and callable(f)}


def test_every_function_cites_its_equation_and_every_equation_has_one():
    """Eqs. (9)-(32) of the paper: each has a function, and each function names its
    equation (the docstring's ``Eq. (N)``)."""
    cited = set()
    for module in MODULES:
        for name, f in _equations(module).items():
            numbers = {int(n) for n in re.findall(r"[Ee]qs?\. \((\d+)\)", f.__doc__ or "")}
            numbers |= {int(a) + k for a, b in re.findall(r"[Ee]qs\. \((\d+)\)-\((\d+)\)",
                                                          f.__doc__ or "")
                        for k in range(int(b) - int(a) + 1)}
            assert numbers, f"{module.__name__}.{name} names no equation"
            cited |= numbers
    assert set(range(9, 33)) - cited <= {10}, set(range(9, 33)) - cited  # eq. 10 is Γ


def test_gamma_is_the_smooth_relu_of_eq_10():
    assert smooth.gamma(2.0) == pytest.approx(2.0) and smooth.gamma(-2.0) == pytest.approx(0.0)
    assert smooth.gamma(0.0) == 0.0


# --- shared core, printed reading --------------------------------------------------------


def test_eq_9_rtprop_follows_lower_samples_only():
    assert bbr.rtprop_update(0.04, 0.03) == 0.03
    assert bbr.rtprop_update(0.04, 0.05) == 0.04


def test_eqs_11_13_probe_rtt_comes_after_10_s_and_lasts_200_ms():
    h = 1e-3
    m, t, hold, rnd, tmin = bbr.probe_rtt_update(0.0, 10.0 - h / 2, 0.0, 0.0, 0.04, 0.05,
                                                 h, False)
    assert (m, t, tmin) == (1.0, 0.0, 0.04)           # entered, timer restarted
    m, t, *_ = bbr.probe_rtt_update(1.0, 0.2 - h / 2, 0.0, 0.0, 0.04, 0.05, h, False)
    assert (m, t) == (0.0, 0.0)                        # left after 200 ms
    m, t, *_ = bbr.probe_rtt_update(1.0, 0.1, 0.0, 0.0, 0.04, 0.05, h, False)
    assert (m, t) == (1.0, pytest.approx(0.1 + h))     # still in it


def test_linux_expiry_takes_the_rtt_at_entry_and_holds_after_draining():
    h = 1e-3
    m, t, hold, rnd, tmin = bbr.probe_rtt_update(0.0, 10.0, 0.0, 0.0, 0.04, 0.07, h, True)
    assert (m, tmin, hold) == (1.0, 0.07, 0.07)       # RTprop takes the larger sample
    m, t, hold, rnd, tmin = bbr.probe_rtt_update(1.0, 0.0, h / 2, 0.0, 0.07, 0.06, h, True)
    assert t == 0.0 and hold < 0 and rnd == 0.06        # drained: the round is this RTT
    m, *_ = bbr.probe_rtt_update(1.0, 0.21, 0.0, 0.3, 0.07, 0.06, h, True)
    assert m == 1.0                                    # max(200 ms, 1 round = 300 ms)


def test_eqs_14_15_rate_and_window_by_mode():
    assert bbr.probe_bw_rate(100.0, 0.05, 1500.0) == 1500.0    # paced below w/τ = 2000
    assert bbr.probe_bw_rate(100.0, 0.05, 2500.0) == 2000.0    # window-limited
    assert bbr.rate(0.0, 4.0, 1800.0, 0.05) == 1800.0
    assert bbr.rate(1.0, 4.0, 1800.0, 0.05) == pytest.approx(80.0)  # 4 packets per RTT
    assert bbr.window(1.0, 4.0, 90.0) == 4.0 and bbr.window(0.0, 4.0, 90.0) == 90.0


@pytest.mark.parametrize("y, q, expected", [
    (2000.0, 5.0, 400.0 / 2000.0 * 1000.0),   # queue: its share of C
    (800.0, 0.0, 400.0),                      # link below C, no queue: what it sent
    (1600.0, 0.0, 400.0 / 1600.0 * 1000.0),   # above C as the queue starts: share of C
    (0.0, 0.0, 0.0),
])
def test_eq_17_delivery_rate_is_the_flows_part_of_what_the_link_delivered(y, q, expected):
    assert bbr.delivery_rate(400.0, y, q, 1000.0) == pytest.approx(expected)


def test_eq_16_the_period_restarts_at_its_end():
    assert bbr.period_restart(0.32, 0.32) == (0.0, True)
    assert bbr.period_restart(0.31, 0.32) == (0.31, False)


def test_eq_18_max_filter_keeps_the_largest_delivery_rate_and_resets_at_the_start():
    assert bbr.max_filter_update(900.0, 1000.0, 0.05) == 1000.0
    assert bbr.max_filter_update(900.0, 800.0, 0.05) == 900.0
    assert bbr.max_filter_update(900.0, 800.0, 0.005) == 0.0


def test_eq_19_inflight_integrates_sending_minus_delivery_and_stays_non_negative():
    assert bbr.inflight_update(10.0, 1200.0, 1000.0, 1e-3) == pytest.approx(10.2)
    assert bbr.inflight_update(0.1, 0.0, 1000.0, 1e-3) == 0.0


# --- shared core, published reading ------------------------------------------------------


def test_eq_9_published_rtprop_relaxes_to_a_lower_sample_at_1_per_ms():
    assert (bbr.rtprop_step(40.0, 30.0, H) - 40.0) / H == pytest.approx(-10.0)
    assert bbr.rtprop_step(40.0, 50.0, H) == 40.0


def test_eqs_11_13_published_probe_rtt_timer_and_mode():
    assert bbr.probe_rtt_expired(0.0) == 1.0 and bbr.probe_rtt_expired(5.0) == 0.0
    assert bbr.rtprop_stale(40.0, 40.0) == 1.0 and bbr.rtprop_stale(39.0, 40.0) == 0.0
    # not expired: the timer runs down 1 ms per ms and the mode holds
    assert (bbr.probe_rtt_timer_step(500.0, 0.0, 0.0, 1.0, 1e4, H) - 500.0) / H == \
        pytest.approx(-1.0)
    assert bbr.probe_rtt_mode_step(0.0, 0.0, 0.0, 1.0, H) == 0.0
    # expired with RTprop stale, one RTT after ProbeBW: mode to 1, timer to 200 ms
    assert (bbr.probe_rtt_mode_step(0.2, 0.0, 1.0, 1.0, H) - 0.2) / H == pytest.approx(0.8)
    assert (bbr.probe_rtt_timer_step(0.0, 0.0, 1.0, 1.0, 1e4, H) - 0.0) / H == \
        pytest.approx(200.0 - 1.0)
    # expired with a fresh RTprop: mode to 0, timer to the interval
    assert (bbr.probe_rtt_timer_step(0.0, 0.0, 1.0, 0.0, 1e4, H) - 0.0) / H == \
        pytest.approx(1e4 - 1.0)
    assert [bbr.mode(v) for v in (0.49, 0.5, 0.51, 1.5)] == [0.0, 0.0, 1.0, 2.0]


def test_eqs_23_31_published_windows():
    assert bbr.estimated_bdp_window(10.2) == 22.0
    assert bbr.window_published(0.0, 22.0, 4.0) == 22.0
    assert bbr.window_published(1.0, 22.0, 4.0) == 4.0


def test_eq_17_published_delivery_rate():
    assert bbr.delivery_rate_published(0.4, 2.0, 0.0, 1.0) == pytest.approx(0.2)
    assert bbr.delivery_rate_published(0.4, 0.8, 3.0, 1.0) == pytest.approx(0.5)
    assert bbr.delivery_rate_published(0.4, 0.8, 0.0, 1.0) == 0.4


def test_eq_18_published_max_filter():
    # past the first 10 ms, a higher delivery rate pulls x_max up at 5/ms
    assert (bbr.max_filter_step(1.0, 1.2, 50.0, 0.0, H) - 1.0) / H == pytest.approx(1.0)
    # a lower one leaves it (Γ's negative tail is below 1e-100 here)
    assert bbr.max_filter_step(1.0, 0.8, 50.0, 0.0, H) == 1.0
    # in the period's first 10 ms it decays at 1/ms; in ProbeRTT it holds
    assert (bbr.max_filter_step(1.0, 0.8, 1.0, 0.0, H) - 1.0) / H == pytest.approx(-1.0)
    assert bbr.max_filter_step(1.0, 1.2, 50.0, 1.0, H) == 1.0
    # at 10 ms the reset is half on: 5 Γ(0.2) - σ(0) x_max
    d = (bbr.max_filter_step(1.0, 1.2, 10.0, 0.0, H) - 1.0) / H
    assert d == pytest.approx(5.0 * 0.2 / (1.0 + math.exp(-100.0)) - 0.5)


def test_eq_19_published_inflight():
    assert (bbr.inflight_step(10.0, 0.5, 22.0, 0.0, H) - 10.0) / H == pytest.approx(0.5)
    assert (bbr.inflight_step(10.0, 0.5, 4.0, 1.0, H) - 10.0) / H == pytest.approx(-6.0)
    assert bbr.inflight_step(0.001, -1.0, 4.0, 0.0, H) == 0.0


def test_eqs_14_15_21_published_rate_and_pacing():
    assert bbr.rate_published(0.0, 20.0, 40.0, 0.4, 5.0, 40.0) == 0.4    # paced
    assert bbr.rate_published(0.0, 20.0, 40.0, 0.6, 5.0, 40.0) == 0.5    # window w/τ
    assert bbr.rate_published(1.0, 20.0, 40.0, 0.6, 5.0, 50.0) == 0.1    # ProbeRTT v/τ
    assert bbr.pacing_rate(0.8, 0.25, 0.0) == 1.0
    assert bbr.pacing_rate(0.8, 0.0, 0.25) == pytest.approx(0.6)


def test_eq_16_published_period_start():
    assert bbr.period_start_step(100.0, 420.0, 320.0) == 420.0
    assert bbr.period_start_step(100.0, 419.0, 320.0) == 100.0


# --- BBRv1 -------------------------------------------------------------------------------


@pytest.mark.parametrize("t_in_rtprops, gain", [(0.5, 1.0), (2.5, 1.25), (3.5, 0.75),
                                                  (4.5, 1.0), (7.9, 1.0)])
def test_eqs_21_22_bbr1_pulses_up_in_its_phase_and_down_in_the_next(t_in_rtprops, gain):
    tau_min, phi = 0.04, 2
    assert bbr1.pacing_rate(1000.0, t_in_rtprops * tau_min, tau_min, phi) == \
        pytest.approx(1000.0 * gain)


def test_eqs_20_23_bbr1_period_window_and_bottleneck_estimate():
    assert bbr1.period(0.04) == pytest.approx(0.32) and bbr1.probe_bw_window(50.0) == 100.0
    assert bbr1.PROBE_RTT_WINDOW == 4.0
    assert bbr1.bottleneck_update(900.0, 1000.0, 0.315, 0.32) == 1000.0
    assert bbr1.bottleneck_update(900.0, 1000.0, 0.2, 0.32) == 900.0


def test_eqs_20_23_bbr1_published():
    assert bbr1.period_ms(40.0) == 320.0
    assert bbr1.probe_bw_window_published(10.2) == 22.0
    # eq. (20): x_btl relaxes to x_max at 1/ms in the period's last 10 ms, not before
    assert (bbr1.bottleneck_step(0.9, 1.0, 315.0, 320.0, 0.0, H) - 0.9) / H == \
        pytest.approx(0.1)
    assert bbr1.bottleneck_step(0.9, 1.0, 200.0, 320.0, 0.0, H) == 0.9
    # 10 ms before the period's end the σ is half on
    assert (bbr1.bottleneck_step(0.9, 1.0, 310.0, 320.0, 0.0, H) - 0.9) / H == \
        pytest.approx(0.05)
    assert bbr1.bottleneck_step(0.9, 1.0, 315.0, 320.0, 1.0, H) == 0.9


@pytest.mark.parametrize("t_in_rtprops, up, down", [(2.5, 0.25, 0.0), (3.5, 0.0, 0.25),
                                                      (5.5, 0.0, 0.0), (0.5, 0.0, 0.0)])
def test_eqs_21_22_bbr1_published_pulses(t_in_rtprops, up, down):
    rtprop, phi = 40.0, 2
    ph0, ph1 = bbr1.pulses_published(t_in_rtprops * rtprop, rtprop, phi)
    assert (ph0, ph1) == (pytest.approx(up, abs=1e-9), pytest.approx(down, abs=1e-9))


def test_bbr1_published_pulses_are_products_of_two_smooth_steps():
    """One exponential for both sides of the shared step gives the printed product of two
    σ of sharpness 5, at the step itself too."""
    rtprop, phi = 40.0, 1
    for t in (39.0, 79.5, 80.0, 80.2, 100.0, 119.9, 121.0):
        ph0, ph1 = bbr1.pulses_published(t, rtprop, phi)
        s = smooth.SMOOTH
        assert ph0 == pytest.approx(0.25 * smooth.sig(t - rtprop, s)
                                    * smooth.sig(2 * rtprop - t, s), abs=1e-15)
        assert ph1 == pytest.approx(0.25 * smooth.sig(t - 2 * rtprop, s)
                                    * smooth.sig(3 * rtprop - t, s), abs=1e-15)


# --- BBRv2 -------------------------------------------------------------------------------


def test_eq_24_bbr2_period_is_the_shorter_of_63_rtprops_and_2_s_plus():
    assert bbr2.period(0.01, 0, 2) == pytest.approx(0.63)
    assert bbr2.period(0.1, 1, 2) == pytest.approx(3.0)
    assert bbr2.period_ms(10.0, 0, 2) == 630.0 and bbr2.period_ms(100.0, 1, 2) == 2500.0


@pytest.mark.parametrize("t_pbw, m_dwn, m_crs, gain", [(0.05, 0.0, 0.0, 1.25),
                                                       (0.01, 0.0, 0.0, 1.0),
                                                       (0.05, 1.0, 0.0, 0.75),
                                                       (0.05, 0.0, 1.0, 1.0)])
def test_eq_25_bbr2_pacing_probes_after_one_rtprop_drains_down_and_cruises(
        t_pbw, m_dwn, m_crs, gain):
    assert bbr2.pacing_rate(1000.0, t_pbw, 0.04, m_dwn, m_crs) == pytest.approx(1000.0 * gain)


def test_eqs_31_32_bbr2_window_bounds():
    assert bbr2.probe_bw_window(50.0, 80.0, 60.0, 0.0) == 80.0    # inflight_hi binds
    assert bbr2.probe_bw_window(50.0, 80.0, 60.0, 1.0) == 60.0    # inflight_lo in cruise
    assert bbr2.probe_bw_window(30.0, 80.0, 70.0, 0.0) == 60.0    # 2 BDP binds
    assert bbr2.probe_rtt_window(50.0) == 25.0
    assert bbr2.drain_target(50.0, 40.0) == pytest.approx(34.0)


def test_eqs_26_27_bbr2_modes():
    w_bar, w_minus = 50.0, 40.0
    assert bbr2.modes_update(0.0, 0.0, 0.05, 0.04, 63.0, w_bar, w_minus, 0.0) == (1.0, 0.0)
    assert bbr2.modes_update(0.0, 0.0, 0.05, 0.04, 30.0, w_bar, w_minus, 0.03) == (1.0, 0.0)
    assert bbr2.modes_update(0.0, 0.0, 0.03, 0.04, 63.0, w_bar, w_minus, 0.0) == (0.0, 0.0)
    assert bbr2.modes_update(1.0, 0.0, 0.1, 0.04, 39.0, w_bar, w_minus, 0.0) == (0.0, 1.0)
    assert bbr2.modes_update(1.0, 0.0, 0.1, 0.04, 45.0, w_bar, w_minus, 0.0) == (1.0, 0.0)


def test_eq_28_bbr2_bottleneck_takes_the_larger_of_two_periods_while_down():
    assert bbr2.bottleneck_update(900.0, 950.0, 1000.0, 1.0) == 1000.0
    assert bbr2.bottleneck_update(900.0, 950.0, 1000.0, 0.0) == 900.0
    assert bbr2.bottleneck_step(0.9, 1.0, 0.95, 1.0, 0.0) == 1.0
    assert bbr2.bottleneck_step(0.9, 1.0, 0.95, 0.0, 0.0) == 0.9
    assert bbr2.bottleneck_step(0.9, 1.0, 0.95, 1.0, 1.0) == 0.9


def test_eq_29_bbr2_inflight_hi_grows_while_it_binds_and_falls_under_loss():
    tau_min = 0.04
    grow = bbr2.inflight_hi_derivative(50.0, 60.0, 3 * tau_min, tau_min, 0.0, 0.0, 1.0)
    assert grow == pytest.approx(smooth.sigmoid(10.0, 1.0) * 2.0 ** 3)
    assert bbr2.inflight_hi_derivative(50.0, 60.0, 3 * tau_min, tau_min, 1.0, 0.0, 1.0) == 0.0
    cut = bbr2.inflight_hi_derivative(50.0, 10.0, 3 * tau_min, tau_min, 1.0, 0.05, 1.0)
    assert cut == pytest.approx(-0.3 / tau_min * 50.0)
    # published: the same, per ms, with a floor at 1.15 estimated BDPs
    # σ of sharpness 5 where it is not saturated (inflight 0.2 packets above the bound)
    step = bbr2.inflight_hi_step(50.0, 0.0, 120.0, 40.0, 50.2, 0.0, 40.0, 20.0, H)
    assert (step - 50.0) / H == pytest.approx(2.0 ** 3 / (1.0 + math.exp(-1.0)))
    assert bbr2.inflight_hi_step(50.0, 0.0, 120.0, 40.0, 10.0, 0.05, 40.0, 60.0, H) == 69.0


def test_eq_30_bbr2_inflight_lo():
    assert bbr2.inflight_lo_derivative(30.0, 40.0, 0.0, 0.0, 0.04) == 10.0
    assert bbr2.inflight_lo_derivative(30.0, 40.0, 1.0, 0.01, 0.04) == pytest.approx(-225.0)
    assert bbr2.inflight_lo_derivative(30.0, 40.0, 1.0, 0.0, 0.04) == 0.0
    # published: inflight_hi outside cruise; in cruise under 2 % loss, -ln(0.9)/RTT per ms
    assert bbr2.inflight_lo_step(30.0, 45.0, 0.0, 0.0, 0.0, 40.0, H) == pytest.approx(45.0)
    drop = (bbr2.inflight_lo_step(30.0, 45.0, 1.0, 1.0, 0.03, 40.0, H) - 30.0) / H
    assert drop == pytest.approx(math.log(0.9) / 40.0 * 30.0)


def test_eqs_25_27_bbr2_published_down_and_cruise_modes():
    bdp, drain = 20.0, 17.0
    # the code's threshold is 499/400 BDP (24.95 packets here), just below 5/4
    assert bbr2.down_mode_change(0.0, 0.0, 50.0, 40.0, 24.97, bdp, 0.0, drain) == 1.0
    assert bbr2.down_mode_change(0.0, 0.0, 50.0, 40.0, 24.93, bdp, 0.0, drain) == 0.0
    assert bbr2.down_mode_change(0.0, 0.0, 30.0, 40.0, 25.1, bdp, 0.0, drain) == 0.0
    assert bbr2.down_mode_change(0.0, 0.0, 50.0, 40.0, 10.0, bdp, 0.02, drain) == 1.0
    assert bbr2.down_mode_change(1.0, 0.0, 50.0, 40.0, 16.0, bdp, 0.0, drain) == -1.0
    assert bbr2.down_mode_change(1.0, 0.0, 450.0, 40.0, 30.0, bdp, 0.0, drain) == -1.0
    assert bbr2.pulses_published(0.0, 50.0, 40.0, 0.0) == (pytest.approx(0.25), 0.0)
    assert bbr2.pulses_published(0.0, 50.0, 40.0, 1.0) == (0.0, 0.25)
    assert bbr2.pulses_published(1.0, 50.0, 40.0, 0.0) == (0.0, 0.0)
    # cruise starts as down mode ends, and stops when a new period starts
    assert bbr2.cruise_step(0.0, 0.0, -1.0, 100.0, 2000.0, H) == pytest.approx(1.0)
    assert bbr2.cruise_step(1.0, 1.0, 0.0, 2000.0, 2000.0, H) == pytest.approx(0.0)
    assert bbr2.cruise_step(1.0, 1.0, 0.0, 100.0, 2000.0, H) == 1.0
    assert bbr2.inflight_cruise_derivative(0.5, 1.0, 17.0, 20.0) == -3.0
    assert bbr2.inflight_cruise_derivative(0.5, 0.0, 17.0, 20.0) == 0.5


def test_the_equations_are_what_the_kernels_read():
    """Each kernel calls the functions, so a change to one moves the runs (and the
    store's key): no copy of an equation is left in either kernel."""
    from coexist.fluid.model import printed, published
    for kernel in (inspect.getsource(published.integrate.py_func),
                   inspect.getsource(printed.integrate.py_func)):
        assert kernel.count("bbr.") + kernel.count("bbr1.") + kernel.count("bbr2.") >= 15
        assert "0.85 *" not in kernel and "2.0 ** " not in kernel and "499.0" not in kernel


def test_eq_32_published_probe_rtt_window_is_half_the_estimated_bdp():
    """Eq. (32) as the authors' code takes it: BBRv2's ProbeRTT window is half the
    estimated BDP (the printed eq. 32 gives the same half)."""
    from coexist.fluid.model import bbr2

    for bdp in (4.0, 260.0, 1e4):
        assert bbr2.probe_rtt_window_published(bdp) == pytest.approx(bdp / 2)
