"""Run-length convergence of the fluid model's equilibrium searches.

An equilibrium search compares per-flow goodputs of neighbouring mixes (the
unilateral-deviation test, :mod:`coexist.closed_form.nash`), so it turns on differences of a
few per cent
between time averages. With the RTprop expiry those averages settle slowly: every ProbeRTT
cycle (10 s) resets BBR's estimates, and the share a mix gives BBR drifts over many cycles.
Whether a run is long enough is therefore a question about the equilibria, not about one
share. This module runs each mix once for the long span and reads both spans from the same
trace (the solver is deterministic and causal, so the first ``short`` seconds of a long run
are the short run), each with the standard errors of its batch means
(:func:`.metrics.goodput_batches`); :func:`equilibria` then compares the two spans'
equilibria.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import pandas as pd

from ...closed_form import nash
from ...core.params import invalid
from ...runstore import fanout, lookup
from ..model import solve
from . import equilibria

#: the book's runs (120 s, averaged after 30 s) and the runs twice as long they are checked
#: against (240 s, averaged after 60 s)
SPANS = {"short": (30.0, 120.0), "long": (60.0, 240.0)}


def _window(tr: solve.Trace, end_s: float) -> solve.Trace:
    """The part of a trace with ``t < end_s``: the run of ``end_s`` seconds."""
    keep = tr.t < end_s
    return dataclasses.replace(tr, t=tr.t[keep],
                               **{k: getattr(tr, k)[keep] for k in solve.Trace.OUTPUTS},
                               bbr={k: v[keep] for k, v in tr.bbr.items()})


def run_mix(variant: str, rtprop_expiry: bool, rtt_ms: float, buffer_bdp: float,
            bbr_flows: int, *, n_flows: int = 10, capacity_bps: float = 100e6,
            step_s: float = 5e-5, spans: dict[str, tuple[float, float]] = SPANS,
            reading: str = solve.DEFAULT_READING) -> list[dict]:
    """One mix of ``n_flows`` flows (``bbr_flows`` of them BBR) run for the longest span:
    per algorithm and span, per-flow goodput (bit/s) and its standard error."""
    end = max(e for _, e in spans.values())
    cfg, _ = equilibria.mix_config([bbr_flows], n_flows, [rtt_ms / 1e3], buffer_bdp,
                                   capacity_bps, variant, end, step_s, rtprop_expiry, False,
                                   reading)

    inputs = {"config": repr(cfg), "spans": {k: list(v) for k, v in spans.items()},
              "batches": equilibria.BATCHES}
    return [{"variant": variant, "rtprop_expiry": bool(rtprop_expiry), "rtt_ms": float(rtt_ms),
             "buffer_bdp": float(buffer_bdp), "bbr_flows": int(bbr_flows), **r}
            for r in lookup.memo("run-length", inputs)]


@lookup.computes("run-length")
def _spans(inputs: dict) -> list[dict]:
    """The run behind :func:`run_mix` (its memo ``inputs``): per span and algorithm, the
    per-flow goodput and its standard error."""
    cfg = solve.config_from_repr(inputs["config"])
    tr = solve.run(cfg)
    rows = []
    for span, (start, stop) in inputs["spans"].items():
        g = equilibria.group_goodput(_window(tr, stop), start, [0] * len(cfg.flows))
        rows += [{"span": span, "cca": r.cca, "goodput_bps": float(r.goodput_bps),
                  "goodput_se_bps": r.goodput_se_bps} for r in g.itertuples()]
    return rows


def study(variants: Sequence[str], expiries: Sequence[bool], rtts_ms: Sequence[float],
          buffers_bdp: Sequence[float], *, n_flows: int = 10, capacity_bps: float = 100e6,
          step_s: float = 5e-5, spans: dict[str, tuple[float, float]] = SPANS,
          workers: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Every mix of every (variant, expiry, RTT, buffer), each span; both cores used."""
    from ...core.progress import tqdm

    for v in variants:
        if v not in equilibria.BBR_VARIANTS:
            raise invalid("variants", v, f"one of {', '.join(equilibria.BBR_VARIANTS)}")
    if not 2 <= n_flows <= 100:
        raise invalid("n_flows", n_flows, "2..100 flows")
    jobs = list(itertools.product(variants, expiries, rtts_ms, buffers_bdp,
                                  range(n_flows + 1)))
    def one(job: tuple) -> list[dict]:
        return run_mix(*job, n_flows=n_flows, capacity_bps=capacity_bps, step_s=step_s,
                       spans=spans)

    parts = list(tqdm(fanout.imap(one, jobs, workers), total=len(jobs), disable=not progress,
                      desc="run length", unit="run"))
    return pd.DataFrame([r for p in parts for r in p])


