"""One experiment end to end: build the dumbbell, run the flows, measure, gate, tear down.

The result is a set of tidy tables (one row per flow; goodput, socket, queue and probe time
series) and a summary with the gates and the run's provenance. :func:`write` stores them
atomically: a run directory either exists complete or not at all.

This module holds the run's orchestration (:func:`run`); the parts it calls live beside it,
and their public names are importable from here too: the flows' ports (:mod:`.ports`), the
processes in the namespaces (:mod:`.procs`), sampling (:mod:`.sampling`), the watch that
stops a run early (:mod:`.early_stop`), signals (:mod:`.signals`), the tables and summary
(:mod:`.results`) and the stored run (:mod:`.run_files`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import threading
import time

from ..core import provenance
from ..data import gates
from . import delay, measure, steal, topology, wakeups
from .early_stop import (
    ACK_PATH_EXTRA_PER_FLOW,
    ACK_PATH_PER_DATA_PACKET_MAX,
    DATA_START_SLACK_S,
    PROBE_HZ,
    _lateness_watch,
    _wait_clients,
    ack_path_packets_at_most,
)
from .ports import BASE_CPORT, BASE_PORT, _check_client_ports, flow_of_socket
from .procs import DELAY_LINE_STOP_S, _Procs, _stop_delay_line, _wait_listening
from .results import RunResult, _analyse, link_utilisation
from .run_files import summary_json, write
from .sampling import _other_drops, _sampler
from .signals import Interrupted, _signals_deferred, _signals_raise
from .spec import Experiment
from .topology import RECEIVER_IP, Plan, TestbedError

__all__ = [
    "ACK_PATH_EXTRA_PER_FLOW", "ACK_PATH_PER_DATA_PACKET_MAX", "BASE_CPORT", "BASE_PORT",
    "DATA_START_SLACK_S", "DELAY_LINE_STOP_S", "PROBE_HZ", "Interrupted", "RunResult",
    "ack_path_packets_at_most", "flow_of_socket", "link_utilisation", "run", "summary_json",
    "write",
]


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
