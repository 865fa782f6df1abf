"""The bundled measurements: hashes, schemas, and agreement with their campaign grids."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from coexist import data
from coexist.closed_form import nash
from coexist.data import datapackage, gates, tables
from coexist.measured import comparison, socket_states
from coexist.measured import equilibria as measured_equilibria
from coexist.measured import runs as measured
from coexist.testbed import campaign

CAMPAIGNS = sorted((data.DATA / "campaigns").glob("*.yaml"))


def _campaign_of(summary_path) -> str:
    """The campaign a stored summary belongs to: the folder under ``runs/``."""
    parts = summary_path.parts
    return parts[parts.index("runs") + 1]


def test_datapackage_hashes_match_every_file():
    if not (data.DATA / "datapackage.json").exists():
        assert not (data.DATA / "runs").exists(), "runs are stored but no datapackage.json"
        pytest.skip("no measurement bundled yet")
    assert datapackage.verify() == []


@pytest.mark.parametrize("path", CAMPAIGNS, ids=lambda p: p.stem)
def test_campaign_runs_match_grid_and_gates(path):
    c = campaign.load(path)
    points = {p.key: p for p in c.points}
    stored = list(campaign.iter_runs(c))
    table = measured.campaign_table(c.name)
    assert sorted(table["key"].unique()) == sorted(p.key for p, _ in stored)
    for point, run_dir in stored:
        s = json.loads((run_dir / "summary.json").read_text())
        assert s["valid"] and all(g["passed"] for g in s["gates"]), run_dir
        assert s["campaign"]["key"] == point.key == run_dir.name
        assert s.get("load", "none") == point.load
        expected = points[point.key].exp.to_dict()
        for k in ("capacity_bps", "rtt_s", "buffer_bdp", "flows", "duration_s", "warmup_s"):
            assert s["params"][k] == expected[k], (run_dir, k)
        flows = data.load_table(run_dir / data.RUN_FILES["flows"], "flows")
        assert flows["share"].sum() == pytest.approx(1.0)
        assert list(flows["cca"]) == [f.cca for f in point.exp.flows]
        for kind, fname in data.RUN_FILES.items():
            data.load_table(run_dir / fname, kind)
        rows = table[table["key"] == point.key]
        assert rows["goodput_bps"].to_numpy() == pytest.approx(flows["goodput_bps"].to_numpy())


def test_runs_and_spread_and_error_by_range():
    t = pd.DataFrame({
        "key": ["a", "a", "b", "b"], "capacity_bps": 1e6, "rtt_s": 0.04,
        "buffer_bdp": [2.0, 2.0, 2.0, 2.0], "n_flows": 2, "n_bbr": 1, "repeat": [0, 0, 1, 1],
        "bbr_share": [0.6, 0.6, 0.4, 0.4], "utilisation": 1.0, "mean_queue_delay_s": 0.01,
        "cca": ["cubic", "bbr", "cubic", "bbr"], "goodput_bps": [4e5, 6e5, 6e5, 4e5]})
    r = measured.runs(t)
    assert list(r["bbr_bps"]) == [6e5, 4e5] and list(r["cubic_bps"]) == [4e5, 6e5]
    s = comparison.spread(r, ["buffer_bdp"], "bbr_share")
    assert s.loc[0, "mean"] == pytest.approx(0.5) and s.loc[0, "n_runs"] == 2
    assert (s.loc[0, "min"], s.loc[0, "max"]) == (0.4, 0.6)
    pts = pd.DataFrame({"buffer_bdp": [1.0, 2.0, 3.0, 10.0], "mean": [0.5, 0.5, 0.4, 0.3]})
    acc = comparison.error_by_range(pts, {"m": np.array([np.nan, 0.6, 0.4, 0.2])})
    one_two = acc[acc.buffer_range_bdp == "1-2"].iloc[0]
    assert one_two["points"] == 1 and one_two["not_in_domain"] == 1
    assert one_two["mean_abs_error"] == pytest.approx(0.1)
    five_30 = acc[acc.buffer_range_bdp == "5-30"].iloc[0]
    assert five_30["mean_error"] == pytest.approx(-0.1)
    # a model run at some of the measured buffers: aligned to the points, NaN elsewhere
    grid = pd.DataFrame({"buffer_bdp": [10.0, 2.0], "share": [0.25, 0.45]})
    at = comparison.model_at(grid, pts, ["buffer_bdp"], "share")
    assert np.isnan(at[0]) and np.isnan(at[2]) and list(at[[1, 3]]) == [0.45, 0.25]
    with pytest.raises(ValueError, match="duplicate"):
        comparison.model_at(pd.concat([grid, grid]), pts, ["buffer_bdp"], "share")


def test_observed_equilibria_from_mixes():
    """Hand-made 3-flow mix table (a test fixture, not a measurement)."""
    # per-flow: k=0: cubic 10; k=1: cubic 8, bbr 14; k=2: cubic 9, bbr 9.5; k=3: bbr 7
    goodput = {0: (30.0, 0.0), 1: (16.0, 14.0), 2: (9.0, 19.0), 3: (0.0, 21.0)}
    rows = [{"capacity_bps": 1e6, "rtt_s": 0.01, "buffer_bdp": 2.0, "n_flows": 3,
             "n_bbr": k, "cubic_bps": c, "bbr_bps": b} for k, (c, b) in goodput.items()]
    runs = pd.DataFrame(rows)
    eq = measured_equilibria.observed_equilibria(runs, 3)
    # only k=2 holds: its CUBIC flow would get 7 < 9 as BBR, a BBR flow 8 < 9.5 as CUBIC
    assert eq["equilibrium_bbr_flows"].tolist() == [2.0]
    assert eq["mixes"].tolist() == [4]
    partial = measured_equilibria.observed_equilibria(runs[runs.n_bbr != 1], 3)
    assert partial["mixes"].tolist() == [3] and partial["equilibrium_bbr_flows"].isna().all()
    assert measured_equilibria.observed_equilibria(runs, 5).empty


def test_against_region_rounds_the_eq25_region_outwards_and_names_the_side():
    """Hand-made equilibria (a test fixture, not a measurement) against eq. (25)."""
    obs = pd.DataFrame({"capacity_bps": 1e8, "rtt_s": 0.005,
                        "buffer_bdp": [0.5, 2.0, 10.0, 10.0, 10.0],
                        "equilibrium_bbr_flows": [10.0, 10.0, 5.0, 1.0, np.nan],
                        "mixes": [11, 11, 11, 11, 7]})
    v = measured_equilibria.against_region(obs, 10)
    assert len(v) == 4  # the incomplete setting (NaN) has no verdict
    assert v["verdict"].tolist() == ["no prediction", "above", "inside", "below"]
    assert np.isnan(v.loc[0, "region_lo"]) and np.isnan(v.loc[0, "flows_outside"])
    for i, buf in ((1, 2.0), (2, 10.0)):
        reg = nash.predicted_region(np.array([buf]), 10)
        lo, hi = sorted((reg["bbr_flows_sync"][0], reg["bbr_flows_desync"][0]))
        assert v.loc[i, "region_lo"] == pytest.approx(lo)
        assert v.loc[i, "region_hi"] == pytest.approx(hi)
        assert v.loc[i, "whole_lo"] == np.floor(lo) and v.loc[i, "whole_hi"] == np.ceil(hi)
    # 2 BDP: the region lies between 6 and 8 flows, so 10 flows is 2 above it
    assert (v.loc[1, "whole_lo"], v.loc[1, "whole_hi"]) == (6.0, 8.0)
    assert v["flows_outside"].tolist()[1:] == [2.0, 0.0, v.loc[3, "whole_lo"] - 1.0]
    assert measured_equilibria.against_region(obs.iloc[4:], 10).empty


def test_against_region_does_not_widen_a_whole_number_bound_by_float_error():
    """At 3 BDP and 10 flows eq. (25)'s synchronised crossing is 5 flows, computed as
    5 - 9e-16: the whole-flow region is 5-7, as the unrounded 5.0-6.3 implies, not 4-7."""
    reg = nash.predicted_region(np.array([3.0]), 10)
    assert reg["bbr_flows_sync"][0] == pytest.approx(5.0, abs=1e-12)
    obs = pd.DataFrame({"capacity_bps": 1e8, "rtt_s": 0.04, "buffer_bdp": [3.0],
                        "equilibrium_bbr_flows": [4.0], "mixes": [11]})
    v = measured_equilibria.against_region(obs, 10)
    assert (v.loc[0, "whole_lo"], v.loc[0, "whole_hi"]) == (5.0, 7.0)
    assert v.loc[0, "verdict"] == "below" and v.loc[0, "flows_outside"] == 1.0


def test_run_summaries_of_some_campaigns_read_and_record_only_those(no_campaigns_read):
    every = data.run_summaries()
    assert data.campaigns_read() == {"*"}
    data.forget_reads()
    some = data.run_summaries(campaigns=["ceiling", "concurrency"])
    assert data.campaigns_read() == {"ceiling", "concurrency"}
    # "ceiling" is its own campaign, not the prefix of "ceiling-steered"
    assert set(some["campaign"]) == {"ceiling", "concurrency"}
    expected = every[every["campaign"].isin(["ceiling", "concurrency"])]
    assert sorted(some["run_id"]) == sorted(expected["run_id"]) and some["valid"].any()
    assert (~some["valid"]).any()  # the invalid runs too
    none = data.run_summaries(campaigns=[])
    assert none.empty and list(none.columns) == list(every.columns) == data.RUN_SUMMARY_COLUMNS
    assert data.run_summaries(campaigns="ceiling")["campaign"].unique().tolist() == ["ceiling"]


def test_run_summaries_lists_every_stored_run_once_with_its_steal_share():
    runs = data.run_summaries()
    summaries = sorted((data.DATA / "runs").glob("*/*/summary.json")) + \
        sorted((data.DATA / "runs").glob("*/_invalid/*/summary.json"))
    stored = {p: json.loads(p.read_text()) for p in summaries}
    # a run is named by its campaign and id (ids were 6 hex digits at first: two collide)
    assert len(runs) == len(summaries) and not runs.duplicated(["campaign", "run_id"]).any()
    assert runs["run_id"].str.fullmatch(r"[0-9a-f]{6}|[0-9a-f]{12}").all()
    assert (runs.loc[runs["run_id"].duplicated(keep=False), "run_id"].str.len() == 6).all()
    invalid = {(_campaign_of(p), p.parent.name.rsplit(".", 1)[1])
               for p in summaries if "_invalid" in p.parts}
    assert set(map(tuple, runs.loc[~runs["valid"], ["campaign", "run_id"]].values)) == invalid
    assert (runs.loc[~runs["valid"], "reasons"] != "").all()
    s = stored[summaries[-1]]  # the steal share recomputed from one summary
    row = runs.set_index(["campaign", "run_id"]).loc[(_campaign_of(summaries[-1]), s["run_id"])]
    steal = s["provenance"]["cpu_seconds_during_run"]["steal_s"]
    assert row["steal_pct"] == pytest.approx(
        100 * steal / (s["provenance"]["cores"] * s["wall_s"]))
    assert row["duration_s"] == s["params"]["duration_s"]
    present = runs["steal_pct"].dropna()
    assert len(present) and present.between(0, 100).all()
    # the busiest second of the traffic, where recorded: within the run's own steal, and its
    # share as stored
    # (the share may pass 100 %: a guest's steal is booked at its vCPU's next tick, so a
    # window can hold steal from just before it; stored run d9f92a reads 101.6 %)
    peak = runs.dropna(subset=["steal_burst_s"])
    assert (peak["steal_peak_pct"] >= 0).all()
    assert (peak["steal_burst_s"] <= peak["steal_s"] + 0.011).all()  # 10-ms ticks, rounded
    if len(peak):
        s = next(s for s in stored.values() if s["provenance"].get("steal_peak"))
        rec = s["provenance"]["steal_peak"]
        assert rec["pct"] == pytest.approx(
            100 * rec["steal_s"] / (s["provenance"]["cores"] * rec["span_s"]), rel=2e-3, abs=0.01)
        assert 1.0 <= rec["span_s"] or rec["samples"] < 12
    # disturbed: invalid, only timing gates failed, and more than 1 % steal over the run,
    # at least 1 ms stolen within a second of its traffic, or sleepers late at least 0.1 %
    # of the time (testbed.gates.stalled)
    from coexist.data.gates import DISTURBED_STALL_PCT

    held_up = (runs["steal_pct"] > 1.0) | (runs["steal_burst_s"] >= 1e-3) | \
        (runs["stall_pct"] >= DISTURBED_STALL_PCT)
    assert not runs.loc[runs["valid"], "disturbed"].any()
    assert held_up[runs["disturbed"]].all()
    assert ((runs["failed_gates"] == "") == runs["valid"]).all()
    # timing only: every failed gate a timing gate, an early stop's unfinished flows aside
    stopped = runs["stopped_early_s"].notna()
    failed = runs["failed_gates"].map(lambda g: set(g.split(",")) - {""})
    failed[stopped] = failed[stopped].map(lambda g: g - {"flows_complete"})
    # ... and, there, a CCA check that failed only on flows not yet sending
    unseen_ids = {(_campaign_of(p), s["run_id"])
                  for p, s in stored.items()
                  if s.get("stopped_early") and gates.cca_unseen_only(s)}
    keys = zip(runs["campaign"], runs["run_id"], strict=True)
    unseen = pd.Series([k in unseen_ids for k in keys], index=runs.index)
    assert not (unseen & ~stopped).any()
    failed[unseen] = failed[unseen].map(lambda g: g - {"cca_confirmed"})
    timing_only = failed.map(lambda g: bool(g) and g <= {"probe_rtt", "delay_lateness",
                                                        "utilisation"})
    assert (runs["timing_only"] == timing_only).all()
    assert (runs["disturbed"] == (~runs["valid"] & held_up & timing_only)).all()
    assert (runs.loc[stopped, "failed_gates"].str.contains("delay_lateness")).all()
    # point: the campaign key without its repeat, so every repeat of a configuration shares it
    assert (runs["key"] == runs["point"] + "-r" + runs["repeat"].astype(int).astype(str)).all()
    assert not runs[runs["valid"]].duplicated(["campaign", "point", "repeat"]).any()
    # the quiet-host wait, where a campaign made one, copied from the summary
    waited = runs.dropna(subset=["waited_for_quiet_s"])
    assert len(waited) and (waited["waited_for_quiet_s"] >= 0).all()
    assert waited["steal_before_pct"].dropna().between(0, 100).all()
    waited_path = next(p for p, s in stored.items()
                       if "waited_for_quiet_s" in s.get("campaign", {}))
    s = stored[waited_path]
    row = runs.set_index(["campaign", "run_id"]).loc[(_campaign_of(waited_path), s["run_id"])]
    assert row["waited_for_quiet_s"] == s["campaign"]["waited_for_quiet_s"]
    assert row["wall_s"] == s["wall_s"]
    # the delay line's CPU per released packet: its share x the run's wall time / packets
    dl = s["delay_line"]
    assert row["delay_cpu_us_per_packet"] == pytest.approx(
        1e6 * dl.get("cpu_s", dl["cpu_fraction"] * s["wall_s"]) / dl["released"])
    per_packet = runs["delay_cpu_us_per_packet"].dropna()
    assert len(per_packet) and (per_packet > 0).all()
    # steering and the delay line's kernel share, copied from the summaries that have them
    steered = {(_campaign_of(p), s["run_id"]) for p, s in stored.items()
               if s["params"].get("steer_acks")}
    assert steered and set(runs.loc[runs["steer_acks"], ["campaign", "run_id"]]
                           .itertuples(index=False, name=None)) == steered
    split = {(_campaign_of(p), s["run_id"]): 100 * s["delay_line"]["sys_s"]
             / s["delay_line"]["cpu_s"] for p, s in stored.items()
             if (s.get("delay_line") or {}).get("sys_s") is not None}
    have = runs.dropna(subset=["delay_sys_pct"]).set_index(["campaign", "run_id"])
    assert split and set(have.index) == set(split)
    assert all(have.loc[k, "delay_sys_pct"] == pytest.approx(v) for k, v in split.items())


def test_delay_cpu_per_packet_prefers_the_delay_lines_own_cpu_time():
    """Newer summaries store the delay line's CPU seconds; older ones only its share of its
    own wall time, which is then applied to the run's wall time."""
    new = {"wall_s": 130.0, "delay_line": {"cpu_fraction": 0.1, "cpu_s": 12.0,
                                           "wall_s": 120.0, "released": 400_000}}
    assert data.delay_cpu_us_per_packet(new) == pytest.approx(30.0)
    old = {"wall_s": 130.0, "delay_line": {"cpu_fraction": 0.1, "released": 400_000}}
    assert data.delay_cpu_us_per_packet(old) == pytest.approx(32.5)
    assert data.delay_cpu_us_per_packet({"wall_s": 1.0, "delay_line": None}) is None
    assert data.delay_cpu_us_per_packet(
        {"wall_s": 1.0, "delay_line": {"cpu_fraction": 0.1, "released": 0}}) is None


