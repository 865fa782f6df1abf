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

from ..conftest import IN_CI

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


def _two_flow_run(env, out, *extra: str, duration: str = "15", warmup: str = "5") -> dict:
    p = subprocess.run(_cli("run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp", "2",
                            "--flows", "cubic:1,bbr:1", "--duration", duration, "--warmup",
                            warmup, "--json", "--out", str(out), *extra),
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


def host_evidence(s: dict) -> dict:
    """What the host did to a run, measured apart from the gates that judge the run: the
    hypervisor's steal, and the in-run sleepers' wake-ups (share of time stalled, latest
    99.9th percentile and maximum over the CPUs), beside the gates it failed and the delay
    line's own lateness. The evidence a skip rests on."""
    from coexist.data.host import per_cpu, sleeper_p999_ms_max

    late = (s.get("delay_line") or {}).get("lateness_us") or {}
    return {"failed": sorted(gates.failed_gates(s)), "steal_pct": _steal(s)[0],
            "steal_busiest_second_ms": _steal(s)[1], "sleepers_stalled_pct": _stall(s),
            "sleepers_p999_ms": sleeper_p999_ms_max(s.get("stall_probe")),
            "sleepers_max_ms": max(per_cpu(s.get("stall_probe"), "max_ms"), default=None),
            "delay_line_p999_ms": None if late.get("p999") is None else late["p999"] / 1e3,
            "held_up": gates.held_up(s)}


def test_a_run_stores_its_tables_and_leaves_nothing_behind(tmp_path, env):
    """A run's plumbing, judged whatever its timing gates said (the run goes to its end
    even if a gate fails): both algorithms confirmed on their flows, every table stored
    and passing its schema, the probe's median RTT at the configured 20 ms (a stall moves
    a few probes, not the median), provenance recorded, and no namespace, registry entry
    or scratch file left behind."""
    out = tmp_path / "runs"
    s = _two_flow_run(env, out, "--run-to-end", duration="8", warmup="3")
    by_name = {g["name"]: g for g in s["gates"]}
    assert by_name["cca_confirmed"]["passed"], by_name["cca_confirmed"]
    assert by_name["flows_complete"]["passed"], by_name["flows_complete"]
    assert by_name["drops_only_at_bottleneck"]["passed"], by_name["drops_only_at_bottleneck"]
    assert s["valid"] or s["invalid_reasons"]
    assert [f["cca"] for f in s["flows"]] == ["cubic", "bbr"]
    assert all(f["goodput_bps"] > 0 for f in s["flows"])
    assert sum(f["share"] for f in s["flows"]) == pytest.approx(1.0)
    (probe,) = s["probe"]
    assert abs(probe["p50_s"] - 0.020) <= 1e-3 and probe["count"] >= 50, probe
    assert s["provenance"]["kernel"] and s["provenance"]["tools"]["iperf3"]
    run_dir = out / s["run_id"]
    assert {f.name for f in run_dir.iterdir()} == {"summary.json", *data.RUN_FILES.values()}
    for table, fname in data.RUN_FILES.items():  # every stored table passes its schema
        assert len(data.load_table(run_dir / fname, table)) > 0
    assert not any(ns.startswith(f"cx-{s['run_id']}") for ns in _netns())
    from coexist.testbed import topology

    assert not (topology.registry_dir() / f"{s['run_id']}.json").exists()
    for root in topology.scratch_roots():
        assert not list(root.glob(f"coexist-{s['run_id']}-*")), root


#: attempts and wall time a valid run may take before the test gives the host up
VALID_RUN_ATTEMPTS, VALID_RUN_BUDGET_S = 6, 150.0


def test_cubic_vs_bbr_run_is_valid_when_the_host_allows(tmp_path, env):
    """1 CUBIC + 1 BBR, 20 Mbit/s, 20 ms, 2 BDP, 10 s: the harness produces a valid run.

    As in a campaign, an invalid attempt is re-run, within a budget of attempts and wall
    time. An attempt that failed only timing gates while the host held the machine up
    (``gates.held_up``: steal, or in-run sleepers stalled for 0.1 % of the time or late at
    their 99.9th percentile by the lateness gate's 1 ms, measured apart from the delay line)
    says nothing about the harness and does not count. The test fails on any other
    invalid attempt (a gate that is not a timing gate; three timing failures on a host that
    held nothing up), and skips with each attempt's host evidence when the host never
    allowed a clean run within the budget.
    """
    out = tmp_path / "runs"
    attempts: list[dict] = []
    start = time.monotonic()
    undisturbed = 0
    while len(attempts) < VALID_RUN_ATTEMPTS and time.monotonic() - start < VALID_RUN_BUDGET_S:
        s = _two_flow_run(env, out, duration="10", warmup="3")
        attempts.append(s)
        if s["valid"]:
            assert s["utilisation"] >= 0.95 and s["bbr_share"] is not None
            (probe,) = s["probe"]
            assert abs(probe["p99_s"] - 0.020) <= 1e-3
            return
        assert s["invalid_reasons"]
        assert gates.timing_only(s), host_evidence(s)  # only a stall can fail a run here
        if not gates.held_up(s):
            undisturbed += 1
            assert undisturbed < 3, [host_evidence(a) for a in attempts]
    pytest.skip(f"the host held up {len(attempts)} attempts in {time.monotonic() - start:.0f} "
                f"s (failed gates; steal %, ms stolen in the busiest second; sleepers: % "
                f"stalled, p99.9 and max wake-up lateness ms; delay line p99.9 ms): "
                f"{[host_evidence(a) for a in attempts]}")


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


def _live_steering(p: subprocess.Popen) -> tuple[str, str, dict[str, str]]:
    """While run ``p`` carries traffic: the CPUs the kernel lets its delay line run on, the
    receive-packet-steering mask of each of its TUN devices as the kernel holds it (read in
    the router's namespace), keyed by device."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None:
        names = _run_namespaces(p.pid)
        router = next((n for n in names if n.endswith("-r")), None)
        if router and router in _netns():
            pids = subprocess.run(["ip", "netns", "pids", router], capture_output=True,
                                  text=True).stdout.split()
            line = [pid for pid in pids if _comm(pid).startswith("delayline")]
            if line:
                status = open(f"/proc/{line[0]}/status").read()
                allowed = next(x.split(":")[1].strip() for x in status.splitlines()
                               if x.startswith("Cpus_allowed_list"))
                out = subprocess.run(
                    ["ip", "netns", "exec", router, "sh", "-c",
                     "for d in /sys/class/net/dl*; do echo ${d##*/} "
                     "$(cat $d/queues/rx-0/rps_cpus); done"],
                    capture_output=True, text=True).stdout
                masks = dict(x.split() for x in out.splitlines() if len(x.split()) == 2)
                return router, allowed, masks
        time.sleep(0.1)
    raise AssertionError("the run's delay line never showed: " + (
        p.stderr.read().decode() if p.poll() is not None else "still starting"))


def _comm(pid: str) -> str:
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return ""


def _delay_run(env, steer: bool) -> tuple[dict, tuple[str, str, dict[str, str]]]:
    p = subprocess.Popen(_cli("run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp",
                              "2", "--flows", "cubic:1,bbr:1", "--duration", "6", "--warmup",
                              "1", "--delay", "tun", "--run-to-end", "--json",
                              *(["--steer-acks"] if steer else [])),
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    live = _live_steering(p)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode in (0, 3), stderr.decode()
    return json.loads(stdout), live


def test_steered_acks_leave_the_delay_lines_cpu(env, capsys):
    """``--steer-acks``: while the run carries traffic the kernel holds the delay line to the
    last CPU and steers the packets it writes back (the ACKs) to every other CPU (each TUN
    device's rps_cpus); without it the line may run anywhere and nothing is steered. Both
    judged from the kernel's own state, whatever the run's timing gates said; the base RTT
    is still honoured (the probe's median). ACK steering exists to cut the delay line's
    lateness: the test reports the lateness with and without it, on this host, now."""
    n = os.cpu_count()
    others = (1 << (n - 1)) - 1
    steered, (_, allowed, masks) = _delay_run(env, steer=True)
    assert steered["params"]["steer_acks"] is True
    assert allowed == str(n - 1), allowed
    assert masks and all(int(m.replace(",", ""), 16) == others for m in masks.values()), masks
    dl = steered["delay_line"]
    assert dl["cpu"] == n - 1 and int(dl["rps_cpus"].replace(",", ""), 16) == others
    assert dl["released"] > 0 and dl["user_s"] + dl["sys_s"] > 0
    (probe,) = steered["probe"]
    assert abs(probe["p50_s"] - 0.020) <= 1e-3, probe
    plain, (_, allowed, masks) = _delay_run(env, steer=False)
    assert plain["params"]["steer_acks"] is False and plain["delay_line"]["cpu"] == -1
    assert allowed == (f"0-{n - 1}" if n > 1 else "0"), allowed
    assert masks and all(int(m.replace(",", ""), 16) == 0 for m in masks.values()), masks
    with capsys.disabled():
        for name, s in (("steered", steered), ("not steered", plain)):
            late = s["delay_line"]["lateness_us"]
            print(f"\n  delay line {name}: lateness p99 {late['p99']:g} us, p99.9 "
                  f"{late['p999']:g} us, max {late['max']:.0f} us; host: "
                  f"{host_evidence(s)}", end="")


def test_delay_line_refuses_a_bad_cpu():
    from coexist.testbed import delay

    p = subprocess.run([str(delay.binary()), "--cpu", "x", "dl0:1000"], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 2 and "--cpu 'x' must be a CPU number 0..1023" in p.stderr
