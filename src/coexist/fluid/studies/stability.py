"""The reduced BBR models and their equilibria (Scherrer et al. §5 and appendix D).

One bottleneck of capacity ``C`` (packets/s); N senders with the same propagation delay
``d`` (s); the state is each sender's bottleneck-bandwidth estimate ``x_btl`` and the queue
``q``. As in the paper, the estimates follow the maximum measurement with unit rate
(eq. 34), so time is in the units of that assimilation.

- BBRv1 (eqs. 33-35): Δ_i = 2d/(d + q/C); equilibria have queueing delay = propagation
  delay (Theorem 1), the fair shallow-buffer equilibrium is 5C/(4N+1) (Theorem 3).
- BBRv2 (eqs. 36-38): δ_i = d/(d + q/C); the fair equilibrium has
  q = (N-1)/(4N+1) d C (Theorem 4).
"""

from __future__ import annotations

import numpy as np


def _split(z):
    z = np.asarray(z, dtype=float)
    return z[:-1], z[-1]


def bbr1_rhs(z, capacity: float, d: float, shallow: bool = False) -> np.ndarray:
    """Reduced BBRv1 dynamics: eq. (33) for x_max, eq. (34) for x_btl, eq. (45) for q.

    With ``shallow`` the buffer holds the queue where the window limit has no effect
    (Δ >= 5/4 for everyone, Theorem 3's setting): only x_btl evolves, q is not a state.
    """
    if shallow:
        x = np.asarray(z, dtype=float)
        gain = np.full_like(x, 1.25)
        others = x.sum() - x
        x_max = gain * x * capacity / (gain * x + others)
        return x_max - x
    x, q = _split(z)
    delta = 2 * d / (d + max(q, 0.0) / capacity)
    up, bg = min(1.25, delta), min(1.0, delta)
    others = bg * (x.sum() - x)
    x_max = up * x * capacity / (up * x + others) if q > 0 else up * x
    dq = bg * x.sum() - capacity
    if q <= 0 and dq < 0:
        dq = 0.0
    return np.append(x_max - x, dq)


def bbr2_rhs(z, capacity: float, d: float) -> np.ndarray:
    """Reduced BBRv2 dynamics: eqs. (36)-(38) for x_max, eq. (34) for x_btl; the queue
    grows with the cruising rates min(1, δ) x_btl (eq. 37)."""
    x, q = _split(z)
    delta = d / (d + max(q, 0.0) / capacity)
    rate = min(1.0, delta)
    others = rate * (x.sum() - x)
    pulse = 1.25 * rate * x
    x_max = pulse * capacity / (pulse + others) if q > 0 else pulse
    dq = rate * x.sum() - capacity
    if q <= 0 and dq < 0:
        dq = 0.0
    return np.append(x_max - x, dq)


def theorem3_rate(n: int, capacity: float) -> float:
    """Theorem 3: the fair shallow-buffer BBRv1 equilibrium, x_btl = 5C/(4N+1)."""
    return 5 * capacity / (4 * n + 1)


def theorem4_queue(n: int, d: float, capacity: float) -> float:
    """Theorem 4: BBRv2's fair equilibrium queue, q = (N-1)/(4N+1) d C."""
    return (n - 1) / (4 * n + 1) * d * capacity


def theorem2_jacobian(d: float) -> np.ndarray:
    """Eq. (48): the Jacobian of the (y, q) dynamics at y = C, q = dC."""
    return np.array([[-1 / (2 * d) - 1, -1 / (2 * d)], [1.0, 0.0]])


def jacobian(f, z, eps: float = 1e-6) -> np.ndarray:
    """Central-difference Jacobian of ``f`` at ``z`` (steps relative to each entry)."""
    z = np.asarray(z, dtype=float)
    cols = []
    for k in range(len(z)):
        h = eps * max(1.0, abs(z[k]))
        up, dn = z.copy(), z.copy()
        up[k] += h
        dn[k] -= h
        cols.append((f(up) - f(dn)) / (2 * h))
    return np.column_stack(cols)


