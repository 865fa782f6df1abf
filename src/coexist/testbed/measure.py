"""Parsers for what the tools report: iperf3 JSON, ``ss -tin``, ``tc -s -j``, ping, ``ip -s -j``,
and the delay line's statistics and live counters.

Each parser takes the tool's text output and returns plain records in SI units (bytes,
bit/s, seconds). They raise :class:`MeasureError` with the offending line or key rather than
skipping anything they do not understand.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class MeasureError(ValueError):
    """A tool's output did not have the expected shape."""


# --------------------------------------------------------------------------- iperf3
@dataclass(frozen=True)
class Iperf3Result:
    """Receiver-side intervals and sender-side totals of one iperf3 test."""

    intervals: list[dict]        # start_s, end_s, bytes, bits_per_second (receiver side)
    sender_bytes: int
    receiver_bytes: int
    retransmits: int
    congestion: str | None       # as iperf3 reports the sender's congestion control


def parse_iperf3(text: str) -> Iperf3Result:
    """Parse ``iperf3 -c ... -J --get-server-output`` output.

    Goodput comes from the server's (receiver's) intervals: the client's intervals count
    bytes written into its socket, which run ahead of delivery by up to the socket buffer.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MeasureError(f"iperf3 output is not JSON: {exc}") from None
    if "error" in doc:
        raise MeasureError(f"iperf3 reported an error: {doc['error']}")
    try:
        server = doc["server_output_json"]
        intervals = [
            {"start_s": float(iv["sum"]["start"]), "end_s": float(iv["sum"]["end"]),
             "bytes": int(iv["sum"]["bytes"]),
             "bits_per_second": float(iv["sum"]["bits_per_second"])}
            for iv in server["intervals"]
        ]
        end = doc["end"]
        return Iperf3Result(
            intervals=intervals,
            sender_bytes=int(end["sum_sent"]["bytes"]),
            receiver_bytes=int(end["sum_received"]["bytes"]),
            retransmits=int(end["sum_sent"].get("retransmits", 0)),
            congestion=end.get("sender_tcp_congestion"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise MeasureError(f"iperf3 JSON lacks the expected field {exc}") from None


# --------------------------------------------------------------------------- ss
_SS_RATE = re.compile(r"^(\d+(?:\.\d+)?)([KMG]?)bps$")
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def _ss_rate(token: str, line: str) -> float:
    m = _SS_RATE.match(token)
    if not m:
        raise MeasureError(f"ss: cannot read rate {token!r} in line {line!r}")
    return float(m.group(1)) * _SCALE[m.group(2)]


def _port(endpoint: str, line: str) -> int:
    try:
        return int(endpoint.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise MeasureError(f"ss: cannot read a port from {endpoint!r} in {line!r}") from None


def parse_ss(text: str) -> list[dict]:
    """Parse ``ss -tinH`` output (a socket line, then its indented info line) into records.

    Keys: ``local_port``, ``peer_port``, ``cca``, ``cwnd`` (packets), ``srtt_s``,
    ``minrtt_s``, ``bytes_acked``, ``bytes_retrans``, ``delivery_rate_bps``,
    ``pacing_rate_bps`` and, for BBR, ``bbr_bw_bps``, ``bbr_mrtt_s``, ``pacing_gain``,
    ``cwnd_gain``. Missing fields are ``None``.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    records: list[dict] = []
    i = 0
    while i < len(lines):
        head = lines[i]
        if head[0].isspace():
            raise MeasureError(f"ss: info line without a socket line: {head!r}")
        cols = head.split()
        if len(cols) < 5:
            raise MeasureError(f"ss: socket line has {len(cols)} columns: {head!r}")
        rec: dict = {"state": cols[0], "local_port": _port(cols[3], head),
                     "peer_port": _port(cols[4], head),
                     "cca": None, "cwnd": None, "srtt_s": None, "minrtt_s": None,
                     "bytes_acked": None, "bytes_retrans": 0, "delivery_rate_bps": None,
                     "pacing_rate_bps": None, "bbr_bw_bps": None, "bbr_mrtt_s": None,
                     "pacing_gain": None, "cwnd_gain": None}
        info = lines[i + 1] if i + 1 < len(lines) and lines[i + 1][0].isspace() else ""
        i += 2 if info else 1
        tokens = info.split()
        # leading flags ("ts sack ecn cubic wscale:..."): the last one is the CCA's name
        flags = []
        for tok in tokens:
            if ":" in tok or tok in ("send", "pacing_rate", "delivery_rate"):
                break
            flags.append(tok)
        if flags:
            rec["cca"] = flags[-1]
        for k, tok in enumerate(tokens):
            nxt = tokens[k + 1] if k + 1 < len(tokens) else ""
            if tok.startswith("cwnd:"):
                rec["cwnd"] = int(tok[5:])
            elif tok.startswith("rtt:"):
                rec["srtt_s"] = float(tok[4:].split("/")[0]) / 1e3
            elif tok.startswith("minrtt:"):
                rec["minrtt_s"] = float(tok[7:]) / 1e3
            elif tok.startswith("bytes_acked:"):
                rec["bytes_acked"] = int(tok[12:])
            elif tok.startswith("bytes_retrans:"):
                rec["bytes_retrans"] = int(tok[14:])
            elif tok == "delivery_rate":
                rec["delivery_rate_bps"] = _ss_rate(nxt, info)
            elif tok == "pacing_rate":
                rec["pacing_rate_bps"] = _ss_rate(nxt, info)
            elif tok.startswith("bbr:("):
                for item in tok[5:].rstrip(")").split(","):
                    key, _, val = item.partition(":")
                    if key == "bw":
                        rec["bbr_bw_bps"] = _ss_rate(val, info)
                    elif key == "mrtt":
                        rec["bbr_mrtt_s"] = float(val) / 1e3
                    elif key in ("pacing_gain", "cwnd_gain"):
                        rec[key] = float(val)
        records.append(rec)
    return records


