"""Stopping a run early once its delay-line lateness gate can no longer pass.

The stop must never throw away a run that could still have been valid: the unit tests
check the decision against the delay line's own percentile, and the bound on the packets a
run can still carry against every stored run. The integration test stops a real run.
"""

import json
import math
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from coexist import data
from coexist.data import gates
from coexist.testbed import delay, experiment, measure, spec


def _c_percentile_bin(hist: np.ndarray, q: float) -> int:
    """The delay line's ``percentile_us`` (delayline.c), line by line."""
    released = int(hist.sum())
    want = int(q * float(released))
    if want >= released:
        want = released - 1
    seen = 0
    for i, count in enumerate(hist):
        seen += int(count)
        if seen > want:
            return i
    return len(hist) - 1


def test_first_late_bin_matches_the_gate():
    assert gates.first_late_bin() == 1000
    assert gates.first_late_bin(gates.Thresholds(lateness_p999_s=1e-6)) == 1
    assert gates.first_late_bin(gates.Thresholds(lateness_p999_s=1.5e-3)) == 1500
    assert gates.first_late_bin(gates.Thresholds(lateness_p999_s=2.5e-7)) == 1
    # the gate passes on p99.9 in the bin just before the first late one, fails on that one
    th = gates.DEFAULT
    first = gates.first_late_bin(th)
    for p999_bin, passes in ((first - 1, True), (first, False)):
        m = {"probe": [], "lateness_p999_s": p999_bin / 1e6, "utilisation": 1.0,
             "other_drops": {}, "cca_seen": [], "flows_complete": []}
        (late_gate,) = [g for g in gates.evaluate(m, th) if g.name == "delay_lateness"]
        assert late_gate.passed is passes


