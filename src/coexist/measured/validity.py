"""Why stored runs are valid or not: the testbed's gates read against the host's steal and
stalls, and what an invalid run would have reported (T-F1's tables).

Every function reads :func:`coexist.data.run_summaries`' table, one row per stored run
attempt, valid or not.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from scipy.stats import mannwhitneyu

#: the gates that time the harness (the probe's RTT and the delay line's lateness): the ones
#: the host's steal and stalls can fail
TIMING_GATES = "delay_lateness|probe_rtt"


def timing_failed(reasons: pd.Series) -> pd.Series:
    """Whether each run failed a timing gate (:data:`TIMING_GATES`) among its reasons."""
    return reasons.str.contains(TIMING_GATES)


def value_range(values: pd.Series) -> str:
    """A column's smallest to largest value, three significant digits ("-" if empty)."""
    values = values.dropna()
    return f"{values.min():.3g}-{values.max():.3g}" if len(values) else "-"


def _failure_rate(table: pd.DataFrame) -> pd.DataFrame:
    table["failure_rate"] = (table["timing_failures"]
                             / table["runs"].where(table["runs"] > 0)).round(3)
    return table


def by_steal(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs and timing failures by the hypervisor's steal over the run (% of CPU time, in
    bands), with the failure rate of each band."""
    timing = runs.dropna(subset=["steal_pct"]).copy()
    timing["timing_fail"] = timing_failed(timing["reasons"])
    timing["steal"] = pd.cut(timing["steal_pct"], [-0.001, 0.1, 0.5, 1, 2, 100],
                             labels=["≤ 0.1 %", "0.1-0.5 %", "0.5-1 %", "1-2 %", "> 2 %"])
    return _failure_rate(timing.groupby("steal", observed=False).agg(
        runs=("run_id", "size"), timing_failures=("timing_fail", "sum")))


def by_steal_burst(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs and timing failures by the steal of the run's busiest second and by its steal
    over the whole run (above or below 1 %): a burst fails a run that little steal overall
    would not explain."""
    burst = runs.dropna(subset=["steal_burst_s", "steal_pct"]).copy()
    burst["timing_fail"] = timing_failed(burst["reasons"])
    burst["busiest second"] = pd.cut(1e3 * burst["steal_burst_s"],
                                     [-0.001, 0.5, 20, 100, float("inf")],
                                     labels=["no steal", "10-20 ms", "30-100 ms", "> 100 ms"])
    burst["over the run"] = burst["steal_pct"].gt(1).map({False: "≤ 1 %", True: "> 1 %"})
    return _failure_rate(burst.groupby(["over the run", "busiest second"], observed=False).agg(
        runs=("run_id", "size"), timing_failures=("timing_fail", "sum")))


def probe_auc(runs: pd.DataFrame) -> float:
    """How well the pre-run wake-up probe (its p99.9, ms) tells invalid runs from valid
    ones: the probability that an invalid run's probe reads higher than a valid run's
    (the Mann-Whitney U statistic over the pairs; 0.5 tells nothing). NaN without both."""
    good = runs.loc[runs["valid"], "wake_p999_ms"]
    bad = runs.loc[~runs["valid"], "wake_p999_ms"]
    if not (len(good) and len(bad)):
        return float("nan")
    return mannwhitneyu(bad, good).statistic / (len(bad) * len(good))


