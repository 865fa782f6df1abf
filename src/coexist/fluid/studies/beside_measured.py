"""Fluid-model runs at the testbed's settings, read as the measurements beside them are
read (:mod:`coexist.measured.fluid_vs_measured` sets the two side by side): the dumbbell of
the metrics figures (Scherrer et al. §4.3, Figs. 6-10 and 13-17) built from plain
parameters (capacity, RTT range, flows, buffer, AQM, start), a run's aggregate metrics after
its warm-up, and its queue over time windows with its loss episodes. Both results are
memoised kinds (``aggregate``, ``queue_transient``), computed from the run's configuration
alone."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from ...core.params import invalid
from ...runstore import lookup
from ..model import metrics, solve

NAMES = {"reno": "Reno", "cubic": "CUBIC", "bbr1": "BBRv1", "bbr2": "BBRv2"}


def pair_label(ccas: Sequence[str]) -> str:
    """'A/B' for the algorithms in ``ccas`` (model names), in the order of :data:`NAMES`;
    'A/A' when all flows run one algorithm."""
    present = [c for c in NAMES if c in set(ccas)]
    if not 1 <= len(present) <= 2 or len(present) != len(set(ccas)):
        raise invalid("ccas", sorted(set(ccas)), f"one or two of {', '.join(NAMES)}")
    a, b = (present * 2)[:2]
    return f"{NAMES[a]}/{NAMES[b]}"


def _named_pairs(labels: Collection[str] | None) -> list[tuple[str, str]]:
    """The model's algorithm pairs with these labels (:func:`pair_label`), or every pair."""
    every = list(itertools.combinations_with_replacement(NAMES, 2))
    if labels is None:
        return every
    unknown = sorted(set(labels) - {pair_label(p) for p in every})
    if unknown:
        raise invalid("pairs", unknown, "labels such as "
                      + ", ".join(pair_label(p) for p in every[:3]))
    return [p for p in every if pair_label(p) in set(labels)]


#: How the model's senders start (the model has no start-up phase). ``paper``: every sender
#: with an equal share of one BDP of the shortest RTT, as Scherrer et al. set it up.
#: ``post_loss`` (our change): every loss-based sender where one multiplicative decrease
#: leaves it once the full pipe (that BDP plus the buffer) is shared equally, CUBIC at
#: beta = 0.7 of it (eq. 41's w_max cut) and Reno at half (eq. 39), as after Linux's
#: slow start ends in a loss; BBR senders as in ``paper``.
STARTS = ("paper", "post_loss")
_DECREASE = {"reno": 0.5}


def initial_windows(ccas: Sequence[str], *, bdp_pkts: float, buffer_pkts: float,
                    start: str) -> float | tuple[float, ...]:
    """Every sender's window at the model's start under ``start`` (one of :data:`STARTS`),
    in packets: one value for ``paper``, one per sender for ``post_loss``."""
    from ..model import cubic

    n = len(ccas)
    if start == "paper":
        return bdp_pkts / n
    if start != "post_loss":
        raise invalid("start", start, f"one of {', '.join(STARTS)}")
    beta = {"cubic": cubic.BETA_CUBIC, **_DECREASE}
    return tuple(max(1.0, beta[c] * (bdp_pkts + buffer_pkts) / n) if c in beta
                 else bdp_pkts / n for c in ccas)


def _config(pair: tuple[str, str], *, capacity_mbps: float, rtt_min_ms: float,
            rtt_max_ms: float, n_flows: int, buffer_bdp: float, duration_s: float,
            aqm: str = "droptail", start: str = "paper", reading: str | None = None,
            rtprop_expiry: bool = False, cubic_recovery: bool = False):
    """The fluid dumbbell of the metrics figures: RTTs spread evenly over the range, flows
    alternating between the pair's algorithms, starting as ``start`` says
    (:func:`initial_windows`); in the published reading, as the authors' code starts,
    with ``post_loss`` setting every sender's initial window as it says. ``reading`` None is
    the fluid model's default (:data:`coexist.fluid.model.solve.DEFAULT_READING`). The trace is
    sampled once per virtual packet interval (N/C, the paper's jitter, §4.3.5), or once per
    step where that interval is shorter (above about 1.2 Gbit/s per sender)."""
    from ..model import paper_setup, solve

    reading = solve.DEFAULT_READING if reading is None else reading

    rtts = list(np.linspace(rtt_min_ms, rtt_max_ms, n_flows) / 1e3)
    pps = capacity_mbps * 1e6 / (8 * solve.PACKET_BYTES)
    ccas = [pair[i % 2] for i in range(n_flows)]
    bdp = pps * rtts[0]
    if reading == "published":
        kw = paper_setup.start(ccas, rtts, buffer_bdp * bdp, pps)
        if start != "paper":  # the authors' start, with our loss-based senders' windows
            kw["initial_window"] = initial_windows(ccas, bdp_pkts=bdp,
                                                   buffer_pkts=buffer_bdp * bdp, start=start)
    else:
        kw = {"initial_window": initial_windows(ccas, bdp_pkts=bdp,
                                                buffer_pkts=buffer_bdp * bdp, start=start)}
    return solve.dumbbell(ccas, capacity_bps=capacity_mbps * 1e6, rtt_s=rtts,
                          buffer_bdp=buffer_bdp, duration_s=duration_s, aqm=aqm,
                          sample_s=max(solve.Config.step_s, min(1e-3, n_flows / pps)),
                          reading=reading,
                          rtprop_expiry=rtprop_expiry, cubic_recovery=cubic_recovery, **kw)


