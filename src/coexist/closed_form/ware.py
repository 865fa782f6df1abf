"""Ware et al. (IMC 2019) model of BBR against loss-based flows, as restated by Mishra et al.

Mishra et al. eqs. (2)-(4)::

    BBR_frac  = (1 - p) * (d - Probetime) / d                      (2)
    p         = 1/2 - 1/(2X) - 4N/q                                (3)
    Probetime = (q/c + 0.2 + l) * (d / 10)                         (4)

``p`` is the loss-based flows' aggregate share, ``N`` the number of BBR flows, ``X`` the
buffer in BDP, ``l`` the base RTT and ``d`` the time the flows compete. Mishra et al. call
``q`` "the average queuing delay"; dimensional consistency (``4N/q`` is a count of packets
over a count of packets, ``q/c`` a drain time) and Ware et al.'s own assumption that the
buffer is always full make ``q`` the buffer size in packets and ``c`` the capacity in
packets per second, which is what this module uses.

The model's two weak assumptions (§2.2 of Mishra et al.) are visible in the code: the queue
is the full buffer, and BBR's RTT over-estimate uses that full occupancy rather than
CUBIC's minimum occupancy during ProbeRTT.
"""

from __future__ import annotations

import numpy as np

from ..core.params import ParameterError, check_array

PROBE_RTT_S = 0.2
"""Duration BBR spends in ProbeRTT, in seconds (eq. 4)."""
PROBE_INTERVAL_S = 10.0
"""BBR enters ProbeRTT once every 10 s (eq. 4: d/10 probes in d seconds)."""
PROBE_RTT_PACKETS = 4
"""Packets a BBR flow keeps in flight during ProbeRTT (the 4N of eq. 3)."""


def cubic_fraction(buffer_bdp, n_bbr, queue_packets):
    """Loss-based flows' aggregate share ``p`` (Mishra eq. 3)."""
    x = np.asarray(buffer_bdp, dtype=float)
    return 0.5 - 1.0 / (2.0 * x) - PROBE_RTT_PACKETS * np.asarray(n_bbr) / np.asarray(queue_packets)


def probe_time(queue_packets, capacity_pps, rtt_s, duration_s):
    """Total time BBR spends in ProbeRTT over ``duration_s`` (Mishra eq. 4), in seconds."""
    per_probe = np.asarray(queue_packets) / np.asarray(capacity_pps) + PROBE_RTT_S + rtt_s
    return per_probe * (np.asarray(duration_s) / PROBE_INTERVAL_S)


def bbr_share(
    buffer_bdp,
    *,
    capacity_bps,
    rtt_s,
    n_bbr=1,
    duration_s=120.0,
    packet_bytes=1500,
    outside: str = "raise",
):
    """Aggregate bandwidth fraction of ``n_bbr`` BBR flows (Mishra eq. 2).

    Independent of the number of loss-based flows: Ware et al. predict a fixed BBR share.
    Near 1 BDP with many BBR flows, ``-4N/q`` pushes the formula above 1; it is never
    clipped. ``outside="raise"`` raises :class:`ParameterError` there, ``outside="nan"``
    returns NaN for those points so a caller can show where the baseline has no answer.
    """
    if outside not in ("raise", "nan"):
        raise ParameterError(f"parameter 'outside' = {outside!r}; valid: 'raise' or 'nan'")
    x = check_array("buffer_bdp", buffer_bdp, low=0.0, low_open=True)
    c_bps = check_array("capacity_bps", capacity_bps, low=0.0, low_open=True)
    rtt = check_array("rtt_s", rtt_s, low=0.0, low_open=True)
    n = check_array("n_bbr", n_bbr, low=1, integer=True)
    d = check_array("duration_s", duration_s, low=0.0, low_open=True)
    pkt = check_array("packet_bytes", packet_bytes, low=1.0)
    capacity_pps = c_bps / (8.0 * pkt)
    queue_packets = x * capacity_pps * rtt
    p = cubic_fraction(x, n, queue_packets)
    frac = (1.0 - p) * (d - probe_time(queue_packets, capacity_pps, rtt, d)) / d
    beyond = (frac < 0) | (frac > 1)
    if outside == "nan":
        return np.where(beyond, np.nan, frac)
    if np.any(beyond):
        bad = np.broadcast_to(x, frac.shape)[(frac < 0) | (frac > 1)].flat[0]
        raise ParameterError(
            f"Ware et al.'s eq. (2) leaves [0, 1] at buffer_bdp = {bad!r} for these inputs; "
            "valid: buffers where 4*n_bbr/q and the ProbeRTT time stay small"
        )
    return frac


def per_flow_bbr_bps(buffer_bdp, *, capacity_bps, rtt_s, n_bbr=1, **kwargs):
    """Average throughput of one BBR flow, eq. (2) divided evenly among ``n_bbr`` flows."""
    share = bbr_share(buffer_bdp, capacity_bps=capacity_bps, rtt_s=rtt_s, n_bbr=n_bbr, **kwargs)
    return share * np.asarray(capacity_bps, dtype=float) / np.asarray(n_bbr)
