"""Reference integrator for the fluid model: the same equations, stepped in plain NumPy.

Kept beside the benchmark as the yardstick for the compiled solver
(:mod:`coexist.fluid.solve`): it uses the vectorised equation functions of
:mod:`coexist.fluid.network`, :mod:`coexist.fluid.reno` and :mod:`coexist.fluid.cubic`
once per step, with NumPy ring buffers for the delayed values.
"""

from __future__ import annotations

import numpy as np

from coexist.fluid import cubic, network, reno, solve


def run(cfg: solve.Config) -> solve.Trace:
    cfg.check()
    h = cfg.step_s
    n = len(cfg.flows)
    df = np.array([int(round(f.d_f / h)) for f in cfg.flows])
    db = np.array([int(round(f.d_b / h)) for f in cfg.flows])
    dp = np.array([f.d_p for f in cfg.flows])
    is_cubic = np.array([f.cca == "cubic" for f in cfg.flows])
    ring = int(max(df.max(), db.max()) + df.max() + db.max()) + 2
    x_hist, q_hist, p_hist = np.zeros((ring, n)), np.zeros(ring), np.zeros(ring)
    w = np.full(n, cfg.initial_window)
    w_max = np.full(n, cfg.initial_window)
    s = np.where(is_cubic, cubic.k_time(w_max), 0.0)
    q, cols = 0.0, np.arange(n)
    n_steps = int(round(cfg.duration_s / h))
    every = max(1, int(round(cfg.sample_s / h)))
    out = {k: [] for k in ("x", "w", "tau", "q", "p", "y")}
    for step in range(n_steps):
        slot = step % ring
        tau = network.latency(dp, q_hist[(step - db) % ring], cfg.capacity_pps)
        w = np.where(is_cubic, np.maximum(cubic.window(s, w_max), 1.0), w)
        x = network.window_rate(w, tau)
        x_hist[slot] = x
        y = 0.0
        for i in range(n):  # summed in flow order, as the compiled solver does
            y += x_hist[(step - df[i]) % ring, i]
        if cfg.aqm == "droptail":
            p = float(network.droptail_loss(y, q, cfg.capacity_pps, cfg.buffer_pkts,
                                            cfg.k_sigmoid, cfg.l_droptail))
        else:
            p = float(network.red_loss(q, cfg.buffer_pkts))
        dq = (1.0 - p) * y - cfg.capacity_pps
        q_hist[slot], p_hist[slot] = q, p
        if step % every == 0 and step // every < n_steps // every:
            for key, val in (("x", x), ("w", w), ("tau", tau), ("q", q), ("p", p), ("y", y)):
                out[key].append(np.copy(val))
        x_ack = x_hist[(step - df - db) % ring, cols]
        p_ack = p_hist[(step - db) % ring]
        w_reno = np.maximum(w + h * reno.window_derivative(w, x_ack, p_ack), 1.0)
        s_new = np.maximum(s + h * cubic.since_loss_derivative(s, x_ack, p_ack), 0.0)
        w_max = np.where(is_cubic, w_max + h * cubic.w_max_derivative(w, w_max, x_ack, p_ack),
                         w_max)
        s = np.where(is_cubic, s_new, s)
        w = np.where(is_cubic, w, w_reno)
        q = min(max(q + h * dq, 0.0), cfg.buffer_pkts)
    t = np.arange(len(out["q"])) * every * h
    return solve.Trace(cfg, t, np.array(out["x"]), np.array(out["w"]), np.array(out["tau"]),
                       np.array(out["q"]), np.array(out["p"]), np.array(out["y"]))
