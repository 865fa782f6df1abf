"""The comparison of models with measurements, as a reader's table."""

import numpy as np
import pandas as pd
import pytest

from coexist.measured import comparison


def test_the_error_table_puts_each_model_in_a_row_and_each_range_in_a_column():
    points = pd.DataFrame({"buffer_bdp": [1.0, 1.5, 3.0, 10.0], "mean": [0.5, 0.4, 0.3, 0.2]})
    acc = comparison.error_by_range(points, {
        "m": np.array([np.nan, 0.5, 0.2, 0.2]), "n": np.array([0.6, 0.4, 0.3, 0.3])})
    table = comparison.error_table(acc)
    assert list(table["model"]) == ["m", "n"]
    assert list(table.columns[1:]) == ["1-2 BDP (2 points)", "2-5 BDP (1 point)",
                                       "5-30 BDP (1 point)"]
    assert table.iloc[0, 1] == "0.100 (+0.100) on 1 of 2"  # 1 BDP is outside m's domain
    assert table.iloc[1, 1] == "0.050 (+0.050)"
    assert table.iloc[0, 2] == "0.100 (-0.100)"


def test_a_measurement_is_inside_the_band_between_the_multi_flow_bounds():
    """Eqs. 21-24: at 3 BDP with 5 + 5 flows the band of BBR's per-flow goodput runs between
    the synchronised and de-synchronised bounds; a value on a bound counts as inside."""
    from coexist.closed_form import mishra

    cap = 100e6
    sync, desync = (float(mishra.multi_flow(np.array([3.0]), 5, 5, capacity_bps=cap,
                                            synchronised=s).bbr_per_flow_bps[0])
                    for s in (True, False))
    lo, hi = sorted((sync, desync))
    assert lo < hi
    got = comparison.inside_multi_flow_band(
        [3.0, 3.0, 3.0, 3.0, 1.0], [5] * 5, ["BBR"] * 5,
        [(lo + hi) / 2, lo, hi * 1.01, lo * 0.99, (lo + hi) / 2], capacity_bps=cap)
    assert got[:4].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert np.isnan(got[4])  # at 1 BDP the closed form has no answer


def test_the_band_of_a_cubic_flow_is_the_cubic_bounds():
    from coexist.closed_form import mishra

    cap = 50e6
    b = [(float(mishra.multi_flow(np.array([10.0]), 2, 2, capacity_bps=cap,
                                  synchronised=s).cubic_per_flow_bps[0])) for s in (True, False)]
    mid = sum(b) / 2
    assert comparison.inside_multi_flow_band([10.0], [2], ["CUBIC"], [mid],
                                             capacity_bps=cap).tolist() == [1.0]
    with pytest.raises(ValueError, match="cca = 'bbr'"):
        comparison.inside_multi_flow_band([10.0], [2], ["bbr"], [mid], capacity_bps=cap)


def test_two_flow_predictions_per_model_at_the_measured_buffers():
    """Each model's BBR share at the measured points: the closed form only above 1 BDP
    (its domain), Ware et al.'s where eq. (2) stays in [0, 1], the fluid model where it
    was run."""
    from coexist.closed_form import mishra, ware

    points = pd.DataFrame({"buffer_bdp": [0.5, 2.0, 10.0]})
    fluid = pd.DataFrame({"model": ["a", "a", "b"], "buffer_bdp": [0.5, 2.0, 10.0],
                          "bbr_share": [0.6, 0.4, 0.1]})
    kw = dict(capacity_bps=50e6, rtt_s=0.04, duration_s=60.0, packet_bytes=1500)
    got = comparison.two_flow_predictions(points, fluid, ["a", "b"], **kw)
    assert list(got) == ["Mishra et al.", "Ware et al.", "a", "b"]
    assert np.isnan(got["Mishra et al."][0])
    assert got["Mishra et al."][1:].tolist() == mishra.bbr_share(np.array([2.0, 10.0])).tolist()
    np.testing.assert_array_equal(got["Ware et al."], ware.bbr_share(
        np.array([0.5, 2.0, 10.0]), outside="nan", **kw))
    np.testing.assert_array_equal(got["a"], [0.6, 0.4, np.nan])
    np.testing.assert_array_equal(got["b"], [np.nan, np.nan, 0.1])


def test_holds_from_the_smallest_buffer_after_which_it_always_holds():
    b = np.array([30.0, 2.0, 10.0, 5.0])
    assert comparison.holds_from(b, np.array([True, False, True, True])) == 5.0
    assert comparison.holds_from(b, np.array([False, True, True, True])) is None
    assert comparison.holds_from(b, np.array([True, True, True, True])) == 2.0


