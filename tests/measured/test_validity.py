"""T-F1's reading of the stored runs: timing failures against steal, the wake-up probe's
power, and what the gates keep out (each run against its configuration's other valid
runs)."""

import math

import pandas as pd
import pytest

from coexist.measured import validity


def test_timing_failures_are_the_lateness_and_probe_gates():
    reasons = pd.Series(["delay_lateness: 3.2", "probe_rtt: 1.5; utilisation: 0.9",
                         "utilisation: 0.9", ""])
    assert validity.timing_failed(reasons).tolist() == [True, True, False, False]


def test_value_range():
    assert validity.value_range(pd.Series([0.5, None, 2.25])) == "0.5-2.25"
    assert validity.value_range(pd.Series([None], dtype=float)) == "-"


def _runs(**cols):
    n = len(next(iter(cols.values())))
    base = {"run_id": [f"r{i}" for i in range(n)], "reasons": [""] * n}
    return pd.DataFrame({**base, **cols})


def test_failures_by_steal_band():
    runs = _runs(steal_pct=[0.05, 0.05, 3.0, 3.0, None],
                 reasons=["", "delay_lateness", "probe_rtt", "delay_lateness", "probe_rtt"])
    t = validity.by_steal(runs)
    assert t.loc["≤ 0.1 %", "runs"] == 2 and t.loc["≤ 0.1 %", "timing_failures"] == 1
    assert t.loc["> 2 %", "failure_rate"] == 1.0
    assert t.loc["0.5-1 %", "runs"] == 0 and math.isnan(t.loc["0.5-1 %", "failure_rate"])
    assert t["runs"].sum() == 4                                 # the run without steal left out


def test_failures_by_the_busiest_seconds_steal():
    runs = _runs(steal_pct=[0.2, 0.2, 1.5], steal_burst_s=[0.0, 0.15, 0.15],
                 reasons=["", "delay_lateness", "delay_lateness"])
    t = validity.by_steal_burst(runs)
    assert t.loc[("≤ 1 %", "no steal"), "timing_failures"] == 0
    assert t.loc[("≤ 1 %", "> 100 ms"), "failure_rate"] == 1.0
    assert t.loc[("> 1 %", "> 100 ms"), "runs"] == 1


@pytest.mark.parametrize("bad, auc", [([0.3, 0.05], 0.5), ([0.3, 0.4], 1.0), ([0.01], 0.0)])
def test_probe_auc_is_the_chance_an_invalid_runs_probe_reads_higher(bad, auc):
    runs = pd.DataFrame({"wake_p999_ms": [0.1, 0.2, *bad],
                         "valid": [True, True] + [False] * len(bad)})
    assert validity.probe_auc(runs) == pytest.approx(auc)


def test_probe_auc_needs_both_kinds_of_run():
    assert math.isnan(validity.probe_auc(pd.DataFrame({"wake_p999_ms": [0.1],
                                                       "valid": [True]})))


def test_each_run_against_its_configurations_other_valid_runs():
    runs = pd.DataFrame({
        "campaign": ["c"] * 5, "point": ["p"] * 4 + ["q"], "run_id": list("abcde"),
        "valid": [True, True, True, False, True], "bbr_share": [0.2, 0.4, 0.6, 0.9, 0.5],
        "jain_index": [0.9, 0.9, 0.9, 0.6, 0.8], "timing_only": [False] * 3 + [True, False],
        "stopped_early_s": [None] * 5, "lateness_p999_ms": [0.2, 0.3, 0.4, 3.0, 0.2]})
    cmp = validity.against_valid_repeats(runs).set_index("run_id")
    assert cmp.loc["a", "d_bbr_share"] == pytest.approx(0.3)    # 0.2 against (0.4 + 0.6) / 2
    assert cmp.loc["d", "d_bbr_share"] == pytest.approx(0.5)    # 0.9 against the three
    assert cmp.loc["d", "d_jain_index"] == pytest.approx(0.3)
    assert "e" not in cmp.index                                 # no other valid repeat
    assert cmp.loc["d", "runs"] == "invalid, 1-5 ms"
    assert cmp.loc["a", "runs"] == "valid, lateness < 1 ms"
    check = validity.gate_check(runs)
    assert check.loc["valid, lateness < 1 ms", "runs"] == 3
    assert check.loc["invalid, 1-5 ms", "share_max"] == pytest.approx(0.5)


