"""Reno's congestion window in the fluid model (Scherrer et al. appendix B.1, eq. 39)."""

from __future__ import annotations

import numpy as np


def window_derivative(w, x_ack, p_ack):
    """Eq. (39): ACKs (sent at rate ``x_ack`` one RTT ago, lost with ``p_ack``) grow w by 1/w
    each; each loss halves it.

    ``x_ack = x(t - d_p)`` and ``p_ack = p(t - d_p)`` are the delayed rate and path loss.
    """
    w = np.asarray(w, dtype=float)
    return x_ack * (1.0 - p_ack) / w - x_ack * p_ack * w / 2.0