def test_certain_failure_holds_however_the_run_continues():
    """Whenever the decision says "must fail", the gate fails for every final packet count
    up to the bound, even with every later packet on time (the best case for the gate)."""
    rng = random.Random(7)
    first = gates.first_late_bin()
    hist = np.zeros(first + 1, dtype=np.int64)
    decided = 0
    for _ in range(3000):
        at_most = rng.randint(1, 3_000_000)
        late = rng.randint(0, min(at_most, 6000))
        if not gates.lateness_certain_to_fail(late, at_most):
            continue
        decided += 1
        for n in {late, late + 1, (late + at_most) // 2, at_most - 1, at_most}:
            if n < late:
                continue
            hist[:] = 0
            hist[0], hist[first] = n - late, late
            assert _c_percentile_bin(hist, 0.999) >= first, (late, at_most, n)
    assert decided > 100
    # and it is not needlessly late: 0.1 % of the bound plus two packets suffices
    for at_most in (10_000, 1_234_567, 2_000_000):
        need = math.ceil(0.001 * at_most + 2)
        assert gates.lateness_certain_to_fail(need, at_most)
        assert not gates.lateness_certain_to_fail(need - 2, at_most)


def test_certain_failure_refuses_impossible_counts():
    with pytest.raises(ValueError, match="late = 11"):
        gates.lateness_certain_to_fail(11, 10)
    with pytest.raises(ValueError, match="late = -1"):
        gates.lateness_certain_to_fail(-1, 10)


def _stored_runs():
    for path in sorted((data.DATA / "runs").glob("*/*/summary.json")) + \
            sorted((data.DATA / "runs").glob("*/_invalid/*/summary.json")):
        s = json.loads(path.read_text())
        if s.get("delay_line") and not s.get("stopped_early"):
            yield path.parent, s


def test_packet_bound_holds_on_every_stored_run():
    """The bound behind the early stop (at most two ACK-path packets per full-sized packet
    the bottleneck can deliver, plus probes and per-flow extras), from the start of the
    run, against what the delay line released in every stored run that ran to its end."""
    ratios = []
    for run_dir, s in _stored_runs():
        p = s["params"]
        exp = spec.experiment(capacity=p["capacity_bps"], rtt=p["rtt_s"],
                              buffer_bdp=p["buffer_bdp"], flows=p["flows"],
                              duration=p["duration_s"], warmup=p["warmup_s"])
        offsets = data.load_table(run_dir / data.RUN_FILES["flows"], "flows")["start_offset_s"]
        bound = experiment.ack_path_packets_at_most(exp, 0.0, float(offsets.max()))
        ratios.append(s["delay_line"]["released"] / bound)
    assert len(ratios) > 500
    assert max(ratios) < 1.0, max(ratios)


def test_packet_bound_shrinks_to_the_tail_after_the_data():
    exp = spec.experiment(capacity="100mbit", rtt="40ms", buffer_bdp=2, flows="cubic:1,bbr:1",
                          duration=120, warmup=30)
    per_s = experiment.ACK_PATH_PER_DATA_PACKET_MAX * 100e6 / (8 * spec.WIRE_PACKET_BYTES)
    start = experiment.ack_path_packets_at_most(exp, 0.0, 0.01)
    later = experiment.ack_path_packets_at_most(exp, 60.0, 0.01)
    assert start - later == pytest.approx(60 * per_s + 60 * experiment.PROBE_HZ)
    tail = experiment.ack_path_packets_at_most(exp, 1000.0, 0.01)
    assert tail == 2 * experiment.ACK_PATH_EXTRA_PER_FLOW + 1


def _live_file(path, arrived, released, hist, magic=measure.LIVE_MAGIC):
    header = magic + struct.pack("=QQQ", arrived, released, 0)
    body = np.zeros(measure.LIVE_HIST_BINS, dtype=np.uint32)
    body[:len(hist)] = hist
    path.write_bytes(header + body.tobytes())


def test_live_counters_read_the_delay_line_layout(tmp_path):
    f = tmp_path / "live"
    _live_file(f, 12, 10, [7, 0, 3])
    c = measure.read_delayline_live(f)
    assert (c.arrived, c.released) == (12, 10)
    assert c.hist[:3].tolist() == [7, 0, 3] and int(c.hist.sum()) == 10
    # the C struct: header fields and histogram size as delayline.c declares them
    text = delay.SOURCE.read_text()
    assert f'"{measure.LIVE_MAGIC.decode()}"' in text
    assert f"#define HIST_US {measure.LIVE_HIST_BINS - 1}" in text
    _live_file(f, 1, 1, [1], magic=b"NOTLIVE!")
    with pytest.raises(measure.MeasureError, match="CXDLIVE1"):
        measure.read_delayline_live(f)
    f.write_bytes(b"CXDLIVE1")
    with pytest.raises(measure.MeasureError, match="layout"):
        measure.read_delayline_live(f)


def _summary(failed: list[str], stopped: bool, steal_s: float = 3.0) -> dict:
    names = ["probe_rtt", "delay_lateness", "utilisation", "drops_only_at_bottleneck",
             "cca_confirmed", "flows_complete"]
    return {"valid": not failed, "gates": [{"name": n, "passed": n not in failed}
                                           for n in names],
            "stopped_early": {"at_s": 12.0, "reason": "x"} if stopped else None,
            "wall_s": 100.0,
            "provenance": {"cores": 2, "cpu_seconds_during_run": {"steal_s": steal_s}}}


def test_a_stopped_run_counts_as_timing_only_when_its_flows_were_cut_by_the_stop():
    stopped = _summary(["delay_lateness", "flows_complete"], stopped=True)
    assert gates.timing_only(stopped) and gates.disturbed(stopped)
    assert not gates.disturbed(_summary(["delay_lateness", "flows_complete"], stopped=True,
                                        steal_s=0.5))  # 0.25 % steal: not the hypervisor
    # without a stop, unfinished flows are a failure of their own
    assert not gates.timing_only(_summary(["delay_lateness", "flows_complete"], stopped=False))
    assert not gates.timing_only(_summary(["delay_lateness", "cca_confirmed", "flows_complete"],
                                          stopped=True))
    assert not gates.timing_only(_summary([], stopped=False))


def _with_cca_detail(summary: dict, detail: str) -> dict:
    for g in summary["gates"]:
        if g["name"] == "cca_confirmed":
            g["detail"] = detail
    return summary


def test_a_stopped_run_whose_late_flows_showed_no_cca_yet_counts_as_timing_only():
    """Stored run 0a1c57 stopped at 2.4 s under 67 % steal with flow 16 not yet sending:
    its cca_confirmed failure is the stop's doing. A flow that showed the wrong CCA, or a
    run that ran to its end with a flow unseen, is not excused."""
    failed = ["delay_lateness", "cca_confirmed", "flows_complete"]
    unseen = "flow 16: asked bbr, saw nothing"
    assert gates.cca_unseen_only(_with_cca_detail(_summary(failed, stopped=True), unseen))
    s = _with_cca_detail(_summary(failed, stopped=True),
                         unseen + "; flow 3: asked cubic, saw nothing")
    assert gates.timing_only(s) and gates.disturbed(s)
    wrong = _with_cca_detail(_summary(failed, stopped=True),
                             unseen + "; flow 2: asked cubic, saw ['bbr']")
    assert not gates.cca_unseen_only(wrong) and not gates.timing_only(wrong)
    assert not gates.timing_only(_with_cca_detail(_summary(failed, stopped=False), unseen))
    assert not gates.cca_unseen_only(_summary(["delay_lateness"], stopped=True))  # passed
    assert not gates.cca_unseen_only(_with_cca_detail(_summary(failed, stopped=True), ""))


@pytest.mark.testbed
def test_a_run_stops_once_its_lateness_gate_cannot_pass(tmp_path):
    """A lateness limit of 1 us, which every real packet exceeds, dooms the run at once:
    it must stop within seconds, be invalid on that gate by its own final statistics,
    store cleanly and leave nothing behind."""
    from coexist.testbed import topology

    from .test_integration import _netns, _require_testbed

    _require_testbed()
    exp = spec.experiment(capacity="10mbit", rtt="20ms", buffer_bdp=2, flows="cubic:1,bbr:1",
                          duration=40, warmup=5, delay="tun")
    th = gates.Thresholds(lateness_p999_s=1e-6)
    r = experiment.run(exp, progress=False, th=th)
    s = r.summary
    assert s["stopped_early"] is not None and s["stopped_early"]["at_s"] < 10, s["stopped_early"]
    assert not s["valid"] and "must fail" in s["invalid_reasons"][0]
    by_name = {g["name"]: g for g in s["gates"]}
    assert not by_name["delay_lateness"]["passed"]
    assert s["delay_line"]["lateness_us"]["p999"] >= gates.first_late_bin(th)
    # the delay line's own CPU and wall time, for its CPU per packet
    dl = s["delay_line"]
    assert 0 < dl["cpu_s"] and 0 < dl["wall_s"] <= s["wall_s"]
    assert dl["cpu_fraction"] == pytest.approx(dl["cpu_s"] / dl["wall_s"])
    assert dl["user_s"] >= 0 and dl["sys_s"] >= 0
    assert dl["user_s"] + dl["sys_s"] == pytest.approx(dl["cpu_s"], abs=2e-6)
    assert not by_name["flows_complete"]["passed"] and by_name["cca_confirmed"]["passed"]
    assert gates.timing_only(s) or not by_name["drops_only_at_bottleneck"]["passed"]
    assert s["flows"] == [] and s["bbr_share"] is None and s["goodput_total_bps"] is None
    assert s["wall_s"] < 30
    # stored like any invalid run, and listed by the run record
    root = tmp_path / "runs" / "demo" / "_invalid"
    experiment.write(r, root, f"k-r0.{s['run_id']}")
    row = data.run_summaries(tmp_path).iloc[0]
    assert row["stopped_early_s"] == s["stopped_early"]["at_s"] and not row["valid"]
    assert not any(ns.startswith(f"cx-{s['run_id']}") for ns in _netns())
    assert not (topology.registry_dir() / f"{s['run_id']}.json").exists()
    assert not list(Path("/dev/shm").glob(f"coexist-{s['run_id']}-*"))
