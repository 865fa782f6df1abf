"""The building blocks of the ledger's parameter contracts: the parameters several notebooks
share (type, range, meaning; never a default, which is the notebook's), the helpers that make
an entry's spec, the rules several entries share, and what a shared parameter name means.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.params import Param, Spec, at_most, bdp_packets_at_least, holds, ordered
from ...core.quantities import MODEL_CAPACITY_BPS, MODEL_RTT_S

OUT_DIR = Param("out_dir", str, help="where to write <id>.svg and <id>.csv; empty: nowhere")

#: what a parameter means where its declaration says nothing (:func:`meaning`): names the
#: figures share keep one meaning; units are in the names
MEANINGS = {
    "buffer_bdp": "bottleneck buffer, BDP", "buffers_bdp": "bottleneck buffers, BDP",
    "buffer_min_bdp": "smallest buffer on the curve, BDP",
    "buffer_max_bdp": "largest buffer on the curve, BDP",
    "capacity_mbps": "bottleneck capacity, Mbit/s", "capacities_mbps": "bottleneck "
    "capacities, Mbit/s (one panel each)", "capacity_pps": "bottleneck capacity C, packets/s",
    "d_s": "propagation delay d, s", "d_grid": "propagation delays of the eigenvalue grid, s",
    "n_grid": "flow counts of the eigenvalue grid", "n_flows": "flows sharing the bottleneck",
    "n_points": "buffer sizes on the curve", "rtts_ms": "base RTTs, ms (one panel each)",
    "rtt_min_ms": "shortest base RTT of the senders, ms",
    "rtt_max_ms": "longest base RTT of the senders, ms",
    "duration_s": "simulated time per run, s", "warmup_s": "discarded start of each run, s",
    "step_us": "integration step, us", "flow_counts": "flow counts offered",
    "fluid_buffers_bdp": "buffers at which the fluid model is run, BDP",
    "fluid_capacity_mbps": "capacity of the fluid-model runs, Mbit/s",
    "fluid_duration_s": "simulated time per fluid run, s",
    "fluid_flows": "flows in the fluid model's equilibrium search",
    "fluid_rtts_ms": "base RTTs of the fluid-model runs, ms",
    "fluid_step_us": "integration step of the fluid runs, us",
    "group_rtts_ms": "base RTT of each group of senders, ms",
    "group_size": "senders per RTT group",
    "min_period_s": "shortest period the search considers, s",
    "max_period_s": "longest period the search considers, s",
    "remedy_capacities_mbps": "capacities of the de-synchronised ProbeRTT runs, Mbit/s",
    "remedy_rtt_ms": "base RTT of the de-synchronised ProbeRTT runs, ms",
    "ten_warmup_s": "discarded start of the ten-sender runs, s",
}


def meaning(p: Param) -> str:
    """What parameter ``p`` means, for a reader: its own help, else :data:`MEANINGS`."""
    return p.help or MEANINGS.get(p.name, "")


def _p(name: str, kind: type, **kw: Any) -> Param:
    """A parameter's type, range and meaning; its default is the notebook's
    (:func:`notebook_defaults`)."""
    return Param(name, kind, **kw)


# the closed form's plausible ranges: 10 kbit/s to 100 Gbit/s, 0.1 ms to 10 s (the same as
# `coexist model share`'s, :data:`coexist.core.quantities.MODEL_CAPACITY_BPS` and MODEL_RTT_S)
CAPACITY = _p("capacity_mbps", float, low=MODEL_CAPACITY_BPS[0] / 1e6,
              high=MODEL_CAPACITY_BPS[1] / 1e6, help="bottleneck capacity, Mbit/s")
RTT = _p("rtt_ms", float, low=MODEL_RTT_S[0] * 1e3, high=MODEL_RTT_S[1] * 1e3,
         help="base round-trip time, ms")
BUF_MIN = _p("buffer_min_bdp", float, low=1.0, high=1000.0, low_open=True,
             help="smallest buffer, BDP (the model needs more than 1 BDP)")
BUF_MAX = _p("buffer_max_bdp", float, low=1.0, high=1000.0, low_open=True,
             help="largest buffer, BDP")
POINTS = _p("n_points", int, low=2, high=5000, help="buffer sizes on the curve")
DURATION = _p("duration_s", float, low=1.0, high=86_400.0,
              help="competition time d of Ware et al.'s eq. (4), s")
PACKET = _p("packet_bytes", int, low=64, high=65_535, help="packet size for Ware's q")
CURVE = (BUF_MIN, BUF_MAX, POINTS)
CURVE_RULES = (ordered("buffer_min_bdp", "buffer_max_bdp"),)


def _spec(*params: Param, rules: tuple = ()) -> Spec:
    return Spec(tuple(params) + (OUT_DIR,), tuple(rules))


# the fluid model's trace setting (Scherrer §4.2): 100 Mbit/s, RTT 2 x (10 + 5.6) ms, 1 BDP
FLUID_CAPACITY = _p("capacity_mbps", float, low=MODEL_CAPACITY_BPS[0] / 1e6, high=10_000.0,
                    help="bottleneck capacity, Mbit/s")
TRACE_RTT = _p("rtt_ms", float, low=0.1, high=1000.0, help="base RTT, ms")
TRACE_BUFFER = _p("buffer_bdp", float, low=0.01, high=100.0, help="buffer, BDP")


def _trace_spec(min_duration_s: float, *extra: Param,
                rules: tuple = ()) -> Spec:
    """Parameters of a notebook run in the fluid model's trace setting."""
    return _spec(FLUID_CAPACITY, TRACE_RTT, TRACE_BUFFER,
                 _p("duration_s", float, low=min_duration_s, high=600.0), *extra,
                 rules=(*rules, bdp_packets_at_least("capacity_mbps", "rtt_ms")))