def test_busy_share_counts_stolen_time_as_not_busy_and_needs_the_record():
    run = {"provenance": {"cpu_seconds_during_run": {"busy_s": 30.0, "idle_s": 9.0,
                                                     "steal_s": 1.0}}}
    assert data.busy_pct(run) == pytest.approx(75.0)
    assert data.busy_pct({"provenance": {}}) is None


def test_run_summaries_carry_each_runs_rate_flows_and_busy_share():
    runs = data.run_summaries().set_index(["campaign", "run_id"])
    for p in sorted((data.DATA / "runs").glob("*/*/summary.json"))[:20]:
        s = json.loads(p.read_text())
        row = runs.loc[(_campaign_of(p), s["run_id"])]
        assert row["capacity_bps"] == s["params"]["capacity_bps"]
        assert row["n_flows"] == len(s["flows"])
        assert row["kernel"] == s["provenance"]["kernel"]
        assert row["iperf3"] == s["provenance"]["tools"]["iperf3"]
        busy = data.busy_pct(s)
        assert (busy is None and pd.isna(row["host_busy_pct"])) or \
            row["host_busy_pct"] == pytest.approx(busy)


def test_bbr_operating_point_from_ss_samples():
    rows = []
    for t in (10.0, 40.0, 40.5, 41.0, 41.5):  # 10 s is warm-up; a CUBIC row is ignored
        rows.append({"t_s": t, "cca": "cubic", "cwnd": 999, "srtt_s": 1.0,
                     "bbr_mrtt_s": None, "acked_rate_bps": 1e9})
    for t, cwnd, mrtt in ((10.0, 4, 0.001), (40.0, 400, 0.05), (40.5, 400, 0.04),
                          (41.0, 4, 0.04), (41.5, 400, 0.06)):
        rows.append({"t_s": t, "cca": "bbr", "cwnd": cwnd, "srtt_s": 0.1,
                     "bbr_mrtt_s": mrtt, "acked_rate_bps": 8 * socket_states.MSS_BYTES * 1000})
    op = socket_states.bbr_operating_point(pd.DataFrame(rows), warmup_s=30.0)
    assert op["samples"] == 4 and op["rtprop_s"] == pytest.approx(0.045)
    assert op["cwnd_segments"] == 400 and op["probe_rtt_share"] == 0.25
    # Little's law: 1000 segments/s x 0.1 s = 100 segments in flight, mean cwnd 301
    assert op["inflight_over_cwnd"] == pytest.approx(100 / 301)
    with pytest.raises(data.DataError, match="no BBR sample after the warm-up"):
        socket_states.bbr_operating_point(pd.DataFrame(rows), warmup_s=50.0)


