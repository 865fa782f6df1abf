"""Timer wake-up lateness: how late a sleeping thread wakes up, measured before a run.

The delay line fails its lateness gate when it wakes up late to release packets; under
hypervisor steal the whole machine stalls and every wake-up is late. An idle machine
accrues little steal whatever the host does, and a busy loop never sleeps, so neither
shows what a run will meet. A thread that sleeps to a deadline every millisecond does: it
is late exactly when the delay line would be. Campaigns record this probe before each run
(``summary["wake_probe"]``) so that whether it predicts a run's validity can
be read from the data before anything is gated on it.

The same probe also runs *during* a run, one sleeper per CPU under SCHED_FIFO just below
the delay line's priority (:func:`start_during_run`, ``summary["stall_probe"]``). Nothing
inside the machine but the delay line and interrupt work can hold such a thread back, so
when these sleepers spend as much time late as the lateness gate allows the delay line, the
stall was the machine's, not the delay line's own work: some hosts stop a virtual CPU for
tens of milliseconds without the guest counting any steal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from ..core.params import ParameterError

PROBE_S = 1.0  # how long the probe before a run sleeps and wakes (part of its overhead)
STEP_S = 1e-3  # the deadline spacing, the delay line's own timescale
LATE_S = 1e-3  # a wake-up this late would fail the delay line's lateness gate
#: SCHED_FIFO priority of the sleepers during a run: below the delay line's (50), so that
#: they never delay it, above every ordinary task, so that only a stall delays them
DURING_RUN_PRIORITY = 40


def probe(duration_s: float = PROBE_S, step_s: float = STEP_S, *,
          clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep,
          stop: Callable[[], bool] = lambda: False) -> dict[str, float | int]:
    """Sleep to a deadline every ``step_s`` for ``duration_s`` and summarise how late each
    wake-up came: count, p99 and p99.9 and maximum lateness (ms), and the share of wake-ups
    at least ``LATE_S`` late (%). ``stall_pct`` is the time spent more than ``LATE_S``
    late, summed over the wake-ups, in % of the time probed: a packet due during a stall of
    length L leaves at least ``LATE_S`` late unless due in its last ``LATE_S``, so a delay
    line that meets the same stalls has about that share of its packets late, which its
    lateness gate allows up to 0.1 %. ``stop()`` true ends the probe early (checked every
    wake-up)."""
    if not duration_s > 0:
        raise ParameterError(f"duration_s = {duration_s!r}; valid: > 0 seconds")
    if not 0 < step_s <= duration_s:
        raise ParameterError(f"step_s = {step_s!r}; valid: > 0 and <= duration_s "
                             f"({duration_s} s)")
    late: list[float] = []
    start = clock()
    end = start + duration_s
    deadline = clock() + step_s
    while deadline <= end and not stop():
        sleep(max(0.0, deadline - clock()))
        now = clock()
        late.append(max(0.0, now - deadline))
        deadline = now + step_s
    span = clock() - start
    late.sort()
    n = len(late)
    if n == 0:
        return {"wakeups": 0, "p99_ms": None, "p999_ms": None, "max_ms": None,
                "late_pct": None, "stall_pct": None}
    stalled = sum(x - LATE_S for x in late if x >= LATE_S)
    return {"wakeups": n, "stall_pct": round(100 * stalled / span, 4) if span > 0 else None,
            "p99_ms": round(late[min(n - 1, int(0.99 * n))] * 1e3, 3),
            "p999_ms": round(late[min(n - 1, int(0.999 * n))] * 1e3, 3),
            "max_ms": round(late[-1] * 1e3, 3),
            "late_pct": round(100 * sum(x >= LATE_S for x in late) / n, 3)}


def start_during_run(duration_s: float) -> list[tuple[int, subprocess.Popen]]:
    """Start one sleeper per CPU this process may use, pinned there (module docstring);
    each probes for at most ``duration_s`` and reports when :func:`collect` stops it."""
    if not duration_s > 0:
        raise ParameterError(f"duration_s = {duration_s!r}; valid: > 0 seconds")
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    return [(cpu, subprocess.Popen(
        [sys.executable, "-m", "coexist.testbed.wakeups", str(cpu), f"{duration_s:g}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) for cpu in cpus]


def collect(sleepers: list[tuple[int, subprocess.Popen]],
            timeout_s: float = 10.0) -> dict[str, dict]:
    """Stop the sleepers of :func:`start_during_run` and return each CPU's summary
    (``{"cpu0": {...}, ...}``); a sleeper that failed reports its error instead."""
    out: dict[str, dict] = {}
    for _cpu, p in sleepers:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for cpu, p in sleepers:
        try:
            stdout, stderr = p.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
        try:
            out[f"cpu{cpu}"] = json.loads(stdout)
        except json.JSONDecodeError:
            out[f"cpu{cpu}"] = {"error": (stderr or stdout or f"exit {p.returncode}")[-300:]}
    return out


def _main(argv: list[str]) -> None:
    """``python -m coexist.testbed.wakeups CPU DURATION_S``: pin to CPU, take SCHED_FIFO
    at :data:`DURING_RUN_PRIORITY` (``"policy"`` says whether it was granted), probe until
    SIGTERM or DURATION_S, print the summary as JSON."""
    cpu, duration = int(argv[0]), float(argv[1])
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(True))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(DURING_RUN_PRIORITY))
        policy = "SCHED_FIFO"
    except (AttributeError, PermissionError, OSError):
        policy = "SCHED_OTHER"
    r = probe(duration, stop=lambda: bool(stopped))
    print(json.dumps({**r, "policy": policy}))


if __name__ == "__main__":
    _main(sys.argv[1:])
