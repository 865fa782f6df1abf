"""The timer wake-up probe recorded before campaign runs."""

import pytest

from coexist.core.params import ParameterError
from coexist.data import host
from coexist.testbed import wakeups


class FakeClock:
    """A clock where each sleep lasts as asked, plus a scripted extra delay."""

    def __init__(self, extra):
        self.t = 0.0
        self.extra = list(extra)

    def now(self):
        return self.t

    def sleep(self, s):
        self.t += s + (self.extra.pop(0) if self.extra else 0.0)


def test_on_time_wake_ups_read_zero_and_a_stall_is_counted_once():
    quiet = FakeClock([])
    r = wakeups.probe(1.0, 1e-3, clock=quiet.now, sleep=quiet.sleep)
    assert r["wakeups"] in (999, 1000) and r["max_ms"] == 0 and r["late_pct"] == 0
    # one 50-ms stall among on-time wake-ups: one late wake-up, the rest re-anchored after it
    stalled = FakeClock([0.0] * 10 + [0.05])
    r = wakeups.probe(1.0, 1e-3, clock=stalled.now, sleep=stalled.sleep)
    assert r["max_ms"] == pytest.approx(50.0)
    assert r["late_pct"] == pytest.approx(100 / r["wakeups"], abs=1e-3)
    assert r["p99_ms"] == 0 and r["wakeups"] < 1000 - 40
    # the stall's time beyond the 1-ms tolerance, in % of the 1 s probed: 49 ms -> 4.9 %
    assert r["stall_pct"] == pytest.approx(4.9, abs=0.11)
    quiet = FakeClock([])
    assert wakeups.probe(1.0, 1e-3, clock=quiet.now, sleep=quiet.sleep)["stall_pct"] == 0


def test_a_host_that_wakes_every_thread_late_reads_late():
    slow = FakeClock([2e-3] * 10_000)
    r = wakeups.probe(0.5, 1e-3, clock=slow.now, sleep=slow.sleep)
    assert r["late_pct"] == 100 and r["p999_ms"] == pytest.approx(2.0)
    # every 3-ms cycle spends 1 ms beyond the tolerance: a third of the time
    assert r["stall_pct"] == pytest.approx(100 / 3, rel=0.01)


@pytest.mark.parametrize(("duration", "step", "name"),
                         [(0, 1e-3, "duration_s"), (1.0, 0, "step_s"), (1.0, 2.0, "step_s")])
def test_bad_probe_settings_are_refused_by_name(duration, step, name):
    with pytest.raises(ParameterError, match=name):
        wakeups.probe(duration, step)


def test_the_real_probe_runs_and_reports_every_field():
    r = wakeups.probe(0.05)
    assert set(r) == {"wakeups", "p99_ms", "p999_ms", "max_ms", "late_pct", "stall_pct"}
    assert r["wakeups"] > 5 and 0 <= r["p99_ms"] <= r["p999_ms"] <= r["max_ms"]


def test_a_campaign_run_records_the_probe_and_the_run_record_lists_it(tmp_path, monkeypatch):
    import json

    from coexist import data
    from coexist.testbed import campaign, experiment

    from .test_campaign import BASE, write

    stored = sorted((data.DATA / "runs" / "two_flow").glob("*/summary.json"))[0]
    summary = json.loads(stored.read_text())
    summary.update(valid=False, stopped_early={"at_s": 1.0, "reason": "x"}, run_id="w")
    summary.pop("wake_probe", None)
    for g in summary["gates"]:  # cut short on its lateness gate: stored as its summary
        g["passed"] = g["name"] not in {"delay_lateness", "flows_complete"}
    seen = {"wakeups": 1000, "p99_ms": 0.2, "p999_ms": 3.5, "max_ms": 9.0, "late_pct": 0.4}
    monkeypatch.setattr(wakeups, "probe", lambda: seen)
    monkeypatch.setattr(experiment, "run",
                        lambda exp, **kw: experiment.RunResult(summary, *[None] * 5))
    c = campaign.load(write(tmp_path, BASE))
    result = campaign._execute(c.points[0].exp, 0.95)
    assert result.summary["wake_probe"] == seen
    campaign._store(c, c.points[0], result, tmp_path)
    row = data.run_summaries(tmp_path).iloc[0]
    assert row["wake_p999_ms"] == 3.5 and row["wake_late_pct"] == 0.4


def test_probe_stops_when_asked_and_an_empty_probe_reads_none():
    calls = []
    clock = FakeClock([])
    r = wakeups.probe(1.0, 1e-3, clock=clock.now, sleep=clock.sleep,
                      stop=lambda: calls.append(1) or len(calls) > 10)
    assert r["wakeups"] == 10
    r = wakeups.probe(1.0, 1e-3, clock=clock.now, sleep=clock.sleep, stop=lambda: True)
    assert r == {"wakeups": 0, "p99_ms": None, "p999_ms": None, "max_ms": None,
                 "late_pct": None, "stall_pct": None}


def test_sleepers_run_on_every_cpu_and_report_when_stopped():
    """Real subprocesses, one per CPU this process may use, stopped long before their
    duration: each reports its wake-ups and the scheduling policy it obtained."""
    import os
    import time

    sleepers = wakeups.start_during_run(60.0)
    time.sleep(1.0)
    t0 = time.monotonic()
    out = wakeups.collect(sleepers)
    assert time.monotonic() - t0 < 5.0  # stopped, not run to its 60 s
    assert set(out) == {f"cpu{c}" for c in sorted(os.sched_getaffinity(0))}
    for r in out.values():
        assert "error" not in r, r
        assert r["wakeups"] > 50 and r["policy"] in {"SCHED_FIFO", "SCHED_OTHER"}
        assert 0 <= r["late_pct"] <= 100 and 0 <= r["stall_pct"] <= 100
    with pytest.raises(ParameterError, match="duration_s = 0"):
        wakeups.start_during_run(0)


def test_a_sleeper_that_fails_reports_its_error():
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit('no CPU 99')"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.wait(10)
    assert wakeups.collect([(99, p)]) == {"cpu99": {"error": "no CPU 99\n"}}


def test_stall_pct_max_takes_the_worst_cpu_and_ignores_empty_probes():
    assert host.stall_pct_max(None) is None and host.stall_pct_max({}) is None
    assert host.stall_pct_max({"cpu0": {"stall_pct": 0.02}, "cpu1": {"stall_pct": 0.16},
                                  "cpu2": {"stall_pct": None}, "cpu3": {"error": "x"}}) == 0.16
