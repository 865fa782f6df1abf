"""``coexist testbed check``: can this machine run the harness? Each gap comes with its fix."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import delay

CCA_FILE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
TOOLS = {  # command -> Debian package
    "ip": "iproute2", "tc": "iproute2", "ss": "iproute2", "iperf3": "iperf3",
    "ping": "iputils-ping", "ethtool": "ethtool", "nsenter": "util-linux",
}


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _netns_works() -> tuple[bool, str]:
    ns = f"cx-check-{secrets.token_hex(3)}"
    add = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if add.returncode != 0:
        return False, add.stderr.strip()
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return True, "ip netns add/del works"


def available_ccas() -> set[str]:
    try:
        return set(CCA_FILE.read_text().split())
    except OSError:
        return set()


def check(ccas: tuple[str, ...] = ("cubic", "bbr", "reno")) -> list[Check]:
    """Everything the harness needs, in the order a fix would be applied."""
    out: list[Check] = []
    root = os.geteuid() == 0
    out.append(Check("root", root, "running as root" if root else f"euid {os.geteuid()}",
                     "" if root else "run as root (sudo coexist ...)"))
    missing_pkgs = sorted({pkg for cmd, pkg in TOOLS.items() if shutil.which(cmd) is None})
    for cmd in TOOLS:
        path = shutil.which(cmd)
        out.append(Check(f"tool {cmd}", path is not None, path or "not on PATH",
                         "" if path else f"apt-get install -y {' '.join(missing_pkgs)}"))
    cc = delay.compiler()
    out.append(Check("C compiler", cc is not None, cc or "none of $CC, cc, gcc, clang",
                     "" if cc else "apt-get install -y gcc"))
    tun = Path("/dev/net/tun")
    out.append(Check("/dev/net/tun", tun.exists(), "present" if tun.exists() else "missing",
                     "" if tun.exists() else "modprobe tun (or mknod /dev/net/tun c 10 200)"))
    if root and shutil.which("ip"):
        ok, detail = _netns_works()
        out.append(Check("network namespaces", ok, detail,
                         "" if ok else "needs a kernel with CONFIG_NET_NS and CAP_SYS_ADMIN"))
        try:
            netem = delay.kernel_has_netem()
        except Exception as exc:  # reported, not fatal: the TUN delay line is the fallback
            netem, detail = False, str(exc)
        else:
            detail = "available" if netem else "absent: the TUN delay line will be used"
        out.append(Check("netem (optional)", True, detail))
    have = available_ccas()
    for cca in ccas:
        ok = cca in have
        out.append(Check(f"tcp {cca}", ok, "available" if ok else
                         f"not in {CCA_FILE} ({' '.join(sorted(have)) or 'unreadable'})",
                         "" if ok else f"modprobe tcp_{cca}"))
    if cc is not None:
        try:
            path = delay.binary()
            out.append(Check("delay line build", True, str(path)))
        except Exception as exc:
            out.append(Check("delay line build", False, str(exc).splitlines()[0],
                             "install a working C compiler (apt-get install -y gcc)"))
    return out
