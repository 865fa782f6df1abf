"""Real experiments on the emulated dumbbell (root, network namespaces, iperf3).

Skipped on a machine without them, except in CI (``CI=true``), where the harness must run.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from coexist import data
from coexist.data import gates

from .conftest import IN_CI

pytestmark = pytest.mark.testbed


def _require_testbed():
    from coexist.testbed import preflight

    missing = [c for c in preflight.check(("cubic", "bbr")) if not c.ok]
    if missing:
        text = "; ".join(f"{c.name}: {c.detail} (fix: {c.fix})" for c in missing)
        if IN_CI:
            pytest.fail(f"the testbed must run in CI: {text}")
        pytest.skip(f"testbed unavailable: {text}")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "coexist.cli", *args]


def _registry_entries(pid: int) -> list[dict]:
    from coexist.testbed import topology

    d = topology.registry_dir()
    docs = [json.loads(e.read_text()) for e in d.glob("*.json")] if d.exists() else []
    return [doc for doc in docs if doc["pid"] == pid]


def _run_namespaces(pid: int) -> list[str]:
    for doc in _registry_entries(pid):
        return doc["namespaces"]
    return []


def _netns() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _start_and_wait_for_traffic(env):
    """A run in the middle of its traffic; it runs to its end (no early stop under steal),
    so it is still running when the caller kills or signals it."""
    p = subprocess.Popen(_cli("run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp",
                              "2", "--flows", "cubic:1,bbr:1", "--duration", "30", "--quiet",
                              "--run-to-end"),
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    deadline = time.monotonic() + 20
    names: list[str] = []
    while time.monotonic() < deadline and p.poll() is None:
        names = _run_namespaces(p.pid)
        if names and set(names) <= _netns():
            pids = subprocess.run(["ip", "netns", "pids", names[0]], capture_output=True,
                                  text=True).stdout.split()
            if pids:  # a client is running in the sender namespace: traffic flows
                break
        time.sleep(0.1)
    assert names and p.poll() is None, p.stderr.read().decode() if p.poll() is not None else ""
    time.sleep(2)
    pids = [int(x) for ns in names for x in subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()]
    return p, names, pids


@pytest.fixture
def env():
    """The real run registry: ``testbed clean`` must see every live run on the machine."""
    _require_testbed()
    e = dict(os.environ)
    e.pop("COEXIST_RUN_DIR", None)
    return e


def _two_flow_run(env, out):
    p = subprocess.run(_cli("run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp", "2",
                            "--flows", "cubic:1,bbr:1", "--duration", "15", "--warmup", "5",
                            "--json", "--out", str(out)),
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 3), p.stderr
    s = json.loads(p.stdout)
    assert isinstance(s["valid"], bool) and (p.returncode == 0) == s["valid"]
    return s


def _steal(s: dict) -> tuple[float, float]:
    """The hypervisor's steal over the run (% of the machine's CPU time) and the CPU time
    it took in the busiest second of the traffic (ms); 0 where unknown."""
    return round(data.steal_pct(s) or 0.0, 2), round(1e3 * (data.steal_burst_s(s) or 0.0))


def _stall(s: dict) -> float:
    """The largest share of the run (%) an in-run sleeper spent stalled; 0 where unknown."""
    from coexist.data.host import stall_pct_max

    return round(stall_pct_max(s.get("stall_probe")) or 0.0, 3)


def test_cubic_vs_bbr_run(tmp_path, env):
    """1 CUBIC + 1 BBR, 20 Mbit/s, 20 ms, 2 BDP, 15 s.

    As in a campaign, a run that fails a validity gate is re-run (this virtual machine
    occasionally stalls for milliseconds, which the lateness and probe gates catch); the
    harness must produce a valid run within three attempts. Every attempt must have confirmed
    both algorithms, and an invalid attempt must name the gates it failed. An attempt
    during which the hypervisor took more than 1 % of the machine's CPU, or 1 ms of CPU
    time within a second of the traffic, or which the in-run sleepers saw stalled for at
    least 0.1 % of the time (``gates.disturbed``: the host stops vCPUs without the guest
    counting steal), must have failed on timing gates only, and does not count against the
    three: the gates caught the disturbance, which says nothing about the harness. If every
    attempt is so disturbed, the harness cannot be judged on this machine now, and the test
    is skipped with the steal and stalls it saw.
    """
    out = tmp_path / "runs"
    attempts, undisturbed = [], 0
    while undisturbed < 3 and len(attempts) < 8:
        s = _two_flow_run(env, out)
        attempts.append(s)
        by_name = {g["name"]: g for g in s["gates"]}
        assert by_name["cca_confirmed"]["passed"], by_name["cca_confirmed"]
        if s["valid"]:
            break
        assert s["invalid_reasons"]
        if gates.held_up(s):
            assert gates.timing_only(s), (gates.failed_gates(s), s["invalid_reasons"])
        else:
            undisturbed += 1
    why = [(a["invalid_reasons"], _steal(a), _stall(a)) for a in attempts]
    if not s["valid"] and undisturbed == 0:
        pytest.skip("every attempt ran under hypervisor steal or stalls (% of the CPU over "
                    f"the run, ms stolen in its busiest second, % of time stalled): {why}")
    assert s["valid"], why
    assert s["utilisation"] >= 0.90
    assert [f["cca"] for f in s["flows"]] == ["cubic", "bbr"]
    assert all(f["goodput_bps"] > 0 for f in s["flows"])
    assert sum(f["share"] for f in s["flows"]) == pytest.approx(1.0)
    (probe,) = s["probe"]
    assert abs(probe["p99_s"] - 0.020) <= 1e-3 and probe["count"] >= 100
    assert s["provenance"]["kernel"] and s["provenance"]["tools"]["iperf3"]
    # stored tables, and nothing left behind
    run_dir = out / s["run_id"]
    assert {f.name for f in run_dir.iterdir()} == {"summary.json", *data.RUN_FILES.values()}
    for table, fname in data.RUN_FILES.items():  # every stored table passes its schema
        assert len(data.load_table(run_dir / fname, table)) > 0
    assert not any(ns.startswith(f"cx-{s['run_id']}") for ns in _netns())
    from coexist.testbed import topology

    assert not (topology.registry_dir() / f"{s['run_id']}.json").exists()


def test_killed_run_is_cleaned_by_testbed_clean(tmp_path, env):
    p, names, pids = _start_and_wait_for_traffic(env)
    assert pids  # iperf3, ping and the delay line were running
    p.kill()
    p.wait(10)
    assert set(names) <= _netns()  # SIGKILL allows no clean-up: the namespaces are left
    c = subprocess.run(_cli("testbed", "clean"), env=env, capture_output=True, text=True,
                       timeout=60)
    assert c.returncode == 0, c.stderr
    assert not set(names) & _netns()
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or \
            open(f"/proc/{pid}/stat").read().split(") ", 1)[1][0] == "Z"
    assert _registry_entries(p.pid) == []
    # and its scratch: iperf3 output in the temporary directory, live counters in tmpfs
    from coexist.testbed import topology

    for root in topology.scratch_roots():
        assert not list(root.glob(f"coexist-*-p{p.pid}-*")), root


def test_sigterm_tears_down(tmp_path, env):
    p, names, pids = _start_and_wait_for_traffic(env)
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 130
    assert "interrupted" in p.stderr.read().decode()
    assert not set(names) & _netns()
    assert all(not os.path.exists(f"/proc/{pid}") for pid in pids)
    assert _registry_entries(p.pid) == []


def test_netem_request_on_a_kernel_without_netem(env):
    from coexist.testbed import delay

    if delay.kernel_has_netem():
        assert delay.resolve("auto") == "netem"
        return
    assert delay.resolve("auto") == "tun"
    p = subprocess.run(_cli("run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp", "2",
                            "--flows", "bbr:1", "--duration", "3", "--warmup", "1",
                            "--delay", "netem"), env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1
    assert "no netem qdisc" in p.stderr and "--delay tun" in p.stderr


def test_bad_parameters_exit_2_before_touching_the_machine(env):
    before = _netns()
    p = subprocess.run(_cli("run", "--capacity", "20 parsecs", "--rtt", "20ms", "--buffer-bdp",
                            "2", "--flows", "bbr:1"), env=env, capture_output=True, text=True)
    assert p.returncode == 2 and "'capacity'" in p.stderr
    assert _netns() == before


def test_built_links_have_permanent_neighbours_and_carry_traffic(env):
    """The neighbour entries the plan asks for are what the kernel holds, and packets pass."""
    import uuid

    from coexist.testbed import spec, topology

    plan = topology.Plan(uuid.uuid4().hex[:6], spec.experiment(
        capacity="20mbit", rtt="20ms", buffer_bdp=2, flows="cubic:1,bbr:1@30ms"), "tun")
    try:
        topology.setup(plan)
        for ns, dev, peer_ip in plan.neighbours():
            (entry,) = json.loads(topology.sh(["ip", "-n", ns, "-j", "neigh", "show", "dev", dev,
                                               peer_ip]))
            assert entry["state"] == ["PERMANENT"], (ns, dev, entry)
            assert entry["lladdr"] == topology.mac_of(peer_ip)
        # across the bottleneck link and back (replies to senders need the delay line)
        topology.sh(["ip", "netns", "exec", plan.receiver, "ping", "-c", "1", "-W", "2",
                     topology.ROUTER_RECEIVER_IP])
    finally:
        topology.teardown(plan)
    assert not set(plan.namespaces) & _netns()


def test_staggered_bbr_flows_start_apart_and_end_together(tmp_path, env):
    """``--stagger``: 1 CUBIC + 2 BBR flows, the BBR flows 2 s apart. Each flow's recorded
    start is its stagger after the first (within the 0.3 s a process takes to start here),
    and every flow's goodput series runs to the common end of the run."""
    p = subprocess.run(_cli("run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp", "2",
                            "--flows", "cubic:1,bbr:2", "--duration", "10", "--warmup", "5",
                            "--stagger", "2", "--run-to-end", "--json",
                            "--out", str(tmp_path / "runs")),
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 3), p.stderr
    s = json.loads(p.stdout)
    assert s["params"]["stagger_s"] == 2.0
    by_name = {g["name"]: g for g in s["gates"]}
    assert by_name["flows_complete"]["passed"], by_name["flows_complete"]
    # each flow's goodput counts from the run's warm-up, whenever the flow started
    assert all(f["goodput_bps"] > 0 for f in s["flows"])
    run = next((tmp_path / "runs").iterdir())
    flows = data.load_table(run / data.RUN_FILES["flows"], "flows")
    series = data.load_table(run / data.RUN_FILES["series"], "series")
    starts = flows.set_index("flow")["start_offset_s"]
    assert list(flows.cca) == ["cubic", "bbr", "bbr"]
    assert starts[0] == pytest.approx(0.0, abs=0.3)
    assert starts[1] == pytest.approx(0.0, abs=0.3)
    assert starts[2] == pytest.approx(2.0, abs=0.3)
    ends = series.groupby("flow").t_end_s.max()
    assert ends.max() - ends.min() <= 0.5
    assert series[series.flow == 2].t_start_s.min() >= 2.0 - 0.3