# --------------------------------------------------------------------------- tc
def parse_tc_qdisc(text: str, handle: str) -> dict:
    """Counters of the qdisc with ``handle`` (e.g. ``"10:"``) from ``tc -s -j qdisc show``."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MeasureError(f"tc output is not JSON: {exc}") from None
    for q in doc:
        if q.get("handle") == handle:
            try:
                return {"kind": q["kind"], "sent_bytes": int(q["bytes"]),
                        "sent_packets": int(q["packets"]), "drops": int(q["drops"]),
                        "backlog_bytes": int(q["backlog"]), "backlog_packets": int(q["qlen"])}
            except KeyError as exc:
                raise MeasureError(f"tc qdisc {handle} lacks field {exc}") from None
    raise MeasureError(f"tc: no qdisc with handle {handle!r} in {[q.get('handle') for q in doc]}")


def qdisc_drops(text: str, skip: Iterable[tuple[str, str]] = ()) -> dict[str, int]:
    """Drops per qdisc (``dev kind handle``) from ``tc -s -j qdisc show``.

    ``skip`` lists (device, handle) pairs to leave out, i.e. the bottleneck's own qdiscs.
    """
    skipped = set(skip)
    out: dict[str, int] = {}
    try:
        for q in json.loads(text):
            if (q["dev"], q["handle"]) in skipped:
                continue
            out[f"{q['dev']} {q['kind']} {q['handle']}"] = int(q.get("drops", 0))
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise MeasureError(f"tc -s -j qdisc show: unexpected output ({exc})") from None
    return out


# --------------------------------------------------------------------------- ping
_PING_LINE = re.compile(r"^\[(\d+\.\d+)\] \d+ bytes from \S+ icmp_seq=(\d+) ttl=\d+ "
                        r"time=(\d+(?:\.\d+)?) ms")


def parse_ping(text: str) -> list[dict]:
    """Echo replies from ``ping -D -n`` as ``{unix_s, seq, rtt_s}``; other lines are checked.

    Lines that are neither a reply nor ping's known header/summary text raise, so a
    changed output format cannot silently lose samples.
    """
    out = []
    for line in text.splitlines():
        m = _PING_LINE.match(line)
        if m:
            out.append({"unix_s": float(m.group(1)), "seq": int(m.group(2)),
                        "rtt_s": float(m.group(3)) / 1e3})
        elif line.strip() and not line.startswith(("PING ", "--- ", "rtt ", "round-trip"))\
                and "packets transmitted" not in line and "no answer yet" not in line:
            raise MeasureError(f"ping: unexpected line {line!r}")
    return out


# --------------------------------------------------------------------------- ip -s link
def link_drops(text: str) -> dict[str, int]:
    """rx+tx dropped per interface from ``ip -s -j link show``."""
    out: dict[str, int] = {}
    try:
        for link in json.loads(text):
            s = link["stats64"]
            out[link["ifname"]] = int(s["rx"]["dropped"]) + int(s["tx"]["dropped"])
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise MeasureError(f"ip -s -j link: unexpected output ({exc})") from None
    return out


# --------------------------------------------------------------------------- delay line
def parse_delayline_stats(text: str) -> dict:
    """The delay line's JSON statistics, checked for the fields the gates use."""
    try:
        doc = json.loads(text)
        _ = (doc["lateness_us"]["p999"], doc["cpu_s"], doc["user_s"], doc["sys_s"],
             doc["cpu"], doc["rps_cpus"], doc["wall_s"], doc["devices"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise MeasureError(f"delay-line statistics malformed ({exc})") from None
    return doc


#: Layout of the delay line's ``--live`` file (struct live in delayline.c).
LIVE_MAGIC = b"CXDLIVE1"
LIVE_HEADER_BYTES = 32          # magic, arrived, released, reserved
LIVE_HIST_BINS = 100_001        # 1-us lateness bins up to 100 ms, the last one open-ended


@dataclass(frozen=True)
class LiveCounts:
    """The delay line's counters while it runs: packets arrived and released over all
    devices, and the release-lateness histogram (1-us bins)."""

    arrived: int
    released: int
    hist: np.ndarray


def read_delayline_live(path: Path) -> LiveCounts:
    """Read the delay line's ``--live`` counters.

    The histogram is read before the arrived count: the line counts a packet as arrived
    before it can be released, so ``arrived`` is never smaller than the packets in
    ``hist``, which is what an upper bound on the run's packets needs.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        size = LIVE_HIST_BINS * 4
        raw = os.pread(fd, size, LIVE_HEADER_BYTES)
        header = os.pread(fd, LIVE_HEADER_BYTES, 0)
    finally:
        os.close(fd)
    if len(raw) != size or len(header) != LIVE_HEADER_BYTES or header[:8] != LIVE_MAGIC:
        raise MeasureError(f"delay-line live counters in {path} are not the expected "
                           f"{LIVE_HEADER_BYTES + size}-byte {LIVE_MAGIC.decode()} layout")
    arrived, released = struct.unpack_from("=QQ", header, 8)
    return LiveCounts(arrived, released, np.frombuffer(raw, dtype=np.uint32))

