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


def _study(rows):
    """A study verdict: (buffer_bdp, repeats, settled_s, before_longest) at 50 Mbit/s, 40 ms."""
    return pd.DataFrame([{"capacity_mbps": 50.0, "rtt_ms": 40.0, "buffer_bdp": b,
                          "planned": 2, "repeats": n, "settled_s": s, "before_longest": ok}
                         for b, n, s, ok in rows])


def _runs(buffers, run_s, capacity_bps=50e6, rtt_s=0.04):
    return pd.DataFrame({"capacity_bps": capacity_bps, "rtt_s": rtt_s,
                         "buffer_bdp": buffers, "run_s": run_s})


STUDY = _study([(2.0, 1, 1200.0, False), (10.0, 0, np.nan, False), (30.0, 2, 300.0, True),
                (100.0, 1, 600.0, True)])


def test_a_deep_run_counts_only_as_long_as_the_study_asks_on_both_sides():
    got = rl.settle(_runs([1.0, 5.0, 30.0, 30.0, 50.0, 100.0], [120.0] * 4 + [600.0] * 2),
                    STUDY)
    # shallow runs are outside the question, whatever the study's 2-BDP verdict
    assert got["settled"].tolist()[:2] == [True, True]
    assert got["status"].tolist()[:2] == ["measured", "measured"]
    # 30 BDP needs 300 s: the 120-s runs are too short
    assert not got["settled"].iloc[2] and got["status"].iloc[2] == rl.NOT_SETTLED
    assert "needs 300 s" in got["reason"].iloc[2]
    # 50 BDP lies between 30 (300 s) and 100 (600 s): the longer, 600 s, which it has
    assert got["needs_s"].iloc[4] == 600.0 and got["settled"].iloc[4]
    assert got["settled"].iloc[5]


def test_the_study_vouches_for_nothing_it_has_not_read():
    got = rl.settle(_runs([15.0, 150.0, 30.0], [1200.0] * 3, capacity_bps=100e6), STUDY)
    assert not got["settled"].any()
    assert "did not measure 100 Mbit/s, 40 ms" in got["reason"].iloc[0]
    got = rl.settle(_runs([15.0, 150.0], [1200.0, 1200.0]), STUDY)
    # 15 BDP leans on 10 BDP, which has no run; 150 BDP is beyond the deepest buffer
    assert "no run at 50 Mbit/s, 40 ms, 10 BDP" in got["reason"].iloc[0]
    assert "deepest buffer" in got["reason"].iloc[1]
    assert got["needs_s"].isna().all() and not got["settled"].any()
    # a buffer whose share still moves at the longest read vouches for no length
    moving = _study([(30.0, 1, 1200.0, False)])
    got = rl.settle(_runs([30.0], [1200.0]), moving)
    assert not got["settled"].iloc[0] and "still moves" in got["reason"].iloc[0]


def test_the_verdict_lists_every_planned_setting_and_reads_the_stored_runs():
    v = rl.verdict()
    assert len(v) == 8 and (v["planned"] == 2).all()
    stored = {(s["capacity_mbps"], s["buffer_bdp"]) for s, _ in rl.stored_runs()}
    assert {(c, b) for c, b, n in zip(v["capacity_mbps"], v["buffer_bdp"], v["repeats"],
                                      strict=True) if n > 0} == stored
    assert v.loc[v["repeats"] == 0, "settled_s"].isna().all()


def test_points_are_counted_from_the_longest_settled_runs():
    study = rl.verdict()
    pts = rl.settled_points(["two_flow"], 50e6, 0.04, study)
    assert set(pts["campaign"]) <= {"two_flow", "run_length"}
    # every counted point is settled, and at most one is counted per buffer
    assert pts.loc[pts["counted"], "settled"].all()
    assert not pts[pts["counted"]].duplicated("buffer_bdp").any()
    # the study's own runs are drawn only at deep buffers
    assert (pts.loc[pts["campaign"] == "run_length", "buffer_bdp"] >= rl.DEEP_FROM_BDP).all()
    # every two-flow point from 10 BDP on is read against the study, with a reason if not
    deep = pts[(pts["campaign"] == "two_flow") & (pts["buffer_bdp"] >= rl.DEEP_FROM_BDP)]
    assert (deep["settled"] | (deep["reason"].str.len() > 0)).all()


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
