"""CUBIC in the fluid model (Scherrer et al. appendix B.2, eqs. 40-41, after Vardoyan et al.).

Two instrumental variables per agent: ``s``, the time since the last loss, and ``w_max``,
the window at that loss. The window follows CUBIC's growth function of ``s``.
"""

from __future__ import annotations

import numpy as np

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
