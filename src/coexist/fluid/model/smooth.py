"""The smooth step σ (Scherrer et al. eq. 5), the smooth ReLU Γ (eq. 10) and the sharp
indicator, as each reading of the model writes them, compiled for the kernels.

The published reading (:mod:`.published`) takes the authors' code's forms, bit for bit:
σ with sharpness :data:`SHARP` (500 per unit of its argument, in the code's milliseconds
and packets per millisecond; eq. 21's pulses and eq. 29 :data:`SMOOTH`, 5), Γ(x) = x σ(x), and the
indicator 1[x >= 0] where the code takes σ at K -> ∞. The printed reading (:mod:`.solve`)
takes σ with the configured sharpness and the same indicator for its discrete update rules.
Every function is inlined into the kernels (``inline="always"``), so the equations of
:mod:`.bbr`, :mod:`.bbr1` and :mod:`.bbr2` cost nothing for being written one by one.
"""

from __future__ import annotations

import math

from numba import njit

SHARP = 500.0  # σ's sharpness in the authors' code
SMOOTH = 5.0  # the σ of eq. 21's pulses and of eq. 29's binding inflight_hi, in the code


@njit(cache=True, inline="always")
def sig(x, k):
    """Eq. (5) in the authors' form: 1/(1 + e^{-kx}) at or above 0, 1 - 1/(1 + e^{kx})
    below. Beyond |kx| = 40, e^{-|kx|} < 2^-57 vanishes against 1 and the code's result is
    exactly 1 or 0: it is returned without the exponential (same bits, fewer cycles)."""
    if k * x > 40.0:
        return 1.0
    if k * x < -40.0:
        return 0.0
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-k * x))
    return 1.0 - 1.0 / (1.0 + math.exp(k * x))


@njit(cache=True, inline="always")
def sig_both(x, k):
    """(σ(x), σ(-x)) with the bits of two :func:`sig` calls, from one exponential: the
    code's form takes e^{-k|x|} for either sign, and 1 - 1/(1 + e) is how it writes the
    negative side."""
    if k * x > 40.0:
        return 1.0, 0.0
    if k * x < -40.0:
        return 0.0, 1.0
    if x >= 0.0:
        s = 1.0 / (1.0 + math.exp(-k * x))
        return s, 1.0 - s
    s = 1.0 / (1.0 + math.exp(k * x))
    return 1.0 - s, s


@njit(cache=True, inline="always")
def idc(x):
    """The indicator 1[x >= 0]: σ at K -> ∞, as the code writes its hard switches."""
    return 1.0 if x >= 0.0 else 0.0


@njit(cache=True, inline="always")
def gamma(x):
    """Eq. (10) in the authors' form: Γ(x) = x σ(x) with σ's sharpness :data:`SHARP`."""
    return x * sig(x, SHARP)


@njit(cache=True, inline="always")
def round_half_even(x):
    """Python's round(): to the nearest integer, halves to even (the code's mode reading)."""
    r = math.floor(x + 0.5)
    if r - x == 0.5 and r % 2.0 != 0.0:
        r -= 1.0
    return r


@njit(cache=True)
def sigmoid(v, k):
    """Eq. (5) in the printed reading: 1/(1 + e^{-kv}), written with the exponential of a
    non-positive argument only, so it never overflows."""
    z = math.exp(-abs(k * v))
    return 1.0 / (1.0 + z) if v >= 0 else z / (1.0 + z)


@njit(cache=True)
def step(v):
    """σ with K -> ∞, for the printed reading's discrete update rules (modes, timers,
    resets)."""
    return 1.0 if v >= 0.0 else 0.0
