"""The periodic fluctuation of fluid-model runs (published reading, BBRv1), one row per
run, read as :func:`coexist.analysis.fluctuation.summarise` reads every run (P-F1-2, P-F3):
the memoised kind ``fluctuation``, and ``fluctuation-panels`` with P-F1-2's drawn rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...analysis import periodicity
from ...analysis.fluctuation import PROBE_RTT_INTERVAL_S, panels, spread_intervals, summarise
from ...core.params import invalid
from ...runstore import fanout, lookup
from ..model import metrics, solve


def _inputs(capacity_bps: float, rtt_s: float, duration_s: float, warmup_s: float,
            step_s: float, bin_s: float, min_period_s: float, max_period_s: float,
            sync_flows: int, n_cubic: int, n_bbr: int, buffer_bdp: float,
            probe_rtt_interval_s: float | Sequence[float]) -> dict:
    """The memo inputs of :func:`fluid_run` and :func:`fluid_panels`, their arguments
    checked: the run's configuration and how its series is read."""
    intervals = (tuple(float(v) for v in probe_rtt_interval_s)
                 if isinstance(probe_rtt_interval_s, Sequence)
                 else (float(probe_rtt_interval_s),) * n_bbr)
    if len(intervals) != n_bbr:
        raise invalid("probe_rtt_interval_s", probe_rtt_interval_s,
                      f"one value, or one per BBR flow ({n_bbr})")
    if not 0 <= warmup_s < duration_s:
        raise invalid("warmup_s", warmup_s, f"0 <= warm-up < duration ({duration_s:g} s)")
    pps = capacity_bps / (8 * solve.PACKET_BYTES)
    n = n_cubic + n_bbr
    cfg = solve.dumbbell(["cubic"] * n_cubic + ["bbr1"] * n_bbr, capacity_bps=capacity_bps,
                         rtt_s=rtt_s, buffer_bdp=buffer_bdp, duration_s=duration_s,
                         step_s=step_s, sample_s=bin_s / 50,
                         initial_window=max(1.0, pps * rtt_s / n),
                         probe_rtt_interval_s=(PROBE_RTT_INTERVAL_S,) * n_cubic + intervals)
    return {"config": repr(cfg), "warmup_s": float(warmup_s), "bin_s": float(bin_s),
            "periods": [float(min_period_s), float(max_period_s)],
            "sync_flows": int(sync_flows), "capacity_bps": float(capacity_bps),
            "n_cubic": int(n_cubic)}


def fluid_run(*, capacity_bps: float, rtt_s: float, duration_s: float, warmup_s: float,
              step_s: float, bin_s: float, min_period_s: float, max_period_s: float,
              sync_flows: int, n_cubic: int = 10, n_bbr: int = 10, buffer_bdp: float = 2.0,
              probe_rtt_interval_s: float | Sequence[float] = PROBE_RTT_INTERVAL_S) -> dict:
    """The row of one fluid-model run (published reading, BBRv1) of ``n_cubic`` CUBIC and
    ``n_bbr`` BBR flows, each BBR flow with its ProbeRTT interval (one value for all, or
    one per BBR flow); every flow starts at an equal share of the BDP, as P-F1-2's run.
    Goodput is each flow's sending rate thinned by the loss it meets at the queue
    (:func:`.metrics.goodput_pps`), sampled 50 times per bin. Memoised on disk."""
    return dict(lookup.memo("fluctuation", _inputs(
        capacity_bps, rtt_s, duration_s, warmup_s, step_s, bin_s, min_period_s,
        max_period_s, sync_flows, n_cubic, n_bbr, buffer_bdp, probe_rtt_interval_s)))


def fluid_panels(*, capacity_bps: float, rtt_s: float, duration_s: float, warmup_s: float,
                 step_s: float, bin_s: float, min_period_s: float, max_period_s: float,
                 sync_flows: int, n_cubic: int = 10, n_bbr: int = 10,
                 buffer_bdp: float = 2.0) -> tuple[dict, pd.DataFrame]:
    """The row of one fluid-model run, as :func:`fluid_run`, with the run's drawn rows in
    P-F1-2's figure (:func:`coexist.analysis.fluctuation.panels`, no goodput over time),
    every BBR flow at the published ProbeRTT interval. Memoised on disk."""
    out = lookup.memo("fluctuation-panels", _inputs(
        capacity_bps, rtt_s, duration_s, warmup_s, step_s, bin_s, min_period_s,
        max_period_s, sync_flows, n_cubic, n_bbr, buffer_bdp, PROBE_RTT_INTERVAL_S))
    return dict(out["row"]), out["panels"]


