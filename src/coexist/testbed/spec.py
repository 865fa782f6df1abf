"""What one experiment is: bottleneck, base RTTs, buffer and the flows that share it.

Command-line text (``50mbit``, ``40ms``, ``cubic:1,bbr:1@20ms``) is parsed here into SI
units (bit/s, seconds, bytes) and checked once, so every later step can trust it.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field

from ..core import quantities
from ..core.params import ParameterError, invalid

#: Congestion controls the harness knows how to request and recognise in ``ss`` output.
KNOWN_CCAS = ("cubic", "bbr", "reno")
#: Bytes one full-sized packet occupies at the bottleneck qdisc (1500 MTU + Ethernet header).
WIRE_PACKET_BYTES = 1514
#: Limits: how fast the veth/TUN path passes every gate depends on the machine (on a 2-core
#: machine, the ``ceiling`` campaigns of T-F4 measure it); above 1 Gbit/s nothing here is
#: meaningful.
CAPACITY_RANGE = (1e5, 1e9)
RTT_RANGE = (0.001, 1.0)
MAX_FLOWS = 64
#: The end of a run left out of its measurement window (the flows stop sending).
END_MARGIN_S = 0.5
#: Shortest span of bottleneck counter samples a link utilisation is computed over. A
#: sample's time stamp and its counters are read apart by up to tens of ms under steal:
#: over 1 s that moves the ratio by a few %, over one 0.2-s sample interval by up to 10 %.
MIN_UTILISATION_SPAN_S = 1.0



def parse_rate(text: str | float, name: str = "capacity") -> float:
    """Bit/s from ``50mbit``, ``100Mbps``, ``1gbit`` (text needs its unit; a number is
    bit/s), within what the harness can emulate (:data:`CAPACITY_RANGE`)."""
    return quantities.rate(text, name, CAPACITY_RANGE)


def parse_time(text: str | float, name: str, low: float, high: float,
               unit_required: bool = False) -> float:
    """Seconds from ``40ms``, ``0.04s``, ``40000us`` or a plain number of seconds; with
    ``unit_required`` (RTTs, which read naturally in ms) a text needs its unit
    (:func:`coexist.core.quantities.time`)."""
    return quantities.time(text, name, low, high, unit_required=unit_required)


@dataclass(frozen=True)
class Flow:
    """One iperf3 flow: its congestion control and the base RTT of its sender group."""

    cca: str
    rtt_s: float


def parse_flows(text: str, default_rtt_s: float) -> tuple[Flow, ...]:
    """Flows from ``cubic:1,bbr:1`` or, with per-group RTTs, ``cubic:3@10ms,bbr:3@30ms``.

    Counts may be 0 (a mix with no flow of that kind); the total must be 1..64.
    """
    valid = (f"comma-separated CCA:COUNT[@RTT] with CCA in {', '.join(KNOWN_CCAS)}, "
             f"COUNT >= 0, 1..{MAX_FLOWS} flows in total")
    flows: list[Flow] = []
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*([a-z0-9_]+)\s*:\s*(\d+)\s*(?:@\s*(\S+))?\s*", part.lower())
        if not m or m.group(1) not in KNOWN_CCAS:
            raise invalid("flows", text, valid)
        rtt = (default_rtt_s if m.group(3) is None
               else parse_time(m.group(3), "flows (rtt)", *RTT_RANGE, unit_required=True))
        if len(flows) + int(m.group(2)) > MAX_FLOWS:  # before the flows are built
            raise invalid("flows", text, valid)
        flows.extend(Flow(m.group(1), rtt) for _ in range(int(m.group(2))))
    if not 1 <= len(flows) <= MAX_FLOWS:
        raise invalid("flows", text, valid)
    return tuple(flows)


def format_flows(flows: tuple[Flow, ...], default_rtt_s: float) -> str:
    """Inverse of :func:`parse_flows` (grouping consecutive equal flows)."""
    parts: list[str] = []
    i = 0
    while i < len(flows):
        j = i
        while j < len(flows) and flows[j] == flows[i]:
            j += 1
        rtt = "" if flows[i].rtt_s == default_rtt_s else f"@{flows[i].rtt_s * 1e3:g}ms"
        parts.append(f"{flows[i].cca}:{j - i}{rtt}")
        i = j
    return ",".join(parts)


@dataclass(frozen=True)
class Experiment:
    """A fully checked experiment description, in SI units.

    ``buffer_bdp`` is in multiples of the bottleneck BDP computed with ``rtt_s`` (the
    reference RTT, which is also the default per-flow RTT).
    """

    capacity_bps: float
    rtt_s: float
    buffer_bdp: float
    flows: tuple[Flow, ...]
    duration_s: float = 60.0
    warmup_s: float = 10.0
    interval_s: float = 1.0
    sample_s: float = 0.2
    delay: str = "auto"
    seed: int = 0
    #: the BBR flows start one after another, this far apart (the k-th at k x stagger_s);
    #: other flows start at once
    stagger_s: float = 0.0
    #: the TUN delay line runs on the last CPU and the ACKs it writes back are processed
    #: on the others (receive packet steering; ``delayline.c --cpu``)
    steer_acks: bool = False
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def bdp_bytes(self) -> float:
        return self.capacity_bps * self.rtt_s / 8.0

    @property
    def buffer_bytes(self) -> int:
        """The bfifo limit: ``buffer_bdp x C x RTT / 8`` bytes, rounded to a byte."""
        return int(round(self.buffer_bdp * self.bdp_bytes))

    @property
    def groups(self) -> tuple[float, ...]:
        """Distinct base RTTs, in order of first appearance: one sender namespace each."""
        return tuple(dict.fromkeys(f.rtt_s for f in self.flows))

    def group_of(self, flow: Flow) -> int:
        return self.groups.index(flow.rtt_s)

    def start_s(self, index: int) -> float:
        """When flow ``index`` starts after the run's first flow, s (:attr:`stagger_s`)."""
        if self.flows[index].cca != "bbr":
            return 0.0
        return sum(f.cca == "bbr" for f in self.flows[:index]) * self.stagger_s

    def to_dict(self) -> dict:
        d = asdict(self)
        d["flows"] = format_flows(self.flows, self.rtt_s)
        d["buffer_bytes"] = self.buffer_bytes
        d.pop("extra")
        return d