def test_cubic_bbr_regime_from_queue_and_ss_samples():
    sockets = pd.DataFrame({"t_s": [10.0, 40.0, 40.5, 41.0, 41.0],
                            "cca": ["cubic", "cubic", "cubic", "cubic", "bbr"],
                            "cwnd": [1, 400, 100, 300, 7]})  # warm-up and BBR rows ignored
    queue = pd.DataFrame({"t_s": [10.0, 40.0, 40.5, 41.0, 41.5],
                          "backlog_bytes": [0.0, 10.0, 600.0, 999.0, 1000.0]})
    r = socket_states.cubic_bbr_regime(sockets, queue, bdp_bytes=1000.0, warmup_s=30.0)
    assert r["queue_samples"] == 4 and r["queue_below_bdp"] == 0.75
    assert r["cwnd_samples"] == 3 and r["cubic_low_over_high"] == 0.25
    with pytest.raises(data.DataError, match="after the warm-up"):
        socket_states.cubic_bbr_regime(sockets, queue, bdp_bytes=1000.0, warmup_s=45.0)


def test_cubic_bbr_regimes_cover_every_stored_two_flow_run():
    r = socket_states.cubic_bbr_regimes("two_flow")
    assert len(r) == len(measured.runs(measured.campaign_table("two_flow")))
    assert r["queue_below_bdp"].between(0, 1).all()
    assert (r["cubic_low_over_high"] > 0).all() and (r["cubic_low_over_high"] <= 1).all()
    # a 1-BDP buffer holds at most a BDP, and only a packet short of full is under it
    assert (r.loc[r["buffer_bdp"] == 1, "queue_below_bdp"] > 0.9).all()


