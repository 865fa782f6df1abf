"""Validity gates: the conditions under which a run measures what it claims to.

A run that fails any gate is kept on disk with its reasons but marked invalid; campaigns
re-run it and figures never use it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from .host import sleeper_p999_ms_min, stall_pct_max, steal_burst_s, steal_pct

if TYPE_CHECKING:
    import pandas as pd


# Gates that a CPU stall fails: the delay line runs late, the probe sees it, and the senders
# fall behind the link. A stall fails no other gate.
TIMING_GATES = frozenset({"probe_rtt", "delay_lateness", "utilisation"})
DISTURBED_STEAL_PCT = 1.0  # steal above this share of the CPU time during a run disturbs it
# so does this much CPU time stolen within the busiest second of its traffic: the timing
# gates' tolerance (lateness p99.9, probe RTT p99 offset), which a stall as long can exceed
DISTURBED_BURST_S = 1e-3
# and so does a stall: sleepers on every CPU during the run (testbed.wakeups) more than
# 1 ms late for this share of the time (%), the share of late packets the lateness gate
# allows
DISTURBED_STALL_PCT = 0.1
# and so does a sleeper whose own 99.9th-percentile wake-up was as late as the lateness
# gate's limit (``Thresholds.lateness_p999_s``, in ms): it failed the delay line's criterion
DISTURBED_SLEEPER_P999_MS = 1.0


#: What ``cca_confirmed``'s detail says a flow showed when no sample counted for it.
UNSEEN = "nothing"


def failed_gates(summary: dict) -> set[str]:
    """Names of the gates a stored run failed."""
    return {g["name"] for g in summary["gates"] if not g["passed"]}


def timing_only(summary: dict) -> bool:
    """Whether the run failed gates and all of them are timing gates. A run stopped early
    because its lateness gate could no longer pass (``summary["stopped_early"]``) has
    unfinished flows because of that stop, so ``flows_complete`` does not count there; nor
    does ``cca_confirmed`` when its only complaint is flows that had no test data
    acknowledged before the stop (:func:`cca_unseen_only`)."""
    failed = failed_gates(summary)
    if summary.get("stopped_early"):
        failed -= {"flows_complete"}
        if cca_unseen_only(summary):
            failed -= {"cca_confirmed"}
    return bool(failed) and failed <= TIMING_GATES


def cca_unseen_only(summary: dict) -> bool:
    """Whether a run failed ``cca_confirmed`` only because some flows showed no CCA at all
    (no ``ss`` sample with test data acknowledged), none a CCA other than the one asked
    for. Under heavy steal a run can stop within seconds, before every iperf3 client has
    sent its first data: that says nothing about the algorithm. Reads the gate's detail,
    one ``flow i: asked A, saw S`` item per flow that failed, S ``nothing`` when unseen."""
    gate = next((g for g in summary["gates"] if g["name"] == "cca_confirmed"), None)
    if gate is None or gate["passed"]:
        return False
    items = [i for i in (gate.get("detail") or "").split("; ") if i]
    return bool(items) and all(i.endswith(f", saw {UNSEEN}") for i in items)


def disturbed(summary: dict) -> bool:
    """Whether an invalid run failed only timing gates while the hypervisor held the machine
    up (a coincidence in time: the steal or stall need not have caused the failure):
    more than ``DISTURBED_STEAL_PCT`` % steal during it (appendix, figure T-F1), or at least
    ``DISTURBED_BURST_S`` of CPU time stolen within the busiest second of its traffic. Such
    a run says nothing about the configuration, so campaigns do not count it against
    ``max_attempts``.

    The burst counts because the delay line runs under SCHED_FIFO with its memory locked:
    inside the machine nothing stalls it, while a stall by the hypervisor as long as the
    gates' 1-ms tolerance can make more than 0.1 % of a short run's packets late, yet over
    the run it is a fraction of a per cent. ``/proc/stat`` counts steal in 10-ms ticks, so
    one tick in the traffic is such a burst.

    Some hosts stop a virtual CPU without the guest counting any steal. Runs therefore also
    keep sleepers on every CPU (:mod:`coexist.testbed.wakeups`); a run whose sleepers spent at least
    ``DISTURBED_STALL_PCT`` % of the time more than 1 ms late was stalled from outside the
    delay line (:func:`stalled`) and counts as disturbed too."""
    return not summary["valid"] and held_up(summary) and timing_only(summary)


def held_up(summary: dict) -> bool:
    """Whether the host held the machine up during a run, as either of its records shows:
    enough steal (:func:`under_steal`) or a stalled sleeper (:func:`stalled`). An invalid
    run so held up that failed only timing gates is :func:`disturbed`."""
    return under_steal(summary) or stalled(summary)


def stalled(summary: dict) -> bool:
    """Whether a sleeper that ran on one of the machine's CPUs during the run
    (``summary["stall_probe"]``) was held up as long as the timing gates tolerate, by either
    of two readings of its wake-ups:

    - it spent at least ``DISTURBED_STALL_PCT`` % of the time more than 1 ms late (its
      ``stall_pct``): a delay line meeting the same stalls has about that share of its
      packets late, as many as its lateness gate allows;
    - on every CPU, its 99.9th-percentile wake-up came at least the lateness gate's limit
      late (its ``p999_ms``, :data:`DISTURBED_SLEEPER_P999_MS`): threads that do nothing
      but sleep, under SCHED_FIFO, failed the criterion the delay line is held to, so a
      delay line that failed it says nothing about the harness. Several short stalls of a
      few milliseconds do this while their summed time stays under the first reading's
      share. Every CPU, not one: the delay line (at a higher priority) can hold up the
      sleeper of its own CPU, but no one thread of the machine holds up all of them.

    Runs stored before the sleepers existed have no such evidence (False)."""
    pct = stall_pct_max(summary.get("stall_probe"))
    p999 = sleeper_p999_ms_min(summary.get("stall_probe"))
    return (pct is not None and pct >= DISTURBED_STALL_PCT) or \
        (p999 is not None and p999 >= DISTURBED_SLEEPER_P999_MS)


def under_steal(summary: dict) -> bool:
    """Whether the hypervisor took enough CPU time during a run to fail a timing gate: more
    than ``DISTURBED_STEAL_PCT`` % over the run, or at least ``DISTURBED_BURST_S`` within the
    busiest second of its traffic (see :func:`disturbed`)."""
    pct, burst = steal_pct(summary), steal_burst_s(summary)
    return (pct is not None and pct > DISTURBED_STEAL_PCT) or \
        (burst is not None and burst >= DISTURBED_BURST_S)


@dataclass(frozen=True)
class Thresholds:
    """Gate limits (defaults from the harness design)."""

    probe_tolerance_s: float = 1e-3       # probe RTT p99 within this of the configured RTT
    start_spread_s: float = 0.5           # flows' data starts this close (half an initial RTO)
    lateness_p999_s: float = 1e-3         # delay-line release lateness, 99.9th percentile
    utilisation_min: float = 0.95         # bottleneck link utilisation after warm-up
    other_drops_max: int = 0              # drops anywhere but the bottleneck qdisc


@dataclass(frozen=True)
class Gate:
    name: str
    passed: bool
    value: object
    limit: str
    detail: str = ""


DEFAULT = Thresholds()


#: Bytes iperf3 (3.x) sends on a data socket before it sets the socket's congestion
#: control: its client connects (``iperf_tcp_connect``), writes the 37-byte session cookie,
#: and only then, back in ``iperf_create_streams``, calls setsockopt(TCP_CONGESTION).
IPERF3_COOKIE_BYTES = 37
#: ``bytes_acked`` of a data socket that has carried no test data yet: the SYN counts one.
BYTES_ACKED_BEFORE_CCA = 1 + IPERF3_COOKIE_BYTES


def cca_while_sending(sock: pd.DataFrame | None, n_flows: int) -> list[set[str]]:
    """Per flow, the CCAs its socket showed in the ``ss`` samples (a DataFrame with flow,
    cca and bytes_acked) once it had test data acknowledged.

    Until iperf3 sets a data socket's congestion control, the socket runs the namespace's
    default algorithm (BBR on this machine) and carries the SYN and the session cookie, so
    its ``bytes_acked`` is at most :data:`BYTES_ACKED_BEFORE_CCA`. A sample taken then says
    nothing about the algorithm that moves the data and is not counted. The cookie's ACK
    returns one RTT after it is sent, so such a sample needs iperf3 held off the CPU for
    that long between the two calls, as happens under heavy hypervisor steal.
    """
    if sock is None or len(sock) == 0:
        return [set() for _ in range(n_flows)]
    sending = sock[sock["bytes_acked"].fillna(0) > BYTES_ACKED_BEFORE_CCA]
    return [set(sending.loc[sending["flow"] == i, "cca"]) for i in range(n_flows)]


#: the widest interquartile range of a flow's per-interval start estimates that still dates
#: its start (:func:`flow_start_lags`); a steady flow's is a few tens of ms
START_LAG_IQR_S = 0.25


def flow_start_lags(series: pd.DataFrame, sockets: pd.DataFrame,
                    offsets: list[float]) -> list[float]:
    """Per flow, how long after its planned start (``offsets``, s after the run's start)
    its iperf3 test began, in seconds (NaN where the tables cannot tell).

    Each flow's goodput is averaged over its own test's intervals (the receiver's, in the
    test's own clock), so a flow whose test began late (its connection's SYN lost: the
    initial retransmission timeout is 1 s) is measured over a window that runs past the
    others' end, where it has the link to itself, and over-counts. The socket samples
    (``sockets``: flow, t_s, bytes_acked, in the run's clock) and the receiver's intervals
    (``series``: flow, t_end_s = planned start + test clock, bytes) count the same bytes:
    the time at which the ACKed bytes reach each interval's cumulative count, less the
    interval's end in the test's clock, is where the test's clock began in the run's: the
    median over the intervals, where they agree to ``START_LAG_IQR_S`` (interquartile
    range), else NaN.
    """
    import numpy as np

    lags: list[float] = []
    for i, offset in enumerate(offsets):
        s = series[series["flow"] == i].sort_values("t_end_s")
        k = sockets[sockets["flow"] == i].sort_values("t_s")
        if len(s) < 3 or len(k) < 3:
            lags.append(math.nan)
            continue
        test_end = s["t_end_s"].to_numpy(dtype=float) - offset
        delivered = np.cumsum(s["bytes"].to_numpy(dtype=float))
        acked = np.maximum.accumulate(k["bytes_acked"].fillna(0).to_numpy(dtype=float)
                                      - BYTES_ACKED_BEFORE_CCA)
        t = k["t_s"].to_numpy(dtype=float)
        # np.interp needs x rising: of each flat stretch keep its last sample, where the count
        # starts to rise again (its first would date the bytes after a stall too early)
        last = np.concatenate([np.diff(acked) > 0, [True]])
        acked, t = acked[last], t[last]
        inside = (delivered > acked[0]) & (delivered < acked[-1])
        if inside.sum() < 3:
            lags.append(math.nan)
            continue
        began = np.interp(delivered[inside], acked, t) - test_end[inside]
        q25, q50, q75 = np.percentile(began, [25, 50, 75])
        # a starved or bursty flow's bytes arrive in lumps the samples cannot place in time
        # (its reads and ACKs then disagree by seconds): its lag is not known
        lags.append(float(q50) - offset if q75 - q25 <= START_LAG_IQR_S else math.nan)
    return lags


def lags_record(lags: list[float]) -> list[float | None]:
    """Start lags as a run's summary stores them: to 0.1 ms, an unknown one as null."""
    return [None if math.isnan(x) else round(x, 4) for x in lags]


#: iperf3's set-up before its test begins takes about this many RTTs (the control
#: connection's handshake, cookie and parameters, then the data connection's): measured on
#: this testbed as 0.06, 0.20 and 0.31 s at 10, 30 and 50 ms
IPERF3_SETUP_RTTS = 6.0


def start_gate(lags: list[float] | None, rtts_s: list[float] | None = None,
               th: Thresholds = DEFAULT) -> Gate | None:
    """``flows_started_together``: the flows' tests began within ``th.start_spread_s`` of
    each other (:func:`flow_start_lags`), half the 1-s initial retransmission timeout, so a
    flow whose SYN was lost fails it. Each flow's lag is first reduced by its set-up,
    :data:`IPERF3_SETUP_RTTS` times its base RTT (``rtts_s``; None: no set-up), so flows
    of different RTTs compare. Flows whose lag is unknown are named in the detail. None
    where fewer than two lags are known (a run stopped early, a single flow)."""
    lags = [math.nan if x is None else float(x) for x in (lags or [])]
    rtts = list(rtts_s) if rtts_s is not None else [0.0] * len(lags)
    known = {i: x - IPERF3_SETUP_RTTS * rtts[i] for i, x in enumerate(lags)
             if not math.isnan(x)}
    if len(known) < 2:
        return None
    first, last = min(known, key=known.get), max(known, key=known.get)
    spread = known[last] - known[first]
    undated = len(lags) - len(known)
    detail = (f"flow {last} began {spread:.2f} s after flow {first}"
              if spread > th.start_spread_s else "")
    if undated:
        detail = "; ".join(filter(None, [detail, f"{undated} flow(s) not dated"]))
    return Gate("flows_started_together", spread <= th.start_spread_s, round(spread, 3),
                f"<= {th.start_spread_s:g} s", detail)


def evaluate(m: dict, th: Thresholds = DEFAULT) -> list[Gate]:
    """Check the run's measurements ``m`` against ``th``.

    ``m`` keys: ``probe`` (per group: ``rtt_s``, ``p99_s``, ``min_s``, ``count``),
    ``lateness_p999_s`` (None with netem), ``utilisation``, ``other_drops`` (name -> count),
    ``cca_seen`` (per flow: requested, seen set), ``flows_complete`` (per flow bool), and
    optionally ``start_lags_s`` and ``flow_rtts_s`` (per flow, :func:`flow_start_lags` and
    the flow's base RTT; runs stored before them have none).
    """
    gates: list[Gate] = []
    worst, detail, ok = 0.0, [], True
    for g in m["probe"]:
        if g["count"] == 0:
            ok = False
            detail.append(f"group {g['rtt_s'] * 1e3:g} ms: no probe reply")
            continue
        off = max(abs(g["p99_s"] - g["rtt_s"]), abs(g["min_s"] - g["rtt_s"]))
        worst = max(worst, off)
        if off > th.probe_tolerance_s:
            ok = False
        detail.append(f"group {g['rtt_s'] * 1e3:g} ms: p99 {g['p99_s'] * 1e3:.2f} ms")
    gates.append(Gate("probe_rtt", ok, round(worst * 1e3, 3),
                      f"|p99 - RTT| <= {th.probe_tolerance_s * 1e3:g} ms", "; ".join(detail)))

    late = m.get("lateness_p999_s")
    if late is not None:
        gates.append(Gate("delay_lateness", late < th.lateness_p999_s, round(late * 1e3, 3),
                          f"p99.9 < {th.lateness_p999_s * 1e3:g} ms"))

    u = m["utilisation"]
    gates.append(Gate("utilisation", u is not None and u >= th.utilisation_min,
                      None if u is None else round(u, 4), f">= {th.utilisation_min:g}"))

    drops = {k: v for k, v in m["other_drops"].items() if v}
    total = sum(drops.values())
    gates.append(Gate("drops_only_at_bottleneck", total <= th.other_drops_max, total,
                      f"<= {th.other_drops_max}",
                      ", ".join(f"{k}: {v}" for k, v in sorted(drops.items()))))

    bad = [f"flow {i}: asked {want}, saw {sorted(seen) or UNSEEN}"
           for i, (want, seen) in enumerate(m["cca_seen"]) if seen != {want}]
    gates.append(Gate("cca_confirmed", not bad, len(m["cca_seen"]) - len(bad),
                      "every flow ran its CCA", "; ".join(bad)))

    started = start_gate(m.get("start_lags_s"), m.get("flow_rtts_s"), th)
    if started is not None:
        gates.append(started)

    missing = [i for i, done in enumerate(m["flows_complete"]) if not done]
    gates.append(Gate("flows_complete", not missing, len(m["flows_complete"]) - len(missing),
                      "every iperf3 flow finished", ", ".join(f"flow {i}" for i in missing)))
    return gates


def reason(gate: dict) -> str:
    """A gate as a run's summary stores it (``summary["gates"]``), in words: its name, its
    value ("not measured" where the run stopped before the gate could read one), the limit
    and what failed."""
    value = "not measured" if gate["value"] is None else gate["value"]
    return (f"{gate['name']}: {value} (need {gate['limit']})"
            + (f" [{gate['detail']}]" if gate.get("detail") else ""))


def stored_reasons(summary: dict) -> list[str]:
    """A stored run's reasons for being invalid (``summary["invalid_reasons"]``), each
    failed gate's read again from the gate itself (:func:`reason`): runs stored before it
    print a value a stopped run never measured as "None". Reasons that are not a gate's
    (a run stopped early) stay as stored."""
    failed = {g["name"]: g for g in summary["gates"] if not g["passed"]}
    return [reason(failed[r.split(":", 1)[0]]) if r.split(":", 1)[0] in failed else r
            for r in summary["invalid_reasons"]]


def verdict(gates: list[Gate]) -> tuple[bool, list[str]]:
    """(valid, reasons) from evaluated gates."""
    reasons = [reason(asdict(g)) for g in gates if not g.passed]
    return not reasons, reasons


def as_records(gates: list[Gate]) -> list[dict]:
    return [asdict(g) for g in gates]


def first_late_bin(th: Thresholds = DEFAULT) -> int:
    """The first 1-us lateness bin that counts against ``lateness_p999_s``: the gate passes
    when the delay line's p99.9 bin index is below the limit in microseconds."""
    return math.ceil(round(th.lateness_p999_s * 1e6, 6))


def lateness_certain_to_fail(late: int, packets_at_most: float) -> bool:
    """Whether the delay-line lateness gate must fail however the run goes on.

    The delay line reports as p99.9 the first bin whose cumulative count exceeds
    floor(0.999 N) of the N packets it released, so the gate fails when the N - L packets
    released earlier than the limit are at most floor(0.999 N), L being the packets in the
    late bins. ``late`` packets already released late stay late, and the run releases
    N <= ``packets_at_most`` in all; even if every later packet leaves on time, the gate
    then fails once late >= 0.001 N + 2 (the 2 covers the floor and the rounding of 0.999
    in double precision).
    """
    if late < 0 or packets_at_most < late:
        raise ValueError(f"late = {late!r} must be 0..packets_at_most "
                         f"({packets_at_most!r})")
    return late >= 0.001 * packets_at_most + 2
