"""Base-RTT emulation: netem where the kernel has it, else the TUN delay line.

The delay line (``delayline.c``) is compiled on first use with the system C compiler into
a cache directory keyed by the source's hash, so an edited source is rebuilt automatically.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from ..core import settings
from .topology import TestbedError, sh

SOURCE = Path(__file__).with_name("delayline.c")


def cache_dir() -> Path:
    return settings.user_cache_dir() / "coexist"


def compiler() -> str | None:
    """The C compiler to use: ``$CC`` if set, else the first of cc, gcc, clang on PATH."""
    for name in [settings.text("CC") or "", "cc", "gcc", "clang"]:
        if name and shutil.which(name):
            return name
    return None


def binary() -> Path:
    """Path of the compiled delay line, compiling it if the cached build is missing."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    target = cache_dir() / f"delayline-{digest}"
    if target.exists():
        return target
    cc = compiler()
    if cc is None:
        raise TestbedError("no C compiler for the delay line: apt-get install -y gcc")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
    p = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(SOURCE)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise TestbedError(f"compiling the delay line failed:\n{p.stderr}")
    os.replace(tmp, target)
    return target


def kernel_has_netem() -> bool:
    """Whether ``tc qdisc add ... netem`` works here (tried in a throw-away namespace)."""
    ns = f"cx-probe-{secrets.token_hex(3)}"
    sh(["ip", "netns", "add", ns])
    try:
        out = subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem",
                              "delay", "1ms"], capture_output=True, text=True)
        return out.returncode == 0
    finally:
        sh(["ip", "netns", "del", ns], check=False)


def resolve(choice: str) -> str:
    """``auto`` becomes ``netem`` where the kernel supports it, else ``tun``."""
    if choice == "auto":
        return "netem" if kernel_has_netem() else "tun"
    if choice == "netem" and not kernel_has_netem():
        raise TestbedError("delay 'netem' requested but this kernel has no netem qdisc "
                           "(modprobe sch_netem, or use --delay tun)")
    return choice