def model_metrics(*, capacity_mbps: float, rtt_min_ms: float, rtt_max_ms: float,
                  n_flows: int, buffers_bdp: Sequence[float], duration_s: float,
                  warmup_s: float, aqms: Sequence[str] = ("droptail", "red"),
                  pairs: Collection[str] | None = None, start: str = "paper",
                  reading: str | None = None, rtprop_expiry: bool = False,
                  cubic_recovery: bool = False) -> pd.DataFrame:
    """The five metrics from the fluid model for every pair (or only ``pairs``, labels
    as :func:`pair_label` gives them), AQM and buffer.

    RTTs are spread evenly over the range (deterministic, unlike the paper's random draw);
    flows alternate between the pair's algorithms and start as ``start`` says (one of
    :data:`STARTS`; the paper's equal share of one BDP by default), as the model has no
    start-up phase.
    """
    if not 0 <= warmup_s < duration_s:
        raise invalid("warmup_s", warmup_s, f"0 <= warmup_s < duration_s = {duration_s:g}")
    window = (float(warmup_s), float(duration_s))
    return window_metrics(
        capacity_mbps=capacity_mbps, rtt_min_ms=rtt_min_ms, rtt_max_ms=rtt_max_ms,
        n_flows=n_flows, buffers_bdp=buffers_bdp, windows=[window], aqms=aqms, pairs=pairs,
        start=start, reading=reading, rtprop_expiry=rtprop_expiry,
        cubic_recovery=cubic_recovery)[window]


def window_metrics(*, capacity_mbps: float, rtt_min_ms: float, rtt_max_ms: float,
                   n_flows: int, buffers_bdp: Sequence[float],
                   windows: Sequence[tuple[float, float]],
                   aqms: Sequence[str] = ("droptail", "red"),
                   pairs: Collection[str] | None = None, start: str = "paper",
                   reading: str | None = None, rtprop_expiry: bool = False,
                   cubic_recovery: bool = False) -> dict[tuple[float, float], pd.DataFrame]:
    """:func:`model_metrics` for each (warm-up, end) window: a run as long as the window
    ends, averaged after its warm-up. Each setting runs once, as long as the latest window
    it still needs ends; the shorter windows read its first part
    (:func:`coexist.fluid.model.solve.first_part`), which is the shorter run itself. Every window's
    metrics are memoised as a run of its own length would be, so any page asking for one
    of them later reads it."""
    from ...core.progress import tqdm
    from ...runstore import fanout, lookup
    from ..model import metrics, solve

    chosen = _named_pairs(pairs)
    wins = list(dict.fromkeys((float(a), float(b)) for a, b in windows))
    if not wins or any(not 0 <= a < b for a, b in wins):
        raise invalid("windows", windows, "one or more (warmup_s, end_s) with "
                      "0 <= warmup_s < end_s")
    jobs = list(itertools.product(chosen, aqms, buffers_bdp))

    def one(job: tuple) -> dict[tuple[float, float], dict]:
        (a, b), aqm, buf = job
        cfgs = {w: _config((a, b), capacity_mbps=capacity_mbps, rtt_min_ms=rtt_min_ms,
                           rtt_max_ms=rtt_max_ms, n_flows=n_flows, buffer_bdp=buf,
                           duration_s=w[1], aqm=aqm, start=start, reading=reading,
                           rtprop_expiry=rtprop_expiry, cubic_recovery=cubic_recovery)
                for w in wins}
        inputs = {w: {"config": repr(cfgs[w]), "warmup_s": w[0]} for w in wins}
        missing = [w for w in wins if not lookup.stored("aggregate", inputs[w])]
        longest = max(missing or wins, key=lambda w: w[1])
        shared: dict[tuple[float, float], dict] = {}

        def compute() -> dict:
            tr = solve.run(cfgs[longest])
            for w in missing:
                shared[w] = metrics.aggregate(solve.first_part(tr, cfgs[w]), w[0])
                if w != longest:  # this page reads it from the shared run
                    lookup.put("aggregate", inputs[w], shared[w], read=True)
            return shared[longest]

        out = {longest: lookup.memo("aggregate", inputs[longest], compute)}
        for w in wins:
            if w not in out:  # read from the shared run, or a result stored before
                out[w] = shared[w] if w in shared else lookup.memo("aggregate", inputs[w])
        return out

    results = tqdm(fanout.imap(one, jobs), total=len(jobs), desc="fluid settings",
                   unit="run", disable=None)
    rows: dict[tuple[float, float], list[dict]] = {w: [] for w in wins}
    for ((a, b), aqm, buf), by_window in zip(jobs, results, strict=True):
        for w, m in by_window.items():
            rows[w].append({"pair": pair_label([a, b]), "aqm": aqm, "buffer_bdp": float(buf),
                            "jain": m["jain"], "loss_rate": m["loss_rate"],
                            "queue_share": m["queue_share"], "utilisation": m["utilisation"],
                            "jitter_ms": m["jitter_s"] * 1e3})
    return {w: pd.DataFrame(r) for w, r in rows.items()}


