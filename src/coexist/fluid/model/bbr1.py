"""BBRv1 in the fluid model (Scherrer et al. §3.3, eqs. 20-23): the bottleneck estimate,
the ProbeBW pulses and the window, beside the shared core of :mod:`.bbr`.

As there, each equation is one function in each reading: ``*_update`` and the unsuffixed
forms for the printed reading (:mod:`.solve`, seconds), ``*_published`` and ``*_step`` for
the published one (:mod:`.published`, milliseconds, the authors' code bit for bit).
"""

from __future__ import annotations

from numba import njit

from .bbr import estimated_bdp_window
from .smooth import SHARP, SMOOTH, sig, sig_both, step

#: ProbeRTT's window, packets (eq. 23; Linux's four-packet cwnd in ProbeRTT)
PROBE_RTT_WINDOW = 4.0
#: a ProbeBW period, in RTprops (eq. 20: eight phases of one RTprop)
PERIOD_RTPROPS = 8.0

# --- the printed reading (seconds, packets/s) ------------------------------------------


@njit(cache=True, inline="always")
def pacing_rate(x_btl, t_pbw, tau_min, phi):
    """Eqs. (21)-(22): the pacing rate, x_btl with a gain of 5/4 in the period's phase
    ``phi`` (the flow's index mod 6) and 3/4 in the phase after it, each phase one RTprop
    long (σ at K -> ∞: the phases switch sharply)."""
    in_up = step(t_pbw - phi * tau_min) * step((phi + 1) * tau_min - t_pbw - 1e-12)
    in_down = step(t_pbw - (phi + 1) * tau_min) * step((phi + 2) * tau_min - t_pbw - 1e-12)
    return x_btl * (1.0 + 0.25 * in_up - 0.25 * in_down)


@njit(cache=True, inline="always")
def probe_bw_window(w_bar):
    """Eq. (23): ProbeBW's window, twice the estimated BDP w̄ = x_btl τmin."""
    return 2.0 * w_bar


@njit(cache=True, inline="always")
def period(tau_min):
    """Eq. (20)'s period: :data:`PERIOD_RTPROPS` RTprops."""
    return PERIOD_RTPROPS * tau_min


@njit(cache=True, inline="always")
def bottleneck_update(x_btl, x_max, t_pbw, t_period):
    """Eq. (20) as an update rule: x_btl adopts the period's maximum delivery rate in the
    last 10 ms of the period."""
    if t_pbw >= t_period - 0.01:
        return x_max
    return x_btl


# --- the published reading (milliseconds, packets/ms) ----------------------------------


@njit(cache=True, inline="always")
def period_ms(rtprop):
    """Eq. (20)'s period as the code takes it: :data:`PERIOD_RTPROPS` RTprops, in ms."""
    return PERIOD_RTPROPS * rtprop


@njit(cache=True, inline="always")
def probe_bw_window_published(bdp):
    """Eq. (23) as the code takes it: twice the estimated BDP in whole packets."""
    return estimated_bdp_window(bdp)


@njit(cache=True, inline="always")
def bottleneck_step(xbtl, xmax, t_net, t_pbw, m_val, h):
    """Eq. (20) as the code integrates it, in ProbeBW only: x_btl' = σ(t - T + 10 ms)
    (x_max - x_btl), a sharp relaxation at 1/ms to the period's maximum over its last
    10 ms."""
    return xbtl + h * (1.0 - m_val) * (sig(t_net - t_pbw + 10.0, SHARP) * (xmax - xbtl))


@njit(cache=True, inline="always")
def pulses_published(t_net, rtprop, phi):
    """Eqs. (21)-(22) as the code takes them: the probing pulse (1/4 in phase ``phi``) and
    the draining pulse (1/4 in the phase after), each a product of two σ of sharpness 5.

    The probing pulse's end and the draining pulse's start are one σ seen from both sides,
    so one exponential gives both (:func:`.smooth.sig_both`); the draining pulse is exactly
    0 while it has not begun, and its second σ is then not computed (same bits)."""
    s_end, s_next = sig_both((phi + 1) * rtprop - t_net, SMOOTH)
    ph0 = 0.25 * sig(t_net - phi * rtprop, SMOOTH) * s_end
    ph1 = 0.0
    if s_next != 0.0:
        ph1 = 0.25 * s_next * sig((phi + 2) * rtprop - t_net, SMOOTH)
    return ph0, ph1
