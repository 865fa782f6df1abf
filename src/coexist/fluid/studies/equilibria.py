"""Nash equilibria of the CUBIC/BBR choice computed from the fluid model.

The closed-form model of Mishra et al. predicts the equilibrium only for flows with one RTT
and for BBRv1 (eq. 25). The fluid model of Scherrer et al. (eqs. 1-41) has per-flow path
delays and BBRv2, so it can answer what the closed form cannot: equilibria with mixed RTTs
(Mishra §4.5 measured them, M-F10) and with BBRv2 (M-F11).

Every mix is one fluid-model run; per-flow goodput averaged after a warm-up goes through the
same unilateral-deviation test that judges the closed-form predictions and our measurements
(:mod:`coexist.closed_form.nash`). Runs are independent and deterministic, so they fan out
over threads
(the compiled solver releases the GIL) and their order does not change any result.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...closed_form import nash
from ...core.params import invalid
from ...runstore import fanout, lookup
from ..model import metrics, paper_setup, solve

BBR_VARIANTS = ("bbr1", "bbr2")

#: batch means per run that give each average its standard error (metrics.goodput_batches)
BATCHES = 4


def mix_flows(mix: Sequence[int], group_size: int, group_rtts_s: Sequence[float],
              variant: str) -> tuple[list[str], list[float], list[int]]:
    """CCAs, base RTTs and group index of every flow in ``mix`` (BBR flows per RTT group)."""
    ccas: list[str] = []
    rtts: list[float] = []
    groups: list[int] = []
    for g, (k, rtt) in enumerate(zip(mix, group_rtts_s, strict=True)):
        ccas += ["cubic"] * (group_size - k) + [variant] * k
        rtts += [rtt] * group_size
        groups += [g] * group_size
    return ccas, rtts, groups


def simulate_mix(mix: Sequence[int], *, group_size: int, group_rtts_s: Sequence[float],
                 buffer_bdp: float, capacity_bps: float, variant: str = "bbr1",
                 duration_s: float = 40.0, warmup_s: float = 10.0,
                 step_s: float = 5e-5, rtprop_expiry: bool = False,
                 cubic_recovery: bool = False,
                 reading: str = solve.DEFAULT_READING) -> pd.DataFrame:
    """Per-flow goodput of one mix in the fluid model, one row per (group, algorithm).

    The buffer is ``buffer_bdp`` times the BDP of the shortest RTT, as in Mishra §4.5. Every
    flow starts at an equal share of a BDP (published reading: of its own RTT's BDP, as the
    authors' code starts; printed: of the shortest RTT's), so no algorithm is favoured by
    its start. ``rtprop_expiry`` switches on the Linux RTprop filter expiry and
    ``cubic_recovery`` CUBIC's one cut per loss episode (:mod:`.solve`); ``reading`` picks
    the model's reading (:data:`.solve.READINGS`). Results are memoised on disk
    (:mod:`coexist.runstore.lookup`); a mix without BBR flows is one run whatever the BBR
    version and its RTprop filter, a mix without CUBIC flows one run whatever CUBIC's loss
    response.
    """
    if not any(mix):  # no BBR flow: neither the BBR version nor its RTprop filter matter
        variant, rtprop_expiry = BBR_VARIANTS[0], False
    if all(k == group_size for k in mix):  # no CUBIC flow: its loss response does not matter
        cubic_recovery = False
    inputs = {"mix": [int(k) for k in mix], "group_size": int(group_size),
              "group_rtts_s": [float(r) for r in group_rtts_s], "buffer_bdp": float(buffer_bdp),
              "capacity_bps": float(capacity_bps), "variant": variant,
              "duration_s": float(duration_s), "warmup_s": float(warmup_s),
              "step_s": float(step_s), "rtprop_expiry": bool(rtprop_expiry),
              "cubic_recovery": bool(cubic_recovery), "reading": _reading(reading)}
    # the table names the algorithms with nash's labels: a relabelling is a new result
    return lookup.memo("mix", inputs).copy()


def two_flow_bbr_share(*, rtt_s: float, buffer_bdp: float, capacity_bps: float,
                       duration_s: float, warmup_s: float, step_s: float = 5e-5,
                       rtprop_expiry: bool = False, cubic_recovery: bool = False,
                       reading: str = solve.DEFAULT_READING) -> float:
    """BBR's share of the goodput of 1 CUBIC vs 1 BBRv1 flow in the fluid model, the
    setting of Mishra et al.'s two-flow model (from :func:`two_flow_bbr_state`: the run a
    :func:`simulate_mix` of one BBR flow in a group of two makes)."""
    return two_flow_bbr_state(rtt_s=rtt_s, buffer_bdp=buffer_bdp, capacity_bps=capacity_bps,
                              duration_s=duration_s, warmup_s=warmup_s, step_s=step_s,
                              rtprop_expiry=rtprop_expiry,
                              cubic_recovery=cubic_recovery, reading=reading)["share"]


def two_flow_bbr_state(*, rtt_s: float, buffer_bdp: float, capacity_bps: float,
                       duration_s: float, warmup_s: float, step_s: float = 5e-5,
                       rtprop_expiry: bool = False, cubic_recovery: bool = False,
                       reading: str = solve.DEFAULT_READING) -> dict[str, float]:
    """BBR's share and operating point in the fluid model's 1 CUBIC vs 1 BBRv1 run, after
    ``warmup_s``: what M-F12 reads from the measured
    runs' ``ss`` samples (:func:`coexist.measured.socket_states.bbr_operating_point`).

    ``rtprop_s`` is the median of BBR's RTprop estimate τmin (eq. 9), ``probe_rtt_share``
    the share of time in ProbeRTT (m_prt, eqs. 10-12), and ``inflight_over_cwnd`` BBR's
    in-flight data over its window in force (eqs. 13-15, 23): mean of rate times RTT
    (Little's law at each instant, eq. 3) over the mean window, which eq. (15) keeps at
    most 1. (The model's own inflight v of eq. 19 integrates rate differences and need not
    stay near the data in flight.) ``queue_below_bdp``, ``btl_growth_below_bdp`` and
    ``cubic_low_over_high`` say whether CUBIC drains the queue far enough for BBR's
    estimate to grow (:func:`coexist.fluid.model.metrics.cubic_bbr_regime`). Memoised on disk
    like :func:`simulate_mix`."""
    inputs = {"rtt_s": float(rtt_s), "buffer_bdp": float(buffer_bdp),
              "capacity_bps": float(capacity_bps), "duration_s": float(duration_s),
              "warmup_s": float(warmup_s), "step_s": float(step_s),
              "rtprop_expiry": bool(rtprop_expiry), "cubic_recovery": bool(cubic_recovery),
              "reading": _reading(reading)}
    return dict(lookup.memo("two_flow_state", inputs))


def _pair_inputs(state_inputs: dict) -> dict:
    """The :func:`simulate_mix` inputs of the run behind a :func:`two_flow_bbr_state`: one
    BBRv1 flow in a group of two. One kernel run gives both results, and whichever is asked
    first stores the other (:func:`_pair_state_inputs`)."""
    i = dict(state_inputs)
    return {"mix": [1], "group_size": 2, "group_rtts_s": [i.pop("rtt_s")], **i,
            "variant": "bbr1"}


def _pair_state_inputs(mix_inputs: dict) -> dict | None:
    """The :func:`two_flow_bbr_state` inputs of a :func:`simulate_mix` run, if it is that
    run (one RTT, one BBRv1 flow of two), else None."""
    i = dict(mix_inputs)
    if not (i.pop("mix") == [1] and i.pop("group_size") == 2 and i.pop("variant") == "bbr1"
            and len(i["group_rtts_s"]) == 1):
        return None
    return {"rtt_s": i.pop("group_rtts_s")[0], **i}


def cubic_alone_state(*, rtt_s: float, buffer_bdp: float, capacity_bps: float,
                      duration_s: float, warmup_s: float, step_s: float = 5e-5,
                      cubic_recovery: bool = False, reading: str = solve.DEFAULT_READING
                      ) -> dict[str, float]:
    """One CUBIC flow alone in the fluid model (eqs. 1-8, 40-41), after ``warmup_s``:
    whether its window settles (``cubic_low_over_high`` near 1: the fixed point with a
    steady trickle of loss) or swings deep enough to drain the queue under one BDP
    (``queue_below_bdp``), read as in :func:`coexist.fluid.model.metrics.cubic_bbr_regime`; and
    the link's utilisation. ``cubic_recovery``: one cut per loss episode (:mod:`.solve`)
    instead of eqs. (40a-b). Memoised on disk like :func:`simulate_mix`."""
    inputs = {"rtt_s": float(rtt_s), "buffer_bdp": float(buffer_bdp),
              "capacity_bps": float(capacity_bps), "duration_s": float(duration_s),
              "warmup_s": float(warmup_s), "step_s": float(step_s),
              "cubic_recovery": bool(cubic_recovery), "reading": _reading(reading)}
    return dict(lookup.memo("cubic_alone", inputs))


@lookup.computes("cubic_alone")
def _cubic_alone(inputs: dict) -> dict[str, float]:
    """The run behind :func:`cubic_alone_state` (its memo ``inputs``)."""
    return _cubic_alone_state(**inputs)


def _cubic_alone_state(*, rtt_s, buffer_bdp, capacity_bps, duration_s, warmup_s,
                       step_s, cubic_recovery, reading) -> dict[str, float]:
    _, tr = _one_rtt_run((0,), 1, rtt_s, buffer_bdp, capacity_bps, duration_s, warmup_s,
                         step_s, False, cubic_recovery, reading)
    regime = metrics.cubic_bbr_regime(tr, warmup_s)
    return {"queue_below_bdp": regime["queue_below_bdp"],
            "cubic_low_over_high": regime["cubic_low_over_high"],
            "utilisation": metrics.link(tr, warmup_s)["utilisation"]}


def two_flow_shares(capacities_bps: Sequence[float], rtts_s: Sequence[float],
                    buffers_bdp: Sequence[float], *, duration_s: float, warmup_s: float,
                    step_s: float = 5e-5, workers: int | None = None,
                    versions: Sequence[bool] = (False, True),
                    cubic_recovery: bool = False,
                    reading: str = solve.DEFAULT_READING) -> pd.DataFrame:
    """BBR's share in 1 CUBIC vs 1 BBRv1 (:func:`two_flow_bbr_share`) at every capacity,
    RTT and buffer, for each of ``versions`` (``rtprop_expiry`` off: as published; on:
    with the Linux RTprop expiry), with CUBIC as published or, with ``cubic_recovery``,
    cutting once per loss episode: the fluid model's side of the two-flow figures (Mishra
    Figs. 1 and 3). One row per run: ``capacity_bps``, ``rtt_s``, ``buffer_bdp``,
    ``rtprop_expiry``, ``cubic_recovery``, ``bbr_share`` and the rest of
    :func:`two_flow_bbr_state`."""
    caps = [float(c) for c in capacities_bps]
    rtts = [float(r) for r in rtts_s]
    buffers = [float(b) for b in buffers_bdp]
    if not caps or any(not 1e3 <= c <= 1e11 for c in caps):
        raise invalid("capacities_bps", capacities_bps, "one or more capacities in "
                      "[1e3, 1e11] bit/s")
    _check(rtts, 2, buffers, "bbr1", duration_s, warmup_s)
    if not versions or any(not isinstance(v, bool) for v in versions):
        raise invalid("versions", versions, "one or more of False (as published) and True "
                      "(RTprop expiry)")
    jobs = list(itertools.product(caps, rtts, buffers, dict.fromkeys(versions)))

    def one(job: tuple[float, float, float, bool]) -> dict[str, float]:
        c, r, b, expiry = job
        return two_flow_bbr_state(rtt_s=r, buffer_bdp=b, capacity_bps=c, duration_s=duration_s,
                                  warmup_s=warmup_s, step_s=step_s, rtprop_expiry=expiry,
                                  cubic_recovery=cubic_recovery, reading=reading)

    states = pd.DataFrame(fanout.map_list(one, jobs, workers)).rename(
        columns={"share": "bbr_share"})
    table = pd.DataFrame(jobs, columns=["capacity_bps", "rtt_s", "buffer_bdp", "rtprop_expiry"])
    table["cubic_recovery"] = bool(cubic_recovery)
    table["reading"] = reading
    return pd.concat([table, states], axis=1)


@lookup.computes("two_flow_state")
def _two_flow_state(inputs: dict) -> dict[str, float]:
    """The run behind :func:`two_flow_bbr_state` (its memo ``inputs``); its mix's table is
    stored too."""
    i = inputs
    cfg, tr = _one_rtt_run((1,), 2, i["rtt_s"], i["buffer_bdp"], i["capacity_bps"],
                           i["duration_s"], i["warmup_s"], i["step_s"], i["rtprop_expiry"],
                           i["cubic_recovery"], i["reading"])
    lookup.put("mix", _pair_inputs(inputs), _mix_summary(tr, i["warmup_s"], [0, 0]))
    return _pair_state(cfg, tr, i["warmup_s"])


def _pair_state(cfg: solve.Config, tr: solve.Trace, warmup_s: float) -> dict[str, float]:
    """:func:`two_flow_bbr_state`'s values from the run of 1 CUBIC vs 1 BBRv1."""
    good = metrics.per_flow(tr, warmup_s)["goodput_bps"].to_numpy()
    i = [f.cca for f in cfg.flows].index("bbr1")
    late = tr.t >= warmup_s
    inflight = (tr.rate_pps[late, i] * tr.rtt_s[late, i]).mean()
    return {"share": float(good[i] / good.sum()),
            "rtprop_s": float(np.median(tr.bbr["tau_min"][late, i])),
            "probe_rtt_share": float(tr.bbr["m_prt"][late, i].mean()),
            "inflight_over_cwnd": float(inflight / tr.window_pkts[late, i].mean()),
            **metrics.cubic_bbr_regime(tr, warmup_s)}


