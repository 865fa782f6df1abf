"""Campaign files, keys, resumable bookkeeping, the campaign table and the datapackage."""

import gzip
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from coexist import data
from coexist.core.params import ParameterError
from coexist.data import datapackage
from coexist.testbed import campaign

from ..conftest import summary_doc

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGNS = sorted((ROOT / "data" / "campaigns").glob("*.yaml"))


def write(tmp_path, text, name="camp"):
    d = tmp_path / "campaigns"
    d.mkdir(exist_ok=True)
    p = d / f"{name}.yaml"
    p.write_text(text)
    return p


BASE = """
grid:
  capacity: [20mbit]
  rtt: [20ms]
  buffer_bdp: [1, 2]
  flows: ["cubic:1,bbr:1"]
duration: 5
warmup: 1
repeats: 2
"""


@pytest.mark.parametrize("path", CAMPAIGNS, ids=lambda p: p.stem)
def test_bundled_campaigns_load(path):
    c = campaign.load(path)
    assert c.points and len({p.key for p in c.points}) == len(c.points)


def test_keys_are_stable_and_readable(tmp_path):
    c = campaign.load(write(tmp_path, BASE))
    assert [p.key for p in c.points] == [
        "20mbit-20ms-b1-cubic1-bbr1-r0", "20mbit-20ms-b1-cubic1-bbr1-r1",
        "20mbit-20ms-b2-cubic1-bbr1-r0", "20mbit-20ms-b2-cubic1-bbr1-r1"]
    assert c.points[2].exp.buffer_bytes == 2 * 20e6 * 0.02 / 8


def test_mix_and_group_generators(tmp_path):
    c = campaign.load(write(tmp_path, BASE.replace('["cubic:1,bbr:1"]', "[{mix: 3}]")
                            .replace("repeats: 2", "repeats: 1").replace("[1, 2]", "[2]")))
    assert [sum(f.cca == "bbr" for f in p.exp.flows) for p in c.points] == [0, 1, 2, 3]
    assert all(len(p.exp.flows) == 3 for p in c.points)
    g = campaign.load(write(tmp_path, BASE.replace(
        '["cubic:1,bbr:1"]', "[{groups: {10ms: 3, 30ms: 3, 50ms: 3}}]")
        .replace("repeats: 2", "repeats: 1").replace("[1, 2]", "[2]")))
    assert len(g.points) == 4 ** 3
    assert {f.rtt_s for f in g.points[5].exp.flows} == {0.01, 0.03, 0.05}
    assert all(len(p.exp.flows) == 9 for p in g.points)


def test_grid_list_with_overrides(tmp_path):
    text = """
grid:
  - {capacity: 50mbit, rtt: 40ms, buffer_bdp: [2], flows: ["cubic:1,bbr:1"]}
  - {capacity: 50mbit, rtt: 40ms, buffer_bdp: [100], flows: ["cubic:1,bbr:1"], duration: 180}
duration: 120
warmup: 30
"""
    c = campaign.load(write(tmp_path, text))
    assert [p.exp.duration_s for p in c.points] == [120, 180]
    assert not any(p.exp.steer_acks for p in c.points)
    steered = campaign.load(write(tmp_path, text + "steer_acks: true\n"))
    assert all(p.exp.steer_acks for p in steered.points)
    with pytest.raises(ParameterError, match="'steer_acks' = 'on'"):
        campaign.load(write(tmp_path, text + "steer_acks: 'on'\n"))


def test_a_second_grid_adds_repeats_to_some_points(tmp_path):
    text = """
grid:
  - {capacity: 50mbit, rtt: 40ms, buffer_bdp: [2, 5], flows: [{mix: 2}]}
  - {capacity: 50mbit, rtt: 40ms, buffer_bdp: [5], flows: ["cubic:1,bbr:1"], repeats: 3}
duration: 120
warmup: 30
"""
    c = campaign.load(write(tmp_path, text))
    keys = [p.key for p in c.points]
    assert len(keys) == len(set(keys)) == 2 * 3 + 2  # 6 points, 2 more repeats of one
    extra = [p for p in c.points if p.repeat > 0]
    assert {p.key for p in extra} == {"50mbit-40ms-b5-cubic1-bbr1-r1",
                                      "50mbit-40ms-b5-cubic1-bbr1-r2"}
    first = next(p for p in c.points if p.key == "50mbit-40ms-b5-cubic1-bbr1-r0")
    assert all(p.exp == first.exp for p in extra)
    # the same key with other settings is a mistake, not a repeat
    clash = text.replace("repeats: 3}", "repeats: 3, duration: 60}")
    with pytest.raises(ParameterError, match="appears twice with different settings"):
        campaign.load(write(tmp_path, clash))
    with pytest.raises(ParameterError, match="grid repeats"):
        campaign.load(write(tmp_path, text.replace("repeats: 3", "repeats: 0")))


@pytest.mark.parametrize(("text", "match"), [
    ("grid: {capacity: 1mbit}", "missing"),
    (BASE + "speed: 3\n", "unknown key"),
    (BASE.replace("20mbit", "20 parsecs"), "'capacity'"),
    (BASE.replace("repeats: 2", "repeats: 0"), "repeats"),
    (BASE.replace('["cubic:1,bbr:1"]', "[{mix: 0}]"), "mix"),
    (BASE.replace("warmup: 1", "warmup: 9"), "'warmup'"),
    ("name: other\n" + BASE, "must equal the file name"),
    (BASE.replace("[1, 2]", "[2, 2]"), "appears twice"),
])
def test_bad_campaigns_name_file_and_problem(tmp_path, text, match):
    with pytest.raises(ParameterError, match=match) as err:
        campaign.load(write(tmp_path, text))
    assert "camp.yaml" in str(err.value)


