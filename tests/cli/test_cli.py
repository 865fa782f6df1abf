import dataclasses
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from coexist import cli
from coexist.cli import main
from coexist.core import quantities


def run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_share_json_keys(capsys):
    code, out, _ = run(["model", "share", "--buffer-bdp", "5", "--cubic-flows", "3",
                        "--bbr-flows", "2", "--json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert {"bbr_share_sync", "bbr_share_desync", "ware_bbr_share"} <= data.keys()
    assert data["bbr_share_sync"] <= data["bbr_share_desync"]


def test_nash_json_keys(capsys):
    code, out, _ = run(["model", "nash", "--flows", "50", "--buffer-bdp", "2", "--json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert round(data["bbr_flows_sync"], 1) == 31.3 and round(data["bbr_flows_desync"], 1) == 37.2
    assert data["equilibria_sync"] == [31]


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["model", "share", "--buffer-bdp", "1"], "buffer_bdp"),
        (["model", "share", "--buffer-bdp", "0.5"], "buffer_bdp"),
        (["model", "share", "--buffer-bdp", "two"], "buffer_bdp"),
        (["model", "share", "--buffer-bdp", "3", "--bbr-flows", "-2"], "bbr_flows"),
        (["model", "share", "--buffer-bdp", "3", "--cubic-flows", "-1"], "cubic_flows"),
        (["model", "share", "--buffer-bdp", "3", "--flows", "10", "--bbr-flows", "11"],
         "bbr_flows"),
        (["model", "nash", "--flows", "-5", "--buffer-bdp", "3"], "flows"),
        (["model", "nash", "--flows", "10", "--buffer-bdp", "1"], "buffer_bdp"),
        (["figures", "-p", "no_such_param", "1"], "no_such_param"),
        (["figures", "--only", "M-F1", "-p", "rtt_ms", "-3"], "rtt_ms"),
        (["figures", "--only", "M-F1", "-p", "buffer_min_bdp", "40"], "buffer_min_bdp"),
        (["figures", "--built", "_build/figures"], "--check"),
        (["figures", "--check", "--built", "_build/figures", "--only", "M-F1"], "--only"),
        (["book", "--jobs", "0"], "jobs"),
        (["book", "--dir", "/nonexistent-book"], "_config.yml"),
    ],
)
def test_bad_input_one_line_exit_2(args, name):
    proc = subprocess.run([sys.executable, "-m", "coexist.cli", *args], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and name in lines[0], proc.stderr


def test_campaign_run_waits_for_a_quiet_host_only_when_asked():
    from coexist import data
    from coexist.cli import build_parser

    def parsed(*extra):
        return build_parser().parse_args(["campaign", "run", "c.yaml", *extra])

    assert parsed().steal_limit is None and parsed().steal_max_wait is None
    assert parsed("--no-steal-wait").steal_limit is None
    assert parsed("--steal-limit", "2", "--steal-max-wait", "30").steal_limit == 2.0
    campaign_file = str(data.DATA / "campaigns" / "two_flow.yaml")
    for extra, name in ((["--steal-max-wait", "20"], "steal_max_wait"),
                        (["--steal-limit", "1", "--no-steal-wait"], "--no-steal-wait"),
                        (["--steal-limit", "101"], "steal_limit")):
        proc = subprocess.run([sys.executable, "-m", "coexist.cli", "campaign", "run",
                               campaign_file, *extra], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and name in lines[0], proc.stderr


def test_unknown_figure_param_lists_accepted_names():
    proc = subprocess.run([sys.executable, "-m", "coexist.cli", "figures", "-p",
                           "no_such_param", "1"], capture_output=True, text=True, timeout=60)
    assert "accepted names:" in proc.stderr and "capacity_mbps" in proc.stderr


def test_run_stops_early_unless_asked_to_run_to_end(monkeypatch, capsys):
    """``coexist run`` stops a doomed run by default; ``--run-to-end`` keeps it going. The
    printed summary says where a run stopped."""
    import pandas as pd

    from coexist import data
    from coexist.testbed import experiment

    stored = sorted((data.DATA / "runs" / "two_flow").glob("*/summary.json"))[0]
    summary = json.loads(stored.read_text())
    summary.update(valid=False, flows=[], stopped_early={"at_s": 12.5, "reason": "doomed"},
                   invalid_reasons=["doomed"])
    asked = []

    def fake_run(exp, *, progress, th, stop_early):
        asked.append(stop_early)
        return experiment.RunResult(summary, *[pd.DataFrame()] * 5)

    monkeypatch.setattr(experiment, "run", fake_run)
    args = ["run", "--capacity", "20mbit", "--rtt", "20ms", "--buffer-bdp", "2",
            "--flows", "cubic:1,bbr:1", "--quiet"]
    code, out, _ = run(args, capsys)
    assert code == 3 and asked == [True]
    assert "stopped early at 12.5 s: no per-flow results" in out and "INVALID: doomed" in out
    code, out, _ = run([*args, "--run-to-end"], capsys)
    assert asked == [True, False]


def test_a_closed_pipe_ends_quietly():
    """`coexist claims | head -0`: the reader has gone before the first line is written;
    no traceback, exit 141 (128 + SIGPIPE)."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run([sys.executable, "-m", "coexist.cli", "claims"], stdout=write_end,
                          stderr=subprocess.PIPE, timeout=60)
    os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err


FLUID = ["fluid", "run", "--capacity", "10mbit", "--buffer-bdp", "1"]
RUN = ["run", "--capacity", "10mbit", "--rtt", "40ms", "--buffer-bdp", "2"]


@pytest.mark.parametrize(("args", "name"), [
    ([*FLUID, "--ccas", "cubic:10000000000", "--rtt", "40ms"], "ccas"),
    ([*FLUID, "--ccas", "cubic:1", "--rtt", "10ms-"], "rtt"),
    ([*FLUID, "--ccas", "cubic:1", "--rtt", "40ms-30ms"], "rtt"),
    ([*FLUID, "--ccas", "cubic:1", "--rtt", "0.04"], "rtt"),  # 0.04 what? a unit is needed
    ([*RUN[:4], "0.04", *RUN[5:], "--flows", "cubic:1"], "rtt"),
    ([*FLUID, "--ccas", "cubic:1", "--rtt", "40ms", "--duration", "2", "--warmup", "5"],
     "warmup"),
    ([*RUN, "--flows", "cubic:100000000"], "flows"),
    ([*RUN, "--flows", "cubic:1", "--out", "/proc/version"], "out"),
])
def test_bad_input_is_refused_before_any_work(args, name, capsys):
    """Counts are checked before anything is expanded, the warm-up and the output path
    before the simulation or the measurement: a one-line error, quickly."""
    import time

    start = time.perf_counter()
    code, _, err = run(args, capsys)
    assert code == 2 and f"'{name}'" in err and len(err.strip().splitlines()) == 1, err
    assert time.perf_counter() - start < 5


def test_an_rtt_with_an_exponent_is_one_rtt(capsys):
    code, out, err = run([*FLUID, "--ccas", "cubic:1", "--rtt", "4e-2s", "--duration", "1",
                          "--warmup", "0.5", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["rtt_s"] == [0.04, 0.04]


def test_share_reports_the_ware_baseline_unavailable_instead_of_failing(capsys):
    """A documented-valid buffer where Ware et al.'s formula leaves [0, 1]: the closed form
    still answers, and the baseline says it has no prediction (and why)."""
    code, out, _ = run(["model", "share", "--buffer-bdp", "500", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["ware_bbr_share"] is None and "no prediction" in data["ware_note"]
    assert 0 < data["bbr_share_sync"] < 1
    code, out, _ = run(["model", "share", "--buffer-bdp", "5", "--json"], capsys)
    assert code == 0 and 0 < json.loads(out)["ware_bbr_share"] < 1



@pytest.mark.parametrize(("args", "name"), [
    (["campaign", "status", "data/campaigns/two_flow.yaml", "--data", "/nonexistent"], "data"),
    (["campaign", "run", "data/campaigns/two_flow.yaml", "--scheduler", "not an address"],
     "scheduler"),
])
def test_campaign_inputs_checked_before_anything_runs(args, name, capsys, monkeypatch):
    from coexist.testbed import campaign, topology

    monkeypatch.setattr(topology, "clean", lambda *a, **k: pytest.fail("cleaned first"))
    monkeypatch.setattr(campaign, "run", lambda *a, **k: pytest.fail("ran"))
    code, _, err = run(args, capsys)
    assert code == 2 and f"'{name}'" in err and len(err.strip().splitlines()) == 1, err


def test_a_data_error_is_one_line_not_a_traceback(capsys, monkeypatch, tmp_path):
    """A corrupt stored table met by a command: its file and reason in one line, exit 1."""
    from coexist import data

    bad = tmp_path / "two_flow.csv"
    bad.write_bytes(b"\x1f\x8b broken")
    monkeypatch.setattr(cli.book, "_claims", lambda args: data.load_table(bad, "campaign"))
    code, _, err = run(["claims"], capsys)
    assert code == 1 and "two_flow.csv" in err and len(err.strip().splitlines()) == 1, err


def _authors_args(run, json_out: bool = True) -> list[str]:
    """`coexist fluid run --setup authors` for one of the authors' reference runs."""
    from coexist.fluid.studies import authors

    kinds = [authors.CCA_NAMES[c] for c in run.ccas.split("+")]
    per = run.senders // len(kinds)
    return ["fluid", "run", "--setup", "authors",
            "--ccas", ",".join(f"{c}:{per}" for c in kinds),
            "--capacity", f"{run.capacity_mbps:g}mbit",
            "--link-latency", f"{run.link_latency_ms:g}ms",
            "--source-latency", f"{run.source_latency_min_ms:g}ms-{run.source_latency_max_ms:g}ms",
            "--buffer-units", repr(float(run.buffer_unit)),
            "--aqm", "red" if run.aqm == "RED" else "droptail",
            "--step", f"{run.step_ms * 1e3:g}us",
            "--duration", f"{run.duration_s:g}s", "--warmup", f"{run.warmup_s:g}s",
            *(["--json"] if json_out else [])]


def test_the_authors_set_up_from_the_command_line_is_their_run():
    """For every reference run, the command line's --setup authors builds the same
    configuration as the reference tests do from the authors' own outputs (their drawn
    source latencies, their buffer in packets, their BBRv2 phases and inflight_hi)."""
    from coexist.fluid.studies import authors

    runs, flows = authors.runs(), authors.flows()
    for run in runs.itertuples(index=False):
        run = pd.Series(run._asdict())
        args = cli.build_parser().parse_args(_authors_args(run))
        cli.fluid._setup_options(args)
        ours = cli.fluid._authors_config(args, cli.fluid._fluid_flows(args.ccas), quantities.rate(
            args.capacity, "capacity", cli.options.FLUID_CAPACITY_BPS))
        theirs = authors.config(run, flows[flows.run == run.run])
        assert ours.buffer_pkts == theirs.buffer_pkts, run.run
        assert [f.cca for f in ours.flows] == [f.cca for f in theirs.flows], run.run
        assert np.allclose([(f.d_f, f.d_b) for f in ours.flows],
                           [(f.d_f, f.d_b) for f in theirs.flows], rtol=1e-12), run.run
        assert ours == dataclasses.replace(theirs, flows=ours.flows,
                                           capacity_pps=ours.capacity_pps), run.run
        assert ours.capacity_pps == pytest.approx(theirs.capacity_pps, rel=1e-12)


#: twelve runs of the authors' validation grid, every CCA mix and both queues
AUTHORS_ROWS = ["ten-long-drop-tail-cubic+bbr-b3", "ten-long-drop-tail-bbr2-b7",
                "ten-long-drop-tail-reno+bbr2-b1", "ten-long-red-cubic+bbr2-b3",
                "ten-long-red-bbr-b7", "ten-short-drop-tail-cubic-b5",
                "ten-short-drop-tail-reno+bbr-b3", "ten-short-red-reno-b1",
                "ten-short-red-bbr2-b7", "two-40ms-2bdp", "two-5ms-5bdp",
                "alone-cubic-80ms-2bdp"]


@pytest.mark.slow
@pytest.mark.parametrize("run_id", AUTHORS_ROWS)
def test_the_command_line_matches_the_authors_outputs(run_id, capsys):
    """`coexist fluid run --setup authors` on the authors' reference runs: their metrics
    within the tolerances the reference tests state (coexist.fluid.studies.authors.TOLERANCES)."""
    from coexist.fluid.studies import authors

    runs, flows = authors.runs(), authors.flows()
    run = runs.set_index("run").loc[run_id]
    run["run"] = run_id
    assert cli.main(_authors_args(run)) == 0
    out = json.loads(capsys.readouterr().out)
    theirs = flows[flows.run == run_id].sort_values("flow")["share"].to_numpy()
    shares = np.array([f["share"] for f in out["per_flow"]])
    t = authors.TOLERANCES
    assert abs(out["queue_share"] - run.avg_queue_pkts / run.buffer_pkts) <= t["queue_share"]
    assert abs(out["jain"] - run.jain) <= t["jain"]
    assert abs(out["loss"] - run.loss) <= t["loss"]
    assert abs(out["utilization"] - run.utilization) <= t["utilization"]
    assert np.abs(shares - theirs).max() <= t["share"]


def test_figures_only_is_repeatable_and_takes_several_ids():
    """`--only A --only B` checks both figures, as `--only A B` does, not the last alone."""
    parser = cli.build_parser()
    a = parser.parse_args(["figures", "--only", "M-F1", "--only", "M-F3", "S-Options"])
    assert a.only == ["M-F1", "M-F3", "S-Options"]
    assert parser.parse_args(["figures"]).only is None