def test_span_in_band():
    t = pd.DataFrame({"v": [0.1, 0.2, 0.4, None]}, index=[1.0, 5.0, 20.0, 30.0])
    assert comparison.span_in_band(t, "v", 0, 10) == "0.10–0.20"
    assert comparison.span_in_band(t, "v", 15, 50, scale=100.0, fmt="{:.0f}") == "40"
    assert comparison.span_in_band(t, "v", 100, 1e9) == "–"


def test_multi_flow_predictions_per_model_at_the_measured_buffers():
    from coexist.closed_form import mishra, ware

    points = pd.DataFrame({"buffer_bdp": [1.0, 5.0]})
    fluid = pd.DataFrame({"series": ["f"] * 4 + ["g"] * 2, "flows_per_cca": [5] * 6,
                          "cca": ["BBR", "CUBIC"] * 3, "buffer_bdp": [1.0, 1.0, 5.0, 5.0,
                                                                      5.0, 5.0],
                          "per_flow_mbps": [6.0, 4.0, 3.0, 7.0, 1.0, 9.0]})
    kw = dict(capacity_bps=100e6, rtt_s=0.04, duration_s=120.0, packet_bytes=1500)
    got = comparison.multi_flow_predictions(points, 5, fluid, ["f", "g"], **kw)
    assert list(got) == ["Mishra et al. (sync)", "Mishra et al. (desync)", "Ware et al.",
                         "f", "g"]
    for bound, sync in (("sync", True), ("desync", False)):
        assert np.isnan(got[f"Mishra et al. ({bound})"][0])
        assert got[f"Mishra et al. ({bound})"][1] == mishra.aggregate_bbr_share(
            np.array([5.0]), 5, 5, synchronised=sync)[0]
    np.testing.assert_allclose(got["Ware et al."], 5 * ware.per_flow_bbr_bps(
        np.array([1.0, 5.0]), n_bbr=5, outside="nan", **kw) / 100e6)
    np.testing.assert_allclose(got["f"], [0.6, 0.3])       # BBR per flow over the sum
    np.testing.assert_allclose(got["g"], [np.nan, 0.1])


def test_longer_run_moves_pairs_each_setting_with_its_longer_run():
    runs = pd.DataFrame({"model": ["a", "a", "b"], "buffer_bdp": [2.0, 10.0, 2.0],
                         "bbr_share": [0.30, 0.01, 0.70]})
    longer = pd.DataFrame({"model": ["a", "b", "a"], "buffer_bdp": [10.0, 2.0, 2.0],
                           "bbr_share": [0.48, 0.69, 0.31]})
    moves = comparison.longer_run_moves(runs, longer, ["model", "buffer_bdp"])
    assert moves["longer"].tolist() == [0.31, 0.48, 0.69]
    assert moves["move"].to_numpy() == pytest.approx([0.01, 0.47, 0.01])
    # a setting without its longer run is NaN, never dropped
    part = comparison.longer_run_moves(runs, longer.iloc[:1], ["model", "buffer_bdp"])
    assert len(part) == 3 and part["move"].isna().sum() == 2
    # a setting listed twice (a reader's buffer list may repeat one) counts once ...
    twice = comparison.longer_run_moves(pd.concat([runs, runs]), longer, ["model", "buffer_bdp"])
    assert twice.equals(moves)
    # ... but two different values for one setting are refused
    other = runs.assign(bbr_share=runs["bbr_share"] + 0.1)
    with pytest.raises(ValueError, match="two different values"):
        comparison.longer_run_moves(pd.concat([runs, other]), longer, ["model", "buffer_bdp"])


def test_settled_model_leaves_out_only_the_runs_that_move_beyond_the_tolerance():
    runs = pd.DataFrame({"model": ["a", "a", "b", "b"], "buffer_bdp": [2.0, 10.0, 2.0, 2.0],
                         "bbr_share": [0.30, 0.01, 0.70, 0.70], "other": [1, 2, 3, 4]})
    moves = pd.DataFrame({"model": ["a", "a", "b"], "buffer_bdp": [2.0, 10.0, 2.0],
                          "move": [0.01, 0.47, np.nan]})
    out = comparison.settled_model(runs, moves, ["model", "buffer_bdp"], 0.02)
    assert out["bbr_share"].isna().tolist() == [False, True, False, False]
    assert out["other"].tolist() == [1, 2, 3, 4] and len(out) == len(runs)
    assert runs["bbr_share"].notna().all()  # the caller's table is left alone
    # a move exactly at the tolerance is settled
    edge = comparison.settled_model(runs, moves.assign(move=0.02), ["model", "buffer_bdp"], 0.02)
    assert edge["bbr_share"].notna().all()


