"""The fluctuation's per-run numbers (coexist.analysis.fluctuation): Jain's index, the remedy's
interval spread, the summary of a synthetic run whose answers are known, the stored runs
read as P-F1-2 reads them, and the remedy acting in the fluid model."""

import numpy as np
import pandas as pd
import pytest

from coexist.analysis import fairness, fluctuation
from coexist.book import ledger
from coexist.core.params import ParameterError
from coexist.fluid.studies import fluctuation as fluid_fluctuation
from coexist.measured import fluctuation as measured_fluctuation

EST = dict(bin_s=0.5, warmup_s=20.0, min_period_s=2.0, max_period_s=60.0, sync_flows=5)


def test_jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly():
    assert fairness.jain([3.0, 3.0, 3.0, 3.0], strict=True) == pytest.approx(1.0)
    assert fairness.jain([5.0, 0.0, 0.0, 0.0], strict=True) == pytest.approx(0.25)
    assert fairness.jain([1.0, 3.0], strict=True) == pytest.approx(16 / 20)
    for not_rates in ([0.0, 0.0], [], [1.0, -1.0], [[1.0, 2.0]]):
        with pytest.raises(ParameterError, match="'rates'"):
            fairness.jain(not_rates, strict=True)
    assert np.isnan(fairness.jain([0.0, 0.0]))


def test_spread_intervals_run_evenly_from_the_published_ten_seconds():
    assert fluctuation.spread_intervals(10, 0.0) == (10.0,) * 10
    got = fluctuation.spread_intervals(5, 4.0)
    assert got == pytest.approx((10.0, 11.0, 12.0, 13.0, 14.0))
    with pytest.raises(ParameterError, match=r"'spread_s' = -1.0 is invalid"):
        fluctuation.spread_intervals(5, -1.0)


def test_a_synthetic_run_gives_its_known_period_amplitude_and_synchronisation():
    """BBR's total dips from 60 to 30 for one bin in every 20 (a 10-s period in 0.5-s
    bins); eight flows enter ProbeRTT together at each dip, plus one flow alone between
    dips. The period is 10 s, the amplitude is the series' own std over mean, every dip is
    a synchronised entry 10 s apart, the shares and Jain's index follow from the means."""
    t = np.arange(1, 361) * 0.5 + 20.0
    bbr = np.where(np.arange(360) % 20 == 0, 30.0, 60.0)
    cubic = np.full(360, 20.0)
    dips = t[np.arange(360) % 20 == 0]
    entries = np.concatenate([np.repeat(dips, 8), dips[:-1] + 5.0])
    row = fluctuation.summarise(t, bbr, cubic, np.array([6.0, 6.0, 2.0, 2.0]), entries,
                                capacity_bps=100.0, **{k: v for k, v in EST.items()
                                                       if k != "warmup_s"})
    assert row["acf_period_s"] == pytest.approx(10.0)
    assert row["amplitude"] == pytest.approx(bbr.std() / bbr.mean())
    assert row["synchronised_entries"] == len(dips)
    assert row["probe_rtt_entries"] == len(entries)
    assert row["sync_gap_s"] == pytest.approx(10.0)
    assert row["bbr_share"] == pytest.approx(bbr.mean() / (bbr.mean() + 20.0))
    assert row["utilisation"] == pytest.approx((bbr.mean() + 20.0) / 100.0)
    assert row["jain"] == pytest.approx(16.0 ** 2 / (4 * 80.0))


def test_the_stored_runs_read_as_p_f1_2_reads_them():
    """The same campaign and estimates as P-F1-2 give the synchronised-entry counts its
    committed claims state (notebooks/expected/P-F1-2.claims.csv)."""
    claims = pd.read_csv(ledger.EXPECTED / "P-F1-2.claims.csv").set_index("key")["value"]
    t = measured_fluctuation.measured_table(["fluctuation"], [2.0, 5.0], **EST)
    assert len(t) == 6 and set(t.capacity_mbps) == {100.0}
    for rtt in (2.0, 5.0):
        n = t[t.rtt_ms == rtt].synchronised_entries
        span = f"{n.min()}-{n.max()}" if n.min() != n.max() else f"{n.min()}"
        assert span == claims[f"pf1_sync_{rtt:g}ms"]


