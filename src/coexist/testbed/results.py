"""A finished run's measurements: its raw outputs (iperf3 reports, socket and queue samples,
pings, the delay line's statistics) turned into tidy tables, judged by the validity gates
and summarised, as a :class:`RunResult`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.fairness import jain
from ..data import gates
from . import measure
from .procs import _Procs
from .spec import END_MARGIN_S, MIN_UTILISATION_SPAN_S
from .topology import Plan, TestbedError


@dataclass
class RunResult:
    summary: dict
    flows: pd.DataFrame
    series: pd.DataFrame
    sockets: pd.DataFrame
    queue: pd.DataFrame
    probe: pd.DataFrame
    path: Path | None = None

    @property
    def valid(self) -> bool:
        return bool(self.summary["valid"])


def link_utilisation(window: pd.DataFrame, capacity_bps: float) -> tuple[float, float]:
    """(utilisation, mean packet bytes) of the bottleneck over ``window``, its counter samples
    (``t_s``, cumulative ``sent_bytes`` and ``sent_packets``) after the warm-up.

    Utilisation is the bytes the bottleneck sent between the first and the last sample over
    what capacity could carry in that time (the gate's link utilisation). Both are NaN when
    the samples span less than :data:`.spec.MIN_UTILISATION_SPAN_S`: a run stopped just after
    its warm-up has no window to measure, and a ratio over a fraction of a second would mostly
    measure sampling jitter (a sample's time stamp and its counters are read apart by up to
    tens of ms under hypervisor steal; a run stopped 0.23 s after its warm-up read 1.07).
    """
    if not capacity_bps > 0:
        raise ValueError(f"capacity_bps = {capacity_bps!r}: must be > 0")
    if len(window) < 2:
        return math.nan, math.nan
    first, last = window.iloc[0], window.iloc[-1]
    span = last["t_s"] - first["t_s"]
    if span < MIN_UTILISATION_SPAN_S:
        return math.nan, math.nan
    sent = last["sent_bytes"] - first["sent_bytes"]
    packets = last["sent_packets"] - first["sent_packets"]
    return sent * 8 / (capacity_bps * span), (sent / packets if packets else math.nan)


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else math.nan


def _analyse(plan: Plan, procs: _Procs, workdir: Path, offsets: list[float], t0_unix: float,
             sockets: list[dict], queue: list[dict], dl_stats: dict | None,
             other_drops: dict[str, int], th: gates.Thresholds,
             stopped: dict | None = None) -> RunResult:
    exp = plan.exp
    n = len(exp.flows)
    flow_rows, series_rows, complete = [], [], []
    # a run stopped early cut its iperf3 reports off: it has no per-flow results
    for i, flow in enumerate(exp.flows if stopped is None else []):
        name = f"client{i}"
        proc = dict(procs.items)[name]
        text = (workdir / f"{name}.out").read_text(errors="replace")
        try:
            res = measure.parse_iperf3(text)
        except measure.MeasureError as exc:
            raise TestbedError(f"flow {i} ({flow.cca}): {exc}; stderr: {procs.stderr(name)}") \
                from None
        ivs = res.intervals
        late = exp.start_s(i)  # a staggered flow's reports count from its own start
        done = proc.returncode == 0 and bool(ivs) and \
            ivs[-1]["end_s"] >= exp.duration_s - late - exp.interval_s - 1e-6
        complete.append(done)
        measured = [iv for iv in ivs if iv["start_s"] + late >= exp.warmup_s - 1e-6]
        secs = sum(iv["end_s"] - iv["start_s"] for iv in measured)
        goodput = sum(iv["bytes"] for iv in measured) * 8 / secs if secs > 0 else math.nan
        flow_rows.append({"flow": i, "cca": flow.cca, "rtt_s": flow.rtt_s,
                          "group": exp.group_of(flow), "start_offset_s": round(offsets[i], 6),
                          "goodput_bps": goodput, "bytes_received": res.receiver_bytes,
                          "retransmits": res.retransmits, "iperf3_congestion": res.congestion})
        for iv in ivs:
            series_rows.append({"flow": i, "cca": flow.cca, "rtt_s": flow.rtt_s,
                                "t_start_s": offsets[i] + iv["start_s"],
                                "t_end_s": offsets[i] + iv["end_s"], "bytes": iv["bytes"],
                                "goodput_bps": iv["bits_per_second"]})
    if stopped is not None:
        complete = [False] * n
    flows = pd.DataFrame(flow_rows)
    total = float(flows["goodput_bps"].sum()) if len(flows) else math.nan
    if len(flows):
        flows["share"] = flows["goodput_bps"] / total if total > 0 else math.nan
    series = pd.DataFrame(series_rows)

    sock = pd.DataFrame(sockets)
    if not sock.empty:
        sock = sock.sort_values(["flow", "t_s"]).reset_index(drop=True)
        sock.insert(1, "cca_requested", [exp.flows[f].cca for f in sock["flow"]])
        acked = sock.groupby("flow")["bytes_acked"].diff()
        dt = sock.groupby("flow")["t_s"].diff()
        sock["acked_rate_bps"] = acked * 8 / dt
        sock = sock.drop(columns=["state", "peer_port"])
        sock = sock[["t_s", "flow", *[c for c in sock.columns if c not in ("t_s", "flow")]]]
    cca_seen = gates.cca_while_sending(sock, n)

    q = pd.DataFrame(queue)
    if not q.empty:
        q = q[["t_s", *[c for c in q.columns if c != "t_s"]]]
    end = exp.duration_s - END_MARGIN_S
    if stopped is not None:
        end = min(end, stopped["at_s"])
    window = q[(q["t_s"] >= exp.warmup_s) & (q["t_s"] <= end)] if not q.empty else q
    utilisation, mean_pkt = link_utilisation(window, exp.capacity_bps)
    qdelay = window["backlog_bytes"] * 8 / exp.capacity_bps if len(window) else pd.Series([])

    probe_rows, probe_summary = [], []
    for g, rtt in enumerate(exp.groups):
        replies = measure.parse_ping((workdir / f"probe{g}.out").read_text(errors="replace"))
        rtts = [r["rtt_s"] for r in replies]
        for r in replies:
            probe_rows.append({"t_s": r["unix_s"] - t0_unix, "group": g,
                               "rtt_configured_s": rtt, "seq": r["seq"], "rtt_s": r["rtt_s"]})
        probe_summary.append({"group": g, "rtt_s": rtt, "count": len(rtts),
                              "p50_s": _percentile(rtts, 50), "p99_s": _percentile(rtts, 99),
                              "min_s": min(rtts) if rtts else math.nan,
                              "max_s": max(rtts) if rtts else math.nan})
    lateness = None if dl_stats is None else dl_stats["lateness_us"]["p999"] / 1e6
    metrics = {"probe": probe_summary, "lateness_p999_s": lateness,
               "utilisation": None if math.isnan(utilisation) else utilisation,
               "other_drops": other_drops, "cca_seen": list(zip([f.cca for f in exp.flows],
                                                                 cca_seen, strict=True)),
               "flows_complete": complete,
               # when each flow's test began: a late one is measured past the others' end
               "start_lags_s": gates.flow_start_lags(series, sock, offsets)
               if stopped is None and len(series) and len(sock) else None,
               "flow_rtts_s": [f.rtt_s for f in exp.flows]}
    evaluated = gates.evaluate(metrics, th)
    valid, reasons = gates.verdict(evaluated)
    if stopped is not None:
        reasons.insert(0, stopped["reason"])

    bbr = flows["cca"] == "bbr" if len(flows) else pd.Series([], dtype=bool)
    x = flows["goodput_bps"].to_numpy(dtype=float) if len(flows) else np.array([])
    summary = {
        "run_id": plan.run_id,
        "params": exp.to_dict(),
        "delay_backend": plan.delay,
        "flows": flows.to_dict(orient="records"),
        "goodput_total_bps": _num(total),
        "utilisation": _num(utilisation),
        "goodput_over_capacity": _num(total / exp.capacity_bps),
        "jain_index": _num(jain(x)) if total > 0 else None,
        "bbr_share": _num(flows.loc[bbr, "goodput_bps"].sum() / total) if bbr.any() else None,
        "mean_queue_delay_s": _num(qdelay.mean()) if len(qdelay) else None,
        "p95_queue_delay_s": _num(qdelay.quantile(0.95)) if len(qdelay) else None,
        "bottleneck_drops": int(q["drops"].iloc[-1]) if not q.empty else None,
        "bottleneck_mean_packet_bytes": _num(mean_pkt),
        "probe": probe_summary,
        "delay_line": None if dl_stats is None else {
            "scheduler": dl_stats["scheduler"], "cpu_fraction": dl_stats["cpu_s"] /
            max(dl_stats["wall_s"], 1e-9), "cpu_s": dl_stats["cpu_s"],
            "user_s": dl_stats["user_s"], "sys_s": dl_stats["sys_s"],
            "cpu": dl_stats["cpu"], "rps_cpus": dl_stats["rps_cpus"],
            "wall_s": dl_stats["wall_s"], "lateness_us": dl_stats["lateness_us"],
            "released": dl_stats["released"], "devices": dl_stats["devices"]},
        "other_drops": {k: v for k, v in other_drops.items() if v},
        "start_lags_s": None if metrics["start_lags_s"] is None else
        gates.lags_record(metrics["start_lags_s"]),
        "gates": gates.as_records(evaluated),
        "valid": valid,
        "invalid_reasons": reasons,
        "stopped_early": stopped,
    }
    return RunResult(summary, flows, series, sock, q, pd.DataFrame(probe_rows))


def _num(v: float) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v
