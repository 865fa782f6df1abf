"""BBR's shared core in the fluid model (Scherrer et al. §3.2, eqs. 9-19): RTprop, the
ProbeRTT mode and its timer, the rate and window in ProbeRTT and ProbeBW, the ProbeBW
period, the delivery rate and its maximum, and the inflight volume.

Each equation is one function, in each of the two readings the model has:

- the **printed reading** (:mod:`.solve`'s kernel, seconds and packets/s): the equations as
  printed, the discrete ones read as update rules (``*_update``), as :mod:`.solve`'s
  documentation states and argues;
- the **published reading** (:mod:`.published`'s kernel, milliseconds and packets/ms): the
  equations as the authors' code integrates them, one explicit Euler step each
  (``*_step``), bit for bit.

The kernels call these functions for every BBR flow at every step; Numba inlines them
(``inline="always"``), so the kernels compute what they computed when the equations were
written out in them, with the same bits (the reference tests prove it for the published
reading). BBRv1's own equations are in :mod:`.bbr1`, BBRv2's in :mod:`.bbr2`. The NumPy
oracle (:mod:`.oracle`) writes the printed reading again on its own, so that it checks
these functions rather than repeats them.

Numba's on-disk cache of a kernel does not notice a change in a module it inlines;
:mod:`.numba_cache` removes the kernels' cache files when this module, :mod:`.bbr1`,
:mod:`.bbr2` or :mod:`.smooth` has changed since they were compiled.
"""

from __future__ import annotations

import math

from numba import njit

from .smooth import SHARP, gamma, idc, round_half_even, sig

# --- the printed reading (seconds, packets/s) ------------------------------------------


@njit(cache=True, inline="always")
def rtprop_update(tau_min, rtt):
    """Eq. (9) as an update rule: RTprop τmin follows an RTT sample below it and ignores one
    above, τmin -= Γ(τmin - τ) with Γ at K -> ∞ (the ReLU). A finite-K Γ would leak its
    negative tail every step and drag τmin up towards the current RTT."""
    return tau_min - max(tau_min - rtt, 0.0)


@njit(cache=True, inline="always")
def probe_rtt_update(m_prt, t_prt, hold, prt_round, tau_min, rtt, h, expiry):
    """Eqs. (11)-(13) as update rules: the ProbeRTT timer counts up by ``h``; when it
    reaches the mode's period (10 s in ProbeBW, 200 ms in ProbeRTT) the mode flips and the
    timer restarts. Returns ``(m_prt, t_prt, hold, prt_round, tau_min)``.

    With ``expiry`` (Linux's RTprop filter, :mod:`.solve`'s first extension), entering
    ProbeRTT sets τmin to the RTT seen then; the 200 ms hold starts once what was in
    flight at entry is acknowledged (``hold``, one RTT), and lasts max(200 ms, the RTT seen
    then) (``prt_round``).

    Eq. (13)'s last term, a new RTprop sample restarting the timer, is the ``elif``
    branch; the kernel applies eq. (9) earlier in the same step, so τmin is at most the
    sample here and the branch never fires: in this reading ProbeRTT comes every 10 s
    whatever the samples. Without ``expiry`` no sample can fall below τmin anyway (it
    starts at the propagation delay and queueing only adds to the RTT); with it, a sample
    below the larger RTprop taken at entry would restart the timer in Linux and does not
    here. The NumPy oracle takes the same order. The published reading reads the term its
    own way: at the timer's expiry it skips ProbeRTT if RTprop has fallen within the
    interval (:func:`rtprop_stale`)."""
    period = 0.2 if m_prt > 0.5 else 10.0
    if expiry and m_prt > 0.5:  # Linux: max(200 ms, 1 round) once drained
        period = max(0.2, prt_round)
    if expiry and m_prt > 0.5 and hold > 0.0:
        hold -= h  # Linux counts the 200 ms once what was in flight is out
        if hold <= 0.0:
            prt_round = rtt
    else:
        t_prt += h
    if t_prt >= period:
        m_prt = 1.0 - m_prt
        t_prt = 0.0
        if expiry and m_prt > 0.5:  # Linux: an expired filter takes the
            tau_min = rtt           # next sample, even a larger one
            hold = rtt  # what was in flight at entry is acked one RTT on
    elif m_prt < 0.5 and rtt < tau_min - 1e-12:
        t_prt = 0.0  # a new RTprop sample restarts the ProbeBW timer
    return m_prt, t_prt, hold, prt_round, tau_min


