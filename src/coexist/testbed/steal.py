"""Hypervisor steal: CPU time the host gives this virtual machine's CPUs to someone else.

A burst of steal stalls the delay line and the senders alike; the timing gates then reject
the run (appendix, figure T-F1: above 0.5 % steal most runs fail them). The delay line runs
under SCHED_FIFO with its memory locked, so nothing inside the machine delays it; a burst
the hypervisor takes does, and a tens-of-milliseconds burst is lost in a run's average.
Runs therefore also record the steal of their busiest second (:func:`peak_record`).
A campaign can wait for a quiet host before each run (``coexist campaign run
--steal-limit``). It does not by default: an idle machine accrues little steal whatever the
host does, so the wait did not make the runs after it more often valid (T-F1). A timer
wake-up probe (:mod:`.wakeups`) is recorded before each campaign run instead.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..core.params import ParameterError
from ..core.provenance import cpu_times

WINDOW_S = 5.0  # seconds of steal measured before a run when waiting for a quiet host
PEAK_WINDOW_S = 1.0  # a run's busiest stretch of steal is judged over windows this long
WATCH_STEP_S = 0.1  # how often the steal counter is read during a run's traffic


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
    return _pct((b["steal_s"] - a["steal_s"], t1 - t0), cores)


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


def busiest(samples: list[tuple[float, float]], window_s: float = PEAK_WINDOW_S,
            ) -> tuple[float, float] | None:
    """The stretch of at least ``window_s`` seconds between two samples of
    ``(time_s, steal_s)`` over which steal ran highest, as (CPU-seconds stolen, its length in
    seconds); the whole span where that is shorter than ``window_s``. None with fewer than
    two samples.

    Each stretch starts at a sample and ends at the first sample ``window_s`` or more later,
    so a burst is diluted by at most one sampling step beyond the window.
    """
    if not window_s > 0:
        raise ParameterError(f"window_s = {window_s!r}; valid: > 0 seconds")
    if len(samples) < 2:
        return None
    times = [t for t, _ in samples]
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise ParameterError("samples: times must increase strictly")
    if times[-1] - times[0] < window_s:
        (t0, s0), (t1, s1) = samples[0], samples[-1]
        return s1 - s0, t1 - t0
    best: tuple[float, float] | None = None
    j = 0
    for i, (t0, s0) in enumerate(samples):
        j = max(j, i + 1)
        while j < len(samples) and samples[j][0] - t0 < window_s:
            j += 1
        if j == len(samples):
            break
        t1, s1 = samples[j]
        if best is None or (s1 - s0) / (t1 - t0) > best[0] / best[1]:
            best = (s1 - s0, t1 - t0)
    return best


def peak_record(samples: list[tuple[float, float]], cores: int | None = None,
                window_s: float = PEAK_WINDOW_S) -> dict | None:
    """What a run stores as ``provenance.steal_peak``: the :func:`busiest` stretch of its
    traffic as CPU-seconds stolen, its length and its share of the machine's CPU time (all
    cores, %); None without two samples."""
    b = busiest(samples, window_s)
    if b is None:
        return None
    return {"steal_s": round(b[0], 3), "span_s": round(b[1], 3), "pct": round(_pct(b, cores), 2),
            "window_s": window_s, "samples": len(samples)}


def _pct(stretch: tuple[float, float], cores: int | None) -> float:
    """Steal of (CPU-seconds stolen, seconds) in % of the machine's CPU time (all cores)."""
    n = cores or os.cpu_count() or 1
    return 100.0 * stretch[0] / (n * stretch[1])


def watch(stop, samples: list[tuple[float, float]], step_s: float = WATCH_STEP_S, *,
          read: Callable[[], dict[str, float]] = cpu_times,
          clock: Callable[[], float] = time.monotonic) -> None:
    """Append ``(time_s, steal_s)`` to ``samples`` every ``step_s`` until ``stop`` (a
    ``threading.Event``) is set, and once more then: the thread that records a run's steal
    for :func:`peak_record`. Does nothing where ``/proc/stat`` cannot tell."""
    def take() -> bool:
        now, t = read(), clock()
        if "steal_s" not in now:
            return False
        if not samples or t > samples[-1][0]:  # times increase strictly (busiest needs it)
            samples.append((t, now["steal_s"]))
        return True

    while take():
        if stop.wait(step_s):
            take()
            return
