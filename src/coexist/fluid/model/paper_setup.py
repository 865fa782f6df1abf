"""The paper's set-up of a run, as the authors' code draws it: the flows of one of its
configurations (CCAs, source latencies, RTTs), BBRv2's period phases from the seeded
generator, the buffer in the paper's unit and BBRv2's initial inflight_hi from it, and the
published reading's start for a dumbbell (:func:`start`). Apart from the kernel
(:mod:`.published`), which integrates whatever start it is given.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from ...core.params import invalid


def paper_flows(ccas: Sequence[str], senders: int, link_latency_ms: float,
                source_latency_ms: tuple[float, float], seed: int = 1
                ) -> tuple[list[str], list[float], list[float], list[float]]:
    """The flows of one of the paper's configurations, drawn as the authors' code does.

    ``ccas`` are the CCAs sharing the link (e.g. ``["cubic", "bbr1"]``), each taken by
    ``senders / len(ccas)`` flows in alphabetical order of the code's names (BBR, BBR2, CUBIC,
    RENO). Each flow's source latency is drawn uniformly from ``source_latency_ms`` with
    Python's Mersenne Twister seeded with ``seed`` (1 in the paper) and rounded to 0.1 ms;
    its RTT is 2 (link latency + source latency). The next ``senders`` draws of the same
    generator place BBRv2's period phases. Returns the CCAs, source latencies (ms), RTTs (ms)
    and phase draws, one per flow.
    """
    names = {"reno": "RENO", "cubic": "CUBIC", "bbr1": "BBR", "bbr2": "BBR2"}
    for c in ccas:
        if c not in names:
            raise invalid("ccas", c, f"one of {', '.join(names)}")
    if not (isinstance(senders, int) and senders >= len(ccas) and senders % len(ccas) == 0):
        raise invalid("senders", senders, f"a positive multiple of {len(ccas)} (one per CCA)")
    lo, hi = source_latency_ms
    if not 0 < lo <= hi:
        raise invalid("source_latency_ms", source_latency_ms, "0 < min <= max (ms)")
    by_name = {v: k for k, v in names.items()}
    per = senders // len(ccas)
    flows = [by_name[nm] for nm in sorted(names[c] for c in ccas) for _ in range(per)]
    rng = random.Random(seed)
    d0 = [float(f"{rng.uniform(lo, hi):.1f}") for _ in range(senders)]
    rtt = [2 * link_latency_ms + 2 * d for d in d0]
    phases = [rng.random() for _ in range(senders)]  # as paper_phases draws them
    return flows, d0, rtt, phases


def paper_phases(n: int, seed: int = 1) -> tuple[float, ...]:
    """BBRv2's period phases for ``n`` flows as the authors' code draws them: the draws of
    the seeded generator that follow the ``n`` source latencies (:func:`paper_flows`)."""
    rng = random.Random(seed)
    for _ in range(n):
        rng.random()  # where paper_flows draws the source latencies
    return tuple(rng.random() for _ in range(n))


def link_units(buffer_pkts: float, capacity_pps: float, link_latency_s: float) -> float:
    """A buffer in the paper's unit, ceil(C x link latency) packets ("BDP of link l")."""
    unit = math.ceil(capacity_pps * link_latency_s - 1e-9)
    if not (unit >= 1 and buffer_pkts > 0):
        raise invalid("link_latency_s", link_latency_s, "> 0 with C x latency >= 1 packet")
    return buffer_pkts / unit


def inflight_hi_factor(buffer_units: float) -> float:
    """BBRv2's initial inflight_hi in initial windows, as the authors' code sets it:
    (1 + max(b - 4, 0)/2) 5/4, with b the buffer in the paper's unit (:func:`link_units`).
    The paper says only that it depends on the buffer."""
    return (1 + 2 * max(buffer_units - 4, 0) / 4) * 5 / 4


def start(ccas: Sequence[str], rtts_s: Sequence[float], buffer_pkts: float,
          capacity_pps: float, seed: int = 1) -> dict:
    """The published reading's start for a dumbbell of ``ccas`` with base RTTs ``rtts_s``
    (half of each before the queue), as :class:`.solve.Config` keywords: each window its
    fair share of its own BDP (the reading's default), BBRv2's initial inflight_hi from the
    buffer in units of the paper's link BDP, the link latency taken as half the shortest RTT
    (:func:`inflight_hi_factor`), and BBRv2's period phases the draws :func:`paper_flows`
    makes for as many flows with ``seed``."""
    kw: dict = {"initial_window": None, "inflight_hi_factor": inflight_hi_factor(
        link_units(buffer_pkts, capacity_pps, min(rtts_s) / 2))}
    if "bbr2" in ccas:
        kw["bbr2_phase"] = paper_phases(len(ccas), seed)
    return kw
