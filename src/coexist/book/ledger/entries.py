"""The ledger's entries as data: one :class:`Entry` per executable notebook (its id,
notebook, kind, title and the parameters it accepts with their ranges and meanings), the
campaigns each figure reads, and the window rules of each figure's fluid-model runs.

Each parameter is declared once: its type, range and meaning here, its default in the
notebook's parameters cell (where papermill and a reader look for it), which
:mod:`.completion` reads and checks against the range.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core.params import Spec, at_most, bdp_packets_at_least, holds, ordered, within
from ...core.paths import NOTEBOOKS
from ...core.quantities import MODEL_RTT_S
from .specs import (
    BUF_MIN,
    CAPACITY,
    CURVE,
    CURVE_RULES,
    DURATION,
    FLUCTUATION_READING,
    FLUID_CAPACITY,
    FLUID_RULE,
    NE_NUMERICS,
    PACKET,
    PERIOD_RULES,
    POINTS,
    RTT,
    TWO_FLOW_LONGEST_S,
    _fluid_runs,
    _metrics_spec,
    _p,
    _spec,
    _trace_spec,
)


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


#: every notebook's entry as declared; :data:`coexist.book.ledger.ENTRIES` holds them with
#: their notebooks' defaults (:func:`coexist.book.ledger.completion._complete`)
DECLARED: tuple[Entry, ...] = (
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
