"""The paper's aggregate metrics from a fluid-model trace (Scherrer et al. §4.3).

Jain fairness of the flows' average rates (§4.3.1), loss rate at the bottleneck (§4.3.2),
average queue as a share of the buffer (§4.3.3), link utilisation (§4.3.4) and jitter
(§4.3.5): the mean RTT difference between consecutive packets. The fluid model has no
packets, so jitter samples each flow's RTT at a virtual packet rate, every ``g N / C``
seconds (g = one packet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...analysis.fairness import jain  # noqa: F401 (re-exported)
from ...core.params import ParameterError, invalid

if TYPE_CHECKING:  # the metrics need no solver (and no Numba) to be imported
    from .solve import Trace


def _after(tr: Trace, warmup_s: float) -> np.ndarray:
    """Samples after the warm-up, which must leave some of the trace."""
    if not 0 <= warmup_s < tr.t[-1]:
        raise invalid("warmup_s", warmup_s, f"0 <= warmup_s < {tr.t[-1]:g} (the trace's length)")
    return tr.t >= warmup_s


def link(tr: Trace, warmup_s: float = 2.0) -> dict:
    """The link's metrics over ``t >= warmup_s``: loss rate (§4.3.2), mean queue as a share
    of the buffer (§4.3.3) and in seconds of queueing, utilisation (§4.3.4)."""
    cfg = tr.config
    late = _after(tr, warmup_s)
    c = cfg.capacity_pps
    y, p, q = tr.arrival_pps[late], tr.loss[late], tr.queue_pkts[late]
    # the link sends C while it has a queue, otherwise what arrives (at most C)
    sent = np.where(q > 0, c, np.minimum(y * (1 - p), c))
    return {"loss_rate": float((y * p).mean() / y.mean()) if y.mean() > 0 else 0.0,
            "queue_share": float(q.mean() / cfg.buffer_pkts),
            "queue_delay_s": float(q.mean() / c),  # the queueing term q/C of eq. (3)
            "utilisation": float(sent.mean() / c)}


def aggregate(tr: Trace, warmup_s: float = 2.0) -> dict:
    """The aggregate metrics over ``t >= warmup_s``, as one record."""
    cfg = tr.config
    late = _after(tr, warmup_s)
    c = cfg.capacity_pps
    n = len(cfg.flows)
    step = n / c  # virtual packet interval: one packet of each flow per N/C seconds
    dt = tr.t[1] - tr.t[0]
    if dt > step + cfg.step_s:  # sampling is rounded to whole integration steps
        raise ParameterError(f"parameter 'sample_s' = {cfg.sample_s!r} is too coarse for "
                             f"jitter; valid: sample_s <= N/C = {step:.3g} s")
    grid = np.arange(tr.t[late][0], tr.t[late][-1], step)
    jitter = np.mean([np.mean(np.abs(np.diff(np.interp(grid, tr.t, tr.rtt_s[:, i]))))
                      for i in range(n)])
    rates = tr.rate_pps[late].mean(axis=0)
    on_link = link(tr, warmup_s)
    return {
        "flows": n, "ccas": ",".join(f.cca for f in cfg.flows), "aqm": cfg.aqm,
        "buffer_pkts": cfg.buffer_pkts, "jain": jain(rates),
        "loss_rate": on_link["loss_rate"], "queue_share": on_link["queue_share"],
        "queue_delay_s": on_link["queue_delay_s"], "utilisation": on_link["utilisation"],
        "jitter_s": float(jitter),
    }


BITS = 8 * 1500  # bits per packet of the traces' rates


def goodput_pps(tr: Trace, i: int) -> np.ndarray:
    """Flow ``i``'s goodput at every sample (packets/s): its sending rate thinned by the loss
    its fluid meets at the queue one forward delay later (eqs. 1-2)."""
    dt = tr.t[1] - tr.t[0]
    idx = np.arange(len(tr.t))
    at_queue = np.minimum(idx + int(round(tr.config.flows[i].d_f / dt)), len(idx) - 1)
    return tr.rate_pps[:, i] * (1 - tr.loss[at_queue])


def per_flow(tr: Trace, warmup_s: float = 2.0) -> pd.DataFrame:
    """Average sending rate and goodput (bit/s) of each flow over ``t >= warmup_s``, and its
    share of the goodput.

    Goodput is the sending rate thinned by the loss the flow's fluid meets when it reaches
    the queue one forward delay later (eqs. 1-2): ``x_i(t) (1 - p(t + d_f,i))``. It equals the
    sending rate whenever nothing is dropped.
    """
    late = _after(tr, warmup_s)
    rates = tr.rate_pps[late].mean(axis=0) * BITS
    good = np.array([goodput_pps(tr, i)[late].mean() * BITS
                     for i in range(len(tr.config.flows))])
    return pd.DataFrame({"flow": np.arange(len(rates)),
                         "cca": [f.cca for f in tr.config.flows],
                         "rtt_s": [f.d_p for f in tr.config.flows],
                         "rate_bps": rates, "goodput_bps": good,
                         "share": good / good.sum() if good.sum() > 0 else np.nan})


def goodput_batches(tr: Trace, warmup_s: float = 2.0, batches: int = 4) -> np.ndarray:
    """Each flow's goodput (bit/s, as in :func:`per_flow`) averaged over ``batches`` equal
    consecutive stretches of ``t >= warmup_s``, shape (batches, flows).

    The batch means of one long run stand in for repeated runs: their spread says how
    precisely the run's average is known (the method of batch means), which a deterministic
    model's single run cannot say otherwise. Their mean is :func:`per_flow`'s goodput.
    """
    if not isinstance(batches, int | np.integer) or not 2 <= batches <= 100:
        raise invalid("batches", batches, "an integer in 2..100")
    late = np.flatnonzero(_after(tr, warmup_s))
    if len(late) < batches:
        raise invalid("batches", batches, f"at most the {len(late)} samples after the warm-up")
    good = np.column_stack([goodput_pps(tr, i)[late] * BITS
                            for i in range(len(tr.config.flows))])
    return np.stack([part.mean(axis=0) for part in np.array_split(good, batches)])


def loss_episodes(tr: Trace, threshold: float = 1e-4) -> pd.DataFrame:
    """The stretches of time in which the bottleneck drops (loss probability p above
    ``threshold``, eq. 4) and what each did to the senders, one row per episode that ended
    before the trace did.

    start_s and duration_s say when it began and how long it lasted; dropped_per_flow is
    the packets it dropped, integral of y p dt (what eq. 2 does not admit), over the number
    of flows; until the next episode begins, window_trough_ratio is the aggregate window's
    minimum over its value when the episode began, and queue_min_share the queue's minimum
    over the buffer.
    A real CUBIC sender that loses packets in one round cuts its window once, to
    beta = 0.7 of it; the ratio shows how far the model's senders cut theirs together.
    """
    if not 0 < threshold < 1:
        raise invalid("threshold", threshold, "0 < threshold < 1 (a loss probability)")
    on = tr.loss > threshold
    starts = np.flatnonzero(on & ~np.concatenate(([False], on[:-1])))
    ends = np.flatnonzero(~on & np.concatenate(([False], on[:-1])))
    dt = np.diff(tr.t, append=tr.t[-1])
    dropped = tr.arrival_pps * tr.loss * dt
    window = tr.window_pkts.sum(axis=1)
    n = len(tr.config.flows)
    rows = []
    for k, s in enumerate(starts):
        after = ends[ends > s]
        if not len(after):
            break  # still dropping when the trace ends
        e = after[0]
        nxt = starts[k + 1] if k + 1 < len(starts) else len(tr.t)
        rows.append({"start_s": float(tr.t[s]), "duration_s": float(tr.t[e] - tr.t[s]),
                     "dropped_per_flow": float(dropped[s:e].sum() / n),
                     "window_trough_ratio": float(window[s:nxt].min() / window[s]),
                     "queue_min_share": float(tr.queue_pkts[s:nxt].min()
                                              / tr.config.buffer_pkts)})
    return pd.DataFrame(rows, columns=["start_s", "duration_s", "dropped_per_flow",
                                       "window_trough_ratio", "queue_min_share"])


def cubic_bbr_regime(tr: Trace, warmup_s: float) -> dict[str, float]:
    """Why BBRv1 keeps or loses its rate beside CUBIC, from a trace with a CUBIC sender
    and, if any, a BBRv1 sender (the first of each), over ``t >= warmup_s``.

    BBRv1's window is twice its estimated BDP, ``2 x_btl τmin`` (eq. 23). With more than
    one BDP queued the RTT τ exceeds ``2 τmin`` and the window, not the pacing rate, sets
    BBR's rate (eq. 15) below its estimate ``x_btl``; the next estimate (eqs. 17-20) is
    then lower, period after period. Only a queue under one BDP lets the estimate grow, and
    only CUBIC cutting its window deep enough drains the queue that far. So:

    - ``queue_below_bdp``: share of the time with less than one BDP queued;
    - ``btl_growth_below_bdp``: share of the estimate's increases (summed) made then
      (NaN if it never grows or there is no BBRv1 sender);
    - ``cubic_low_over_high``: CUBIC's smallest window over its largest. One cut is to
      beta = 0.7 (eq. 41); eqs. (40a-b) cut again for every packet lost, so several lost
      in one overflow compound, where a real CUBIC sender cuts once per round with losses.
    The BDP is the capacity times the shortest base RTT.
    """
    late = _after(tr, warmup_s)
    ccas = [f.cca for f in tr.config.flows]
    if "cubic" not in ccas:
        raise invalid("trace", ",".join(ccas), "a trace with a cubic flow (and maybe bbr1)")
    bdp = tr.config.capacity_pps * min(f.d_p for f in tr.config.flows)
    below = tr.queue_pkts[late] < bdp
    up = np.zeros(0)
    if "bbr1" in ccas:
        up = np.clip(np.diff(tr.bbr["x_btl"][late, ccas.index("bbr1")]), 0.0, None)
    window = tr.window_pkts[late, ccas.index("cubic")]
    return {"queue_below_bdp": float(below.mean()),
            "btl_growth_below_bdp": float(up[below[1:]].sum() / up.sum()) if up.sum() > 0
            else float("nan"),
            "cubic_low_over_high": float(window.min() / window.max())}


def queue_share_between(tr: Trace, start_s: float, end_s: float) -> float:
    """The mean queue over the buffer (§4.3.3) for start_s <= t < end_s."""
    length = tr.t[-1] + (tr.t[1] - tr.t[0])  # the last sample covers one interval
    if not 0 <= start_s < end_s <= length + 1e-9:
        raise invalid("window", (start_s, end_s),
                      f"0 <= start < end <= {length:g} (the trace's length), in s")
    w = (tr.t >= start_s) & (tr.t < end_s)
    return float(tr.queue_pkts[w].mean() / tr.config.buffer_pkts)
