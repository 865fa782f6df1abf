"""Hypervisor steal: CPU time the host gives this virtual machine's CPUs to someone else.

A burst of steal stalls the delay line and the senders alike; the timing gates then reject
the run (appendix, figure T-F1: above 0.5 % steal most runs fail them). A campaign can wait
for a quiet host before each run (``coexist campaign run --steal-limit``). It does not by
default: an idle machine accrues little steal whatever the host does, so the wait did not
make the runs after it more often valid (T-F1).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..params import ParameterError
from ..provenance import cpu_times

WINDOW_S = 5.0  # seconds of steal measured before a run when waiting for a quiet host


def share(window_s: float = WINDOW_S, *, read: Callable[[], dict[str, float]] = cpu_times,
          clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep, cores: int | None = None) -> float | None:
    """The hypervisor's steal over the next ``window_s`` seconds, in % of the machine's CPU
    time (all cores), or None where ``/proc/stat`` cannot tell (not Linux)."""
    if not window_s > 0:
        raise ParameterError(f"window_s = {window_s!r}; valid: > 0 seconds")
    a, t0 = read(), clock()
    sleep(window_s)
    b, t1 = read(), clock()
    if "steal_s" not in a or "steal_s" not in b or t1 <= t0:
        return None
    n = cores or os.cpu_count() or 1
    return 100.0 * (b["steal_s"] - a["steal_s"]) / (n * (t1 - t0))


def check_limits(limit_pct: float, max_wait_s: float) -> None:
    """Reject a steal limit outside 0-100 % or a negative longest wait, naming the value."""
    if not 0 <= limit_pct <= 100:
        raise ParameterError(f"steal limit = {limit_pct!r} %; valid: 0-100 % of the CPU time")
    if not max_wait_s >= 0:
        raise ParameterError(f"max_wait_s = {max_wait_s!r}; valid: >= 0 seconds")


def wait_for_quiet(limit_pct: float, *, window_s: float = WINDOW_S, max_wait_s: float = 600.0,
                   on_wait: Callable[[float, float], None] | None = None,
                   measure: Callable[[float], float | None] | None = None,
                   ) -> tuple[float, float | None]:
    """Measure steal in windows of ``window_s`` until one is at most ``limit_pct`` or
    ``max_wait_s`` has passed (then the caller runs anyway, and its gates judge the run).

    Returns the time spent waiting beyond the first window and the last measured steal (%).
    ``on_wait(steal_pct, waited_s)`` is called after every window that was too busy.
    """
    check_limits(limit_pct, max_wait_s)
    measure = measure or share
    waited = 0.0
    while True:
        pct = measure(window_s)
        if pct is None or pct <= limit_pct or waited >= max_wait_s:
            return waited, pct
        waited += window_s
        if on_wait is not None:
            on_wait(pct, waited)