@njit(cache=True, inline="always")
def probe_bw_rate(w_pbw, tau, x_pcg):
    """Eq. (15): in ProbeBW the rate is the window's rate w/τ capped by the pacing rate."""
    return min(w_pbw / tau, x_pcg)


@njit(cache=True, inline="always")
def rate(m_prt, w_prt, x_pbw, tau):
    """Eq. (14), with the printed minus sign of its second term read as a plus (it would
    make rates negative): ProbeRTT's window rate while m_prt = 1, ProbeBW's rate else."""
    return m_prt * w_prt / tau + (1.0 - m_prt) * x_pbw


@njit(cache=True, inline="always")
def window(m_prt, w_prt, w_pbw):
    """The window that goes with eq. (14)'s rate: ProbeRTT's while m_prt = 1, ProbeBW's
    else."""
    return m_prt * w_prt + (1.0 - m_prt) * w_pbw


@njit(cache=True, inline="always")
def delivery_rate(x_ack, y_then, q_then, capacity):
    """Eq. (17): the agent's part of what the link delivered when its ACKed packets left
    the queue, x(t - d) / y(t - d_b) times C with a queue, else times min(y, C) (the link
    cannot deliver more than its capacity even as the queue starts to build)."""
    if y_then > 0.0:
        deliv = capacity if q_then > 0.0 else min(y_then, capacity)
        return x_ack / y_then * deliv
    return 0.0


@njit(cache=True, inline="always")
def period_restart(t_pbw, t_period):
    """Eq. (16) as an update rule: the ProbeBW period's clock restarts once it has reached
    the period. Returns ``(t_pbw, restarted)``."""
    if t_pbw >= t_period:
        return 0.0, True
    return t_pbw, False


@njit(cache=True, inline="always")
def max_filter_update(x_max, x_dlv, t_pbw):
    """Eq. (18) as an update rule: the maximum delivery rate of the period, reset in the
    period's first 10 ms, x_max += Γ(x_dlv - x_max) with Γ at K -> ∞. It tracks the
    *delivery* rate (the paper's "maximum delivery rate"), not the sending rate."""
    if t_pbw < 0.01:
        return 0.0
    return x_max + max(x_dlv - x_max, 0.0)


@njit(cache=True, inline="always")
def inflight_update(v, x, x_dlv, h):
    """Eq. (19): inflight grows with the sending rate and falls with the delivery rate,
    v' = x - x_dlv, never below zero."""
    v = v + h * (x - x_dlv)
    if v < 0.0:
        v = 0.0
    return v


# --- the published reading (milliseconds, packets/ms) ----------------------------------


@njit(cache=True, inline="always")
def rtprop_step(tmin, tau_lb, h):
    """Eq. (9) as the code integrates it: τmin' = -Γ(τmin - τ(t - D)) with Γ(x) = x σ(x),
    σ's sharpness 500 (a relaxation at about 1/ms towards a lower RTT sample)."""
    return tmin + h * (-gamma(tmin - tau_lb))


@njit(cache=True, inline="always")
def probe_rtt_expired(tprt_lb):
    """Eq. (11)'s switch σ(t^prt - T^prt) as the code reads it: the ProbeRTT timer, which
    counts down, has run out one RTT back (1[-t_prt >= 0])."""
    return idc(-tprt_lb)


@njit(cache=True, inline="always")
def rtprop_stale(tmin, tmin_window_ago):
    """Eq. (13)'s restart condition as the code reads it: RTprop has not fallen over the
    last ProbeRTT interval (1[τmin(t) >= τmin(t - 10 s)]), so ProbeRTT is due."""
    return idc(tmin - tmin_window_ago)


