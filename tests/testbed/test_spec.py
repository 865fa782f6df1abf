"""Experiment descriptions: unit parsing, flow specs, buffer sizing, error messages."""

import pytest

from coexist.core.params import ParameterError
from coexist.testbed import spec


@pytest.mark.parametrize(("text", "bps"), [("50mbit", 50e6), ("100Mbps", 100e6),
                                           ("1gbit", 1e9), ("2e7bit", 2e7), (5e6, 5e6),
                                           ("500kbit", 5e5)])
def test_parse_rate(text, bps):
    assert spec.parse_rate(text) == pytest.approx(bps)


@pytest.mark.parametrize("bad", ["fast", "50 furlongs", "0mbit", "2gbit", "-5mbit", True,
                                 "2e7", "50", "nan", "infmbit", "1e400mbit", "1_0mbit"])
def test_parse_rate_rejects_with_name_and_range(bad):
    with pytest.raises(ParameterError, match=r"'capacity'.*valid: .*between"):
        spec.parse_rate(bad)


@pytest.mark.parametrize(("text", "s"), [("40ms", 0.04), ("0.04s", 0.04), ("40000us", 0.04),
                                         ("0.04", 0.04), (0.04, 0.04)])
def test_parse_time(text, s):
    assert spec.parse_time(text, "rtt", 0.001, 1.0) == pytest.approx(s)


def test_parse_time_out_of_range_names_parameter():
    with pytest.raises(ParameterError, match=r"'rtt' = '5s'.*between 0.001 s and 1 s"):
        spec.parse_time("5s", "rtt", 0.001, 1.0)


def test_parse_flows_counts_groups_and_zero_counts():
    flows = spec.parse_flows("cubic:2,bbr:0,bbr:1@30ms,reno:1", 0.01)
    assert [f.cca for f in flows] == ["cubic", "cubic", "bbr", "reno"]
    assert [f.rtt_s for f in flows] == [0.01, 0.01, 0.03, 0.01]


@pytest.mark.parametrize("bad", ["cubic", "vegas:1", "cubic:-1", "cubic:0", "cubic:65",
                                 "bbr:1@9s", ""])
def test_parse_flows_rejects(bad):
    with pytest.raises(ParameterError, match="'flows"):
        spec.parse_flows(bad, 0.04)


def test_format_flows_round_trips():
    text = "cubic:3@10ms,bbr:3@30ms,cubic:1"
    flows = spec.parse_flows(text, 0.04)
    assert spec.parse_flows(spec.format_flows(flows, 0.04), 0.04) == flows


def test_buffer_is_bdp_multiple_of_c_times_rtt():
    e = spec.experiment(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows="cubic:1,bbr:1")
    assert e.bdp_bytes == pytest.approx(50e6 * 0.04 / 8)  # 250 kB
    assert e.buffer_bytes == 500_000
    assert spec.experiment(capacity="100mbit", rtt="5ms", buffer_bdp=0.5,
                           flows="bbr:1").buffer_bytes == 31_250


def test_groups_follow_first_appearance_and_bdp_uses_reference_rtt():
    e = spec.experiment(capacity="100mbit", rtt="10ms", buffer_bdp=2,
                        flows="cubic:1@30ms,bbr:1,cubic:1@30ms")
    assert e.groups == (0.03, 0.01)
    assert [e.group_of(f) for f in e.flows] == [0, 1, 0]
    assert e.buffer_bytes == 250_000


def test_tiny_buffer_rejected_with_minimum():
    with pytest.raises(ParameterError, match=r"'buffer_bdp' = 0.01 .*at least 3028 bytes"):
        spec.experiment(capacity="1mbit", rtt="10ms", buffer_bdp=0.01, flows="cubic:1")


@pytest.mark.parametrize(("kw", "name"), [({"warmup": 60}, "warmup"),
                                          ({"duration": 1}, "duration"),
                                          ({"interval": 0.01}, "interval"),
                                          ({"delay": "magic"}, "delay"),
                                          ({"buffer_bdp": 0}, "buffer_bdp")])
def test_experiment_errors_name_the_parameter(kw, name):
    args = dict(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows="cubic:1", duration=60)
    args.update(kw)
    with pytest.raises(ParameterError, match=f"'{name}'"):
        spec.experiment(**args)


def test_to_dict_records_flows_text_and_buffer_bytes():
    e = spec.experiment(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows="cubic:1,bbr:1")
    d = e.to_dict()
    assert d["flows"] == "cubic:1,bbr:1" and d["buffer_bytes"] == 500_000
    assert d["capacity_bps"] == 50e6


def test_warmup_must_leave_a_utilisation_window():
    args = dict(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows="cubic:1", duration=10,
                sample=0.2)
    spec.experiment(**args, warmup=8.1)  # 0.5 + 2 x 0.2 + 1 = 1.9 s left: the limit
    with pytest.raises(ParameterError, match=r"'warmup' = 8.2 .*0 <= warmup <= 8.1 s"):
        spec.experiment(**args, warmup=8.2)
    with pytest.raises(ParameterError, match=r"'duration' = 2 .*duration >= 21.5 s"):
        spec.experiment(**{**args, "duration": 2, "sample": 10}, warmup=0)


def test_stagger_starts_the_bbr_flows_one_after_another():
    from coexist.testbed import spec

    exp = spec.experiment(capacity="100mbit", rtt="5ms", buffer_bdp=2,
                          flows="cubic:2,bbr:3", duration=60, warmup=20, stagger="1.5s")
    assert [exp.start_s(i) for i in range(5)] == [0.0, 0.0, 0.0, 1.5, 3.0]
    assert spec.experiment(capacity="100mbit", rtt="5ms", buffer_bdp=2,
                           flows="cubic:2,bbr:3", duration=60).start_s(4) == 0.0


def test_a_stagger_past_the_warm_up_is_refused():
    from coexist.core.params import ParameterError
    from coexist.testbed import spec

    with pytest.raises(ParameterError, match=r"'stagger' = 3 would start the last of 10 BBR "
                       r"flows 27 s in, not before the warm-up \(20 s\) ends; valid: "
                       r"0 <= stagger < warmup / 9"):
        spec.experiment(capacity="100mbit", rtt="5ms", buffer_bdp=2,
                        flows="cubic:10,bbr:10", duration=200, warmup=20, stagger=3)
    with pytest.raises(ParameterError, match="'stagger'"):
        spec.experiment(capacity="100mbit", rtt="5ms", buffer_bdp=2, flows="bbr:2",
                        duration=60, stagger="-1s")


def test_steer_acks_is_a_boolean_for_the_tun_delay_line_on_two_or_more_cpus(monkeypatch):
    args = dict(capacity="300mbit", rtt="5ms", buffer_bdp=2, flows="cubic:1,bbr:1",
                duration=30)
    assert not spec.experiment(**args).steer_acks
    exp = spec.experiment(**args, steer_acks=True)
    assert exp.steer_acks and exp.to_dict()["steer_acks"] is True
    with pytest.raises(ParameterError, match=r"'steer_acks' = 'yes'.*true or false"):
        spec.experiment(**args, steer_acks="yes")
    with pytest.raises(ParameterError, match=r"'steer_acks' = True.*delay 'netem'"):
        spec.experiment(**args, steer_acks=True, delay="netem")
    monkeypatch.setattr(spec.os, "cpu_count", lambda: 1)
    with pytest.raises(ParameterError, match=r"'steer_acks' = True.*1 CPU \(needs 2 or more\)"):
        spec.experiment(**args, steer_acks=True)
