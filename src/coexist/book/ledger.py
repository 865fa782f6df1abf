"""The figure ledger: every executable notebook, its parameter contract and its outputs.

One entry per notebook. Figure notebooks (kind ``figure``) regenerate one paper figure and
write ``<id>.svg`` plus the tidy ``<id>.csv`` they plotted; derivation notebooks carry the
algebra of one model. Both start with a ``parameters`` cell that :func:`check` validates.

Each parameter is declared once: its type, range and meaning here, its default in the
notebook's parameters cell (where papermill and a reader look for it), from which the
ledger reads it (:func:`notebook_defaults`) and checks it against the range.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import sidecars
from ..core.params import (
    Param,
    ParameterError,
    Spec,
    at_most,
    bdp_packets_at_least,
    extreme,
    holds,
    ordered,
    within,
)
from ..core.paths import EXPECTED, NOTEBOOKS, ROOT  # noqa: F401 (re-exported)
from ..core.quantities import MODEL_CAPACITY_BPS, MODEL_RTT_S


@dataclass(frozen=True)
class Entry:
    """One ledger row: which notebook, what it shows, which parameters it accepts."""

    id: str
    notebook: str
    kind: str
    title: str
    spec: Spec
    rtol: float = 1e-6
    atol: float = 1e-9

    @property
    def path(self) -> Path:
        return NOTEBOOKS / self.notebook

    @property
    def campaigns(self) -> tuple[str, ...]:
        """The campaigns whose bundled runs the notebook reads (``*``: every campaign's);
        :func:`coexist.book.figures.save` refuses a figure that read others."""
        return CAMPAIGNS.get(self.id, ())


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


ENTRIES: tuple[Entry, ...] = (
    Entry("derive-ware", "derive_ware.ipynb", "derivation",
          "Ware et al.'s model (Mishra eqs. 2-4)",
          _spec(CAPACITY, RTT, DURATION, PACKET)),
    Entry("derive-two-flow", "derive_two_flow.ipynb", "derivation",
          "The two-flow model (Mishra eqs. 5-20)",
          _spec(_p("buffer_bdp", float, low=1.0, high=1000.0, low_open=True))),
    Entry("derive-multi-flow", "derive_multi_flow.ipynb", "derivation",
          "Multi-flow bounds and the Nash equilibrium (Mishra eqs. 21-25)",
          _spec(_p("n_flows", int, low=2, high=1000),
                _p("buffer_bdp", float, low=1.0, high=1000.0, low_open=True))),
    Entry("derive-fluid-network", "derive_fluid_network.ipynb", "derivation",
          "The network fluid model (Scherrer eqs. 1-8)",
          _spec(_p("capacity_mbps", float, low=0.01, high=10_000.0),
                _p("buffer_pkts", float, low=1.0, high=1e6))),
    Entry("derive-fluid-reno", "derive_fluid_reno.ipynb", "derivation",
          "Reno in the fluid model (Scherrer eq. 39)", _trace_spec(1.0)),
    Entry("derive-fluid-cubic", "derive_fluid_cubic.ipynb", "derivation",
          "CUBIC in the fluid model (Scherrer eqs. 40-41)", _trace_spec(1.0,
              _p("episode_rtts_ms", list, low=0.1,
                 high=1000.0, help="RTTs of the lone-CUBIC runs whose loss episodes are read"),
              _p("episode_buffer_bdp", float, low=0.05, high=100.0,
                 help="buffer of those runs, BDP"),
              _p("episode_duration_s", float, low=2.0, high=600.0,
                 help="simulated time per run, s"),
              _p("episode_warmup_s", float, low=0.0, high=600.0,
                 help="episodes starting earlier are left out, s"),
              rules=(ordered("episode_warmup_s", "episode_duration_s"),))),
    Entry("derive-fluid-bbr-core", "derive_fluid_bbr_core.ipynb", "derivation",
          "The shared BBR skeleton (Scherrer eqs. 9-19)", _trace_spec(10.5)),
    Entry("derive-fluid-bbr1", "derive_fluid_bbr1.ipynb", "derivation",
          "BBRv1 in the fluid model (Scherrer eqs. 20-23)", _trace_spec(1.0)),
    Entry("derive-fluid-bbr2", "derive_fluid_bbr2.ipynb", "derivation",
          "BBRv2 in the fluid model (Scherrer eqs. 24-32)", _trace_spec(10.5)),
    Entry("M-F1", "fig_m_f1.ipynb", "figure",
          "BBR share vs buffer, 1 CUBIC vs 1 BBR: Ware et al. vs Mishra et al.",
          _spec(CAPACITY, RTT, *CURVE, DURATION, PACKET,
                *_fluid_runs(buffers=True, longest_s=TWO_FLOW_LONGEST_S),
                rules=(*CURVE_RULES, FLUID_RULE))),
    Entry("M-F3", "fig_m_f3.ipynb", "figure",
          "Predicted BBR throughput, 1 CUBIC vs 1 BBR, four network settings",
          _spec(_p("capacities_mbps", list, low=CAPACITY.low,
                   high=CAPACITY.high, help="bottleneck capacities, Mbit/s"),
                _p("rtts_ms", list, low=RTT.low, high=RTT.high,
                   help="base RTTs, ms"),
                *CURVE, DURATION, PACKET,
                *_fluid_runs(buffers=True, longest_s=TWO_FLOW_LONGEST_S),
                _p("sweep_capacity_mbps", float, low=1.0, high=1000.0,
                   help="capacity of the published fluid model's RTT sweep, Mbit/s"),
                _p("sweep_rtts_ms", list, low=0.1,
                   high=1000.0, help="RTTs of the RTT sweep, ms"),
                _p("sweep_buffers_bdp", list, low=0.05, high=1000.0,
                   help="buffers of the RTT sweep, BDP"),
                _p("short_duration_s", float, low=2.0, high=600.0,
                   help="simulated time of the sweep's runs as long as the measurements, s"),
                _p("short_warmup_s", float, low=0.0, high=600.0,
                   help="discarded start of the sweep's runs as long as the measurements, s"),
                _p("long_duration_s", float, low=2.0, high=3600.0,
                   help="simulated time of the sweep's long runs, s"),
                _p("long_warmup_s", float, low=0.0, high=3600.0,
                   help="discarded start of the sweep's long runs, s"),
                rules=(*CURVE_RULES, FLUID_RULE, ordered("short_warmup_s", "short_duration_s"),
                       ordered("long_warmup_s", "long_duration_s")))),
    Entry("M-F4", "fig_m_f4.ipynb", "figure",
          "Per-flow throughput vs buffer, N CUBIC vs N BBR: predicted region",
          _spec(_p("capacity_mbps", float, low=CAPACITY.low, high=CAPACITY.high),
                RTT, _p("flows_per_cca", list, item=int, low=1, high=50,
                        help="CUBIC flows = BBR flows in each panel (the fluid model runs "
                             "up to 100 flows)"),
                *CURVE, DURATION, PACKET, *_fluid_runs(buffers=True),
                rules=(*CURVE_RULES, FLUID_RULE))),
    Entry("M-F5", "fig_m_f5.ipynb", "figure",
          "Per-flow BBR throughput vs number of BBR flows: diminishing returns",
          _spec(_p("capacity_mbps", float, low=CAPACITY.low, high=CAPACITY.high),
                _p("total_flows", list, item=int, low=2, high=100,
                   help="flows in each panel (the fluid model runs up to 100)"),
                _p("buffers_bdp", list, low=1.0, high=1000.0, low_open=True),
                _p("rtt_ms", float, low=RTT.low, high=RTT.high,
                   help="base RTT of the measurements and the fluid model (the closed form "
                        "does not depend on it)"),
                *_fluid_runs(), rules=(FLUID_RULE,))),
    Entry("M-F6", "fig_m_f6.ipynb", "figure",
          "The equilibrium argument: points A, B and C against the fair share",
          _spec(_p("capacity_mbps", float, low=CAPACITY.low, high=CAPACITY.high),
                _p("n_flows", int, low=2, high=1000),
                _p("buffer_bdp", float, low=1.0, high=1000.0, low_open=True))),
    Entry("M-F7", "fig_m_f7.ipynb", "figure",
          "Combined and per-flow goodput of BBR and BBRv2 vs their number among CUBIC flows",
          _spec(FLUID_CAPACITY, _p("rtt_ms", float, low=0.1, high=1000.0,
                                   help="base RTT, ms"),
                _p("n_flows", int, low=2, high=30),
                _p("buffer_bdp", float, low=1.0, high=100.0, low_open=True,
                   help="buffer, BDP (the closed form needs more than 1 BDP)"),
                *_fluid_runs(prefix=""),  # as the mix-sweep campaign's runs
                rules=(ordered("warmup_s", "duration_s"),))),
    Entry("M-F8", "fig_m_f8.ipynb", "figure",
          "Throughput per algorithm and queueing delay vs the mix (also F-Exp1)",
          _spec(_p("capacity_mbps", float, low=CAPACITY.low, high=CAPACITY.high),
                _p("n_flows", int, low=2, high=64),
                _p("buffer_bdp", float, low=0.05, high=1000.0),
                _p("rtts_ms", list, low=RTT.low, high=RTT.high),
                *_fluid_runs(), rules=(FLUID_RULE,))),
    Entry("M-F9", "fig_m_f9.ipynb", "figure",
          "Predicted Nash equilibrium region vs buffer, several capacities and RTTs",
          _spec(_p("n_flows", int, low=2, high=1000),
                _p("capacities_mbps", list, low=CAPACITY.low,
                   high=CAPACITY.high),
                _p("rtts_ms", list, low=RTT.low, high=RTT.high),
                _p("buffer_min_bdp", float, low=1.0, high=1000.0, low_open=True),
                _p("buffer_max_bdp", float, low=1.0, high=1000.0, low_open=True),
                _p("n_points", int, low=2, high=5000),
                rules=CURVE_RULES)),
    Entry("F-Exp2", "fig_f_exp2.ipynb", "figure",
          "Observed Nash equilibria vs the predicted region (measured, 10 flows)",
          _spec(_p("n_flows", int, low=2, high=64),
                _p("tolerance", float, low=0.0, high=1.0,
                   help="a switch counts as profitable only if it gains more than this "
                        "fraction"),
                _p("fluid_capacity_mbps", float, low=1.0, high=1000.0,
                   help="capacity of the fluid model's equilibrium search, Mbit/s"),
                _p("fluid_rtts_ms", list, low=0.1, high=1000.0,
                   help="RTTs at which the fluid model's equilibria are searched, ms"),
                _p("fluid_buffers_bdp", list, low=0.05,
                   high=100.0, help="buffers of the fluid model's equilibrium search, BDP"),
                *NE_NUMERICS,
                rules=(ordered("warmup_s", "duration_s"),))),
    Entry("M-F11", "fig_m_f11.ipynb", "figure",
          "Nash equilibria from the fluid model, CUBIC vs BBRv1 and vs BBRv2, one RTT",
          _spec(FLUID_CAPACITY,
                _p("rtts_ms", list, low=0.1, high=1000.0),
                _p("n_flows", int, low=2, high=30),
                _p("buffers_bdp", list, low=0.05,
                   high=100.0),
                *NE_NUMERICS,
                _p("two_flow_duration_s", float, low=2.0, high=TWO_FLOW_LONGEST_S,
                   help="simulated time of the fluid runs set beside the two-flow "
                        "measurements, s (the page runs each twice as long too)"),
                _p("two_flow_warmup_s", float, low=0.0, high=TWO_FLOW_LONGEST_S,
                   help="discarded start of those runs, s"),
                rules=(ordered("warmup_s", "duration_s"),
                       ordered("two_flow_warmup_s", "two_flow_duration_s")))),
    Entry("M-F10", "fig_m_f10.ipynb", "figure",
          "Nash equilibria with three RTT groups from the fluid model (and measured)",
          _spec(FLUID_CAPACITY,
                _p("group_rtts_ms", list, low=0.1, high=1000.0),
                _p("group_size", int, low=1, high=6),
                _p("buffers_bdp", list, low=0.05, high=100.0,
                   help="buffers, BDP of the shortest RTT"),
                *NE_NUMERICS, rules=(ordered("warmup_s", "duration_s"),))),
    Entry("F-NE", "fig_f_ne.ipynb", "figure",
          "Equilibria of the FABRIC reproduction beside the closed form, fluid model and ours",
          _spec(_p("rtts_ms", list, low=0.1, high=1000.0),
                _p("fluid_rtts_ms", list, low=0.1, high=1000.0),
                _p("fluid_buffers_bdp", list, low=0.05, high=100.0),
                _p("fluid_capacity_mbps", float, low=1.0, high=1000.0),
                _p("fluid_flows", int, low=2, high=30),
                *NE_NUMERICS,
                _p("fetch_timeout_s", float, low=0.1, high=120.0,
                   help="per request, when fetching the FABRIC data"),
                _p("use_network", bool,
                   help="fetch the FABRIC files instead of reading the bundled copy"),
                rules=(ordered("warmup_s", "duration_s"),))),
    Entry("M-F12", "fig_m_f12.ipynb", "figure",
          "The two-flow model in ultra-deep buffers, 1-250 BDP",
          _spec(CAPACITY, RTT, BUF_MIN,
                _p("buffer_max_bdp", float, low=1.0, high=1000.0, low_open=True),
                POINTS, DURATION, PACKET,
                *_fluid_runs(buffers=True, longest_s=TWO_FLOW_LONGEST_S),
                rules=(*CURVE_RULES, FLUID_RULE))),
    Entry("S-F1", "fig_s_f1.ipynb", "figure",
          "Reno vs BBRv1 sending rates over time: fluid model (and measured run)",
          _trace_spec(1.0, _p("run_key", str,
                              help="fluid-validation run to set beside the model"))),
    Entry("S-F4-5-11-12", "fig_s_f4_5_11_12.ipynb", "figure",
          "Fluid model, one sender of each CCA: normalised traces under drop-tail and RED",
          _trace_spec(1.0)),
    Entry("S-F6-10", "fig_s_f6_10.ipynb", "figure",
          "Fluid model: fairness, loss, queue, utilisation, jitter vs buffer, CCA pairs",
          _metrics_spec(_p("settle_s", float, low=20.0, high=600.0,
                                       help="length of the model runs that show how its "
                                            "CUBIC queue settles, s"))),
    Entry("S-F13-17", "fig_s_f13_17.ipynb", "figure",
          "Fluid model: the same five metrics for short RTTs (10-20 ms)",
          _metrics_spec()),
    Entry("S-Thm", "fig_s_thm.ipynb", "figure",
          "Reduced BBR models: equilibria and Jacobian eigenvalues (Theorems 1-5)",
          _spec(_p("capacity_pps", float, low=1.0, high=1e9),
                _p("d_s", float, low=MODEL_RTT_S[0], high=MODEL_RTT_S[1]),
                _p("n_flows", int, low=2, high=100),
                _p("n_grid", list, item=int, low=2, high=200),
                _p("d_grid", list, low=MODEL_RTT_S[0], high=MODEL_RTT_S[1]),
                _p("full_capacity_mbps", float, low=1.0, high=10_000.0,
                   help="the full model's capacity, Mbit/s"),
                _p("full_d_ms", float, low=1.0, high=1000.0,
                   help="the full model's propagation delay, ms"),
                _p("full_n", list, item=int, low=2, high=50,
                   help="flow counts run in the full model"))),
    Entry("S-Readings", "fig_s_readings.ipynb", "figure",
          "The fluid model two ways against the authors' own code, on their reference runs",
          _spec(_p("groups", list, item=str,
                   help="reference groups to run (data/reference/authors_fluid_runs.csv)"))),
    Entry("S-Step", "fig_s_step.ipynb", "figure",
          "Convergence of the fluid model: step size (both readings), and the equilibria's "
          "run length and step",
          _spec(_p("steps_us", list, low=1.0, high=1000.0,
                   help="integration steps, us"),
                _p("duration_s", float, low=2.0, high=600.0),
                _p("warmup_s", float, low=0.0, high=600.0),
                _p("tolerance", float, low=0.0, high=1.0, low_open=True,
                   help="largest change of BBR's share that counts as converged"),
                rules=(ordered("warmup_s", "duration_s"),))),
    Entry("S-Options", "fig_s_options.ipynb", "figure",
          "The Linux mechanisms in both readings of the fluid model, against measurements",
          _spec(_p("duration_s", float, low=2.0, high=TWO_FLOW_LONGEST_S,
                   help="simulated time per fluid run, s (the page runs each twice as long "
                        "too)"),
                _p("warmup_s", float, low=0.0, high=TWO_FLOW_LONGEST_S),
                _p("step_us", float, low=1.0, high=1000.0),
                _p("ten_duration_s", float, low=1.0, high=600.0,
                   help="length of the ten-flow runs, s (S-F6's)"),
                _p("ten_warmup_s", float, low=0.0, high=600.0),
                rules=(ordered("warmup_s", "duration_s"),
                       ordered("ten_warmup_s", "ten_duration_s")))),
    Entry("S-Insights", "fig_s_insights.ipynb", "figure",
          "The paper's insights 1-9 checked against fluid-model runs",
          _spec(_p("rtt_min_ms", float, low=1.2, high=1000.0,
                   help="shortest base RTT of the ten senders, ms (at 100 Mbit/s each starts "
                        "with a tenth of its BDP: at least one packet from 1.2 ms)"),
                _p("rtt_max_ms", float, low=1.2, high=1000.0),
                _p("duration_s", float, low=1.0, high=600.0),
                _p("warmup_s", float, low=0.0, high=600.0),
                rules=(ordered("warmup_s", "duration_s"), at_most("rtt_min_ms", "rtt_max_ms")))),
    Entry("P-F1-2", "fig_p_f1_2.ipynb", "figure",
          "10 CUBIC + 10 BBR on a small-delay network: fluctuation, period and ProbeRTT",
          _spec(_p("campaign", str, help="campaign name (data/campaigns/)"),
                *FLUCTUATION_READING,
                _p("fluid_duration_s", float, low=30.0, high=600.0),
                _p("fluid_step_us", float, low=1.0, high=100.0),
                rules=(ordered("min_period_s", "max_period_s"),
                       ordered("warmup_s", "fluid_duration_s"), *PERIOD_RULES))),
    Entry("P-F3", "fig_p_f3.ipynb", "figure",
          "The fluctuation against capacity (measured and fluid model), and de-synchronised "
          "ProbeRTT as a remedy in the model",
          _spec(_p("campaigns", list, item=str,
                   help="fluctuation campaigns (data/campaigns/)"),
                *FLUCTUATION_READING,
                _p("fluid_capacities_mbps", list, low=1.0,
                   high=100_000.0, help="capacities of the fluid runs, Mbit/s"),
                _p("fluid_duration_s", float, low=30.0, high=600.0),
                _p("fluid_step_us", float, low=1.0, high=100.0),
                _p("check_step_us", float, low=1.0, high=100.0,
                   help="the finer step of the convergence check, us"),
                _p("remedy_capacities_mbps", list, low=1.0, high=100_000.0),
                _p("remedy_rtt_ms", float, low=0.1, high=1000.0),
                _p("remedy_spreads_s", list, low=0.0, high=50.0,
                   help="spreads of the BBR flows' ProbeRTT intervals over [10, 10 + spread] "
                   "s; 0 is the published model"),
                _p("stagger_campaigns", list, item=str,
                   help="campaigns whose BBR flows start staggered (data/campaigns/)"),
                rules=(ordered("min_period_s", "max_period_s"),
                       ordered("warmup_s", "fluid_duration_s"),
                       ordered("check_step_us", "fluid_step_us"), *PERIOD_RULES))),
    Entry("WhatIf", "fig_whatif.ipynb", "figure",
          "Interactive: BBR's share from the closed form, the fluid model and measurements",
          _spec(_p("capacities_mbps", list, low=1.0, high=1000.0,
                   help="capacities offered, Mbit/s (two flows run in the model at each)"),
                _p("rtts_ms", list, low=0.5, high=500.0,
                   help="RTTs offered, ms (two flows run in the model at each)"),
                _p("flow_counts", list, item=int, low=2, high=30),
                _p("fluid_buffers_bdp", list, low=0.05,
                   high=100.0),
                _p("multi_capacities_mbps", list, low=1.0, high=1000.0,
                   help="capacities at which more than two flows run in the model, Mbit/s "
                   "(M-F11's, whose runs the defaults share)"),
                _p("multi_rtts_ms", list, low=0.5, high=500.0,
                   help="RTTs at which more than two flows run in the model, ms (M-F11's)"),
                *NE_NUMERICS,
                rules=(ordered("warmup_s", "duration_s"),
                       within("multi_capacities_mbps", "capacities_mbps"),
                       within("multi_rtts_ms", "rtts_ms")))),
    Entry("T-F1", "fig_t_f1.ipynb", "figure",
          "Validity gates of every stored run (measured)", _spec()),
    Entry("T-F2", "fig_t_f2.ipynb", "figure",
          "Anatomy of one run: goodput, cwnd and queue over time (measured)",
          _spec(_p("campaign", str, help="campaign name (data/campaigns/)"),
                _p("run_key", str, help="key of a stored valid run of that campaign"))),
    Entry("T-F3", "fig_t_f3.ipynb", "figure",
          "One configuration under deliberate background load (measured)", _spec()),
    Entry("T-F4", "fig_t_f4.ipynb", "figure",
          "The harness's ceiling: the fastest bottleneck this machine emulates for 20 flows "
          "(measured)", _spec()),
    Entry("T-F5", "fig_t_f5.ipynb", "figure",
          "How long a run must be: BBR's share against the run length it is read at "
          "(measured)",
          _spec(_p("lengths_s", list, low=10.0, high=1200.0,
                   help="run lengths each run is read at, s (its first seconds)"),
                _p("scored", float, low=0.05, high=1.0,
                   help="the scored part of each read, its last fraction"),
                _p("tolerance", float, low=0.001, high=0.5,
                   help="a share this close to the longest read's counts as settled"),
                rules=(holds("min(lengths_s) x scored >= 2 s (two 1-s goodput intervals)",
                             ("lengths_s", "scored"), lambda ls, f: min(ls) * f >= 2.0),))),
    Entry("Index", "book_index.ipynb", "index",
          "Index of figures and equations, from the ledger and the docstrings", _spec()),
    Entry("Changes", "edition_changes.ipynb", "index",
          "The first edition's fluid-model conclusions beside this edition's", _spec()),
)

_MIX = ("equilibrium", "mix_sweep")
_VALIDATION = ("fluid_validation",)
#: the run-length study, which decides which deep-buffer points a page counts
_STUDY = ("run_length",)
#: one CUBIC against one BBR: the buffer sweep, and its deep buffers at the study's length
_TWO_FLOW = ("two_flow", "two_flow_long")
#: what each figure reads of the bundled measurements (figures not listed read none)
CAMPAIGNS: dict[str, tuple[str, ...]] = {
    "M-F1": (*_TWO_FLOW, *_STUDY), "M-F3": (*_TWO_FLOW, "cubic_alone", *_STUDY),
    "M-F4": ("multi_flow", *_STUDY), "M-F5": (*_MIX, *_STUDY), "M-F7": (*_MIX, *_STUDY),
    "M-F8": (*_MIX, *_STUDY), "F-Exp2": (*_MIX, *_STUDY),
    "M-F11": (*_MIX, "two_flow", *_STUDY), "M-F10": ("mixed_rtt", *_STUDY),
    "F-NE": (*_MIX, *_STUDY), "M-F12": (*_TWO_FLOW, "deep_buffer", *_STUDY),
    "S-F1": _VALIDATION, "S-F4-5-11-12": _VALIDATION, "S-F6-10": _VALIDATION,
    "S-F13-17": _VALIDATION, "S-Options": ("two_flow", "cubic_alone", *_VALIDATION, *_STUDY),
    "S-Insights": _VALIDATION, "P-F1-2": ("fluctuation",),
    "P-F3": ("fluctuation", "fluctuation_fast", "fluctuation_stagger"), "WhatIf": ("*",),
    "T-F1": ("*",),
    "T-F2": ("two_flow",), "T-F3": ("concurrency",), "T-F4": ("ceiling", "ceiling-steered"),
    "T-F5": ("run_length",),
}

#: the RTT parameters that are not the fluid model's (F-NE's are FABRIC's measured RTTs)
NOT_FLUID_RTTS = {"F-NE": ("rtts_ms",)}
#: steps each way the fluid model's delay lines need: its published reading reads each rate
#: back one forward delay later, so it refuses a forward delay (half the RTT) under a step
#: (:func:`coexist.fluid.solve.simulate_published`)
STEPS_PER_ONE_WAY_DELAY = 1


def _step_rules(e: Entry) -> tuple:
    """The rule that every RTT a figure's fluid-model runs take spans two integration steps
    (one each way), for a figure that runs the model at a step it accepts; none else."""
    names = e.spec.names
    steps = [n for n in names if n in ("step_us", "fluid_step_us")]
    rtts = [n for n in names if "rtt" in n and n.endswith("_ms")
            and n not in NOT_FLUID_RTTS.get(e.id, ())]
    if not steps or not rtts:
        return ()
    step, k = steps[0], 2 * STEPS_PER_ONE_WAY_DELAY

    def fits(*values: Any) -> bool:
        *rtt_values, step_us = values
        return min(extreme(r, min) for r in rtt_values) * 1e3 >= k * step_us

    return (holds(f"every RTT of {', '.join(rtts)} >= {k} x {step} (a step each way)",
                  (*rtts, step), fits),)


def notebook_defaults(path: Path) -> dict[str, Any]:
    """The defaults a notebook's ``parameters`` cell assigns, in its order: one literal per
    name (papermill replaces these assignments, so nothing else may stand there)."""
    nb = json.loads(sidecars.read_text(path, "notebook"))
    cell = next((c for c in nb.get("cells", []) if c.get("cell_type") == "code"
                 and "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise ParameterError(f"{path.name}: no code cell tagged 'parameters'")
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    out: dict[str, Any] = {}
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ParameterError(f"{path.name}: the parameters cell is not Python "
                             f"(line {exc.lineno})") from None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(f"{path.name}: the parameters cell may only assign one "
                                 f"literal per name (line {node.lineno})")
        try:
            out[node.targets[0].id] = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError):
            raise ParameterError(f"{path.name}: parameter {node.targets[0].id!r} is not a "
                                 f"literal (line {node.lineno})") from None
    return out


def _complete(e: Entry) -> Entry:
    """``e`` with every parameter's default read from its notebook, each checked against the
    parameter's range (a name the notebook and the ledger do not share is an error), and
    with the rules its fluid-model runs need (:func:`_step_rules`, :data:`FLUID_BDP`)."""
    given = notebook_defaults(e.path)
    if set(given) != set(e.spec.names):
        raise ParameterError(
            f"{e.notebook}: the parameters cell and the ledger's entry {e.id} differ: only in "
            f"the cell {sorted(set(given) - set(e.spec.names))}, only in the ledger "
            f"{sorted(set(e.spec.names) - set(given))}")
    params = []
    for p in e.spec.params:
        try:
            params.append(replace(p, default=p.check(given[p.name])))
        except ParameterError as exc:
            raise ParameterError(f"{e.notebook}: the default {exc}") from None
    rules = (*e.spec.constraints, *_step_rules(e), *FLUID_BDP.get(e.id, ()))
    return replace(e, spec=Spec(tuple(params), rules))


#: M-F10's flows: ``group_size`` senders at each of the group RTTs, the shortest of which
#: sets the BDP (its buffer's unit too)
GROUPS_BDP = holds("capacity_mbps x min(group_rtts_ms) >= one 1500-B packet per flow "
                   "(group_size x groups)", ("capacity_mbps", "group_rtts_ms", "group_size"),
                   lambda c, rtts, g: c * 1e6 * min(rtts) / 1e3 / (8 * 1500) >= g * len(rtts))

#: the rules of the figures whose fluid-model runs need a window of a packet per flow: the
#: model's windows start at one BDP shared by the flows, and a flow with less than a packet
#: in flight has no rate to speak of (the runs give NaN goodputs)
FLUID_BDP = {
    "M-F1": (bdp_packets_at_least("capacity_mbps", "rtt_ms", 2),),
    "M-F3": (bdp_packets_at_least("capacities_mbps", "rtts_ms", 2),
             bdp_packets_at_least("sweep_capacity_mbps", "sweep_rtts_ms", 2)),
    "M-F4": (bdp_packets_at_least("capacity_mbps", "rtt_ms", "flows_per_cca", factor=2),),
    "M-F5": (bdp_packets_at_least("capacity_mbps", "rtt_ms", "total_flows"),),
    "M-F7": (bdp_packets_at_least("capacity_mbps", "rtt_ms", "n_flows"),),
    "M-F8": (bdp_packets_at_least("capacity_mbps", "rtts_ms", "n_flows"),),
    "F-Exp2": (bdp_packets_at_least("fluid_capacity_mbps", "fluid_rtts_ms", "n_flows"),),
    "M-F11": (bdp_packets_at_least("capacity_mbps", "rtts_ms", "n_flows"),),
    "M-F10": (GROUPS_BDP,),
    "F-NE": (bdp_packets_at_least("fluid_capacity_mbps", "fluid_rtts_ms", "fluid_flows"),),
    "M-F12": (bdp_packets_at_least("capacity_mbps", "rtt_ms", 2),),
    # WhatIf runs two flows at every setting and its flow counts at the multi-flow ones
    "WhatIf": (bdp_packets_at_least("capacities_mbps", "rtts_ms", 2),
               bdp_packets_at_least("multi_capacities_mbps", "multi_rtts_ms", "flow_counts")),
}


ENTRIES = tuple(_complete(e) for e in ENTRIES)
BY_ID = {e.id: e for e in ENTRIES}
FIGURES = tuple(e for e in ENTRIES if e.kind == "figure")


def entry(entry_id: str) -> Entry:
    """Look up a ledger entry, naming the known ids on a miss."""
    try:
        return BY_ID[entry_id]
    except KeyError:
        raise ParameterError(
            f"unknown figure or notebook id {entry_id!r}; known: {', '.join(BY_ID)}"
        ) from None


def check(entry_id: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a notebook's parameters as they stand after papermill's injection.

    Papermill only warns about a name the parameters cell does not define and runs the
    notebook on its defaults; here every name assigned by a cell executed before this
    check (the parameters cell, papermill's injected cell: the kernel's input history
    ``In``) must be one of the spec's, so ``papermill -p n_flow 20`` stops with the same
    one-line error as ``coexist figures``."""
    spec = entry(entry_id).spec
    stray = sorted(assigned_before_check(namespace.get("In") or []) - set(spec.names))
    if stray:
        raise spec.unknown(stray)
    return spec.from_namespace(namespace)


def assigned_before_check(history: Sequence[str]) -> set[str]:
    """The names bound by plain assignments in the cells of ``history`` (a kernel's ``In``)
    executed before the first cell that calls ``ledger.check``. Imports and definitions do
    not count; a cell that is not Python (a magic) is skipped."""
    names: set[str] = set()
    for source in history:
        if not isinstance(source, str):
            continue
        if "ledger.check(" in source:
            break
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign))
                       else [])
            names |= set(_bound(targets))
    return names


def _bound(targets: Sequence[ast.expr]) -> list[str]:
    """The names an assignment binds: plain names, also inside tuples, lists and starred
    targets; not the object of an attribute or item assignment (``x.a = 1`` binds no name)."""
    out: list[str] = []
    for t in targets:
        if isinstance(t, ast.Name):
            out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            out += _bound(t.elts)
        elif isinstance(t, ast.Starred):
            out += _bound([t.value])
    return out


__all__ = ["Entry", "ENTRIES", "FIGURES", "check", "entry"]