def against_valid_repeats(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's distance from the mean of its configuration's *other* valid runs, in BBR's
    share (``d_bbr_share``; NaN where every flow is BBR, so the share is 1 in every run)
    and in Jain's index (``d_jain_index``): for valid runs with another valid repeat, and
    for runs that failed only timing gates and ran to the end, what a gate that let them
    through would have admitted. ``runs`` names the run's validity and its delay-line
    lateness band."""
    valid = runs[runs["valid"]]
    per_point = valid.groupby(["campaign", "point"]).agg(
        n_valid=("run_id", "size"), share_sum=("bbr_share", "sum"),
        jain_sum=("jain_index", "sum")).reset_index()
    cmp = runs.merge(per_point, on=["campaign", "point"])
    # the reference: the mean of the configuration's valid runs, leaving out the run itself
    others = cmp["n_valid"] - cmp["valid"].astype(int)
    for col, total in (("bbr_share", "share_sum"), ("jain_index", "jain_sum")):
        ref = (cmp[total] - cmp[col].where(cmp["valid"], 0.0)) / others.where(others > 0)
        cmp[f"d_{col}"] = (cmp[col] - ref).abs()
    cmp.loc[cmp["share_sum"] == cmp["n_valid"], "d_bbr_share"] = float("nan")
    # runs that failed only timing gates; a run stopped early has no results to compare
    timing_only = cmp["timing_only"] & cmp["stopped_early_s"].isna()
    cmp = cmp[(cmp["valid"] & (others > 0)) | timing_only].copy()
    cmp["runs"] = pd.cut(cmp["lateness_p999_ms"], [0, 1, 5, 20, float("inf")], right=False,
                         labels=["lateness < 1 ms", "1-5 ms", "5-20 ms", "≥ 20 ms"])
    cmp["runs"] = cmp["runs"].astype(str).radd(cmp["valid"].map(
        {True: "valid, ", False: "invalid, "}))
    return cmp


def gate_check(runs: pd.DataFrame) -> pd.DataFrame:
    """:func:`against_valid_repeats` summarised per group of runs: how many, and the median
    and largest distance in BBR's share and in Jain's index."""
    return against_valid_repeats(runs).groupby("runs").agg(
        runs=("run_id", "size"),
        share_runs=("d_bbr_share", "count"), share_median=("d_bbr_share", "median"),
        share_max=("d_bbr_share", "max"),
        jain_median=("d_jain_index", "median"), jain_max=("d_jain_index", "max"))



def rate_ceiling(rates: pd.DataFrame) -> tuple[float, pd.DataFrame, pd.DataFrame]:
    """The highest rate (the index of ``rates``, one row per rate with ``runs`` and
    ``valid`` counts) at which every run was valid, below the first rate at which one was
    not: the testbed's ceiling. Returns it with the rows split into passing and failing."""
    passing = rates[rates["valid"] == rates["runs"]]
    failing = rates[rates["valid"] < rates["runs"]]
    top = passing.index[passing.index < failing.index.min()].max() if len(failing) \
        else passing.index.max()
    return top, passing, failing


#: bytes of a full frame that are not TCP payload: Ethernet (14), IPv4 (20), TCP with
#: timestamps (32); a 1514-B frame carries 1448 B of payload
FRAME_OVERHEAD_BYTES = 66


def goodput_excess(runs: pd.DataFrame) -> pd.Series:
    """Per run, the flows' summed goodput over the capacity beyond what the bottleneck's
    wire carried as payload: ``goodput_over_capacity - utilisation x payload share of the
    mean frame`` (1448/1514 for full frames). The wire bounds the payload, so a positive
    value is bytes counted in the goodput's window that crossed the link outside it (bytes
    held at the receiver behind a lost packet, released to the application after the
    warm-up though they arrived before it), or a flow measured over another window."""
    frame = runs["mean_packet_bytes"]
    payload_share = (frame - FRAME_OVERHEAD_BYTES) / frame
    return runs["goodput_over_capacity"] - runs["utilisation"] * payload_share


#: the campaign that measures the harness on a quiet spell of this kind of machine
HOST_CHECK = "quiet_host"


@dataclass(frozen=True)
class HostCheck:
    """The harness's verdict on a quiet machine (:func:`host_check`): attempts and valid
    runs, overall and by run length (s), the invalid runs the host's own record explains
    and those it does not, and a table of the attempts by run length and outcome."""

    attempts: int
    valid: int
    held_up: int
    not_held_up: int
    by_length: dict[float, tuple[int, int]]  # run length -> (valid, attempts)
    table: pd.DataFrame

    @property
    def rejected_share(self) -> float | None:
        """The share of attempts the gates rejected (None without an attempt)."""
        return 1 - self.valid / self.attempts if self.attempts else None

    def verdict(self) -> str:
        """The answer in one sentence."""
        if not self.attempts:
            return "No run of this kind of machine's quiet spell is stored."
        rejected = self.attempts - self.valid
        if 2 * rejected > self.attempts:
            return "Most runs on this virtual machine fail a validity gate, even when " \
                   "nothing else runs on it."
        if 2 * rejected == self.attempts:
            return "Half the runs on this virtual machine fail a validity gate, even when " \
                   "nothing else runs on it."
        if rejected:
            return "Most runs on this virtual machine pass every gate when nothing else " \
                   "runs on it, but not all."
        return "Every run on this virtual machine passed every gate when nothing else ran " \
               "on it."


def host_check(runs: pd.DataFrame) -> HostCheck:
    """The harness's verdict on a quiet machine (campaign :data:`HOST_CHECK`), read from
    every stored attempt, valid or not: each invalid attempt under the gates it failed and
    whether the host's own record (steal, or the in-run sleepers' stalls) shows it held the
    machine up."""
    quiet = runs[runs["campaign"] == HOST_CHECK].copy()
    invalid = quiet[~quiet["valid"]]
    quiet["outcome"] = "valid"
    quiet.loc[~quiet["valid"], "outcome"] = "invalid: " + quiet["failed_gates"].str.replace(
        ",", ", ") + quiet["held_up"].map({True: " (host held it up)",
                                            False: " (no host evidence)"})
    table = quiet.groupby(["duration_s", "outcome"]).agg(
        attempts=("run_id", "size"),
        steal_pct_median=("steal_pct", "median"),
        sleepers_p999_ms_median=("sleeper_p999_ms", "median"),
        lateness_p999_ms_median=("lateness_p999_ms", "median")).reset_index()
    table["duration_s"] = table["duration_s"].map("{:g}".format)  # 15, not 15.00
    by_length = {float(d): (int(g["valid"].sum()), len(g))
                 for d, g in quiet.groupby("duration_s")}
    return HostCheck(len(quiet), int(quiet["valid"].sum()), int(invalid["held_up"].sum()),
                     int((~invalid["held_up"].astype(bool)).sum()), by_length, table)