def _fake_run(root: Path, key: str, run_id: str):
    """A run directory with the harness's file layout (bookkeeping test only, not data)."""
    d = root / key
    d.mkdir(parents=True)
    flows = pd.DataFrame({"flow": [0, 1], "cca": ["cubic", "bbr"], "rtt_s": [0.02, 0.02],
                          "group": [0, 0], "start_offset_s": [0.0, 0.001],
                          "goodput_bps": [9e6, 10e6], "bytes_received": [1, 1],
                          "retransmits": [3, 4], "iperf3_congestion": ["cubic", "bbr"],
                          "share": [9 / 19, 10 / 19]})
    data.write_table(flows, d / "flows.csv", "flows")
    for kind, fname in data.RUN_FILES.items():
        if kind != "flows":
            data.write_table(pd.DataFrame(columns=[f.name for f in data.SCHEMAS[kind]]),
                             d / fname, kind)
    (d / "summary.json").write_text(json.dumps(summary_doc(
        run_id=run_id, utilisation=0.99, jain_index=0.99, bbr_share=10 / 19,
        mean_queue_delay_s=0.01, bottleneck_drops=5)))


def test_status_table_and_datapackage(tmp_path):
    spec_file = write(tmp_path, BASE)
    c = campaign.load(spec_file)
    st = campaign.status(c, tmp_path)
    assert st.planned == 4 and st.done == []
    assert [k[-2:] for k in st.left] == ["r0", "r0", "r1", "r1"]  # whole grid first
    assert st.invalid_rate is None and st.est_with_reruns_s is None
    assert "re-runs" not in campaign.format_status(c, st)
    root = c.run_dir(tmp_path)
    _fake_run(root, c.points[0].key, "aaaaaa")
    (root / "_invalid" / f"{c.points[1].key}.bbbbbb").mkdir(parents=True)
    for i in range(3):
        (root / "_invalid" / f"{c.points[2].key}.c{i}").mkdir()
    (root / f".{c.points[3].key}.partial-123").mkdir()  # half-written: not done
    st = campaign.status(c, tmp_path)
    assert st.done == [c.points[0].key]
    assert st.attempts == {c.points[1].key: 1, c.points[2].key: 3}
    assert st.left == [c.points[1].key, c.points[3].key]
    assert st.failed == [c.points[2].key]
    assert st.est_left_s == pytest.approx(2 * (5 + campaign.OVERHEAD_S))
    # 4 of the 5 stored runs were invalid: each valid run has taken 5 runs so far
    assert st.invalid_rate == pytest.approx(0.8)
    assert st.est_with_reruns_s == pytest.approx(5 * st.est_left_s)
    text = campaign.format_status(c, st)
    assert "1/4 done" in text
    assert (f"~{5 * st.est_left_s / 60:.0f} min with re-runs at this campaign's invalid "
            "rate so far, 80 %") in text

    campaign.refresh(c, tmp_path)
    t = data.load_table(tmp_path / "camp.csv", "campaign")
    assert len(t) == 2 and set(t["cca"]) == {"cubic", "bbr"}
    assert t["key"].unique().tolist() == [c.points[0].key]
    assert datapackage.verify(tmp_path) == []
    pkg = json.loads((tmp_path / "datapackage.json").read_text())
    prov = pkg["resources"][0]["provenance"]
    assert prov["runs_valid"] == 1 and prov["runs_invalid"] == 4 and prov["commits"] == ["abc"]

    flows = root / c.points[0].key / "flows.csv"
    flows.write_text(flows.read_text().replace("9000000", "9000001"))
    assert datapackage.verify(tmp_path) == [
        f"runs/camp/{c.points[0].key}/flows.csv: sha256 differs "
                                     "from datapackage.json"]
    shutil.copytree(root / c.points[0].key, root / "stray")
    assert any("stray" in p and "not described" in p for p in datapackage.verify(tmp_path))
    with pytest.raises(data.DataError, match="not in the campaign grid"):
        campaign.status(c, tmp_path)


def test_partials_are_removed(tmp_path):
    c = campaign.load(write(tmp_path, BASE))
    root = c.run_dir(tmp_path)
    (root / ".k.partial-1").mkdir(parents=True)
    (root / "_invalid" / ".k.x.partial-2").mkdir(parents=True)
    assert len(campaign._remove_partials(root)) == 2
    assert not list(root.rglob(".*partial*"))


def test_loader_reports_file_and_line(tmp_path):
    good = "flow,cca,rtt_s,group,start_offset_s,goodput_bps,bytes_received,retransmits," \
           "iperf3_congestion,share\n0,cubic,0.02,0,0,9e6,1,3,cubic,0.5\n"
    p = tmp_path / "flows.csv"
    p.write_text(good)
    assert data.load_table(p, "flows")["goodput_bps"].tolist() == [9e6]
    for bad, match in [
        (good + "1,bbr,0.02,0,0,9e6,1,3,bbr,0.5,\n", r"flows.csv:3: 11 fields"),
        (good + "1,bbr,0.02,0,0,fast,1,3,bbr,0.5\n", r"flows.csv:3: column 'goodput_bps'"),
        (good + "1,bbr,0.02,0,0,-1,1,3,bbr,0.5\n", r"flows.csv:3: .* below its minimum"),
        (good + "1.5,bbr,0.02,0,0,1,1,3,bbr,0.5\n", r"flows.csv:3: column 'flow'"),
        (good + "1,bbr,0.02,0,0,nan,1,3,bbr,0.5\n", r"flows.csv:3: .*not a finite"),
        (good.replace("share", "portion"), r"flows.csv:1: header"),
    ]:
        p.write_text(bad)
        with pytest.raises(data.DataError, match=match):
            data.load_table(p, "flows")


def test_gzip_tables_are_byte_reproducible(tmp_path):
    df = pd.DataFrame({c.name: [1] for c in data.SCHEMAS["queue"]}).assign(kind="bfifo")
    data.write_table(df, tmp_path / "a.csv.gz", "queue")
    data.write_table(df, tmp_path / "b.csv.gz", "queue")
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.csv.gz").read_bytes()).startswith(b"t_s,kind")


def test_load_axis_keys_and_validation(tmp_path):
    c = campaign.load(write(tmp_path, BASE.replace('  flows: ["cubic:1,bbr:1"]',
                                                   '  flows: ["cubic:1,bbr:1"]\n'
                                                   '  load: [none, cpu]')
                            .replace("[1, 2]", "[2]").replace("repeats: 2", "repeats: 1")))
    assert [(p.key, p.load) for p in c.points] == [
        ("20mbit-20ms-b2-cubic1-bbr1-r0", "none"),
        ("20mbit-20ms-b2-cubic1-bbr1-loadcpu-r0", "cpu")]
    with pytest.raises(ParameterError, match=r"load \['disco'\]; valid: none, cpu, book"):
        campaign.load(write(tmp_path, BASE.replace('  flows: ["cubic:1,bbr:1"]',
                                                   '  flows: ["cubic:1,bbr:1"]\n'
                                                   '  load: [disco]')))