def _one_rtt_run(mix, group_size, rtt_s, buffer_bdp, capacity_bps, duration_s, warmup_s,
                 step_s, rtprop_expiry, cubic_recovery, reading
                 ) -> tuple[solve.Config, solve.Trace]:
    """The BBRv1/CUBIC run of one RTT group, with a warm-up that leaves part of it."""
    cfg, _ = mix_config(mix, group_size, [rtt_s], buffer_bdp, capacity_bps, "bbr1",
                        duration_s, step_s, rtprop_expiry, cubic_recovery, reading)
    if not 0 <= warmup_s < duration_s:
        raise invalid("warmup_s", warmup_s, f"0 <= warm-up < duration ({duration_s:g} s)")
    return cfg, solve.run(cfg)


def mix_config(mix, group_size, group_rtts_s, buffer_bdp, capacity_bps, variant, duration_s,
               step_s, rtprop_expiry, cubic_recovery, reading=solve.DEFAULT_READING
               ) -> tuple[solve.Config, list[int]]:
    """The configuration of one mix as the equilibrium searches run it (buffer in BDPs of
    the shortest RTT, the reading's own start), and each flow's RTT group."""
    ccas, rtts, groups = mix_flows(mix, group_size, group_rtts_s, variant)
    n = len(ccas)
    pps = capacity_bps / (8 * solve.PACKET_BYTES)
    if reading == "published":
        start = paper_setup.start(ccas, rtts, buffer_bdp * pps * min(rtts), pps)
    else:
        start = {"initial_window": max(1.0, pps * min(rtts) / n)}
    cfg = solve.dumbbell(ccas, capacity_bps=capacity_bps, rtt_s=rtts, buffer_bdp=buffer_bdp,
                         duration_s=duration_s, step_s=step_s,
                         sample_s=max(step_s, min(1e-3, n / pps)),  # fine enough for jitter
                         rtprop_expiry=rtprop_expiry, cubic_recovery=cubic_recovery,
                         reading=reading, **start)
    return cfg, groups


