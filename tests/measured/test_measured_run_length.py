"""The run-length study of the testbed: one long run read as its shorter prefixes, each
scored on its last 40 %, and the shortest length whose share has settled."""

import numpy as np
import pandas as pd
import pytest

from coexist.core.params import ParameterError
from coexist.measured import run_length as rl


def _series(bbr_rate, cubic_rate, seconds=1200):
    """A run's 1-s goodput series: BBR's bytes per second given by ``bbr_rate(t)``."""
    t = np.arange(seconds, dtype=float)
    rows = [pd.DataFrame({"flow": f, "cca": cca, "t_start_s": t, "t_end_s": t + 1.0,
                          "bytes": [rate(x) for x in t]})
            for f, (cca, rate) in enumerate((("cubic", cubic_rate), ("bbr", bbr_rate)))]
    return pd.concat(rows, ignore_index=True)


def test_each_prefix_is_scored_on_its_last_40_percent():
    # BBR sends 1 unit per second before 100 s and 3 after; CUBIC always 1
    s = rl.prefix_shares(_series(lambda t: 1.0 if t < 100 else 3.0, lambda t: 1.0))
    assert s["length_s"].tolist() == [120.0, 300.0, 600.0, 1200.0]
    assert s["scored_from_s"].tolist() == [72.0, 180.0, 360.0, 720.0]
    # 120 s: scored over [72, 120): 28 s at 1 and 20 s at 3 against 48 of CUBIC's
    assert s["bbr_share"].iloc[0] == pytest.approx((28 + 60) / (28 + 60 + 48))
    assert s["bbr_share"].iloc[1:].tolist() == pytest.approx([0.75, 0.75, 0.75])
    assert s["intervals"].tolist() == [48, 120, 240, 480]


def test_a_prefix_longer_than_the_run_is_refused():
    with pytest.raises(ParameterError, match="lengths_s"):
        rl.prefix_shares(_series(lambda t: 1.0, lambda t: 1.0, seconds=300))