def model_queue_transient(pair: str, *, capacity_mbps: float, rtt_min_ms: float,
                          rtt_max_ms: float, n_flows: int, buffers_bdp: Sequence[float],
                          windows: Sequence[tuple[float, float]], start: str = "paper",
                          reading: str | None = None
                          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How the model's drop-tail queue settles after its start, for one pair (a label as
    :func:`pair_label` gives it): per buffer, the mean queue share over every (start, end)
    window of one run as long as the last window ends, and that run's loss episodes
    (:func:`coexist.fluid.model.metrics.loss_episodes`). The paper's figures average 2-7 s of such a
    run; the later windows show whether that is the model's steady state. ``start`` and
    ``reading`` as in :func:`model_metrics`."""
    from ...core.progress import tqdm
    from ...runstore import lookup

    (chosen,) = _named_pairs([pair])
    if not windows:
        raise invalid("windows", windows, "at least one (start_s, end_s)")
    end_s = max(float(e) for _, e in windows)
    shares, episodes = [], []
    for buf in tqdm(buffers_bdp, desc="fluid runs", unit="run", disable=None):
        cfg = _config(chosen, capacity_mbps=capacity_mbps, rtt_min_ms=rtt_min_ms,
                      rtt_max_ms=rtt_max_ms, n_flows=n_flows, buffer_bdp=buf,
                      duration_s=end_s, start=start, reading=reading)

        q, ep = lookup.memo("queue_transient", {"config": repr(cfg),
                                               "windows": [list(map(float, w)) for w in windows]})
        shares += [{"buffer_bdp": float(buf), "start_s": float(a), "end_s": float(b),
                    "queue_share": v} for (a, b), v in zip(windows, q, strict=True)]
        episodes.append(ep.assign(buffer_bdp=float(buf)))
    return pd.DataFrame(shares), pd.concat(episodes, ignore_index=True)




@lookup.computes("aggregate")
def _aggregate(inputs: dict) -> dict:
    """One setting's aggregate metrics (the runs of
    :func:`coexist.measured.fluid_vs_measured.window_metrics`): the run of the memo
    ``inputs``' configuration, averaged after its warm-up."""
    return metrics.aggregate(solve.run(solve.config_from_repr(inputs["config"])),
                             inputs["warmup_s"])


@lookup.computes("queue_transient")
def _queue_transient(inputs: dict) -> tuple[list[float], pd.DataFrame]:
    """The run behind :func:`coexist.measured.fluid_vs_measured.model_queue_transient` (its
    memo ``inputs``): the queue share over each window and the run's loss episodes."""
    tr = solve.run(solve.config_from_repr(inputs["config"]))
    return ([metrics.queue_share_between(tr, float(a), float(b)) for a, b in inputs["windows"]],
            metrics.loss_episodes(tr))
