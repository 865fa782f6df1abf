"""Parsers of iperf3, ss, tc, ping and ip output, on output recorded from the testbed; the
bottleneck utilisation computed from its counter samples."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from coexist.testbed import measure

DATA = Path(__file__).parents[1] / "fixtures" / "testbed"


def read(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize("cca", ["cubic", "bbr", "reno"])
def test_iperf3_receiver_intervals(cca):
    res = measure.parse_iperf3(read(f"iperf3_{cca}.json"))
    assert res.congestion == cca
    assert len(res.intervals) >= 4
    # receiver intervals tile the test and add up to the receiver's total
    for a, b in zip(res.intervals, res.intervals[1:], strict=False):
        assert b["start_s"] == pytest.approx(a["end_s"], abs=1e-3)
    assert sum(iv["bytes"] for iv in res.intervals) == res.receiver_bytes
    for iv in res.intervals:
        assert iv["bits_per_second"] == pytest.approx(
            iv["bytes"] * 8 / (iv["end_s"] - iv["start_s"]), rel=1e-6)
    assert res.sender_bytes >= res.receiver_bytes > 0


def test_iperf3_errors_are_reported():
    with pytest.raises(measure.MeasureError, match="not JSON"):
        measure.parse_iperf3("iperf3: error - unable to connect")
    with pytest.raises(measure.MeasureError, match="reported an error: unable"):
        measure.parse_iperf3(json.dumps({"error": "unable to connect to server"}))
    doc = json.loads(read("iperf3_bbr.json"))
    del doc["server_output_json"]
    with pytest.raises(measure.MeasureError, match="server_output_json"):
        measure.parse_iperf3(json.dumps(doc))


def test_ss_records():
    recs = measure.parse_ss(read("ss.txt"))
    by_port = {r["local_port"]: r for r in recs}
    cubic, bbr = by_port[41001], by_port[41002]
    assert cubic["cca"] == "cubic" and bbr["cca"] == "bbr"
    assert cubic["peer_port"] == 5201 and bbr["peer_port"] == 5202
    assert cubic["bbr_bw_bps"] is None
    assert bbr["bbr_bw_bps"] > 0 and bbr["bbr_mrtt_s"] == pytest.approx(0.020, abs=0.002)
    assert bbr["pacing_gain"] > 0 and bbr["cwnd_gain"] > 0
    for r in (cubic, bbr):
        assert r["state"] == "ESTAB"
        assert r["cwnd"] > 0 and r["bytes_acked"] > 0
        assert r["minrtt_s"] == pytest.approx(0.020, abs=0.002)
        assert r["srtt_s"] >= r["minrtt_s"]
        assert r["delivery_rate_bps"] > 0 and r["pacing_rate_bps"] > 0
    # iperf3's control connections are there too (same peer ports, other local ports)
    assert len(recs) == 4


def test_ss_flags_before_cca_and_bad_rate():
    text = ("ESTAB 0 0 10.0.0.1:5 10.0.0.2:6\n\t ts sack ecn reno wscale:7,7 cwnd:10 "
            "rtt:1.5/0.2 minrtt:1 bytes_acked:5 pacing_rate 1.5Mbps delivery_rate 20Kbps\n")
    (rec,) = measure.parse_ss(text)
    assert rec["cca"] == "reno" and rec["pacing_rate_bps"] == 1.5e6
    assert rec["delivery_rate_bps"] == 2e4 and rec["srtt_s"] == pytest.approx(1.5e-3)
    with pytest.raises(measure.MeasureError, match="cannot read rate"):
        measure.parse_ss(text.replace("20Kbps", "fast"))
    with pytest.raises(measure.MeasureError, match="info line without a socket line"):
        measure.parse_ss("\t cubic cwnd:10\n")


def test_tc_bottleneck_counters():
    q = measure.parse_tc_qdisc(read("tc_qdisc.json"), "10:")
    assert q["kind"] == "bfifo"
    assert q["sent_bytes"] > 0 and q["sent_packets"] > 0
    assert q["backlog_bytes"] >= 0 and q["drops"] >= 0
    with pytest.raises(measure.MeasureError, match="no qdisc with handle '7:'"):
        measure.parse_tc_qdisc(read("tc_qdisc.json"), "7:")


def test_qdisc_drops_skips_the_bottleneck():
    text = read("tc_qdisc.json")
    all_q = measure.qdisc_drops(text)
    skipped = measure.qdisc_drops(text, [("dst", "1:"), ("dst", "10:")])
    assert "dst bfifo 10:" in all_q and "dst htb 1:" in all_q
    assert not any(k.startswith("dst ") for k in skipped)
    assert any(k.startswith("dl") for k in skipped)  # the delay line's device is counted


def test_ping_replies_and_unknown_lines():
    replies = measure.parse_ping(read("ping.txt"))
    assert len(replies) == 15
    assert [r["seq"] for r in replies] == list(range(1, 16))
    assert all(0.020 <= r["rtt_s"] <= 0.021 for r in replies)
    with pytest.raises(measure.MeasureError, match="unexpected line"):
        measure.parse_ping(read("ping.txt") + "From 10.10.0.1 icmp_seq=16 Destination Host "
                           "Unreachable\n")


def test_link_drops_and_delayline_stats():
    drops = measure.link_drops(read("ip_link.json"))
    assert {"lo", "s0", "s1", "dst", "dl0", "dl1"} <= set(drops)
    assert all(v >= 0 for v in drops.values())
    stats = measure.parse_delayline_stats(read("delayline_stats.json"))
    assert stats["scheduler"] == "SCHED_FIFO"
    assert stats["user_s"] + stats["sys_s"] == pytest.approx(stats["cpu_s"], abs=2e-6)
    assert stats["cpu"] == 1 and stats["rps_cpus"] == "00000001"  # a steered run
    assert [d["name"] for d in stats["devices"]] == ["dl0", "dl1"]
    assert stats["released"] == sum(d["packets"] - d["queued_at_stop"]
                                    for d in stats["devices"])
    with pytest.raises(measure.MeasureError, match="malformed"):
        measure.parse_delayline_stats('{"cpu_s": 1}')


def test_a_control_connection_on_a_flows_client_port_is_not_that_flow():
    """The recorded ``ss`` output holds an iperf3 control connection (46422 -> 5201) running
    the namespace's default CCA (bbr) with 208 bytes acked. Given flow 1's client port, only
    its peer port tells it from flow 1's data connection (-> 5202); matched on the client
    port alone it would show flow 1 running bbr whatever flow 1 runs."""
    import pandas as pd

    from coexist.data import gates
    from coexist.testbed import experiment

    base = experiment.BASE_CPORT
    text = (read("ss.txt").replace("10.10.0.2:41001 ", f"10.10.0.2:{base} ")
            .replace("10.10.0.2:41002 ", f"10.10.0.2:{base + 1} ")
            .replace("10.10.0.2:46422 ", f"10.10.0.2:{base + 1} "))
    recs = measure.parse_ss(text)
    flows = experiment.flow_of_socket(2)
    seen = [(r["local_port"], r["peer_port"], r["cca"], flows.get((r["local_port"],
                                                                   r["peer_port"])))
            for r in recs]
    assert (base + 1, 5201, "bbr", None) in seen  # the control connection: no flow
    assert (base, 5201, "cubic", 0) in seen and (base + 1, 5202, "bbr", 1) in seen
    sock = pd.DataFrame([{**r, "flow": flows[(r["local_port"], r["peer_port"])]}
                         for r in recs if (r["local_port"], r["peer_port"]) in flows])
    assert gates.cca_while_sending(sock, 2) == [{"cubic"}, {"bbr"}]


def test_client_ports_lie_outside_the_ephemeral_range(monkeypatch):
    from coexist.testbed import ports, spec, topology

    assert ports.BASE_CPORT + spec.MAX_FLOWS <= 32768  # Linux's default range
    plan = topology.Plan("abc123", spec.experiment(
        capacity="20mbit", rtt="20ms", buffer_bdp=2, flows="cubic:1,bbr:1"), "tun")
    monkeypatch.setattr(ports, "sh", lambda cmd, **kw: "32768\t60999\n")
    ports._check_client_ports(plan, 2)
    monkeypatch.setattr(ports, "sh", lambda cmd, **kw: "1024\t60999\n")
    with pytest.raises(topology.TestbedError, match="ip_local_port_range 1024-60999"):
        ports._check_client_ports(plan, 2)


def _counter_samples(times, rate_bps, pkt_bytes=1514):
    sent = [t * rate_bps / 8 for t in times]
    return pd.DataFrame({"t_s": times, "sent_bytes": sent,
                         "sent_packets": [b / pkt_bytes for b in sent]})


def test_link_utilisation_is_sent_bytes_over_capacity_and_span():
    from coexist.testbed.experiment import link_utilisation
    w = _counter_samples([30.0 + 0.2 * k for k in range(50)], 95e6)
    u, pkt = link_utilisation(w, 100e6)
    assert u == pytest.approx(0.95) and pkt == pytest.approx(1514)


def test_link_utilisation_refuses_a_window_shorter_than_the_minimum():
    from coexist.testbed.experiment import link_utilisation
    from coexist.testbed.spec import MIN_UTILISATION_SPAN_S
    # a run stopped 0.23 s after its warm-up: two samples, the second one read 14 ms late
    w = _counter_samples([30.03, 30.23], 100e6)
    w.loc[1, "sent_bytes"] += 100e6 / 8 * 0.014
    assert all(math.isnan(x) for x in link_utilisation(w, 100e6))
    assert all(math.isnan(x) for x in link_utilisation(w.iloc[:1], 100e6))
    just = _counter_samples([10.0, 10.0 + MIN_UTILISATION_SPAN_S], 50e6)
    assert link_utilisation(just, 100e6)[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="capacity_bps = 0"):
        link_utilisation(w, 0)