def test_spread_probe_rtt_intervals_end_the_synchronised_entries_in_the_model(monkeypatch):
    """The remedy in the fluid model (5 ms, 100 Mbit/s, 10 CUBIC + 10 BBRv1, 60 s): with
    the published 10 s every BBR flow enters ProbeRTT together; with intervals spread over
    [10, 15] s no five enter within a second of each other after the first round."""
    monkeypatch.setenv("COEXIST_FLUID_CACHE", "off")
    kw = dict(capacity_bps=100e6, rtt_s=0.005, duration_s=60.0, step_s=5e-5,
              **{**EST, "warmup_s": 15.0, "max_period_s": 20.0})
    published = fluid_fluctuation.fluid_run(**kw)
    spread = fluid_fluctuation.fluid_run(
        probe_rtt_interval_s=fluctuation.spread_intervals(10, 5.0), **kw)
    assert published["synchronised_entries"] >= 4
    assert spread["synchronised_entries"] == 0
    assert spread["probe_rtt_entries"] > 0
    with pytest.raises(ParameterError, match="one per BBR flow"):
        fluid_fluctuation.fluid_run(probe_rtt_interval_s=(10.0, 12.0), **kw)


def test_a_dip_is_the_fall_of_the_event_average_below_its_level_before():
    """x is 100 but for the bin after each event, 70: the event average falls by 30 from
    a level of 100, as a fraction of x's mean; halfway between events nothing falls; an
    event too near the series' edge has no window and is left out."""
    t = np.arange(1, 81) * 0.5
    x = np.full(80, 100.0)
    x[[20, 40, 60]] = 70.0  # the bins ending at 10.5, 20.5 and 30.5 s
    assert fluctuation.dip(t, x, [10.0, 20.0, 30.0]) == pytest.approx(30 / x.mean())
    assert fluctuation.dip(t, x, [10.0, 20.0, 30.0, 39.5]) == pytest.approx(30 / x.mean())
    assert fluctuation.dip(t, x, [15.0, 25.0]) == pytest.approx(0.0)
    assert np.isnan(fluctuation.dip(t, x, []))
    assert np.isnan(fluctuation.dip(t, x, [1.0]))  # no 3 s before it


def test_the_synthetic_run_carries_the_period_test_and_its_dips():
    """The run of the test above, with the period test and the dips: a dip of a single
    bin every 10 s is a pulse train, whose strongest line may be the interval or one of
    its harmonics but never an unrelated period; the BBR total falls to 30 after every
    synchronised entry, and not halfway between them. The series has a little noise, as
    every measured one does (without any, its background is rounding error and no null can
    be drawn from it)."""
    t = np.arange(1, 361) * 0.5 + 20.0
    rng = np.random.default_rng(7)
    bbr = np.where(np.arange(360) % 20 == 0, 30.0, 60.0 + rng.normal(0, 1.0, 360))
    dips = t[np.arange(360) % 20 == 0]
    row = fluctuation.summarise(t, bbr, np.full(360, 20.0), np.array([6.0, 6.0]),
                                np.repeat(dips - 0.5, 8), capacity_bps=100.0,
                                **{k: v for k, v in EST.items() if k != "warmup_s"})
    assert row["verdict"] in {"interval"} | {f"harmonic (1/{n})" for n in range(2, 7)}
    assert row["test_p"] <= 0.01
    assert row["dip_bbr"] == pytest.approx(30 / bbr.mean(), abs=0.02)
    assert row["dip_total"] == pytest.approx(30 / (bbr.mean() + 20), abs=0.02)
    assert abs(row["dip_bbr_control"]) < 0.02  # halfway between the dips: noise alone