def _binned(inputs: dict) -> tuple[np.ndarray, ...]:
    """The run of a memo's ``inputs`` after its warm-up, in bins: their ends (s), the BBR
    and CUBIC totals (bit/s), every flow's mean goodput (bit/s) and the BBR flows'
    ProbeRTT entries (s)."""
    cfg = solve.config_from_repr(inputs["config"])
    warmup_s, n_cubic = inputs["warmup_s"], inputs["n_cubic"]
    n = len(cfg.flows)
    tr = solve.run(cfg)
    late = tr.t >= warmup_s
    k = int(late.sum() // 50 * 50)
    good = np.column_stack([metrics.goodput_pps(tr, i) for i in range(n)])
    bits = good[late][:k] * metrics.BITS
    bbr = bits[:, n_cubic:].sum(axis=1).reshape(-1, 50).mean(axis=1)
    cub = bits[:, :n_cubic].sum(axis=1).reshape(-1, 50).mean(axis=1)
    tb = tr.t[late][:k].reshape(-1, 50)[:, -1]
    ent = periodicity.model_probe_rtt_entries(tr.t, tr.bbr["m_prt"][:, n_cubic:])
    return tb, bbr, cub, bits.mean(axis=0), ent[ent >= warmup_s]


def _row(inputs: dict, binned: tuple[np.ndarray, ...]) -> dict:
    """The summary row of a memo's ``inputs`` from its :func:`_binned` run."""
    tb, bbr, cub, flow_means, entries = binned
    min_period_s, max_period_s = inputs["periods"]
    return summarise(tb, bbr, cub, flow_means, entries, bin_s=inputs["bin_s"],
                     capacity_bps=inputs["capacity_bps"], min_period_s=min_period_s,
                     max_period_s=max_period_s, sync_flows=inputs["sync_flows"])


@lookup.computes("fluctuation")
def _model_row(inputs: dict) -> dict:
    """The run behind :func:`fluid_run` (its memo ``inputs``)."""
    return _row(inputs, _binned(inputs))


@lookup.computes("fluctuation-panels")
def _model_panels(inputs: dict) -> dict:
    """The run behind :func:`fluid_panels` (its memo ``inputs``)."""
    binned = _binned(inputs)
    tb, bbr, cub, _, entries = binned
    min_period_s, max_period_s = inputs["periods"]
    top = min(max_period_s, len(bbr) * inputs["bin_s"] / 2)  # a period fits twice
    return {"row": _row(inputs, binned),
            "panels": panels(tb, bbr, cub, entries, source="fluid model",
                             bin_s=inputs["bin_s"], min_period_s=min_period_s,
                             max_period_s=top, sync_flows=inputs["sync_flows"],
                             goodput=False)}


def capacity_rows(*, capacities_mbps: Sequence[float], rtts_ms: Sequence[float],
                  remedy_capacities_mbps: Sequence[float], remedy_rtt_ms: float,
                  remedy_spreads_s: Sequence[float], duration_s: float, step_us: float,
                  check_step_us: float, **est) -> pd.DataFrame:
    """P-F3's fluid-model runs, one row each (:func:`fluid_run`, ``est`` its estimates),
    fanned out over the machine's cores (:mod:`.fanout`), labelled by ``part``:

    - ``capacity``: every capacity and RTT at the published ProbeRTT interval;
    - ``remedy``: each BBR flow's interval spread over [10, 10 + spread] s at
      ``remedy_rtt_ms``, the published runs at those capacities as the spread of 0;
    - ``step check``: the fastest, shortest setting again at ``check_step_us``, the
      convergence check of the others.
    """
    jobs = ([("capacity", c, r, 0.0, step_us) for c in capacities_mbps for r in rtts_ms]
            + [("remedy", c, remedy_rtt_ms, s, step_us)
               for c in remedy_capacities_mbps for s in remedy_spreads_s if s > 0]
            + [("step check", max(capacities_mbps), min(rtts_ms), 0.0, check_step_us)])

    def one(job: tuple) -> dict:
        part, cap, rtt, spread, step = job
        row = fluid_run(capacity_bps=cap * 1e6, rtt_s=rtt / 1e3, duration_s=duration_s,
                        step_s=step * 1e-6,
                        probe_rtt_interval_s=spread_intervals(10, spread), **est)
        return {"part": part, "source": "fluid model", "capacity_mbps": cap, "rtt_ms": rtt,
                "spread_s": spread, "step_us": step, "run": "fluid model", **row}

    rows = pd.DataFrame(fanout.map_list(one, jobs))
    base = rows[(rows.part == "capacity") & rows.capacity_mbps.isin(remedy_capacities_mbps)
                & np.isclose(rows.rtt_ms, remedy_rtt_ms)]
    return pd.concat([rows, base.assign(part="remedy")], ignore_index=True)