def _reading(reading: str) -> str:
    if reading not in solve.READINGS:
        raise invalid("reading", reading, f"one of {', '.join(solve.READINGS)}")
    return reading


@lookup.computes("mix")
def _simulate_mix(inputs: dict) -> pd.DataFrame:
    """The run behind :func:`simulate_mix` (its memo ``inputs``); where it is also the run
    of a :func:`two_flow_bbr_state`, that is stored too."""
    run_in = {k: v for k, v in inputs.items() if k != "warmup_s"}
    cfg, groups = mix_config(**run_in)
    tr = solve.run(cfg)
    state_in = _pair_state_inputs(inputs)
    if state_in is not None:
        lookup.put("two_flow_state", state_in, _pair_state(cfg, tr, inputs["warmup_s"]))
    return _mix_summary(tr, inputs["warmup_s"], groups)


def _mix_summary(tr: solve.Trace, warmup_s: float, groups: Sequence[int]) -> pd.DataFrame:
    """:func:`simulate_mix`'s table from its run."""
    out = group_goodput(tr, warmup_s, groups)
    agg = metrics.aggregate(tr, warmup_s)
    out["utilisation"] = agg["utilisation"]
    out["loss_rate"] = agg["loss_rate"]
    out["queue_share"] = agg["queue_share"]
    out["queue_delay_s"] = agg["queue_delay_s"]
    return out