def _metrics_spec(*extra: Param) -> Spec:
    """Parameters of the fluid model's aggregate-metrics figures (Scherrer Figs. 6-10, 13-17)."""
    return _spec(FLUID_CAPACITY,
                 _p("rtt_min_ms", float, low=0.1, high=1000.0),
                 _p("rtt_max_ms", float, low=0.1, high=1000.0),
                 _p("n_flows", int, low=2, high=100),
                 _p("buffers_bdp", list, low=0.05,
                    high=100.0),
                 _p("duration_s", float, low=0.5, high=600.0),
                 _p("warmup_s", float, low=0.0, high=600.0), *extra,
                 rules=(ordered("warmup_s", "duration_s"),
                        at_most("rtt_min_ms", "rtt_max_ms")))


def _fluid_runs(buffers: bool = False, prefix: str = "fluid_",
                longest_s: float = 600.0) -> tuple[Param, ...]:
    """Parameters of a figure's fluid-model runs: their length (up to ``longest_s``),
    warm-up and step (and, with ``buffers``, the buffers they run at). Beside measurements
    they carry the prefix ``fluid_``; where the fluid model is the figure's subject (the
    equilibrium searches, every mix one run) they have none."""
    buffers = () if not buffers else (
        _p(f"{prefix}buffers_bdp", list, low=0.05, high=1000.0,
           help="buffers at which the fluid model is run, BDP"),)
    return (*buffers,
            _p(f"{prefix}duration_s", float, low=2.0, high=longest_s,
               help="simulated time per fluid run, s" + (
                   " (the page runs each twice as long too)" if longest_s > 600.0 else "")),
            _p(f"{prefix}warmup_s", float, low=0.0, high=longest_s,
               help="discarded start of each fluid run, s"),
            _p("step_us", float, low=1.0, high=200.0, help="integration step, us"))


#: the longest fluid-model run of the pages that score the model against the two-flow
#: measurements (M-F1, M-F3, M-F11, M-F12, S-Options), s: they run it as long as the
#: testbed's longest runs (1,200 s) and check each run against one twice as long, so a
#: reader's length may reach half an hour
TWO_FLOW_LONGEST_S = 1800.0

#: numerics of the fluid-model equilibrium searches, every mix one run: their notebooks run
#: them as long as the measured runs beside them (120 s, averaged after 30 s, the span S-Step
#: checks), so F-Exp2, M-F11, F-NE and WhatIf share their runs; M-F10's three RTT groups run
#: 60 s after 20 s, several ProbeRTT cycles (10 s each) for the shares to settle
NE_NUMERICS = _fluid_runs(prefix="")
FLUID_RULE = ordered("fluid_warmup_s", "fluid_duration_s")


#: the period search needs two bins per shortest period and a longest period that fits twice
#: in the fluid run's part after the warm-up (P-F1-2, P-F3)
PERIOD_RULES = (
    holds("min_period_s >= 2 bin_s", ("min_period_s", "bin_s"), lambda lo, b: lo >= 2 * b),
    # the fluid run's series is its whole bins after the warm-up
    holds("min_period_s < half the fluid run's whole bins after warmup_s",
          ("min_period_s", "fluid_duration_s", "warmup_s", "bin_s"),
          lambda lo, d, w, b: lo < math.floor((d - w) / b + 1e-9) * b / 2),
)
#: how the fluctuation pages read a run: RTTs, goodput bins, warm-up, the period search
#: range and what counts as a synchronised ProbeRTT entry (P-F1-2, P-F3)
FLUCTUATION_READING = (
    _p("rtts_ms", list, low=0.1, high=1000.0),
    _p("bin_s", float, low=0.1, high=10.0, help="goodput bin, s"),
    _p("warmup_s", float, low=0.0, high=600.0),
    _p("min_period_s", float, low=0.2, high=600.0),
    _p("max_period_s", float, low=0.5, high=600.0),
    _p("sync_flows", int, low=1, high=100,
       help="BBR flows entering ProbeRTT within 1 s that count as synchronised"),
)
