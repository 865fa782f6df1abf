"""CUBIC in the fluid model (Scherrer et al. appendix B.2, eqs. 40-41, after Vardoyan et al.).

Two instrumental variables per agent: ``s``, the time since the last loss, and ``w_max``,
the window at that loss. The window follows CUBIC's growth function of ``s``.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from ...core.params import invalid

#: CUBIC's scaling constant C (packets/s^3) and multiplicative decrease factor (RFC 8312).
C_CUBIC = 0.4
BETA_CUBIC = 0.7


def since_loss_derivative(s, x_ack, p_ack):
    """Eq. (40a): s grows at 1 per second and is pulled to 0 at the rate losses arrive."""
    return 1.0 - np.asarray(s, dtype=float) * x_ack * p_ack


def w_max_derivative(w, w_max, x_ack, p_ack):
    """Eq. (40b): w_max moves to the current window at the rate losses arrive."""
    return (np.asarray(w, dtype=float) - w_max) * x_ack * p_ack


def k_time(w_max, c: float = C_CUBIC, beta: float = BETA_CUBIC):
    """Time after a loss at which the window is back at ``w_max``: cbrt(w_max (1-β) / c)."""
    return np.cbrt(np.asarray(w_max, dtype=float) * (1.0 - beta) / c)


def window(s, w_max, c: float = C_CUBIC, beta: float = BETA_CUBIC):
    """Eq. (41): w = c (s - K)^3 + w_max.

    The paper writes K = cbrt(w_max b / c) with "b = 0.7"; that would restart the window at
    0.3 w_max. Linux and RFC 8312 restart it at β w_max = 0.7 w_max, i.e. K uses (1 - β);
    we follow the implementation (tested: w(0) = β w_max, w(K) = w_max).
    """
    return c * (np.asarray(s, dtype=float) - k_time(w_max, c, beta)) ** 3 + w_max


def episode(s0: float, w_max0: float, lost_pkts: float, c: float = C_CUBIC,
            beta: float = BETA_CUBIC) -> tuple[float, float, float]:
    """What eqs. (40a-b) do to one CUBIC sender through a loss episode in which it loses
    ``lost_pkts`` packets (expected), from the state ``(s0, w_max0)`` at its start.

    Eqs. (40a-b) are written with time as the independent variable; with the packets lost
    so far, L = integral of x p dt, instead, they read ds/dL = 1/(x p) - s and
    dw_max/dL = w - w_max. While losses arrive much faster than one per ``s`` seconds
    (x p s >> 1, an overflow) the first term is negligible, and what the episode does
    depends on L alone, not on how fast the packets were lost: s falls as s0 e^-L, and
    w_max chases a window (eq. 41) that falls with s. Returns ``(s, w_max, w)`` after L.
    A Linux sender cuts once per episode, to ``beta`` of its window, whatever L.

    From the plateau (s0 = K, w = w_max) the window after L >> 1 packets is about
    beta e^{-(1-beta)(L - 1.9)} of w_max0: each further lost packet takes another factor
    e^{-(1-beta)} (tested). From the convex branch (s0 > K) it falls faster, because there
    the window grows as (s - K)^3 and s falls by e per lost packet.
    """
    for name, v in (("s0", s0), ("w_max0", w_max0), ("lost_pkts", lost_pkts)):
        if not (np.isfinite(v) and v >= 0):
            raise invalid(name, v, ">= 0 and finite")
    if not w_max0 > 0:
        raise invalid("w_max0", w_max0, "> 0 packets")

    def rhs(_, y):
        s, wm = y
        return [-s, c * (s - k_time(wm, c, beta)) ** 3]

    if lost_pkts == 0:
        s, wm = float(s0), float(w_max0)
    else:
        sol = solve_ivp(rhs, (0.0, float(lost_pkts)), [float(s0), float(w_max0)],
                        rtol=1e-10, atol=1e-12)
        s, wm = (float(v) for v in sol.y[:, -1])
    return s, wm, float(window(s, wm, c, beta))
