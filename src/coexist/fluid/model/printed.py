"""The printed reading's kernel: the paper's equations as printed (eqs. 1-32, 39-41),
integrated with the explicit Euler step and the choices :mod:`.solve` documents.

One compiled loop over the run's steps, delayed quantities read from ring buffers of past
values; :func:`.solve.run` sets it up from a :class:`.solve.Config` and wraps its output in
a :class:`.solve.Trace`. The published reading's kernel, the equations as the authors' code
integrates them, is :func:`.published.integrate`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import bbr, bbr1, bbr2
from .smooth import sigmoid


@njit(cache=True)
def behind(slot, d, ring):
    """The ring slot ``d`` steps before ``slot`` (0 <= d < ring)."""
    back = slot - d
    return back + ring if back < 0 else back


@njit(cache=True, nogil=True)  # nogil: independent runs may share a process's threads
def integrate(cca, df_steps, db_steps, dp_s, capacity, buffer, aqm, k, l_exp, h, n_steps,
               every, w0, c_cubic, beta, w_hi0, k_win, expiry, recovery):
    n = cca.shape[0]
    ring = int(max(df_steps.max(), db_steps.max()) + df_steps.max() + db_steps.max()) + 2
    x_hist = np.zeros((ring, n))
    q_hist = np.zeros(ring)
    p_hist = np.zeros(ring)
    y_hist = np.zeros(ring)
    # loss-based state
    w = w0.copy()
    s = np.zeros(n)
    w_max = w0.copy()
    lost = np.zeros(n)  # CUBIC with recovery episodes: packets lost since the last episode
    in_rec = np.zeros(n)  # ... and the time left in the current one
    # BBR state (eqs. 9-32); BBR's start-up is not modelled: it starts in ProbeBW with
    # its bandwidth estimate at the initial window's rate and its RTprop at the path's
    tau_min = dp_s.copy()
    m_prt = np.zeros(n)
    t_prt = np.zeros(n)
    hold = np.zeros(n)  # Linux ProbeRTT (expiry option): time left until drained
    prt_round = np.zeros(n)  # ... then the round trip it also waits out, from the drain
    t_pbw = np.zeros(n)
    x_btl = w0 / dp_s
    x_max = w0 / dp_s
    x_max_prev = w0 / dp_s
    v = np.zeros(n)
    m_dwn = np.zeros(n)
    m_crs = np.zeros(n)
    w_hi = w_hi0 * w0
    w_lo = w0.copy()
    x_pcg = np.zeros(n)
    kk = np.zeros(n)  # eq. (41)'s K, recomputed only when w_max has changed
    kk_at = np.full(n, -1.0)
    for i in range(n):
        if cca[i] == 1:  # start on the cubic curve at w0: s such that window(s) = w0
            s[i] = (w_max[i] * (1.0 - beta) / c_cubic) ** (1.0 / 3.0)
    q = 0.0
    n_out = n_steps // every
    out = np.zeros((12, n_out, n))  # x, w, tau, x_btl, x_max, tau_min, m_prt, v, x_pcg,
    out_link = np.zeros((3, n_out))  # m_dwn, m_crs, w_hi ; link: q, p, y
    x = np.zeros(n)
    tau = np.zeros(n)
    for step in range(n_steps):
        slot = step % ring
        for i in range(n):
            back = behind(slot, db_steps[i], ring)
            tau[i] = dp_s[i] + q_hist[back] / capacity  # eq. (3), RTT of the ACK arriving now
            if cca[i] <= 1:
                if cca[i] == 1:
                    if w_max[i] != kk_at[i]:
                        kk[i] = (w_max[i] * (1.0 - beta) / c_cubic) ** (1.0 / 3.0)
                        kk_at[i] = w_max[i]
                    w[i] = c_cubic * (s[i] - kk[i]) ** 3 + w_max[i]  # eq. (41)
                    if w[i] < 1.0:
                        w[i] = 1.0
                x[i] = w[i] / tau[i]  # eq. (8)
            else:
                w_bar = x_btl[i] * tau_min[i]  # estimated BDP
                if cca[i] == 2:  # BBRv1: pulses (eqs. 21-22), cwnd (eq. 23)
                    x_pcg[i] = bbr1.pacing_rate(x_btl[i], t_pbw[i], tau_min[i], i % 6)
                    w_pbw = bbr1.probe_bw_window(w_bar)
                    w_prt = bbr1.PROBE_RTT_WINDOW
                else:  # BBRv2: probe/down/cruise pacing (eq. 25), windows (eqs. 31-32)
                    x_pcg[i] = bbr2.pacing_rate(x_btl[i], t_pbw[i], tau_min[i], m_dwn[i],
                                                m_crs[i])
                    w_pbw = bbr2.probe_bw_window(w_bar, w_hi[i], w_lo[i], m_crs[i])
                    w_prt = bbr2.probe_rtt_window(w_bar)
                x_pbw = bbr.probe_bw_rate(w_pbw, tau[i], x_pcg[i])  # eq. (15)
                x[i] = bbr.rate(m_prt[i], w_prt, x_pbw, tau[i])  # eq. (14)
                w[i] = bbr.window(m_prt[i], w_prt, w_pbw)
            x_hist[slot, i] = x[i]
        y = 0.0
        for i in range(n):
            y += x_hist[behind(slot, df_steps[i], ring), i]  # eq. (1)
        if aqm == 0:
            fill = q / buffer
            fill = 0.0 if fill < 0.0 else (1.0 if fill > 1.0 else fill)
            excess = 1.0 - capacity / y if y > capacity else 0.0
            p = sigmoid(y - capacity, k) * excess * fill ** l_exp  # eq. (4)
        else:
            p = q / buffer  # eq. (6)
        dq = (1.0 - p) * y - capacity  # eq. (2)
        q_hist[slot] = q
        p_hist[slot] = p
        y_hist[slot] = y
        if step % every == 0 and step // every < n_out:
            o = step // every
            out_link[0, o] = q
            out_link[1, o] = p
            out_link[2, o] = y
            per_flow = (x, w, tau, x_btl, x_max, tau_min, m_prt, v, x_pcg, m_dwn, m_crs, w_hi)
            for j in range(12):
                out[j, o, :] = per_flow[j]
        for i in range(n):
            sent = behind(slot, df_steps[i] + db_steps[i], ring)
            x_ack = x_hist[sent, i]  # x(t - d_p)
            at_link = behind(slot, db_steps[i], ring)
            p_ack = p_hist[at_link]  # path loss of those packets, p(t - d_b)
            if cca[i] == 0:  # Reno, eq. (39)
                w[i] += h * (x_ack * (1.0 - p_ack) / w[i] - x_ack * p_ack * w[i] / 2.0)
                if w[i] < 1.0:
                    w[i] = 1.0
            elif cca[i] == 1 and recovery:  # CUBIC, one cut per recovery episode
                if in_rec[i] > 0.0:
                    in_rec[i] -= h  # losses of the window already cut are not counted
                else:
                    lost[i] += h * x_ack * p_ack
                    if lost[i] >= 1.0:  # the first packet lost: cut to β w and recover
                        w_max[i] = w[i]
                        s[i] = 0.0
                        lost[i] = 0.0
                        in_rec[i] = tau[i]
                s[i] += h
            elif cca[i] == 1:  # CUBIC, eqs. (40a-b)
                ds = 1.0 - s[i] * x_ack * p_ack
                dwm = (w[i] - w_max[i]) * x_ack * p_ack
                s[i] += h * ds
                w_max[i] += h * dwm
                if s[i] < 0.0:
                    s[i] = 0.0
            else:
                # delivery rate (eq. 17): this flow's part of what the link delivered
                x_dlv = bbr.delivery_rate(x_ack, y_hist[at_link], q_hist[at_link], capacity)
                rtt = tau[i]
                tau_min[i] = bbr.rtprop_update(tau_min[i], rtt)  # eq. (9)
                # ProbeRTT mode and timer (eqs. 11-13)
                m_prt[i], t_prt[i], hold[i], prt_round[i], tau_min[i] = bbr.probe_rtt_update(
                    m_prt[i], t_prt[i], hold[i], prt_round[i], tau_min[i], rtt, h, expiry)
                # ProbeBW period (eq. 16 and eq. 20 / eq. 24)
                if cca[i] == 2:
                    t_period = bbr1.period(tau_min[i])
                else:
                    t_period = bbr2.period(tau_min[i], i, n)
                t_pbw[i] += h
                x_max[i] = bbr.max_filter_update(x_max[i], x_dlv, t_pbw[i])  # eq. (18)
                if cca[i] == 2:  # eq. (20): adopt the max at period end
                    x_btl[i] = bbr1.bottleneck_update(x_btl[i], x_max[i], t_pbw[i], t_period)
                else:
                    w_bar = x_btl[i] * tau_min[i]
                    w_minus = bbr2.drain_target(w_bar, w_hi[i])
                    # eqs. (26)-(27): down when inflight or loss says so, cruise once drained
                    m_dwn[i], m_crs[i] = bbr2.modes_update(m_dwn[i], m_crs[i], t_pbw[i],
                                                           tau_min[i], v[i], w_bar, w_minus,
                                                           p_ack)
                    # eq. (28): max over this and the previous period
                    x_btl[i] = bbr2.bottleneck_update(x_btl[i], x_max[i], x_max_prev[i],
                                                      m_dwn[i])
                    w_hi[i] += h * bbr2.inflight_hi_derivative(  # eq. (29)
                        w_hi[i], v[i], t_pbw[i], tau_min[i], m_crs[i], p_ack, k_win)
                    w_lo[i] += h * bbr2.inflight_lo_derivative(  # eq. (30)
                        w_lo[i], w_minus, m_crs[i], p_ack, tau_min[i])
                t_pbw[i], restarted = bbr.period_restart(t_pbw[i], t_period)
                if restarted:
                    x_max_prev[i] = x_max[i]
                    m_crs[i] = 0.0  # eq. (27): a new probing period ends cruising
                v[i] = bbr.inflight_update(v[i], x[i], x_dlv, h)  # eq. (19)
        q += h * dq
        if q < 0.0:
            q = 0.0
        elif q > buffer:
            q = buffer
    return out, out_link
