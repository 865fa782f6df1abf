"""Validity gates: each condition of the harness design can fail on its own."""

import math

import pytest

from coexist import data
from coexist.data import gates


def good():
    return {
        "probe": [{"rtt_s": 0.04, "p99_s": 0.0402, "min_s": 0.0400, "count": 500}],
        "lateness_p999_s": 2e-4,
        "utilisation": 0.99,
        "other_drops": {"r s0 link": 0, "delay line dl0": 0},
        "cca_seen": [("cubic", {"cubic"}), ("bbr", {"bbr"})],
        "flows_complete": [True, True],
        "start_lags_s": [0.05, 0.1],
    }


def test_good_run_is_valid():
    valid, reasons = gates.verdict(gates.evaluate(good()))
    assert valid and reasons == []


@pytest.mark.parametrize(("change", "gate"), [
    (lambda m: m["probe"][0].update(p99_s=0.0412), "probe_rtt"),
    (lambda m: m["probe"][0].update(min_s=0.0385), "probe_rtt"),
    (lambda m: m["probe"][0].update(count=0), "probe_rtt"),
    (lambda m: m.update(lateness_p999_s=1e-3), "delay_lateness"),
    (lambda m: m.update(utilisation=0.94), "utilisation"),
    (lambda m: m.update(utilisation=None), "utilisation"),
    (lambda m: m["other_drops"].update({"d eth0 link": 3}), "drops_only_at_bottleneck"),
    (lambda m: m.update(cca_seen=[("cubic", {"cubic"}), ("bbr", {"cubic"})]), "cca_confirmed"),
    (lambda m: m.update(cca_seen=[("cubic", set()), ("bbr", {"bbr"})]), "cca_confirmed"),
    (lambda m: m.update(flows_complete=[True, False]), "flows_complete"),
    (lambda m: m.update(start_lags_s=[0.05, 1.06]), "flows_started_together"),
])
def test_each_gate_fails_alone(change, gate):
    m = good()
    change(m)
    evaluated = gates.evaluate(m)
    failed = [g.name for g in evaluated if not g.passed]
    assert failed == [gate]
    valid, reasons = gates.verdict(evaluated)
    assert not valid and reasons[0].startswith(gate)


def test_a_value_never_measured_reads_as_such_in_the_reasons():
    m = good()
    m.update(utilisation=None)
    _, reasons = gates.verdict(gates.evaluate(m))
    assert reasons == ["utilisation: not measured (need >= 0.95)"]
    m.update(utilisation=0.9)
    assert gates.verdict(gates.evaluate(m))[1] == ["utilisation: 0.9 (need >= 0.95)"]
    # a run stored with the old wording reads the same; a reason that is no gate's stays
    m.update(utilisation=None)
    summary = {"gates": gates.as_records(gates.evaluate(m)),
               "invalid_reasons": ["stopped at 3 s of 60 s: ...",
                                   "utilisation: None (need >= 0.95)"]}
    assert gates.stored_reasons(summary) == ["stopped at 3 s of 60 s: ...",
                                             "utilisation: not measured (need >= 0.95)"]


def test_netem_runs_have_no_lateness_gate_and_thresholds_are_settable():
    m = good()
    m["lateness_p999_s"] = None
    m["utilisation"] = 0.9
    names = [g.name for g in gates.evaluate(m)]
    assert "delay_lateness" not in names
    relaxed = gates.Thresholds(utilisation_min=0.85)
    assert gates.verdict(gates.evaluate(m, relaxed))[0]


def test_drop_detail_names_the_place():
    m = good()
    m["other_drops"]["delay line dl0"] = 2
    (g,) = [g for g in gates.evaluate(m) if g.name == "drops_only_at_bottleneck"]
    assert g.value == 2 and "delay line dl0: 2" in g.detail