def test_load_commands():
    from coexist.testbed import load, spec

    e = spec.experiment(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows="cubic:1,bbr:1",
                        duration=60)
    assert load.commands("none", e, Path("/tmp/x")) == []
    cpu = load.commands("cpu", e, Path("/tmp/x"))
    assert len(cpu) == (os.cpu_count() or 1) and all("while True" in c[-1] for c in cpu)
    (twin,) = load.commands("experiment", e, Path("/tmp/x"))
    assert twin[twin.index("--flows") + 1] == "cubic:1,bbr:1"
    assert float(twin[twin.index("--duration") + 1]) > e.duration_s
    (book,) = load.commands("book", e, Path("/tmp/x"))
    assert "jupyter-book build --path-output /tmp/x" in book[-1]
    with pytest.raises(ValueError, match="valid: none, cpu"):
        load.commands("disco", e, Path("/tmp/x"))


def test_cpu_load_starts_and_stops():
    import time

    from coexist.testbed import load, spec

    e = spec.experiment(capacity="50mbit", rtt="40ms", buffer_bdp=2, flows="bbr:1")
    with load.background("cpu", e) as procs:
        time.sleep(0.3)
        assert procs and all(p.poll() is None for p in procs)
    assert all(p.poll() is not None for p in procs)


def test_long_mixes_get_short_unique_keys(tmp_path):
    mixes = [",".join(f"{cca}:1@{30 + i}ms" for i in range(10)) for cca in ("cubic", "reno")]
    text = BASE.replace('["cubic:1,bbr:1"]', "[" + ", ".join(f'"{m}"' for m in mixes) + "]")
    c = campaign.load(write(tmp_path, text.replace("[1, 2]", "[2]")))
    keys = [p.key for p in c.points]
    assert len(set(keys)) == len(keys) == 4
    assert all(len(k) < 80 for k in keys)
    assert keys[0].startswith("20mbit-20ms-b2-cubic10-rtt30to39ms-")


def test_run_retries_invalid_runs_until_valid_or_given_up(tmp_path, monkeypatch):
    """One ``campaign run`` finishes the grid: an invalid run is re-run in the same call until
    it is valid or has used ``max_attempts``, and ``limit`` counts executions."""
    from coexist.testbed import topology

    c = campaign.load(write(tmp_path, BASE + "max_attempts: 3\n"))
    root = c.run_dir(tmp_path)
    outcomes = {c.points[0].key: [False, True], c.points[1].key: [False, False, False]}
    calls: list[str] = []

    def fake_execute(exp, min_utilisation, load_kind="none"):
        return exp

    hosts: list[dict | None] = []

    def fake_store(camp, point, result, data_dir, host=None):
        calls.append(point.key)
        hosts.append(host)
        valid = outcomes[point.key].pop(0) if outcomes.get(point.key) else True
        if valid:
            _fake_run(root, point.key, f"r{len(calls)}")
        else:
            (root / "_invalid" / f"{point.key}.r{len(calls)}").mkdir(parents=True)
        return valid

    monkeypatch.setattr(campaign, "_execute", fake_execute)
    monkeypatch.setattr(campaign, "_store", fake_store)
    monkeypatch.setattr(topology, "clean", lambda: [])
    st = campaign.run(c, tmp_path, progress=False, limit=3, steal_limit_pct=None)
    assert len(calls) == 3 and len(st.done) == 1  # points 1..3 once, none of the retries
    assert hosts == [None] * 3
    st = campaign.run(c, tmp_path, progress=False, steal_limit_pct=None)
    assert st.left == [] and st.failed == [c.points[1].key]
    assert sorted(st.done) == sorted(p.key for p in c.points if p.key != c.points[1].key)
    assert calls.count(c.points[0].key) == 2 and calls.count(c.points[1].key) == 3
    assert len(calls) == 2 + 3 + 1 + 1


def test_a_harness_error_skips_one_run_and_several_in_a_row_stop_the_campaign(
        tmp_path, monkeypatch, capsys):
    """A run the harness cannot finish (e.g. a delay line that would not exit) is not
    stored and its point stays left; the campaign goes on. Three in a row stop it."""
    from coexist.testbed import topology
    from coexist.testbed.topology import TestbedError

    c = campaign.load(write(tmp_path, BASE))
    root = c.run_dir(tmp_path)
    errors = [True, False, False, False, False]  # the first execution fails, then all work
    calls: list[str] = []

    def fake_execute(exp, min_utilisation, load_kind="none"):
        if errors.pop(0):
            raise TestbedError("the delay line did not exit")
        return exp

    def fake_store(camp, point, result, data_dir, host=None):
        calls.append(point.key)
        _fake_run(root, point.key, f"r{len(calls)}")
        return True

    monkeypatch.setattr(campaign, "_execute", fake_execute)
    monkeypatch.setattr(campaign, "_store", fake_store)
    monkeypatch.setattr(topology, "clean", lambda: [])
    st = campaign.run(c, tmp_path, progress=False)
    assert st.left == [] and len(st.done) == 4 and len(calls) == 4
    assert f"{c.points[0].key}: run not stored, harness error (1 in a row)" in \
        capsys.readouterr().err

    (tmp_path / "b").mkdir()
    c2 = campaign.load(write(tmp_path / "b", BASE))
    errors[:] = [True] * 10
    with pytest.raises(TestbedError, match="did not exit"):
        campaign.run(c2, tmp_path / "b", progress=False)
    assert errors == [True] * (10 - campaign.MAX_HARNESS_ERRORS)
    assert campaign.status(c2, tmp_path / "b").done == []


