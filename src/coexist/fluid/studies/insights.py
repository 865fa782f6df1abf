"""Scherrer et al.'s Insights 1-6 (§5 of the fluid-model paper) tested in the fluid model.

Each insight is a function that runs its settings and returns its evidence (one row per
setting and metric: ``insight``, ``setting``, ``metric``, ``value``) and its verdict by a
rule stated in the verdict itself, so a reader sees what "reproduced" meant. Every run is
ten flows, alternating between two algorithms, over RTTs spread between two bounds, as the
paper's validation; the runs are memoised (kind ``insight``). Insights 7 and 8 compare the
model with measurements (:func:`coexist.measured.fluid_vs_measured.insights_7_8`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ...runstore import lookup
from ..model import metrics, solve

#: the number of flows of every insight run, alternating between its two algorithms
N_FLOWS = 10


class Verdict(NamedTuple):
    """An insight's verdict and the rule it applies."""

    insight: int
    verdict: str  # "reproduced", "not reproduced", "open", "not testable here"
    rule: str


def rtts_between(rtt_min_ms: float, rtt_max_ms: float) -> list[float]:
    """The ten flows' RTTs, s: evenly spread over [min, max]."""
    return list(np.linspace(rtt_min_ms, rtt_max_ms, N_FLOWS) / 1e3)


def setting(a: str, b: str, buffer_bdp: float, *, rtts_s: Sequence[float], duration_s: float,
            warmup_s: float, aqm: str = "droptail", capacity_bps: float = 100e6,
            **options) -> dict:
    """One insight run: flows alternating ``a`` and ``b`` (``a`` first), its aggregate
    metrics after the warm-up (:func:`.metrics.aggregate`) with ``share_a``, the share of
    the goodput of the ``a`` flows. ``options`` are further :func:`.solve.dumbbell`
    arguments (e.g. ``inflight_hi_factor``). Memoised on disk."""
    ccas = [a if i % 2 == 0 else b for i in range(N_FLOWS)]
    pps = capacity_bps / 12000
    cfg = solve.dumbbell(ccas, capacity_bps=capacity_bps, rtt_s=list(rtts_s),
                         buffer_bdp=buffer_bdp, duration_s=duration_s, aqm=aqm,
                         sample_s=min(1e-3, 10 / pps),
                         initial_window=pps * rtts_s[0] / N_FLOWS, **options)
    out = lookup.memo("insight", {"config": repr(cfg), "warmup_s": float(warmup_s), "a": a})
    return {**out, "pair": f"{a}/{b}", "buffer_bdp": buffer_bdp}


@lookup.computes("insight")
def _setting(inputs: dict) -> dict:
    """The run behind :func:`setting` (its memo ``inputs``)."""
    tr = solve.run(solve.config_from_repr(inputs["config"]))
    share = metrics.per_flow(tr, inputs["warmup_s"]).groupby("cca")["share"].sum()
    return {**metrics.aggregate(tr, inputs["warmup_s"]),
            "share_a": float(share.get(inputs["a"], np.nan))}


def _verdict(insight: int, ok: bool, rule: str) -> Verdict:
    return Verdict(insight, "reproduced" if ok else "not reproduced", rule)


Run = Callable[..., dict]


def insight_1(run: Run) -> tuple[list[dict], Verdict]:
    """Insight 1: BBRv1 loses up to about 20 % of its packets, the loss-sensitive
    algorithms about 1 % or less."""
    pairs = [("bbr1", "bbr1"), ("reno", "reno"), ("cubic", "cubic"), ("bbr2", "bbr2")]
    loss = {(p, aqm): run(*p, 1.0, aqm=aqm)["loss_rate"]
            for p in pairs for aqm in ("droptail", "red")}
    rows = [{"insight": 1, "setting": f"{p[0]} x10, 1 BDP, {aqm}", "metric": "loss rate",
             "value": v} for (p, aqm), v in loss.items()]
    ok = all(loss[(pairs[0], a)] > 0.05 for a in ("droptail", "red")) and all(
        loss[(p, a)] < 0.02 for p in pairs[1:] for a in ("droptail", "red"))
    return rows, _verdict(1, ok, "BBRv1 loss > 5 % and Reno/CUBIC/BBRv2 loss < 2 % at 1 BDP, "
                                 "both AQMs")


def insight_2(run: Run) -> tuple[list[dict], Verdict]:
    """Insight 2: BBRv1 starves loss-based algorithms in shallow drop-tail buffers and in
    any RED buffer; fairness improves in large drop-tail buffers."""
    sh = {(buf, aqm): run("cubic", "bbr1", buf, aqm=aqm)["share_a"]
          for buf in (1.0, 2.0, 4.0, 7.0) for aqm in ("droptail", "red")}
    rows = [{"insight": 2, "setting": f"cubic/bbr1, {buf:g} BDP, {aqm}",
             "metric": "CUBIC share", "value": v} for (buf, aqm), v in sh.items()]
    ok = (sh[(1.0, "droptail")] < 0.25 and all(sh[(b, "red")] < 0.25 for b in (1.0, 4.0, 7.0))
          and sh[(7.0, "droptail")] > sh[(1.0, "droptail")])
    return rows, _verdict(2, ok, "CUBIC share < 25 % against BBRv1 at 1 BDP drop-tail and "
                                 "under RED at every buffer; larger at 7 BDP than at 1 BDP "
                                 "drop-tail")