def test_run_summary_text_lists_flows_aggregates_and_gates():
    import json

    from coexist import data
    from coexist.cli.testbed import format_run

    stored = sorted((data.DATA / "runs").glob("*/*/summary.json"))
    if not stored:
        pytest.skip("no stored run")
    s = json.loads(stored[0].read_text())
    text = format_run(s)
    assert text.splitlines()[0].startswith(f"run {s['run_id']}:")
    for f in s["flows"]:
        assert f"{f['goodput_bps'] / 1e6:.2f}" in text
    for g in s["gates"]:
        assert f"{'PASS' if g['passed'] else 'FAIL'} {g['name']}" in text
    assert text.splitlines()[-1] == ("valid" if s["valid"] else
                                     "INVALID: " + "; ".join(s["invalid_reasons"]))


def test_cpu_times_are_monotonic_seconds():
    from coexist.core import provenance

    a = provenance.cpu_times()
    b = provenance.cpu_times()
    assert set(a) == {"busy_s", "idle_s", "steal_s"}
    assert all(b[k] >= a[k] >= 0 for k in a)


def test_cca_counts_only_samples_with_payload_acknowledged():
    """iperf3 sets the algorithm after connect() and its cookie: a sample under the
    namespace default with only the SYN and the cookie acknowledged (bytes_acked <= 38) is
    not counted; one with test data is."""
    import pandas as pd

    bad = data.DATA / "runs" / "fluctuation" / "_invalid"
    rows = [
        {"flow": 0, "cca": "bbr", "bytes_acked": 1},       # connect, before setsockopt
        {"flow": 0, "cca": "bbr", "bytes_acked": 38},      # SYN + cookie, before setsockopt
        {"flow": 0, "cca": "cubic", "bytes_acked": 53614},
        {"flow": 1, "cca": "bbr", "bytes_acked": 39},      # one byte of test data: counted
        {"flow": 1, "cca": "cubic", "bytes_acked": 900},  # switched while sending: counted
        {"flow": 2, "cca": "cubic", "bytes_acked": 1},    # never sent anything
    ]
    assert gates.BYTES_ACKED_BEFORE_CCA == 38
    seen = gates.cca_while_sending(pd.DataFrame(rows), 3)
    assert seen == [{"cubic"}, {"bbr", "cubic"}, set()]
    assert gates.cca_while_sending(pd.DataFrame(), 2) == [set(), set()]
    # the stored run the old rule rejected: flow 4's only bbr sample had sent nothing
    runs = sorted(bad.glob("100mbit-5ms-b2-cubic10-bbr10-r1.*")) if bad.exists() else []
    for run in runs:
        sock = data.load_table(run / data.RUN_FILES["sockets"], "sockets")
        assert gates.cca_while_sending(sock, 20)[4] == {"cubic"}
    # a control connection read as a flow (before the sampler matched both ports) carried
    # the cookie and the test parameters, 208 bytes: the rule still rejects it
    mix = data.DATA / "runs" / "mix_sweep" / "_invalid"
    for run in sorted(mix.glob("100mbit-40ms-b10-cubic7-bbr13-r0.d47279")):
        sock = data.load_table(run / data.RUN_FILES["sockets"], "sockets")
        assert gates.cca_while_sending(sock, 20)[1] == {"bbr"}


def test_git_commit_is_the_one_the_process_started_with(monkeypatch):
    """A long campaign reports the code it loaded, not a checkout that moved on since."""
    from coexist.core import provenance

    answers = iter(["aaa", "bbb"])
    monkeypatch.setattr(provenance, "_first_line", lambda argv: next(answers))
    provenance.git_commit.cache_clear()
    try:
        assert provenance.git_commit()["commit"] == "aaa"
        assert provenance.git_commit()["commit"] == "aaa"  # the checkout moved: still aaa
    finally:
        provenance.git_commit.cache_clear()


