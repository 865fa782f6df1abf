"""What limits the testbed's long runs, read from each stored run: whether the socket buffers
hold the windows a deep buffer needs, whether the delay line is what limits BBR, and how
the ACK-path delay shows in BBR's own RTprop estimate and window."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .. import data

#: bytes of a bottleneck packet that are not TCP payload: Ethernet 14, IPv4 20, TCP 20 and
#: its timestamp option 12 (``ss`` counts BBR's bandwidth in payload segments)
WIRE_HEADER_BYTES = 66


def harness_checks(run_dirs: Sequence[tuple[dict, Path]]) -> pd.DataFrame:
    """What limits the long runs, one row per run: whether the socket buffers hold the
    windows a deep buffer needs, whether the delay line is what limits BBR, and how the
    ACK-path delay shows in BBR's RTprop estimate and window.

    - ``window_need_mb``: the most one flow can have in flight, one BDP plus the whole
      buffer (MB); ``cubic_cwnd_max_mb`` / ``bbr_cwnd_max_mb``: the largest window sampled
      of each flow, in bottleneck-sized packets (MB; CUBIC's slow start overshoots the
      path before its first loss); ``socket_headroom``: the socket buffers' limit
      (:data:`coexist.testbed.topology.SOCKET_BUFFER_MAX`) over the larger of those.
    - ``lateness_p999_ms`` / ``lateness_max_ms``: how late the delay line released packets
      (its gate: p99.9 under 1 ms); ``probe_p99_ms``: the path's RTT by ping.
    - ``rtprop_min_ms`` / ``rtprop_median_ms``: BBR's own min-RTT estimate (``ss``) over the
      scored part, beside the base RTT ``rtt_ms``: the ACK-path delay is in it in full.
    - ``cwnd_over_2bdp_est``: BBR's window over twice the BDP its own estimates give
      (bandwidth times RTprop, in payload segments of the bottleneck packets less
      :data:`WIRE_HEADER_BYTES`), median over the scored samples: 1 where the window is
      what eq. (7)'s cwnd gain of 2 makes it.
    """
    from ..testbed.topology import SOCKET_BUFFER_MAX

    rows = []
    for setting, d in run_dirs:
        d = Path(d)
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        params = summary["params"]
        packet = float(summary["bottleneck_mean_packet_bytes"])
        mss = packet - WIRE_HEADER_BYTES  # what ss counts BBR's bandwidth in
        bdp_bytes = params["capacity_bps"] * params["rtt_s"] / 8
        need = bdp_bytes + float(params["buffer_bytes"])
        sockets = data.load_table(d / data.RUN_FILES["sockets"], "sockets")
        cwnd_max = sockets.groupby("cca")["cwnd"].max()
        scored = sockets[sockets["t_s"] >= params["warmup_s"]]
        bbr = scored[scored["cca"] == "bbr"].dropna(subset=["bbr_bw_bps", "bbr_mrtt_s",
                                                            "cwnd"])
        est = bbr["bbr_bw_bps"] / 8 * bbr["bbr_mrtt_s"] / mss  # segments
        lateness = (summary.get("delay_line") or {}).get("lateness_us") or {}
        probes = [p["p99_s"] for p in summary.get("probe") or []]
        rows.append({
            **setting, "rtt_ms": params["rtt_s"] * 1e3,
            "window_need_mb": need / 1e6,
            "cubic_cwnd_max_mb": float(cwnd_max.get("cubic", np.nan)) * packet / 1e6,
            "bbr_cwnd_max_mb": float(cwnd_max.get("bbr", np.nan)) * packet / 1e6,
            "socket_headroom": SOCKET_BUFFER_MAX / (float(cwnd_max.max()) * packet),
            "lateness_p999_ms": lateness.get("p999", np.nan) / 1e3,
            "lateness_max_ms": lateness.get("max", np.nan) / 1e3,
            "probe_p99_ms": max(probes) * 1e3 if probes else np.nan,
            "rtprop_min_ms": float(bbr["bbr_mrtt_s"].min()) * 1e3 if len(bbr) else np.nan,
            "rtprop_median_ms": float(bbr["bbr_mrtt_s"].median()) * 1e3 if len(bbr) else np.nan,
            "cwnd_over_2bdp_est": float((bbr["cwnd"] / (2 * est)).median()) if len(bbr)
            else np.nan})
    return pd.DataFrame(rows)
