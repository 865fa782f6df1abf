"""One experiment end to end: build the dumbbell, run the flows, measure, gate, tear down.

The result is a set of tidy tables (one row per flow; goodput, socket, queue and probe time
series) and a summary with the gates and the run's provenance. :func:`write` stores them
atomically: a run directory either exists complete or not at all.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis.fairness import jain
from ..core import provenance
from ..data import gates
from . import delay, measure, steal, topology, wakeups
from .spec import END_MARGIN_S, MIN_UTILISATION_SPAN_S, WIRE_PACKET_BYTES, Experiment
from .topology import BOTTLENECK_DEV, BOTTLENECK_HANDLE, RECEIVER_IP, Plan, TestbedError, sh

BASE_PORT = 5201
#: Client ports of the data connections: below Linux's default ephemeral range (32768-60999),
#: so no other connection (iperf3's control connections run the namespace's default CCA) can
#: hold a flow's port; :func:`_check_client_ports` checks the range in the run's namespaces.
BASE_CPORT = 20001

#: Bound on the packets the ACK path carries per full-sized data packet the bottleneck
#: can deliver: one ACK per data segment at most, and segments of at least half the MTU.
#: Over every stored run the delay line released at most 0.79 of the full-sized packets
#: the bottleneck could carry (test_testbed_abort checks the bound on all of them).
ACK_PATH_PER_DATA_PACKET_MAX = 2.0
#: Packets per flow outside the data transfer: handshakes, iperf3's control connection
#: and the results exchange (the server's JSON report rides the ACK path).
ACK_PATH_EXTRA_PER_FLOW = 500
PROBE_HZ = 10.0  # probe pings per second and sender group (ping -i 0.1)
DATA_START_SLACK_S = 3.0  # from starting an iperf3 client to its first data, at most


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


class Interrupted(Exception):
    """The run was stopped by a signal; the topology has been removed."""


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


@dataclass
class _Procs:
    """Processes started inside the run's namespaces (killed by teardown in any case)."""

    workdir: Path
    items: list[tuple[str, subprocess.Popen]] = field(default_factory=list)

    def start(self, name: str, ns: str, argv: list[str], *, stdout_to_file: bool = True,
              ) -> subprocess.Popen:
        out = open(self.workdir / f"{name}.out", "wb") if stdout_to_file else subprocess.PIPE
        err = open(self.workdir / f"{name}.err", "wb")
        p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=out, stderr=err,
                             start_new_session=True)
        self.items.append((name, p))
        return p

    def stderr(self, name: str) -> str:
        path = self.workdir / f"{name}.err"
        return path.read_text(errors="replace").strip() if path.exists() else ""


@contextmanager
def _signals_raise():
    """Turn SIGTERM/SIGHUP into an exception so ``finally`` blocks tear the testbed down."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise Interrupted(f"stopped by signal {signal.Signals(signum).name}")

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def _signals_deferred():
    """Hold SIGINT, SIGTERM and SIGHUP while the testbed is torn down, then act on the first
    one that came (through the handler that was in place, which raises).

    A signal that lands inside the teardown would abort it halfway and leave the run's
    namespaces behind: a campaign interrupted just as a run stopped early once did that.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, lambda signum, _frame: caught.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if caught:
            first = caught[0]
            handler = old[first]
            if callable(handler):
                handler(first, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), first)