@njit(cache=True, inline="always")
def probe_rtt_mode_step(mprt, m_tau, expired, stale, h):
    """Eq. (11) as the code integrates it: once the timer has expired, the mode relaxes at
    1/ms to 1 if RTprop is stale and the mode one RTT back was ProbeBW, else to 0."""
    return mprt + h * (expired * (stale * (1.0 - m_tau) - mprt))


@njit(cache=True, inline="always")
def probe_rtt_timer_step(tprt, m_tau, expired, stale, prt, h):
    """Eqs. (12)-(13) as the code integrates them: the timer counts down 1 ms per ms; once
    expired it relaxes at 1/ms to the next mode's period T^prt (eq. 12): 200 ms when
    ProbeRTT starts, else the interval ``prt`` (10 s as published)."""
    return tprt + h * (expired * (prt - (prt - 200.0) * stale * (1.0 - m_tau) - tprt) - 1.0)


@njit(cache=True, inline="always")
def mode(mprt):
    """The ProbeRTT mode the rest of the equations read: the relaxed value of Eq. (11),
    rounded (0 in ProbeBW, 1 in ProbeRTT)."""
    return round_half_even(mprt)


@njit(cache=True, inline="always")
def window_published(m_val, w_pbw, w_prt):
    """Eq. (23) / (31)'s window, ProbeBW's or ProbeRTT's by the mode."""
    return (1.0 - m_val) * w_pbw + m_val * w_prt


@njit(cache=True, inline="always")
def estimated_bdp_window(bdp):
    """Twice the estimated BDP in whole packets, 2 ceil(x_btl τmin): ProbeBW's window in
    both versions as the code takes it (Eq. (23) and Eq. (31))."""
    return 2.0 * math.ceil(bdp)


@njit(cache=True, inline="always")
def delivery_rate_published(x_lb, y_then, q_then, capacity):
    """Eq. (17) as the code reads it: x(t - τ) C / y(t - τ + d0) when the link was saturated
    or queued, else the rate sent, x(t - τ)."""
    if y_then >= capacity or q_then > 0.0:
        return x_lb / y_then * capacity
    return x_lb


@njit(cache=True, inline="always")
def max_filter_step(xmax, xdel, t_net, m_val, h):
    """Eq. (18) as the code integrates it, in ProbeBW only: x_max' = 5 Γ(x_dlv - x_max)
    - σ(10 - t) x_max, a max filter relaxing at 5/ms that the period's first 10 ms reset."""
    return xmax + h * (1.0 - m_val) * (
        5.0 * gamma(xdel - xmax) - sig(10.0 - t_net, SHARP) * xmax)


@njit(cache=True, inline="always")
def inflight_step(v, dv_pbw, w, m_val, h):
    """Eq. (19) as the code integrates it: in ProbeBW v' is the version's own (BBRv1:
    x - x_dlv; BBRv2 in cruise: towards its drain target), in ProbeRTT v relaxes at 1/ms to
    the window; never below zero."""
    dv = (1.0 - m_val) * dv_pbw + m_val * (w - v)
    return max(v + h * dv, 0.0)


@njit(cache=True, inline="always")
def rate_published(m_val, w, tau_lb, xpcg, v, tau):
    """Eqs. (14)-(15) as the code reads them: in ProbeBW the window's rate w / τ(t - D)
    capped by the pacing rate, in ProbeRTT the inflight's rate v / τ."""
    x_pbw = min(w / tau_lb, xpcg)
    return (1.0 - m_val) * x_pbw + m_val * (v / tau)


@njit(cache=True, inline="always")
def pacing_rate(xbtl, ph0, ph1):
    """Eqs. (22) / (25): the pacing rate, the bottleneck estimate with the probing pulse
    ``ph0`` added and the draining pulse ``ph1`` taken away."""
    return xbtl * (1.0 + ph0 - ph1)


@njit(cache=True, inline="always")
def period_start_step(tstr, t, t_pbw):
    """Eq. (16) as the code integrates it: the period start jumps to now once a period
    ``t_pbw`` has passed since it."""
    return tstr + idc(t - tstr - t_pbw) * (t - tstr)

