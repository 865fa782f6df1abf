"""Benchmark: the full predicted-equilibrium map, vectorised vs a per-point scalar solver.

12 network settings x 100 buffer sizes x 50 flows (every mix 0..50), both CUBIC bounds:
per-flow throughput tables, the unilateral-deviation equilibria and the eq. (25) crossings.
The reference solves eq. (18) point by point with SciPy's brentq on the same bracket. Both
run in this process, so the ratio is meaningful on any machine; the absolute time of the
vectorised map is also reported against its 1 s target.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import brentq

from coexist.closed_form import mishra, nash

SETTINGS = [(c, r) for c in (50e6, 100e6, 500e6) for r in (0.005, 0.02, 0.04, 0.08)]
BUFFERS = np.geomspace(1.05, 50.0, 100)
FLOWS = 50


def vectorised() -> dict[str, np.ndarray]:
    out = {}
    x = np.broadcast_to(BUFFERS, (len(SETTINGS), len(BUFFERS)))  # depends on BDP only
    for bound, sync in (("sync", True), ("desync", False)):
        cubic, bbr = nash.model_table(x, FLOWS, synchronised=sync)
        out[f"mask_{bound}"] = nash.equilibrium_mask(cubic, bbr)
        out[f"cross_{bound}"] = nash.predicted_bbr_flows(x, FLOWS, synchronised=sync)
    return out


def scalar_share(x: float, beta: float) -> float:
    y = brentq(lambda v: float(mishra.residual(v, x, beta)), 0.0, x, xtol=1e-14)
    return y / x


def reference() -> np.ndarray:
    """Per-point shares for every setting, buffer and mix, both bounds (loops, brentq)."""
    shares = np.empty((2, len(SETTINGS), len(BUFFERS), FLOWS - 1))
    for s in range(len(SETTINGS)):
        for i, x in enumerate(BUFFERS):
            sync = scalar_share(x, 0.7)
            for k in range(1, FLOWS):
                shares[0, s, i, k - 1] = sync
                nc = FLOWS - k
                shares[1, s, i, k - 1] = scalar_share(x, (nc - 0.3) / nc)
    return shares


def main() -> None:
    vectorised()  # warm-up
    t0 = time.perf_counter()
    out = vectorised()
    t_vec = time.perf_counter() - t0

    t0 = time.perf_counter()
    ref = reference()
    t_ref = time.perf_counter() - t0

    k = np.arange(1, FLOWS)
    x = BUFFERS[:, None]
    for b, sync in ((0, True), (1, False)):
        vec = mishra.aggregate_bbr_share(x, FLOWS - k, k, synchronised=sync)
        assert np.allclose(vec, ref[b, 0], rtol=1e-10), "vectorised and reference disagree"
    print(f"NE map ({len(SETTINGS)} settings x {len(BUFFERS)} buffers x {FLOWS} flows, "
          f"both bounds): vectorised {t_vec:.3f} s (target < 1 s), "
          f"per-point brentq reference {t_ref:.2f} s, ratio {t_ref / t_vec:.0f}x; "
          f"agreement rtol 1e-10; equilibria found at every point: "
          f"{bool(out['mask_sync'].any(-1).all() and out['mask_desync'].any(-1).all())}")
    if t_vec >= 1.0:
        raise SystemExit("vectorised NE map missed its 1 s target")


if __name__ == "__main__":
    main()
