"""Fairness of a set of rates, shared by the models and the testbed."""

from __future__ import annotations

import numpy as np


def jain(rates) -> float:
    """Jain's index (sum x)^2 / (n sum x^2): 1 when equal, 1/n when one flow takes all;
    NaN when every rate is zero."""
    x = np.asarray(rates, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if (x ** 2).sum() > 0 else np.nan
