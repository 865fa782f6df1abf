"""BBRv2 in the fluid model (Scherrer et al. §3.4, eqs. 24-32): the period, the down and
cruise modes, the bottleneck estimate over two periods, inflight_hi and inflight_lo, and
the window they bound, beside the shared core of :mod:`.bbr`.

As there, each equation is one function in each reading: the unsuffixed and ``*_update``
forms for the printed reading (:mod:`.solve`, seconds; how each is read is argued there),
``*_published`` and ``*_step`` for the published one (:mod:`.published`, milliseconds, the
authors' code bit for bit, its §3.1 reading of eqs. 29-30).
"""

from __future__ import annotations

import math

from numba import njit

from .bbr import estimated_bdp_window
from .smooth import SHARP, SMOOTH, idc, sig, sigmoid, step

#: loss at which BBRv2 leaves probing and cuts inflight_hi (eqs. 26, 29): 2 %
LOSS_THRESHOLD = 0.02

# --- the printed reading (seconds, packets/s) ------------------------------------------


@njit(cache=True, inline="always")
def period(tau_min, i, n):
    """Eq. (24): a ProbeBW period lasts min(63 RTprops, 2 s + (i + 1)/N s) for flow ``i`` of
    ``n``, so the flows' periods differ."""
    return min(63.0 * tau_min, 2.0 + (i + 1.0) / n)


@njit(cache=True, inline="always")
def pacing_rate(x_btl, t_pbw, tau_min, m_dwn, m_crs):
    """Eq. (25): a gain of 5/4 while probing (after the period's first RTprop, outside the
    down and cruise modes), 3/4 while down; in cruise BBRv2 paces at x_btl (§5.2.1)."""
    probing = step(t_pbw - tau_min) * (1.0 - m_dwn) * (1.0 - m_crs)
    return x_btl * (1.0 + 0.25 * probing - 0.25 * m_dwn)


@njit(cache=True, inline="always")
def probe_bw_window(w_bar, w_hi, w_lo, m_crs):
    """Eq. (31): ProbeBW's window, twice the estimated BDP bounded by inflight_hi outside
    cruise and by inflight_lo in it."""
    bound = (1.0 - m_crs) * w_hi + m_crs * w_lo
    return min(2.0 * w_bar, bound)


@njit(cache=True, inline="always")
def probe_rtt_window(w_bar):
    """Eq. (32): BBRv2's ProbeRTT window, half the estimated BDP."""
    return w_bar / 2.0


@njit(cache=True, inline="always")
def drain_target(w_bar, w_hi):
    """w⁻ of eqs. (26) and (30): the inflight to drain to, min(w̄, 0.85 inflight_hi)."""
    return min(w_bar, 0.85 * w_hi)


@njit(cache=True, inline="always")
def modes_update(m_dwn, m_crs, t_pbw, tau_min, v, w_bar, w_minus, p_ack):
    """Eqs. (26)-(27) as update rules: down mode starts after the period's first RTprop
    when inflight reaches 5/4 of the estimated BDP or loss reaches 2 %; it ends, and
    cruising begins, once inflight has drained to w⁻. Returns ``(m_dwn, m_crs)``; modes
    stay in {0, 1}."""
    if m_dwn < 0.5 and m_crs < 0.5 and t_pbw >= tau_min and (
            v >= 1.25 * w_bar or p_ack >= LOSS_THRESHOLD):
        m_dwn = 1.0
    elif m_dwn > 0.5 and v <= w_minus:
        m_dwn = 0.0
        m_crs = 1.0
    return m_dwn, m_crs


@njit(cache=True, inline="always")
def bottleneck_update(x_btl, x_max, x_max_prev, m_dwn):
    """Eq. (28) as an update rule: while down, x_btl is the larger of this period's and the
    previous period's maximum delivery rate (the previous one's value at its end)."""
    if m_dwn > 0.5:
        return max(x_max, x_max_prev)
    return x_btl


@njit(cache=True, inline="always")
def inflight_hi_derivative(w_hi, v, t_pbw, tau_min, m_crs, p_ack, k_win):
    """Eq. (29): inflight_hi grows while it binds (σ of v - inflight_hi, sharpness
    ``k_win`` per packet) outside cruise, exponentially in the period's RTprops (capped at
    2^60), and falls by 0.3 per RTprop while loss is at least 2 %."""
    grow = (1.0 - m_crs) * step(t_pbw - tau_min) * sigmoid(
        v - w_hi, k_win) * 2.0 ** min(t_pbw / tau_min, 60.0)
    cut = step(p_ack - LOSS_THRESHOLD) * 0.3 / tau_min * w_hi
    return grow - cut


@njit(cache=True, inline="always")
def inflight_lo_derivative(w_lo, w_minus, m_crs, p_ack, tau_min):
    """Eq. (30): outside cruise inflight_lo follows w⁻; in cruise it falls by 0.3 per
    RTprop while the path sees any loss."""
    lossy = 1.0 if p_ack > 0.0 else 0.0
    return (1.0 - m_crs) * (w_minus - w_lo) - m_crs * lossy * 0.3 * w_lo / tau_min