def test_bbr_operating_points_are_physical_in_every_stored_run():
    checked = 0
    for name in ("two_flow", "deep_buffer", "multi_flow"):  # campaigns with one base RTT
        op = socket_states.bbr_operating_points(name)
        if op.empty:
            continue
        checked += len(op)
        x, rtt = op["buffer_bdp"].astype(float), op["rtt_s"].astype(float)
        # BBR's min-RTT filter cannot go below the base RTT the delay line adds, nor above
        # it plus a full buffer's queueing delay (x BDP)
        assert (op["rtprop_s"] >= rtt - 1e-4).all(), name
        assert (op["rtprop_s"] <= rtt * (1 + x)).all(), name
        assert op["probe_rtt_share"].between(0, 1).all(), name
        assert op["inflight_over_cwnd"].between(0, 1.1).all(), name
        # eq. (9): RTT+ = RTT + b_cmin / C with b_cmin = (B - C RTT) / 2 (eq. 10)
        above = x > 1
        assert np.allclose(op.loc[above, "eq9_rtprop_s"], rtt[above] * (x[above] + 1) / 2)
        assert op.loc[~above, "eq9_rtprop_s"].isna().all()
    assert checked >= 94  # the complete two-flow and deep-buffer campaigns at least


def _mix_table(name: str, n_flows: int, goodput: dict, *, duration=120.0, warmup=30.0,
               flow_rtt=0.04) -> pd.DataFrame:
    """A campaign table of one setting's mixes (a test fixture, not a measurement):
    ``goodput[k]`` = (per-flow CUBIC, per-flow BBR) bit/s with k BBR flows."""
    rows = []
    for k, (c, b) in goodput.items():
        for f in range(n_flows):
            cca = "bbr" if f >= n_flows - k else "cubic"
            rows.append({"campaign": name, "key": f"100mbit-40ms-b2-cubic{n_flows - k}-bbr{k}-r0",
                         "run_id": "x", "repeat": 0, "capacity_bps": 1e8, "rtt_s": 0.04,
                         "buffer_bdp": 2.0, "buffer_bytes": 10**6, "flows_spec": "-",
                         "load": "none", "n_flows": n_flows, "n_bbr": k, "duration_s": duration,
                         "warmup_s": warmup, "utilisation": 1.0, "jain_index": 1.0,
                         "bbr_share": 0.5, "mean_queue_delay_s": 0.01, "bottleneck_drops": 0,
                         "flow": f, "cca": cca, "flow_rtt_s": flow_rtt if f == 0 else 0.04,
                         "goodput_bps": b if cca == "bbr" else c, "share": 1 / n_flows,
                         "retransmits": 0})
    return pd.DataFrame(rows)