def group_goodput(tr: solve.Trace, warmup_s: float, groups: Sequence[int]) -> pd.DataFrame:
    """Per (group, algorithm) of a run: the per-flow goodput after ``warmup_s``
    (:func:`.metrics.per_flow`), its standard error from the run's batch means
    (:func:`.metrics.goodput_batches`, :data:`BATCHES` of them), and the number of flows."""
    pf = metrics.per_flow(tr, warmup_s)
    pf["group"] = list(groups)
    pf["cca"] = np.where(pf["cca"] == "cubic", nash.CUBIC, nash.BBR)
    out = (pf.groupby(["group", "cca"], as_index=False)
           .agg(goodput_bps=("goodput_bps", "mean"), flows=("flow", "size")))
    batch = metrics.goodput_batches(tr, warmup_s, BATCHES)
    out["goodput_se_bps"] = [
        float(batch[:, (pf["group"] == g) & (pf["cca"] == c)].mean(axis=1).std(ddof=1)
              / np.sqrt(BATCHES)) for g, c in zip(out["group"], out["cca"], strict=True)]
    return out


def _check(group_rtts_s, group_size, buffers_bdp, variant, duration_s, warmup_s) -> None:
    if not group_rtts_s or any(not 1e-4 <= r <= 10 for r in group_rtts_s):
        raise invalid("group_rtts_s", group_rtts_s, "one or more RTTs in [1e-4, 10] s")
    if not 1 <= group_size <= 100:
        raise invalid("group_size", group_size, "1..100 flows per RTT group")
    if len(buffers_bdp) == 0 or any(not 0.05 <= b <= 1000 for b in buffers_bdp):
        raise invalid("buffers_bdp", buffers_bdp, "one or more buffers in [0.05, 1000] BDP")
    if variant not in BBR_VARIANTS:
        raise invalid("variant", variant, f"one of {', '.join(BBR_VARIANTS)}")
    if not 0 <= warmup_s < duration_s:
        raise invalid("warmup_s", warmup_s, f"0 <= warmup_s < duration_s = {duration_s:g}")