def test_longer_run_text_names_the_largest_move_and_every_run_beyond_the_tolerance():
    moves = pd.DataFrame({"model": ["a", "a", "b"], "buffer_bdp": [2.0, 10.0, 2.0],
                          "bbr_share": [0.30, 0.01, 0.70], "longer": [0.31, 0.48, 0.69],
                          "move": [0.01, 0.47, 0.01]})
    text = comparison.longer_run_text(moves, 0.02, duration_s=1200.0, warmup_s=720.0)
    assert text == ("In runs twice as long (2,400 s, averaged after 1,440 s), the fluid "
                    "model's BBR share moves by at most 0.470 (10 BDP, a), the only one of "
                    "its 3 runs to move by more than 0.02: drawn, but left out of the errors "
                    "below.")
    two = comparison.longer_run_text(moves.assign(move=[0.03, 0.47, 0.01]), 0.02,
                                     duration_s=1200.0, warmup_s=720.0)
    assert "2 of its 3 runs move by more than 0.02 (2 BDP, a: 0.030; 10 BDP, a: 0.470)" in two
    assert two.endswith("0.470): drawn, but left out of the errors below.")
    # a page that does something else with them says what
    own = comparison.longer_run_text(moves, 0.02, duration_s=1200.0, warmup_s=720.0,
                                     left_out="their settings are left out")
    assert own.endswith("to move by more than 0.02: their settings are left out.")
    many = pd.DataFrame({"setting": ["x", "x", "y", "y"], "model": ["a", "a", "a", "b"],
                         "buffer_bdp": [3.0, 15.0, 5.0, 20.0], "move": [0.03, 0.05, 0.1, 0.04]})
    text = comparison.longer_run_text(many, 0.02, duration_s=1200.0, warmup_s=720.0,
                                      where=("setting", "buffer_bdp", "model"))
    assert "at most 0.100 (y, 5 BDP, a)" in text
    assert "4 of its 4 runs move by more than 0.02 (a: 3 runs between 3 and 15 BDP; b: 1 " \
           "run at 20 BDP)" in text
    calm = comparison.longer_run_text(moves.iloc[[0, 2]], 0.02, duration_s=120.0,
                                      warmup_s=30.0)
    assert calm.endswith("every run of the figure is within 0.02 of its longer run.")
    none = comparison.longer_run_text(moves.assign(move=np.nan), 0.02, duration_s=120.0,
                                      warmup_s=30.0)
    assert "not checked" in none


def test_longer_run_report_glues_the_text_and_claims_the_largest_move_and_the_count(
        tmp_path, monkeypatch):
    """The two-flow pages' convergence check in one call: the claims follow the moves (the
    tolerance is the run-length study's), and a page whose runs have no longer run says the
    largest move is not available rather than failing on a NaN."""
    from coexist.book import claims, figures
    from coexist.book.figures import page
    from coexist.measured import run_length

    tol = run_length.TOLERANCE
    moves = pd.DataFrame({"model": ["a", "a", "b"], "buffer_bdp": [2.0, 10.0, 2.0],
                          "move": [tol / 2, tol + 0.3, tol + 0.01]})
    glued = {}
    monkeypatch.setattr(page, "glue_sentence", lambda name, text: glued.update({name: text}))
    figures.longer_run_report("T-X", "tx", moves, duration_s=1200.0, warmup_s=720.0,
                              left_out="their points are left out", out_dir=str(tmp_path))
    assert glued["tx_fluid_length"] == comparison.longer_run_text(
        moves, tol, duration_s=1200.0, warmup_s=720.0, left_out="their points are left out")
    assert glued["tx_fluid_length"].endswith(": their points are left out.")
    made = claims.read(tmp_path / f"T-X{claims.SUFFIX}")
    assert made["tx_fluid_move_max"].value == pytest.approx(tol + 0.3)
    assert made["tx_fluid_moved"].value == 2
    figures.longer_run_report("T-Y", "ty", moves.assign(move=np.nan), duration_s=120.0,
                              warmup_s=30.0, out_dir=str(tmp_path))
    made = claims.read(tmp_path / f"T-Y{claims.SUFFIX}")
    assert made["ty_fluid_move_max"].text == claims.NOT_AVAILABLE
    assert made["ty_fluid_moved"].value == 0


def test_settled_everywhere_keeps_a_point_only_where_every_version_settled():
    scored = pd.DataFrame({"buffer_bdp": [2.0, 2.0, 5.0, 5.0, 5.0, 7.0],
                           "reading": ["a", "a", "a", "a", "b", "b"],
                           "version": ["x", "y", "x", "y", "x", "x"],
                           "bbr_share": [0.3, 0.4, 0.2, np.nan, 0.1, np.nan]})
    mask = comparison.settled_everywhere(scored, ["buffer_bdp", "reading"])
    # 5 BDP in reading a: version y did not settle, so x is not scored there either; the
    # same buffer in reading b is a point of its own
    assert mask.tolist() == [True, True, False, False, True, False]
    assert mask.index.equals(scored.index)
    assert comparison.settled_everywhere(scored.iloc[:0], ["buffer_bdp"]).tolist() == []
