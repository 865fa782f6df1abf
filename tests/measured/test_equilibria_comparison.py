"""Comparing equilibrium sets: measured against the fluid model and the closed form
(M-F11), BBRv1's against BBRv2's."""

import math

import numpy as np
import pandas as pd
import pytest

from coexist.closed_form import nash
from coexist.measured import equilibria


def test_the_closed_form_region_in_whole_flows_and_none_at_or_below_one_bdp():
    assert equilibria.region_in_whole_flows(1.0, 10) is None
    assert equilibria.region_in_whole_flows(0.5, 10) is None
    lo, hi = equilibria.region_in_whole_flows(5.0, 10)
    region = nash.predicted_region(np.array([5.0]), 10)
    assert 0 <= lo <= hi <= 10
    # whole flows around the eq. (25) band: no further than one flow from its edges
    assert region["bbr_flows_sync"][0] - 1 <= lo <= region["bbr_flows_sync"][0] + 1
    assert region["bbr_flows_desync"][0] - 1 <= hi <= region["bbr_flows_desync"][0] + 1


@pytest.mark.parametrize("flows, expected", [(2, 1.0), (3, 0.0), (5, 0.0), (6, 0.0),
                                             (8, 2.0)])
def test_distance_to_a_region_is_zero_inside_and_counts_flows_outside(flows, expected):
    assert equilibria.distance_to_region(flows, (3, 6)) == expected


def test_distance_to_no_region_is_nan():
    assert math.isnan(equilibria.distance_to_region(4, None))


