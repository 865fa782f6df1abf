"""Mishra et al. (IMC 2022) closed-form model of CUBIC and BBR sharing a drop-tail bottleneck.

Two-flow model (eqs. 5-20) and its multi-flow extension (eqs. 21-24). All flows share one
base RTT; the buffer ``B`` is at least one BDP (assumption 2); BBR keeps 2 BDP in flight
(assumption 3). Quantities are normalised by the bottleneck BDP ``C * RTT``: a buffer of
``X`` BDP and a BBR buffer occupancy of ``y`` BDP give the whole model, which is why its
predictions depend on the buffer in BDP only and not on ``C`` or ``RTT`` separately.

The central equation is eq. (18), generalised to a CUBIC back-off factor ``beta`` (0.7 in
Linux and in eq. 12; ``(Nc - 0.3) / Nc`` for de-synchronised CUBIC flows, eq. 22)::

    a + a / (a + y) * 1 = beta * (X - y + (X - y) / X * 1),   a = (X - 1) / 2

where ``a = b_cmin / BDP`` follows from eq. (10) with ``b_b + b_c = B``. Its residual
``f(y) = LHS - RHS`` is convex in ``y`` with ``f(0) = (X + 1)(1/2 - beta) < 0`` for
``beta > 1/2`` and ``f(X) > 0``, so it has exactly one root in ``(0, X)``: a bracketing
bisection on that interval always converges to the unique solution.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.params import ParameterError, check_array

BETA_CUBIC = 0.7
"""Linux CUBIC's multiplicative decrease: the window falls to 0.7 W_max (eq. 12)."""
DEEP_BUFFER_BDP = 100.0
"""Beyond this buffer (BDP) BBR is no longer cwnd-limited; the model over-estimates it (§5)."""
_BISECTION_STEPS = 64


class ModelDomainWarning(UserWarning):
    """The model is evaluated where its authors say it is not meant to hold."""


def _check_buffer(buffer_bdp) -> np.ndarray:
    x = check_array("buffer_bdp", buffer_bdp, low=1.0, low_open=True)
    if np.any(x > DEEP_BUFFER_BDP):
        warnings.warn(
            f"buffer_bdp up to {float(x.max()):g} exceeds {DEEP_BUFFER_BDP:g} BDP: BBR is not "
            "cwnd-limited there and the model over-estimates its share (Mishra et al. §5)",
            ModelDomainWarning,
            stacklevel=3,
        )
    return x


def _check_beta(beta) -> np.ndarray:
    return check_array("beta", beta, low=0.5, high=1.0, low_open=True, high_open=True)


def residual(y, buffer_bdp, beta=BETA_CUBIC):
    """Eq. (18) as ``LHS - RHS`` in BDP units; zero at BBR's average buffer occupancy."""
    x = np.asarray(buffer_bdp, dtype=float)
    a = (x - 1.0) / 2.0
    return a + a / (a + y) - beta * ((x - y) + (x - y) / x)


def bisect(root_is_right, lo: np.ndarray, hi: np.ndarray, steps: int = _BISECTION_STEPS):
    """Vectorised bisection on brackets ``[lo, hi]`` that each hold exactly one root.

    ``root_is_right(mid)`` is a boolean array: True where the root lies above ``mid``.
    Sixty-four halvings reach double precision for brackets of any practical width.
    """
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        right = root_is_right(mid)
        lo = np.where(right, mid, lo)
        hi = np.where(right, hi, mid)
    return 0.5 * (lo + hi)


def _solve(x: np.ndarray, beta) -> np.ndarray:
    """Unique root of eq. (18) in (0, X): bisection on the bracket ``[0, X]``."""
    x, b = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(beta, dtype=float))
    return bisect(lambda mid: residual(mid, x, b) < 0.0, np.zeros_like(x), x.copy())


def share_unchecked(buffer_bdp, beta=BETA_CUBIC) -> np.ndarray:
    """BBR's share from eqs. (18)-(20) in BDP units, for callers that validated their input.

    Eq. (19) in BDP units reads ``lambda_c / C = (2 a + 1 - y) / (1 + 2 a)``.
    """
    x = np.asarray(buffer_bdp, dtype=float)
    y = _solve(x, beta)
    a = cubic_min_occupancy_bdp(x)
    return 1.0 - (2.0 * a + 1.0 - y) / (1.0 + 2.0 * a)


def bbr_occupancy_bdp(buffer_bdp, beta=BETA_CUBIC):
    """BBR's average buffer occupancy ``b_b`` in BDP: the unique root of eq. (18) in (0, X).

    See the module docstring for why the bracket ``[0, X]`` holds exactly one root; 64
    halvings reach double precision.
    """
    return _solve(_check_buffer(buffer_bdp), _check_beta(beta))


def cubic_min_occupancy_bdp(buffer_bdp):
    """CUBIC's minimum buffer occupancy ``b_cmin`` in BDP, from eq. (10) with b_b + b_c = B."""
    x = np.asarray(buffer_bdp, dtype=float)
    return (x - 1.0) / 2.0


@dataclass(frozen=True)
class TwoFlow:
    """Solution of the two-flow model for given buffer(s); bandwidths in bit/s."""

    buffer_bdp: np.ndarray
    bbr_occupancy_bdp: np.ndarray
    cubic_min_occupancy_bdp: np.ndarray
    cubic_bps: np.ndarray
    bbr_bps: np.ndarray

    @property
    def bbr_share(self) -> np.ndarray:
        return self.bbr_bps / (self.bbr_bps + self.cubic_bps)


