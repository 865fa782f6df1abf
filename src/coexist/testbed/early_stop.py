"""Watching a running experiment: waiting for its iperf3 clients to finish, and stopping it
early once its delay-line lateness gate is certain to fail, judged against a bound on the
packets the ACK path can still carry."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ..data import gates
from . import measure
from .spec import WIRE_PACKET_BYTES, Experiment
from .topology import TestbedError

#: Bound on the packets the ACK path carries per full-sized data packet the bottleneck
#: can deliver: one ACK per data segment at most, and segments of at least half the MTU.
#: Over every stored run the delay line released at most 0.79 of the full-sized packets
#: the bottleneck could carry (tests/testbed/test_abort.py checks the bound on all of them).
ACK_PATH_PER_DATA_PACKET_MAX = 2.0
#: Packets per flow outside the data transfer: handshakes, iperf3's control connection
#: and the results exchange (the server's JSON report rides the ACK path).
ACK_PATH_EXTRA_PER_FLOW = 500
PROBE_HZ = 10.0  # probe pings per second and sender group (ping -i 0.1)
DATA_START_SLACK_S = 3.0  # from starting an iperf3 client to its first data, at most


def ack_path_packets_at_most(exp: Experiment, elapsed_s: float, last_start_s: float) -> float:
    """Upper bound on the packets that reach the delay line after ``elapsed_s`` seconds of
    the run, whose last flow started ``last_start_s`` after the first.

    Data ends ``duration_s`` after each flow's start (plus ``DATA_START_SLACK_S`` for
    iperf3's connection set-up) and a full buffer drains within
    ``buffer_bytes * 8 / capacity_bps``; until then the bottleneck delivers at most
    ``capacity_bps / (8 * WIRE_PACKET_BYTES)`` full-sized packets a second, each answered by
    at most ``ACK_PATH_PER_DATA_PACKET_MAX`` ACK-path packets. The probes ping at
    ``PROBE_HZ`` per group for ``duration_s + 1`` s.
    """
    data_end = (last_start_s + DATA_START_SLACK_S + exp.duration_s
                + exp.buffer_bytes * 8 / exp.capacity_bps)
    data_pps = exp.capacity_bps / (8 * WIRE_PACKET_BYTES)
    probes = len(exp.groups) * (PROBE_HZ * max(0.0, exp.duration_s + 1.0 - elapsed_s) + 1)
    return (ACK_PATH_PER_DATA_PACKET_MAX * data_pps * max(0.0, data_end - elapsed_s)
            + probes + ACK_PATH_EXTRA_PER_FLOW * len(exp.flows))


def _lateness_watch(live: Path, exp: Experiment, th: gates.Thresholds, last_start_s: float):
    """A check for :func:`_wait_clients`: the reason to stop the run once its delay-line
    lateness gate can no longer pass (:func:`gates.lateness_certain_to_fail`), else None."""
    first = gates.first_late_bin(th)

    def check(elapsed: float) -> str | None:
        counts = measure.read_delayline_live(live)   # histogram first, arrived count last
        late = int(counts.hist[first:].sum())
        at_most = counts.arrived + ack_path_packets_at_most(exp, elapsed, last_start_s)
        if not gates.lateness_certain_to_fail(late, at_most):
            return None
        return (f"stopped at {elapsed:.0f} s of {exp.duration_s:g} s: {late} packets already "
                f"left the delay line >= {first / 1e3:g} ms late, more than 0.1 % of the at "
                f"most {at_most:.0f} the run can carry, so the delay_lateness gate must fail")

    return check


def _wait_clients(clients: list[subprocess.Popen], duration: float, t0: float,
                  progress: bool, check=None) -> dict | None:
    """Wait for the iperf3 clients to finish. ``check(elapsed)`` is called about once a
    second; when it returns a reason the wait ends early with ``{"at_s", "reason"}``."""
    from ..core.progress import tqdm

    limit = duration + 30.0
    next_check = 1.0
    with tqdm(total=round(duration), unit="s", disable=not progress, leave=False,
              desc="experiment") as bar:
        while any(c.poll() is None for c in clients):
            elapsed = time.monotonic() - t0
            if elapsed > limit:
                raise TestbedError(f"iperf3 clients still running {limit:g} s after the start")
            if check is not None and elapsed >= next_check:
                reason = check(elapsed)
                if reason is not None:
                    return {"at_s": round(elapsed, 3), "reason": reason}
                next_check = elapsed + 1.0
            bar.n = min(round(elapsed), bar.total)
            bar.refresh()
            time.sleep(0.2)
    return None