#: Per-flow (CUBIC, BBR) goodput by BBR count k of two campaigns measuring one setting:
#: the deviation test gives k=2 on the first alone, k=0 on the second, and k=1 on their
#: average (CUBIC 9, BBR 11 at k=1).
TWO_CAMPAIGNS = {"equilibrium": {0: (10.0, 0.0), 1: (7.0, 16.0), 2: (0.0, 8.0)},
                 "mix_sweep": {0: (10.0, 0.0), 1: (11.0, 6.0), 2: (0.0, 8.0)}}


def _two_campaigns(data_dir) -> pd.DataFrame:
    """:func:`measured.mix_runs` of ``TWO_CAMPAIGNS`` written into ``data_dir``."""
    for name, goodput in TWO_CAMPAIGNS.items():
        data.write_table(_mix_table(name, 2, goodput), data_dir / f"{name}.csv", "campaign")
    return measured.mix_runs(2, data_dir=data_dir)


def test_mix_runs_pools_campaigns_as_repeats_and_refuses_unlike_runs(tmp_path):
    r = _two_campaigns(tmp_path)
    b = TWO_CAMPAIGNS["mix_sweep"]
    assert sorted(r["campaign"].unique()) == ["equilibrium", "mix_sweep"] and len(r) == 6
    assert r["key"].is_unique
    alone = {c: measured_equilibria.observed_equilibria(r[r.campaign == c], 2)
             ["equilibrium_bbr_flows"].tolist() for c in ("equilibrium", "mix_sweep")}
    assert alone == {"equilibrium": [2.0], "mix_sweep": [0.0]}
    assert measured_equilibria.observed_equilibria(r, 2)["equilibrium_bbr_flows"].tolist() == [1.0]
    each = measured_equilibria.equilibria_by_campaign(r, 2)
    assert each[["campaign", "mixes", "equilibria"]].values.tolist() == [
        ["equilibrium", 3, (2.0,)], ["mix_sweep", 3, (0.0,)]]
    only_one = measured_equilibria.equilibria_by_campaign(r[r.campaign == "equilibrium"], 2)
    assert only_one.empty and measured_equilibria.equilibria_by_campaign(r.iloc[:0], 2).empty
    partial = measured_equilibria.equilibria_by_campaign(
        r[(r.campaign == "equilibrium") | (r.n_bbr < 2)], 2)
    assert partial.set_index("campaign")["equilibria"].to_dict() == {
        "equilibrium": (2.0,), "mix_sweep": ()}
    # a run whose flows do not all have the reference RTT is not a one-RTT mix
    data.write_table(_mix_table("mix_sweep", 2, b, flow_rtt=0.01), tmp_path / "mix_sweep.csv",
                     "campaign")
    assert list(measured.mix_runs(2, data_dir=tmp_path)["campaign"].unique()) == ["equilibrium"]
    data.write_table(_mix_table("mix_sweep", 2, b, duration=60.0), tmp_path / "mix_sweep.csv",
                     "campaign")
    with pytest.raises(ValueError, match="2 flows at 100 Mbit/s, 40 ms, 2 BDP were measured "
                       "for different durations or warm-ups .equilibrium: 120 s, warm-up 30 s; "
                       "mix_sweep: 60 s"):
        measured.mix_runs(2, data_dir=tmp_path)
    none = measured.mix_runs(3, data_dir=tmp_path)
    assert none.empty and list(none.columns) == list(r.columns)


def test_switch_gains_runs_the_deviation_test_on_each_run_and_on_their_mean(tmp_path):
    # equilibria 2 (first campaign), 0 (second), 1 (mean)
    r = _two_campaigns(tmp_path)
    a, b = TWO_CAMPAIGNS["equilibrium"], TWO_CAMPAIGNS["mix_sweep"]
    g = measured_equilibria.switch_gains(r, 2).set_index(["n_bbr", "draw"])
    assert len(g) == 9 and (g["runs"] == 2).all()
    # run 1 is the equilibrium campaign's: a CUBIC flow in k=1 gets 8/7 of its 7 as BBR
    assert g.loc[(1, "run 1"), "gain"] == pytest.approx(8 / 7 - 1)
    assert g.loc[(1, "run 1"), "switch"] == "CUBIC→BBR"
    assert g.loc[(2, "run 1"), "gain"] == pytest.approx(7 / 8 - 1)  # BBR -> CUBIC in k=1
    assert g.loc[(0, "run 2"), "gain"] == pytest.approx(6 / 10 - 1)
    # the mean: CUBIC 9 a flow at k=1, BBR 11; a BBR flow there would get 10 as CUBIC
    assert g.loc[(1, "mean"), "gain"] == pytest.approx(10 / 11 - 1)
    assert g.loc[(1, "mean"), "switch"] == "BBR→CUBIC"
    eq = {d: sorted(g[g.equilibrium].xs(d, level="draw").index) for d in ("run 1", "run 2", "mean")}
    assert eq == {"run 1": [2], "run 2": [0], "mean": [1]}
    # draw 0 is each mix's first run: the equilibrium campaign's, listed first in MIX_CAMPAIGNS
    order = measured_equilibria.run_order(r)
    assert sorted(order.groupby("draw")["campaign"].unique().map(list).tolist()) == [
        ["equilibrium"], ["mix_sweep"]]
    # the mean's verdicts are observed_equilibria's, at any tolerance
    for tol in (0.0, 0.15, 0.5):
        t = measured_equilibria.switch_gains(r, 2, tol)
        ne = measured_equilibria.observed_equilibria(r, 2, tol)["equilibrium_bbr_flows"].tolist()
        assert t[(t.draw == "mean") & t.equilibrium]["n_bbr"].astype(float).tolist() == ne
        first = measured_equilibria.observed_equilibria(r[r.campaign == "equilibrium"], 2, tol)
        assert (t[(t.draw == "run 1") & t.equilibrium]["n_bbr"].astype(float).tolist()
                == first["equilibrium_bbr_flows"].tolist())
    # within one campaign, runs in the order of their repeats (the second repeat is b's
    # runs here), also from runs() output, which has no campaign column
    twice = pd.concat([_mix_table("equilibrium", 2, b).assign(
                           key=lambda t: t["key"].str.replace("-r0", "-r1"), repeat=1),
                       _mix_table("equilibrium", 2, a)])
    t = measured_equilibria.switch_gains(measured.runs(twice), 2)
    assert t.equals(measured_equilibria.switch_gains(r, 2))
    # a mix measured once leaves every mix that reads it untested (all three read k=1)
    once = measured.runs(twice[~((twice["repeat"] == 1) & (twice["n_bbr"] == 1))])
    assert measured_equilibria.switch_gains(once, 2).empty
    assert list(measured_equilibria.switch_gains(once, 2).columns) == list(t.columns)