def test_run_waits_for_a_quiet_host_and_records_it(tmp_path, monkeypatch):
    """Each local run starts after a 5-s window with steal at most the limit (or after the
    longest wait), and its summary records the steal measured and the time waited."""
    from coexist.testbed import steal, topology

    c = campaign.load(write(tmp_path, BASE))
    windows = iter([7.5, 3.0, 0.4,  # point 1: two busy windows, then quiet
                    0.0,             # point 2: quiet at once
                    9.0, 9.0, 9.0])  # point 3: never quiet; runs after the longest wait
    measured: list[float] = []

    def fake_share(window_s=5.0, **_):
        measured.append(window_s)
        return next(windows, 0.0)

    hosts = []
    monkeypatch.setattr(steal, "share", fake_share)
    monkeypatch.setattr(campaign, "_execute", lambda exp, mu, load_kind="none": exp)
    monkeypatch.setattr(campaign, "_store",
                        lambda camp, point, result, data_dir, host=None: hosts.append(host)
                        or _fake_run(c.run_dir(tmp_path), point.key, "x") or True)
    monkeypatch.setattr(topology, "clean", lambda: [])
    campaign.run(c, tmp_path, progress=False, limit=3, steal_limit_pct=1.0,
                 steal_max_wait_s=10.0)
    assert hosts[:3] == [{"steal_before_pct": 0.4, "waited_for_quiet_s": 10.0},
                         {"steal_before_pct": 0.0, "waited_for_quiet_s": 0.0},
                         {"steal_before_pct": 9.0, "waited_for_quiet_s": 10.0}]
    assert measured == [5.0] * 7
    with pytest.raises(ParameterError, match=r"steal limit = 150"):
        campaign.run(c, tmp_path, progress=False, steal_limit_pct=150)


def _invalid_run(root: Path, name: str, *, steal_s: float | None, failed: list[str]) -> None:
    """An invalid attempt's summary with the fields the retry rule reads (not data)."""
    d = root / "_invalid" / name
    d.mkdir(parents=True)
    names = ["probe_rtt", "delay_lateness", "utilisation", "drops_only_at_bottleneck",
             "cca_confirmed", "flows_complete"]
    cpu = {} if steal_s is None else {"steal_s": steal_s}
    (d / "summary.json").write_text(json.dumps(summary_doc(
        run_id=name, valid=False, invalid_reasons=failed,
        gates=[{"name": n, "passed": n not in failed} for n in names],
        provenance={"cores": 2, "cpu_seconds_during_run": cpu, "kernel": "6.x",
                    "time_utc": "2026-11-21T00:00:00+00:00"})))


def test_disturbed_is_steal_above_one_percent_failing_timing_gates_only():
    def summary(steal_s, failed, valid=False):
        return {"valid": valid, "wall_s": 10.0,
                "gates": [{"name": n, "passed": n not in failed}
                          for n in ("probe_rtt", "delay_lateness", "cca_confirmed")],
                "provenance": {"cores": 2, "cpu_seconds_during_run": {"steal_s": steal_s}}}

    from coexist.data import gates

    assert gates.disturbed(summary(0.21, ["delay_lateness"]))          # 1.05 % of 20 CPU-s
    assert not gates.disturbed(summary(0.2, ["delay_lateness"]))       # exactly 1 %: counts
    assert not gates.disturbed(summary(5.0, ["delay_lateness", "cca_confirmed"]))
    assert not gates.disturbed(summary(5.0, [], valid=True))
    assert not gates.disturbed({**summary(5.0, ["probe_rtt"]), "provenance": {"cores": 2}})
    # a burst: 0.1 % over the run, but one 10-ms tick of steal within a second of traffic
    burst = summary(0.02, ["delay_lateness"])
    assert not gates.disturbed(burst)
    burst["provenance"]["steal_peak"] = {"steal_s": 0.01, "span_s": 1.0, "pct": 0.5}
    assert gates.disturbed(burst)
    assert not gates.disturbed({**burst, "valid": True})
    burst["gates"][2]["passed"] = False                              # cca_confirmed failed
    assert not gates.disturbed(burst)
    burst["gates"][2]["passed"] = True
    burst["provenance"]["steal_peak"]["steal_s"] = 0.0               # no steal in the traffic
    assert not gates.disturbed(burst)
    burst["provenance"]["steal_peak"] = None                         # not recorded
    assert not gates.disturbed(burst)



def test_a_stall_the_sleepers_saw_disturbs_a_run_without_steal():
    """Some hosts stop a virtual CPU without the guest counting steal: a sleeper on some CPU
    more than 1 ms late for at least 0.1 % of the run (the share of late packets the
    lateness gate allows the delay line) explains a timing failure too."""
    from coexist.data import gates

    base = {"valid": False, "wall_s": 10.0,
            "gates": [{"name": n, "passed": n != "delay_lateness"}
                      for n in ("probe_rtt", "delay_lateness", "cca_confirmed")],
            "provenance": {"cores": 2, "cpu_seconds_during_run": {"steal_s": 0.0}}}
    assert not gates.disturbed(base)  # no steal, no sleepers (runs stored before them)
    assert not gates.held_up(base)
    quiet = {"cpu0": {"stall_pct": 0.02}, "cpu1": {"stall_pct": 0.099}}
    assert not gates.disturbed({**base, "stall_probe": quiet})
    assert not gates.held_up({**base, "stall_probe": quiet})
    stalled = {"cpu0": {"stall_pct": 0.02}, "cpu1": {"stall_pct": 0.1}}
    assert gates.stalled({**base, "stall_probe": stalled})
    assert gates.held_up({**base, "stall_probe": stalled})
    stolen = {**base, "provenance": {"cores": 2, "cpu_seconds_during_run": {"steal_s": 1.0}}}
    assert gates.under_steal(stolen) and gates.held_up(stolen)
    assert gates.disturbed({**base, "stall_probe": stalled})
    assert not gates.disturbed({**base, "stall_probe": stalled, "valid": True})
    other = {**base, "stall_probe": stalled,
             "gates": [{"name": n, "passed": n == "probe_rtt"}
                       for n in ("probe_rtt", "delay_lateness", "cca_confirmed")]}
    assert not gates.disturbed(other)  # cca_confirmed failing is no stall's doing


