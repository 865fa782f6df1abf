"""Fairness of a set of rates, shared by the models and the testbed."""

from __future__ import annotations

import numpy as np

from ..core.params import invalid


def jain(rates, *, strict: bool = False) -> float:
    """Jain's index (sum x)^2 / (n sum x^2): 1 when equal, 1/n when one flow takes all;
    NaN when every rate is zero. ``strict`` refuses what is not a set of rates (not 1-D,
    empty, negative, or all zero), where a row must not carry a NaN index silently."""
    x = np.asarray(rates, dtype=float)
    if strict and (x.ndim != 1 or len(x) == 0 or (x < 0).any() or not x.sum() > 0):
        raise invalid("rates", x, "a 1-D array of non-negative rates, not all zero")
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if (x ** 2).sum() > 0 else np.nan