def test_bbr_share_is_not_compared_where_every_flow_is_bbr():
    runs = pd.DataFrame({
        "campaign": ["c"] * 2, "point": ["p"] * 2, "run_id": ["a", "b"], "valid": [True] * 2,
        "bbr_share": [1.0, 1.0], "jain_index": [0.9, 0.7], "timing_only": [False] * 2,
        "stopped_early_s": [None] * 2, "lateness_p999_ms": [0.2, 0.3]})
    cmp = validity.against_valid_repeats(runs)
    assert cmp["d_bbr_share"].isna().all()
    assert cmp["d_jain_index"].tolist() == pytest.approx([0.2, 0.2])


def test_the_rate_ceiling_is_the_last_all_valid_rate_below_the_first_failure():
    rates = pd.DataFrame({"runs": [2, 2, 2, 2], "valid": [2, 2, 1, 2]},
                         index=[100.0, 200.0, 300.0, 400.0])
    top, passing, failing = validity.rate_ceiling(rates)
    assert top == 200.0                       # 400 passes again, but above a failure
    assert list(failing.index) == [300.0] and list(passing.index) == [100.0, 200.0, 400.0]
    assert validity.rate_ceiling(rates.assign(valid=2))[0] == 400.0


def test_the_host_check_counts_attempts_by_outcome_and_host_evidence():
    runs = _runs(campaign=["quiet_host"] * 5 + ["two_flow"],
                 valid=[True, False, False, False, True, False],
                 held_up=[False, True, True, False, True, True],
                 failed_gates=["", "delay_lateness", "delay_lateness,probe_rtt",
                               "delay_lateness", "", "probe_rtt"],
                 duration_s=[15.0, 15.0, 15.0, 120.0, 120.0, 15.0],
                 steal_pct=[0.0] * 6, stall_pct=[0.01, 0.2, 0.05, 0.0, 0.0, 1.0],
                 sleeper_p999_ms=[0.1, 2.0, 1.1, 0.2, 0.3, 3.0],
                 lateness_p999_ms=[0.2, 4.0, 3.0, 1.5, 0.4, 9.0])
    check = validity.host_check(runs)
    assert (check.attempts, check.valid, check.held_up, check.not_held_up) == (5, 2, 2, 1)
    assert check.by_length == {15.0: (1, 3), 120.0: (1, 2)}
    assert check.rejected_share == pytest.approx(0.6)
    table = check.table
    assert table["attempts"].sum() == 5  # the other campaign's run is not counted
    rows = {(float(r.duration_s), r.outcome): r.attempts for r in table.itertuples()}
    assert rows[(15.0, "valid")] == 1 and rows[(120.0, "valid")] == 1
    assert rows[(15.0, "invalid: delay_lateness (host held it up)")] == 1
    assert rows[(15.0, "invalid: delay_lateness, probe_rtt (host held it up)")] == 1
    assert rows[(120.0, "invalid: delay_lateness (no host evidence)")] == 1


def test_the_host_verdict_says_which_way_the_runs_went():
    def verdict(valid: int, attempts: int) -> str:
        return validity.HostCheck(attempts, valid, 0, 0, {}, pd.DataFrame()).verdict()

    assert verdict(3, 10).startswith("Most runs on this virtual machine fail")
    assert verdict(6, 10).startswith("Most runs on this virtual machine pass")
    assert verdict(5, 10).startswith("Half the runs")
    assert verdict(10, 10).startswith("Every run")
    assert verdict(0, 0).startswith("No run")
    assert validity.HostCheck(0, 0, 0, 0, {}, pd.DataFrame()).rejected_share is None
