"""The dumbbell's commands: isolation in namespaces, bottleneck sizing, delay placement."""

import pytest

from coexist.testbed import spec, topology


def plan(delay="tun", flows="cubic:1,bbr:1@30ms", **kw):
    args = dict(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows=flows)
    args.update(kw)
    return topology.Plan("abc123", spec.experiment(**args), delay)


def _namespace_of(cmd):
    """The namespace a command acts in, or None for the root namespace."""
    if cmd[:2] == ["ip", "netns"] and cmd[2] in ("add", "exec"):
        return cmd[3]
    if cmd[1] == "-n":
        return cmd[2]
    return None


@pytest.mark.parametrize("delay", ["tun", "netem"])
def test_everything_happens_inside_the_runs_namespaces(delay):
    p = plan(delay)
    assert p.namespaces == ["cx-abc123-s0", "cx-abc123-s1", "cx-abc123-r", "cx-abc123-d"]
    for cmd in p.commands():
        ns = _namespace_of(cmd)
        if ns is None:  # only veth creation runs in the root namespace, straight into ours
            assert cmd[:3] == ["ip", "link", "add"], cmd
            assert cmd[4] == "netns" and cmd[5] in p.namespaces, cmd
            assert cmd[-2] == "netns" and cmd[-1] in p.namespaces, cmd
        else:
            assert ns in p.namespaces, cmd


def test_addresses_are_private_and_per_group():
    p = plan()
    text = " ".join(" ".join(c) for c in p.commands())
    for addr in ("10.10.0.2/24", "10.10.1.2/24", "10.10.0.1/24", "10.10.1.1/24",
                 "10.20.0.1/24", "10.20.0.2/24"):
        assert addr in text
    assert "default via 10.10.1.1" in text


def test_bottleneck_is_htb_at_capacity_with_bfifo_of_buffer_bytes():
    p = plan(buffer_bdp=3)
    cmds = p.bottleneck_commands()
    assert cmds[1][cmds[1].index("rate") + 1] == "50000000bit"
    assert cmds[1][cmds[1].index("ceil") + 1] == "50000000bit"
    assert cmds[2][-3:] == ["bfifo", "limit", str(3 * 250_000)]
    assert all(c[2] == "cx-abc123-r" and "dst" in c for c in cmds)


def test_offloads_off_on_every_veth_end():
    p = plan()
    ethtool = [c for c in p.commands() if "ethtool" in c]
    ends = {(c[3], c[6]) for c in ethtool}
    assert ends == set(p.interfaces())
    assert all(c[-6:] == ["tso", "off", "gso", "off", "gro", "off"] for c in ethtool)


def test_tun_delay_per_group_on_the_ack_path():
    p = plan("tun")
    assert p.delayline_args() == ["dl0:40000.000", "dl1:30000.000"]
    cmds = [" ".join(c) for c in p.delay_commands()]
    assert "ip -n cx-abc123-r route add 10.10.0.0/24 dev dl0 table 100" in cmds
    assert "ip -n cx-abc123-r route add 10.10.1.0/24 dev dl1 table 100" in cmds
    # ACKs arriving from the receiver and the router's probes take the delay table
    assert "ip -n cx-abc123-r rule add pref 100 iif dst lookup 100" in cmds
    assert "ip -n cx-abc123-r rule add pref 101 iif lo lookup 100" in cmds
    assert not any("netem" in c for c in cmds)


def test_steered_delay_line_runs_on_the_last_cpu(monkeypatch):
    monkeypatch.setattr(topology.os, "cpu_count", lambda: 4)
    p = plan("tun", steer_acks=True)
    assert p.delayline_args() == ["--cpu", "3", "dl0:40000.000", "dl1:30000.000"]


def test_netem_delay_per_group():
    cmds = [" ".join(c) for c in plan("netem").delay_commands()]
    assert cmds == [
        "tc -n cx-abc123-r qdisc add dev s0 root netem delay 40000us limit 1000000",
        "tc -n cx-abc123-r qdisc add dev s1 root netem delay 30000us limit 1000000",
    ]


def test_socket_buffers_allow_the_deepest_buffer_studied():
    # 250 BDP at 100 Mbit/s and 80 ms is 250 MB; autotuning must be allowed beyond it
    assert topology.SOCKET_BUFFER_MAX >= 250 * 100e6 * 0.08 / 8
    cmds = [c for c in plan().commands() if "net.ipv4.tcp_rmem=" + "4096 131072 " +
            str(topology.SOCKET_BUFFER_MAX) in c]
    assert len(cmds) == 3  # both senders and the receiver


