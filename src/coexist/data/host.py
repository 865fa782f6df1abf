"""What a stored run's summary records of its host: the hypervisor's steal, the CPU stalls
the sleepers saw, how busy the CPUs were and the delay line's CPU time per packet, read back
for the validity gates (:mod:`.gates`) and the run tables (:mod:`.summaries`). The harness
measures them (:mod:`coexist.testbed.steal`, :mod:`coexist.testbed.wakeups`)."""

from __future__ import annotations


def steal_pct(summary: dict) -> float | None:
    """The hypervisor's steal during a run, in % of the machine's CPU time over it
    (cores x wall time), or None where the run did not record it."""
    steal = (summary["provenance"].get("cpu_seconds_during_run") or {}).get("steal_s")
    cores = summary["provenance"].get("cores")
    wall = summary.get("wall_s")
    return 100 * steal / (cores * wall) if steal is not None and cores and wall else None


def steal_peak_pct(summary: dict) -> float | None:
    """The hypervisor's steal over the busiest second of a run's traffic, in % of the
    machine's CPU time (:func:`coexist.testbed.steal.busiest`), or None where the run did
    not record it (runs before this was measured). It can pass 100 % by a little: the
    kernel books a vCPU's steal at that vCPU's next tick, so a one-second window can hold
    steal that happened just before it."""
    peak = summary["provenance"].get("steal_peak")
    return None if peak is None else peak["pct"]


def steal_burst_s(summary: dict) -> float | None:
    """CPU seconds the hypervisor took in the busiest second of a run's traffic (all cores),
    or None where the run did not record it."""
    peak = summary["provenance"].get("steal_peak")
    return None if peak is None else peak["steal_s"]


def stall_pct_max(stall_probe: dict | None) -> float | None:
    """The highest ``stall_pct`` (:func:`coexist.testbed.wakeups.probe`) any CPU's sleeper
    saw during a run, or None where the run has no such probe (runs stored before it
    existed) or none reported."""
    values = per_cpu(stall_probe, "stall_pct")
    return max(values) if values else None


def sleeper_p999_ms_max(stall_probe: dict | None) -> float | None:
    """The latest 99.9th-percentile wake-up (ms) any CPU's sleeper saw during a run, or None
    where the run has no such probe or none reported."""
    values = per_cpu(stall_probe, "p999_ms")
    return max(values) if values else None


def sleeper_p999_ms_min(stall_probe: dict | None) -> float | None:
    """The earliest 99.9th-percentile wake-up (ms) over the CPUs' sleepers: how late the
    sleeper of every CPU was at least, or None where the run has no such probe or a CPU's
    sleeper reported none (an error, or no wake-up)."""
    values = per_cpu(stall_probe, "p999_ms")
    complete = bool(stall_probe) and len(values) == len(stall_probe)
    return min(values) if complete else None


def per_cpu(stall_probe: dict | None, key: str) -> list[float]:
    """One summary value (``stall_pct``, ``p999_ms``, ``max_ms``, ...) of each CPU's sleeper
    that reported it (:func:`coexist.testbed.wakeups.probe`)."""
    values = [v.get(key) for v in (stall_probe or {}).values()]
    return [v for v in values if v is not None]


def delay_cpu_us_per_packet(summary: dict) -> float | None:
    """CPU time the delay line spent per packet it released, in microseconds: a fixed
    amount of work per packet, so it tells how fast the machine ran during the run.
    Runs that stored the delay line's own CPU time use it; older ones store only its CPU
    share, which is multiplied by the run's wall time (that starts before the delay line
    does, so the value is a little high). None without a delay line or a released packet."""
    dl = summary.get("delay_line") or {}
    if not dl.get("released"):
        return None
    cpu_s = dl.get("cpu_s")
    if cpu_s is None:
        if not summary.get("wall_s"):
            return None
        cpu_s = dl["cpu_fraction"] * summary["wall_s"]
    return 1e6 * cpu_s / dl["released"]


def busy_pct(summary: dict) -> float | None:
    """How busy the machine's CPUs were during a run, in % of their time (busy over busy,
    idle and stolen CPU seconds), or None where the run did not record it. Near 100 % the
    senders, router, delay line and receivers compete for the cores."""
    cpu = summary["provenance"].get("cpu_seconds_during_run") or {}
    total = sum(cpu.get(k) or 0.0 for k in ("busy_s", "idle_s", "steal_s"))
    return 100 * cpu["busy_s"] / total if cpu.get("busy_s") is not None and total else None