def test_sleepers_late_at_their_p999_disturb_a_run_whose_stalls_were_short():
    """Several stalls of a few milliseconds: the sleepers' summed late time stays under
    0.1 % of the run, yet on every CPU their own 99.9th-percentile wake-up came 1 ms late,
    the limit the delay line is held to (seen on this machine: 0.084 % stalled, p99.9
    1.0-1.3 ms on both CPUs). One CPU's sleeper alone does not count: the delay line,
    above it in priority, can hold up the sleeper of its own CPU."""
    from coexist.data import gates

    base = {"valid": False, "wall_s": 10.0,
            "gates": [{"name": n, "passed": n != "delay_lateness"}
                      for n in ("probe_rtt", "delay_lateness", "cca_confirmed")],
            "provenance": {"cores": 2, "cpu_seconds_during_run": {"steal_s": 0.0}}}
    both = {"cpu0": {"stall_pct": 0.084, "p999_ms": 1.3, "max_ms": 8.9},
            "cpu1": {"stall_pct": 0.01, "p999_ms": 1.0, "max_ms": 5.2}}
    assert gates.stalled({**base, "stall_probe": both})
    assert gates.disturbed({**base, "stall_probe": both})
    one = {"cpu0": {"stall_pct": 0.084, "p999_ms": 1.3, "max_ms": 8.9},
           "cpu1": {"stall_pct": 0.01, "p999_ms": 0.2, "max_ms": 0.9}}
    assert not gates.stalled({**base, "stall_probe": one})
    below = {"cpu0": {"stall_pct": 0.084, "p999_ms": 0.999, "max_ms": 8.9},
             "cpu1": {"stall_pct": 0.01, "p999_ms": 1.2}}
    assert not gates.stalled({**base, "stall_probe": below})  # a maximum alone is not it
    broken = {"cpu0": {"stall_pct": 0.01, "p999_ms": 1.3}, "cpu1": {"error": "x"}}
    assert not gates.stalled({**base, "stall_probe": broken})  # one CPU unmeasured
    assert not gates.held_up({**base, "stall_probe": {"cpu0": {"error": "x"}}})


def test_attempts_under_steal_do_not_count_until_the_hard_cap(tmp_path):
    c = campaign.load(write(tmp_path, BASE + "max_attempts: 2\n"))
    root = c.run_dir(tmp_path)
    a, b, d = c.points[0].key, c.points[1].key, c.points[2].key
    for i in range(3):  # a: 3 disturbed + 1 undisturbed -> still left
        _invalid_run(root, f"{a}.s{i}", steal_s=1.0, failed=["delay_lateness"])
    _invalid_run(root, f"{a}.u0", steal_s=0.0, failed=["delay_lateness"])
    # b: steal, but a non-timing gate failed -> counts; with one more it is spent
    _invalid_run(root, f"{b}.x0", steal_s=1.0, failed=["drops_only_at_bottleneck"])
    _invalid_run(root, f"{b}.x1", steal_s=None, failed=["probe_rtt"])
    for i in range(6):  # d: 6 disturbed = DISTURBED_FACTOR x max_attempts -> given up
        _invalid_run(root, f"{d}.s{i}", steal_s=2.0, failed=["probe_rtt", "utilisation"])
    st = campaign.status(c, tmp_path)
    assert st.attempts == {a: 4, b: 2, d: 6} and st.disturbed == {a: 3, d: 6}
    assert st.left == [a, c.points[3].key] and st.failed == [b, d]
    text = campaign.format_status(c, st)
    assert ("12 invalid run(s) so far (9 under hypervisor steal or a machine stall, not "
            "counted)") in text
    assert "2 given up after 2 invalid attempts (or 6 runs' worth of time in all)" in text
    assert st.invalid_rate == 1.0 and st.est_with_reruns_s is None  # no valid run yet
    assert "re-runs" not in text


def test_runs_stopped_early_cost_part_of_a_run_in_the_estimate(tmp_path, monkeypatch):
    """Three invalid runs, one of the 5-s runs stopped at 0.5 s, next to one valid run: the
    stopped run took (0.5 + OVERHEAD_S) / (5 + OVERHEAD_S) = 1/2 of a full run's wall time,
    so each valid run has cost itself plus 3 invalid runs of (1 + 1 + 1/2) / 3 on average."""
    monkeypatch.setattr(campaign, "OVERHEAD_S", 4.0)  # the arithmetic below
    c = campaign.load(write(tmp_path, BASE))
    root = c.run_dir(tmp_path)
    _fake_run(root, c.points[0].key, "aaaaaa")
    for i in range(2):
        _invalid_run(root, f"{c.points[1].key}.f{i}", steal_s=0.0, failed=["delay_lateness"])
    _invalid_run(root, f"{c.points[1].key}.s0", steal_s=0.0,
                 failed=["delay_lateness", "flows_complete"])
    stopped = root / "_invalid" / f"{c.points[1].key}.s0" / "summary.json"
    doc = json.loads(stopped.read_text())
    assert c.points[1].exp.duration_s == 5
    doc.update(stopped_early={"at_s": 0.5, "reason": "x"},
               params={**doc["params"], "duration_s": 5.0})
    stopped.write_text(json.dumps(doc))
    st = campaign.status(c, tmp_path)
    assert st.invalid_length == pytest.approx(2.5 / 3)
    assert st.est_with_reruns_s == pytest.approx(st.est_left_s * (1 + 2.5))
    assert "invalid runs taking 83 % of a full run's time" in campaign.format_status(c, st)


def test_runs_stopped_early_count_for_their_time_against_the_hard_cap(tmp_path, monkeypatch):
    """Under steal, runs stopped early follow each other quickly; the hard cap counts the
    wall time they took, set-up included, so a burst of short runs does not give a point up
    before full runs would have, and even runs stopped at once are bounded in number."""
    monkeypatch.setattr(campaign, "OVERHEAD_S", 4.0)  # the arithmetic below
    c = campaign.load(write(tmp_path, BASE + "max_attempts: 2\n"))
    root = c.run_dir(tmp_path)
    a, b = c.points[0].key, c.points[1].key
    assert c.points[0].exp.duration_s == 5

    def stopped_run(key, name, at_s):
        _invalid_run(root, f"{key}.{name}", steal_s=1.0,
                     failed=["delay_lateness", "flows_complete"])
        f = root / "_invalid" / f"{key}.{name}" / "summary.json"
        doc = json.loads(f.read_text())
        doc.update(stopped_early={"at_s": at_s, "reason": "x"},
                   params={**doc["params"], "duration_s": 5.0})
        f.write_text(json.dumps(doc))

    for i in range(11):  # a: 11 disturbed runs stopped at 0.5 s: (0.5 + 4) / 9 each
        stopped_run(a, f"s{i}", 0.5)
    for i in range(14):  # b: 14 stopped at once: 4 / 9 each, 6.2 runs' worth -> given up
        stopped_run(b, f"s{i}", 0.0)
    st = campaign.status(c, tmp_path)
    assert st.disturbed == {a: 11, b: 14}
    assert st.used[a] == pytest.approx(5.5) and st.used[b] == pytest.approx(14 * 4 / 9)
    assert a in st.left and st.failed == [b]