def simulate(f, z0, t_end: float, dt: float = 0.02, n_points: int = 400
             ) -> tuple[np.ndarray, np.ndarray]:
    """Integrate dz/dt = f(z) from ``z0`` with classic fixed-step Runge-Kutta (the reduced
    models have kinks at Δ = 1 and q = 0, where adaptive stiff solvers can stall).
    Returns ``n_points`` samples (t, z)."""
    z = np.asarray(z0, dtype=float).copy()
    steps = int(np.ceil(t_end / dt))
    keep = set(np.linspace(0, steps, n_points).round().astype(int).tolist())
    ts, zs = [], []
    for k in range(steps + 1):
        if k in keep:
            ts.append(k * dt)
            zs.append(z.copy())
        if k == steps:
            break
        k1 = f(z)
        k2 = f(z + dt / 2 * k1)
        k3 = f(z + dt / 2 * k2)
        k4 = f(z + dt * k3)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.array(ts), np.array(zs)


def full_model(case: str, n: int, *, capacity_pps: float, d_s: float) -> dict[str, float]:
    """The theorems' settings in the full fluid model as published (the authors' code's
    integration, :mod:`.published`): N flows with one propagation delay ``d_s`` (a sixth of
    it before the queue), after a warm-up, averaged outside ProbeRTT where the reduced
    models leave it out (200 ms of every 10 s in which the flows drain).

    ``case``: ``bbr1_deep`` (Theorem 1: a 10-d C buffer, 20 s after 10 s) gives the queue over
    d C and the arrival rate over C; ``bbr1_shallow`` (Theorem 3: a 0.3-d C buffer, 60 s
    after 40 s) the summed estimates over C beside 5N/(4N+1), the loss and the excess rate
    1 - C/y; ``bbr2`` (Theorem 4: a 10-d C buffer, 30 s after 10 s, the paper's random
    period phases) the queue over the theorem's (N-1)/(4N+1) d C and Jain's index.
    """
    from ..model import paper_setup, solve

    settings = {"bbr1_deep": ("bbr1", 10.0, 20.0, 10.0), "bbr1_shallow": ("bbr1", 0.3, 60.0, 40.0),
                "bbr2": ("bbr2", 10.0, 30.0, 10.0)}
    if case not in settings:
        from ...core.params import invalid
        raise invalid("case", case, f"one of {', '.join(settings)}")
    cca, buffer_dc, duration, warmup = settings[case]
    dc = d_s * capacity_pps
    phases = paper_setup.paper_phases(n) if cca == "bbr2" else 0.0
    flows = tuple(solve.Flow(cca, d_s / 6, d_s * 5 / 6) for _ in range(n))
    cfg = solve.Config(capacity_pps, buffer_dc * dc, flows, duration_s=duration,
                       reading="published", bbr2_phase=phases)
    tr, m = solve.simulate_published(cfg, warmup)
    sel = (tr.t >= warmup) & ~(tr.bbr["m_prt"] > 0.5).any(axis=1)
    y, p = tr.arrival_pps[sel], tr.loss[sel]
    if case == "bbr1_deep":
        return {"queue_over_dc": m["avg_queue_pkts"] / dc,
                "arrivals_over_c": float(y.mean() / capacity_pps)}
    if case == "bbr1_shallow":
        return {"estimates_over_c": float(tr.bbr["x_btl"][sel].sum(axis=1).mean()
                                          / capacity_pps),
                "theorem_over_c": 5 * n / (4 * n + 1),
                "loss": float((y * p).mean() / y.mean()),
                "excess": float(1 - capacity_pps / y.mean())}
    return {"queue_over_theorem": m["avg_queue_pkts"] / ((n - 1) / (4 * n + 1) * dc),
            "jain": m["jain"]}
