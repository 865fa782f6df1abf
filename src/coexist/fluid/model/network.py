"""The network part of the fluid model (Scherrer et al. §2, eqs. 1-8).

A single bottleneck link of capacity ``C`` (packets/s) and buffer ``B`` (packets) is shared
by agents whose packets reach it ``d_f`` seconds after sending and whose ACKs return
``d_b`` seconds after the packet left the queue; ``d_p = d_f + d_b`` is the propagation RTT.
"""

from __future__ import annotations

import numpy as np

#: Sharpness of the sigmoid (eq. 5) and exponent of the drop-tail approximation (eq. 4).
#: The paper only requires K >> 1 and L >> 1 and gives no values; these are our defaults
#: (both are parameters). With L = 1000, loss reaches 1 % of the excess rate only once the
#: buffer is 99.5 % full, close to a hard drop-tail.
K_DEFAULT = 100.0
L_DEFAULT = 1000.0


def sigmoid(v, k: float = K_DEFAULT):
    """Eq. (5): a smooth step, 1/2 at v = 0, sharper for larger ``k``."""
    # written with exp of a non-positive argument only, so it never overflows
    z = np.exp(-np.abs(k * v))
    return np.where(np.asarray(v) >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def smooth_relu(v, k: float = K_DEFAULT):
    """Eq. (10): Γ(v) = v σ(v), a differentiable max(0, v)."""
    return v * sigmoid(v, k)


def arrival_rate(delayed_rates):
    """Eq. (1): the link's arrival rate, the sum of each agent's rate ``d_f`` ago."""
    return np.sum(delayed_rates, axis=-1)


def droptail_loss(y, q, capacity, buffer, k: float = K_DEFAULT, l_exp: float = L_DEFAULT):
    """Eq. (4): drop-tail loss probability, the relative excess rate when the queue is full.

    Zero below capacity (up to the sigmoid's tail) and vanishing unless ``q`` is near ``B``.
    """
    y = np.asarray(y, dtype=float)
    excess = np.where(y > 0, 1.0 - capacity / np.maximum(y, 1e-300), 0.0)
    fill = np.clip(np.asarray(q, dtype=float) / buffer, 0.0, 1.0) ** l_exp
    return sigmoid(y - capacity, k) * np.maximum(excess, 0.0) * fill


def red_loss(q, buffer):
    """Eq. (6): RED approximated as a loss probability proportional to the queue."""
    return np.clip(np.asarray(q, dtype=float) / buffer, 0.0, 1.0)


def queue_derivative(y, p, q, capacity, buffer):
    """Eq. (2): q' = (1 - p) y - C, held at the bounds 0 and B.

    At an empty queue the link cannot send more than arrives, and at a full one the
    admitted rate cannot exceed C: the derivative is cut so q stays in [0, B].
    """
    dq = (1.0 - p) * y - capacity
    dq = np.where((np.asarray(q) <= 0.0) & (dq < 0.0), 0.0, dq)
    return np.where((np.asarray(q) >= buffer) & (dq > 0.0), 0.0, dq)


def latency(d_p, q, capacity):
    """Eq. (3): path latency, propagation delay plus queueing delay q/C."""
    return d_p + np.asarray(q, dtype=float) / capacity


def window_rate(w, tau):
    """Eq. (8): the sending rate of a window-based agent, w / τ."""
    return np.asarray(w, dtype=float) / tau