def mix_table(group_rtts_s: Sequence[float], group_size: int, buffers_bdp: Sequence[float], *,
              capacity_bps: float, variant: str = "bbr1", duration_s: float = 40.0,
              warmup_s: float = 10.0, step_s: float = 5e-5, workers: int | None = None,
              progress: bool = True,
              mixes: Sequence[tuple[int, ...]] | None = None,
              rtprop_expiry: bool = False, cubic_recovery: bool = False,
              reading: str = solve.DEFAULT_READING) -> pd.DataFrame:
    """Per-flow goodput for every mix of every buffer: one fluid-model run per mix.

    A mix gives each RTT group's number of BBR flows (``0..group_size``); all
    ``(group_size + 1) ** len(group_rtts_s)`` mixes are simulated. Rows: buffer, mix (a
    tuple, and ``mix_label`` as text), group, its RTT, algorithm, per-flow goodput and the
    run's utilisation, loss rate, queue share and mean queueing delay (q/C, eq. 3).
    ``mixes`` restricts the runs to some mixes (the equilibrium test needs them all).
    """
    from ...core.progress import tqdm

    rtts = [float(r) for r in group_rtts_s]
    buffers = [float(b) for b in buffers_bdp]
    _check(rtts, group_size, buffers, variant, duration_s, warmup_s)
    every = list(itertools.product(range(group_size + 1), repeat=len(rtts)))
    if mixes is None:
        mixes = every
    else:
        mixes = [tuple(int(k) for k in m) for m in mixes]
        if not mixes or any(m not in every for m in mixes):
            raise invalid("mixes", mixes, f"tuples of {len(rtts)} BBR counts in "
                          f"0..{group_size}")
    jobs = [(b, m) for b in buffers for m in mixes]

    def one(job: tuple[float, tuple[int, ...]]) -> pd.DataFrame:
        b, m = job
        t = simulate_mix(m, group_size=group_size, group_rtts_s=rtts, buffer_bdp=b,
                         capacity_bps=capacity_bps, variant=variant, duration_s=duration_s,
                         warmup_s=warmup_s, step_s=step_s, rtprop_expiry=rtprop_expiry,
                         cubic_recovery=cubic_recovery, reading=reading)
        t.insert(0, "buffer_bdp", b)
        t.insert(1, "mix", [m] * len(t))
        return t

    parts = list(tqdm(fanout.imap(one, jobs, workers), total=len(jobs), disable=not progress,
                      desc=f"fluid mixes ({variant})", unit="run"))
    table = pd.concat(parts, ignore_index=True)
    table["mix_label"] = table["mix"].map(nash.mix_label)
    table["rtt_s"] = table["group"].map(dict(enumerate(rtts)))
    table["group_size"] = group_size
    return table


