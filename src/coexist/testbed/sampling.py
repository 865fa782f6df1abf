"""What the harness reads from the topology around the traffic: the senders' sockets
(``ss``) and the bottleneck queue (``tc``) sampled every ``sample_s`` while the flows run, and
every other drop counter of the topology once they end."""

from __future__ import annotations

import threading
import time

from . import measure
from .topology import BOTTLENECK_DEV, BOTTLENECK_HANDLE, Plan, sh


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
