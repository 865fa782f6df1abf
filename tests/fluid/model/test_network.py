"""Scherrer et al. §2 (eqs. 1-8) and the loss-based CCAs (eqs. 39-41): limits and invariants."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from coexist.core.params import ParameterError
from coexist.fluid.model import cubic, network, reno

C, B = 8333.0, 1000.0  # 100 Mbit/s in 1500-byte packets; a 1000-packet buffer


def test_sigmoid_eq5_limits_and_overflow_safety():
    assert network.sigmoid(0.0) == pytest.approx(0.5)
    v = np.array([-1e6, -1.0, -0.01, 0.01, 1.0, 1e6])
    s = network.sigmoid(v, 100.0)
    assert np.all(np.diff(s) >= 0) and np.all(np.diff(s[1:5]) > 0)
    assert s[0] == 0.0 and s[-1] == 1.0  # no overflow warning or NaN at huge |v|
    assert network.sigmoid(1.0, 100.0) == pytest.approx(1 / (1 + np.exp(-100.0)))


@given(st.floats(-10, 10), st.floats(1, 1000))
def test_smooth_relu_eq10_is_close_to_relu(v, k):
    # |v σ(-|v|)| is at most W(1/e)/k ~ 0.2785/k
    assert abs(network.smooth_relu(v, k) - max(v, 0.0)) <= 0.2785 / k + 1e-12


def test_arrival_rate_eq1_sums_delayed_rates():
    assert network.arrival_rate(np.array([1.0, 2.0, 3.5])) == 6.5


def test_droptail_eq4_limits():
    # below capacity: no loss, whatever the queue
    assert network.droptail_loss(0.9 * C, B, C, B) < 1e-12
    # empty queue: no loss, whatever the rate
    assert network.droptail_loss(2 * C, 0.0, C, B) == 0.0
    # full queue, rate above capacity: the excess is dropped, 1 - C/y
    for y in (1.1 * C, 2 * C, 10 * C):
        assert network.droptail_loss(y, B, C, B) == pytest.approx(1 - C / y, rel=1e-6)
    # the admitted rate at a full queue is then the capacity: the queue stops growing
    p = network.droptail_loss(2 * C, B, C, B)
    assert (1 - p) * 2 * C == pytest.approx(C, rel=1e-6)


@given(st.floats(0, 20 * C), st.floats(0, B))
def test_loss_probabilities_are_probabilities(y, q):
    for p in (network.droptail_loss(y, q, C, B), network.red_loss(q, B)):
        assert 0.0 <= float(p) <= 1.0


def test_red_eq6_proportional_to_queue():
    assert network.red_loss(250.0, B) == 0.25 and network.red_loss(B, B) == 1.0


@given(st.floats(0, 20 * C), st.floats(0, 1), st.floats(0, B))
def test_queue_eq2_never_leaves_its_bounds(y, p, q):
    dq = float(network.queue_derivative(y, p, q, C, B))
    if q <= 0:
        assert dq >= 0
    if q >= B:
        assert dq <= 0
    if 0 < q < B:
        assert dq == pytest.approx((1 - p) * y - C)


def test_latency_eq3_and_rate_eq8():
    assert network.latency(0.04, 0.5 * C, C) == pytest.approx(0.04 + 0.5)
    assert network.window_rate(100.0, 0.05) == pytest.approx(2000.0)


def test_reno_eq39_equilibrium_is_the_square_root_law():
    w, x, p = sp.symbols("w x p", positive=True)
    dw = x * (1 - p) / w - x * p * w / 2
    (w_star,) = sp.solve(sp.Eq(dw, 0), w)
    assert sp.simplify(w_star - sp.sqrt(2 * (1 - p) / p)) == 0
    # numerically: growth below the equilibrium window, shrinkage above it
    pv, xv = 1e-3, 5000.0
    ws = np.sqrt(2 * (1 - pv) / pv)
    assert reno.window_derivative(ws, xv, pv) == pytest.approx(0.0, abs=1e-9)
    assert reno.window_derivative(0.9 * ws, xv, pv) > 0 > reno.window_derivative(1.1 * ws,
                                                                                 xv, pv)
    # no loss: one packet per window per RTT, i.e. x/w per second
    assert reno.window_derivative(50.0, 5000.0, 0.0) == pytest.approx(100.0)


def test_cubic_eq41_restarts_at_beta_and_regains_w_max_at_k():
    w_max = np.array([10.0, 100.0, 1000.0])
    k = cubic.k_time(w_max)
    assert np.allclose(cubic.window(0.0, w_max), cubic.BETA_CUBIC * w_max)
    assert np.allclose(cubic.window(k, w_max), w_max)
    assert np.allclose(k, np.cbrt(w_max * 0.3 / 0.4))
    s = np.linspace(0, 3 * k.max(), 200)
    assert np.all(np.diff(cubic.window(s, 100.0)) >= 0)  # never shrinks without loss


def test_cubic_eq40_loss_resets_s_and_moves_w_max():
    assert cubic.since_loss_derivative(3.0, 5000.0, 0.0) == 1.0
    # with loss arriving at rate x p, s is pulled towards 0 faster than it grows
    assert cubic.since_loss_derivative(3.0, 5000.0, 0.01) == pytest.approx(1 - 150.0)
    assert cubic.w_max_derivative(80.0, 100.0, 5000.0, 0.0) == 0.0
    assert cubic.w_max_derivative(80.0, 100.0, 5000.0, 0.01) == pytest.approx(-20.0 * 50.0)


def _eq40_in_time(s, wm, lam, seconds, h=1e-6):
    """Eqs. (40a-b) stepped in time at a constant loss rate lam = x p (packets/s)."""
    for _ in range(int(round(seconds / h))):
        w = float(cubic.window(s, wm))
        s, wm = (s + h * float(cubic.since_loss_derivative(s, lam, 1.0)),
                 wm + h * float(cubic.w_max_derivative(w, wm, lam, 1.0)))
    return s, wm, float(cubic.window(s, wm))


@pytest.mark.parametrize("start_over_k", [1.0, 4.0])
def test_cubic_episode_is_eq40_in_loss_time(start_over_k):
    """Through an overflow (x p s >> 1) eqs. (40a-b) depend on the packets lost, not on
    how fast: the loss-time solution agrees with the equations stepped in time, from the
    plateau and from far up the convex branch."""
    wm0 = 400.0
    s0 = start_over_k * float(cubic.k_time(wm0))
    for lost in (1.0, 5.0):
        _, _, w_time = _eq40_in_time(s0, wm0, lam=4000.0, seconds=lost / 4000.0)
        _, _, w_loss = cubic.episode(s0, wm0, lost)
        assert w_loss == pytest.approx(w_time, rel=5e-3)


def test_cubic_episode_from_the_plateau_compounds_per_lost_packet():
    """From w = w_max, one lost packet leaves the window near its peak, two about one
    Linux cut (beta), and each further one takes a factor e^-(1-beta) more."""
    wm0 = 1000.0
    k = float(cubic.k_time(wm0))
    assert cubic.episode(k, wm0, 0.0)[2] == pytest.approx(wm0)
    after = np.array([cubic.episode(k, wm0, lost)[2] / wm0 for lost in range(0, 21)])
    assert np.all(np.diff(after) < 0)
    assert after[2] == pytest.approx(cubic.BETA_CUBIC, abs=0.02)
    slope = np.diff(np.log(after[10:]))
    np.testing.assert_allclose(slope, -(1 - cubic.BETA_CUBIC), rtol=1e-4)
    offset = 20 + np.log(after[20] / cubic.BETA_CUBIC) / (1 - cubic.BETA_CUBIC)
    assert offset == pytest.approx(1.9, abs=0.01)


def test_cubic_episode_errors_name_the_parameter():
    with pytest.raises(ParameterError, match="lost_pkts"):
        cubic.episode(1.0, 100.0, -1.0)
    with pytest.raises(ParameterError, match="w_max0"):
        cubic.episode(1.0, 0.0, 1.0)