def equilibria(table: pd.DataFrame, tol: float = 0.0, z: float = nash.SPREAD_Z
               ) -> pd.DataFrame:
    """The Nash equilibria in a :func:`mix_table`, one row per (buffer, equilibrium mix).

    The per-flow goodputs go through :func:`coexist.closed_form.nash.grouped_equilibria`, which with
    one RTT group is :func:`coexist.closed_form.nash.equilibria`. Each run's averages come with the
    standard errors of their batch means (``goodput_se_bps``): a switch counts as
    profitable only if it gains more than ``z`` combined standard errors, so every mix that
    is an equilibrium within the run's own precision is listed (``z = 0``, or a table
    without that column: the averages taken as exact). The searches turn on small
    differences between averages that settle slowly (the RTprop expiry's ProbeRTT cycles),
    and a longer run can move a point equilibrium by a flow or more; S-Step checks that
    longer runs' equilibria lie inside these sets (:mod:`.run_length`). A buffer with no
    equilibrium has no row.
    """
    rows = []
    n_groups = len(table["mix"].iloc[0])
    size = int(table["group_size"].iloc[0])
    for b, part in table.groupby("buffer_bdp", sort=True):
        spread = (nash.rates_by_mix(part, "goodput_se_bps")
                  if z > 0 and "goodput_se_bps" in part else None)
        found = nash.grouped_equilibria(nash.rates_by_mix(part), [size] * n_groups, tol,
                                        spread=spread, z=z)
        rows += [{"buffer_bdp": b, "mix": m, "mix_label": nash.mix_label(m),
                  "bbr_flows": sum(m)} for m in found]
    return pd.DataFrame(rows, columns=["buffer_bdp", "mix", "mix_label", "bbr_flows"])