def test_equilibrium_firmness_says_whether_each_run_alone_passes_the_test(tmp_path):
    r = _two_campaigns(tmp_path)  # equilibria 2 (run 1), 0 (run 2), 1 (their mean)
    f = measured_equilibria.equilibrium_firmness(r, 2)
    assert f[["equilibrium_bbr_flows", "runs_per_mix", "each_run"]].values.tolist() == [
        [1.0, 2, False]]
    # with the second campaign's runs made the first's, every run is an equilibrium at 2
    same = pd.concat([r[r.campaign == "equilibrium"],
                      r[r.campaign == "equilibrium"].assign(campaign="mix_sweep",
                                                            key=lambda t: t["key"] + "x")])
    f = measured_equilibria.equilibrium_firmness(same, 2)
    assert f[["equilibrium_bbr_flows", "runs_per_mix", "each_run"]].values.tolist() == [
        [2.0, 2, True]]
    # a neighbour it reads (k=1) measured once: not tested, however the runs agree
    second = same.campaign == "mix_sweep"
    f = measured_equilibria.equilibrium_firmness(same[~(second & (same.n_bbr == 1))], 2)
    assert f[["runs_per_mix", "each_run"]].values.tolist() == [[1, None]]
    # a mix it does not read (k=0) measured once changes nothing
    f = measured_equilibria.equilibrium_firmness(same[~(second & (same.n_bbr == 0))], 2)
    assert f[["runs_per_mix", "each_run"]].values.tolist() == [[2, True]]
    # a setting missing a mix: no equilibrium, nothing to say about firmness
    f = measured_equilibria.equilibrium_firmness(r[r.n_bbr < 2], 2)
    assert f["equilibrium_bbr_flows"].isna().all() and f["each_run"].isna().all()
    assert f["clear"].isna().all() and f["margin"].isna().all()


def test_equilibrium_firmness_is_clear_only_beyond_two_standard_errors_of_the_runs(tmp_path):
    # both runs an equilibrium at k=2: a BBR flow would get 7 (run 1) or c (run 2) as CUBIC
    # in k=1 instead of its 8, margins 1/8 and 1 - c/8
    def firmness(c: float) -> pd.DataFrame:
        for name, cubic in (("equilibrium", 7.0), ("mix_sweep", c)):
            data.write_table(_mix_table(name, 2, {0: (10.0, 0.0), 1: (cubic, 16.0),
                                                  2: (0.0, 8.0)}),
                             tmp_path / f"{name}.csv", "campaign")
        return measured_equilibria.equilibrium_firmness(measured.mix_runs(2, data_dir=tmp_path), 2)

    # margins 0.125 and 0.0125: mean 0.06875, standard error 0.05625, two of them 0.1125
    near = firmness(7.9)
    assert near["each_run"].tolist() == [True] and near["clear"].tolist() == [False]
    assert near["margin"].iloc[0] == pytest.approx(0.06875)
    assert near["margin_se"].iloc[0] == pytest.approx(0.05625)
    assert measured_equilibria.firmness_labels(near) == [measured_equilibria.FIRMNESS[1]]
    # margins 0.125 and 0.25: mean 0.1875 beyond two standard errors (0.125)
    far = firmness(6.0)
    assert far["clear"].tolist() == [True] and far["margin"].iloc[0] == pytest.approx(0.1875)
    assert measured_equilibria.firmness_labels(far) == [measured_equilibria.FIRMNESS[0]]
    # at z = 4 standard errors (0.25) it no longer is
    runs = measured.mix_runs(2, data_dir=tmp_path)
    assert measured_equilibria.equilibrium_firmness(runs, 2, z=4.0)["clear"].tolist() == [False]


def test_coverage_text_names_each_campaign_with_its_counts():
    text = measured.coverage_text(("equilibrium", "mix_sweep"))
    (d1, p1), (d2, p2) = measured.coverage("equilibrium"), measured.coverage("mix_sweep")
    assert text == f"equilibrium {d1}/{p1}, mix sweep {d2}/{p2}"