def _prefixes(shares_by_repeat, buffer_bdp=30.0):
    rows = [{"capacity_mbps": 50.0, "rtt_ms": 40.0, "buffer_bdp": buffer_bdp, "repeat": r,
             "length_s": length, "bbr_share": v}
            for r, shares in enumerate(shares_by_repeat)
            for length, v in zip(rl.LENGTHS_S, shares, strict=True)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("shares, settled, before", [
    ([[0.10, 0.36, 0.37, 0.37]], 300.0, True),   # settled from 300 s
    ([[0.37, 0.30, 0.37, 0.37]], 600.0, True),   # 120 s agrees by chance; 300 s does not
    ([[0.50, 0.55, 0.60, 0.54]], 1200.0, False),  # nothing shorter agrees
    ([[0.10, 0.40, 0.36, 0.37], [0.30, 0.34, 0.38, 0.37]], 300.0, True),  # repeats' mean
])
def test_the_settled_length_is_where_every_longer_prefix_agrees(shares, settled, before):
    got = rl.settled_length(_prefixes(shares)).iloc[0]
    assert got["settled_s"] == settled and bool(got["before_longest"]) is before
    assert got["repeats"] == len(shares)


def test_the_longest_prefix_of_each_stored_run_is_its_stored_share():
    """Read back from the series, the whole run scored on its last 40 % gives the share
    the harness stored for it (to the bytes of the intervals straddling the edges)."""
    from coexist import data

    runs = rl.stored_runs()
    assert runs, "the run-length campaign has stored runs"
    table = pd.read_csv(data.DATA / "run_length.csv")
    for _, d in runs:
        series = data.load_table(d / data.RUN_FILES["series"], "series")
        whole = rl.prefix_shares(series, [1200.0])["bbr_share"].iloc[0]
        stored = table[(table["key"] == d.name) & (table["cca"] == "bbr")]["bbr_share"]
        assert whole == pytest.approx(float(stored.iloc[0]), abs=1e-3), d.name


def _study(rows, planned=2):
    """A study verdict at 50 Mbit/s, 40 ms: (buffer_bdp, repeats, settled_s, before_longest,
    longest_share) per buffer."""
    return pd.DataFrame([{"capacity_mbps": 50.0, "rtt_ms": 40.0, "buffer_bdp": b,
                          "planned": planned, "repeats": n, "settled_s": s,
                          "before_longest": ok, "longest_share": share}
                         for b, n, s, ok, share in rows])


def _runs(buffers, run_s, warmup_s=None, capacity_bps=50e6, rtt_s=0.04):
    run_s = np.broadcast_to(np.asarray(run_s, dtype=float), (len(buffers),))
    warm = (1 - rl.SCORED) * run_s if warmup_s is None else warmup_s
    return pd.DataFrame({"capacity_bps": capacity_bps, "rtt_s": rtt_s,
                         "buffer_bdp": buffers, "run_s": run_s, "warmup_s": warm})


STUDY = _study([(2.0, 2, 1200.0, False, 0.54), (10.0, 0, np.nan, False, np.nan),
                (30.0, 2, 300.0, True, 0.37), (100.0, 2, 600.0, True, 0.10),
                (200.0, 1, 300.0, True, 0.05)])


def _reader(shares):
    """A study that gives BBR ``shares[buffer](start, end)`` over a window."""
    return lambda cap, rtt, b, start, end: shares[b](start, end)


#: a study whose share has settled from 300 s at 30 BDP and from 600 s at 100 BDP, read
#: over any window ending at or after that (earlier windows give it less)
SETTLED = _reader({30.0: lambda a, e: 0.37 if e >= 300 else 0.20,
                   100.0: lambda a, e: 0.10 if e >= 600 else 0.04,
                   200.0: lambda a, e: 0.05})


def test_a_deep_run_counts_only_where_the_study_vouches_on_both_sides():
    got = rl.settle(_runs([1.0, 5.0, 30.0, 30.0, 50.0, 100.0], [120.0] * 4 + [600.0] * 2),
                    STUDY, read=SETTLED)
    # shallow runs are outside the question, whatever the study's 2-BDP verdict
    assert got["settled"].tolist()[:2] == [True, True]
    assert got["status"].tolist()[:2] == ["measured", "measured"]
    # 30 BDP read over 72-120 s gives 0.20 against 0.37: the 120-s runs do not count
    assert not got["settled"].iloc[2] and got["status"].iloc[2] == rl.NOT_SETTLED
    assert "give BBR 0.20, against 0.37" in got["reason"].iloc[2]
    # 50 BDP lies between 30 (300 s) and 100 (600 s): both sides are read, 600 s suffices
    assert got["needs_s"].iloc[4] == 600.0 and got["settled"].iloc[4]
    assert got["settled"].iloc[5]


def test_the_shallower_side_can_be_the_one_that_refuses():
    # at 50 BDP the 100-BDP side agrees over 360-600 s, the 30-BDP side does not
    read = _reader({30.0: lambda a, e: 0.30, 100.0: lambda a, e: 0.10})
    got = rl.settle(_runs([50.0], [600.0]), STUDY, read=read)
    assert not got["settled"].iloc[0] and "runs at 30 BDP give BBR 0.30" in got["reason"].iloc[0]


def test_a_run_scored_from_an_early_warm_up_is_read_over_that_window():
    # a 1,200-s run scored from 30 s takes in the early minutes: the study is read there
    read = _reader({30.0: lambda a, e: 0.37 if a >= 180 else 0.30,
                    100.0: lambda a, e: 0.10})
    late = rl.settle(_runs([30.0], [1200.0], warmup_s=720.0), STUDY, read=read)
    early = rl.settle(_runs([30.0], [1200.0], warmup_s=30.0), STUDY, read=read)
    assert late["settled"].iloc[0] and not early["settled"].iloc[0]
    assert "scored over 30-1200 s" in early["reason"].iloc[0]


def test_the_study_vouches_for_nothing_it_has_not_read_in_full():
    got = rl.settle(_runs([15.0, 150.0, 30.0], [1200.0] * 3, capacity_bps=100e6), STUDY,
                    read=SETTLED)
    assert not got["settled"].any()
    assert "did not measure 100 Mbit/s, 40 ms" in got["reason"].iloc[0]
    got = rl.settle(_runs([15.0, 250.0, 150.0], [1200.0] * 3), STUDY, read=SETTLED)
    # 15 BDP leans on 10 BDP, which has no run; 250 BDP is beyond the deepest buffer;
    # 150 BDP leans on 200 BDP, which has 1 of its 2 runs
    assert "0 of its 2 runs at 50 Mbit/s, 40 ms, 10 BDP" in got["reason"].iloc[0]
    assert "deepest buffer" in got["reason"].iloc[1]
    assert "1 of its 2 runs at 50 Mbit/s, 40 ms, 200 BDP" in got["reason"].iloc[2]
    assert not got["settled"].any()
    # a buffer whose share still moves at the longest read vouches for no length
    moving = _study([(30.0, 2, 1200.0, False, 0.37)])
    got = rl.settle(_runs([30.0], [1200.0]), moving, read=SETTLED)
    assert not got["settled"].iloc[0] and "still moves" in got["reason"].iloc[0]
    # nor for a run whose length or warm-up is unknown, nor a buffer that is
    got = rl.settle(_runs([30.0, np.nan], [np.nan, 1200.0]), STUDY, read=SETTLED)
    assert "window is not known" in got["reason"].iloc[0]
    assert not got["settled"].iloc[1]


def test_a_shallower_point_than_the_studys_shallowest_deep_buffer_leans_on_that_buffer():
    study = _study([(30.0, 2, 300.0, True, 0.37)])
    got = rl.settle(_runs([12.0], [600.0]), study, read=SETTLED)
    assert got["settled"].iloc[0] and got["needs_s"].iloc[0] == 300.0


def test_the_verdict_lists_every_planned_setting_and_reads_the_stored_runs():
    v = rl.verdict()
    grid = {(50.0, 2.0), (50.0, 10.0), (50.0, 30.0), (50.0, 100.0), (10.0, 2.0), (10.0, 8.0),
            (10.0, 32.0), (10.0, 64.0)}  # data/campaigns/run_length.yaml
    assert set(zip(v["capacity_mbps"], v["buffer_bdp"], strict=True)) == grid
    assert (v["planned"] == 2).all()
    stored = {(s["capacity_mbps"], s["buffer_bdp"]) for s, _ in rl.stored_runs()}
    assert {(c, b) for c, b, n in zip(v["capacity_mbps"], v["buffer_bdp"], v["repeats"],
                                      strict=True) if n > 0} == stored
    assert v.loc[v["repeats"] == 0, "settled_s"].isna().all()


def test_with_nothing_stored_the_verdict_vouches_for_nothing(tmp_path):
    import shutil

    from coexist import data

    (tmp_path / "campaigns").mkdir()
    shutil.copy(data.DATA / "campaigns" / "run_length.yaml", tmp_path / "campaigns")
    v = rl.verdict(data_dir=tmp_path)
    assert len(v) == 8 and (v["repeats"] == 0).all() and v["settled_s"].isna().all()
    got = rl.settle(_runs([30.0], [1200.0]), v, read=SETTLED)
    assert not got["settled"].iloc[0] and "0 of its 2 runs" in got["reason"].iloc[0]


def test_points_are_counted_once_per_buffer_from_the_longest_settled_runs():
    study = rl.verdict()
    pts = rl.settled_points(["two_flow", "two_flow_long"], 50e6, 0.04, study)
    assert set(pts["campaign"]) <= {"two_flow", "two_flow_long", "run_length"}
    assert pts.loc[pts["counted"], "settled"].all()
    assert not pts[pts["counted"]].duplicated("buffer_bdp").any()
    # every settled buffer has its counted point, from its longest settled runs
    settled = pts[pts["settled"]]
    assert set(pts.loc[pts["counted"], "buffer_bdp"]) == set(settled["buffer_bdp"])
    for _, g in settled.groupby("buffer_bdp"):
        assert g.loc[g["counted"], "run_s"].iloc[0] == g["run_s"].max()
    # the study's own runs are drawn only at deep buffers, shallow points are all settled
    assert (pts.loc[pts["campaign"] == "run_length", "buffer_bdp"] >= rl.DEEP_FROM_BDP).all()
    assert pts.loc[pts["buffer_bdp"] < rl.DEEP_FROM_BDP, "settled"].all()
    # a point not settled always says why
    assert (pts.loc[~pts["settled"], "reason"].str.len() > 0).all()


def test_an_equilibrium_is_as_settled_as_its_setting_window():
    from coexist.measured import runs as runs_mod

    mix = runs_mod.mix_runs(10)
    frame = mix.drop_duplicates(["capacity_bps", "rtt_s", "buffer_bdp"])[
        ["capacity_bps", "rtt_s", "buffer_bdp"]]
    got = rl.settle_settings(frame, mix, rl.verdict())
    assert len(got) == len(frame)
    assert (got["run_s"] == 120.0).all() and (got["warmup_s"] == 30.0).all()
    assert got.loc[got["buffer_bdp"] < rl.DEEP_FROM_BDP, "settled"].all()
    # no setting outside the study's capacities and RTT is vouched for
    outside = ~(np.isclose(got["rtt_s"], 0.04) & got["capacity_bps"].isin([10e6, 50e6]))
    assert not got.loc[outside & got["deep"], "settled"].any()


def test_a_page_names_each_point_it_does_not_count_and_why():
    pts = pd.DataFrame({"campaign": ["two_flow", "two_flow", "run_length", "deep_buffer"],
                        "run_s": [120.0, 120.0, 1200.0, 180.0],
                        "buffer_bdp": [5.0, 30.0, 30.0, 150.0],
                        "settled": [True, False, True, False],
                        "reason": ["", "runs of 120 s where the run-length study needs 300 s",
                                   "", "deeper than the run-length study's deepest buffer"]})
    assert rl.point_labels(pts, "measured") == [
        "measured", rl.NOT_SETTLED, rl.study_label(1200.0), rl.NOT_SETTLED]
    text = rl.not_settled_text(pts)
    assert text.startswith("The 120 or 180-s points at 30 BDP (runs of 120 s")
    assert "; at 150 BDP (deeper than" in text and text.endswith(f"are {rl.NOT_SETTLED}.")
    assert rl.not_settled_text(pts[pts["settled"]]) == ""


def test_the_harness_checks_read_each_long_run():
    runs = rl.stored_runs()
    h = rl.harness_checks(runs)
    assert len(h) == len(runs)
    # nothing can sample an RTT below the base RTT, and the sockets held every window
    assert (h["rtprop_min_ms"] >= h["rtt_ms"] - 0.05).all()
    assert (h["socket_headroom"] > 1).all()
    limit = 1 << 30  # coexist.testbed.topology.SOCKET_BUFFER_MAX
    largest = h[["cubic_cwnd_max_mb", "bbr_cwnd_max_mb"]].max(axis=1) * 1e6
    assert h["socket_headroom"].to_numpy() == pytest.approx((limit / largest).to_numpy())
    # every stored run passed the lateness gate, which the summary's p99.9 must show
    assert (h["lateness_p999_ms"] < 1.0).all()


def test_nothing_to_settle_gives_typed_empty_columns():
    got = rl.settle(_runs([], []), STUDY, read=SETTLED)
    assert got.empty and got["settled"].dtype == bool
    assert got[got["settled"]].empty  # selects rows, not columns
    pts = rl.settled_points(["two_flow"], 7e6, 0.013, rl.verdict())
    assert pts.empty and pts["counted"].dtype == bool and pts[pts["counted"]].empty


def test_a_window_the_study_cannot_read_is_refused_with_its_reason():
    nothing = _reader({30.0: lambda a, e: np.nan})
    got = rl.settle(_runs([30.0], [1200.0]), STUDY, read=nothing)
    assert not got["settled"].iloc[0] and "no goodput over" in got["reason"].iloc[0]
    assert np.isnan(got["needs_s"].iloc[0])
    # a window wholly after the study's runs is read as their longest read
    seen = []
    late = _reader({30.0: lambda a, e: seen.append((a, e)) or 0.37})
    rl.settle(_runs([30.0], [3000.0], warmup_s=1500.0), STUDY, read=late)
    assert seen == [(720.0, 1200.0)]


def test_runs_of_many_flows_are_settled_by_their_setting_over_their_own_window():
    """settle_runs scores each run over its campaign's window; the study (one CUBIC against
    one BBR) vouches for settings, so no deep run at a capacity it did not measure counts."""
    from coexist.measured import runs as runs_mod

    mix = runs_mod.mix_runs(10)
    got = rl.settle_runs(mix)
    assert len(got) == len(mix)
    assert (got["run_s"] == 120.0).all() and (got["warmup_s"] == 30.0).all()
    outside = ~(np.isclose(got["rtt_s"], 0.04) & got["capacity_bps"].isin([10e6, 50e6]))
    assert got.loc[outside & got["deep"]].shape[0] > 0, "the store has deep runs outside"
    assert not got.loc[outside & got["deep"], "settled"].any()
    assert got.loc[outside & got["deep"], "reason"].str.contains("did not measure").all()
    # the same runs of a campaign table (no key prefix) give the same verdicts
    flat = rl.settle_runs(rl.campaign_runs("multi_flow"))
    assert (flat["run_s"] > 0).all()
    assert not flat.loc[np.isclose(flat["capacity_bps"], 100e6) & flat["deep"],
                        "settled"].any()


def test_settle_runs_needs_each_runs_campaign():
    with pytest.raises(ValueError, match="campaign"):
        rl.settle_runs(_runs([30.0], [120.0]).assign(key="a"))


def test_deep_runs_of_many_flows_count_where_the_study_agrees_over_their_window():
    """With a study that has every run at 10, 30 and 100 BDP (50 Mbit/s, 40 ms), the deep
    10-flow runs there count where the study, read over their own window, gives its longest
    share, and none count where it gives another."""
    from coexist.measured import runs as runs_mod

    study = _study([(10.0, 2, 120.0, True, 0.40), (30.0, 2, 300.0, True, 0.37),
                    (100.0, 2, 600.0, True, 0.10)])
    longest = {10.0: 0.40, 30.0: 0.37, 100.0: 0.10}
    mix = runs_mod.mix_runs(10)
    here = runs_mod.at(mix, 50e6, 0.04)
    here = here[(here["buffer_bdp"] >= rl.DEEP_FROM_BDP) & (here["buffer_bdp"] <= 100.0)]
    assert len(here), "the store has deep 10-flow runs at 50 Mbit/s, 40 ms"
    agree = rl.settle_runs(here, study, read=lambda c, r, b, a, e: longest[b])
    assert agree["settled"].all() and (agree["status"] == "measured").all()
    # scored over 30-120 s, the runs lean on the 300-s and 600-s settled lengths
    assert (agree["needs_s"] >= 120.0).all()
    apart = rl.settle_runs(here, study, read=lambda c, r, b, a, e: longest[b] + 0.05)
    assert not apart["settled"].any()
    assert apart["reason"].str.contains("scored over 30-120 s").all()
    # the runs' own rule agrees with the settings' rule on the same runs
    settings = here.drop_duplicates(["capacity_bps", "rtt_s", "buffer_bdp"])[
        ["capacity_bps", "rtt_s", "buffer_bdp"]]
    by_setting = rl.settle_settings(settings, mix, rl.verdict())
    by_run = rl.settle_runs(here).drop_duplicates(["buffer_bdp"])
    assert (by_setting.set_index("buffer_bdp")["settled"].sort_index().tolist()
            == by_run.set_index("buffer_bdp")["settled"].sort_index().tolist())


def test_settings_with_no_stored_run_have_no_window_and_no_deep_verdict():
    from coexist.measured import runs as runs_mod

    frame = pd.DataFrame({"capacity_bps": [50e6, 50e6], "rtt_s": [0.04, 0.04],
                          "buffer_bdp": [2.0, 30.0]})
    got = rl.settle_settings(frame, runs_mod.mix_runs(10).iloc[:0], STUDY)
    assert got["settled"].tolist() == [True, False]
    assert got["reason"].iloc[1] == "the runs' scored window is not known"


def test_the_long_two_flow_runs_last_what_the_study_chooses_at_their_buffers():
    """two_flow_long re-measures two_flow's deep buffers at the study's length: one length
    for the whole campaign, the longest settled length of the study's buffers a point
    leans on (:func:`run_length.sides`, as :func:`run_length.settle` reads them), scored on
    the same part of the run as the study's reads. Where the study is not complete at such
    a buffer the length is what its stored runs give, and the pages mark the points not
    settled until it is (:func:`run_length.settle`)."""
    from coexist import data
    from coexist.testbed import campaign as campaign_mod

    camp = campaign_mod.load(data.DATA / "campaigns" / "two_flow_long.yaml")
    study = rl.verdict()
    needed_s = []
    for point in camp.points:
        exp = point.exp
        same = study[np.isclose(study["capacity_mbps"], exp.capacity_bps / 1e6)
                     & np.isclose(study["rtt_ms"], exp.rtt_s * 1e3)]
        b = float(exp.buffer_bdp)
        assert b >= rl.DEEP_FROM_BDP
        chosen = same[same["buffer_bdp"].isin(rl.sides(same["buffer_bdp"], b))]
        assert len(chosen) in (1, 2)
        assert (chosen["before_longest"] == True).all(), (b, chosen)  # noqa: E712 (NaN fails)
        needed_s.append(chosen["settled_s"].max())
        assert exp.warmup_s == pytest.approx((1 - rl.SCORED) * exp.duration_s)
    assert {point.exp.duration_s for point in camp.points} == {max(needed_s)}


def test_sides_are_the_nearest_study_buffers_around_a_point():
    assert rl.sides([2, 10, 30, 100], 15) == [10.0, 30.0]
    assert rl.sides([2, 10, 30, 100], 10) == [10.0]
    assert rl.sides([2, 10, 30, 100], 1) == [2.0]
    with pytest.raises(ValueError, match="buffer_bdp = 150 is deeper"):
        rl.sides([2, 10, 30, 100], 150)


@pytest.mark.parametrize(("figure", "prefix"), [("M-F1", "fluid_"), ("M-F3", "fluid_"),
                                               ("M-F12", "fluid_"), ("M-F11", "two_flow_"),
                                               ("S-Options", "")])
def test_two_flow_pages_run_the_fluid_model_as_the_study_reads_its_longest_runs(figure, prefix):
    """The two-flow pages set the fluid model beside measurements the run-length study
    settles, whose longest runs it scores on their last 40 %: the model runs by default as
    long as those runs, scored on the same part, and the page can still check it against a
    run twice as long (which its spec must accept)."""
    from coexist.book import ledger

    entry = ledger.entry(figure)
    defaults = ledger.notebook_defaults(entry.path)
    assert defaults[f"{prefix}duration_s"] == max(rl.LENGTHS_S)
    assert defaults[f"{prefix}warmup_s"] == pytest.approx((1 - rl.SCORED) * max(rl.LENGTHS_S))
    spec = {p.name: p for p in entry.spec.params}
    assert spec[f"{prefix}duration_s"].high >= defaults[f"{prefix}duration_s"]
    # the longest run the spec accepts, doubled, is a run the solver accepts
    from coexist.fluid.studies import equilibria

    longest = 2 * spec[f"{prefix}duration_s"].high
    cfg, _ = equilibria.mix_config((1,), 2, [0.04], 2.0, 50e6, "bbr1", longest, 5e-5, True,
                                   False)
    assert cfg.duration_s == longest


def test_first_and_longest_text_names_the_part_of_each_read_it_scores():
    prefixes = pd.DataFrame({"capacity_mbps": [50.0] * 4, "buffer_bdp": [30.0] * 4,
                             "length_s": [120.0, 1200.0, 120.0, 1200.0],
                             "bbr_share": [0.16, 0.36, 0.18, 0.38]})
    assert rl.first_and_longest_text(prefixes) == (
        "0.17 over 72-120 s and 0.37 over 720-1,200 s at 50 Mbit/s, 30 BDP")
    # the windows follow the share scored, and one length reads once
    assert rl.first_and_longest_text(prefixes, scored=0.5).startswith(
        "0.17 over 60-120 s and 0.37 over 600-1,200 s")
    one = prefixes[prefixes["length_s"] == 1200.0]
    assert rl.first_and_longest_text(one) == "0.37 over 720-1,200 s at 50 Mbit/s, 30 BDP"


def test_status_text_settles_a_setting_only_with_every_planned_run_and_a_settled_share():
    assert rl.status_text(1, 2, True, 120.0) == "not settled: 1 of its 2 runs stored"
    assert rl.status_text(2, 2, False, 1200.0) == "not settled: still moves at its longest read"
    assert rl.status_text(2, 2, True, 300.0) == "settled from 300 s"


def test_planned_repeats_are_the_campaign_points_per_setting():
    planned = rl.planned_repeats()
    assert list(planned.columns) == ["capacity_mbps", "rtt_ms", "buffer_bdp", "planned"]
    # the study plans 4 buffers at each of 2 capacities, 2 repeats each (its campaign file)
    assert len(planned) == 8 and set(planned["planned"]) == {2}
    assert rl.verdict()["planned"].tolist() == planned.sort_values(
        ["capacity_mbps", "rtt_ms", "buffer_bdp"])["planned"].tolist()