def test_again_gives_points_capped_under_steal_a_fresh_budget_and_no_other(tmp_path):
    """The time cap counts every stored attempt, from every earlier call. With a fresh
    budget (``budget_from``, what ``run(again=True)`` passes), a point given up only at the
    time cap is left again; a point with ``max_attempts`` undisturbed invalid runs is not."""
    c = campaign.load(write(tmp_path, BASE + "max_attempts: 2\n"))
    root = c.run_dir(tmp_path)
    a, b, d = c.points[0].key, c.points[1].key, c.points[2].key
    for i in range(6):  # a: 6 disturbed full runs = DISTURBED_FACTOR x max_attempts
        _invalid_run(root, f"{a}.s{i}", steal_s=1.0, failed=["delay_lateness"])
    for i in range(2):  # b: 2 undisturbed = max_attempts
        _invalid_run(root, f"{b}.u{i}", steal_s=0.0, failed=["delay_lateness"])
    _invalid_run(root, f"{d}.s0", steal_s=1.0, failed=["delay_lateness"])
    st = campaign.status(c, tmp_path)
    assert st.failed == [a, b] and st.capped == [a]
    assert st.used == {a: 6.0, b: 2.0, d: 1.0}
    assert ("2 given up after 2 invalid attempts (or 6 runs' worth of time in all): "
            f"{a}, {b}; 1 of them only at the time cap under steal ('campaign run --again' "
            "gives them a fresh budget)") in campaign.format_status(c, st)
    fresh = campaign.status(c, tmp_path, budget_from=st.used)
    assert fresh.failed == [b] and fresh.capped == []
    assert fresh.left == [a, d, c.points[3].key]
    assert fresh.used == st.used and fresh.attempts == st.attempts  # only the cap moves
    for i in range(5):  # five more under steal: within the fresh budget of 6 for a ...
        _invalid_run(root, f"{a}.t{i}", steal_s=1.0, failed=["delay_lateness"])
    assert a in campaign.status(c, tmp_path, budget_from=st.used).left
    _invalid_run(root, f"{a}.t5", steal_s=1.0, failed=["delay_lateness"])  # ... the sixth ends it
    assert campaign.status(c, tmp_path, budget_from=st.used).capped == [a]
    _invalid_run(root, f"{d}.u0", steal_s=0.0, failed=["delay_lateness"])
    _invalid_run(root, f"{d}.u1", steal_s=0.0, failed=["delay_lateness"])
    assert campaign.status(c, tmp_path, budget_from={d: 3.0}).failed == [a, b, d]


def test_run_again_reruns_only_points_capped_under_steal(tmp_path, monkeypatch):
    """Without ``again`` a point at the time cap is not run; with it, the point gets a fresh
    DISTURBED_FACTOR x max_attempts runs' worth in that call, counted from the call's start."""
    from coexist.testbed import topology

    c = campaign.load(write(tmp_path, BASE + "max_attempts: 1\n"))
    root = c.run_dir(tmp_path)
    a, b = c.points[0].key, c.points[1].key
    for i in range(3):  # a: at the cap of 3 x 1 runs' worth, all under steal
        _invalid_run(root, f"{a}.s{i}", steal_s=1.0, failed=["delay_lateness"])
    _invalid_run(root, f"{b}.u0", steal_s=0.0, failed=["delay_lateness"])  # b: given up
    for p in c.points[2:]:
        _fake_run(root, p.key, f"v{p.key[-1]}")
    calls: list[str] = []

    def fake_store(camp, point, result, data_dir, host=None):
        calls.append(point.key)
        _invalid_run(root, f"{point.key}.n{len(calls)}", steal_s=1.0,
                     failed=["delay_lateness"])
        return False

    monkeypatch.setattr(campaign, "_execute", lambda exp, mu, load_kind="none": exp)
    monkeypatch.setattr(campaign, "_store", fake_store)
    monkeypatch.setattr(topology, "clean", lambda: [])
    st = campaign.run(c, tmp_path, progress=False)
    assert calls == [] and st.failed == [a, b] and st.capped == [a]
    st = campaign.run(c, tmp_path, progress=False, again=True)
    assert calls == [a] * 3  # a fresh 3 runs' worth, then the cap again; b never
    assert st.failed == [a, b] and st.capped == [a] and st.attempts[a] == 6


def test_cli_campaign_run_again_reaches_the_run(tmp_path, monkeypatch, capsys):
    from coexist import cli

    path = write(tmp_path, BASE)
    seen: list[bool] = []

    def fake_run(c, data_dir, **kw):
        seen.append(kw["again"])
        return campaign.status(c, data_dir)

    monkeypatch.setattr(campaign, "run", fake_run)
    monkeypatch.setattr(cli.testbed, "stoppable", lambda: None)
    for extra in ([], ["--again"]):
        assert cli.main(["campaign", "run", str(path), "--data", str(tmp_path), "--quiet",
                         *extra]) == 0
    assert seen == [False, True]
    assert "0/4 done, 4 left" in capsys.readouterr().out