def _delivery(lags_s, offsets_s, rate_bps=8e6, duration_s=20.0, interval_s=0.5,
              sample_s=0.2, stall_s=None):
    """Receiver intervals (in each test's clock, shifted by the planned start as the harness
    stores them) and ACKed-byte samples (in the run's clock) of flows whose tests began
    ``lags_s`` after their planned starts, each delivering ``rate_bps`` steadily but for a
    stall (``stall_s``: from, to, in the test's clock) where it delivers nothing."""
    import numpy as np
    import pandas as pd

    def delivered(test_t):  # bytes delivered by test time test_t
        test_t = max(0.0, test_t)
        if stall_s is not None:
            test_t -= min(max(test_t - stall_s[0], 0.0), stall_s[1] - stall_s[0])
        return test_t * rate_bps / 8

    series, sockets = [], []
    for i, (lag, off) in enumerate(zip(lags_s, offsets_s, strict=True)):
        for k in range(int(duration_s / interval_s)):
            a, b = k * interval_s, (k + 1) * interval_s
            series.append({"flow": i, "t_end_s": off + b, "bytes": delivered(b) - delivered(a)})
        for t in np.arange(off + sample_s, off + lag + duration_s, sample_s):
            sockets.append({"flow": i, "t_s": t, "bytes_acked": gates.BYTES_ACKED_BEFORE_CCA
                            + delivered(t - off - lag)})
    return pd.DataFrame(series), pd.DataFrame(sockets)


def test_start_lags_read_when_each_test_began_from_its_bytes():
    """A flow whose SYN was lost begins its test a retransmission timeout (1 s) late and is
    measured over a window that runs past the others' end: the lags read it back from the
    receiver's intervals and the ACKed bytes, to a fraction of the sampling period, and
    the gate fails it."""
    series, sockets = _delivery([0.05, 1.05, 0.1], [0.0, 0.0, 3.0])
    lags = gates.flow_start_lags(series, sockets, [0.0, 0.0, 3.0])
    assert lags == pytest.approx([0.05, 1.05, 0.1], abs=0.02)
    gate = gates.start_gate(lags)
    assert not gate.passed and gate.value == pytest.approx(1.0, abs=0.03)
    assert gate.detail.startswith("flow 1 began")
    series, sockets = _delivery([0.05, 0.3], [0.0, 0.0])
    assert gates.start_gate(gates.flow_start_lags(series, sockets, [0.0, 0.0])).passed
    # flows of different RTTs compare after their set-up, some RTTs each
    assert gates.start_gate([0.06, 0.31, 0.32], [0.01, 0.05, 0.05]).passed
    gate = gates.start_gate([0.06, 0.31, 1.35], [0.01, 0.05, 0.05])
    assert not gate.passed and gate.value == pytest.approx(1.05)
    assert gate.detail == "flow 2 began 1.05 s after flow 0"
    # a stall is dated from where the bytes start to rise again, not where they stopped
    series, sockets = _delivery([0.05, 0.3], [0.0, 0.0], stall_s=(5.0, 7.0))
    assert gates.flow_start_lags(series, sockets, [0.0, 0.0]) == pytest.approx(
        [0.05, 0.3], abs=0.02)
    # a flow whose lumps of bytes cannot be dated has no lag and is not compared
    series, sockets = _delivery([0.05, 3.0], [0.0, 0.0])
    lumpy = series["flow"] == 1
    series.loc[lumpy, "bytes"] = series.loc[lumpy, "bytes"].to_numpy() * \
        ([0.0, 0.0, 0.0, 4.0] * (lumpy.sum() // 4))
    lags = gates.flow_start_lags(series, sockets, [0.0, 0.0])
    assert lags[0] == pytest.approx(0.05, abs=0.02) and math.isnan(lags[1])
    assert gates.start_gate(lags) is None  # one dated flow: nothing to compare
    gate = gates.start_gate([0.05, 0.1, math.nan])
    assert gate.passed and gate.detail == "1 flow(s) not dated"
    # no tables (a run stopped early): no gate
    assert gates.start_gate(None) is None and gates.start_gate([float("nan")]) is None
