import re
import warnings

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coexist.closed_form import derivations as d
from coexist.closed_form import mishra
from coexist.core.params import ParameterError


@pytest.mark.parametrize("step", d.ALL_STEPS, ids=lambda s: s.__name__)
def test_symbolic_derivation_reproduces_paper(step):
    assert step().holds()


def test_eq19_simplifies_to_buffer_share():
    assert sp.simplify(d.eq19_simplified().derived - d.C * (d.B - d.b_b) / d.B) == 0


def test_uniqueness_facts():
    facts = d.uniqueness_facts()
    assert sp.simplify(facts["at_zero"] + (d.X + 1) * (2 * d.beta - 1) / 2) == 0
    # f'' = 8(X-1)/(X+2y-1)^3 is positive for X > 1, y >= 0; f(X) > 0 for X > 1
    xs, ys = np.meshgrid(np.linspace(1.01, 300, 50), np.linspace(0, 300, 50))
    f2 = sp.lambdify((d.X, d.y), facts["second_derivative"])(xs, ys)
    assert np.all(f2 > 0)
    fx = sp.lambdify(d.X, facts["at_X"])(np.linspace(1.001, 1000, 500))
    assert np.all(fx > 0)


def test_bisection_matches_closed_form_root():
    root = sp.lambdify((d.X, d.beta), d.closed_form_root())
    x = np.geomspace(1.01, 100, 200)
    for beta in (0.7, 0.85, 0.97):
        assert np.allclose(mishra.bbr_occupancy_bdp(x, beta), root(x, beta), rtol=1e-11)


def test_root_is_a_root_and_inside_bracket():
    x = np.geomspace(1.01, 100, 300)
    y = mishra.bbr_occupancy_bdp(x)
    assert np.all((y > 0) & (y < x))
    assert np.max(np.abs(mishra.residual(y, x))) < 1e-10


def test_reported_two_flow_shares():
    share = mishra.bbr_share(np.array([2.0, 5.0, 10.0, 30.0]))
    assert np.round(share, 3).tolist() == [0.626, 0.406, 0.342, 0.303]


def test_shares_sum_to_one_and_bbr_share_decreases():
    x = np.linspace(1.01, 100, 1000)
    sol = mishra.two_flow(x, capacity_bps=50e6, rtt_s=0.04)
    assert np.allclose(sol.bbr_bps + sol.cubic_bps, 50e6)
    assert np.all(np.diff(sol.bbr_share) < 0)


def test_deep_buffer_limit_is_two_sevenths():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mishra.ModelDomainWarning)
        assert float(mishra.bbr_share(1e6)) == pytest.approx(2 / 7, abs=1e-5)


def test_share_depends_on_buffer_in_bdp_only():
    x = np.array([1.5, 3.0, 12.0])
    a = mishra.two_flow(x, capacity_bps=50e6, rtt_s=0.04).bbr_share
    b = mishra.two_flow(x, capacity_bps=1e9, rtt_s=0.005).bbr_share
    assert np.allclose(a, b, rtol=1e-12, atol=0)


def test_sync_bound_below_desync_and_equal_for_one_cubic_flow():
    x = np.linspace(1.05, 60, 200)[:, None]
    nc = np.arange(1, 30)[None, :]
    sync = mishra.aggregate_bbr_share(x, nc, 5, synchronised=True)
    desync = mishra.aggregate_bbr_share(x, nc, 5, synchronised=False)
    assert np.all(sync <= desync + 1e-15)
    assert np.allclose(sync[:, 0], desync[:, 0])


def test_all_bbr_gets_fair_share_and_no_bbr_gets_nothing():
    res = mishra.multi_flow(3.0, 0, 8, capacity_bps=80.0, synchronised=True)
    assert float(res.bbr_per_flow_bps) == pytest.approx(10.0)
    none = mishra.multi_flow(3.0, 8, 0, capacity_bps=80.0, synchronised=False)
    assert float(none.bbr_share) == 0.0 and np.isnan(none.bbr_per_flow_bps)


def test_desync_backoff_eq22():
    assert float(mishra.desync_backoff(1)) == pytest.approx(0.7)
    assert float(mishra.desync_backoff(10)) == pytest.approx(9.7 / 10)


@pytest.mark.parametrize("bad", [1.0, 0.5, -3.0, float("nan")])
def test_buffer_domain_enforced(bad):
    with pytest.raises(ParameterError, match=re.escape("1.0 < buffer_bdp")):
        mishra.bbr_share(bad)


def test_deep_buffer_warns():
    with pytest.warns(mishra.ModelDomainWarning, match="100 BDP"):
        mishra.bbr_share(150.0)


@settings(max_examples=200, deadline=None)
@given(
    x=st.floats(min_value=1.0 + 1e-6, max_value=100.0),
    nc=st.integers(min_value=0, max_value=200),
    nb=st.integers(min_value=0, max_value=200),
    sync=st.booleans(),
)
def test_property_valid_domain_no_nan(x, nc, nb, sync):
    if nc + nb == 0:
        with pytest.raises(ParameterError):
            mishra.multi_flow(x, nc, nb, synchronised=sync)
        return
    res = mishra.multi_flow(x, nc, nb, capacity_bps=1e8, synchronised=sync)
    share = float(res.bbr_share)
    assert 0.0 <= share <= 1.0 and np.isfinite(share)
    assert float(res.bbr_total_bps + res.cubic_total_bps) == pytest.approx(1e8)
    if nb:
        assert np.isfinite(res.bbr_per_flow_bps)
    if nc:
        assert np.isfinite(res.cubic_per_flow_bps)


@settings(max_examples=100, deadline=None)
@given(x=st.one_of(st.floats(max_value=1.0), st.just(float("inf")), st.just(float("nan"))))
def test_property_outside_domain_clear_error(x):
    with pytest.raises(ParameterError, match="buffer_bdp"):
        mishra.bbr_share(x)


def test_share_bounds_span_both_readings_for_every_mix():
    x = np.array([1.5, 4.0, 20.0])
    t = mishra.share_bounds([2, 4], x)
    assert sorted(set(zip(t.n_flows, t.n_bbr, strict=True))) == [(2, 1), (4, 1), (4, 2), (4, 3)]
    assert len(t) == 4 * len(x)
    for (n, k), g in t.groupby(["n_flows", "n_bbr"]):
        a = mishra.aggregate_bbr_share(x, n - k, k, synchronised=True)
        b = mishra.aggregate_bbr_share(x, n - k, k, synchronised=False)
        np.testing.assert_array_equal(g.share_lo, np.minimum(a, b))
        np.testing.assert_array_equal(g.share_hi, np.maximum(a, b))
    one = t[t.n_flows == 2]
    np.testing.assert_allclose(one.share_lo, mishra.bbr_share(x))  # one of each: two flows