@pytest.mark.parametrize(("edit", "match"), [
    (lambda s: {**s, "valid": "false"}, r"field 'valid' = 'false' is not true or false"),
    (lambda s: {k: v for k, v in s.items() if k != "gates"}, r"field 'gates' is missing"),
    (lambda s: {**s, "wall_s": True}, r"field 'wall_s' = True is not a number"),
    (lambda s: {**s, "params": {}}, r"field 'params.capacity_bps' is missing"),
    (lambda s: {**s, "utilisation": "high"}, r"field 'utilisation' = 'high' is not a number"),
    (lambda s: {**s, "params": {**s["params"], "buffer_bytes": 0}},
     r"field 'params.buffer_bytes' = 0 is not an integer in \[1, inf\]"),
    (lambda s: {**s, "params": {**s["params"], "buffer_bytes": "1MB"}},
     r"field 'params.buffer_bytes' = '1MB' is not an integer"),
    (lambda s: {**s, "flows": [{**s["flows"][0], "share": 1.5}]},
     r"field 'flows\[0\].share' = 1.5 is not a number in \[0, 1\]"),
    (lambda s: {**s, "gates": [{"name": "x", "passed": "yes"}]}, r"gates\[0\]"),
    (lambda s: {**s, "gates": [{"name": "x", "passed": False}], "valid": True},
     "a gate failed"),
])
def test_a_bad_summary_is_refused_naming_the_field(tmp_path, edit, match):
    good = data.read_summary(next((data.DATA / "runs" / "two_flow").glob("*/summary.json")))
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(edit(good)))
    with pytest.raises(data.DataError, match=match):
        data.read_summary(path)