#: the fluid model's two variants WhatIf draws: as published, and with RTprop expiring
SHARE_VARIANTS = {False: "fluid model", True: "fluid model, RTprop expiring"}


def share_lines(*, capacities_mbps: Sequence[float], rtts_ms: Sequence[float],
                flow_counts: Sequence[int], buffers_bdp: Sequence[float],
                multi_capacities_mbps: Sequence[float], multi_rtts_ms: Sequence[float],
                duration_s: float, warmup_s: float, step_s: float) -> pd.DataFrame:
    """The BBR flows' total share of the link for every mix (1 to n - 1 BBR flows at one
    RTT) at each buffer: every flow count's runs at the ``multi_`` capacities and RTTs, two
    flows only elsewhere; as published and with RTprop expiring (:data:`SHARE_VARIANTS`).
    One run per mix (:func:`mix_table`). Rows: ``source``, ``capacity_mbps``, ``rtt_ms``,
    ``n_flows``, ``n_bbr``, ``buffer_bdp``, ``share``."""
    parts = []
    for cap, rtt, n, expiry in itertools.product(capacities_mbps, rtts_ms, flow_counts,
                                                 SHARE_VARIANTS):
        if n > 2 and not (np.isclose(cap, multi_capacities_mbps).any()
                          and np.isclose(rtt, multi_rtts_ms).any()):
            continue
        t = mix_table([rtt / 1e3], n, buffers_bdp, capacity_bps=cap * 1e6,
                      duration_s=duration_s, warmup_s=warmup_s, step_s=step_s,
                      progress=False, mixes=[(k,) for k in range(1, n)],
                      rtprop_expiry=expiry)
        tot = t.assign(total=t.goodput_bps * t.flows).pivot_table(
            index=["buffer_bdp", "mix_label"], columns="cca", values="total").reset_index()
        parts.append(pd.DataFrame({
            "source": SHARE_VARIANTS[expiry], "capacity_mbps": cap, "rtt_ms": rtt,
            "n_flows": n, "n_bbr": tot.mix_label.astype(int), "buffer_bdp": tot.buffer_bdp,
            "share": tot.bbr / (tot.bbr + tot.cubic)}))
    return pd.concat(parts, ignore_index=True)


def variant_equilibria(group_rtts_s: Sequence[float], group_size: int,
                       buffers_bdp: Sequence[float], variants: dict[tuple[bool, bool], str], *,
                       capacity_bps: float, duration_s: float, warmup_s: float, step_s: float
                       ) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Every mix of RTT groups (:func:`mix_table`) and its equilibria (:func:`equilibria`)
    for each variant of the model (``variants``: (RTprop expiry, CUBIC recovery) -> name):
    name -> mix table, and name -> equilibria."""
    tables, found = {}, {}
    for (expiry, recovery), name in variants.items():
        tables[name] = mix_table(group_rtts_s, group_size, buffers_bdp,
                                 capacity_bps=capacity_bps, duration_s=duration_s,
                                 warmup_s=warmup_s, step_s=step_s, progress=False,
                                 rtprop_expiry=expiry, cubic_recovery=recovery)
        found[name] = equilibria(tables[name])
    return tables, found