def _wait_listening(ns: str, ports: list[int], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = sh(["nsenter", f"--net=/run/netns/{ns}", "ss", "-ltnH"], check=False)
        listening = {int(line.split()[3].rsplit(":", 1)[1]) for line in out.splitlines()
                     if line.strip()}
        if set(ports) <= listening:
            return
        time.sleep(0.05)
    raise TestbedError(f"iperf3 servers did not start listening on {ports} within {timeout} s")


def flow_of_socket(n_flows: int) -> dict[tuple[int, int], int]:
    """(client port, server port) of each flow's data connection -> flow index. Both ports
    are matched: an ``ss`` line with a flow's client port but another peer is not its data
    (a control connection that got the port would otherwise be read as the flow)."""
    return {(BASE_CPORT + i, BASE_PORT + i): i for i in range(n_flows)}


def _check_client_ports(plan: Plan, n_flows: int) -> None:
    """Refuse to run when a sender namespace's ephemeral port range holds a flow's client
    port: another connection could take it before the flow binds it."""
    ports = range(BASE_CPORT, BASE_CPORT + n_flows)
    for ns in plan.senders:
        lo, hi = map(int, sh(["nsenter", f"--net=/run/netns/{ns}", "cat",
                              "/proc/sys/net/ipv4/ip_local_port_range"]).split())
        if lo <= ports[-1] and ports[0] <= hi:
            raise TestbedError(f"{ns}: net.ipv4.ip_local_port_range {lo}-{hi} overlaps the "
                               f"flows' client ports {ports[0]}-{ports[-1]}")


def _sampler(plan: Plan, t0: float, stop: threading.Event,
             flows: dict[tuple[int, int], int], sockets: list[dict], queue: list[dict],
             errors: list[BaseException]) -> None:
    """Sample every sender's sockets (``ss``) and the bottleneck (``tc``) every sample_s."""
    step = plan.exp.sample_s
    k = 0
    try:
        while not stop.is_set():
            for ns in plan.senders:
                t = time.monotonic() - t0
                out = sh(["nsenter", f"--net=/run/netns/{ns}", "ss", "-tinH"])
                for rec in measure.parse_ss(out):
                    flow = flows.get((rec["local_port"], rec["peer_port"]))
                    if rec["state"] == "ESTAB" and flow is not None:
                        rec.update(t_s=t, flow=flow)
                        sockets.append(rec)
            t = time.monotonic() - t0
            out = sh(["nsenter", f"--net=/run/netns/{plan.router}", "tc", "-s", "-j", "qdisc",
                      "show", "dev", BOTTLENECK_DEV])
            q = measure.parse_tc_qdisc(out, BOTTLENECK_HANDLE)
            q["t_s"] = t
            queue.append(q)
            k += 1
            stop.wait(max(0.0, k * step - (time.monotonic() - t0)))
    except BaseException as exc:  # reported by the main thread
        errors.append(exc)


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


def run(exp: Experiment, *, progress: bool = True,
        th: gates.Thresholds = gates.DEFAULT, stop_early: bool = True) -> RunResult:
    """Run one experiment and return its measurements (not yet written anywhere).

    With ``stop_early`` (and the TUN delay line) a run stops as soon as its lateness gate
    is certain to fail: it would be invalid, and the rest of it would only take time. The
    summary then says so under ``stopped_early``; its flows table and goodputs are empty,
    the iperf3 reports having been cut off.
    """
    backend = delay.resolve(exp.delay)
    if exp.steer_acks and backend != "tun":
        raise TestbedError(f"steer_acks steers the TUN delay line's ACKs, but the delay here "
                           f"is {backend}: use delay 'tun' (--delay tun)")
    dl_binary = delay.binary() if backend == "tun" else None
    # 12 hex digits: 6 collided once in ~3000 stored runs (two campaigns share one)
    plan = Plan(secrets.token_hex(6), exp, backend)
    workdir = topology.scratch_dir(plan.run_id)
    # the live counters are written on every packet: keep them in memory (tmpfs)
    live = topology.live_counters_path(plan.run_id, workdir)
    procs = _Procs(workdir)
    prov = provenance.collect()
    load_start, cpu_start = os.getloadavg(), provenance.cpu_times()
    sockets: list[dict] = []
    queue: list[dict] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    steal_stop = threading.Event()
    steal_samples: list[tuple[float, float]] = []
    sampler: threading.Thread | None = None
    sleepers: list = []
    stall_probe: dict = {}
    n = len(exp.flows)
    flows = flow_of_socket(n)
    wall0 = time.monotonic()
    try:
        with _signals_raise():
            topology.setup(plan)
            _check_client_ports(plan, n)
            dl = None
            if dl_binary is not None:
                dl = procs.start("delayline", plan.router,
                                 [str(dl_binary), "--stats", str(workdir / "delayline.json"),
                                  "--live", str(live), *plan.delayline_args()],
                                 stdout_to_file=False)
                ready = dl.stdout.readline().decode().strip()
                if ready != "ready":
                    dl.wait(5)
                    raise TestbedError(f"delay line failed to start: {procs.stderr('delayline')}")
            for i in range(n):
                procs.start(f"server{i}", plan.receiver,
                            ["iperf3", "-s", "-1", "-J", "-p", str(BASE_PORT + i),
                             "-i", f"{exp.interval_s:g}"])
            _wait_listening(plan.receiver, [BASE_PORT + i for i in range(n)])
            probe_s = exp.duration_s + 1.0
            for g in range(len(exp.groups)):
                procs.start(f"probe{g}", plan.router,
                            ["ping", "-n", "-D", "-i", "0.1", "-w", f"{probe_s:.0f}",
                             topology.sender_ip(g)])
            t0, t0_unix = time.monotonic(), time.time()
            stealer = threading.Thread(target=steal.watch, daemon=True,
                                       args=(steal_stop, steal_samples))
            stealer.start()
            # sleepers on every CPU: was a late delay line the machine's stall? (wakeups)
            sleepers = wakeups.start_during_run(exp.duration_s + 5.0)
            offsets = []
            clients = []
            for i, flow in enumerate(exp.flows):
                # a staggered flow waits in its namespace, then runs to the common end
                wait = exp.start_s(i)
                offsets.append(time.monotonic() - t0 + wait)
                argv = ["iperf3", "-c", RECEIVER_IP, "-p", str(BASE_PORT + i),
                        "--cport", str(BASE_CPORT + i), "-C", flow.cca,
                        "-t", f"{exp.duration_s - wait:g}", "-i", f"{exp.interval_s:g}", "-J",
                        "--get-server-output"]
                if wait > 0:
                    argv = ["sh", "-c", f'sleep {wait:g} && exec "$0" "$@"', *argv]
                clients.append(procs.start(f"client{i}", plan.sender(exp.group_of(flow)), argv))
            sampler = threading.Thread(target=_sampler, daemon=True, args=(
                plan, t0, stop, flows, sockets, queue, errors))
            sampler.start()
            watch = _lateness_watch(live, exp, th, max(offsets)) \
                if stop_early and dl is not None else None
            stopped = _wait_clients(clients, exp.duration_s, t0, progress, watch)
            if stopped is not None:
                for c in clients:
                    if c.poll() is None:
                        c.kill()
                for c in clients:
                    c.wait(10)
            stop.set()
            steal_stop.set()
            stall_probe = wakeups.collect(sleepers)
            stealer.join(timeout=10)
            sampler.join(timeout=10)
            if errors:
                raise TestbedError(f"sampling failed: {errors[0]}")
            for name, p in procs.items:
                if name.startswith("probe") and p.poll() is None:
                    p.send_signal(signal.SIGINT)
            for name, p in procs.items:
                if name.startswith("probe"):
                    p.wait(10)
            # drop counters close with the traffic, before the delay line stops: a TUN
            # device without its reader drops what arrives later (a late closing FIN)
            other = _other_drops(plan)
            if dl is not None:
                _stop_delay_line(dl, procs)
                stats = measure.parse_delayline_stats((workdir / "delayline.json").read_text())
                for dev in stats["devices"]:
                    other[f"delay line {dev['name']}"] = int(dev["drops"])
            else:
                stats = None
            result = _analyse(plan, procs, workdir, offsets, t0_unix, sockets, queue, stats,
                              other, th, stopped)
    finally:
        stop.set()
        steal_stop.set()
        for _cpu, p in sleepers:
            if p.poll() is None:
                p.kill()
                p.wait()
        try:
            with _signals_deferred():
                topology.teardown(plan)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            live.unlink(missing_ok=True)
    # machine load around the run: evidence of concurrent work that could disturb it
    prov["loadavg_1_5_15"] = {"start": list(load_start), "end": list(os.getloadavg())}
    cpu_end = provenance.cpu_times()
    prov["cpu_seconds_during_run"] = {k: round(cpu_end[k] - cpu_start[k], 2)
                                      for k in cpu_start if k in cpu_end}
    # a short burst of steal fails a run yet hardly moves its average: the busiest second
    prov["steal_peak"] = steal.peak_record(steal_samples, cores=prov.get("cores"))
    result.summary.update(provenance=prov, wall_s=round(time.monotonic() - wall0, 3),
                          stall_probe=stall_probe)
    return result


DELAY_LINE_STOP_S = 30.0  # the delay line gets this long to write its statistics and exit


def _stop_delay_line(dl: subprocess.Popen, procs: _Procs) -> None:
    """SIGTERM the delay line and wait for its statistics. Under heavy hypervisor steal
    this has taken longer than 10 s; a line still running after ``DELAY_LINE_STOP_S`` is
    killed, and the run fails as a harness error (without statistics it cannot be judged)."""
    dl.send_signal(signal.SIGTERM)
    try:
        dl.wait(DELAY_LINE_STOP_S)
    except subprocess.TimeoutExpired:
        dl.kill()
        dl.wait(10)
        raise TestbedError(f"the delay line did not exit within {DELAY_LINE_STOP_S:g} s of "
                           f"SIGTERM; stderr: {procs.stderr('delayline') or '(empty)'}") from None


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


def _other_drops(plan: Plan) -> dict[str, int]:
    """Every drop counter of the topology except the bottleneck qdisc's."""
    out: dict[str, int] = {}
    skip = [(BOTTLENECK_DEV, "1:"), (BOTTLENECK_DEV, BOTTLENECK_HANDLE)]
    for ns in plan.namespaces:
        role = ns.rsplit("-", 1)[1]
        for dev, count in measure.link_drops(sh(["ip", "-n", ns, "-s", "-j", "link", "show"])
                                             ).items():
            out[f"{role} {dev} link"] = count
        text = sh(["tc", "-n", ns, "-s", "-j", "qdisc", "show"])
        skipped = skip if ns == plan.router else []
        for name, count in measure.qdisc_drops(text, skipped).items():
            out[f"{role} {name}"] = count
    return out


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


def _json_default(o: object) -> object:
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if math.isnan(o) else float(o)
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def summary_json(result: RunResult) -> str:
    return json.dumps(result.summary, indent=2, default=_json_default, allow_nan=False)


def write(result: RunResult, out_dir: Path, name: str | None = None,
          tables: bool = True) -> Path:
    """Store the run as ``out_dir/name/`` (summary.json + one table file each), atomically.

    Files are written into a hidden sibling directory that is renamed into place, so a
    crash leaves either the complete run or nothing under ``name``. Tables follow the
    schemas of :mod:`coexist.data`; time series are gzip-compressed. Without ``tables`` only
    ``summary.json`` is stored (its gate values, steal and provenance are the whole record).
    """
    from .. import data

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / (name or result.summary["run_id"])
    if dest.exists():
        raise FileExistsError(f"run directory {dest} exists; refusing to overwrite")
    tmp = out_dir / f".{dest.name}.partial-{secrets.token_hex(3)}"
    tmp.mkdir()
    try:
        for table, fname in data.RUN_FILES.items() if tables else ():
            df = getattr(result, table)
            if df.empty and not len(df.columns):
                df = pd.DataFrame(columns=[f.name for f in data.SCHEMAS[table]])
            data.write_table(df, tmp / fname, table)
        (tmp / "summary.json").write_text(summary_json(result) + "\n")
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    result.path = dest
    return dest