def insight_3(run: Run) -> tuple[list[dict], Verdict]:
    """Insight 3: BBRv1 gives full utilisation and bufferbloat, under both AQMs."""
    r = {aqm: run("bbr1", "bbr1", 2.0, aqm=aqm) for aqm in ("droptail", "red")}
    rows = [{"insight": 3, "setting": f"bbr1 x10, 2 BDP, {aqm}", "metric": metric,
             "value": x[key]} for aqm, x in r.items()
            for metric, key in (("utilisation", "utilisation"), ("queue share", "queue_share"))]
    ok = all(x["utilisation"] > 0.98 and x["queue_share"] > 0.1 for x in r.values())
    return rows, _verdict(3, ok, "BBRv1: utilisation > 98 % and mean queue > 10 % of the "
                                 "buffer, both AQMs")


def insight_4(run: Run) -> tuple[list[dict], Verdict]:
    """Insight 4: BBRv2 reduces buffer use and loss, and is fairer to loss-based
    algorithms, than BBRv1."""
    alone = {cca: run(cca, cca, 2.0) for cca in ("bbr1", "bbr2")}
    jain = {cca: run("cubic", cca, 2.0)["jain"] for cca in ("bbr1", "bbr2")}
    rows = ([{"insight": 4, "setting": f"{c} x10, 2 BDP", "metric": "queue share",
              "value": r["queue_share"]} for c, r in alone.items()]
            + [{"insight": 4, "setting": f"cubic/{c}, 2 BDP", "metric": "Jain", "value": v}
               for c, v in jain.items()])
    ok = (alone["bbr2"]["queue_share"] < alone["bbr1"]["queue_share"]
          and alone["bbr2"]["loss_rate"] <= alone["bbr1"]["loss_rate"]
          and jain["bbr2"] >= jain["bbr1"])
    return rows, _verdict(4, ok, "BBRv2 vs BBRv1 at 2 BDP: less queue, no more loss, Jain with "
                                 "CUBIC at least as high")


def insight_5(run: Run) -> tuple[list[dict], Verdict]:
    """Insight 5: BBRv2 uses more of a drop-tail buffer above 5 BDP, because of its initial
    ``inflight_hi``."""
    q = {(buf, f): run("bbr2", "bbr2", buf, inflight_hi_factor=f)["queue_share"] * buf
         for buf in (2.0, 7.0) for f in (1.25, 4.0)}
    rows = [{"insight": 5, "setting": f"bbr2 x10, {buf:g} BDP, inflight_hi0 {f:g} w0",
             "metric": "queue (BDP)", "value": v} for (buf, f), v in q.items()]
    ok = q[(7.0, 4.0)] > q[(7.0, 1.25)] * 1.5 and q[(7.0, 4.0)] > q[(2.0, 4.0)]
    return rows, _verdict(5, ok, "with a large initial inflight_hi, BBRv2 keeps a larger queue "
                                 "in a 7-BDP buffer than with a small one, and than in a 2-BDP "
                                 "buffer")


def insight_6(run: Run) -> tuple[list[dict], Verdict]:
    """Insight 6: BBRv2 is unfair to loss-based algorithms under RED on high-capacity
    links."""
    s = {cap: run("cubic", "bbr2", 2.0, aqm="red", capacity_bps=cap)["share_a"]
         for cap in (100e6, 1e9)}
    rows = [{"insight": 6, "setting": f"cubic/bbr2, 2 BDP, RED, {cap / 1e6:g} Mbit/s",
             "metric": "CUBIC share", "value": v} for cap, v in s.items()]
    ok = s[1e9] < s[100e6] and s[1e9] < 0.4
    return rows, _verdict(6, ok, "under RED, CUBIC's share against BBRv2 is below 40 % at "
                                 "1 Gbit/s and smaller than at 100 Mbit/s")


def model_insights(rtt_min_ms: float, rtt_max_ms: float, duration_s: float,
                   warmup_s: float) -> tuple[list[dict], list[Verdict]]:
    """Insights 1-6 at the given RTT spread, run length and warm-up: every evidence row,
    and a verdict per insight."""
    rtts = rtts_between(rtt_min_ms, rtt_max_ms)

    def run(a: str, b: str, buffer_bdp: float, **kw) -> dict:
        return setting(a, b, buffer_bdp, rtts_s=rtts, duration_s=duration_s,
                       warmup_s=warmup_s, **kw)

    rows: list[dict] = []
    verdicts = []
    for insight in (insight_1, insight_2, insight_3, insight_4, insight_5, insight_6):
        r, v = insight(run)
        rows += r
        verdicts.append(v)
    return rows, verdicts
