"""Reference integrator for the fluid model: the same equations, stepped in plain NumPy.

It is the yardstick for the compiled solver of the printed reading (:mod:`.solve`): the
tests and the solver benchmark run both on the same configurations. Each step
evaluates the equations for all flows at once with NumPy arrays, using the vectorised
functions of :mod:`coexist.fluid.model.network`, :mod:`~coexist.fluid.model.reno` and
:mod:`~coexist.fluid.model.cubic` where they exist. Delayed values come from NumPy ring
buffers. It reads the paper's equations the same way as the solver's module docstring
says.
"""

from __future__ import annotations

import numpy as np

from ...core.params import invalid
from . import cubic, network, reno, solve


def run(cfg: solve.Config) -> solve.Trace:
    """Integrate ``cfg`` (printed reading) step by step in NumPy; the same trace as
    :func:`.solve.run`, only slower."""
    cfg.check()
    if cfg.reading != "printed":
        raise invalid("reading", cfg.reading, "'printed' (the reference integrates the "
                      "equations as printed)")
    h, n = cfg.step_s, len(cfg.flows)
    df = np.array([int(round(f.d_f / h)) for f in cfg.flows])
    db = np.array([int(round(f.d_b / h)) for f in cfg.flows])
    dp = np.array([f.d_p for f in cfg.flows])
    code = np.array([solve.CCAS[f.cca] for f in cfg.flows])
    is_reno, is_cubic, is_v1, is_v2 = (code == c for c in range(4))
    is_bbr = is_v1 | is_v2
    idx = np.arange(n)
    ring = int(max(df.max(), db.max()) + df.max() + db.max()) + 2
    x_hist, q_hist = np.zeros((ring, n)), np.zeros(ring)
    p_hist, y_hist = np.zeros(ring), np.zeros(ring)
    w0 = np.broadcast_to(np.asarray(cfg.initial_window, dtype=float), (n,))
    w, w_max = w0.copy(), w0.copy()
    s = np.where(is_cubic, cubic.k_time(w_max), 0.0)
    lost, in_rec = np.zeros(n), np.zeros(n)  # CUBIC with recovery episodes
    tau_min, m_prt, t_prt, t_pbw = dp.copy(), np.zeros(n), np.zeros(n), np.zeros(n)
    hold = np.zeros(n)
    prt_round = np.zeros(n)
    x_btl, x_max, x_max_prev = w0 / dp, w0 / dp, w0 / dp
    v, m_dwn, m_crs = np.zeros(n), np.zeros(n), np.zeros(n)
    w_hi, w_lo = cfg.inflight_hi_factor * w0, w0.copy()
    phi = idx % 6
    q = 0.0
    n_steps = int(round(cfg.duration_s / h))
    every = max(1, int(round(cfg.sample_s / h)))
    keys = ("x", "w", "tau", *solve.BBR_FIELDS)
    out = {k: [] for k in (*keys, "q", "p", "y")}
    for step in range(n_steps):
        slot = step % ring
        back = (step - db) % ring
        tau = network.latency(dp, q_hist[back], cfg.capacity_pps)
        # loss-based windows and BBR's pacing and inflight limits
        w = np.where(is_cubic, np.maximum(cubic.window(s, w_max), 1.0), w)
        w_bar = x_btl * tau_min
        up = (t_pbw >= phi * tau_min) & ((phi + 1) * tau_min - t_pbw - 1e-12 >= 0)
        down = (t_pbw >= (phi + 1) * tau_min) & ((phi + 2) * tau_min - t_pbw - 1e-12 >= 0)
        pcg_v1 = x_btl * (1 + 0.25 * up - 0.25 * down)
        probing = (t_pbw >= tau_min) * (1 - m_dwn) * (1 - m_crs)
        pcg_v2 = x_btl * (1 + 0.25 * probing - 0.25 * m_dwn)
        pacing = np.where(is_v1, pcg_v1, np.where(is_v2, pcg_v2, 0.0))
        w_pbw = np.where(is_v1, 2 * w_bar,
                         np.minimum(2 * w_bar, (1 - m_crs) * w_hi + m_crs * w_lo))
        w_prt = np.where(is_v1, 4.0, w_bar / 2)
        x_pbw = np.minimum(w_pbw / tau, pacing)
        x_bbr = m_prt * w_prt / tau + (1 - m_prt) * x_pbw
        w = np.where(is_bbr, m_prt * w_prt + (1 - m_prt) * w_pbw, w)
        x = np.where(is_bbr, x_bbr, network.window_rate(w, tau))
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
        q_hist[slot], p_hist[slot], y_hist[slot] = q, p, y
        if step % every == 0 and step // every < n_steps // every:
            vals = (x, w, tau, x_btl, x_max, tau_min, m_prt, v, pacing, m_dwn, m_crs, w_hi)
            for key, val in zip(keys, vals, strict=True):
                out[key].append(np.copy(val))
            out["q"].append(q), out["p"].append(p), out["y"].append(y)
        x_ack = x_hist[(step - df - db) % ring, idx]
        p_ack = p_hist[back]
        # loss-based updates (eqs. 39-40)
        w_reno = np.maximum(w + h * reno.window_derivative(w, x_ack, p_ack), 1.0)
        if cfg.cubic_recovery:  # one cut per recovery episode, an RTT long
            recovering = in_rec > 0.0
            counted = np.where(recovering, lost, lost + h * x_ack * p_ack)
            cut = is_cubic & ~recovering & (counted >= 1.0)
            in_rec = np.where(is_cubic & recovering, in_rec - h, np.where(cut, tau, in_rec))
            w_max = np.where(cut, w, w_max)
            s = np.where(is_cubic, np.where(cut, 0.0, s) + h, s)
            lost = np.where(cut, 0.0, np.where(is_cubic, counted, lost))
        else:
            s_new = np.maximum(s + h * cubic.since_loss_derivative(s, x_ack, p_ack), 0.0)
            w_max = np.where(is_cubic,
                             w_max + h * cubic.w_max_derivative(w, w_max, x_ack, p_ack), w_max)
            s = np.where(is_cubic, s_new, s)
        w = np.where(is_reno, w_reno, w)
        # BBR updates (eqs. 9-32)
        y_then, q_then = y_hist[back], q_hist[back]
        deliv = np.where(q_then > 0, cfg.capacity_pps, np.minimum(y_then, cfg.capacity_pps))
        x_dlv = np.where(y_then > 0, x_ack / np.where(y_then > 0, y_then, 1.0) * deliv, 0.0)
        tau_min = np.where(is_bbr, tau_min - np.maximum(tau_min - tau, 0.0), tau_min)
        period = np.where(m_prt > 0.5, 0.2, 10.0)
        if cfg.rtprop_expiry:
            period = np.where(m_prt > 0.5, np.maximum(0.2, prt_round), period)
        holding = cfg.rtprop_expiry & is_bbr & (m_prt > 0.5) & (hold > 0.0)
        drained = holding & (hold - h <= 0.0)
        hold = np.where(holding, hold - h, hold)
        prt_round = np.where(drained, tau, prt_round)
        t_prt = t_prt + np.where(holding, 0.0, h)
        flip = t_prt >= period
        reset = ~flip & (m_prt < 0.5) & (tau < tau_min - 1e-12)
        m_prt = np.where(is_bbr & flip, 1 - m_prt, m_prt)
        t_prt = np.where(flip | reset, 0.0, t_prt)
        if cfg.rtprop_expiry:
            entering = is_bbr & flip & (m_prt > 0.5)
            tau_min = np.where(entering, tau, tau_min)
            hold = np.where(entering, tau, hold)
        t_period = np.where(is_v1, 8 * tau_min, np.minimum(63 * tau_min, 2 + (idx + 1.0) / n))
        t_pbw = t_pbw + h
        x_max = np.where(is_bbr, np.where(t_pbw < 0.01, 0.0,
                                          x_max + np.maximum(x_dlv - x_max, 0.0)), x_max)
        x_btl = np.where(is_v1 & (t_pbw >= t_period - 0.01), x_max, x_btl)
        # BBRv2 modes and inflight bounds
        w_bar = x_btl * tau_min
        w_minus = np.minimum(w_bar, 0.85 * w_hi)
        go_down = ((m_dwn < 0.5) & (m_crs < 0.5) & (t_pbw >= tau_min)
                   & ((v >= 1.25 * w_bar) | (p_ack >= 0.02)))
        end_down = ~go_down & (m_dwn > 0.5) & (v <= w_minus)
        m_dwn = np.where(is_v2 & go_down, 1.0, np.where(is_v2 & end_down, 0.0, m_dwn))
        m_crs = np.where(is_v2 & end_down, 1.0, m_crs)
        x_btl = np.where(is_v2 & (m_dwn > 0.5), np.maximum(x_max, x_max_prev), x_btl)
        grow = ((1 - m_crs) * (t_pbw >= tau_min)
                * network.sigmoid(v - w_hi, cfg.k_window)
                * 2.0 ** np.minimum(t_pbw / tau_min, 60.0))
        cut = (p_ack >= 0.02) * 0.3 / tau_min * w_hi
        lossy = (p_ack > 0.0).astype(float)
        w_hi = np.where(is_v2, w_hi + h * (grow - cut), w_hi)
        w_lo = np.where(is_v2, w_lo + h * ((1 - m_crs) * (w_minus - w_lo)
                                           - m_crs * lossy * 0.3 * w_lo / tau_min), w_lo)
        new_period = is_bbr & (t_pbw >= t_period)
        t_pbw = np.where(new_period, 0.0, t_pbw)
        x_max_prev = np.where(new_period, x_max, x_max_prev)
        m_crs = np.where(new_period, 0.0, m_crs)
        v = np.where(is_bbr, np.maximum(v + h * (x - x_dlv), 0.0), v)
        q = min(max(q + h * dq, 0.0), cfg.buffer_pkts)
    t = np.arange(len(out["q"])) * every * h
    a = {k: np.array(val) for k, val in out.items()}
    bbr = {name: a[name] for name in solve.BBR_FIELDS}
    return solve.Trace(cfg, t, a["x"], a["w"], a["tau"], a["q"], a["p"], a["y"], bbr)