def test_cli_status_of_several_campaigns_prints_each_and_a_total(tmp_path, capsys):
    from coexist import cli

    one = write(tmp_path, BASE, name="one")  # 4 points of 5 s
    two = write(tmp_path, BASE.replace("[1, 2]", "[1, 2, 3]"), name="two")  # 6 points
    c1 = campaign.load(one)
    _fake_run(c1.run_dir(tmp_path), c1.points[0].key, "aaaaaa")
    assert cli.main(["campaign", "status", str(one), str(two), "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("one: 1/4 done, 3 left") and out[1].startswith("two: 0/6 done")
    left_s = 9 * (5 + campaign.OVERHEAD_S)
    assert out[2] == (f"all 2 campaigns: 1/10 runs done, ~{left_s / 60:.0f} min of "
                      "experiment time left (without re-runs)")
    assert cli.main(["campaign", "status", str(one), "--data", str(tmp_path), "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and not out[-1].startswith("all")  # 1 line + 3 left, no total
    assert out[1:] == [f"  left: {k}" for k in campaign.status(c1, tmp_path).left]
    assert sorted(out[1:]) == sorted(f"  left: {p.key}" for p in c1.points[1:])
    bad = write(tmp_path, BASE + "repeats: 0\n", name="bad")
    assert cli.main(["campaign", "status", str(one), str(bad), "--data", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "one:" not in captured.out and "bad.yaml" in captured.err


def test_an_invalid_run_stopped_early_is_stored_as_its_summary_only(tmp_path):
    """A run cut short on timing gates keeps its record (gates, steal, provenance) and no
    time series; an invalid run that went to its end, or one cut short that also failed
    another gate, keeps its tables, like a valid one."""
    from coexist.testbed import experiment

    c = campaign.load(write(tmp_path, BASE))
    stored = sorted((data.DATA / "runs" / "two_flow").glob("*/summary.json"))[0]
    tables = [data.load_table(stored.parent / f, t) for t, f in data.RUN_FILES.items()]
    names = {}
    cases = {"full": (None, {"delay_lateness"}),
             "stopped": ({"at_s": 3.0, "reason": "doomed"}, {"delay_lateness", "flows_complete"}),
             "stopped, other gate": ({"at_s": 3.0, "reason": "doomed"},
                                     {"delay_lateness", "cca_confirmed"})}
    for name, (stopped, failed) in cases.items():
        summary = json.loads(stored.read_text())
        for g in summary["gates"]:
            g["passed"] = g["name"] not in failed
        summary.update(valid=False, stopped_early=stopped, invalid_reasons=["x"],
                       run_id=name.replace(", ", "-").replace(" ", "-"))
        result = experiment.RunResult(summary, *tables)
        assert campaign._store(c, c.points[0], result, tmp_path) is False
        d = c.run_dir(tmp_path) / "_invalid" / f"{c.points[0].key}.{summary['run_id']}"
        names[name] = sorted(p.name for p in d.iterdir())
    every = sorted(["summary.json", *data.RUN_FILES.values()])
    assert names == {"full": every, "stopped": ["summary.json"], "stopped, other gate": every}
    st = campaign.status(c, tmp_path)
    assert st.attempts[c.points[0].key] == 3
    assert len(data.run_summaries(tmp_path)) == 3


def test_points_of_the_lines_nearest_completion_come_first(tmp_path):
    """Within a repeat, a line (one setting, every CUBIC/BBR split) missing one run is
    taken before lines missing more, and those before lines not begun; ties keep grid
    order, and no second repeat comes before a first one."""
    c = campaign.load(write(tmp_path, BASE.replace('["cubic:1,bbr:1"]', "[{mix: 2}]")
                            .replace("[1, 2]", "[1, 2, 3]")))
    keys = [p.key for p in c.points]
    assert len(keys) == 18 and len({campaign.line(p) for p in c.points}) == 6
    st = campaign.status(c, tmp_path)
    assert st.left == [k for k in keys if k.endswith("r0")] + [k for k in keys
                                                             if k.endswith("r1")]
    root = c.run_dir(tmp_path)
    # 2 BDP, first repeat: two of three splits done; 3 BDP: one done; 1 BDP: none
    for key in ("20mbit-20ms-b2-cubic2-bbr0-r0", "20mbit-20ms-b2-cubic0-bbr2-r0",
                "20mbit-20ms-b3-cubic1-bbr1-r0"):
        _fake_run(root, key, key[-9:])
    (root / "_invalid" / "20mbit-20ms-b2-cubic1-bbr1-r0.aaaaaa").mkdir(parents=True)
    st = campaign.status(c, tmp_path)
    assert st.left[:6] == ["20mbit-20ms-b2-cubic1-bbr1-r0",
                           "20mbit-20ms-b3-cubic2-bbr0-r0", "20mbit-20ms-b3-cubic0-bbr2-r0",
                           "20mbit-20ms-b1-cubic2-bbr0-r0", "20mbit-20ms-b1-cubic1-bbr1-r0",
                           "20mbit-20ms-b1-cubic0-bbr2-r0"]
    assert all(k.endswith("r1") for k in st.left[6:]) and len(st.left) == 15


@pytest.mark.parametrize(("text", "match"), [
    (BASE + "duration: 6\n", r"key 'duration' given twice \(line 7 and line 10\)$"),
    (BASE.replace("repeats: 2", "repeats: true"), r"repeats = True; valid: an integer"),
    (BASE.replace('flows: ["cubic:1,bbr:1"]', "flows: []"), r"grid axis \['flows'\] is empty"),
    (BASE + "figures: M-F1\n", r"figures = 'M-F1'; valid: a list of figure ids"),
])
def test_campaign_files_are_read_strictly(tmp_path, text, match):
    """What YAML would accept silently (a key given twice, a boolean for a count, an empty
    axis, a string for a list) is refused with the file and the reason."""
    with pytest.raises(ParameterError, match=match):
        campaign.load(write(tmp_path, text))


def test_named_points_run_alone_in_the_order_given(tmp_path, monkeypatch):
    """``points`` runs only the named points, each once, in the order first given, skipping
    those already done; an invalid one is re-run like any other, and ``limit`` counts runs;
    a key not in the grid is refused before the testbed is touched."""
    from coexist.testbed import topology

    c = campaign.load(write(tmp_path, BASE + "max_attempts: 3\n"))
    root = c.run_dir(tmp_path)
    keys = [p.key for p in c.points]
    _fake_run(root, keys[3], "v3")
    calls: list[str] = []
    cleaned: list[bool] = []
    invalid_left = {keys[2]: 2}

    def fake_store(camp, point, result, data_dir, host=None):
        calls.append(point.key)
        if invalid_left.get(point.key):
            invalid_left[point.key] -= 1
            _invalid_run(root, f"{point.key}.n{len(calls)}", steal_s=0.0,
                         failed=["delay_lateness"])
            return False
        _fake_run(root, point.key, f"r{len(calls)}")
        return True

    monkeypatch.setattr(campaign, "_execute", lambda exp, mu, load_kind="none": exp)
    monkeypatch.setattr(campaign, "_store", fake_store)
    monkeypatch.setattr(topology, "clean", lambda: cleaned.append(True) or [])
    with pytest.raises(ParameterError, match=r"point = 'nope' is not a run of campaign"):
        campaign.run(c, tmp_path, progress=False, points=[keys[2], "nope"])
    with pytest.raises(ParameterError, match=r"a list of run keys, not one string"):
        campaign.run(c, tmp_path, progress=False, points=keys[2])
    assert calls == [] and cleaned == []
    st = campaign.run(c, tmp_path, progress=False, limit=1, points=[keys[2], keys[0]])
    assert calls == [keys[2]]  # invalid; the limit is reached
    st = campaign.run(c, tmp_path, progress=False,
                      points=[keys[2], keys[2], keys[3], keys[0]])
    # each named point once per pass, the stored one skipped; the invalid one re-run
    assert calls == [keys[2], keys[2], keys[0], keys[2]]
    assert st.left == [keys[1]]


def test_points_not_run_say_why(tmp_path):
    c = campaign.load(write(tmp_path, BASE + "max_attempts: 1\n"))
    root = c.run_dir(tmp_path)
    keys = [p.key for p in c.points]
    _fake_run(root, keys[0], "v0")
    _invalid_run(root, f"{keys[1]}.u0", steal_s=0.0, failed=["delay_lateness"])
    for i in range(3):  # at the time cap, all under steal
        _invalid_run(root, f"{keys[2]}.s{i}", steal_s=1.0, failed=["delay_lateness"])
    st = campaign.status(c, tmp_path)
    got = dict(campaign.points_not_run(c, keys, st))
    assert got == {keys[0]: "already stored",
                   keys[1]: "given up after 1 undisturbed invalid runs",
                   keys[2]: "given up at the time cap ('campaign run --again' gives it a "
                            "fresh budget)"}
    assert keys[2] not in dict(campaign.points_not_run(c, keys, st, again=True))


def test_cli_campaign_run_passes_points_and_refuses_unknown_ones(tmp_path, monkeypatch,
                                                                  capsys):
    """``--point`` reaches the run; a named point that will not run is said in one line,
    and an unknown key is refused in one line before anything runs."""
    from coexist import cli

    path = write(tmp_path, BASE)
    c = campaign.load(path)
    key, stored = c.points[1].key, c.points[0].key
    _fake_run(c.run_dir(tmp_path), stored, "v0")
    seen: list = []

    def fake_run(c, data_dir, **kw):
        seen.append(kw["points"])
        return campaign.status(c, data_dir)

    monkeypatch.setattr(campaign, "run", fake_run)
    monkeypatch.setattr(cli.testbed, "stoppable", lambda: None)
    assert cli.main(["campaign", "run", str(path), "--data", str(tmp_path), "--quiet",
                     "--point", key, "--point", stored]) == 0
    assert seen == [[key, stored]]
    assert f"{stored}: not run, already stored" in capsys.readouterr().err
    assert cli.main(["campaign", "run", str(path), "--data", str(tmp_path), "--quiet",
                     "--point", "50mbit-nope"]) == 2
    assert seen == [[key, stored]]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "point = '50mbit-nope'" in err[0]


def _stored_run_as_measured(campaign_name: str, key: str) -> Path:
    """A stored run's directory as it was measured: the one the start gate made invalid
    afterwards if there is one (the caller restores its copy to its valid state), else
    the valid one."""
    root = ROOT / "data" / "runs" / campaign_name
    for moved in sorted((root / "_invalid").glob(f"{key}.*")):
        if "regated" in json.loads((moved / "summary.json").read_text()):
            return moved
    return root / key


def test_regate_makes_a_late_started_run_invalid_and_keeps_the_others(tmp_path):
    """In the fluctuation campaign's 2-ms runs, flow 12 of r1 began its test 2 s late (its
    connection's SYN lost), so its goodput counts 2 s alone on the link; r0's flows began
    together. regate makes r1 invalid as if it had failed then, and only r1."""
    late, on_time = "100mbit-2ms-b2-cubic10-bbr10-r1", "100mbit-2ms-b2-cubic10-bbr10-r0"
    (tmp_path / "campaigns").mkdir()
    # one attempt per point: the regated run must not use it up
    text = (ROOT / "data" / "campaigns" / "fluctuation.yaml").read_text()
    assert "max_attempts: 3" in text
    (tmp_path / "campaigns" / "fluctuation.yaml").write_text(
        text.replace("max_attempts: 3", "max_attempts: 1"))
    for key in (late, on_time):
        dest = tmp_path / "runs" / "fluctuation" / key
        shutil.copytree(_stored_run_as_measured("fluctuation", key), dest)
        s = json.loads((dest / "summary.json").read_text())
        if "regated" in s:  # back to the record as it was measured
            s["gates"] = [g for g in s["gates"] if g["name"] != s["regated"]["gate"]]
            s["invalid_reasons"] = s["invalid_reasons"][:-1]
            s["valid"] = True
            del s["regated"], s["start_lags_s"]
            (dest / "summary.json").write_text(json.dumps(s, indent=2))
    c = campaign.load(tmp_path / "campaigns" / "fluctuation.yaml")
    preview = campaign.regate(c, tmp_path, dry_run=True)
    assert [k for k, _ in preview] == [late] and (tmp_path / "runs" / "fluctuation" / late).is_dir()
    assert preview[0][1].startswith("flows_started_together: 2.")
    assert "flow 12 began" in preview[0][1]
    assert campaign.regate(c, tmp_path) == preview
    root = tmp_path / "runs" / "fluctuation"
    assert not (root / late).exists() and (root / on_time).is_dir()
    (moved,) = (root / "_invalid").glob(f"{late}.*")
    s = data.read_summary(moved / "summary.json")
    assert not s["valid"] and s["regated"]["gate"] == "flows_started_together"
    assert s["start_lags_s"][12] - min(x for x in s["start_lags_s"] if x is not None) > 1.9
    st = campaign.status(c, tmp_path)
    assert late in st.left and on_time in st.done and late not in st.failed
    assert st.attempts[late] == 1 and st.used.get(late, 0.0) == 0.0
    assert st.invalid_length == 1.0  # it ran its whole length: the re-run estimate counts it
    table = pd.read_csv(tmp_path / "fluctuation.csv")
    assert set(table.key) == {on_time}
    assert campaign.regate(c, tmp_path) == []  # nothing left that fails it