def experiment(
    *,
    capacity: str | float,
    rtt: str | float,
    buffer_bdp: float,
    flows: str,
    duration: str | float = 60.0,
    warmup: str | float = 10.0,
    interval: str | float = 1.0,
    sample: str | float = 0.2,
    delay: str = "auto",
    seed: int = 0,
    stagger: str | float = 0.0,
    steer_acks: bool = False,
) -> Experiment:
    """Parse and check an experiment; every error names the parameter and its valid range."""
    capacity_bps = parse_rate(capacity)
    rtt_s = parse_time(rtt, "rtt", *RTT_RANGE, unit_required=True)
    if isinstance(buffer_bdp, bool) or not isinstance(buffer_bdp, (int, float)) \
            or not 0.01 <= buffer_bdp <= 1000:
        raise invalid("buffer_bdp", buffer_bdp, "a number with 0.01 <= buffer_bdp <= 1000")
    flow_list = parse_flows(flows, rtt_s)
    duration_s = parse_time(duration, "duration", 2.0, 7200.0)
    warmup_s = parse_time(warmup, "warmup", 0.0, 7200.0)
    interval_s = parse_time(interval, "interval", 0.1, 10.0)
    sample_s = parse_time(sample, "sample", 0.02, 10.0)
    # the samples inside [warmup, duration - END_MARGIN_S] must span MIN_UTILISATION_SPAN_S
    # wherever the sampling grid falls, or no run of this experiment could pass the
    # utilisation gate
    need = END_MARGIN_S + 2 * sample_s + MIN_UTILISATION_SPAN_S
    if duration_s < need:
        raise ParameterError(
            f"parameter 'duration' = {duration!r} is too short to measure the link with "
            f"samples every {sample_s:g} s ({MIN_UTILISATION_SPAN_S:g} s of samples, then "
            f"{END_MARGIN_S:g} s not counted); valid: duration >= {need:g} s at this sample")
    if warmup_s > duration_s - need:
        raise ParameterError(
            f"parameter 'warmup' = {warmup!r} must leave {need:g} s of the duration "
            f"({duration_s:g} s) to measure the link over ({MIN_UTILISATION_SPAN_S:g} s of "
            f"samples every {sample_s:g} s, then {END_MARGIN_S:g} s not counted); valid: "
            f"0 <= warmup <= {duration_s - need:g} s")
    if delay not in ("auto", "tun", "netem"):
        raise invalid("delay", delay, "one of 'auto', 'tun', 'netem'")
    stagger_s = parse_time(stagger, "stagger", 0.0, 60.0)
    n_bbr = sum(f.cca == "bbr" for f in flow_list)
    if stagger_s > 0 and (n_bbr - 1) * stagger_s >= warmup_s:
        raise ParameterError(
            f"parameter 'stagger' = {stagger!r} would start the last of {n_bbr} BBR flows "
            f"{(n_bbr - 1) * stagger_s:g} s in, not before the warm-up ({warmup_s:g} s) ends; "
            f"valid: 0 <= stagger < warmup / {max(n_bbr - 1, 1)} = "
            f"{warmup_s / max(n_bbr - 1, 1):g} s")
    if not isinstance(steer_acks, bool):
        raise invalid("steer_acks", steer_acks, "true or false")
    if steer_acks and delay == "netem":
        raise invalid("steer_acks", steer_acks,
                      "false with delay 'netem' (it steers the TUN delay line's ACKs)")
    if steer_acks and (os.cpu_count() or 1) < 2:
        raise invalid("steer_acks", steer_acks,
                      f"false on a machine with {os.cpu_count() or 1} CPU (needs 2 or more)")
    exp = Experiment(capacity_bps, rtt_s, float(buffer_bdp), flow_list, duration_s, warmup_s,
                     interval_s, sample_s, delay, int(seed), stagger_s, steer_acks)
    if exp.buffer_bytes < 2 * WIRE_PACKET_BYTES:
        raise ParameterError(
            f"parameter 'buffer_bdp' = {buffer_bdp!r} gives a {exp.buffer_bytes}-byte buffer at "
            f"{capacity_bps / 1e6:g} Mbit/s and {rtt_s * 1e3:g} ms; valid: at least "
            f"{2 * WIRE_PACKET_BYTES} bytes (two full packets), i.e. buffer_bdp >= "
            f"{2 * WIRE_PACKET_BYTES / exp.bdp_bytes:.3g}")
    return exp
