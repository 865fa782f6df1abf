"""The table of stored runs: one row per run, valid or not, with the values its validity
gates judged and the host's record (:func:`run_summaries`), read from the runs' summaries."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..core.paths import DATA
from .gates import disturbed, held_up, stored_reasons, timing_only
from .host import (
    busy_pct,
    delay_cpu_us_per_packet,
    sleeper_p999_ms_max,
    stall_pct_max,
    steal_burst_s,
    steal_pct,
    steal_peak_pct,
)
from .reads import note_read
from .summary_file import read_summary

#: the columns of :func:`run_summaries`, in order (also those of an empty table)
RUN_SUMMARY_COLUMNS = [
    "campaign", "key", "point", "repeat", "run_id", "valid", "capacity_bps", "n_flows",
    "buffer_bdp", "warmup_s", "goodput_over_capacity", "mean_packet_bytes", "host_busy_pct",
    "reasons", "failed_gates", "utilisation", "probe_offset_ms",
    "lateness_p999_ms", "delay_cpu_pct", "other_drops", "bbr_share", "jain_index",
    "mean_queue_delay_s", "load", "loadavg_start", "steal_s", "steal_pct",
    "steal_peak_pct", "steal_burst_s", "timing_only", "disturbed", "duration_s",
    "stopped_early_s", "steal_before_pct", "waited_for_quiet_s", "wake_p999_ms",
    "wake_late_pct", "stall_pct", "sleeper_p999_ms", "held_up", "delay_cpu_us_per_packet",
    "delay_sys_pct", "steer_acks",
    "wall_s", "time_utc", "kernel", "iperf3",
]


def run_summaries(data_dir: Path = DATA,
                  campaigns: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per stored run, valid or not, with its gate values: the testbed's record.

    Columns: campaign, key, point (the key without its repeat: runs of one configuration
    share it), repeat, run_id, valid, capacity_bps, n_flows, buffer_bdp, warmup_s,
    goodput_over_capacity (the flows' goodputs summed, over the capacity),
    mean_packet_bytes (on the bottleneck's wire), reasons, failed_gates (comma-separated),
    utilisation, probe_offset_ms (worst
    |p99 - RTT| over sender groups), lateness_p999_ms, delay_cpu_pct, other_drops,
    bbr_share, jain_index, mean_queue_delay_s, load (deliberate background load),
    loadavg_start (1-minute load average when the run started), steal_s (CPU time the
    hypervisor took from this machine during the run), capacity_bps and n_flows (the run's
    bottleneck rate and its number of flows), host_busy_pct (:func:`busy_pct`), steal_pct
    (that time as a percentage of the machine's CPU time over the run: cores x wall time),
    steal_peak_pct (the same
    share over the busiest second of the traffic, where recorded), steal_burst_s (the CPU
    seconds stolen in that second), timing_only (it failed only
    timing gates: :func:`coexist.data.gates.timing_only`), disturbed (invalid, and
    explained by that steal or by a stall the sleepers saw:
    :func:`coexist.data.gates.disturbed`), duration_s (planned),
    stopped_early_s (when the run was stopped because its lateness gate could no longer
    pass), steal_before_pct and
    waited_for_quiet_s (where the campaign waited for a quiet host before the run: the steal
    over the last 5 s before it, and the time waited), wake_p999_ms and wake_late_pct (the
    timer wake-up probe just before a campaign run, :mod:`coexist.testbed.wakeups`: p99.9
    lateness, and the % of wake-ups at least 1 ms late), stall_pct (the share of the
    run's time that the sleepers on every CPU spent more than 1 ms late, the highest over
    the CPUs: :func:`coexist.testbed.wakeups.probe`; empty for runs stored before they
    existed), sleeper_p999_ms (those sleepers' latest 99.9th-percentile wake-up, ms),
    held_up (the host held the machine up during the run, valid or not:
    :func:`coexist.data.gates.held_up`), delay_cpu_us_per_packet
    (:func:`delay_cpu_us_per_packet`), delay_sys_pct (the share of the delay line's CPU
    time spent in the kernel; empty for runs stored before the split), steer_acks (the
    delay line's ACKs processed on the other CPUs; false for runs stored before the
    option), wall_s, time_utc, kernel and iperf3 (the versions the run's provenance names).

    ``campaigns`` reads those campaigns' runs only (and records only them as read, so a
    figure declares just what it reads); None reads every stored run.
    """
    if isinstance(campaigns, str):  # one campaign's name, not its letters
        campaigns = [campaigns]
    dirs = ["*"] if campaigns is None else list(campaigns)  # "*": every campaign
    for name in dirs:
        note_read(name)
    rows = []
    runs = Path(data_dir) / "runs"
    for summary in sorted(p for d in dirs for p in runs.glob(f"{d}/*/summary.json")) + \
            sorted(p for d in dirs for p in runs.glob(f"{d}/_invalid/*/summary.json")):
        s = read_summary(summary)
        camp = summary.relative_to(runs).parts[0]
        gates = {g["name"]: g for g in s["gates"]}
        dl = s.get("delay_line") or {}
        steal = (s["provenance"].get("cpu_seconds_during_run") or {}).get("steal_s")
        meta = s.get("campaign") or {}  # what the campaign recorded about the run
        key = meta.get("key", summary.parent.name)
        repeat = meta.get("repeat")
        suffix = f"-r{repeat}"
        rows.append({
            "campaign": camp, "key": key,
            "point": key[:-len(suffix)] if repeat is not None and key.endswith(suffix)
            else key,
            "repeat": repeat, "run_id": s["run_id"], "valid": bool(s["valid"]),
            "capacity_bps": s["params"]["capacity_bps"], "n_flows": len(s["flows"]),
            "buffer_bdp": s["params"]["buffer_bdp"], "warmup_s": s["params"]["warmup_s"],
            "goodput_over_capacity": s.get("goodput_over_capacity"),
            "mean_packet_bytes": s.get("bottleneck_mean_packet_bytes"),
            "host_busy_pct": busy_pct(s),
            "reasons": "; ".join(stored_reasons(s)),
            "failed_gates": ",".join(g["name"] for g in s["gates"] if not g["passed"]),
            "utilisation": s["utilisation"],
            "probe_offset_ms": gates.get("probe_rtt", {}).get("value"),
            "lateness_p999_ms": dl["lateness_us"]["p999"] / 1e3 if dl else None,
            "delay_cpu_pct": 100 * dl["cpu_fraction"] if dl else None,
            "other_drops": gates.get("drops_only_at_bottleneck", {}).get("value"),
            "bbr_share": s["bbr_share"], "jain_index": s["jain_index"],
            "mean_queue_delay_s": s["mean_queue_delay_s"], "load": s.get("load", "none"),
            "loadavg_start": (s["provenance"].get("loadavg_1_5_15") or {}).get("start",
                                                                               [None])[0],
            "steal_s": steal,
            "steal_pct": steal_pct(s), "steal_peak_pct": steal_peak_pct(s),
            "steal_burst_s": steal_burst_s(s),
            "timing_only": timing_only(s), "disturbed": disturbed(s),
            "duration_s": s["params"]["duration_s"],
            "stopped_early_s": (s.get("stopped_early") or {}).get("at_s"),
            "steal_before_pct": meta.get("steal_before_pct"),
            "waited_for_quiet_s": meta.get("waited_for_quiet_s"),
            "wake_p999_ms": (s.get("wake_probe") or {}).get("p999_ms"),
            "wake_late_pct": (s.get("wake_probe") or {}).get("late_pct"),
            "stall_pct": stall_pct_max(s.get("stall_probe")),
            "sleeper_p999_ms": sleeper_p999_ms_max(s.get("stall_probe")),
            "held_up": held_up(s),
            "delay_cpu_us_per_packet": delay_cpu_us_per_packet(s),
            "delay_sys_pct": 100 * dl["sys_s"] / dl["cpu_s"]
            if dl.get("sys_s") is not None and dl["cpu_s"] else None,
            "steer_acks": bool(s["params"].get("steer_acks", False)),
            "wall_s": s.get("wall_s"), "time_utc": s["provenance"]["time_utc"],
            "kernel": s["provenance"].get("kernel"),
            "iperf3": (s["provenance"].get("tools") or {}).get("iperf3"),
        })
    return pd.DataFrame(rows, columns=RUN_SUMMARY_COLUMNS)
