"""Where a result came from: machine, kernel, tools, code version, time and command."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from .paths import ROOT


def _first_line(argv: list[str]) -> str | None:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    text = (p.stdout or p.stderr).strip()
    return text.splitlines()[0] if text else None


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def cpu_times() -> dict[str, float]:
    """Machine-wide CPU seconds so far (``/proc/stat``): busy, idle and steal.

    Steal is time the hypervisor gave this virtual machine's CPUs to someone else; a burst
    of it stalls everything here, the delay line included.
    """
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return {}
    ticks = [int(v) for v in fields]
    hz = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = ticks[:8]
    return {"busy_s": (user + nice + system + irq + softirq) / hz,
            "idle_s": (idle + iowait) / hz, "steal_s": steal / hz}


@functools.cache
def git_commit() -> dict:
    """Commit of the checkout this package runs from, and whether it had local changes,
    as of the first call in this process: the code the process loaded. A campaign that runs
    for hours keeps reporting the commit it started from, even if the checkout moves on."""
    commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
                            capture_output=True, text=True)
    return {"commit": commit, "src_dirty": bool(status.stdout.strip())}


def collect(tools: bool = True) -> dict:
    """A provenance record for one run or generated file."""
    rec = {
        "time_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "kernel": platform.release(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in ("coexist", "numpy", "pandas")},
        **git_commit(),
    }
    if tools:
        rec["tools"] = {
            "iperf3": _first_line(["iperf3", "--version"]),
            "iproute2": _first_line(["ip", "-V"]),
            "cc": _first_line(["cc", "--version"]),
        }
    return rec


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
