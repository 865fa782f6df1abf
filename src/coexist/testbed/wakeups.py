"""Timer wake-up lateness: how late a sleeping thread wakes up, measured before a run.

The delay line fails its lateness gate when it wakes up late to release packets; under
hypervisor steal the whole machine stalls and every wake-up is late. An idle machine
accrues little steal whatever the host does, and a busy loop never sleeps, so neither
shows what a run will meet. A thread that sleeps to a deadline every millisecond does: it
is late exactly when the delay line would be. Campaigns record this probe before each run
(``summary["wake_probe"]``) so that whether it predicts a run's validity can
be read from the data before anything is gated on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..params import ParameterError

PROBE_S = 1.0  # how long the probe before a run sleeps and wakes (part of its overhead)
STEP_S = 1e-3  # the deadline spacing, the delay line's own timescale
LATE_S = 1e-3  # a wake-up this late would fail the delay line's lateness gate


def probe(duration_s: float = PROBE_S, step_s: float = STEP_S, *,
          clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep) -> dict[str, float | int]:
    """Sleep to a deadline every ``step_s`` for ``duration_s`` and summarise how late each
    wake-up came: count, p99 and p99.9 and maximum lateness (ms), and the share of wake-ups
    at least ``LATE_S`` late (%)."""
    if not duration_s > 0:
        raise ParameterError(f"duration_s = {duration_s!r}; valid: > 0 seconds")
    if not 0 < step_s <= duration_s:
        raise ParameterError(f"step_s = {step_s!r}; valid: > 0 and <= duration_s "
                             f"({duration_s} s)")
    late: list[float] = []
    end = clock() + duration_s
    deadline = clock() + step_s
    while deadline <= end:
        sleep(max(0.0, deadline - clock()))
        now = clock()
        late.append(max(0.0, now - deadline))
        deadline = now + step_s
    late.sort()
    n = len(late)
    return {"wakeups": n,
            "p99_ms": round(late[min(n - 1, int(0.99 * n))] * 1e3, 3),
            "p999_ms": round(late[min(n - 1, int(0.999 * n))] * 1e3, 3),
            "max_ms": round(late[-1] * 1e3, 3),
            "late_pct": round(100 * sum(x >= LATE_S for x in late) / n, 3)}
