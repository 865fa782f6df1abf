"""The authors' reference runs (``data/reference/``) and our model configured identically.

``pipelines/authors_reference.py`` ran the public code of Scherrer et al. on a grid of
configurations and stored what it computed: per run the configuration as their code read it
and their metrics, per flow its RTT as their code drew it and its mean rate. This module
reads those tables (validated, nothing dropped) and turns each run into a
:class:`.solve.Config` of the published reading with the same flows, capacity, buffer, step,
start and BBRv2 phases, so the two models can be compared row by row.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from ...core import paths
from ...core.params import ParameterError
from ...runstore import lookup
from ..model import metrics, paper_setup, published, solve

REFERENCE = paths.REFERENCE
CCA_NAMES = {"RENO": "reno", "CUBIC": "cubic", "BBR": "bbr1", "BBR2": "bbr2"}
RUN_COLUMNS = {"run": str, "group": str, "senders": int, "ccas": str, "capacity_mbps": float,
               "link_latency_ms": float, "source_latency_min_ms": float,
               "source_latency_max_ms": float, "buffer_unit": float, "buffer_pkts": int,
               "aqm": str, "step_ms": float, "duration_s": float, "warmup_s": float,
               "avg_queue_pkts": float, "jain": float, "loss": float, "utilization": float,
               "jitter_ms": float, "wall_s": float}
FLOW_COLUMNS = {"run": str, "flow": int, "cca": str, "d0_ms": float, "rtt_ms": float,
                "mean_rate_mbps": float, "share": float}
#: Agreement we require of our published reading with the authors' code, per row: mean
#: queue within 0.05 of the buffer, Jain index within 0.03, loss within 0.005 (absolute),
#: utilisation within 0.01, every flow's share of the rate within 0.05.
TOLERANCES = {"queue_share": 0.05, "jain": 0.03, "loss": 0.005, "utilization": 0.01,
              "share": 0.05}


def _read(path: Path, columns: dict[str, type]) -> pd.DataFrame:
    if not path.is_file():
        raise ParameterError(f"reference table {path} is missing (run "
                             "pipelines/authors_reference.py)")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(df.columns) != list(columns):
        raise ParameterError(f"{path}: columns {list(df.columns)}, expected {list(columns)}")
    for col, kind in columns.items():
        for line, text in enumerate(df[col], start=2):
            try:
                kind(text) if kind is not int else int(text)
            except ValueError:
                raise ParameterError(f"{path}:{line}: column {col!r} = {text!r} is not "
                                     f"a valid {kind.__name__}") from None
        df[col] = df[col].astype(kind)
    return df


def runs(ref: Path = REFERENCE) -> pd.DataFrame:
    """The reference runs, one row each, validated."""
    df = _read(Path(ref) / "authors_fluid_runs.csv", RUN_COLUMNS)
    dup = df["run"].duplicated()
    if dup.any():
        raise ParameterError(f"authors_fluid_runs.csv: run {df['run'][dup].iloc[0]!r} twice")
    return df


def flows(ref: Path = REFERENCE) -> pd.DataFrame:
    """The reference runs' flows, one row per flow, validated against the runs table."""
    df = _read(Path(ref) / "authors_fluid_flows.csv", FLOW_COLUMNS)
    known = runs(ref).set_index("run")["senders"]
    counts = df.groupby("run")["flow"].agg(["count", "max"])
    for run, senders in known.items():
        if run not in counts.index or counts.loc[run, "count"] != senders \
                or counts.loc[run, "max"] != senders - 1:
            raise ParameterError(f"authors_fluid_flows.csv: run {run!r} needs flows "
                                 f"0..{senders - 1} once each")
    unknown = set(df["run"]) - set(known.index)
    if unknown:
        raise ParameterError(f"authors_fluid_flows.csv: unknown run {sorted(unknown)[0]!r}")
    return df


def config(run: pd.Series, run_flows: pd.DataFrame, step_s: float | None = None) -> solve.Config:
    """Our published reading configured as the authors' code was for ``run``.

    Capacity and buffer in the code's 1514-B packets; each flow's source latency is its
    forward delay and the rest of its RTT its backward delay; BBRv2's period phases are the
    draws that follow the source latencies in the code's seeded generator; its initial
    inflight_hi follows the code's buffer unit. ``step_s`` overrides the run's step.
    """
    run_flows = run_flows.sort_values("flow")
    fl = tuple(solve.Flow(CCA_NAMES[r.cca], r.d0_ms / 1e3, (r.rtt_ms - r.d0_ms) / 1e3)
               for r in run_flows.itertuples())
    capacity_pps = run.capacity_mbps * 1e6 / (published.MSS_BYTES * 8)
    return solve.Config(capacity_pps, float(run.buffer_pkts), fl, duration_s=run.duration_s,
                        aqm="red" if run.aqm == "RED" else "droptail",
                        step_s=step_s if step_s is not None else run.step_ms / 1e3,
                        sample_s=1e-3, reading="published",
                        bbr2_phase=paper_setup.paper_phases(len(run_flows)),
                        inflight_hi_factor=paper_setup.inflight_hi_factor(run.buffer_unit))