def two_flow(buffer_bdp, capacity_bps=1.0, rtt_s=1.0, beta=BETA_CUBIC) -> TwoFlow:
    """Bandwidths of one CUBIC and one BBR flow (eqs. 18-20).

    Eq. (19) is evaluated as printed, ``lambda_c (RTT + 2 b_cmin / C) = 2 b_cmin + C RTT - b_b``,
    in physical units; it simplifies to ``lambda_c = C (B - b_b) / B`` (each flow's share is
    its share of the buffer), which the tests check symbolically.
    """
    x = _check_buffer(buffer_bdp)
    c = check_array("capacity_bps", capacity_bps, low=0.0, low_open=True)
    rtt = check_array("rtt_s", rtt_s, low=0.0, low_open=True)
    y = _solve(x, _check_beta(beta))
    bdp_bits = c * rtt
    b_b = y * bdp_bits
    b_cmin = cubic_min_occupancy_bdp(x) * bdp_bits
    lambda_c = (2.0 * b_cmin + c * rtt - b_b) / (rtt + 2.0 * b_cmin / c)  # eq. (19)
    lambda_b = c - lambda_c  # eq. (20)
    return TwoFlow(x, y, cubic_min_occupancy_bdp(x), lambda_c, lambda_b)


def bbr_share(buffer_bdp, beta=BETA_CUBIC):
    """BBR's fraction of the link in the two-flow model (eqs. 18-20), i.e. ``b_b / B``."""
    return two_flow(buffer_bdp, beta=beta).bbr_share


def desync_backoff(n_cubic, beta=BETA_CUBIC):
    """Aggregate CUBIC back-off when only one of ``n_cubic`` flows backs off (eq. 22).

    ``(Nc - (1 - beta)) / Nc``; equals ``beta`` for a single flow. ``n_cubic`` may be real
    (used to locate the equilibrium between integer mixes).
    """
    nc = check_array("n_cubic", n_cubic, low=1.0)
    return (nc - (1.0 - beta)) / nc


def aggregate_bbr_share(buffer_bdp, n_cubic, n_bbr, *, synchronised: bool, beta=BETA_CUBIC):
    """Aggregate BBR fraction for ``n_cubic`` CUBIC and ``n_bbr`` BBR flows (eqs. 21-22).

    The BBR flows act as one aggregate flow, so the share does not depend on ``n_bbr`` except
    at the ends of the mix: with no CUBIC flow BBR takes the whole link and with no BBR flow
    it gets nothing (points B and the origin of §4.1).
    """
    x = _check_buffer(buffer_bdp)
    nc = check_array("n_cubic", n_cubic, low=0, integer=True)
    nb = check_array("n_bbr", n_bbr, low=0, integer=True)
    if np.any((nc + nb) < 1):
        raise ParameterError("parameters 'n_cubic' + 'n_bbr' must be at least 1 flow")
    x, nc, nb = np.broadcast_arrays(x, nc, nb)
    _check_beta(beta)
    if synchronised:
        b = np.full(x.shape, beta, dtype=float)  # eq. (21)
    else:
        b = desync_backoff(np.maximum(nc, 1), beta)  # eq. (22)
    share = share_unchecked(x, b)
    return np.where(nc == 0, 1.0, np.where(nb == 0, 0.0, share))


@dataclass(frozen=True)
class MultiFlow:
    """Aggregate and per-flow bandwidths (eqs. 23-24) for one synchronisation bound."""

    bbr_share: np.ndarray
    cubic_total_bps: np.ndarray
    bbr_total_bps: np.ndarray
    cubic_per_flow_bps: np.ndarray
    bbr_per_flow_bps: np.ndarray


def multi_flow(
    buffer_bdp,
    n_cubic,
    n_bbr,
    *,
    capacity_bps=1.0,
    synchronised: bool,
    beta=BETA_CUBIC,
) -> MultiFlow:
    """Multi-flow model: aggregate shares (eqs. 21-22) and per-flow averages (eqs. 23-24).

    Per-flow values of an algorithm with no flows in the mix are NaN: there is no such flow.
    """
    c = check_array("capacity_bps", capacity_bps, low=0.0, low_open=True)
    share = aggregate_bbr_share(buffer_bdp, n_cubic, n_bbr, synchronised=synchronised, beta=beta)
    nc = np.asarray(n_cubic, dtype=float)
    nb = np.asarray(n_bbr, dtype=float)
    bbr_total = share * c
    cubic_total = (1.0 - share) * c
    with np.errstate(divide="ignore", invalid="ignore"):
        cubic_pf = np.where(nc > 0, cubic_total / nc, np.nan)  # eq. (23)
        bbr_pf = np.where(nb > 0, bbr_total / nb, np.nan)  # eq. (24)
    return MultiFlow(share, cubic_total, bbr_total, cubic_pf, bbr_pf)


def share_bounds(flow_counts, buffers_bdp, beta=BETA_CUBIC) -> pd.DataFrame:
    """The closed form's band of the BBR flows' total share (eqs. 21-24) for every mix of
    every flow count: ``n - k`` CUBIC and ``k`` BBR flows, ``0 < k < n``, at each buffer.
    Rows: ``n_flows``, ``n_bbr``, ``buffer_bdp``, ``share_lo`` and ``share_hi`` (the lower and
    upper of the synchronised and de-synchronised readings; which is lower depends on the
    mix)."""
    x = _check_buffer(buffers_bdp)
    parts = []
    for n in flow_counts:
        for k in range(1, int(n)):
            lo = aggregate_bbr_share(x, n - k, k, synchronised=True, beta=beta)
            hi = aggregate_bbr_share(x, n - k, k, synchronised=False, beta=beta)
            parts.append(pd.DataFrame({"n_flows": n, "n_bbr": k, "buffer_bdp": x,
                                       "share_lo": np.minimum(lo, hi),
                                       "share_hi": np.maximum(lo, hi)}))
    return pd.concat(parts, ignore_index=True)
