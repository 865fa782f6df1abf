"""The processes a run starts inside its namespaces (iperf3 servers and clients, the probes,
the delay line): starting them with their output in files, waiting for the servers to
listen, and stopping the delay line so that it writes its statistics."""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .topology import TestbedError, sh


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