# --- the published reading (milliseconds, packets/ms) ----------------------------------


@njit(cache=True, inline="always")
def period_ms(rtprop, i, n):
    """Eq. (24) as the code takes it: min(2 s + i/N s, 63 RTprops), in ms."""
    return min(2000.0 + i / n * 1000.0, 63.0 * rtprop)


@njit(cache=True, inline="always")
def probe_bw_window_published(bdp, wlo, whi, crs):
    """Eq. (31) as the code takes it: min(2 ceil(BDP), inflight_lo, inflight_hi), with
    inflight_hi at 0.85 of itself in cruise."""
    return min(estimated_bdp_window(bdp), min(wlo, (1.0 - crs * 0.15) * whi))


@njit(cache=True, inline="always")
def probe_rtt_window_published(bdp):
    """Eq. (32) as the code takes it: half the estimated BDP."""
    return bdp / 2.0


@njit(cache=True, inline="always")
def bottleneck_step(xbtl, xmax_period_ago, xmax, mdwn, m_val):
    """Eq. (28) as the code takes it, in ProbeBW only: while down (m_dwn above 0.1) x_btl
    jumps to the larger of the current maximum and the one a period ago."""
    sample = max(xmax_period_ago, xmax)
    return xbtl + (1.0 - m_val) * idc(mdwn - 0.1) * (sample - xbtl)


@njit(cache=True, inline="always")
def inflight_cruise_derivative(dv_pbw, crs, drain, v):
    """Eq. (19) in BBRv2's cruise, as the code takes it: inflight relaxes at 1/ms to the
    drain target instead of integrating sending minus delivery."""
    return (1.0 - crs) * dv_pbw + crs * (drain - v)


@njit(cache=True, inline="always")
def down_mode_change(mdwn, crs, t_net, rtprop, v, bdp, pc_lb, drain):
    """Eq. (26) as the code takes it, the change of the down mode this step: it starts
    outside cruise after one RTprop when inflight exceeds 499/400 BDP or loss reaches 2 %,
    and ends when inflight falls to the drain target or after 10 RTprops."""
    return ((1.0 - crs) * idc(t_net - rtprop)
            * min(idc(v - 499.0 / 400.0 * bdp) + idc(pc_lb - LOSS_THRESHOLD), 1.0)
            * (1.0 - mdwn)
            - mdwn * min(idc(drain - v) + idc(t_net - 10.0 * rtprop), 1.0))


@njit(cache=True, inline="always")
def pulses_published(crs, t_net, rtprop, mdwn):
    """Eq. (25) as the code takes it: the probing pulse (1/4 outside cruise and down mode,
    after one RTprop, sharp σ) and the draining pulse (1/4 while down)."""
    ph0 = (1.0 - crs) * sig(t_net - rtprop, SHARP) * (1.0 - mdwn) * 0.25
    ph1 = mdwn * 0.25
    return ph0, ph1


@njit(cache=True, inline="always")
def inflight_hi_step(whi, crs, t_net, rtprop, v, pc_lb, dd, bdp, h):
    """Eq. (29) as the code integrates it (its §3.1 reading): outside cruise inflight_hi
    grows while it binds (σ of sharpness 5) as 2^(t/RTprop) and falls by 0.3/RTT per ms
    while the loss signal is at least 2 %, never below 1.15 estimated BDPs."""
    grow = (1.0 - crs) * idc(t_net - rtprop) * sig(v - whi, SMOOTH)
    if grow != 0.0:  # 0 x 2^(t/RTprop) is 0: skip the pow in cruise
        grow = grow * 2.0 ** (t_net / rtprop)
    dwhi = grow - (1.0 - crs) * idc(pc_lb - LOSS_THRESHOLD) * 0.3 / dd * whi
    return max(whi + h * dwhi, 1.15 * bdp)


@njit(cache=True, inline="always")
def inflight_lo_step(wlo, whi, mcrs, crs, pc_lb, dd, h):
    """Eq. (30) as the code integrates it: outside cruise inflight_lo equals inflight_hi
    (``whi``, this step's); in cruise it falls by -ln(0.9)/RTT per ms under 2 % loss."""
    dwlo = ((1.0 - mcrs) * (whi - wlo) / h
            - crs * idc(pc_lb - LOSS_THRESHOLD) * -math.log(0.9) / dd * wlo)
    return wlo + h * dwlo


@njit(cache=True, inline="always")
def cruise_step(mcrs, crs, dmdwn, t_net, t_pbw, h):
    """Eq. (27) as the code integrates it: cruising starts when down mode has just ended
    and stops when a new period starts."""
    dmcrs = (idc(-dmdwn - 0.1) * (1.0 - crs) - idc(t_net - t_pbw) * crs) / h
    return mcrs + h * dmcrs
