"""Scherrer et al. §5 / appendix D: the reduced BBR models against Theorems 1-5."""

import numpy as np
import pytest

from coexist.fluid.studies import stability as st

C, D = 1000.0, 0.04


@pytest.mark.parametrize("n", [2, 4, 10])
def test_theorem3_fixed_point_eigenvalues_and_convergence(n):
    f = lambda z: st.bbr1_rhs(z, C, D, shallow=True)  # noqa: E731
    x_star = st.theorem3_rate(n, C)
    assert np.allclose(f(np.full(n, x_star)), 0.0, atol=1e-9)
    eig = np.sort(np.linalg.eigvals(st.jacobian(f, np.full(n, x_star))).real)
    # appendix D.3: J_ii - J_ij = -1/(4N+1) (N-1 times) and J_ii + (N-1) J_ij = -1
    assert eig == pytest.approx([-1.0] + [-1 / (4 * n + 1)] * (n - 1), abs=1e-6)
    rng = np.random.default_rng(n)
    _, z = st.simulate(f, x_star * rng.uniform(0.3, 1.7, n), t_end=25 * (4 * n + 1), dt=0.05)
    assert z[-1] == pytest.approx(np.full(n, x_star), rel=1e-3)


def test_theorem1_equilibria_have_queueing_delay_equal_to_propagation_delay():
    f = lambda z: st.bbr1_rhs(z, C, D)  # noqa: E731
    for start in ([100, 300, 500, 200.0, 10.0], [600, 100, 50, 50.0, 80.0]):
        _, z = st.simulate(f, start, 80.0)
        x, q = z[-1][:-1], z[-1][-1]
        assert q == pytest.approx(D * C, rel=1e-4)  # d = q / C
        assert x.sum() == pytest.approx(C, rel=1e-4)
        assert np.allclose(f(z[-1]), 0.0, atol=1e-6)
    # the equilibrium need not be fair: the last run ends with unequal estimates
    assert x.max() / x.min() > 2


def test_theorem2_jacobian_eq48_and_its_eigenvalues():
    for d in (0.01, 0.04, 0.5, 2.0):
        eig = np.sort(np.linalg.eigvals(st.theorem2_jacobian(d)).real)
        assert eig == pytest.approx(np.sort([-1.0, -1 / (2 * d)]))
        assert np.all(eig < 0)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_theorem4_fair_bbr2_equilibrium_queue_and_theorem5_stability(n):
    f = lambda z: st.bbr2_rhs(z, C, D)  # noqa: E731
    rng = np.random.default_rng(n)
    _, z = st.simulate(f, np.append(rng.uniform(50, 600, n), 5.0), 300.0)
    x, q = z[-1][:-1], z[-1][-1]
    assert q == pytest.approx(st.theorem4_queue(n, D, C), rel=1e-3)
    assert x == pytest.approx(np.full(n, st.theorem3_rate(n, C)), rel=1e-3)  # 5C/(4N+1)
    eig = np.linalg.eigvals(st.jacobian(f, z[-1]))
    assert np.all(eig.real < 1e-6)
    # BBRv2's equilibrium queue is at most a quarter of BBRv1's (d C), as §5.2.2 says
    assert q < 0.25 * D * C