def test_registry_and_clean_without_namespaces(tmp_path, monkeypatch):
    """clean() skips live owners and removes dead owners' entries (namespaces mocked)."""
    monkeypatch.setenv("COEXIST_RUN_DIR", str(tmp_path))
    monkeypatch.setattr(topology, "scratch_roots", lambda: ())
    removed = []
    monkeypatch.setattr(topology, "list_namespaces", lambda: ["cx-dead01-r", "other"])
    monkeypatch.setattr(topology, "teardown_namespaces",
                        lambda names: removed.extend(names) or list(names))
    topology.register(plan())  # owned by this (live) process
    (tmp_path / "dead01.json").write_text(
        '{"run_id": "dead01", "pid": 999999999, "namespaces": ["cx-dead01-r"]}')
    out = topology.clean()
    assert "cx-dead01-r" in out["removed"] and out["live"] == []  # own pid counts as cleanable
    assert not (tmp_path / "dead01.json").exists()
    assert "other" not in removed


def test_clean_removes_scratch_of_dead_owners_only(tmp_path, monkeypatch):
    """A killed run leaves its iperf3 output and the delay line's live counters; clean()
    removes those of dead owners, keeps a live owner's, and keeps unowned (older-style)
    names until they are a day old."""
    import os
    import time

    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(topology, "scratch_roots", lambda: (tmp_path, shm))
    mine = topology.scratch_dir("0123456789ab")  # under the real temp dir: move it here
    own_live = topology.live_counters_path("0123456789ab", mine)
    assert mine.name.startswith(f"coexist-0123456789ab-p{os.getpid()}-")
    assert own_live.parent == shm
    mine.rmdir()
    alive = tmp_path / f"coexist-0123456789ab-p{os.getpid()}-x"
    alive.mkdir()
    dead = tmp_path / "coexist-aaaaaaaaaaaa-p999999999-x"
    (dead / "sub").mkdir(parents=True)
    dead_live = shm / "coexist-aaaaaaaaaaaa-p999999999-delayline.live"
    dead_live.write_bytes(b"0")
    fresh_unowned = shm / "coexist-bbbbbbbbbbbb-delayline.live"
    fresh_unowned.write_bytes(b"0")
    old_unowned = tmp_path / "coexist-cccccccccccc-k3j2"
    old_unowned.mkdir()
    day_ago = time.time() - topology.UNOWNED_SCRATCH_AGE_S - 5
    os.utime(old_unowned, (day_ago, day_ago))
    other = tmp_path / "coexist-load-abc"  # not a run's scratch
    other.mkdir()
    removed = topology.clean_scratch()
    assert sorted(removed) == sorted(map(str, [dead, dead_live, old_unowned]))
    assert alive.exists() and fresh_unowned.exists() and other.exists()
    assert not dead.exists() and not dead_live.exists() and not old_unowned.exists()


def test_every_link_has_static_neighbours_both_ways():
    """No ARP on any link: a reply stuck in a deep bottleneck queue must not stall the ACKs."""
    p = plan()
    cmds = p.commands()
    macs = {(c[2], c[5]): c[7] for c in cmds if c[3:5] == ["link", "set"] and "address" in c}
    assert set(macs) == set(p.interfaces())
    assert len(set(macs.values())) == len(macs)
    assert all(m.startswith("02:") for m in macs.values())  # locally administered
    neigh = [c for c in cmds if c[3:5] == ["neigh", "replace"]]
    assert len(neigh) == len(p.interfaces())  # one entry per veth end, for its peer
    owner = {ip: (ns, dev) for ns, dev, ip in p.addressed_interfaces()}
    for c in neigh:
        ns, peer_ip, lladdr, dev = c[2], c[5], c[7], c[9]
        assert c[-2:] == ["nud", "permanent"]
        assert lladdr == macs[owner[peer_ip]]  # the peer's real address
        assert owner[peer_ip] != (ns, dev)
    # addresses and entries are in place before any link comes up
    first_up = next(i for i, c in enumerate(cmds) if c[-1] == "up" and "link" in c)
    assert max(i for i, c in enumerate(cmds) if "neigh" in c or "address" in c) < first_up
    assert topology.mac_of("10.20.0.2") == "02:00:0a:14:00:02"