def test_a_truncated_summary_is_refused(tmp_path):
    src = next((data.DATA / "runs" / "two_flow").glob("*/summary.json")).read_text()
    path = tmp_path / "summary.json"
    path.write_text(src[: len(src) // 2])
    with pytest.raises(data.DataError, match="not a JSON run summary"):
        data.read_summary(path)



def test_a_repeated_row_is_refused_not_summed(tmp_path):
    good = ("flow,cca,rtt_s,group,start_offset_s,goodput_bps,bytes_received,retransmits,"
            "iperf3_congestion,share\n0,cubic,0.02,0,0,9e6,1,3,cubic,0.5\n")
    path = tmp_path / "flows.csv"
    path.write_text(good + "0,cubic,0.02,0,0,9e6,1,3,cubic,0.5\n")
    with pytest.raises(data.DataError, match=r"flows.csv:3: the same row as line 2"):
        data.load_table(path, "flows")


def test_verify_refuses_a_resource_outside_the_data_directory(tmp_path):
    (tmp_path / "datapackage.json").write_text(json.dumps({"resources": [
        {"name": "x", "path": "/etc/hostname", "sha256": "0" * 64},
        {"name": "y", "path": "../outside.csv", "sha256": "0" * 64}]}))
    problems = datapackage.verify(tmp_path)
    assert sum("must be relative and inside" in p for p in problems) == 2


def test_runs_keep_the_goodput_of_every_algorithm():
    table = measured.campaign_table("fluid_validation")
    per_run = measured.runs(table)
    assert "reno_bps" in per_run and per_run["reno_bps"].sum() > 0
    total = table.groupby("key")["goodput_bps"].sum()
    ccas = [f"{c}_bps" for c in sorted(set(table["cca"]))]
    kept = per_run.set_index("key")[ccas].sum(axis=1)
    assert np.allclose(kept.loc[total.index], total)


def test_a_truncated_or_corrupt_table_is_a_data_error(tmp_path):
    import gzip

    src = next((data.DATA / "runs" / "two_flow").glob("*/queue.csv.gz")).read_bytes()
    cut = tmp_path / "queue.csv.gz"
    cut.write_bytes(src[: len(src) // 2])
    with pytest.raises(data.DataError, match="queue.csv.gz: unreadable"):
        data.load_table(cut, "queue")
    bad = tmp_path / "flows.csv"
    bad.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(data.DataError, match="flows.csv: unreadable"):
        data.load_table(bad, "flows")
    assert gzip.decompress(src)  # the original is whole


def _csv_rows(path) -> list[list[str]]:
    import csv
    import gzip
    import io

    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()
    return list(csv.reader(io.StringIO(text, newline="")))


def _stored_tables():
    """One stored run of every campaign (each of its tables) and every campaign table."""
    out = []
    for camp in sorted((data.DATA / "runs").glob("*")):
        run = next((d for d in sorted(camp.iterdir())
                    if d.is_dir() and not d.name.startswith((".", "_"))), None)
        out += [(run / f, kind) for kind, f in data.RUN_FILES.items()] if run else []
    return out + [(p, "campaign") for p in sorted(data.DATA.glob("*.csv"))]


@pytest.mark.parametrize("path,kind", _stored_tables(), ids=lambda v: getattr(v, "name", v))
def test_column_checks_read_every_kind_of_stored_table_as_the_rows_do(path, kind):
    """The column-at-a-time reading covers the stored tables (it does not hand them back to
    the line-by-line reading) and gives the same table, dtypes and bits."""
    rows = _csv_rows(path)
    fast = tables._columns(rows, data.SCHEMAS[kind])
    if len(rows) == 1:  # a campaign with no valid run yet: the line reader answers for it
        assert fast is None and tables._rows(path, kind).empty, path
        return
    assert fast is not None, path
    pd.testing.assert_frame_equal(fast, tables._rows(path, kind), check_exact=True)
    pd.testing.assert_frame_equal(data.load_table(path, kind), fast, check_exact=True)


SOCKETS_HEAD = ("t_s,flow,cca_requested,local_port,cca,cwnd,srtt_s,minrtt_s,bytes_acked,"
                "bytes_retrans,delivery_rate_bps,pacing_rate_bps,bbr_bw_bps,bbr_mrtt_s,"
                "pacing_gain,cwnd_gain,acked_rate_bps\n")
SOCKET_ROW = "{t},0,bbr,20001,{cca},{cwnd},0.03,0.02,{acked},1,8e6,9e6,{bw},0.02,1,2,{rate}\n"


def _sockets(rows: list[dict]) -> str:
    base = {"t": "0.5", "cca": "bbr", "cwnd": "48", "acked": "100", "bw": "9e6", "rate": "8e6"}
    return SOCKETS_HEAD + "".join(SOCKET_ROW.format(**{**base, "t": str(i / 2), **r})
                                  for i, r in enumerate(rows, start=1))


@pytest.mark.parametrize("rows,covered", [
    ([{}, {}], True),
    ([{"rate": ""}, {}], True),  # a nullable number partly empty: NaN
    ([{"acked": ""}, {"acked": "7"}], True),  # a nullable integer partly empty: floats
    ([{"bw": ""}, {"bw": ""}], True),  # a nullable column all empty: None
    ([{"cwnd": "3.0"}, {"cwnd": " 4"}], True),  # whole numbers as Python's float reads them
    ([{"bw": "1_000"}, {}], True),
    ([{"cca": ""}, {}], True),  # a nullable text partly empty
    ([], False),  # no rows
])
def test_column_checks_give_the_rows_table(tmp_path, rows, covered):
    path = tmp_path / "sockets.csv"
    path.write_text(_sockets(rows))
    fast = tables._columns(_csv_rows(path), data.SCHEMAS["sockets"])
    assert (fast is not None) == covered
    pd.testing.assert_frame_equal(data.load_table(path, "sockets"),
                                  tables._rows(path, "sockets"), check_exact=True)


@pytest.mark.parametrize("text,line", [
    (_sockets([{}, {"cwnd": "2.5"}]), 3),  # not a whole number
    (_sockets([{"rate": "nan"}]), 2),
    (_sockets([{"bw": "inf"}]), 2),
    (_sockets([{"cwnd": "-1"}]), 2),  # below the minimum
    (_sockets([{}, {"t": "x"}]), 3),
    (_sockets([{}, {}]).replace(",bbr,20001,", ",bbr,,", 1), 2),  # a required cell empty
    (_sockets([{}, {}]) + _sockets([{}]).splitlines(True)[1], 4),  # the same row twice
    (_sockets([{}]) + "1,2,3\n", 3),  # a short row
    (_sockets([{}, {}]).replace("\n0.5,", "\n\n0.5,"), 2),  # a blank line
    (_sockets([{}, {"cwnd": str(2 ** 63)}]), 3),  # beyond int64: no table can hold it
])
def test_a_table_the_column_checks_refuse_is_judged_line_by_line(tmp_path, text, line):
    """Whatever the column checks refuse gets the line-by-line reading's verdict: the same
    error naming the file and line, or (a value they do not cover) the same table."""
    path = tmp_path / "sockets.csv"
    path.write_text(text)
    assert tables._columns(_csv_rows(path), data.SCHEMAS["sockets"]) is None
    if line is None:
        pd.testing.assert_frame_equal(data.load_table(path, "sockets"),
                                      tables._rows(path, "sockets"), check_exact=True)
        return
    with pytest.raises(data.DataError) as rows_error:
        tables._rows(path, "sockets")
    assert f"sockets.csv:{line}:" in str(rows_error.value)
    with pytest.raises(data.DataError, match=re.escape(str(rows_error.value))):
        data.load_table(path, "sockets")


def test_the_distance_to_the_nearest_equilibrium_is_per_group_and_setting():
    observed = pd.DataFrame({"rtt_s": [0.04, 0.04, 0.005], "buffer_bdp": [2.0, 5.0, 2.0],
                             "equilibrium_bbr_flows": [3.0, 0.0, 7.0]}, index=[10, 11, 12])
    found = pd.DataFrame({"rtt_s": [0.04, 0.04, 0.04, 0.04 + 1e-12, 0.005],
                          "buffer_bdp": [2.0, 2.0, 2.0, 5.0, 2.0],
                          "series": ["a", "a", "b", "a", "b"],
                          "equilibrium_bbr_flows": [1.0, 4.0, 9.0, 6.0, 7.0]})
    d = measured_equilibria.distance_to_nearest(observed, found, on=["rtt_s", "buffer_bdp"],
                                                group="series", groups=["a", "b"])
    assert list(d.index) == [10, 11, 12] and list(d.columns) == ["a", "b"]
    assert d.loc[10].tolist() == [1.0, 6.0]  # nearest of a's {1, 4} to 3 is 4
    assert d.loc[11, "a"] == 6.0 and np.isnan(d.loc[11, "b"])  # b has none at 5 BDP
    assert np.isnan(d.loc[12, "a"]) and d.loc[12, "b"] == 0.0


def test_mixed_single_rtt_runs_are_the_stored_mixed_runs_at_one_rtt_without_load():
    from coexist.measured import runs as measured

    t = measured.mixed_single_rtt_runs()
    assert len(t) > 0 and set(t.source) == {"measured"}
    assert ((t.n_bbr > 0) & (t.n_bbr < t.n_flows)).all()
    np.testing.assert_allclose(t.bbr_fraction, t.n_bbr / t.n_flows)
    assert t.share.between(0, 1).all()
    assert "mixed_rtt" not in set(t.campaign) or t[t.campaign == "mixed_rtt"].empty
    # no Reno flow (the fluid-validation campaign runs Reno beside BBR at one RTT)
    tab = measured.campaign_table("fluid_validation")
    reno = set(tab[tab.cca == "reno"].key)
    assert reno and not set(t[t.campaign == "fluid_validation"].key) & reno


def test_goodput_excess_is_goodput_beyond_the_wires_payload():
    import pandas as pd

    from coexist.measured import validity

    runs = pd.DataFrame({"goodput_over_capacity": [1448 / 1514, 0.97, 0.90],
                         "utilisation": [1.0, 1.0, 0.95], "mean_packet_bytes": [1514.0] * 3})
    excess = validity.goodput_excess(runs)
    assert excess[0] == pytest.approx(0.0, abs=1e-12)
    assert excess[1] == pytest.approx(0.97 - 1448 / 1514)
    assert excess[2] == pytest.approx(0.90 - 0.95 * 1448 / 1514)