CASE = ["variant", "rtprop_expiry", "rtt_ms", "buffer_bdp"]


def _sets(s: pd.DataFrame, n: int, z: float) -> tuple[list[int], list[int]]:
    """Point equilibria and equilibria within ``z`` standard errors of one case and span."""
    wide = s.pivot(index="bbr_flows", columns="cca").reindex(range(n + 1))
    # NaN where a mix has no such flow (no CUBIC flow in the all-BBR mix): unread
    rate, se = ([wide[(col, c)].fillna(0.0).to_numpy() for c in ("cubic", "bbr")]
                for col in ("goodput_bps", "goodput_se_bps"))
    return (nash.equilibria(*rate),
            nash.equilibria(*rate, cubic_se=se[0], bbr_se=se[1], z=z))


def equilibria_by_step(coarse: pd.DataFrame, fine: pd.DataFrame, span: str = "short",
                       z: float = nash.SPREAD_Z) -> pd.DataFrame:
    """Per case: the equilibria of the book's step (``coarse``) and of a finer one
    (``fine``), both over ``span``, and whether the finer step's point equilibria lie among
    the book's equilibria within ``z`` standard errors (the step is fine enough for the
    sets the book reports when they do)."""
    n = int(coarse["bbr_flows"].max())
    rows = []
    fine_cases = dict(list(fine[fine["span"] == span].groupby(CASE, sort=True)))
    for key, g in coarse[coarse["span"] == span].groupby(CASE, sort=True):
        if key not in fine_cases:
            continue
        out = dict(zip(CASE, key, strict=True))
        out["coarse_point"], out["coarse_within"] = _sets(g, n, z)
        out["fine_point"], out["fine_within"] = _sets(fine_cases[key], n, z)
        out["fine_in_coarse"] = set(out["fine_point"]) <= set(out["coarse_within"])
        out["point_moved"] = out["fine_point"] != out["coarse_point"]
        rows.append(out)
    return pd.DataFrame(rows)


def equilibria_by_span(table: pd.DataFrame, z: float = nash.SPREAD_Z) -> pd.DataFrame:
    """Per case: each span's point equilibria (averages taken as exact) and its equilibria
    within ``z`` standard errors, and whether the long span's point equilibria lie among the
    short span's (the book's runs are long enough when they do)."""
    n = int(table["bbr_flows"].max())
    rows = []
    for key, g in table.groupby(CASE, sort=True):
        out = dict(zip(CASE, key, strict=True))
        for span, s in g.groupby("span"):
            out[f"{span}_point"], out[f"{span}_within"] = _sets(s, n, z)
        out["long_in_short"] = set(out["long_point"]) <= set(out["short_within"])
        out["point_moved"] = out["long_point"] != out["short_point"]
        rows.append(out)
    return pd.DataFrame(rows)


def reference_checks(z: float = nash.SPREAD_Z) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The committed checks of the figures' equilibrium searches (S-Step, M-F11):
    :func:`equilibria_by_span` of ``data/reference/fluid_run_length.csv`` and
    :func:`equilibria_by_step` of it against ``data/reference/fluid_step_equilibria.csv``
    (the scripts in ``pipelines/`` write both)."""
    from ...core import paths

    spans = pd.read_csv(paths.DATA / "reference" / "fluid_run_length.csv")
    fine = pd.read_csv(paths.DATA / "reference" / "fluid_step_equilibria.csv")
    return equilibria_by_span(spans, z), equilibria_by_step(spans, fine, z=z)