def compare(run: pd.Series, run_flows: pd.DataFrame, step_s: float | None = None) -> dict:
    """Our published reading on ``run``: its metrics beside the authors', the largest
    difference of any flow's share, and whether each is within :data:`TOLERANCES`."""
    _, m = solve.simulate_published(config(run, run_flows, step_s), run.warmup_s)
    ours_share = m["rates_pps"] / m["rates_pps"].sum()
    theirs_share = run_flows.sort_values("flow")["share"].to_numpy()
    row = {"run": run.run, "group": run.group, "ccas": run.ccas, "aqm": run.aqm,
           "buffer_pkts": run.buffer_pkts,
           "queue_authors": run.avg_queue_pkts, "queue_ours": m["avg_queue_pkts"],
           "jain_authors": run.jain, "jain_ours": m["jain"],
           "loss_authors": run.loss, "loss_ours": m["loss"],
           "utilization_authors": run.utilization, "utilization_ours": m["utilization"],
           "jitter_ms_authors": run.jitter_ms, "jitter_ms_ours": m["jitter_ms"],
           "share_max_diff": float(np.abs(ours_share - theirs_share).max())}
    diffs = {"queue_share": abs(row["queue_ours"] - row["queue_authors"]) / run.buffer_pkts,
             "jain": abs(row["jain_ours"] - row["jain_authors"]),
             "loss": abs(row["loss_ours"] - row["loss_authors"]),
             "utilization": abs(row["utilization_ours"] - row["utilization_authors"]),
             "share": row["share_max_diff"]}
    row["within"] = all(diffs[k] <= TOLERANCES[k] for k in TOLERANCES)
    row["worst"] = max(diffs, key=lambda k: diffs[k] / TOLERANCES[k])
    return row


def compared(run: pd.Series, run_flows: pd.DataFrame) -> dict:
    """:func:`compare` at the run's own step, memoised (:mod:`coexist.runstore.lookup`): the
    reference tests and S-Readings ask for the same rows, and whichever comes first computes
    them."""
    return lookup.memo("authors-published", _memo_inputs(run, run_flows))


@lookup.computes("authors-published")
def _compared(inputs: dict) -> dict:
    """The run behind :func:`compared` (its memo ``inputs``)."""
    return compare(*_from_memo_inputs(inputs))


def _memo_inputs(run: pd.Series, run_flows: pd.DataFrame) -> dict:
    return {"run": run.to_dict(), "flows": run_flows.to_dict("list")}


def _from_memo_inputs(inputs: dict) -> tuple[pd.Series, pd.DataFrame]:
    return pd.Series(inputs["run"]), pd.DataFrame(inputs["flows"])


def printed_config(run: pd.Series, run_flows: pd.DataFrame) -> solve.Config:
    """The same run in the printed reading (:mod:`.solve`'s own kernel), set up as the book's
    metric figures set it up: every sender starts with an equal share of one BDP of the
    shortest RTT, BBRv2's inflight_hi at 5/4 of that window, no period phases."""
    cfg = config(run, run_flows)
    bdp = cfg.capacity_pps * min(f.d_p for f in cfg.flows)
    return dataclasses.replace(cfg, reading="printed", bbr2_phase=0.0, inflight_hi_factor=1.25,
                               initial_window=bdp / len(cfg.flows))


def readings(run: pd.Series, run_flows: pd.DataFrame) -> list[dict]:
    """One reference run three ways: the authors' code (their stored outputs), our published
    reading and the printed reading. Queue as a share of the buffer, Jain index, loss,
    utilisation and the largest difference of a flow's share of the rate from the authors'.
    The printed reading's metrics come from its trace sampled every millisecond."""
    pub = compared(run, run_flows)
    pri = lookup.memo("authors-printed", _memo_inputs(run, run_flows))
    theirs = run_flows.sort_values("flow")["share"].to_numpy()
    base = {"run": run.run, "group": run.group, "ccas": run.ccas, "aqm": run.aqm,
            "buffer_unit": run.buffer_unit,
            "rtt_ms": f"{run_flows.rtt_ms.min():g}-{run_flows.rtt_ms.max():g}"}
    out = []
    for model, vals in (
            ("authors' code", {"queue_share": run.avg_queue_pkts / run.buffer_pkts,
                               "jain": run.jain, "loss": run.loss,
                               "utilization": run.utilization, "share_diff": 0.0}),
            ("published reading", {"queue_share": pub["queue_ours"] / run.buffer_pkts,
                                   "jain": pub["jain_ours"], "loss": pub["loss_ours"],
                                   "utilization": pub["utilization_ours"],
                                   "share_diff": pub["share_max_diff"]}),
            ("printed reading", {**{k: pri[k] for k in ("queue_share", "jain", "loss",
                                                        "utilization")},
                                 "share_diff": float(np.abs(pri["shares"] - theirs).max())})):
        out.append({**base, "model": model, **{k: float(v) for k, v in vals.items()}})
    return out


@lookup.computes("authors-printed")
def _printed(inputs: dict) -> dict:
    """The printed reading's metrics of one reference run (:func:`readings`), from its
    trace sampled every millisecond."""
    run, run_flows = _from_memo_inputs(inputs)
    tr = solve.run(printed_config(run, run_flows))
    on_link = metrics.link(tr, run.warmup_s)
    rates = tr.rate_pps[tr.t >= run.warmup_s].mean(axis=0)
    return {"queue_share": on_link["queue_share"], "jain": metrics.jain(rates),
            "loss": on_link["loss_rate"], "utilization": on_link["utilisation"],
            "shares": rates / rates.sum()}