def test_steered_acks_leave_the_delay_lines_cpu(env):
    """``--steer-acks``: the delay line runs on the last CPU, and the ACKs it writes back are
    steered to every other CPU (the device's rps_cpus, as the line wrote it); the run's
    base RTT is still honoured. As in ``test_cubic_vs_bbr_run``, an attempt whose RTT
    probe failed while the host held the machine up (``gates.held_up``) is run again, and
    if every attempt was held up the RTT cannot be judged here now: skipped with the
    evidence."""
    held = []
    for _ in range(3):
        p = subprocess.run(_cli("run", "--capacity", "20mbit", "--rtt", "20ms",
                                "--buffer-bdp", "2", "--flows", "cubic:1,bbr:1",
                                "--duration", "4", "--warmup", "1", "--delay", "tun",
                                "--steer-acks", "--run-to-end", "--json"),
                           env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode in (0, 3), p.stderr
        s = json.loads(p.stdout)
        assert s["params"]["steer_acks"] is True
        dl = s["delay_line"]
        n = os.cpu_count()
        assert dl["cpu"] == n - 1
        assert int(dl["rps_cpus"].replace(",", ""), 16) == (1 << (n - 1)) - 1
        assert dl["released"] > 0 and dl["user_s"] + dl["sys_s"] > 0
        probe = {g["name"]: g for g in s["gates"]}["probe_rtt"]
        if probe["passed"]:
            return
        assert gates.held_up(s), (probe, _steal(s), _stall(s))
        held.append((probe["value"], _steal(s), _stall(s)))
    pytest.skip("every attempt's RTT probe ran while the host held the machine up (|p99 - "
                f"RTT| ms, steal %, ms stolen in the busiest second, % stalled): {held}")


def test_delay_line_refuses_a_bad_cpu():
    from coexist.testbed import delay

    p = subprocess.run([str(delay.binary()), "--cpu", "x", "dl0:1000"], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 2 and "--cpu 'x' must be a CPU number 0..1023" in p.stderr