FOUND = pd.DataFrame({
    "variant": ["a", "a", "b", "b", "a", "b"],
    "rtt_ms": [40.0, 40.0, 40.0, 40.0, 5.0, 5.0],
    "buffer_bdp": [2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
    "bbr_flows": [1, 6, 4, 5, 3, 7],
})


def test_nearest_equilibrium_distances_read_each_variant_at_the_same_setting():
    observed = pd.DataFrame({"rtt_ms": [40.0, 5.0, 40.0], "buffer_bdp": [2.0, 2.0, 0.5],
                             "equilibrium_bbr_flows": [2.0, 3.0, 4.0]})
    d = equilibria.nearest_equilibrium_distances(observed, FOUND, 10, ["a", "b"],
                                                 determined_only=False)
    assert list(d.columns) == ["rtt_ms", "buffer_bdp", "measured", "a", "b", "to closed form"]
    assert d["a"].tolist()[:2] == [1.0, 0.0]          # nearest of {1, 6}; of {3}
    assert d["b"].tolist()[:2] == [2.0, 4.0]          # nearest of {4, 5}; of {7}
    assert math.isnan(d["a"][2]) and math.isnan(d["to closed form"][2])  # none at 0.5 BDP
    region = equilibria.region_in_whole_flows(2.0, 10)
    assert d["to closed form"][0] == equilibria.distance_to_region(2.0, region)


def test_nearest_equilibrium_distances_of_no_observation_is_an_empty_table():
    empty = pd.DataFrame(columns=["rtt_ms", "buffer_bdp", "equilibrium_bbr_flows"])
    d = equilibria.nearest_equilibrium_distances(empty, FOUND, 10, ["a"])
    assert d.empty and list(d.columns) == ["rtt_ms", "buffer_bdp", "measured", "a",
                                           "to closed form"]


def test_compare_sets_counts_below_above_and_overlapping_settings():
    found = pd.concat([FOUND, pd.DataFrame({"variant": ["a", "b", "a", "a", "a", "b"],
                                            "rtt_ms": [80.0, 80.0, 10.0, 20.0, 20.0, 20.0],
                                            "buffer_bdp": [2.0] * 6,
                                            "bbr_flows": [5, 2, 1, 3, 4, 4]})])
    # 20 ms: b's {4} within a's {3, 4}: overlap; 5 ms: {7} above {3}; 80 ms: {2} below {5};
    # 10 ms: only a has one; 40 ms: a's {1, 6} spans six flow counts: undetermined
    assert equilibria.compare_sets(found, "a", "b", by=["rtt_ms", "buffer_bdp"]) == {
        "fewer": 1, "more": 1, "overlap": 1, "both": 3, "undetermined": 1, "identical": 0,
        "all_cubic": 0}
    # the same sets, and both all-CUBIC, are overlaps the comparison cannot tell apart
    same = pd.DataFrame({"variant": ["a", "b", "a", "b"], "rtt_ms": [5.0, 5.0, 20.0, 20.0],
                         "buffer_bdp": [9.0] * 4, "bbr_flows": [0, 0, 3, 3]})
    got = equilibria.compare_sets(same, "a", "b", by=["rtt_ms", "buffer_bdp"])
    assert (got["overlap"], got["identical"], got["all_cubic"]) == (2, 2, 1)


def test_firmness_in_words():
    observed = pd.DataFrame({"runs_per_mix": [None, 1, 2, 3, 2],
                             "each_run": [None, None, True, False, True],
                             "clear": [None, None, True, None, False]}, dtype=object)
    F = equilibria.FIRMNESS
    assert equilibria.firmness_labels(observed) == [None, F[3], F[0], F[2], F[1]]
    assert len(set(F)) == 4


def test_campaigns_by_setting_joins_each_settings_campaigns_once():
    per_run = pd.DataFrame({"capacity_bps": [1e7] * 3 + [5e7], "rtt_s": [0.04] * 4,
                            "buffer_bdp": [2.0] * 4,
                            "campaign": ["mix_sweep", "equilibrium", "mix_sweep", "equilibrium"]})
    got = equilibria.campaigns_by_setting(per_run)
    assert got["measured_in"].tolist() == ["equilibrium + mix_sweep", "equilibrium"]


def test_moved_by_repeats_compares_first_runs_with_all_runs():
    """On the bundled runs: with only each mix's first run kept, nothing can move; with all
    runs, the settings reported are exactly those whose equilibria from first runs alone,
    computed here setting by setting, differ from those of all runs."""
    from coexist.measured import runs as measured

    runs = measured.mix_runs(10)
    settings = runs[equilibria.SETTING].drop_duplicates()
    ordered = equilibria.run_order(runs)
    first_only = ordered.query("draw == 0").drop(columns="draw")
    assert equilibria.moved_by_repeats(
        first_only, equilibria.observed_equilibria(first_only, 10), settings, 10) == []
    observed = equilibria.observed_equilibria(runs, 10)
    expected = []
    for key, part in runs.groupby(equilibria.SETTING):
        alone = equilibria.observed_equilibria(
            ordered.merge(part[equilibria.SETTING].drop_duplicates()).query("draw == 0"), 10)
        every = equilibria.observed_equilibria(part, 10)
        before = [int(v) for v in alone["equilibrium_bbr_flows"].dropna()]
        after = [int(v) for v in every["equilibrium_bbr_flows"].dropna()]
        if before != after:
            expected.append((key, before, after))
    lines = equilibria.moved_by_repeats(runs, observed, settings, 10)
    assert len(lines) == len(expected)
    for line, (key, before, after) in zip(lines, expected, strict=True):
        assert line.endswith(f"first runs {before}, all runs {after}")
        assert line.startswith(f"{key[0] / 1e6:g} Mbit/s, {key[1] * 1e3:g} ms")


def test_a_set_spanning_more_than_two_flow_counts_is_undetermined():
    assert equilibria.set_span([]) == 0
    assert equilibria.set_span([5.0, 6.0]) == 2
    assert equilibria.set_span([1, 5, 6, 9, 10]) == 10
    widths = equilibria.set_widths(FOUND, ["variant", "rtt_ms"])
    assert widths.set_index(["variant", "rtt_ms"])["span"].to_dict() == {
        ("a", 5.0): 1, ("a", 40.0): 6, ("b", 5.0): 1, ("b", 40.0): 2}
    assert widths.set_index(["variant", "rtt_ms"])["determined"].to_dict() == {
        ("a", 5.0): True, ("a", 40.0): False, ("b", 5.0): True, ("b", 40.0): True}


def test_undetermined_sets_are_neither_compared_nor_measured_against():
    # 40 ms: a's {1, 6} spans 6 flow counts, so the setting is undetermined, not "overlap"
    got = equilibria.compare_sets(FOUND, "a", "b", by=["rtt_ms", "buffer_bdp"])
    assert got == {"fewer": 0, "more": 1, "overlap": 0, "both": 1, "undetermined": 1,
                   "identical": 0, "all_cubic": 0}
    observed = pd.DataFrame({"rtt_ms": [40.0], "buffer_bdp": [2.0],
                             "equilibrium_bbr_flows": [2.0]})
    d = equilibria.nearest_equilibrium_distances(observed, FOUND, 10, ["a", "b"])
    assert math.isnan(d["a"][0]) and d["b"][0] == 2.0
    d = equilibria.nearest_equilibrium_distances(observed, FOUND, 10, ["a"],
                                                 determined_only=False)
    assert d["a"][0] == 1.0


def test_distance_to_nearest_can_leave_out_undetermined_sets():
    observed = pd.DataFrame({"rtt_ms": [40.0], "buffer_bdp": [2.0],
                             "equilibrium_bbr_flows": [2.0]})
    kw = dict(on=["rtt_ms", "buffer_bdp"], group="variant", groups=["a", "b"],
              found_value="bbr_flows")
    every = equilibria.distance_to_nearest(observed, FOUND, **kw)
    assert every.loc[0].tolist() == [1.0, 2.0]             # a's {1, 6}: 1 flow away
    determined = equilibria.distance_to_nearest(observed, FOUND, determined_only=True, **kw)
    assert math.isnan(determined.loc[0, "a"]) and determined.loc[0, "b"] == 2.0


def _grouped(rows):
    """Equilibrium rows of RTT groups: (buffer, mix tuple)."""
    return pd.DataFrame({"buffer_bdp": [b for b, _ in rows], "mix": [m for _, m in rows],
                         "mix_label": [nash.mix_label(m) for _, m in rows]})


def test_grouped_long_has_a_row_per_equilibrium_and_group():
    t = equilibria.grouped_long(_grouped([(2.0, (0, 1, 3)), (10.0, (1, 2, 3))]), "fluid",
                                [10.0, 30.0, 50.0])
    assert len(t) == 6
    first = t[t.equilibrium == "fluid: " + nash.mix_label((0, 1, 3))]
    assert list(first.group_rtt_ms) == [10.0, 30.0, 50.0]
    assert list(first.bbr_flows_in_group) == [0, 1, 3]
    empty = equilibria.grouped_long(_grouped([]), "measured", [10.0])
    assert empty.empty and "bbr_flows_in_group" in empty.columns


def test_grouped_found_names_each_series_equilibria_or_why_there_are_none():
    sets = {"fluid": _grouped([(2.0, (0, 1, 3)), (2.0, (0, 2, 3)), (10.0, (1, 2, 3))]),
            "measured": _grouped([])}
    t = equilibria.grouped_found(sets, [2.0, 10.0], {"fluid": "no equilibrium",
                                                      "measured": "not every mix stored"})
    assert len(t) == 4
    at2 = t[(t.series == "fluid") & (t["buffer (BDP)"] == "2")].iloc[0]
    assert at2["shortest-RTT group all CUBIC"] == "yes"
    assert at2["equilibria (BBR flows per group)"] == ", ".join(
        [nash.mix_label((0, 1, 3)), nash.mix_label((0, 2, 3))])
    at10 = t[(t.series == "fluid") & (t["buffer (BDP)"] == "10")].iloc[0]
    assert at10["shortest-RTT group all CUBIC"] == "no"
    none = t[t.series == "measured"]
    assert set(none["equilibria (BBR flows per group)"]) == {"not every mix stored"}
    assert set(none["shortest-RTT group all CUBIC"]) == {""}
    # a precision set whose mixes differ in the shortest group cannot answer; one whose
    # every mix leaves it on CUBIC answers "yes", one whose every mix puts BBR there "no",
    # however wide; exact (measured) equilibria answer "no" as soon as one puts BBR there
    wide = {"fluid": _grouped([(2.0, (k, 3, 3)) for k in range(4)]
                              + [(10.0, (0, k, 3)) for k in range(4)]
                              + [(20.0, (k, 3, 3)) for k in (1, 2, 3)]),
            "measured": _grouped([(2.0, (0, 3, 3)), (2.0, (1, 3, 3))])}
    t = equilibria.grouped_found(wide, [2.0, 10.0, 20.0], {"fluid": "-", "measured": "-"},
                                 precision_sets=["fluid"])
    assert t["shortest-RTT group all CUBIC"].tolist() == [
        "undetermined (its mixes differ in the shortest group)", "yes", "no", "no", "", ""]
    # without precision sets every series reads as exact
    assert equilibria.grouped_found(wide, [2.0], {"fluid": "-", "measured": "-"})[
        "shortest-RTT group all CUBIC"].tolist() == ["no", "no"]


def test_grouped_checked_counts_the_measured_verdicts_and_checks_each_fluid_equilibrium():
    a, b = nash.mix_label((0, 1)), nash.mix_label((1, 1))
    status = pd.DataFrame({"buffer_bdp": [2.0, 2.0], "mix_label": [a, b],
                           "status": ["equilibrium", "undecided"], "reason": ["", "1 run"]})
    stored, checked = equilibria.grouped_checked(
        status, {"fluid": _grouped([(2.0, (1, 1)), (2.0, (0, 2))])}, [2.0, 10.0], 9)
    assert stored.to_dict("records") == [
        {"buffer (BDP)": "2", "mixes stored": "2 of 9", "equilibrium": 1,
         "not an equilibrium": 0, "undecided": 1},
        {"buffer (BDP)": "10", "mixes stored": "0 of 9", "equilibrium": 0,
         "not an equilibrium": 0, "undecided": 0}]
    assert list(checked["measured verdict"]) == ["undecided (1 run)", "not stored yet"]


def test_rates_at_equilibria_sets_the_series_side_by_side_at_equilibrium_mixes_only():
    a, b = nash.mix_label((0, 1)), nash.mix_label((1, 1))
    rows = pd.DataFrame({"buffer_bdp": [2.0] * 4, "mix_label": [a, a, b, b],
                         "rtt_s": [0.01, 0.03] * 2, "cca": ["cubic", "bbr"] * 2,
                         "goodput_bps": [10e6, 20e6, 30e6, 40e6]})
    wide = equilibria.rates_at_equilibria({"fluid": rows, "measured": rows.iloc[:2]},
                                          [_grouped([(2.0, (0, 1))])])
    assert list(wide.series) == ["fluid", "measured"]
    assert set(wide.mix_label) == {a}
    assert list(wide["10 ms cubic"]) == [10.0, 10.0]
    assert list(wide["30 ms bbr"]) == [20.0, 20.0]