def test_panels_are_the_drawn_rows_of_one_run():
    t = np.arange(1, 241) * 0.5
    bbr = 60e6 + 5e6 * np.sin(2 * np.pi * t / 10)
    entries = np.concatenate([np.repeat([20.0, 30.0, 40.0], 6), [25.0]])
    p = fluctuation.panels(t, bbr, np.full(240, 30e6), entries, source="measured",
                           bin_s=0.5, min_period_s=2.0, max_period_s=60.0, sync_flows=5,
                           goodput=True)
    assert list(p.columns) == ["panel", "series", "t_s", "value"]
    g = p[p.panel == "P-F1"]
    assert set(g.series) == {"measured BBR", "measured CUBIC"} and len(g) == 480
    assert g[g.series == "measured CUBIC"].value.eq(30.0).all()  # Mbit/s
    ticks = p[p.panel == "P-F1 ticks"]
    assert list(ticks.t_s) == [20.0, 25.0, 30.0, 40.0]
    assert list(ticks.series) == ["ProbeRTT, synchronised", "ProbeRTT"] + [
        "ProbeRTT, synchronised"] * 2
    spec = p[p.panel == "P-F2"]
    assert spec.t_s.between(2.0, 60.0).all() and spec.value.mean() == pytest.approx(1.0)
    assert spec.loc[spec.value.idxmax(), "t_s"] == pytest.approx(10.0)
    aligned = p[p.panel == "aligned"]
    assert aligned.t_s.min() == -3.0 and aligned.t_s.max() == 12.0
    quiet = fluctuation.panels(t, bbr, np.full(240, 30e6), entries, source="fluid model",
                               bin_s=0.5, min_period_s=2.0, max_period_s=60.0, sync_flows=5,
                               goodput=False)
    assert set(quiet.panel) == {"P-F2", "aligned"} and set(quiet.series) == {"fluid model"}


def test_the_stored_runs_give_p_f1_2_its_drawn_rows_and_cubic_epochs():
    """P-F1-2's drawn rows of the stored runs: the goodput over time of each RTT's first
    repeat only, a periodogram and an aligned average for every run; CUBIC's epoch per run
    is K of the 90th-percentile window."""
    p = measured_fluctuation.measured_panels("fluctuation", [2.0, 5.0], **EST)
    assert set(p[p.panel == "P-F1"].run) == {"2 ms, repeat 0", "5 ms, repeat 0"}
    assert p[p.panel == "P-F2"].run.nunique() == 6
    e = measured_fluctuation.cubic_epochs("fluctuation", [2.0, 5.0], 20.0)
    assert len(e) == 6
    np.testing.assert_allclose(e.cubic_epoch_K_s,
                               np.cbrt(e.cubic_cwnd_p90_pkts * (1 - 0.7) / 0.4))
    none = measured_fluctuation.measured_panels("fluctuation", [7.0], **EST)
    assert none.empty and list(none.columns) == ["panel", "rtt_ms", "run", "series", "t_s",
                                                 "value"]


def test_capacity_rows_run_every_part_of_p_f3_once(monkeypatch):
    """P-F3's grid: every capacity and RTT, the remedy's spreads above 0 (the published
    runs at the remedy's capacities are its spread of 0), and one step check."""
    calls = []

    def fake(**kw):
        calls.append(kw)
        return {"amplitude": kw["capacity_bps"] + kw["rtt_s"]}

    monkeypatch.setattr(fluid_fluctuation, "fluid_run", fake)
    rows = fluid_fluctuation.capacity_rows(
        capacities_mbps=[100.0, 1000.0], rtts_ms=[2.0, 5.0], remedy_capacities_mbps=[100.0],
        remedy_rtt_ms=5.0, remedy_spreads_s=[0.0, 5.0], duration_s=60.0, step_us=20.0,
        check_step_us=10.0, **EST)
    assert len(calls) == 4 + 1 + 1
    assert rows.part.value_counts().to_dict() == {"capacity": 4, "remedy": 2, "step check": 1}
    rem = rows[rows.part == "remedy"].sort_values("spread_s")
    assert list(rem.spread_s) == [0.0, 5.0] and (rem.capacity_mbps == 100.0).all()
    check = rows[rows.part == "step check"].iloc[0]
    assert (check.capacity_mbps, check.rtt_ms, check.step_us) == (1000.0, 2.0, 10.0)


def test_fluid_panels_give_the_row_and_the_drawn_rows_of_one_run(monkeypatch):
    """A short fluid run (5 ms, 100 Mbit/s, 40 s): the row is :func:`fluid_run`'s at the
    published interval, and the drawn rows are its periodogram and aligned average."""
    monkeypatch.setenv("COEXIST_FLUID_CACHE", "off")
    kw = dict(capacity_bps=100e6, rtt_s=0.005, duration_s=40.0, step_s=5e-5,
              **{**EST, "warmup_s": 10.0, "max_period_s": 15.0})
    row, drawn = fluid_fluctuation.fluid_panels(**kw)
    assert pd.Series(row).equals(pd.Series(fluid_fluctuation.fluid_run(**kw)))  # NaN = NaN
    assert set(drawn.panel) == {"P-F2", "aligned"}
    assert drawn[drawn.panel == "P-F2"].t_s.between(2.0, 15.0).all()
    assert row["synchronised_entries"] >= 2
