"""The emulated dumbbell: sender namespaces -> router namespace -> receiver namespace.

::

    cx-ID-s0 (10.10.0.2) --veth-- s0 |                    |
    cx-ID-s1 (10.10.1.2) --veth-- s1 |  cx-ID-r (router)  | dst --veth-- cx-ID-d (10.20.0.2)
                                     |  ACK path delayed  |  htb rate C + bfifo (drop-tail)
                                     |  per sender group  |

One sender namespace per distinct base RTT, so groups of flows can have different RTTs.
The bottleneck is the router's egress towards the receiver. The base RTT is added on the
reverse (ACK) path at the router, per sender group: by a netem qdisc on ``s<i>`` where the
kernel has netem, otherwise by routing the ACKs through a TUN device ``dl<i>`` served by
the delay line (``delayline.c``). Data packets therefore meet only the bottleneck queue.

Every link's neighbour entries are static (fixed MAC addresses, ``nud permanent``). With
ARP, the router's replies to the receiver would wait in the bottleneck queue; once that
queue holds more than the kernel's 3-s unicast probe budget (100 BDP at 40 ms), the
receiver's entry fails, its ACKs wait unresolved for seconds and leave in one burst of
thousands, which overflows the per-CPU backlog (``netdev_max_backlog``).

Everything lives inside namespaces named ``cx-<run id>-...``: deleting them removes every
interface, qdisc and route, and no traffic can reach an address outside them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..core import files
from .spec import WIRE_PACKET_BYTES, Experiment

PREFIX = "cx-"
ROUTER_RECEIVER_IP = "10.20.0.1"
RECEIVER_IP = "10.20.0.2"
DELAY_TABLE = "100"
BOTTLENECK_DEV = "dst"
BOTTLENECK_HANDLE = "10:"
#: socket buffer ceiling for autotuning: enough for a 250-BDP buffer at 100 Mbit/s, 80 ms
SOCKET_BUFFER_MAX = 1 << 30


class TestbedError(RuntimeError):
    """A command needed to build, run or remove the testbed failed."""

    __test__ = False  # not a pytest test class


def registry_dir() -> Path:
    """Where live runs register their namespaces (so ``clean`` can find leftovers)."""
    from ..core.settings import directory

    return directory("COEXIST_RUN_DIR") or Path("/run/coexist")


#: scratch paths named before they carried their owner's pid are removed once this old:
#: no run lasts a day
UNOWNED_SCRATCH_AGE_S = 86_400.0


def scratch_roots() -> tuple[Path, ...]:
    """Where a run keeps its scratch files: the temporary directory (iperf3 and ping output)
    and tmpfs (the delay line's live counters, written on every packet)."""
    return (Path(tempfile.gettempdir()), Path("/dev/shm"))


def _scratch_prefix(run_id: str) -> str:
    # the owner's pid in the name lets ``clean`` tell a killed run's files from a live one's
    return f"coexist-{run_id}-p{os.getpid()}-"


def scratch_dir(run_id: str) -> Path:
    """A fresh scratch directory for run ``run_id`` (``clean`` finds it by its name)."""
    return Path(tempfile.mkdtemp(prefix=_scratch_prefix(run_id)))


def live_counters_path(run_id: str, workdir: Path) -> Path:
    """The delay line's live counters: in tmpfs where there is one, else in ``workdir``."""
    shm = scratch_roots()[1]
    return (shm if shm.is_dir() else workdir) / f"{_scratch_prefix(run_id)}delayline.live"


def _scratch_owner(name: str) -> tuple[bool, int | None]:
    """Whether ``name`` is a run's scratch path (``coexist-<12 hex>-...``), and its owner's
    pid when the name carries one (``coexist-<id>-p<pid>-...``)."""
    parts = name.split("-")
    if len(parts) < 3 or parts[0] != "coexist" or len(parts[1]) != 12 \
            or any(ch not in "0123456789abcdef" for ch in parts[1]):
        return False, None
    tag = parts[2]
    return True, int(tag[1:]) if len(parts) > 3 and tag[:1] == "p" and tag[1:].isdigit() \
        else None


def clean_scratch(roots: tuple[Path, ...] | None = None) -> list[str]:
    """Remove the scratch paths of runs whose owner process is gone (or, for names without
    an owner, that are older than ``UNOWNED_SCRATCH_AGE_S``); return what was removed."""
    removed: list[str] = []
    now = time.time()
    for root in scratch_roots() if roots is None else roots:
        for path in sorted(root.glob("coexist-*")) if root.is_dir() else []:
            is_scratch, pid = _scratch_owner(path.name)
            if not is_scratch:
                continue
            try:
                age = now - path.lstat().st_mtime
            except FileNotFoundError:
                continue
            if (pid is not None and _alive(pid)) or (pid is None and age < UNOWNED_SCRATCH_AGE_S):
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(str(path))
    return removed


def sender_ip(group: int) -> str:
    return f"10.10.{group}.2"


def router_sender_ip(group: int) -> str:
    return f"10.10.{group}.1"


def mac_of(ip: str) -> str:
    """The fixed, locally administered MAC address of the interface that owns ``ip``."""
    return "02:00:" + ":".join(f"{int(octet):02x}" for octet in ip.split("."))


@dataclass(frozen=True)
class Plan:
    """Names and commands of one run's topology; building it is :func:`setup`."""

    run_id: str
    exp: Experiment
    delay: str  # "tun" or "netem"

    @property
    def router(self) -> str:
        return f"{PREFIX}{self.run_id}-r"

    @property
    def receiver(self) -> str:
        return f"{PREFIX}{self.run_id}-d"

    def sender(self, group: int) -> str:
        return f"{PREFIX}{self.run_id}-s{group}"

    @property
    def senders(self) -> list[str]:
        return [self.sender(g) for g in range(len(self.exp.groups))]

    @property
    def namespaces(self) -> list[str]:
        return [*self.senders, self.router, self.receiver]

    def delay_us(self, group: int) -> float:
        return self.exp.groups[group] * 1e6

    def commands(self) -> list[list[str]]:
        """Every command that builds the topology, in order (the delay line excepted)."""
        r, d = self.router, self.receiver
        cmds: list[list[str]] = [["ip", "netns", "add", ns] for ns in self.namespaces]
        tcp_mem = f"4096 131072 {SOCKET_BUFFER_MAX}"
        for ns in self.namespaces:
            cmds.append(_sysctl(ns, {"net.ipv6.conf.all.disable_ipv6": "1",
                                     "net.ipv6.conf.default.disable_ipv6": "1"}))
        for ns in [*self.senders, d]:
            cmds.append(_sysctl(ns, {"net.ipv4.tcp_rmem": tcp_mem, "net.ipv4.tcp_wmem": tcp_mem,
                                     "net.ipv4.tcp_no_metrics_save": "1"}))
        cmds.append(_sysctl(r, {"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.rp_filter": "0",
                                "net.ipv4.conf.default.rp_filter": "0"}))
        for g, s in enumerate(self.senders):
            cmds += [
                ["ip", "link", "add", "eth0", "netns", s, "type", "veth",
                 "peer", "name", f"s{g}", "netns", r],
                ["ip", "-n", s, "addr", "add", f"{sender_ip(g)}/24", "dev", "eth0"],
                ["ip", "-n", r, "addr", "add", f"{router_sender_ip(g)}/24", "dev", f"s{g}"],
            ]
        cmds += [
            ["ip", "link", "add", BOTTLENECK_DEV, "netns", r, "type", "veth",
             "peer", "name", "eth0", "netns", d],
            ["ip", "-n", r, "addr", "add", f"{ROUTER_RECEIVER_IP}/24", "dev", BOTTLENECK_DEV],
            ["ip", "-n", d, "addr", "add", f"{RECEIVER_IP}/24", "dev", "eth0"],
        ]
        for ns, dev, ip in self.addressed_interfaces():
            cmds.append(["ip", "-n", ns, "link", "set", dev, "address", mac_of(ip)])
        for ns, dev, peer_ip in self.neighbours():
            cmds.append(["ip", "-n", ns, "neigh", "replace", peer_ip, "lladdr", mac_of(peer_ip),
                         "dev", dev, "nud", "permanent"])
        for ns, dev in self.interfaces():
            cmds.append(["ip", "-n", ns, "link", "set", dev, "up"])
            # no segmentation offloads anywhere: the bottleneck must see MTU-sized packets
            cmds.append(["ip", "netns", "exec", ns, "ethtool", "-K", dev,
                         "tso", "off", "gso", "off", "gro", "off"])
        for ns in self.namespaces:
            cmds.append(["ip", "-n", ns, "link", "set", "lo", "up"])
        for g, s in enumerate(self.senders):
            cmds.append(["ip", "-n", s, "route", "add", "default", "via", router_sender_ip(g)])
        cmds.append(["ip", "-n", d, "route", "add", "default", "via", ROUTER_RECEIVER_IP])
        cmds += self.bottleneck_commands()
        cmds += self.delay_commands()
        return cmds

    def interfaces(self) -> list[tuple[str, str]]:
        """(namespace, veth name) of every veth end."""
        return [(ns, dev) for ns, dev, _ in self.addressed_interfaces()]

    def addressed_interfaces(self) -> list[tuple[str, str, str]]:
        """(namespace, veth name, IPv4 address) of every veth end."""
        out = [(s, "eth0", sender_ip(g)) for g, s in enumerate(self.senders)]
        out += [(self.router, f"s{g}", router_sender_ip(g)) for g in range(len(self.senders))]
        out += [(self.router, BOTTLENECK_DEV, ROUTER_RECEIVER_IP),
                (self.receiver, "eth0", RECEIVER_IP)]
        return out

    def neighbours(self) -> list[tuple[str, str, str]]:
        """(namespace, veth name, the peer's address): the static entries, both ways."""
        out = []
        for g, s in enumerate(self.senders):
            out += [(s, "eth0", router_sender_ip(g)), (self.router, f"s{g}", sender_ip(g))]
        out += [(self.router, BOTTLENECK_DEV, RECEIVER_IP),
                (self.receiver, "eth0", ROUTER_RECEIVER_IP)]
        return out

    def bottleneck_commands(self) -> list[list[str]]:
        """htb at rate C with a drop-tail bfifo child of ``buffer_bdp`` BDP bytes."""
        rate = f"{int(round(self.exp.capacity_bps))}bit"
        tc = ["tc", "-n", self.router]
        return [
            [*tc, "qdisc", "add", "dev", BOTTLENECK_DEV, "root", "handle", "1:", "htb",
             "default", "1"],
            [*tc, "class", "add", "dev", BOTTLENECK_DEV, "parent", "1:", "classid", "1:1", "htb",
             "rate", rate, "ceil", rate, "quantum", str(WIRE_PACKET_BYTES)],
            [*tc, "qdisc", "add", "dev", BOTTLENECK_DEV, "parent", "1:1", "handle",
             BOTTLENECK_HANDLE, "bfifo", "limit", str(self.exp.buffer_bytes)],
        ]

    def delay_commands(self) -> list[list[str]]:
        """Per-group ACK-path delay: netem qdiscs, or TUN devices plus policy routing."""
        r = self.router
        cmds: list[list[str]] = []
        if self.delay == "netem":
            for g in range(len(self.senders)):
                cmds.append(["tc", "-n", r, "qdisc", "add", "dev", f"s{g}", "root", "netem",
                             "delay", f"{self.delay_us(g):.0f}us", "limit", "1000000"])
            return cmds
        for g in range(len(self.senders)):
            dev = f"dl{g}"
            cmds += [
                ["ip", "-n", r, "tuntap", "add", "dev", dev, "mode", "tun"],
                ["ip", "-n", r, "link", "set", dev, "up", "txqueuelen", "10000"],
                _sysctl(r, {f"net.ipv4.conf.{dev}.rp_filter": "0",
                            f"net.ipv4.conf.{dev}.accept_local": "1"}),
                ["ip", "-n", r, "route", "add", f"10.10.{g}.0/24", "dev", dev,
                 "table", DELAY_TABLE],
            ]
        # ACKs from the receiver, and the router's own probes, take the delay table;
        # packets coming back out of dl<i> (iif dl<i>) use the main table to s<i>.
        cmds += [
            ["ip", "-n", r, "rule", "add", "pref", "100", "iif", BOTTLENECK_DEV,
             "lookup", DELAY_TABLE],
            ["ip", "-n", r, "rule", "add", "pref", "101", "iif", "lo", "lookup", DELAY_TABLE],
        ]
        return cmds

    def delayline_args(self) -> list[str]:
        """The delay line's devices and delays; with ``steer_acks``, ``--cpu`` the last CPU."""
        steer = ["--cpu", str((os.cpu_count() or 1) - 1)] if self.exp.steer_acks else []
        return [*steer, *[f"dl{g}:{self.delay_us(g):.3f}" for g in range(len(self.senders))]]


def _sysctl(ns: str, values: dict[str, str]) -> list[str]:
    return ["ip", "netns", "exec", ns, "sysctl", "-qw",
            *[f"{k}={v}" for k, v in values.items()]]


def sh(argv: list[str], *, check: bool = True, timeout: float = 30.0) -> str:
    """Run a command; on failure raise :class:`TestbedError` with the command and stderr."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise TestbedError(f"command not found: {argv[0]} (run `coexist testbed check`)") \
            from None
    except subprocess.TimeoutExpired:
        raise TestbedError(f"timed out after {timeout:g} s: {' '.join(argv)}") from None
    if check and p.returncode != 0:
        raise TestbedError(f"`{' '.join(argv)}` failed ({p.returncode}): {p.stderr.strip()}")
    return p.stdout


def setup(plan: Plan) -> None:
    """Register the run, then build its topology (the caller must call :func:`teardown`)."""
    register(plan)
    for cmd in plan.commands():
        sh(cmd)


def list_namespaces() -> list[str]:
    out = sh(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _pids(ns: str) -> list[int]:
    out = sh(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:  # a zombie is dead for our purposes
        return stat.read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def teardown_namespaces(namespaces: list[str]) -> list[str]:
    """Kill every process in the namespaces, then delete them. Idempotent.

    Returns the namespaces that existed and were removed.
    """
    present = set(list_namespaces())
    todo = [ns for ns in namespaces if ns in present]
    pids = [p for ns in todo for p in _pids(ns)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5.0
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    for ns in todo:
        sh(["ip", "netns", "del", ns], check=False)
    left = set(list_namespaces()) & set(todo)
    if left:
        raise TestbedError(f"could not delete namespaces: {', '.join(sorted(left))}")
    return todo


def register(plan: Plan) -> None:
    """Record the run's owner process and namespaces before anything is created."""
    d = registry_dir()
    d.mkdir(parents=True, exist_ok=True)
    entry = {"run_id": plan.run_id, "pid": os.getpid(), "namespaces": plan.namespaces,
             "started": datetime.now(UTC).isoformat(timespec="seconds")}
    files.atomic_write(d / f"{plan.run_id}.json", json.dumps(entry))


def teardown(plan: Plan) -> None:
    """Remove the run's namespaces (and everything in them) and its registry entry."""
    teardown_namespaces(plan.namespaces)
    (registry_dir() / f"{plan.run_id}.json").unlink(missing_ok=True)


def clean(*, include_live: bool = False,
          roots: tuple[Path, ...] | None = None) -> dict[str, list[str]]:
    """Remove what killed runs left behind: their namespaces, processes, registry entries
    and scratch files (``clean_scratch`` under ``roots``).

    Runs whose owner process is still alive are left alone unless ``include_live``.
    Namespaces with the harness prefix that no registry entry claims are removed too.
    """
    removed: list[str] = []
    live: list[str] = []
    claimed: set[str] = set()
    d = registry_dir()
    for entry_file in sorted(d.glob("*.json")) if d.exists() else []:
        try:
            entry = json.loads(entry_file.read_text())
            pid, namespaces = int(entry["pid"]), list(entry["namespaces"])
        except (ValueError, KeyError, TypeError):
            pid, namespaces = -1, []
        if pid > 0 and _alive(pid) and pid != os.getpid() and not include_live:
            live.append(entry_file.stem)
            claimed.update(namespaces)
            continue
        removed += teardown_namespaces(namespaces)
        entry_file.unlink(missing_ok=True)
    orphans = [ns for ns in list_namespaces() if ns.startswith(PREFIX) and ns not in claimed]
    removed += teardown_namespaces(orphans)
    scratch = clean_scratch(roots)
    return {"removed": removed, "live": live, "scratch": scratch}
